-- Plain lock unlock: compare-and-delete, the seed's "if get == token then del" script.
--
-- The plain lock is one STRING key taken with `SET <key> <token> NX PX <ttl>` (no script), whose
-- value is a random token unique to the holder. Unlock must delete the key only if it still
-- holds the caller's token: a GET followed by a separate DEL could delete a lock that expired
-- in between and was taken by someone else. The script does both atomically.
--
-- KEYS[1]  lock key
-- ARGV[1]  the caller's token (the value it SET)
--
-- Returns:
--   1  the key held the caller's token and was deleted
--   0  the key is missing (expired) or holds another client's token: nothing changed
--
-- Models: seed 002 (the GET-then-DEL unlock and this script replacing it; not Redisson).
-- Known bugs kept: none in the script; the protocol's weakness (a holder paused past its TTL
-- loses the lock silently) is the point of modelling it.

if redis.call('get', KEYS[1]) == ARGV[1] then
    return redis.call('del', KEYS[1])
end
return 0
