// Connection, pub/sub and scripting entry points (Redis server.c, pubsub.c, eval.c).
#include <cctype>

#include "core/commands.h"
#include "core/script_host.h"

namespace lockstep::cmd {

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

Reply Eval(Ctx& ctx, const Argv& argv) { return ctx.server.scripts().Eval(ctx, argv); }

Reply Script(Ctx& ctx, const Argv& argv) { return ctx.server.scripts().Script(ctx, argv); }

Reply NotEmulated(Ctx&, const Argv& argv) {
  std::string name = argv[0];
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return Reply::Error("ERR '" + name + "' is not provided by the lockstep emulator (see docs/fidelity.md)");
}

}  // namespace lockstep::cmd
