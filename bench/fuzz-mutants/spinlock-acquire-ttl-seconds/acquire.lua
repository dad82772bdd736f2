-- MUTANT (bench/fuzz-mutants): the SpinLock acquire with the lease set in seconds.
--
-- What is wrong: a new lock gets EXPIRE <lease> instead of PEXPIRE <lease>, so a lease of 1000
-- ms becomes 1000 s. The holder's unlock deletes the key as before, so nothing shows while
-- every holder releases. When a holder dies holding the lock (a client crash), the key should
-- expire one lease later and a waiter take over; here it outlives the run and every waiter
-- spins in vain.
--
-- KEYS, ARGV and replies as lua/spinlock/current/acquire.lua: KEYS[1] lock hash, ARGV[1] lease
-- ms, ARGV[2] lockName; nil acquired, integer PTTL not acquired.

if redis.call('exists', KEYS[1]) == 0 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    -- The bug: the stock script sets pexpire(KEYS[1], ARGV[1]): the lease is in milliseconds.
    redis.call('expire', KEYS[1], ARGV[1])
    return nil
end

if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end

return redis.call('pttl', KEYS[1])
