-- RLock forceUnlock (forceUnlockAsync), Redisson 3.13.6: literal PUBLISH.
--
-- Deletes the lock whoever holds it and, if there was one, publishes the unlock message.
--
-- KEYS[1]  lock name (the hash)
-- KEYS[2]  channel: redisson_lock__channel:{<name>}
-- ARGV[1]  unlock message: 0 (LockPubSub.UNLOCK_MESSAGE)
--
-- Returns:
--   1  a lock existed and was deleted; ARGV[1] published on KEYS[2]
--   0  there was no lock; nothing published
--
-- Redisson 3.13.6 (3.22.0 moved the publish command into ARGV: ../current/force_unlock.lua).
-- Known bugs kept: none.

if redis.call('del', KEYS[1]) == 1 then
    redis.call('publish', KEYS[2], ARGV[1])
    return 1
end
return 0
