-- FairLock acquire, EVAL_LONG variant (lock() and tryLock(wait, ...)), Redisson 3.13.6.
--
-- A FIFO lock: waiters queue in a LIST and each has a deadline in a ZSET. Steps:
--   1. purge: drop queue heads whose deadline has passed (they stopped waiting or died);
--   2. take the lock if it is free and the queue is empty or its head is me; on taking it,
--      leave the queue and shift every other waiter's deadline down by `wait`;
--   3. re-enter if I hold it;
--   4. if I am already queued, return my estimate: my deadline - wait - now;
--   5. otherwise join the tail: my deadline = (deadline of the last waiter - now, or the
--      lock's PTTL if nobody waits) + wait + now, and return that first part as my ttl.
--
-- KEYS[1]  lock name (the hash; field <clientUUID>:<threadId> = hold count)
-- KEYS[2]  queue: redisson_lock_queue:{<name>}    LIST of lockNames, head = next owner
-- KEYS[3]  timeouts: redisson_lock_timeout:{<name>} ZSET lockName -> deadline (epoch ms)
-- ARGV[1]  lease in ms (internalLockLeaseTime, overwritten just before the call in 3.13.6)
-- ARGV[2]  lockName = <clientUUID>:<threadId>
-- ARGV[3]  wait in ms: threadWaitTime = 300000 by default (since 3.13.3), or tryLock's
--          waitTime -- which 3.13.6 passes unconverted as if it were ms (#4743)
-- ARGV[4]  now: the CLIENT's clock in epoch ms (not the server's)
--
-- Returns:
--   nil      acquired or re-entered
--   integer  not acquired: ms the client should wait before trying again (may be <= 0 in
--            step 4; the client then waits for a message with no timeout)
--
-- Redisson 3.13.6. Known bugs kept deliberately (lockstep exists to expose them):
--   * step 1 compares tonumber(zscore(head)) with now without a nil check: a queue head with
--     no ZSET entry makes the script fail with "attempt to compare nil with number" (#4153,
--     fixed in 3.32.0);
--   * step 4 returns deadline - wait - now, which can be negative (#4705, fixed in 3.32.0);
--   * step 5 does arithmetic on zscore(last) without a nil check: "attempt to perform
--     arithmetic on a nil value" when the tail has no ZSET entry (#5989, fixed in 3.45.0).
-- Note: before 3.13.3, ARGV[3] was now + wait (hence "ttl + 2 * now + wait" scores in
-- older descriptions); from 3.13.3 on ARGV[3] is the wait alone, as here.

local now = tonumber(ARGV[4])
local wait = tonumber(ARGV[3])

-- 1. Purge expired queue heads (no nil check on the score: bug #4153 kept).
while true do
    local head = redis.call('lindex', KEYS[2], 0)
    if head == false then
        break
    end
    local deadline = tonumber(redis.call('zscore', KEYS[3], head))
    if deadline <= now then
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

-- 4. Already queued: head-of-line estimate, possibly negative (bug #4705 kept).
local mine = redis.call('zscore', KEYS[3], ARGV[2])
if mine ~= false then
    return tonumber(mine) - wait - now
end

-- 5. Join the tail (no nil check on the tail's score: bug #5989 kept).
local last = redis.call('lindex', KEYS[2], -1)
local ttl
if last ~= false and last ~= ARGV[2] then
    ttl = tonumber(redis.call('zscore', KEYS[3], last)) - now
else
    ttl = redis.call('pttl', KEYS[1])
end
local deadline = ttl + wait + now
if redis.call('zadd', KEYS[3], deadline, ARGV[2]) == 1 then
    redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl
