-- SpinLock acquire (RedissonSpinLock.tryLockInnerAsync), current Redisson (3.15.0 .. HEAD).
--
-- The two-branch RLock acquire: create the hash with count 1 if the lock is free, or add one
-- hold if this thread already holds it; both set the TTL to the lease. Otherwise return PTTL.
-- A SpinLock client never subscribes: on failure it sleeps (exponential back-off from 1 ms,
-- capped at 128 ms, by default) and tries again.
--
-- KEYS[1]  lock name (the hash; field <clientUUID>:<threadId> = hold count)
-- ARGV[1]  lease in ms: internalLockLeaseTime, which the SpinLock client overwrites with
--          unit.toMillis(leaseTime) right before sending (the 3.13.6 RLock race, #3484, kept)
-- ARGV[2]  lockName = <clientUUID>:<threadId>
--
-- Returns:
--   nil      acquired or re-entered
--   integer  not acquired: PTTL of the lock in ms
--
-- Redisson 3.15.0 .. HEAD. Known bugs kept: none in the script (the lease race is client-side).

if redis.call('exists', KEYS[1]) == 0 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end

if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end

return redis.call('pttl', KEYS[1])
