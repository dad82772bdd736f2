// Limits on everything a scenario can ask for, in one place. A scenario that needs more is almost
// always a typo (a duration in microseconds, a count with an extra zero), and without them a
// hostile or mistaken file could make a run take days or crash the parser. docs/scenario-format.md
// ("Limits") lists them; every refusal says which limit and what the file asked for.
//
// Two kinds:
//  - limits on one value (a count, a length, a size), checked by the loader where the value is
//    written (model/scenario_toml.cpp), so that the message has the file, line, column and key;
//  - bounds on the work a run asks for, which depend on several keys together and on the
//    overrides `run` applies (--duration-ms, --time-scale): RunBoundsProblem, which every driver
//    checks before it starts.
#ifndef LOCKSTEP_MODEL_LIMITS_H_
#define LOCKSTEP_MODEL_LIMITS_H_

#include <cstdint>
#include <optional>
#include <string>

#include "model/scenario.h"

namespace lockstep {

// ---- The file ----
inline constexpr int64_t kMaxScenarioFileBytes = 4 << 20;
// Tables, arrays and dotted-key parts nested in one another. The TOML parser recurses once per
// level, so the text is scanned for this before it is parsed (a key 100,000 parts deep would
// otherwise overflow the stack). The deepest key a scenario has is about 6 levels.
inline constexpr int kMaxTomlNesting = 32;

// ---- Values ----
inline constexpr int64_t kMaxDurationMs = 1'000'000'000'000;  // About 31.7 years, any *_ms key.
inline constexpr int64_t kMaxRunDurationMs = 86'400'000;      // duration_ms: one simulated day.
inline constexpr int kMaxNodes = 64;
inline constexpr int kMaxClients = 1024;  // After `count` groups are expanded.
inline constexpr int kMaxThreadsPerClient = 256;
inline constexpr int kMaxThreads = 4096;  // All client processes' threads together.
inline constexpr int kMaxFaults = 10'000;
inline constexpr int kMaxClockJumps = 1'000;  // Per clock.
inline constexpr int kMaxReentry = 100;
inline constexpr int kMaxRetryAttempts = 1'000;
inline constexpr int kMaxNameLength = 64;        // Node, client and scenario names.
inline constexpr int kMaxTextBytes = 1024;       // description, lock_name.
inline constexpr int kMaxPathBytes = 4096;       // A script path as written.
inline constexpr int64_t kMaxScriptBytes = 1 << 20;  // A script file.
inline constexpr double kMaxDriftPpm = 500'000;  // A clock at 1.5x or 0.5x speed; far past real.
// Redisson's Config takes its timeouts in whole milliseconds, and lockstep's clients (like
// Redisson's) renew a watchdog lease every third of it: below these, a timer would have a
// period of 0.
inline constexpr int64_t kMinTimeoutMs = 1;
inline constexpr int64_t kMinWatchdogTimeoutMs = 3;

// ---- Work ----
// The most iterations one thread's workload loop, or one process's GC pauses, may come to over
// the run: duration_ms over the period (RunBoundsProblem says how each period is estimated).
// Two million iterations are about 20 million events, half a minute of simulation.
inline constexpr int64_t kMaxPeriodsPerProcess = 2'000'000;
// The same summed over every thread of the run: at about ten events an iteration, the run's
// event bound (kMaxRunEvents).
inline constexpr int64_t kMaxIterationsPerRun = 200'000'000;
// The simulator's progress watchdog: more events than this at one instant of true time means
// the run loops without time advancing, and it is stopped (sim/simulation.h).
inline constexpr uint64_t kMaxEventsPerInstant = 100'000;
// The run's work, as the simulator really does it (retries inside one acquisition, messages
// resent on every timeout: what no estimate from the scenario's means sees): at most this many
// simulator events in all (a simulated day of contention-10 is about 95 million; this is some
// twenty minutes of wall time), and at most this many waiting at once (messages in flight and
// timers; each holds a closure: about 200 MB at the bound).
inline constexpr uint64_t kMaxRunEvents = 2'000'000'000;
inline constexpr uint64_t kMaxPendingEvents = 2'000'000;

// The first bound on a run's work the scenario breaks, as a message naming the keys to change
// and the limit, or nullopt. Checks the run's length, the total of threads, each client group's
// iterations per thread and the GC pauses per process.
std::optional<std::string> RunBoundsProblem(const Scenario& scenario);

// A distribution's mean in microseconds, as the work bounds estimate it: a pareto with shape at
// most 1 (no finite mean) counts its scale; a cap bounds the mean.
double MeanUs(const Distribution& d);

}  // namespace lockstep

#endif  // LOCKSTEP_MODEL_LIMITS_H_
