-- BROKEN on purpose (scenarios/testdata/broken-scripts): a fenced-lock acquire that reads the
-- token counter instead of incrementing it. Every holder gets the same token, so a resource
-- that checks tokens can no longer tell an old holder from a new one.
--
-- KEYS, ARGV and replies as lua/fencedlock/current/acquire_with_token.lua: KEYS[1] lock hash,
-- KEYS[2] token counter, ARGV[1] lease ms, ARGV[2] lockName; {-1, token} or {pttl, -1}.

if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    -- The bug: GET where the real script INCRs (a missing counter reads as token 0).
    local token = tonumber(redis.call('get', KEYS[2]) or '0')
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {-1, token}
end
return {redis.call('pttl', KEYS[1]), -1}
