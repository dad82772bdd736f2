-- RLock acquire (tryLockInnerAsync), Redisson 3.13.6: the two-branch form.
--
-- Takes the reentrant lock for one thread, or re-enters it. The lock is a hash whose field
-- <clientUUID>:<threadId> holds that thread's reentrancy count. A free lock (no key) is created
-- with count 1; a lock this thread already holds gets count + 1. Both refresh the TTL to the
-- lease. Anyone else's lock is left untouched and its remaining TTL is returned.
--
-- KEYS[1]  lock name (the hash), e.g. "mylock"
-- ARGV[1]  lease in ms: internalLockLeaseTime (lockWatchdogTimeout, 30000 by default, or the
--          explicit leaseTime; 3.13.6 overwrites the shared field right before the call, #3484)
-- ARGV[2]  lockName = <clientUUID>:<threadId>
--
-- Returns:
--   nil      acquired or re-entered (EVAL_NULL_BOOLEAN reads it as true)
--   integer  not acquired: PTTL of the lock in ms (-1 if the key has no TTL)
--
-- Redisson 3.13.6: two separate branches (exists == 0, then hexists == 1), each with hincrby;
-- 3.12.3 had already replaced hset by hincrby for the first acquisition (#2551). The branches
-- were merged into one condition in 3.19.0 (see ../current/acquire.lua); behaviour is the same.
-- Known bugs kept: none in the script itself.

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
