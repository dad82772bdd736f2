-- A broken watchdog renew (the batched one of current Redisson): it "refreshes" each lock by
-- writing the caller's field and extending the key, without asking whether the caller still
-- holds it. A holder that lost the lock (its key expired, another thread took it) is told 1,
-- still held, and its field is put back into the other holder's key.
local results = {}
for i = 1, #KEYS do
    redis.call('hincrby', KEYS[i], ARGV[i + 1], 0)
    redis.call('hsetnx', KEYS[i], ARGV[i + 1], 1)
    redis.call('pexpire', KEYS[i], ARGV[1])
    results[i] = 1
end
return results
