-- The get-del lock (broken) as a client program: the same commands, labels, retries and
-- outcomes as the built-in get-del client (locks/plainlock/), so that a scenario run with
-- either writes the same history (a test compares them).
--
--   acquire: SET <key> <token> NX PX <ttl>, as setnx-px.
--   release: GET <key> and, if it returned the caller's token, a separate DEL <key>. If the key
--            expires and another client takes it between the GET and the DEL, the DEL deletes
--            the other client's lock.
--   force_unlock: DEL <key>.

local RETRY_SLEEP_US = 100000

local key = lockstep.config.lock_name
local timeout_ms = lockstep.config.timeout_us // 1000

local lock = {
  layout = "string-token",
  -- Its unlock is no script: no command is labelled "unlock", so there is nothing to judge.
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
    local reply = lockstep.call(0, {"SET", key, op.token, "NX", "PX", ttl_ms(op)}, {label = "acquire"})
    if reply == nil then return timed_out("acquire") end
    if type(reply) == "table" and reply.err then return "fail", reply.err end
    if type(reply) == "table" and reply.ok then return "ok", "acquired" end
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
  local reply = lockstep.call(0, {"GET", key}, {label = "get"})
  if reply == nil then return timed_out("get") end
  if type(reply) == "table" and reply.err then return "fail", reply.err end
  if reply ~= op.token then return "fail", "not released: GET returned " .. quoted(reply) end
  -- The window: the key may expire and be taken by another client before DEL runs.
  local deleted = lockstep.call(0, {"DEL", key}, {label = "del"})
  if deleted == nil then return timed_out("del") end
  if type(deleted) == "table" and deleted.err then return "fail", deleted.err end
  -- The code this models reports success either way; DEL 0 carries no value.
  if deleted == 1 then return "ok", "released", 1 end
  return "ok", "released (DEL found no key)"
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
