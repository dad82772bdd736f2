-- Spring Integration's RedisLockRegistry fallback unlock script for the spin lock
-- (RedisSpinLock.DELETE_UNLOCK_SCRIPT), written for lockstep with the same keys, arguments and
-- replies. The registry switches to it for good after the UNLINK script failed once in any way
-- (an error reply, or no reply in time).
--
-- KEYS[1]  the lock key
-- ARGV[1]  the registry's clientId
--
-- Returns 1 (Lua true) when the key held the caller's clientId and was deleted, nil (Lua false)
-- otherwise.

if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return true
end
return false
