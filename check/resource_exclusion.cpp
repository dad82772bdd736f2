// resource_exclusion: no two threads are inside the protected resource at the same time.
//
// The same rule as mutual_exclusion, for `resource` enter..exit intervals (grouped by the
// event's lock field; a crash or the run end closes an open one): two read accesses may
// overlap; semaphores allow P accesses at once; not applicable to count-down latches.
#include "check/exclusion.h"

namespace lockstep::check {

namespace {

using history::Span;

class ResourceExclusion : public ExclusionChecker {
 public:
  explicit ResourceExclusion(const CheckOptions& options)
      : ExclusionChecker(kResourceExclusion, /*accesses=*/true, options) {}

 private:
  Violation ExplainPair(const Narrator& n, const FindingKey&, const OverlapPair& p) const override {
    const Span& a = p.a;
    const Span& b = p.b;
    const std::string resource = n.facts().LockName(b.lock).empty()
                                     ? "the resource"
                                     : "the resource of " + n.Lock(b.lock);
    Violation v;
    v.kind = "overlap";
    v.to_us = p.to_us();
    v.threads = {n.Thread(a.thread), n.Thread(b.thread)};
    v.events = {a.start_seq, b.start_seq};
    v.explanation = n.Thread(b.thread) + " entered " + resource + " at " + Seconds(b.start_us) +
                    n.Token(b) + " while " + n.Thread(a.thread) + " was still inside (entered at " +
                    Seconds(a.start_us) + n.Token(a) + ", inside " + n.Until(a) + ").";
    if (a.has_token && b.has_token && b.token <= a.token) {
      v.explanation += " The later access carried a token no greater than the earlier one's.";
    }
    v.explanation += n.Faults(a.start_us, v.to_us, b.start_us,
                              {n.ProcessOfThread(a.thread), n.ProcessOfThread(b.thread)}, &v.events);
    return v;
  }
};

}  // namespace

std::unique_ptr<PropertyChecker> MakeResourceExclusion(const CheckOptions& options) {
  return std::make_unique<ResourceExclusion>(options);
}

}  // namespace lockstep::check
