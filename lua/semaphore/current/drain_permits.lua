-- Semaphore drainPermits (RedissonSemaphore.drainPermitsAsync()), current Redisson.
--
-- Takes every available permit at once: returns the count and sets it to 0. Nothing is
-- published (no one can be woken by fewer permits).
--
-- KEYS[1]  semaphore name (STRING integer)
--
-- Returns:
--   integer 0      the key was missing (it stays missing)
--   bulk string    the previous count as stored, e.g. "5" (the key now holds 0). Redisson returns
--                  the stored string and its EVAL_INTEGER decoder parses it; a lockstep client
--                  must accept both reply types. A previous count of 0 also comes back as "0".
--
-- Redisson 3.16.3 .. HEAD (the dead "value == 0" test was removed then; no behaviour change).
-- Known bugs kept: none.

local current = redis.call('get', KEYS[1])
if current == false then
    return 0
end
redis.call('set', KEYS[1], 0)
return current
