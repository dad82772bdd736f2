-- BROKEN on purpose (scenarios/testdata/broken-scripts): a semaphore release that gives the
-- permits back but publishes nothing. A thread blocked in acquire() waits on the message a
-- release publishes; without it, it keeps waiting while the permits it needs lie free on the
-- node.
--
-- KEYS, ARGV and replies as lua/semaphore/current/release.lua: KEYS[1] semaphore name, KEYS[2]
-- channel, ARGV[1] permits to add, ARGV[2] publish command (unused here); returns nil.

-- The bug: no redis.call(ARGV[2], KEYS[2], available) after the INCRBY.
redis.call('incrby', KEYS[1], ARGV[1])
return nil
