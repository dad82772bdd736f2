-- node-redlock (the `redlock` package, v5), the Redlock algorithm over independent masters, as
-- a lockstep client program. README.md in this folder says what is modelled and what is not.
--
--   acquire(resources, duration): up to retryCount + 1 attempts (retryCount 10). An attempt:
--            start = Date.now() (the WALL clock); the acquire script by EVALSHA (EVAL on
--            NOSCRIPT) on every master at once; each answer is a vote, for when it equals the
--            number of keys; the attempt ends as soon as a quorum (masters / 2 + 1) voted for,
--            or against. A failed attempt is followed by a sleep of retryDelay (200 ms) plus a
--            jitter of -100..99 ms, with NOTHING released in between. After the last failed
--            attempt the release script runs once on every master and acquire throws. The lock
--            is valid until start + duration - (round(duration * driftFactor) + 2).
--   release: the same loop with the release script (a vote for: it deleted the value).
--
-- lockstep's workload gives: op.lease_us -> duration; op.mode "lock" -> retryCount -1 (no
-- limit); "try" -> retryCount = wait / retryDelay; "try-no-wait" -> retryCount 0.

local RETRY_COUNT = 10
local RETRY_DELAY_MS = 200
local RETRY_JITTER_MS = 100

local name = lockstep.config.lock_name

local lock = {
  layout = "string-token",              -- each master's key holds the holder's value
  unlock_reply = "compare-and-delete",  -- release.lua answers 1 (deleted) or 0
  quorum = "majority",
}

local values = {}  -- Each thread's current Lock's value.

-- One attempt: "for" or "against", as soon as a quorum says so.
local function attempt(script, args, label)
  local calls = {}
  for node = 0, lockstep.node_count() - 1 do
    calls[#calls + 1] = {node, script = script, sha = true, keys = {name}, args = args}
  end
  local quorum = #calls // 2 + 1
  local batch = lockstep.send_all(calls, {label = label})
  local yes, no = 0, 0
  while true do
    local i, reply = batch:next()
    if i == nil then return "against" end
    -- A vote for: the script set (or deleted) every key. Anything else, an error and no reply
    -- within the timeout included, is a vote against.
    if reply == 1 then yes = yes + 1 else no = no + 1 end
    if yes == quorum then return "for" end
    if no == quorum then return "against" end
  end
end

-- _execute: attempts until one wins a quorum, or retry_count retries have failed.
local function execute(script, args, label, retry_count)
  local attempts = 0
  while true do
    local vote = attempt(script, args, label)
    attempts = attempts + 1
    if vote == "for" then return true, attempts end
    if retry_count >= 0 and attempts >= retry_count + 1 then return false, attempts end
    local delay_ms = RETRY_DELAY_MS + lockstep.random(-RETRY_JITTER_MS, RETRY_JITTER_MS - 1)
    lockstep.sleep(math.max(0, delay_ms) * 1000)
  end
end

local function duration_ms(op)
  if op.lease_us > 0 then return op.lease_us // 1000 end
  return lockstep.config.watchdog_timeout_us // 1000
end

function lock.acquire(op)
  local retry_count = RETRY_COUNT
  if op.mode == "lock" then retry_count = -1 end
  if op.mode == "try-no-wait" then retry_count = 0 end
  if op.mode == "try" then retry_count = op.wait_us // (RETRY_DELAY_MS * 1000) end
  -- 16 random bytes as hex for every acquire(), from the process's PRNG, announced so that
  -- the history knows whose it is.
  local value = lockstep.random_hex(16)
  lockstep.holder_value(value)
  local ok, attempts = execute("acquire", {value, duration_ms(op)}, "acquire", retry_count)
  if ok then
    values[op.thread] = value
    return "ok", "acquired after " .. attempts .. " attempt(s)"
  end
  -- Release whatever partial lock state a minority of the masters may hold.
  execute("release", {value}, "cleanup", 0)
  return "fail", "ExecutionError: The operation was unable to achieve a quorum during its " ..
      "retry window (" .. attempts .. " attempts)"
end

function lock.release(op)
  local value = values[op.thread]
  values[op.thread] = nil
  if value == nil then return "fail", "no lock to release" end
  local ok, attempts = execute("release", {value}, "unlock", RETRY_COUNT)
  if ok then return "ok", "released", 1 end
  return "fail", "ExecutionError: The operation was unable to achieve a quorum during its " ..
      "retry window (" .. attempts .. " attempts)"
end

return lock
