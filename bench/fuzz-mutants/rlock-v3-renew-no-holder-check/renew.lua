-- MUTANT (bench/fuzz-mutants): Redisson 3.13.6's RLock watchdog renewal that does not ask
-- whether the caller still holds the lock, only whether the lock exists.
--
-- What is wrong: it extends whatever lock is there and answers 1 ("renewed"). While the
-- holder's key lives this is what the stock script does, so nothing shows without a fault. When
-- the holder lost its hold (a pause, a partition or a forward node clock jump longer than the
-- key's remaining TTL, and another client took the lock), the next renew extends the new
-- holder's key and tells the old holder it still holds the lock, so its watchdog goes on: the
-- stock script answers 0 and the watchdog stops.
--
-- KEYS, ARGV and replies as lua/rlock/v3.13.6/renew.lua: KEYS[1] lock hash, ARGV[1] new lease
-- ms, ARGV[2] lockName; 1 renewed, 0 not held.

-- The bug: the stock script asks hexists(KEYS[1], ARGV[2]) == 1, not whether the key exists.
if redis.call('exists', KEYS[1]) == 1 then
    redis.call('pexpire', KEYS[1], ARGV[1])
    return 1
end
return 0
