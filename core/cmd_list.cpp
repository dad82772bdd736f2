// STUB: to be implemented.
#include "core/commands.h"

namespace lockstep::cmd {

Reply Push(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Pop(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Lindex(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Lrange(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Lrem(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }
Reply Llen(Ctx& ctx, const Argv& argv) { return NotEmulated(ctx, argv); }

}  // namespace lockstep::cmd
