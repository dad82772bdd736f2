// Establishes that resource_exclusion (check/resource_exclusion.cpp): accesses of different threads to the protected resource must not overlap.
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

TEST_CASE("resource_exclusion: accesses of different threads must not overlap", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  const uint64_t c1_enter = r.Enter(1_s, "c1.t0", 7);

  SECTION("back to back accesses hold") {
    r.Exit(2_s, "c1.t0");
    r.Enter(2_s, "c2.t0", 8);  // Same microsecond, after the exit: no overlap.
    r.Exit(3_s, "c2.t0");
    CHECK_FALSE(Result(r.Check(), kResourceExclusion).violated);
  }
  SECTION("overlapping accesses are reported with their tokens") {
    const uint64_t c2_enter = r.Enter(1500_ms, "c2.t0", 6);
    r.Exit(2_s, "c1.t0");
    r.Exit(3_s, "c2.t0");
    const PropertyResult& res = Result(r.Check(), kResourceExclusion);
    REQUIRE(res.violation_count == 1);
    const Violation& v = res.violations[0];
    CHECK(v.threads == std::vector<std::string>{"c1.t0", "c2.t0"});
    CHECK(v.from_us == 1500_ms);
    CHECK(v.to_us == 2_s);
    CHECK(v.events == std::vector<uint64_t>{c1_enter, c2_enter});
    CHECK(v.explanation.find("c2.t0 entered the resource of \"lock\" at 1.500 s with token 6 "
                             "while c1.t0 was still inside (entered at 1.000 s with token 7") !=
          std::string::npos);
    CHECK(v.explanation.find("token no greater") != std::string::npos);
  }
  SECTION("one thread's nested accesses are not an overlap") {
    r.Enter(1200_ms, "c1.t0", 7);
    r.Exit(1300_ms, "c1.t0");
    r.Exit(2_s, "c1.t0");
    CHECK_FALSE(Result(r.Check(), kResourceExclusion).violated);
  }
  SECTION("a crash ends the access") {
    r.Fault(1200_ms, "c1", "crash");
    r.Enter(1500_ms, "c2.t0", 8);
    r.Exit(2_s, "c2.t0");
    CHECK_FALSE(Result(r.Check(), kResourceExclusion).violated);
  }
}

}  // namespace
}  // namespace lockstep::check
