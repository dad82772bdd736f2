-- MUTANT (bench/fuzz-mutants): today's RLock unlock that forgets to publish the unlock message.
--
-- What is wrong: the last hold is released (the key deleted, the latch written) but nobody is
-- told. A waiter in lock() sleeps for the lock's PTTL, as its acquire answered it, or until a
-- message wakes it; without the message it wakes only when that PTTL has run out, at most one
-- lease after the release, so nothing shows while the node's clock is right and the lease is
-- within the liveness bound. When the node's wall clock jumps back, every PTTL it answers grows
-- by the jump: a waiter told to sleep that long sleeps on while the lock is free, far past the
-- bound. The stock script publishes, and the message wakes the waiter at once.
--
-- KEYS, ARGV and replies as lua/rlock/current/unlock.lua: KEYS[1] lock hash, KEYS[2] channel,
-- KEYS[3] unlock latch, ARGV[1] message 0, ARGV[2] lease ms, ARGV[3] lockName, ARGV[4] publish
-- command, ARGV[5] latch TTL ms; nil not held, 0 still held, 1 released.

local recorded = redis.call('get', KEYS[3])
if recorded ~= false then
    return tonumber(recorded)
end

if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return nil
end

local holds = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if holds > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    redis.call('set', KEYS[3], 0, 'px', ARGV[5])
    return 0
end

redis.call('del', KEYS[1])
-- The bug: the stock script publishes here: redis.call(ARGV[4], KEYS[2], ARGV[1]).
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return 1
