-- BROKEN on purpose (scenarios/testdata/broken-scripts): today's RLock watchdog renew that
-- reports every lock it still holds as renewed without extending its TTL. The watchdog keeps
-- running, so the holder keeps believing, while the key runs out its first 30 s and expires.
--
-- KEYS, ARGV and replies as lua/rlock/current/renew.lua: KEYS[i] lock hashes, ARGV[1] lease
-- ms, ARGV[i + 1] lockName for KEYS[i]; an array with 1 (held, renewed) or 0 per key.

local results = {}
for i = 1, #KEYS do
    -- The bug: no PEXPIRE before reporting the lock as renewed.
    results[i] = redis.call('hexists', KEYS[i], ARGV[i + 1])
end
return results
