// Makes the protocol object a scenario names: the one registration of every protocol kind's
// client. The kinds themselves, their traits and their scripts, are listed in history/kinds.h;
// every kind listed there has exactly one row here (a test checks both ways).
#ifndef LOCKSTEP_LOCKS_FACTORY_H_
#define LOCKSTEP_LOCKS_FACTORY_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "locks/protocol.h"

namespace lockstep::locks {

// The protocol kinds lockstep implements, in the order --help lists them (history/kinds.h).
const std::vector<std::string>& ProtocolKinds();

// Whether a client of this kind is registered.
bool HasClient(std::string_view kind);

// Null (and *error set) for an unknown kind or version, or a config or script set the kind's
// client cannot run with.
std::unique_ptr<LockProtocol> MakeProtocol(const std::string& kind, const ClientConfig& config,
                                           const ScriptSet& scripts, std::string* error);

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_FACTORY_H_
