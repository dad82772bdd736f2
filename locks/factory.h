// Makes the protocol object a scenario names. The one place that knows every protocol kind.
#ifndef LOCKSTEP_LOCKS_FACTORY_H_
#define LOCKSTEP_LOCKS_FACTORY_H_

#include <memory>
#include <string>
#include <vector>

#include "locks/protocol.h"

namespace lockstep::locks {

// The protocol kinds lockstep implements, in the order --help lists them.
const std::vector<std::string>& ProtocolKinds();

// Null (and *error set) for an unknown kind or version.
std::unique_ptr<LockProtocol> MakeProtocol(const std::string& kind, const ClientConfig& config,
                                           const ScriptSet& scripts, std::string* error);

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_FACTORY_H_
