-- node-redlock's release script (RELEASE_SCRIPT in redlock v5), written for lockstep with the
-- same keys, arguments and replies.
--
-- KEYS     the resources
-- ARGV[1]  the lock's value
--
-- Returns how many of the keys held the value and were deleted (#KEYS: a vote for).

local count = 0
for _, key in ipairs(KEYS) do
  if redis.call('get', key) == ARGV[1] then
    redis.pcall('del', key)
    count = count + 1
  end
end
return count
