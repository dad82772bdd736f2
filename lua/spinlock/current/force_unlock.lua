-- SpinLock forceUnlock, current Redisson.
--
-- Redisson sends a plain DEL for this (no script, nothing published). This one-line script is
-- the same operation, so that every lock operation of lockstep goes through EVAL.
--
-- KEYS[1]  lock name (the hash)
--
-- Returns:
--   1  a lock existed and was deleted
--   0  there was no lock
--
-- Redisson 3.15.0 .. HEAD. Known bugs kept: none.

return redis.call('del', KEYS[1])
