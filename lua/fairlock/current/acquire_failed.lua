-- FairLock acquireFailed (acquireFailedAsync), current Redisson (unchanged since 3.13.6).
--
-- Run by the client when tryLock(wait, ...) gives up: removes the waiter from the queue and
-- the deadline set, and shifts the deadline of every waiter *behind* it down by `wait`, since
-- they no longer wait for it.
--
-- KEYS[1]  queue: redisson_lock_queue:{<name>}     LIST of lockNames
-- KEYS[2]  timeouts: redisson_lock_timeout:{<name>} ZSET lockName -> deadline (epoch ms)
-- ARGV[1]  lockName = <clientUUID>:<threadId> of the waiter giving up
-- ARGV[2]  wait in ms: unit.toMillis(waitTime), which can differ from the value acquire.lua
--          received (HEAD passes that one unconverted again, #4743 / e0ead56c0)
--
-- Returns: nil always (the client ignores the reply).
--
-- Redisson 3.13.6 .. HEAD (the script never changed; since 4.7.0 the client also runs it after a
-- response timeout and sends it with retry, #5019). Known bugs kept: none in the script; the
-- #4743 unit mismatch (HEAD again passes the wait unconverted to acquire) is in the arguments.

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
