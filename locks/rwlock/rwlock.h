// Redisson's RReadWriteLock (RedissonReadLock + RedissonWriteLock) as a sans-IO state machine,
// in two versions chosen by ClientConfig::version ("v3.13.6" or "current"). Scripts:
// lua/rwlock/<version>/ plus lua/rlock/<version>/renew.lua for the write side's watchdog.
//
// One protocol object is one client process (one uuid) using one read-write lock from
// ClientConfig::threads threads: Acquire with args.shared takes readLock(), without it
// writeLock(). Both sides are Redisson lock objects on the same name, so they run on the shared
// Redisson machine (redisson_common.h) exactly as RLock does, and they share what Redisson
// shares between them, because both have the entry name "<uuid>:<name>":
//  - one subscription entry per process on redisson_rwlock:{name}. A read unlock publishes 0
//    (wakes one waiting thread of each process), a write unlock publishes 1 (wakes all of them);
//  - 3.13.6: one watchdog entry (EXPIRATION_RENEWAL_MAP) per process. Its timer chain runs the
//    renew script of the side whose acquisition created the entry, for the entry's first thread:
//    read_renew.lua (renews the hash and every reader's timeout keys), or RLock's renew.lua on
//    the field "<uuid>:<tid>:write". So after write, read, then releasing the write (the classic
//    downgrade) the chain renews a write field that is gone, gets 0 and stops: the read hold is
//    no longer renewed (kept: it is what 3.13.6 does).
//  - current: the same single watchdog entry; each tick renews the entry's first thread with the
//    side it holds: read_renew.lua (batched form) for every thread of this process that holds a
//    read lock, only their own timeout keys; or RLock's batched renew.lua for the ":write" field.
//
// Release releases the side the thread took last (a thread holding both after a downgrade
// releases its most recent hold first); a thread the protocol believes holds nothing releases
// the side of its last Acquire. ForceUnlock runs that same side's forceUnlock
// (force_unlock_read / force_unlock_write).
//
// What the driver sees (all on node 0): "read_acquire", "write_acquire", "unlock" (read_unlock
// or write_unlock, by argv), "renew" (read_renew or RLock renew), "force_unlock", and for
// "current" "del_latch"; "subscribe" / "unsubscribe" of redisson_rwlock:{name}. Unlock results:
// ok with value 1 (released) or 0 (still held); 3.13.6 also answers 1 when the lock does not
// exist at all, "current" answers nil there (IllegalMonitorStateException, fail).
//
// Deviations from Redisson, all small:
//  - internalLockLeaseTime is one field per process shared by both sides (Redisson: one per
//    lock object, and readLock()/writeLock() make a new object on every call).
//  - current: Redisson renews reads and writes in two tasks (ReadLockTask, LockTask), and a
//    read unlock also cancels the thread's write renewal; here one entry renews whichever side
//    the first thread holds, and a read unlock cancels one acquisition of that entry only.
#ifndef LOCKSTEP_LOCKS_RWLOCK_RWLOCK_H_
#define LOCKSTEP_LOCKS_RWLOCK_RWLOCK_H_

#include <memory>
#include <string>

#include "locks/protocol.h"

namespace lockstep::locks {

// Needs the scripts RequiredScripts("rwlock") names and a config CheckRedissonConfig accepts.
std::unique_ptr<LockProtocol> MakeRwLock(const ClientConfig& config, const ScriptSet& scripts);

// True when MakeRwLock accepts the arguments; otherwise false with the reason in *error.
bool CheckRwLockConfig(const ClientConfig& config, const ScriptSet& scripts, std::string* error);

// The channel both sides publish on and wait on: redisson_rwlock:{name}.
std::string RwLockChannel(const std::string& lock_name);

// Redisson's suffixName(name, suffix): {name}:suffix, or name:suffix when name has a '{'.
std::string SuffixName(const std::string& name, const std::string& suffix);

// The prefix of one thread's read-hold timeout keys, {name}:<uuid>:<thread + 1>:rwlock_timeout;
// read hold n of the thread lives in "<prefix>:<n>".
std::string RwLockTimeoutPrefix(const std::string& lock_name, const std::string& uuid,
                                int thread);

// The key prefix the unlock and renew scripts build every reader's timeout keys from: {name}.
std::string RwLockKeyPrefix(const std::string& lock_name);

// The write holder's hash field: <uuid>:<thread + 1>:write.
std::string RwLockWriteField(const std::string& uuid, int thread);

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_RWLOCK_RWLOCK_H_
