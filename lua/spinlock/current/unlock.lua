-- SpinLock unlock (RedissonSpinLock.unlockInnerAsync), current Redisson: latch, no publish.
--
-- Releases one hold, idempotently per request (unlock latch, as in the RLock unlock). Nothing
-- is published: SpinLock waiters poll.
--
-- KEYS[1]  lock name (the hash)
-- KEYS[2]  unlock latch: redisson_unlock_latch:{<name>}:<requestId>  (STRING "0" or "1")
-- ARGV[1]  lease in ms used to refresh a still-held lock (internalLockLeaseTime)
-- ARGV[2]  lockName = <clientUUID>:<threadId>
-- ARGV[3]  latch TTL in ms
--
-- Returns:
--   0/1  the recorded result, when the latch exists (a resend)
--   nil  caller does not hold the lock (IllegalMonitorStateException); no latch
--   0    one hold released, still held (TTL reset to ARGV[1]); latch = 0
--   1    last hold released, key deleted; latch = 1
--
-- Redisson 3.24.0 .. HEAD. Known bugs kept: none.

local recorded = redis.call('get', KEYS[2])
if recorded ~= false then
    return tonumber(recorded)
end

if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
    return nil
end

local holds = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if holds > 0 then
    redis.call('pexpire', KEYS[1], ARGV[1])
    redis.call('set', KEYS[2], 0, 'px', ARGV[3])
    return 0
end

redis.call('del', KEYS[1])
redis.call('set', KEYS[2], 1, 'px', ARGV[3])
return 1
