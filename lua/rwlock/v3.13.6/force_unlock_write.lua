-- ReadWriteLock: write-lock forceUnlock (RedissonWriteLock.forceUnlockAsync), Redisson 3.13.6.
--
-- Deletes the whole lock (including any read holds of the writer), but only while it is in
-- write mode, and publishes message 1 so that all waiters wake.
--
-- KEYS[1]  lock name (the hash)
-- KEYS[2]  channel: redisson_rwlock:{<name>}
-- ARGV[1]  message: 1 (LockPubSub.READ_UNLOCK_MESSAGE)
--
-- Returns:
--   1  mode was "write": hash deleted, ARGV[1] published
--   0  no lock, or mode "read": nothing changed
--
-- Redisson 3.13.6. Known bugs kept: none.

if redis.call('hget', KEYS[1], 'mode') == 'write' then
    redis.call('del', KEYS[1])
    redis.call('publish', KEYS[2], ARGV[1])
    return 1
end
return 0
