-- BROKEN on purpose (scenarios/testdata/broken-scripts): an RLock acquire (current layout, the
-- member script RedLock runs on every node) that does not look at who holds the lock. It adds
-- the caller's hold next to any other holder's, so every client gets a majority.
--
-- KEYS, ARGV and replies as lua/rlock/current/acquire.lua: KEYS[1] lock hash, ARGV[1] lease ms,
-- ARGV[2] lockName; nil acquired (always, here), integer = PTTL (never).

-- The bug: the real script first requires "exists == 0 or hexists(ARGV[2]) == 1".
redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('pexpire', KEYS[1], ARGV[1])
return nil
