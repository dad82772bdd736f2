// Establishes that reentrancy (check/reentrancy.cpp): unlock results follow the hold count, a non-holder's release must fail, RedLock releases count members, and every unlock script's reply matches the lock key on its node when it ran.
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

TEST_CASE("reentrancy: RedLock releases count members", "[check]") {
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

// --- unlock replies against the key on the node ----------------------------------------------

std::vector<std::string> Kinds(const PropertyResult& re) {
  std::vector<std::string> kinds;
  for (const Violation& v : re.violations) kinds.push_back(v.kind);
  return kinds;
}

// The first violation of that kind (the count rule may report the same release first).
std::optional<Violation> First(const PropertyResult& re, const std::string& kind) {
  for (const Violation& v : re.violations) {
    if (v.kind == kind) return v;
  }
  return std::nullopt;
}

// c1.t0 holds the lock on n1 (one hold), c2 is another client.
Recorder RLockHeldByC1(const std::string& protocol) {
  Recorder r;
  r.Protocol(protocol);
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire", "lock(no lease)");
  r.Exec(1001_ms, "n1", "c1.t0", "acquire", "(nil)");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  return r;
}

TEST_CASE("reentrancy: an RLock unlock's reply must match the key on the node", "[check][unlock]") {
  Recorder r = RLockHeldByC1("kind=rlock version=v3.13.6 fencing=off permits=1");

  SECTION("stock-like replies hold: 0 while held twice, then 1 deleting the key") {
    r.Invoke(1100_ms, "c1.t0", "acquire", "lock(no lease)");
    r.Exec(1101_ms, "n1", "c1.t0", "acquire", "(nil)");
    r.Ok(1102_ms, "c1.t0", "acquire");
    r.Invoke(2_s, "c1.t0", "release", "unlock()");
    r.Exec(2001_ms, "n1", "c1.t0", "unlock", "0");
    r.Ok(2002_ms, "c1.t0", "release", 0);
    r.Invoke(3_s, "c1.t0", "release", "unlock()");
    r.Exec(3001_ms, "n1", "c1.t0", "unlock", "1");
    r.Lease(3001_ms, "n1", "released", "c1.t0");
    r.Ok(3002_ms, "c1.t0", "release", 1);
    // A non-holder told nil holds too.
    r.Invoke(4_s, "c2.t0", "release", "unlock()");
    r.Exec(4001_ms, "n1", "c2.t0", "unlock", "(nil)");
    r.Fail(4002_ms, "c2.t0", "release", "IllegalMonitorStateException");
    CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
  }
  SECTION("1 for a caller whose field is not in the key is a violation") {
    r.Invoke(2_s, "c2.t0", "release", "unlock()");
    const uint64_t exec = r.Exec(2001_ms, "n1", "c2.t0", "unlock", "1");
    r.Fail(2002_ms, "c2.t0", "release", "IllegalMonitorStateException");
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    const Violation& v = re.violations[0];
    CHECK(v.kind == "unlock_answered_non_holder");
    CHECK(v.threads == std::vector<std::string>{"c2.t0", "c1.t0"});
    CHECK(v.from_us == 2001_ms);
    CHECK(Contains(v.events, exec));
    CHECK(v.explanation.find("answered 1 (released), but c2.t0 did not hold it there: the key "
                             "was held by c1.t0") != std::string::npos);
  }
  SECTION("after the lease expired, the old holder's unlock must not answer released") {
    // The hold count is unknown from the expiry on: only the reply rule judges this unlock.
    const uint64_t expired = r.Lease(31_s, "n1", "expired", "c1.t0");
    r.Invoke(32_s, "c1.t0", "release", "unlock()");
    r.Exec(32001_ms, "n1", "c1.t0", "unlock", "1");
    r.Ok(32002_ms, "c1.t0", "release", 1);
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    CHECK(re.violations[0].kind == "unlock_answered_non_holder");
    CHECK(Contains(re.violations[0].events, expired));
    CHECK(re.violations[0].explanation.find("did not hold it there: the key did not exist") != std::string::npos);
  }
  SECTION("a key whose time ran out just before the script is one the script did not see") {
    r.Invoke(31_s, "c1.t0", "release", "unlock()");
    SECTION("nil holds") {
      r.Exec(31001_ms, "n1", "c1.t0", "unlock", "(nil)");
      r.Lease(31001_ms, "n1", "expired", "c1.t0");
      r.Fail(31002_ms, "c1.t0", "release", "IllegalMonitorStateException");
      CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
    }
    SECTION("1 is a violation") {
      r.Exec(31001_ms, "n1", "c1.t0", "unlock", "1");
      r.Lease(31001_ms, "n1", "expired", "c1.t0");
      r.Ok(31002_ms, "c1.t0", "release", 1);
      const PropertyResult& re = Result(r.Check(), kReentrancy);
      REQUIRE(re.violation_count == 1);
      CHECK(re.violations[0].kind == "unlock_answered_non_holder");
      CHECK(re.violations[0].explanation.find("the key's time had run out (owners: c1.t0)") != std::string::npos);
    }
  }
  SECTION("nil for the true holder is a violation") {
    r.Invoke(2_s, "c1.t0", "release", "unlock()");
    r.Exec(2001_ms, "n1", "c1.t0", "unlock", "(nil)");
    r.Fail(2002_ms, "c1.t0", "release", "IllegalMonitorStateException");
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    CHECK(re.violations[0].kind == "unlock_refused_holder");
    CHECK(re.violations[0].explanation.find("c1.t0's field was in the key there (owners: c1.t0)") !=
          std::string::npos);
  }
  SECTION("1 that leaves the caller's field in the key is a violation") {
    r.Invoke(2_s, "c1.t0", "release", "unlock()");
    r.Exec(2001_ms, "n1", "c1.t0", "unlock", "1");
    r.Ok(2002_ms, "c1.t0", "release", 1);
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    CHECK(re.violations[0].kind == "unlock_misreported");
  }
  SECTION("0 that deleted the key is a violation (besides the count rule's hold_leaked)") {
    r.Invoke(2_s, "c1.t0", "release", "unlock()");
    r.Exec(2001_ms, "n1", "c1.t0", "unlock", "0");
    r.Lease(2001_ms, "n1", "released", "c1.t0");
    r.Ok(2002_ms, "c1.t0", "release", 0);
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    CHECK(Kinds(re) == std::vector<std::string>{"hold_leaked", "unlock_misreported"});
  }
  SECTION("3.13.6 resending an unlock whose first run released: the resend's nil is the truth") {
    r.Invoke(2_s, "c1.t0", "release", "unlock()");
    r.Exec(2001_ms, "n1", "c1.t0", "unlock", "1", 7);
    r.Lease(2001_ms, "n1", "released", "c1.t0");
    r.Exec(5001_ms, "n1", "c1.t0", "unlock", "(nil)", 8);
    r.Fail(5002_ms, "c1.t0", "release", "IllegalMonitorStateException");
    CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
  }
}

TEST_CASE("reentrancy: a duplicated unlock request may repeat its first answer", "[check][unlock]") {
  Recorder r = RLockHeldByC1("kind=rlock version=current fencing=off permits=1");
  r.Invoke(2_s, "c1.t0", "release", "unlock()");
  r.Exec(2001_ms, "n1", "c1.t0", "unlock", "1", 7);
  r.Lease(2001_ms, "n1", "released", "c1.t0");
  SECTION("the same request again (the unlock latch) holds") {
    r.Exec(2002_ms, "n1", "c1.t0", "unlock", "1", 7);
    r.Ok(2003_ms, "c1.t0", "release", 1);
    CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
  }
  SECTION("another request answering 1 does not") {
    r.Ok(2003_ms, "c1.t0", "release", 1);
    r.Invoke(3_s, "c1.t0", "release", "unlock()");
    r.Exec(3001_ms, "n1", "c1.t0", "unlock", "1", 9);
    r.Ok(3002_ms, "c1.t0", "release", 1);
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    // The count rule sees it too: the thread's count was 0.
    CHECK(Kinds(re) == std::vector<std::string>{"release_without_hold",
                                                "unlock_answered_non_holder"});
  }
}

TEST_CASE("reentrancy: read-write lock unlock replies, per side", "[check][unlock]") {
  Recorder r;
  const std::string version = GENERATE(std::string("v3.13.6"), std::string("current"));
  r.Protocol("kind=rwlock version=" + version + " fencing=off permits=1");
  r.Client("c1");
  r.Client("c2");
  SECTION("readers") {
    r.Invoke(1_s, "c1.t0", "acquire_read", "lock(no lease)");
    r.LeaseFields(1001_ms, "n1", "acquired", "mode,uuid-c1:1");
    r.Ok(1002_ms, "c1.t0", "acquire_read");
    r.Invoke(1100_ms, "c2.t0", "acquire_read", "lock(no lease)");
    r.LeaseFields(1101_ms, "n1", "owners", "mode,uuid-c1:1,uuid-c2:1");
    r.Ok(1102_ms, "c2.t0", "acquire_read");
    r.Invoke(2_s, "c1.t0", "release_read", "unlock()");
    SECTION("0 while another reader keeps the hash holds, and the last reader's 1") {
      r.Exec(2001_ms, "n1", "c1.t0", "unlock", "0");
      r.LeaseFields(2001_ms, "n1", "owners", "mode,uuid-c2:1");
      r.Ok(2002_ms, "c1.t0", "release_read", 0);
      r.Invoke(3_s, "c2.t0", "release_read", "unlock()");
      r.Exec(3001_ms, "n1", "c2.t0", "unlock", "1");
      r.LeaseFields(3001_ms, "n1", "released", "mode,uuid-c2:1");
      r.Ok(3002_ms, "c2.t0", "release_read", 1);
      CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
    }
    SECTION("nil for a reader whose field is there is a violation") {
      r.Exec(2001_ms, "n1", "c1.t0", "unlock", "(nil)");
      r.Fail(2002_ms, "c1.t0", "release_read", "IllegalMonitorStateException");
      const PropertyResult& re = Result(r.Check(), kReentrancy);
      CHECK(Kinds(re) == std::vector<std::string>{"unlock_refused_holder"});
    }
    SECTION("1 that leaves the hash is a violation") {
      r.Exec(2001_ms, "n1", "c1.t0", "unlock", "1");
      r.LeaseFields(2001_ms, "n1", "owners", "mode,uuid-c2:1");
      r.Ok(2002_ms, "c1.t0", "release_read", 1);
      const PropertyResult& re = Result(r.Check(), kReentrancy);
      CHECK(Kinds(re) == std::vector<std::string>{"unlock_misreported"});
    }
  }
  SECTION("a writer") {
    r.Invoke(1_s, "c1.t0", "acquire", "lock(no lease)");
    r.LeaseFields(1001_ms, "n1", "acquired", "mode,uuid-c1:1:write");
    r.Ok(1002_ms, "c1.t0", "acquire");
    SECTION("the writer's 1 holds") {
      r.Invoke(2_s, "c1.t0", "release", "unlock()");
      r.Exec(2001_ms, "n1", "c1.t0", "unlock", "1");
      r.LeaseFields(2001_ms, "n1", "released", "mode,uuid-c1:1:write");
      r.Ok(2002_ms, "c1.t0", "release", 1);
      CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
    }
    SECTION("1 for another thread's write unlock is a violation") {
      r.Invoke(2_s, "c2.t0", "release", "unlock()");
      r.Exec(2001_ms, "n1", "c2.t0", "unlock", "1");
      r.LeaseFields(2001_ms, "n1", "released", "mode,uuid-c1:1:write");
      r.Ok(2002_ms, "c2.t0", "release", 1);
      const std::optional<Violation> v =
          First(Result(r.Check(), kReentrancy), "unlock_answered_non_holder");
      REQUIRE(v.has_value());
      CHECK(v->from_us == 2001_ms);
      CHECK(v->explanation.find("c2.t0's write unlock") != std::string::npos);
      CHECK(v->explanation.find("held by c1.t0 (write)") != std::string::npos);
    }
    SECTION("the writer's read unlock is judged on its read field, which it does not have") {
      r.Invoke(2_s, "c1.t0", "release_read", "unlock()");
      r.Exec(2001_ms, "n1", "c1.t0", "unlock", "0");
      r.Fail(2002_ms, "c1.t0", "release_read", "unexpected");
      const PropertyResult& re = Result(r.Check(), kReentrancy);
      CHECK(Kinds(re) == std::vector<std::string>{"unlock_answered_non_holder"});
    }
  }
  SECTION("a key that does not exist: 1 is a lie in every version, 3.13.6's stock script too") {
    r.Invoke(1_s, "c1.t0", "release", "unlock()");
    r.Exec(1001_ms, "n1", "c1.t0", "unlock", "1");
    r.Ok(1002_ms, "c1.t0", "release", 1);
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    const std::vector<std::string> kinds = Kinds(re);
    CHECK(std::count(kinds.begin(), kinds.end(), "unlock_answered_non_holder") == 1);
  }
}

TEST_CASE("reentrancy: the stock fair lock's 1 for a missing key tells a non-holder it released, "
          "a violation whoever wrote the script", "[check][unlock]") {
  Recorder r;
  r.Protocol("kind=fairlock version=v3.13.6 fencing=off permits=1");
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c2.t0", "release", "unlock()");
  r.Exec(1001_ms, "n1", "c2.t0", "unlock", "1");
  r.Ok(1002_ms, "c2.t0", "release", 1);  // The count rule calls this release_without_hold.
  r.Invoke(2_s, "c1.t0", "acquire", "lock(no lease)");
  r.Exec(2001_ms, "n1", "c1.t0", "acquire", "(nil)");
  r.Lease(2001_ms, "n1", "acquired", "c1.t0");
  r.Ok(2002_ms, "c1.t0", "acquire");
  r.Invoke(3_s, "c2.t0", "release", "unlock()");
  r.Exec(3001_ms, "n1", "c2.t0", "unlock", "1");
  r.Ok(3002_ms, "c2.t0", "release", 1);
  const PropertyResult& re = Result(r.Check(), kReentrancy);
  CHECK(Kinds(re) == std::vector<std::string>{"release_without_hold", "unlock_answered_non_holder",
                                              "release_without_hold", "unlock_answered_non_holder"});
  CHECK(re.violations[1].from_us == 1001_ms);
  CHECK(re.violations[1].explanation.find("the key did not exist") != std::string::npos);
  CHECK(re.violations[3].from_us == 3001_ms);
}

TEST_CASE("reentrancy: a holder whose lease expired is told by its unlock that it lost the lock, "
          "fair lock and 3.13.6 read-write lock included", "[check][unlock]") {
  for (const std::string protocol : {"kind=fairlock version=v3.13.6", "kind=fairlock version=current",
                                     "kind=rwlock version=v3.13.6", "kind=rlock version=v3.13.6"}) {
    INFO(protocol);
    Recorder r;
    r.Protocol(protocol + " fencing=off permits=1");
    r.Client("c1");
    const bool rw = protocol.find("rwlock") != std::string::npos;
    r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=1000ms, lease=500ms)");
    r.Exec(1001_ms, "n1", "c1.t0", "acquire", "(nil)");
    if (rw) {
      r.LeaseFields(1001_ms, "n1", "acquired", "mode,uuid-c1:1:write");
    } else {
      r.Lease(1001_ms, "n1", "acquired", "c1.t0");
    }
    r.Ok(1002_ms, "c1.t0", "acquire");
    if (rw) {
      r.LeaseFields(1502_ms, "n1", "expired", "mode,uuid-c1:1:write");
    } else {
      r.Lease(1502_ms, "n1", "expired", "c1.t0");
    }
    r.Invoke(2_s, "c1.t0", "release", "unlock()");
    r.Exec(2001_ms, "n1", "c1.t0", "unlock", "1");  // The stock answer for a missing key.
    r.Ok(2002_ms, "c1.t0", "release", 1);
    const std::optional<Violation> v =
        First(Result(r.Check(), kReentrancy), "unlock_answered_non_holder");
    REQUIRE(v.has_value());
    CHECK(v->from_us == 2001_ms);
  }
}

TEST_CASE("reentrancy: a plain lock's compare-and-delete reply", "[check][unlock]") {
  Recorder r;
  r.Protocol("kind=setnx-px version=current fencing=off permits=1");
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire", "lock(no lease)");
  r.Exec(1001_ms, "n1", "c1.t0", "acquire", "OK");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");  // The key's value is c1.t0's token.
  r.Ok(1002_ms, "c1.t0", "acquire");
  SECTION("0 for a non-holder and 1 for the holder hold") {
    r.Invoke(2_s, "c2.t0", "release", "unlock()");
    r.Exec(2001_ms, "n1", "c2.t0", "unlock", "0");
    r.Fail(2002_ms, "c2.t0", "release", "not released");
    r.Invoke(3_s, "c1.t0", "release", "unlock()");
    r.Exec(3001_ms, "n1", "c1.t0", "unlock", "1");
    r.Lease(3001_ms, "n1", "released", "c1.t0");
    r.Ok(3002_ms, "c1.t0", "release", 1);
    CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
  }
  SECTION("1 for a non-holder is a violation") {
    r.Invoke(2_s, "c2.t0", "release", "unlock()");
    r.Exec(2001_ms, "n1", "c2.t0", "unlock", "1");
    r.Lease(2001_ms, "n1", "released", "c1.t0");
    r.Ok(2002_ms, "c2.t0", "release", 1);
    const std::optional<Violation> v =
        First(Result(r.Check(), kReentrancy), "unlock_answered_non_holder");
    REQUIRE(v.has_value());
    CHECK(v->threads == std::vector<std::string>{"c2.t0", "c1.t0"});
  }
  SECTION("0 for the holder is a violation") {
    r.Invoke(2_s, "c1.t0", "release", "unlock()");
    r.Exec(2001_ms, "n1", "c1.t0", "unlock", "0");
    r.Fail(2002_ms, "c1.t0", "release", "not released");
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    CHECK(Kinds(re) == std::vector<std::string>{"unlock_refused_holder"});
  }
}

TEST_CASE("reentrancy: a promoted replica's key is not judged until a lease event tells it",
          "[check][unlock]") {
  Recorder r = RLockHeldByC1("kind=rlock version=v3.13.6 fencing=off permits=1");
  r.Fault(5_s, "n2", "promote", "replica n2 promoted to master (sentinel)");
  r.Invoke(6_s, "c1.t0", "release", "unlock()");
  r.Exec(6001_ms, "n2", "c1.t0", "unlock", "1");  // n2 had c1.t0's field replicated.
  r.Lease(6001_ms, "n2", "released", "c1.t0");
  r.Ok(6002_ms, "c1.t0", "release", 1);
  CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
}

TEST_CASE("reentrancy: a watchdog renew must not tell a thread that lost the lock that it still "
          "holds it",
          "[check][unlock]") {
  Recorder r = RLockHeldByC1("kind=rlock version=current fencing=off permits=1");
  SECTION("a renew of a held lock answering 1 is the truth") {
    r.Exec(11_s, "n1", "c1.t0", "renew", "1");
    CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
  }
  SECTION("after the key expired and c2 took it, a renew answering 1 is a lie") {
    const uint64_t expired = r.Lease(31_s, "n1", "expired", "c1.t0");
    r.Invoke(31100_ms, "c2.t0", "acquire", "lock(no lease)");
    r.Exec(31101_ms, "n1", "c2.t0", "acquire", "(nil)");
    r.Lease(31101_ms, "n1", "acquired", "c2.t0");
    r.Ok(31102_ms, "c2.t0", "acquire");
    // A renew that re-creates its own field (hset + pexpire, return 1): a refresh of a lost key.
    const uint64_t renew = r.Exec(32_s, "n1", "c1.t0", "renew", "[1]");
    r.Lease(32_s, "n1", "owners", "c2.t0,c1.t0");
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    const Violation& v = re.violations[0];
    CHECK(v.kind == "renew_answered_non_holder");
    CHECK(v.threads == std::vector<std::string>{"c1.t0", "c2.t0"});
    CHECK(Contains(v.events, renew));
    CHECK_FALSE(Contains(v.events, expired));
    CHECK(v.explanation ==
          "c1.t0's renew (the watchdog's) of \"lock\" ran on n1 at 32.000 s and answered [1] "
          "(still held, lease extended), but c1.t0 did not hold it there: the key was held by "
          "c2.t0; the script put c1.t0's field back. The holder is told it still holds a lock it "
          "had lost.");
  }
  SECTION("a live run records the unlock's lease event a round trip after its exec") {
    r.Invoke(2_s, "c1.t0", "release", "unlock()");
    r.Exec(2001_ms, "n1", "c1.t0", "unlock", "1");
    r.Lease(2001_ms + 10, "n1", "released", "c1.t0");
    r.Ok(2002_ms, "c1.t0", "release", 1);
    CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
  }
  SECTION("a later expiry, the next event after the renew, is not the renew's doing") {
    r.Exec(20_s, "n1", "c1.t0", "renew", "[1]");
    r.Lease(30_s, "n1", "expired", "c1.t0");
    CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
  }
  SECTION("a renew answering 0 after the expiry is the truth") {
    r.Lease(31_s, "n1", "expired", "c1.t0");
    r.Exec(32_s, "n1", "c1.t0", "renew", "0");
    CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
  }
}

}  // namespace
}  // namespace lockstep::check
