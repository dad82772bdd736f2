-- BROKEN on purpose (scenarios/testdata/broken-scripts): an RLock unlock (3.13.6 layout) that
-- does not check the owner. The holding thread's unlock works as before; but a caller whose
-- field is not in the hash -- a former holder whose lease ran out, say -- falls through and
-- deletes the lock of whoever holds it now, and wakes a waiter to take it.
--
-- KEYS, ARGV and replies as lua/rlock/v3.13.6/unlock.lua: KEYS[1] lock hash, KEYS[2] channel,
-- ARGV[1] unlock message, ARGV[2] lease ms, ARGV[3] lockName; 0 still held, 1 released (and,
-- here, never nil).

if redis.call('hexists', KEYS[1], ARGV[3]) == 1 then
    local holds = redis.call('hincrby', KEYS[1], ARGV[3], -1)
    if holds > 0 then
        redis.call('pexpire', KEYS[1], ARGV[2])
        return 0
    end
end

-- The bug: the real script returns nil here when the caller is not a holder.
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
return 1
