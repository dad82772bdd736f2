// Redisson's fair lock client, sans IO: the shared Redisson lock machine with the fair lock's
// scripts, per-thread channels and acquireFailed (see fairlock.h).
#include "locks/fairlock/fairlock.h"

#include <cassert>
#include <optional>
#include <utility>
#include <vector>

#include "locks/redisson_common.h"
#include "locks/scripts.h"

namespace lockstep::locks {

std::string FairLockQueue(const std::string& lock_name) {
  return PrefixName("redisson_lock_queue", lock_name);
}

std::string FairLockTimeouts(const std::string& lock_name) {
  return PrefixName("redisson_lock_timeout", lock_name);
}

std::string FairLockChannel(const std::string& lock_name, const std::string& uuid, int thread) {
  return RLockChannel(lock_name) + ":" + RLockField(uuid, thread);
}

namespace {

class FairLockKind final : public RedissonLockKind {
 public:
  FairLockKind(const ClientConfig& config, const ScriptSet& scripts,
               const FairLockOptions& options)
      : RedissonLockKind(config, scripts),
        options_(options),
        queue_(FairLockQueue(config.lock_name)),
        timeouts_(FairLockTimeouts(config.lock_name)),
        channel_prefix_(RLockChannel(config.lock_name)),
        thread_wait_ms_(config.fair_wait_timeout_us / 1000) {}

  Script Attempt(Outbox& out, int thread, const AcquireArgs& args, int64_t lease_ms) override {
    const std::string& field = Field(thread);
    const std::string now = std::to_string(out.WallMs());  // System.currentTimeMillis().
    const std::string lease = std::to_string(lease_ms);
    const std::vector<std::string> keys = {config().lock_name, queue_, timeouts_};
    if (args.mode == AcquireArgs::Mode::kTryLockNoWait) {
      // EVAL_NULL_BOOLEAN: now and wait swap places.
      return {ShareArgv(Eval("try_acquire", keys,
                             {lease, field, now, std::to_string(thread_wait_ms_)})),
              "try_acquire"};
    }
    return {ShareArgv(Eval("acquire", keys,
                           {lease, field, std::to_string(ScriptWaitMs(args)), now})),
            "acquire"};
  }

  std::string NotAcquired(int64_t reply) const override {
    return "not acquired: held, or others queued first (try_acquire returned " +
           std::to_string(reply) + ")";
  }

  std::string Channel(int thread) const override {
    return FairLockChannel(config().lock_name, config().uuid, thread);
  }

  Argv Unlock(Outbox& out, int thread, int64_t lease_ms, const std::string& latch) override {
    const std::string& field = Field(thread);
    const std::string now = std::to_string(out.WallMs());
    if (version() == RedissonVersion::k3136) {
      return Eval("unlock", {config().lock_name, queue_, timeouts_, channel_prefix_},
                  {kUnlockMessage, std::to_string(lease_ms), field, now});
    }
    return Eval("unlock", {config().lock_name, queue_, timeouts_, channel_prefix_, latch},
                {kUnlockMessage, std::to_string(lease_ms), field, now, "publish",
                 std::to_string(RedissonLatchTtlMs(config()))});
  }

  Argv ForceUnlock(Outbox& out) override {
    const std::string now = std::to_string(out.WallMs());
    const std::vector<std::string> keys = {config().lock_name, queue_, timeouts_,
                                           channel_prefix_};
    if (version() == RedissonVersion::k3136) {
      return Eval("force_unlock", keys, {kUnlockMessage, now});
    }
    return Eval("force_unlock", keys, {kUnlockMessage, now, "publish"});
  }

  std::optional<Argv> AcquireFailed(Outbox& out, int thread, const AcquireArgs& args) override {
    (void)out;
    // acquireFailedAsync(waitTime, unit, threadId): unit.toMillis(waitTime) when a wait was
    // given (3.13.6: != -1; current: > 0), else threadWaitTime. Always converted (#4743).
    const int64_t wait_ms = WaitGiven(args) ? WaitTime(args) * options_.wait_unit_us / 1000
                                            : thread_wait_ms_;
    return Eval("acquire_failed", {queue_, timeouts_},
                {Field(thread), std::to_string(wait_ms)});
  }

 private:
  // tryLock's waitTime in the modelled caller's unit; -1 (none) for lock() and tryLock().
  int64_t WaitTime(const AcquireArgs& args) const {
    if (args.mode != AcquireArgs::Mode::kTryLock) return -1;
    return args.wait_us / options_.wait_unit_us;
  }

  bool WaitGiven(const AcquireArgs& args) const {
    const int64_t wait_time = WaitTime(args);
    return version() == RedissonVersion::k3136 ? wait_time != -1 : wait_time > 0;
  }

  bool ExplicitLease(const AcquireArgs& args) const {
    return ApiValueGiven(version() == RedissonVersion::k3136, args.lease_us);
  }

  // ARGV[3] of "acquire": tryLockInnerAsync's `wait`. Without an explicit lease,
  // tryAcquireAsync passes TimeUnit.MILLISECONDS along with the caller's waitTime, so
  // unit.toMillis(waitTime) is waitTime itself, whatever unit the caller meant (#4743).
  int64_t ScriptWaitMs(const AcquireArgs& args) const {
    if (!WaitGiven(args)) return thread_wait_ms_;
    const int64_t wait_time = WaitTime(args);
    return ExplicitLease(args) ? wait_time * options_.wait_unit_us / 1000 : wait_time;
  }

  const FairLockOptions options_;
  const std::string queue_;
  const std::string timeouts_;
  const std::string channel_prefix_;
  const int64_t thread_wait_ms_;
};

}  // namespace

bool CheckFairLockConfig(const ClientConfig& config, const ScriptSet& scripts,
                         std::string* error, const FairLockOptions& options) {
  if (!CheckRedissonConfig("fairlock", config, error)) return false;
  if (config.fair_wait_timeout_us < 0) {
    *error = "fairlock: fair wait timeout must be >= 0";
    return false;
  }
  if (options.wait_unit_us < 1000 || options.wait_unit_us % 1000 != 0) {
    *error = "fairlock: the tryLock wait unit must be a whole number of ms";
    return false;
  }
  std::string missing;
  if (!HasScripts(scripts, RequiredScripts("fairlock"), &missing)) {
    *error = "fairlock: " + missing;
    return false;
  }
  return true;
}

std::unique_ptr<LockProtocol> MakeFairLock(const ClientConfig& config, const ScriptSet& scripts,
                                           const FairLockOptions& options) {
  std::string error;
  const bool valid = CheckFairLockConfig(config, scripts, &error, options);
  assert(valid && "MakeFairLock: see CheckFairLockConfig");
  (void)valid;
  return MakeRedissonLockClient(std::make_unique<FairLockKind>(config, scripts, options));
}

}  // namespace lockstep::locks
