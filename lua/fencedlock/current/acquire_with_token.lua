-- FencedLock acquire returning a fencing token (lockAndGetToken / tryLockAndGetToken), current.
--
-- Like the RLock acquire, but every successful acquisition -- the first one and every reentry --
-- first increments a per-lock counter and returns its new value as the fencing token. A
-- storage service that remembers the highest token it has seen can reject writes from an
-- older holder. The counter key is never deleted (#6510), so tokens keep growing.
--
-- KEYS[1]  lock name (the hash; field <clientUUID>:<threadId> = hold count)
-- KEYS[2]  token counter: redisson_lock_token:{<name>}  (STRING integer)
-- ARGV[1]  lease in ms
-- ARGV[2]  lockName = <clientUUID>:<threadId>
--
-- Returns a 2-element array:
--   {-1, token}  acquired or re-entered; token = the counter after INCR (1, 2, 3, ...)
--   {pttl, -1}   not acquired: PTTL of the lock in ms, no token
--
-- Redisson 3.19.0 .. HEAD (b9513bc12, #4684). Known bugs kept: none in the script.

if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    local token = redis.call('incr', KEYS[2])
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {-1, token}
end
return {redis.call('pttl', KEYS[1]), -1}
