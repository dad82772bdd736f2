-- BROKEN on purpose (scenarios/testdata/broken-scripts): a write-lock acquire that takes the
-- lock while readers hold it. A lock in mode "read" is treated like a free one: the mode is
-- switched to "write" and the writer's field added next to the readers' fields.
--
-- KEYS, ARGV and replies as lua/rwlock/current/write_acquire.lua: KEYS[1] lock hash, ARGV[1]
-- lease ms, ARGV[2] lockName:write; nil granted, integer = PTTL.

local mode = redis.call('hget', KEYS[1], 'mode')
-- The bug: "or mode == 'read'"; the real script grants only when there is no mode.
if mode == false or mode == 'read' then
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
