// STUB: to be implemented.
#include "core/commands.h"

namespace lockstep::cmd {

Reply Hset(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Hsetnx(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Hget(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Hmget(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Hexists(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Hincrby(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Hdel(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Hlen(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Hgetall(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }

}  // namespace lockstep::cmd
