-- python-redis-lock's unlock script (UNLOCK_SCRIPT in src/redis_lock/__init__.py, 4.0.x),
-- written for lockstep with the same keys, arguments and replies.
--
-- KEYS[1]  the lock key, lock:<name>
-- KEYS[2]  the signal list, lock-signal:<name>
-- ARGV[1]  the Lock's id (the value its SET NX wrote)
-- ARGV[2]  signal_expire, in milliseconds (1000 by default)
--
-- Returns (NB: the other way round from the usual compare-and-delete):
--   0  the key held the caller's id: the signal list now holds exactly one element (that lives
--      signal_expire ms, so it wakes one BLPOP waiter) and the key is deleted
--   1  the key is missing or holds another id: nothing changed (release() raises NotAcquired)

if redis.call('get', KEYS[1]) ~= ARGV[1] then
  return 1
end
redis.call('del', KEYS[2])
redis.call('lpush', KEYS[2], 1)
redis.call('pexpire', KEYS[2], ARGV[2])
redis.call('del', KEYS[1])
return 0
