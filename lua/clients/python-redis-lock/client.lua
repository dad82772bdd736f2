-- python-redis-lock's Lock (redis_lock.Lock, 4.0.1; the scripts and algorithm are 4.0.0's), as a
-- lockstep client program. README.md in this folder says what is modelled and what is not.
--
--   acquire:  GET <key> first (Lock._held: the key already holds this Lock's id ->
--             AlreadyAcquired). Then SET <key> <id> NX EX <expire> until it succeeds; after each
--             failed SET: blocking=False gives up; a timed acquire whose previous BLPOP timed out
--             gives up; else BLPOP lock-signal:<name> <timeout or expire or 0> (an unlock's signal
--             wakes one waiter; an expiry wakes nobody). `timeout` bounds each BLPOP, not the
--             whole acquire. With auto_renewal a renewal task starts after the SET.
--   renewal:  every expire * 2 / 3 s, extend.lua (EXPIRE <expire>); the first extend that does
--             not answer 0 (NotAcquired, NotExpirable, an error, no reply) ends the task for good,
--             as the exception ends the library's renewal thread. Nobody is told.
--   release:  stop the renewal task; unlock.lua by EVALSHA: 0 released (one signal pushed), 1
--             NotAcquired. No local check: release() always runs the script.
--
-- lockstep's workload gives: op.lease_us -> Lock(expire=lease in whole seconds), no renewal;
-- no lease -> Lock(expire=watchdog timeout in whole seconds, auto_renewal=True) (the library's
-- default expire=None, no TTL at all, is not modelled: README.md). op.mode "lock" ->
-- acquire(); "try" -> acquire(timeout=int(wait in s)); "try-no-wait" -> acquire(blocking=False).
-- Each acquisition is a new Lock(...) with its own random id (18 bytes from the process's PRNG,
-- as hex; the library base64-encodes urandom(18)), announced with lockstep.holder_value.

local SIGNAL_EXPIRE_MS = 1000  -- Lock(signal_expire=1000)

local key = lockstep.config.lock_name  -- lock:<name>: write the prefix into lock_name
local PREFIX = "lock:"
local name = key
if key:sub(1, #PREFIX) == PREFIX then name = key:sub(#PREFIX + 1) end
local signal = "lock-signal:" .. name
local socket_timeout_us = lockstep.config.timeout_us

local lock = {
  layout = "string-token",         -- lock:<name> holds the holder's id
  -- unlock.lua answers 0 when it deleted the caller's key and 1 when the key was not the
  -- caller's, the other way round from "compare-and-delete".
  unlock_reply = "zero-released",
}

local locks = {}  -- Each thread's current Lock: {id = ..., renewer = task number or nil}.

local function timeout_error(what, waited_us)
  return "TimeoutError: no reply to " .. what .. " within " .. waited_us // 1000 .. " ms"
end

local function is_error(reply)
  return type(reply) == "table" and reply.err ~= nil
end

-- Lock(expire=...): whole seconds (int(expire)); the model never sends less than 1 (EX 0 is a
-- Redis error, README.md).
local function expire_seconds(op)
  local us = op.lease_us
  if us <= 0 then us = lockstep.config.watchdog_timeout_us end
  local s = us // 1000000
  if s < 1 then s = 1 end
  return s
end

-- Lock._lock_renewer: stop.wait(interval), then extend(expire); an exception ends the thread.
local function renewer(id, expire, interval_us)
  while true do
    lockstep.sleep(interval_us)
    -- Labelled "extend", not "renew": lockstep's renew convention reads 1 as "still held", and
    -- this script answers 0 for that (README.md, "What the program declares").
    local reply = lockstep.evalsha(0, "extend", {key, signal}, {id, expire}, {label = "extend"})
    if reply ~= 0 then return end  -- NotAcquired (1), NotExpirable (2), an error, TimeoutError
  end
end

function lock.acquire(op)
  -- Lock(redis, name, expire=..., auto_renewal=...): a new Lock, a new random id.
  local id = lockstep.random_hex(18)
  lockstep.holder_value(id)
  local expire = expire_seconds(op)
  local auto_renewal = op.lease_us <= 0

  -- if self._held: raise AlreadyAcquired. _held is one GET.
  local owner = lockstep.call(0, {"GET", key}, {label = "get"})
  if owner == nil then return "fail", timeout_error("GET", socket_timeout_us) end
  if is_error(owner) then return "fail", "ResponseError: " .. owner.err end
  if owner == id then return "fail", "AlreadyAcquired: Already acquired from this Lock instance." end

  local blocking = op.mode ~= "try-no-wait"
  local timeout = nil  -- acquire(timeout=None)
  if op.mode == "try" then
    -- `if timeout: timeout = int(timeout)`: whole seconds; a wait under 1 s truncates to 0,
    -- which the library then treats as no timeout at all (it waits as long as it takes).
    timeout = op.wait_us // 1000000
    if timeout == 0 then timeout = nil end
  end
  if timeout ~= nil and not auto_renewal and timeout > expire then
    return "fail", "TimeoutTooLarge: Timeout (" .. timeout .. ") cannot be greater than expire (" ..
        expire .. ")"
  end

  local blpop_timeout = timeout or expire  -- `timeout or self._expire or 0`; expire is never None here
  local timed_out = false
  while true do
    local reply = lockstep.call(0, {"SET", key, id, "NX", "EX", expire}, {label = "acquire"})
    if reply == nil then return "unknown", timeout_error("SET NX", socket_timeout_us) end
    if is_error(reply) then return "fail", "ResponseError: " .. reply.err end
    if type(reply) == "table" and reply.ok ~= nil then
      local current = {id = id}
      if auto_renewal then
        current.renewer = lockstep.spawn(renewer, id, expire, expire * 2000000 // 3)
      end
      locks[op.thread] = current
      return "ok", "acquired"
    end
    if timed_out then return "fail", "acquire() returned False: timeout elapsed" end
    if not blocking then return "fail", "acquire(blocking=False) returned False" end
    -- redis-py has no client-side timeout of its own around BLPOP (socket_timeout=None by
    -- default): the model waits for the server's timeout plus [protocol] timeout_ms, so that a
    -- reply lost on the way still ends the wait.
    local wait_us = blpop_timeout * 1000000 + socket_timeout_us
    local popped = lockstep.call(0, {"BLPOP", signal, blpop_timeout},
                                 {label = "blpop", timeout_us = wait_us})
    if popped == nil then return "fail", timeout_error("BLPOP", wait_us) end
    if is_error(popped) then return "fail", "ResponseError: " .. popped.err end
    local signalled = type(popped) == "table" and popped[1] ~= nil
    -- timed_out = not blpop(...) and timeout
    timed_out = not signalled and timeout ~= nil
  end
end

function lock.release(op)
  local current = locks[op.thread]
  locks[op.thread] = nil
  -- release() has no local check: a thread that holds nothing still runs the script with its
  -- Lock's id (and gets NotAcquired); a Lock never acquired has an id nobody wrote.
  local id = lockstep.random_hex(18)
  if current ~= nil then
    id = current.id
    -- _stop_lock_renewer: the library also join()s the thread, waiting for an extend in flight;
    -- lockstep's cancel stops the task where it waits (its extend may still run, before the
    -- unlock on the same connection).
    if current.renewer ~= nil then lockstep.cancel(current.renewer) end
  end
  local reply = lockstep.evalsha(0, "unlock", {key, signal}, {id, SIGNAL_EXPIRE_MS},
                                 {label = "unlock"})
  if reply == nil then return "unknown", timeout_error("the unlock script", socket_timeout_us) end
  if is_error(reply) then return "fail", "ResponseError: " .. reply.err end
  -- The script answered 0; the operation's value is lockstep's "released" (1), as the other
  -- models return it.
  if reply == 0 then return "ok", "released", 1 end
  if reply == 1 then
    return "fail", "NotAcquired: Lock(" .. key .. ") is not acquired or it already expired."
  end
  return "fail", "RuntimeError: Unsupported error code " .. tostring(reply) .. " from EXTEND script."
end

-- Lock(redis, name).reset(): deletes the key whoever holds it, and signals one waiter.
function lock.force_unlock(op)
  local reply = lockstep.evalsha(0, "reset", {key, signal}, {op.token, SIGNAL_EXPIRE_MS},
                                 {label = "force_unlock"})
  if reply == nil then return "unknown", timeout_error("the reset script", socket_timeout_us) end
  if is_error(reply) then return "fail", "ResponseError: " .. reply.err end
  return "ok", "reset", reply
end

return lock
