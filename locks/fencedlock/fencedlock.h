// Redisson's RFencedLock (RedissonFencedLock, 3.19.0+, #4684) as a sans-IO state machine,
// "current" version only (there is no FencedLock in 3.13.6).
//
// A FencedLock is an RLock whose every successful acquisition -- the first and every reentry --
// also increments the counter redisson_lock_token:{name} and returns the new value as a fencing
// token (lua/fencedlock/current/acquire_with_token.lua: {-1, token} acquired, {pttl, -1} not).
// The counter is never deleted (#6510), so tokens keep growing: 1, 2, 3, ...
//
// How it is built: it runs the RLock "current" state machine (MakeRLock, unchanged) behind an
// Outbox adapter that turns each "acquire" EVAL into the token script (KEYS lock, token
// counter; ARGV lease, lockName) and turns the token script's reply back into what RLock
// expects (nil / PTTL), keeping the token. Unlock, renew, force_unlock, pub/sub and the
// watchdog are therefore exactly RLock current's (lua/rlock/current/*.lua, channel
// redisson_lock__channel:{name}).
//
// Tokens: an acquisition that completes ok carries its token as OpResult::value; Token(thread)
// returns the token of the thread's innermost hold (reentrant holds stack: releasing one level
// gives back the enclosing hold's token; a full release, a failed unlock, forceUnlock or a crash
// forget them).
//
// Kept from Redisson: lockAndGetToken(lease) ignores the lease (it calls lockAndGetTokenAsync()
// with none), so Mode::kLock with a lease acquires with the watchdog. tryLock keeps its lease.
//
// What the driver sees: as RLock current (all on node 0, labels "acquire", "unlock", "renew",
// "force_unlock", "del_latch", "subscribe", "unsubscribe"); the "acquire" EVAL carries the token
// script. Request and timer ids are the adapter's own and pass through unchanged: this protocol
// never asks the driver's Outbox for ids of its own.
#ifndef LOCKSTEP_LOCKS_FENCEDLOCK_FENCEDLOCK_H_
#define LOCKSTEP_LOCKS_FENCEDLOCK_FENCEDLOCK_H_

#include <memory>
#include <string>

#include "locks/protocol.h"

namespace lockstep::locks {

// The token counter: redisson_lock_token:{name}.
std::string FencedLockTokenKey(const std::string& lock_name);

// Needs ScriptSet bodies "acquire_with_token" (lua/fencedlock/current) and "unlock", "renew",
// "force_unlock" (lua/rlock/current); see RequiredScripts("fencedlock"). The version must be
// "current".
bool CheckFencedLockConfig(const ClientConfig& config, const ScriptSet& scripts,
                           std::string* error);

// Asserts CheckFencedLockConfig.
std::unique_ptr<LockProtocol> MakeFencedLock(const ClientConfig& config, const ScriptSet& scripts);

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_FENCEDLOCK_FENCEDLOCK_H_
