-- A lock taken with WATCH / GET / MULTI / SET / EXEC, whose waiters block in BLPOP on a signal
-- list that every release pushes to (python-redis-lock waits so), for the live driver's test of
-- per-thread session connections (live/driver_test.cpp, watch-blpop.toml beside this folder).
--
-- It checks every reply it gets and raises an error (which stops the run) on any that a
-- connection of the thread's own would not give: a MULTI refused as nested, a SET not queued,
-- an EXEC whose reply holds more or fewer elements than the thread queued, a BLPOP answered
-- from another list, or no reply within the response timeout.
--
-- Thread 0 of each process first blocks in BLPOP, without a time limit, on a gate list of its
-- process, which thread 1 of the same process pushes to after its third release: thread 1's
-- commands must go on while thread 0 is blocked, or the run stops with a timeout.
--
-- The release's DEL of the lock key (labelled unlock) is the last command of its transaction:
-- the live driver records a transaction's lease change right after its last command's exec,
-- which the reentrancy checker reads as that command's doing (docs/live.md).

local key = lockstep.config.lock_name
local signal = key .. ":signal"
local gate = key .. ":gate:" .. lockstep.config.uuid
local GATE_AFTER_RELEASES = 3
local WAIT_S = "1"  -- A waiter's BLPOP gives up after a second and looks at the key again.

local lock = {
  layout = "string-token",
  unlock_reply = "compare-and-delete",
}

local releases_by_thread_1 = 0
local gate_passed = false

local function show(reply)
  if reply == nil then return "no reply" end
  if reply == false then return "(nil)" end
  if type(reply) ~= "table" then return tostring(reply) end
  if reply.ok then return "+" .. reply.ok end
  if reply.err then return "-" .. reply.err end
  local parts = {}
  for i = 1, #reply do parts[i] = show(reply[i]) end
  return "[" .. table.concat(parts, ", ") .. "]"
end

local function call(argv, label, timeout_us)
  local reply = lockstep.call(0, argv, {label = label, timeout_us = timeout_us})
  if reply == nil then error(argv[1] .. " (" .. label .. "): no reply in time") end
  return reply
end

local function expect_status(argv, label, want)
  local reply = call(argv, label)
  if type(reply) ~= "table" or reply.ok ~= want then
    error(argv[1] .. " (" .. label .. "): expected +" .. want .. ", got " .. show(reply))
  end
end

local function ttl_ms(op)
  if op.lease_us > 0 then return op.lease_us // 1000 end
  return lockstep.config.watchdog_timeout_us // 1000
end

function lock.acquire(op)
  if op.thread == 0 and not gate_passed then
    local r = call({"BLPOP", gate, "0"}, "gate", 60000000)
    if type(r) ~= "table" or r[1] ~= gate or r[2] ~= "go" then error("gate: got " .. show(r)) end
    gate_passed = true
  end
  local start = lockstep.now_us()
  while true do
    expect_status({"WATCH", key}, "watch", "OK")
    local holder = call({"GET", key}, "get")
    if holder == false then
      expect_status({"MULTI"}, "multi", "OK")
      expect_status({"SET", key, op.token, "PX", ttl_ms(op)}, "acquire", "QUEUED")
      local r = call({"EXEC"}, "exec")
      if type(r) == "table" and #r == 1 and type(r[1]) == "table" and r[1].ok == "OK" then
        return "ok", "acquired"
      end
      -- A nil reply: the key changed after WATCH (another thread was first); look again.
      if r ~= false then error("EXEC of the acquire: got " .. show(r)) end
    else
      expect_status({"UNWATCH"}, "unwatch", "OK")
      if op.mode == "try-no-wait" then return "fail", "held by another" end
      if op.mode == "try" and lockstep.now_us() - start >= op.wait_us then
        return "fail", "wait time elapsed"
      end
      local r = call({"BLPOP", signal, WAIT_S}, "wait", 3000000)
      if r ~= false and not (type(r) == "table" and r[1] == signal and r[2] == "1") then
        error("BLPOP of the signal: got " .. show(r))
      end
    end
  end
end

function lock.release(op)
  expect_status({"WATCH", key}, "watch", "OK")
  local holder = call({"GET", key}, "get")
  if holder ~= op.token then
    expect_status({"UNWATCH"}, "unwatch", "OK")
    return "fail", "not released: the key holds " .. show(holder)
  end
  expect_status({"MULTI"}, "multi", "OK")
  expect_status({"DEL", signal}, "clear_signal", "QUEUED")
  expect_status({"LPUSH", signal, "1"}, "signal", "QUEUED")
  expect_status({"PEXPIRE", signal, "1000"}, "signal_ttl", "QUEUED")
  expect_status({"DEL", key}, "unlock", "QUEUED")
  local r = call({"EXEC"}, "exec")
  if r == false then return "fail", "not released: the key changed after WATCH" end
  if type(r) ~= "table" or #r ~= 4 or r[2] ~= 1 or r[3] ~= 1 or r[4] ~= 1 then
    error("EXEC of the release: got " .. show(r))
  end
  if op.thread == 1 then
    releases_by_thread_1 = releases_by_thread_1 + 1
    if releases_by_thread_1 == GATE_AFTER_RELEASES then
      local pushed = call({"LPUSH", gate, "go"}, "open_gate")
      if pushed ~= 1 then error("LPUSH of the gate: got " .. show(pushed)) end
    end
  end
  return "ok", "released", 1
end

return lock
