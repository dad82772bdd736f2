-- RLock unlock (unlockInnerAsync), Redisson 3.13.6: no unlock latch, literal PUBLISH.
--
-- Releases one hold of the reentrant lock. Only the holding thread may release. If holds remain
-- the TTL is refreshed; on the last hold the lock is deleted and an unlock message is published
-- so that one waiter per subscribed client wakes up.
--
-- KEYS[1]  lock name (the hash)
-- KEYS[2]  channel: redisson_lock__channel:{<name>}
-- ARGV[1]  unlock message: 0 (LockPubSub.UNLOCK_MESSAGE)
-- ARGV[2]  lease in ms used to refresh a still-held lock (internalLockLeaseTime)
-- ARGV[3]  lockName = <clientUUID>:<threadId>
--
-- Returns:
--   nil  caller does not hold the lock (client throws IllegalMonitorStateException)
--   0    one hold released, the lock is still held by the caller (TTL reset to ARGV[2])
--   1    last hold released: key deleted and ARGV[1] published on KEYS[2]
--
-- Redisson 3.13.6. Not idempotent: a resend after a lost reply (3.13.6 retries commands,
-- retryAttempts=3) releases a second hold, or returns nil. The latch that fixes this came in
-- 3.24.0 (../current/unlock.lua).
-- Note: older Redisson releases began with a branch "if the key is missing, publish and
-- return 1"; 3.13.6's script does not have it, so it is not here.

if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return nil
end

local holds = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if holds > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    return 0
end

redis.call('del', KEYS[1])
redis.call('publish', KEYS[2], ARGV[1])
return 1
