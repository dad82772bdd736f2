-- ReadWriteLock: write-lock unlock (RedissonWriteLock.unlockInnerAsync), current Redisson.
--
-- Latch check first (a resend of the same request returns the recorded result). Then release
-- one write hold. On the last one the writer field is removed; if nothing but "mode" is left
-- the hash is deleted and the message published, otherwise the writer still has read holds
-- (downgrade) and the mode turns to "read" without a publish.
-- The message is 1 (READ_UNLOCK_MESSAGE), which wakes *all* local waiters, not just one.
--
-- KEYS[1]  lock name (the hash)
-- KEYS[2]  channel: redisson_rwlock:{<name>}
-- KEYS[3]  unlock latch: redisson_unlock_latch:{<name>}:<requestId>
-- ARGV[1]  message: 1 (LockPubSub.READ_UNLOCK_MESSAGE)
-- ARGV[2]  lease in ms used to refresh a still-held lock (internalLockLeaseTime)
-- ARGV[3]  writer lockName = <clientUUID>:<threadId>:write
-- ARGV[4]  publish command: "publish" or "spublish"
-- ARGV[5]  latch TTL in ms
--
-- Returns:
--   0/1  the recorded result, when the latch exists (a resend)
--   nil  there was no lock at all: ARGV[1] published anyway, latch = 1 (since 3.44.0; 1 before)
--   nil  mode is "read", or the caller is not the writer (IllegalMonitorStateException)
--   0    released one hold, still held (TTL reset to ARGV[2]); latch = 0
--   1    released the last write hold (deleted and published, or turned into "read"); latch = 1
--
-- Redisson 3.44.0 .. HEAD. Known bugs kept: none in the script.

local recorded = redis.call('get', KEYS[3])
if recorded ~= false then
    return tonumber(recorded)
end

local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call(ARGV[4], KEYS[2], ARGV[1])
    redis.call('set', KEYS[3], 1, 'px', ARGV[5])
    return nil
end

if mode == 'write' then
    if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
        return nil
    end
    local holds = redis.call('hincrby', KEYS[1], ARGV[3], -1)
    if holds > 0 then
        redis.call('pexpire', KEYS[1], ARGV[2])
        redis.call('set', KEYS[3], 0, 'px', ARGV[5])
        return 0
    end
    redis.call('hdel', KEYS[1], ARGV[3])
    if redis.call('hlen', KEYS[1]) == 1 then
        redis.call('del', KEYS[1])
        redis.call(ARGV[4], KEYS[2], ARGV[1])
    else
        -- The writer still has read holds: the lock becomes a read lock.
        redis.call('hset', KEYS[1], 'mode', 'read')
    end
    redis.call('set', KEYS[3], 1, 'px', ARGV[5])
    return 1
end

return nil
