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

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "locks/protocol.h"
#include "locks/redisson_common.h"

namespace lockstep::locks {

// Values by id, for ids that grow with every insertion (command, request and timer ids): a
// vector sorted by id, so that it grows at its end and a lookup is a binary search, without a
// tree node to allocate per command, request or timer as a std::map needs. An erased entry is
// marked, and the marked ones are dropped once they are half of the vector, so erasing costs
// no shift of the live ones. The table is never iterated: only lookups see it. Pointers and
// references into it hold only until the next insertion or erasure.
template <typename Value>
class IdTable {
 public:
  // Inserts `id`, which must not be in the table. Ids come in growing order (each above every
  // id inserted before), so the entry goes at the end; the sorted insert is for any other.
  Value& Insert(uint64_t id) {
    assert(Find(id) == nullptr);
    if (entries_.empty() || entries_.back().id < id) {
      entries_.push_back(Entry{id, true, Value{}});
      return entries_.back().value;
    }
    auto at = LowerBound(id);
    if (at->id == id) {  // A marked entry of the same id comes back to life.
      at->live = true;
      --erased_;
      return at->value;
    }
    return entries_.insert(at, Entry{id, true, Value{}})->value;
  }
  Value* Find(uint64_t id) {
    Entry* e = Live(id);
    return e != nullptr ? &e->value : nullptr;
  }
  Value& At(uint64_t id) {
    Value* value = Find(id);
    assert(value != nullptr);
    return *value;
  }
  // Erases `id` if it is there.
  void Erase(uint64_t id) {
    Entry* e = Live(id);
    if (e == nullptr) return;
    e->live = false;
    e->value = Value{};  // Frees what it holds now, not at the next compaction.
    ++erased_;
    if (2 * erased_ >= entries_.size()) {
      std::erase_if(entries_, [](const Entry& x) { return !x.live; });
      erased_ = 0;
    }
  }
  void Clear() {
    entries_.clear();
    erased_ = 0;
  }

 private:
  struct Entry {
    uint64_t id;
    bool live;  // False once erased: the entry waits for the next compaction.
    Value value;
  };
  typename std::vector<Entry>::iterator LowerBound(uint64_t id) {
    return std::lower_bound(entries_.begin(), entries_.end(), id,
                            [](const Entry& e, uint64_t key) { return e.id < key; });
  }
  Entry* Live(uint64_t id) {
    const auto it = LowerBound(id);
    return it != entries_.end() && it->id == id && it->live ? &*it : nullptr;
  }

  std::vector<Entry> entries_;
  size_t erased_ = 0;  // Entries marked erased, still in entries_.
};

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
    refs_.Insert(timer) = Ref{kind, ref};
    out.ArmTimer(timer, delay_us);
    return timer;
  }

  // Cancels *timer (0: none) and sets it to 0.
  void Disarm(Outbox& out, TimerId* timer) {
    if (*timer == 0) return;
    refs_.Erase(*timer);
    out.CancelTimer(*timer);
    *timer = 0;
  }

  // What a firing timer is for, forgotten as it is returned; nothing for a timer of another
  // table, a cancelled one, or one from before a crash.
  std::optional<Ref> Take(TimerId timer) {
    const Ref* found = refs_.Find(timer);
    if (found == nullptr) return std::nullopt;
    const Ref ref = *found;
    refs_.Erase(timer);
    return ref;
  }

  void Clear() { refs_.Clear(); }

 private:
  IdTable<Ref> refs_;
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
    return Start(out, kind, thread, ShareArgv(std::move(argv)), std::move(label), retry);
  }
  // The same with a command shared with others (a kind's SameAttempts).
  uint64_t Start(Outbox& out, Kind kind, int thread, SharedArgv argv, std::string label,
                 bool retry) {
    const uint64_t id = ++last_id_;
    Command& command = commands_.Insert(id);
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
    const uint64_t* found = requests_.Find(request);
    if (found == nullptr) return std::nullopt;
    const uint64_t id = *found;
    requests_.Erase(request);
    Ended ended{id, std::move(commands_.At(id))};
    commands_.Erase(id);
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
    Command& command = commands_.At(id);
    assert(command.timer == timer);
    command.timer = 0;
    if (ref->kind == Role::kRetryDelay) {
      Transmit(out, id);
      return true;
    }
    // From now on a reply to this attempt is ignored, even if the resend is still to come.
    requests_.Erase(command.request);
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
    commands_.Erase(id);
    expired(ended, detail);
    return true;
  }

  // The process crashed: every command is forgotten (their timers and replies are ignored).
  void Clear() {
    commands_.Clear();
    requests_.Clear();
    timers_.Clear();
  }

 private:
  enum class Role : uint8_t { kResponse, kRetryDelay };

  void Transmit(Outbox& out, uint64_t id) {
    Command& command = commands_.At(id);
    assert(command.request == 0 && command.timer == 0);
    command.request = out.NewRequestId();
    requests_.Insert(command.request) = id;
    command.timer = timers_.Arm(out, Role::kResponse, id, config_.timeout_us);
    out.Send(0, command.request, command.argv, command.label, command.thread);
  }

  const ClientConfig config_;
  uint64_t last_id_ = 0;
  IdTable<Command> commands_;
  IdTable<uint64_t> requests_;  // The current attempt of each command, by request id.
  TimerTable<Role> timers_;  // Refs are command ids.
};

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_REDISSON_EXECUTOR_H_
