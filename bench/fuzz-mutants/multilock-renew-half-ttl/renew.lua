-- MUTANT (bench/fuzz-mutants): today's batched watchdog renewal, here renewing each member of a
-- MultiLock, that extends the lock by half the lease it is given.
--
-- What is wrong: the renewal runs every third of the watchdog timeout and should leave the key
-- a whole timeout to live (3 s with watchdog_timeout_ms = 3000, renewed every second: 2 s of
-- slack). This one sets half of it (1.5 s), so only 0.5 s of slack is left between two
-- renewals. On time, every renewal still lands before the key expires and nothing shows. A
-- renewal that is late by more than half a second (a client pause, a latency spike, a slow node)
-- lets the holder's keys expire while it is in its critical section, and another client takes
-- the lock; the stock script's 2 s of slack covers the same stall.
--
-- KEYS, ARGV and replies as lua/rlock/current/renew.lua: KEYS[i] lock i, ARGV[1] new lease ms,
-- ARGV[i+1] lockName for lock i; an array of 1 (renewed) / 0 (not held).

local results = {}
for i = 1, #KEYS do
    if redis.call('hexists', KEYS[i], ARGV[i + 1]) == 1 then
        -- The bug: the stock script sets pexpire(KEYS[i], ARGV[1]), the whole lease.
        redis.call('pexpire', KEYS[i], math.floor(tonumber(ARGV[1]) / 2))
        results[i] = 1
    else
        results[i] = 0
    end
end
return results
