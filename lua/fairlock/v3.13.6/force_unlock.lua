-- FairLock forceUnlock (forceUnlockAsync), Redisson 3.13.6: literal PUBLISH.
--
-- Purges expired queue heads, deletes the lock whoever holds it, and wakes the queue head.
--
-- KEYS[1]  lock name (the hash)
-- KEYS[2]  queue: redisson_lock_queue:{<name>}
-- KEYS[3]  timeouts: redisson_lock_timeout:{<name>}
-- KEYS[4]  channel prefix: redisson_lock__channel:{<name>} (head is woken on <prefix>:<head>)
-- ARGV[1]  unlock message: 0
-- ARGV[2]  now: the client's clock in epoch ms
--
-- Returns:
--   1  a lock existed and was deleted; the head (if any) was sent ARGV[1]
--   0  there was no lock
--
-- Redisson 3.13.6. Known bug kept: no nil check on the head's score in the purge (#4153).

local now = tonumber(ARGV[2])

while true do
    local head = redis.call('lindex', KEYS[2], 0)
    if head == false then
        break
    end
    local deadline = tonumber(redis.call('zscore', KEYS[3], head))
    if deadline <= now then
        redis.call('zrem', KEYS[3], head)
        redis.call('lpop', KEYS[2])
    else
        break
    end
end

if redis.call('del', KEYS[1]) == 1 then
    local nextWaiter = redis.call('lindex', KEYS[2], 0)
    if nextWaiter ~= false then
        redis.call('publish', KEYS[4] .. ':' .. nextWaiter, ARGV[1])
    end
    return 1
end
return 0
