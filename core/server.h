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
#include <string>
#include <string_view>
#include <vector>

#include "base/argv.h"
#include "core/cluster.h"
#include "core/keyspace.h"
#include "core/reply.h"

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

  // Looks a key up the way Redis's lookupKey does: an expired key is deleted (and DEL is
  // propagated) on a master, and only hidden on a replica. Null when missing or expired.
  Entry* Lookup(std::string_view key);

  // Lookup plus a type check. On a type mismatch returns null and sets *wrong_type.
  Entry* LookupTyped(std::string_view key, ValueType type, bool* wrong_type);

  // Records a write effect.
  void Propagate(Argv argv);
  // Records the command as it came in, unchanged.
  void PropagateAsIs(const Argv& argv) {
    if (effects != nullptr) Propagate(argv);  // No copy of argv when nobody records effects.
  }

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
  // appended to *effects when it is given.
  Reply Execute(const Argv& argv, int64_t now_ms, Effects* effects = nullptr);

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
  // master, whether or not they changed anything. While it stays the same, no command has
  // written to the keyspace; a key may still have expired, and whoever writes to keyspace()
  // directly must say so itself.
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
  // processCommand's OOM check: true (with the OOM reply) when a client's command is refused.
  // Records the state for the script the command may start (Redis's pre_command_oom_state).
  bool OomRefuses(const CommandSpec& spec, const Argv& argv, Reply* refusal);
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
};

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_SERVER_H_
