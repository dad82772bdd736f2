// Benchmark: does steering by coverage find fault-dependent bugs sooner than drawing cases at
// random, and does a reference help it?
//
// For every mutant in bench/fuzz-mutants/ (a deliberate bug in a stock script or a client
// setting that only a fault or a timing reveals; README.md there says which and why), from its
// base with no schedule and its fixed twin (fixed.toml beside it, else the base with the stock
// scripts), and for each search seed: the cases and the wall time until the first failure that
// the fixed twin does not share, for three searches:
//
//   random   --strategy random;
//   guided   --strategy guided, learning nothing from the twin (a failure the twin shares may
//            be kept in the corpus, as a search without a reference cannot tell it apart);
//   guided+reference   --strategy guided --reference (shared failures stay out of the corpus).
//
// All three run the twin on each case whose base failed, so that "found" means the same for
// all (a search without --reference stops at the first failure, shared or not; what the user
// then needs is the first one the twin does not share). A search that has not found it within
// --cases counts as not found; the medians are over the seeds with those counted as the case
// limit and its time (so a median is a lower bound when more than half were not found).
// It asserts nothing about time.
//
//   ./build/bench_fuzz_guidance [--seeds 10] [--cases 5000] [--jobs 2] [--mutant NAME]... [--dir D]
#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "fuzz/case.h"
#include "fuzz/run.h"
#include "fuzz/search.h"
#include "model/scenario_toml.h"

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

struct Mode {
  const char* name;
  fuzz::Strategy strategy;
  bool reference_steers;
};
constexpr Mode kModes[] = {
    {"random", fuzz::Strategy::kRandom, false},
    {"guided", fuzz::Strategy::kGuided, false},
    {"guided+reference", fuzz::Strategy::kGuided, true},
};
constexpr size_t kModeCount = std::size(kModes);

struct Trial {
  bool found = false;
  uint64_t cases = 0;  // To the failure, counting it; the limit when not found.
  double wall_s = 0;
};

template <typename T>
T Median(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  if (n == 0) return T{};
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t seeds = 10, cases = 5000;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::string> only;
  std::string mutants_dir = kSource + "/bench/fuzz-mutants";
  po::options_description desc(
      "bench_fuzz_guidance: cases and seconds to find each fault-dependent mutant, random "
      "against guided against guided with a reference");
  desc.add_options()("help,h", "show this help")(
      "seeds", po::value(&seeds)->default_value(seeds), "search seeds per mutant and search (1..N)")(
      "cases", po::value(&cases)->default_value(cases), "cases per search before giving up")(
      "jobs", po::value(&jobs)->default_value(jobs), "cases run at once")(
      "mutant", po::value(&only), "only this mutant (repeatable)")(
      "dir", po::value(&mutants_dir)->default_value(mutants_dir), "where the mutants' folders are");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "bench_fuzz_guidance: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  const fs::path dir = mutants_dir;
  std::vector<fs::path> mutants;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    if (!e.is_directory() || !fs::exists(e.path() / "base.toml")) continue;
    const std::string name = e.path().filename().string();
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    mutants.push_back(e.path());
  }
  std::sort(mutants.begin(), mutants.end());
  if (mutants.empty()) {
    std::cerr << "bench_fuzz_guidance: no mutant under " << dir.string() << "\n";
    return 2;
  }
  std::printf("%zu mutant(s), seeds 1..%llu, at most %llu cases per search, %d jobs\n",
              mutants.size(), static_cast<unsigned long long>(seeds),
              static_cast<unsigned long long>(cases), jobs);
  std::printf("%-28s %-17s %6s %9s %9s %8s %8s\n", "mutant", "search", "found", "cases p50",
              "cases max", "s p50", "s max");

  // Per mode: each mutant's median time, and how many (mutant, seed) pairs were found.
  std::vector<std::vector<double>> median_s(kModeCount);
  std::vector<std::vector<double>> median_cases(kModeCount);
  std::vector<int> found_all(kModeCount, 0), within_all(kModeCount, 0);
  double total_wall = 0;
  for (const fs::path& m : mutants) {
    const Scenario base = Load((m / "base.toml").string());
    Scenario twin = base;
    if (fs::exists(m / "fixed.toml")) {
      twin = Load((m / "fixed.toml").string());
    } else {
      twin.protocol.script_files.clear();
    }
    std::string error;
    const std::optional<fuzz::FuzzPlan> plan = fuzz::MakePlan(base, &error);
    if (!plan) {
      std::cerr << m.string() << ": " << error << "\n";
      return 2;
    }
    const std::vector<std::string> watch = fuzz::HoldProperties(base);
    for (size_t mode = 0; mode < kModeCount; ++mode) {
      std::vector<Trial> trials;
      for (uint64_t seed = 1; seed <= seeds; ++seed) {
        fuzz::SearchOptions options;
        options.strategy = kModes[mode].strategy;
        options.reference = &twin;
        options.reference_steers = kModes[mode].reference_steers;
        options.fuzz_seed = seed;
        options.cases = cases;
        options.jobs = jobs;
        options.lua_dir = kSource + "/lua";
        options.limits.max_events = base.fuzz.max_events;
        options.limits.max_wall_s = base.fuzz.max_case_s;
        const fuzz::SearchResult r = fuzz::Search(base, *plan, watch, options, nullptr);
        Trial t;
        t.found = !r.failures.empty();
        t.cases = t.found ? r.failures.front().index + 1 : cases;
        t.wall_s = r.status.wall_s;
        total_wall += t.wall_s;
        trials.push_back(t);
      }
      std::vector<uint64_t> c;
      std::vector<double> s;
      int found = 0;
      for (const Trial& t : trials) {
        c.push_back(t.cases);
        s.push_back(t.wall_s);
        found += t.found ? 1 : 0;
      }
      found_all[mode] += found;
      within_all[mode] += static_cast<int>(trials.size());
      median_s[mode].push_back(Median(s));
      median_cases[mode].push_back(static_cast<double>(Median(c)));
      std::printf("%-28s %-17s %3d/%-2zu %9llu %9llu %8.2f %8.2f\n", m.filename().string().c_str(),
                  kModes[mode].name, found, trials.size(),
                  static_cast<unsigned long long>(Median(c)),
                  static_cast<unsigned long long>(*std::max_element(c.begin(), c.end())), Median(s),
                  *std::max_element(s.begin(), s.end()));
      std::fflush(stdout);
    }
  }
  std::printf("\nover all mutants (%zu):\n", mutants.size());
  for (size_t mode = 0; mode < kModeCount; ++mode) {
    std::printf("  %-17s found %d of %d searches; median of the mutants' median cases %.0f, "
                "seconds %.2f\n",
                kModes[mode].name, found_all[mode], within_all[mode], Median(median_cases[mode]),
                Median(median_s[mode]));
  }
  // Guided against random, mutant by mutant: how many times faster in median time to find.
  for (size_t mode = 1; mode < kModeCount; ++mode) {
    std::vector<double> ratios;
    for (size_t i = 0; i < mutants.size(); ++i) {
      ratios.push_back(median_s[0][i] / std::max(1e-6, median_s[mode][i]));
    }
    std::printf("  %s against random, median time to find: %.2fx faster (median over the "
                "mutants; per mutant:",
                kModes[mode].name, Median(ratios));
    for (double r : ratios) std::printf(" %.2f", r);
    std::printf(")\n");
  }
  std::printf("benchmark wall time %.0f s\n", total_wall);
  return 0;
}
