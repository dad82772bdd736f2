// RCountDownLatch's kind for the synchronizer machine of semaphore.h (see countdownlatch.h).
#include "locks/countdownlatch/countdownlatch.h"

#include <cassert>
#include <optional>
#include <utility>

#include "locks/redisson_common.h"
#include "locks/scripts.h"
#include "locks/semaphore/semaphore.h"

namespace lockstep::locks {

std::string CountDownLatchChannel(const std::string& name) {
  return "redisson_countdownlatch__channel__{" + name + "}";
}

namespace {

class CountDownLatchKind final : public SynchronizerKind {
 public:
  CountDownLatchKind(const ClientConfig& config, const ScriptSet& scripts)
      : SynchronizerKind(config, scripts), channel_(CountDownLatchChannel(config.lock_name)) {}

  Command Init() override {
    return {Eval("try_set_count", {config().lock_name, channel_},
                 {kNewCountMessage, std::to_string(config().permits), "publish"}),
            "try_set_count", true};
  }

  std::string Channel() const override { return channel_; }

  Command Attempt(int thread, const AcquireArgs& args) override {
    (void)thread;
    (void)args;
    return {{"GET", config().lock_name}, "get_count", true};  // getCount(): GET_LONG.
  }

  Check ReadAttempt(const Reply& reply, const AcquireArgs& args, OpResult* result) override {
    (void)args;
    int64_t count = 0;  // A missing latch reads as 0.
    if (reply.type == Reply::Type::kBulk || reply.type == Reply::Type::kStatus) {
      if (!ParseInt64(reply.str, &count)) {
        result->status = OpResult::Status::kFail;
        result->detail = "get_count: not an integer: " + reply.Quoted();
        return Check::kFailed;
      }
    } else if (reply.type == Reply::Type::kInteger) {
      count = reply.integer;
    } else if (reply.type != Reply::Type::kNull) {
      result->status = OpResult::Status::kFail;
      result->detail = "unexpected reply to get_count: " + reply.Quoted();
      return Check::kFailed;
    }
    if (count > 0) {  // while (getCount() > 0)
      result->status = OpResult::Status::kFail;
      result->detail = "count is " + std::to_string(count);
      return Check::kNotYet;
    }
    result->status = OpResult::Status::kOk;
    result->has_value = true;
    result->value = count;
    result->detail = "count reached 0";
    return Check::kPassed;
  }

  OpResult::Status AttemptTimeoutStatus() const override {
    return OpResult::Status::kFail;  // A GET changes nothing: await simply did not return.
  }

  bool CheckAfterLastWait() const override { return true; }

  void OnMessage(const std::string& payload, int refs, LocalLatch* latch) override {
    (void)refs;
    if (payload == kZeroCountMessage) latch->open = true;
    if (payload == kNewCountMessage) latch->open = false;
  }

  bool TryPass(const AcquireArgs& args, LocalLatch* latch) override {
    (void)args;
    return latch->open;  // ReclosableLatch.await(): passes while open, takes nothing.
  }

  std::optional<Command> Release(int thread, OpResult* immediate) override {
    (void)thread;
    (void)immediate;
    // Not resent once written since 3.16.4 (#3850); 3.13.6 resends it like every command.
    return Command{Eval("count_down", {config().lock_name, channel_},
                        {kZeroCountMessage, "publish"}),
                   "count_down", version() == RedissonVersion::k3136};
  }

  OpResult ReadRelease(int thread, const Reply& reply) override {
    (void)thread;
    (void)reply;  // The script returns nothing; the remaining count is not known here.
    return OpResult::Ok("counted down");
  }

  std::optional<Command> ForceUnlock(OpResult* immediate) override {
    (void)immediate;
    return Command{Eval("delete", {config().lock_name, channel_}, {kNewCountMessage, "publish"}),
                   "delete", true};
  }

 private:
  const std::string channel_;
};

}  // namespace

bool CheckCountDownLatchConfig(const ClientConfig& config, const ScriptSet& scripts,
                               std::string* error) {
  if (!CheckRedissonConfig("countdownlatch", config, error)) return false;
  if (config.permits < 0) {
    *error = "countdownlatch: the count (permits) must be >= 0, not " +
             std::to_string(config.permits);
    return false;
  }
  std::string missing;
  if (!HasScripts(scripts, RequiredScripts("countdownlatch"), &missing)) {
    *error = "countdownlatch: " + missing;
    return false;
  }
  return true;
}

std::unique_ptr<LockProtocol> MakeCountDownLatch(const ClientConfig& config,
                                                 const ScriptSet& scripts) {
  std::string error;
  const bool valid = CheckCountDownLatchConfig(config, scripts, &error);
  assert(valid && "MakeCountDownLatch: see CheckCountDownLatchConfig");
  (void)valid;
  return MakeSynchronizerClient(std::make_unique<CountDownLatchKind>(config, scripts));
}

}  // namespace lockstep::locks
