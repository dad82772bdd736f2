// For the checkers' tests: history/testing.h's hand-written histories judged by the checkers,
// and the histories several tests share.
#ifndef LOCKSTEP_CHECK_TESTING_H_
#define LOCKSTEP_CHECK_TESTING_H_

#include "check/check.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "history/history.h"
#include "history/jsonl.h"
#include "history/testing.h"

namespace lockstep::check::testing {

using history::EventType;
using history::History;
using history::TextEvent;

using history::testing::operator""_ms;
using history::testing::operator""_s;

// history/testing.h's recorder, judged by the checkers.
class Recorder : public history::testing::Recorder {
 public:
  using history::testing::Recorder::Recorder;

  Verdict Check(int64_t bound_us = 5_s, size_t max_violations = 100) const {
    CheckOptions options;
    options.liveness_bound_us = bound_us;
    options.max_violations = max_violations;
    return CheckHistory(history(), options);
  }
};

// A copy, so that `const auto& x = Result(r.Check(), ...)` does not outlive the verdict.
inline PropertyResult Result(const Verdict& v, std::string_view property) {
  const PropertyResult* r = v.Find(property);
  REQUIRE(r != nullptr);
  return *r;
}

inline bool Contains(const std::vector<uint64_t>& events, uint64_t seq) {
  return std::find(events.begin(), events.end(), seq) != events.end();
}

inline Recorder CleanTurns() {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1000_ms, "c1.t0", "acquire", "tryLock(wait=10000ms)");
  r.Exec(1001_ms, "n1", "c1.t0", "acquire", "nil");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Enter(1003_ms, "c1.t0");
  r.Invoke(1500_ms, "c2.t0", "acquire", "tryLock(wait=10000ms)");
  r.Exec(1501_ms, "n1", "c2.t0", "acquire", "29500");
  r.Exit(1900_ms, "c1.t0");
  r.Invoke(2000_ms, "c1.t0", "release");
  r.Exec(2001_ms, "n1", "c1.t0", "unlock", "1");
  r.Lease(2001_ms, "n1", "released", "c1.t0");
  r.Ok(2002_ms, "c1.t0", "release", 1);
  r.Exec(2003_ms, "n1", "c2.t0", "acquire", "nil");
  r.Lease(2003_ms, "n1", "acquired", "c2.t0");
  r.Ok(2004_ms, "c2.t0", "acquire");
  r.Enter(2005_ms, "c2.t0");
  r.Exit(2500_ms, "c2.t0");
  r.Invoke(2600_ms, "c2.t0", "release");
  r.Lease(2601_ms, "n1", "released", "c2.t0");
  r.Ok(2602_ms, "c2.t0", "release", 1);
  return r;
}

inline Recorder RedLockHeld(const std::string& protocol) {
  Recorder r;
  r.Protocol(protocol);
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=10000ms)", 10'000);
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Lease(1002_ms, "n2", "acquired", "c1.t0");
  r.Lease(1003_ms, "n3", "acquired", "c1.t0");
  r.Ok(1004_ms, "c1.t0", "acquire");
  r.Enter(1005_ms, "c1.t0");
  return r;
}

}  // namespace lockstep::check::testing

#endif  // LOCKSTEP_CHECK_TESTING_H_
