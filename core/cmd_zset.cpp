// STUB: to be implemented.
#include "core/commands.h"

namespace lockstep::cmd {

Reply Zadd(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Zincrby(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Zscore(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Zrem(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Zcard(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Zrank(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Zrange(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Zrangebyscore(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }

}  // namespace lockstep::cmd
