// What the checkers conclude: a result per property, each violation with its threads, its
// true-time interval, the events behind it and a plain-language explanation; and how that
// compares with a scenario's [expect] table.
#ifndef LOCKSTEP_CHECK_VERDICT_H_
#define LOCKSTEP_CHECK_VERDICT_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "history/names.h"
#include "model/scenario.h"  // Expectation

namespace lockstep::check {

using history::kFairness;
using history::kFencing;
using history::kLatch;
using history::kLeaseSafety;
using history::kLiveness;
using history::kMutualExclusion;
using history::kProperties;
using history::kReentrancy;
using history::kResourceExclusion;
using history::kRwExclusion;
using history::kSemaphore;

struct Violation {
  std::string property;              // One of kProperties.
  std::string kind;                  // Which rule of the property: "overlap", "stuck", ...
  // "c1.t0", "c2.t0": for overlaps the earlier holder first; for a foreign release the
  // releaser, then the holders it hurt; for a crash the crashed holders, then the waiter.
  std::vector<std::string> threads;
  int64_t from_us = 0;               // True-time interval of the violation.
  int64_t to_us = 0;
  std::vector<uint64_t> events;      // Seqs of the events behind it, ascending.
  std::string explanation;           // One paragraph, times in seconds with ms precision.
};

// Something a property noticed that is not a violation, with the same fields: a waiter exempt
// from the fair order and why ("timed_out", "crashed", "purged", ...), a write the fenced
// resource rejected ("rejected_write").
struct Observation {
  std::string property;
  std::string kind;
  std::vector<std::string> threads;
  int64_t from_us = 0;
  int64_t to_us = 0;
  std::vector<uint64_t> events;      // Seqs, ascending.
  std::string explanation;
};

struct PropertyResult {
  std::string property;
  // False when the property does not apply to the history's protocol kind (fairness of an
  // RLock, say); it is then never violated.
  bool applicable = true;
  bool violated = false;
  size_t violation_count = 0;         // All violations found.
  std::vector<Violation> violations;  // The earliest max_violations, by (from_us, seq).
  size_t observation_count = 0;           // All observations.
  std::vector<Observation> observations;  // The earliest max_violations, by (from_us, seq).
};

struct Verdict {
  std::vector<PropertyResult> results;  // One per kProperties entry, in that order.
  int64_t run_end_us = 0;               // From the "run" note, or the last event.
  std::string protocol_kind;            // From the "protocol" note; empty if there is none.
  // Things in the history the checkers could not make sense of (a completion without an
  // invoke, an exit without an enter ...), at most CheckOptions::max_warnings of them.
  std::vector<std::string> warnings;
  size_t warning_count = 0;

  // The result for `property`, or nullptr if there is no such property.
  const PropertyResult* Find(std::string_view property) const;
  bool AnyViolated() const;
};

struct CheckOptions {
  int64_t liveness_bound_us = 5'000'000;  // Scenario::liveness_bound_us.
  // The lease assumed when an acquire gave none and the history has no lease_default note
  // (Redisson's lockWatchdogTimeout default).
  int64_t lease_default_us = 30'000'000;
  // The fair lock's wait timeout (Config.fairLockWaitTimeout) when the protocol note gives none
  // (ProtocolSpec::fair_wait_timeout_us).
  int64_t fair_wait_timeout_us = 300'000'000;
  size_t max_violations = 100;  // Kept per property; the rest are only counted.
  size_t max_warnings = 100;
};

// How a Verdict compares with a scenario's [expect] table.
struct Judgement {
  bool matches = true;
  // One line per property that did not match, e.g.
  // "mutual_exclusion: expected to hold, violated (2 violations)".
  std::vector<std::string> mismatches;
};

// kHold matches a property that was not violated, kViolated one that was, kAny anything (a
// property that does not apply to the protocol is never violated). A property name the checkers
// do not know is a mismatch.
Judgement Judge(const Verdict& verdict, const std::map<std::string, Expectation>& expect);

}  // namespace lockstep::check

#endif  // LOCKSTEP_CHECK_VERDICT_H_
