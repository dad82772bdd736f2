-- BROKEN on purpose (scenarios/testdata/broken-scripts): an RLock unlock (3.13.6 layout) that
-- answers "released" to a caller that does not hold the lock. It changes nothing it should
-- not: the holder's unlock works as before, and a non-holder's leaves the lock alone. But a
-- former holder whose lease ran out is told its unlock succeeded, so it never learns that it
-- worked without the lock (the stock script answers nil: IllegalMonitorStateException).
--
-- KEYS, ARGV and replies as lua/rlock/v3.13.6/unlock.lua: KEYS[1] lock hash, KEYS[2] channel,
-- ARGV[1] unlock message, ARGV[2] lease ms, ARGV[3] lockName; 0 still held, 1 released (and,
-- here, never nil).

if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    -- The bug: the real script returns nil here: the caller is not a holder.
    return 1
end

local holds = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if holds > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    return 0
end

redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
return 1
