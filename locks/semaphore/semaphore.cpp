// The synchronizer machine RSemaphore and RCountDownLatch share, and RSemaphore's kind (see
// semaphore.h). The machine has, bottom up:
//  1. the command layer, as redisson_common.cpp has it: one response timeout per attempt,
//     resends after retryInterval for commands marked retry, "info" after the last one;
//  2. one subscription entry (the kind's channel) with a reference count of the threads that
//     subscribed and the kind's LocalLatch, which messages fill and waiting threads drain;
//  3. the per-process initialisation (trySetPermits / trySetCount) before the first operation;
//  4. the per-thread operations: the check / subscribe / wait loop of tryAcquire(wait),
//     acquire() and tryAcquire(), and the single command of release and forceUnlock.
// Every entry point ends with Flush(): completions are reported after all state is updated.
#include "locks/semaphore/semaphore.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdlib>
#include <deque>
#include <map>
#include <utility>

#include "locks/redisson_common.h"
#include "locks/redisson_executor.h"
#include "locks/scripts.h"

namespace lockstep::locks {

bool ParseInt64(const std::string& text, int64_t* value) {
  if (text.empty() || text.size() > 20) return false;
  errno = 0;
  char* end = nullptr;
  const long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size()) return false;
  *value = static_cast<int64_t>(parsed);
  return true;
}

SynchronizerKind::SynchronizerKind(const ClientConfig& config, const ScriptSet& scripts)
    : config_(config),
      scripts_(scripts),
      version_(config.version) {}

std::optional<OpResult> SynchronizerKind::Immediate(const AcquireArgs& args) {
  (void)args;
  return std::nullopt;
}

void SynchronizerKind::OnAcquired(int thread, const AcquireArgs& args) {
  (void)thread;
  (void)args;
}

void SynchronizerKind::OnCrash() {}

std::optional<SynchronizerKind::Command> SynchronizerKind::Extra(ExtraOp op, OpResult* immediate) {
  (void)op;
  immediate->status = OpResult::Status::kFail;
  immediate->detail = "UnsupportedOperationException: this synchronizer has no such operation";
  return std::nullopt;
}

OpResult SynchronizerKind::ReadExtra(ExtraOp op, const Reply& reply) {
  (void)op;
  return OpResult::Fail("unexpected reply: " + reply.Quoted());
}

namespace {

constexpr int64_t kWaitForever = -1;

class SynchronizerClient final : public LockProtocol {
 public:
  explicit SynchronizerClient(std::unique_ptr<SynchronizerKind> kind)
      : kind_(std::move(kind)),
        config_(kind_->config()),
        channel_(kind_->Channel()),
        threads_(static_cast<size_t>(config_.threads)) {
    assert(config_.threads >= 1 && config_.threads <= kRedissonThreadsMax);
  }

  void Acquire(Outbox& out, int thread, const AcquireArgs& args) override {
    Thread& t = Begin(thread, Op::kAcquire);
    t.args = args;
    if (std::optional<OpResult> immediate = kind_->Immediate(args)) {
      if (immediate->status == OpResult::Status::kOk) kind_->OnAcquired(thread, args);
      End(out, thread, std::move(*immediate));
    } else {
      RunAfterInit(out, thread);
    }
    Flush(out);
  }

  void Release(Outbox& out, int thread) override {
    Begin(thread, Op::kRelease);
    RunAfterInit(out, thread);
    Flush(out);
  }

  void Extra(Outbox& out, int thread, ExtraOp op) override {
    Thread& t = Begin(thread, Op::kExtra);
    t.extra = op;
    RunAfterInit(out, thread);
    Flush(out);
  }

  void ForceUnlock(Outbox& out, int thread) override {
    Thread& t = Begin(thread, Op::kForceUnlock);
    OpResult immediate;
    std::optional<SynchronizerKind::Command> command = kind_->ForceUnlock(&immediate);
    if (!command) {
      End(out, thread, std::move(immediate));
    } else {
      t.phase = Phase::kCommand;
      t.command = StartCommand(out, CommandKind::kForceUnlock, thread, std::move(*command));
    }
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
    (void)node;
    const auto entry = subscriptions_.find(channel);
    if (entry == subscriptions_.end()) return;
    kind_->OnMessage(payload, entry->second.refs, &entry->second.latch);
    Serve(out, channel);
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
      case TimerKind::kWait:
        OnWaitOver(out, static_cast<int>(ref->ref));
        break;
    }
    Flush(out);
  }

  void OnCrash() override {
    executor_.Clear();
    timers_.Clear();
    threads_.assign(threads_.size(), Thread{});
    subscriptions_.clear();
    init_ = Init::kNone;
    completions_.clear();
    kind_->OnCrash();
  }

 private:
  // ---- Command layer ------------------------------------------------------------------------

  enum class CommandKind : uint8_t { kInit, kAttempt, kRelease, kForceUnlock, kSubscribe, kExtra };
  using Executor = RedissonExecutor<CommandKind>;


  enum class TimerKind : uint8_t { kSubscribeWait, kWait };
  using Timers = TimerTable<TimerKind>;


  // ---- Threads ------------------------------------------------------------------------------

  enum class Op : uint8_t { kNone, kAcquire, kRelease, kForceUnlock, kExtra };

  enum class Phase : uint8_t {
    kIdle,
    kInitWaiting,  // The process's trySetPermits / trySetCount is in flight.
    kAttempting,   // The check is in flight.
    kSubscribing,  // Waiting for the entry's SUBSCRIBE to be confirmed.
    kWaiting,      // On the local latch.
    kCommand,      // release / countDown / forceUnlock / an ExtraOp in flight.
  };

  struct Thread {
    Op op = Op::kNone;
    Phase phase = Phase::kIdle;
    AcquireArgs args;
    ExtraOp extra = ExtraOp::kAddPermits;  // Op::kExtra: which.
    int64_t remaining_us = 0;  // tryAcquire's "time".
    int64_t mark_us = 0;       // Its "current".
    bool subscribed = false;   // Holds a reference on the entry.
    uint64_t command = 0;
    TimerId timer = 0;         // Subscribe wait or latch wait.
  };

  struct Subscription {
    uint64_t command = 0;  // The SUBSCRIBE in flight; 0 once answered.
    bool confirmed = false;
    int refs = 0;
    LocalLatch latch;
    std::deque<int> waiters;  // First come, first served.
  };

  enum class Init : uint8_t { kNone, kInFlight, kDone };

  Thread& Begin(int thread, Op op) {
    assert(thread >= 0 && thread < config_.threads);
    Thread& t = threads_[static_cast<size_t>(thread)];
    assert(t.op == Op::kNone && "one operation at a time per thread");
    t = Thread{};
    t.op = op;
    return t;
  }

  uint64_t StartCommand(Outbox& out, CommandKind kind, int thread,
                        SynchronizerKind::Command spec) {
    return executor_.Start(out, kind, thread, std::move(spec.argv), std::move(spec.label),
                           spec.retry);
  }

  // A command ended: with a reply, or (reply == nullptr) after its last attempt timed out.
  void Finish(Outbox& out, uint64_t id, const Executor::Command& command, const Reply* reply,
              const std::string& timeout_detail) {
    switch (command.kind) {
      case CommandKind::kInit:
        OnInitDone(out, command.label, reply, timeout_detail);
        break;
      case CommandKind::kAttempt:
        assert(threads_[command.thread].command == id);
        OnAttemptDone(out, command.thread, reply, timeout_detail);
        break;
      case CommandKind::kRelease:
      case CommandKind::kForceUnlock:
      case CommandKind::kExtra:
        assert(threads_[command.thread].command == id);
        OnCommandDone(out, command.kind, command.thread, reply, timeout_detail);
        break;
      case CommandKind::kSubscribe:
        OnSubscribeDone(out, id, reply, timeout_detail);
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

  // Ends the thread's operation; an acquisition gives its entry reference back first
  // (Redisson's finally { unsubscribe }).
  void End(Outbox& out, int thread, OpResult result) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    if (t.subscribed) ReleaseSubscription(out);
    timers_.Disarm(out, &t.timer);
    t = Thread{};
    Complete(thread, std::move(result));
  }

  void RunAfterInit(Outbox& out, int thread) {
    if (init_ == Init::kDone) {
      Run(out, thread);
      return;
    }
    threads_[static_cast<size_t>(thread)].phase = Phase::kInitWaiting;
    if (init_ == Init::kNone) {
      init_ = Init::kInFlight;
      StartCommand(out, CommandKind::kInit, -1, kind_->Init());
    }
  }

  void OnInitDone(Outbox& out, const std::string& label, const Reply* reply,
                  const std::string& timeout_detail) {
    const bool done = reply != nullptr && !reply->is_error();
    // A failed initialisation is tried again by the next operation.
    init_ = done ? Init::kDone : Init::kNone;
    const std::string why = reply != nullptr ? reply->str : timeout_detail;
    for (int thread = 0; thread < config_.threads; ++thread) {
      if (threads_[static_cast<size_t>(thread)].phase != Phase::kInitWaiting) continue;
      if (done) {
        Run(out, thread);
      } else {
        End(out, thread, OpResult::Fail(label + " failed: " + why));
      }
    }
  }

  void Run(Outbox& out, int thread) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    if (t.op == Op::kAcquire) {
      t.remaining_us = t.args.wait_us;
      t.mark_us = out.MonoUs();
      SendAttempt(out, thread);
      return;
    }
    assert(t.op == Op::kRelease || t.op == Op::kExtra);
    const bool extra = t.op == Op::kExtra;
    OpResult immediate;
    std::optional<SynchronizerKind::Command> command =
        extra ? kind_->Extra(t.extra, &immediate) : kind_->Release(thread, &immediate);
    if (!command) {
      End(out, thread, std::move(immediate));
      return;
    }
    t.phase = Phase::kCommand;
    t.command = StartCommand(out, extra ? CommandKind::kExtra : CommandKind::kRelease, thread,
                             std::move(*command));
  }

  void SendAttempt(Outbox& out, int thread) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    t.phase = Phase::kAttempting;
    t.command = StartCommand(out, CommandKind::kAttempt, thread, kind_->Attempt(thread, t.args));
  }

  // tryAcquire's "time -= now - current; current = now". False when the budget is spent.
  bool Elapse(Outbox& out, Thread& t) {
    const int64_t now_us = out.MonoUs();
    t.remaining_us -= now_us - t.mark_us;
    t.mark_us = now_us;
    return t.remaining_us > 0;
  }

  void OnAttemptDone(Outbox& out, int thread, const Reply* reply,
                     const std::string& timeout_detail) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    t.command = 0;
    if (reply == nullptr) {
      OpResult result;
      result.status = kind_->AttemptTimeoutStatus();
      result.detail = timeout_detail;
      End(out, thread, std::move(result));
      return;
    }
    if (reply->is_error()) {
      End(out, thread, OpResult::Fail(reply->str));
      return;
    }
    OpResult result;
    switch (kind_->ReadAttempt(*reply, t.args, &result)) {
      case SynchronizerKind::Check::kPassed:
        kind_->OnAcquired(thread, t.args);
        End(out, thread, std::move(result));
        return;
      case SynchronizerKind::Check::kFailed:
        End(out, thread, std::move(result));
        return;
      case SynchronizerKind::Check::kNotYet:
        break;
    }
    switch (t.args.mode) {
      case AcquireArgs::Mode::kTryLockNoWait:
        End(out, thread, OpResult::Fail(result.detail));
        return;
      case AcquireArgs::Mode::kLock:
        if (!t.subscribed) {
          Subscribe(out, thread, LockSubscribeTimeoutUs());
        } else {
          Wait(out, thread, kWaitForever);
        }
        return;
      case AcquireArgs::Mode::kTryLock:
        if (!Elapse(out, t)) {
          End(out, thread, OpResult::Fail("wait time elapsed (" + result.detail + ")"));
          return;
        }
        if (!t.subscribed) {
          Subscribe(out, thread, t.remaining_us);
        } else {
          Wait(out, thread, t.remaining_us);
        }
        return;
    }
  }

  void OnCommandDone(Outbox& out, CommandKind kind, int thread, const Reply* reply,
                     const std::string& timeout_detail) {
    threads_[static_cast<size_t>(thread)].command = 0;
    if (reply == nullptr) {
      End(out, thread, OpResult::Info(timeout_detail));
    } else if (reply->is_error()) {
      End(out, thread, OpResult::Fail(reply->str));
    } else if (kind == CommandKind::kRelease) {
      End(out, thread, kind_->ReadRelease(thread, *reply));
    } else if (kind == CommandKind::kExtra) {
      End(out, thread, kind_->ReadExtra(threads_[static_cast<size_t>(thread)].extra, *reply));
    } else if (reply->type == Reply::Type::kInteger) {
      End(out, thread,
          OpResult::OkValue(reply->integer, reply->integer == 1 ? "deleted" : "nothing to delete"));
    } else {
      End(out, thread, OpResult::Fail("unexpected reply (want an integer): " + reply->Quoted()));
    }
  }

  // ---- Subscription -------------------------------------------------------------------------

  // acquire() waits for the subscription timeout + retryInterval * retryAttempts, then throws.
  int64_t LockSubscribeTimeoutUs() const {
    return config_.timeout_us + config_.retry_interval_us * config_.retry_attempts;
  }

  void Subscribe(Outbox& out, int thread, int64_t bound_us) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    t.subscribed = true;
    auto entry = subscriptions_.find(channel_);
    if (entry == subscriptions_.end()) {
      entry = subscriptions_.emplace(channel_, Subscription{}).first;
      entry->second.command = StartCommand(
          out, CommandKind::kSubscribe, -1, {{"SUBSCRIBE", channel_}, "subscribe", true});
    }
    entry->second.refs += 1;
    if (entry->second.confirmed) {
      OnSubscribed(out, thread);
      return;
    }
    t.phase = Phase::kSubscribing;
    t.timer = timers_.Arm(out, TimerKind::kSubscribeWait, static_cast<uint64_t>(thread), bound_us);
  }

  void OnSubscribed(Outbox& out, int thread) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    timers_.Disarm(out, &t.timer);
    if (t.args.mode == AcquireArgs::Mode::kTryLock && !Elapse(out, t)) {
      End(out, thread, OpResult::Fail("wait time elapsed"));
      return;
    }
    SendAttempt(out, thread);
  }

  void OnSubscribeWaitOver(Outbox& out, int thread) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    assert(t.phase == Phase::kSubscribing);
    t.timer = 0;
    // Redisson returns false (or throws, for acquire()) before its try/finally: the entry keeps
    // this thread's reference, and the channel stays subscribed.
    t.subscribed = false;
    if (t.args.mode == AcquireArgs::Mode::kLock) {
      End(out, thread,
          OpResult::Fail("RedisTimeoutException: Subscribe timeout: (" +
               std::to_string(LockSubscribeTimeoutUs() / 1000) + "ms)"));
    } else {
      End(out, thread, OpResult::Fail("wait time elapsed (subscription not confirmed)"));
    }
  }

  void OnSubscribeDone(Outbox& out, uint64_t id, const Reply* reply,
                       const std::string& timeout_detail) {
    const auto entry = subscriptions_.find(channel_);
    if (entry == subscriptions_.end() || entry->second.command != id) return;
    Subscription& s = entry->second;
    s.command = 0;
    if (reply != nullptr && !reply->is_error()) {
      s.confirmed = true;
      if (s.refs == 0) {
        SendUnsubscribe(out);
        subscriptions_.erase(entry);
        return;
      }
      for (int thread = 0; thread < config_.threads; ++thread) {
        if (threads_[static_cast<size_t>(thread)].phase == Phase::kSubscribing) {
          OnSubscribed(out, thread);
        }
      }
      return;
    }
    const std::string detail =
        "subscribe failed: " + (reply != nullptr ? reply->str : timeout_detail);
    SendUnsubscribe(out);  // A lost reply may have subscribed the connection after all.
    subscriptions_.erase(entry);
    for (int thread = 0; thread < config_.threads; ++thread) {
      Thread& t = threads_[static_cast<size_t>(thread)];
      if (t.phase != Phase::kSubscribing) continue;
      t.subscribed = false;  // The entry is gone.
      End(out, thread, OpResult::Fail(detail));
    }
  }

  void ReleaseSubscription(Outbox& out) {
    const auto entry = subscriptions_.find(channel_);
    assert(entry != subscriptions_.end() && entry->second.refs > 0);
    entry->second.refs -= 1;
    if (entry->second.refs > 0 || !entry->second.confirmed) return;
    SendUnsubscribe(out);
    subscriptions_.erase(entry);
  }

  void SendUnsubscribe(Outbox& out) {
    out.Send(0, out.NewRequestId(), {"UNSUBSCRIBE", channel_}, "unsubscribe", -1);
  }

  // ---- Waiting ------------------------------------------------------------------------------

  // latch.tryAcquire(delay) / latch.acquire() / latch.await(...).
  void Wait(Outbox& out, int thread, int64_t delay_us) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    Subscription& s = subscriptions_.at(channel_);
    assert(s.confirmed);
    if (kind_->TryPass(t.args, &s.latch) || delay_us == 0) {
      AfterWait(out, thread);
      return;
    }
    t.phase = Phase::kWaiting;
    s.waiters.push_back(thread);
    if (delay_us != kWaitForever) {
      t.timer = timers_.Arm(out, TimerKind::kWait, static_cast<uint64_t>(thread), delay_us);
    }
  }

  void OnWaitOver(Outbox& out, int thread) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    assert(t.phase == Phase::kWaiting);
    t.timer = 0;
    std::deque<int>& waiters = subscriptions_.at(channel_).waiters;
    waiters.erase(std::find(waiters.begin(), waiters.end(), thread));
    AfterWait(out, thread);
  }

  // Lets waiting threads through in order while the latch lets the first one pass.
  void Serve(Outbox& out, const std::string& channel) {
    for (auto entry = subscriptions_.find(channel); entry != subscriptions_.end();
         entry = subscriptions_.find(channel)) {
      Subscription& s = entry->second;
      if (s.waiters.empty()) break;
      const int thread = s.waiters.front();
      Thread& t = threads_[static_cast<size_t>(thread)];
      if (!kind_->TryPass(t.args, &s.latch)) break;
      s.waiters.pop_front();
      timers_.Disarm(out, &t.timer);
      AfterWait(out, thread);
    }
  }

  // Woken, or the wait ran out: check again (Redisson ignores which it was).
  void AfterWait(Outbox& out, int thread) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    if (t.args.mode == AcquireArgs::Mode::kTryLock && !Elapse(out, t) &&
        !kind_->CheckAfterLastWait()) {
      End(out, thread, OpResult::Fail("wait time elapsed"));
      return;
    }
    SendAttempt(out, thread);
  }

  const std::unique_ptr<SynchronizerKind> kind_;
  const ClientConfig& config_;  // kind_'s.
  const std::string channel_;

  std::vector<Thread> threads_;
  std::map<std::string, Subscription> subscriptions_;  // At most one: channel_.
  Init init_ = Init::kNone;

  Executor executor_{config_};
  Timers timers_;
  std::vector<std::pair<int, OpResult>> completions_;
};

// ---- RSemaphore ---------------------------------------------------------------------------

class SemaphoreKind final : public SynchronizerKind {
 public:
  SemaphoreKind(const ClientConfig& config, const ScriptSet& scripts)
      : SynchronizerKind(config, scripts),
        channel_(SemaphoreChannel(config.lock_name)),
        threads_(static_cast<size_t>(config.threads)) {}

  std::optional<OpResult> Immediate(const AcquireArgs& args) override {
    if (args.permits < 0) {
      return OpResult::Fail("IllegalArgumentException: Permits amount can't be negative");
    }
    if (args.permits == 0) return OpResult::OkValue(0, "acquired 0 permits (no command)");
    return std::nullopt;
  }

  Command Init() override {
    return {Eval("try_set_permits", {config().lock_name, channel_},
                 {std::to_string(config().permits), "publish"}),
            "try_set_permits", true};
  }

  std::string Channel() const override { return channel_; }

  Command Attempt(int thread, const AcquireArgs& args) override {
    (void)thread;
    // 3.13.6 resends every script; current sends tryAcquire with syncedEvalNoRetry.
    return {Eval("try_acquire", {config().lock_name}, {std::to_string(args.permits)}),
            "try_acquire", version() == RedissonVersion::k3136};
  }

  Check ReadAttempt(const Reply& reply, const AcquireArgs& args, OpResult* result) override {
    if (reply.type == Reply::Type::kInteger && reply.integer == 1) {
      *result = OpResult::OkValue(args.permits, "acquired " + std::to_string(args.permits) + " permit(s)");
      return Check::kPassed;
    }
    if (reply.type == Reply::Type::kInteger && reply.integer == 0) {
      *result = OpResult::Fail("not enough permits");
      return Check::kNotYet;
    }
    *result = OpResult::Fail("unexpected reply to try_acquire (want 1 or 0): " + reply.Quoted());
    return Check::kFailed;
  }

  OpResult::Status AttemptTimeoutStatus() const override {
    return OpResult::Status::kInfo;  // The script may have taken the permits.
  }

  bool CheckAfterLastWait() const override { return false; }

  void OnMessage(const std::string& payload, int refs, LocalLatch* latch) override {
    int64_t count = 0;
    if (!ParseInt64(payload, &count)) return;
    // SemaphorePubSub.onMessage: release(min(acquired(), count)) since 3.15.6; release(count)
    // in 3.13.6. A count <= 0 (after reducePermits) would make Java's release() throw.
    const int64_t add =
        version() == RedissonVersion::k3136 ? count : std::min<int64_t>(refs, count);
    if (add > 0) latch->permits += add;
  }

  bool TryPass(const AcquireArgs& args, LocalLatch* latch) override {
    // 3.13.6 waits with latch.acquire(permits) / tryAcquire(permits, time); current takes one.
    const int64_t need = version() == RedissonVersion::k3136 ? args.permits : 1;
    if (latch->permits < need) return false;
    latch->permits -= need;
    return true;
  }

  void OnAcquired(int thread, const AcquireArgs& args) override {
    At(thread).acquired.push_back(args.permits);
  }

  std::optional<Command> Release(int thread, OpResult* immediate) override {
    PerThread& t = At(thread);
    int64_t permits = 1;
    if (!t.acquired.empty()) {
      permits = t.acquired.back();
      t.acquired.pop_back();
    }
    t.releasing = permits;
    if (permits == 0) {
      *immediate = OpResult::OkValue(0, "released 0 permits (no command)");
      return std::nullopt;
    }
    // 3.13.6 resends; current sends release with syncedEvalNoRetry.
    return Command{Eval("release", {config().lock_name, channel_},
                        {std::to_string(permits), "publish"}),
                   "release", version() == RedissonVersion::k3136};
  }

  OpResult ReadRelease(int thread, const Reply& reply) override {
    (void)reply;  // EVAL_VOID.
    const int64_t permits = At(thread).releasing;
    return OpResult::OkValue(permits, "released " + std::to_string(permits) + " permit(s)");
  }

  std::optional<Command> ForceUnlock(OpResult* immediate) override {
    *immediate = OpResult::Fail("UnsupportedOperationException: RSemaphore has no forceUnlock");
    return std::nullopt;
  }

  std::optional<Command> Extra(ExtraOp op, OpResult* immediate) override {
    (void)immediate;
    // As release: 3.13.6 resends every script, current does not resend what may have run.
    const bool retry = version() == RedissonVersion::k3136;
    switch (op) {
      case ExtraOp::kAddPermits:
      case ExtraOp::kReducePermits:
        return Command{Eval("add_permits", {config().lock_name, channel_},
                            {op == ExtraOp::kAddPermits ? "1" : "-1", "publish"}),
                       "add_permits", retry};
      case ExtraOp::kTrySetPermits: return Init();
      case ExtraOp::kDrainPermits:
        return Command{Eval("drain_permits", {config().lock_name}, {}), "drain_permits", retry};
    }
    return std::nullopt;
  }

  OpResult ReadExtra(ExtraOp op, const Reply& reply) override {
    switch (op) {
      case ExtraOp::kAddPermits: return OpResult::Ok("added 1 permit");    // EVAL_VOID.
      case ExtraOp::kReducePermits: return OpResult::Ok("reduced by 1 permit");
      case ExtraOp::kTrySetPermits:
        if (reply.type == Reply::Type::kInteger) {
          return OpResult::OkValue(reply.integer, reply.integer == 1 ? "permits set" : "already set");
        }
        break;
      case ExtraOp::kDrainPermits: {
        // The stored count comes back as a bulk string, or integer 0 without a key; Redisson's
        // integer decoder takes both.
        int64_t drained = 0;
        if (reply.type == Reply::Type::kInteger) {
          return OpResult::OkValue(reply.integer, "drained " + std::to_string(reply.integer) + " permit(s)");
        }
        if (reply.type == Reply::Type::kBulk && ParseInt64(reply.str, &drained)) {
          return OpResult::OkValue(drained, "drained " + std::to_string(drained) + " permit(s)");
        }
        break;
      }
    }
    return OpResult::Fail("unexpected reply: " + reply.Quoted());
  }

  void OnCrash() override { threads_.assign(threads_.size(), PerThread{}); }

 private:
  struct PerThread {
    std::vector<int64_t> acquired;  // Permits of each acquisition not yet released.
    int64_t releasing = 0;
  };

  PerThread& At(int thread) {
    assert(thread >= 0 && thread < config().threads);
    return threads_[static_cast<size_t>(thread)];
  }

  const std::string channel_;
  std::vector<PerThread> threads_;
};

}  // namespace

std::unique_ptr<LockProtocol> MakeSynchronizerClient(std::unique_ptr<SynchronizerKind> kind) {
  assert(kind != nullptr);
  return std::make_unique<SynchronizerClient>(std::move(kind));
}

std::string SemaphoreChannel(const std::string& name) { return PrefixName("redisson_sc", name); }

bool CheckSemaphoreConfig(const ClientConfig& config, const ScriptSet& scripts,
                          std::string* error) {
  if (!CheckRedissonConfig("semaphore", config, error)) return false;
  if (config.permits < 0) {
    *error = "semaphore: permits must be >= 0, not " + std::to_string(config.permits);
    return false;
  }
  std::string missing;
  if (!HasScripts(scripts, RequiredScripts("semaphore"), &missing)) {
    *error = "semaphore: " + missing;
    return false;
  }
  return true;
}

std::unique_ptr<LockProtocol> MakeSemaphore(const ClientConfig& config,
                                            const ScriptSet& scripts) {
  std::string error;
  const bool valid = CheckSemaphoreConfig(config, scripts, &error);
  assert(valid && "MakeSemaphore: see CheckSemaphoreConfig");
  (void)valid;
  return MakeSynchronizerClient(std::make_unique<SemaphoreKind>(config, scripts));
}

}  // namespace lockstep::locks
