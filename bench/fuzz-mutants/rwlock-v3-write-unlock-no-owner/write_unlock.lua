-- MUTANT (bench/fuzz-mutants): Redisson 3.13.6's write-lock unlock without the writer check.
--
-- What is wrong: when the lock is in write mode and the caller is not the writer, the stock
-- script answers nil; this one deletes the lock and wakes every waiter, as if the caller had
-- released its last hold. The writer's own unlock works as before, so nothing shows without a
-- fault. 3.13.6 resends an unlock whose reply is late (timeout 3 s, then 1.5 s apart): when the
-- first copy already released the lock and another client took the write lock, the resent copy
-- frees that writer's lock, and a reader or another writer gets in while it still writes.
--
-- KEYS, ARGV and replies as lua/rwlock/v3.13.6/write_unlock.lua: KEYS[1] lock hash, KEYS[2]
-- channel, ARGV[1] message 1, ARGV[2] lease ms, ARGV[3] writer lockName (<uuid>:<tid>:write);
-- 1 released (or no lock), 0 still held, nil not the writer (never, here, in write mode).

local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call('publish', KEYS[2], ARGV[1])
    return 1
end

if mode == 'write' then
    if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
        -- The bug: the stock script returns nil here (the caller is not the writer).
        redis.call('del', KEYS[1])
        redis.call('publish', KEYS[2], ARGV[1])
        return 1
    end
    local holds = redis.call('hincrby', KEYS[1], ARGV[3], -1)
    if holds > 0 then
        redis.call('pexpire', KEYS[1], ARGV[2])
        return 0
    end
    redis.call('hdel', KEYS[1], ARGV[3])
    if redis.call('hlen', KEYS[1]) == 1 then
        redis.call('del', KEYS[1])
        redis.call('publish', KEYS[2], ARGV[1])
    else
        -- The writer still has read holds: the lock becomes a read lock.
        redis.call('hset', KEYS[1], 'mode', 'read')
    end
    return 1
end

return nil
