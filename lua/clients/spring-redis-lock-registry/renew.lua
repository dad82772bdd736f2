-- Spring Integration's RedisLockRegistry renew script (RedisLock.RENEW_SCRIPT, 6.4 and later),
-- written for lockstep with the same keys, arguments and replies. The renewal task (when a
-- renewalTaskScheduler is set) runs it every expireAfter / 3; renewLock(key) runs it once.
--
-- KEYS[1]  the lock key
-- ARGV[1]  the registry's clientId
-- ARGV[2]  expireAfter, in milliseconds
--
-- Returns 1 (Lua true) when the key held the caller's clientId and its TTL was reset, nil (Lua
-- false) otherwise (the task stops its registry's current renewal; renewLock throws
-- IllegalStateException "Could not renew mutex at ...").

if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return true
end
return false
