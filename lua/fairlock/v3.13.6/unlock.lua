-- FairLock unlock (unlockInnerAsync), Redisson 3.13.6: no latch, literal PUBLISH.
--
-- Purges expired queue heads, then releases one hold. When the lock ends up free it wakes
-- only the queue head, by publishing on the head's own channel <channel>:<head lockName>.
--
-- KEYS[1]  lock name (the hash)
-- KEYS[2]  queue: redisson_lock_queue:{<name>}     LIST of lockNames
-- KEYS[3]  timeouts: redisson_lock_timeout:{<name>} ZSET lockName -> deadline (epoch ms)
-- KEYS[4]  channel prefix: redisson_lock__channel:{<name>}; each waiter subscribes to
--          redisson_lock__channel:{<name>}:<clientUUID>:<threadId>
-- ARGV[1]  unlock message: 0
-- ARGV[2]  lease in ms used to refresh a still-held lock (internalLockLeaseTime)
-- ARGV[3]  lockName = <clientUUID>:<threadId>
-- ARGV[4]  now: the client's clock in epoch ms
--
-- Returns:
--   1    the lock key did not exist: the head (if any) is woken, and the caller is told
--        "released" although it held nothing
--   nil  someone else holds the lock (IllegalMonitorStateException)
--   0    one hold released, still held (TTL reset to ARGV[2])
--   1    last hold released: key deleted, head (if any) woken on KEYS[4]:<head>
--
-- Redisson 3.13.6. Known bugs kept: the purge has no nil check on the head's score
-- ("attempt to compare nil with number", #4153); unlocking a missing lock reports success.
-- Not idempotent under resend (no latch until 3.24.0).

local now = tonumber(ARGV[4])

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

if redis.call('exists', KEYS[1]) == 0 then
    local nextWaiter = redis.call('lindex', KEYS[2], 0)
    if nextWaiter ~= false then
        redis.call('publish', KEYS[4] .. ':' .. nextWaiter, ARGV[1])
    end
    return 1
end

if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return nil
end

local holds = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if holds > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    return 0
end

redis.call('del', KEYS[1])
local nextWaiter = redis.call('lindex', KEYS[2], 0)
if nextWaiter ~= false then
    redis.call('publish', KEYS[4] .. ':' .. nextWaiter, ARGV[1])
end
return 1
