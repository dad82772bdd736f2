-- BROKEN on purpose (scenarios/testdata/broken-scripts): today's read-lock acquire that treats
-- a lock in write mode like one in read mode, so a reader joins another thread's writer (the
-- stock script lets only the write holder itself downgrade). KEYS, ARGV and replies as
-- lua/rwlock/current/read_acquire.lua, whose header follows.
--
-- ReadWriteLock: read-lock acquire (RedissonReadLock.tryLockInnerAsync), current Redisson.
--
-- The read-write lock is one hash: field "mode" = "read" | "write", one field per reader
-- (<clientUUID>:<threadId> = its read hold count) and one for the writer
-- (<clientUUID>:<threadId>:write = its write hold count). Every read hold n of a thread also has
-- its own STRING key <timeoutPrefix>:<n> with the lease as PX TTL, so an abandoned read hold
-- can be told from a live one when another reader unlocks.
-- A read hold is granted when there is no mode, when mode is "read", or when mode is "write"
-- and the caller holds the write lock (downgrade, #758). The hash TTL becomes
-- max(its PTTL, lease) (#2144).
--
-- KEYS[1]  lock name (the hash), e.g. "rw"
-- KEYS[2]  timeout prefix of this thread: {<name>}:<clientUUID>:<threadId>:rwlock_timeout
-- ARGV[1]  lease in ms (unit.toMillis(leaseTime), or lockWatchdogTimeout)
-- ARGV[2]  reader lockName = <clientUUID>:<threadId>
-- ARGV[3]  writer lockName of the same thread = <clientUUID>:<threadId>:write
--
-- Returns:
--   nil      read hold granted (count n, key <KEYS[2]>:<n> created)
--   integer  not granted (another thread writes): PTTL of the hash in ms
--
-- Redisson 3.13.6 .. HEAD (unchanged). Known bugs kept: none in the script.
-- Portability: the timeout key is built from the HINCRBY reply, so a Lua 5.4 host must push
-- integer replies as Lua integers (else the key would end in ":2.0").

local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call('hset', KEYS[1], 'mode', 'read')
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('set', KEYS[2] .. ':1', 1, 'px', ARGV[1])
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end

-- The bug: a write-locked hash is joined whatever writer holds it (only the downgrade of
-- one's own write lock should be).
if mode == 'read' or mode == 'write' then
    local holds = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('set', KEYS[2] .. ':' .. holds, 1, 'px', ARGV[1])
    local remaining = redis.call('pttl', KEYS[1])
    local lease = tonumber(ARGV[1])
    if remaining < lease then
        remaining = lease
    end
    redis.call('pexpire', KEYS[1], remaining)
    return nil
end

return redis.call('pttl', KEYS[1])
