// What mutual_exclusion, resource_exclusion and rw_exclusion share: a checker of overlaps
// among beliefs (or among accesses to the resource), pair by pair, or for semaphores with more
// than one permit, of a span starting while as many other threads as there are permits already
// hold (or are inside). Each property supplies which pairs violate it and how to say so.
#ifndef LOCKSTEP_CHECK_EXCLUSION_H_
#define LOCKSTEP_CHECK_EXCLUSION_H_

#include <optional>
#include <string_view>

#include "check/overlap.h"
#include "check/property.h"

namespace lockstep::check {

class ExclusionChecker : public PropertyChecker {
 public:
  void OnSpanStarted(const history::FactsPass& f, const history::Span& s) override;
  void OnSpanEnded(const history::FactsPass& f, const history::Span& s) override;
  PropertyResult Result(const Narrator& n) override;

 protected:
  // accesses: judge resource accesses (else beliefs).
  ExclusionChecker(std::string_view property, bool accesses, const CheckOptions& options);

  // Whether the property applies to the history's protocol at all (asked at the end), and
  // whether it may (asked as the run goes: the protocol note comes before any operation). By
  // default: every protocol but count-down latches (an open latch lets every thread through).
  virtual bool Applicable(const history::FactsPass& f) const;
  virtual bool MayApply(const history::FactsPass& f) const;
  // Whether a span starting on `lock` now is judged by counting permits instead of by pairs.
  // By default: semaphores that allow more than one holder now (FactsPass::PermitsAllowed,
  // which addPermits can raise during the run).
  virtual bool CountsPermits(const history::FactsPass& f, int lock) const;
  // The kind of violation an overlapping pair (a started first) is, or nullopt if it is none.
  // By default every pair but two shared holds (two readers of a read-write lock) is kind 0.
  virtual std::optional<uint8_t> PairKind(const history::Span& a, const history::Span& b) const;
  virtual Violation ExplainPair(const Narrator& n, const FindingKey& key,
                                const OverlapPair& pair) const = 0;

 private:
  Violation ExplainOver(const Narrator& n, const OverPermits& over) const;

  std::string_view property_;
  bool accesses_;
  OpenSpans open_;
  Findings<OverlapPair> pairs_;
  Findings<OverPermits> overs_;
  Waiters<uint64_t> waiting_;
};

}  // namespace lockstep::check

#endif  // LOCKSTEP_CHECK_EXCLUSION_H_
