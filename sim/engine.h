// The discrete-event engine: a queue of callbacks ordered by (true time, sequence number).
// Two events at the same microsecond run in the order they were scheduled, never in pointer or
// hash order, so one seed always gives one order (FoundationDB's sim2 breaks ties the same way).
//
// The queue itself holds only (time, sequence, slot) records, so that keeping it in heap order
// moves 24 bytes at a time; each event's callback waits in a slot of a pool whose free slots
// are reused, so a run that schedules millions of events allocates for only as many as are
// pending at once. The queue is a binary heap; since (time, sequence) orders events totally,
// every heap of the same records pops them in the same order.
#ifndef LOCKSTEP_SIM_ENGINE_H_
#define LOCKSTEP_SIM_ENGINE_H_

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "base/clock_spec.h"
#include "sim/callback.h"

namespace lockstep::sim {

class Engine {
 public:
  // Names one scheduled event, for Cancel: its slot in the pool and the slot's generation
  // (how many events the slot had held before), so that an id never names a later event
  // that reuses the slot.
  using EventId = uint64_t;

  TrueTime now() const { return now_; }
  uint64_t events_run() const { return events_run_; }

  // Runs fn at true time `at` (>= now). Returns an id for Cancel.
  EventId At(TrueTime at, Callback fn) {
    assert(at >= now_);
    assert(fn);
    uint32_t slot;
    if (free_slots_.empty()) {
      assert(slots_.size() < std::numeric_limits<uint32_t>::max());
      slot = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    } else {
      slot = free_slots_.back();
      free_slots_.pop_back();
    }
    Slot& s = slots_[slot];
    s.fn = std::move(fn);
    queue_.push_back(Pending{at, ++next_seq_, slot});
    std::push_heap(queue_.begin(), queue_.end(), Later{});
    return (EventId{s.generation} << 32) | slot;
  }
  EventId After(int64_t delay_us, Callback fn) {
    assert(delay_us >= 0);
    return At(now_ + delay_us, std::move(fn));
  }
  // The event will not run; its callback is destroyed now. Cancelling an event that has
  // already run (or was cancelled) does nothing.
  void Cancel(EventId id) {
    const auto slot = static_cast<uint32_t>(id & 0xffff'ffffu);
    const auto generation = static_cast<uint32_t>(id >> 32);
    assert(slot < slots_.size());
    Slot& s = slots_[slot];
    if (s.generation != generation || !s.fn) return;
    s.fn.Reset();  // Its record stays in the queue and is skipped when due.
    ++cancelled_;
    // Client timeouts are armed for every command and mostly cancelled seconds before they
    // are due: once cancelled records are half the queue, drop them, so that the heap stays
    // about as deep as the live events need.
    if (cancelled_ >= kDropCancelledMin && 2 * cancelled_ >= queue_.size()) DropCancelled();
  }

  // Runs events until the queue is empty or the next event is after `end`; then sets now to
  // `end`. Returns false if `stop` was requested by an event, or `should_stop` (when given;
  // asked every 1024 events) said so.
  bool RunUntil(TrueTime end, const std::function<bool()>* should_stop = nullptr) {
    while (!queue_.empty() && !stop_) {
      if (should_stop != nullptr && (events_run_ & 1023) == 0 && (*should_stop)()) {
        stop_ = true;
        break;
      }
      const Pending top = queue_.front();
      if (top.at > end) break;
      std::pop_heap(queue_.begin(), queue_.end(), Later{});
      queue_.pop_back();
      // Take the callback out and free its slot before running it: the callback may schedule
      // events, which may reuse the slot or grow the pool.
      Callback fn = std::move(slots_[top.slot].fn);
      FreeSlot(top.slot);
      if (!fn) {
        --cancelled_;
        continue;
      }
      assert(top.at >= now_);
      now_ = top.at;
      ++events_run_;
      fn();
    }
    if (!stop_ && now_ < end) now_ = end;
    return !stop_;
  }

  void Stop() { stop_ = true; }
  bool stopped() const { return stop_; }

 private:
  struct Pending {
    TrueTime at;
    uint64_t seq;   // The tie-breaker: grows with every At().
    uint32_t slot;  // Where the callback waits.
  };
  struct Later {
    bool operator()(const Pending& a, const Pending& b) const {
      return a.at != b.at ? a.at > b.at : a.seq > b.seq;
    }
  };
  struct Slot {
    Callback fn;  // Empty while the slot is free, or once its event is cancelled.
    uint32_t generation = 0;
  };
  // Below this many cancelled records, dropping them is not worth a pass over the queue.
  static constexpr size_t kDropCancelledMin = 64;

  void FreeSlot(uint32_t slot) {
    ++slots_[slot].generation;
    free_slots_.push_back(slot);
  }

  // Removes the records of cancelled events from the queue and frees their slots.
  void DropCancelled() {
    size_t kept = 0;
    for (const Pending& p : queue_) {
      if (slots_[p.slot].fn) {
        queue_[kept++] = p;
      } else {
        FreeSlot(p.slot);
      }
    }
    queue_.resize(kept);
    std::make_heap(queue_.begin(), queue_.end(), Later{});
    cancelled_ = 0;
  }

  TrueTime now_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t events_run_ = 0;
  bool stop_ = false;
  std::vector<Pending> queue_;  // A heap by Later: front() is the next event.
  size_t cancelled_ = 0;        // Records in queue_ whose event was cancelled.
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
};

}  // namespace lockstep::sim

#endif  // LOCKSTEP_SIM_ENGINE_H_
