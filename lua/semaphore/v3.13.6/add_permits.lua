-- Semaphore addPermits (RedissonSemaphore.addPermitsAsync(permits)), Redisson 3.13.6.
--
-- Adds `permits` (which may be negative: RSemaphore.reducePermits(n), removed in 3.13.5, was
-- addPermits(-n)) to the count, creating it from 0. Unlike current/add_permits.lua it publishes
-- nothing: a thread blocked in acquire() is not woken by the new permits and waits for the next
-- release's message (Redisson issue #3225, fixed in 3.16.2).
--
-- KEYS[1]  semaphore name (STRING integer)
-- KEYS[2]  channel: redisson_sc:{<name>} (passed, unused)
-- ARGV[1]  permits to add (integer, may be negative)
-- ARGV[2]  ignored (lockstep passes the current scripts' publish command to both versions)
--
-- Returns: nil (EVAL_VOID); the new count is stored, not published.
--
-- Redisson 3.13.6 .. 3.16.1. Known bugs kept: #3225 (no publish).
-- Portability: the sum is computed from tonumber() of integer strings, so it is an integer in
-- Lua 5.4 and an integral double in 5.1; both are sent as the same decimal text (%.17g).

local current = redis.call('get', KEYS[1])
if current == false then
    current = 0
end
redis.call('set', KEYS[1], tonumber(current) + tonumber(ARGV[1]))
return nil
