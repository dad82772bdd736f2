// Establishes that script_errors (check/script_errors.cpp): a lock's scripts and commands answer
// with an error only where the protocol expects one, judged in every run.
#include <catch2/catch.hpp>

#include <string>

#include "check/testing.h"
#include "model/scenario.h"

namespace lockstep::check {
namespace {

using namespace testing;

TEST_CASE("script_errors: a script's runtime error is a violation, the errors a client "
          "handles are not", "[check]") {
  Recorder r;
  r.Protocol("kind=setnx-px version=current fencing=off permits=1 nodes=1");
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=10000ms, lease=5000ms)");
  r.Exec(1001_ms, "n1", "c1.t0", "acquire", "OK");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Invoke(2_s, "c1.t0", "release", "unlock()");

  SECTION("a global assignment in the unlock script: violated, with the script's line") {
    const uint64_t exec = r.Exec(
        2001_ms, "n1", "c1.t0", "unlock",
        "-ERR user_script:3: Attempt to modify a readonly table script: "
        "34951eef0c1d4e1be5b0d9e87c2b2b2b4f7d7f11, on @user_script:3.");
    r.Lease(2001_ms, "n1", "released", "c1.t0");
    r.Fail(2002_ms, "c1.t0", "release", "ERR user_script:3: Attempt to modify a readonly table");
    const Verdict v = r.Check();
    const PropertyResult* p = v.Find("script_errors");
    REQUIRE(p != nullptr);
    REQUIRE(p->violated);
    CHECK(p->violation_count == 1);
    const Violation& first = p->violations.front();
    CHECK(first.kind == "error_reply");
    CHECK(first.threads == std::vector<std::string>{"c1.t0"});
    CHECK(first.events == std::vector<history::Seq>{exec});
    CHECK(first.explanation.find("c1.t0's unlock on n1 at 2.001 s answered an error: ERR "
                                 "user_script:3: Attempt to modify a readonly table") == 0);
    CHECK(first.explanation.find("failed at line 3") != std::string::npos);
  }
  SECTION("WRONGTYPE, OOM and lockstep's stop of a script past its budget: violated") {
    r.Exec(2001_ms, "n1", "c1.t0", "unlock",
           "-WRONGTYPE Operation against a key holding the wrong kind of value");
    r.Exec(2002_ms, "n1", "c1.t0", "unlock",
           "-OOM command not allowed when used memory > 'maxmemory'.");
    r.Exec(2003_ms, "n1", "c1.t0", "unlock",
           "-BUSY lockstep stopped the script after 100000000 steps script: 34951eef, on "
           "@user_script:4.");
    r.Fail(2004_ms, "c1.t0", "release", "BUSY");
    const PropertyResult* p = r.Check().Find("script_errors");
    REQUIRE(p != nullptr);
    CHECK(p->violation_count == 3);
  }
  SECTION("READONLY, redirects, LOADING, MASTERDOWN, NOSCRIPT and a busy node: holds") {
    r.Exec(2001_ms, "n1", "c1.t0", "unlock",
           "-READONLY You can't write against a read only replica. script: 12df8736, on "
           "@user_script:29.");
    r.Exec(2002_ms, "n1", "c1.t0", "unlock", "-MOVED 3300 127.0.0.1:7001");
    r.Exec(2003_ms, "n1", "c1.t0", "unlock", "-ASK 3300 127.0.0.1:7001");
    r.Exec(2004_ms, "n1", "c1.t0", "unlock", "-TRYAGAIN Multiple keys request during rehashing");
    r.Exec(2005_ms, "n1", "c1.t0", "unlock", "-CLUSTERDOWN The cluster is down");
    r.Exec(2006_ms, "n1", "c1.t0", "unlock", "-LOADING Redis is loading the dataset in memory");
    r.Exec(2007_ms, "n1", "c1.t0", "unlock", "-MASTERDOWN Link with MASTER is down");
    r.Exec(2008_ms, "n1", "c1.t0", "unlock", "-NOSCRIPT No matching script. Please use EVAL.");
    r.Exec(2009_ms, "n1", "c1.t0", "unlock",
           "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
    r.Exec(2010_ms, "n1", "c1.t0", "unlock", "1");
    r.Lease(2010_ms, "n1", "released", "c1.t0");
    r.Ok(2011_ms, "c1.t0", "release", 1);
    const PropertyResult* p = r.Check().Find("script_errors");
    REQUIRE(p != nullptr);
    CHECK(!p->violated);
    CHECK(p->applicable);
  }
}

TEST_CASE("script_errors is judged in every run: an [expect] that does not name it expects it "
          "to hold", "[check]") {
  const std::map<std::string, Expectation> expect = {{"mutual_exclusion", Expectation::kHold}};
  CHECK(ExpectationOf(expect, "script_errors") == Expectation::kHold);
  CHECK(ExpectationOf(expect, "reentrancy") == Expectation::kAny);
  CHECK(ExpectationOf({{"script_errors", Expectation::kViolated}}, "script_errors") ==
        Expectation::kViolated);
  Verdict v;
  PropertyResult errors;
  errors.property = "script_errors";
  errors.violated = true;
  errors.violation_count = 2;
  PropertyResult mutex;
  mutex.property = "mutual_exclusion";
  v.results = {mutex, errors};
  const Judgement j = Judge(v, expect);
  CHECK(!j.matches);
  CHECK(j.mismatches == std::vector<std::string>{"script_errors: expected to hold, violated (2 violations)"});
}

}  // namespace
}  // namespace lockstep::check
