// What liveness's five rules share (check/liveness.cpp composes them into the one property):
// the facts every rule reads, built once from the events -- the moment the pass has reached,
// each lock's acquisitions in flight and the longest lease asked for -- and the pieces several
// rules name their findings with. Each rule is an observer of the facts pass, fed the same
// facts in the same order as the others, with its own findings:
//
//   (a) no_takeover_after_crash.cpp  a crashed holder's lock is taken over in time
//   (b) waited_while_free.cpp        nobody waits longer than the bound while the lock is free
//   (c) stuck.cpp                    no operation of a live process is still waiting at the end
//   (d) orphans.cpp                  nothing stays taken that no believer accounts for
//   (e) unobtainable.cpp             a lock nobody holds can be obtained
//
// The rules are in docs/history.md ("liveness") in full.
#ifndef LOCKSTEP_CHECK_LIVENESS_RULE_H_
#define LOCKSTEP_CHECK_LIVENESS_RULE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "check/property.h"

namespace lockstep::check::liveness {

inline constexpr int64_t kForever = history::kForeverUs;
inline constexpr size_t kMaxThreadsNamed = 6;  // Per orphan or gap: its threads, then waiters kept out.

// The kinds of finding, in the order findings with equal times and seqs are listed. A finding's
// key is unique among all the rules' findings (its kind, and an id of the operation, the crash's
// hold or the rule's own count), so merging the rules' kept findings keeps what one list would.
enum Kind : uint8_t {
  kNoTakeover, kWaitedWhileFree, kStuck, kOrphanedLock, kLeakedPermits, kOrphanedLatch,
  kUnobtainable, kWaitedWithFreePermits, kWaitedWhileOpen
};

// Two ids (thread and lock, node and lock) as one key.
inline uint64_t Key(int a, int b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

// An acquisition as liveness keeps it: enough to name it and say how it ended.
struct AcquireRef {
  uint64_t id = 0;
  int thread = history::kNone;
  int lock = history::kNone;
  history::Seq invoke_seq = 0;
  int64_t invoke_us = 0;
  bool ended = false;
  history::Outcome outcome = history::Outcome::kPending;
  history::Seq end_seq = history::kOpenSeq;
  int64_t end_us = 0;
  std::string end_detail;
  int64_t wait_us = 0;
  history::KeptDetail detail;  // The invoke's.
  history::Name name = history::names::kNone;

  std::string DetailText() const { return detail.Render(history::EventType::kInvoke, name); }

  static AcquireRef Of(const history::Op& op);
  static AcquireRef Ended(const history::Op& op);
  void End(const history::Op& op);
};

// Acquisitions of one lock invoked within a window [from, to], as explanations count and name
// them: how many did not succeed, and each thread's first one that did not.
class AcquireWindow {
 public:
  // Opens the window at from_us (reusing its buffers). early: the acquisitions in flight when
  // the window opened count for naming too.
  void Open(int64_t from_us, const std::vector<AcquireRef>& inflight, bool early);
  bool active() const { return active_; }
  void Clear() { active_ = false; }
  void Invoked(const AcquireRef& r);
  void Ended(const history::Op& op);
  // No acquisition invoked after to_us belongs to the window.
  void Close(int64_t to_us);
  // Unobtainable: "others" are those invoked after `after_us` (and before the end), but one.
  void CountOthers(int64_t after_us, uint64_t excluded) {
    others_after_us_ = after_us;
    others_excluded_ = excluded;
  }

  bool closed() const { return to_us_ != kForever; }
  bool nothing_pending() const { return pending_.empty(); }
  size_t denied() const { return denied_; }
  size_t others() const { return others_; }
  // Threads in the order of their first unsuccessful acquisition, with its invoke seq.
  std::vector<std::pair<history::Seq, int>> Named() const;

 private:
  struct Entry {
    uint64_t id;
    int thread;
    history::Seq invoke_seq;
    int64_t invoke_us;
    bool early;
  };
  bool active_ = false;
  int64_t from_us_ = 0;
  int64_t to_us_ = kForever;
  int64_t others_after_us_ = -1;
  uint64_t others_excluded_ = UINT64_MAX;
  int64_t recent_us_ = -1;
  size_t recent_ = 0;
  std::vector<Entry> pending_;
  size_t denied_ = 0;
  size_t others_ = 0;
  std::vector<std::pair<history::Seq, int>> first_;  // (seq, thread): each thread's first failure.
};

// The facts every rule reads. The composed checker updates them before the rules see an event
// or an operation, so a rule sees an acquisition in flight from its invoke to its end.
class LivenessFacts {
 public:
  explicit LivenessFacts(int64_t bound_us) : bound_us_(bound_us) {}

  int64_t bound_us() const { return bound_us_; }
  // The time of the event being handled (the run's end once it is ending).
  int64_t now_us() const { return now_us_; }
  void set_now_us(int64_t t_us) { now_us_ = t_us; }

  void OpInvoked(const history::FactsPass& f, const history::Op& op);
  void OpEnded(const history::Op& op);

  // The lock's acquisitions in flight, in invoke order.
  const std::vector<AcquireRef>& InFlight(int lock) const;
  // The acquisition OnOpInvoked has just been told of (rules copy it only if they keep it).
  const AcquireRef& JustInvoked(const history::Op& op) const;
  // The longest a key may outlive its holders' beliefs: the longest lease any acquisition of
  // the lock asked for so far (the watchdog's without an explicit one), times the most holds a
  // thread stacked (a write lock's reentry adds its lease to the TTL).
  int64_t LongestLeaseUs(const history::FactsPass& f, int lock) const;
  // A lease plus the bound, or kForever.
  int64_t Allowed(int64_t lease_us) const {
    return lease_us > kForever - bound_us_ ? kForever : lease_us + bound_us_;
  }
  // Time in [from_us, to_us] during which `process` was impaired.
  int64_t ImpairedWithin(const history::FactsPass& f, int process, int64_t from_us, int64_t to_us) const;

 private:
  struct Lock {
    std::vector<AcquireRef> inflight;
    int64_t max_lease_us = 0;
    int max_holds = 1;
  };
  Lock& LockOf(int lock);

  const int64_t bound_us_;
  int64_t now_us_ = 0;
  std::vector<Lock> locks_;
};

// Stretches of a lock that a violation of (a) or (d) explains, so that (e) does not report the
// same stretch again. Filled at the end of the run, before (e) is judged.
class ExplainedStretches {
 public:
  void Add(int lock, int64_t from_us, int64_t to_us) { stretches_.push_back({lock, from_us, to_us}); }
  bool Overlaps(int lock, int64_t from_us, int64_t to_us) const;

 private:
  struct Stretch {
    int lock;
    int64_t from_us;
    int64_t to_us;
  };
  std::vector<Stretch> stretches_;
};

// One finding of a rule, written up.
struct KeyedViolation {
  FindingKey key;
  Violation violation;
};

// One rule: an observer of the facts pass, told besides when time moves on.
class Rule : public history::FactsObserver {
 public:
  // Time moves on to t_us (kForever: the run is ending); what waited for a moment before t_us
  // is decided. Called before the event at t_us, with now_us() still the previous moment.
  virtual void Advance(const history::FactsPass&, int64_t /*t_us*/) {}
  // How many findings it made, and the kept ones.
  virtual size_t count() const = 0;
  virtual std::vector<FindingKey> KeptKeys() const = 0;
  // Writes up its kept findings no later than `last` (all of them if null), earliest first.
  virtual void WriteUp(const Narrator& n, const FindingKey* last, std::vector<KeyedViolation>* out) const = 0;
};

// A rule's findings with their payloads, and the write-up every rule does the same way.
template <class Payload>
class RuleFindings {
 public:
  explicit RuleFindings(size_t limit) : found_(limit) {}

  void Add(const FindingKey& key, Payload payload) {
    if (auto [number, p] = found_.Add(key); p != nullptr) *p = std::move(payload);
  }
  size_t count() const { return found_.count(); }
  std::vector<FindingKey> KeptKeys() const {
    std::vector<FindingKey> keys;
    for (const auto& [key, payload] : found_.Sorted()) keys.push_back(key);
    return keys;
  }
  template <class Explain>
  void WriteUp(const FindingKey* last, std::vector<KeyedViolation>* out, Explain explain) const {
    for (const auto& [key, payload] : found_.Sorted()) {
      if (last != nullptr && Earlier(*last, key)) break;
      out->push_back({key, explain(key, *payload)});
    }
  }

 private:
  Findings<Payload> found_;
};

std::unique_ptr<Rule> MakeNoTakeoverAfterCrash(const CheckOptions& options, const LivenessFacts& facts,
                                               ExplainedStretches* explained);
std::unique_ptr<Rule> MakeWaitedWhileFree(const CheckOptions& options, const LivenessFacts& facts);
std::unique_ptr<Rule> MakeStuck(const CheckOptions& options, const LivenessFacts& facts);
std::unique_ptr<Rule> MakeOrphans(const CheckOptions& options, const LivenessFacts& facts,
                                  ExplainedStretches* explained);
std::unique_ptr<Rule> MakeUnobtainable(const CheckOptions& options, const LivenessFacts& facts,
                                       const ExplainedStretches& explained);

}  // namespace lockstep::check::liveness

#endif  // LOCKSTEP_CHECK_LIVENESS_RULE_H_
