// Redisson's RLock (RedissonLock) client as a sans-IO state machine, in two versions chosen by
// ClientConfig::version:
//
//  - "v3.13.6": Redisson 3.13.6, whose published scripts the project started from. Every script goes through the
//    retrying command executor, so a lost reply can run acquire or unlock twice. One watchdog
//    timer per lock, at internalLockLeaseTime / 3; it stops for good on an error or a 0.
//    internalLockLeaseTime is one field per process, overwritten before every acquire (#3484).
//  - "current": Redisson HEAD (4.7.x). Acquire and unlock are not resent once written (a
//    response timeout ends them at once, outcome unknown); unlock carries a latch key and
//    the publish command; one per-process watchdog task renews with the batched script.
//
// What one protocol object is: one client process (one RedissonClient, one uuid) using one
// lock name from ClientConfig::threads threads. Threads are 0-based here; Redisson's thread id
// (the second half of the hash field "<uuid>:<threadId>") is thread + 1.
//
// What the driver sees:
//  - Every command goes to node 0. Scripts are sent as EVAL <body> <numkeys> keys... args...
//    with the script's name as the label ("acquire", "unlock", "renew", "force_unlock");
//    "current" also sends "del_latch" (DEL of the unlock latch, after the unlock's reply).
//  - "subscribe" / "unsubscribe": SUBSCRIBE <channel> / UNSUBSCRIBE <channel> on the process's
//    pub/sub connection. Any non-error reply confirms a SUBSCRIBE (Redis sends
//    ["subscribe", channel, count]); an error reply fails it. The UNSUBSCRIBE reply is ignored.
//    Both must be applied in the order sent. Messages on the channel arrive as OnMessage;
//    payload "0" wakes one waiting thread of this process, "1" wakes all of them.
//  - The driver must not call back into the protocol from inside an Outbox method (no reply
//    delivered from inside Send); Complete() is always the last thing a handler does.
#ifndef LOCKSTEP_LOCKS_RLOCK_RLOCK_H_
#define LOCKSTEP_LOCKS_RLOCK_RLOCK_H_

#include <memory>
#include <string>

#include "locks/protocol.h"

namespace lockstep::locks {

// Needs ScriptSet bodies "acquire", "unlock", "renew" and "force_unlock" (see
// RequiredScripts("rlock")), config.threads >= 1, a version of "v3.13.6" or "current", a
// positive timeout and watchdog timeout, retry_attempts >= 0 and retry_interval_us >= 0.
// MakeRLock asserts these; a driver calls CheckRLockConfig first to turn a bad scenario into
// a message.
std::unique_ptr<LockProtocol> MakeRLock(const ClientConfig& config, const ScriptSet& scripts);

// True when MakeRLock accepts the arguments; otherwise false with the reason in *error.
bool CheckRLockConfig(const ClientConfig& config, const ScriptSet& scripts, std::string* error);

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_RLOCK_RLOCK_H_
