-- FairLock acquire, EVAL_LONG variant (lock() and tryLock(wait, ...)), current Redisson.
--
-- A FIFO lock: waiters queue in a LIST and each has a deadline in a ZSET. Steps:
--   1. purge: drop queue heads whose deadline has passed; a head with no deadline stops the
--      purge (nil-safe since 3.32.0);
--   2. take the lock if it is free and the queue is empty or its head is me; on taking it,
--      leave the queue and shift every other waiter's deadline down by `wait`;
--   3. re-enter if I hold it;
--   4. if I am already queued, return max(0, PTTL of the lock) (since 3.32.0);
--   5. otherwise join the tail: ttl = (deadline of the last waiter - now) when the last waiter
--      is someone else and has a deadline (check since 3.45.0), else the lock's PTTL; my
--      deadline = ttl + wait + now; return ttl.
--
-- KEYS[1]  lock name (the hash; field <clientUUID>:<threadId> = hold count)
-- KEYS[2]  queue: redisson_lock_queue:{<name>}     LIST of lockNames, head = next owner
-- KEYS[3]  timeouts: redisson_lock_timeout:{<name>} ZSET lockName -> deadline (epoch ms)
-- ARGV[1]  lease in ms (unit.toMillis(leaseTime), or lockWatchdogTimeout)
-- ARGV[2]  lockName = <clientUUID>:<threadId>
-- ARGV[3]  wait in ms: Config.fairLockWaitTimeout (300000 by default), or tryLock's waitTime
--          (passed unconverted again since 3.24.1, e0ead56c0: the #4743 unit bug is back)
-- ARGV[4]  now: the CLIENT's clock in epoch ms
--
-- Returns:
--   nil      acquired or re-entered
--   integer  not acquired: ms to wait before retrying (>= 0 in step 4; step 5 returns the raw
--            PTTL, so -1 or -2 are possible there: the client then waits with no timeout)
--
-- Redisson 3.45.0 .. HEAD. Known bugs kept: none in the script.

local now = tonumber(ARGV[4])
local wait = tonumber(ARGV[3])

-- 1. Purge expired queue heads; stop at a head that has no deadline.
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

-- 2. Acquire when free and nobody is ahead of me.
if redis.call('exists', KEYS[1]) == 0
    and (redis.call('exists', KEYS[2]) == 0
         or redis.call('lindex', KEYS[2], 0) == ARGV[2]) then
    redis.call('lpop', KEYS[2])
    redis.call('zrem', KEYS[3], ARGV[2])
    local waiters = redis.call('zrange', KEYS[3], 0, -1)
    for i = 1, #waiters do
        redis.call('zincrby', KEYS[3], -wait, waiters[i])
    end
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end

-- 3. Reentry.
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end

-- 4. Already queued: wait for the lock's remaining TTL, never a negative amount.
if redis.call('zscore', KEYS[3], ARGV[2]) ~= false then
    local remaining = redis.call('pttl', KEYS[1])
    if remaining < 0 then
        remaining = 0
    end
    return remaining
end

-- 5. Join the tail.
local last = redis.call('lindex', KEYS[2], -1)
local ttl = nil
if last ~= false and last ~= ARGV[2] then
    local lastDeadline = redis.call('zscore', KEYS[3], last)
    if lastDeadline ~= false then
        ttl = tonumber(lastDeadline) - now
    end
end
if ttl == nil then
    ttl = redis.call('pttl', KEYS[1])
end
local deadline = ttl + wait + now
if redis.call('zadd', KEYS[3], deadline, ARGV[2]) == 1 then
    redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl
