// Findings: what a checker found, before it is written up.
//
// A run can find millions of violations (a broken script that lets every acquisition overlap
// the last); a verdict keeps the earliest CheckOptions::max_violations of them and counts the
// rest. Findings does that in bounded memory as the run goes: each finding is counted, and kept
// (with the data its explanation will need, the Payload) only while it is among the earliest.
// Order is by (from_us, the seq of the event that revealed it, kind, then the ids a, b, c), so
// the same history always keeps and lists the same findings.
//
// A kept finding may still be waiting for facts its explanation needs (the end of a belief, the
// outcome of an operation); its checker finds it again by the number Add returned, which stays
// valid only while the finding is kept (Get returns null once it was pushed out).
#ifndef LOCKSTEP_CHECK_FINDINGS_H_
#define LOCKSTEP_CHECK_FINDINGS_H_

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "history/facts.h"

namespace lockstep::check {

struct FindingKey {
  int64_t from_us = 0;
  history::Seq order = 0;  // The event that revealed it; breaks ties between equal from_us.
  uint8_t kind = 0;
  int64_t a = history::kNone;  // Ids whose meaning depends on the property.
  int64_t b = history::kNone;
  int64_t c = history::kNone;
};

inline bool Earlier(const FindingKey& x, const FindingKey& y) {
  return std::tie(x.from_us, x.order, x.kind, x.a, x.b, x.c) <
         std::tie(y.from_us, y.order, y.kind, y.a, y.b, y.c);
}

template <class Payload>
class Findings {
 public:
  using Number = uint64_t;

  explicit Findings(size_t limit) : limit_(limit) {}

  // Counts a finding. Returns its number and a payload to fill when it is among the earliest
  // `limit` so far (pushing out the latest kept one if need be), else {0, nullptr}.
  std::pair<Number, Payload*> Add(const FindingKey& key) {
    ++count_;
    if (limit_ == 0) return {0, nullptr};
    if (kept_.size() >= limit_) {
      if (!Earlier(key, kept_.front().key)) return {0, nullptr};
      std::pop_heap(kept_.begin(), kept_.end(), Later);
      by_number_.erase(kept_.back().number);
      kept_.pop_back();
    }
    const Number number = ++last_number_;
    auto owned = std::make_unique<Payload>();
    Payload* payload = owned.get();
    kept_.push_back(Entry{key, number, std::move(owned)});
    std::push_heap(kept_.begin(), kept_.end(), Later);
    by_number_[number] = payload;
    assert(kept_.size() <= limit_);
    return {number, payload};
  }

  // A kept finding's payload, or null once it was pushed out.
  Payload* Get(Number number) const {
    auto it = by_number_.find(number);
    return it == by_number_.end() ? nullptr : it->second;
  }

  // Whether a finding with this key would be kept now (so that a checker can skip gathering
  // what it would not keep).
  bool WouldKeep(const FindingKey& key) const {
    return limit_ > 0 && (kept_.size() < limit_ || Earlier(key, kept_.front().key));
  }

  size_t count() const { return count_; }

  // Adds another set's findings to this one, as if each had been added here: the kept ones with
  // copies of their payloads, the others only counted.
  void Absorb(const Findings& other) {
    for (const auto& [key, payload] : other.Sorted()) {
      if (auto [number, mine] = Add(key); mine != nullptr) *mine = *payload;
    }
    count_ += other.count_ - other.kept_.size();
  }

  // The kept findings, earliest first.
  std::vector<std::pair<FindingKey, const Payload*>> Sorted() const {
    std::vector<std::pair<FindingKey, const Payload*>> out;
    for (const Entry& e : kept_) out.emplace_back(e.key, e.payload.get());
    std::sort(out.begin(), out.end(),
              [](const auto& x, const auto& y) { return Earlier(x.first, y.first); });
    return out;
  }

  template <class F>
  void ForEach(F f) {
    for (Entry& e : kept_) f(e.key, e.number, *e.payload);
  }

 private:
  struct Entry {
    FindingKey key;
    Number number;
    std::unique_ptr<Payload> payload;
  };
  // A max-heap on the key: the front is the latest kept, the first to go.
  static bool Later(const Entry& x, const Entry& y) { return Earlier(x.key, y.key); }

  size_t limit_;
  size_t count_ = 0;
  Number last_number_ = 0;
  std::vector<Entry> kept_;
  std::unordered_map<Number, Payload*> by_number_;
};

}  // namespace lockstep::check

#endif  // LOCKSTEP_CHECK_FINDINGS_H_
