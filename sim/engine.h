// The discrete-event engine: a queue of callbacks ordered by (true time, sequence number).
// Two events at the same microsecond run in the order they were scheduled, never in pointer or
// hash order, so one seed always gives one order (FoundationDB's sim2 breaks ties the same way).
#ifndef LOCKSTEP_SIM_ENGINE_H_
#define LOCKSTEP_SIM_ENGINE_H_

#include <cassert>
#include <csignal>
#include <cstdint>
#include <functional>
#include <queue>
#include <unordered_set>
#include <vector>

#include "sim/clock.h"

namespace lockstep::sim {

class Engine {
 public:
  using EventId = uint64_t;

  TrueTime now() const { return now_; }
  uint64_t events_run() const { return events_run_; }

  // Runs fn at true time `at` (>= now). Returns an id for Cancel.
  EventId At(TrueTime at, std::function<void()> fn) {
    assert(at >= now_);
    const EventId id = ++next_id_;
    queue_.push(Item{at, id, std::move(fn)});
    return id;
  }
  EventId After(int64_t delay_us, std::function<void()> fn) {
    assert(delay_us >= 0);
    return At(now_ + delay_us, std::move(fn));
  }
  // REQUIRES: the event has not run yet (callers forget an id once its event fires), so the
  // cancelled set only ever holds ids still in the queue.
  void Cancel(EventId id) { cancelled_.insert(id); }

  // Runs events until the queue is empty or the next event is after `end`; then sets now to
  // `end`. Returns false if `stop` was requested by an event, or *interrupted became non-zero
  // (looked at every 1024 events).
  bool RunUntil(TrueTime end, const volatile std::sig_atomic_t* interrupted = nullptr) {
    while (!queue_.empty() && !stop_) {
      if (interrupted != nullptr && (events_run_ & 1023) == 0 && *interrupted) {
        stop_ = true;
        break;
      }
      const Item& top = queue_.top();
      if (top.at > end) break;
      Item item = std::move(const_cast<Item&>(top));
      queue_.pop();
      if (auto it = cancelled_.find(item.id); it != cancelled_.end()) {
        cancelled_.erase(it);
        continue;
      }
      assert(item.at >= now_);
      now_ = item.at;
      ++events_run_;
      item.fn();
    }
    if (!stop_ && now_ < end) now_ = end;
    return !stop_;
  }

  void Stop() { stop_ = true; }
  bool stopped() const { return stop_; }

 private:
  struct Item {
    TrueTime at;
    EventId id;  // Also the tie-breaker: ids grow with every At().
    std::function<void()> fn;
  };
  struct Later {
    bool operator()(const Item& a, const Item& b) const {
      return a.at != b.at ? a.at > b.at : a.id > b.id;
    }
  };

  TrueTime now_ = 0;
  EventId next_id_ = 0;
  uint64_t events_run_ = 0;
  bool stop_ = false;
  std::priority_queue<Item, std::vector<Item>, Later> queue_;
  // Only membership is asked of this set; its iteration order never matters.
  std::unordered_set<EventId> cancelled_;
};

}  // namespace lockstep::sim

#endif  // LOCKSTEP_SIM_ENGINE_H_
