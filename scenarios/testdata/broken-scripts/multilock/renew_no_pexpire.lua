-- BROKEN on purpose (scenarios/testdata/broken-scripts): the watchdog's batched renew (current
-- layout) that reports every lock it still holds as renewed without extending its TTL. The
-- watchdog keeps running, so the client keeps believing, while the keys run out their first
-- lease and expire under it.
--
-- KEYS, ARGV and replies as lua/rlock/current/renew.lua: KEYS[i] lock hashes, ARGV[1] lease
-- ms, ARGV[i + 1] lockName for KEYS[i]; an array with 1 (held, renewed) or 0 per key.

local results = {}
for i = 1, #KEYS do
    -- The bug: no PEXPIRE before reporting the lock as renewed.
    results[i] = redis.call('hexists', KEYS[i], ARGV[i + 1])
end
return results
