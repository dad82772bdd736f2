-- redis-py's Lock (redis.lock.Lock, redis-py 5.0), as a lockstep client program. README.md in
-- this folder says what is modelled and what is not.
--
--   acquire:  SET <name> <token> NX [PX <timeout>] until it succeeds; between attempts sleep
--             `sleep` (0.1 s). blocking=False: one attempt. blocking_timeout: before each sleep,
--             if the next attempt would come after the deadline, give up (the last sleep is not
--             cut short, so the last attempt can come up to `sleep` before the deadline).
--   release:  release.lua by EVALSHA (EVAL if the server has not got it): 1 released, 0 raises
--             LockNotOwnedError.
--
-- lockstep's workload gives: op.lease_us -> Lock(timeout=...); op.mode "lock" -> acquire()
-- (blocking, no blocking_timeout); "try" -> acquire(blocking_timeout=wait); "try-no-wait" ->
-- acquire(blocking=False). Without a lease the key gets the watchdog timeout as its PX, where
-- redis-py's timeout=None sets none: lockstep's checkers take a lock without a lease to expire
-- after that timeout (README.md, "Not modelled").

local SLEEP_US = 100000  -- Lock(sleep=0.1)

local name = lockstep.config.lock_name
local socket_timeout_ms = lockstep.config.timeout_us // 1000

local lock = {
  layout = "string-token",              -- the key's value is the holder's token
  unlock_reply = "compare-and-delete",  -- release.lua answers 1 (deleted) or 0 (not the caller's)
}

local tokens = {}  -- Each thread's current token (Lock.local.token).

local function timeout_error(what)
  return "unknown", "TimeoutError: no reply to " .. what .. " within " .. socket_timeout_ms .. " ms"
end

-- One SET NX: true (acquired), false (held by another), or nil, reason.
local function do_acquire(op, token)
  local timeout_ms = lockstep.config.watchdog_timeout_us // 1000
  if op.lease_us > 0 then timeout_ms = op.lease_us // 1000 end  -- int(timeout * 1000)
  local argv = {"SET", name, token, "NX", "PX", timeout_ms}
  local reply = lockstep.call(0, argv, {label = "acquire"})
  if reply == nil then return nil, "timeout" end
  if type(reply) == "table" and reply.err then return nil, reply.err end
  return type(reply) == "table" and reply.ok ~= nil
end

function lock.acquire(op)
  -- redis-py writes uuid1().hex, fresh for every acquire(): 32 hex digits, from the process's
  -- PRNG here, announced so that the history knows whose it is.
  local token = lockstep.random_hex(16)
  lockstep.holder_value(token)
  local stop_trying_at = nil
  if op.mode == "try" then stop_trying_at = lockstep.now_us() + op.wait_us end
  while true do
    local acquired, problem = do_acquire(op, token)
    if problem == "timeout" then return timeout_error("SET NX") end
    if problem then return "fail", "ResponseError: " .. problem end
    if acquired then
      tokens[op.thread] = token
      return "ok", "acquired"
    end
    if op.mode == "try-no-wait" then return "fail", "not acquired (blocking=False)" end
    local next_try_at = lockstep.now_us() + SLEEP_US
    if stop_trying_at ~= nil and next_try_at > stop_trying_at then
      return "fail", "not acquired within blocking_timeout"
    end
    lockstep.sleep(SLEEP_US)
  end
end

function lock.release(op)
  local token = tokens[op.thread]
  tokens[op.thread] = nil
  if token == nil then return "fail", "LockError: Cannot release an unlocked lock" end
  local reply = lockstep.evalsha(0, "release", {name}, {token}, {label = "unlock"})
  if reply == nil then return timeout_error("the release script") end
  if type(reply) == "table" and reply.err then return "fail", "ResponseError: " .. reply.err end
  if reply == 1 then return "ok", "released", 1 end
  return "fail", "LockNotOwnedError: Cannot release a lock that's no longer owned"
end

return lock
