// The discrete-event engine: a queue of callbacks ordered by (true time, sequence number).
// Two events at the same microsecond run in the order they were scheduled, never in pointer or
// hash order, so one seed always gives one order (FoundationDB's sim2 breaks ties the same way).
//
// The queue itself holds only (time, sequence, slot) records, so that keeping it in heap order
// moves 24 bytes at a time; each event's callback waits in a slot of a pool whose free slots
// are reused, so a run that schedules millions of events allocates for only as many as are
// pending at once. The queue is a binary heap; since (time, sequence) orders events totally,
// every heap of the same records pops them in the same order.
//
// Events due at or after a horizon wait outside the heap, unordered, in buckets of kNearUs of
// true time (a ring of kRingBuckets of them from the horizon on, and an overflow list for the
// later ones), until the heap runs dry; then the next bucket that holds a live event joins the
// heap and the horizon moves to its end. Most far events are client timeouts armed for every
// command and cancelled a few milliseconds later: they are dropped from their bucket without
// ever being ordered, and the heap holds only the next moments' events. Every heap event is
// before the horizon and every bucketed one at or after it, so the events still run in (time,
// sequence) order.
#ifndef LOCKSTEP_SIM_ENGINE_H_
#define LOCKSTEP_SIM_ENGINE_H_

#include <algorithm>
#include <array>
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

  // The width of a far bucket: the heap holds about this much simulated time's events.
  // Shorter than the clients' command timeouts (a second and more), so that those wait in the
  // buckets; long enough that the heap is seldom refilled.
  static constexpr int64_t kNearUs = 500'000;
  // Buckets in the ring: 32 s of true time past the horizon (watchdogs and leases included);
  // later events wait in the overflow list.
  static constexpr int64_t kRingBuckets = 64;

  TrueTime now() const { return now_; }
  uint64_t events_run() const { return events_run_; }
  // Events run at now() so far, this one included.
  uint64_t events_at_now() const { return events_at_now_; }

  // The progress watchdog: once more than `limit` events have run at one instant, RunUntil
  // stops (as Stop() would) and stalled() says why. A run whose true time stops advancing is a
  // loop that never waits; without this it would spin forever. 0: no limit.
  void set_max_events_per_instant(uint64_t limit) { max_events_per_instant_ = limit; }
  bool stalled() const { return stalled_; }
  // The run's work bounds: once more than `events` have run in all, or more than `pending`
  // wait to run (messages in flight, timers), RunUntil stops and over_bound() says which (1:
  // events, 2: pending). Checked every 1024 events. 0: no bound.
  void set_work_bounds(uint64_t events, uint64_t pending) {
    max_events_ = events;
    max_pending_ = pending;
  }
  int over_bound() const { return over_bound_; }
  uint64_t pending() const { return slots_.size() - free_slots_.size(); }

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
    const Pending p{at, ++next_seq_, slot, s.generation};
    if (at < horizon_ || at == kMaxTime) {
      s.far = false;
      queue_.push_back(p);
      std::push_heap(queue_.begin(), queue_.end(), Later{});
    } else {
      s.far = true;
      PushFar(p);
    }
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
    s.fn.Reset();
    // The slot is free at once (its record, now stale, stays where it is and is skipped when
    // reached): the next event reuses it while it is still in the cache.
    FreeSlot(slot);
    if (s.far) {
      // Cancelled timeouts pile up in the far list between refills: once they are half of it,
      // drop them, so that it stays about as long as the live far events need.
      ++far_cancelled_;
      if (far_cancelled_ >= kDropCancelledMin && 2 * far_cancelled_ >= far_size_) {
        DropCancelledFar();
      }
      return;
    }
    ++cancelled_;
    // Likewise for the heap, whose depth every push and pop pays for.
    if (cancelled_ >= kDropCancelledMin && 2 * cancelled_ >= queue_.size()) DropCancelled();
  }

  // Runs events until none is left or the next event is after `end`; then sets now to `end`.
  // Returns false if `stop` was requested by an event, or `should_stop` (when given; asked
  // every 1024 events) said so.
  bool RunUntil(TrueTime end, const std::function<bool()>* should_stop = nullptr) {
    while (!stop_) {
      if (queue_.empty()) {
        if (far_size_ == 0) break;
        Refill();
        continue;
      }
      if ((events_run_ & 1023) == 0) {
        if (max_events_ > 0 && events_run_ >= max_events_) over_bound_ = 1;
        if (max_pending_ > 0 && pending() > max_pending_) over_bound_ = 2;
        if (over_bound_ != 0 || (should_stop != nullptr && (*should_stop)())) {
          stop_ = true;
          break;
        }
      }
      const Pending top = queue_.front();
      if (top.at > end) break;
      std::pop_heap(queue_.begin(), queue_.end(), Later{});
      queue_.pop_back();
      if (Stale(top)) {
        --cancelled_;
        continue;
      }
      // Take the callback out and free its slot before running it: the callback may schedule
      // events, which may reuse the slot or grow the pool.
      Callback fn = std::move(slots_[top.slot].fn);
      FreeSlot(top.slot);
      assert(fn);
      assert(top.at >= now_);
      if (top.at != now_) events_at_now_ = 0;
      now_ = top.at;
      if (max_events_per_instant_ > 0 && events_at_now_ >= max_events_per_instant_) {
        // The event stays unrun: the run ends at the instant it could not leave.
        stop_ = true;
        stalled_ = true;
        break;
      }
      ++events_at_now_;
      ++events_run_;
      fn();
    }
    if (!stop_ && now_ < end) {
      now_ = end;
      events_at_now_ = 0;
    }
    return !stop_;
  }

  void Stop() { stop_ = true; }
  bool stopped() const { return stop_; }

 private:
  struct Pending {
    TrueTime at;
    uint64_t seq;         // The tie-breaker: grows with every At().
    uint32_t slot;        // Where the callback waits,
    uint32_t generation;  // while the slot has this generation (else it was cancelled).
  };
  struct Later {
    bool operator()(const Pending& a, const Pending& b) const {
      return a.at != b.at ? a.at > b.at : a.seq > b.seq;
    }
  };
  struct Slot {
    Callback fn;  // Empty while the slot is free.
    uint32_t generation = 0;
    bool far = false;  // Its record is in a far bucket, not in queue_.
  };
  // Below this many cancelled records, dropping them is not worth a pass over the queue.
  static constexpr size_t kDropCancelledMin = 64;

  void FreeSlot(uint32_t slot) {
    ++slots_[slot].generation;
    free_slots_.push_back(slot);
  }
  // The record's event was cancelled (its slot freed, maybe reused since).
  bool Stale(const Pending& p) const { return slots_[p.slot].generation != p.generation; }

  // Removes the records of cancelled events from the heap.
  void DropCancelled() {
    size_t kept = 0;
    for (const Pending& p : queue_) {
      if (!Stale(p)) queue_[kept++] = p;
    }
    queue_.resize(kept);
    std::make_heap(queue_.begin(), queue_.end(), Later{});
    cancelled_ = 0;
  }

  static constexpr TrueTime kMaxTime = std::numeric_limits<TrueTime>::max();

  // The far bucket of a time at or after the horizon, and where a bucket starts.
  static int64_t BucketOf(TrueTime at) { return at / kNearUs; }
  static TrueTime BucketStart(int64_t bucket) {
    return bucket > kMaxTime / kNearUs ? kMaxTime : bucket * kNearUs;
  }
  std::vector<Pending>& RingBucket(int64_t bucket) {
    return ring_[static_cast<size_t>(bucket % kRingBuckets)];
  }

  void PushFar(const Pending& p) {
    const int64_t bucket = BucketOf(p.at);
    assert(bucket >= ring_base_);
    if (bucket < ring_base_ + kRingBuckets) {
      RingBucket(bucket).push_back(p);
      ++ring_size_;
    } else {
      overflow_.push_back(p);
      overflow_min_ = std::min(overflow_min_, bucket);
    }
    ++far_size_;
  }

  // Drops the records of cancelled events from `records` and offers each live one to take(p):
  // true, it has gone elsewhere; false, it stays. Returns how many were dropped.
  template <typename Take>
  size_t Sift(std::vector<Pending>& records, Take&& take) {
    size_t kept = 0, dropped = 0;
    for (const Pending& p : records) {
      if (Stale(p)) {
        ++dropped;
      } else if (!take(p)) {
        records[kept++] = p;
      }
    }
    records.resize(kept);
    return dropped;
  }
  // `dropped` cancelled far records are gone (every cancelled far event was counted once).
  void ForgetCancelledFar(size_t dropped) {
    assert(dropped <= far_cancelled_);
    far_cancelled_ -= dropped;
  }

  // The overflow's records that the ring now reaches move into it (stale ones are dropped).
  void Redistribute() {
    overflow_min_ = std::numeric_limits<int64_t>::max();
    const size_t dropped = Sift(overflow_, [this](const Pending& p) {
      const int64_t bucket = BucketOf(p.at);
      if (bucket < ring_base_ + kRingBuckets) {
        RingBucket(bucket).push_back(p);
        ++ring_size_;
        return true;
      }
      overflow_min_ = std::min(overflow_min_, bucket);
      return false;
    });
    far_size_ -= dropped;
    ForgetCancelledFar(dropped);
  }

  // Removes the records of cancelled events from the far buckets.
  void DropCancelledFar() {
    for (std::vector<Pending>& bucket : ring_) {
      const size_t dropped = Sift(bucket, [](const Pending&) { return false; });
      ring_size_ -= dropped;
      far_size_ -= dropped;
    }
    far_size_ -= Sift(overflow_, [](const Pending&) { return false; });
    far_cancelled_ = 0;
  }

  // The heap ran dry: the next far bucket with a live event joins it (the empty ones before it
  // are passed, the overflow list's events join the ring as it reaches them), and the horizon
  // moves to that bucket's end.
  void Refill() {
    assert(queue_.empty());
    while (queue_.empty() && far_size_ > 0) {
      if (ring_size_ == 0) {
        // Nothing in the next kRingBuckets buckets: the ring jumps to the overflow's first.
        ring_base_ = std::max(ring_base_, overflow_min_);
        horizon_ = BucketStart(ring_base_);
        Redistribute();
        continue;
      }
      std::vector<Pending>& bucket = RingBucket(ring_base_);
      const size_t taken = bucket.size();
      const size_t dropped = Sift(bucket, [this](const Pending& p) {
        slots_[p.slot].far = false;
        queue_.push_back(p);
        return true;
      });
      ring_size_ -= taken;
      far_size_ -= taken;
      ForgetCancelledFar(dropped);
      ++ring_base_;
      horizon_ = BucketStart(ring_base_);
      if (overflow_min_ < ring_base_ + kRingBuckets) Redistribute();
    }
    std::make_heap(queue_.begin(), queue_.end(), Later{});
  }

  TrueTime now_ = 0;
  uint64_t next_seq_ = 0;
  uint64_t events_run_ = 0;
  uint64_t events_at_now_ = 0;
  uint64_t max_events_per_instant_ = 0;
  bool stop_ = false;
  bool stalled_ = false;
  uint64_t max_events_ = 0;
  uint64_t max_pending_ = 0;
  int over_bound_ = 0;
  // Every event in queue_ is due before the horizon, every bucketed one at or after it (and
  // before kMaxTime: an event at kMaxTime goes to the heap at once).
  TrueTime horizon_ = 0;
  std::vector<Pending> queue_;  // A heap by Later: front() is the next event.
  size_t cancelled_ = 0;        // Records in queue_ whose event was cancelled.
  // The far buckets: ring_[b % kRingBuckets] holds bucket b, for b in [ring_base_, ring_base_ +
  // kRingBuckets), in no order; horizon_ == BucketStart(ring_base_). Later ones in overflow_.
  std::array<std::vector<Pending>, kRingBuckets> ring_;
  int64_t ring_base_ = 0;
  size_t ring_size_ = 0;  // Records in the ring,
  std::vector<Pending> overflow_;
  int64_t overflow_min_ = std::numeric_limits<int64_t>::max();  // the overflow's first bucket,
  size_t far_size_ = 0;       // records in both,
  size_t far_cancelled_ = 0;  // of which this many are of cancelled events.
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
};

}  // namespace lockstep::sim

#endif  // LOCKSTEP_SIM_ENGINE_H_
