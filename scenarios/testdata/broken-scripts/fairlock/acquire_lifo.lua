-- BROKEN on purpose (scenarios/testdata/broken-scripts): a fair-lock acquire that queues a new
-- waiter at the head of the queue instead of its tail. The queue becomes last-in first-out:
-- when the lock is released, the waiter that arrived last is woken and granted first.
--
-- KEYS, ARGV and replies as lua/fairlock/current/acquire.lua: KEYS[1] lock hash, KEYS[2] queue
-- (LIST), KEYS[3] deadlines (ZSET); ARGV[1] lease ms, ARGV[2] lockName, ARGV[3] wait ms,
-- ARGV[4] now ms; nil granted, integer = the estimated wait.

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
    -- The bug: LPUSH where the real script RPUSHes, so the newest waiter becomes the head.
    redis.call('lpush', KEYS[2], ARGV[2])
end
return ttl
