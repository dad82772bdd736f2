// Establishes that reentrancy (check/reentrancy.cpp): unlock results follow the hold count, a non-holder's release must fail, and RedLock releases count members.
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

TEST_CASE("reentrancy: unlock results must follow the hold count", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Invoke(1100_ms, "c1.t0", "acquire");
  r.Ok(1101_ms, "c1.t0", "acquire");

  SECTION("0 then 1 holds") {
    r.Invoke(1200_ms, "c1.t0", "release");
    r.Ok(1201_ms, "c1.t0", "release", 0);
    r.Invoke(1300_ms, "c1.t0", "release");
    r.Lease(1301_ms, "n1", "released", "c1.t0");
    r.Ok(1302_ms, "c1.t0", "release", 1);
    CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
  }
  SECTION("a full release while held twice loses the reentrant hold") {
    const uint64_t invoke = r.Invoke(1200_ms, "c1.t0", "release");
    const uint64_t ok = r.Ok(1201_ms, "c1.t0", "release", 1);
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    const Violation& v = re.violations[0];
    CHECK(v.kind == "lost_reentrant_hold");
    CHECK(v.threads == std::vector<std::string>{"c1.t0"});
    CHECK(v.from_us == 1200_ms);
    CHECK(v.to_us == 1201_ms);
    CHECK(v.events == std::vector<uint64_t>{invoke, ok});
    CHECK(v.explanation.find("held \"lock\" 2 times") != std::string::npos);
  }
  SECTION("a last release that leaves the lock held leaks it") {
    r.Invoke(1200_ms, "c1.t0", "release");
    r.Ok(1201_ms, "c1.t0", "release", 0);
    r.Invoke(1300_ms, "c1.t0", "release");
    r.Ok(1301_ms, "c1.t0", "release", 0);
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    CHECK(re.violations[0].kind == "hold_leaked");
    CHECK(re.violations[0].from_us == 1300_ms);
  }
}

TEST_CASE("reentrancy: a release by a thread that does not hold must fail", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  const uint64_t invoke = r.Invoke(2_s, "c2.t0", "release");

  SECTION("failing holds") {
    r.Fail(2001_ms, "c2.t0", "release", "IllegalMonitorStateException");
    CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
  }
  SECTION("succeeding is a violation") {
    r.Ok(2001_ms, "c2.t0", "release", 1);
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    CHECK(re.violations[0].kind == "release_without_hold");
    CHECK(re.violations[0].threads == std::vector<std::string>{"c2.t0"});
  }
  SECTION("failing after deleting the owner's lock is a violation") {
    const uint64_t released = r.Lease(2001_ms, "n1", "released", "c1.t0");
    r.Fail(2002_ms, "c2.t0", "release", "IllegalMonitorStateException");
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    const Violation& v = re.violations[0];
    CHECK(v.kind == "foreign_release_freed_lock");
    CHECK(v.threads == std::vector<std::string>{"c2.t0", "c1.t0"});
    CHECK(v.from_us == 2_s);
    CHECK(v.to_us == 2002_ms);
    CHECK(Contains(v.events, invoke));
    CHECK(Contains(v.events, released));
    CHECK(v.explanation.find("deleted on n1 at 2.001 s while c1.t0 believed it held it") !=
          std::string::npos);
  }
  SECTION("the owner's own release during it is not blamed on it") {
    r.Invoke(2000_ms, "c1.t0", "release");
    r.Lease(2001_ms, "n1", "released", "c1.t0");
    r.Ok(2001_ms, "c1.t0", "release", 1);
    r.Fail(2002_ms, "c2.t0", "release", "IllegalMonitorStateException");
    CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
  }
}

TEST_CASE("reentrancy: a crash makes only the crashed holders' counts unknown", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Ok(1001_ms, "c1.t0", "acquire");
  r.Fault(2_s, "c1", "crash");
  r.Fault(3_s, "c1", "restart");
  // t0's field may still be in the hash, so its release may succeed; t1 never held anything.
  r.Invoke(4_s, "c1.t0", "release");
  r.Ok(4001_ms, "c1.t0", "release", 1);
  r.Invoke(5_s, "c1.t1", "release");
  r.Ok(5001_ms, "c1.t1", "release", 1);
  const PropertyResult& re = Result(r.Check(), kReentrancy);
  REQUIRE(re.violation_count == 1);
  CHECK(re.violations[0].threads == std::vector<std::string>{"c1.t1"});
  CHECK(re.violations[0].kind == "release_without_hold");
}

TEST_CASE("reentrancy: RedLock releases count members", "[check][issue4]") {
  Recorder r = RedLockHeld("kind=redlock version=v3.13.6 fencing=off permits=1");
  r.Exit(2_s, "c1.t0");
  SECTION("a non-holder's release that released nothing is fine (RedLock swallows errors)") {
    r.Invoke(2500_ms, "c2.t0", "release", "unlock()");
    r.Ok(2501_ms, "c2.t0", "release", 0);
    CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
  }
  SECTION("one that released members is not") {
    r.Invoke(2500_ms, "c2.t0", "release", "unlock()");
    r.Ok(2501_ms, "c2.t0", "release", 3);
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    CHECK(re.violations[0].kind == "release_without_hold");
  }
  SECTION("a holder's last release that released no member leaks the lock") {
    r.Invoke(3_s, "c1.t0", "release", "unlock()");
    r.Ok(3001_ms, "c1.t0", "release", 0);
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    CHECK(re.violations[0].kind == "hold_leaked");
  }
}

}  // namespace
}  // namespace lockstep::check
