// liveness: crashed holders' locks come free; nobody waits while the lock is free; nothing is
// stuck at the end; nothing stays taken that nobody holds; a lock nobody holds can be obtained.
//
// With B = CheckOptions::liveness_bound_us (docs/history.md has every rule in full), five rules,
// each an observer of its own in check/liveness/ (rule.h lists them):
// (a) "no_takeover_after_crash": a crashed holder's lock is taken within its lease plus B of
//     someone trying.
// (b) "waited_while_free" ("waited_with_free_permits", "waited_while_open"): no acquire waits
//     longer than B while its lock is free on the node its commands went to.
// (c) "stuck": no operation of a live, unpaused process is still waiting at the end, invoked
//     more than B + its wait before it.
// (d) Orphans: "orphaned_lock", "leaked_permits", "orphaned_latch": the node keeps nothing taken
//     that no believer accounts for.
// (e) "unobtainable": a lock nobody holds is obtained within the longest lease plus B of
//     someone trying. Not reported where (a) or (d) explains it.
//
// This file composes them into the one property: it keeps the facts every rule reads
// (LivenessFacts), feeds every rule the same facts in the same order, tells them when time
// moves on, and writes their findings up together, earliest first.
#include <algorithm>
#include <cassert>
#include <memory>

#include "check/liveness/rule.h"
#include "check/property.h"

namespace lockstep::check {

namespace {

using history::FactsPass;
using liveness::KeyedViolation;
using liveness::LivenessFacts;
using liveness::Rule;

class Liveness : public PropertyChecker {
 public:
  explicit Liveness(const CheckOptions& options)
      : facts_(options.liveness_bound_us), limit_(options.max_violations) {
    assert(options.liveness_bound_us >= 0);
    // (e) is judged after (a) and (d), whose violations explain a stretch better.
    rules_.push_back(liveness::MakeNoTakeoverAfterCrash(options, facts_, &explained_));
    rules_.push_back(liveness::MakeWaitedWhileFree(options, facts_));
    rules_.push_back(liveness::MakeStuck(options, facts_));
    rules_.push_back(liveness::MakeOrphans(options, facts_, &explained_));
    rules_.push_back(liveness::MakeUnobtainable(options, facts_, explained_));
    // Every event goes only to the rules that read events, not just facts: most do not.
    for (auto& r : rules_) {
      if (r->WantsEvents()) event_rules_.push_back(r.get());
    }
  }

  bool WantsEvents() const override { return true; }

  void OnEvent(const FactsPass& f, const history::Event& e) override {
    if (e.t_us > facts_.now_us()) Advance(f, e.t_us);
    facts_.set_now_us(e.t_us);
    for (Rule* r : event_rules_) r->OnEvent(f, e);
  }
  void OnOpInvoked(const FactsPass& f, const history::Op& op) override {
    facts_.OpInvoked(f, op);
    for (auto& r : rules_) r->OnOpInvoked(f, op);
  }
  void OnOpEnded(const FactsPass& f, const history::Op& op) override {
    facts_.OpEnded(op);
    for (auto& r : rules_) r->OnOpEnded(f, op);
  }
  void OnOpArrived(const FactsPass& f, const history::Op& op) override {
    for (auto& r : rules_) r->OnOpArrived(f, op);
  }
  void OnSpanStarted(const FactsPass& f, const history::Span& s) override {
    for (auto& r : rules_) r->OnSpanStarted(f, s);
  }
  void OnSpanEnded(const FactsPass& f, const history::Span& s) override {
    for (auto& r : rules_) r->OnSpanEnded(f, s);
  }
  void OnLease(const FactsPass& f, const history::LeaseFact& le) override {
    for (auto& r : rules_) r->OnLease(f, le);
  }
  void OnGapClosed(const FactsPass& f, const history::LeaseGap& gap) override {
    for (auto& r : rules_) r->OnGapClosed(f, gap);
  }
  void OnCrash(const FactsPass& f, const history::ClientCrash& crash) override {
    for (auto& r : rules_) r->OnCrash(f, crash);
  }
  void OnFault(const FactsPass& f, const history::FaultRecord& fault) override {
    for (auto& r : rules_) r->OnFault(f, fault);
  }
  void OnEventDone(const FactsPass& f, const history::Event& e) override {
    for (Rule* r : event_rules_) r->OnEventDone(f, e);
  }
  void OnFinishing(const FactsPass& f) override {
    // Everything before the end has happened: the moments that passed decide.
    Advance(f, liveness::kForever);
    facts_.set_now_us(f.run_end_us());
    for (auto& r : rules_) r->OnFinishing(f);
  }
  void OnFinish(const FactsPass& f) override {
    for (auto& r : rules_) r->OnFinish(f);
  }

  PropertyResult Result(const Narrator& n) override;

 private:
  void Advance(const FactsPass& f, int64_t t_us) {
    for (auto& r : rules_) r->Advance(f, t_us);
  }

  LivenessFacts facts_;
  liveness::ExplainedStretches explained_;
  std::vector<std::unique_ptr<Rule>> rules_;
  std::vector<Rule*> event_rules_;  // Those of rules_ that want OnEvent and OnEventDone.
  size_t limit_;
};

// The rules' findings as one property's: counted together, the earliest `limit_` of them kept
// (each rule kept its own earliest `limit_`, so these are among them), earliest first.
PropertyResult Liveness::Result(const Narrator& n) {
  std::vector<FindingKey> keys;
  size_t count = 0;
  for (const auto& r : rules_) {
    count += r->count();
    const std::vector<FindingKey> kept = r->KeptKeys();
    keys.insert(keys.end(), kept.begin(), kept.end());
  }
  std::sort(keys.begin(), keys.end(), Earlier);
  const FindingKey* last = limit_ > 0 && keys.size() > limit_ ? &keys[limit_ - 1] : nullptr;
  std::vector<KeyedViolation> written;
  if (limit_ > 0) {
    for (const auto& r : rules_) r->WriteUp(n, last, &written);
  }
  std::stable_sort(written.begin(), written.end(),
                   [](const KeyedViolation& x, const KeyedViolation& y) { return Earlier(x.key, y.key); });
  PropertyResult result;
  result.property = std::string(kLiveness);
  result.violation_count = count;
  result.violated = count > 0;
  for (KeyedViolation& k : written) {
    Violation& v = k.violation;
    v.property = result.property;
    v.from_us = k.key.from_us;
    std::sort(v.events.begin(), v.events.end());
    v.events.erase(std::unique(v.events.begin(), v.events.end()), v.events.end());
    result.violations.push_back(std::move(v));
  }
  assert(result.violations.size() <= limit_);
  return result;
}

}  // namespace

std::unique_ptr<PropertyChecker> MakeLiveness(const CheckOptions& options) {
  return std::make_unique<Liveness>(options);
}

}  // namespace lockstep::check
