// Redisson's FencedLock, sans IO: RLock current behind an Outbox adapter that swaps the acquire
// script for the token script and keeps the tokens (see fencedlock.h).
#include "locks/fencedlock/fencedlock.h"

#include <cassert>
#include <iterator>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "locks/redisson_common.h"
#include "locks/rlock/rlock.h"
#include "locks/scripts.h"

namespace lockstep::locks {
namespace {

class FencedLock final : public LockProtocol {
 public:
  FencedLock(const ClientConfig& config, const ScriptSet& scripts)
      : config_(config),
        token_key_(FencedLockTokenKey(config.lock_name)),
        token_script_(scripts.bodies.at("acquire_with_token")),
        adapter_(this),
        ops_(static_cast<size_t>(config.threads), Op::kNone),
        tokens_(static_cast<size_t>(config.threads)) {
    // The inner RLock needs an "acquire" body; the adapter replaces the whole EVAL anyway.
    ScriptSet inner_scripts = scripts;
    inner_scripts.bodies["acquire"] = token_script_;
    inner_ = MakeRLock(config, inner_scripts);
  }

  void Acquire(Outbox& out, int thread, const AcquireArgs& args) override {
    Begin(out, thread, Op::kAcquire);
    AcquireArgs inner_args = args;
    // lockAndGetToken(leaseTime, unit) calls lockAndGetTokenAsync(): the lease is dropped.
    if (args.mode == AcquireArgs::Mode::kLock) inner_args.lease_us = -1;
    inner_->Acquire(adapter_, thread, inner_args);
  }

  void Release(Outbox& out, int thread) override {
    Begin(out, thread, Op::kRelease);
    inner_->Release(adapter_, thread);
  }

  void ForceUnlock(Outbox& out, int thread) override {
    Begin(out, thread, Op::kForceUnlock);
    inner_->ForceUnlock(adapter_, thread);
  }

  void OnReply(Outbox& out, RequestId request, const Reply& reply) override {
    adapter_.Bind(&out);
    const auto it = acquire_requests_.find(request);
    if (it == acquire_requests_.end()) {
      inner_->OnReply(adapter_, request, reply);
      return;
    }
    const int thread = it->second;
    acquire_requests_.erase(it);
    // {-1, token}: acquired (RLock wants nil); {pttl, -1}: not (RLock wants the PTTL). Like
    // Redisson, a first element of -1 means acquired whatever the second says.
    Reply translated = reply;
    if (reply.type == Reply::Type::kArray && reply.elements.size() == 2 &&
        reply.elements[0].type == Reply::Type::kInteger &&
        reply.elements[1].type == Reply::Type::kInteger) {
      if (reply.elements[0].integer == -1) {
        translated = Reply::Null();
        delivering_ = Delivery{thread, reply.elements[1].integer};
      } else {
        translated = Reply::Integer(reply.elements[0].integer);
      }
    }
    inner_->OnReply(adapter_, request, translated);
    delivering_.reset();
  }

  void OnMessage(Outbox& out, int node, const std::string& channel,
                 const std::string& payload) override {
    adapter_.Bind(&out);
    inner_->OnMessage(adapter_, node, channel, payload);
  }

  void OnTimer(Outbox& out, TimerId timer) override {
    adapter_.Bind(&out);
    inner_->OnTimer(adapter_, timer);
  }

  void OnCrash() override {
    inner_->OnCrash();
    acquire_requests_.clear();
    delivering_.reset();
    ops_.assign(ops_.size(), Op::kNone);
    tokens_.assign(tokens_.size(), {});
  }

  bool Token(int thread, int64_t* token) const override {
    if (thread < 0 || static_cast<size_t>(thread) >= tokens_.size()) return false;
    const std::vector<int64_t>& held = tokens_[static_cast<size_t>(thread)];
    if (held.empty()) return false;
    *token = held.back();
    return true;
  }

 private:
  enum class Op : uint8_t { kNone, kAcquire, kRelease, kForceUnlock };

  struct Delivery {
    int thread;
    int64_t token;
  };

  // What RLock talks to: the driver's Outbox, with the acquire EVAL rewritten and completions
  // seen first. Ids are this adapter's own (Outbox's counters) and reach the driver unchanged.
  class Adapter final : public Outbox {
   public:
    explicit Adapter(FencedLock* owner) : owner_(owner) {}
    void Bind(Outbox* real) { real_ = real; }
    int64_t MonoUs() override { return real_->MonoUs(); }
    int64_t WallMs() override { return real_->WallMs(); }
    Prng& Rng() override { return real_->Rng(); }
    int NodeCount() override { return real_->NodeCount(); }
    void DoSend(int node, RequestId request, SharedArgv argv, const std::string& label,
                int thread) override {
      if (label == "acquire") {
        real_->Send(node, request, owner_->TokenAcquire(request, *argv), label, thread);
      } else {
        real_->Send(node, request, std::move(argv), label, thread);
      }
    }
    void ArmTimer(TimerId timer, int64_t delay_us) override { real_->ArmTimer(timer, delay_us); }
    void CancelTimer(TimerId timer) override { real_->CancelTimer(timer); }
    void Complete(int thread, const OpResult& result) override {
      real_->Complete(thread, owner_->OnInnerComplete(thread, result));
    }

   private:
    FencedLock* owner_;
    Outbox* real_ = nullptr;
  };

  void Begin(Outbox& out, int thread, Op op) {
    assert(thread >= 0 && thread < config_.threads);
    adapter_.Bind(&out);
    ops_[static_cast<size_t>(thread)] = op;
  }

  // RLock's EVAL <acquire> 1 <lock> <leaseMs> <lockName> becomes
  // EVAL <acquire_with_token> 2 <lock> <token counter> <leaseMs> <lockName>.
  Argv TokenAcquire(RequestId request, const Argv& argv) {
    assert(argv.size() == 6 && argv[0] == "EVAL" && argv[2] == "1");
    const std::string& field = argv[5];
    const size_t colon = field.rfind(':');
    assert(colon != std::string::npos);
    acquire_requests_[request] = std::stoi(field.substr(colon + 1)) - 1;
    return {"EVAL", token_script_, "2", argv[3], token_key_, argv[4], argv[5]};
  }

  OpResult OnInnerComplete(int thread, const OpResult& result) {
    OpResult done = result;
    std::vector<int64_t>& held = tokens_[static_cast<size_t>(thread)];
    const Op op = ops_[static_cast<size_t>(thread)];
    ops_[static_cast<size_t>(thread)] = Op::kNone;
    switch (op) {
      case Op::kAcquire:
        // Attempts still unanswered are of no use any more: RLock ignores their replies.
        for (auto it = acquire_requests_.begin(); it != acquire_requests_.end();) {
          it = it->second == thread ? acquire_requests_.erase(it) : std::next(it);
        }
        if (done.status == OpResult::Status::kOk && delivering_ && delivering_->thread == thread) {
          held.push_back(delivering_->token);
          done.has_value = true;
          done.value = delivering_->token;
          done.detail += " (token " + std::to_string(delivering_->token) + ")";
        }
        break;
      case Op::kRelease:
        if (done.status == OpResult::Status::kFail ||
            (done.status == OpResult::Status::kOk && done.has_value && done.value == 1)) {
          held.clear();  // Not held, or fully released.
        } else if (done.status == OpResult::Status::kInfo ? !held.empty() : held.size() > 1) {
          held.pop_back();  // One level released (or maybe released: info).
        }
        break;
      case Op::kForceUnlock:
        if (done.status == OpResult::Status::kOk) {
          for (auto& thread_tokens : tokens_) thread_tokens.clear();
        }
        break;
      case Op::kNone:
        break;
    }
    return done;
  }

  const ClientConfig config_;
  const std::string token_key_;
  const std::string token_script_;
  Adapter adapter_;
  std::unique_ptr<LockProtocol> inner_;
  std::map<RequestId, int> acquire_requests_;  // Acquire attempts awaiting a reply: thread.
  std::optional<Delivery> delivering_;         // The token of the reply being delivered.
  std::vector<Op> ops_;
  std::vector<std::vector<int64_t>> tokens_;  // Per thread, one per hold, innermost last.
};

}  // namespace

std::string FencedLockTokenKey(const std::string& lock_name) {
  return PrefixName("redisson_lock_token", lock_name);
}

bool CheckFencedLockConfig(const ClientConfig& config, const ScriptSet& scripts,
                           std::string* error) {
  if (config.version != history::ProtocolVersion::kCurrent) {
    *error = "fencedlock: version '" + std::string(history::VersionName(config.version)) +
             "' has no FencedLock (Redisson added it in 3.19.0); use version current";
    return false;
  }
  std::string missing;
  if (!HasScripts(scripts, {"acquire_with_token", "unlock", "renew", "force_unlock"},
                  &missing)) {
    *error = "fencedlock: " + missing;
    return false;
  }
  ScriptSet inner = scripts;
  inner.bodies["acquire"] = scripts.bodies.at("acquire_with_token");
  if (!CheckRLockConfig(config, inner, error)) {
    *error = "fencedlock: " + *error;
    return false;
  }
  return true;
}

std::unique_ptr<LockProtocol> MakeFencedLock(const ClientConfig& config,
                                             const ScriptSet& scripts) {
  std::string error;
  const bool valid = CheckFencedLockConfig(config, scripts, &error);
  assert(valid && "MakeFencedLock: see CheckFencedLockConfig");
  (void)valid;
  return std::make_unique<FencedLock>(config, scripts);
}

}  // namespace lockstep::locks
