-- Laravel's cache lock release script (Illuminate\Cache\LuaScripts::releaseLock), written for
-- lockstep with the same keys, arguments and replies.
--
-- KEYS[1]  the lock's key (the cache prefix and the lock's name)
-- ARGV[1]  the owner string the caller's SET wrote
--
-- Returns:
--   1  the key held the caller's owner string and was deleted
--   0  the key is missing or holds another owner: nothing changed (release() returns false)

if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
