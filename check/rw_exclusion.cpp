// rw_exclusion: read-write locks (kind rwlock, or an unknown kind with read-side ops) let
// readers share but never a writer with anyone: no write belief overlaps a read belief
// ("write_read") or another thread's write belief ("write_write").
#include "check/exclusion.h"

namespace lockstep::check {

namespace {

using history::Span;

class RwExclusion : public ExclusionChecker {
 public:
  explicit RwExclusion(const CheckOptions& options)
      : ExclusionChecker(kRwExclusion, /*accesses=*/false, options) {}

 private:
  bool Applicable(const history::FactsPass& f) const override {
    return f.protocol().rw() || (!f.protocol().known() && f.has_read_ops());
  }
  bool MayApply(const history::FactsPass& f) const override {
    return f.protocol().rw() || !f.protocol().known();
  }
  std::optional<uint8_t> PairKind(const Span& a, const Span& b) const override {
    if (a.shared && b.shared) return std::nullopt;
    return static_cast<uint8_t>(a.shared || b.shared ? 0 : 1);
  }

  Violation ExplainPair(const Narrator& n, const FindingKey& key, const OverlapPair& p) const override {
    const Span& a = p.a;
    const Span& b = p.b;
    Violation v;
    v.kind = key.kind == 0 ? "write_read" : "write_write";
    v.to_us = p.to_us();
    v.threads = {n.Thread(a.thread), n.Thread(b.thread)};
    v.events = {a.start_seq, b.start_seq};
    v.explanation = n.Thread(b.thread) + " acquired the " + n.Side(b) + " of " + n.Lock(b.lock) +
                    " at " + Seconds(b.start_us) + " while " + n.Thread(a.thread) +
                    " still believed it held the " + n.Side(a) + " (acquired at " +
                    Seconds(a.start_us) + ", believed " + n.Until(a) + "); only readers may " +
                    "hold the lock together.";
    v.explanation += n.Losses(a.thread, p.a_losses, &v.events);
    v.explanation += n.Faults(a.start_us, v.to_us, b.start_us,
                              {n.ProcessOfThread(a.thread), n.ProcessOfThread(b.thread)}, &v.events);
    return v;
  }
};

}  // namespace

std::unique_ptr<PropertyChecker> MakeRwExclusion(const CheckOptions& options) {
  return std::make_unique<RwExclusion>(options);
}

}  // namespace lockstep::check
