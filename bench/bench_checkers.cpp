// Benchmark: the checkers' cost on a pathological history, against the simulator alone.
//
// Ten clients with lease_ms = 0 and no think or critical time (bench/liveness-pathological.toml):
// every thread retries at once, the lock is free for an instant after every release, and the
// liveness checker keeps thousands of free stretches to judge at the end. A hostile-input sweep
// measured `lockstep run` on it at 3 s for 16 simulated seconds, 16 s for 32 and 71 s for 64:
// quadratic, because every operation's end visited every stretch kept so far.
//
// For each duration (doubling), in one process: the simulation with nothing reading its events
// (the floor), then the same run through the pipeline with every checker and no history file.
// It prints both wall times, their ratio, and the ratio of each duration's checked wall time to
// the previous one's (about 2 when the cost is linear in the events). It asserts nothing about
// time.
//
//   ./build/bench_checkers [--durations-ms 8000,16000,32000,64000] [--repeat 3]
#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "model/scenario_toml.h"
#include "pipeline/pipeline.h"
#include "sim/simulation.h"

namespace po = boost::program_options;
using namespace lockstep;

namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

int main(int argc, char** argv) {
  std::string durations_text = "8000,16000,32000,64000";
  int repeat = 3;
  std::string lua_dir = LOCKSTEP_SOURCE_DIR "/lua";
  po::options_description desc("bench_checkers options");
  desc.add_options()("help", "show this help")(
      "durations-ms", po::value(&durations_text)->default_value(durations_text),
      "simulated durations, comma-separated")(
      "repeat", po::value(&repeat)->default_value(repeat), "runs per duration (the fastest counts)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "bench_checkers: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  ScenarioError load_error;
  std::optional<Scenario> base =
      LoadScenarioFile(LOCKSTEP_SOURCE_DIR "/bench/liveness-pathological.toml", &load_error);
  if (!base) {
    std::cerr << load_error.ToString() << "\n";
    return 2;
  }
  std::vector<int64_t> durations;
  std::stringstream in(durations_text);
  for (std::string item; std::getline(in, item, ',');) durations.push_back(std::stoll(item));

  std::printf("%-10s %10s %12s %12s %9s %12s\n", "simulated", "events", "sim alone", "checked",
              "ratio", "vs previous");
  double previous = 0;
  for (int64_t ms : durations) {
    Scenario s = *base;
    s.duration_us = ms * 1000;
    double best_alone = 1e300, best_checked = 1e300;
    uint64_t events = 0;
    for (int round = 0; round < repeat; ++round) {
      std::string error;
      auto alone = sim::Simulation::Create(s, lua_dir, &error);
      if (!alone) {
        std::cerr << "bench_checkers: " << error << "\n";
        return 2;
      }
      auto start = std::chrono::steady_clock::now();
      alone->Run();
      best_alone = std::min(best_alone, Seconds(std::chrono::steady_clock::now() - start));

      auto checked = sim::Simulation::Create(s, lua_dir, &error);
      PipelineOptions options;
      options.history = history::HistoryFormat::kNone;
      start = std::chrono::steady_clock::now();
      const std::optional<PipelineResult> run = RunPipeline(*checked, s, options, &error);
      if (!run) {
        std::cerr << "bench_checkers: " << error << "\n";
        return 2;
      }
      best_checked = std::min(best_checked, Seconds(std::chrono::steady_clock::now() - start));
      events = run->history_events;
    }
    char vs[32] = "-";
    if (previous > 0) std::snprintf(vs, sizeof vs, "%.2fx", best_checked / previous);
    std::printf("%-10s %10llu %10.3f s %10.3f s %8.2fx %12s\n",
                (std::to_string(ms / 1000) + " s").c_str(), static_cast<unsigned long long>(events),
                best_alone, best_checked, best_checked / best_alone, vs);
    previous = best_checked;
  }
  return 0;
}
