-- The setnx-px lock as a client program: the same commands, labels, retries and outcomes as the
-- built-in setnx-px client (locks/plainlock/), so that a scenario run with either writes the
-- same history (a test compares them byte for byte).
--
-- The lock is one string key, the lock name, holding its holder's token "<uuid>:<thread + 1>".
--   acquire: SET <key> <token> NX PX <ttl>; on a nil reply sleep 100 ms and try again, the last
--            sleep cut short so that the last attempt is made when the wait ends.
--   release: the compare-and-delete script (unlock_compare_and_delete.lua, beside this file).
--   force_unlock: DEL <key>.
-- The TTL is the lease, or the watchdog timeout when no lease is given; no command is resent,
-- and a command unanswered within the response timeout ends the operation as unknown.

local RETRY_SLEEP_US = 100000

local key = lockstep.config.lock_name
local timeout_ms = lockstep.config.timeout_us // 1000

local function timed_out(label)
  return "unknown", "timeout: no reply to " .. label .. " within " .. timeout_ms .. " ms"
end

local function ttl_ms(op)
  local ttl
  if op.lease_us > 0 then ttl = op.lease_us // 1000 else ttl = lockstep.config.watchdog_timeout_us // 1000 end
  if ttl < 1 then return 1 end  -- PX 0 is an error.
  return ttl
end

local lock = {
  layout = "string-token",              -- the key's value is the holder's op.token
  unlock_reply = "compare-and-delete",  -- unlock answers 1 (deleted) or 0 (not the caller's)
}

function lock.acquire(op)
  local start = lockstep.now_us()
  while true do
    local reply = lockstep.call(0, {"SET", key, op.token, "NX", "PX", ttl_ms(op)}, {label = "acquire"})
    if reply == nil then return timed_out("acquire") end
    if type(reply) == "table" and reply.err then return "fail", reply.err end
    if type(reply) == "table" and reply.ok then return "ok", "acquired" end
    -- A nil reply: NX found the key.
    local sleep = RETRY_SLEEP_US
    if op.mode == "try-no-wait" then
      return "fail", "not acquired: held by another"
    elseif op.mode == "try" then
      local left = op.wait_us - (lockstep.now_us() - start)
      if left <= 0 then return "fail", "wait time elapsed" end
      if left < sleep then sleep = left end
    end
    lockstep.sleep(sleep)
  end
end

function lock.release(op)
  local reply = lockstep.eval(0, "unlock_compare_and_delete", {key}, {op.token}, {label = "unlock"})
  if reply == nil then return timed_out("unlock") end
  if type(reply) == "table" and reply.err then return "fail", reply.err end
  if reply == 1 then return "ok", "released", 1 end
  local shown
  if reply == false then shown = "(nil)" elseif type(reply) == "string" then shown = '"' .. reply .. '"' else shown = tostring(reply) end
  return "fail", "not released: the key is missing or holds another token (" .. shown .. ")"
end

function lock.force_unlock(op)
  local reply = lockstep.call(0, {"DEL", key}, {label = "force_unlock"})
  if reply == nil then return timed_out("force_unlock") end
  if type(reply) == "table" and reply.err then return "fail", reply.err end
  local deleted = 0
  if math.type(reply) == "integer" then deleted = reply end
  if deleted == 1 then return "ok", "deleted", deleted end
  return "ok", "no key", deleted
end

return lock
