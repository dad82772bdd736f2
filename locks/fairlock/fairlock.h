// Redisson's fair lock (RedissonFairLock) client as a sans-IO state machine, in two versions
// chosen by ClientConfig::version ("v3.13.6" or "current", as for RLock).
//
// RedissonFairLock extends RedissonLock, and so does this: it is the shared Redisson lock
// machine of redisson_common.h (command executor and its retries, subscription entries with
// their semaphores, the tryLock / lock loops, the watchdog, #3484 in 3.13.6) with the fair
// lock's scripts. What is the fair lock's own:
//
//  - Keys: the lock hash (field <uuid>:<thread + 1>), the queue LIST redisson_lock_queue:{name}
//    and the deadline ZSET redisson_lock_timeout:{name} (lockName -> deadline in epoch ms).
//  - "now" in every script but acquire_failed is the client's wall clock, Outbox::WallMs(), as
//    Redisson sends System.currentTimeMillis(): deadlines written by one client are compared
//    with another client's clock, so clock skew between clients moves the queue.
//  - One subscription per thread, on redisson_lock__channel:{name}:<uuid>:<thread + 1>: an
//    unlock (or forceUnlock) publishes "0" on the queue head's channel only.
//  - lock() and tryLock(wait, ...) run "acquire" (it queues the thread when it cannot take the
//    lock, returning how long to wait); tryLock() runs "try_acquire" (never queues; reply 1 is
//    false). The wait that "acquire" gets (ARGV[3]) is threadWaitTime
//    (ClientConfig::fair_wait_timeout_us, 300000 ms by default since 3.13.3; 5000 ms before),
//    replaced by tryLock's waitTime when one is given (3.13.6: waitTime != -1, so tryLock(0)
//    queues with wait 0; current: waitTime > 0).
//  - When tryLock gives up it runs "acquire_failed" (remove the thread from the queue and move
//    the deadlines behind it forward by its wait) and ends when the reply is in. current also
//    does this after a response timeout inside the loop (4.7.0, #5019); lock() never does: a
//    thread whose lock() failed, or whose process died, stays queued until its deadline passes
//    and the next script run by anyone purges it.
//  - Unlock and forceUnlock scripts get the queue keys and "now" too (they purge stale heads).
//    Both versions' scripts keep their bugs (#4153, #4705, #5989 in 3.13.6; see lua/README.md).
//
// The #4743 unit quirk (in 3.13.6 and again at HEAD): tryLock(waitTime, unit) without a lease
// reaches the fair lock's script through tryAcquireAsync with TimeUnit.MILLISECONDS, so the
// script's wait is waitTime in the caller's unit taken as ms, while acquire_failed gets
// unit.toMillis(waitTime). AcquireArgs carries µs and no unit, so FairLockOptions says which
// unit the modelled Java caller used: MILLISECONDS by default (the quirk then changes nothing),
// or e.g. SECONDS to reproduce it (tryLock(5 s) queues with wait 5 and gives up with 5000).
//
// What the driver sees beyond RLock's (see rlock.h): labels "acquire", "try_acquire",
// "acquire_failed", "unlock", "force_unlock", "renew", "del_latch" (current), "subscribe" and
// "unsubscribe" with one channel per waiting thread. A thread's own channel must reach only
// that process, and SUBSCRIBE/UNSUBSCRIBE of different channels of one process are independent.
#ifndef LOCKSTEP_LOCKS_FAIRLOCK_FAIRLOCK_H_
#define LOCKSTEP_LOCKS_FAIRLOCK_FAIRLOCK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "locks/protocol.h"

namespace lockstep::locks {

struct FairLockOptions {
  // The TimeUnit of the modelled tryLock(waitTime, leaseTime, unit) call, in µs per unit:
  // 1000 = MILLISECONDS (default), 1'000'000 = SECONDS. waitTime = AcquireArgs::wait_us / this
  // (use a multiple of it); the tryLock budget itself is AcquireArgs::wait_us either way.
  int64_t wait_unit_us = 1000;
};

// Needs ScriptSet bodies "acquire", "try_acquire", "unlock", "force_unlock", "acquire_failed"
// and "renew" (RequiredScripts("fairlock"); LoadScripts takes the first five from
// lua/fairlock/<version>/ and "renew" from lua/rlock/<version>/, since the fair lock renews with
// RLock's script). Also config.fair_wait_timeout_us >= 0, options.wait_unit_us >= 1000 and a
// multiple of 1000, and what CheckRLockConfig checks. MakeFairLock asserts these; a driver
// calls CheckFairLockConfig first to turn a bad scenario into a message.
std::unique_ptr<LockProtocol> MakeFairLock(const ClientConfig& config, const ScriptSet& scripts,
                                           const FairLockOptions& options = {});

bool CheckFairLockConfig(const ClientConfig& config, const ScriptSet& scripts,
                         std::string* error, const FairLockOptions& options = {});

// redisson_lock_queue:{name} (LIST of lockNames, head = next owner).
std::string FairLockQueue(const std::string& lock_name);
// redisson_lock_timeout:{name} (ZSET lockName -> deadline, epoch ms).
std::string FairLockTimeouts(const std::string& lock_name);
// The channel thread `thread` of process `uuid` waits on:
// redisson_lock__channel:{name}:<uuid>:<thread + 1>.
std::string FairLockChannel(const std::string& lock_name, const std::string& uuid, int thread);

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_FAIRLOCK_FAIRLOCK_H_
