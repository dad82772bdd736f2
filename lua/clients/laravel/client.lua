-- Laravel's Redis cache lock (Illuminate\Cache\RedisLock with Illuminate\Cache\Lock::block,
-- Laravel 10 and 11), as a lockstep client program. README.md in this folder says what is
-- modelled and what is not.
--
--   acquire:  SET <key> <owner> EX <seconds> NX (seconds = (int) the lease in seconds). block():
--             while that fails, if now + sleep - wait >= start (now() is the WALL clock), give
--             up with LockTimeoutException; else usleep(sleepMilliseconds = 250). get(): one try.
--   release:  release.lua by EVAL: 1 deleted, 0 release() returns false.
--
-- lockstep's workload gives: op.mode "lock" -> block() with no limit (a loop of get()),
-- "try" -> block(wait in seconds, as a number of ms), "try-no-wait" -> get().

local SLEEP_MS = 250  -- Lock::$sleepMilliseconds

local key = lockstep.config.lock_name

local lock = {
  layout = "string-token",              -- the key's value is the owner string
  unlock_reply = "compare-and-delete",  -- release.lua answers 1 (deleted) or 0 (not the owner's)
}

local owners = {}  -- Each thread's current lock's owner string.

local function timeout_error(what)
  return "unknown", "RedisException: read error on connection (no reply to " .. what .. " within "
      .. lockstep.config.timeout_us // 1000 .. " ms)"
end

-- One acquire(): true, false, or nil and a reason.
local function try_once(op, owner)
  local lease_us = op.lease_us
  if lease_us <= 0 then lease_us = lockstep.config.watchdog_timeout_us end
  local seconds = lease_us // 1000000  -- An integer number of seconds, as Laravel takes it.
  if seconds < 1 then seconds = 1 end
  local reply = lockstep.call(0, {"SET", key, owner, "EX", seconds, "NX"}, {label = "acquire"})
  if reply == nil then return nil, "timeout" end
  if type(reply) == "table" and reply.err then return nil, reply.err end
  return type(reply) == "table" and reply.ok ~= nil
end

function lock.acquire(op)
  -- Cache::lock() makes a new lock with Str::random(16) as its owner: 16 characters, hex
  -- digits from the process's PRNG here, announced so that the history knows whose it is.
  local owner = lockstep.random_hex(8)
  lockstep.holder_value(owner)
  local starting = lockstep.wall_ms()
  while true do
    local acquired, problem = try_once(op, owner)
    if problem == "timeout" then return timeout_error("SET") end
    if problem then return "fail", "RedisException: " .. problem end
    if acquired then
      owners[op.thread] = owner
      return "ok", "acquired"
    end
    if op.mode == "try-no-wait" then return "fail", "get() returned false" end
    if op.mode == "try" then
      local now = lockstep.wall_ms()
      if now + SLEEP_MS - op.wait_us // 1000 >= starting then
        return "fail", "LockTimeoutException"
      end
    end
    lockstep.sleep(SLEEP_MS * 1000)
  end
end

function lock.release(op)
  local owner = owners[op.thread]
  owners[op.thread] = nil
  if owner == nil then return "fail", "release() returned false: no lock to release" end
  local reply = lockstep.eval(0, "release", {key}, {owner}, {label = "unlock"})
  if reply == nil then return timeout_error("the release script") end
  if type(reply) == "table" and reply.err then return "fail", "RedisException: " .. reply.err end
  if reply == 1 then return "ok", "released", 1 end
  return "fail", "release() returned false: the lock is no longer the caller's"
end

return lock
