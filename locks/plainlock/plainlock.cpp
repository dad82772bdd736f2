// Plain single-key locks, sans IO. One command in flight per thread at most, so the state is
// per thread: the phase says which reply it waits for, `timer` is either that command's
// response timeout or the sleep before the next attempt.
#include "locks/plainlock/plainlock.h"

#include <cassert>
#include <map>
#include <utility>
#include <vector>

#include "locks/scripts.h"

namespace lockstep::locks {
namespace {

constexpr int kThreadsMax = 1 << 16;

enum class Kind : uint8_t { kSetnxPx, kSetnxExpire, kGetDel };

Kind KindOf(const std::string& kind) {
  if (kind == "setnx-expire") return Kind::kSetnxExpire;
  if (kind == "get-del") return Kind::kGetDel;
  return Kind::kSetnxPx;
}

class PlainLock final : public LockProtocol {
 public:
  PlainLock(Kind kind, const ClientConfig& config, const ScriptSet& scripts)
      : kind_(kind), config_(config), threads_(static_cast<size_t>(config.threads)) {
    const auto unlock = scripts.bodies.find("unlock_compare_and_delete");
    if (unlock != scripts.bodies.end()) unlock_body_ = unlock->second;
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
    const std::string token = PlainLockToken(config_.uuid, thread);
    if (kind_ == Kind::kGetDel) {
      t.phase = Phase::kGetting;
      Send(out, thread, {"GET", config_.lock_name}, "get");
    } else {
      t.phase = Phase::kUnlocking;
      Send(out, thread, {"EVAL", unlock_body_, "1", config_.lock_name, token}, "unlock");
    }
    Flush(out);
  }

  void ForceUnlock(Outbox& out, int thread) override {
    Thread& t = At(thread);
    assert(t.phase == Phase::kIdle && "one operation at a time per thread");
    t = Thread{};
    t.phase = Phase::kForceUnlocking;
    Send(out, thread, {"DEL", config_.lock_name}, "force_unlock");
    Flush(out);
  }

  void OnReply(Outbox& out, RequestId request, const Reply& reply) override {
    const auto it = requests_.find(request);
    if (it == requests_.end()) return;  // Timed out, or from before a crash.
    const int thread = it->second;
    requests_.erase(it);
    Thread& t = threads_[static_cast<size_t>(thread)];
    assert(t.request == request);
    t.request = 0;
    DisarmTimer(out, &t.timer);
    OnAnswer(out, thread, &reply);
    Flush(out);
  }

  void OnMessage(Outbox& out, int node, const std::string& channel,
                 const std::string& payload) override {
    (void)out;
    (void)node;
    (void)channel;
    (void)payload;  // Plain locks subscribe to nothing.
  }

  void OnTimer(Outbox& out, TimerId timer) override {
    const auto it = timers_.find(timer);
    if (it == timers_.end()) return;
    const int thread = it->second;
    timers_.erase(it);
    Thread& t = threads_[static_cast<size_t>(thread)];
    assert(t.timer == timer);
    t.timer = 0;
    if (t.phase == Phase::kSleeping) {
      SendAttempt(out, thread);
    } else {
      // The response timeout: a reply to this request is ignored from now on.
      requests_.erase(t.request);
      t.request = 0;
      OnAnswer(out, thread, nullptr);
    }
    Flush(out);
  }

  void OnCrash() override {
    threads_.assign(static_cast<size_t>(config_.threads), Thread{});
    requests_.clear();
    timers_.clear();
    completions_.clear();
  }

 private:
  enum class Phase : uint8_t {
    kIdle,
    kAttempting,      // SET NX PX, or SETNX.
    kExpiring,        // setnx-expire: the EXPIRE after a successful SETNX.
    kSleeping,        // Between two attempts.
    kUnlocking,       // The compare-and-delete script.
    kGetting,         // get-del: the GET.
    kDeleting,        // get-del: the DEL after a matching GET.
    kForceUnlocking,
  };

  struct Thread {
    Phase phase = Phase::kIdle;
    AcquireArgs args;
    int64_t start_us = 0;
    RequestId request = 0;
    TimerId timer = 0;
    std::string label;  // Of the command in flight, for the timeout message.
  };

  Thread& At(int thread) {
    assert(thread >= 0 && thread < config_.threads);
    return threads_[static_cast<size_t>(thread)];
  }

  int64_t TtlMs(const AcquireArgs& args) const {
    const int64_t ttl_ms =
        args.lease_us > 0 ? args.lease_us / 1000 : config_.watchdog_timeout_us / 1000;
    return ttl_ms < 1 ? 1 : ttl_ms;  // PX 0 is an error.
  }

  void Send(Outbox& out, int thread, const Argv& argv, const std::string& label) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    t.request = out.NewRequestId();
    t.label = label;
    requests_[t.request] = thread;
    t.timer = ArmTimer(out, thread, config_.timeout_us);
    out.Send(0, t.request, argv, label, thread);
  }

  TimerId ArmTimer(Outbox& out, int thread, int64_t delay_us) {
    const TimerId timer = out.NewTimerId();
    timers_[timer] = thread;
    out.ArmTimer(timer, delay_us);
    return timer;
  }

  void DisarmTimer(Outbox& out, TimerId* timer) {
    if (*timer == 0) return;
    timers_.erase(*timer);
    out.CancelTimer(*timer);
    *timer = 0;
  }

  void SendAttempt(Outbox& out, int thread) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    t.phase = Phase::kAttempting;
    const std::string token = PlainLockToken(config_.uuid, thread);
    if (kind_ == Kind::kSetnxExpire) {
      Send(out, thread, {"SETNX", config_.lock_name, token}, "setnx");
    } else {
      Send(out, thread,
           {"SET", config_.lock_name, token, "NX", "PX", std::to_string(TtlMs(t.args))},
           "acquire");
    }
  }

  // Not acquired this time: sleep and try again, or give up.
  void Retry(Outbox& out, int thread) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    int64_t sleep_us = kPlainRetrySleepUs;
    switch (t.args.mode) {
      case AcquireArgs::Mode::kTryLockNoWait:
        End(thread, OpResult::Fail("not acquired: held by another"));
        return;
      case AcquireArgs::Mode::kTryLock: {
        const int64_t left_us = t.args.wait_us - (out.MonoUs() - t.start_us);
        if (left_us <= 0) {
          End(thread, OpResult::Fail("wait time elapsed"));
          return;
        }
        if (left_us < sleep_us) sleep_us = left_us;
        break;
      }
      case AcquireArgs::Mode::kLock:
        break;
    }
    t.phase = Phase::kSleeping;
    t.timer = ArmTimer(out, thread, sleep_us);
  }

  // A reply to the thread's command, or (reply == nullptr) its response timeout.
  void OnAnswer(Outbox& out, int thread, const Reply* reply) {
    Thread& t = threads_[static_cast<size_t>(thread)];
    if (reply == nullptr) {
      End(thread, OpResult::Info("timeout: no reply to " + t.label + " within " +
                       std::to_string(config_.timeout_us / 1000) + " ms"));
      return;
    }
    if (reply->is_error()) {
      // An acquisition whose SETNX took the key but whose EXPIRE failed holds the lock.
      End(thread, t.phase == Phase::kExpiring ? OpResult::Info(t.label + ": " + reply->str)
                                              : OpResult::Fail(reply->str));
      return;
    }
    const std::string token = PlainLockToken(config_.uuid, thread);
    switch (t.phase) {
      case Phase::kAttempting:
        if (kind_ == Kind::kSetnxExpire) {
          if (reply->type == Reply::Type::kInteger && reply->integer == 1) {
            // The window: the key exists with no TTL until this EXPIRE executes.
            t.phase = Phase::kExpiring;
            const int64_t ttl_s = (TtlMs(t.args) + 999) / 1000;
            Send(out, thread, {"EXPIRE", config_.lock_name, std::to_string(ttl_s)}, "expire");
          } else {
            Retry(out, thread);
          }
        } else if (reply->type == Reply::Type::kStatus) {
          End(thread, OpResult::Ok("acquired"));
        } else {
          Retry(out, thread);  // Null: NX found the key.
        }
        return;
      case Phase::kExpiring:
        // The code this models ignores EXPIRE's answer (0 would mean the key vanished).
        End(thread, OpResult::Ok(reply->type == Reply::Type::kInteger && reply->integer == 1
                           ? "acquired"
                           : "acquired (EXPIRE found no key: " + reply->Quoted() + ")"));
        return;
      case Phase::kUnlocking:
        if (reply->type == Reply::Type::kInteger && reply->integer == 1) {
          End(thread, OpResult::OkValue(1, "released"));
        } else {
          End(thread, OpResult::Fail("not released: the key is missing or holds another token (" +
                           reply->Quoted() + ")"));
        }
        return;
      case Phase::kGetting:
        if (reply->type == Reply::Type::kBulk && reply->str == token) {
          // The window: the key may expire and be taken by another client before DEL runs.
          t.phase = Phase::kDeleting;
          Send(out, thread, {"DEL", config_.lock_name}, "del");
        } else {
          End(thread, OpResult::Fail("not released: GET returned " + reply->Quoted()));
        }
        return;
      case Phase::kDeleting:
        // The code this models reports success either way. DEL 0 (the key expired between
        // GET and DEL) carries no value: 0 would read as "still held".
        if (reply->type == Reply::Type::kInteger && reply->integer == 1) {
          End(thread, OpResult::OkValue(1, "released"));
        } else {
          End(thread, OpResult::Ok("released (DEL found no key)"));
        }
        return;
      case Phase::kForceUnlocking: {
        const int64_t deleted = reply->type == Reply::Type::kInteger ? reply->integer : 0;
        End(thread, OpResult::OkValue(deleted, deleted == 1 ? "deleted" : "no key"));
        return;
      }
      case Phase::kIdle:
      case Phase::kSleeping:
        assert(false && "a reply for a thread that sent nothing");
        return;
    }
  }

  void End(int thread, OpResult result) {
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

  const Kind kind_;
  const ClientConfig config_;
  std::string unlock_body_;
  std::vector<Thread> threads_;
  std::map<RequestId, int> requests_;
  std::map<TimerId, int> timers_;
  std::vector<std::pair<int, OpResult>> completions_;
};

}  // namespace

bool IsPlainLockKind(const std::string& kind) {
  return kind == "setnx-px" || kind == "setnx-expire" || kind == "get-del";
}

std::string PlainLockToken(const std::string& uuid, int thread) {
  return uuid + ":" + std::to_string(thread + 1);
}

bool CheckPlainLockConfig(const std::string& kind, const ClientConfig& config,
                          const ScriptSet& scripts, std::string* error) {
  if (!IsPlainLockKind(kind)) {
    *error = "plain lock: unknown kind '" + kind + "' (want setnx-px, setnx-expire or get-del)";
    return false;
  }
  if (config.threads < 1 || config.threads > kThreadsMax) {
    *error = kind + ": threads must be 1.." + std::to_string(kThreadsMax) + ", not " +
             std::to_string(config.threads);
    return false;
  }
  if (config.timeout_us < 1000 || config.watchdog_timeout_us < 1000) {
    *error = kind + ": need timeout >= 1 ms and watchdog timeout >= 1 ms";
    return false;
  }
  std::string missing;
  if (!HasScripts(scripts, RequiredScripts(kind), &missing)) {
    *error = kind + ": " + missing;
    return false;
  }
  if (kind != "get-del" && scripts.bodies.count("unlock_compare_and_delete") == 0) {
    *error = kind + ": missing script(s): unlock_compare_and_delete";
    return false;
  }
  return true;
}

std::unique_ptr<LockProtocol> MakePlainLock(const std::string& kind, const ClientConfig& config,
                                            const ScriptSet& scripts) {
  std::string error;
  const bool valid = CheckPlainLockConfig(kind, config, scripts, &error);
  assert(valid && "MakePlainLock: see CheckPlainLockConfig");
  (void)valid;
  return std::make_unique<PlainLock>(KindOf(kind), config, scripts);
}

}  // namespace lockstep::locks
