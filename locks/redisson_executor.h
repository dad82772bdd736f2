// Redisson's command executor (RedisExecutor), as the Redisson clients here share it: every
// command waits `timeout` for its reply; on a timeout a command marked `retry` is sent again
// after `retryInterval` (at once when that is 0), up to `retryAttempts` resends, each attempt
// with a new request id so that a late reply to an earlier attempt is ignored. After its last
// attempt a command ends without a reply, with the text of Redisson's RedisTimeoutException.
//
// The client keeps its own timers (a TimerTable) next to the executor's: timer ids come from the
// same Outbox, so OnTimer says whether a timer was the executor's. `Kind` is the client's enumeration of
// what a command is for; the executor only carries it.
#ifndef LOCKSTEP_LOCKS_REDISSON_EXECUTOR_H_
#define LOCKSTEP_LOCKS_REDISSON_EXECUTOR_H_

#include <cassert>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "locks/protocol.h"
#include "locks/redisson_common.h"

namespace lockstep::locks {

// Timers by id, each with what it is for (`Kind`) and a reference (a command id, a thread):
// the client's own timers and the executor's share this bookkeeping. Ids come from the Outbox,
// so several tables of one client never clash.
template <typename Kind>
class TimerTable {
 public:
  struct Ref {
    Kind kind;
    uint64_t ref;
  };

  TimerId Arm(Outbox& out, Kind kind, uint64_t ref, int64_t delay_us) {
    assert(delay_us >= 0);
    const TimerId timer = out.NewTimerId();
    refs_[timer] = Ref{kind, ref};
    out.ArmTimer(timer, delay_us);
    return timer;
  }

  // Cancels *timer (0: none) and sets it to 0.
  void Disarm(Outbox& out, TimerId* timer) {
    if (*timer == 0) return;
    refs_.erase(*timer);
    out.CancelTimer(*timer);
    *timer = 0;
  }

  // What a firing timer is for, forgotten as it is returned; nothing for a timer of another
  // table, a cancelled one, or one from before a crash.
  std::optional<Ref> Take(TimerId timer) {
    const auto it = refs_.find(timer);
    if (it == refs_.end()) return std::nullopt;
    const Ref ref = it->second;
    refs_.erase(it);
    return ref;
  }

  void Clear() { refs_.clear(); }

 private:
  std::map<TimerId, Ref> refs_;
};

template <typename Kind>
class RedissonExecutor {
 public:
  struct Command {
    Kind kind{};
    int thread = -1;        // The thread whose operation it is; -1 when none (client-wide).
    SharedArgv argv;        // Shared with the attempts on the wire.
    std::string label;      // The name in the history: "acquire", "renew", ...
    bool retry = false;     // Resend on response timeout.
    int attempt = 0;        // Resends so far.
    RequestId request = 0;  // The attempt awaiting its reply; 0 during the retry delay.
    TimerId timer = 0;      // Response timeout, or retry delay.
  };

  // A command that ended, taken out of the executor.
  struct Ended {
    uint64_t id = 0;
    Command command;
  };

  explicit RedissonExecutor(const ClientConfig& config) : config_(config) {}

  // Sends a command to node slot 0 and returns its id (ids are never reused, not even across
  // Clear, so a client's references to commands from before a crash stay unambiguous).
  uint64_t Start(Outbox& out, Kind kind, int thread, Argv argv, std::string label, bool retry) {
    const uint64_t id = ++last_id_;
    Command& command = commands_[id];
    command.kind = kind;
    command.thread = thread;
    command.argv = std::make_shared<const Argv>(std::move(argv));
    command.label = std::move(label);
    command.retry = retry;
    Transmit(out, id);
    return id;
  }

  // The command that `request` answers, taken out of the executor with its timer cancelled;
  // nothing for a reply to a timed-out attempt or to a command from before a crash.
  std::optional<Ended> TakeReply(Outbox& out, RequestId request) {
    const auto it = requests_.find(request);
    if (it == requests_.end()) return std::nullopt;
    const uint64_t id = it->second;
    requests_.erase(it);
    Ended ended{id, std::move(commands_.at(id))};
    commands_.erase(id);
    assert(ended.command.request == request);
    timers_.Disarm(out, &ended.command.timer);
    return ended;
  }

  // Returns false when `timer` is not the executor's. Otherwise handles it: a retry delay
  // resends; a response timeout resends or, after the last attempt, ends the command and calls
  // expired(ended, detail) with the timeout's text.
  template <typename OnExpired>
  bool OnTimer(Outbox& out, TimerId timer, OnExpired&& expired) {
    const std::optional<typename TimerTable<Role>::Ref> ref = timers_.Take(timer);
    if (!ref) return false;
    const uint64_t id = ref->ref;
    Command& command = commands_.at(id);
    assert(command.timer == timer);
    command.timer = 0;
    if (ref->kind == Role::kRetryDelay) {
      Transmit(out, id);
      return true;
    }
    // From now on a reply to this attempt is ignored, even if the resend is still to come.
    requests_.erase(command.request);
    command.request = 0;
    if (command.retry && command.attempt < config_.retry_attempts) {
      command.attempt += 1;
      if (config_.retry_interval_us > 0) {
        command.timer = timers_.Arm(out, Role::kRetryDelay, id, config_.retry_interval_us);
      } else {
        Transmit(out, id);
      }
      return true;
    }
    const std::string detail =
        ResponseTimeoutDetail(config_, command.attempt, command.retry, command.label);
    Ended ended{id, std::move(command)};
    commands_.erase(id);
    expired(ended, detail);
    return true;
  }

  // The process crashed: every command is forgotten (their timers and replies are ignored).
  void Clear() {
    commands_.clear();
    requests_.clear();
    timers_.Clear();
  }

 private:
  enum class Role : uint8_t { kResponse, kRetryDelay };

  void Transmit(Outbox& out, uint64_t id) {
    Command& command = commands_.at(id);
    assert(command.request == 0 && command.timer == 0);
    command.request = out.NewRequestId();
    requests_[command.request] = id;
    command.timer = timers_.Arm(out, Role::kResponse, id, config_.timeout_us);
    out.Send(0, command.request, command.argv, command.label, command.thread);
  }

  const ClientConfig config_;
  uint64_t last_id_ = 0;
  std::map<uint64_t, Command> commands_;
  std::map<RequestId, uint64_t> requests_;  // The current attempt of each command.
  TimerTable<Role> timers_;  // Refs are command ids.
};

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_REDISSON_EXECUTOR_H_
