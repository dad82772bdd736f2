// Checkers: judge a recorded History against the promises a Redisson-style lock makes.
//
// They read only the History (never the simulator), so they judge a history recorded against a
// live Redis, or one loaded from a file, exactly like a simulated one. One pass over the events
// (O(n), hash-map lookups) reconstructs what every client thread believed and what every node
// did; each property is then a small function over those facts. Overall cost is O(n log n) in
// the number of events, plus O(n * T) for the overlap sweeps (T = threads contending for one
// lock, since a thread holds a lock at most once at a time).
//
// The five properties, in the order a Verdict lists them ("thread" = "c1.t0": process c1,
// thread index 0; "belief" = a thread believes it holds a lock):
//
//  mutual_exclusion   A belief starts at the acquire `ok` that takes the thread's hold count
//                     on that lock from 0 to 1 and ends at the `invoke` of the release that
//                     takes it back to 0 (whatever that release's outcome), at a forceUnlock
//                     invoke by the thread, at a `crash` of its process, or at the end of the
//                     run. Acquisitions ending in `info` or `fail` never start a belief. Two
//                     beliefs of different threads in the same lock that overlap in history
//                     order (one starts before the other ends) are one violation.
//  resource_exclusion Same for `resource` enter..exit intervals (grouped by the event's lock
//                     field; a crash or the run end closes an open one).
//  reentrancy         Per thread and lock the checker counts holds (+1 per acquire ok, -1 per
//                     release invoke, never below 0). A release `ok` must return 0 when the count
//                     was >1 and 1 when it was 1; a release by a thread holding nothing must not
//                     end `ok`, and no lease `released` event may occur on that lock between its
//                     invoke and its completion while another thread believes it holds it.
//                     Judged only while the count is known to match the lock hash: an acquire
//                     or release ending `info`, a crash while holding, a forceUnlock, or a
//                     lease released/expired/lost while the count is >0 makes it unknown; a
//                     release returning 1 or failing, or the key's deletion, at count 0 (or a
//                     new client uuid) makes it known again.
//  lease_safety       A lease `expired`/`lost` event on a lock that lists a thread's owner field
//                     while that thread believes it holds the lock (or is inside its resource)
//                     opens a gap; the gap closes when the thread stops believing and leaves the
//                     resource, or when the node records its field `acquired` again. If the loss
//                     came while the thread's acquire was in flight, the gap opens at that
//                     acquire's ok. A gap longer than 0 us is a violation; kind
//                     "used_after_loss" when the thread was inside or entered the resource
//                     during it (the dangerous case), "held_after_loss" otherwise.
//  liveness           With B = CheckOptions::liveness_bound_us:
//                     (a) "no_takeover_after_crash": a client crashes while believing it holds
//                         lock L with lease D (explicit lease of its latest acquire, else the
//                         lease_default note, else CheckOptions::lease_default_us). Let
//                         free = crash + D and try = the first moment >= free at which some
//                         acquire of L is in flight. Some acquire of L must end ok (after the
//                         crash) by try + B. Not judged if nobody tries or the run ends first.
//                     (b) "waited_while_free": an acquire in flight while its lock is free on the
//                         node its commands went to (free = from a lease released/expired/lost
//                         to the next acquired on that node; free from the start of the run) for
//                         a continuous stretch longer than B. Stretches while the node or the
//                         client is crashed, paused, partitioned or losing replies (by fault
//                         events on either process, or a partition on "sim") do not count.
//                     (c) "stuck": an operation of a live, unpaused process that never completes,
//                         invoked more than B + its wait before the end of the run (wait from
//                         "wait=<n>ms" in the invoke detail; lock() waits forever and is exempt;
//                         release and forceUnlock have no wait).
//
// Each violation names its threads, its true-time interval, the seqs of the events behind it
// (acquisitions, lease events, faults) and a plain-language explanation.
#ifndef LOCKSTEP_CHECK_CHECKERS_H_
#define LOCKSTEP_CHECK_CHECKERS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/history.h"
#include "model/scenario.h"  // Expectation

namespace lockstep::check {

inline constexpr std::string_view kMutualExclusion = "mutual_exclusion";
inline constexpr std::string_view kResourceExclusion = "resource_exclusion";
inline constexpr std::string_view kReentrancy = "reentrancy";
inline constexpr std::string_view kLeaseSafety = "lease_safety";
inline constexpr std::string_view kLiveness = "liveness";

// Every property, in the order Verdict::results lists them.
inline constexpr std::array<std::string_view, 5> kProperties = {
    kMutualExclusion, kResourceExclusion, kReentrancy, kLeaseSafety, kLiveness};

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

struct PropertyResult {
  std::string property;
  bool violated = false;
  size_t violation_count = 0;         // All violations found.
  std::vector<Violation> violations;  // The earliest max_violations, by (from_us, seq).
};

struct Verdict {
  std::vector<PropertyResult> results;  // One per kProperties entry, in that order.
  int64_t run_end_us = 0;               // From the "run" note, or the last event.
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
  size_t max_violations = 100;  // Kept per property; the rest are only counted.
  size_t max_warnings = 100;
};

Verdict CheckHistory(const History& history, const CheckOptions& options);

// How a Verdict compares with a scenario's [expect] table.
struct Judgement {
  bool matches = true;
  // One line per property that did not match, e.g.
  // "mutual_exclusion: expected to hold, violated (2 violations)".
  std::vector<std::string> mismatches;
};

// kHold matches a property that was not violated, kViolated one that was, kAny anything. A
// property name the checkers do not know is a mismatch.
Judgement Judge(const Verdict& verdict, const std::map<std::string, Expectation>& expect);

}  // namespace lockstep::check

#endif  // LOCKSTEP_CHECK_CHECKERS_H_
