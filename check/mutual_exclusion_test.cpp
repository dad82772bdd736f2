// Establishes that mutual_exclusion (check/mutual_exclusion.cpp) judges hand-written histories as documented: overlapping beliefs, reentrant holds, crashes, unknown outcomes, forceUnlock and the bound on kept violations.
#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "check/testing.h"
#include "history/history.h"
#include "history/jsonl.h"

namespace lockstep::check {
namespace {

using namespace testing;
using history::EventType;
using history::History;
using history::TextEvent;

TEST_CASE("mutual_exclusion: a paused holder whose lease expired overlaps the next holder",
          "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(10'000_ms, "c1.t0", "acquire", "tryLock(wait=10000ms, lease=2000ms)", 2000);
  const uint64_t c1_acquired = r.Lease(10'000_ms, "n1", "acquired", "c1.t0");
  const uint64_t c1_ok = r.Ok(10'001_ms, "c1.t0", "acquire");
  const uint64_t pause = r.Fault(10'500_ms, "c1", "pause", "3000ms");
  const uint64_t expired = r.Lease(12'001_ms, "n1", "expired", "c1.t0");
  r.Invoke(12'340_ms, "c2.t0", "acquire", "tryLock(wait=10000ms)");
  const uint64_t c2_acquired = r.Lease(12'345_ms, "n1", "acquired", "c2.t0");
  const uint64_t c2_ok = r.Ok(12'350_ms, "c2.t0", "acquire");
  const uint64_t resume = r.Fault(13'500_ms, "c1", "resume");
  const uint64_t enter = r.Enter(13'550_ms, "c1.t0");
  r.Exit(13'590_ms, "c1.t0");
  r.Invoke(13'600_ms, "c1.t0", "release");
  r.Fail(13'601_ms, "c1.t0", "release", "IllegalMonitorStateException: not locked by current thread");
  r.Invoke(14'000_ms, "c2.t0", "release");
  r.Lease(14'001_ms, "n1", "released", "c2.t0");
  r.Ok(14'002_ms, "c2.t0", "release", 1);
  const Verdict v = r.Check();

  const PropertyResult& me = Result(v, kMutualExclusion);
  REQUIRE(me.violated);
  REQUIRE(me.violation_count == 1);
  const Violation& overlap = me.violations.at(0);
  CHECK(overlap.property == "mutual_exclusion");
  CHECK(overlap.kind == "overlap");
  CHECK(overlap.threads == std::vector<std::string>{"c1.t0", "c2.t0"});
  CHECK(overlap.from_us == 12'350_ms);
  CHECK(overlap.to_us == 13'600_ms);  // c1's release invoke ends its belief.
  CHECK(overlap.events ==
        std::vector<uint64_t>{c1_ok, pause, expired, c2_acquired, c2_ok, resume});
  CHECK_FALSE(Contains(overlap.events, c1_acquired));
  CHECK(overlap.explanation.find("c2.t0 acquired \"lock\" at 12.350 s while c1.t0 still "
                                 "believed it held it (acquired at 10.001 s") != std::string::npos);
  CHECK(overlap.explanation.find("c1.t0's lease expired on n1 at 12.001 s, while c1 was paused "
                                 "(10.500 s to 13.500 s)") != std::string::npos);
  CHECK(overlap.explanation.find("pause c1 at 10.500 s (3000ms)") != std::string::npos);

  // The same history also breaks lease safety, dangerously: c1 used the resource.
  const PropertyResult& lease = Result(v, kLeaseSafety);
  REQUIRE(lease.violation_count == 1);
  const Violation& gap = lease.violations.at(0);
  CHECK(gap.kind == "used_after_loss");
  CHECK(gap.threads == std::vector<std::string>{"c1.t0"});
  CHECK(gap.from_us == 12'001_ms);
  CHECK(gap.to_us == 13'600_ms);
  CHECK(Contains(gap.events, expired));
  CHECK(Contains(gap.events, enter));
  CHECK(Contains(gap.events, c1_ok));
  CHECK(gap.explanation.find("1.599 s without a lease") != std::string::npos);

  // A failed release while (wrongly) believing to hold is a lease problem, not reentrancy.
  CHECK_FALSE(Result(v, kReentrancy).violated);
  CHECK_FALSE(Result(v, kResourceExclusion).violated);  // c2 never entered.
}

TEST_CASE("mutual_exclusion: a lease deleted while its acquire was in flight is named as lost",
          "[check]") {
  // c1's key is deleted (by someone's bare DEL) between the node granting it and c1 hearing
  // so; c2 takes the free key while c1 starts believing it holds it.
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1'000_ms, "c1.t0", "acquire", "tryLock(wait=3000ms, lease=1000ms)", 1000);
  r.Lease(1'001_ms, "n1", "acquired", "c1.t0");
  const uint64_t deleted = r.Lease(1'002_ms, "n1", "released", "c1.t0");
  r.Invoke(1'003_ms, "c2.t0", "acquire", "tryLock(wait=3000ms, lease=1000ms)", 1000);
  r.Lease(1'004_ms, "n1", "acquired", "c2.t0");
  r.Ok(1'005_ms, "c1.t0", "acquire");
  r.Ok(1'006_ms, "c2.t0", "acquire");
  const PropertyResult& me = Result(r.Check(), kMutualExclusion);
  REQUIRE(me.violation_count == 1);
  const Violation& overlap = me.violations.at(0);
  CHECK(overlap.explanation.find("c1.t0's lease was deleted on n1 at 1.002 s.") != std::string::npos);
  CHECK(overlap.explanation.find("records no expiry or loss") == std::string::npos);
  CHECK(Contains(overlap.events, deleted));
}

TEST_CASE("mutual_exclusion: a reentrant hold lasts until its last release", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire");
  const uint64_t first_ok = r.Ok(1001_ms, "c1.t0", "acquire");
  r.Invoke(1100_ms, "c1.t0", "acquire");
  r.Ok(1101_ms, "c1.t0", "acquire");
  r.Invoke(1200_ms, "c1.t0", "release");
  r.Ok(1201_ms, "c1.t0", "release", 0);  // Count 2 -> 1: still held.

  SECTION("another thread acquiring between the two releases overlaps") {
    r.Invoke(1300_ms, "c2.t0", "acquire");
    const uint64_t c2_ok = r.Ok(1301_ms, "c2.t0", "acquire");
    r.Invoke(1400_ms, "c1.t0", "release");
    r.Ok(1401_ms, "c1.t0", "release", 1);
    const PropertyResult& me = Result(r.Check(), kMutualExclusion);
    REQUIRE(me.violation_count == 1);
    CHECK(me.violations[0].threads == std::vector<std::string>{"c1.t0", "c2.t0"});
    CHECK(me.violations[0].from_us == 1301_ms);
    CHECK(me.violations[0].to_us == 1400_ms);
    CHECK(me.violations[0].events == std::vector<uint64_t>{first_ok, c2_ok});
  }
  SECTION("another thread acquiring after the last release does not") {
    r.Invoke(1400_ms, "c1.t0", "release");
    r.Ok(1401_ms, "c1.t0", "release", 1);
    r.Invoke(1500_ms, "c2.t0", "acquire");
    r.Ok(1501_ms, "c2.t0", "acquire");
    const Verdict v = r.Check();
    CHECK_FALSE(Result(v, kMutualExclusion).violated);
    CHECK_FALSE(Result(v, kReentrancy).violated);
  }
}

TEST_CASE("mutual_exclusion: a crash ends the crashed client's belief", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Invoke(2_s, "c2.t0", "acquire", "lock()");

  SECTION("the next holder after the crash does not overlap") {
    r.Fault(5_s, "c1", "crash");
    r.Lease(35_s, "n1", "expired", "c1.t0");
    r.Lease(35'001_ms, "n1", "acquired", "c2.t0");
    r.Ok(35'002_ms, "c2.t0", "acquire");
    const Verdict v = r.Check();
    CHECK_FALSE(Result(v, kMutualExclusion).violated);
    CHECK_FALSE(Result(v, kLeaseSafety).violated);  // c1 no longer believed anything.
    CHECK_FALSE(Result(v, kLiveness).violated);     // Taken over by 5 s + 30 s + B.
  }
  SECTION("without the crash the same acquisition overlaps") {
    r.Lease(35_s, "n1", "expired", "c1.t0");
    r.Lease(35'001_ms, "n1", "acquired", "c2.t0");
    r.Ok(35'002_ms, "c2.t0", "acquire");
    const Verdict v = r.Check();
    const PropertyResult& me = Result(v, kMutualExclusion);
    REQUIRE(me.violation_count == 1);
    CHECK(me.violations[0].to_us == 60_s);  // c1 believes until the end of the run.
    CHECK(me.violations[0].explanation.find("until the run ended at 60.000 s") !=
          std::string::npos);
  }
}

TEST_CASE("mutual_exclusion: an acquisition with an unknown outcome is not a hold", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Info(4_s, "c1.t0", "acquire");
  r.Invoke(5_s, "c2.t0", "acquire");
  r.Ok(5001_ms, "c2.t0", "acquire");
  // c1 releases anyway; with the outcome unknown its count is not judged.
  r.Invoke(6_s, "c1.t0", "release");
  r.Ok(6001_ms, "c1.t0", "release", 1);
  const Verdict v = r.Check();
  CHECK_FALSE(Result(v, kMutualExclusion).violated);
  CHECK_FALSE(Result(v, kReentrancy).violated);

  SECTION("whereas an ok acquisition is") {
    Recorder s;
    s.Client("c1");
    s.Client("c2");
    s.Invoke(1_s, "c1.t0", "acquire");
    s.Ok(4_s, "c1.t0", "acquire");
    s.Invoke(5_s, "c2.t0", "acquire");
    s.Ok(5001_ms, "c2.t0", "acquire");
    CHECK(Result(s.Check(), kMutualExclusion).violated);
  }
}

TEST_CASE("mutual_exclusion: violations beyond max_violations are counted, not kept",
          "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Ok(1001_ms, "c1.t0", "acquire");  // Never released: overlaps every hold of c2.
  for (int i = 0; i < 150; ++i) {
    const int64_t t = 2_s + i * 100_ms;
    r.Invoke(t, "c2.t0", "acquire");
    r.Ok(t + 1_ms, "c2.t0", "acquire");
    r.Invoke(t + 50_ms, "c2.t0", "release");
    r.Ok(t + 51_ms, "c2.t0", "release", 1);
  }
  const PropertyResult& me = Result(r.Check(5_s, /*max_violations=*/100), kMutualExclusion);
  CHECK(me.violation_count == 150);
  REQUIRE(me.violations.size() == 100);
  CHECK(me.violations.front().from_us == 2001_ms);  // The earliest are the ones kept.
  CHECK(me.violations.back().from_us == 2_s + 99 * 100_ms + 1_ms);
  CHECK(std::is_sorted(me.violations.begin(), me.violations.end(),
                       [](const Violation& a, const Violation& b) { return a.from_us < b.from_us; }));
  CHECK(Result(r.Check(5_s, 0), kMutualExclusion).violations.empty());
  CHECK(Result(r.Check(5_s, 0), kMutualExclusion).violated);
}

TEST_CASE("mutual_exclusion: forceUnlock ends the caller's belief, not other holders'",
          "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Client("c3");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Ok(1001_ms, "c1.t0", "acquire");

  SECTION("the holder's own forceUnlock") {
    r.Invoke(2_s, "c1.t0", "force_unlock");
    r.Lease(2001_ms, "n1", "released", "c1.t0");
    r.Ok(2002_ms, "c1.t0", "force_unlock", 1);
    r.Invoke(3_s, "c2.t0", "acquire");
    r.Ok(3001_ms, "c2.t0", "acquire");
    CHECK_FALSE(Result(r.Check(), kMutualExclusion).violated);
  }
  SECTION("another thread's forceUnlock") {
    r.Invoke(2_s, "c3.t0", "force_unlock");
    r.Lease(2001_ms, "n1", "released", "c1.t0");
    r.Ok(2002_ms, "c3.t0", "force_unlock", 1);
    r.Invoke(3_s, "c2.t0", "acquire");
    r.Ok(3001_ms, "c2.t0", "acquire");
    const PropertyResult& me = Result(r.Check(), kMutualExclusion);
    REQUIRE(me.violation_count == 1);
    CHECK(me.violations[0].threads == std::vector<std::string>{"c1.t0", "c2.t0"});
  }
}

}  // namespace
}  // namespace lockstep::check
