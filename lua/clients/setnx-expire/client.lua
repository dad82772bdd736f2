-- The setnx-expire lock (broken) as a client program: the same commands, labels, retries and
-- outcomes as the built-in setnx-expire client (locks/plainlock/), so that a scenario run with
-- either writes the same history (a test compares them).
--
--   acquire: SETNX <key> <token>; once it answered 1, a separate EXPIRE <key> <ttl in whole
--            seconds, rounded up>. A process that dies between the two leaves a key with no
--            TTL. On 0, sleep 100 ms and try again (the last sleep cut short to the wait).
--   release: the compare-and-delete script; force_unlock: DEL <key>.

local RETRY_SLEEP_US = 100000

local key = lockstep.config.lock_name
local timeout_ms = lockstep.config.timeout_us // 1000

local lock = {
  layout = "string-token",
  unlock_reply = "compare-and-delete",
}

local function timed_out(label)
  return "unknown", "timeout: no reply to " .. label .. " within " .. timeout_ms .. " ms"
end

local function ttl_ms(op)
  local ttl
  if op.lease_us > 0 then ttl = op.lease_us // 1000 else ttl = lockstep.config.watchdog_timeout_us // 1000 end
  if ttl < 1 then return 1 end
  return ttl
end

-- A reply as lockstep's messages quote it.
local function quoted(reply)
  if reply == false then return "(nil)" end
  if type(reply) == "string" then return '"' .. reply .. '"' end
  if type(reply) == "table" and reply.ok then return "+" .. reply.ok end
  if type(reply) == "table" and reply.err then return "-" .. reply.err end
  return tostring(reply)
end

function lock.acquire(op)
  local start = lockstep.now_us()
  while true do
    local reply = lockstep.call(0, {"SETNX", key, op.token}, {label = "setnx"})
    if reply == nil then return timed_out("setnx") end
    if type(reply) == "table" and reply.err then return "fail", reply.err end
    if reply == 1 then
      -- The window: the key exists with no TTL until this EXPIRE executes.
      local ttl_s = (ttl_ms(op) + 999) // 1000
      local expired = lockstep.call(0, {"EXPIRE", key, ttl_s}, {label = "expire"})
      if expired == nil then return timed_out("expire") end
      if type(expired) == "table" and expired.err then return "unknown", "expire: " .. expired.err end
      -- The code this models ignores EXPIRE's answer (0 would mean the key vanished).
      if expired == 1 then return "ok", "acquired" end
      return "ok", "acquired (EXPIRE found no key: " .. quoted(expired) .. ")"
    end
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
  return "fail", "not released: the key is missing or holds another token (" .. quoted(reply) .. ")"
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
