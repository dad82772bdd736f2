// Redisson's read-write lock client, sans IO: the shared Redisson lock machine
// (redisson_common.h) with the read-write scripts, plus a thin layer that knows which side each
// thread holds (see rwlock.h). The layers:
//
//  1. RwLockKind: the scripts' argument lists. Which side an acquire takes comes with its
//     AcquireArgs; which side an unlock, a forceUnlock or a watchdog tick acts on is read from
//     the hold bookkeeping below, which the shared machine cannot see.
//  2. RwLock: forwards every call to the shared machine through a CaptureOutbox that holds
//     back the machine's completions, books them (a hold taken, a hold given back, the 3.13.6
//     watchdog entry's contents) and only then passes them on to the driver.
#include "locks/rwlock/rwlock.h"

#include <cassert>
#include <deque>
#include <iterator>
#include <map>
#include <utility>
#include <vector>

#include "locks/redisson_common.h"
#include "locks/scripts.h"

namespace lockstep::locks {

std::string RwLockChannel(const std::string& lock_name) {
  return PrefixName("redisson_rwlock", lock_name);
}

std::string SuffixName(const std::string& name, const std::string& suffix) {
  if (name.find('{') != std::string::npos) return name + ":" + suffix;
  return "{" + name + "}:" + suffix;
}

std::string RwLockTimeoutPrefix(const std::string& lock_name, const std::string& uuid,
                                int thread) {
  return SuffixName(lock_name, RLockField(uuid, thread)) + ":rwlock_timeout";
}

std::string RwLockKeyPrefix(const std::string& lock_name) {
  // RedissonReadLock.getKeyPrefix: the timeout prefix cut before ":<lockName>".
  if (lock_name.find('{') != std::string::npos) return lock_name;
  return "{" + lock_name + "}";
}

std::string RwLockWriteField(const std::string& uuid, int thread) {
  return RLockField(uuid, thread) + ":write";
}

namespace {

enum class Side : uint8_t { kRead, kWrite };

class RwLockKind final : public RedissonLockKind {
 public:
  RwLockKind(const ClientConfig& config, const ScriptSet& scripts)
      : RedissonLockKind(config, scripts),
        channel_(RwLockChannel(config.lock_name)),
        key_prefix_(RwLockKeyPrefix(config.lock_name)),
        threads_(static_cast<size_t>(config.threads)) {}

  // ---- RedissonLockKind ---------------------------------------------------------------------

  Script Attempt(Outbox& out, int thread, const AcquireArgs& args, int64_t lease_ms) override {
    (void)out;
    const std::string& field = Field(thread);
    // Made only when the thread's lease is not the one its kept command carries.
    const auto read = [&] {
      std::string timeouts = RwLockTimeoutPrefix(config().lock_name, config().uuid, thread);
      return Eval("read_acquire", {config().lock_name, std::move(timeouts)},
                  {std::to_string(lease_ms), field, field + ":write"});
    };
    const auto write = [&] {
      return Eval("write_acquire", {config().lock_name},
                  {std::to_string(lease_ms), field + ":write"});
    };
    if (args.shared) return {read_attempts_.Get(thread, lease_ms, read), "read_acquire"};
    return {write_attempts_.Get(thread, lease_ms, write), "write_acquire"};
  }

  std::string NotAcquired(int64_t reply) const override {
    return "not acquired: held by another (pttl " + std::to_string(reply) + " ms)";
  }

  std::string Channel(int thread) const override {
    (void)thread;
    return channel_;  // Both sides, every thread: one entry per process ("<uuid>:<name>").
  }

  Argv Unlock(Outbox& out, int thread, int64_t lease_ms, const std::string& latch) override {
    (void)out;
    const std::string& name = config().lock_name;
    const bool v3136 = version() == RedissonVersion::k3136;
    const std::string latch_ttl = std::to_string(RedissonLatchTtlMs(config()));
    if (At(thread).op_side == Side::kRead) {
      const std::string& field = Field(thread);
      const std::string timeouts = RwLockTimeoutPrefix(name, config().uuid, thread);
      if (v3136) {
        return Eval("read_unlock", {name, channel_, timeouts, key_prefix_},
                    {kUnlockMessage, field});
      }
      return Eval("read_unlock", {name, channel_, timeouts, key_prefix_, latch},
                  {kUnlockMessage, field, "publish", latch_ttl});
    }
    // The write unlock publishes READ_UNLOCK_MESSAGE: every waiting thread wakes.
    const std::string field = RwLockWriteField(config().uuid, thread);
    if (v3136) {
      return Eval("write_unlock", {name, channel_},
                  {kReadUnlockMessage, std::to_string(lease_ms), field});
    }
    return Eval("write_unlock", {name, channel_, latch},
                {kReadUnlockMessage, std::to_string(lease_ms), field, "publish", latch_ttl});
  }

  Argv ForceUnlock(Outbox& out) override {
    (void)out;
    const bool v3136 = version() == RedissonVersion::k3136;
    if (force_side_ == Side::kRead) {
      return v3136 ? Eval("force_unlock_read", {config().lock_name, channel_}, {kUnlockMessage})
                   : Eval("force_unlock_read", {config().lock_name, channel_},
                          {kUnlockMessage, "publish"});
    }
    return v3136 ? Eval("force_unlock_write", {config().lock_name, channel_},
                        {kReadUnlockMessage})
                 : Eval("force_unlock_write", {config().lock_name, channel_},
                        {kReadUnlockMessage, "publish"});
  }

  Argv Renew(int thread, int64_t lease_ms) const override {
    const std::string lease = std::to_string(lease_ms);
    if (version() == RedissonVersion::k3136) {
      // The chain belongs to the lock object that created the entry; it renews the entry's
      // first thread with that object's script.
      const Side side = renewal_counts_.empty() ? LastSide(thread) : renewal_side_;
      if (side == Side::kRead) {
        return Eval("read_renew", {config().lock_name, key_prefix_},
                    {lease, Field(thread)});
      }
      return Eval("renew", {config().lock_name},
                  {lease, RwLockWriteField(config().uuid, thread)});
    }
    if (HoldsWatchdog(thread, Side::kRead)) {
      // ReadLockTask: one lock, with every lockName of this process that reads under the
      // watchdog; only their own timeout keys are renewed.
      std::vector<std::string> args = {lease, ""};
      int readers = 0;
      for (int t = 0; t < config().threads; ++t) {
        if (!HoldsWatchdog(t, Side::kRead)) continue;
        args.push_back(RLockField(config().uuid, t));
        ++readers;
      }
      args[1] = std::to_string(readers);
      return Eval("read_renew", {config().lock_name, key_prefix_}, args);
    }
    return Eval("renew", {config().lock_name}, {lease, RwLockWriteField(config().uuid, thread)});
  }

  // ---- Hold bookkeeping (called by RwLock around each call into the shared machine) --------

  void BeginAcquire(int thread, const AcquireArgs& args) {
    ThreadHolds& t = At(thread);
    t.op = Op::kAcquire;
    t.op_side = args.shared ? Side::kRead : Side::kWrite;
    t.op_watchdog = !ExplicitLease(args);
    t.last_acquire_side = t.op_side;
  }

  void BeginRelease(int thread) {
    ThreadHolds& t = At(thread);
    t.op = Op::kRelease;
    t.op_side = LastSide(thread);
  }

  void BeginForceUnlock(int thread) {
    ThreadHolds& t = At(thread);
    t.op = Op::kForceUnlock;
    t.op_side = LastSide(thread);
    force_side_ = t.op_side;
    renewal_counts_.clear();  // forceUnlockAsync: cancelExpirationRenewal(null).
  }

  // The shared machine ended the thread's operation with `result`.
  void OnComplete(int thread, const OpResult& result) {
    ThreadHolds& t = At(thread);
    const Op op = t.op;
    t.op = Op::kNone;
    switch (op) {
      case Op::kAcquire:
        if (result.status != OpResult::Status::kOk) return;
        t.holds.push_back(Hold{t.op_side, t.op_watchdog});
        if (t.op_watchdog) {
          // scheduleExpirationRenewal: a new entry belongs to this side's lock object.
          if (renewal_counts_.empty()) renewal_side_ = t.op_side;
          renewal_counts_[thread] += 1;
        }
        return;
      case Op::kRelease: {
        // unlockAsync cancels one renewal acquisition of the thread whatever the outcome.
        const auto it = renewal_counts_.find(thread);
        if (it != renewal_counts_.end() && --it->second == 0) renewal_counts_.erase(it);
        if (result.status == OpResult::Status::kFail) {
          // Not held (or an error): whatever the thread believed it held on this side is gone.
          std::vector<Hold> kept;
          for (const Hold& hold : t.holds) {
            if (hold.side != t.op_side) kept.push_back(hold);
          }
          t.holds.swap(kept);
          return;
        }
        for (auto hold = t.holds.rbegin(); hold != t.holds.rend(); ++hold) {
          if (hold->side != t.op_side) continue;
          t.holds.erase(std::next(hold).base());
          break;
        }
        return;
      }
      case Op::kForceUnlock:
        if (result.status == OpResult::Status::kOk && result.has_value && result.value == 1) {
          for (ThreadHolds& other : threads_) other.holds.clear();  // The hash is gone.
        }
        return;
      case Op::kNone:
        assert(false && "a completion for a thread without an operation");
        return;
    }
  }

  void OnCrash() {
    threads_.assign(threads_.size(), ThreadHolds{});
    renewal_counts_.clear();
  }

 private:
  enum class Op : uint8_t { kNone, kAcquire, kRelease, kForceUnlock };

  SameAttempts read_attempts_, write_attempts_;

  struct Hold {
    Side side = Side::kWrite;
    bool watchdog = false;  // Taken without a lease: the watchdog renews it.
  };

  struct ThreadHolds {
    std::vector<Hold> holds;  // Oldest first.
    Side last_acquire_side = Side::kWrite;
    Op op = Op::kNone;
    Side op_side = Side::kWrite;
    bool op_watchdog = false;
  };

  ThreadHolds& At(int thread) {
    assert(thread >= 0 && thread < config().threads);
    return threads_[static_cast<size_t>(thread)];
  }
  const ThreadHolds& At(int thread) const {
    assert(thread >= 0 && thread < config().threads);
    return threads_[static_cast<size_t>(thread)];
  }

  // The side of the thread's most recent hold, else of its last acquire.
  Side LastSide(int thread) const {
    const ThreadHolds& t = At(thread);
    return t.holds.empty() ? t.last_acquire_side : t.holds.back().side;
  }

  bool HoldsWatchdog(int thread, Side side) const {
    for (const Hold& hold : At(thread).holds) {
      if (hold.side == side && hold.watchdog) return true;
    }
    return false;
  }

  bool ExplicitLease(const AcquireArgs& args) const {
    // As the shared machine decides it: 3.13.6 leaseTime != -1, current leaseTime > 0.
    return ApiValueGiven(version() == RedissonVersion::k3136, args.lease_us);
  }

  const std::string channel_;
  const std::string key_prefix_;
  std::vector<ThreadHolds> threads_;
  Side force_side_ = Side::kWrite;
  // 3.13.6: the process's renewal entry as the shared machine keeps it (thread -> watchdog
  // acquisitions not yet matched by an unlock), and the side whose acquisition created it.
  std::map<int, int> renewal_counts_;
  Side renewal_side_ = Side::kWrite;
};

class RwLock final : public LockProtocol {
 public:
  RwLock(const ClientConfig& config, const ScriptSet& scripts) {
    auto kind = std::make_unique<RwLockKind>(config, scripts);
    kind_ = kind.get();
    machine_ = MakeRedissonLockClient(std::move(kind));
  }

  void Acquire(Outbox& out, int thread, const AcquireArgs& args) override {
    kind_->BeginAcquire(thread, args);
    machine_->Acquire(Bind(out), thread, args);
    Drain(out);
  }

  void Release(Outbox& out, int thread) override {
    kind_->BeginRelease(thread);
    machine_->Release(Bind(out), thread);
    Drain(out);
  }

  void ForceUnlock(Outbox& out, int thread) override {
    kind_->BeginForceUnlock(thread);
    machine_->ForceUnlock(Bind(out), thread);
    Drain(out);
  }

  void OnReply(Outbox& out, RequestId request, const Reply& reply) override {
    machine_->OnReply(Bind(out), request, reply);
    Drain(out);
  }

  void OnMessage(Outbox& out, int node, const std::string& channel,
                 const std::string& payload) override {
    machine_->OnMessage(Bind(out), node, channel, payload);
    Drain(out);
  }

  void OnTimer(Outbox& out, TimerId timer) override {
    machine_->OnTimer(Bind(out), timer);
    Drain(out);
  }

  void OnCrash() override {
    machine_->OnCrash();
    kind_->OnCrash();
    capture_.completions.clear();
  }

 private:
  // The driver's Outbox, except that completions wait in `completions` until Drain. Request
  // and timer ids come from this object's own counters: the machine is its only user, so
  // they are unique for the driver too.
  class CaptureOutbox final : public Outbox {
   public:
    int64_t MonoUs() override { return real->MonoUs(); }
    int64_t WallMs() override { return real->WallMs(); }
    Prng& Rng() override { return real->Rng(); }
    int NodeCount() override { return real->NodeCount(); }
    void DoSend(int node, RequestId request, SharedArgv argv, const std::string& label,
                int thread) override {
      real->Send(node, request, std::move(argv), label, thread);
    }
    void ArmTimer(TimerId timer, int64_t delay_us) override { real->ArmTimer(timer, delay_us); }
    void CancelTimer(TimerId timer) override { real->CancelTimer(timer); }
    void Complete(int thread, const OpResult& result) override {
      completions.emplace_back(thread, result);
    }

    Outbox* real = nullptr;
    std::deque<std::pair<int, OpResult>> completions;
  };

  Outbox& Bind(Outbox& out) {
    capture_.real = &out;
    return capture_;
  }

  // Books the machine's completions, then reports them (the machine's state is final by now).
  void Drain(Outbox& out) {
    while (!capture_.completions.empty()) {
      auto [thread, result] = std::move(capture_.completions.front());
      capture_.completions.pop_front();
      kind_->OnComplete(thread, result);
      out.Complete(thread, result);
    }
  }

  RwLockKind* kind_ = nullptr;  // Owned by machine_.
  std::unique_ptr<LockProtocol> machine_;
  CaptureOutbox capture_;
};

}  // namespace

bool CheckRwLockConfig(const ClientConfig& config, const ScriptSet& scripts,
                       std::string* error) {
  if (!CheckRedissonConfig("rwlock", config, error)) return false;
  std::string missing;
  if (!HasScripts(scripts, RequiredScripts("rwlock"), &missing)) {
    *error = "rwlock: " + missing;
    return false;
  }
  return true;
}

std::unique_ptr<LockProtocol> MakeRwLock(const ClientConfig& config, const ScriptSet& scripts) {
  std::string error;
  const bool valid = CheckRwLockConfig(config, scripts, &error);
  assert(valid && "MakeRwLock: see CheckRwLockConfig");
  (void)valid;
  return std::make_unique<RwLock>(config, scripts);
}

}  // namespace lockstep::locks
