-- ReadWriteLock: write-lock acquire (RedissonWriteLock.tryLockInnerAsync), current Redisson.
--
-- Grants the write lock when there is no mode (the lock is free), or re-enters it when mode is
-- "write" and the caller is the writer. On reentry the TTL *accumulates*: new TTL =
-- PTTL + lease (#1110), so three holds with a 30 s lease give about 90 s.
-- A thread holding only a read lock cannot upgrade: it gets the PTTL like everyone else.
--
-- KEYS[1]  lock name (the hash; see read_acquire.lua for its layout)
-- ARGV[1]  lease in ms (unit.toMillis(leaseTime), or lockWatchdogTimeout)
-- ARGV[2]  writer lockName = <clientUUID>:<threadId>:write
--
-- Returns:
--   nil      write lock granted or re-entered
--   integer  not granted: PTTL of the hash in ms
--
-- Redisson 3.13.6 .. HEAD (unchanged). Known bug kept: the cumulative TTL on
-- reentry (still so at HEAD, so it is modelled rather than "kept").

local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call('hset', KEYS[1], 'mode', 'write')
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end

if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    local remaining = redis.call('pttl', KEYS[1])
    redis.call('pexpire', KEYS[1], remaining + tonumber(ARGV[1]))
    return nil
end

return redis.call('pttl', KEYS[1])
