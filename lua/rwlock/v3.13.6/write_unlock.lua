-- ReadWriteLock: write-lock unlock (RedissonWriteLock.unlockInnerAsync), Redisson 3.13.6.
--
-- Releases one write hold. On the last one the writer field is removed; if nothing but "mode"
-- is left the hash is deleted and the message published, otherwise the writer still has read
-- holds (downgrade) and the mode turns to "read" without a publish.
-- The message is 1 (READ_UNLOCK_MESSAGE), which wakes *all* local waiters, not just one.
--
-- KEYS[1]  lock name (the hash)
-- KEYS[2]  channel: redisson_rwlock:{<name>}
-- ARGV[1]  message: 1 (LockPubSub.READ_UNLOCK_MESSAGE)
-- ARGV[2]  lease in ms used to refresh a still-held lock (internalLockLeaseTime)
-- ARGV[3]  writer lockName = <clientUUID>:<threadId>:write
--
-- Returns:
--   1    there was no lock at all: ARGV[1] published anyway, success reported
--   nil  mode is "read", or the caller is not the writer (IllegalMonitorStateException)
--   0    released one hold, still held (TTL reset to ARGV[2])
--   1    released the last write hold (hash deleted and published, or turned into "read")
--
-- Redisson 3.13.6. Known bugs kept: unlocking a missing lock publishes and returns 1 (nil since
-- 3.44.0). Not idempotent (no latch until 3.24.0).

local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call('publish', KEYS[2], ARGV[1])
    return 1
end

if mode == 'write' then
    if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
        return nil
    end
    local holds = redis.call('hincrby', KEYS[1], ARGV[3], -1)
    if holds > 0 then
        redis.call('pexpire', KEYS[1], ARGV[2])
        return 0
    end
    redis.call('hdel', KEYS[1], ARGV[3])
    if redis.call('hlen', KEYS[1]) == 1 then
        redis.call('del', KEYS[1])
        redis.call('publish', KEYS[2], ARGV[1])
    else
        -- The writer still has read holds: the lock becomes a read lock.
        redis.call('hset', KEYS[1], 'mode', 'read')
    end
    return 1
end

return nil
