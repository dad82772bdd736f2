// Plain single-key locks as common SET NX designs write them, not Redisson (SETNX then EXPIRE;
// the GET-then-DEL unlock, and the compare-and-delete script that replaces it):
// the lock is one STRING key, `lock_name` itself (no prefix, no hash), whose value is the
// holder's token "<uuid>:<thread + 1>". Three kinds, as a sans-IO protocol:
//
//  - "setnx-px": acquire with one `SET key token NX PX ttl`; unlock with the compare-and-delete
//    script (lua/plain/unlock_compare_and_delete.lua, "unlock_compare_and_delete"). The correct
//    variant; its remaining weakness is that a holder paused past its TTL loses the lock
//    silently.
//  - "setnx-expire" (broken): acquire with `SETNX key token`, then, once that answered 1, a
//    separate `EXPIRE key ttl_s`. A process that dies between the two leaves a key with no TTL
//    that nobody can ever take again. Unlock as setnx-px.
//  - "get-del" (broken): acquire as setnx-px; unlock with `GET key` and, if it returned the
//    caller's token, a separate `DEL key`. If the key expires and another client takes it
//    between the GET and the DEL, the DEL deletes the other client's lock.
//
// What the driver sees (every command goes to node 0; labels in quotes):
//  - "acquire": SET <key> <token> NX PX <ttl_ms>   (setnx-px, get-del)
//  - "setnx":   SETNX <key> <token>, then "expire": EXPIRE <key> <ttl_s>   (setnx-expire)
//  - "unlock":  EVAL <compare-and-delete> 1 <key> <token>   (setnx-px, setnx-expire)
//  - "get":     GET <key>, then "del": DEL <key>   (get-del)
//  - "force_unlock": DEL <key>
//
// Client behaviour (a Jedis-style loop, no library to follow):
//  - The TTL is AcquireArgs::lease_us; a lease <= 0 (none given) uses the watchdog timeout
//    (30 s by default) as the TTL, with no renewal. setnx-expire rounds the TTL up to whole
//    seconds (EXPIRE takes seconds).
//  - A failed attempt is retried after kPlainRetrySleepUs, the last sleep cut short so that
//    the final attempt is made when the wait ends: tryLock(wait) attempts at 0, 100 ms, ... and
//    at `wait`, then fails. lock() retries forever; tryLock() makes one attempt.
//  - No command is resent. A command unanswered after ClientConfig::timeout_us ends the
//    operation as info (it may have run).
//  - Not reentrant: a thread that asks again for a lock it holds waits like anyone else.
//  - Release results: ok with value 1 when the caller's key was deleted; fail when the key was
//    missing or held another token; get-del reports ok without a value when its DEL found no
//    key (the key expired between GET and DEL).
#ifndef LOCKSTEP_LOCKS_PLAINLOCK_PLAINLOCK_H_
#define LOCKSTEP_LOCKS_PLAINLOCK_PLAINLOCK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "locks/protocol.h"

namespace lockstep::locks {

// The sleep between two attempts of one acquisition.
inline constexpr int64_t kPlainRetrySleepUs = 100'000;

// True for "setnx-px", "setnx-expire" and "get-del".
bool IsPlainLockKind(const std::string& kind);

// The value a thread writes into the key: "<uuid>:<thread + 1>".
std::string PlainLockToken(const std::string& uuid, int thread);

// True when MakePlainLock accepts the arguments (a plain kind, 1 <= threads <= 65536, timeout
// >= 1 ms, watchdog timeout >= 1 ms, and the script "unlock_compare_and_delete" for the kinds
// that use it); otherwise false with the reason in *error. The version is not used.
bool CheckPlainLockConfig(const std::string& kind, const ClientConfig& config,
                          const ScriptSet& scripts, std::string* error);

// Asserts CheckPlainLockConfig.
std::unique_ptr<LockProtocol> MakePlainLock(const std::string& kind, const ClientConfig& config,
                                            const ScriptSet& scripts);

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_PLAINLOCK_PLAINLOCK_H_
