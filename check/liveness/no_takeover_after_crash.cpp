// liveness (a) "no_takeover_after_crash": a client crashes while believing it holds lock L with
// lease D. Let free = crash + D and try = the first moment >= free at which some acquire of L is
// in flight. Some acquire of L must end ok (after the crash) by try + B. Not judged if nobody
// tries or the run ends first, nor for semaphores and latches (their permits and passes have no
// lease to run out; (d) judges them).
//
// Online, a crash's holds are kept until the run ends; who was trying when the lock should have
// come free is decided once time passes that moment.
#include <algorithm>
#include <cassert>

#include "check/liveness/rule.h"

namespace lockstep::check::liveness {

namespace {

using history::ClientCrash;
using history::FactsPass;
using history::kNone;
using history::LeaseFact;
using history::LossRecord;
using history::Op;
using history::Outcome;
using history::Seq;
using history::Span;

// A lock held by a client when it crashed.
struct CrashedHold {
  uint64_t crash_id = 0;
  int process = kNone;
  Seq crash_seq = 0;
  int64_t crash_us = 0;
  int index = 0;  // Among the crash's holds.
  int lock = kNone;
  std::vector<Span> beliefs;
  std::vector<std::vector<LossRecord>> losses;  // Per belief: its losses after the crash.
  int64_t lease_us = 0;
  bool lease_is_default = false;
  int64_t free_us = 0;
  bool looked = false;               // free_us has passed.
  std::vector<uint64_t> candidates;  // In flight at free_us and not yet ended.
  bool has_trier = false;
  AcquireRef trier;
  int64_t try_us = 0;
  bool has_first_ok = false;
  AcquireRef first_ok;
};

struct Payload {
  int64_t to_us = 0;
  std::unique_ptr<CrashedHold> hold;
};

class NoTakeoverAfterCrash : public Rule {
 public:
  NoTakeoverAfterCrash(const CheckOptions& options, const LivenessFacts& facts, ExplainedStretches* explained)
      : facts_(facts), explained_(explained), found_(options.max_violations) {}

  void OnOpInvoked(const FactsPass&, const Op& op) override {
    if (op.kind != history::OpKind::kAcquire) return;
    // Nobody was in flight when the lock came free: the first to try is the trier.
    for (CrashedHold* h : holds_waiting_invoke_) {
      if (h->lock == op.lock && !h->has_trier && op.invoke_us > h->free_us) {
        h->has_trier = true;
        h->trier = AcquireRef::Of(op);
        h->try_us = op.invoke_us;
      }
    }
    std::erase_if(holds_waiting_invoke_, [](CrashedHold* h) { return h->has_trier; });
  }

  // The trier among those in flight when the lock should have come free, and the first success
  // after the crash.
  void OnOpEnded(const FactsPass&, const Op& op) override {
    if (op.kind != history::OpKind::kAcquire) return;
    for (auto& h : holds_) {
      if (h->lock != op.lock) continue;
      if (h->has_trier && h->trier.id == op.id) h->trier.End(op);
      if (auto c = std::find(h->candidates.begin(), h->candidates.end(), op.id); c != h->candidates.end()) {
        h->candidates.erase(c);
        // The one that ends last tried when the lock came free (ties: the first invoked).
        if (!h->has_trier || op.end_us > h->trier.end_us ||
            (op.end_us == h->trier.end_us && op.id < h->trier.id)) {
          h->has_trier = true;
          h->trier = AcquireRef::Ended(op);
        }
      }
      if (!h->has_first_ok && op.outcome == Outcome::kOk && op.end_seq > h->crash_seq) {
        h->has_first_ok = true;
        h->first_ok = AcquireRef::Ended(op);
      }
    }
  }

  // Losses after a crash, named in its explanation.
  void OnLease(const FactsPass&, const LeaseFact& le) override {
    for (auto& h : holds_) {
      if (h->lock != le.lock || le.seq <= h->crash_seq) continue;
      for (size_t i = 0; i < h->beliefs.size(); ++i) {
        if (le.TookFrom(h->beliefs[i].thread) && h->losses[i].size() < history::kLossesKept) {
          h->losses[i].push_back({le.seq, le.t_us, le.node, le.kind});
        }
      }
    }
  }

  void OnCrash(const FactsPass& f, const ClientCrash& crash) override;

  void Advance(const FactsPass& f, int64_t t_us) override;

  void OnFinish(const FactsPass& f) override {
    for (auto& h : holds_) Judge(f, std::move(h));
    holds_.clear();
  }

  size_t count() const override { return found_.count(); }
  std::vector<FindingKey> KeptKeys() const override { return found_.KeptKeys(); }
  void WriteUp(const Narrator& n, const FindingKey* last, std::vector<KeyedViolation>* out) const override {
    found_.WriteUp(last, out, [&](const FindingKey&, const Payload& p) { return Explain(n, p); });
  }

 private:
  void Judge(const FactsPass& f, std::unique_ptr<CrashedHold> h);
  Violation Explain(const Narrator& n, const Payload& p) const;

  const LivenessFacts& facts_;
  ExplainedStretches* explained_;
  RuleFindings<Payload> found_;
  std::vector<CrashedHold*> awaiting_free_;  // Sorted by free_us.
  std::vector<std::unique_ptr<CrashedHold>> holds_;
  std::vector<CrashedHold*> holds_waiting_invoke_;
};

void NoTakeoverAfterCrash::OnCrash(const FactsPass& f, const ClientCrash& crash) {
  // Semaphore permits and latch passes have no lease to run out; (d) judges them.
  if (f.protocol().ownerless()) return;
  std::vector<std::unique_ptr<CrashedHold>> holds;  // One per lock.
  for (const Span& belief : crash.beliefs) {
    auto it = std::find_if(holds.begin(), holds.end(), [&](const auto& h) { return h->lock == belief.lock; });
    if (it == holds.end()) {
      auto h = std::make_unique<CrashedHold>();
      h->crash_id = crash.id;
      h->process = crash.process;
      h->crash_seq = crash.seq;
      h->crash_us = crash.t_us;
      h->index = static_cast<int>(holds.size());
      h->lock = belief.lock;
      holds.push_back(std::move(h));
      it = holds.end() - 1;
    }
    CrashedHold& h = **it;
    h.beliefs.push_back(belief);
    h.losses.emplace_back();
    const int64_t lease_us = belief.lease_us >= 0 ? belief.lease_us : f.lease_default_us();
    if (lease_us >= h.lease_us) {
      h.lease_us = lease_us;
      h.lease_is_default = belief.lease_us < 0;
    }
  }
  for (auto& h : holds) {
    h->free_us = h->crash_us + h->lease_us;
    awaiting_free_.insert(std::upper_bound(awaiting_free_.begin(), awaiting_free_.end(), h->free_us,
                                           [](int64_t t, const CrashedHold* x) { return t < x->free_us; }),
                          h.get());
    holds_.push_back(std::move(h));
  }
}

// Crashed holds whose lock should be free by now: who was trying then.
void NoTakeoverAfterCrash::Advance(const FactsPass& f, int64_t t_us) {
  while (!awaiting_free_.empty() && awaiting_free_.front()->free_us < t_us) {
    CrashedHold* h = awaiting_free_.front();
    awaiting_free_.erase(awaiting_free_.begin());
    h->looked = true;
    const bool at_end = t_us == kForever;
    for (const AcquireRef& r : facts_.InFlight(h->lock)) {
      // At the run's end, the acquisitions still in flight end with it.
      if (r.invoke_us <= h->free_us && (!at_end || f.run_end_us() > h->free_us)) {
        h->candidates.push_back(r.id);
      }
    }
    if (!h->candidates.empty()) {
      h->try_us = h->free_us;
    } else {
      holds_waiting_invoke_.push_back(h);
    }
  }
}

void NoTakeoverAfterCrash::Judge(const FactsPass& f, std::unique_ptr<CrashedHold> h) {
  if (!h->looked || !h->has_trier) return;  // Nobody tried to take the lock over.
  const int64_t deadline_us = h->try_us + facts_.bound_us();
  if (h->has_first_ok && h->first_ok.end_us <= deadline_us) return;
  if (deadline_us >= f.run_end_us()) return;  // The run ended first.
  const int64_t to_us = h->has_first_ok ? h->first_ok.end_us : f.run_end_us();
  explained_->Add(h->lock, h->crash_us, to_us);
  const FindingKey key{h->crash_us, h->crash_seq, kNoTakeover,
                       static_cast<int64_t>((h->crash_id << 16) | static_cast<uint64_t>(h->index)), kNone,
                       kNone};
  Payload p;
  p.to_us = to_us;
  p.hold = std::move(h);
  found_.Add(key, std::move(p));
}

Violation NoTakeoverAfterCrash::Explain(const Narrator& n, const Payload& p) const {
  const CrashedHold& hold = *p.hold;
  const AcquireRef& trier = hold.trier;
  const int64_t bound_us = facts_.bound_us();
  Violation v;
  v.kind = "no_takeover_after_crash";
  v.to_us = p.to_us;
  v.events = {hold.crash_seq, trier.invoke_seq};
  std::string holders;
  int64_t held_since_us = hold.crash_us;
  for (const Span& belief : hold.beliefs) {
    v.threads.push_back(n.Thread(belief.thread));
    v.events.push_back(belief.start_seq);
    held_since_us = std::min(held_since_us, belief.start_us);
    holders += (holders.empty() ? "" : " and ") + n.Thread(belief.thread);
  }
  v.threads.push_back(n.Thread(trier.thread));
  v.explanation = n.ProcessName(hold.process) + " crashed at " + Seconds(hold.crash_us) + " while " + holders +
                  " held " + n.Lock(hold.lock) + " (lease " + Seconds(hold.lease_us) +
                  (hold.lease_is_default ? ", the watchdog's" : "") + "), so the lock should have been free by " +
                  Seconds(hold.crash_us + hold.lease_us) + ". " + n.Thread(trier.thread) +
                  " was trying to acquire it from " + Seconds(hold.try_us) + ", but no acquisition succeeded ";
  if (hold.has_first_ok) {
    v.events.push_back(hold.first_ok.end_seq);
    v.explanation += "until " + Seconds(hold.first_ok.end_us) + " (" + n.Thread(hold.first_ok.thread) + ")";
  } else {
    v.explanation += "before the run ended at " + Seconds(n.facts().run_end_us());
  }
  const int64_t deadline_us = hold.try_us + bound_us;
  v.explanation += ", later than " + Seconds(deadline_us) + " (" + Seconds(hold.try_us) +
                   " + the liveness bound of " + Seconds(bound_us) + ").";
  std::string losses;
  for (size_t i = 0; i < hold.beliefs.size(); ++i) {
    losses += n.Losses(hold.beliefs[i].thread, hold.losses[i], &v.events);
  }
  v.explanation += losses.empty() ? " No node recorded the lease as expired or lost." : losses;
  v.explanation += n.Faults(held_since_us, p.to_us, hold.crash_us + hold.lease_us,
                            {hold.process, n.ProcessOfThread(trier.thread)}, &v.events);
  return v;
}

}  // namespace

std::unique_ptr<Rule> MakeNoTakeoverAfterCrash(const CheckOptions& options, const LivenessFacts& facts,
                                               ExplainedStretches* explained) {
  assert(explained != nullptr);
  return std::make_unique<NoTakeoverAfterCrash>(options, facts, explained);
}

}  // namespace lockstep::check::liveness
