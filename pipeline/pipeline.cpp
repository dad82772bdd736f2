#include "pipeline/pipeline.h"

#include <chrono>
#include <memory>
#include <vector>

#include "history/handoff.h"

namespace lockstep {

check::CheckOptions CheckOptionsOf(const Scenario& scenario) {
  check::CheckOptions options;
  options.liveness_bound_us = scenario.liveness_bound_us;
  options.lease_default_us = scenario.protocol.watchdog_timeout_us;
  options.fair_wait_timeout_us = scenario.protocol.fair_wait_timeout_us;
  return options;
}

std::optional<PipelineResult> RunPipeline(sim::Simulation& sim, const Scenario& scenario,
                                          const PipelineOptions& options, std::string* error) {
  // A run that keeps its history may stop too: when the history cannot be written.
  const bool may_stop = options.interrupted != nullptr || static_cast<bool>(options.should_stop) ||
                        options.history != history::HistoryFormat::kNone;
  if (options.verify_keys) sim.VerifyKeys();
  std::optional<PipelineResult> result = RunPipelineWith(
      sim.recorder(), scenario, options,
      [&](const std::function<bool()>& should_stop) {
        // The simulator asks only when somebody may say stop: its loop stays lean otherwise.
        sim.Run(options.progress, options.progress_every_us,
                may_stop ? should_stop : std::function<bool()>());
        return DriveOutcome{sim.events_run(), sim.end_us(), sim.interrupted()};
      },
      error);
  if (result) {
    result->stalled = sim.stalled();
    result->verify_failure = sim.verify_failure();
  }
  return result;
}

std::optional<PipelineResult> RunPipelineWith(
    history::Recorder& recorder, const Scenario& scenario, const PipelineOptions& options,
    const std::function<DriveOutcome(const std::function<bool()>& should_stop)>& drive,
    std::string* error) {
  check::Checker checker(&recorder.names(), CheckOptionsOf(scenario));
  for (history::FactsObserver* observer : options.facts_observers) checker.AddObserver(observer);
  std::unique_ptr<history::HistoryWriter> writer;
  if (options.history != history::HistoryFormat::kNone) {
    writer = history::HistoryWriter::Open(options.history_path, options.history, &recorder.names(),
                                          error);
    if (!writer) return std::nullopt;
  }
  std::vector<history::EventSink*> readers = {&checker};
  if (writer) readers.push_back(writer.get());
  std::unique_ptr<history::Handoff> handoff;
  if (options.readers_thread) {
    handoff = std::make_unique<history::Handoff>(readers);
    recorder.AddSink(handoff.get());
  } else {
    for (history::EventSink* reader : readers) recorder.AddSink(reader);
  }
  const auto start = std::chrono::steady_clock::now();
  // A write error (a full disk) stops the run at once: nothing it did after could be kept.
  const std::function<bool()> should_stop = [&options, &writer] {
    return (options.interrupted != nullptr && *options.interrupted) ||
           (options.should_stop && options.should_stop()) || (writer && writer->failed());
  };
  const DriveOutcome outcome = drive(should_stop);
  // Everything the driver recorded is read before the file is closed or the verdict made.
  if (handoff) handoff->Finish();
  PipelineResult result;
  // The file is complete and closed before anyone reads it again.
  if (writer && !writer->Close()) {
    // What was written is cut somewhere inside a line: removed, so that nothing half-written
    // is taken for a history.
    *error = writer->error() + (writer->Discard() ? "; the run stopped there and " + writer->path() +
                                                        " was removed"
                                                  : "; the run stopped there (" + writer->path() +
                                                        " is incomplete and could not be removed)");
    return std::nullopt;
  }
  result.verdict = checker.Finish();
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.history_events = recorder.count();
  result.engine_events = outcome.engine_events;
  result.end_us = outcome.end_us;
  result.interrupted = outcome.interrupted;
  result.history_written = writer != nullptr;
  if (writer) result.history_hash = writer->hash();
  return result;
}

}  // namespace lockstep
