// Shrinking a failing case to a minimal one that still breaks the same property.
//
// Greedy, in passes, until no pass finds a smaller case that still fails: drop faults (chunks
// first, as rapidcheck's shrink::removeChunks proposes them), cut the run short after the
// violation, drop the base's network noise, GC pauses and random times, fewer clients and
// threads, then each fault's time, length, size and target toward their floors (rapidcheck's
// shrink::towards) and rounded to whole milliseconds, tenths and seconds. Candidates are tried in
// a fixed order, `jobs` at a time, and the first in that order that still fails is taken, so the
// result does not depend on how many threads tried them.
#ifndef LOCKSTEP_FUZZ_SHRINK_H_
#define LOCKSTEP_FUZZ_SHRINK_H_

#include <functional>
#include <string>

#include "fuzz/case.h"
#include "fuzz/run.h"

namespace lockstep::fuzz {

struct ShrinkOptions {
  int jobs = 1;
  std::string lua_dir;
  // Differential fuzzing: a candidate still fails only while the reference keeps the property
  // (SearchOptions::reference).
  const Scenario* reference = nullptr;
  CaseLimits limits;
  int max_tries = 2000;  // Candidates run at most.
  // Called after each accepted step and each batch: (accepted steps, candidates tried).
  std::function<void(int, int)> progress;
};

struct ShrinkResult {
  FuzzCase shrunk;
  CaseOutcome outcome;  // Of the shrunk case.
  int steps = 0;        // Smaller cases accepted.
  int tries = 0;        // Candidates run, as one job runs them (in order, up to the one taken).
  // The shrunk case's run was given back the length that shows the whole damage: until the
  // first violation's condition ended (and a second more), at most as long as the failing
  // case's run. extent_to_end: the condition lasted until that run's end.
  bool extended = false;
  bool extent_to_end = false;
};

ShrinkResult Shrink(const Scenario& base, const FuzzCase& failing, const CaseOutcome& outcome,
                    const std::string& property, const std::vector<std::string>& watch,
                    const ShrinkOptions& options);

// Runs candidates [0, n) `jobs` at a time in index order and returns the first index whose
// outcome satisfies `good` (with that outcome in *found), or -1. A candidate after the first
// good one in its batch is not looked at.
int FirstGood(int n, int jobs, const std::function<CaseOutcome(int)>& run,
              const std::function<bool(const CaseOutcome&)>& good, CaseOutcome* found);

}  // namespace lockstep::fuzz

#endif  // LOCKSTEP_FUZZ_SHRINK_H_
