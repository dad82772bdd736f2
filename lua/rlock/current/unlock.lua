-- RLock unlock (unlockInnerAsync), current Redisson: unlock latch + publish command in ARGV.
--
-- Releases one hold of the reentrant lock, idempotently per request. Each unlock() call gets a
-- requestId and so its own latch key. The first run records its result (0 or 1) in the latch
-- with a PX TTL; a resend of the same request finds the latch and returns the recorded result
-- without touching the lock again. After the reply the client DELs the latch asynchronously.
--
-- KEYS[1]  lock name (the hash)
-- KEYS[2]  channel: redisson_lock__channel:{<name>}
-- KEYS[3]  unlock latch: redisson_unlock_latch:{<name>}:<requestId>  (STRING "0" or "1")
-- ARGV[1]  unlock message: 0 (LockPubSub.UNLOCK_MESSAGE)
-- ARGV[2]  lease in ms used to refresh a still-held lock (internalLockLeaseTime)
-- ARGV[3]  lockName = <clientUUID>:<threadId>
-- ARGV[4]  publish command: "publish" or "spublish" (sharded pub/sub on a cluster)
-- ARGV[5]  latch TTL in ms, about (timeout + retry delay) * retryAttempts (13500 .. 20000)
--
-- Returns:
--   nil  caller does not hold the lock (IllegalMonitorStateException); no latch is written
--   0    one hold released, still held (TTL reset to ARGV[2]); latch = 0
--   1    last hold released: key deleted, ARGV[1] published on KEYS[2]; latch = 1
--   0/1  whatever the latch recorded, when KEYS[3] already exists (a resend)
--
-- Redisson 3.24.0 .. HEAD (latch since 3.24.0, publish command in ARGV since 3.22.0).
-- Also the unlock script of FencedLock (same keys and arguments).
-- Known bugs kept: none in the script.

local recorded = redis.call('get', KEYS[3])
if recorded ~= false then
    return tonumber(recorded)
end

if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return nil
end

local holds = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if holds > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    redis.call('set', KEYS[3], 0, 'px', ARGV[5])
    return 0
end

redis.call('del', KEYS[1])
redis.call(ARGV[4], KEYS[2], ARGV[1])
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return 1
