-- ReadWriteLock: read-lock forceUnlock (RedissonReadLock.forceUnlockAsync), Redisson 3.13.6.
--
-- Deletes the whole lock, but only while it is in read mode, and publishes the unlock message.
--
-- KEYS[1]  lock name (the hash)
-- KEYS[2]  channel: redisson_rwlock:{<name>}
-- ARGV[1]  message: 0 (LockPubSub.UNLOCK_MESSAGE)
--
-- Returns:
--   1  mode was "read": hash deleted, ARGV[1] published
--   0  no lock, or mode "write": nothing changed
--
-- Redisson 3.13.6. The per-hold timeout keys are not deleted; they expire on their own.
-- Known bugs kept: none.

if redis.call('hget', KEYS[1], 'mode') == 'read' then
    redis.call('del', KEYS[1])
    redis.call('publish', KEYS[2], ARGV[1])
    return 1
end
return 0
