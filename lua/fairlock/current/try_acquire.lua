-- FairLock acquire, EVAL_NULL_BOOLEAN variant (tryLock() with no wait), current Redisson.
--
-- One attempt that never joins the queue: purge expired heads (nil-safe), take the lock if it
-- is free and nobody is ahead (shifting the other waiters' deadlines down by `wait`), or
-- re-enter.
--
-- KEYS[1]  lock name (the hash)
-- KEYS[2]  queue: redisson_lock_queue:{<name>}     LIST of lockNames
-- KEYS[3]  timeouts: redisson_lock_timeout:{<name>} ZSET lockName -> deadline (epoch ms)
-- ARGV[1]  lease in ms
-- ARGV[2]  lockName = <clientUUID>:<threadId>
-- ARGV[3]  now: the client's clock in epoch ms     <- note: order swapped against acquire.lua
-- ARGV[4]  wait in ms (Config.fairLockWaitTimeout, 300000 by default)
--
-- Returns:
--   nil  acquired or re-entered (the client reads true)
--   1    not acquired (the client reads false); nothing was queued
--
-- Redisson 3.32.0 .. HEAD (nil-safe purge, #4153). Known bugs kept: none.

local now = tonumber(ARGV[3])
local wait = tonumber(ARGV[4])

while true do
    local head = redis.call('lindex', KEYS[2], 0)
    if head == false then
        break
    end
    local deadline = redis.call('zscore', KEYS[3], head)
    if deadline ~= false and tonumber(deadline) <= now then
        redis.call('zrem', KEYS[3], head)
        redis.call('lpop', KEYS[2])
    else
        break
    end
end

if redis.call('exists', KEYS[1]) == 0
    and (redis.call('exists', KEYS[2]) == 0
         or redis.call('lindex', KEYS[2], 0) == ARGV[2]) then
    redis.call('lpop', KEYS[2])
    redis.call('zrem', KEYS[3], ARGV[2])
    local waiters = redis.call('zrange', KEYS[3], 0, -1)
    for i = 1, #waiters do
        redis.call('zincrby', KEYS[3], -wait, waiters[i])
    end
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end

if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end

return 1
