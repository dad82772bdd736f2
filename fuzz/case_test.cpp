// The fuzzer's parts on their own: the plan a base allows, the case drawn from (base, seed,
// index), the scenario a case materializes to, the shrinker's in-order search, the differential
// run against a reference and a run's moment in words. Whole searches are
// property-tests/fuzz_test.cpp's.
#include "fuzz/case.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "fuzz/coverage.h"
#include "fuzz/moment.h"
#include "fuzz/run.h"
#include "fuzz/shrink.h"
#include "model/scenario_toml.h"
#include "model/scenario_write.h"
#include "pipeline/pipeline.h"
#include "sim/simulation.h"

namespace lockstep::fuzz {
namespace {

// Two nodes (a master and its replica) and two clients of one thread.
constexpr std::string_view kBase = R"(
name = "fuzz-unit"
seed = 7
duration_ms = 20000
[[nodes]]
name = "master"
[[nodes]]
name = "replica"
replica_of = "master"
[[clients]]
count = 2
[protocol]
kind = "rlock"
version = "current"
[workload]
mode = "lock"
critical_ms = 100
think_ms = 100
[expect]
mutual_exclusion = "hold"
)";

Scenario Load(std::string_view toml) {
  ScenarioError error;
  std::optional<Scenario> s = LoadScenarioString(toml, "fuzz-unit.toml", &error);
  INFO(error.ToString());
  REQUIRE(s.has_value());
  return *s;
}

FuzzPlan PlanOf(const Scenario& base) {
  std::string error;
  std::optional<FuzzPlan> plan = MakePlan(base, &error);
  INFO(error);
  REQUIRE(plan.has_value());
  return *plan;
}

TEST_CASE("fuzz plan: every kind that applies, none that cannot", "[fuzz][unit]") {
  const FuzzPlan plan = PlanOf(Load(kBase));
  REQUIRE(plan.weights.size() == kFuzzFaultKinds.size());
  CHECK(plan.weights[kFailover] > 0);  // The master has a replica.
  CHECK(plan.weights[kPartition] > 0);
  CHECK(plan.weights[kClientPause] > 0);
  // A duplicated delivery is not something TCP does: only when the [fuzz] table names it.
  CHECK(plan.weights[kMessageDuplication] == 0);
  double total = 0;
  for (double w : plan.weights) total += w;
  CHECK(plan.total_weight == Approx(total));

  SECTION("no replica, no failover") {
    std::string toml(kBase);
    toml.replace(toml.find("replica_of = \"master\"\n"), 22, "");
    CHECK(PlanOf(Load(toml)).weights[kFailover] == 0);
  }
  SECTION("a [fuzz] table that asks for failover without a replica is refused") {
    std::string toml(kBase);
    toml.replace(toml.find("replica_of = \"master\"\n"), 22, "");
    toml += "[fuzz]\nfaults = { failover = 1 }\n";
    std::string error;
    CHECK_FALSE(MakePlan(Load(toml), &error).has_value());
    CHECK_THAT(error, Catch::Contains("failover"));
  }
}

TEST_CASE("fuzz case: a pure function of (base, seed, index)", "[fuzz][unit]") {
  const Scenario base = Load(kBase);
  const FuzzPlan plan = PlanOf(base);
  std::set<uint64_t> sim_seeds;
  int with_faults = 0;
  for (uint64_t index = 0; index < 50; ++index) {
    const FuzzCase a = DrawCase(base, plan, 11, index);
    CHECK(a == DrawCase(base, plan, 11, index));
    sim_seeds.insert(a.seed);
    if (!a.faults.empty()) ++with_faults;
    for (const FaultDraw& f : a.faults) {
      CHECK(plan.weights[f.kind] > 0);  // Only kinds the plan allows.
      CHECK(f.at_us >= 0);
      CHECK(f.at_us <= a.duration_us);
    }
  }
  CHECK(sim_seeds.size() == 50);  // Each case its own simulation seed.
  CHECK(with_faults > 25);
  // Another search seed draws other cases.
  CHECK_FALSE(DrawCase(base, plan, 12, 0) == DrawCase(base, plan, 11, 0));
}

TEST_CASE("fuzz case: a mutation stays within the base's [fuzz] table and changes the case",
          "[fuzz][unit]") {
  std::string toml(kBase);
  toml +=
      "[fuzz]\nfault_count = { min = 1, max = 3 }\nfault_duration_ms = { min = 10, max = 2000 }\n"
      "clock_jump_ms = { min = 5, max = 500 }\ndrift_ppm = { min = 100, max = 1000 }\n"
      "latency_spike_ms = { min = 10, max = 300 }\nloss_rate = { min = 0.2, max = 0.5 }\n"
      "clients = { min = 2, max = 4 }\nthreads = { min = 1, max = 2 }\n"
      "lease_ms = { min = 1000, max = 5000 }\ncritical_ms = { min = 10, max = 200 }\n"
      "versions = [\"v3.13.6\", \"current\"]\n";
  const Scenario base = Load(toml);
  const FuzzPlan plan = PlanOf(base);
  Prng rng(5);
  int changed = 0;
  std::set<int> kinds;
  FuzzCase parent = DrawCase(base, plan, 2, 0);
  constexpr int kMutations = 3000;
  for (int i = 0; i < kMutations; ++i) {
    const FuzzCase c = Mutate(base, plan, parent, rng);
    changed += c == parent ? 0 : 1;
    CHECK(c.duration_us == parent.duration_us);
    CHECK(c.faults.size() >= 1);
    CHECK(c.faults.size() <= 3);
    CHECK(c.clients >= 2);
    CHECK(c.clients <= 4);
    CHECK(c.threads >= 1);
    CHECK(c.threads <= 2);
    if (c.lease_us) CHECK((*c.lease_us >= 1'000'000 && *c.lease_us <= 5'000'000));
    for (const FaultDraw& f : c.faults) {
      kinds.insert(f.kind);
      CHECK(plan.weights[static_cast<size_t>(f.kind)] > 0);
      CHECK(f.at_us >= 0);
      CHECK(f.at_us < c.duration_us);
      if (f.duration_us > 0) CHECK((f.duration_us >= 10'000 && f.duration_us <= 2'000'000));
      if (f.kind == kClockJumpForward || f.kind == kClockJumpBackward) {
        CHECK((f.magnitude >= 5'000 && f.magnitude <= 500'000));
      }
      if (f.kind == kClockDrift) {
        CHECK((std::abs(f.magnitude) >= 100 && std::abs(f.magnitude) <= 1000));
      }
      if (f.kind == kLatencySpike) CHECK((f.magnitude >= 10'000 && f.magnitude <= 300'000));
      if (f.kind == kMessageLoss) CHECK((f.magnitude >= 200'000 && f.magnitude <= 500'000));
    }
    // Written out and read back, a mutated case is the same scenario, as a drawn one is.
    const Scenario s = Materialize(base, c);
    ScenarioError error;
    std::optional<Scenario> again =
        LoadScenarioString(ScenarioToToml(s, ScenarioWriteOptions{}), "mutated.toml", &error);
    INFO(error.ToString());
    REQUIRE(again.has_value());
    // Walk: the next mutation starts from this one, so that changes pile up as in a search.
    if (i % 4 == 3) parent = c;
  }
  CHECK(changed > kMutations * 95 / 100);
  CHECK(kinds.size() > 8);  // Faults of many kinds were added or replaced.
  // The same stream gives the same mutation.
  Prng a(9), b(9);
  CHECK(Mutate(base, plan, parent, a) == Mutate(base, plan, parent, b));
}

TEST_CASE("fuzz case: materialized, every fault names a process the scenario has", "[fuzz][unit]") {
  const Scenario base = Load(kBase);
  const FuzzPlan plan = PlanOf(base);
  for (uint64_t index = 0; index < 40; ++index) {
    const FuzzCase c = DrawCase(base, plan, 3, index);
    const Scenario s = Materialize(base, c);
    CHECK(s.seed == c.seed);
    CHECK(s.duration_us == c.duration_us);
    CHECK(s.expect == base.expect);
    // Each drawn fault is a fault in the file, but a drift (the target's clock, for the whole
    // run) and a clock jump by 0 (none).
    size_t in_file = 0;
    bool drifts = false;
    for (const FaultDraw& d : c.faults) {
      const bool jump = d.kind == kClockJumpForward || d.kind == kClockJumpBackward;
      if (d.kind == kClockDrift) {
        drifts = drifts || d.magnitude != 0;
      } else if (!jump || d.magnitude != 0) {
        ++in_file;
      }
    }
    CHECK(s.faults.size() == base.faults.size() + in_file);
    if (drifts) {
      auto drifting = [](const auto& process) { return process.clock.drift_ppm != 0; };
      CHECK((std::any_of(s.nodes.begin(), s.nodes.end(), drifting) ||
             std::any_of(s.clients.begin(), s.clients.end(), drifting)));
    }
    std::set<std::string> processes;
    for (const NodeSpec& n : s.nodes) processes.insert(n.name);
    for (const ClientSpec& c : s.clients) processes.insert(c.name);
    for (const FaultSpec& f : s.faults) {
      for (const std::string& target : f.targets) {
        INFO("case " << index << " fault target " << target);
        CHECK(processes.count(target) == 1);
      }
    }
    CHECK(SizeOf(c).faults == static_cast<int>(c.faults.size()));
  }
  SECTION("the base case adds nothing") {
    const FuzzCase c = BaseCase(base);
    CHECK(c.faults.empty());
    const Scenario s = Materialize(base, c);
    CHECK(s.faults.size() == base.faults.size());
    CHECK(s.clients.size() == base.clients.size());
  }
}

// FirstGood is the shrinker's promise that its result does not depend on --jobs: the first
// good candidate in index order wins, however many run at once.
TEST_CASE("shrink: the first good candidate in order, whatever the jobs", "[fuzz][unit]") {
  const std::vector<int> good_ones = {7, 9, 23};
  auto run = [&](int i) {
    CaseOutcome o;
    o.status =
        std::count(good_ones.begin(), good_ones.end(), i) ? CaseStatus::kFail : CaseStatus::kPass;
    o.events = static_cast<uint64_t>(i);
    return o;
  };
  auto good = [](const CaseOutcome& o) { return o.status == CaseStatus::kFail; };
  for (int jobs : {1, 2, 3, 8}) {
    CaseOutcome found;
    INFO("jobs " << jobs);
    CHECK(FirstGood(30, jobs, run, good, &found) == 7);
    CHECK(found.events == 7);
  }
  CaseOutcome none;
  CHECK(FirstGood(7, 4, run, good, &none) == -1);
  CHECK(FirstGood(0, 2, run, good, &none) == -1);
}

}  // namespace
}  // namespace lockstep::fuzz

namespace lockstep::fuzz {
namespace {

// rlock-lease-zero's broken renew: the watchdog says it renewed without PEXPIRE, so the 40 s
// critical section outlives the 30 s lease even when nothing goes wrong.
TEST_CASE("differential: a case fails only where the reference keeps the property",
          "[fuzz][unit][reference]") {
  ScenarioError error;
  std::optional<Scenario> loaded = LoadScenarioFile(
      LOCKSTEP_SOURCE_DIR "/scenarios/testdata/broken-scripts/rlock-lease-zero/broken.toml",
      &error);
  INFO(error.ToString());
  REQUIRE(loaded.has_value());
  Scenario base = *loaded;
  base.expect = {{"mutual_exclusion", Expectation::kHold}};
  Scenario stock = base;
  stock.protocol.script_files.clear();
  const FuzzCase c = BaseCase(base);
  const std::vector<std::string> watch = {"mutual_exclusion"};
  const std::string lua_dir = LOCKSTEP_SOURCE_DIR "/lua";
  const CaseLimits limits;

  const CaseOutcome alone = RunDrawnCase(base, nullptr, c, watch, lua_dir, limits);
  CHECK(alone.status == CaseStatus::kFail);
  CHECK(alone.shared.empty());

  // The stock renew keeps the lease: the break is the script's.
  const CaseOutcome against_stock = RunDrawnCase(base, &stock, c, watch, lua_dir, limits);
  CHECK(against_stock.status == CaseStatus::kFail);
  CHECK(against_stock.broken == watch);
  CHECK(against_stock.first_explanation == alone.first_explanation);
  CHECK(against_stock.shared.empty());

  // Against itself every break is shared, and a shared break is no failure.
  const CaseOutcome against_itself = RunDrawnCase(base, &base, c, watch, lua_dir, limits);
  CHECK(against_itself.status == CaseStatus::kPass);
  CHECK(against_itself.broken.empty());
  CHECK(against_itself.shared == watch);

  // The reference keeps its own scripts and version, whatever the case drew.
  FuzzCase other = c;
  other.version = "v3.13.6";
  const Scenario twin = MaterializeReference(stock, other);
  CHECK(twin.protocol.script_files.empty());
  CHECK(twin.protocol.version == stock.protocol.version);
  CHECK(Materialize(base, other).protocol.version != stock.protocol.version);
}

}  // namespace
}  // namespace lockstep::fuzz

namespace lockstep::fuzz {
namespace {

// The stock twin of rlock-lease-zero: the watchdog keeps c1's lease for its 40 s critical
// section, and c2 waits the whole time.
TEST_CASE("a run's moment: who held the lock then, and what was in flight", "[fuzz][unit]") {
  ScenarioError load_error;
  std::optional<Scenario> loaded = LoadScenarioFile(
      LOCKSTEP_SOURCE_DIR "/scenarios/testdata/broken-scripts/rlock-lease-zero/broken.toml",
      &load_error);
  REQUIRE(loaded.has_value());
  Scenario s = *loaded;
  s.protocol.script_files.clear();
  const std::string path =
      (std::filesystem::temp_directory_path() / "lockstep-moment-test.jsonl").string();
  std::string error;
  std::unique_ptr<sim::Simulation> sim = sim::Simulation::Create(s, LOCKSTEP_SOURCE_DIR "/lua", &error);
  REQUIRE(sim != nullptr);
  PipelineOptions options;
  options.history_path = path;
  options.readers_thread = false;
  REQUIRE(RunPipeline(*sim, s, options, &error).has_value());

  const std::optional<std::string> at = DescribeMoment(path, 30'102'000, &error);
  INFO(error);
  REQUIRE(at.has_value());
  CHECK(*at ==
        "at 30.102 s: c1.t0 held \"lock\" since 0.101 s; in flight: c2.t0's acquire since "
        "0.100 s");
  std::filesystem::remove(path);
  CHECK_FALSE(DescribeMoment(path, 0, &error).has_value());
}

}  // namespace
}  // namespace lockstep::fuzz

namespace lockstep::fuzz {
namespace {

// The coverage of a whole run through the pipeline, as a case's is taken.
Coverage CoverageOf(const Scenario& s) {
  std::string error;
  std::unique_ptr<sim::Simulation> sim =
      sim::Simulation::Create(s, LOCKSTEP_SOURCE_DIR "/lua", &error);
  INFO(error);
  REQUIRE(sim);
  Coverage coverage(/*keep_states=*/true);
  PipelineOptions options;
  options.history = history::HistoryFormat::kNone;
  options.readers_thread = false;
  options.facts_observers = {&coverage};
  REQUIRE(RunPipeline(*sim, s, options, &error).has_value());
  return coverage;
}

TEST_CASE("coverage: a run's abstract states and transitions, each once",
          "[fuzz][unit][coverage]") {
  // c1 takes a 2 s lease and is paused for 5 s inside its 1 s critical section: its key
  // expires under it (a stale believer), and c2 takes the lock while c1 still believes.
  constexpr std::string_view kPaused = R"(
name = "coverage-stale"
seed = 3
duration_ms = 9000
[[nodes]]
name = "n1"
[[clients]]
count = 2
[protocol]
kind = "rlock"
version = "current"
[workload]
mode = "lock"
lease_ms = 2000
critical_ms = 1000
think_ms = 100
stagger_ms = 300
[[faults]]
kind = "pause"
targets = ["c1"]
at_ms = 500
duration_ms = 5000
)";
  const Scenario paused = Load(kPaused);
  const Coverage a = CoverageOf(paused);
  const std::vector<std::string>& states = a.StatesText();
  auto reached = [&](const std::string& what) {
    return std::any_of(states.begin(), states.end(),
                       [&](const std::string& s) { return s.find(what) != std::string::npos; });
  };
  INFO([&] {
    std::string all;
    for (const std::string& s : states) all += s + "\n";
    return all;
  }());
  CHECK(reached("holding=1 | node0 owners=1 stale=0 unbelieved=0"));
  CHECK(reached("owners=0 stale=1"));  // The key expired under c1.
  CHECK(reached("holding=2 | node0 owners=1 stale=1 unbelieved=0"));  // c2 took it.
  CHECK(reached("| fault pause"));
  // Each transition once, sorted; the same run gives the same coverage.
  const std::vector<uint64_t> t = a.Transitions();
  CHECK(std::is_sorted(t.begin(), t.end()));
  CHECK(std::adjacent_find(t.begin(), t.end()) == t.end());
  CHECK(t.size() >= states.size() - 1);
  CHECK(CoverageOf(paused).Transitions() == t);

  // Without the pause no holder outlives its key.
  Scenario quiet = paused;
  quiet.faults.clear();
  const Coverage b = CoverageOf(quiet);
  for (const std::string& s : b.StatesText()) CHECK(s.find("stale=1") == std::string::npos);
  CHECK(b.Transitions() != t);
}

}  // namespace
}  // namespace lockstep::fuzz
