// Establishes that lease_safety (check/lease_safety.cpp): holding or using a lock after its lease expired, was deleted by someone else or was lost, for one node and for RedLock's quorum.
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

TEST_CASE("lease_safety: holding after the lease is gone", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=1000ms)", 1000);
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  const uint64_t ok = r.Ok(1002_ms, "c1.t0", "acquire");

  SECTION("releasing before the expiry holds") {
    r.Invoke(1500_ms, "c1.t0", "release");
    r.Lease(1501_ms, "n1", "released", "c1.t0");
    r.Ok(1502_ms, "c1.t0", "release", 1);
    r.Lease(3_s, "n1", "expired", "c1.t0");  // A stale event after the release: harmless.
    CHECK_FALSE(Result(r.Check(), kLeaseSafety).violated);
  }
  SECTION("releasing in the same microsecond as the expiry holds") {
    r.Lease(2001_ms, "n1", "expired", "c1.t0");
    r.Invoke(2001_ms, "c1.t0", "release");
    r.Fail(2002_ms, "c1.t0", "release", "IllegalMonitorStateException");
    CHECK_FALSE(Result(r.Check(), kLeaseSafety).violated);
  }
  SECTION("believing after the expiry without using the resource") {
    const uint64_t expired = r.Lease(2001_ms, "n1", "expired", "c1.t0");
    const uint64_t release = r.Invoke(2500_ms, "c1.t0", "release");
    r.Fail(2501_ms, "c1.t0", "release", "IllegalMonitorStateException");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    const Violation& v = lease.violations[0];
    CHECK(v.kind == "held_after_loss");
    CHECK(v.from_us == 2001_ms);
    CHECK(v.to_us == 2500_ms);
    CHECK(v.events == std::vector<uint64_t>{ok, expired, release});
    CHECK(v.explanation.find("with a lease of 1.000 s") != std::string::npos);
    CHECK(v.explanation.find("did not use the resource") != std::string::npos);
  }
  SECTION("a node crash that loses the key counts like an expiry") {
    r.Enter(1100_ms, "c1.t0");
    const uint64_t lost = r.Lease(1200_ms, "n1", "lost", "c1.t0");
    r.Fault(1200_ms, "n1", "crash", "no persistence");
    r.Exit(1300_ms, "c1.t0");
    r.Invoke(1400_ms, "c1.t0", "release");
    r.Fail(1401_ms, "c1.t0", "release", "RedisConnectionException");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    CHECK(lease.violations[0].kind == "used_after_loss");  // Inside the resource at the loss.
    CHECK(lease.violations[0].from_us == 1200_ms);
    CHECK(lease.violations[0].to_us == 1400_ms);
    CHECK(Contains(lease.violations[0].events, lost));
  }
}

TEST_CASE("lease_safety: a key deleted by someone else's command is a lost lease", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=10000ms)", 10'000);
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Enter(1003_ms, "c1.t0");
  // c2's unlock does not check the owner and deletes c1's key.
  r.Invoke(2_s, "c2.t0", "release", "unlock()");
  const uint64_t deleted = r.Lease(2001_ms, "n1", "released", "c1.t0");
  r.Ok(2002_ms, "c2.t0", "release", 1);

  SECTION("while c1 still believes it holds the lock: a gap") {
    r.Exit(3_s, "c1.t0");
    r.Invoke(3100_ms, "c1.t0", "release", "unlock()");
    r.Fail(3101_ms, "c1.t0", "release", "IllegalMonitorStateException");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    const Violation& x = lease.violations[0];
    CHECK(x.kind == "used_after_loss");
    CHECK(x.threads == std::vector<std::string>{"c1.t0"});
    CHECK(x.from_us == 2001_ms);
    CHECK(x.to_us == 3100_ms);  // Until it stopped believing (it had left the resource).
    CHECK(Contains(x.events, deleted));
    CHECK(x.explanation.find("c1.t0's lease was deleted on n1 at 2.001 s") != std::string::npos);
  }
}

TEST_CASE("lease_safety: a lease lost while the acquire was in flight", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=100ms)", 100);
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Lease(1101_ms, "n1", "expired", "c1.t0");  // The reply is late: the lease ran out first.

  SECTION("starts the gap at the ok") {
    r.Ok(1300_ms, "c1.t0", "acquire");
    r.Invoke(1500_ms, "c1.t0", "release");
    r.Fail(1501_ms, "c1.t0", "release", "IllegalMonitorStateException");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    CHECK(lease.violations[0].from_us == 1300_ms);
    CHECK(lease.violations[0].to_us == 1500_ms);
    CHECK(lease.violations[0].explanation.find("while its acquire") != std::string::npos);
  }
  SECTION("unless the acquire created the key again afterwards") {
    r.Lease(1200_ms, "n1", "acquired", "c1.t0");  // A retry of the script ran later.
    r.Ok(1300_ms, "c1.t0", "acquire");
    r.Invoke(1350_ms, "c1.t0", "release");
    r.Lease(1351_ms, "n1", "released", "c1.t0");
    r.Ok(1352_ms, "c1.t0", "release", 1);
    CHECK_FALSE(Result(r.Check(), kLeaseSafety).violated);
  }
}

TEST_CASE("lease_safety: fields of a crashed incarnation are not the restarted client's",
          "[check]") {
  Recorder r;
  r.Client("c1");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=10000ms)", 10'000);
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Fault(2_s, "c1", "crash");
  r.Fault(3_s, "c1", "restart");
  r.Client("c1", 3_s, "uuid-c1-restarted");
  r.Invoke(4_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=10000ms)", 10'000);
  r.LeaseFields(4001_ms, "n2", "acquired", "uuid-c1-restarted:1");  // On another node.
  r.Ok(4002_ms, "c1.t0", "acquire");

  SECTION("the old incarnation's field expiring is not a loss for the new one") {
    r.LeaseFields(11_s, "n1", "expired", "uuid-c1:1");
    r.Invoke(12_s, "c1.t0", "release");
    r.Ok(12001_ms, "c1.t0", "release", 1);
    CHECK_FALSE(Result(r.Check(), kLeaseSafety).violated);
  }
  SECTION("the new incarnation's field expiring is") {
    r.LeaseFields(11_s, "n2", "expired", "uuid-c1-restarted:1");
    r.Invoke(12_s, "c1.t0", "release");
    r.Fail(12001_ms, "c1.t0", "release", "IllegalMonitorStateException");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    CHECK(lease.violations[0].from_us == 11_s);
  }
}

TEST_CASE("lease_safety: a RedLock holder keeps its lease while a majority does",
          "[check]") {
  SECTION("one node's expiry with the majority intact is not a loss") {
    Recorder r = RedLockHeld("kind=redlock version=v3.13.6 fencing=off permits=1");
    r.Lease(3_s, "n2", "expired", "c1.t0");  // Say n2's clock jumped.
    r.Exit(4_s, "c1.t0");
    r.Invoke(4100_ms, "c1.t0", "release", "unlock()");
    r.Lease(4101_ms, "n1", "released", "c1.t0");
    r.Lease(4102_ms, "n3", "released", "c1.t0");
    r.Ok(4103_ms, "c1.t0", "release", 2);  // Two members fully released.
    const Verdict v = r.Check();
    CHECK_FALSE(Result(v, kLeaseSafety).violated);
    CHECK_FALSE(Result(v, kReentrancy).violated);
  }
  SECTION("a majority's expiry is") {
    Recorder r = RedLockHeld("kind=redlock version=v3.13.6 fencing=off permits=1");
    const uint64_t first = r.Lease(3_s, "n2", "expired", "c1.t0");
    const uint64_t second = r.Lease(3500_ms, "n3", "expired", "c1.t0");
    r.Exit(4_s, "c1.t0");
    const uint64_t release = r.Invoke(4100_ms, "c1.t0", "release", "unlock()");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    const Violation& x = lease.violations[0];
    CHECK(x.kind == "used_after_loss");
    CHECK(x.threads == std::vector<std::string>{"c1.t0"});
    CHECK(x.from_us == 3500_ms);
    CHECK(x.to_us == 4100_ms);
    CHECK(Contains(x.events, first));
    CHECK(Contains(x.events, second));
    CHECK(Contains(x.events, release));
    CHECK(x.explanation.find("on 1 of the 3 nodes, fewer than the quorum of 2") !=
          std::string::npos);
  }
  SECTION("the lease is back once a majority holds the field again") {
    Recorder r = RedLockHeld("kind=redlock version=v3.13.6 fencing=off permits=1 nodes=3");
    r.Lease(3_s, "n2", "expired", "c1.t0");
    r.Lease(3500_ms, "n3", "expired", "c1.t0");
    r.Lease(3600_ms, "n2", "acquired", "c1.t0");  // A renewal re-created it (say).
    r.Exit(4_s, "c1.t0");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    CHECK(lease.violations[0].to_us == 3600_ms);
    CHECK(lease.violations[0].explanation.find("quorum of nodes again at 3.600 s") !=
          std::string::npos);
  }
  SECTION("a MultiLock needs every node") {
    Recorder r = RedLockHeld("kind=multilock version=v3.13.6 fencing=off permits=1 nodes=3");
    r.Lease(3_s, "n2", "expired", "c1.t0");
    r.Exit(4_s, "c1.t0");
    r.Invoke(4100_ms, "c1.t0", "release", "unlock()");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    CHECK(lease.violations[0].from_us == 3_s);
    CHECK(lease.violations[0].explanation.find("quorum of 3") != std::string::npos);
  }
  SECTION("without a protocol note any single node's expiry counts, as for an RLock") {
    Recorder r = RedLockHeld("version=v3.13.6");
    r.Lease(3_s, "n2", "expired", "c1.t0");
    r.Exit(4_s, "c1.t0");
    r.Invoke(4100_ms, "c1.t0", "release", "unlock()");
    CHECK(Result(r.Check(), kLeaseSafety).violation_count == 1);
  }
}

}  // namespace
}  // namespace lockstep::check
