-- RLock acquire (tryLockInnerAsync), current Redisson (3.19.0 onward, unchanged to HEAD).
--
-- Takes the reentrant lock for one thread, or re-enters it: if the lock is free or already held
-- by this thread, the thread's count is incremented (created at 1) and the TTL set to the
-- lease. Otherwise the lock is left alone and its remaining TTL is returned.
--
-- KEYS[1]  lock name (the hash), e.g. "mylock"; field <clientUUID>:<threadId> = hold count
-- ARGV[1]  lease in ms: unit.toMillis(leaseTime) when a lease is given, else
--          internalLockLeaseTime = lockWatchdogTimeout (30000 by default)
-- ARGV[2]  lockName = <clientUUID>:<threadId>
--
-- Returns:
--   nil      acquired or re-entered
--   integer  not acquired: PTTL of the lock in ms (-1 if the key has no TTL)
--
-- Redisson 3.19.0 .. HEAD (the two branches of 3.13.6 merged into one condition, 8c39beaa5).
-- Known bugs kept: none.

if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
return redis.call('pttl', KEYS[1])
