// Overlaps of beliefs or accesses, found as they start: what mutual_exclusion,
// resource_exclusion and rw_exclusion share.
//
// Two spans of different threads in the same lock overlap when one starts before the other
// ends (in history order). So when a span starts, it overlaps exactly the spans of other
// threads that are open at that moment; a span that has ended can never overlap a later one.
// OpenSpans keeps only the open spans per lock, in start order.
//
// A finding about an overlap is complete only when both spans have ended (its interval ends
// at the earlier end, and its explanation says how the earlier holder's belief ended); until
// then it waits, and Waiters tells the checker which kept findings a span's end completes.
#ifndef LOCKSTEP_CHECK_OVERLAP_H_
#define LOCKSTEP_CHECK_OVERLAP_H_

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "history/facts.h"

namespace lockstep::check {

class OpenSpans {
 public:
  // The spans of `lock` open now, in start order.
  const std::vector<history::Span>& Open(int lock) const {
    static const std::vector<history::Span> kNone;
    return static_cast<size_t>(lock) < open_.size() ? open_[lock] : kNone;
  }
  void Start(const history::Span& s) {
    if (open_.size() <= static_cast<size_t>(s.lock)) open_.resize(s.lock + 1);
    open_[s.lock].push_back(s);
  }
  void End(const history::Span& s) {
    std::vector<history::Span>& open = open_[s.lock];
    open.erase(std::find_if(open.begin(), open.end(),
                            [&](const history::Span& o) { return o.id == s.id; }));
  }

 private:
  std::vector<std::vector<history::Span>> open_;  // By lock.
};

// Kept findings waiting for spans to end, by span id.
template <class Number>
class Waiters {
 public:
  void Wait(uint64_t span, Number finding) { waiting_[span].push_back(finding); }
  // Calls f(finding) for every finding that waited for `span`, and forgets them.
  template <class F>
  void Ended(uint64_t span, F f) {
    auto it = waiting_.find(span);
    if (it == waiting_.end()) return;
    const std::vector<Number> findings = std::move(it->second);
    waiting_.erase(it);
    for (Number n : findings) f(n);
  }

 private:
  std::unordered_map<uint64_t, std::vector<Number>> waiting_;
};

// A pair of overlapping spans as a finding keeps them: copies brought up to date when each ends.
struct OverlapPair {
  history::Span a;  // The earlier.
  history::Span b;  // The later.
  // Beliefs: the losses of a's field after a began and before b began, and the last lease event
  // that recorded b's field before b began (history::kOpenSeq if none).
  std::vector<history::LossRecord> a_losses;
  history::Seq b_given = history::kOpenSeq;

  void Update(const history::Span& s) {
    if (s.id == a.id) a = s;
    if (s.id == b.id) b = s;
  }
  int64_t to_us() const { return std::min(a.end_us, b.end_us); }
};

// A span that started while `permits` or more spans of other threads were open (semaphores).
struct OverPermits {
  history::Span s;
  std::vector<history::Span> others;  // Open when s started, in start order.
  int64_t permits = 1;

  void Update(const history::Span& x) {
    if (x.id == s.id) s = x;
    for (history::Span& o : others) {
      if (o.id == x.id) o = x;
    }
  }
  // The span lasts while `permits` others stay open: until the permits-th latest of their ends.
  int64_t to_us() const {
    std::vector<int64_t> ends;
    for (const history::Span& o : others) ends.push_back(o.end_us);
    std::nth_element(ends.begin(), ends.begin() + (permits - 1), ends.end(), std::greater<int64_t>());
    return std::min(s.end_us, ends[permits - 1]);
  }
};

}  // namespace lockstep::check

#endif  // LOCKSTEP_CHECK_OVERLAP_H_
