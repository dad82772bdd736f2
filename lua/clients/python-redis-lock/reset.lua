-- python-redis-lock's reset script (RESET_SCRIPT in src/redis_lock/__init__.py, 4.0.x), written
-- for lockstep with the same keys, arguments and replies: Lock.reset(), a forced unlock.
--
-- KEYS[1]  the lock key, lock:<name>
-- KEYS[2]  the signal list, lock-signal:<name>
-- ARGV[1]  the Lock's id (passed, not used: whoever holds the key loses it)
-- ARGV[2]  signal_expire, in milliseconds
--
-- Returns how many keys the final DEL removed: 1 when there was a lock key, else 0. Either way
-- one signal is pushed (it wakes one waiter).

redis.call('del', KEYS[2])
redis.call('lpush', KEYS[2], 1)
redis.call('pexpire', KEYS[2], ARGV[2])
return redis.call('del', KEYS[1])
