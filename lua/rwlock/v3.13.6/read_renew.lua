-- ReadWriteLock: read-lock watchdog renewal (RedissonReadLock.renewExpirationAsync), 3.13.6.
--
-- If the given reader still has a read hold, extends the hash and then the timeout key of
-- every read hold of *every* field (all readers, not just this one: a single live reader's
-- watchdog keeps abandoned read holds of crashed clients alive too).
--
-- KEYS[1]  lock name (the hash)
-- KEYS[2]  key prefix: {<name>}  (timeout keys of field F are <KEYS[2]>:F:rwlock_timeout:<n>)
-- ARGV[1]  new lease in ms (internalLockLeaseTime)
-- ARGV[2]  reader lockName = <clientUUID>:<threadId>
--
-- Returns:
--   1  the reader still holds a read lock: everything above was extended to ARGV[1]
--   0  it holds none; nothing changed (the watchdog stops)
--
-- Redisson 3.13.6 (the all-fields behaviour lasted until 4.4.0, bfbf73d0b). Known bug kept:
-- it renews every reader's holds, so the read holds of a crashed client never time out while
-- any other reader's watchdog runs.
-- Portability: loop bounds come from tonumber() of integer strings (the hash counts).

if redis.call('hget', KEYS[1], ARGV[2]) == false then
    return 0
end

redis.call('pexpire', KEYS[1], ARGV[1])
if redis.call('hlen', KEYS[1]) > 1 then
    local fields = redis.call('hkeys', KEYS[1])
    for _, field in ipairs(fields) do
        local count = tonumber(redis.call('hget', KEYS[1], field))
        if count ~= nil then
            for n = count, 1, -1 do
                redis.call('pexpire', KEYS[2] .. ':' .. field .. ':rwlock_timeout:' .. n, ARGV[1])
            end
        end
    end
end
return 1
