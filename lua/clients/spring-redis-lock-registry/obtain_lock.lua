-- Spring Integration's RedisLockRegistry obtain script (RedisLock.OBTAIN_LOCK_SCRIPT, 6.5.x),
-- written for lockstep with the same keys, arguments and replies.
--
-- KEYS[1]  the lock key, <registryKey>:<lockKey>
-- ARGV[1]  the registry's clientId (one UUID per RedisLockRegistry: every thread of the process
--          writes the same value)
-- ARGV[2]  expireAfter, in milliseconds
--
-- Returns:
--   1 (Lua true)    the key was free and is now the caller's, or it already held the caller's
--                   clientId (any thread of the same process) and its TTL was reset
--   nil (Lua false) the key holds another clientId: nothing changed

local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return true
elseif not holder then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return true
end
return false
