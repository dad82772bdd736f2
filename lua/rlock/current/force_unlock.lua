-- RLock forceUnlock (forceUnlockAsync), current Redisson: publish command in ARGV.
--
-- Deletes the lock whoever holds it and, if there was one, publishes the unlock message. The
-- client also cancels its local renewal and sends this script with retry (it is idempotent).
--
-- KEYS[1]  lock name (the hash)
-- KEYS[2]  channel: redisson_lock__channel:{<name>}
-- ARGV[1]  unlock message: 0 (LockPubSub.UNLOCK_MESSAGE)
-- ARGV[2]  publish command: "publish" or "spublish"
--
-- Returns:
--   1  a lock existed and was deleted; ARGV[1] published on KEYS[2]
--   0  there was no lock; nothing published
--
-- Redisson 3.22.0 .. HEAD. Also FencedLock's forceUnlock.
-- Known bugs kept: none.

if redis.call('del', KEYS[1]) == 1 then
    redis.call(ARGV[2], KEYS[2], ARGV[1])
    return 1
end
return 0
