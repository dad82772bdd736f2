-- CountDownLatch trySetCount (RedissonCountDownLatch.trySetCountAsync(count)), current.
--
-- Creates the latch with `count` only if it does not exist, and publishes NEW_COUNT (1) so that
-- awaiting clients close their local latch again.
--
-- KEYS[1]  latch name (STRING integer: remaining count)
-- KEYS[2]  channel: redisson_countdownlatch__channel__{<name>}  (braces always added)
-- ARGV[1]  message: 1 (CountDownLatchPubSub.NEW_COUNT_MESSAGE)
-- ARGV[2]  count (positive integer)
-- ARGV[3]  publish command: "publish" or "spublish"
--
-- Returns:
--   1  the key was absent: set to ARGV[2], ARGV[1] published
--   0  a latch exists already: nothing changed
--
-- Redisson 3.22.0 .. HEAD. Known bugs kept: none.

if redis.call('exists', KEYS[1]) == 0 then
    redis.call('set', KEYS[1], ARGV[2])
    redis.call(ARGV[3], KEYS[2], ARGV[1])
    return 1
end
return 0
