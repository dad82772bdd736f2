-- redis-py's Lock release script (LUA_RELEASE_SCRIPT in redis/lock.py), written for lockstep
-- with the same keys, arguments and replies.
--
-- KEYS[1]  the lock's name (the key itself, no prefix)
-- ARGV[1]  the caller's token (the value its SET NX wrote)
--
-- Returns:
--   1  the key held the caller's token and was deleted
--   0  the key is missing or holds another token: nothing changed (redis-py raises
--      LockNotOwnedError)

local current = redis.call('get', KEYS[1])
if current and current == ARGV[1] then
  redis.call('del', KEYS[1])
  return 1
end
return 0
