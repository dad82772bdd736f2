-- CountDownLatch delete (RedissonCountDownLatch.deleteAsync()), current Redisson.
--
-- Deletes the latch and, if it existed, publishes NEW_COUNT (1).
--
-- KEYS[1]  latch name (STRING integer)
-- KEYS[2]  channel: redisson_countdownlatch__channel__{<name>}
-- ARGV[1]  message: 1 (CountDownLatchPubSub.NEW_COUNT_MESSAGE)
-- ARGV[2]  publish command: "publish" or "spublish"
--
-- Returns:
--   1  the latch existed: deleted, ARGV[1] published
--   0  there was no latch: nothing published
--
-- Redisson 3.22.0 .. HEAD. Known bugs kept: none.
-- Note: waiters are woken with NEW_COUNT, which *closes* their latch; an await() in progress
-- then reads count 0 (GET of a missing key) on its next check.

if redis.call('del', KEYS[1]) == 1 then
    redis.call(ARGV[2], KEYS[2], ARGV[1])
    return 1
end
return 0
