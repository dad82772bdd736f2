// Redisson's SpinLock client, sans IO. It shares the command layer (response timeout, resends:
// locks/redisson_executor.h) and the watchdog's entry and renew reading (locks/redisson_common.h)
// with the reentrant family; its acquisition loop is its own: attempt, sleep the back-off,
// attempt again.
#include "locks/spinlock/spinlock.h"

#include <cassert>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "locks/redisson_common.h"
#include "locks/redisson_executor.h"
#include "locks/scripts.h"

namespace lockstep::locks {
namespace {

class SpinLock final : public LockProtocol {
 public:
  SpinLock(const ClientConfig& config, const ScriptSet& scripts)
      : config_(config),
        scripts_(scripts),
        watchdog_ms_(config.watchdog_timeout_us / 1000),
        threads_(static_cast<size_t>(config.threads)) {
    internal_lease_ms_ = watchdog_ms_;
  }

  void Acquire(Outbox& out, int thread, const AcquireArgs& args) override {
    Thread& t = At(thread);
    assert(t.phase == Phase::kIdle && "one operation at a time per thread");
    t = Thread{};
    t.args = args;
    t.start_us = out.MonoUs();
    SendAttempt(out, thread);
    Flush(out);
  }

  void Release(Outbox& out, int thread) override {
    Thread& t = At(thread);
    assert(t.phase == Phase::kIdle && "one operation at a time per thread");
    t = Thread{};
    t.phase = Phase::kReleasing;
    const std::string request_id = config_.uuid + "-" + std::to_string(++unlock_requests_);
    t.latch = RLockUnlockLatch(config_.lock_name, request_id);
    t.command = executor_.Start(
        out, CommandKind::kUnlock, thread,
        Eval("unlock", {config_.lock_name, t.latch},
             {std::to_string(internal_lease_ms_), RLockField(config_.uuid, thread),
              std::to_string(LatchTtlMs())}),
        "unlock", /*retry=*/false);
    Flush(out);
  }

  void ForceUnlock(Outbox& out, int thread) override {
    Thread& t = At(thread);
    assert(t.phase == Phase::kIdle && "one operation at a time per thread");
    t = Thread{};
    t.phase = Phase::kForceUnlocking;
    DropRenewal();  // cancelExpirationRenewal(null, null) ...
    internal_lease_ms_ = watchdog_ms_;  // ... which also resets the lease field.
    t.command = executor_.Start(out, CommandKind::kForceUnlock, thread,
                                Eval("force_unlock", {config_.lock_name}, {}), "force_unlock",
                                /*retry=*/true);
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
    (void)out;
    (void)node;
    (void)channel;
    (void)payload;  // A SpinLock subscribes to nothing.
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
      case TimerKind::kBackOff: {
        Thread& t = threads_[static_cast<size_t>(ref->ref)];
        assert(t.phase == Phase::kSleeping);
        t.timer = 0;
        SendAttempt(out, static_cast<int>(ref->ref));
        break;
      }
      case TimerKind::kWatchdog:
        OnWatchdogTick(out);
        break;
    }
    Flush(out);
  }

  void OnCrash() override {
    const uint64_t unlock_requests = unlock_requests_;  // See RLock::OnCrash.
    executor_.Clear();
    timers_.Clear();
    threads_.assign(static_cast<size_t>(config_.threads), Thread{});
    renewal_.reset();
    task_running_ = false;
    internal_lease_ms_ = watchdog_ms_;
    completions_.clear();
    unlock_requests_ = unlock_requests;
  }

 private:
  // ---- Command layer (RLock's) --------------------------------------------------------------

  enum class CommandKind : uint8_t { kAcquire, kUnlock, kForceUnlock, kRenew, kDelLatch };
  using Executor = RedissonExecutor<CommandKind>;


  enum class TimerKind : uint8_t { kBackOff, kWatchdog };
  using Timers = TimerTable<TimerKind>;


  enum class Phase : uint8_t { kIdle, kAttempting, kSleeping, kReleasing, kForceUnlocking };

  struct Thread {
    Phase phase = Phase::kIdle;
    AcquireArgs args;
    int64_t start_us = 0;
    std::optional<SpinBackOff> backoff;  // Created at the first failed attempt.
    uint64_t command = 0;
    TimerId timer = 0;  // The back-off sleep.
    std::string latch;
  };

  Thread& At(int thread) {
    assert(thread >= 0 && thread < config_.threads);
    return threads_[static_cast<size_t>(thread)];
  }

  int64_t LatchTtlMs() const { return RedissonLatchTtlMs(config_); }

  Argv Eval(const std::string& script, std::vector<std::string> keys,
            std::vector<std::string> args) const {
    return EvalArgv(scripts_, script, std::move(keys), std::move(args));
  }

  void Finish(Outbox& out, uint64_t id, const Executor::Command& command, const Reply* reply,
              const std::string& timeout_detail) {
    (void)id;
    switch (command.kind) {
      case CommandKind::kAcquire:
        OnAcquireDone(out, command.thread, reply, timeout_detail);
        break;
      case CommandKind::kUnlock:
        OnUnlockDone(out, command.thread, reply, timeout_detail);
        break;
      case CommandKind::kForceUnlock:
        OnForceUnlockDone(command.thread, reply, timeout_detail);
        break;
      case CommandKind::kRenew:
        OnRenewDone(out, command.thread, reply);
        break;
      case CommandKind::kDelLatch:
        break;
    }
  }

  // ---- Operations ---------------------------------------------------------------------------

  void Complete(int thread, OpResult result) {
    threads_[static_cast<size_t>(thread)] = Thread{};
    completions_.emplace_back(thread, std::move(result));
  }

  void Flush(Outbox& out) {
    while (!completions_.empty()) {
      std::vector<std::pair<int, OpResult>> batch;
      batch.swap(completions_);
      for (const auto& [thread, result] : batch) out.Complete(thread, result);
    }
  }

  // tryAcquireAsync: tryLockInnerAsync sets internalLockLeaseTime to the lease it sends.
  void SendAttempt(Outbox& out, int thread) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    t.phase = Phase::kAttempting;
    const int64_t lease_ms = t.args.lease_us > 0 ? t.args.lease_us / 1000 : internal_lease_ms_;
    internal_lease_ms_ = lease_ms;
    t.command = executor_.Start(
        out, CommandKind::kAcquire, thread,
        Eval("acquire", {config_.lock_name},
             {std::to_string(lease_ms), RLockField(config_.uuid, thread)}),
        "acquire", /*retry=*/false);
  }

  void OnAcquireDone(Outbox& out, int thread, const Reply* reply,
                     const std::string& timeout_detail) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    t.command = 0;
    if (reply == nullptr) {
      Complete(thread, OpResult::Info(timeout_detail));
      return;
    }
    if (reply->is_error()) {
      Complete(thread, OpResult::Fail(reply->str));
      return;
    }
    if (reply->type == Reply::Type::kNull) {
      if (t.args.lease_us <= 0) ScheduleRenewal(out, thread);
      Complete(thread, OpResult::Ok("acquired"));
      return;
    }
    if (reply->type != Reply::Type::kInteger) {
      Complete(thread, OpResult::Fail("unexpected reply to acquire (want nil or an integer): " +
                                      reply->Quoted()));
      return;
    }
    switch (t.args.mode) {
      case AcquireArgs::Mode::kTryLockNoWait:
        Complete(thread, OpResult::Fail("not acquired: held by another (pttl " +
                                        std::to_string(reply->integer) + " ms)"));
        return;
      case AcquireArgs::Mode::kTryLock:
        if (out.MonoUs() - t.start_us >= t.args.wait_us) {
          Complete(thread, OpResult::Fail("wait time elapsed"));
          return;
        }
        break;
      case AcquireArgs::Mode::kLock:
        break;
    }
    // Thread.sleep(backOffPolicy.getNextSleepPeriod()), then the next attempt.
    if (!t.backoff) t.backoff.emplace();
    const int64_t sleep_ms = t.backoff->NextSleepMs(out.Rng());
    t.phase = Phase::kSleeping;
    t.timer = timers_.Arm(out, TimerKind::kBackOff, static_cast<uint64_t>(thread), sleep_ms * 1000);
  }

  void OnUnlockDone(Outbox& out, int thread, const Reply* reply,
                    const std::string& timeout_detail) {
    const std::string latch = threads_[static_cast<size_t>(thread)].latch;
    // cancelExpirationRenewal(threadId, res): one watchdog acquisition of the thread goes
    // whatever the outcome; the lease field is reset unless the unlock left the lock held.
    CancelRenewal(thread);
    const bool still_held =
        reply != nullptr && reply->type == Reply::Type::kInteger && reply->integer == 0;
    if (!still_held) internal_lease_ms_ = watchdog_ms_;
    if (reply == nullptr) {
      Complete(thread, OpResult::Info(timeout_detail));
      return;
    }
    if (reply->is_error()) {
      Complete(thread, OpResult::Fail(reply->str));
      return;
    }
    executor_.Start(out, CommandKind::kDelLatch, thread, {"DEL", latch}, "del_latch",
                    /*retry=*/true);
    if (reply->type == Reply::Type::kNull) {
      Complete(thread,
               OpResult::Fail("IllegalMonitorStateException: attempt to unlock lock, not locked by "
                              "current thread by node id: " +
                              config_.uuid + " thread-id: " + std::to_string(thread + 1)));
      return;
    }
    if (reply->type != Reply::Type::kInteger) {
      Complete(thread, OpResult::Fail("unexpected reply to unlock (want nil or an integer): " +
                                      reply->Quoted()));
      return;
    }
    Complete(thread,
             OpResult::OkValue(reply->integer, reply->integer == 1 ? "released" : "still held"));
  }

  void OnForceUnlockDone(int thread, const Reply* reply, const std::string& timeout_detail) {
    if (reply == nullptr) {
      Complete(thread, OpResult::Info(timeout_detail));
    } else if (reply->is_error()) {
      Complete(thread, OpResult::Fail(reply->str));
    } else if (reply->type == Reply::Type::kInteger) {
      Complete(thread,
               OpResult::OkValue(reply->integer, reply->integer == 1 ? "deleted" : "no lock"));
    } else {
      Complete(thread, OpResult::Fail("unexpected reply to force_unlock (want an integer): " +
                                      reply->Quoted()));
    }
  }

  // ---- Watchdog (RLock current's LockTask) --------------------------------------------------

  void ScheduleRenewal(Outbox& out, int thread) {
    if (renewal_) {
      renewal_->Add(thread);
      return;
    }
    renewal_.emplace();
    renewal_->Add(thread);
    if (!task_running_) {
      task_running_ = true;
      ScheduleTask(out);
    }
  }

  void ScheduleTask(Outbox& out) {
    if (!task_running_) return;
    timers_.Arm(out, TimerKind::kWatchdog, 0, watchdog_ms_ / 3 * 1000);
  }

  void OnWatchdogTick(Outbox& out) {
    if (!renewal_ || renewal_->empty()) {
      ScheduleTask(out);
      return;
    }
    const int thread = renewal_->renewed_thread();
    executor_.Start(out, CommandKind::kRenew, thread,
                    Eval("renew", {config_.lock_name},
                         {std::to_string(watchdog_ms_), RLockField(config_.uuid, thread)}),
                    "renew", /*retry=*/true);
  }

  void OnRenewDone(Outbox& out, int thread, const Reply* reply) {
    if (RenewCancels(reply)) CancelRenewal(thread);
    ScheduleTask(out);
  }

  void CancelRenewal(int thread) {
    if (renewal_ && renewal_->Remove(thread)) DropRenewal();
  }

  void DropRenewal() {
    task_running_ = false;  // The armed tick stays armed and finds nothing to do.
    renewal_.reset();
  }

  const ClientConfig config_;
  const ScriptSet scripts_;
  const int64_t watchdog_ms_;

  int64_t internal_lease_ms_ = 0;  // RedissonSpinLock.internalLockLeaseTime.
  std::vector<Thread> threads_;
  std::optional<RenewalEntry> renewal_;
  bool task_running_ = false;

  Executor executor_{config_};
  Timers timers_;
  std::vector<std::pair<int, OpResult>> completions_;
  uint64_t unlock_requests_ = 0;
};

}  // namespace

bool CheckSpinLockConfig(const ClientConfig& config, const ScriptSet& scripts,
                         std::string* error) {
  if (config.version != history::ProtocolVersion::kCurrent) {
    *error = "spinlock: version '" + std::string(history::VersionName(config.version)) +
             "' has no SpinLock (Redisson added it in 3.15.0); use version current";
    return false;
  }
  if (!CheckRedissonConfig("spinlock", config, error)) return false;
  std::string missing;
  if (!HasScripts(scripts, {"acquire", "unlock", "force_unlock", "renew"}, &missing)) {
    *error = "spinlock: " + missing;
    return false;
  }
  return true;
}

std::unique_ptr<LockProtocol> MakeSpinLock(const ClientConfig& config, const ScriptSet& scripts) {
  std::string error;
  const bool valid = CheckSpinLockConfig(config, scripts, &error);
  assert(valid && "MakeSpinLock: see CheckSpinLockConfig");
  (void)valid;
  return std::make_unique<SpinLock>(config, scripts);
}

}  // namespace lockstep::locks
