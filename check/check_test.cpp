// Establishes that the checkers as a whole: a clean history holds every property; malformed input becomes warnings; a history read back from its file gives the same verdict; Judge compares a verdict with [expect].
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

TEST_CASE("checkers: a clean history holds every property", "[check]") {
  const Verdict v = CleanTurns().Check();
  REQUIRE(v.results.size() == kProperties.size());
  for (size_t i = 0; i < kProperties.size(); ++i) {
    INFO(kProperties[i]);
    CHECK(v.results[i].property == kProperties[i]);
    CHECK_FALSE(v.results[i].violated);
    CHECK(v.results[i].violation_count == 0);
  }
  CHECK(v.run_end_us == 60_s);
  CHECK(v.warnings.empty());
  CHECK_FALSE(v.AnyViolated());
  CHECK(v.Find("no_such_property") == nullptr);
}

// The brief's example: c1 pauses while holding, its lease expires, c2 takes the lock, and c1
// wakes up still believing it holds it and uses the resource.

TEST_CASE("Judge compares a verdict with the scenario's expectations", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Ok(1001_ms, "c1.t0", "acquire");
  r.Invoke(2_s, "c2.t0", "acquire");
  r.Ok(2001_ms, "c2.t0", "acquire");
  r.Invoke(3_s, "c2.t0", "acquire");
  r.Ok(3001_ms, "c2.t0", "acquire");  // Reentry: still one overlap with c1.
  r.Invoke(4_s, "c2.t0", "release");
  r.Ok(4001_ms, "c2.t0", "release", 0);
  r.Invoke(4100_ms, "c2.t0", "release");
  r.Ok(4101_ms, "c2.t0", "release", 1);
  r.Invoke(5_s, "c2.t0", "acquire");
  r.Ok(5001_ms, "c2.t0", "acquire");  // A second overlap.
  const Verdict v = r.Check();
  REQUIRE(Result(v, kMutualExclusion).violation_count == 2);

  const Judgement fine = Judge(v, {{"mutual_exclusion", Expectation::kViolated},
                                   {"reentrancy", Expectation::kHold},
                                   {"lease_safety", Expectation::kAny}});
  CHECK(fine.matches);
  CHECK(fine.mismatches.empty());

  const Judgement bad = Judge(v, {{"mutual_exclusion", Expectation::kHold},
                                  {"reentrancy", Expectation::kViolated},
                                  {"fairnes", Expectation::kHold}});
  CHECK_FALSE(bad.matches);
  CHECK(bad.mismatches == std::vector<std::string>{
                              "fairnes: no such property",
                              "mutual_exclusion: expected to hold, violated (2 violations)",
                              "reentrancy: expected to be violated, held"});

  // The property checkers' names are known names; one that does not apply to the protocol holds.
  const Judgement added = Judge(v, {{"fairness", Expectation::kHold},
                                    {"fencing", Expectation::kHold},
                                    {"rw_exclusion", Expectation::kHold},
                                    {"semaphore", Expectation::kViolated},
                                    {"latch", Expectation::kViolated}});
  CHECK(added.mismatches == std::vector<std::string>{
                                "latch: expected to be violated, held (it does not apply to "
                                "protocol kind '')",
                                "semaphore: expected to be violated, held (it does not apply to "
                                "protocol kind '')"});
}

TEST_CASE("checkers: malformed input becomes warnings, not crashes", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Ok(1_s, "c1.t0", "acquire");  // No invoke.
  r.Exit(2_s, "c1.t0");           // No enter.
  const Verdict v = r.Check();
  CHECK(v.warning_count == 2);
  REQUIRE(v.warnings.size() == 2);
  CHECK(v.warnings[0].find("without an invoke") != std::string::npos);
  CHECK_FALSE(v.AnyViolated());
}

TEST_CASE("checkers: a history read back from JSON Lines gives the same verdict", "[check]") {
  const Recorder r = CleanTurns();
  History copy;
  std::string line, text, error;
  for (const history::Event& e : r.history().events()) {
    line.clear();
    history::AppendJsonLine(e, r.history().names(), &line);
    history::Event parsed;
    REQUIRE(history::ParseJsonLine(line, &copy.names(), &text, &parsed, &error));
    copy.Append(parsed);
  }
  REQUIRE(copy.Hash() == r.history().Hash());
  const Verdict a = r.Check();
  const Verdict b = CheckHistory(copy, CheckOptions{});
  for (size_t i = 0; i < kProperties.size(); ++i) {
    CHECK(a.results[i].violation_count == b.results[i].violation_count);
  }
}

}  // namespace
}  // namespace lockstep::check
