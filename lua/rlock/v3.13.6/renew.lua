-- RLock watchdog renewal (renewExpirationAsync), Redisson 3.13.6: one script per lock.
--
-- Extends the lease of a lock that the given thread still holds. The 3.13.6 watchdog runs it
-- every internalLockLeaseTime / 3 ms and re-arms its timer only when it returns 1.
--
-- KEYS[1]  lock name (the hash)
-- ARGV[1]  new lease in ms (internalLockLeaseTime, 30000 by default)
-- ARGV[2]  lockName = <clientUUID>:<threadId> (the first thread id of the renewal entry)
--
-- Returns:
--   1  the thread still holds the lock; its TTL is now ARGV[1]
--   0  the lock is gone or held by someone else; nothing changed (the watchdog stops)
--
-- Redisson 3.13.6. Replaced by the batched ../current/renew.lua in 3.44.0.
-- Known bugs kept: none in the script (on a renewal *error* the 3.13.6 client stops renewing
-- but keeps its entry; that is client behaviour, not script behaviour).

if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('pexpire', KEYS[1], ARGV[1])
    return 1
end
return 0
