-- BROKEN on purpose (scenarios/testdata/broken-scripts): a count-down latch's trySetCount that
-- gives the count a 2 s TTL. When it expires the latch key is gone, getCount() reads 0, and
-- every await returns although nobody counted down.
--
-- KEYS, ARGV and replies as lua/countdownlatch/current/try_set_count.lua: KEYS[1] latch name,
-- KEYS[2] channel, ARGV[1] message 1, ARGV[2] count, ARGV[3] publish command; 1 set, 0 exists.

if redis.call('exists', KEYS[1]) == 0 then
    -- The bug: "PX 2000"; a Redisson latch has no TTL.
    redis.call('set', KEYS[1], ARGV[2], 'px', 2000)
    redis.call(ARGV[3], KEYS[2], ARGV[1])
    return 1
end
return 0
