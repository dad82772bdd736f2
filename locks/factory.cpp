#include "locks/factory.h"

#include "locks/rlock.h"

namespace lockstep::locks {

const std::vector<std::string>& ProtocolKinds() {
  static const std::vector<std::string> kinds = {"rlock"};
  return kinds;
}

std::unique_ptr<LockProtocol> MakeProtocol(const std::string& kind, const ClientConfig& config,
                                           const ScriptSet& scripts, std::string* error) {
  if (config.version != "v3.13.6" && config.version != "current") {
    *error = "unknown protocol version '" + config.version + "' (known: v3.13.6, current)";
    return nullptr;
  }
  if (kind == "rlock") {
    if (!CheckRLockConfig(config, scripts, error)) return nullptr;
    return MakeRLock(config, scripts);
  }
  std::string known;
  for (const std::string& k : ProtocolKinds()) known += (known.empty() ? "" : ", ") + k;
  *error = "unknown protocol kind '" + kind + "' (known: " + known + ")";
  return nullptr;
}

}  // namespace lockstep::locks
