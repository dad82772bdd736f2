-- RLock watchdog renewal, current Redisson: one batched script for many locks (LockTask).
--
-- For each lock i, extends its lease if the given thread still holds it. One client runs this
-- every lockWatchdogTimeout / 3 ms over all its registered locks, in chunks of at most
-- lockWatchdogBatchSize (100) names (one hash slot per chunk on a cluster).
--
-- KEYS[i]    lock name i (the hash), i = 1..N
-- ARGV[1]    new lease in ms (lockWatchdogTimeout, 30000 by default)
-- ARGV[i+1]  lockName for lock i = <clientUUID>:<threadId> (the first thread of that lock's entry)
--
-- Returns: an array of N integers, in KEYS order:
--   1  lock i is still held by that thread; its TTL is now ARGV[1]
--   0  lock i is gone or held by someone else; unchanged (the client cancels its renewal)
--
-- Redisson 3.44.0 .. HEAD (597d604a3). Replaces the per-lock ../v3.13.6/renew.lua.
-- Known bugs kept: none.
-- Portability: i is a loop integer in both Lua 5.1 and 5.4; it is only used as a table index.

local results = {}
for i = 1, #KEYS do
    if redis.call('hexists', KEYS[i], ARGV[i + 1]) == 1 then
        redis.call('pexpire', KEYS[i], ARGV[1])
        results[i] = 1
    else
        results[i] = 0
    end
end
return results
