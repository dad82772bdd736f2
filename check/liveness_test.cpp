// Establishes that liveness (check/liveness.cpp): crashed holders' locks are taken over, nobody waits while the lock is free, nothing is stuck, orphaned locks, leaked permits and latches, and unobtainable locks.
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

TEST_CASE("liveness: a crashed holder's lock must be taken over", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=10000ms)", 10'000);
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  const uint64_t c1_ok = r.Ok(1002_ms, "c1.t0", "acquire");
  const uint64_t crash = r.Fault(5_s, "c1", "crash");

  SECTION("within the lease plus the bound holds") {
    r.Invoke(6_s, "c2.t0", "acquire", "lock()");
    r.Lease(14_s, "n1", "expired", "c1.t0");
    r.Lease(17_s, "n1", "acquired", "c2.t0");
    r.Ok(17_s, "c2.t0", "acquire");  // 5 s + 10 s lease + 5 s bound = 20 s.
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("not at all is a violation") {
    // The node never expires the key (say its script set no TTL).
    const uint64_t trying = r.Invoke(6_s, "c2.t0", "acquire", "lock()");
    const Verdict v = r.Check();
    const PropertyResult& live = Result(v, kLiveness);
    // The key outlives its lease, so it is an orphaned lock too (rule d); the crash rule comes
    // first.
    REQUIRE(live.violation_count == 2);
    CHECK(live.violations[1].kind == "orphaned_lock");
    const Violation& x = live.violations[0];
    CHECK(x.kind == "no_takeover_after_crash");
    CHECK(x.threads == std::vector<std::string>{"c1.t0", "c2.t0"});
    CHECK(x.from_us == 5_s);
    CHECK(x.to_us == 60_s);
    CHECK(x.events == std::vector<uint64_t>{c1_ok, crash, trying});
    CHECK(x.explanation.find("should have been free by 15.000 s") != std::string::npos);
    CHECK(x.explanation.find("later than 20.000 s") != std::string::npos);
  }
  SECTION("nobody trying is not a takeover violation") {
    // Only the orphaned key is reported: it is held by nobody, whether or not anyone waits.
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    CHECK(live.violations[0].kind == "orphaned_lock");
  }
  SECTION("nobody trying, and the key expires with its lease: no violation") {
    r.Lease(14_s, "n1", "expired", "c1.t0");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("someone starting to try late gets the bound from then") {
    r.Invoke(30_s, "c2.t0", "acquire", "lock()");
    r.Lease(33_s, "n1", "acquired", "c2.t0");  // By 30 s + 5 s.
    r.Ok(33_s, "c2.t0", "acquire");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
}

TEST_CASE("liveness: the watchdog's default lease applies without an explicit one", "[check]") {
  Recorder r(/*end_us=*/100_s, /*lease_default_us=*/30_s);
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire", "lock()");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Fault(5_s, "c1", "crash");
  r.Invoke(6_s, "c2.t0", "acquire", "lock()");
  r.Lease(35_s, "n1", "expired", "c1.t0");

  SECTION("taken over by crash + 30 s + B") {
    r.Lease(38_s, "n1", "acquired", "c2.t0");
    r.Ok(38_s, "c2.t0", "acquire");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("taken over later") {
    r.Lease(41_s, "n1", "acquired", "c2.t0");
    r.Ok(41_s, "c2.t0", "acquire");
    const Verdict v = r.Check(/*bound_us=*/5_s);
    const PropertyResult& live = Result(v, kLiveness);
    REQUIRE(live.violation_count == 2);  // No takeover in time, and waiting while free.
    CHECK(live.violations[0].kind == "no_takeover_after_crash");
    CHECK(live.violations[0].to_us == 41_s);
    CHECK(live.violations[0].explanation.find("the watchdog's") != std::string::npos);
    CHECK(live.violations[1].kind == "waited_while_free");
    CHECK(live.violations[1].from_us == 35_s);
    CHECK(live.violations[1].to_us == 41_s);
  }
}

TEST_CASE("liveness: no acquire waits longer than the bound while the lock is free", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  const uint64_t waiting = r.Invoke(1500_ms, "c2.t0", "acquire", "lock()");
  r.Exec(1501_ms, "n1", "c2.t0", "acquire", "28500");
  r.Invoke(2_s, "c1.t0", "release");
  const uint64_t released = r.Lease(2001_ms, "n1", "released", "c1.t0");
  r.Ok(2002_ms, "c1.t0", "release", 1);

  SECTION("a lost wake-up leaves the waiter waiting") {
    r.Exec(10_s, "n1", "c2.t0", "acquire", "nil");
    r.Lease(10_s, "n1", "acquired", "c2.t0");
    const uint64_t ok = r.Ok(10001_ms, "c2.t0", "acquire");
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    const Violation& v = live.violations[0];
    CHECK(v.kind == "waited_while_free");
    CHECK(v.threads == std::vector<std::string>{"c2.t0"});
    CHECK(v.from_us == 2001_ms);
    CHECK(v.to_us == 10_s);
    CHECK(v.events == std::vector<uint64_t>{waiting, released, ok});
    CHECK(v.explanation.find("free on n1 from 2.001 s to 10.000 s") != std::string::npos);
  }
  SECTION("a stretch while the node was paused does not count") {
    r.Fault(3_s, "n1", "pause", "6000ms");
    r.Fault(9_s, "n1", "resume");
    r.Exec(10_s, "n1", "c2.t0", "acquire", "nil");
    r.Lease(10_s, "n1", "acquired", "c2.t0");
    r.Ok(10001_ms, "c2.t0", "acquire");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("a prompt wake-up holds") {
    r.Exec(2100_ms, "n1", "c2.t0", "acquire", "nil");
    r.Lease(2100_ms, "n1", "acquired", "c2.t0");
    r.Ok(2101_ms, "c2.t0", "acquire");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
}

TEST_CASE("liveness: operations must not stay stuck, except near the end of the run",
          "[check]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Client("c1");
  r.Client("c2");
  r.Client("c3");
  r.Client("c4");
  r.Client("c5");
  const uint64_t stuck_try = r.Invoke(40_s, "c1.t0", "acquire", "tryLock(wait=10000ms)");
  r.Invoke(50_s, "c2.t0", "acquire", "tryLock(wait=10000ms)");  // 50 + 10 + 5 > 60: exempt.
  r.Invoke(50_s, "c3.t0", "acquire", "lock()");                 // Waits forever: exempt.
  r.Invoke(50_s, "c4.t0", "release");
  r.Fault(51_s, "c4", "crash");                                 // Not a live process.
  const uint64_t stuck_release = r.Invoke(54_s, "c5.t0", "release");  // 54 + 5 < 60.
  r.Invoke(56_s, "c5.t1", "release");                                  // 56 + 5 > 60: exempt.
  const PropertyResult& live = Result(r.Check(), kLiveness);
  REQUIRE(live.violation_count == 2);
  CHECK(live.violations[0].kind == "stuck");
  CHECK(live.violations[0].threads == std::vector<std::string>{"c1.t0"});
  CHECK(live.violations[0].from_us == 40_s);
  CHECK(live.violations[0].to_us == 60_s);
  CHECK(live.violations[0].events == std::vector<uint64_t>{stuck_try});
  CHECK(live.violations[1].threads == std::vector<std::string>{"c5.t0"});
  CHECK(live.violations[1].events == std::vector<uint64_t>{stuck_release});
  CHECK(live.violations[1].explanation.find("never completed") != std::string::npos);
}

TEST_CASE("liveness: a RedLock waiter waits for a quorum, not for one free node",
          "[check]") {
  Recorder r = RedLockHeld("kind=redlock version=v3.13.6 fencing=off permits=1 nodes=3");
  const uint64_t waiting = r.Invoke(2_s, "c2.t0", "acquire", "tryLock(wait=30000ms, no lease)");
  r.Exec(2001_ms, "n1", "c2.t0", "acquire", "8999");
  r.Lease(3_s, "n1", "expired", "c1.t0");  // n1 is free from 3 s; n2 and n3 are not.

  SECTION("one free node of three is not a free lock") {
    r.Exit(20_s, "c1.t0");
    r.Invoke(20100_ms, "c1.t0", "release", "unlock()");
    r.Lease(20101_ms, "n2", "released", "c1.t0");
    r.Lease(20102_ms, "n3", "released", "c1.t0");
    r.Ok(20103_ms, "c1.t0", "release", 2);
    r.Lease(20200_ms, "n1", "acquired", "c2.t0");
    r.Lease(20201_ms, "n2", "acquired", "c2.t0");
    r.Ok(20202_ms, "c2.t0", "acquire");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("two free nodes are, and waiting through them is a violation") {
    r.Lease(4_s, "n3", "expired", "c1.t0");
    r.Exit(20_s, "c1.t0");
    r.Invoke(20100_ms, "c1.t0", "release", "unlock()");
    r.Ok(20103_ms, "c1.t0", "release", 1);
    r.Lease(20200_ms, "n1", "acquired", "c2.t0");
    r.Lease(20201_ms, "n3", "acquired", "c2.t0");
    r.Ok(20202_ms, "c2.t0", "acquire");
    r.Lease(20300_ms, "n2", "released", "c1.t0");  // Late, but it goes (no orphaned key).
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    const Violation& x = live.violations[0];
    CHECK(x.kind == "waited_while_free");
    CHECK(x.threads == std::vector<std::string>{"c2.t0"});
    CHECK(x.from_us == 4_s);
    CHECK(x.to_us == 20200_ms);
    CHECK(Contains(x.events, waiting));
    CHECK(x.explanation.find("free on at least 2 of its 3 nodes (a quorum) from 4.000 s") !=
          std::string::npos);
  }
}

TEST_CASE("liveness: read-side ops are acquisitions and releases", "[check]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Protocol("kind=rwlock version=v3.13.6 fencing=off permits=1");
  for (const char* c : {"c1", "c2", "c3", "c4", "c5"}) r.Client(c);
  const uint64_t waiting = r.Invoke(1_s, "c5.t0", "acquire_read", "lock(no lease)");
  r.Exec(1001_ms, "n1", "c5.t0", "acquire", "1000");  // Nothing holds it on n1, ever.
  r.Invoke(30_s, "c4.t0", "acquire_read", "lock(no lease)");  // Waits forever: not stuck.
  const uint64_t stuck_read =
      r.Invoke(40_s, "c2.t0", "acquire_read", "tryLock(wait=10000ms, no lease)");
  r.Invoke(50_s, "c1.t0", "acquire_read", "tryLock(wait=10000ms, no lease)");  // 50+10+5 > 60.
  const uint64_t stuck_release = r.Invoke(54_s, "c3.t0", "release_read", "unlock()");
  const PropertyResult& live = Result(r.Check(), kLiveness);
  REQUIRE(live.violation_count == 3);
  CHECK(live.violations[0].kind == "waited_while_free");
  CHECK(live.violations[0].threads == std::vector<std::string>{"c5.t0"});
  CHECK(live.violations[0].events.front() == waiting);
  CHECK(live.violations[1].kind == "stuck");
  CHECK(live.violations[1].events == std::vector<uint64_t>{stuck_read});
  CHECK(live.violations[2].kind == "stuck");
  CHECK(live.violations[2].events == std::vector<uint64_t>{stuck_release});
}

TEST_CASE("liveness: a key that outlives every belief in it is an orphaned lock", "[check]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Protocol("kind=setnx-expire version=v3.13.6 fencing=off permits=1 nodes=1");
  r.Client("c1");
  r.Client("c2");
  // The SETNX ran but its reply was lost: c2's acquire ends info, c2 never believes it holds
  // the key its field is in, and no EXPIRE followed.
  r.Invoke(1_s, "c2.t0", "acquire", "tryLock(wait=5000ms, lease=5000ms)", 5000);
  const uint64_t taken = r.Lease(1001_ms, "n1", "acquired", "c2.t0");
  const uint64_t lost = r.Info(4_s, "c2.t0", "acquire");

  SECTION("until the run ends: a violation once lease + B has passed") {
    r.Invoke(5_s, "c1.t0", "acquire", "tryLock(wait=5000ms, lease=5000ms)", 5000);
    r.Fail(10_s, "c1.t0", "acquire");
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    const Violation& x = live.violations[0];
    CHECK(x.kind == "orphaned_lock");
    CHECK(x.threads == std::vector<std::string>{"c2.t0", "c1.t0"});
    CHECK(x.from_us == 1001_ms);
    CHECK(x.to_us == 60_s);
    CHECK(Contains(x.events, taken));
    CHECK(Contains(x.events, lost));
    CHECK(x.explanation.find("was held by \"uuid-c2:1\" from 1.001 s until the run ended") !=
          std::string::npos);
    CHECK(x.explanation.find("ended with an unknown outcome at 4.000 s") != std::string::npos);
    CHECK(x.explanation.find("longest lease any acquisition asked for (5.000 s)") !=
          std::string::npos);
    CHECK(x.explanation.find("1 acquisition of it was refused") != std::string::npos);
  }
  SECTION("gone within lease + B: no violation") {
    r.Lease(11_s, "n1", "expired", "c2.t0");  // 9.999 s <= 5 s + 5 s.
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("gone a little later than lease + B: a violation") {
    r.Lease(11002_ms, "n1", "expired", "c2.t0");  // 10.001 s.
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    CHECK(live.violations[0].to_us == 11002_ms);
  }
  SECTION("time the node was paused does not count") {
    // History events come in time order: the pause starts after the info at 4 s.
    r.Fault(5_s, "n1", "pause");
    r.Fault(11_s, "n1", "resume");
    r.Lease(16_s, "n1", "expired", "c2.t0");  // 15 s, 6 s of them paused.
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("a field its thread believes in again is not orphaned") {
    r.Invoke(6_s, "c2.t0", "acquire", "tryLock(wait=5000ms, lease=5000ms)", 5000);
    r.Ok(6001_ms, "c2.t0", "acquire");  // Reentrant: its own field.
    r.Invoke(7_s, "c2.t0", "release", "unlock()");
    r.Lease(7001_ms, "n1", "released", "c2.t0");
    r.Ok(7002_ms, "c2.t0", "release", 1);
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
}

TEST_CASE("liveness: a promoted replica takes over the old master's lease view",
          "[check]") {
  Recorder r;
  r.Protocol("kind=rlock version=v3.13.6 fencing=off permits=1 nodes=1");
  r.Client("c1");
  r.Invoke(1_s, "c1.t0", "acquire", "lock(no lease)");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Fault(2_s, "n1", "crash");
  r.Fault(7_s, "n2", "promote", "replica n2 promoted to master (sentinel)");
  r.Lease(7_s, "n2", "lost", "c1.t0");
  r.Fault(9_s, "n1", "restart");  // Back as a replica: its stale key is never judged again.
  r.Invoke(10_s, "c1.t0", "release", "unlock()");
  r.Fail(10001_ms, "c1.t0", "release", "IllegalMonitorStateException");
  const PropertyResult& live = Result(r.Check(), kLiveness);
  CHECK(live.violation_count == 0);
}

TEST_CASE("liveness: a semaphore permit no believer holds is leaked", "[check]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Protocol("kind=semaphore version=current fencing=off permits=1 nodes=1");
  r.Client("c1");
  r.Client("c2");
  r.LeaseFields(100_ms, "n1", "acquired", "1");  // trySetPermits(1).
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=5000ms, no lease, permits=1)");
  r.LeaseFields(1001_ms, "n1", "owners", "0");
  r.Ok(1002_ms, "c1.t0", "acquire", 1);

  SECTION("released: nothing leaks") {
    r.Invoke(2_s, "c1.t0", "release", "unlock()");
    r.LeaseFields(2001_ms, "n1", "owners", "1");
    r.Ok(2002_ms, "c1.t0", "release", 1);
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("its holder crashed: the permit never comes back") {
    const uint64_t crash = r.Fault(3_s, "c1", "crash");
    r.Invoke(4_s, "c2.t0", "acquire", "tryLock(wait=5000ms, no lease, permits=1)");
    r.Fail(9_s, "c2.t0", "acquire");
    const Verdict v = r.Check();
    CHECK_FALSE(Result(v, kSemaphore).violated);
    const PropertyResult& live = Result(v, kLiveness);
    REQUIRE(live.violation_count == 1);
    const Violation& x = live.violations[0];
    CHECK(x.kind == "leaked_permits");
    CHECK(x.threads == std::vector<std::string>{"c1.t0", "c2.t0"});
    CHECK(x.from_us == 3_s);
    CHECK(x.to_us == 60_s);
    CHECK(Contains(x.events, crash));
    CHECK(x.explanation.find("1 permit of \"lock\" (1 permit in all) was taken on n1") !=
          std::string::npos);
    CHECK(x.explanation.find("It began when c1 crashed at 3.000 s while c1.t0 held permits") !=
          std::string::npos);
  }
  SECTION("an acquire whose reply was lost took a permit nobody holds") {
    r.Invoke(2_s, "c1.t0", "release", "unlock()");
    r.LeaseFields(2001_ms, "n1", "owners", "1");
    r.Ok(2002_ms, "c1.t0", "release", 1);
    r.Invoke(3_s, "c2.t0", "acquire", "tryLock(wait=5000ms, no lease, permits=1)");
    const uint64_t taken = r.LeaseFields(3001_ms, "n1", "owners", "0");
    r.Info(6_s, "c2.t0", "acquire");
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    CHECK(live.violations[0].kind == "leaked_permits");
    CHECK(live.violations[0].from_us == 3001_ms);
    CHECK(Contains(live.violations[0].events, taken));
  }
}

TEST_CASE("liveness: no semaphore acquire waits longer than the bound with permits free",
          "[check]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Protocol("kind=semaphore version=current fencing=off permits=1 nodes=1");
  r.Client("c1");
  r.Client("c2");
  r.Client("c3");
  r.LeaseFields(100_ms, "n1", "acquired", "1");  // trySetPermits(1).
  r.Invoke(1_s, "c1.t0", "acquire", "lock(no lease, permits=1)");
  r.Exec(1001_ms, "n1", "c1.t0", "try_acquire", "1");
  r.LeaseFields(1001_ms, "n1", "owners", "0");
  r.Ok(1002_ms, "c1.t0", "acquire", 1);

  SECTION("a waiter left waiting after the permit came back") {
    const uint64_t waiting = r.Invoke(1500_ms, "c2.t0", "acquire", "lock(no lease, permits=1)");
    r.Exec(1501_ms, "n1", "c2.t0", "try_acquire", "0");
    r.Invoke(2_s, "c1.t0", "release", "unlock()");
    const uint64_t freed = r.LeaseFields(2001_ms, "n1", "owners", "1");
    r.Ok(2002_ms, "c1.t0", "release", 1);
    SECTION("is a violation") {
      r.Exec(10_s, "n1", "c2.t0", "try_acquire", "1");
      r.LeaseFields(10_s, "n1", "owners", "0");
      const uint64_t ok = r.Ok(10001_ms, "c2.t0", "acquire", 1);
      const Verdict v = r.Check();
      CHECK_FALSE(Result(v, kSemaphore).violated);
      const PropertyResult& live = Result(v, kLiveness);
      REQUIRE(live.violation_count == 1);
      const Violation& x = live.violations[0];
      CHECK(x.kind == "waited_with_free_permits");
      CHECK(x.threads == std::vector<std::string>{"c2.t0"});
      CHECK(x.from_us == 2001_ms);
      CHECK(x.to_us == 10_s);
      CHECK(x.events == std::vector<uint64_t>{waiting, freed, ok});
      CHECK(x.explanation.find("while the semaphore had enough free permits on n1 from 2.001 s to "
                               "10.000 s") != std::string::npos);
      CHECK(x.explanation.find("Its count there became 1 at 2.001 s.") != std::string::npos);
    }
    SECTION("and still waiting at the end of the run is one too") {
      const PropertyResult& live = Result(r.Check(), kLiveness);
      REQUIRE(live.violation_count == 1);
      CHECK(live.violations[0].kind == "waited_with_free_permits");
      CHECK(live.violations[0].to_us == 60_s);
      CHECK(live.violations[0].explanation.find("still waiting when the run ended") != std::string::npos);
    }
    SECTION("woken within the bound holds") {
      r.Exec(2100_ms, "n1", "c2.t0", "try_acquire", "1");
      r.LeaseFields(2100_ms, "n1", "owners", "0");
      r.Ok(2101_ms, "c2.t0", "acquire", 1);
      CHECK_FALSE(Result(r.Check(), kLiveness).violated);
    }
    SECTION("a permit someone else really took is not free") {
      r.Invoke(2050_ms, "c3.t0", "acquire", "tryLock(wait=0ms, no lease, permits=1)");
      r.Exec(2051_ms, "n1", "c3.t0", "try_acquire", "1");
      r.LeaseFields(2051_ms, "n1", "owners", "0");
      r.Ok(2052_ms, "c3.t0", "acquire", 1);
      // c3 holds it to the end; c2 waits in lock() with no permit free: nothing to report.
      CHECK_FALSE(Result(r.Check(), kLiveness).violated);
    }
    SECTION("a pause of the node excuses the stretch it covers") {
      r.Fault(3_s, "n1", "pause", "6000ms");
      r.Fault(9_s, "n1", "resume");
      r.Exec(10_s, "n1", "c2.t0", "try_acquire", "1");
      r.LeaseFields(10_s, "n1", "owners", "0");
      r.Ok(10001_ms, "c2.t0", "acquire", 1);
      CHECK_FALSE(Result(r.Check(), kLiveness).violated);
    }
    SECTION("a partition of the waiter excuses it too") {
      r.Fault(2500_ms, "sim", "partition", "c2 | n1");
      r.Fault(55_s, "sim", "heal", "c2 | n1");
      CHECK_FALSE(Result(r.Check(), kLiveness).violated);
    }
  }
  SECTION("one free permit is not enough for an acquire of two") {
    r.Invoke(1500_ms, "c2.t0", "acquire", "lock(no lease, permits=2)");
    r.Exec(1501_ms, "n1", "c2.t0", "try_acquire", "0");
    r.Invoke(2_s, "c1.t0", "release", "unlock()");
    r.LeaseFields(2001_ms, "n1", "owners", "1");
    r.Ok(2002_ms, "c1.t0", "release", 1);
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
}

TEST_CASE("liveness: permits addPermits and drainPermits change are not leaked",
          "[check]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Protocol("kind=semaphore version=current fencing=off permits=2 nodes=1");
  r.Client("c1");
  r.Client("c2");
  r.LeaseFields(100_ms, "n1", "acquired", "2");
  SECTION("drained permits belong to nobody") {
    r.Invoke(1_s, "c1.t0", "drain_permits", "drainPermits()");
    r.Exec(1001_ms, "n1", "c1.t0", "drain_permits", "\"2\"");
    r.LeaseFields(1001_ms, "n1", "owners", "0");
    r.Ok(1002_ms, "c1.t0", "drain_permits", 2);
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("so do permits addPermits(-1) took away, and a later addPermits(1) gives them back") {
    r.Invoke(1_s, "c1.t0", "reduce_permits", "addPermits(-1)");
    r.Exec(1001_ms, "n1", "c1.t0", "add_permits", "(nil)");
    r.LeaseFields(1001_ms, "n1", "owners", "1");
    r.Ok(1002_ms, "c1.t0", "reduce_permits");
    r.Invoke(2_s, "c1.t0", "add_permits", "addPermits(1)");
    r.Exec(2001_ms, "n1", "c1.t0", "add_permits", "(nil)");
    r.LeaseFields(2001_ms, "n1", "owners", "2");
    r.Ok(2002_ms, "c1.t0", "add_permits");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("the same count change by another script is a leak") {
    r.Exec(1001_ms, "n1", "c1.t0", "try_acquire", "1");
    r.LeaseFields(1001_ms, "n1", "owners", "0");
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    CHECK(live.violations[0].kind == "leaked_permits");
  }
}

TEST_CASE("liveness: no await waits longer than the bound after the count reached 0",
          "[check]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Protocol("kind=countdownlatch version=current fencing=off permits=1 nodes=1");
  r.Client("c1");
  r.Client("c2");
  r.LeaseFields(100_ms, "n1", "acquired", "1");  // trySetCount(1).
  const uint64_t awaiting = r.Invoke(1_s, "c2.t0", "acquire", "lock(no lease)");
  r.Exec(1001_ms, "n1", "c2.t0", "get_count", "\"1\"");
  r.Invoke(2_s, "c1.t0", "release", "unlock()");
  const uint64_t opened = r.LeaseFields(2001_ms, "n1", "released", "1");
  r.Ok(2002_ms, "c1.t0", "release");

  SECTION("an await that never returns is a violation") {
    const Verdict v = r.Check();
    CHECK_FALSE(Result(v, kLatch).violated);
    const PropertyResult& live = Result(v, kLiveness);
    REQUIRE(live.violation_count == 1);
    const Violation& x = live.violations[0];
    CHECK(x.kind == "waited_while_open");
    CHECK(x.threads == std::vector<std::string>{"c2.t0"});
    CHECK(x.from_us == 2001_ms);
    CHECK(x.to_us == 60_s);
    CHECK(x.events == std::vector<uint64_t>{awaiting, opened});
    CHECK(x.explanation.find("was waiting to await \"lock\"") != std::string::npos);
    CHECK(x.explanation.find("reached 0 (the key was deleted) at 2.001 s") != std::string::npos);
  }
  SECTION("one returning late is one too") {
    r.Exec(9_s, "n1", "c2.t0", "get_count", "(nil)");
    r.Ok(9001_ms, "c2.t0", "acquire", 0);
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    CHECK(live.violations[0].kind == "waited_while_open");
    CHECK(live.violations[0].to_us == 9001_ms);
  }
  SECTION("returning within the bound holds") {
    r.Exec(2100_ms, "n1", "c2.t0", "get_count", "(nil)");
    r.Ok(2101_ms, "c2.t0", "acquire", 0);
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("a latch set again before the bound is closed again") {
    r.LeaseFields(3_s, "n1", "acquired", "1");  // A restarted client's trySetCount.
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("a pause of the awaiting client excuses it") {
    r.Fault(2500_ms, "c2", "pause", "56000ms");
    r.Fault(58500_ms, "c2", "resume");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
}

TEST_CASE("liveness: a latch whose counter crashed after passing it never opens",
          "[check]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Protocol("kind=countdownlatch version=current fencing=off permits=1 nodes=1");
  r.Client("c1");
  r.Client("c2");
  r.LeaseFields(100_ms, "n1", "acquired", "1");  // trySetCount(1); nobody has passed yet.
  r.Invoke(1_s, "c2.t0", "acquire", "tryLock(wait=100000ms, no lease)");  // Awaits.

  SECTION("a count nobody has begun to count down is not judged") {
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("the thread that would count it down crashes") {
    // c1 passed a latch reading 0 earlier (say it was re-created after c1 passed); it owes
    // one count-down.
    r.Invoke(2_s, "c1.t0", "acquire", "tryLock(wait=1000ms, no lease)");
    r.Ok(2001_ms, "c1.t0", "acquire", 0);
    SECTION("and counts down: fine") {
      r.Invoke(3_s, "c1.t0", "release", "unlock()");
      r.LeaseFields(3001_ms, "n1", "released", "1");
      r.Ok(3002_ms, "c1.t0", "release");
      r.Ok(3003_ms, "c2.t0", "acquire", 0);
      CHECK_FALSE(Result(r.Check(), kLiveness).violated);
    }
    SECTION("or crashes first: orphaned") {
      const uint64_t crash = r.Fault(3_s, "c1", "crash");
      const PropertyResult& live = Result(r.Check(), kLiveness);
      REQUIRE(live.violation_count == 1);
      const Violation& x = live.violations[0];
      CHECK(x.kind == "orphaned_latch");
      CHECK(x.threads == std::vector<std::string>{"c1.t0"});
      CHECK(x.from_us == 3_s);
      CHECK(x.to_us == 60_s);
      CHECK(Contains(x.events, crash));
      CHECK(x.explanation.find("stayed at 1, above the 0 count-downs still owed") !=
            std::string::npos);
    }
  }
}

TEST_CASE("liveness: with client roles, a latch count no count_down client can count down is "
          "orphaned",
          "[check][role]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Protocol("kind=countdownlatch version=current fencing=off permits=2 nodes=1");
  r.Client("w1");
  r.Role("w1", "await");
  r.Client("k1");
  r.Role("k1", "count_down");
  r.Client("k2");
  r.Role("k2", "count_down");
  r.Invoke(50_ms, "w1.t0", "acquire", "lock(no lease)");  // await(), no limit: never stuck.
  r.LeaseFields(100_ms, "n1", "acquired", "2");            // trySetCount(2).
  // k1 counts down once and stops.
  r.Invoke(1_s, "k1.t0", "release", "unlock()");
  r.LeaseFields(1001_ms, "n1", "owners", "1");
  r.Ok(1002_ms, "k1.t0", "release");
  r.Done(1002_ms, "k1.t0");

  SECTION("k2 counts down too: the latch opens, nothing is orphaned") {
    r.Invoke(2_s, "k2.t0", "release", "unlock()");
    r.LeaseFields(2001_ms, "n1", "released", "1");
    r.Ok(2002_ms, "k2.t0", "release");
    r.Done(2002_ms, "k2.t0");
    r.Ok(2003_ms, "w1.t0", "acquire", 0);
    const Verdict v = r.Check();
    CHECK_FALSE(Result(v, kLiveness).violated);
    CHECK_FALSE(Result(v, kLatch).violated);
  }
  SECTION("k2 crashes before counting down: orphaned from its crash") {
    const uint64_t crash = r.Fault(1500_ms, "k2", "crash");
    const Verdict v = r.Check();
    CHECK_FALSE(Result(v, kLatch).violated);  // Nobody passed early: they wait for ever.
    const PropertyResult& live = Result(v, kLiveness);
    REQUIRE(live.violation_count == 1);
    const Violation& x = live.violations[0];
    CHECK(x.kind == "orphaned_latch");
    CHECK(x.from_us == 1500_ms);
    CHECK(x.to_us == 60_s);
    CHECK(Contains(x.events, crash));
    CHECK(x.threads == std::vector<std::string>{"k2", "w1.t0"});  // Then the awaiter kept out.
    CHECK(x.explanation.find("stayed at 1 from 1.500 s until the run ended") != std::string::npos);
    CHECK(x.explanation.find("k2, the last count_down client still counting, crashed at 1.500 s") !=
          std::string::npos);
    CHECK(x.explanation.find("Its count_down clients: k1, k2.") != std::string::npos);
  }
  SECTION("k2 crashes and restarts within the bound: it can still count down") {
    r.Fault(1500_ms, "k2", "crash");
    r.Fault(4_s, "k2", "restart");
    r.Client("k2", 4_s, "uuid-k2-again");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("k2 stops without counting down: orphaned from its stop") {
    const uint64_t done = r.Done(1500_ms, "k2.t0");
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    const Violation& x = live.violations[0];
    CHECK(x.kind == "orphaned_latch");
    CHECK(x.from_us == 1500_ms);
    CHECK(Contains(x.events, done));
    CHECK(x.explanation.find("k2.t0, the last thread still counting down, stopped at 1.500 s") !=
          std::string::npos);
  }
  SECTION("an awaiter's crash takes no count-down away") {
    r.Fault(1500_ms, "w1", "crash");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
}

TEST_CASE("liveness: with client roles but no count_down client, the count is orphaned at once",
          "[check][role]") {
  Recorder r;
  r.Protocol("kind=countdownlatch version=current fencing=off permits=1 nodes=1");
  r.Client("w1");
  r.Role("w1", "await");
  r.Invoke(50_ms, "w1.t0", "acquire", "lock(no lease)");
  const uint64_t set = r.LeaseFields(100_ms, "n1", "acquired", "1");
  const PropertyResult& live = Result(r.Check(), kLiveness);
  REQUIRE(live.violation_count == 1);
  const Violation& x = live.violations[0];
  CHECK(x.kind == "orphaned_latch");
  CHECK(x.from_us == 100_ms);
  CHECK(Contains(x.events, set));
  CHECK(x.explanation.find("The run has no count_down client.") != std::string::npos);
}

TEST_CASE("liveness: a lock nobody holds must be obtainable while a majority of nodes is up",
          "[check]") {
  Recorder r(/*end_us=*/100_s);  // B = 5 s; the watchdog's lease, 30 s, is the longest.
  uint64_t down = 0;
  uint64_t first = 0;
  // The history up to the end; `n2_down_too` adds a second crash at 3 s (events are appended
  // in time order, so each section builds its own).
  auto build = [&](bool n2_down_too) {
    r.Protocol("kind=multilock version=current fencing=off permits=1 nodes=3");
    r.Client("c1");
    r.Client("c2");
    r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=10000ms, no lease)");
    for (const char* node : {"n1", "n2", "n3"}) r.Lease(1001_ms, node, "acquired", "c1.t0");
    r.Ok(1002_ms, "c1.t0", "acquire");
    r.Invoke(2_s, "c1.t0", "release", "unlock()");
    for (const char* node : {"n1", "n2", "n3"}) r.Lease(2001_ms, node, "released", "c1.t0");
    r.Ok(2002_ms, "c1.t0", "release", 3);
    down = r.Fault(3_s, "n3", "crash");
    if (n2_down_too) r.Fault(3_s, "n2", "crash");
    // From 4 s on, c2 tries again and again and never gets all three members.
    for (int64_t t = 4_s; t < 85_s; t += 11_s) {
      const uint64_t seq = r.Invoke(t, "c2.t0", "acquire", "tryLock(wait=10000ms, no lease)");
      if (first == 0) first = seq;
      r.Fail(t + 10_s, "c2.t0", "acquire");
    }
  };

  SECTION("one node down of three") {
    build(false);
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    const Violation& x = live.violations[0];
    CHECK(x.kind == "unobtainable");
    CHECK(x.threads == std::vector<std::string>{"c2.t0"});
    CHECK(x.from_us == 4_s);
    CHECK(x.to_us == 100_s);
    CHECK(Contains(x.events, first));
    CHECK(Contains(x.events, down));
    CHECK(x.explanation.find("No acquisition succeeded by 39.000 s") != std::string::npos);
    CHECK(x.explanation.find("multilock needs every one of its 3 nodes") != std::string::npos);
    CHECK(x.explanation.find("n3 down from 3.000 s to the end") != std::string::npos);
  }
  SECTION("two nodes down of three: a majority is down, nothing is owed") {
    build(true);
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
}

// The five rules are observers of their own (check/liveness/); the tests below are of how
// liveness composes them.

TEST_CASE("liveness: the rules' findings are listed together, earliest first, the limit over all",
          "[check]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Protocol("kind=setnx-expire version=v3.13.6 fencing=off permits=1 nodes=1");
  r.Client("c1");
  r.Client("c2");
  // An orphaned lock from 1.001 s (rule d) and, later, a release that never completes (rule c):
  // the stuck rule comes first among the rules, its finding second in time.
  r.Invoke(1_s, "c2.t0", "acquire", "tryLock(wait=5000ms, lease=5000ms)", 5000);
  r.Lease(1001_ms, "n1", "acquired", "c2.t0");
  r.Info(4_s, "c2.t0", "acquire");
  r.Invoke(20_s, "c1.t0", "release", "unlock()");

  SECTION("every finding, earliest first") {
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 2);
    CHECK(live.violations[0].kind == "orphaned_lock");
    CHECK(live.violations[0].from_us == 1001_ms);
    CHECK(live.violations[1].kind == "stuck");
    CHECK(live.violations[1].from_us == 20_s);
  }
  SECTION("max_violations keeps the earliest of all the rules' findings and counts them all") {
    const PropertyResult& live = Result(r.Check(/*bound_us=*/5_s, /*max_violations=*/1), kLiveness);
    CHECK(live.violation_count == 2);
    REQUIRE(live.violations.size() == 1);
    CHECK(live.violations[0].kind == "orphaned_lock");
  }
  SECTION("none kept, all counted") {
    const PropertyResult& live = Result(r.Check(/*bound_us=*/5_s, /*max_violations=*/0), kLiveness);
    CHECK(live.violated);
    CHECK(live.violation_count == 2);
    CHECK(live.violations.empty());
  }
}

TEST_CASE("liveness: a lock an orphaned key keeps is not reported unobtainable too", "[check]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Protocol("kind=setnx-expire version=v3.13.6 fencing=off permits=1 nodes=1");
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c2.t0", "acquire", "tryLock(wait=5000ms, lease=5000ms)", 5000);
  r.Lease(1001_ms, "n1", "acquired", "c2.t0");
  r.Info(4_s, "c2.t0", "acquire");
  // Nobody holds the lock and c1 tries from 5 s to the end: unobtainable by 40 s (5 s + the
  // watchdog's 30 s + B), but the orphaned key (rule d) already explains that stretch.
  r.Invoke(5_s, "c1.t0", "acquire", "lock()");
  const PropertyResult& live = Result(r.Check(), kLiveness);
  REQUIRE(live.violation_count == 1);
  CHECK(live.violations[0].kind == "orphaned_lock");
}

TEST_CASE("liveness: a waiter that dies trying does not make the next one's wait unobtainable",
          "[check]") {
  // c1 waits in lock() while c2 holds; c2 releases at 3 s and c1 crashes 1 ms later, still
  // waiting. Nobody tries until c2 again at 44 s, past 3 s + 30 s (the watchdog's lease) + B,
  // and gets the lock at once: nobody was kept from a free lock.
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Protocol("kind=rlock version=current fencing=off permits=1 nodes=1");
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c2.t0", "acquire", "lock()");
  r.Lease(1001_ms, "n1", "acquired", "c2.t0");
  r.Ok(1002_ms, "c2.t0", "acquire");
  r.Invoke(2_s, "c1.t0", "acquire", "lock()");
  r.Invoke(3_s, "c2.t0", "release", "unlock()");
  r.Lease(3001_ms, "n1", "released", "c2.t0");
  r.Fault(3002_ms, "c1", "crash");
  r.Ok(3003_ms, "c2.t0", "release", 3);
  r.Invoke(44_s, "c2.t0", "acquire", "lock()");
  r.Lease(44001_ms, "n1", "acquired", "c2.t0");
  r.Ok(44002_ms, "c2.t0", "acquire");
  const PropertyResult& live = Result(r.Check(), kLiveness);
  for (const Violation& v : live.violations) FAIL_CHECK(v.kind << ": " << v.explanation);
  CHECK_FALSE(live.violated);
}

}  // namespace
}  // namespace lockstep::check
