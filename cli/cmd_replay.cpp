// lockstep replay: the scenario simulated, then run live on real redis-server processes with
// its faults made real, both judged by the same checkers, and compared.
#include <signal.h>
#include <unistd.h>

#include <boost/program_options.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <sstream>

#include "check/check.h"
#include "check/compare.h"
#include "cli/ci_outputs.h"
#include "cli/common.h"
#include "cli/run_store.h"
#include "cli/subcommands.h"
#include "history/jsonl.h"
#include "history/writer.h"
#include "live/replay.h"
#include "live/support.h"
#include "model/scenario_scale.h"
#include "model/scenario_toml.h"
#include "pipeline/pipeline.h"
#include "reports/report.h"
#include "sim/simulation.h"

namespace po = boost::program_options;

namespace lockstep::cli {

namespace {

// Timers this late get a note beside a --strict failure (the time-scaled timeouts are some
// hundreds of milliseconds).
constexpr int64_t kLateTimersNoteUs = 20'000;

const char* kReplayHelp =
    "usage: lockstep replay SCENARIO.toml [--time-scale F] [--seed N] [--out DIR] [options]\n"
    "\n"
    "Runs the scenario twice with the same seed: in the simulator, and live, in real time, on\n"
    "real redis-server processes that lockstep starts (one per [[nodes]] entry, on free\n"
    "loopback ports, each in a temporary directory), through the same lock protocols, with\n"
    "the scenario's faults made real: node pauses by SIGSTOP, crashes by SIGKILL and a restart\n"
    "from the node's directory, partitions, lost replies, latency and loss by a fault proxy on\n"
    "every client->node and replication link, node clock offsets, drift and jumps by a time\n"
    "shim preloaded into each server, failovers by REPLICAOF NO ONE or the real Sentinel.\n"
    "Both histories go through the same checkers; then the two runs are compared: per\n"
    "property, the simulated and the live verdict; per client operation, whether the outcomes\n"
    "agree; and the first point where they diverge. Timing jitter is expected live; a verdict\n"
    "that differs is a finding (docs/live.md).\n"
    "\n"
    "A live run lasts as long as the scenario says, in real time: --time-scale 0.1 runs a\n"
    "simulated minute in six seconds with every ratio kept (both runs use the scaled scenario).\n"
    "Sentinel keeps about 1.5 s of every failover that no setting scales: a [sentinel]\n"
    "scenario is refused at a scale where that exceeds half its down_after_ms (the message\n"
    "names the smallest scale that works), and a difference that comes with a failover\n"
    "landing at another moment live is told as such, not as a finding.\n"
    "\n"
    "What cannot be made real (duplicated messages, reordering) is refused before anything\n"
    "starts, with a message per item. Every process lockstep starts is stopped by its pid when\n"
    "the replay ends, fails or is interrupted (Ctrl-C, SIGTERM, SIGHUP: what was written is\n"
    "kept).\n"
    "\n"
    "Writes DIR/history.jsonl, DIR/report.html, DIR/trace.json, DIR/summary.md and\n"
    "DIR/summary.txt for the live run, DIR/comparison.txt, and the simulated run in DIR/sim/.\n"
    "DIR/report.html shows both runs: both verdicts per property, the operations' agreement\n"
    "per thread, the first divergence, and both timelines on one time axis (live above);\n"
    "DIR/summary.md has the comparison too.\n"
    "\n"
    "With --redis HOST:PORT[,...] the live run uses servers you run instead (one independent\n"
    "master per [[nodes]] entry, in order): the workload and the network faults (through the\n"
    "fault proxy) are replayed, faults that need control of the server processes are refused.\n"
    "lockstep touches only keys and channels under a run prefix it prints\n"
    "(lockstep:<seed>:<random id>:), sends no command without such a key (never FLUSHALL,\n"
    "FLUSHDB, CONFIG, DEBUG, SHUTDOWN), and deletes what is left under the prefix at the end.\n"
    "\n"
    "Exit status: 0 the live verdict matches [expect], 1 it does not (with --strict: also when\n"
    "a property's simulated and live verdicts differ), 2 bad input, a server that cannot be\n"
    "started or a --redis server that cannot be used, 130 interrupted (SIGINT; 143 SIGTERM,\n"
    "129 SIGHUP).\n"
    "\n"
    "Example:\n"
    "  lockstep replay scenarios/gc-pause-explicit-lease.toml --time-scale 0.1\n"
    "\n"
    "Options";

// Reports from history files, written by `write`; false (with a message) if they could not be
// written, which costs neither the history nor the verdict.
bool WriteReports(const std::string& out_dir,
                  const std::function<bool(std::vector<reports::WrittenFile>*, std::string*)>& write) {
  std::vector<reports::WrittenFile> written;
  std::string error;
  bool ok = false;
  try {
    ok = write(&written, &error);
  } catch (const std::exception& e) {
    error = std::string("internal error while writing reports: ") + e.what();
  }
  if (!ok) std::cerr << "lockstep replay: reports in " << out_dir << " not written: " << error << "\n";
  return ok;
}

}  // namespace

// Client operations the run made, and how many of them ended ok.
std::pair<size_t, size_t> OkCount(const check::OperationLog& ops) {
  size_t tried = 0, ok = 0;
  for (const auto& [thread, list] : ops.threads()) {
    for (const check::OperationLog::Operation& op : list) {
      ++tried;
      ok += op.outcome == history::EventType::kOk;
    }
  }
  return {tried, ok};
}

int ReplayMain(const std::vector<std::string>& args) {
  std::string file, out_dir, lua_dir = DefaultLuaDir(), json_path, junit_path;
  uint64_t seed = 0;
  int64_t duration_ms = 0;
  double time_scale = 1;
  bool strict = false, quiet = false, force = false;
  std::string redis;
  po::options_description desc(kReplayHelp);
  desc.add_options()("help,h", "show this help")(
      "seed", po::value(&seed), "override the scenario's seed")(
      "duration-ms", po::value(&duration_ms), "override the scenario's duration_ms")(
      "time-scale", po::value(&time_scale),
      "multiply every duration of the scenario by this factor (after --duration-ms)")(
      "out", po::value(&out_dir),
      "output directory (default: a new folder of the run store, "
      "lockstep-out/<scenario>/<time>-seed<N>-live)")(
      "force", po::bool_switch(&force), "replace the run an existing --out holds")(
      "lua-dir", po::value(&lua_dir)->default_value(lua_dir),
      "where the default lock scripts live (also $LOCKSTEP_LUA_DIR)")(
      "strict", po::bool_switch(&strict),
      "exit 1 also when a property's simulated and live verdicts differ")(
      "quiet,q", po::bool_switch(&quiet),
      "no progress lines, no details: the verdicts, the comparison, the reproduce command and "
      "the result")(
      "json", po::value(&json_path),
      "also write the live verdict as JSON to this file (schema lockstep-run/1, docs/ci.md)")(
      "junit", po::value(&junit_path),
      "also write JUnit XML of the live verdict to this file: one testcase per property")(
      "redis", po::value(&redis),
      "HOST:PORT[,...]: replay the workload on these servers (yours, one master per node, in "
      "the scenario's order) instead of starting any; keys only under a run prefix, deleted "
      "at the end");
  po::options_description hidden;
  hidden.add_options()("scenario", po::value(&file));
  po::variables_map vm;
  if (std::optional<int> done = ParseArgs("replay", args, desc, hidden, "scenario", &vm)) return *done;
  if (file.empty()) {
    std::cerr << "lockstep replay: which scenario? e.g. lockstep replay "
                 "scenarios/gc-pause-explicit-lease.toml --time-scale 0.1\n";
    return kExitBadInput;
  }
  std::optional<Scenario> loaded =
      LoadScenarioForRun("replay", file, RunOverrides{seed, duration_ms, time_scale}, vm);
  if (!loaded) return kExitBadInput;
  Scenario scenario = std::move(*loaded);
  if (!OutputsSpareInput("replay", scenario.file, {{"--json", json_path}, {"--junit", junit_path}})) {
    return kExitBadInput;
  }
  const bool on_user_servers = vm.count("redis") > 0;
  const std::vector<std::string> refusals = live::LiveRefusals(scenario, !on_user_servers, time_scale);
  if (!refusals.empty()) {
    std::cerr << "lockstep replay: the scenario asks for what a live run cannot make real"
              << (on_user_servers ? " on servers lockstep did not start (--redis)" : "") << ":\n";
    for (const std::string& r : refusals) std::cerr << "  " << r << "\n";
    return kExitBadInput;
  }
  // --redis: the user's servers, checked (by reading only) before anything runs.
  std::vector<live::UserServer> user_servers;
  std::shared_ptr<const live::RunKeyspace> keyspace;
  if (on_user_servers) {
    std::string why;
    std::optional<std::vector<live::UserServer>> mapped = live::MapUserServers(scenario, redis, &why);
    if (!mapped || !live::CheckUserServers(&*mapped, &why)) {
      std::cerr << "lockstep replay: " << why << "\n";
      return kExitBadInput;
    }
    user_servers = std::move(*mapped);
    keyspace = std::make_shared<const live::RunKeyspace>(live::RunKeyspace::ForRun(scenario.seed));
    if (!live::CheckUserServersRunScripts(user_servers, *keyspace, &why)) {
      std::cerr << "lockstep replay: " << why << "\n";
      return kExitBadInput;
    }
  }
  // As run: a new folder of the run store without --out; an --out holding a run needs --force.
  bool stored = false;
  if (std::optional<int> stop =
          ChooseRunDir("replay", scenario.name, "seed" + std::to_string(scenario.seed) + "-live",
                       force, {"sim"}, &out_dir, &stored)) {
    return *stop;
  }
  const std::string sim_dir = out_dir + "/sim";
  std::error_code ec;
  std::filesystem::create_directories(sim_dir, ec);
  if (ec) {
    std::cerr << "lockstep replay: cannot create " << sim_dir << ": " << ec.message() << "\n";
    return kExitBadInput;
  }
  std::string reproduce = "lockstep replay " + ShellQuote(file) + " --seed " + std::to_string(scenario.seed);
  if (vm.count("duration-ms")) reproduce += " --duration-ms " + std::to_string(duration_ms);
  if (vm.count("time-scale")) reproduce += " --time-scale " + FormatFactor(time_scale);
  if (on_user_servers) reproduce += " --redis " + ShellQuote(redis);

  std::ostringstream head;
  head << "scenario   " << scenario.name << " (" << file << ")\n";
  head << "seed       " << scenario.seed << "\n";
  head << "duration   " << Seconds(scenario.duration_us) << " of real time";
  if (vm.count("time-scale")) head << " (every duration times " << FormatFactor(time_scale) << ")";
  head << "\n";
  if (keyspace != nullptr) {
    head << "servers    yours (--redis " << redis << "); every key and channel of the run under "
         << keyspace->prefix() << "\n";
  }
  // -q hides the details, never what lockstep touches on this machine or on the user's
  // servers: the run's key prefix (--redis) and the servers it started, with their pids.
  const auto shown_quietly = [](const std::string& text, std::initializer_list<const char*> kept) {
    std::istringstream in(text);
    std::string out;
    for (std::string line; std::getline(in, line);) {
      for (const char* prefix : kept) {
        if (line.rfind(prefix, 0) == 0) {
          out += line + "\n";
          break;
        }
      }
    }
    return out;
  };
  std::cout << (quiet ? shown_quietly(head.str(), {"servers    "}) : head.str()) << std::flush;

  InterruptScope interrupt;

  // --- the simulated run ---
  std::string error;
  auto sim = sim::Simulation::Create(scenario, lua_dir, &error);
  if (!sim) {
    std::cerr << file << ": " << error << "\n";
    return kExitBadInput;
  }
  check::OperationLog sim_ops(&sim->recorder().names());
  sim->recorder().AddSink(&sim_ops);
  PipelineOptions sim_pipeline;
  sim_pipeline.history_path = sim_dir + "/" + history::HistoryFileName(history::HistoryFormat::kJsonl);
  sim_pipeline.interrupted = interrupt.flag();
  std::optional<PipelineResult> sim_run = RunPipeline(*sim, scenario, sim_pipeline, &error);
  if (!sim_run) {
    std::cerr << "lockstep replay: " << error << "\n";
    return kExitFailed;
  }
  reports::ReportMeta meta;
  reports::DescribeScenario(scenario, &meta);
  meta.scenario_file = file;
  meta.version = LOCKSTEP_VERSION;
  meta.parameters = sim->derived();
  meta.reproduce = reproduce;
  const reports::ReportMeta sim_meta = meta;
  WriteReports(sim_dir, [&](std::vector<reports::WrittenFile>* written, std::string* error) {
    ReportsProgressLine progress(quiet, sim_run->end_us);
    return reports::WriteReportsFromFile(sim_pipeline.history_path, sim_run->verdict, sim_meta,
                                         sim_dir, written, error, progress.progress());
  });
  if (!quiet) {
    std::cerr << "simulated: " << sim_run->history_events << " history events, "
              << (sim_run->verdict.AnyViolated() ? "a property violated" : "every property holds")
              << " (" << sim_dir << ")\n";
  }
  if (interrupt.interrupted()) {
    std::cerr << "lockstep replay: interrupted during the simulated run\n";
    return interrupt.exit_status();
  }

  // --- the live run ---
  history::Recorder recorder;
  check::OperationLog live_ops(&recorder.names());
  recorder.AddSink(&live_ops);
  if (!quiet) {
    std::cerr << (keyspace != nullptr ? "live: starting the fault proxy and the clients ...\n"
                                      : "live: starting the servers, the fault proxy and the clients ...\n");
  }
  live::ReplayOptions replay_options;
  replay_options.lua_dir = lua_dir;
  replay_options.user_servers = user_servers;
  replay_options.keyspace = keyspace;
  replay_options.time_scale = time_scale;
  std::unique_ptr<live::Replay> replay =
      live::Replay::Start(scenario, replay_options, recorder, &error);
  if (!replay) {
    std::cerr << "lockstep replay: cannot start the live run: " << error << "\n";
    return kExitBadInput;
  }
  std::ostringstream parameters;
  for (const auto& [name, value] : replay->derived()) parameters << "  " << name << ": " << value << "\n";
  std::cout << (quiet ? shown_quietly(parameters.str(), {"  server ", "  key prefix:", "  sentinel"})
                     : parameters.str())
            << std::flush;
  if (!quiet) std::cerr << "live: running " << Seconds(scenario.duration_us) << " of real time ...\n";
  PipelineOptions live_pipeline;
  // A live run is bound by real time, not by the checkers: they stay on the driver's thread,
  // leaving the cores to the redis-servers and the proxy, as the live timings assume.
  live_pipeline.readers_thread = false;
  live_pipeline.history_path = out_dir + "/" + history::HistoryFileName(history::HistoryFormat::kJsonl);
  live_pipeline.interrupted = interrupt.flag();
  std::optional<PipelineResult> live_run = RunPipelineWith(
      recorder, scenario, live_pipeline,
      [&](const std::function<bool()>& should_stop) {
        replay->Run(should_stop);
        return DriveOutcome{replay->commands_sent(), replay->end_us(), replay->interrupted()};
      },
      &error);
  const std::string program_error = replay->program_error();
  const std::vector<std::string> fault_notes = replay->fault_notes();
  const int64_t timers_late_max_us = replay->timers_late_max_us();
  const std::vector<std::pair<std::string, std::string>> live_parameters = replay->derived();
  // Every server, sentinel and proxy it started is stopped here; on the user's servers, what
  // is left under the run's prefix is deleted.
  const std::vector<std::string> cleanup = replay->Stop();
  replay.reset();
  if (!live_run) {
    std::cerr << "lockstep replay: " << error << "\n";
    for (const std::string& c : cleanup) std::cerr << "lockstep replay: " << c << "\n";
    return kExitFailed;
  }
  if (!program_error.empty()) {
    // The simulated run got past the point where the live one failed: timing the live run
    // has and the simulated one had not. Bad input all the same, as in `lockstep run`.
    std::cerr << "lockstep replay: " << file << ": the live run stopped: " << program_error << "\n";
    for (const std::string& c : cleanup) std::cerr << "lockstep replay: " << c << "\n";
    return kExitBadInput;
  }
  const bool interrupted = live_run->interrupted;
  meta.parameters = live_parameters;

  // --- verdicts and comparison ---
  const check::RunComparison comparison =
      check::CompareRuns(sim_run->verdict, sim_ops, live_run->verdict, live_ops);
  // The live run's reports show the simulated run too (its own reports are in sim/); if the
  // simulated history cannot be read again, the live run still gets its own.
  const bool both = WriteReports(out_dir, [&](std::vector<reports::WrittenFile>* written,
                                              std::string* error) {
    return reports::WriteComparisonReportsFromFiles(
        live_pipeline.history_path, live_run->verdict, meta, sim_pipeline.history_path,
        sim_run->verdict, sim_meta, comparison, out_dir, written, error);
  });
  if (!both) {
    WriteReports(out_dir, [&](std::vector<reports::WrittenFile>* written, std::string* error) {
      return reports::WriteReportsFromFile(live_pipeline.history_path, live_run->verdict, meta,
                                           out_dir, written, error);
    });
  }
  const std::string compared = check::FormatComparison(comparison);
  const check::Judgement judgement = check::Judge(live_run->verdict, scenario.expect);
  std::ostringstream body;
  body << "live " << FormatVerdict(live_run->verdict, scenario.expect);
  for (const std::string& n : fault_notes) body << "  fault not applied as asked: " << n << "\n";
  for (const std::string& c : cleanup) body << "clean-up   " << c << "\n";
  body << compared;
  std::ostringstream tail;
  char figures[256];
  std::snprintf(figures, sizeof(figures),
                "live       %.3f s of real time, %llu commands sent, %llu history events, timers up to "
                "%.1f ms late\n",
                static_cast<double>(live_run->end_us) / 1e6,
                static_cast<unsigned long long>(live_run->engine_events),
                static_cast<unsigned long long>(live_run->history_events),
                static_cast<double>(timers_late_max_us) / 1e3);
  // -q, as for run: the verdicts, the comparison, the reproduce command and the result; the
  // figures and files are in summary.txt all the same.
  std::ostringstream details;
  details << figures << "history    " << live_pipeline.history_path << " (simulated: "
          << sim_pipeline.history_path << ")\n"
          << "reports    " << out_dir << "/report.html, trace.json, summary.md (simulated: "
          << sim_dir << "/)\n";
  tail << details.str() << "reproduce  " << reproduce << "\n";
  int status = kExitOk;
  if (interrupted) {
    tail << "result     INTERRUPTED at " << Seconds(live_run->end_us) << " of "
         << Seconds(scenario.duration_us) << ": the live verdict above is of that prefix\n";
    status = interrupt.exit_status();
  } else if (const auto [tried, succeeded] = OkCount(live_ops); tried > 0 && succeeded == 0) {
    // A run in which no operation succeeded tested nothing about the lock, whatever its
    // verdict says (a server that fails every script, a network that drops everything).
    tail << "result     FAIL: no live operation succeeded (" << tried
         << " tried): nothing about the lock was tested\n";
    status = kExitFailed;
  } else if (!judgement.matches) {
    tail << "result     FAIL: the live verdict does not match the scenario's expectations:\n";
    for (const std::string& m : judgement.mismatches) tail << "             " << m << "\n";
    status = kExitFailed;
  } else if (strict && comparison.verdicts_differ) {
    tail << "result     FAIL (--strict): the simulated and the live verdicts differ\n";
    if (timers_late_max_us >= kLateTimersNoteUs) {
      tail << "           (the live run's timers fired up to " << timers_late_max_us / 1000
           << " ms late: on a loaded machine a larger --time-scale leaves the clients'\n"
           << "           timeouts more room; a difference that stays is a finding)\n";
    }
    status = kExitFailed;
  } else {
    tail << "result     PASS: the live verdict matches the scenario's expectations"
         << (comparison.verdicts_differ ? " (the simulated one differs: see above)" : "") << "\n";
  }
  if (quiet) {
    std::string shown = tail.str();
    shown.erase(0, details.str().size());
    std::cout << body.str() << shown;
  } else {
    std::cout << body.str() << tail.str();
  }
  error.clear();
  if (!WriteWholeFile(out_dir + "/summary.txt",
                      head.str() + parameters.str() + body.str() + tail.str(), &error) ||
      !WriteWholeFile(out_dir + "/comparison.txt", compared, &error)) {
    std::cerr << "lockstep replay: " << error << "\n";
    return kExitFailed;
  }
  if (!json_path.empty() || !junit_path.empty()) {
    RunRecord record;
    record.scenario = &scenario;
    record.file = file;
    record.verdict = &live_run->verdict;
    record.judgement = &judgement;
    record.interrupted = interrupted;
    record.end_us = live_run->end_us;
    record.history_format = "jsonl";
    record.history_path = live_pipeline.history_path;
    record.history_events = live_run->history_events;
    record.history_hash = history::HashHex(live_run->history_hash);
    record.reproduce = reproduce;
    record.wall_s = live_run->wall_s;
    if (!json_path.empty() && !WriteWholeFile(json_path, RunJson(record), &error)) {
      std::cerr << "lockstep replay: --json: " << error << "\n";
      return kExitFailed;
    }
    if (!junit_path.empty() && !WriteWholeFile(junit_path, RunJunit(record), &error)) {
      std::cerr << "lockstep replay: --junit: " << error << "\n";
      return kExitFailed;
    }
  }
  if (stored && !UpdateRunStore(RunStoreRoot(), out_dir, &error)) {
    std::cerr << "lockstep replay: " << error << "\n";
    return status == kExitOk ? kExitFailed : status;
  }
  return status;
}

}  // namespace lockstep::cli
