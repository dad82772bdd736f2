// Benchmark: what the simulator costs beyond the lock scripts it runs.
//
// In one process, each case a fresh Simulation through the same pipeline `lockstep run` uses
// (pipeline/pipeline.h: the facts pass and every checker, and the history file unless it is not
// kept):
//   0. contention-10 for one simulated hour with nothing reading its events (the simulator
//      alone: what the checkers and the writer add is cases 1 and 2 minus this);
//   1. contention-10 for one simulated hour, --history none;
//   2. the same with --history binary (run's default), then the reports made from the file;
//   3. a 100-client contention scenario (contention-10 with 100 clients) for one simulated
//      hour, --history binary and the reports;
//   4. contention-10 for one simulated hour, --history jsonl, then the reports;
//   5. the same with --history jsonl.gz;
// and, as the floor of each, the same number of script executions alone on a fresh emulator
// (Redisson's acquire and unlock scripts of the scenario's version, EVALSHA, alternating on one
// lock: the path of a lock taken and released). It prints simulated seconds per wall second,
// events per second, peak RSS (VmHWM, reset before each case), the history file's size and
// bytes per event, and the overhead factor: the
// case's wall time over its floor's, both the fastest run over the fastest floor and, per
// round, the run over a floor measured right after it (the median of those is the figure that
// survives a machine whose speed drifts). At the end, the ratios the issue of long runs set
// targets for, each from cases of this run: what each history form adds to case 1, the history's
// size per simulated hour, the reports' time against the run's own. It asserts nothing about
// time.
//
//   ./build/bench_sim [--duration-ms 3600000] [--clients 100] [--cases 0,1,2,3,4] [--out DIR]
//                     [--repeat N] [--readers thread|inline]
// (--readers inline runs the facts pass, the checkers and the writer on the simulator's thread,
// as `lockstep fuzz` and `run --seeds` do, to see what their own thread saves.)
#include <boost/program_options.hpp>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/script_floor.h"
#include "pipeline/pipeline.h"
#include "core/server.h"
#include "history/event.h"
#include "history/reader.h"
#include "model/scenario_toml.h"
#include "reports/report.h"

namespace po = boost::program_options;
using namespace lockstep;

namespace {

using bench::Floor;
using bench::ScriptCount;

// VmHWM, the process's peak resident set, in KiB.
long PeakRssKb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

// The calling thread's CPU time (the reports run on it alone).
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Starts a new peak: Linux resets VmHWM to the current RSS on "5" > /proc/self/clear_refs.
void ResetPeakRss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
}



struct CaseResult {
  std::string name;
  double sim_s = 0;
  double wall_s = 0;
  uint64_t history_events = 0;
  uint64_t engine_events = 0;
  uint64_t scripts = 0;
  long peak_kb = 0;
  double reports_s = -1;
  double read_s = -1;  // Reading the history file back into a sink that only counts.
  double reports_cpu_s = -1;  // The reports' own thread's CPU time: what a busy machine adds to
                              // the wall time is not in it.
  long peak_with_reports_kb = -1;
  int64_t history_bytes = -1;  // The history file's size; -1: none written.
  double floor_s = 0;
  std::string version;
  std::vector<double> round_ratios;  // Sorted.
};


// A case: the simulation `repeat` times (the same run each time; the fastest counts, as the
// others only add the machine's noise), then the reports as often, then the floor.
std::optional<CaseResult> RunCase(const std::string& name, Scenario scenario, const std::string& lua_dir,
                                  history::HistoryFormat format, bool reports, const std::string& dir,
                                  int repeat, bool readers_thread, bool sim_only = false) {
  std::string error;
  std::unique_ptr<sim::Simulation> sim;
  ScriptCount count;
  PipelineOptions options;
  options.history = format;
  options.readers_thread = readers_thread;
  options.history_path = dir + "/" + history::HistoryFileName(format);
  std::filesystem::create_directories(dir);
  std::optional<PipelineResult> run;
  double best_wall_s = 0;
  long peak_kb = 0;
  std::vector<double> ratios;  // Each round's wall time over a floor measured right after it.
  for (int round = 0; round < repeat; ++round) {
    sim.reset();
    sim = sim::Simulation::Create(scenario, lua_dir, &error);
    if (!sim) {
      std::cerr << "bench_sim: " << name << ": " << error << "\n";
      return std::nullopt;
    }
    count = ScriptCount();
    count.Name(sim->recorder().names());
    sim->recorder().AddSink(&count);
    ResetPeakRss();
    if (sim_only) {
      const auto start = std::chrono::steady_clock::now();
      sim->Run();
      run.emplace();
      run->wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      run->history_events = sim->recorder().count();
      run->engine_events = sim->events_run();
      run->end_us = sim->end_us();
    } else {
      run = RunPipeline(*sim, scenario, options, &error);
    }
    if (!run) {
      std::cerr << "bench_sim: " << name << ": " << error << "\n";
      return std::nullopt;
    }
    best_wall_s = round == 0 ? run->wall_s : std::min(best_wall_s, run->wall_s);
    peak_kb = std::max(peak_kb, PeakRssKb());
    // This machine's speed drifts over tens of seconds (a shared host): a floor taken right
    // after the run it measures sees the same machine, so the per-round ratio is the figure to
    // trust; the fastest run and the fastest floor may come from different moments.
    ratios.push_back(run->wall_s / Floor(lua_dir, std::string(history::VersionName(scenario.protocol.version)), count.scripts()));
  }
  CaseResult r;
  r.name = name;
  r.sim_s = static_cast<double>(run->end_us) / 1e6;
  r.wall_s = best_wall_s;
  r.history_events = run->history_events;
  r.engine_events = run->engine_events;
  r.scripts = count.scripts();
  r.peak_kb = peak_kb;
  r.version = std::string(history::VersionName(scenario.protocol.version));
  if (run->history_written) {
    std::error_code size_error;
    const auto size = std::filesystem::file_size(options.history_path, size_error);
    if (!size_error) r.history_bytes = static_cast<int64_t>(size);
  }
  if (run->history_written) {
    // Reading the file back alone: what each form costs every reader.
    struct Count : history::EventSink {
      uint64_t n = 0;
      void OnEvent(const history::Event&) override { ++n; }
    } count_sink;
    history::NameTable names;
    history::ReadStats stats;
    std::string read_error;
    const auto start = std::chrono::steady_clock::now();
    if (history::ReadHistoryFile(options.history_path, &names, &count_sink, &stats, &read_error)) {
      r.read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  if (reports && run->history_written) {
    reports::ReportMeta meta;
    reports::DescribeScenario(scenario, &meta);
    meta.parameters = sim->derived();
    std::vector<reports::WrittenFile> written;
    // As often as the run, the fastest kept: the same files each time.
    for (int round = 0; round < repeat; ++round) {
      written.clear();
      const auto start = std::chrono::steady_clock::now();
      const double cpu_start = ThreadCpuSeconds();
      if (!reports::WriteReportsFromFile(options.history_path, run->verdict, meta, dir, &written,
                                         &error)) {
        std::cerr << "bench_sim: " << name << ": reports: " << error << "\n";
        return std::nullopt;
      }
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (round == 0 || wall < r.reports_s) {
        r.reports_s = wall;
        r.reports_cpu_s = ThreadCpuSeconds() - cpu_start;
      }
    }
    r.peak_with_reports_kb = PeakRssKb();
  }
  sim.reset();
  // The floor, best of three (or of `repeat`): a loop this tight has only noise to add.
  r.floor_s = Floor(lua_dir, r.version, r.scripts);
  for (int i = 1; i < std::max(3, repeat); ++i) {
    r.floor_s = std::min(r.floor_s, Floor(lua_dir, r.version, r.scripts));
  }
  std::sort(ratios.begin(), ratios.end());
  r.round_ratios = ratios;
  return r;
}

void Print(const CaseResult& r) {
  std::printf("%s\n", r.name.c_str());
  std::printf("  simulated      %.0f s in %.2f s wall: %.0f simulated s per wall s\n", r.sim_s, r.wall_s,
              r.sim_s / r.wall_s);
  std::printf("  events         %llu history events (%.0f per wall s), %llu engine events (%.0f per wall s)\n",
              static_cast<unsigned long long>(r.history_events),
              static_cast<double>(r.history_events) / r.wall_s,
              static_cast<unsigned long long>(r.engine_events),
              static_cast<double>(r.engine_events) / r.wall_s);
  std::printf("  peak RSS       %.1f MiB (VmHWM, simulating and checking)\n", r.peak_kb / 1024.0);
  if (r.history_bytes >= 0) {
    std::printf("  history file   %.1f MiB, %.1f bytes per event; read back in %.2f s\n",
                r.history_bytes / 1048576.0,
                r.history_events > 0 ? static_cast<double>(r.history_bytes) / r.history_events : 0.0,
                r.read_s);
  }
  if (r.reports_s >= 0) {
    std::printf("  reports        %.2f s wall (%.2f s CPU); peak RSS with them %.1f MiB\n", r.reports_s,
                r.reports_cpu_s, r.peak_with_reports_kb / 1024.0);
  }
  std::printf("  floor          %llu script executions alone on the emulator (%s): %.2f s\n",
              static_cast<unsigned long long>(r.scripts), r.version.c_str(), r.floor_s);
  std::printf("  overhead       %.2fx (fastest run / fastest floor)\n", r.wall_s / r.floor_s);
  const std::vector<double>& q = r.round_ratios;
  if (!q.empty()) {
    std::printf("  per round      %.2fx median of %zu rounds (%.2f to %.2f), each the run over a "
                "floor measured right after it\n",
                q.size() % 2 ? q[q.size() / 2] : (q[q.size() / 2 - 1] + q[q.size() / 2]) / 2,
                q.size(), q.front(), q.back());
  }
}

// The figures long runs are judged by, from this run's cases (by their number).
void PrintRatios(const std::vector<CaseResult>& results) {
  const auto find = [&](char number) -> const CaseResult* {
    for (const CaseResult& r : results) {
      if (!r.name.empty() && r.name[0] == number) return &r;
    }
    return nullptr;
  };
  const CaseResult* alone = find('0');
  const CaseResult* none = find('1');
  std::printf("\nratios\n");
  if (alone != nullptr) {
    std::printf("  simulator alone         %.2fx its scripts alone\n", alone->wall_s / alone->floor_s);
  }
  if (none != nullptr) {
    std::printf("  checkers on, no history %.2fx its scripts alone (target: at most 1.5x)\n",
                none->wall_s / none->floor_s);
  }
  for (char c : {'2', '4', '5'}) {
    const CaseResult* r = find(c);
    if (r == nullptr) continue;
    const char* form = c == '2' ? "binary  " : c == '4' ? "jsonl   " : "jsonl.gz";
    if (none != nullptr) {
      std::printf("  history %s        +%.0f%% wall over case 1 (target: at most +30%%)",
                  form, 100.0 * (r->wall_s / none->wall_s - 1));
    } else {
      std::printf("  history %s       ", form);
    }
    if (r->history_bytes >= 0 && r->sim_s > 0) {
      std::printf(", %.1f MB per simulated hour (target: at most 100), %.1f bytes per event",
                  r->history_bytes / 1e6 * 3600 / r->sim_s,
                  r->history_events > 0 ? static_cast<double>(r->history_bytes) / r->history_events : 0.0);
    }
    std::printf("\n");
    if (r->reports_s >= 0) {
      std::printf("  reports from %s     %.2f s (%.2f s CPU), %.2fx the run's wall time, %.2f s per "
                  "simulated hour (target for case 2: at most 1.5)\n",
                  form, r->reports_s, r->reports_cpu_s, r->reports_s / r->wall_s,
                  r->reports_s * 3600 / r->sim_s);
    }
  }
  if (const CaseResult* big = find('3'); big != nullptr && big->reports_s >= 0) {
    std::printf("  %s: reports %.2f s against the run's %.2f s (target: at most the run's)\n",
                big->name.substr(3, big->name.find(',') - 3).c_str(), big->reports_s, big->wall_s);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int64_t duration_ms = 3'600'000;
  int clients = 100;
  std::string cases = "0,1,2,3,4,5";
  int repeat = 1;
  std::string readers = "thread";
  std::string out = (std::filesystem::temp_directory_path() / "lockstep-bench-sim").string();
  std::string lua_dir = LOCKSTEP_SOURCE_DIR "/lua";
  po::options_description desc("bench_sim: the simulator's cost beyond its scripts\n\nOptions");
  desc.add_options()("help,h", "show this help")(
      "duration-ms", po::value(&duration_ms)->default_value(duration_ms), "simulated time per case")(
      "clients", po::value(&clients)->default_value(clients), "clients of case 3")(
      "cases", po::value(&cases)->default_value(cases), "which cases to run (0 to 5)")(
      "out", po::value(&out)->default_value(out), "where the histories and reports go")(
      "repeat", po::value(&repeat)->default_value(repeat),
      "run each case this many times and keep the fastest (floors: at least 3)")(
      "readers", po::value(&readers)->default_value(readers),
      "where the facts pass, the checkers and the writer run: 'thread' (their own, as `lockstep "
      "run` does) or 'inline' (on the simulator's)")(
      "lua-dir", po::value(&lua_dir)->default_value(lua_dir), "the lock scripts");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "bench_sim: " << e.what() << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  if (readers != "thread" && readers != "inline") {
    std::cerr << "bench_sim: --readers must be 'thread' or 'inline', not '" << readers << "'\n";
    return 2;
  }
  if (repeat < 1) {
    std::cerr << "bench_sim: --repeat must be at least 1\n";
    return 2;
  }
  ScenarioError error;
  auto base = LoadScenarioFile(LOCKSTEP_SOURCE_DIR "/scenarios/contention-10.toml", &error);
  if (!base) {
    std::cerr << error.ToString() << "\n";
    return 2;
  }
  base->duration_us = duration_ms * 1000;
  std::printf("bench_sim: %.0f simulated s per case, scenario contention-10 (seed %llu)\n\n",
              static_cast<double>(base->duration_us) / 1e6, static_cast<unsigned long long>(base->seed));
  std::vector<CaseResult> results;
  auto run = [&](const char* name, const Scenario& s, history::HistoryFormat f, bool reports,
                 const std::string& dir, bool sim_only = false) {
    auto r = RunCase(name, s, lua_dir, f, reports, dir, repeat, readers == "thread", sim_only);
    if (!r) return false;
    Print(*r);
    std::fflush(stdout);
    results.push_back(*r);
    return true;
  };
  if (cases.find('0') != std::string::npos &&
      !run("0. contention-10, the simulator alone (nothing reads its events)", *base,
           history::HistoryFormat::kNone, false, out + "/c10-alone", /*sim_only=*/true)) {
    return 1;
  }
  if (cases.find('1') != std::string::npos &&
      !run("1. contention-10, --history none (checkers on)", *base, history::HistoryFormat::kNone,
           false, out + "/c10-none")) {
    return 1;
  }
  if (cases.find('2') != std::string::npos &&
      !run("2. contention-10, --history binary (the default), then the reports", *base,
           history::HistoryFormat::kBinary, true, out + "/c10-binary")) {
    return 1;
  }
  if (cases.find('3') != std::string::npos) {
    Scenario big = *base;
    const ClientSpec model = big.clients.front();
    big.clients.clear();
    for (int i = 1; i <= clients; ++i) {
      ClientSpec c = model;
      c.name = "c" + std::to_string(i);
      big.clients.push_back(c);
    }
    big.name = "contention-" + std::to_string(clients);
    const std::string name =
        "3. contention-" + std::to_string(clients) + ", --history binary, then the reports";
    if (!run(name.c_str(), big, history::HistoryFormat::kBinary, true, out + "/big-binary")) return 1;
  }
  if (cases.find('4') != std::string::npos &&
      !run("4. contention-10, --history jsonl, then the reports", *base, history::HistoryFormat::kJsonl,
           true, out + "/c10-jsonl")) {
    return 1;
  }
  if (cases.find('5') != std::string::npos &&
      !run("5. contention-10, --history jsonl.gz, then the reports", *base,
           history::HistoryFormat::kJsonlGz, true, out + "/c10-jsonl-gz")) {
    return 1;
  }
  PrintRatios(results);
  return 0;
}
