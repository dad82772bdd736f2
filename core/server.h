// One emulated redis-server 7.0: a keyspace, the command table, the scripting host and a hook
// into whoever owns the pub/sub subscriptions. It has no clock of its own: every call says what
// time it is on this node's clock, so the simulator can give each node a clock that drifts,
// jumps or stands still.
//
// The command layer follows Redis's split: a data-type API (keyspace.h) and thin command
// functions on top, each of which validates its arguments (replying with Redis's exact error
// text), looks up keys, mutates, replies, and records the write as a replica would receive it.
#ifndef LOCKSTEP_CORE_SERVER_H_
#define LOCKSTEP_CORE_SERVER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/argv.h"
#include "core/cluster.h"
#include "core/keyspace.h"
#include "core/reply.h"
#include "core/session.h"

namespace lockstep {

// Write effects of one top-level command, in execution order, each as the command a replica
// (or the AOF) receives: PEXPIRE rewritten to PEXPIREAT with an absolute time, SET ... PX to
// SET ... PXAT, an expire in the past to DEL, a lazily expired key to DEL. Redis wraps more than
// one of them in MULTI/EXEC; here the list of one command is always applied as one unit.
struct Effects {
  std::vector<Argv> commands;
};

// Whoever holds subscriptions (the simulator's clients, or nobody for `lockstep emu`).
class PubSubRegistry {
 public:
  virtual ~PubSubRegistry() = default;
  // Delivers the message and returns the number of receiving subscriptions, which is what
  // PUBLISH replies.
  virtual int64_t Publish(std::string_view channel, std::string_view message) = 0;
};

// Command flags, named after Redis's (src/commands/*.json).
enum CommandFlag : uint32_t {
  kCmdWrite = 1u << 0,         // May modify the keyspace.
  kCmdReadOnly = 1u << 1,
  kCmdNoScript = 1u << 2,      // "This Redis command is not allowed from script".
  kCmdMayReplicate = 1u << 3,  // PUBLISH: not a write, but refused in read-only scripts.
  kCmdDenyOom = 1u << 4,
};

class Server;
class ScriptHost;
class Ctx;
namespace cmd {
Reply Multi(Ctx&, const Argv&);
Reply Exec(Ctx&, const Argv&);
Reply Discard(Ctx&, const Argv&);
Reply Watch(Ctx&, const Argv&);
Reply Unwatch(Ctx&, const Argv&);
Reply Bpop(Ctx&, const Argv&);
}  // namespace cmd
struct ScriptLimits;

// Everything a command function needs for one call.
class Ctx {
 public:
  Ctx(Server& server, int64_t now_ms, int resp, bool from_script, Effects* effects);

  Server& server;
  Keyspace& db;
  const int64_t now_ms;   // This node's clock at the start of the command (or script).
  int resp;               // Protocol of the caller: 2, or 3 for a script after setresp(3).
  const bool from_script;
  Effects* const effects;  // Null when nobody wants them.
  // Cluster mode: true for a client's command that passed the node's cluster checks (Redis
  // processCommand's getNodeByQuery), and then the hash slot of its keys (-1: none). Never
  // set for the replication stream, which Redis obeys without checks.
  bool cluster_checked = false;
  int cluster_slot = -1;
  // The client connection the command came from: null for a script's redis.call, the
  // replication stream and Server::Execute without a session.
  Session* session = nullptr;

  // Looks a key up the way Redis's lookupKey does: an expired key is deleted (and DEL is
  // propagated) on a master, and only hidden on a replica. Null when missing or expired.
  Entry* Lookup(std::string_view key);

  // Lookup plus a type check. On a type mismatch returns null and sets *wrong_type.
  Entry* LookupTyped(std::string_view key, ValueType type, bool* wrong_type);

  // Records a write effect. Every write that changes a key passes here, so this is also where
  // the keys it names are "touched" for WATCH (Redis's signalModifiedKey): a command that
  // changes nothing propagates nothing and touches nothing, as in Redis.
  void Propagate(Argv argv);
  // Records the command as it came in, unchanged.
  inline void PropagateAsIs(const Argv& argv);
  // Whether a write's effect is wanted (recorded, or needed to touch watched keys): a command
  // may skip building a rewritten command when not.
  inline bool wants_effects() const;

  // Resp-aware reply builders (Redis addReplyDouble, addReplyMapLen...).
  Reply Double(double d) const;
  Reply Map(std::vector<Reply> flat_pairs) const;
  // An array in RESP2, a set (~n) in RESP3 (Redis setDeferredSetLen, shared.emptyset).
  Reply SetOf(std::vector<Reply> members) const;
};

// One entry of the command table.
struct CommandSpec {
  const char* name;  // Lower case; "script|load" style for subcommands.
  int arity;         // Redis convention: n = exactly n, -n = at least n (name included).
  uint32_t flags;
  int first_key;     // 0 when the command takes no keys.
  int last_key;      // -1 = last argument; -2 = all but the last (e.g. none here).
  int key_step;
  Reply (*handler)(Ctx& ctx, const Argv& argv);
};

// A script run's default step budget (docs/fidelity.md, "Scripting: limits"): about 60 ms of
// simple Lua work, so that a runaway script ends well inside a second of CPU even under the
// sanitizers; lock scripts spend a few hundred to a few thousand steps.
constexpr uint64_t kDefaultScriptStepBudget = 10'000'000;
// The most a user may ask for (lockstep eval/emu --script-budget): about 100 minutes of work.
constexpr uint64_t kMaxScriptStepBudget = 1'000'000'000'000;

struct ServerOptions {
  // A replica hides expired keys instead of deleting them and applies PEXPIREAT in the past
  // as a plain timestamp (Redis skips checkAlreadyExpired on replicas).
  bool replica = false;
  // Lua limits: see script_host.h.
  uint64_t script_step_budget = kDefaultScriptStepBudget;
  size_t script_memory_bytes_max = 64u << 20;
  // maxmemory (redis.conf), in bytes of the keyspace's used-memory estimate (keyspace.h, "Used
  // memory"). Beyond it a master refuses commands flagged denyoom with Redis's OOM error, as
  // with maxmemory-policy noeviction (no other policy is emulated); a replica ignores it
  // (replica-ignore-maxmemory yes). Inside a script Redis checks only before the script's
  // first write, so lockstep adds a cap of its own: kScriptWriteCapFactor x maxmemory_bytes,
  // beyond which a script's denyoom command fails. Must be > 0.
  size_t maxmemory_bytes = size_t{256} << 20;
  // Cluster mode (redis-server --cluster-enabled yes) when set: a command whose keys hash to
  // different slots is refused with CROSSSLOT, one whose slot another node serves with MOVED,
  // and a script may touch only keys this node serves (core/cluster.h). Null: a standalone
  // server, for which none of these checks costs more than one branch. One topology is shared
  // by every node of a cluster; cluster_node is this server's index in it.
  std::shared_ptr<const ClusterTopology> cluster;
  int cluster_node = -1;
};

class Server {
 public:
  // lockstep's own limit for writes inside scripts, as a multiple of maxmemory (see
  // ServerOptions::maxmemory_bytes).
  static constexpr size_t kScriptWriteCapFactor = 2;

  explicit Server(ServerOptions options = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Runs one command from a RESP2 client at now_ms on this node's clock. Write effects are
  // appended to *effects when it is given. This is a command without a connection: MULTI,
  // EXEC, DISCARD, WATCH and UNWATCH answer that they need one (a Session), and a BLPOP or
  // BRPOP on empty keys answers at once with the timeout's null array, as inside MULTI.
  Reply Execute(const Argv& argv, int64_t now_ms, Effects* effects = nullptr);

  // Runs one command from the client connection `session` (core/session.h), with the
  // connection's MULTI/EXEC and WATCH state. Returns the reply, or std::nullopt when the
  // command blocked the session (BLPOP/BRPOP on keys that are all empty): session.blocked()
  // is then true, and its reply comes later from TakeWoken() or TimeOut(). Must not be called
  // for a blocked session (its connection sends nothing until it is served). After every
  // call, any session this command's writes woke is in TakeWoken().
  std::optional<Reply> Execute(Session& session, const Argv& argv, int64_t now_ms,
                               Effects* effects = nullptr);

  // The sessions served since the last call, with their replies, in the order Redis serves
  // them (handleClientsBlockedOnKeys: keys in the order they became ready, the sessions of
  // one key in the order they blocked). Each served pop also went to the *effects of the
  // command that woke it, as the LPOP or RPOP Redis propagates. A driver drains it after
  // every command, before it delivers anything else to a woken session.
  struct Woken {
    Session* session;
    Reply reply;
  };
  std::vector<Woken> TakeWoken();

  // Ends a blocked session's wait because its deadline passed (the caller checks
  // Session::TimedOut on its clock): returns the reply Redis sends then, a null array.
  Reply TimeOut(Session& session);

  // The connection closed (Redis freeClient): a blocked session stops waiting, a MULTI is
  // discarded, watched keys are unwatched and a queued wake-up reply is dropped. The session
  // may be used again afterwards, as a new connection.
  void Disconnect(Session& session);

  // How many sessions wait in BLPOP/BRPOP (Redis's blocked_clients).
  size_t blocked_session_count() const { return blocked_count_; }

  // For whoever writes to keyspace() directly (a fault that loses or rewrites a key): tells
  // the watchers of the key, as a command's write would (touchWatchedKey), or of every key,
  // as FLUSHALL does (touchAllWatchedKeysInDb).
  void TouchWatchedKey(std::string_view key);
  void TouchAllWatchedKeys();
  bool has_watched_keys() const { return !watchers_.empty(); }

  // Applies a command from this node's master (the replication stream) or from an AOF being
  // replayed: no READONLY refusal on a replica; write effects go to *effects when given (a
  // replica that has replicas of its own passes them on).
  Reply ExecuteReplicated(const Argv& argv, int64_t now_ms, Effects* effects = nullptr);

  // redis.call / redis.pcall from a script (Redis scriptCall): Redis's script-specific
  // rejections (unknown command, arity, NOSCRIPT, writes in a read-only script), then the
  // command runs with the script's context. Errors come back as error replies.
  Reply CallFromScript(Ctx& script_ctx, const Argv& argv, bool read_only_script);
  // The same with the command already looked up (spec == Lookup(argv), null when unknown):
  // the script host caches lookups by the script's command-name string.
  Reply CallFromScript(Ctx& script_ctx, const Argv& argv, bool read_only_script,
                       const CommandSpec* spec);

  // Case-insensitive lookup of a command, with "script load" resolved to "script|load".
  // Null when unknown.
  static const CommandSpec* Lookup(const Argv& argv);
  static const std::vector<CommandSpec>& Table();

  // Redis's "out of memory" state (performEvictions() == EVICT_FAIL under noeviction): used
  // memory above maxmemory, on a master.
  bool OutOfMemory() const {
    return !is_replica() && db_.used_bytes() > options_.maxmemory_bytes;
  }
  size_t script_write_cap_bytes() const { return kScriptWriteCapFactor * options_.maxmemory_bytes; }

  Keyspace& keyspace() { return db_; }
  const Keyspace& keyspace() const { return db_; }
  // How many write commands (kCmdWrite) this server has run, from clients, scripts or its
  // master, whether or not they changed anything, plus the blocked pops it served. While it
  // stays the same, no command has written to the keyspace; a key may still have expired, and
  // whoever writes to keyspace() directly must say so itself.
  uint64_t write_commands_run() const { return write_commands_run_; }
  ScriptHost& scripts() { return *scripts_; }
  const ServerOptions& options() const { return options_; }
  bool is_replica() const { return options_.replica; }
  void set_replica(bool replica) { options_.replica = replica; }
  void set_pubsub(PubSubRegistry* pubsub) { pubsub_ = pubsub; }
  PubSubRegistry* pubsub() const { return pubsub_; }

  // --- cluster mode ---
  bool cluster_enabled() const { return options_.cluster != nullptr; }
  // The slot map and this node's index in it; only when cluster_enabled().
  const ClusterTopology& cluster() const { return *options_.cluster; }
  int cluster_node() const { return options_.cluster_node; }

  // What the running script may touch on a cluster node. Redis keeps this on the calling
  // client (c->slot: the slot of the EVAL's keys, or of the first key the script touched) and
  // on the run context (SCRIPT_ALLOW_CROSS_SLOT). cmd::Eval sets it around the script; while
  // `active`, every redis.call is checked (CallFromScript).
  struct ScriptClusterState {
    bool active = false;
    bool cross_slot_allowed = false;  // A script without shebang, or allow-cross-slot-keys.
    int slot = -1;
  };
  ScriptClusterState& script_cluster() { return script_cluster_; }

  // Cluster mode: the shebang flags of the script bodies EVAL and SCRIPT LOAD have seen, by
  // lower-case SHA1, so that EVALSHA applies the same rules (the script host keeps the flags to
  // itself). Only bodies with a shebang are kept; at most kScriptFlagsMax of them.
  static constexpr size_t kScriptFlagsMax = 10'000;
  void RememberScriptFlags(std::string_view body);
  // Null when the SHA was never seen with a shebang (a compat script, or an unknown one).
  const ScriptClusterFlags* ScriptFlagsBySha(std::string_view sha) const;
  void ForgetScriptFlags() { script_flags_.clear(); }

 private:
  // Cluster mode: processCommand's redirection. False with the reply (CROSSSLOT, MOVED,
  // CLUSTERDOWN) when this node must not run the command; else *slot is its keys' slot or -1.
  bool ClusterAdmits(const CommandSpec& spec, const Argv& argv, int* slot, Reply* refusal) const;
  // Cluster mode: scriptVerifyClusterState for one redis.call. False with the error reply
  // when the running script may not touch the command's keys.
  bool ScriptClusterAdmits(const CommandSpec& spec, const Argv& argv, Reply* refusal);

  // Runs the command and brings the used-memory charge of the keys it names up to date.
  Reply Run(const CommandSpec& spec, Ctx& ctx, const Argv& argv);
  // processCommand for one client command, with or without a connection: the refusals
  // (unknown command, arity, cluster, OOM, READONLY), then queueing inside MULTI, then Run.
  Reply Dispatch(Session* session, const Argv& argv, int64_t now_ms, Effects* effects);

  // --- MULTI/EXEC and WATCH (multi.c) ---
  friend Reply cmd::Multi(Ctx&, const Argv&);
  friend Reply cmd::Exec(Ctx&, const Argv&);
  friend Reply cmd::Discard(Ctx&, const Argv&);
  friend Reply cmd::Watch(Ctx&, const Argv&);
  friend Reply cmd::Unwatch(Ctx&, const Argv&);
  friend Reply cmd::Bpop(Ctx&, const Argv&);
  friend class Session;
  friend class Ctx;
  // Binds the session to this server on its first command.
  void Bind(Session& session);
  // The commands' bodies (cmd_multi.cpp forwards to them once it has a session).
  Reply MultiCommand(Session& session);
  Reply ExecCommand(Session& session, int64_t now_ms, Effects* effects);
  Reply DiscardCommand(Session& session);
  Reply WatchCommand(Session& session, const Argv& argv, int64_t now_ms);
  Reply UnwatchCommand(Session& session);
  // discardTransaction: the MULTI state goes, and so do the watched keys.
  void DiscardTransaction(Session& session);
  void UnwatchAll(Session& session);
  // getNodeByQuery for EXEC: the keys of every queued command must share one slot.
  bool TransactionClusterAdmits(const Session& session, Reply* refusal) const;
  // Touches the keys a propagated write command names (Ctx::Propagate).
  void TouchKeysOf(const Argv& propagated);

  // --- blocking pops (blocked.c, t_list.c) ---
  // False inside EXEC, a script, or without a connection (CLIENT_DENY_BLOCKING).
  static bool MayBlock(const Ctx& ctx);
  void Block(Session& session, const Argv& argv, bool from_head, int64_t deadline_ms);
  void Unblock(Session& session);
  // signalKeyAsReady, for the keys a write command names that now hold a list and have
  // sessions blocked on them.
  void SignalReadyKeys(const CommandSpec& spec, const Argv& argv);
  // handleClientsBlockedOnKeys: serves the blocked sessions of every ready key.
  void ServeBlockedSessions(int64_t now_ms, Effects* effects);
  // processCommand's OOM check: true (with the OOM reply) when a client's command is refused.
  // Records the state for the script the command may start (Redis's pre_command_oom_state).
  // deny_any: refuse any command, not only denyoom ones (inside MULTI, every command but
  // EXEC and DISCARD; EXEC itself when a queued command is denyoom).
  bool OomRefuses(const CommandSpec& spec, const Argv& argv, bool deny_any, Reply* refusal);
  // scriptVerifyOOM, for one redis.call (lockstep's own cap on writes inside a script is
  // CallFromScript's last check, after the cluster's).
  bool ScriptOomRefuses(const CommandSpec& spec, Reply* refusal);

  // The running script's view of memory (Redis's pre_command_oom_state and the run context's
  // SCRIPT_ALLOW_OOM and SCRIPT_WRITE_DIRTY flags), set when EVAL starts.
  struct ScriptOomState {
    bool started_oom = false;  // Out of memory when the EVAL started.
    bool allow_oom = false;    // flags=allow-oom (or the replication stream: obeyed as is).
    bool wrote = false;        // The script has called a write command.
  };
  ScriptOomState script_oom_;
  uint64_t write_commands_run_ = 0;

  ServerOptions options_;
  Keyspace db_;
  std::unique_ptr<ScriptHost> scripts_;
  PubSubRegistry* pubsub_ = nullptr;
  ScriptClusterState script_cluster_;
  std::map<std::string, ScriptClusterFlags, std::less<>> script_flags_;

  // Every session bound to this server, to unbind them if it goes first. Only ever searched
  // or visited to clear the sessions' back pointers, so its pointer order reaches no output.
  std::set<Session*> bound_;
  // db->watched_keys: the sessions watching each key, in the order they watched it.
  std::map<std::string, std::vector<Session*>, std::less<>> watchers_;
  // db->blocking_keys: the sessions blocked on each key, first blocked first.
  std::map<std::string, std::vector<Session*>, std::less<>> blocking_keys_;
  size_t blocked_count_ = 0;
  // server.ready_keys: keys that became lists with sessions blocked on them, in that order.
  std::vector<std::string> ready_keys_;
  std::vector<Woken> woken_;
};

inline bool Ctx::wants_effects() const {
  return effects != nullptr || server.has_watched_keys();
}

inline void Ctx::PropagateAsIs(const Argv& argv) {
  if (wants_effects()) Propagate(argv);  // No copy of argv when nobody wants it.
}

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_SERVER_H_
