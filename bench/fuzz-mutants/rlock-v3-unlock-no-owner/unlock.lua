-- MUTANT (bench/fuzz-mutants): Redisson 3.13.6's RLock unlock without the owner check.
--
-- What is wrong: a caller whose field is not in the hash is not turned away with nil; it falls
-- through to the last-hold branch and deletes the lock of whoever holds it now, then wakes a
-- waiter. The holder's own unlock works as before, so nothing shows without a fault. 3.13.6
-- resends an unlock whose reply is late (timeout 3 s, then 1.5 s apart): when the first copy
-- already released the lock and another client took it, the resent copy frees that client's
-- lock and a third client takes it while the second still holds it.
--
-- KEYS, ARGV and replies as lua/rlock/v3.13.6/unlock.lua: KEYS[1] lock hash, KEYS[2] channel,
-- ARGV[1] unlock message 0, ARGV[2] lease ms, ARGV[3] lockName; 0 still held, 1 released.

if redis.call('hexists', KEYS[1], ARGV[3]) == 1 then
    local holds = redis.call('hincrby', KEYS[1], ARGV[3], -1)
    if holds > 0 then
        redis.call('pexpire', KEYS[1], ARGV[2])
        return 0
    end
end

-- The bug: the stock script returns nil above when the caller is not a holder; this one deletes.
redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
return 1
