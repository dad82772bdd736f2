// RedissonMultiLock / RedissonRedLock, sans IO, composed of one unchanged RLock state machine
// per node (see redlock.h). The layers:
//
//  1. MemberOutbox: what member i talks to. It sends to slot i, encodes the member's own request
//     and timer ids as id * (n + 1) + i so that one driver Outbox can carry all of them, and
//     queues the member's completions instead of acting on them inside the member's call.
//  2. The per-thread tryLock loop (RedissonMultiLock.tryLock), advanced whenever a member
//     operation ends (Drain runs after every call into a member).
//  3. This protocol's own commands (the PEXPIRE of the lease), with RLock's response timeout
//     and resends; their ids use slot n of the encoding.
#include "locks/redlock/redlock.h"

#include <algorithm>
#include <cassert>
#include <deque>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "locks/rlock/rlock.h"

namespace lockstep::locks {

int64_t RedLockValidityUs(int64_t ttl_us, int64_t elapsed_us) {
  const int64_t drift_us = ttl_us / 100 + 2000;  // CLOCK_DRIFT_FACTOR 0.01, plus 2 ms.
  return ttl_us - elapsed_us - drift_us;
}

namespace {

using Version = history::ProtocolVersion;

class MultiLock final : public LockProtocol {
 public:
  MultiLock(const ClientConfig& config, const ScriptSet& scripts, const MultiLockOptions& options)
      : config_(config),
        scripts_(scripts),
        options_(options),
        version_(config.version),
        threads_(static_cast<size_t>(config.threads)) {}

  void Acquire(Outbox& out, int thread, const AcquireArgs& args) override {
    Enter(out);
    Thread& t = At(thread);
    assert(t.phase == Phase::kIdle && "one operation at a time per thread");
    t = Thread{};
    t.args = args;
    if (args.mode == AcquireArgs::Mode::kLock && version_ == Version::k3136) {
      t.loop_wait_ms = LockLoopWaitMs(out, args.lease_us);  // Drawn once (3.13.6).
    }
    StartTry(out, thread);
    Leave(out);
  }

  void Release(Outbox& out, int thread) override {
    Enter(out);
    Thread& t = At(thread);
    assert(t.phase == Phase::kIdle && "one operation at a time per thread");
    t = Thread{};
    t.phase = Phase::kReleasing;
    t.results.assign(members_.size(), std::nullopt);
    t.pending = static_cast<int>(members_.size());
    for (size_t i = 0; i < members_.size(); ++i) {
      members_[i].lock->Release(*members_[i].outbox, thread);
    }
    Leave(out);
  }

  void ForceUnlock(Outbox& out, int thread) override {
    Enter(out);
    At(thread);
    Complete(thread,
             OpResult::Fail("UnsupportedOperationException: RedissonMultiLock has no forceUnlock"));
    Leave(out);
  }

  void OnReply(Outbox& out, RequestId request, const Reply& reply) override {
    if (members_.empty()) return;
    Bind(out);
    const uint64_t slot = request % stride_;
    if (slot == members_.size()) {
      OnOwnReply(out, request, reply);
    } else {
      Member& m = members_[slot];
      m.lock->OnReply(*m.outbox, request / stride_, reply);
    }
    Leave(out);
  }

  void OnMessage(Outbox& out, int node, const std::string& channel,
                 const std::string& payload) override {
    if (members_.empty() || node < 0 || node >= static_cast<int>(members_.size())) return;
    Bind(out);
    Member& m = members_[static_cast<size_t>(node)];
    m.lock->OnMessage(*m.outbox, 0, channel, payload);
    Leave(out);
  }

  void OnTimer(Outbox& out, TimerId timer) override {
    if (members_.empty()) return;
    Bind(out);
    const uint64_t slot = timer % stride_;
    if (slot == members_.size()) {
      OnOwnTimer(out, timer);
    } else {
      Member& m = members_[slot];
      m.lock->OnTimer(*m.outbox, timer / stride_);
    }
    Leave(out);
  }

  void OnCrash() override {
    for (Member& m : members_) m.lock->OnCrash();
    threads_.assign(static_cast<size_t>(config_.threads), Thread{});
    member_done_.clear();
    own_.clear();
    own_requests_.clear();
    own_timers_.clear();
    completions_.clear();
  }

 private:
  // ---- Members ------------------------------------------------------------------------------

  struct MemberDone {
    int member;
    int thread;
    OpResult result;
  };

  class MemberOutbox final : public Outbox {
   public:
    MemberOutbox(MultiLock* owner, uint64_t slot, uint64_t stride)
        : owner_(owner), slot_(slot), stride_(stride) {}
    void Bind(Outbox* real) { real_ = real; }
    int64_t MonoUs() override { return real_->MonoUs(); }
    int64_t WallMs() override { return real_->WallMs(); }
    Prng& Rng() override { return real_->Rng(); }
    int NodeCount() override { return 1; }
    void DoSend(int node, RequestId request, SharedArgv argv, const std::string& label,
                int thread) override {
      assert(node == 0);
      (void)node;
      real_->Send(static_cast<int>(slot_), request * stride_ + slot_, std::move(argv), label,
                  thread);
    }
    void ArmTimer(TimerId timer, int64_t delay_us) override {
      real_->ArmTimer(timer * stride_ + slot_, delay_us);
    }
    void CancelTimer(TimerId timer) override { real_->CancelTimer(timer * stride_ + slot_); }
    void Complete(int thread, const OpResult& result) override {
      owner_->member_done_.push_back(MemberDone{static_cast<int>(slot_), thread, result});
    }

   private:
    MultiLock* owner_;
    const uint64_t slot_;
    const uint64_t stride_;
    Outbox* real_ = nullptr;
  };

  struct Member {
    std::unique_ptr<MemberOutbox> outbox;
    std::unique_ptr<LockProtocol> lock;
  };

  // ---- Threads ------------------------------------------------------------------------------

  enum class Phase : uint8_t {
    kIdle,
    kMember,     // A member's tryLock is in flight.
    kUnlocking,  // unlockInner: members' unlocks in flight, then `then`.
    kExpiring,   // The lease's PEXPIREs are in flight.
    kReleasing,  // unlock(): every member's unlock in flight.
  };

  enum class Then : uint8_t {
    kMemberFailed,  // The timed-out member is unlocked; count it as failed.
    kRestart,       // Everything is unlocked; start again from the first member, or fail.
    kFail,          // Everything is unlocked; fail with fail_detail.
  };

  struct Thread {
    Phase phase = Phase::kIdle;
    AcquireArgs args;
    int64_t loop_wait_ms = 0;  // lock() in 3.13.6: the wait of every round.
    // One tryLock(wait, lease):
    bool has_wait = false;
    bool has_lease = false;
    int64_t lease_ms = -1;
    int64_t new_lease_ms = -1;   // What members are acquired with.
    int64_t remain_us = 0;       // remainTime.
    int64_t lock_wait_ms = 0;    // calcLockWaitTime(waitTime).
    int64_t mark_us = 0;         // "time".
    int64_t round_start_us = 0;  // For the validity: when this round's first member began.
    int failed_limit = 0;
    int next = 0;                // The iterator.
    std::vector<int> acquired;
    int pending = 0;             // Member unlocks, PEXPIREs or member releases outstanding.
    Then then = Then::kFail;
    std::string fail_detail;
    std::string success_detail;
    bool expire_failed = false;
    std::vector<std::optional<OpResult>> results;  // unlock(): per member.
  };

  Thread& At(int thread) {
    assert(thread >= 0 && thread < config_.threads);
    return threads_[static_cast<size_t>(thread)];
  }

  int Nodes() const { return static_cast<int>(members_.size()); }

  int FailedLocksLimit() const {
    const int n = Nodes();
    return options_.redlock ? n - (n / 2 + 1) : 0;
  }

  // lockInterruptibly's wait for each tryLock (`lease_us` as the caller gave it).
  int64_t LockLoopWaitMs(Outbox& out, int64_t lease_us) {
    const int64_t base_ms = static_cast<int64_t>(Nodes()) * 1500;
    const auto random = [&out](int64_t lo, int64_t hi) {  // nextLong(lo, hi): [lo, hi).
      return lo < hi ? out.Rng().UniformInt(lo, hi - 1) : lo;
    };
    // 3.13.6: leaseTime == -1; today: leaseTime <= 0.
    if (!ApiValueGiven(version_ == Version::k3136, lease_us)) return base_ms;
    const int64_t lease_ms = ToMillis(lease_us);
    if (lease_ms <= 2000) return 2000;
    return lease_ms <= base_ms ? random(lease_ms / 2, lease_ms) : random(base_ms, lease_ms);
  }

  // ---- Entry and exit -----------------------------------------------------------------------

  void Enter(Outbox& out) {
    if (members_.empty()) {
      const int n = out.NodeCount();
      assert(n >= 1);
      stride_ = static_cast<uint64_t>(n) + 1;
      for (int i = 0; i < n; ++i) {
        Member m;
        m.outbox = std::make_unique<MemberOutbox>(this, static_cast<uint64_t>(i), stride_);
        m.lock = MakeRLock(config_, scripts_);
        members_.push_back(std::move(m));
      }
    }
    Bind(out);
  }

  void Bind(Outbox& out) {
    for (Member& m : members_) m.outbox->Bind(&out);
  }

  // Acts on the members' completions (which may start more member operations), then reports
  // this protocol's own.
  void Leave(Outbox& out) {
    while (!member_done_.empty()) {
      MemberDone done = std::move(member_done_.front());
      member_done_.pop_front();
      OnMemberDone(out, done);
    }
    while (!completions_.empty()) {
      std::vector<std::pair<int, OpResult>> batch;
      batch.swap(completions_);
      for (const auto& [thread, result] : batch) out.Complete(thread, result);
    }
  }

  void Complete(int thread, OpResult result) {
    threads_[static_cast<size_t>(thread)] = Thread{};
    completions_.emplace_back(thread, std::move(result));
  }

  void OnMemberDone(Outbox& out, const MemberDone& done) {
    Thread& t = threads_[static_cast<size_t>(done.thread)];
    switch (t.phase) {
      case Phase::kMember:
        OnMemberAcquired(out, done.thread, done.member, done.result);
        return;
      case Phase::kUnlocking:
        if (--t.pending == 0) AfterUnlock(out, done.thread);
        return;
      case Phase::kReleasing:
        t.results[static_cast<size_t>(done.member)] = done.result;
        if (--t.pending == 0) FinishRelease(done.thread);
        return;
      case Phase::kIdle:
      case Phase::kExpiring:
        assert(false && "a member operation this thread did not start");
        return;
    }
  }

  // ---- tryLock ------------------------------------------------------------------------------

  void StartTry(Outbox& out, int thread) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    // tryLock(waitTime, leaseTime) as the caller passes them (see ApiValueGiven).
    int64_t wait_us = -1;
    int64_t lease_us = -1;
    switch (t.args.mode) {
      case AcquireArgs::Mode::kTryLockNoWait:
        break;  // tryLock() is tryLock(-1, -1).
      case AcquireArgs::Mode::kTryLock:
        wait_us = t.args.wait_us;
        lease_us = t.args.lease_us;
        break;
      case AcquireArgs::Mode::kLock:
        // lockInterruptibly passes a given lease on as toMillis(leaseTime) MILLISECONDS.
        lease_us = ApiValueGiven(version_ == Version::k3136, t.args.lease_us)
                       ? ToMillis(t.args.lease_us) * 1000
                       : -1;
        wait_us = (version_ == Version::k3136 ? t.loop_wait_ms
                                              : LockLoopWaitMs(out, t.args.lease_us)) *
                  1000;
        break;
    }
    const bool before_3_17_1 = version_ == Version::k3136;
    t.has_wait = ApiValueGiven(before_3_17_1, wait_us);
    t.has_lease = ApiValueGiven(before_3_17_1, lease_us);
    const int64_t wait_ms = ToMillis(wait_us);
    const int64_t lease_ms = ToMillis(lease_us);
    t.lease_ms = lease_ms;
    t.new_lease_ms = t.has_lease ? (t.has_wait ? wait_ms * 2 : lease_ms) : -1;
    const int64_t remain_ms = t.has_wait ? wait_ms : -1;
    t.remain_us = remain_ms * 1000;
    t.lock_wait_ms = options_.redlock ? std::max<int64_t>(remain_ms / Nodes(), 1) : remain_ms;
    t.failed_limit = FailedLocksLimit();
    t.acquired.clear();
    t.next = 0;
    t.fail_detail.clear();
    t.success_detail.clear();
    t.expire_failed = false;
    t.mark_us = out.MonoUs();
    t.round_start_us = t.mark_us;
    NextMember(out, thread);
  }

  void NextMember(Outbox& out, int thread) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    if (t.next == Nodes()) {
      Succeeded(out, thread);
      return;
    }
    const int member = t.next++;
    t.phase = Phase::kMember;
    AcquireArgs args;
    if (!t.has_wait && !t.has_lease) {
      args.mode = AcquireArgs::Mode::kTryLockNoWait;
    } else {
      // awaitTime = min(lockWaitTime, remainTime); remainTime is -1 without a wait, which
      // makes the member's tryLock a single attempt.
      args.mode = AcquireArgs::Mode::kTryLock;
      const int64_t remain_us = t.has_wait ? t.remain_us : -1000;
      args.wait_us = std::min(t.lock_wait_ms * 1000, remain_us);
      // newLeaseTime in MILLISECONDS: -1 is none; 3.13.6 computes 2 * waitTime for a given
      // lease, which a negative waitTime makes negative (the member's PEXPIRE deletes it).
      args.lease_us = t.has_lease ? t.new_lease_ms * 1000 : -1;
    }
    Member& m = members_[static_cast<size_t>(member)];
    m.lock->Acquire(*m.outbox, thread, args);
  }

  void OnMemberAcquired(Outbox& out, int thread, int done_member, const OpResult& result) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    const int member = t.next - 1;
    assert(member == done_member);
    (void)done_member;
    if (result.status == OpResult::Status::kInfo) {
      // RedisResponseTimeoutException: the attempt may have taken the lock (#1606).
      t.then = Then::kMemberFailed;
      UnlockMembers(out, thread, {member});
      return;
    }
    if (result.status == OpResult::Status::kOk) {
      t.acquired.push_back(member);
      CheckRemain(out, thread);
      return;
    }
    MemberFailed(out, thread);
  }

  void MemberFailed(Outbox& out, int thread) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    if (Nodes() - static_cast<int>(t.acquired.size()) == FailedLocksLimit()) {
      Succeeded(out, thread);  // The quorum: stop here.
      return;
    }
    if (t.failed_limit == 0) {
      t.then = Then::kRestart;
      UnlockMembers(out, thread, t.acquired);
      return;
    }
    t.failed_limit -= 1;
    CheckRemain(out, thread);
  }

  void CheckRemain(Outbox& out, int thread) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    if (t.has_wait) {
      const int64_t now_us = out.MonoUs();
      t.remain_us -= now_us - t.mark_us;
      t.mark_us = now_us;
      if (t.remain_us <= 0) {
        t.then = Then::kFail;
        t.fail_detail = "wait time elapsed";
        UnlockMembers(out, thread, t.acquired);
        return;
      }
    }
    NextMember(out, thread);
  }

  // unlockInner(locks): unlocks them all and waits for every answer, whatever it is.
  void UnlockMembers(Outbox& out, int thread, std::vector<int> members) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    t.phase = Phase::kUnlocking;
    t.pending = static_cast<int>(members.size());
    if (members.empty()) {
      AfterUnlock(out, thread);
      return;
    }
    for (const int member : members) {
      Member& m = members_[static_cast<size_t>(member)];
      m.lock->Release(*m.outbox, thread);
    }
  }

  void AfterUnlock(Outbox& out, int thread) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    switch (t.then) {
      case Then::kMemberFailed:
        MemberFailed(out, thread);
        return;
      case Then::kRestart:
        if (!t.has_wait) {
          EndTry(out, thread, false, "not acquired: a member lock is held by another");
          return;
        }
        t.failed_limit = FailedLocksLimit();
        t.acquired.clear();
        t.next = 0;
        t.round_start_us = out.MonoUs();
        CheckRemain(out, thread);
        return;
      case Then::kFail:
        EndTry(out, thread, false, t.fail_detail);
        return;
    }
  }

  // The loop ended with enough members.
  void Succeeded(Outbox& out, int thread) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    t.success_detail = "acquired on " + std::to_string(t.acquired.size()) + " of " +
                       std::to_string(Nodes()) + " nodes";
    const int64_t ttl_us = t.has_lease ? t.lease_ms * 1000 : config_.watchdog_timeout_us;
    const int64_t validity_us = RedLockValidityUs(ttl_us, out.MonoUs() - t.round_start_us);
    if (options_.check_validity) {
      if (validity_us <= 0) {
        t.then = Then::kFail;
        t.fail_detail = "not acquired: validity " + std::to_string(validity_us / 1000) +
                        " ms <= 0 (TTL " + std::to_string(ttl_us / 1000) + " ms, elapsed " +
                        std::to_string((out.MonoUs() - t.round_start_us) / 1000) + " ms)";
        UnlockMembers(out, thread, t.acquired);
        return;
      }
      t.success_detail += ", validity " + std::to_string(validity_us / 1000) + " ms";
    }
    if (!t.has_lease || t.acquired.empty()) {
      EndTry(out, thread, true, t.success_detail);
      return;
    }
    // expireAsync(leaseTime) on every acquired member, all awaited.
    t.phase = Phase::kExpiring;
    t.pending = static_cast<int>(t.acquired.size());
    for (const int member : t.acquired) {
      StartOwn(out, thread, member,
               {"PEXPIRE", config_.lock_name, std::to_string(t.lease_ms)});
    }
  }

  void EndTry(Outbox& out, int thread, bool acquired, const std::string& detail) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    if (!acquired && t.args.mode == AcquireArgs::Mode::kLock) {
      StartTry(out, thread);  // lock(): while (true) { if (tryLock(...)) return; }
      return;
    }
    Complete(thread,
             OpResult::Of(acquired ? OpResult::Status::kOk : OpResult::Status::kFail, detail));
  }

  void FinishRelease(int thread) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    int released = 0;
    int still_held = 0;
    std::optional<OpResult> first_bad;
    for (size_t i = 0; i < t.results.size(); ++i) {
      const OpResult& r = *t.results[i];
      if (r.status == OpResult::Status::kOk) {
        if (r.has_value && r.value == 1) released += 1;
        if (r.has_value && r.value == 0) still_held += 1;
      } else if (!first_bad) {
        first_bad = r;
        first_bad->detail = "node " + std::to_string(i) + ": " + r.detail;
      }
    }
    // The value in RLock's terms: 1 released (on some member), 0 still held (reentrant).
    OpResult result;
    result.has_value = released + still_held > 0;
    result.value = released > 0 ? 1 : 0;
    result.detail = "released on " + std::to_string(released) + " of " +
                    std::to_string(Nodes()) + " nodes";
    if (still_held > 0) result.detail += ", still held on " + std::to_string(still_held);
    if (first_bad && !options_.redlock) {
      // RedissonMultiLock.unlock(): syncUninterruptibly on each member's future, in order.
      result = *first_bad;
    } else if (first_bad) {
      result.detail += " (member errors ignored; first: " + first_bad->detail + ")";
    }
    Complete(thread, std::move(result));
  }

  // ---- Own commands (PEXPIRE) ---------------------------------------------------------------

  struct OwnCommand {
    int thread = 0;
    int member = 0;
    Argv argv;
    int attempt = 0;
    RequestId request = 0;
    TimerId timer = 0;
    bool in_delay = false;  // The timer is the retry delay, not the response timeout.
  };

  uint64_t OwnId() { return ++last_own_id_ * stride_ + members_.size(); }

  void StartOwn(Outbox& out, int thread, int member, Argv argv) {
    const uint64_t id = ++last_own_command_;
    OwnCommand& c = own_[id];
    c.thread = thread;
    c.member = member;
    c.argv = std::move(argv);
    TransmitOwn(out, id);
  }

  void TransmitOwn(Outbox& out, uint64_t id) {
    OwnCommand& c = own_.at(id);
    c.request = OwnId();
    own_requests_[c.request] = id;
    c.timer = OwnId();
    c.in_delay = false;
    own_timers_[c.timer] = id;
    out.ArmTimer(c.timer, config_.timeout_us);
    out.Send(c.member, c.request, c.argv, "expire", c.thread);
  }

  void OnOwnReply(Outbox& out, RequestId request, const Reply& reply) {
    const auto it = own_requests_.find(request);
    if (it == own_requests_.end()) return;
    const uint64_t id = it->second;
    own_requests_.erase(it);
    OwnCommand c = std::move(own_.at(id));
    own_.erase(id);
    own_timers_.erase(c.timer);
    out.CancelTimer(c.timer);
    OnExpireDone(c.thread, c.member, &reply);
  }

  void OnOwnTimer(Outbox& out, TimerId timer) {
    const auto it = own_timers_.find(timer);
    if (it == own_timers_.end()) return;
    const uint64_t id = it->second;
    own_timers_.erase(it);
    OwnCommand& c = own_.at(id);
    if (c.in_delay) {
      TransmitOwn(out, id);
      return;
    }
    own_requests_.erase(c.request);
    if (c.attempt < config_.retry_attempts) {
      c.attempt += 1;
      if (config_.retry_interval_us > 0) {
        c.timer = OwnId();
        c.in_delay = true;
        own_timers_[c.timer] = id;
        out.ArmTimer(c.timer, config_.retry_interval_us);
      } else {
        TransmitOwn(out, id);
      }
      return;
    }
    const OwnCommand done = std::move(c);
    own_.erase(id);
    OnExpireDone(done.thread, done.member, nullptr);
  }

  void OnExpireDone(int thread, int member, const Reply* reply) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    assert(t.phase == Phase::kExpiring);
    const std::string node = "node " + std::to_string(member);
    if (reply == nullptr) {
      t.expire_failed = true;
      t.fail_detail += "; PEXPIRE on " + node + ": RedisTimeoutException";
    } else if (reply->is_error()) {
      t.expire_failed = true;
      t.fail_detail += "; PEXPIRE on " + node + ": " + reply->str;
    } else if (!(reply->type == Reply::Type::kInteger && reply->integer == 1)) {
      t.success_detail += " (PEXPIRE found no lock on " + node + ")";  // Ignored, as Redisson.
    }
    if (--t.pending > 0) return;
    if (t.expire_failed) {
      // tryLock throws; the members stay locked until their 2 * wait lease runs out.
      Complete(thread, OpResult::Info("acquired, but setting the lease failed" + t.fail_detail));
      return;
    }
    Complete(thread, OpResult::Ok(t.success_detail));
  }

  const ClientConfig config_;
  const ScriptSet scripts_;
  const MultiLockOptions options_;
  const Version version_;

  std::vector<Member> members_;  // Made at the first operation.
  uint64_t stride_ = 1;
  std::vector<Thread> threads_;
  std::deque<MemberDone> member_done_;
  std::vector<std::pair<int, OpResult>> completions_;

  uint64_t last_own_command_ = 0;
  uint64_t last_own_id_ = 0;
  std::map<uint64_t, OwnCommand> own_;
  std::map<RequestId, uint64_t> own_requests_;
  std::map<TimerId, uint64_t> own_timers_;
};

}  // namespace

bool CheckMultiLockConfig(const ClientConfig& config, const ScriptSet& scripts,
                          std::string* error) {
  if (!CheckRLockConfig(config, scripts, error)) {
    *error = "multilock members: " + *error;
    return false;
  }
  return true;
}

std::unique_ptr<LockProtocol> MakeMultiLock(const ClientConfig& config, const ScriptSet& scripts,
                                            const MultiLockOptions& options) {
  std::string error;
  const bool valid = CheckMultiLockConfig(config, scripts, &error);
  assert(valid && "MakeMultiLock: see CheckMultiLockConfig");
  (void)valid;
  return std::make_unique<MultiLock>(config, scripts, options);
}

std::unique_ptr<LockProtocol> MakeRedLock(const ClientConfig& config, const ScriptSet& scripts) {
  MultiLockOptions options;
  options.redlock = true;
  options.check_validity = true;
  return MakeMultiLock(config, scripts, options);
}

}  // namespace lockstep::locks
