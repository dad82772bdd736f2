-- FencedLock plain acquire (lock() / tryLock() on an RFencedLock), current Redisson.
--
-- The RLock acquire plus the token increment: the counter still advances on every successful
-- acquisition, but the token is not returned (the caller can read it with GET later, racily).
--
-- KEYS[1]  lock name (the hash; field <clientUUID>:<threadId> = hold count)
-- KEYS[2]  token counter: redisson_lock_token:{<name>}
-- ARGV[1]  lease in ms
-- ARGV[2]  lockName = <clientUUID>:<threadId>
--
-- Returns:
--   nil      acquired or re-entered (token counter incremented)
--   integer  not acquired: PTTL of the lock in ms (counter unchanged)
--
-- Redisson 3.19.0 .. HEAD. Unlock, renew and forceUnlock are the RLock ones:
-- ../../rlock/current/{unlock,renew,force_unlock}.lua with channel redisson_lock__channel:{<name>}.
-- Known bugs kept: none in the script.

if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('incr', KEYS[2])
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
return redis.call('pttl', KEYS[1])
