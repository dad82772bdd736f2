// `lockstep run --seeds A..B`: one scenario, unchanged but for its seed, run for every seed of a
// range, in process, on every core (each run a Simulation of its own, no history kept, its
// checkers inline), each judged against [expect] as a single run would be.
#ifndef LOCKSTEP_CLI_SEEDS_H_
#define LOCKSTEP_CLI_SEEDS_H_

#include <csignal>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/scenario.h"

namespace lockstep::cli {

// "A..B" with A <= B, both whole numbers; nullopt otherwise.
std::optional<std::pair<uint64_t, uint64_t>> ParseSeedRange(std::string_view text);

struct SeedRun {
  uint64_t seed = 0;
  bool ran = false;       // False when the sweep stopped (interrupted) before it.
  std::string error;      // A run that could not be made or stalled (bad input for that seed).
  bool matches = false;   // The verdict matches [expect].
  // Per property, in the Verdict's order: its name and how many violations it found.
  std::vector<std::pair<std::string, size_t>> violations;
  std::vector<std::string> mismatches;
};

// One line of seeds.txt: "17 fail mutual_exclusion=2 resource_exclusion=0 ..." (pass, fail or
// error, then every property with its violation count).
std::string SeedLine(const SeedRun& r);

// Runs every seed in [first, last] on `jobs` threads. `progress` (may be empty) is called from
// the calling thread now and then with the number of runs done. Stops early when *interrupted.
std::vector<SeedRun> RunSeeds(const Scenario& scenario, const std::string& lua_dir, uint64_t first,
                              uint64_t last, int jobs, const volatile std::sig_atomic_t* interrupted,
                              const std::function<void(uint64_t done)>& progress);

}  // namespace lockstep::cli

#endif  // LOCKSTEP_CLI_SEEDS_H_
