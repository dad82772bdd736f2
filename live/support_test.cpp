// Establishes what a live replay refuses before it starts: duplication and reordering always,
// process and configuration control only against the user's own servers; each message names
// the file (and the fault's line) and says what to change.
#include "live/support.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "model/scenario_scale.h"
#include "model/scenario_toml.h"

using lockstep::LoadScenarioFile;
using lockstep::LoadScenarioString;
using lockstep::Scenario;
using lockstep::ScaleTimes;
using lockstep::ScenarioError;
using lockstep::live::LiveRefusals;

namespace {

Scenario Load(const std::string& text) {
  ScenarioError error;
  auto s = LoadScenarioString(text, "live.toml", &error);
  INFO(error.ToString());
  REQUIRE(s);
  return *s;
}

bool AnyContains(const std::vector<std::string>& v, const std::string& part) {
  for (const std::string& s : v) {
    if (s.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("live replay refuses duplication and reordering, with the line", "[live][support]") {
  const Scenario s = Load(R"(
name = "dup"
[[nodes]]
name = "n1"
[[clients]]
count = 1
[network]
duplicate = 0.1
reorder = true
[[faults]]
kind = "duplicate"
at_ms = 1000
duration_ms = 1000
rate = 0.5
targets = ["c1"]
)");
  const auto refusals = LiveRefusals(s, true);
  CHECK(refusals.size() == 3);
  CHECK(AnyContains(refusals, "live.toml: [network] duplicate > 0"));
  CHECK(AnyContains(refusals, "live.toml: [network] reorder = true"));
  CHECK(AnyContains(refusals, "live.toml:10: a fault of kind duplicate cannot be made real on TCP"));
}

TEST_CASE("live replay refuses a fault kind it cannot make real, as its row says why",
          "[live][support]") {
  const Scenario s = Load(R"(
name = "disk"
[[nodes]]
name = "n1"
persistence = "aof-always"
[[clients]]
count = 1
[[faults]]
kind = "fsync_stall"
at_ms = 1000
duration_ms = 2000
targets = ["n1"]
)");
  const auto refusals = LiveRefusals(s, true);
  REQUIRE(refusals.size() == 1);
  CHECK(refusals[0] ==
        "live.toml:8: a fault of kind fsync_stall cannot be made real by a replay, which cannot "
        "stall a real disk; remove it for the replay");
}

TEST_CASE("live replay refuses a partition of the sentinels", "[live][support]") {
  const Scenario s = Load(R"(
name = "sentinel-cut"
[[nodes]]
name = "n1"
[[nodes]]
name = "n2"
replica_of = "n1"
[[clients]]
count = 1
[sentinel]
enabled = true
[[faults]]
kind = "partition"
at_ms = 1000
duration_ms = 1000
targets = ["n1"]
peers = ["sentinel"]
)");
  const auto refusals = LiveRefusals(s, true);
  REQUIRE(refusals.size() == 1);
  CHECK(AnyContains(refusals, "live.toml:12: a fault that names \"sentinel\""));
}

TEST_CASE("against the user's servers, process and configuration faults are refused",
          "[live][support]") {
  const Scenario s = Load(R"(
name = "own"
[[nodes]]
name = "n1"
persistence = "aof-always"
[[nodes]]
name = "n2"
replica_of = "n1"
clock = { offset_ms = 100 }
[[clients]]
count = 2
[sentinel]
enabled = true
[[faults]]
kind = "pause"
at_ms = 1000
duration_ms = 1000
targets = ["n1"]
[[faults]]
kind = "pause"
at_ms = 1000
duration_ms = 1000
targets = ["c1"]
[[faults]]
kind = "partition"
at_ms = 1000
duration_ms = 1000
targets = ["c1"]
peers = ["n1"]
)");
  CHECK(LiveRefusals(s, true).empty());
  const auto refusals = LiveRefusals(s, false);
  CHECK(AnyContains(refusals, "live.toml:14: a node pause"));
  CHECK_FALSE(AnyContains(refusals, "live.toml:19"));  // A client pause is the driver's own.
  CHECK_FALSE(AnyContains(refusals, "live.toml:24"));  // A partition goes through the proxy.
  CHECK(AnyContains(refusals, "node n2 as a replica"));
  CHECK(AnyContains(refusals, "node n1's persistence"));
  CHECK(AnyContains(refusals, "node n2's [clock]"));
  CHECK(AnyContains(refusals, "[sentinel]"));
  CHECK(refusals.size() == 5);
}

TEST_CASE("every library scenario can be replayed on servers lockstep starts", "[live][support]") {
  namespace fs = std::filesystem;
  int count = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(LOCKSTEP_SOURCE_DIR) / "scenarios")) {
    if (entry.path().extension() != ".toml") continue;
    ScenarioError error;
    auto s = LoadScenarioFile(entry.path().string(), &error);
    REQUIRE(s);
    const auto refusals = LiveRefusals(*s, true);
    INFO(entry.path().string() << (refusals.empty() ? "" : ": " + refusals.front()));
    CHECK(refusals.empty());
    ++count;
  }
  CHECK(count >= 35);
}

TEST_CASE("a replaced script is refused only against the user's servers", "[live][support]") {
  ScenarioError error;
  auto s = LoadScenarioFile(std::string(LOCKSTEP_SOURCE_DIR) +
                                "/scenarios/cluster-crossslot-user-script.toml",
                            &error);
  REQUIRE(s);
  REQUIRE_FALSE(s->protocol.script_files.empty());
  CHECK(LiveRefusals(*s, true).empty());
  const auto refusals = LiveRefusals(*s, false);
  CHECK(AnyContains(refusals, "[protocol.scripts] "));
  CHECK(AnyContains(refusals, "could touch keys outside the run's prefix"));
}

TEST_CASE("a Sentinel scenario is refused at a time scale whose fixed Sentinel delay outgrows it",
          "[live][support]") {
  const Scenario s = Load(R"(
name = "sentinel-scaled"
[[nodes]]
name = "n1"
[[nodes]]
name = "n2"
replica_of = "n1"
[[clients]]
count = 1
[sentinel]
enabled = true
down_after_ms = 5000
)");
  // 1.5 s of Sentinel's own at most half of down_after_ms: 3000 / 5000 = 0.6 is the smallest.
  const auto tenth = LiveRefusals(ScaleTimes(s, 0.1), true, 0.1);
  REQUIRE(tenth.size() == 1);
  CHECK(tenth[0].find("live.toml: [sentinel] down_after_ms = 5000 becomes 500 ms at "
                      "--time-scale 0.1") != std::string::npos);
  CHECK(tenth[0].find("15.0 s of this scenario's time") != std::string::npos);
  CHECK(tenth[0].find("the smallest time scale that keeps it within half is 0.60") !=
        std::string::npos);
  CHECK(LiveRefusals(ScaleTimes(s, 0.6), true, 0.6).empty());
  CHECK(LiveRefusals(s, true, 1).empty());
  // A down_after_ms that is short already: no scale below 1 works; unscaled is never refused.
  Scenario quick = s;
  quick.sentinel.down_after_us = 2'000'000;
  const auto half = LiveRefusals(ScaleTimes(quick, 0.9), true, 0.9);
  REQUIRE(half.size() == 1);
  CHECK(half[0].find("this scenario replays only unscaled (no --time-scale)") != std::string::npos);
  CHECK(LiveRefusals(quick, true, 1).empty());
}
