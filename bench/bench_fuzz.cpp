// Benchmark: how fast `lockstep fuzz` searches and shrinks.
//
//   1. Cases per second on bench/fuzz-5-clients.toml (5 clients, 60 simulated seconds, the
//      default fault mix), with 1 job and with 2, every case run (keep-going mode, so a failure
//      does not end the search); the reference is the base itself, run once the same way
//      without faults: a case's cost over the plain run's. And the ceiling: the base's script
//      executions alone on the emulator (bench/script_floor.h), which no simulator can beat.
//   2. For every broken script in scenarios/testdata/broken-scripts/, from a base without its
//      hand-made trouble: the search to the first failure and the shrink, in wall time, with
//      the case's size before and after.
// It asserts nothing about time.
//
//   ./build/bench_fuzz [--cases 400] [--jobs-max 2] [--skip-shrink]
#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/script_floor.h"
#include "fuzz/case.h"
#include "fuzz/run.h"
#include "fuzz/search.h"
#include "fuzz/shrink.h"
#include "model/scenario_toml.h"
#include "sim/simulation.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace lockstep;

namespace {

const std::string kSource = LOCKSTEP_SOURCE_DIR;

Scenario Load(const std::string& path) {
  ScenarioError error;
  std::optional<Scenario> s = LoadScenarioFile(path, &error);
  if (!s) throw std::runtime_error(error.ToString());
  return *s;
}

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t cases = 400;
  int jobs_max = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  bool skip_shrink = false;
  po::options_description desc("bench_fuzz: cases per second and shrink times of lockstep fuzz");
  desc.add_options()("help,h", "show this help")("cases", po::value(&cases)->default_value(cases),
                                                   "cases per search")(
      "jobs-max", po::value(&jobs_max)->default_value(jobs_max), "measure 1 .. this many jobs")(
      "skip-shrink", po::bool_switch(&skip_shrink), "only the cases per second");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "bench_fuzz: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  const std::string lua_dir = kSource + "/lua";
  std::printf("machine: %u hardware threads\n\n", std::thread::hardware_concurrency());

  // 1. Cases per second.
  const Scenario base = Load(kSource + "/bench/fuzz-5-clients.toml");
  std::string error;
  const std::optional<fuzz::FuzzPlan> plan = fuzz::MakePlan(base, &error);
  if (!plan) {
    std::cerr << error << "\n";
    return 2;
  }
  const std::vector<std::string> watch = fuzz::HoldProperties(base);
  // The reference: the base as it is, no faults, one run.
  double plain_s = 1e9;
  for (int i = 0; i < 3; ++i) {
    const fuzz::CaseOutcome o = fuzz::RunCase(base, watch, lua_dir, fuzz::CaseLimits{});
    plain_s = std::min(plain_s, o.wall_s);
  }
  std::printf("base %s: %.1f simulated s, %zu clients; the plain run alone takes %.1f ms\n",
              base.name.c_str(), static_cast<double>(base.duration_us) / 1e6, base.clients.size(),
              plain_s * 1e3);
  // The ceiling: the base's script executions alone on the emulator (bench/script_floor.h), the
  // least a case of this size can cost however cheap the simulator around them becomes.
  {
    std::unique_ptr<sim::Simulation> sim = sim::Simulation::Create(base, lua_dir, &error);
    if (!sim) {
      std::cerr << error << "\n";
      return 2;
    }
    bench::ScriptCount count;
    count.Name(sim->recorder().names());
    sim->recorder().AddSink(&count);
    sim->Run();
    double floor_s = 1e9;
    for (int i = 0; i < 3; ++i) {
      floor_s = std::min(floor_s, bench::Floor(lua_dir, std::string(history::VersionName(base.protocol.version)), count.scripts()));
    }
    std::printf(
        "  its %llu script executions alone on the emulator take %.1f ms: at most %.0f cases/s "
        "per job even if the simulator around them cost nothing (the plain run is %.2fx that)\n",
        static_cast<unsigned long long>(count.scripts()), floor_s * 1e3, 1 / floor_s,
        plain_s / floor_s);
  }
  double one_job_rate = 0;
  for (int jobs = 1; jobs <= jobs_max; ++jobs) {
    fuzz::SearchOptions options;
    options.fuzz_seed = 1;
    options.cases = cases;
    options.keep_going = true;
    options.jobs = jobs;
    options.lua_dir = lua_dir;
    const auto start = std::chrono::steady_clock::now();
    const fuzz::SearchResult r = fuzz::Search(base, *plan, watch, options, nullptr);
    const double wall = Since(start);
    const double rate = static_cast<double>(r.status.cases_done) / wall;
    if (jobs == 1) one_job_rate = rate;
    std::printf(
        "  --jobs %d: %llu cases in %.2f s = %.1f cases/s (%.2f ms per case, %.2fx the plain run; "
        "%.2fx one job), %llu failing, %llu over limit\n",
        jobs, static_cast<unsigned long long>(r.status.cases_done), wall, rate,
        1e3 * wall * jobs / static_cast<double>(r.status.cases_done),
        wall * jobs / static_cast<double>(r.status.cases_done) / plain_s, rate / one_job_rate,
        static_cast<unsigned long long>(r.status.failures),
        static_cast<unsigned long long>(r.status.over_limit));
  }
  if (skip_shrink) return 0;

  // 2. Finding and shrinking each broken script's failure.
  std::printf("\nbroken scripts, from bases without their links and faults (seed 1, %d jobs):\n",
              jobs_max);
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kSource + "/scenarios/testdata/broken-scripts")) {
    if (e.is_directory() && fs::exists(e.path() / "broken.toml")) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  double total_shrink = 0;
  for (const fs::path& dir : dirs) {
    Scenario b = Load((dir / "broken.toml").string());
    b.faults.clear();
    b.network.link_latency_us.clear();
    for (auto& [property, want] : b.expect) {
      if (want == Expectation::kViolated) want = Expectation::kHold;
    }
    const std::optional<fuzz::FuzzPlan> p = fuzz::MakePlan(b, &error);
    if (!p) {
      std::printf("  %-15s %s\n", dir.filename().c_str(), error.c_str());
      continue;
    }
    const std::vector<std::string> w = fuzz::HoldProperties(b);
    fuzz::SearchOptions options;
    options.fuzz_seed = 1;
    options.cases = 2000;
    options.jobs = jobs_max;
    options.lua_dir = lua_dir;
    auto start = std::chrono::steady_clock::now();
    const fuzz::SearchResult r = fuzz::Search(b, *p, w, options, nullptr);
    const double search_s = Since(start);
    if (r.failures.empty()) {
      std::printf("  %-15s nothing found in %llu cases (%.2f s)\n", dir.filename().c_str(),
                  static_cast<unsigned long long>(r.status.cases_done), search_s);
      continue;
    }
    const fuzz::Failure& f = r.failures.front();
    fuzz::ShrinkOptions shrink;
    shrink.jobs = jobs_max;
    shrink.lua_dir = lua_dir;
    start = std::chrono::steady_clock::now();
    const fuzz::ShrinkResult s = fuzz::Shrink(b, f.c, f.outcome, f.property, w, shrink);
    const double shrink_s = Since(start);
    total_shrink += shrink_s;
    const Scenario before = fuzz::Materialize(b, f.c), after = fuzz::Materialize(b, s.shrunk);
    std::printf(
        "  %-15s %-18s case %4llu found in %.2f s; shrunk in %.2f s (%d steps, %d tried): "
        "%zu faults %zu clients %.1f s -> %zu faults %zu clients %.1f s\n",
        dir.filename().c_str(), f.property.c_str(), static_cast<unsigned long long>(f.index),
        search_s, shrink_s, s.steps, s.tries, before.faults.size(), before.clients.size(),
        static_cast<double>(before.duration_us) / 1e6, after.faults.size(), after.clients.size(),
        static_cast<double>(after.duration_us) / 1e6);
  }
  std::printf("  total shrink time %.2f s\n", total_shrink);
  return 0;
}
