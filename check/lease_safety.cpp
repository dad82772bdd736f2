// lease_safety: nobody acts as holder after its lease expired or was lost on its node.
//
// The facts pass opens a lease gap when a lease `expired`/`lost` event on a lock lists a
// thread's owner field while that thread believes it holds the lock (or is inside its
// resource), or when a `released` or `owners` event drops the field of such a thread while it
// is not releasing the lock (someone else's command deleted it); the gap closes when the thread
// stops believing and leaves the resource, or when the node records its field `acquired` again.
// If the loss came while the thread's acquire was in flight, the gap opens at that acquire's
// ok. RedLock/MultiLock: the lease is lost only when a loss leaves the field alive on fewer than
// a quorum of its nodes, and the gap closes when it is alive on a quorum again.
//
// A gap longer than 0 us is a violation: "used_after_loss" when the thread was inside or entered
// the resource during it (the dangerous case), "held_after_loss" otherwise.
#include "check/overlap.h"
#include "check/property.h"

namespace lockstep::check {

namespace {

using history::FactsPass;
using history::GapEnd;
using history::LeaseGap;
using history::Span;

class LeaseSafety : public PropertyChecker {
 public:
  explicit LeaseSafety(const CheckOptions& options) : found_(options.max_violations) {}

  void OnGapClosed(const FactsPass& f, const LeaseGap& g) override {
    if (g.to_us <= g.from_us) return;  // Stopped holding in the same microsecond.
    const FindingKey key{g.from_us, g.from_seq, static_cast<uint8_t>(g.used_resource ? 1 : 0),
                         static_cast<int64_t>(g.id), history::kNone, history::kNone};
    auto [number, gap] = found_.Add(key);
    if (gap == nullptr) return;
    *gap = g;
    // A reentry may still set the belief's lease: the explanation tells the lease it ended with.
    if (g.has_belief && f.BeliefOf(g.thread, g.lock, g.belief.shared) != nullptr &&
        f.BeliefOf(g.thread, g.lock, g.belief.shared)->id == g.belief.id) {
      waiting_.Wait(g.belief.id, number);
    }
  }

  void OnSpanEnded(const FactsPass&, const Span& s) override {
    if (s.access) return;
    waiting_.Ended(s.id, [&](uint64_t number) {
      if (LeaseGap* g = found_.Get(number)) g->belief = s;
    });
  }

  PropertyResult Result(const Narrator& n) override {
    return Conclude(kLeaseSafety, found_,
                    [&](const FindingKey&, const LeaseGap& g) { return Explain(n, g); });
  }

 private:
  static Violation Explain(const Narrator& n, const LeaseGap& g) {
    const history::FactsPass& f = n.facts();
    const std::string& who = n.Thread(g.thread);
    Violation v;
    v.kind = g.used_resource ? "used_after_loss" : "held_after_loss";
    v.to_us = g.to_us;
    v.threads = {who};
    v.events = {g.loss.seq, g.from_seq};
    if (g.to_seq != history::kOpenSeq) v.events.push_back(g.to_seq);
    v.explanation = n.Loss(g.thread, g.loss);
    if (g.alive >= 0) {
      v.explanation += " That left its field on " + std::to_string(g.alive) + " of the " +
                       std::to_string(f.protocol().nodes) + " nodes, fewer than the quorum of " +
                       std::to_string(f.protocol().quorum) + ".";
      if (g.has_belief) {
        const std::string earlier = n.Losses(g.thread, g.earlier_losses, &v.events);
        if (!earlier.empty()) v.explanation += " Before that:" + earlier;
      }
    }
    int64_t context_from_us = g.loss.t_us;
    if (g.has_belief) {
      const Span& b = g.belief;
      v.events.push_back(b.start_seq);
      context_from_us = std::min(context_from_us, b.start_us);
      const std::string lease = b.lease_us >= 0
                                    ? "a lease of " + Seconds(b.lease_us)
                                    : "the watchdog (lease " + Seconds(f.lease_default_us()) + ")";
      if (g.at_acquire) {
        v.explanation += " That was while its acquire of " + n.Lock(g.lock) +
                         " was in flight; the acquire then succeeded at " + Seconds(b.start_us) +
                         " with " + lease + ", so " + who +
                         " believed it held a lock the node no longer recorded for it, ";
      } else {
        v.explanation += " " + who + " had acquired " + n.Lock(g.lock) + " at " +
                         Seconds(b.start_us) + " with " + lease + " and still believed it held it, ";
      }
    } else {
      v.explanation += " " + who + " was inside the resource of " + n.Lock(g.lock) + " then, ";
    }
    switch (g.end) {
      case GapEnd::kStoppedHolding: v.explanation += "until " + Seconds(g.to_us); break;
      case GapEnd::kReacquired:
        v.explanation += g.alive >= 0 ? "until its field was on a quorum of nodes again at " +
                                            Seconds(g.to_us)
                                      : "until its field was acquired again on " +
                                            n.ProcessName(g.node) + " at " + Seconds(g.to_us);
        break;
      case GapEnd::kCrash: v.explanation += "until its process crashed at " + Seconds(g.to_us); break;
      case GapEnd::kRunEnd: v.explanation += "until the run ended at " + Seconds(g.to_us); break;
    }
    v.explanation += ": " + Seconds(g.to_us - g.from_us) + " without a lease.";
    if (g.used_resource) {
      v.events.push_back(g.use_seq);
      v.explanation += " It used the resource during that time (from " + Seconds(g.use_us) +
                       n.Token(g.use_has_token, g.use_token) + "), where another client could be too.";
    } else {
      v.explanation += " It did not use the resource during that time.";
    }
    v.explanation += n.Faults(context_from_us, g.to_us, g.loss.t_us, {n.ProcessOfThread(g.thread)},
                              &v.events);
    return v;
  }

  Findings<LeaseGap> found_;
  Waiters<uint64_t> waiting_;
};

}  // namespace

std::unique_ptr<PropertyChecker> MakeLeaseSafety(const CheckOptions& options) {
  return std::make_unique<LeaseSafety>(options);
}

}  // namespace lockstep::check
