// Redisson's command executor (RedisExecutor), as the Redisson clients here share it: every
// command waits `timeout` for its reply; on a timeout a command marked `retry` is sent again
// after `retryInterval` (at once when that is 0), up to `retryAttempts` resends, each attempt
// with a new request id so that a late reply to an earlier attempt is ignored. After its last
// attempt a command ends without a reply, with the text of Redisson's RedisTimeoutException.
//
// The client keeps its own timers next to the executor's: timer ids come from the same Outbox,
// so OnTimer says whether a timer was the executor's. `Kind` is the client's enumeration of
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

template <typename Kind>
class RedissonExecutor {
 public:
  struct Command {
    Kind kind{};
    int thread = -1;        // The thread whose operation it is; -1 when none (client-wide).
    Argv argv;
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
    command.argv = std::move(argv);
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
    Disarm(out, &ended.command.timer);
    return ended;
  }

  // Returns false when `timer` is not the executor's. Otherwise handles it: a retry delay
  // resends; a response timeout resends or, after the last attempt, ends the command, which
  // it moves to *expired with the timeout's text in *detail.
  bool OnTimer(Outbox& out, TimerId timer, std::optional<Ended>* expired, std::string* detail) {
    const auto it = timers_.find(timer);
    if (it == timers_.end()) return false;
    const auto [is_response, id] = it->second;
    timers_.erase(it);
    Command& command = commands_.at(id);
    assert(command.timer == timer);
    command.timer = 0;
    if (!is_response) {
      Transmit(out, id);
      return true;
    }
    // From now on a reply to this attempt is ignored, even if the resend is still to come.
    requests_.erase(command.request);
    command.request = 0;
    if (command.retry && command.attempt < config_.retry_attempts) {
      command.attempt += 1;
      if (config_.retry_interval_us > 0) {
        command.timer = Arm(out, /*is_response=*/false, id, config_.retry_interval_us);
      } else {
        Transmit(out, id);
      }
      return true;
    }
    *detail = ResponseTimeoutDetail(config_, command.attempt, command.retry, command.label);
    expired->emplace(Ended{id, std::move(command)});
    commands_.erase(id);
    return true;
  }

  // The process crashed: every command is forgotten (their timers and replies are ignored).
  void Clear() {
    commands_.clear();
    requests_.clear();
    timers_.clear();
  }

 private:
  void Transmit(Outbox& out, uint64_t id) {
    Command& command = commands_.at(id);
    assert(command.request == 0 && command.timer == 0);
    command.request = out.NewRequestId();
    requests_[command.request] = id;
    command.timer = Arm(out, /*is_response=*/true, id, config_.timeout_us);
    out.Send(0, command.request, command.argv, command.label, command.thread);
  }

  TimerId Arm(Outbox& out, bool is_response, uint64_t id, int64_t delay_us) {
    assert(delay_us >= 0);
    const TimerId timer = out.NewTimerId();
    timers_[timer] = {is_response, id};
    out.ArmTimer(timer, delay_us);
    return timer;
  }

  void Disarm(Outbox& out, TimerId* timer) {
    if (*timer == 0) return;
    timers_.erase(*timer);
    out.CancelTimer(*timer);
    *timer = 0;
  }

  const ClientConfig config_;
  uint64_t last_id_ = 0;
  std::map<uint64_t, Command> commands_;
  std::map<RequestId, uint64_t> requests_;  // The current attempt of each command.
  std::map<TimerId, std::pair<bool, uint64_t>> timers_;  // (response timeout?, command id)
};

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_REDISSON_EXECUTOR_H_
