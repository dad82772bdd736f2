-- go-redsync/redsync's delete script (deleteScript in mutex.go, v4.8 and later), written for
-- lockstep with the same keys, arguments and replies.
--
-- KEYS[1]  the mutex's name
-- ARGV[1]  the value the caller's SET NX wrote
--
-- Returns:
--    1  the key held the caller's value and was deleted
--    0  the key holds another value: nothing changed
--   -1  there is no key (redsync: ErrLockAlreadyExpired)

local val = redis.call('GET', KEYS[1])
if val == ARGV[1] then
  return redis.call('DEL', KEYS[1])
elseif val == false then
  return -1
end
return 0
