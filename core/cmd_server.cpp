// Connection, pub/sub and scripting entry points (Redis server.c, pubsub.c, eval.c), and
// CLUSTER (cluster.c).
#include <cassert>
#include <cctype>

#include "base/ascii.h"
#include "core/cluster.h"
#include "core/commands.h"
#include "core/script_host.h"
#include "core/strings.h"

namespace lockstep::cmd {

namespace {

// Marks the script about to run on a cluster node and clears the mark when it ends, however
// it ends.
class ScriptClusterScope {
 public:
  ScriptClusterScope(Server& server, bool cross_slot_allowed, int slot)
      : state_(server.script_cluster()) {
    assert(!state_.active);  // EVAL cannot run inside a script (it is NOSCRIPT).
    state_ = {true, cross_slot_allowed, slot};
  }
  ~ScriptClusterScope() { state_ = {}; }
  ScriptClusterScope(const ScriptClusterScope&) = delete;
  ScriptClusterScope& operator=(const ScriptClusterScope&) = delete;

 private:
  Server::ScriptClusterState& state_;
};

// EVAL and friends on a cluster node. Server::Execute has already refused keys of several
// slots (CROSSSLOT) or of another node (MOVED); what is left is the script's own flags: a
// `no-cluster` script is refused, and the slot rule for the keys the script touches is set up
// for Server::CallFromScript.
Reply EvalOnClusterNode(Ctx& ctx, const Argv& argv) {
  Server& server = ctx.server;
  const std::string& name = argv[0];
  const bool evalsha = name.size() >= 7 && (name[4] == 's' || name[4] == 'S');
  ScriptClusterFlags flags;  // A script never seen with a shebang runs in compat mode.
  if (evalsha) {
    if (const ScriptClusterFlags* known = server.ScriptFlagsBySha(argv[1])) flags = *known;
  } else {
    flags = ReadScriptClusterFlags(argv[1]);
    server.RememberScriptFlags(argv[1]);
  }
  if (flags.valid && flags.no_cluster && !server.is_replica()) {
    // scriptPrepareForRun refuses it, but only after evalGenericCommand has checked numkeys
    // and found (EVALSHA) or compiled (EVAL) the script, so those errors come first.
    const std::optional<int64_t> numkeys = ParseInt64(argv[2]);
    if (!numkeys) return Reply::Error(std::string(err::kNotInteger));
    if (*numkeys > static_cast<int64_t>(argv.size()) - 3) {
      return Reply::Error("ERR Number of keys can't be greater than number of args");
    }
    if (*numkeys < 0) return Reply::Error("ERR Number of keys can't be negative");
    // Nothing this asks of the script host is propagated (no Effects).
    Ctx quiet(server, ctx.now_ms, 2, /*from_script=*/false, nullptr);
    if (evalsha) {
      const Reply exists = server.scripts().Script(quiet, {"SCRIPT", "EXISTS", argv[1]});
      if (exists.type != Reply::Type::kArray || exists.elements.size() != 1 ||
          exists.elements[0].integer != 1) {
        return Reply::Error("NOSCRIPT No matching script. Please use EVAL.");
      }
    } else {
      Reply loaded = server.scripts().Script(quiet, {"SCRIPT", "LOAD", argv[1]});
      if (loaded.is_error()) return loaded;  // The compile error EVAL would give.
    }
    return Reply::Error(std::string(cluster_err::kNoCluster));
  }
  ScriptClusterScope scope(server, flags.compat || flags.allow_cross_slot, ctx.cluster_slot);
  return server.scripts().Eval(ctx, argv);
}

// CLUSTER's subcommands in redis-server 7.0.15 (src/commands/cluster-*.json): name, arity
// (with "cluster" itself counted) and whether scripts may call it.
struct ClusterSubcommand {
  std::string_view name;
  int arity;
  bool no_script;
};
constexpr ClusterSubcommand kClusterSubcommands[] = {
    {"addslots", -3, false},     {"addslotsrange", -4, false}, {"bumpepoch", 2, false},
    {"count-failure-reports", 3, false},                       {"countkeysinslot", 3, false},
    {"delslots", -3, false},     {"delslotsrange", -4, false}, {"failover", -2, false},
    {"flushslots", 2, false},    {"forget", 3, false},         {"getkeysinslot", 4, false},
    {"help", 2, false},          {"info", 2, false},           {"keyslot", 3, false},
    {"links", 2, false},         {"meet", -4, false},          {"myid", 2, false},
    {"nodes", 2, false},         {"replicas", 3, false},       {"replicate", 3, false},
    {"reset", -2, true},         {"saveconfig", 2, false},     {"set-config-epoch", 3, false},
    {"setslot", -4, false},      {"shards", 2, false},         {"slaves", 3, false},
    {"slots", 2, false},
};

}  // namespace

Reply Ping(Ctx&, const Argv& argv) {
  if (argv.size() > 2) return Reply::Error("ERR wrong number of arguments for 'ping' command");
  return argv.size() == 1 ? Reply::Status("PONG") : Reply::Bulk(argv[1]);
}

Reply Echo(Ctx&, const Argv& argv) { return Reply::Bulk(argv[1]); }

Reply Publish(Ctx& ctx, const Argv& argv) {
  PubSubRegistry* pubsub = ctx.server.pubsub();
  const int64_t receivers = pubsub == nullptr ? 0 : pubsub->Publish(argv[1], argv[2]);
  // Redis forwards PUBLISH to replicas so that their subscribers hear it too.
  ctx.PropagateAsIs(argv);
  return Reply::Integer(receivers);
}

Reply Time(Ctx& ctx, const Argv&) {
  // The node's clock, in Redis's [seconds, microseconds] form.
  const int64_t seconds = ctx.now_ms / 1000;
  const int64_t micros = (ctx.now_ms % 1000) * 1000;
  return Reply::Array({Reply::Bulk(std::to_string(seconds)), Reply::Bulk(std::to_string(micros))});
}

Reply Eval(Ctx& ctx, const Argv& argv) {
  // A standalone server (and the replication stream) pays this one branch for cluster mode.
  if (ctx.cluster_checked) [[unlikely]] return EvalOnClusterNode(ctx, argv);
  return ctx.server.scripts().Eval(ctx, argv);
}

Reply Script(Ctx& ctx, const Argv& argv) {
  if (ctx.server.cluster_enabled()) [[unlikely]] {
    // Keep EVALSHA's view of the scripts' shebang flags in step with the script cache.
    const std::string sub = argv.size() >= 2 ? AsciiLowered(argv[1]) : "";
    if (sub == "load" && argv.size() == 3) ctx.server.RememberScriptFlags(argv[2]);
    if (sub == "flush") ctx.server.ForgetScriptFlags();
  }
  return ctx.server.scripts().Script(ctx, argv);
}

// CLUSTER: the table has one entry for it (arity -2), so the subcommand's existence and arity
// are checked here, with the texts Redis gives a client or a script for each.
Reply Cluster(Ctx& ctx, const Argv& argv) {
  assert(argv.size() >= 2);
  const std::string sub = AsciiLowered(argv[1]);
  const ClusterSubcommand* found = nullptr;
  for (const ClusterSubcommand& c : kClusterSubcommands) {
    if (c.name == sub) found = &c;
  }
  if (found == nullptr) {
    if (ctx.from_script) return Reply::Error("ERR Unknown Redis command called from script");
    std::string upper = argv[0];
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    std::string msg = "ERR unknown subcommand '" + argv[1].substr(0, 128) + "'. Try " + upper +
                      " HELP.";
    for (char& c : msg) {
      if (c == '\r' || c == '\n') c = ' ';  // rejectCommandFormat keeps the reply one line.
    }
    return Reply::Error(std::move(msg));
  }
  const auto argc = static_cast<int64_t>(argv.size());
  if (found->arity > 0 ? argc != found->arity : argc < -found->arity) {
    if (ctx.from_script) {
      return Reply::Error("ERR Wrong number of args calling Redis command from script");
    }
    return Reply::Error("ERR wrong number of arguments for 'cluster|" + sub + "' command");
  }
  if (ctx.from_script && found->no_script) {
    return Reply::Error("ERR This Redis command is not allowed from script");
  }
  if (!ctx.server.cluster_enabled()) return Reply::Error(std::string(cluster_err::kDisabled));
  if (sub == "keyslot") return Reply::Integer(KeyHashSlot(argv[2]));
  return Reply::Error("ERR 'cluster " + sub +
                      "' is not provided by the lockstep emulator (see docs/fidelity.md)");
}

Reply NotEmulated(Ctx&, const Argv& argv) {
  const std::string name = AsciiLowered(argv[0]);
  return Reply::Error("ERR '" + name + "' is not provided by the lockstep emulator (see docs/fidelity.md)");
}

// SELECT (Redis selectCommand). An emulated node keeps one database, number 0; the other 15
// numbers Redis accepts are refused as not provided. Arguments are checked as Redis checks them:
// an int (getIntFromObjectOrReply), no other database in cluster mode, 16 databases.
Reply Select(Ctx& ctx, const Argv& argv) {
  constexpr int64_t kDatabases = 16;  // redis.conf's default "databases 16"
  const auto id = ParseInt64(argv[1]);
  if (!id) return Reply::Error(std::string(err::kNotInteger));
  if (*id < INT32_MIN || *id > INT32_MAX) {
    // Redis's text, grammar included (getRangeLongFromObjectOrReply).
    return Reply::Error("ERR value is out of range, value must between -2147483648 and "
                        "2147483647");
  }
  if (ctx.server.cluster_enabled() && *id != 0) {
    return Reply::Error("ERR SELECT is not allowed in cluster mode");
  }
  if (*id < 0 || *id >= kDatabases) return Reply::Error("ERR DB index is out of range");
  if (*id != 0) {
    return Reply::Error("ERR 'select' of a database other than 0 is not provided by the lockstep "
                        "emulator (see docs/fidelity.md)");
  }
  return Reply::Ok();
}

}  // namespace lockstep::cmd
