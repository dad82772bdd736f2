// Establishes that latch (check/latch.cpp): an await returns only once the count is counted down.
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

TEST_CASE("latch: an await returns only once the count is counted down",
          "[check]") {
  Recorder r;
  r.Protocol("kind=countdownlatch version=current fencing=off permits=2 nodes=1");
  r.Client("c1");
  r.Client("c2");
  r.Client("c3");
  // c3's await read count 0 before the latch existed; its ok arrives after the latch is set.
  r.Invoke(50_ms, "c3.t0", "acquire", "tryLock(wait=1000ms, no lease)");
  const uint64_t set = r.LeaseFields(100_ms, "n1", "acquired", "2");
  r.Ok(101_ms, "c3.t0", "acquire", 0);
  const uint64_t awaits = r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=10000ms, no lease)");

  SECTION("after two count-downs it may return") {
    r.Invoke(2_s, "c3.t0", "release", "unlock()");
    r.Ok(2001_ms, "c3.t0", "release");
    r.Invoke(3_s, "c2.t0", "release", "unlock()");
    r.LeaseFields(3001_ms, "n1", "released", "1");
    r.Ok(3002_ms, "c2.t0", "release");
    r.Ok(3003_ms, "c1.t0", "acquire", 0);
    const Verdict v = r.Check();
    CHECK(Result(v, kLatch).applicable);
    CHECK_FALSE(Result(v, kLatch).violated);
    CHECK_FALSE(Result(v, kSemaphore).applicable);  // The latch has a property of its own.
    CHECK_FALSE(Result(v, kMutualExclusion).applicable);  // An open latch lets everyone through.
    CHECK_FALSE(Result(v, kResourceExclusion).applicable);
  }
  SECTION("judged by the read that let it return, when the history has it") {
    r.Invoke(2_s, "c2.t0", "acquire", "tryLock(wait=10000ms, no lease)");
    r.ExecNoThread(2001_ms, "n1", "c2", "get_count", "\"2\"");
    r.LeaseFields(2500_ms, "n1", "lost", "2");  // The node restarted empty.
    r.ExecNoThread(2600_ms, "n1", "c2", "get_count", "(nil)");
    r.Ok(2601_ms, "c2.t0", "acquire", 0);
    const PropertyResult& sem = Result(r.Check(), kLatch);
    REQUIRE(sem.violation_count == 1);
    CHECK(sem.violations[0].threads == std::vector<std::string>{"c2.t0"});
    CHECK(sem.violations[0].explanation.find("The latch key was lost on n1 at 2.500 s") !=
          std::string::npos);
  }
  SECTION("the count expired: returning is opening early") {
    r.Invoke(2_s, "c3.t0", "release", "unlock()");
    r.Ok(2001_ms, "c3.t0", "release");
    const uint64_t expired = r.LeaseFields(2500_ms, "n1", "expired", "1");
    const uint64_t ok = r.Ok(2501_ms, "c1.t0", "acquire", 0);
    const PropertyResult& sem = Result(r.Check(), kLatch);
    REQUIRE(sem.violation_count == 1);
    const Violation& x = sem.violations[0];
    CHECK(x.kind == "opened_early");
    CHECK(x.threads == std::vector<std::string>{"c1.t0"});
    CHECK(x.from_us == 2501_ms);
    CHECK(x.events == std::vector<uint64_t>{set, awaits, expired, ok});
    CHECK(x.explanation.find("created on n1 at 0.100 s with count 2 and only 1 countDown") !=
          std::string::npos);
    CHECK(x.explanation.find("The latch key expired on n1 at 2.500 s") != std::string::npos);
  }
}

TEST_CASE("latch: a countDown invoked before its trySetCount re-created the latch counts on it",
          "[check]") {
  // A restarted counter's first countDown runs trySetCount first; when that re-creates the
  // latch, the decrement that follows counts on the new latch although the countDown was
  // invoked before it existed (the fuzz bases' suspected false alarm, seen in a real history).
  Recorder r;
  r.Protocol("kind=countdownlatch version=current fencing=off permits=2 nodes=1");
  r.Client("c1");
  r.Client("c2");
  r.Client("c3");
  r.Invoke(1_s, "c1.t0", "release", "unlock()");           // No latch yet: nothing to count.
  r.LeaseFields(1001_ms, "n1", "acquired", "2");            // Its trySetCount creates it.
  r.Invoke(1002_ms, "c3.t0", "acquire", "tryLock(wait=10000ms, no lease)");
  r.Exec(1003_ms, "n1", "c1.t0", "count_down", "(nil)");    // c1's decrement lands on it.
  r.LeaseFields(1003_ms, "n1", "owners", "1");
  r.Ok(1004_ms, "c1.t0", "release");
  r.Invoke(2_s, "c2.t0", "release", "unlock()");
  r.Exec(2001_ms, "n1", "c2.t0", "count_down", "(nil)");
  r.LeaseFields(2001_ms, "n1", "released", "1");
  r.Ok(2002_ms, "c2.t0", "release");
  SECTION("the await that returns after both decrements: holds") {
    r.Ok(2003_ms, "c3.t0", "acquire", 0);
    CHECK_FALSE(Result(r.Check(), kLatch).violated);
  }
  SECTION("a countDown whose decrement ran before the latch existed does not count") {
    Recorder q;
    q.Protocol("kind=countdownlatch version=current fencing=off permits=2 nodes=1");
    q.Client("c1");
    q.Client("c2");
    q.Client("c3");
    q.Invoke(1_s, "c1.t0", "release", "unlock()");
    q.Exec(1001_ms, "n1", "c1.t0", "count_down", "(nil)");  // On no key: nothing happens.
    q.Ok(1002_ms, "c1.t0", "release");
    q.LeaseFields(1500_ms, "n1", "acquired", "2");
    q.Invoke(1502_ms, "c3.t0", "acquire", "tryLock(wait=10000ms, no lease)");
    q.Invoke(2_s, "c2.t0", "release", "unlock()");
    q.Exec(2001_ms, "n1", "c2.t0", "count_down", "(nil)");
    q.LeaseFields(2001_ms, "n1", "owners", "1");
    q.Ok(2002_ms, "c2.t0", "release");
    q.Ok(2003_ms, "c3.t0", "acquire", 0);
    CHECK(Result(q.Check(), kLatch).violated);
  }
}

}  // namespace
}  // namespace lockstep::check
