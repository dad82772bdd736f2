-- A compare-and-delete unlock with a slip: it keeps DEL's reply in a global variable before
-- returning it. Redis 7.0 forbids scripts to set globals ("Attempt to modify a readonly
-- table"), so every call fails, after the DEL has run: the lock works by accident (the key is
-- gone), every property of the lock holds, and every unlock answers an error.
--
-- KEYS[1]  lock key
-- ARGV[1]  the caller's token
if redis.call('get', KEYS[1]) == ARGV[1] then
    deleted = redis.call('del', KEYS[1])
    return deleted
end
return 0
