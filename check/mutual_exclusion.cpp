// mutual_exclusion: no two threads believe they hold the same lock at the same time.
//
// A belief starts at the acquire `ok` that takes the thread's hold count on that lock (per
// side) from 0 to 1 and ends at the `invoke` of the release that takes it back to 0 (whatever
// that release's outcome), at a forceUnlock invoke by the thread, at a `crash` of its process,
// or at the end of the run (history/facts.h). Acquisitions ending in `info` or `fail` never
// start a belief. Two beliefs of different threads in the same lock that overlap in history
// order (one starts before the other ends) are one violation ("overlap"), unless both are read
// beliefs. Semaphores with P > 1 permits: a belief that starts while beliefs of P or more other
// threads are open is one violation ("over_permits") naming them all; with P = 1 the pairwise
// rule applies. Not applicable to count-down latches (an open latch lets every thread through;
// their rule is `latch`).
#include "check/exclusion.h"

namespace lockstep::check {

namespace {

using history::Span;

class MutualExclusion : public ExclusionChecker {
 public:
  explicit MutualExclusion(const CheckOptions& options)
      : ExclusionChecker(kMutualExclusion, /*accesses=*/false, options) {}

 private:
  Violation ExplainPair(const Narrator& n, const FindingKey&, const OverlapPair& p) const override {
    const Span& a = p.a;
    const Span& b = p.b;
    Violation v;
    v.kind = "overlap";
    v.to_us = p.to_us();
    v.threads = {n.Thread(a.thread), n.Thread(b.thread)};
    v.events = {a.start_seq, b.start_seq};
    v.explanation = n.Thread(b.thread) + " acquired " + n.Lock(b.lock) + " at " +
                    Seconds(b.start_us) + n.Token(b) + " while " + n.Thread(a.thread) +
                    " still believed it held it (acquired at " + Seconds(a.start_us) + n.Token(a) +
                    ", believed " + n.Until(a) + ").";
    if (a.shared || b.shared) {
      v.explanation += " " + n.Thread(b.thread) + " took its " + n.Side(b) + ", " +
                       n.Thread(a.thread) + " held its " + n.Side(a) + ".";
    }
    const std::string losses = n.Losses(a.thread, p.a_losses, &v.events);
    v.explanation += losses.empty() ? " The history records no expiry or loss of " +
                                          n.Thread(a.thread) + "'s lease before that."
                                    : losses;
    if (p.b_given != history::kOpenSeq) v.events.push_back(p.b_given);
    v.explanation += n.Faults(a.start_us, v.to_us, b.start_us,
                              {n.ProcessOfThread(a.thread), n.ProcessOfThread(b.thread)}, &v.events);
    return v;
  }
};

}  // namespace

std::unique_ptr<PropertyChecker> MakeMutualExclusion(const CheckOptions& options) {
  return std::make_unique<MutualExclusion>(options);
}

}  // namespace lockstep::check
