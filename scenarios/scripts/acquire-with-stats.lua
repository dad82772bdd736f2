-- A user's RLock acquire script that works on a single Redis and breaks on a Redis Cluster.
--
-- It is Redisson 3.13.6's acquire script (lua/rlock/v3.13.6/acquire.lua) plus one line: after a
-- fresh acquisition it counts it in a hash shared by all locks, 'lock_stats'. That key is
-- neither declared in KEYS nor tagged with the lock's name, so on a cluster it hashes to its
-- own slot (6549), which another master serves than the lock's (cluster-crossslot-user-script
-- uses the lock "inventory", slot 14370). Redis 7.0 then refuses the call with
--   ERR Script attempted to access a non local key in a cluster node
-- and, since Redis never rolls a script back, the lock hash written just before stays.
--
-- (Had 'lock_stats' landed on the same master, Redis 7.0 would have let this script through,
-- because a script without a shebang may touch any key its node serves, until a resharding
-- moves one of the slots. A "#!lua" first line makes Redis refuse every key outside the
-- script's slot, on any node: "ERR Script attempted to access keys that do not hash to the
-- same slot". The fix is to keep such keys in the lock's slot: '{' .. KEYS[1] .. '}:stats'.)
--
-- KEYS[1]  lock name (the hash)
-- ARGV[1]  lease in ms
-- ARGV[2]  lockName = <clientUUID>:<threadId>
--
-- Returns: nil when acquired or re-entered, else the lock's PTTL.

if redis.call('exists', KEYS[1]) == 0 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    redis.call('hincrby', 'lock_stats', KEYS[1], 1)
    return nil
end

if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end

return redis.call('pttl', KEYS[1])
