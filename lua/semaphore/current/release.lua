-- Semaphore release (RedissonSemaphore.releaseAsync(permits)), current Redisson.
--
-- Adds `permits` permits and publishes the new count, so that waiters retry. There is no
-- ownership check: releasing without having acquired creates permits (Redisson's own test
-- testReleaseWithoutPermits relies on it), and a missing key starts at 0.
--
-- KEYS[1]  semaphore name (STRING integer)
-- KEYS[2]  channel: redisson_sc:{<name>}
-- ARGV[1]  permits to add (positive integer; the client rejects < 0 and skips 0)
-- ARGV[2]  publish command: "publish" or "spublish"
--
-- Returns: nil (EVAL_VOID); the new count is what was published on KEYS[2].
--
-- Redisson 3.22.0 .. HEAD. Known bugs kept: none (the missing ownership check is the design).
-- Portability: the published count is the INCRBY reply, an integer.

local available = redis.call('incrby', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], available)
return nil
