-- MUTANT (bench/fuzz-mutants): the FencedLock acquire gives the token counter the lock's TTL.
--
-- What is wrong: after INCR the counter key gets PEXPIRE <lease>, as if it were part of the
-- lock. While acquisitions follow one another within a lease the counter is refreshed before
-- it expires and tokens keep growing, so nothing shows without a fault. When the lock goes
-- unacquired for a whole lease (a crashed holder whose key runs out, a holder cut off from the
-- node, a node clock jump), the counter expires with it and the next acquisition gets token 1
-- again: a token lower than one the resource has seen. The stock counter is never deleted.
--
-- KEYS, ARGV and replies as lua/fencedlock/current/acquire_with_token.lua: KEYS[1] lock hash,
-- KEYS[2] token counter, ARGV[1] lease ms, ARGV[2] lockName; {-1, token} acquired,
-- {pttl, -1} not acquired.

if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    local token = redis.call('incr', KEYS[2])
    -- The bug: the stock script never sets a TTL on the counter (KEYS[2]).
    redis.call('pexpire', KEYS[2], ARGV[1])
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {-1, token}
end
return {redis.call('pttl', KEYS[1]), -1}
