// One run of a scenario through the whole pipeline, in process: the simulator's events go to
// the checkers (the facts pass and every property) and, unless the history is not kept, to a
// history file, as they happen. `lockstep run`, the benchmarks and searches over many cases
// share it, so that what they measure or find is what `run` does.
#ifndef LOCKSTEP_PIPELINE_PIPELINE_H_
#define LOCKSTEP_PIPELINE_PIPELINE_H_

#include <csignal>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "check/check.h"
#include "history/writer.h"
#include "model/scenario.h"
#include "sim/simulation.h"

namespace lockstep {

struct PipelineOptions {
  history::HistoryFormat history = history::HistoryFormat::kJsonl;
  std::string history_path;  // Where the history goes (not for kNone).
  // Called about every progress_every_us of simulated time (a progress line).
  std::function<void(TrueTime)> progress;
  int64_t progress_every_us = 60'000'000;
  // Set non-zero (by a signal handler) to stop the run at the next event boundary.
  const volatile std::sig_atomic_t* interrupted = nullptr;
  // Asked about every 1024 events, besides *interrupted: true stops the run there (a search's
  // per-case event and time limits).
  std::function<bool()> should_stop;
  // The checkers and the history file's writer read the events on a thread of their own
  // (history/handoff.h), beside the driver: the same results, sooner. A search that already
  // runs one case per core turns it off.
  bool readers_thread = true;
  // The verification mode (sim/verify.h; `--verify`): the facts pass's view of every master's
  // lock key is held against the key after every command. The simulator only.
  bool verify_keys = false;
  // More readers of the checkers' facts pass (a fuzz search's coverage), fed beside them.
  std::vector<history::FactsObserver*> facts_observers;
};

struct PipelineResult {
  check::Verdict verdict;
  uint64_t history_events = 0;  // Events the run recorded.
  uint64_t engine_events = 0;   // Events the simulator's engine ran.
  int64_t end_us = 0;           // The run's end (where an interrupted run stopped).
  bool interrupted = false;
  std::string stalled;  // The simulator's progress watchdog stopped the run: why.
  std::string verify_failure;  // The verification mode stopped the run: the difference.
  bool history_written = false;
  uint64_t history_hash = 0;    // Of the written file (history/jsonl.h).
  double wall_s = 0;            // Simulating and checking, not setting up.
};

// Runs `sim` (made from `scenario`, not yet run) to its end. nullopt (with *error) if the
// history file cannot be opened or written.
std::optional<PipelineResult> RunPipeline(sim::Simulation& sim, const Scenario& scenario,
                                          const PipelineOptions& options, std::string* error);

// What a driver tells the pipeline when its run is over.
struct DriveOutcome {
  uint64_t engine_events = 0;  // The driver's own count of what it did (engine events, I/O).
  int64_t end_us = 0;          // Where the run ended in true time.
  bool interrupted = false;
};

// The same pipeline for any driver (the simulator, the live harness): the checkers and the
// history writer are added to `recorder`, then `drive` runs the whole scenario, asking
// `should_stop` (never null) now and then whether to stop early. Extra sinks (e.g. an
// OperationLog) can be added to the recorder by the caller before.
std::optional<PipelineResult> RunPipelineWith(
    history::Recorder& recorder, const Scenario& scenario, const PipelineOptions& options,
    const std::function<DriveOutcome(const std::function<bool()>& should_stop)>& drive,
    std::string* error);

// The checkers' options a scenario implies.
check::CheckOptions CheckOptionsOf(const Scenario& scenario);

}  // namespace lockstep

#endif  // LOCKSTEP_PIPELINE_PIPELINE_H_
