-- BROKEN on purpose (scenarios/testdata/broken-scripts): a spin-lock acquire that takes the lock
-- over when another thread holds it, deleting the holder's field instead of returning the
-- PTTL. The old holder is not told and keeps working.
--
-- KEYS, ARGV and replies as lua/spinlock/current/acquire.lua: KEYS[1] lock hash, ARGV[1] lease
-- ms, ARGV[2] lockName; nil acquired (always, here), integer = PTTL (never).

if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
    -- The bug: the real script returns the PTTL here when the lock exists.
    redis.call('del', KEYS[1])
end
redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('pexpire', KEYS[1], ARGV[1])
return nil
