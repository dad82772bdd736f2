-- Semaphore addPermits (RedissonSemaphore.addPermitsAsync(permits)), current Redisson.
--
-- Adds `permits` (which may be negative: reducePermits) to the count, creating it from 0, and
-- publishes the new count. Unlike release, the result may go below zero.
--
-- KEYS[1]  semaphore name (STRING integer)
-- KEYS[2]  channel: redisson_sc:{<name>}
-- ARGV[1]  permits to add (integer, may be negative)
-- ARGV[2]  publish command: "publish" or "spublish"
--
-- Returns: nil (EVAL_VOID); the new count is stored and published on KEYS[2].
--
-- Redisson 3.22.0 .. HEAD (the publish exists since 3.16.2). Known bugs kept: none.
-- Portability: the sum is computed from tonumber() of integer strings, so it is an integer in
-- Lua 5.4 and an integral double in 5.1; both are sent as the same decimal text (%.17g).

local current = redis.call('get', KEYS[1])
if current == false then
    current = 0
end
local updated = tonumber(current) + tonumber(ARGV[1])
redis.call('set', KEYS[1], updated)
redis.call(ARGV[2], KEYS[2], updated)
return nil
