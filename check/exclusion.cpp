#include "check/exclusion.h"

#include <algorithm>

namespace lockstep::check {

using history::Span;

ExclusionChecker::ExclusionChecker(std::string_view property, bool accesses,
                                   const CheckOptions& options)
    : property_(property), accesses_(accesses), pairs_(options.max_violations),
      overs_(options.max_violations) {}

bool ExclusionChecker::Applicable(const history::FactsPass& f) const {
  return !f.protocol().latch();
}

bool ExclusionChecker::MayApply(const history::FactsPass& f) const {
  return !f.protocol().latch();
}

bool ExclusionChecker::CountsPermits(const history::FactsPass& f, int lock) const {
  return f.protocol().semaphore() && f.PermitsAllowed(lock) > 1;
}

std::optional<uint8_t> ExclusionChecker::PairKind(const Span& a, const Span& b) const {
  if (a.shared && b.shared) return std::nullopt;
  return 0;
}

void ExclusionChecker::OnSpanStarted(const history::FactsPass& f, const Span& s) {
  if (s.access != accesses_ || !MayApply(f)) return;
  const std::vector<Span>& open = open_.Open(s.lock);
  if (CountsPermits(f, s.lock)) {
    const int64_t permits = f.PermitsAllowed(s.lock);
    size_t others = 0;
    for (const Span& o : open) others += o.thread != s.thread;
    if (others >= static_cast<size_t>(permits)) {
      const FindingKey key{s.start_us, s.start_seq, 0, static_cast<int64_t>(s.id), s.lock,
                           history::kNone};
      if (auto [number, over] = overs_.Add(key); over != nullptr) {
        over->s = s;
        over->permits = permits;
        waiting_.Wait(s.id, number);
        for (const Span& o : open) {
          if (o.thread == s.thread) continue;
          over->others.push_back(o);
          waiting_.Wait(o.id, number);
        }
      }
    }
  } else {
    for (const Span& a : open) {
      if (a.thread == s.thread) continue;
      const std::optional<uint8_t> kind = PairKind(a, s);
      if (!kind) continue;
      const FindingKey key{s.start_us, s.start_seq, *kind, static_cast<int64_t>(a.id),
                           static_cast<int64_t>(s.id), history::kNone};
      auto [number, pair] = pairs_.Add(key);
      if (pair == nullptr) continue;
      pair->a = a;
      pair->b = s;
      if (!accesses_) {
        pair->a_losses = f.LossesSinceBelief(a.thread, a.lock, a.shared);
        const history::Seq given = f.LastGiven(s.thread, s.lock);
        if (given != history::kOpenSeq && given < s.start_seq) pair->b_given = given;
      }
      waiting_.Wait(a.id, number);
      waiting_.Wait(s.id, number);
    }
  }
  open_.Start(s);
}

void ExclusionChecker::OnSpanEnded(const history::FactsPass& f, const Span& s) {
  if (s.access != accesses_ || !MayApply(f)) return;
  open_.End(s);
  waiting_.Ended(s.id, [&](uint64_t number) {
    if (OverlapPair* pair = pairs_.Get(number)) pair->Update(s);
    if (OverPermits* over = overs_.Get(number)) over->Update(s);
  });
}

PropertyResult ExclusionChecker::Result(const Narrator& n) {
  if (!Applicable(n.facts())) return NotApplicable(property_);
  PropertyResult result =
      Conclude(property_, pairs_, [&](const FindingKey& key, const OverlapPair& pair) {
        return ExplainPair(n, key, pair);
      });
  if (overs_.count() == 0) return result;
  // Counted permits (a one-permit semaphore's, once addPermits raised them): with the pairs,
  // in time order.
  PropertyResult by_count =
      Conclude(property_, overs_, [&](const FindingKey&, const OverPermits& over) {
        return ExplainOver(n, over);
      });
  result.violated = true;
  result.violation_count += by_count.violation_count;
  for (Violation& v : by_count.violations) result.violations.push_back(std::move(v));
  std::stable_sort(result.violations.begin(), result.violations.end(),
                   [](const Violation& a, const Violation& b) { return a.from_us < b.from_us; });
  return result;
}

Violation ExclusionChecker::ExplainOver(const Narrator& n, const OverPermits& over) const {
  const Span& b = over.s;
  Violation v;
  v.kind = "over_permits";
  v.to_us = over.to_us();
  std::string others;
  std::vector<int> clients = {n.ProcessOfThread(b.thread)};
  for (const Span& a : over.others) {
    v.threads.push_back(n.Thread(a.thread));
    v.events.push_back(a.start_seq);
    clients.push_back(n.ProcessOfThread(a.thread));
    others += (others.empty() ? "" : "; ") + n.Thread(a.thread) + " (since " + Seconds(a.start_us) +
              ", " + n.Until(a) + ")";
  }
  v.threads.push_back(n.Thread(b.thread));
  v.events.push_back(b.start_seq);
  v.explanation = n.Thread(b.thread) + (accesses_ ? " entered the resource of " : " acquired ") +
                  n.Lock(b.lock) + " at " + Seconds(b.start_us) + " while " +
                  Count(over.others.size(), "other thread") +
                  (accesses_ ? " were inside" : " held it") + ", more than its " +
                  Count(static_cast<size_t>(over.permits), "permit") + " allow: " + others + ".";
  v.explanation += n.Faults(b.start_us, v.to_us, b.start_us, clients, &v.events);
  return v;
}

}  // namespace lockstep::check
