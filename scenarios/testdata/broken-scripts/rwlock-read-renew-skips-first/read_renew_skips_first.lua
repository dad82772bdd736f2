-- BROKEN on purpose (scenarios/testdata/broken-scripts): today's batched read-lock renewal
-- whose loop over a reader's holds stops at 2, so the timeout key of its first hold
-- (...:rwlock_timeout:1) runs out after 30 s while the watchdog believes it renews everything.
-- The next read unlock then finds no live timeout key, deletes the whole lock and answers 1
-- while the reader still holds its first hold. KEYS, ARGV and replies as
-- lua/rwlock/current/read_renew.lua, whose header follows. The stock loop runs over the HGET
-- *string* (for n = counter, 1, -1), which builds ":1" only because lockstep's Lua prints
-- numbers as Redis's Lua 5.1 does (docs/building.md).
--
-- ReadWriteLock: read-lock watchdog renewal, current Redisson: batched (ReadLockTask, 4.4.0+).
--
-- For each lock i of the batch, renews only the read holds of *this client's* threads: for
-- every given lockName that still has a count in the hash, extends that lockName's timeout
-- keys <prefix>:<lockName>:rwlock_timeout:1..count. If at least one lockName still had a count,
-- the hash itself is extended too.
--
-- KEYS[2i-1]  lock name i (the hash), i = 1..N
-- KEYS[2i]    key prefix i: {<name i>}
-- ARGV[1]     new lease in ms (lockWatchdogTimeout)
-- then, for each lock i in KEYS order:
--   ARGV[k]        c_i = number of lockNames that follow for lock i
--   ARGV[k+1..k+c_i]  lockNames <clientUUID>:<threadId> of this client holding lock i
--
-- Returns: an array of N integers, in lock order:
--   1  some given lockName still holds lock i: its holds and the hash were extended
--   0  none does; nothing changed for lock i (the client cancels renewal for it)
--
-- Redisson 4.4.0 .. HEAD. Known bugs kept: none.
-- As Redisson's text, the loop runs over the raw HGET string: Lua 5.1 (and lockstep's host,
-- which prints numbers as 5.1 does) builds ":rwlock_timeout:1", where a stock Lua 5.4 would
-- loop over floats and build ":rwlock_timeout:1.0".

local lease = ARGV[1]
local argIndex = 2
local results = {}
local lockIndex = 0
for k = 1, #KEYS, 2 do
    local name = KEYS[k]
    local prefix = KEYS[k + 1]
    local nameCount = tonumber(ARGV[argIndex])
    argIndex = argIndex + 1
    local anyHeld = false
    for _ = 1, nameCount do
        local lockName = ARGV[argIndex]
        argIndex = argIndex + 1
        local counter = redis.call('hget', name, lockName)
        if counter ~= false then
            anyHeld = true
            -- The bug: the loop stops at 2, so the first read hold's timeout key is never renewed.
            for n = counter, 2, -1 do
                redis.call('pexpire', prefix .. ':' .. lockName .. ':rwlock_timeout:' .. n, lease)
            end
        end
    end
    lockIndex = lockIndex + 1
    if anyHeld then
        redis.call('pexpire', name, lease)
        results[lockIndex] = 1
    else
        results[lockIndex] = 0
    end
end
return results
