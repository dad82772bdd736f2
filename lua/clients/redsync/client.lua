-- go-redsync/redsync's Mutex (v4), the Redlock algorithm over independent masters, as a
-- lockstep client program. README.md in this folder says what is modelled and what is not.
--
--   Lock:    up to `tries` (32) rounds; before every round but the first, sleep a random
--            50..249 ms. A round: start = now; SET <name> <value> NX with the expiry on every
--            master at once, all within one deadline of expiry * timeoutFactor (0.05); n = the
--            masters that said OK; now; until = now + expiry - (now - start) - expiry *
--            driftFactor (0.01). n >= quorum (masters / 2 + 1) and now < until: locked, valid
--            until `until`. Otherwise run the delete script on every master (same deadline) and
--            go round again.
--   Unlock:  the delete script on every master at once; released when at least a quorum
--            deleted the caller's value (1), else ErrFailed (ErrLockAlreadyExpired for -1).
--
-- lockstep's workload gives: op.lease_us -> WithExpiry (none: the watchdog timeout, see the
-- README); op.mode "try" -> LockContext with a deadline of wait_us; "lock" -> Lock();
-- "try-no-wait" -> TryLock (one round).

local TRIES = 32
local MIN_DELAY_US, MAX_DELAY_US = 50000, 250000  -- rand.Intn(max - min) + min
local DRIFT_FACTOR_PERCENT = 1                    -- 0.01
local TIMEOUT_FACTOR_PERCENT = 5                  -- 0.05

local name = lockstep.config.lock_name

local lock = {
  layout = "string-token",              -- each master's key holds the holder's value
  unlock_reply = "compare-and-delete",  -- delete.lua: 1 deleted, 0 another's, -1 no key
  quorum = "majority",                  -- held with more than half the masters
}

local values = {}  -- The value of each thread's current lock (Mutex.value).

local function expiry_us(op)
  if op.lease_us > 0 then return op.lease_us end
  return lockstep.config.watchdog_timeout_us
end

-- go-redis's SetNX: EX in seconds when the expiry is whole seconds, else PX in milliseconds.
local function set_nx(value, exp_us)
  if exp_us % 1000000 == 0 then return {"SET", name, value, "EX", exp_us // 1000000, "NX"} end
  return {"SET", name, value, "PX", exp_us // 1000, "NX"}
end

local function on_every_master(make, opts)
  local calls = {}
  for node = 0, lockstep.node_count() - 1 do calls[#calls + 1] = make(node) end
  return lockstep.call_all(calls, opts)
end

local function delete_everywhere(value, timeout_us, label)
  return on_every_master(function(node)
    return {node, script = "delete", keys = {name}, args = {value}}
  end, {timeout_us = timeout_us, label = label})
end

function lock.acquire(op)
  local exp = expiry_us(op)
  local timeout = math.max(1, exp * TIMEOUT_FACTOR_PERCENT // 100)
  local drift = exp * DRIFT_FACTOR_PERCENT // 100
  local quorum = lockstep.node_count() // 2 + 1
  local tries = TRIES
  if op.mode == "try-no-wait" then tries = 1 end
  local deadline = nil
  if op.mode == "try" then deadline = lockstep.now_us() + op.wait_us end
  -- genValueFunc: 16 random bytes per Lock (base64 in the library, hex here), from the
  -- process's PRNG, announced so that the history knows whose it is.
  local value = lockstep.random_hex(16)
  lockstep.holder_value(value)
  for i = 0, tries - 1 do
    if i ~= 0 then
      local delay = lockstep.random(MIN_DELAY_US, MAX_DELAY_US - 1)
      if deadline ~= nil and lockstep.now_us() + delay >= deadline then
        -- The context ends before the delay does.
        if deadline > lockstep.now_us() then lockstep.sleep(deadline - lockstep.now_us()) end
        return "fail", "ErrFailed: context deadline exceeded"
      end
      lockstep.sleep(delay)
    end
    local start = lockstep.now_us()
    local replies = on_every_master(function(node)
      return {node, set_nx(value, exp)}
    end, {timeout_us = timeout, label = "acquire"})
    local n = 0
    for _, r in ipairs(replies) do
      if type(r) == "table" and r.ok then n = n + 1 end
    end
    local now = lockstep.now_us()
    local until_us = now + exp - (now - start) - drift
    if n >= quorum and now < until_us then
      values[op.thread] = value
      return "ok", "acquired on " .. n .. " of " .. #replies .. " masters"
    end
    delete_everywhere(value, timeout, "cleanup")
  end
  return "fail", "ErrFailed: lock not obtained after " .. tries .. " tries"
end

function lock.release(op)
  local value = values[op.thread]
  values[op.thread] = nil
  if value == nil then return "fail", "ErrFailed: no lock to release" end
  local replies = delete_everywhere(value, lockstep.config.timeout_us, "unlock")
  local n, expired = 0, false
  for _, r in ipairs(replies) do
    if r == 1 then n = n + 1 end
    if r == -1 then expired = true end
  end
  if n >= lockstep.node_count() // 2 + 1 then return "ok", "released on " .. n .. " masters", 1 end
  if expired then return "fail", "ErrLockAlreadyExpired (released on " .. n .. " masters)" end
  return "fail", "ErrFailed (released on " .. n .. " masters)"
end

return lock
