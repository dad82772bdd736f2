-- MUTANT (bench/fuzz-mutants): today's fair lock acquire without the purge of timed-out
-- waiters (step 1 of lua/fairlock/current/acquire.lua).
--
-- What is wrong: a queued waiter whose deadline has passed is never dropped from the head of the
-- queue. A waiter that gives up leaves the queue itself (acquire_failed), so nothing shows while
-- every waiter lives. When a queued waiter dies (a client crash), it stays at the head for good:
-- the stock script drops it once its deadline (its wait behind the holder) has passed, but here
-- the free lock is refused to everyone behind it until the run ends. The unlock script still
-- purges, but only when someone unlocks, and nobody can take the lock to unlock it.
--
-- KEYS, ARGV and replies as lua/fairlock/current/acquire.lua: KEYS[1] lock hash, KEYS[2] queue,
-- KEYS[3] timeouts, ARGV[1] lease ms, ARGV[2] lockName, ARGV[3] wait ms, ARGV[4] now (the
-- client's epoch ms); nil acquired, integer ms to wait.

local now = tonumber(ARGV[4])
local wait = tonumber(ARGV[3])

-- 1. Purge expired queue heads.
-- The bug: the stock script drops every queue head whose deadline has passed here (a waiter
-- that died or stopped waiting without leaving the queue); this one drops nothing.

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
