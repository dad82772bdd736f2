// Establishes that fencing (check/fencing.cpp): tokens strictly increase, the resource keeps stale writes out, and the property does not apply to a lock without tokens.
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

TEST_CASE("fencing: tokens strictly increase and the resource keeps stale writes out",
          "[check]") {
  Recorder r;
  r.Protocol("kind=fencedlock version=current fencing=on permits=1");
  r.Client("c1");
  r.Client("c2");
  r.Client("c3");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=2000ms)", 2000);
  const uint64_t c1_ok = r.Ok(1001_ms, "c1.t0", "acquire", 5);
  r.Enter(1002_ms, "c1.t0", 5);
  r.Fault(1100_ms, "c1", "pause", "5000ms");
  r.Lease(3001_ms, "n1", "expired", "c1.t0");
  r.Invoke(3100_ms, "c2.t0", "acquire", "tryLock(wait=0ms, lease=2000ms)", 2000);
  const uint64_t c2_ok = r.Ok(3101_ms, "c2.t0", "acquire", 6);
  r.Enter(3102_ms, "c2.t0", 6);
  const uint64_t accepted = r.Write(3200_ms, "c2.t0", 6, "accepted");
  r.Invoke(3300_ms, "c2.t0", "release", "unlock()");
  r.Ok(3301_ms, "c2.t0", "release", 1);
  r.Fault(6100_ms, "c1", "resume");
  const uint64_t stale = r.Write(6101_ms, "c1.t0", 5, "rejected: stale token 5 < 6");

  SECTION("a rejected stale write is reported, not a violation") {
    const Verdict v = r.Check();
    const PropertyResult& fencing = Result(v, kFencing);
    CHECK(fencing.applicable);
    CHECK_FALSE(fencing.violated);
    REQUIRE(fencing.observation_count == 1);
    const Observation& o = fencing.observations[0];
    CHECK(o.property == "fencing");
    CHECK(o.kind == "rejected_write");
    CHECK(o.threads == std::vector<std::string>{"c1.t0"});
    CHECK(o.from_us == 6101_ms);
    CHECK(o.events == std::vector<uint64_t>{accepted, stale});
    CHECK(o.explanation.find("rejected c1.t0's write at 6.101 s with token 5") !=
          std::string::npos);
    CHECK(o.explanation.find("accepted token 6 from c2.t0 at 3.200 s") != std::string::npos);
    CHECK(Result(v, kLeaseSafety).violated);  // The pause itself is still a lease problem.
  }
  SECTION("a failover that hands out a token again is a violation") {
    r.Fault(7_s, "n1", "crash");
    const uint64_t promote = r.Fault(8_s, "n2", "promote", "replica n2 promoted to master");
    r.Invoke(9_s, "c3.t0", "acquire", "tryLock(wait=0ms, lease=2000ms)", 2000);
    const uint64_t c3_ok = r.Ok(9001_ms, "c3.t0", "acquire", 6);  // n2 missed the last INCR.
    const PropertyResult& fencing = Result(r.Check(), kFencing);
    REQUIRE(fencing.violation_count == 1);
    const Violation& x = fencing.violations[0];
    CHECK(x.kind == "token_not_increasing");
    CHECK(x.threads == std::vector<std::string>{"c2.t0", "c3.t0"});
    CHECK(x.from_us == 3101_ms);
    CHECK(x.to_us == 9001_ms);
    CHECK(Contains(x.events, c2_ok));
    CHECK(Contains(x.events, c3_ok));
    CHECK(Contains(x.events, promote));
    CHECK_FALSE(Contains(x.events, c1_ok));
    CHECK(x.explanation.find("with token 6, not greater than token 6 that c2.t0 got at "
                             "3.101 s") != std::string::npos);
    CHECK(x.explanation.find("promote n2 at 8.000 s") != std::string::npos);
  }
  SECTION("an accepted write with a lower token is a violation") {
    r.Enter(6200_ms, "c3.t0", 4);
    const uint64_t bad = r.Write(6300_ms, "c3.t0", 4, "accepted");
    const PropertyResult& fencing = Result(r.Check(), kFencing);
    REQUIRE(fencing.violation_count == 1);
    const Violation& x = fencing.violations[0];
    CHECK(x.kind == "stale_write_accepted");
    CHECK(x.threads == std::vector<std::string>{"c2.t0", "c3.t0"});
    CHECK(x.from_us == 3200_ms);
    CHECK(x.to_us == 6300_ms);
    CHECK(x.events == std::vector<uint64_t>{accepted, bad});
    CHECK(fencing.observation_count == 1);  // c1's write is still only rejected.
  }
}

TEST_CASE("fencing: does not apply to a lock without tokens", "[check]") {
  const Verdict v = CleanTurns().Check();
  CHECK_FALSE(Result(v, kFencing).applicable);
  CHECK_FALSE(Result(v, kFairness).applicable);
  CHECK_FALSE(Result(v, kRwExclusion).applicable);
  CHECK_FALSE(Result(v, kSemaphore).applicable);
  CHECK(Result(v, kMutualExclusion).applicable);
}

// Two readers hold a read-write lock together from 1.5 s to 2.2 s.

}  // namespace
}  // namespace lockstep::check
