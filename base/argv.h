// A command as Redis receives it: the command name and its arguments, binary-safe.
#ifndef LOCKSTEP_BASE_ARGV_H_
#define LOCKSTEP_BASE_ARGV_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace lockstep {

using Argv = std::vector<std::string>;

// A command that several hands hold without copying it: the client that may resend it and the
// wire that carries it.
using SharedArgv = std::shared_ptr<const Argv>;
inline SharedArgv ShareArgv(Argv argv) { return std::make_shared<const Argv>(std::move(argv)); }

}  // namespace lockstep

#endif  // LOCKSTEP_BASE_ARGV_H_
