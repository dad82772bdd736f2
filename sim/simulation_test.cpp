// Establishes that the simulator is deterministic (one seed, one history, byte for byte) and
// that its basic mechanics do what the scenario says: clients acquire and release through the
// real lock scripts on emulated nodes, the watchdog renews, faults appear in the history.
#include <catch2/catch.hpp>

#include <map>

#include "model/history.h"
#include "model/scenario.h"
#include "sim/simulation.h"

namespace {

using lockstep::Event;
using lockstep::History;
using lockstep::Scenario;

Scenario Basic(uint64_t seed) {
  Scenario s;
  s.name = "basic";
  s.seed = seed;
  s.duration_us = 30'000'000;
  lockstep::NodeSpec n;
  n.name = "n1";
  s.nodes.push_back(n);
  for (int i = 1; i <= 3; ++i) {
    lockstep::ClientSpec c;
    c.name = "c" + std::to_string(i);
    c.threads = 2;
    s.clients.push_back(c);
  }
  s.network.latency_us = {lockstep::sim::Distribution::Kind::kUniform, 200, 1500, 0};
  s.workload.critical_us = lockstep::sim::Distribution::Fixed(20'000);
  s.workload.think_us = {lockstep::sim::Distribution::Kind::kExponential, 50'000, 0, 0};
  return s;
}

std::unique_ptr<lockstep::sim::Simulation> RunOf(const Scenario& s) {
  std::string error;
  auto sim = lockstep::sim::Simulation::Create(s, LOCKSTEP_SOURCE_DIR "/lua", &error);
  INFO(error);
  REQUIRE(sim != nullptr);
  sim->Run();
  return sim;
}

std::map<std::string, int> Count(const History& h) {
  std::map<std::string, int> counts;
  for (const Event& e : h.events()) counts[std::string(lockstep::TypeName(e.type)) + ":" + e.op]++;
  return counts;
}

}  // namespace

TEST_CASE("the same seed gives a byte-identical history", "[sim][determinism]") {
  auto a = RunOf(Basic(42));
  auto b = RunOf(Basic(42));
  REQUIRE(a->history().size() == b->history().size());
  CHECK(a->history().HashHex() == b->history().HashHex());
  for (size_t i = 0; i < a->history().size(); ++i) {
    REQUIRE(lockstep::ToJsonLine(a->history().events()[i]) ==
            lockstep::ToJsonLine(b->history().events()[i]));
  }
  auto c = RunOf(Basic(43));
  CHECK(c->history().HashHex() != a->history().HashHex());
}

TEST_CASE("clients acquire and release through the lock scripts", "[sim]") {
  auto sim = RunOf(Basic(1));
  const auto counts = Count(sim->history());
  CHECK(counts.at("ok:acquire") > 100);
  CHECK(counts.at("ok:release") > 100);
  CHECK(counts.at("exec:acquire") >= counts.at("ok:acquire"));
  CHECK(counts.at("resource:enter") == counts.at("ok:acquire"));
  CHECK(counts.count("lease:acquired") == 1);
  CHECK(sim->events_run() > 1000);
}

TEST_CASE("the watchdog renews a lock held longer than its timeout", "[sim][watchdog]") {
  Scenario s = Basic(3);
  s.clients.resize(1);
  s.clients[0].threads = 1;
  s.workload.critical_us = lockstep::sim::Distribution::Fixed(45'000'000);
  s.duration_us = 50'000'000;
  auto sim = RunOf(s);
  const auto counts = Count(sim->history());
  CHECK(counts.count("exec:renew") == 1);
  CHECK(counts.at("exec:renew") == 4);  // At 10, 20, 30 and 40 s.
  CHECK(counts.count("lease:expired") == 0);
}

TEST_CASE("a history survives a round trip through its file", "[sim][history]") {
  auto sim = RunOf(Basic(5));
  const std::string path = "/tmp/lockstep-sim-test-history.jsonl";
  std::string error;
  REQUIRE(sim->history().WriteFile(path, &error));
  auto back = History::ReadFile(path, &error);
  INFO(error);
  REQUIRE(back.has_value());
  CHECK(back->HashHex() == sim->history().HashHex());
  CHECK(back->size() == sim->history().size());
  std::remove(path.c_str());
}
