#include "core/server.h"

#include <algorithm>
#include <cassert>
#include <unordered_map>

#include "core/cluster.h"
#include "core/commands.h"
#include "core/script_host.h"
#include "core/strings.h"

namespace lockstep {

namespace {

constexpr uint32_t W = kCmdWrite;
constexpr uint32_t R = kCmdReadOnly;
constexpr uint32_t NS = kCmdNoScript;
constexpr uint32_t WD = kCmdWrite | kCmdDenyOom;

// The command table. Arity and flags are Redis 7.0.15's (src/commands/*.json); they decide
// the arity errors and which commands a script may call, so they must match exactly.
const std::vector<CommandSpec> kCommands = {
    // keys
    {"exists", -2, R, 1, -1, 1, cmd::Exists},
    {"del", -2, W, 1, -1, 1, cmd::Del},
    {"unlink", -2, W, 1, -1, 1, cmd::Del},
    {"type", 2, R, 1, 1, 1, cmd::Type},
    {"expire", -3, W, 1, 1, 1, cmd::Expire},
    {"pexpire", -3, W, 1, 1, 1, cmd::Expire},
    {"expireat", -3, W, 1, 1, 1, cmd::Expire},
    {"pexpireat", -3, W, 1, 1, 1, cmd::Expire},
    {"persist", 2, W, 1, 1, 1, cmd::Persist},
    {"ttl", 2, R, 1, 1, 1, cmd::Ttl},
    {"pttl", 2, R, 1, 1, 1, cmd::Ttl},
    {"expiretime", 2, R, 1, 1, 1, cmd::Ttl},
    {"pexpiretime", 2, R, 1, 1, 1, cmd::Ttl},
    {"keys", 2, R, 0, 0, 0, cmd::Keys},
    {"scan", -2, R, 0, 0, 0, cmd::Scan},
    {"dbsize", 1, R, 0, 0, 0, cmd::Dbsize},
    {"flushall", -1, W, 0, 0, 0, cmd::Flush},
    {"flushdb", -1, W, 0, 0, 0, cmd::Flush},
    // strings
    {"get", 2, R, 1, 1, 1, cmd::Get},
    {"set", -3, WD, 1, 1, 1, cmd::Set},
    {"setnx", 3, WD, 1, 1, 1, cmd::Setnx},
    {"getset", 3, WD, 1, 1, 1, cmd::Getset},
    {"setex", 4, WD, 1, 1, 1, cmd::Setex},
    {"psetex", 4, WD, 1, 1, 1, cmd::Setex},
    {"getdel", 2, W, 1, 1, 1, cmd::Getdel},
    {"getrange", 4, R, 1, 1, 1, cmd::Getrange},
    {"substr", 4, R, 1, 1, 1, cmd::Getrange},
    {"mset", -3, WD, 1, -1, 2, cmd::Mset},
    {"msetnx", -3, WD, 1, -1, 2, cmd::Mset},
    {"incr", 2, WD, 1, 1, 1, cmd::Incr},
    {"incrby", 3, WD, 1, 1, 1, cmd::Incr},
    {"decr", 2, WD, 1, 1, 1, cmd::Incr},
    {"decrby", 3, WD, 1, 1, 1, cmd::Incr},
    {"mget", -2, R, 1, -1, 1, cmd::Mget},
    {"strlen", 2, R, 1, 1, 1, cmd::Strlen},
    // hashes
    {"hset", -4, WD, 1, 1, 1, cmd::Hset},
    {"hmset", -4, WD, 1, 1, 1, cmd::Hset},
    {"hsetnx", 4, WD, 1, 1, 1, cmd::Hsetnx},
    {"hget", 3, R, 1, 1, 1, cmd::Hget},
    {"hmget", -3, R, 1, 1, 1, cmd::Hmget},
    {"hexists", 3, R, 1, 1, 1, cmd::Hexists},
    {"hincrby", 4, WD, 1, 1, 1, cmd::Hincrby},
    {"hdel", -3, W, 1, 1, 1, cmd::Hdel},
    {"hlen", 2, R, 1, 1, 1, cmd::Hlen},
    {"hgetall", 2, R, 1, 1, 1, cmd::Hgetall},
    {"hkeys", 2, R, 1, 1, 1, cmd::Hgetall},
    {"hvals", 2, R, 1, 1, 1, cmd::Hgetall},
    // lists
    {"lpush", -3, WD, 1, 1, 1, cmd::Push},
    {"rpush", -3, WD, 1, 1, 1, cmd::Push},
    {"lpop", -2, W, 1, 1, 1, cmd::Pop},
    {"rpop", -2, W, 1, 1, 1, cmd::Pop},
    {"lindex", 3, R, 1, 1, 1, cmd::Lindex},
    {"lrange", 4, R, 1, 1, 1, cmd::Lrange},
    {"lrem", 4, W, 1, 1, 1, cmd::Lrem},
    {"llen", 2, R, 1, 1, 1, cmd::Llen},
    // sorted sets
    {"zadd", -4, WD, 1, 1, 1, cmd::Zadd},
    {"zincrby", 4, WD, 1, 1, 1, cmd::Zincrby},
    {"zscore", 3, R, 1, 1, 1, cmd::Zscore},
    {"zrem", -3, W, 1, 1, 1, cmd::Zrem},
    {"zcard", 2, R, 1, 1, 1, cmd::Zcard},
    {"zrank", 3, R, 1, 1, 1, cmd::Zrank},
    {"zrange", -4, R, 1, 1, 1, cmd::Zrange},
    {"zrangebyscore", -4, R, 1, 1, 1, cmd::Zrangebyscore},
    {"zrevrange", -4, R, 1, 1, 1, cmd::Zrevrange},
    {"zcount", 4, R, 1, 1, 1, cmd::Zcount},
    {"zremrangebyscore", 4, W, 1, 1, 1, cmd::Zremrangebyscore},
    // sets
    {"sadd", -3, WD, 1, 1, 1, cmd::Sadd},
    {"srem", -3, W, 1, 1, 1, cmd::Srem},
    {"scard", 2, R, 1, 1, 1, cmd::Scard},
    {"sismember", 3, R, 1, 1, 1, cmd::Sismember},
    {"smembers", 2, R, 1, 1, 1, cmd::Smembers},
    // server, pub/sub, scripting
    {"ping", -1, 0, 0, 0, 0, cmd::Ping},
    {"echo", 2, 0, 0, 0, 0, cmd::Echo},
    {"publish", 3, kCmdMayReplicate, 0, 0, 0, cmd::Publish},
    // Sharded pub/sub (7.0): Redisson sends it through ARGV when configured to. The emulator
    // keeps one channel namespace for both (docs/fidelity.md).
    {"spublish", 3, kCmdMayReplicate, 1, 1, 1, cmd::Publish},
    {"time", 1, 0, 0, 0, 0, cmd::Time},
    {"select", 2, 0, 0, 0, 0, cmd::Select},
    {"eval", -3, NS | kCmdMayReplicate, 0, 0, 0, cmd::Eval},
    {"evalsha", -3, NS | kCmdMayReplicate, 0, 0, 0, cmd::Eval},
    {"eval_ro", -3, NS | R, 0, 0, 0, cmd::Eval},
    {"evalsha_ro", -3, NS | R, 0, 0, 0, cmd::Eval},
    {"script", -2, NS, 0, 0, 0, cmd::Script},
    {"script|load", 3, NS | kCmdMayReplicate, 0, 0, 0, cmd::Script},
    {"script|exists", -3, NS, 0, 0, 0, cmd::Script},
    {"script|flush", -2, NS | kCmdMayReplicate, 0, 0, 0, cmd::Script},
    {"script|kill", 2, NS, 0, 0, 0, cmd::Script},
    {"script|help", 2, 0, 0, 0, 0, cmd::Script},  // LOADING|STALE only: scripts may call it.
    // CLUSTER: one entry, whose handler checks the subcommand's name and arity itself, so
    // that looking up every other command stays as fast as it was.
    {"cluster", -2, 0, 0, 0, 0, cmd::Cluster},
    // Blocking pops and transactions: they need the client connection (Ctx::session), and
    // a script may not call them (NOSCRIPT).
    {"blpop", -3, W | NS, 1, -2, 1, cmd::Bpop},
    {"brpop", -3, W | NS, 1, -2, 1, cmd::Bpop},
    {"multi", 1, NS, 0, 0, 0, cmd::Multi},
    {"exec", 1, NS, 0, 0, 0, cmd::Exec},
    {"discard", 1, NS, 0, 0, 0, cmd::Discard},
    {"watch", -2, NS, 1, -1, 1, cmd::Watch},
    {"unwatch", 1, NS, 0, 0, 0, cmd::Unwatch},
    // Commands Redis refuses inside scripts (NOSCRIPT). They are in the table so that a
    // script calling them gets Redis's "not allowed" error rather than "unknown command";
    // called directly they answer that the emulator does not provide them.
    {"brpoplpush", 4, W | NS, 1, 2, 1, cmd::NotEmulated},
    {"blmove", 6, W | NS, 1, 2, 1, cmd::NotEmulated},
    {"bzpopmin", -3, W | NS, 1, -2, 1, cmd::NotEmulated},
    {"bzpopmax", -3, W | NS, 1, -2, 1, cmd::NotEmulated},
    {"subscribe", -2, NS, 0, 0, 0, cmd::NotEmulated},
    {"psubscribe", -2, NS, 0, 0, 0, cmd::NotEmulated},
    {"unsubscribe", -1, NS, 0, 0, 0, cmd::NotEmulated},
    {"punsubscribe", -1, NS, 0, 0, 0, cmd::NotEmulated},
    {"wait", 3, NS, 0, 0, 0, cmd::NotEmulated},
    {"auth", -2, NS, 0, 0, 0, cmd::NotEmulated},
    {"hello", -1, NS, 0, 0, 0, cmd::NotEmulated},
    {"quit", -1, NS, 0, 0, 0, cmd::NotEmulated},
    {"client", -2, NS, 0, 0, 0, cmd::NotEmulated},
    {"config", -2, NS, 0, 0, 0, cmd::NotEmulated},
    {"debug", -2, NS, 0, 0, 0, cmd::NotEmulated},
};

// Container commands: "script load" resolves to "script|load".
bool IsContainer(std::string_view lower_name) { return lower_name == "script"; }

// Every command redis-server 7.0.15 knows (its src/commands/*.json, container commands by
// their own name), sorted. One the emulator does not have gets the emulator's "not provided"
// error, as those in the command table it refuses do; any other name gets Redis's "unknown
// command".
constexpr std::string_view kRedis70Commands[] = {
    "acl", "append", "asking", "auth", "bgrewriteaof", "bgsave", "bitcount", "bitfield",
    "bitfield_ro", "bitop", "bitpos", "blmove", "blmpop", "blpop", "brpop", "brpoplpush",
    "bzmpop", "bzpopmax", "bzpopmin", "client", "cluster", "command", "config", "copy",
    "dbsize", "debug", "decr", "decrby", "del", "discard", "dump", "echo",
    "eval", "eval_ro", "evalsha", "evalsha_ro", "exec", "exists", "expire", "expireat",
    "expiretime", "failover", "fcall", "fcall_ro", "flushall", "flushdb", "function", "geoadd",
    "geodist", "geohash", "geopos", "georadius", "georadius_ro", "georadiusbymember", "georadiusbymember_ro", "geosearch",
    "geosearchstore", "get", "getbit", "getdel", "getex", "getrange", "getset", "hdel",
    "hello", "hexists", "hget", "hgetall", "hincrby", "hincrbyfloat", "hkeys", "hlen",
    "hmget", "hmset", "hrandfield", "hscan", "hset", "hsetnx", "hstrlen", "hvals",
    "incr", "incrby", "incrbyfloat", "info", "keys", "lastsave", "latency", "lcs",
    "lindex", "linsert", "llen", "lmove", "lmpop", "lolwut", "lpop", "lpos",
    "lpush", "lpushx", "lrange", "lrem", "lset", "ltrim", "memory", "mget",
    "migrate", "module", "monitor", "move", "mset", "msetnx", "multi", "object",
    "persist", "pexpire", "pexpireat", "pexpiretime", "pfadd", "pfcount", "pfdebug", "pfmerge",
    "pfselftest", "ping", "psetex", "psubscribe", "psync", "pttl", "publish", "pubsub",
    "punsubscribe", "quit", "randomkey", "readonly", "readwrite", "rename", "renamenx", "replconf",
    "replicaof", "reset", "restore", "role", "rpop", "rpoplpush", "rpush", "rpushx",
    "sadd", "save", "scan", "scard", "script", "sdiff", "sdiffstore", "select",
    "sentinel", "set", "setbit", "setex", "setnx", "setrange", "shutdown", "sinter",
    "sintercard", "sinterstore", "sismember", "slaveof", "slowlog", "smembers", "smismember", "smove",
    "sort", "sort_ro", "spop", "spublish", "srandmember", "srem", "sscan", "ssubscribe",
    "strlen", "subscribe", "substr", "sunion", "sunionstore", "sunsubscribe", "swapdb", "sync",
    "time", "touch", "ttl", "type", "unlink", "unsubscribe", "unwatch", "wait",
    "watch", "xack", "xadd", "xautoclaim", "xclaim", "xdel", "xgroup", "xinfo",
    "xlen", "xpending", "xrange", "xread", "xreadgroup", "xrevrange", "xsetid", "xtrim",
    "zadd", "zcard", "zcount", "zdiff", "zdiffstore", "zincrby", "zinter", "zintercard",
    "zinterstore", "zlexcount", "zmpop", "zmscore", "zpopmax", "zpopmin", "zrandmember", "zrange",
    "zrangebylex", "zrangebyscore", "zrangestore", "zrank", "zrem", "zremrangebylex", "zremrangebyrank", "zremrangebyscore",
    "zrevrange", "zrevrangebylex", "zrevrangebyscore", "zrevrank", "zscan", "zscore", "zunion", "zunionstore",
};

bool IsRedis70Command(std::string_view lower_name) {
  return std::binary_search(std::begin(kRedis70Commands), std::end(kRedis70Commands), lower_name);
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// The command index: open addressing over FNV-1a of the lower-case name, a power-of-two table
// at most a quarter full. Lookup runs for every command and every redis.call, so it hashes
// while it lower-cases and never allocates.
class CommandIndex {
 public:
  static constexpr size_t kSlots = 1024;
  static constexpr uint32_t kFnvOffset = 2166136261u;
  static constexpr uint32_t kFnvPrime = 16777619u;

  CommandIndex() {
    assert(kCommands.size() * 4 <= kSlots);
    for (const CommandSpec& spec : kCommands) {
      uint32_t h = kFnvOffset;
      for (const char* p = spec.name; *p != '\0'; ++p) h = Step(h, *p);
      size_t i = h & (kSlots - 1);
      while (slots_[i] != nullptr) i = (i + 1) & (kSlots - 1);
      slots_[i] = &spec;
    }
  }
  static uint32_t Step(uint32_t h, char c) {
    return (h ^ static_cast<unsigned char>(c)) * kFnvPrime;
  }
  const CommandSpec* Find(std::string_view lower_name, uint32_t hash) const {
    for (size_t i = hash & (kSlots - 1);; i = (i + 1) & (kSlots - 1)) {
      const CommandSpec* spec = slots_[i];
      if (spec == nullptr) return nullptr;
      if (lower_name == spec->name) return spec;
    }
  }

 private:
  const CommandSpec* slots_[kSlots] = {};
};

const CommandIndex& Index() {
  static const auto* index = new CommandIndex();
  return *index;
}

// Redis's rejectCommandFormat: newlines from user input are flattened so the reply stays valid.
Reply Reject(std::string msg) {
  std::replace(msg.begin(), msg.end(), '\r', ' ');
  std::replace(msg.begin(), msg.end(), '\n', ' ');
  return Reply::Error("ERR " + msg);
}

}  // namespace

// --- Ctx ------------------------------------------------------------------------------------

Ctx::Ctx(Server& s, int64_t now, int resp_version, bool script, Effects* fx)
    : server(s), db(s.keyspace()), now_ms(now), resp(resp_version), from_script(script),
      effects(fx) {
  assert(resp == 2 || resp == 3);
}

Entry* Ctx::Lookup(std::string_view key) {
  Entry* e = db.Find(key);
  if (e == nullptr || !Keyspace::IsExpired(*e, now_ms)) return e;
  // Redis expireIfNeeded: a replica only hides the key and waits for its master's DEL.
  if (server.is_replica()) return nullptr;
  // Deleted first, then propagated: the DEL touches the key's watchers, and a watcher that
  // saw the key already expired must find it gone (touchWatchedKey).
  std::string name(key);
  db.Erase(name);
  Propagate({"DEL", std::move(name)});
  return nullptr;
}

Entry* Ctx::LookupTyped(std::string_view key, ValueType type, bool* wrong_type) {
  Entry* e = Lookup(key);
  *wrong_type = e != nullptr && e->type() != type;
  return *wrong_type ? nullptr : e;
}

void Ctx::Propagate(Argv argv) {
  assert(!argv.empty());
  if (server.has_watched_keys()) [[unlikely]] server.TouchKeysOf(argv);
  if (effects != nullptr) effects->commands.push_back(std::move(argv));
}

Reply Ctx::Double(double d) const {
  if (resp == 2) return Reply::Bulk(FormatScore(d));
  Reply r;
  r.type = Reply::Type::kDouble;
  r.number = d;
  r.str = FormatScore(d);
  return r;
}

Reply Ctx::Map(std::vector<Reply> flat_pairs) const {
  assert(flat_pairs.size() % 2 == 0);
  Reply r = Reply::Array(std::move(flat_pairs));
  if (resp == 3) r.type = Reply::Type::kMap;
  return r;
}

Reply Ctx::SetOf(std::vector<Reply> members) const {
  Reply r = Reply::Array(std::move(members));
  if (resp == 3) r.type = Reply::Type::kSet;
  return r;
}

// --- Server ---------------------------------------------------------------------------------

Server::Server(ServerOptions options)
    : options_(options),
      scripts_(std::make_unique<ScriptHost>(*this, options.script_step_budget,
                                            options.script_memory_bytes_max)) {
  assert(options_.maxmemory_bytes > 0);
  assert(options_.cluster == nullptr ||
         (options_.cluster_node >= 0 && options_.cluster_node < options_.cluster->node_count()));
}

Server::~Server() {
  // Sessions that outlive their server become fresh connections, bound to nothing.
  for (Session* session : bound_) {
    session->server_ = nullptr;
    session->ResetMulti();
    session->watched_.clear();
    session->blocked_ = false;
    session->blocked_keys_.clear();
    session->woken_pending_ = false;
  }
}

Session::~Session() {
  if (server_ != nullptr) {
    server_->Disconnect(*this);
    server_->bound_.erase(this);
  }
}

const std::vector<CommandSpec>& Server::Table() { return kCommands; }

const CommandSpec* Server::Lookup(const Argv& argv) {
  if (argv.empty()) return nullptr;
  // Lower-cased into a stack buffer: this runs for every command and every redis.call, and
  // no command name ("script|exists" is the longest) comes near the buffer's size.
  char buf[48];
  size_t n = 0;
  uint32_t hash = CommandIndex::kFnvOffset;
  auto append_lower = [&](std::string_view part) {
    if (n + part.size() > sizeof(buf)) return false;
    for (char c : part) {
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      buf[n++] = c;
      hash = CommandIndex::Step(hash, c);
    }
    return true;
  };
  if (!append_lower(argv[0])) return nullptr;
  if (argv.size() >= 2 && IsContainer(std::string_view(buf, n))) {
    if (!append_lower("|") || !append_lower(argv[1])) return nullptr;
  }
  return Index().Find(std::string_view(buf, n), hash);
}

static bool ArityOk(const CommandSpec& spec, size_t argc) {
  const auto n = static_cast<int64_t>(argc);
  return spec.arity > 0 ? n == spec.arity : n >= -spec.arity;
}

// processCommand's refusal of a name it does not know.
static Reply UnknownCommand(const Argv& argv) {
  const std::string name = Lower(argv[0]);
  if (IsContainer(name) && argv.size() >= 2) {
    std::string upper = argv[0];
    for (char& c : upper) {
      if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    }
    return Reject("unknown subcommand '" + argv[1].substr(0, 128) + "'. Try " + upper +
                  " HELP.");
  }
  if (IsRedis70Command(name)) {
    return Reject("'" + name + "' is not provided by the lockstep emulator (see docs/fidelity.md)");
  }
  std::string args;
  for (size_t i = 1; i < argv.size() && args.size() < 128; ++i) {
    args += "'" + argv[i].substr(0, 128 - args.size()) + "' ";
  }
  return Reject("unknown command '" + argv[0].substr(0, 128) +
                "', with args beginning with: " + args);
}

Reply Server::Execute(const Argv& argv, int64_t now_ms, Effects* effects) {
  Reply reply = Dispatch(nullptr, argv, now_ms, effects);
  if (!ready_keys_.empty()) ServeBlockedSessions(now_ms, effects);
  return reply;
}

std::optional<Reply> Server::Execute(Session& session, const Argv& argv, int64_t now_ms,
                                     Effects* effects) {
  // A blocked connection sends nothing until it is served, timed out or closed.
  assert(!session.blocked_);
  if (session.blocked_) [[unlikely]] {
    return Reply::Error("ERR lockstep: a command for a session blocked in BLPOP/BRPOP (the "
                        "driver must wait for TakeWoken, TimeOut or Disconnect)");
  }
  Bind(session);
  Reply reply = Dispatch(&session, argv, now_ms, effects);
  // processCommand: after the command (a whole EXEC or EVAL included), serve the sessions
  // blocked on keys it made non-empty.
  if (!ready_keys_.empty()) ServeBlockedSessions(now_ms, effects);
  if (session.blocked_) return std::nullopt;
  return reply;
}

Reply Server::Dispatch(Session* session, const Argv& argv, int64_t now_ms, Effects* effects) {
  const bool in_multi = session != nullptr && session->in_multi_;
  // rejectCommand's flagTransaction: a command refused inside MULTI dooms the EXEC.
  const CommandSpec* spec = nullptr;
  const auto refuse = [&](Reply refusal) {
    if (in_multi) session->dirty_exec_ = true;
    // A refused EXEC aborts the transaction, and its error says why (execCommandAbort;
    // it unwatches the keys even outside MULTI).
    if (spec != nullptr && spec->handler == cmd::Exec && session != nullptr) {
      DiscardTransaction(*session);
      std::string_view why = refusal.str;
      if (why.rfind("ERR ", 0) == 0) why.remove_prefix(4);
      return Reply::Error("EXECABORT Transaction discarded because of: " + std::string(why));
    }
    return refusal;
  };
  if (argv.empty()) return refuse(Reject("empty command"));
  spec = Lookup(argv);
  if (spec == nullptr) return refuse(UnknownCommand(argv));
  if (!ArityOk(*spec, argv.size())) {
    return refuse(Reject(std::string("wrong number of arguments for '") + spec->name + "' command"));
  }
  const bool is_exec = spec->handler == cmd::Exec;
  int slot = -1;
  if (options_.cluster != nullptr) [[unlikely]] {
    // processCommand redirects after the arity check and before the OOM check and the
    // replica's READONLY. EXEC is checked with the keys of every queued command, and a
    // refused EXEC discards the transaction.
    Reply refusal;
    if (is_exec && in_multi) {
      if (!TransactionClusterAdmits(*session, &refusal)) {
        DiscardTransaction(*session);
        return refusal;
      }
    } else if (!ClusterAdmits(*spec, argv, &slot, &refusal)) {
      return refuse(std::move(refusal));
    }
  }
  // Inside MULTI every command but EXEC and DISCARD is refused when out of memory (queueing
  // could grow without end); EXEC is refused when a queued command is denyoom.
  const bool is_discard = spec->handler == cmd::Discard;
  const bool deny_any = in_multi && (is_exec ? session->queued_denyoom_ : !is_discard);
  Reply refusal;
  if (OomRefuses(*spec, argv, deny_any, &refusal)) return refuse(std::move(refusal));
  if (is_replica() && (spec->flags & kCmdWrite)) {
    return refuse(Reply::Error("READONLY You can't write against a read only replica."));
  }
  if (in_multi && !is_exec && !is_discard && spec->handler != cmd::Multi &&
      spec->handler != cmd::Watch) {
    // queueMultiCommand: once the transaction is doomed, nothing more is kept.
    if (!session->dirty_exec_ && !session->dirty_cas_) {
      if (session->queued_.size() >= Session::kQueuedCommandsMax) {
        session->dirty_exec_ = true;
        return Reply::Error("ERR lockstep's limit of " +
                            std::to_string(Session::kQueuedCommandsMax) +
                            " commands queued in one MULTI was reached (see docs/fidelity.md)");
      }
      session->queued_.push_back({argv, spec, slot});
      if (spec->flags & kCmdDenyOom) session->queued_denyoom_ = true;
    }
    return Reply::Status("QUEUED");
  }
  Ctx ctx(*this, now_ms, 2, /*from_script=*/false, effects);
  ctx.session = session;
  ctx.cluster_checked = options_.cluster != nullptr;
  ctx.cluster_slot = slot;
  return Run(*spec, ctx, argv);
}

Reply Server::ExecuteReplicated(const Argv& argv, int64_t now_ms, Effects* effects) {
  const CommandSpec* spec = Lookup(argv);
  if (spec == nullptr || !ArityOk(*spec, argv.size())) {
    return Reject("replicated command not understood: " + (argv.empty() ? "" : argv[0]));
  }
  // Redis obeys its master and its AOF whatever the memory (mustObeyClient): a script from
  // them is never refused for OOM either.
  if (spec->handler == cmd::Eval) script_oom_ = {false, true, false};
  Ctx ctx(*this, now_ms, 2, /*from_script=*/false, effects);
  Reply reply = Run(*spec, ctx, argv);
  if (!ready_keys_.empty()) ServeBlockedSessions(now_ms, effects);
  return reply;
}

Reply Server::Run(const CommandSpec& spec, Ctx& ctx, const Argv& argv) {
  if (spec.flags & kCmdWrite) ++write_commands_run_;
  Reply reply = spec.handler(ctx, argv);
  if (spec.flags & kCmdWrite) {
    // Commands change values in place (HSET, RPUSH, ZADD...); the keyspace learns the new
    // sizes here, one O(1) estimate per key the command names (keyspace.h, "Used memory").
    const KeyPositions keys = CommandKeyPositions(spec, argv);
    if (!keys.empty()) {
      for (size_t i = keys.first; i <= keys.last; i += keys.step) db_.Recharge(argv[i]);
    }
    if (!blocking_keys_.empty()) [[unlikely]] SignalReadyKeys(spec, argv);
  }
  return reply;
}

namespace {

constexpr std::string_view kOomError = "OOM command not allowed when used memory > 'maxmemory'.";

bool IsEvalSha(const std::string& name) {
  return name.size() >= 7 && (name[4] == 's' || name[4] == 'S');
}

}  // namespace

bool Server::OomRefuses(const CommandSpec& spec, const Argv& argv, bool deny_any,
                        Reply* refusal) {
  const bool oom = OutOfMemory();
  if (oom && deny_any) [[unlikely]] {
    *refusal = Reply::Error(std::string(kOomError));
    return true;
  }
  if (spec.handler == cmd::Eval) [[unlikely]] {
    script_oom_ = {oom, false, false};
    if (!oom) return false;
    // evalGetCommandFlags: a script with a shebang line is denyoom unless it declares
    // no-writes or allow-oom; a compat script (or a malformed shebang) is not. EVALSHA knows
    // the flags only of bodies seen in cluster mode (ScriptFlagsBySha; docs/fidelity.md).
    ScriptClusterFlags flags;
    if (!IsEvalSha(argv[0])) {
      flags = ReadScriptClusterFlags(argv[1]);
    } else if (const ScriptClusterFlags* known = ScriptFlagsBySha(argv[1])) {
      flags = *known;
    }
    if (!flags.valid || flags.compat) return false;
    if (!flags.no_writes && !flags.allow_oom) {
      *refusal = Reply::Error(std::string(kOomError));
      return true;
    }
    script_oom_.allow_oom = flags.allow_oom;
    return false;
  }
  if (oom && (spec.flags & kCmdDenyOom)) {
    *refusal = Reply::Error(std::string(kOomError));
    return true;
  }
  return false;
}

bool Server::ScriptOomRefuses(const CommandSpec& spec, Reply* refusal) {
  // scriptVerifyOOM: only a denyoom command before the script's first write, and only when
  // the server was out of memory as the script started.
  if ((spec.flags & kCmdDenyOom) && script_oom_.started_oom && !script_oom_.allow_oom &&
      !script_oom_.wrote) {
    *refusal = Reply::Error(std::string(kOomError));
    return true;
  }
  if (spec.flags & kCmdWrite) script_oom_.wrote = true;
  return false;
}

Reply Server::CallFromScript(Ctx& script_ctx, const Argv& argv, bool read_only_script) {
  return CallFromScript(script_ctx, argv, read_only_script, Lookup(argv));
}

Reply Server::CallFromScript(Ctx& script_ctx, const Argv& argv, bool read_only_script,
                             const CommandSpec* spec) {
  assert(script_ctx.from_script);
  assert(spec == Lookup(argv));
  // Redis scriptCall (script.c) checks in this order; the texts get "ERR " like
  // luaPushError does for messages without an error code.
  if (spec == nullptr) {
    // A command Redis has but the emulator does not: the same "not provided" error as outside
    // a script (redis-server would run it).
    // (An unknown subcommand of a container, such as SCRIPT, is Redis's unknown command.)
    if (const std::string name = Lower(argv[0]); IsRedis70Command(name) && !IsContainer(name)) {
      return Reject("'" + name + "' is not provided by the lockstep emulator (see docs/fidelity.md)");
    }
    return Reply::Error("ERR Unknown Redis command called from script");
  }
  if (!ArityOk(*spec, argv.size())) {
    return Reply::Error("ERR Wrong number of args calling Redis command from script");
  }
  if (spec->flags & kCmdNoScript) {
    return Reply::Error("ERR This Redis command is not allowed from script");
  }
  if (read_only_script && (spec->flags & (kCmdWrite | kCmdMayReplicate))) {
    return Reply::Error("ERR Write commands are not allowed from read-only scripts.");
  }
  if (is_replica() && (spec->flags & kCmdWrite)) {
    return Reply::Error("READONLY You can't write against a read only replica.");
  }
  Reply refusal;
  if (ScriptOomRefuses(*spec, &refusal)) return refusal;
  // scriptVerifyClusterState comes last of Redis's checks.
  if (script_cluster_.active) [[unlikely]] {
    if (!ScriptClusterAdmits(*spec, argv, &refusal)) return refusal;
  }
  // lockstep's own cap: Redis lets a script that started under maxmemory write without end
  // (it cannot stop a script half-way), which here would grow the process until it dies.
  if ((spec->flags & kCmdDenyOom) && db_.used_bytes() > script_write_cap_bytes()) [[unlikely]] {
    return Reply::Error("OOM lockstep refused a write inside the script: used memory " +
                        std::to_string(db_.used_bytes()) + " bytes > lockstep's cap of " +
                        std::to_string(script_write_cap_bytes()) + " bytes (" +
                        std::to_string(kScriptWriteCapFactor) +
                        " x maxmemory); redis-server checks maxmemory only before a script's "
                        "first write and would let it grow without bound");
  }
  return Run(*spec, script_ctx, argv);
}

// --- cluster mode -------------------------------------------------------------------------

// getNodeByQuery + clusterRedirectClient, for a node whose cluster state never changes while a
// command runs (no slot is migrating or importing, so there is no ASK or TRYAGAIN).
bool Server::ClusterAdmits(const CommandSpec& spec, const Argv& argv, int* slot,
                           Reply* refusal) const {
  assert(cluster_enabled());
  *slot = -1;
  const KeyPositions keys = CommandKeyPositions(spec, argv);
  if (keys.empty()) return true;  // A command without keys runs on any node.
  const ClusterTopology& topology = cluster();
  const int first_slot = KeyHashSlot(argv[keys.first]);
  // The first key's slot decides the node; a slot nobody serves is refused at once, before
  // the other keys are looked at.
  const int owner = topology.owner(first_slot);
  if (owner == ClusterTopology::kUnassigned) {
    *refusal = Reply::Error(std::string(cluster_err::kUnbound));
    return false;
  }
  for (size_t i = keys.first + keys.step; i <= keys.last; i += keys.step) {
    if (KeyHashSlot(argv[i]) != first_slot) {
      *refusal = Reply::Error(std::string(cluster_err::kCrossSlot));
      return false;
    }
  }
  // cluster-require-full-coverage yes and cluster-allow-reads-when-down no (the defaults): a
  // cluster with an unserved slot refuses every command with keys.
  if (!topology.all_slots_served()) {
    *refusal = Reply::Error(std::string(cluster_err::kDown));
    return false;
  }
  if (owner != cluster_node()) {
    *refusal = Reply::Error("MOVED " + std::to_string(first_slot) + " " + topology.endpoint(owner));
    return false;
  }
  *slot = first_slot;
  return true;
}

// scriptVerifyClusterState: every key a script's command names must be served by this node
// (a command naming keys of several slots counts as non-local too). Unless the script may
// cross slots, its keys must also stay in the slot of the EVAL's declared keys, or, when it
// declared none, in the slot of the first key it touched.
bool Server::ScriptClusterAdmits(const CommandSpec& spec, const Argv& argv, Reply* refusal) {
  assert(cluster_enabled() && script_cluster_.active);
  const KeyPositions keys = CommandKeyPositions(spec, argv);
  if (keys.empty()) return true;
  const ClusterTopology& topology = cluster();
  const int slot = KeyHashSlot(argv[keys.first]);
  // The same order as getNodeByQuery: an unserved slot, then keys of several slots, then the
  // cluster's state, then the owner. Only "cluster is down" has a message of its own.
  bool local = topology.owner(slot) != ClusterTopology::kUnassigned;
  for (size_t i = keys.first + keys.step; local && i <= keys.last; i += keys.step) {
    local = KeyHashSlot(argv[i]) == slot;
  }
  if (local && !topology.all_slots_served()) {
    *refusal = Reply::Error("ERR Script attempted to execute a command while the cluster is down");
    return false;
  }
  if (!local || topology.owner(slot) != cluster_node()) {
    *refusal = Reply::Error(std::string(cluster_err::kNotLocal));
    return false;
  }
  if (!script_cluster_.cross_slot_allowed) {
    if (script_cluster_.slot == -1) {
      script_cluster_.slot = slot;
    } else if (script_cluster_.slot != slot) {
      *refusal = Reply::Error(std::string(cluster_err::kScriptCrossSlot));
      return false;
    }
  }
  return true;
}

void Server::RememberScriptFlags(std::string_view body) {
  assert(cluster_enabled());
  const ScriptClusterFlags flags = ReadScriptClusterFlags(body);
  if (flags.compat || !flags.valid) return;  // The default, or a script the host refuses.
  if (script_flags_.size() >= kScriptFlagsMax) script_flags_.clear();
  script_flags_.insert_or_assign(ScriptHost::Sha1Hex(body), flags);
}

const ScriptClusterFlags* Server::ScriptFlagsBySha(std::string_view sha) const {
  std::string lower(sha);
  for (char& c : lower) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  const auto it = script_flags_.find(lower);
  return it == script_flags_.end() ? nullptr : &it->second;
}

// --- connections and blocking pops -----------------------------------------------------------

void Server::Bind(Session& session) {
  if (session.server_ == this) return;
  assert(session.server_ == nullptr);  // A session talks to one server for its life.
  session.server_ = this;
  bound_.insert(&session);
}

void Server::Disconnect(Session& session) {
  if (session.server_ != this) return;
  if (session.blocked_) Unblock(session);
  DiscardTransaction(session);
  if (session.woken_pending_) {
    woken_.erase(std::remove_if(woken_.begin(), woken_.end(),
                                [&](const Woken& w) { return w.session == &session; }),
                 woken_.end());
    session.woken_pending_ = false;
  }
}

bool Server::MayBlock(const Ctx& ctx) {
  return ctx.session != nullptr && !ctx.from_script && !ctx.session->deny_blocking_;
}

void Server::Block(Session& session, const Argv& argv, bool from_head, int64_t deadline_ms) {
  assert(!session.blocked_ && !session.in_multi_);
  session.blocked_ = true;
  session.block_from_head_ = from_head;
  session.deadline_ms_ = deadline_ms;
  session.blocked_keys_.clear();
  // blockForKeys: every key but the timeout, each once.
  for (size_t i = 1; i + 1 < argv.size(); ++i) {
    const std::string& key = argv[i];
    if (std::find(session.blocked_keys_.begin(), session.blocked_keys_.end(), key) !=
        session.blocked_keys_.end()) {
      continue;
    }
    session.blocked_keys_.push_back(key);
    blocking_keys_[key].push_back(&session);
  }
  ++blocked_count_;
}

void Server::Unblock(Session& session) {
  assert(session.blocked_);
  for (const std::string& key : session.blocked_keys_) {
    const auto it = blocking_keys_.find(key);
    assert(it != blocking_keys_.end());
    std::vector<Session*>& sessions = it->second;
    const auto at = std::find(sessions.begin(), sessions.end(), &session);
    assert(at != sessions.end());
    sessions.erase(at);
    if (sessions.empty()) blocking_keys_.erase(it);
  }
  session.blocked_keys_.clear();
  session.blocked_ = false;
  session.deadline_ms_ = Session::kNoDeadline;
  assert(blocked_count_ > 0);
  --blocked_count_;
}

Reply Server::TimeOut(Session& session) {
  assert(session.server_ == this && session.blocked_);
  if (session.server_ != this || !session.blocked_) {
    return Reply::Error("ERR lockstep: TimeOut for a session that is not blocked");
  }
  Unblock(session);
  return Reply::NullArray();  // replyToBlockedClientTimedOut: the null array.
}

std::vector<Server::Woken> Server::TakeWoken() {
  std::vector<Woken> woken;
  woken.swap(woken_);
  for (const Woken& w : woken) w.session->woken_pending_ = false;
  return woken;
}

void Server::SignalReadyKeys(const CommandSpec& spec, const Argv& argv) {
  // Redis signals a key as it is created as a list (dbAdd); a blocked key is always missing
  // or of another type, so "names a key that now holds a list" is the same moment, one
  // command later at most.
  const KeyPositions keys = CommandKeyPositions(spec, argv);
  if (keys.empty()) return;
  for (size_t i = keys.first; i <= keys.last; i += keys.step) {
    const std::string& key = argv[i];
    if (blocking_keys_.find(key) == blocking_keys_.end()) continue;
    const Entry* e = db_.Find(key);
    if (e == nullptr || e->type() != ValueType::kList) continue;
    if (std::find(ready_keys_.begin(), ready_keys_.end(), key) != ready_keys_.end()) continue;
    ready_keys_.push_back(key);
  }
}

void Server::ServeBlockedSessions(int64_t now_ms, Effects* effects) {
  while (!ready_keys_.empty()) {
    std::vector<std::string> ready;
    ready.swap(ready_keys_);
    for (const std::string& key : ready) {
      Ctx ctx(*this, now_ms, 2, /*from_script=*/false, effects);
      // lookupKeyRead: a key that expired meanwhile is deleted, and serves nobody.
      Entry* e = ctx.Lookup(key);
      if (e == nullptr || e->type() != ValueType::kList) continue;
      // serveClientsBlockedOnListKey: first blocked, first served, one element each, until
      // the list is gone.
      while (true) {
        const auto it = blocking_keys_.find(key);
        if (it == blocking_keys_.end()) break;
        Session* session = it->second.front();
        List& list = e->list();
        assert(!list.empty());
        std::string value = session->block_from_head_ ? list.take_front() : list.take_back();
        const bool deleted = list.empty();
        if (deleted) {
          db_.Erase(key);
        } else {
          db_.Recharge(key);
        }
        ++write_commands_run_;
        // Propagated as the pop it is (serveClientBlockedOnList), not as BLPOP.
        ctx.Propagate({session->block_from_head_ ? "LPOP" : "RPOP", key});
        Unblock(*session);
        session->woken_pending_ = true;
        woken_.push_back({session, Reply::Array({Reply::Bulk(key), Reply::Bulk(std::move(value))})});
        if (deleted) break;
      }
    }
  }
}

}  // namespace lockstep
