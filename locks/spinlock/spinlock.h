// Redisson's RSpinLock (RedissonSpinLock, 3.15.0+) as a sans-IO state machine, "current"
// version only (Redisson HEAD; there is no SpinLock in 3.13.6).
//
// The lock is the RLock hash (field "<uuid>:<thread + 1>"), taken with the two-branch acquire
// script. What differs from RLock:
//  - No pub/sub. A thread that did not get the lock sleeps and tries again, the sleeps given by
//    ExponentialBackOff below (1 ms, 2 ms, about 4 ms, ... capped at 128 ms).
//  - tryLock(wait, lease) compares the time since its start with the wait only after an
//    attempt (`now - start >= wait` fails): a sleep may overshoot the wait, and one more attempt
//    follows it.
//  - The lease sent with a no-lease attempt is the process-wide internalLockLeaseTime, which
//    every attempt overwrites with its own lease first (#3484 kept): a thread that acquires
//    without a lease while another thread's explicit lease is in the field gets that lease. A
//    full unlock, an unlock that found no hold or failed, and forceUnlock reset the field to
//    the watchdog timeout.
//  - Unlock runs lua/spinlock/current/unlock.lua (unlock latch, nothing published); forceUnlock
//    runs spinlock/current/force_unlock.lua (a DEL).
//  - Acquire and unlock are not resent after a response timeout (syncedEvalNoRetry, as RLock
//    current); forceUnlock and renew are.
//  - The watchdog is RLock current's: one per-process task every watchdogTimeout / 3 that
//    renews with lua/rlock/current/renew.lua.
//
// What the driver sees (all on node 0): "acquire", "unlock", "force_unlock", "renew" (EVAL),
// "del_latch" (DEL of the unlock latch after the unlock's reply). No SUBSCRIBE, ever.
#ifndef LOCKSTEP_LOCKS_SPINLOCK_SPINLOCK_H_
#define LOCKSTEP_LOCKS_SPINLOCK_SPINLOCK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "locks/protocol.h"
#include "base/random.h"

namespace lockstep::locks {

// LockOptions.ExponentialBackOff with Redisson's defaults: the first sleep is 1 ms; after each
// sleep the next is next * 2 + rand[0, fails) (fails counting the sleeps so far, from 1), at
// most 128 ms; once it is 128 ms it stays there without drawing. One per acquisition.
class SpinBackOff {
 public:
  static constexpr int64_t kInitialMs = 1;
  static constexpr int64_t kMaxMs = 128;
  static constexpr int64_t kMultiplier = 2;

  // getNextSleepPeriod(), in ms. Draws from `rng` while below the cap.
  int64_t NextSleepMs(Prng& rng) {
    if (next_ms_ == kMaxMs) return kMaxMs;
    const int64_t result = next_ms_;
    fails_ += 1;
    next_ms_ = next_ms_ * kMultiplier + rng.UniformInt(0, fails_ - 1);  // nextInt(++fails)
    if (next_ms_ > kMaxMs) next_ms_ = kMaxMs;
    return result;
  }

 private:
  int64_t next_ms_ = kInitialMs;
  int64_t fails_ = 0;
};

// Needs ScriptSet bodies "acquire", "unlock", "force_unlock" (lua/spinlock/current) and "renew"
// (lua/rlock/current); see RequiredScripts("spinlock").
bool CheckSpinLockConfig(const ClientConfig& config, const ScriptSet& scripts, std::string* error);

// Asserts CheckSpinLockConfig.
std::unique_ptr<LockProtocol> MakeSpinLock(const ClientConfig& config, const ScriptSet& scripts);

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_SPINLOCK_SPINLOCK_H_
