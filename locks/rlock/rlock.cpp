// Redisson's RLock client, sans IO: the shared Redisson lock machine (redisson_common.h: the
// command executor with its retries, the subscription entries, the tryLock / lock loops and the
// watchdog) with RLock's scripts. What is RLock's own:
//
//  - one subscription entry per process: every thread waits on redisson_lock__channel:{name};
//  - the acquire script for every mode (tryLock() reads its PTTL reply as false);
//  - acquireFailed is a no-op.
#include "locks/rlock/rlock.h"

#include <cassert>
#include <utility>
#include <vector>

#include "locks/redisson_common.h"
#include "locks/scripts.h"

namespace lockstep::locks {

namespace {

class RLockKind final : public RedissonLockKind {
 public:
  RLockKind(const ClientConfig& config, const ScriptSet& scripts)
      : RedissonLockKind(config, scripts), channel_(RLockChannel(config.lock_name)) {}

  Script Attempt(Outbox& out, int thread, const AcquireArgs& args, int64_t lease_ms) override {
    (void)out;
    (void)args;
    return {attempts_.Get(thread, lease_ms,
                          [&] {
                            return Eval("acquire", {config().lock_name},
                                        {std::to_string(lease_ms), Field(thread)});
                          }),
            "acquire"};
  }

  std::string NotAcquired(int64_t reply) const override {
    return "not acquired: held by another (pttl " + std::to_string(reply) + " ms)";
  }

  std::string Channel(int thread) const override {
    (void)thread;
    return channel_;
  }

  Argv Unlock(Outbox& out, int thread, int64_t lease_ms, const std::string& latch) override {
    (void)out;
    const std::string& field = Field(thread);
    if (version() == RedissonVersion::k3136) {
      return Eval("unlock", {config().lock_name, channel_},
                  {kUnlockMessage, std::to_string(lease_ms), field});
    }
    return Eval("unlock", {config().lock_name, channel_, latch},
                {kUnlockMessage, std::to_string(lease_ms), field, "publish",
                 std::to_string(RedissonLatchTtlMs(config()))});
  }

  Argv ForceUnlock(Outbox& out) override {
    (void)out;
    if (version() == RedissonVersion::k3136) {
      return Eval("force_unlock", {config().lock_name, channel_}, {kUnlockMessage});
    }
    return Eval("force_unlock", {config().lock_name, channel_}, {kUnlockMessage, "publish"});
  }

 private:
  const std::string channel_;
  SameAttempts attempts_;
};

}  // namespace

bool CheckRLockConfig(const ClientConfig& config, const ScriptSet& scripts, std::string* error) {
  if (!CheckRedissonConfig("rlock", config, error)) return false;
  std::string missing;
  if (!HasScripts(scripts, RequiredScripts("rlock"), &missing)) {
    *error = "rlock: " + missing;
    return false;
  }
  return true;
}

std::unique_ptr<LockProtocol> MakeRLock(const ClientConfig& config, const ScriptSet& scripts) {
  std::string error;
  const bool valid = CheckRLockConfig(config, scripts, &error);
  assert(valid && "MakeRLock: see CheckRLockConfig");
  (void)valid;
  return MakeRedissonLockClient(std::make_unique<RLockKind>(config, scripts));
}

}  // namespace lockstep::locks
