// The Redisson lock client machine, sans IO, shared by RLock and FairLock (see the header for its
// layers). Every entry point ends with Flush(), which calls Outbox::Complete for the operations
// that ended during the call, after all state is updated: a driver that starts the next
// operation from inside Complete() then finds the protocol in a consistent state.
#include "locks/redisson_common.h"

#include <cassert>
#include <deque>
#include <iterator>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "locks/redisson_executor.h"

namespace lockstep::locks {

std::string PrefixName(const std::string& prefix, const std::string& name) {
  if (name.find('{') != std::string::npos) return prefix + ":" + name;
  return prefix + ":{" + name + "}";
}

std::string RLockChannel(const std::string& lock_name) {
  return PrefixName("redisson_lock__channel", lock_name);
}

std::string RLockUnlockLatch(const std::string& lock_name, const std::string& request_id) {
  return PrefixName("redisson_unlock_latch", lock_name) + ":" + request_id;
}

std::string RLockField(const std::string& uuid, int thread) {
  return uuid + ":" + std::to_string(thread + 1);
}

std::string ResponseTimeoutDetail(const ClientConfig& config, int attempt, bool retry,
                                  const std::string& label) {
  return "RedisTimeoutException: Redis server response timeout (" +
         std::to_string(config.timeout_us / 1000) + " ms) occurred after " +
         std::to_string(attempt) + " of " + std::to_string(config.retry_attempts) +
         " retry attempts, is non-idempotent command: " + (retry ? "false" : "true") +
         ". Command: " + label;
}

Argv EvalArgv(const ScriptSet& scripts, const std::string& name, std::vector<std::string> keys,
              std::vector<std::string> args) {
  const auto body = scripts.bodies.find(name);
  assert(body != scripts.bodies.end());
  Argv argv;
  argv.reserve(3 + keys.size() + args.size());
  argv.emplace_back("EVAL");
  argv.push_back(body->second);
  argv.push_back(std::to_string(keys.size()));
  argv.insert(argv.end(), std::make_move_iterator(keys.begin()),
              std::make_move_iterator(keys.end()));
  argv.insert(argv.end(), std::make_move_iterator(args.begin()),
              std::make_move_iterator(args.end()));
  return argv;
}

int64_t RedissonLatchTtlMs(const ClientConfig& config) {
  // RedissonBaseLock.unlockInnerAsync: (timeout + retryInterval) * retryAttempts, at least 1.
  const int64_t ttl_ms =
      (config.timeout_us / 1000 + config.retry_interval_us / 1000) * config.retry_attempts;
  return ttl_ms < 1 ? 1 : ttl_ms;
}

bool CheckRedissonConfig(const std::string& kind, const ClientConfig& config,
                         std::string* error) {
  if (config.threads < 1 || config.threads > kRedissonThreadsMax) {
    *error = kind + ": threads must be 1.." + std::to_string(kRedissonThreadsMax) + ", not " +
             std::to_string(config.threads);
    return false;
  }
  if (config.timeout_us < 1000 || config.watchdog_timeout_us < 3000 ||
      config.retry_attempts < 0 || config.retry_interval_us < 0) {
    *error = kind +
             ": need timeout >= 1 ms, watchdog timeout >= 3 ms, retry attempts >= 0 and "
             "retry interval >= 0";
    return false;
  }
  return true;
}

void RenewalEntry::Add(int thread) {
  for (auto& [held_by, count] : threads) {
    if (held_by == thread) {
      count += 1;
      return;
    }
  }
  threads.emplace_back(thread, 1);
}

bool RenewalEntry::Remove(int thread) {
  for (auto it = threads.begin(); it != threads.end(); ++it) {
    if (it->first != thread) continue;
    it->second -= 1;
    if (it->second == 0) threads.erase(it);
    break;
  }
  return threads.empty();
}

bool RenewCancels(const Reply* reply) {
  if (reply == nullptr || reply->type != Reply::Type::kArray || reply->elements.empty()) {
    return false;
  }
  const Reply& result = reply->elements.front();
  return !(result.type == Reply::Type::kInteger && result.integer == 1);
}

RedissonLockKind::RedissonLockKind(const ClientConfig& config, const ScriptSet& scripts)
    : config_(config),
      scripts_(scripts),
      version_(config.version) {}

std::optional<Argv> RedissonLockKind::AcquireFailed(Outbox& out, int thread,
                                                    const AcquireArgs& args) {
  (void)out;
  (void)thread;
  (void)args;
  return std::nullopt;
}

const std::string& RedissonLockKind::Field(int thread) const {
  assert(thread >= 0 && thread < config_.threads);
  if (fields_.empty()) fields_.resize(static_cast<size_t>(config_.threads));
  std::string& field = fields_[static_cast<size_t>(thread)];
  if (field.empty()) field = RLockField(config_.uuid, thread);
  return field;
}

Argv RedissonLockKind::Renew(int thread, int64_t lease_ms) const {
  return Eval("renew", {config_.lock_name}, {std::to_string(lease_ms), Field(thread)});
}

namespace {

constexpr int64_t kWaitForever = -1;
using Version = RedissonVersion;

class RedissonLockClient final : public LockProtocol {
 public:
  explicit RedissonLockClient(std::unique_ptr<RedissonLockKind> kind)
      : kind_(std::move(kind)),
        config_(kind_->config()),
        version_(kind_->version()),
        watchdog_ms_(config_.watchdog_timeout_us / 1000),
        threads_(static_cast<size_t>(config_.threads)) {
    assert(config_.threads >= 1 && config_.threads <= kRedissonThreadsMax);
    internal_lease_ms_ = watchdog_ms_;
  }

  void Acquire(Outbox& out, int thread, const AcquireArgs& args) override {
    Thread& t = At(thread);
    assert(t.phase == Phase::kIdle && "one operation at a time per thread");
    t = Thread{};
    t.args = args;
    t.remaining_us = ToMillis(args.wait_us) * 1000;  // time = unit.toMillis(waitTime).
    t.mark_us = out.MonoUs();
    SendAttempt(out, thread);
    Flush(out);
  }

  void Release(Outbox& out, int thread) override {
    Thread& t = At(thread);
    assert(t.phase == Phase::kIdle && "one operation at a time per thread");
    t = Thread{};
    t.phase = Phase::kReleasing;
    if (version_ == Version::kCurrent) {
      // One requestId per unlock() call. The counter survives OnCrash: a restarted process
      // reusing an id would find its predecessor's latch (13.5 s TTL) and skip the unlock.
      const std::string request_id = config_.uuid + "-" + std::to_string(++unlock_requests_);
      t.latch = RLockUnlockLatch(config_.lock_name, request_id);
    }
    Argv argv = kind_->Unlock(out, thread, internal_lease_ms_, t.latch);
    t.command = executor_.Start(out, CommandKind::kUnlock, thread, std::move(argv), "unlock",
                                /*retry=*/version_ == Version::k3136);
    Flush(out);
  }

  void ForceUnlock(Outbox& out, int thread) override {
    Thread& t = At(thread);
    assert(t.phase == Phase::kIdle && "one operation at a time per thread");
    t = Thread{};
    t.phase = Phase::kForceUnlocking;
    // forceUnlockAsync drops the whole renewal entry first (cancelExpirationRenewal(null)).
    DropRenewal(out);
    t.command = executor_.Start(out, CommandKind::kForceUnlock, thread, kind_->ForceUnlock(out),
                                "force_unlock", /*retry=*/true);
    Flush(out);
  }

  void OnReply(Outbox& out, RequestId request, const Reply& reply) override {
    // Nothing for a timed-out attempt, or a reply from before a crash.
    std::optional<Executor::Ended> ended = executor_.TakeReply(out, request);
    if (!ended) return;
    Finish(out, ended->id, ended->command, &reply, "");
    Flush(out);
  }

  void OnMessage(Outbox& out, int node, const std::string& channel,
                 const std::string& payload) override {
    (void)node;  // One lock, one channel: a message from any node wakes the same waiters.
    auto entry = subscriptions_.find(channel);
    if (entry == subscriptions_.end()) return;
    // LockPubSub.onMessage: UNLOCK_MESSAGE releases one permit, READ_UNLOCK_MESSAGE one per
    // thread waiting right now. A permit nobody waits for stays for the next tryAcquire.
    if (payload == kUnlockMessage) {
      entry->second.permits += 1;
    } else if (payload == kReadUnlockMessage) {
      entry->second.permits += static_cast<int64_t>(entry->second.waiters.size());
    } else {
      return;
    }
    // A woken thread may end its operation and drop the entry: look it up again each time.
    for (entry = subscriptions_.find(channel); entry != subscriptions_.end();
         entry = subscriptions_.find(channel)) {
      Subscription& s = entry->second;
      if (s.permits <= 0 || s.waiters.empty()) break;
      const int thread = s.waiters.front();
      s.waiters.pop_front();
      s.permits -= 1;
      Thread& t = threads_[thread];
      assert(t.phase == Phase::kWaitingPermit);
      timers_.Disarm(out, &t.timer);
      AfterPermitWait(out, thread);
    }
    Flush(out);
  }

  void OnTimer(Outbox& out, TimerId timer) override {
    const auto expired = [&](const Executor::Ended& e, const std::string& detail) {
      Finish(out, e.id, e.command, nullptr, detail);
    };
    if (executor_.OnTimer(out, timer, expired)) {
      Flush(out);
      return;
    }
    const std::optional<Timers::Ref> ref = timers_.Take(timer);
    if (!ref) return;  // Cancelled, or from before a crash.
    switch (ref->kind) {
      case TimerKind::kSubscribeWait:
        OnSubscribeWaitOver(out, static_cast<int>(ref->ref));
        break;
      case TimerKind::kPermitWait:
        OnPermitWaitOver(out, static_cast<int>(ref->ref));
        break;
      case TimerKind::kWatchdog:
        OnWatchdogTick(out, timer);
        break;
    }
    Flush(out);
  }

  void OnCrash() override {
    // Everything in memory dies with the JVM; only the unlock request counter is kept, as a
    // stand-in for Redisson's random request ids (see Release).
    const uint64_t unlock_requests = unlock_requests_;
    const int threads = config_.threads;
    executor_.Clear();
    timers_.Clear();
    threads_.assign(static_cast<size_t>(threads), Thread{});
    subscriptions_.clear();
    renewal_.reset();
    task_running_ = false;
    internal_lease_ms_ = watchdog_ms_;
    completions_.clear();
    unlock_requests_ = unlock_requests;
  }

 private:
  // ---- Command layer ------------------------------------------------------------------------

  enum class CommandKind : uint8_t {
    kAcquire,
    kUnlock,
    kForceUnlock,
    kRenew,
    kSubscribe,
    kDelLatch,
    kAcquireFailed,
  };
  using Executor = RedissonExecutor<CommandKind>;


  enum class TimerKind : uint8_t {
    kSubscribeWait,  // ref: thread.
    kPermitWait,     // ref: thread.
    kWatchdog,       // ref unused.
  };
  using Timers = TimerTable<TimerKind>;


  // ---- Threads ------------------------------------------------------------------------------

  enum class Phase : uint8_t {
    kIdle,
    kAttempting,      // The acquire script is in flight.
    kSubscribing,     // Waiting for the thread's subscription entry to be confirmed.
    kWaitingPermit,   // latch.tryAcquire(...) / latch.acquire().
    kAcquireFailing,  // tryLock gave up; acquireFailed's script is in flight.
    kReleasing,
    kForceUnlocking,
  };

  struct Thread {
    Phase phase = Phase::kIdle;
    AcquireArgs args;
    int64_t lease_ms = 0;       // What the last acquire attempt sent as the lease.
    std::string attempt_label;  // And which script it ran.
    int64_t remaining_us = 0;   // tryLock's "time".
    int64_t mark_us = 0;        // tryLock's "current".
    bool subscribed = false;    // Holds a reference on the entry of `channel`.
    std::string channel;        // The channel it subscribed to.
    uint64_t command = 0;       // The operation's command in flight.
    TimerId timer = 0;          // Subscribe wait or permit wait.
    std::string latch;          // current: this unlock's latch key.
    OpResult pending;           // kAcquireFailing: the result once acquireFailed returns.
  };

  // ---- Subscription entries (one per channel) ----------------------------------------------

  struct Subscription {
    uint64_t command = 0;     // The SUBSCRIBE in flight; 0 once answered.
    bool confirmed = false;
    int refs = 0;             // Threads inside a lock()/tryLock() that subscribed.
    int64_t permits = 0;      // RedissonLockEntry's semaphore.
    std::deque<int> waiters;  // Threads blocked on the semaphore, first come first served.
  };

  Thread& At(int thread) {
    assert(thread >= 0 && thread < config_.threads);
    return threads_[static_cast<size_t>(thread)];
  }

  bool ExplicitLease(const AcquireArgs& args) const {
    // 3.13.6 tests leaseTime != -1, so a lease of 0 or less reaches the script (PEXPIRE with
    // it deletes the lock at once); 3.17.1 made it leaseTime > 0.
    return ApiValueGiven(version_ == Version::k3136, args.lease_us);
  }

  // A command ended: with a reply, or (reply == nullptr) with a timeout after its last attempt.
  void Finish(Outbox& out, uint64_t id, const Executor::Command& command, const Reply* reply,
              const std::string& timeout_detail) {
    switch (command.kind) {
      case CommandKind::kAcquire:
        assert(threads_[command.thread].command == id);
        OnAcquireDone(out, command.thread, reply, timeout_detail);
        break;
      case CommandKind::kUnlock:
        assert(threads_[command.thread].command == id);
        OnUnlockDone(out, command.thread, reply, timeout_detail);
        break;
      case CommandKind::kForceUnlock:
        assert(threads_[command.thread].command == id);
        OnForceUnlockDone(command.thread, reply, timeout_detail);
        break;
      case CommandKind::kRenew:
        OnRenewDone(out, command.thread, reply);
        break;
      case CommandKind::kSubscribe:
        OnSubscribeDone(out, id, command.argv->at(1), reply, timeout_detail);
        break;
      case CommandKind::kDelLatch:
        break;  // Fire and forget, as Redisson's writeAsync(DEL) is.
      case CommandKind::kAcquireFailed:
        assert(threads_[command.thread].command == id);
        OnAcquireFailedDone(out, command.thread, reply, timeout_detail);
        break;
    }
  }

  // ---- Operations ---------------------------------------------------------------------------

  void Complete(int thread, OpResult result) {
    completions_.emplace_back(thread, std::move(result));
  }

  void Flush(Outbox& out) {
    while (!completions_.empty()) {
      std::vector<std::pair<int, OpResult>> batch;
      batch.swap(completions_);
      for (const auto& [thread, result] : batch) out.Complete(thread, result);
    }
  }

  // One tryAcquire: the kind's acquire script with this thread's lease.
  void SendAttempt(Outbox& out, int thread) {
    Thread& t = threads_[thread];
    t.phase = Phase::kAttempting;
    if (ExplicitLease(t.args)) {
      t.lease_ms = ToMillis(t.args.lease_us);  // unit.toMillis(leaseTime).
    } else {
      // 3.13.6 sends lockWatchdogTimeout; current sends the shared internalLockLeaseTime,
      // which still holds an earlier explicit lease until a full unlock resets it.
      t.lease_ms = version_ == Version::k3136 ? watchdog_ms_ : internal_lease_ms_;
    }
    if (version_ == Version::k3136) {
      // tryLockInnerAsync overwrites the process-wide field right before sending (#3484): the
      // watchdog and unlock of every other thread now use this thread's lease.
      internal_lease_ms_ = t.lease_ms;
    }
    RedissonLockKind::Script script = kind_->Attempt(out, thread, t.args, t.lease_ms);
    t.attempt_label = script.label;
    t.command = executor_.Start(out, CommandKind::kAcquire, thread, std::move(script.argv),
                                std::move(script.label), /*retry=*/version_ == Version::k3136);
  }

  // tryLock's "time -= now - current; current = now". False when the budget is spent.
  bool Elapse(Outbox& out, Thread& t) {
    const int64_t now_us = out.MonoUs();
    t.remaining_us -= now_us - t.mark_us;
    t.mark_us = now_us;
    return t.remaining_us > 0;
  }

  // Ends an acquisition: gives back the subscription (Redisson's finally { unsubscribe }).
  void EndAcquire(Outbox& out, int thread, OpResult result) {
    Thread& t = threads_[thread];
    if (t.subscribed) ReleaseSubscription(out, t.channel);
    timers_.Disarm(out, &t.timer);
    t = Thread{};
    Complete(thread, std::move(result));
  }

  // tryLock returns false through acquireFailed(waitTime, unit, threadId): the kind's script
  // (if any) runs first and the operation ends with its reply.
  void GiveUp(Outbox& out, int thread, OpResult result) {
    Thread& t = threads_[thread];
    timers_.Disarm(out, &t.timer);
    std::optional<Argv> argv = kind_->AcquireFailed(out, thread, t.args);
    if (!argv) {
      EndAcquire(out, thread, std::move(result));
      return;
    }
    t.phase = Phase::kAcquireFailing;
    t.pending = std::move(result);
    t.command = executor_.Start(out, CommandKind::kAcquireFailed, thread, std::move(*argv),
                                "acquire_failed", /*retry=*/true);
  }

  void OnAcquireFailedDone(Outbox& out, int thread, const Reply* reply,
                           const std::string& timeout_detail) {
    Thread& t = threads_[thread];
    t.command = 0;
    OpResult result = std::move(t.pending);
    if (reply == nullptr || reply->is_error()) {
      // acquireFailed() threw: tryLock throws instead of returning false. Not acquired all
      // the same (unless the result was already unknown); the waiter may still be queued.
      const std::string why = reply != nullptr ? reply->str : timeout_detail;
      result.detail += "; acquire_failed: " + why;
    }
    EndAcquire(out, thread, std::move(result));
  }

  void OnAcquireDone(Outbox& out, int thread, const Reply* reply,
                     const std::string& timeout_detail) {
    Thread& t = threads_[thread];
    t.command = 0;
    if (reply == nullptr) {
      std::string detail = timeout_detail;
      if (version_ == Version::kCurrent && t.args.mode == AcquireArgs::Mode::kTryLock &&
          t.subscribed) {
        // 4.7.0 (#5019): a response timeout inside tryLock's loop runs acquireFailed and
        // returns false. The script may have run, so the outcome stays unknown here.
        detail += " (Redisson 4.7+ makes tryLock return false here; the script may have run)";
        GiveUp(out, thread, OpResult::Info(std::move(detail)));
        return;
      }
      EndAcquire(out, thread, OpResult::Info(std::move(detail)));
      return;
    }
    if (reply->is_error()) {
      EndAcquire(out, thread, OpResult::Fail(reply->str));
      return;
    }
    if (reply->type == Reply::Type::kNull) {
      OnAcquired(out, thread);
      EndAcquire(out, thread, OpResult::Ok("acquired"));
      return;
    }
    if (reply->type != Reply::Type::kInteger) {
      EndAcquire(out, thread,
                 OpResult::Fail("unexpected reply to " + t.attempt_label +
                      " (want nil or an integer): " + reply->Quoted()));
      return;
    }
    const int64_t ttl_ms = reply->integer;
    switch (t.args.mode) {
      case AcquireArgs::Mode::kTryLockNoWait:
        EndAcquire(out, thread, OpResult::Fail(kind_->NotAcquired(ttl_ms)));
        return;
      case AcquireArgs::Mode::kLock:
        if (!t.subscribed) {
          StartSubscribe(out, thread);
        } else {
          WaitForPermit(out, thread,
                        ttl_ms >= 0 && ttl_ms < INT64_MAX / 1000 ? ttl_ms * 1000 : kWaitForever);
        }
        return;
      case AcquireArgs::Mode::kTryLock:
        if (!Elapse(out, t)) {
          GiveUp(out, thread, OpResult::Fail("wait time elapsed"));
          return;
        }
        if (!t.subscribed) {
          StartSubscribe(out, thread);
        } else {
          // A script may answer any integer (a user's override): a TTL too large for
          // microseconds waits as long as the remaining time, as any longer TTL does.
          const bool short_ttl = ttl_ms >= 0 && ttl_ms < t.remaining_us / 1000;
          WaitForPermit(out, thread, short_ttl ? ttl_ms * 1000 : t.remaining_us);
        }
        return;
    }
  }

  // The acquisition succeeded (tryAcquireAsync's thenApply).
  void OnAcquired(Outbox& out, int thread) {
    Thread& t = threads_[thread];
    if (ExplicitLease(t.args)) {
      // current: a granted explicit lease becomes internalLockLeaseTime (3.13.6 set it before
      // sending already).
      if (version_ == Version::kCurrent) internal_lease_ms_ = t.lease_ms;
      return;
    }
    ScheduleRenewal(out, thread);
  }

  void StartSubscribe(Outbox& out, int thread) {
    Thread& t = threads_[thread];
    t.subscribed = true;
    t.channel = kind_->Channel(thread);
    auto entry = subscriptions_.find(t.channel);
    if (entry == subscriptions_.end()) {
      entry = subscriptions_.emplace(t.channel, Subscription{}).first;
      entry->second.command = executor_.Start(out, CommandKind::kSubscribe, -1,
                                              {"SUBSCRIBE", t.channel}, "subscribe",
                                              /*retry=*/true);
    }
    entry->second.refs += 1;
    if (entry->second.confirmed) {
      OnSubscribed(out, thread);
      return;
    }
    t.phase = Phase::kSubscribing;
    // tryLock waits for the subscription at most its remaining budget; lock() waits
    // timeout + retryInterval * retryAttempts (syncSubscription) and then throws.
    const int64_t bound_us = t.args.mode == AcquireArgs::Mode::kLock ? LockSubscribeTimeoutUs()
                                                                   : t.remaining_us;
    t.timer = timers_.Arm(out, TimerKind::kSubscribeWait, static_cast<uint64_t>(thread), bound_us);
  }

  int64_t LockSubscribeTimeoutUs() const {
    return config_.timeout_us + config_.retry_interval_us * config_.retry_attempts;
  }

  void OnSubscribed(Outbox& out, int thread) {
    Thread& t = threads_[thread];
    timers_.Disarm(out, &t.timer);
    if (t.args.mode == AcquireArgs::Mode::kTryLock && !Elapse(out, t)) {
      GiveUp(out, thread, OpResult::Fail("wait time elapsed"));
      return;
    }
    SendAttempt(out, thread);
  }

  void OnSubscribeWaitOver(Outbox& out, int thread) {
    Thread& t = threads_[thread];
    assert(t.phase == Phase::kSubscribing);
    t.timer = 0;
    if (t.args.mode == AcquireArgs::Mode::kLock) {
      EndAcquire(out, thread,
                 OpResult::Fail("RedisTimeoutException: Subscribe timeout: (" +
                      std::to_string(LockSubscribeTimeoutUs() / 1000) + "ms)"));
    } else {
      GiveUp(out, thread, OpResult::Fail("wait time elapsed (subscription not confirmed)"));
    }
  }

  void OnSubscribeDone(Outbox& out, uint64_t id, const std::string& channel, const Reply* reply,
                       const std::string& timeout_detail) {
    const auto entry = subscriptions_.find(channel);
    if (entry == subscriptions_.end() || entry->second.command != id) return;
    Subscription& s = entry->second;
    s.command = 0;
    if (reply != nullptr && !reply->is_error()) {
      s.confirmed = true;
      if (s.refs == 0) {
        // Every thread gave up before the confirmation came.
        SendUnsubscribe(out, channel);
        subscriptions_.erase(entry);
        return;
      }
      for (int thread = 0; thread < config_.threads; ++thread) {
        const Thread& t = threads_[thread];
        if (t.phase == Phase::kSubscribing && t.channel == channel) OnSubscribed(out, thread);
      }
      return;
    }
    const std::string detail =
        "subscribe failed: " + (reply != nullptr ? reply->str : timeout_detail);
    // An attempt whose reply was lost may have subscribed the connection after all.
    SendUnsubscribe(out, channel);
    subscriptions_.erase(entry);
    for (int thread = 0; thread < config_.threads; ++thread) {
      Thread& t = threads_[thread];
      if (t.phase != Phase::kSubscribing || t.channel != channel) continue;
      t.subscribed = false;  // The entry is gone; there is nothing to give back.
      // current's tryLock catches the failure and runs acquireFailed; 3.13.6 throws from
      // getNow() without it; lock() throws in both.
      if (version_ == Version::kCurrent && t.args.mode == AcquireArgs::Mode::kTryLock) {
        GiveUp(out, thread, OpResult::Fail(detail));
      } else {
        EndAcquire(out, thread, OpResult::Fail(detail));
      }
    }
  }

  void ReleaseSubscription(Outbox& out, const std::string& channel) {
    const auto entry = subscriptions_.find(channel);
    assert(entry != subscriptions_.end() && entry->second.refs > 0);
    entry->second.refs -= 1;
    if (entry->second.refs > 0) return;
    // Unconfirmed: keep the entry until the SUBSCRIBE is answered, then unsubscribe (or revive
    // it if a thread needs it again by then).
    if (!entry->second.confirmed) return;
    SendUnsubscribe(out, channel);
    subscriptions_.erase(entry);
  }

  void SendUnsubscribe(Outbox& out, const std::string& channel) {
    // Not tracked: the reply is ignored, and a lost one changes nothing we could act on.
    out.Send(0, out.NewRequestId(), {"UNSUBSCRIBE", channel}, "unsubscribe", -1);
  }

  // latch.tryAcquire(delay) (or latch.acquire() for kWaitForever).
  void WaitForPermit(Outbox& out, int thread, int64_t delay_us) {
    Thread& t = threads_[thread];
    const auto entry = subscriptions_.find(t.channel);
    assert(entry != subscriptions_.end() && entry->second.confirmed);
    Subscription& s = entry->second;
    if (s.permits > 0) {
      s.permits -= 1;
      AfterPermitWait(out, thread);
      return;
    }
    if (delay_us == 0) {
      AfterPermitWait(out, thread);  // tryAcquire(0) gives up at once.
      return;
    }
    t.phase = Phase::kWaitingPermit;
    s.waiters.push_back(thread);
    if (delay_us != kWaitForever) {
      t.timer = timers_.Arm(out, TimerKind::kPermitWait, static_cast<uint64_t>(thread), delay_us);
    }
  }

  void OnPermitWaitOver(Outbox& out, int thread) {
    Thread& t = threads_[thread];
    assert(t.phase == Phase::kWaitingPermit);
    t.timer = 0;
    std::deque<int>& waiters = subscriptions_.at(t.channel).waiters;
    for (auto it = waiters.begin(); it != waiters.end(); ++it) {
      if (*it == thread) {
        waiters.erase(it);
        break;
      }
    }
    AfterPermitWait(out, thread);
  }

  // Woken by a permit or by the wait's end: the loop goes round (Redisson ignores which).
  void AfterPermitWait(Outbox& out, int thread) {
    Thread& t = threads_[thread];
    if (t.args.mode == AcquireArgs::Mode::kTryLock && !Elapse(out, t)) {
      GiveUp(out, thread, OpResult::Fail("wait time elapsed"));
      return;
    }
    SendAttempt(out, thread);
  }

  void OnUnlockDone(Outbox& out, int thread, const Reply* reply,
                    const std::string& timeout_detail) {
    Thread& t = threads_[thread];
    const std::string latch = t.latch;
    t = Thread{};
    // unlockAsync calls cancelExpirationRenewal(threadId) whatever the outcome: one watchdog
    // acquisition of this thread is forgotten even if the unlock failed or timed out.
    CancelRenewal(out, thread);
    if (reply == nullptr) {
      Complete(thread, OpResult::Info(timeout_detail));
      return;
    }
    if (reply->is_error()) {
      Complete(thread, OpResult::Fail(reply->str));
      return;
    }
    if (version_ == Version::kCurrent) {
      // The latch has served its purpose once a reply came (thenApply: DEL, asynchronously).
      executor_.Start(out, CommandKind::kDelLatch, thread, {"DEL", latch}, "del_latch",
                      /*retry=*/true);
    }
    if (reply->type == Reply::Type::kNull) {
      Complete(thread, OpResult::Fail("IllegalMonitorStateException: attempt to unlock lock, not locked "
                            "by current thread by node id: " +
                            config_.uuid + " thread-id: " + std::to_string(thread + 1)));
      return;
    }
    if (reply->type != Reply::Type::kInteger) {
      Complete(thread,
               OpResult::Fail("unexpected reply to unlock (want nil or an integer): " + reply->Quoted()));
      return;
    }
    if (reply->integer == 1 && version_ == Version::kCurrent) {
      // A full release resets the lease that unlock and no-lease acquires use (3.27.2).
      internal_lease_ms_ = watchdog_ms_;
    }
    Complete(thread, OpResult::OkValue(reply->integer, reply->integer == 1 ? "released" : "still held"));
  }

  void OnForceUnlockDone(int thread, const Reply* reply, const std::string& timeout_detail) {
    threads_[thread] = Thread{};
    if (reply == nullptr) {
      Complete(thread, OpResult::Info(timeout_detail));
    } else if (reply->is_error()) {
      Complete(thread, OpResult::Fail(reply->str));
    } else if (reply->type == Reply::Type::kInteger) {
      Complete(thread, OpResult::OkValue(reply->integer, reply->integer == 1 ? "deleted" : "no lock"));
    } else {
      Complete(thread,
               OpResult::Fail("unexpected reply to force_unlock (want an integer): " + reply->Quoted()));
    }
  }

  // ---- Watchdog -----------------------------------------------------------------------------

  // scheduleExpirationRenewal(threadId).
  void ScheduleRenewal(Outbox& out, int thread) {
    if (renewal_) {
      // 3.13.6: an entry whose timer chain died (renew error or 0) stays in the map, so this
      // only counts the thread and nothing renews (fixed in 3.14.0 / 3.16.1).
      renewal_->Add(thread);
      return;
    }
    renewal_.emplace();
    renewal_->Add(thread);
    if (version_ == Version::k3136) {
      RenewExpiration(out);
    } else if (!task_running_) {
      task_running_ = true;
      ScheduleTask(out);
    }
  }

  // 3.13.6 renewExpiration(): arms the next tick for the entry in the map now. A renew reply
  // that comes back after its entry was replaced arms a second chain for the new entry, as in
  // Redisson (only the last timer is remembered for cancelling).
  void RenewExpiration(Outbox& out) {
    if (!renewal_) return;
    renewal_->timer =
        timers_.Arm(out, TimerKind::kWatchdog, 0, internal_lease_ms_ / 3 * 1000);
  }

  // current RenewalTask.schedule(): re-arms while running. The timer is never cancelled: a
  // stopped task's last tick finds nothing to renew and does not re-arm.
  void ScheduleTask(Outbox& out) {
    if (!task_running_) return;
    timers_.Arm(out, TimerKind::kWatchdog, 0, watchdog_ms_ / 3 * 1000);
  }

  void OnWatchdogTick(Outbox& out, TimerId timer) {
    if (version_ == Version::k3136) {
      if (!renewal_ || renewal_->empty()) return;
      if (renewal_->timer == timer) renewal_->timer = 0;
      const int thread = renewal_->renewed_thread();
      executor_.Start(out, CommandKind::kRenew, thread, kind_->Renew(thread, internal_lease_ms_),
                      "renew", /*retry=*/true);
      return;
    }
    if (!renewal_ || renewal_->empty()) {
      ScheduleTask(out);  // execute() had nothing to do.
      return;
    }
    const int thread = renewal_->renewed_thread();
    executor_.Start(out, CommandKind::kRenew, thread, kind_->Renew(thread, watchdog_ms_), "renew",
                    /*retry=*/true);
  }

  void OnRenewDone(Outbox& out, int thread, const Reply* reply) {
    if (version_ == Version::k3136) {
      // EVAL_BOOLEAN: 1 re-arms. A 0, an error or a timeout ends the chain and leaves the
      // entry in place (Redisson logs the error and returns).
      if (reply != nullptr && reply->type == Reply::Type::kInteger && reply->integer == 1) {
        RenewExpiration(out);
      }
      return;
    }
    // LockTask: a lock whose element is not 1 has one acquisition of the renewed thread
    // cancelled; errors are logged. Either way the task re-arms.
    if (RenewCancels(reply)) CancelRenewal(out, thread);
    ScheduleTask(out);
  }

  // cancelExpirationRenewal(threadId): one acquisition of the thread fewer; the entry goes
  // when no thread is left.
  void CancelRenewal(Outbox& out, int thread) {
    if (renewal_ && renewal_->Remove(thread)) DropRenewal(out);
  }

  // cancelExpirationRenewal(null), or the last thread gone.
  void DropRenewal(Outbox& out) {
    if (!renewal_) return;
    if (version_ == Version::k3136) {
      timers_.Disarm(out, &renewal_->timer);
    } else {
      task_running_ = false;  // RenewalTask.stop(): the armed tick stays armed.
    }
    renewal_.reset();
  }

  const std::unique_ptr<RedissonLockKind> kind_;
  const ClientConfig& config_;  // kind_'s.
  const Version version_;
  const int64_t watchdog_ms_;

  int64_t internal_lease_ms_ = 0;  // RedissonLock.internalLockLeaseTime (one per process).
  std::vector<Thread> threads_;
  std::map<std::string, Subscription> subscriptions_;  // By channel.
  std::optional<RenewalEntry> renewal_;
  bool task_running_ = false;  // current: RenewalTask.running.

  Executor executor_{config_};
  Timers timers_;
  std::vector<std::pair<int, OpResult>> completions_;
  uint64_t unlock_requests_ = 0;
};

}  // namespace

std::unique_ptr<LockProtocol> MakeRedissonLockClient(std::unique_ptr<RedissonLockKind> kind) {
  assert(kind != nullptr);
  return std::make_unique<RedissonLockClient>(std::move(kind));
}

}  // namespace lockstep::locks
