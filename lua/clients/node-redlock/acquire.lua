-- node-redlock's acquire script (ACQUIRE_SCRIPT in redlock v5), written for lockstep with the
-- same keys, arguments and replies.
--
-- KEYS     the resources to lock (lockstep's model passes one: the lock's name)
-- ARGV[1]  the lock's value
-- ARGV[2]  its duration in milliseconds
--
-- Returns #KEYS when every key was free and is now set with the value and duration, 0 (and
-- nothing changed) when any of them exists: a vote against.

for _, key in ipairs(KEYS) do
  if redis.call('exists', key) == 1 then
    return 0
  end
end
for _, key in ipairs(KEYS) do
  redis.call('set', key, ARGV[1], 'PX', ARGV[2])
end
return #KEYS
