// A command as Redis receives it: the command name and its arguments, binary-safe.
#ifndef LOCKSTEP_BASE_ARGV_H_
#define LOCKSTEP_BASE_ARGV_H_

#include <string>
#include <vector>

namespace lockstep {

using Argv = std::vector<std::string>;

}  // namespace lockstep

#endif  // LOCKSTEP_BASE_ARGV_H_
