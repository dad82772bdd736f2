// Establishes that semaphore (check/semaphore.cpp): never more permits in use than the semaphore has.
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

TEST_CASE("semaphore: never more permits in use than the semaphore has", "[check]") {
  Recorder r;
  r.Protocol("kind=semaphore version=v3.13.6 fencing=off permits=2");
  for (const char* c : {"c1", "c2", "c3", "c4", "c9"}) r.Client(c);
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=10000ms, no lease)");
  const uint64_t c1_ok = r.Ok(1001_ms, "c1.t0", "acquire");
  r.Enter(1002_ms, "c1.t0");
  r.Invoke(1500_ms, "c2.t0", "acquire", "tryLock(wait=10000ms, no lease)");
  const uint64_t c2_ok = r.Ok(1501_ms, "c2.t0", "acquire");
  r.Enter(1502_ms, "c2.t0");
  // A waiter on a node where the key never showed up: free for a lock, not for a semaphore.
  r.Invoke(1600_ms, "c9.t0", "acquire", "lock(no lease)");
  r.Exec(1601_ms, "n1", "c9.t0", "acquire", "0");

  SECTION("two holders of two permits are fine") {
    r.Exit(1900_ms, "c1.t0");
    r.Invoke(2_s, "c1.t0", "release", "release()");
    r.Ok(2001_ms, "c1.t0", "release", 1);
    r.Invoke(2500_ms, "c3.t0", "acquire", "tryLock(wait=10000ms, no lease)");
    r.Ok(2501_ms, "c3.t0", "acquire");
    r.Enter(2502_ms, "c3.t0");
    const Verdict v = r.Check();
    CHECK(Result(v, kSemaphore).applicable);
    CHECK_FALSE(Result(v, kSemaphore).violated);
    CHECK_FALSE(Result(v, kMutualExclusion).violated);
    CHECK_FALSE(Result(v, kResourceExclusion).violated);
    CHECK_FALSE(Result(v, kReentrancy).applicable);
    CHECK_FALSE(Result(v, kLiveness).violated);  // c9's wait is not judged as "while free".
  }
  SECTION("a third holder is one too many") {
    r.Invoke(1800_ms, "c3.t0", "acquire", "tryLock(wait=10000ms, no lease)");
    const uint64_t c3_ok = r.Ok(1801_ms, "c3.t0", "acquire");
    r.Enter(1802_ms, "c3.t0");
    r.Exit(1900_ms, "c1.t0");
    r.Invoke(2_s, "c1.t0", "release", "release()");
    r.Ok(2001_ms, "c1.t0", "release", 1);
    const Verdict v = r.Check();
    const PropertyResult& sem = Result(v, kSemaphore);
    REQUIRE(sem.violation_count == 1);
    const Violation& x = sem.violations[0];
    CHECK(x.kind == "over_permits");
    CHECK(x.threads == std::vector<std::string>{"c1.t0", "c2.t0", "c3.t0"});
    CHECK(x.from_us == 1801_ms);
    CHECK(x.to_us == 2_s);
    CHECK(x.events == std::vector<uint64_t>{c1_ok, c2_ok, c3_ok});
    CHECK(x.explanation.find("putting 3 in use with only 2 permits") != std::string::npos);
    const PropertyResult& me = Result(v, kMutualExclusion);
    REQUIRE(me.violation_count == 1);
    CHECK(me.violations[0].kind == "over_permits");
    CHECK(me.violations[0].threads == std::vector<std::string>{"c1.t0", "c2.t0", "c3.t0"});
    CHECK(me.violations[0].to_us == 2_s);
    const PropertyResult& res = Result(v, kResourceExclusion);
    REQUIRE(res.violation_count == 1);
    CHECK(res.violations[0].from_us == 1802_ms);
    CHECK(res.violations[0].to_us == 1900_ms);
  }
  SECTION("a release without a permit makes room for one too many") {
    const uint64_t unowned = r.Invoke(1700_ms, "c4.t0", "release", "release()");
    r.Ok(1701_ms, "c4.t0", "release", 1);
    r.Invoke(1800_ms, "c3.t0", "acquire", "tryLock(wait=10000ms, no lease)");
    r.Ok(1801_ms, "c3.t0", "acquire");
    const PropertyResult& sem = Result(r.Check(), kSemaphore);
    REQUIRE(sem.violation_count == 1);
    CHECK(sem.violations[0].to_us == 60_s);  // Still over when the run ended.
    CHECK(Contains(sem.violations[0].events, unowned));
    CHECK(sem.violations[0].explanation.find("does not check ownership") != std::string::npos);
  }
  SECTION("permits are counted per acquisition") {
    r.Invoke(1800_ms, "c3.t0", "acquire", "tryAcquire(permits=2, wait=0ms)");
    r.Fail(1801_ms, "c3.t0", "acquire", "no permits");
    r.Invoke(1900_ms, "c1.t0", "acquire", "tryAcquire(permits=2, wait=0ms)");
    r.Ok(1901_ms, "c1.t0", "acquire");  // c1 now holds 3.
    const PropertyResult& sem = Result(r.Check(), kSemaphore);
    REQUIRE(sem.violation_count == 1);
    CHECK(sem.violations[0].threads == std::vector<std::string>{"c2.t0", "c1.t0"});
    CHECK(sem.violations[0].explanation.find("putting 4 in use") != std::string::npos);
  }
}

// c1 acquires a RedLock on n1, n2 and n3 with a 10 s lease and stays in the resource until 4 s.

TEST_CASE("semaphore: permits addPermits added count, those it took away still do",
          "[check]") {
  Recorder r;
  r.Protocol("kind=semaphore version=current fencing=off permits=1 nodes=1");
  for (const char* c : {"c1", "c2", "c3", "c9"}) r.Client(c);
  r.LeaseFields(100_ms, "n1", "acquired", "1");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=10000ms, no lease, permits=1)");
  r.LeaseFields(1001_ms, "n1", "owners", "0");
  r.Ok(1002_ms, "c1.t0", "acquire", 1);
  r.Invoke(1100_ms, "c9.t0", "add_permits", "addPermits(1)");
  r.Exec(1101_ms, "n1", "c9.t0", "add_permits", "(nil)");
  r.LeaseFields(1101_ms, "n1", "owners", "1");
  r.Ok(1102_ms, "c9.t0", "add_permits");
  r.Invoke(1200_ms, "c2.t0", "acquire", "tryLock(wait=10000ms, no lease, permits=1)");
  r.LeaseFields(1201_ms, "n1", "owners", "0");
  r.Ok(1202_ms, "c2.t0", "acquire", 1);
  SECTION("two holders once a second permit was added") {
    const Verdict v = r.Check();
    CHECK_FALSE(Result(v, kSemaphore).violated);
    // mutual_exclusion counts the added permit too (FactsPass::PermitsAllowed).
    CHECK_FALSE(Result(v, kMutualExclusion).violated);
  }
  SECTION("a reduction does not take a holder's permit away") {
    r.Invoke(1300_ms, "c9.t0", "reduce_permits", "addPermits(-1)");
    r.Exec(1301_ms, "n1", "c9.t0", "add_permits", "(nil)");
    r.LeaseFields(1301_ms, "n1", "owners", "-1");
    r.Ok(1302_ms, "c9.t0", "reduce_permits");
    CHECK_FALSE(Result(r.Check(), kSemaphore).violated);
  }
  SECTION("but a third holder is one too many") {
    r.Invoke(1300_ms, "c3.t0", "acquire", "tryLock(wait=10000ms, no lease, permits=1)");
    r.Ok(1302_ms, "c3.t0", "acquire", 1);
    const Verdict v = r.Check();
    const PropertyResult& sem = Result(v, kSemaphore);
    REQUIRE(sem.violation_count == 1);
    CHECK(sem.violations[0].explanation.find("putting 3 in use with only 2 permits") != std::string::npos);
    const PropertyResult& me = Result(v, kMutualExclusion);
    REQUIRE(me.violation_count == 1);
    CHECK(me.violations[0].kind == "over_permits");
    CHECK(me.violations[0].threads.size() == 3);
  }
}

}  // namespace
}  // namespace lockstep::check
