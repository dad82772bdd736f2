// Establishes that fairness (check/fairness.cpp): a fair lock grants in queue order; timed-out, crashed, purged and unattributed waiters are exempt and listed.
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

Recorder FairQueue(const std::string& protocol, uint64_t* c2_queued, uint64_t* c3_queued) {
  Recorder r;
  r.Protocol(protocol);
  r.Client("c1");
  r.Client("c2");
  r.Client("c3");
  r.Invoke(1_s, "c1.t0", "acquire", "lock(no lease)");
  r.Exec(1001_ms, "n1", "c1.t0", "acquire", "(nil)");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Invoke(1500_ms, "c2.t0", "acquire", "lock(no lease)");
  *c2_queued = r.Exec(1501_ms, "n1", "c2.t0", "acquire", "29500");
  r.Invoke(1600_ms, "c3.t0", "acquire", "lock(no lease)");
  *c3_queued = r.Exec(1601_ms, "n1", "c3.t0", "acquire", "29400");
  r.Invoke(2000_ms, "c1.t0", "release", "unlock()");
  r.Exec(2001_ms, "n1", "c1.t0", "unlock", "1");
  r.Lease(2001_ms, "n1", "released", "c1.t0");
  r.Ok(2002_ms, "c1.t0", "release", 1);
  return r;
}

// Grants `first` then `second` (each holds for 100 ms); returns their acquire oks.
std::pair<uint64_t, uint64_t> GrantInTurn(Recorder* r, const std::string& first,
                                          const std::string& second) {
  r->Exec(2003_ms, "n1", first, "acquire", "(nil)");
  r->Lease(2003_ms, "n1", "acquired", first);
  const uint64_t first_ok = r->Ok(2004_ms, first, "acquire");
  r->Invoke(2100_ms, first, "release", "unlock()");
  r->Lease(2101_ms, "n1", "released", first);
  r->Ok(2102_ms, first, "release", 1);
  r->Exec(2103_ms, "n1", second, "acquire", "(nil)");
  r->Lease(2103_ms, "n1", "acquired", second);
  const uint64_t second_ok = r->Ok(2104_ms, second, "acquire");
  return {first_ok, second_ok};
}

TEST_CASE("fairness: grants follow the queue order", "[check]") {
  uint64_t c2_queued = 0, c3_queued = 0;
  const std::string fair = "kind=fairlock version=v3.13.6 fencing=off permits=1";

  SECTION("in queue order holds") {
    Recorder r = FairQueue(fair, &c2_queued, &c3_queued);
    GrantInTurn(&r, "c2.t0", "c3.t0");
    const Verdict v = r.Check();
    const PropertyResult& fairness = Result(v, kFairness);
    CHECK(fairness.applicable);
    CHECK_FALSE(fairness.violated);
    CHECK(fairness.observation_count == 0);
    CHECK(v.protocol_kind == "fairlock");
    CHECK_FALSE(v.AnyViolated());
    CHECK(v.warnings.empty());
  }
  SECTION("a later waiter granted first is out of order") {
    Recorder r = FairQueue(fair, &c2_queued, &c3_queued);
    const auto [c3_ok, c2_ok] = GrantInTurn(&r, "c3.t0", "c2.t0");
    const PropertyResult& fairness = Result(r.Check(), kFairness);
    REQUIRE(fairness.violation_count == 1);
    const Violation& x = fairness.violations[0];
    CHECK(x.property == "fairness");
    CHECK(x.kind == "out_of_order");
    CHECK(x.threads == std::vector<std::string>{"c2.t0", "c3.t0"});
    CHECK(x.from_us == 2004_ms);
    CHECK(x.to_us == 2104_ms);
    CHECK(x.events == std::vector<uint64_t>{c2_queued, c3_queued, c3_ok, c2_ok});
    CHECK(x.explanation.find("c3.t0 was granted \"lock\" at 2.004 s ahead of c2.t0") !=
          std::string::npos);
    CHECK(x.explanation.find("c2.t0 queued at 1.501 s (position 1), c3.t0 queued at 1.601 s "
                             "(position 2)") != std::string::npos);
    CHECK(x.explanation.find("granted only at 2.104 s") != std::string::npos);
  }
  SECTION("a tryLock() granted by try_acquire while others wait barges in") {
    Recorder r = FairQueue(fair, &c2_queued, &c3_queued);
    r.Client("c4", 2002_ms);
    r.Invoke(2002_ms, "c4.t0", "acquire", "tryLock()");
    const uint64_t barged = r.Exec(2003_ms, "n1", "c4.t0", "try_acquire", "(nil)");
    r.Ok(2004_ms, "c4.t0", "acquire");
    const PropertyResult& fairness = Result(r.Check(), kFairness);
    REQUIRE(fairness.violation_count == 1);
    CHECK(fairness.violations[0].kind == "barged");
    CHECK(fairness.violations[0].threads == std::vector<std::string>{"c2.t0", "c4.t0"});
    CHECK(fairness.violations[0].to_us == 60_s);  // c2 still waits when the run ends.
    CHECK(Contains(fairness.violations[0].events, barged));
    CHECK(fairness.violations[0].explanation.find("1 other waiter that queued before c4.t0 was "
                                                  "passed over too") != std::string::npos);
  }
  SECTION("the same history of a non-fair lock is not judged") {
    Recorder r = FairQueue("kind=rlock version=v3.13.6 fencing=off permits=1", &c2_queued,
                           &c3_queued);
    GrantInTurn(&r, "c3.t0", "c2.t0");
    const PropertyResult& fairness = Result(r.Check(), kFairness);
    CHECK_FALSE(fairness.applicable);
    CHECK_FALSE(fairness.violated);
  }
}

// c1 holds from 1 s to 8 s. c2 queues with a 2 s wait and times out, c3 queues and crashes,
// c4 queues with lock() and waits until 9 s; c5 arrives at 8.1 s and is granted at once.

Recorder FairExceptions(const std::string& protocol) {
  Recorder r;
  r.Protocol(protocol);
  for (const char* c : {"c1", "c2", "c3", "c4", "c5"}) r.Client(c);
  r.Invoke(1_s, "c1.t0", "acquire", "lock(no lease)");
  r.Exec(1001_ms, "n1", "c1.t0", "acquire", "(nil)");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Invoke(1500_ms, "c2.t0", "acquire", "tryLock(wait=2000ms, no lease)");
  r.Exec(1501_ms, "n1", "c2.t0", "acquire", "29500");
  r.Invoke(1600_ms, "c3.t0", "acquire", "lock(no lease)");
  r.Exec(1601_ms, "n1", "c3.t0", "acquire", "29400");
  r.Invoke(1700_ms, "c4.t0", "acquire", "lock(no lease)");
  r.Exec(1701_ms, "n1", "c4.t0", "acquire", "29300");
  r.Exec(3499_ms, "n1", "c2.t0", "acquire_failed", "(nil)");
  r.Fail(3500_ms, "c2.t0", "acquire", "wait time elapsed");
  r.Fault(4_s, "c3", "crash");
  r.Invoke(8_s, "c1.t0", "release", "unlock()");
  r.Lease(8001_ms, "n1", "released", "c1.t0");
  r.Ok(8002_ms, "c1.t0", "release", 1);
  r.Invoke(8100_ms, "c5.t0", "acquire", "tryLock(wait=10000ms, no lease)");
  r.Exec(8101_ms, "n1", "c5.t0", "acquire", "(nil)");
  r.Lease(8101_ms, "n1", "acquired", "c5.t0");
  r.Ok(8102_ms, "c5.t0", "acquire");
  r.Invoke(8500_ms, "c5.t0", "release", "unlock()");
  r.Lease(8501_ms, "n1", "released", "c5.t0");
  r.Ok(8502_ms, "c5.t0", "release", 1);
  r.Exec(9_s, "n1", "c4.t0", "acquire", "(nil)");
  r.Lease(9_s, "n1", "acquired", "c4.t0");
  r.Ok(9001_ms, "c4.t0", "acquire");
  return r;
}

TEST_CASE("fairness: timed-out, crashed and purged waiters are exempt and listed", "[check]") {
  SECTION("with a 5 s fair wait timeout c4 may have been purged, so c5 passing it is fine") {
    const Recorder r = FairExceptions(
        "kind=fairlock version=v3.13.6 fencing=off permits=1 fair_wait_timeout=5000ms");
    const PropertyResult& fairness = Result(r.Check(), kFairness);
    CHECK_FALSE(fairness.violated);
    REQUIRE(fairness.observation_count == 3);
    REQUIRE(fairness.observations.size() == 3);
    CHECK(fairness.observations[0].kind == "timed_out");
    CHECK(fairness.observations[0].threads == std::vector<std::string>{"c2.t0"});
    CHECK(fairness.observations[0].from_us == 1501_ms);
    CHECK(fairness.observations[0].to_us == 3500_ms);
    CHECK(fairness.observations[1].kind == "crashed");
    CHECK(fairness.observations[1].threads == std::vector<std::string>{"c3.t0"});
    CHECK(fairness.observations[2].kind == "purged");
    CHECK(fairness.observations[2].threads == std::vector<std::string>{"c4.t0"});
    CHECK(fairness.observations[2].explanation.find(
              "c4.t0 queued at 1.701 s (position 3) for \"lock\" and waited 7.300 s") !=
          std::string::npos);
    CHECK(fairness.observations[2].explanation.find("fair wait timeout of 5.000 s") !=
          std::string::npos);
  }
  SECTION("with the default 300 s c4 was owed its turn: c5 barged in") {
    const Recorder r = FairExceptions("kind=fairlock version=v3.13.6 fencing=off permits=1");
    const PropertyResult& fairness = Result(r.Check(), kFairness);
    CHECK(fairness.observation_count == 2);  // c2 and c3 only.
    REQUIRE(fairness.violation_count == 1);
    const Violation& x = fairness.violations[0];
    CHECK(x.kind == "barged");
    CHECK(x.threads == std::vector<std::string>{"c4.t0", "c5.t0"});
    CHECK(x.from_us == 8102_ms);
    CHECK(x.to_us == 9001_ms);
    CHECK(x.explanation.find("c5.t0 did not queue: its first attempt, at 8.101 s, was granted "
                             "at once") != std::string::npos);
  }
}

TEST_CASE("fairness: execs that cannot be told apart are not judged", "[check]") {
  Recorder r;
  r.Protocol("kind=fairlock version=v3.13.6 fencing=off permits=1");
  r.Client("c1");
  r.Client("c2");
  r.Client("c9");
  r.Invoke(1_s, "c9.t0", "acquire", "lock(no lease)");
  r.Exec(1001_ms, "n1", "c9.t0", "acquire", "(nil)");
  r.Ok(1002_ms, "c9.t0", "acquire");
  r.Invoke(1100_ms, "c1.t0", "acquire", "lock(no lease)");
  r.Invoke(1100_ms, "c1.t1", "acquire", "lock(no lease)");
  r.ExecNoThread(1101_ms, "n1", "c1", "acquire", "29000");  // t0's or t1's?
  r.ExecNoThread(1102_ms, "n1", "c1", "acquire", "29000");
  r.Invoke(1200_ms, "c2.t0", "acquire", "lock(no lease)");
  r.Exec(1201_ms, "n1", "c2.t0", "acquire", "28800");
  r.Invoke(2_s, "c9.t0", "release", "unlock()");
  r.Ok(2001_ms, "c9.t0", "release", 1);
  r.Exec(2002_ms, "n1", "c2.t0", "acquire", "(nil)");
  r.Ok(2003_ms, "c2.t0", "acquire");  // Ahead of c1's threads, which may have queued first.
  const PropertyResult& fairness = Result(r.Check(), kFairness);
  CHECK_FALSE(fairness.violated);
  REQUIRE(fairness.observation_count == 2);
  CHECK(fairness.observations[0].kind == "unattributed");
  CHECK(fairness.observations[0].threads == std::vector<std::string>{"c1.t0"});
  CHECK(fairness.observations[1].threads == std::vector<std::string>{"c1.t1"});
}

// The queue is the node's. Three ways a fault makes the client's view of
// it differ from the node's, each settled from a fuzz case's history (fairlock base with
// lose_replies), each with its contrast where the node really did pass a waiter over.
const char* kFair = "kind=fairlock version=current fencing=off permits=1 fair_wait_timeout=300000ms";

// c1 holds from 1 s; c2 queues at 1.5 s with `c2_call` (its reply: `c2_reply`), and c3 (if
// any) queues at 2 s.
Recorder HeldWithQueue(const std::string& c2_call, const std::string& c2_reply, bool c3) {
  Recorder r;
  r.Protocol(kFair);
  for (const char* c : {"c1", "c2", "c3"}) {
    if (c3 || std::string(c) != "c3") r.Client(c);
  }
  r.Invoke(1_s, "c1.t0", "acquire", "lock(no lease)");
  r.Exec(1001_ms, "n1", "c1.t0", "acquire", "(nil)");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Invoke(1500_ms, "c2.t0", "acquire", c2_call);
  r.Exec(1501_ms, "n1", "c2.t0", "acquire", c2_reply);
  if (c3) {
    r.Invoke(2_s, "c3.t0", "acquire", "lock(no lease)");
    r.Exec(2001_ms, "n1", "c3.t0", "acquire", "29000");
  }
  return r;
}

// c1 holds from 1 s to 5 s. c2 queues at 1.5 s, but the reply is lost: its acquire ends with a
// response timeout at 4.5 s (no acquire_failed: the first tryAcquire threw). c3 queues at 2 s.
// c2's next acquire, at 5.1 s, is granted at once: the node still had c2's entry at the head.
Recorder LingeringEntry(bool cancelled) {
  Recorder r = HeldWithQueue("tryLock(wait=3000ms, no lease)", "3499", true);
  if (cancelled) r.Exec(4499_ms, "n1", "c2.t0", "acquire_failed", "(nil)");
  r.Info(4500_ms, "c2.t0", "acquire");
  r.Invoke(5_s, "c1.t0", "release", "unlock()");
  r.Exec(5001_ms, "n1", "c1.t0", "unlock", "1");
  r.Lease(5001_ms, "n1", "released", "c1.t0");
  r.Ok(5002_ms, "c1.t0", "release", 1);
  r.Invoke(5100_ms, "c2.t0", "acquire", "tryLock(wait=3000ms, no lease)");
  r.Exec(5101_ms, "n1", "c2.t0", "acquire", "(nil)");
  r.Lease(5101_ms, "n1", "acquired", "c2.t0");
  r.Ok(5102_ms, "c2.t0", "acquire");
  return r;
}

TEST_CASE("fairness: a thread whose acquire never learned it queued keeps its node-side place",
          "[check]") {
  const PropertyResult& kept = Result(LingeringEntry(false).Check(), kFairness);
  CHECK_FALSE(kept.violated);
  // Its acquire_failed ran: the node dropped the entry, so the 5.1 s grant is a barge.
  const PropertyResult& dropped = Result(LingeringEntry(true).Check(), kFairness);
  REQUIRE(dropped.violated);
  CHECK(dropped.violations[0].kind == "barged");
  CHECK(dropped.violations[0].threads == std::vector<std::string>{"c3.t0", "c2.t0"});
}

// c1 holds from 1 s to 3 s; c2 queues at 1.5 s, c3 at 2 s. At 3 s the node grants c2, whose
// reply is lost: c2's acquire is still waiting at the client when its key expires at 6 s and
// the node grants c3. c2 had left the node's queue at 3 s: c3 passed no one.
Recorder GrantedOnTheNode(bool granted) {
  Recorder r = HeldWithQueue("lock(no lease)", "29500", true);
  r.Invoke(3_s, "c1.t0", "release", "unlock()");
  r.Exec(3001_ms, "n1", "c1.t0", "unlock", "1");
  r.Lease(3001_ms, "n1", "released", "c1.t0");
  r.Ok(3002_ms, "c1.t0", "release", 1);
  if (granted) {
    r.Exec(3003_ms, "n1", "c2.t0", "acquire", "(nil)");
    r.Lease(3003_ms, "n1", "acquired", "c2.t0");
    r.Lease(6_s, "n1", "expired", "c2.t0");
  }
  r.Exec(6001_ms, "n1", "c3.t0", "acquire", "(nil)");
  r.Lease(6001_ms, "n1", "acquired", "c3.t0");
  r.Ok(6002_ms, "c3.t0", "acquire");
  return r;
}

TEST_CASE("fairness: a waiter the node granted, its reply lost, was not passed over",
          "[check]") {
  const PropertyResult& served = Result(GrantedOnTheNode(true).Check(), kFairness);
  CHECK_FALSE(served.violated);
  // Still queued on the node when c3 was granted: out of order.
  const PropertyResult& passed = Result(GrantedOnTheNode(false).Check(), kFairness);
  REQUIRE(passed.violated);
  CHECK(passed.violations[0].kind == "out_of_order");
  CHECK(passed.violations[0].threads == std::vector<std::string>{"c2.t0", "c3.t0"});
}

// c1 holds from 1 s; c2 queues at 1.5 s. c1's unlock at 2 s times out: it never ran (or it
// did, in the contrast). c1's acquire at 3 s is granted at once, ahead of c2.
Recorder ReentryAfterLostUnlock(bool unlock_ran) {
  Recorder r = HeldWithQueue("lock(no lease)", "29500", false);
  r.Invoke(2_s, "c1.t0", "release", "unlock()");
  if (unlock_ran) {
    r.Exec(2001_ms, "n1", "c1.t0", "unlock", "1");
    r.Lease(2001_ms, "n1", "released", "c1.t0");
  }
  r.Info(2500_ms, "c1.t0", "release");
  r.Invoke(3_s, "c1.t0", "acquire", "lock(no lease)");
  r.Exec(3001_ms, "n1", "c1.t0", "acquire", "(nil)");
  r.Lease(3001_ms, "n1", "acquired", "c1.t0");
  r.Ok(3002_ms, "c1.t0", "acquire");
  return r;
}

TEST_CASE("fairness: a holder re-entering the hold it still had on the node is not a barge",
          "[check]") {
  const PropertyResult& reentry = Result(ReentryAfterLostUnlock(false).Check(), kFairness);
  CHECK_FALSE(reentry.violated);
  REQUIRE(reentry.observation_count == 1);
  CHECK(reentry.observations[0].kind == "node_reentry");
  CHECK(reentry.observations[0].explanation.find(
            "c1.t0's acquire of \"lock\" was granted at 3.001 s by re-entering the hold it still "
            "had on the node") != std::string::npos);
  // The unlock did run: the lock was free and c1 took it ahead of c2, which had queued.
  const PropertyResult& barge = Result(ReentryAfterLostUnlock(true).Check(), kFairness);
  REQUIRE(barge.violated);
  CHECK(barge.violations[0].kind == "barged");
}

}  // namespace
}  // namespace lockstep::check
