-- Spring Integration's RedisLockRegistry unlock script for the spin lock
-- (RedisSpinLock.UNLINK_UNLOCK_SCRIPT, 6.0.7+, 6.1.3+, 6.2 and later), written for lockstep with
-- the same keys, arguments and replies.
--
-- KEYS[1]  the lock key
-- ARGV[1]  the registry's clientId
--
-- Returns 1 (Lua true) when the key held the caller's clientId and was unlinked, nil (Lua false)
-- when it is missing or another's (unlock() throws ConcurrentModificationException "Lock was
-- released in the store due to expiration...").

if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('UNLINK', KEYS[1])
  return true
end
return false
