-- python-redis-lock's extend script (EXTEND_SCRIPT in src/redis_lock/__init__.py, 4.0.x),
-- written for lockstep with the same keys, arguments and replies. The renewal thread runs it
-- every expire * 2 / 3 seconds.
--
-- KEYS[1]  the lock key, lock:<name>
-- KEYS[2]  the signal list (passed, not used)
-- ARGV[1]  the Lock's id
-- ARGV[2]  the new expiry, in whole seconds (EXPIRE)
--
-- Returns:
--   0  the key held the caller's id and now expires ARGV[2] seconds from now
--   1  the key is missing or holds another id: extend() raises NotAcquired
--   2  the key is the caller's but has no expiry: extend() raises NotExpirable

if redis.call('get', KEYS[1]) ~= ARGV[1] then
  return 1
end
if redis.call('ttl', KEYS[1]) < 0 then
  return 2
end
redis.call('expire', KEYS[1], ARGV[2])
return 0
