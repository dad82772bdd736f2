-- Spring Integration's RedisLockRegistry (6.5.x, RedisLockType.SPIN_LOCK, the default), as a
-- lockstep client program. README.md in this folder says what is modelled and what is not.
--
-- One registry per client process: its clientId (a UUID, lockstep.config.uuid here) is the value
-- every thread of the process writes, so Redis cannot tell the process's threads apart; they are
-- kept apart by the RedisLock's local ReentrantLock, modelled below as program-level state that
-- a thread must hold before it touches Redis.
--
--   lock():        localLock.lock() (wait as long as it takes); then obtain_lock.lua by EVALSHA
--                  until it answers true, sleeping idleBetweenTries (100 ms) in between.
--   tryLock(t):    localLock.tryLock(t); then obtain_lock.lua until true, or until the WALL clock
--                  (System.currentTimeMillis) reaches start + t: the full t again, not what is
--                  left of it. Not acquired: the local lock is released.
--   tryLock():     tryLock(0): the local lock if free, one obtain.
--   on success:    holdCount++; with a renewal scheduler, schedule renew.lua every
--                  expireAfter / 3, the first at once (every successful obtain does, re-entries
--                  included: the previous renewal is not cancelled).
--   unlock():      not the local lock's owner -> IllegalStateException; holdCount > 1 -> one hold
--                  less, nothing sent; else unlink_unlock.lua (after any failure of it, for good:
--                  delete_unlock.lua): true -> the renewal stops; false ->
--                  ConcurrentModificationException. The local lock is released either way.
--
-- lockstep's workload gives: op.lease_us -> RedisLockRegistry(..., expireAfter = lease), no
-- renewal scheduler; no lease -> expireAfter = the watchdog timeout and setRenewalTaskScheduler
-- (README.md). op.mode "lock" -> lock(); "try" -> tryLock(wait, MILLISECONDS); "try-no-wait" ->
-- tryLock().

local IDLE_BETWEEN_TRIES_US = 100000  -- setIdleBetweenTries default, 100 ms
local LOCAL_POLL_US = 1000            -- how often a thread waiting for the local lock looks again

local key = lockstep.config.lock_name  -- registryKey .. ":" .. lockKey: write both into lock_name
local client_id = lockstep.config.uuid -- RedisLockRegistry.clientId

local lock = {
  layout = "string-token",              -- the key holds the registry's clientId
  unlock_reply = "compare-and-delete",  -- the unlock scripts answer 1 (removed) or nil (not ours)
  -- The value names the process, not the thread (no ":<thread>"); the threads of a process are
  -- told apart by the local lock.
  owner = "process",
}

-- The process's RedisLock for this key: its local ReentrantLock and the fields Spring keeps.
local local_owner = nil     -- the thread holding localLock, or nil
local local_holds = 0       -- localLock.getHoldCount()
local hold_count = 0        -- RedisLock.holdCount
local renew_future = nil    -- RedisLock.renewFuture: {task = n} of the latest renewal scheduled
local unlink_available = true  -- RedisLockRegistry.unlinkAvailable

local function command_timeout()
  return "QueryTimeoutException: Redis command timed out after " ..
      lockstep.config.timeout_us // 1000 .. " ms"
end

local function is_error(reply)
  return type(reply) == "table" and reply.err ~= nil
end

local function expire_after_ms(op)
  if op.lease_us > 0 then return op.lease_us // 1000 end
  return lockstep.config.watchdog_timeout_us // 1000
end

-- ReentrantLock.tryLock(wait) (wait_us nil: lock(), as long as it takes). The JVM hands a freed
-- lock to a parked waiter within microseconds; the model's waiter looks every LOCAL_POLL_US.
local function local_lock(thread, wait_us)
  if local_owner == thread then
    local_holds = local_holds + 1
    return true
  end
  local deadline = nil
  if wait_us ~= nil then deadline = lockstep.now_us() + wait_us end
  while local_owner ~= nil do
    local now = lockstep.now_us()
    if deadline ~= nil and now >= deadline then return false end
    local step = LOCAL_POLL_US
    if deadline ~= nil and deadline - now < step then step = deadline - now end
    lockstep.sleep(step)
  end
  local_owner = thread
  local_holds = 1
  return true
end

local function local_unlock()
  local_holds = local_holds - 1
  if local_holds == 0 then local_owner = nil end
end

-- stopRenew(): cancels the latest renewal scheduled. Returns true when that renewal is `me`
-- (the caller is the renewal task itself, which then ends instead of cancelling itself).
local function stop_renew(me)
  local future = renew_future
  renew_future = nil
  if future == nil then return false end
  if future == me then return true end
  lockstep.cancel(future.task)
  return false
end

-- One scheduled renewal (scheduleWithFixedDelay(this::renew, expireAfter / 3)): renew at once,
-- then expireAfter / 3 after each run. false stops the RedisLock's LATEST renewal (renewFuture),
-- which is this one unless a later acquisition replaced it: then this one runs on, leaked. An
-- exception (no reply) is logged and suppressed by the scheduler: the next run comes anyway.
local function renewal(me, expire_ms)
  while true do
    local reply = lockstep.evalsha(0, "renew", {key}, {client_id, expire_ms}, {label = "renew"})
    if reply ~= nil and not is_error(reply) and reply ~= 1 then
      if stop_renew(me) then return end
    end
    lockstep.sleep(expire_ms * 1000 // 3)
  end
end

-- obtainLock(): true, false, or nil and the exception.
local function obtain_lock(expire_ms)
  local reply = lockstep.evalsha(0, "obtain_lock", {key}, {client_id, expire_ms},
                                 {label = "acquire"})
  if reply == nil then return nil, command_timeout() end
  if is_error(reply) then return nil, "RedisSystemException: " .. reply.err end
  return reply == 1
end

-- RedisSpinLock.tryRedisLockInner(time) then tryRedisLock's bookkeeping. time_ms -1: forever.
local function try_redis_lock(time_ms, expire_ms, renewing)
  local deadline = lockstep.wall_ms() + time_ms  -- System.currentTimeMillis(): the WALL clock
  while true do
    local acquired, problem = obtain_lock(expire_ms)
    if problem then return nil, problem end
    if acquired then break end
    if time_ms ~= -1 and lockstep.wall_ms() >= deadline then return false end
    lockstep.sleep(IDLE_BETWEEN_TRIES_US)
  end
  if renewing then
    -- renewFuture = scheduler.scheduleWithFixedDelay(...): the previous one is not cancelled.
    local future = {}
    future.task = lockstep.spawn(renewal, future, expire_ms)
    renew_future = future
  end
  return true
end

local function cannot_acquire(problem)
  local detail = "CannotAcquireLockException: Failed to lock mutex at " .. key .. " (" .. problem .. ")"
  if problem == command_timeout() then return "unknown", detail end  -- the obtain may have run
  return "fail", detail
end

function lock.acquire(op)
  local expire_ms = expire_after_ms(op)
  local renewing = op.lease_us <= 0
  if op.mode == "lock" then
    local_lock(op.thread, nil)
    local acquired, problem = try_redis_lock(-1, expire_ms, renewing)
    if problem then
      local_unlock()
      return cannot_acquire(problem)
    end
    hold_count = hold_count + 1
    return "ok", "acquired"
  end
  local time_ms = 0  -- tryLock(): tryLock(0, MILLISECONDS)
  if op.mode == "try" then time_ms = op.wait_us // 1000 end
  if not local_lock(op.thread, time_ms * 1000) then
    return "fail", "tryLock returned false: another thread of this process holds the local lock"
  end
  local acquired, problem = try_redis_lock(time_ms, expire_ms, renewing)
  if problem then
    local_unlock()
    return cannot_acquire(problem)
  end
  if not acquired then
    local_unlock()
    return "fail", "tryLock returned false: the wait time elapsed"
  end
  hold_count = hold_count + 1
  return "ok", "acquired"
end

local CONCURRENT_MODIFICATION = "ConcurrentModificationException: Lock was released in the store " ..
    "due to expiration. The integrity of data protected by this lock may have been compromised."

-- removeLockKey(): the UNLINK script while it has never failed, else the DEL script.
local function remove_lock_key()
  if unlink_available then
    local reply = lockstep.evalsha(0, "unlink_unlock", {key}, {client_id}, {label = "unlock"})
    if reply == nil or is_error(reply) then
      -- Any exception, a timeout included, is taken for "UNLINK not supported": DEL from now on,
      -- starting with this unlock.
      unlink_available = false
    elseif reply == 1 then
      stop_renew(nil)
      return "ok", "released", 1
    else
      return "fail", CONCURRENT_MODIFICATION
    end
  end
  local reply = lockstep.evalsha(0, "delete_unlock", {key}, {client_id}, {label = "unlock"})
  if reply == nil then return "unknown", command_timeout() end
  if is_error(reply) then return "fail", "RedisSystemException: " .. reply.err end
  if reply == 1 then
    stop_renew(nil)
    return "ok", "released", 1
  end
  return "fail", CONCURRENT_MODIFICATION
end

function lock.release(op)
  if local_owner ~= op.thread then
    return "fail", "IllegalStateException: You do not own lock at " .. key
  end
  if hold_count > 1 then
    hold_count = hold_count - 1
    local_unlock()
    return "ok", "one hold released, " .. hold_count .. " left"
  end
  -- 6.5.6 and later: the removal runs on the registry's executor and unlock() waits for it.
  local outcome, detail, value = remove_lock_key()
  hold_count = hold_count - 1
  local_unlock()  -- finally: even when the store said the lock was gone, or did not answer
  return outcome, detail, value
end

return lock
