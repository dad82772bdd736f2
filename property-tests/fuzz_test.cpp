// Establishes that `lockstep fuzz` keeps its promises:
//  - every case it draws is a scenario the loader accepts (written out and read back equal);
//  - a case depends on (base, seed, index) alone;
//  - for every broken user script in scenarios/testdata/broken-scripts/, a search from a base
//    without the scenario's hand-made trouble (its links and faults) finds the property the
//    script breaks within a stated budget, and the shrunk file is small and reproduces;
//  - on a base that is safe for its stock protocol (property-tests/fuzz-bases/), a search of a
//    fixed budget reports nothing: no false alarms.
// rapidcheck's seed is pinned in CTest (CMakeLists.txt), so every run tests the same cases.
#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <filesystem>
#include <fstream>

#include "fuzz/case.h"
#include "fuzz/run.h"
#include "fuzz/search.h"
#include "fuzz/shrink.h"
#include "model/scenario_toml.h"
#include "model/scenario_write.h"

namespace fs = std::filesystem;

namespace lockstep::fuzz {
namespace {

const std::string kSource = LOCKSTEP_SOURCE_DIR;
const std::string kLuaDir = kSource + "/lua";

Scenario Load(const std::string& path) {
  ScenarioError error;
  std::optional<Scenario> s = LoadScenarioFile(path, &error);
  INFO(error.ToString());
  REQUIRE(s.has_value());
  return *s;
}

// A broken-script scenario as a fuzz base: no hand-made trouble (its slow links and faults
// gone), and what it shows to be violated expected to hold instead.
Scenario FuzzBaseOf(const std::string& broken_toml, std::vector<std::string>* broken) {
  Scenario s = Load(broken_toml);
  s.faults.clear();
  s.network.link_latency_us.clear();
  for (auto& [property, want] : s.expect) {
    if (want == Expectation::kViolated) {
      broken->push_back(property);
      want = Expectation::kHold;
    }
  }
  return s;
}

// Equal but for where the text came from.
void Normalize(Scenario* s) {
  s->file.clear();
  for (FaultSpec& f : s->faults) f.line = 0;
}

std::vector<std::string> BrokenScriptScenarios() {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(kSource + "/scenarios/testdata/broken-scripts")) {
    const fs::path toml = entry.path() / "broken.toml";
    if (entry.is_directory() && fs::exists(toml)) out.push_back(toml.string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("every drawn case is a valid scenario that survives the file round trip", "[fuzz]") {
  const std::vector<std::string> bases = {
      kSource + "/scenarios/contention-10.toml",
      kSource + "/scenarios/failover-unreplicated.toml",
      kSource + "/scenarios/redlock-five-safe.toml",
      kSource + "/scenarios/latch-countdown.toml",
      kSource + "/scenarios/rwlock-readers-writer.toml",
  };
  for (const std::string& path : bases) {
    Scenario base = Load(path);
    // Everything the [fuzz] table can vary, varied.
    base.fuzz.fault_count = {0, 8};
    base.fuzz.clients = FuzzRange{1, 6};
    base.fuzz.threads = FuzzRange{1, 3};
    base.fuzz.lease_us = FuzzRange{1000, 5'000'000};
    base.fuzz.wait_us = FuzzRange{0, 5'000'000};
    base.fuzz.critical_us = FuzzRange{0, 200'000};
    base.fuzz.think_us = FuzzRange{0, 200'000};
    base.fuzz.replication_lag_us = FuzzRange{0, 50'000};
    std::string error;
    const std::optional<FuzzPlan> plan = MakePlan(base, &error);
    INFO(path << ": " << error);
    REQUIRE(plan.has_value());
    rc::prop("case " + path, [&](uint64_t seed, uint32_t index) {
      const FuzzCase c = DrawCase(base, *plan, seed, index);
      RC_ASSERT(c == DrawCase(base, *plan, seed, index));  // (base, seed, index) alone.
      Scenario s = Materialize(base, c);
      const std::string text = ScenarioToToml(s, {});
      ScenarioError load_error;
      std::optional<Scenario> back = LoadScenarioString(text, "case.toml", &load_error);
      if (!back) RC_FAIL(load_error.ToString() + "\n" + text);
      Normalize(&s);
      Normalize(&*back);
      if (!(*back == s)) {
        std::string where;
        if (!(back->clients == s.clients)) where += " clients";
        if (!(back->nodes == s.nodes)) where += " nodes";
        if (!(back->workload == s.workload)) where += " workload";
        if (!(back->network == s.network)) where += " network";
        if (!(back->replication == s.replication)) where += " replication";
        if (!(back->protocol == s.protocol)) where += " protocol";
        if (!(back->gc == s.gc)) where += " gc";
        if (!(back->fuzz == s.fuzz)) where += " fuzz";
        if (!(back->faults == s.faults)) where += " faults";
        RC_FAIL("read back differs in" + where + ":\n" + text);
      }
    });
  }
}

TEST_CASE("a search finds each broken script's violation and shrinks it to a small file",
          "[fuzz]") {
  // The budget: cases searched and shrink candidates run per kind; the bound on the result.
  constexpr uint64_t kCases = 400;
  constexpr int kShrinkTries = 400;
  constexpr int kMaxFaults = 2;
  constexpr int kMaxClients = 4;
  const fs::path out = fs::temp_directory_path() / "lockstep-fuzz-test";
  fs::create_directories(out);
#ifdef LOCKSTEP_SANITIZED
  // Under the sanitizers (about memory safety there: every kind runs the same search and shrink
  // code) every third fixture; the plain build runs them all.
  constexpr size_t kStride = 3;
#else
  constexpr size_t kStride = 1;
#endif
  const std::vector<std::string> fixtures = BrokenScriptScenarios();
  for (size_t f = 0; f < fixtures.size(); f += kStride) {
    const std::string& path = fixtures[f];
    DYNAMIC_SECTION(path) {
      std::vector<std::string> broken;
      const Scenario base = FuzzBaseOf(path, &broken);
      REQUIRE(!broken.empty());
      std::string error;
      const std::optional<FuzzPlan> plan = MakePlan(base, &error);
      REQUIRE(plan.has_value());
      SearchOptions options;
      options.fuzz_seed = 1;
      options.cases = kCases;
      options.jobs = 2;
      options.lua_dir = kLuaDir;
      const std::vector<std::string> watch = HoldProperties(base);
      const SearchResult found = Search(base, *plan, watch, options, nullptr);
      REQUIRE(found.failures.size() == 1);
      const Failure& failure = found.failures.front();
      INFO("case " << failure.index << " broke " << failure.property);
      CHECK(std::find(broken.begin(), broken.end(), failure.property) != broken.end());

      ShrinkOptions shrink;
      shrink.jobs = 2;
      shrink.lua_dir = kLuaDir;
      shrink.max_tries = kShrinkTries;
      const ShrinkResult shrunk =
          Shrink(base, failure.c, failure.outcome, failure.property, watch, shrink);
      Scenario result = Materialize(base, shrunk.shrunk);
      result.expect = {{failure.property, Expectation::kViolated}};
      const Scenario original = Materialize(base, failure.c);
      CHECK(static_cast<int>(result.faults.size()) <= kMaxFaults);
      CHECK(static_cast<int>(result.clients.size()) <= kMaxClients);
      CHECK(result.faults.size() <= original.faults.size());
      CHECK(result.clients.size() <= original.clients.size());
      CHECK(result.duration_us <= original.duration_us);

      // Written, read back and run as `lockstep run` would: the violation is still there.
      const fs::path dir = out / fs::path(path).parent_path().filename();
      fs::create_directories(dir);
      ScenarioWriteOptions write;
      write.directory = dir.string();
      const fs::path file = dir / "shrunk.toml";
      std::ofstream(file) << ScenarioToToml(result, write);
      const Scenario reloaded = Load(file.string());
      const CaseOutcome again = RunCase(reloaded, {failure.property}, kLuaDir, CaseLimits{});
      CHECK(again.status == CaseStatus::kFail);
    }
  }
}

TEST_CASE("on a base that is safe for its stock protocol a search finds nothing", "[fuzz]") {
#ifdef LOCKSTEP_SANITIZED
  // Under the sanitizers every case is about 50 times slower; there the test is about memory
  // safety, which a few cases per kind cover (the plain build runs the full budget).
  constexpr uint64_t kCases = 8;
#else
  constexpr uint64_t kCases = 150;
#endif
  const fs::path dir = kSource + "/property-tests/fuzz-bases";
  std::vector<std::string> bases;
  if (fs::exists(dir)) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".toml") bases.push_back(entry.path().string());
    }
  }
  std::sort(bases.begin(), bases.end());
  REQUIRE(!bases.empty());
  for (const std::string& path : bases) {
    DYNAMIC_SECTION(path) {
      const Scenario base = Load(path);
      std::string error;
      const std::optional<FuzzPlan> plan = MakePlan(base, &error);
      INFO(error);
      REQUIRE(plan.has_value());
      SearchOptions options;
      options.fuzz_seed = 1;
      options.cases = kCases;
      options.jobs = 2;
      options.lua_dir = kLuaDir;
      const SearchResult found = Search(base, *plan, HoldProperties(base), options, nullptr);
      for (const Failure& f : found.failures) {
        FAIL_CHECK("case " << f.index << " broke " << f.property << ": "
                            << f.outcome.first_explanation.front());
      }
      CHECK(found.status.cases_done == kCases);
      CHECK(found.status.over_limit == 0);
      CHECK(found.errors.empty());
    }
  }
}

TEST_CASE("a guided search is the same whatever the jobs: its cases, coverage, corpus and "
          "failures", "[fuzz]") {
#ifdef LOCKSTEP_SANITIZED
  constexpr uint64_t kCases = 60;  // Past kGuideLag, so that some cases are mutations.
#else
  constexpr uint64_t kCases = 300;
#endif
  const Scenario base = Load(kSource + "/property-tests/fuzz-bases/rlock.toml");
  std::string error;
  const std::optional<FuzzPlan> plan = MakePlan(base, &error);
  REQUIRE(plan.has_value());
  std::vector<SearchResult> runs;
  for (int jobs : {1, 2, 3}) {
    SearchOptions options;
    options.strategy = Strategy::kGuided;
    options.fuzz_seed = 4;
    options.cases = kCases;
    options.keep_going = true;
    options.jobs = jobs;
    options.lua_dir = kLuaDir;
    runs.push_back(Search(base, *plan, HoldProperties(base), options, nullptr));
  }
  const SearchResult& one = runs.front();
  CHECK(one.status.cases_done == kCases);
  CHECK(one.status.corpus > 0);  // Cases were kept to mutate ...
  CHECK(one.status.corpus < kCases);  // ... not every one.
  for (size_t i = 1; i < runs.size(); ++i) {
    INFO("jobs " << i + 1);
    CHECK(runs[i].status.cases_done == one.status.cases_done);
    CHECK(runs[i].coverage == one.coverage);
    CHECK(runs[i].status.corpus == one.status.corpus);
    CHECK(runs[i].status.coverage_grew_at == one.status.coverage_grew_at);
    REQUIRE(runs[i].failures.size() == one.failures.size());
    for (size_t f = 0; f < one.failures.size(); ++f) {
      CHECK(runs[i].failures[f].index == one.failures[f].index);
      CHECK(runs[i].failures[f].c == one.failures[f].c);
    }
  }
  // A random search keeps nothing to mutate, and so reaches other ground.
  SearchOptions random;
  random.strategy = Strategy::kRandom;
  random.fuzz_seed = 4;
  random.cases = kCases;
  random.keep_going = true;
  random.jobs = 2;
  random.lua_dir = kLuaDir;
  const SearchResult r = Search(base, *plan, HoldProperties(base), random, nullptr);
  CHECK(r.status.corpus == 0);
  CHECK(r.coverage != one.coverage);
}

TEST_CASE("the default fault mix is what can happen over TCP: a duplicated delivery only when "
          "[fuzz] names it", "[fuzz]") {
  const auto duplication = static_cast<size_t>(kMessageDuplication);
  REQUIRE(kFuzzFaultKinds[duplication] == "duplicate_delivery_not_tcp");
  Scenario base = Load(LOCKSTEP_SOURCE_DIR "/scenarios/contention-10.toml");
  REQUIRE(base.fuzz.faults.empty());
  std::string error;
  std::optional<FuzzPlan> plan = MakePlan(base, &error);
  REQUIRE(plan);
  CHECK(plan->weights[duplication] == 0);
  CHECK(plan->weights[static_cast<size_t>(kNodePause)] == 1);
  base.fuzz.faults = {{"duplicate_delivery_not_tcp", 1}, {"node_pause", 1}};
  plan = MakePlan(base, &error);
  REQUIRE(plan);
  CHECK(plan->weights[duplication] == 1);
}

}  // namespace
}  // namespace lockstep::fuzz
