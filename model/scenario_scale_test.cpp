// Establishes what ScaleTimes multiplies and what it keeps: durations scale, rates, counts and
// dates do not, the values Redisson passes on stay whole positive milliseconds, and "none"
// (a lease of -1) keeps its meaning.
#include "model/scenario_scale.h"

#include <catch2/catch.hpp>
#include <filesystem>

#include "model/scenario_toml.h"

using lockstep::Distribution;
using lockstep::FaultSpec;
using lockstep::LoadScenarioFile;
using lockstep::LoadScenarioString;
using lockstep::Scenario;
using lockstep::ScenarioError;
using lockstep::ScaleTimes;

namespace {

Scenario Load(const std::string& text) {
  ScenarioError error;
  auto s = LoadScenarioString(text, "scale-test.toml", &error);
  INFO(error.ToString());
  REQUIRE(s);
  return *s;
}

const char* kScenario = R"(
name = "scale"
seed = 3
duration_ms = 60000
[[nodes]]
name = "n1"
clock = { offset_ms = 200, drift_ppm = 50, jumps = [ { at_ms = 10000, by_ms = -4000 } ] }
[[nodes]]
name = "n2"
replica_of = "n1"
[[clients]]
count = 2
threads = 3
[[clients]]
name = "slow"
lease_ms = 700
think_ms = { dist = "uniform", min = 100, max = 300 }
[network]
latency_ms = { dist = "exponential", mean = 2, cap = 40 }
loss = 0.01
[replication]
lag_ms = 5
[sentinel]
enabled = true
down_after_ms = 5000
[protocol]
watchdog_timeout_ms = 30000
timeout_ms = 3000
retry_interval_ms = 1500
[workload]
mode = "trylock"
wait_ms = 20000
critical_ms = 1000
think_ms = { dist = "pareto", scale = 300, shape = 1.1, cap = 15000 }
[[faults]]
kind = "pause"
at_ms = 12000
duration_ms = 13000
targets = ["n1"]
[[faults]]
kind = "latency"
at_ms = 30000
duration_ms = 2000
extra_ms = 250
targets = ["c1"]
[gc]
enabled = true
every_ms = 4000
pause_ms = 100
[checks]
liveness_bound_ms = 8000
)";

}  // namespace

TEST_CASE("ScaleTimes multiplies every duration and keeps rates, counts and dates",
          "[model][scale]") {
  const Scenario s = Load(kScenario);
  const Scenario t = ScaleTimes(s, 0.1);

  CHECK(t.duration_us == 6'000'000);
  CHECK(t.seed == s.seed);
  CHECK(t.start_unix_ms == s.start_unix_ms);
  REQUIRE(t.nodes.size() == 2);
  CHECK(t.nodes[0].clock.offset_us == 20'000);
  CHECK(t.nodes[0].clock.drift_ppm == s.nodes[0].clock.drift_ppm);
  REQUIRE(t.nodes[0].clock.jumps.size() == 1);
  CHECK(t.nodes[0].clock.jumps[0].at_us == 1'000'000);
  CHECK(t.nodes[0].clock.jumps[0].by_us == -400'000);
  CHECK(t.nodes[1].replica_of == "n1");

  REQUIRE(t.clients.size() == s.clients.size());
  for (size_t i = 0; i < t.clients.size(); ++i) CHECK(t.clients[i].threads == s.clients[i].threads);
  const auto& slow = t.clients.back().workload;
  REQUIRE(slow.lease_us);
  CHECK(*slow.lease_us == 70'000);
  REQUIRE(slow.think_us);
  CHECK(slow.think_us->kind == Distribution::Kind::kUniform);
  CHECK(slow.think_us->a == Approx(10'000));
  CHECK(slow.think_us->b == Approx(30'000));

  CHECK(t.network.latency_us.a == Approx(200));
  CHECK(t.network.latency_us.cap == Approx(4'000));
  CHECK(t.network.loss == s.network.loss);
  CHECK(t.replication.lag_us.a == Approx(500));
  CHECK(t.sentinel.down_after_us == 500'000);

  CHECK(t.protocol.watchdog_timeout_us == 3'000'000);
  CHECK(t.protocol.timeout_us == 300'000);
  CHECK(t.protocol.retry_interval_us == 150'000);
  CHECK(t.protocol.retry_attempts == s.protocol.retry_attempts);

  CHECK(t.workload.wait_us == 2'000'000);
  CHECK(t.workload.lease_us == -1);  // No lease given stays no lease given.
  CHECK(t.workload.critical_us.a == Approx(100'000));
  CHECK(t.workload.think_us.kind == Distribution::Kind::kPareto);
  CHECK(t.workload.think_us.a == Approx(30'000));
  CHECK(t.workload.think_us.b == s.workload.think_us.b);  // The shape.
  CHECK(t.workload.think_us.cap == Approx(1'500'000));

  REQUIRE(t.faults.size() == 2);
  CHECK(t.faults[0].kind == FaultSpec::Kind::kPause);
  CHECK(t.faults[0].at_us == 1'200'000);
  CHECK(t.faults[0].duration_us == 1'300'000);
  CHECK(t.faults[1].extra_us == 25'000);
  CHECK(t.faults[1].targets == s.faults[1].targets);

  CHECK(t.gc.every_us.a == Approx(400'000));
  CHECK(t.gc.pause_us.a == Approx(10'000));
  CHECK(t.liveness_bound_us == 800'000);
  CHECK(t.expect == s.expect);
}

TEST_CASE("ScaleTimes by 1 changes nothing, Redisson's values stay whole positive milliseconds",
          "[model][scale]") {
  const Scenario s = Load(kScenario);
  CHECK(ScaleTimes(s, 1) == s);

  const Scenario tiny = ScaleTimes(s, 0.0001);
  CHECK(tiny.protocol.timeout_us == 1'000);  // 0.3 ms would be 0: "no timeout" to the API.
  CHECK(tiny.protocol.watchdog_timeout_us == 3'000);
  CHECK(tiny.workload.wait_us == 2'000);
  CHECK(*tiny.clients.back().workload.lease_us == 1'000);
  CHECK(tiny.protocol.watchdog_timeout_us % 1000 == 0);
}

TEST_CASE("Every library scenario scales down and back up to itself where times are whole",
          "[model][scale]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(LOCKSTEP_SOURCE_DIR) / "scenarios";
  int scenarios = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".toml") continue;
    ScenarioError error;
    auto s = LoadScenarioFile(entry.path().string(), &error);
    INFO(entry.path().string() << ": " << error.ToString());
    REQUIRE(s);
    const Scenario down = ScaleTimes(*s, 0.5);
    CHECK(down.duration_us * 2 == s->duration_us);
    CHECK(down.faults.size() == s->faults.size());
    const Scenario back = ScaleTimes(down, 2);
    // Whole milliseconds halve and double back exactly when even; every library duration is.
    CHECK(back.duration_us == s->duration_us);
    CHECK(back.protocol == s->protocol);
    for (size_t i = 0; i < back.faults.size(); ++i) {
      CHECK(back.faults[i].at_us == s->faults[i].at_us);
      CHECK(back.faults[i].duration_us == s->faults[i].duration_us);
    }
    ++scenarios;
  }
  CHECK(scenarios >= 35);
}
