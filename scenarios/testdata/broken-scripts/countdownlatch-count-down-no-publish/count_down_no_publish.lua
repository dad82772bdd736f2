-- BROKEN on purpose (scenarios/testdata/broken-scripts): a latch countDown that deletes the key
-- at 0 but publishes nothing. Awaiting threads wait for the ZERO_COUNT message to check the
-- count again; without it they keep waiting though the latch is open.
--
-- KEYS, ARGV and replies as lua/countdownlatch/current/count_down.lua: KEYS[1] latch name,
-- KEYS[2] channel, ARGV[1] message 0, ARGV[2] publish command (unused here); returns nil.

local remaining = redis.call('decr', KEYS[1])
if remaining <= 0 then
    redis.call('del', KEYS[1])
end
-- The bug: no redis.call(ARGV[2], KEYS[2], ARGV[1]) when remaining reaches 0.
return nil
