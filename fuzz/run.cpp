#include "fuzz/run.h"

#include <algorithm>
#include <chrono>

#include "fuzz/coverage.h"
#include "pipeline/pipeline.h"
#include "history/names.h"
#include "sim/simulation.h"

namespace lockstep::fuzz {

std::vector<std::string> HoldProperties(const Scenario& s) {
  std::vector<std::string> out;
  for (std::string_view p : history::kProperties) {
    if (ExpectationOf(s.expect, p) == Expectation::kHold) out.emplace_back(p);
  }
  return out;
}

namespace {

CaseOutcome RunCaseOrThrow(const Scenario& s, const std::vector<std::string>& watch,
                           const std::string& lua_dir, const CaseLimits& limits) {
  CaseOutcome out;
  const auto start = std::chrono::steady_clock::now();
  std::string error;
  std::unique_ptr<sim::Simulation> sim = sim::Simulation::Create(s, lua_dir, &error);
  if (!sim) {
    out.status = CaseStatus::kError;
    out.error = error;
    return out;
  }
  Coverage coverage;
  PipelineOptions options;
  options.facts_observers = {&coverage};
  options.history = history::HistoryFormat::kNone;
  options.readers_thread = false;  // The search runs a case on every core already.
  options.progress_every_us = s.duration_us + 1;  // No progress calls.
  options.verify_keys = limits.verify_keys;
  bool over = false;
  const auto deadline =
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(limits.max_wall_s));
  sim::Simulation* raw = sim.get();
  options.should_stop = [&] {
    if (limits.cancel != nullptr && limits.cancel->load(std::memory_order_relaxed)) {
      out.cancelled = true;
      return true;
    }
    if (static_cast<int64_t>(raw->events_run()) >= limits.max_events ||
        std::chrono::steady_clock::now() >= deadline) {
      over = true;
      return true;
    }
    return false;
  };
  std::optional<PipelineResult> result = RunPipeline(*sim, s, options, &error);
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!result) {
    out.status = CaseStatus::kError;
    out.error = error;
    return out;
  }
  out.events = result->engine_events;
  out.coverage = coverage.Transitions();
  if (!result->verify_failure.empty()) {
    out.status = CaseStatus::kError;
    out.error = "internal error: " + result->verify_failure;
    return out;
  }
  // A case that stalls (no time passes) would have run until its event limit; a case whose
  // run stopped early (a script past its step budget, a client program that failed) says why.
  if (over || out.cancelled || !result->stalled.empty()) {
    out.status = CaseStatus::kOverLimit;
    if (!over && !out.cancelled) out.error = result->stalled;
    return out;
  }
  for (const check::PropertyResult& r : result->verdict.results) {
    if (!r.violated) continue;
    if (std::find(watch.begin(), watch.end(), r.property) == watch.end()) continue;
    out.broken.push_back(r.property);
    const check::Violation* first = r.violations.empty() ? nullptr : &r.violations.front();
    out.first_kind.push_back(first ? first->kind : "");
    out.first_explanation.push_back(first ? first->explanation : "");
    out.first_from_us.push_back(first ? first->from_us : 0);
    out.first_to_us.push_back(first ? first->to_us : s.duration_us);
  }
  out.status = out.broken.empty() ? CaseStatus::kPass : CaseStatus::kFail;
  return out;
}

}  // namespace

CaseOutcome RunCase(const Scenario& s, const std::vector<std::string>& watch,
                    const std::string& lua_dir, const CaseLimits& limits) {
  // A case that throws is a bug in lockstep, not in the user's lock; it must cost that case,
  // not the search (and the failures already found with it).
  try {
    return RunCaseOrThrow(s, watch, lua_dir, limits);
  } catch (const std::exception& e) {
    CaseOutcome out;
    out.status = CaseStatus::kError;
    out.error = std::string("internal error: ") + e.what();
    return out;
  }
}

Scenario MaterializeReference(const Scenario& reference, const FuzzCase& c) {
  Scenario s = Materialize(reference, c);
  s.protocol.version = reference.protocol.version;
  s.protocol.script_files = reference.protocol.script_files;
  return s;
}

CaseOutcome RunDrawnCase(const Scenario& base, const Scenario* reference, const FuzzCase& c,
                         const std::vector<std::string>& watch, const std::string& lua_dir,
                         const CaseLimits& limits) {
  CaseOutcome out = RunCase(Materialize(base, c), watch, lua_dir, limits);
  if (reference == nullptr || out.status != CaseStatus::kFail) return out;
  // The reference is asked only about what the base broke.
  const CaseOutcome ref = RunCase(MaterializeReference(*reference, c), out.broken, lua_dir, limits);
  if (ref.cancelled) {
    out.cancelled = true;
    return out;
  }
  if (ref.status == CaseStatus::kOverLimit || ref.status == CaseStatus::kError) {
    out.status = ref.status;
    out.error = ref.status == CaseStatus::kError ? "the reference could not run: " + ref.error : "";
    out.wall_s += ref.wall_s;
    return out;
  }
  CaseOutcome kept = out;
  kept.broken.clear();
  kept.first_kind.clear();
  kept.first_explanation.clear();
  kept.first_from_us.clear();
  kept.first_to_us.clear();
  for (size_t i = 0; i < out.broken.size(); ++i) {
    const bool both = std::find(ref.broken.begin(), ref.broken.end(), out.broken[i]) != ref.broken.end();
    if (both) {
      kept.shared.push_back(out.broken[i]);
      continue;
    }
    kept.broken.push_back(out.broken[i]);
    kept.first_kind.push_back(out.first_kind[i]);
    kept.first_explanation.push_back(out.first_explanation[i]);
    kept.first_from_us.push_back(out.first_from_us[i]);
    kept.first_to_us.push_back(out.first_to_us[i]);
  }
  kept.status = kept.broken.empty() ? CaseStatus::kPass : CaseStatus::kFail;
  kept.events += ref.events;
  kept.wall_s += ref.wall_s;
  return kept;
}

}  // namespace lockstep::fuzz
