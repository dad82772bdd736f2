// The search: cases drawn from (base, fuzz seed, index), run on every core, until a watched
// property breaks (or the case count, the time budget or an interrupt ends it).
//
// A guided search (Strategy::kGuided) steers by coverage (fuzz/coverage.h), as greybox fuzzers do:
// a case that added coverage joins the corpus, and each later case is either drawn fresh or,
// about half the time, a mutation (fuzz/case.h, Mutate) of a corpus entry. So that the cases
// stay the same whatever the number of jobs, case k may use only the corpus as it stood after
// the cases before k - kGuideLag were counted, in case order: a job that gets ahead of that
// waits. Which cases are fresh, which parent a mutation takes and how it mutates it come from
// the fuzz seed and the case's index alone. A random search draws every case fresh.
//
// With `shard` I/N this process runs the case indexes I, I + N, I + 2N ...: N processes with
// the same seed search disjoint cases. In first-failure mode the failure reported is the one
// with the smallest index among the cases run, whatever the number of jobs: once a case fails,
// no case after it is started, and the ones before it that are still running are finished.
#ifndef LOCKSTEP_FUZZ_SEARCH_H_
#define LOCKSTEP_FUZZ_SEARCH_H_

#include <atomic>
#include <csignal>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "fuzz/case.h"
#include "fuzz/run.h"

namespace lockstep::fuzz {

// How far behind the case it steers a guided search's corpus may be (see above).
inline constexpr uint64_t kGuideLag = 32;

enum class Strategy : uint8_t {
  kGuided,  // Steered by coverage.
  kRandom,  // Every case drawn from (base, seed, index) alone.
};

struct SearchOptions {
  Strategy strategy = Strategy::kRandom;
  uint64_t fuzz_seed = 1;
  uint64_t cases = 0;        // Per shard; 0: no limit (then a time budget is needed).
  double time_budget_s = 0;  // 0: none.
  bool keep_going = false;   // Collect distinct failures instead of stopping at the first.
  // Stop once this many cases in a row (in case order) added no coverage (fuzz/coverage.h);
  // 0: never. Saturation is judged in case order, whatever the number of jobs.
  uint64_t until_saturated = 0;
  int jobs = 1;
  uint64_t shard_index = 0;
  uint64_t shard_count = 1;
  std::string lua_dir;
  // Differential fuzzing: a case fails only where the base breaks a watched property that this
  // scenario, run on the same case, keeps (fuzz/run.h, RunDrawnCase). Null: the base alone.
  const Scenario* reference = nullptr;
  // Whether a guided search learns from the reference: a case whose failure the reference
  // shared stays out of the corpus, so the search does not dwell where every script breaks.
  // Off only to measure guidance without a reference by the same yardstick (bench/).
  bool reference_steers = true;
  CaseLimits limits;         // Per case (cancel is set by the search).
  const volatile std::sig_atomic_t* interrupted = nullptr;
};

struct SearchStatus {
  uint64_t cases_done = 0;
  uint64_t failures = 0;
  uint64_t over_limit = 0;
  // With a reference: cases whose base broke a watched property only as the reference did.
  uint64_t shared = 0;
  // Coverage: the distinct abstract transitions of the cases counted so far, in case order,
  // and the case index (global) of the last one that added some.
  uint64_t coverage = 0;
  uint64_t coverage_grew_at = 0;
  uint64_t coverage_cases = 0;  // Cases counted into it (in order; a later one may be done).
  uint64_t corpus = 0;          // Guided: the cases kept to mutate.
  double wall_s = 0;
};

struct Failure {
  uint64_t index = 0;
  FuzzCase c;
  CaseOutcome outcome;
  std::string property;  // The first watched property it broke.
  std::string kind;      // Its first violation's rule.
};

// A case the search set aside: it ran past its limit, or could not be set up (`message`).
struct SetAside {
  uint64_t index = 0;
  FuzzCase c;
  std::string message;  // Why it could not run, or why its run stopped ("" past its limit).
};

struct SearchResult {
  SearchStatus status;
  // First-failure mode: at most one. Keep-going: one per (property, rule), the smallest index.
  std::vector<Failure> failures;
  std::vector<SetAside> over_limit_cases;  // The first 20.
  std::vector<SetAside> errors;            // Cases that could not be set up; the first 20.
  bool interrupted = false;
  bool budget_spent = false;
  // --until-saturated: the search stopped after that many cases without new coverage.
  bool saturated = false;
  // The coverage reached, sorted (for a merge of shards to unite).
  std::vector<uint64_t> coverage;
  // How many worker threads ran: fewer than asked when the machine refused more (an address
  // space limit: each thread reserves its stack).
  int jobs_started = 0;
  // The threads the machine gave (jobs_started is three quarters of them when it refused
  // more: the rest left at once, to leave the cases room).
  int threads_made = 0;
};

// `progress` is called from the search's own thread about every `progress_every_s`.
SearchResult Search(const Scenario& base, const FuzzPlan& plan,
                    const std::vector<std::string>& watch, const SearchOptions& options,
                    const std::function<void(const SearchStatus&)>& progress,
                    double progress_every_s = 0.5);

}  // namespace lockstep::fuzz

#endif  // LOCKSTEP_FUZZ_SEARCH_H_
