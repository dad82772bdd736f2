-- BROKEN on purpose (scenarios/testdata/broken-scripts): the plain lock's unlock as a bare DEL,
-- without comparing the key's value with the caller's token first. A caller whose key has
-- expired and been taken by another client deletes that client's lock.
--
-- KEYS, ARGV and replies as lua/plain/unlock_compare_and_delete.lua: KEYS[1] lock key,
-- ARGV[1] the caller's token (ignored here); 1 deleted, 0 no key.

-- The bug: the real script deletes only if GET KEYS[1] == ARGV[1].
return redis.call('del', KEYS[1])
