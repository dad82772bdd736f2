-- Semaphore tryAcquire (RedissonSemaphore.tryAcquireAsync(permits)), current Redisson.
--
-- Takes `permits` permits if at least that many are available. A missing key means 0 permits
-- (trySetPermits or release/addPermits creates it).
--
-- KEYS[1]  semaphore name (STRING integer: available permits)
-- ARGV[1]  permits to take (positive integer)
--
-- Returns:
--   1  taken: the value was decremented by ARGV[1]
--   0  not enough permits (or no key): nothing changed; the blocking client subscribes to
--      redisson_sc:{<name>} and retries on every message
--
-- Redisson 3.13.6 .. HEAD (unchanged). Known bugs kept: none.

local available = redis.call('get', KEYS[1])
if available ~= false and tonumber(available) >= tonumber(ARGV[1]) then
    redis.call('decrby', KEYS[1], ARGV[1])
    return 1
end
return 0
