// Runs one fuzz case: a Scenario through the simulator and the online checkers, no history
// kept, within an event and a wall-time limit, and says which watched properties it broke.
#ifndef LOCKSTEP_FUZZ_RUN_H_
#define LOCKSTEP_FUZZ_RUN_H_

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "check/verdict.h"
#include "fuzz/case.h"
#include "model/scenario.h"

namespace lockstep::fuzz {

struct CaseLimits {
  int64_t max_events = 50'000'000;  // Engine events.
  double max_wall_s = 60;
  const std::atomic<bool>* cancel = nullptr;  // Set: stop at once (the search is over).
  // The verification mode (sim/verify.h): a case whose facts pass and keys differ is an
  // error ("internal error: verification failed ...").
  bool verify_keys = false;
};

enum class CaseStatus : uint8_t {
  kPass,       // No watched property broke.
  kFail,       // At least one did.
  // Stopped at its event or time limit, cancelled, or stopped by the run itself (`error` then
  // says why: a script past its step budget, a client program that failed); not judged.
  kOverLimit,
  kError,      // Could not be set up (a script that does not load, say).
};

struct CaseOutcome {
  CaseStatus status = CaseStatus::kPass;
  bool cancelled = false;
  // The watched properties that were violated, in kProperties order; for each, the rule of its
  // first violation ("overlap") and that violation's explanation and end.
  std::vector<std::string> broken;
  std::vector<std::string> first_kind;
  std::vector<std::string> first_explanation;
  std::vector<int64_t> first_from_us;
  std::vector<int64_t> first_to_us;
  std::string error;
  uint64_t events = 0;
  double wall_s = 0;
  // Differential (RunDrawnCase with a reference): the watched properties the base broke that
  // the reference, run on the same case, broke too. They are not in `broken`: a case that
  // breaks only these passes.
  std::vector<std::string> shared;
  // The base run's coverage (fuzz/coverage.h): its abstract transitions, sorted.
  std::vector<uint64_t> coverage;
};

// The properties `s` expects to hold: what a search watches.
std::vector<std::string> HoldProperties(const Scenario& s);

CaseOutcome RunCase(const Scenario& s, const std::vector<std::string>& watch,
                    const std::string& lua_dir, const CaseLimits& limits);

// The reference's side of case `c`: the case on the reference scenario, with the reference's
// own protocol version and scripts (what makes it the reference), whatever the case drew.
Scenario MaterializeReference(const Scenario& reference, const FuzzCase& c);

// Runs case `c` of `base`. With a reference (differential fuzzing), a case whose base breaks a
// watched property runs on the reference too, and only the properties the reference kept stay
// broken: the case fails only where the base differs from the reference. A reference that runs
// past its limit leaves the case unjudged (kOverLimit); one that cannot run is an error.
CaseOutcome RunDrawnCase(const Scenario& base, const Scenario* reference, const FuzzCase& c,
                         const std::vector<std::string>& watch, const std::string& lua_dir,
                         const CaseLimits& limits);

}  // namespace lockstep::fuzz

#endif  // LOCKSTEP_FUZZ_RUN_H_
