-- CountDownLatch countDown (RedissonCountDownLatch.countDownAsync()), current Redisson.
--
-- Decrements the count. At 0 or below the key is deleted; exactly at 0 ZERO_COUNT (0) is
-- published, which opens every awaiting client's latch. On a missing key DECR starts from 0,
-- so the value is -1: the key is deleted again and nothing is published.
--
-- KEYS[1]  latch name (STRING integer)
-- KEYS[2]  channel: redisson_countdownlatch__channel__{<name>}
-- ARGV[1]  message: 0 (CountDownLatchPubSub.ZERO_COUNT_MESSAGE)
-- ARGV[2]  publish command: "publish" or "spublish"
--
-- Returns: nil (the client ignores it).
--
-- Redisson 3.22.0 .. HEAD. Not idempotent, so the client sends it without retry since 3.16.4
-- (#3850: a retried send counted down twice). Known bugs kept: none in the script.

local remaining = redis.call('decr', KEYS[1])
if remaining <= 0 then
    redis.call('del', KEYS[1])
end
if remaining == 0 then
    redis.call(ARGV[2], KEYS[2], ARGV[1])
end
return nil
