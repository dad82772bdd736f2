-- FairLock acquireFailed (acquireFailedAsync), Redisson 3.13.6 (unchanged to HEAD).
--
-- Run by the client when tryLock(wait, ...) gives up: removes the waiter from the queue and
-- the deadline set, and shifts the deadline of every waiter *behind* it down by `wait`, since
-- they no longer wait for it.
--
-- KEYS[1]  queue: redisson_lock_queue:{<name>}     LIST of lockNames
-- KEYS[2]  timeouts: redisson_lock_timeout:{<name>} ZSET lockName -> deadline (epoch ms)
-- ARGV[1]  lockName = <clientUUID>:<threadId> of the waiter giving up
-- ARGV[2]  wait in ms (the same value the waiter queued with; in 3.13.6 unit.toMillis(wait),
--          which differs from the unconverted value acquire.lua received, #4743)
--
-- Returns: nil always (the client ignores the reply).
--
-- Redisson 3.13.6 .. HEAD (the script never changed). Known bugs kept: none in the script;
-- the #4743 unit mismatch lives in the client arguments.

local queue = redis.call('lrange', KEYS[1], 0, -1)
local position = nil
for i = 1, #queue do
    if queue[i] == ARGV[1] then
        position = i
        break
    end
end
if position ~= nil then
    local wait = tonumber(ARGV[2])
    for j = position + 1, #queue do
        redis.call('zincrby', KEYS[2], -wait, queue[j])
    end
end
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('lrem', KEYS[1], 0, ARGV[1])
return nil
