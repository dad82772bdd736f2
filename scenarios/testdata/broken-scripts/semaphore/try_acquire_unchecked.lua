-- BROKEN on purpose (scenarios/testdata/broken-scripts): a semaphore tryAcquire that takes the
-- permits without checking that enough are available. The count goes negative and every caller
-- gets a permit, so more threads hold permits than the semaphore has.
--
-- KEYS, ARGV and replies as lua/semaphore/current/try_acquire.lua: KEYS[1] semaphore name,
-- ARGV[1] permits to take; 1 taken, 0 not taken (never, here).

-- The bug: no "available >= ARGV[1]" test before the DECRBY.
redis.call('decrby', KEYS[1], ARGV[1])
return 1
