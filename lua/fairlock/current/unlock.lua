-- FairLock unlock (unlockInnerAsync), current Redisson: unlock latch + publish command in ARGV.
--
-- Latch check (a resend of the same request returns the recorded result), nil-safe purge of
-- expired queue heads, then release one hold. When the lock ends up free it wakes only the
-- queue head, on the head's own channel <channel>:<head lockName>.
--
-- KEYS[1]  lock name (the hash)
-- KEYS[2]  queue: redisson_lock_queue:{<name>}     LIST of lockNames
-- KEYS[3]  timeouts: redisson_lock_timeout:{<name>} ZSET lockName -> deadline (epoch ms)
-- KEYS[4]  channel prefix: redisson_lock__channel:{<name>}; each waiter subscribes to
--          redisson_lock__channel:{<name>}:<clientUUID>:<threadId>
-- KEYS[5]  unlock latch: redisson_unlock_latch:{<name>}:<requestId>  (STRING "0" or "1")
-- ARGV[1]  unlock message: 0
-- ARGV[2]  lease in ms used to refresh a still-held lock (internalLockLeaseTime)
-- ARGV[3]  lockName = <clientUUID>:<threadId>
-- ARGV[4]  now: the client's clock in epoch ms
-- ARGV[5]  publish command: "publish" or "spublish"
-- ARGV[6]  latch TTL in ms
--
-- Returns:
--   0/1  the recorded result, when the latch KEYS[5] exists (a resend)
--   1    the lock key did not exist: the head (if any) is woken, latch = 1, and the caller is
--        told "released" although it held nothing (kept from 3.13.6; still so at HEAD)
--   nil  someone else holds the lock (IllegalMonitorStateException); no latch
--   0    one hold released, still held (TTL reset to ARGV[2]); latch = 0
--   1    last hold released: key deleted, head (if any) woken; latch = 1
--
-- Redisson 3.32.0 .. HEAD. Known bugs kept: unlocking a missing lock reports success (this is
-- today's behaviour too, so it is modelled, not "kept").

local recorded = redis.call('get', KEYS[5])
if recorded ~= false then
    return tonumber(recorded)
end

local now = tonumber(ARGV[4])

while true do
    local head = redis.call('lindex', KEYS[2], 0)
    if head == false then
        break
    end
    local deadline = redis.call('zscore', KEYS[3], head)
    if deadline ~= false and tonumber(deadline) <= now then
        redis.call('zrem', KEYS[3], head)
        redis.call('lpop', KEYS[2])
    else
        break
    end
end

if redis.call('exists', KEYS[1]) == 0 then
    local nextWaiter = redis.call('lindex', KEYS[2], 0)
    if nextWaiter ~= false then
        redis.call(ARGV[5], KEYS[4] .. ':' .. nextWaiter, ARGV[1])
    end
    redis.call('set', KEYS[5], 1, 'px', ARGV[6])
    return 1
end

if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return nil
end

local holds = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if holds > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    redis.call('set', KEYS[5], 0, 'px', ARGV[6])
    return 0
end

redis.call('del', KEYS[1])
redis.call('set', KEYS[5], 1, 'px', ARGV[6])
local nextWaiter = redis.call('lindex', KEYS[2], 0)
if nextWaiter ~= false then
    redis.call(ARGV[5], KEYS[4] .. ':' .. nextWaiter, ARGV[1])
end
return 1
