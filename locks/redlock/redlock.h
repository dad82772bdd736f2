// Redisson's RedissonMultiLock and RedissonRedLock as one sans-IO state machine over N
// independent Redis masters (the Outbox's slots 0 .. NodeCount()-1).
//
// Members: one RLock per slot (MakeRLock, unchanged, in the configured version), all with the
// same lock name, uuid and thread numbers, each behind an Outbox adapter that sends its commands
// to its own slot. Each member therefore has RLock's own pub/sub subscription on its node, its
// own resends and its own watchdog. (In Redisson each member usually comes from its own
// RedissonClient and so has its own uuid; one uuid per process here changes no key that two
// members share, since every member lives on another node.)
//
// tryLock(wait, lease) (RedissonMultiLock.tryLock; "v3.13.6" tests wait/lease against -1,
// "current" against > 0):
//  - Members are tried in slot order, one at a time. Member wait: MultiLock the remaining wait;
//    RedLock max(wait / n, 1 ms) computed once, each member getting min(that, remaining). With
//    neither wait nor lease, each member gets one tryLock() attempt.
//  - Member lease: 2 * wait when a lease is given (the lease itself when no wait is given),
//    none (watchdog) otherwise.
//  - Failures allowed: MultiLock 0, RedLock n - (n/2 + 1). A failed member when exactly that
//    many are still not acquired ends the loop with success (quorum). Otherwise, with no
//    failures left, everything acquired is unlocked and, if a wait was given, the loop starts
//    again from the first member; without a wait it fails.
//  - A member whose tryLock ended in a response timeout (info) is unlocked at once (#1606).
//  - After every member the remaining wait is charged; at <= 0 everything acquired is unlocked
//    and the acquisition fails.
//  - On success with a lease, every acquired member gets `PEXPIRE <lock> <lease>` (label
//    "expire", on its node, resent like any command); their 0/1 answers are ignored as
//    Redisson ignores them.
//  - lock(lease): tryLock(wait, lease) until it succeeds, with wait = n * 1500 ms without a
//    lease, else random [lease/2, lease) or [n * 1500, lease) (v3.13.6 also clamps a lease
//    <= 2000 ms to a 2000 ms wait and draws once; current draws every round).
//  - tryLock(): tryLock(-1, -1).
//
// Validity (MultiLockOptions::check_validity, on for "redlock"): the check of the reference
// RedLock implementations (antirez's redlock-rb, redlock-py), which Redisson does NOT make:
// after a successful loop, validity = TTL - elapsed - drift with drift = TTL / 100 + 2 ms,
// TTL = the lease (watchdog timeout without one) and elapsed measured from the start of the
// current round. validity <= 0 counts as a failed acquisition: everything acquired is unlocked
// and tryLock fails (lock() goes round again). The validity of a success is in the detail.
//
// unlock(): every member is unlocked, acquired or not. MultiLock reports the first member (in
// slot order) that did not end ok, else ok; RedLock swallows member errors and is always ok.
// OpResult::value is in RLock's terms: 1 when some member's unlock released its lock, else 0
// when some member's lock is still held (a reentrant hold); none when no member answered ok.
// The detail counts the members.
// forceUnlock(): fails with UnsupportedOperationException, as in Redisson.
//
// What the driver sees: RLock's commands and labels, each sent to the member's slot, plus
// "expire". OnMessage(node) goes to the member of that slot. Request and timer ids are this
// protocol's own (member id * (n + 1) + slot, and n for its own commands): the driver must treat
// them as opaque, and this protocol never takes ids from the driver's Outbox counters.
#ifndef LOCKSTEP_LOCKS_REDLOCK_REDLOCK_H_
#define LOCKSTEP_LOCKS_REDLOCK_REDLOCK_H_

#include <memory>
#include <string>

#include "locks/protocol.h"

namespace lockstep::locks {

struct MultiLockOptions {
  bool redlock = false;         // Quorum (n - (n/2+1) failures) and wait / n per member.
  bool check_validity = false;  // The reference RedLock validity check (see above).
};

// Needs the RLock scripts ("acquire", "unlock", "renew", "force_unlock" of lua/rlock/<version>)
// and what CheckRLockConfig needs.
bool CheckMultiLockConfig(const ClientConfig& config, const ScriptSet& scripts,
                          std::string* error);

// Asserts CheckMultiLockConfig. The members are made at the first operation, when the Outbox
// tells how many nodes there are.
std::unique_ptr<LockProtocol> MakeMultiLock(const ClientConfig& config, const ScriptSet& scripts,
                                            const MultiLockOptions& options);

// Kind "redlock": RedissonRedLock plus the validity check.
std::unique_ptr<LockProtocol> MakeRedLock(const ClientConfig& config, const ScriptSet& scripts);

// The validity of an acquisition in the reference RedLock implementations, in microseconds:
// ttl - elapsed - (ttl / 100 + 2 ms). The lock counts as acquired only when it is > 0.
int64_t RedLockValidityUs(int64_t ttl_us, int64_t elapsed_us);

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_REDLOCK_REDLOCK_H_
