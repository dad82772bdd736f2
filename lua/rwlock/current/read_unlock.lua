-- ReadWriteLock: read-lock unlock (RedissonReadLock.unlockInnerAsync), current Redisson.
--
-- Latch check first (a resend of the same request returns the recorded result). Then release
-- one read hold: decrement the caller's count (drop the field at 0) and delete the timeout key
-- of that hold. If other fields remain besides "mode", the hash TTL becomes the largest PTTL
-- among the live read-hold timeout keys of *every* field; if none is alive but a writer is
-- present (mode "write") the lock stays as it is. Otherwise the hash is deleted and the unlock
-- message published.
--
-- KEYS[1]  lock name (the hash)
-- KEYS[2]  channel: redisson_rwlock:{<name>}
-- KEYS[3]  timeout prefix of this thread: {<name>}:<clientUUID>:<threadId>:rwlock_timeout
-- KEYS[4]  key prefix: {<name>}  (timeout keys of field F are <KEYS[4]>:F:rwlock_timeout:<n>)
-- KEYS[5]  unlock latch: redisson_unlock_latch:{<name>}:<requestId>
-- ARGV[1]  unlock message: 0
-- ARGV[2]  reader lockName = <clientUUID>:<threadId>
-- ARGV[3]  publish command: "publish" or "spublish"
-- ARGV[4]  latch TTL in ms
--
-- Returns:
--   0/1  the recorded result, when the latch exists (a resend)
--   nil  there was no lock at all: ARGV[1] published anyway, latch = 1 (since 3.44.0; 1 before)
--   nil  the caller holds no read lock (IllegalMonitorStateException); no latch
--   0    released one hold, the lock lives on; latch = 0
--   1    released the last hold: hash deleted, ARGV[1] published; latch = 1
--
-- Redisson 3.44.0 .. HEAD. Known bug kept (still present at HEAD): readers whose timeout keys
-- have all expired are silently discarded when the hash is deleted under them.
-- Portability: keys are built from the HINCRBY reply and from tonumber() of hash values.

local recorded = redis.call('get', KEYS[5])
if recorded ~= false then
    return tonumber(recorded)
end

local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call(ARGV[3], KEYS[2], ARGV[1])
    redis.call('set', KEYS[5], 1, 'px', ARGV[4])
    return nil
end

if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
    return nil
end

local holds = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if holds == 0 then
    redis.call('hdel', KEYS[1], ARGV[2])
end
redis.call('del', KEYS[3] .. ':' .. (holds + 1))

if redis.call('hlen', KEYS[1]) > 1 then
    local maxRemaining = -3
    local fields = redis.call('hkeys', KEYS[1])
    for _, field in ipairs(fields) do
        local count = tonumber(redis.call('hget', KEYS[1], field))
        if count ~= nil then
            for n = count, 1, -1 do
                local remaining = redis.call('pttl', KEYS[4] .. ':' .. field .. ':rwlock_timeout:' .. n)
                if remaining > maxRemaining then
                    maxRemaining = remaining
                end
            end
        end
    end
    if maxRemaining > 0 then
        redis.call('pexpire', KEYS[1], maxRemaining)
        redis.call('set', KEYS[5], 0, 'px', ARGV[4])
        return 0
    end
    if mode == 'write' then
        redis.call('set', KEYS[5], 0, 'px', ARGV[4])
        return 0
    end
end

redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], ARGV[1])
redis.call('set', KEYS[5], 1, 'px', ARGV[4])
return 1
