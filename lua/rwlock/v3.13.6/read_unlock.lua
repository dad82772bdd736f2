-- ReadWriteLock: read-lock unlock (RedissonReadLock.unlockInnerAsync), Redisson 3.13.6.
--
-- Releases one read hold: decrement the caller's count (drop the field at 0) and delete the
-- timeout key of that hold. If other fields remain besides "mode", the hash TTL becomes the
-- largest PTTL among the live read-hold timeout keys of *every* field; if none is alive but a
-- writer is present (mode "write", downgrade case) the lock stays as it is. Otherwise the hash
-- is deleted and the unlock message published.
--
-- KEYS[1]  lock name (the hash)
-- KEYS[2]  channel: redisson_rwlock:{<name>}
-- KEYS[3]  timeout prefix of this thread: {<name>}:<clientUUID>:<threadId>:rwlock_timeout
-- KEYS[4]  key prefix: {<name>}  (timeout keys of field F are <KEYS[4]>:F:rwlock_timeout:<n>)
-- ARGV[1]  unlock message: 0
-- ARGV[2]  reader lockName = <clientUUID>:<threadId>
--
-- Returns:
--   1    there was no lock at all (no "mode"): ARGV[1] published anyway, success reported
--   nil  the caller holds no read lock (IllegalMonitorStateException)
--   0    released one hold; the lock lives on (other live read holds, or a writer)
--   1    released the last hold: hash deleted, ARGV[1] published on KEYS[2]
--
-- Redisson 3.13.6. Known bugs kept: unlocking a missing lock publishes and returns 1 (changed
-- to nil in 3.44.0); readers whose timeout keys have all expired are silently discarded (the
-- hash is deleted under them) -- that one is still so at HEAD. Not idempotent (no latch).
-- Portability: keys are built from the HINCRBY reply and from tonumber() of hash values, which
-- hold integer strings; a 5.4 host must push integer replies as integers.

local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call('publish', KEYS[2], ARGV[1])
    return 1
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
        return 0
    end
    if mode == 'write' then
        return 0
    end
end

redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
return 1
