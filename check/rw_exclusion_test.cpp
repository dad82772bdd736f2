// Establishes that rw_exclusion (check/rw_exclusion.cpp): readers may share a read-write lock, a writer may not.
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

Recorder TwoReaders() {
  Recorder r;
  r.Protocol("kind=rwlock version=v3.13.6 fencing=off permits=1");
  r.Client("c1");
  r.Client("c2");
  r.Client("c3");
  r.Client("c4");
  r.Invoke(1_s, "c1.t0", "acquire_read", "tryLock(wait=10000ms, no lease)");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire_read");
  r.EnterRead(1100_ms, "c1.t0");
  r.Invoke(1500_ms, "c2.t0", "acquire_read", "tryLock(wait=10000ms, no lease)");
  r.Lease(1501_ms, "n1", "owners", "c1.t0,c2.t0");
  r.Ok(1502_ms, "c2.t0", "acquire_read");
  r.EnterRead(1600_ms, "c2.t0");
  r.Exit(2000_ms, "c1.t0");
  r.Exit(2100_ms, "c2.t0");
  r.Invoke(2200_ms, "c1.t0", "release_read", "unlock()");
  r.Lease(2201_ms, "n1", "owners", "c2.t0");
  r.Ok(2202_ms, "c1.t0", "release_read", 0);  // c2 still holds: the hash stays.
  return r;
}

TEST_CASE("rw_exclusion: readers may overlap, a writer may not", "[check]") {
  Recorder r = TwoReaders();

  SECTION("reader-reader overlap is fine for every exclusion property") {
    r.Invoke(2300_ms, "c2.t0", "release_read", "unlock()");
    r.Lease(2301_ms, "n1", "released", "c2.t0");
    r.Ok(2302_ms, "c2.t0", "release_read", 1);
    const Verdict v = r.Check();
    CHECK(Result(v, kRwExclusion).applicable);
    CHECK_FALSE(Result(v, kRwExclusion).violated);
    CHECK_FALSE(Result(v, kMutualExclusion).violated);
    CHECK_FALSE(Result(v, kResourceExclusion).violated);
    CHECK_FALSE(Result(v, kReentrancy).violated);  // A reader's last release may return 0.
    CHECK_FALSE(Result(v, kLeaseSafety).violated);
    CHECK_FALSE(v.AnyViolated());
    CHECK(v.warnings.empty());  // "owners" lease events are understood.
  }
  SECTION("a writer while a reader still holds breaks it") {
    r.Invoke(2240_ms, "c3.t0", "acquire", "tryLock(wait=10000ms, no lease)");
    const uint64_t writer_ok = r.Ok(2250_ms, "c3.t0", "acquire");
    r.Invoke(2300_ms, "c2.t0", "release_read", "unlock()");
    r.Ok(2302_ms, "c2.t0", "release_read", 1);
    const Verdict v = r.Check();
    const PropertyResult& rw = Result(v, kRwExclusion);
    REQUIRE(rw.violation_count == 1);
    const Violation& x = rw.violations[0];
    CHECK(x.kind == "write_read");
    CHECK(x.threads == std::vector<std::string>{"c2.t0", "c3.t0"});
    CHECK(x.from_us == 2250_ms);
    CHECK(x.to_us == 2300_ms);
    CHECK(Contains(x.events, writer_ok));
    CHECK(x.explanation.find("c3.t0 acquired the write lock of \"lock\" at 2.250 s while c2.t0 "
                             "still believed it held the read lock") != std::string::npos);
    REQUIRE(Result(v, kMutualExclusion).violation_count == 1);
    CHECK(Result(v, kMutualExclusion).violations[0].threads ==
          std::vector<std::string>{"c2.t0", "c3.t0"});
  }
  SECTION("two writers break it too") {
    r.Invoke(2300_ms, "c2.t0", "release_read", "unlock()");
    r.Ok(2302_ms, "c2.t0", "release_read", 1);
    r.Invoke(3_s, "c3.t0", "acquire", "lock(no lease)");
    r.Ok(3001_ms, "c3.t0", "acquire");
    r.Invoke(3100_ms, "c4.t0", "acquire", "lock(no lease)");
    r.Ok(3101_ms, "c4.t0", "acquire");
    const PropertyResult& rw = Result(r.Check(), kRwExclusion);
    REQUIRE(rw.violation_count == 1);
    CHECK(rw.violations[0].kind == "write_write");
    CHECK(rw.violations[0].threads == std::vector<std::string>{"c3.t0", "c4.t0"});
  }
  SECTION("a reader's field dropped while it still holds is a lease loss") {
    const uint64_t dropped = r.Lease(2250_ms, "n1", "owners", "c3.t0");  // c2's field is gone.
    r.Invoke(2300_ms, "c2.t0", "release_read", "unlock()");
    r.Fail(2302_ms, "c2.t0", "release_read", "IllegalMonitorStateException");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    CHECK(lease.violations[0].threads == std::vector<std::string>{"c2.t0"});
    CHECK(lease.violations[0].from_us == 2250_ms);
    CHECK(lease.violations[0].to_us == 2300_ms);
    CHECK(Contains(lease.violations[0].events, dropped));
    CHECK(lease.violations[0].explanation.find("was removed from the key on n1") !=
          std::string::npos);
  }
}

}  // namespace
}  // namespace lockstep::check
