#include "locks/factory.h"

#include "locks/countdownlatch.h"
#include "locks/fairlock.h"
#include "locks/fencedlock.h"
#include "locks/plainlock.h"
#include "locks/redlock.h"
#include "locks/rlock.h"
#include "locks/rwlock.h"
#include "locks/semaphore.h"
#include "locks/spinlock.h"

namespace lockstep::locks {

const std::vector<std::string>& ProtocolKinds() {
  static const std::vector<std::string> kinds = {
      "rlock",    "fairlock", "redlock",      "multilock", "fencedlock",
      "spinlock", "setnx-px", "setnx-expire", "get-del",   "rwlock",
      "semaphore", "countdownlatch"};
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
  if (kind == "fairlock") {
    if (!CheckFairLockConfig(config, scripts, error)) return nullptr;
    return MakeFairLock(config, scripts);
  }
  if (kind == "redlock" || kind == "multilock") {
    if (!CheckMultiLockConfig(config, scripts, error)) return nullptr;
    if (kind == "redlock") return MakeRedLock(config, scripts);
    return MakeMultiLock(config, scripts, MultiLockOptions{});
  }
  if (kind == "fencedlock") {
    if (!CheckFencedLockConfig(config, scripts, error)) return nullptr;
    return MakeFencedLock(config, scripts);
  }
  if (kind == "spinlock") {
    if (!CheckSpinLockConfig(config, scripts, error)) return nullptr;
    return MakeSpinLock(config, scripts);
  }
  if (kind == "rwlock") {
    if (!CheckRwLockConfig(config, scripts, error)) return nullptr;
    return MakeRwLock(config, scripts);
  }
  if (kind == "semaphore") {
    if (!CheckSemaphoreConfig(config, scripts, error)) return nullptr;
    return MakeSemaphore(config, scripts);
  }
  if (kind == "countdownlatch") {
    if (!CheckCountDownLatchConfig(config, scripts, error)) return nullptr;
    return MakeCountDownLatch(config, scripts);
  }
  if (IsPlainLockKind(kind)) {
    if (!CheckPlainLockConfig(kind, config, scripts, error)) return nullptr;
    return MakePlainLock(kind, config, scripts);
  }
  std::string known;
  for (const std::string& k : ProtocolKinds()) known += (known.empty() ? "" : ", ") + k;
  *error = "unknown protocol kind '" + kind + "' (known: " + known + ")";
  return nullptr;
}

}  // namespace lockstep::locks
