-- Semaphore trySetPermits (RedissonSemaphore.trySetPermitsAsync(permits)), current Redisson.
--
-- Initialises the semaphore to `permits` only if it does not exist yet, and publishes the
-- count. (The TTL variant of 3.29.0 is the same with SET ... PX ttl; not modelled here.)
--
-- KEYS[1]  semaphore name (STRING integer)
-- KEYS[2]  channel: redisson_sc:{<name>}
-- ARGV[1]  permits (integer)
-- ARGV[2]  publish command: "publish" or "spublish"
--
-- Returns:
--   1  the key was absent: set to ARGV[1], ARGV[1] published
--   0  the key exists: nothing changed
--
-- Redisson 3.22.0 .. HEAD. Known bugs kept: none.

if redis.call('get', KEYS[1]) == false then
    redis.call('set', KEYS[1], ARGV[1])
    redis.call(ARGV[2], KEYS[2], ARGV[1])
    return 1
end
return 0
