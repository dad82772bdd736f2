// lockstep report: a saved history -> checkers -> Verdict -> report.html, trace.json, summary.md.
//
// The same files `lockstep run` writes, rebuilt from the history file alone (the checkers run
// again on it). With --scenario the report also knows the scenario's expectations, its layout
// (nodes that never ran a command, idle threads), its clocks' start and the lock scripts' SHAs,
// and then matches what `run` wrote byte for byte.
#include <boost/program_options.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <filesystem>
#include <iostream>

#include "check/check.h"
#include "cli/ci_outputs.h"
#include "cli/common.h"
#include "cli/subcommands.h"
#include "history/jsonl.h"
#include "history/notes.h"
#include "history/reader.h"
#include "model/scenario_toml.h"
#include "reports/report.h"
#include "sim/simulation.h"

namespace po = boost::program_options;

namespace lockstep::cli {

namespace {

const char* kReportHelp =
    "usage: lockstep report HISTORY [--scenario FILE] [--out DIR]\n"
    "\n"
    "Checks a saved history again and writes the reports `lockstep run` writes:\n"
    "  report.html  a self-contained timeline (open it from disk): a lane per client thread\n"
    "               and Redis node, faults, clocks, the violation highlighted\n"
    "  trace.json   Chrome Trace Event format, for ui.perfetto.dev or chrome://tracing\n"
    "  summary.md   verdicts, the violation and the key figures, to paste into a pull request\n"
    "\n"
    "--scenario adds what the history does not record: the [expect] section, the scenario's\n"
    "nodes and threads, its start time (for clock offsets) and the lock scripts' SHA-1s.\n"
    "\n"
    "HISTORY is a run's history file in any form: history.bin (run's default), history.jsonl\n"
    "or history.jsonl.gz. It is checked as it is read: a regular file, not empty, each line\n"
    "(or record) an event with \"seq\" (its index, no gaps), \"t\" and \"type\", ids and sizes\n"
    "within bounds (docs/history.md, \"What a reader accepts\"); anything else is refused with\n"
    "the file and the line (or event), before any report is written.\n"
    "\n"
    "A long run's report.html keeps detail around the start, the violations and the faults;\n"
    "--detail-at SECONDS anchors it at another moment (the overview shows the whole run).\n"
    "A crowded run draws 48 thread lanes; --lanes names the ones to draw first.\n"
    "\n"
    "It prints the verdict. With --scenario it is judged against the scenario's [expect], as\n"
    "`run` judges it; without, every property must hold.\n"
    "\n"
    "Exit status: 0 the verdict matches (without --scenario: nothing violated), 1 it does\n"
    "not, or a file could not be written (nothing half-written is left); 2 bad input (a flag,\n"
    "a history refused as above, the scenario file).\n"
    "\n"
    "Example:\n"
    "  lockstep run scenarios/gc-pause-explicit-lease.toml --out /tmp/gc\n"
    "  lockstep report /tmp/gc/history.bin --scenario scenarios/gc-pause-explicit-lease.toml\n"
    "\n"
    "Options";

// The run note's end_us: the duration the run was asked for (the notes come first).
class RunNoteReader : public history::EventSink {
 public:
  void OnEvent(const history::Event& e) override {
    if (const auto run = history::AsRunNote(e)) end_us_ = run->end_us;
  }
  int64_t end_us() const { return end_us_; }

 private:
  int64_t end_us_ = 0;
};

}  // namespace

int ReportMain(const std::vector<std::string>& args) {
  std::string history_path, scenario_file, out_dir, lua_dir = DefaultLuaDir(), json_path,
      junit_path;
  bool quiet = false;
  double detail_at_s = -1;
  std::string lanes;
  po::options_description desc(kReportHelp);
  desc.add_options()("help,h", "show this help")("scenario", po::value(&scenario_file),
                                                 "the scenario file the history came from")(
      "out", po::value(&out_dir), "output directory (default: the history's directory)")(
      "lua-dir", po::value(&lua_dir)->default_value(lua_dir),
      "where the default lock scripts live, for their SHA-1s (also $LOCKSTEP_LUA_DIR)")(
      "detail-at", po::value(&detail_at_s),
      "anchor report.html's detail at this simulated second (a long run keeps detail around "
      "the start, the violations and the faults; elsewhere the overview's bins only)")(
      "lanes", po::value(&lanes),
      "client thread lanes to draw first in report.html, as shell patterns, comma-separated "
      "(\"c7.t0,c12*\"): a crowded run draws 48 thread lanes")(
      "json", po::value(&json_path),
      "also write the verdict as JSON to this file (schema lockstep-run/1, docs/ci.md)")(
      "junit", po::value(&junit_path),
      "also write JUnit XML to this file: one testcase per property")(
      "quiet,q", po::bool_switch(&quiet), "print only the verdict and the result");
  po::options_description hidden;
  hidden.add_options()("history", po::value(&history_path));
  po::variables_map vm;
  if (std::optional<int> done = ParseArgs("report", args, desc, hidden, "history", &vm)) return *done;
  if (history_path.empty()) {
    std::cerr
        << "lockstep report: which history? e.g. lockstep report lockstep-out/x/history.bin\n";
    return kExitBadInput;
  }
  for (const std::string& input : {history_path, scenario_file}) {
    if (!input.empty() &&
        !OutputsSpareInput("report", input, {{"--json", json_path}, {"--junit", junit_path}})) {
      return kExitBadInput;
    }
  }
  if (out_dir.empty()) {
    out_dir = std::filesystem::path(history_path).parent_path().string();
    if (out_dir.empty()) out_dir = ".";
  }

  const auto wall_start = std::chrono::steady_clock::now();
  std::string error;
  RunNoteReader run_note;
  {
    history::NameTable names;
    history::ReadStats head;
    history::ReadOptions first;
    first.max_events = 64;
    if (!history::ReadHistoryFile(history_path, &names, &run_note, &head, &error, first)) {
      std::cerr << "lockstep report: " << error << "\n";
      return kExitBadInput;
    }
  }

  reports::ReportMeta meta;
  meta.version = LOCKSTEP_VERSION;
  check::CheckOptions options;
  const int64_t end_us = run_note.end_us();
  std::map<std::string, Expectation> expect;  // Without a scenario: every property must hold.
  for (std::string_view property : history::kProperties) {
    expect[std::string(property)] = Expectation::kHold;
  }
  // What --json and --junit describe: the scenario file's, else what the history says of it.
  Scenario judged;
  if (!scenario_file.empty()) {
    ScenarioError scenario_error;
    std::optional<Scenario> scenario = LoadScenarioFile(ResolveScenario("report", scenario_file), &scenario_error);
    if (!scenario) {
      std::cerr << scenario_error.ToString() << "\n";
      return kExitBadInput;
    }
    // The run may have overridden the seed or the duration; the history knows which it used.
    reports::ReportMeta from_history;
    if (!reports::DescribeFromHistoryFile(history_path, &from_history, &error)) {
      std::cerr << "lockstep report: " << error << "\n";
      return kExitBadInput;
    }
    // The history names its scenario in its run note: another file's [expect] would judge it
    // by someone else's promises.
    if (!from_history.scenario_name.empty() && from_history.scenario_name != scenario->name) {
      std::cerr << "lockstep report: " << history_path << " is a history of scenario '"
                << Printable(from_history.scenario_name) << "', but " << scenario_file
                << " is scenario '" << scenario->name
                << "': give the scenario file the run used, or leave --scenario out to judge "
                   "the history by the rule that every property holds\n";
      return kExitBadInput;
    }
    if (from_history.seed) scenario->seed = *from_history.seed;
    const bool duration_overridden = end_us > 0 && end_us != scenario->duration_us;
    if (duration_overridden) scenario->duration_us = end_us;
    reports::DescribeScenario(*scenario, &meta);
    meta.scenario_file = scenario_file;
    expect = scenario->expect;
    judged = *scenario;
    std::string setup_error;
    // Only to learn the derived parameters (script SHA-1s, clocks): nothing is run.
    if (auto sim = sim::Simulation::Create(*scenario, lua_dir, &setup_error)) {
      meta.parameters = sim->derived();
    }
    meta.reproduce =
        "lockstep run " + ShellQuote(scenario_file) + " --seed " + std::to_string(scenario->seed);
    if (duration_overridden) meta.reproduce += " --duration-ms " + std::to_string(end_us / 1000);
    options.liveness_bound_us = scenario->liveness_bound_us;
    options.lease_default_us = scenario->protocol.watchdog_timeout_us;
  } else {
    if (!reports::DescribeFromHistoryFile(history_path, &meta, &error)) {
      std::cerr << "lockstep report: " << error << "\n";
      return kExitBadInput;
    }
    // Without the file, the scenario library's naming is the best guess at where it lives.
    meta.reproduce = "lockstep run scenarios/" +
                     (meta.scenario_name.empty() ? "SCENARIO" : meta.scenario_name) + ".toml" +
                     (meta.seed ? " --seed " + std::to_string(*meta.seed) : "");
    if (end_us > 0) meta.reproduce += " --duration-ms " + std::to_string(end_us / 1000);
  }

  if (vm.count("detail-at")) {
    const int64_t run_end = end_us > 0 ? end_us : INT64_MAX;
    if (!(detail_at_s >= 0) || detail_at_s * 1e6 > static_cast<double>(run_end)) {
      std::cerr << "lockstep report: --detail-at takes a simulated second from 0 to the run's end ("
                << Seconds(end_us) << "), not " << detail_at_s << "\n";
      return kExitBadInput;
    }
    meta.detail_at_us = static_cast<int64_t>(detail_at_s * 1e6);
  }
  for (size_t from = 0; !lanes.empty() && from <= lanes.size();) {
    const size_t comma = std::min(lanes.find(',', from), lanes.size());
    if (comma > from) meta.lane_patterns.push_back(lanes.substr(from, comma - from));
    from = comma + 1;
  }
  const auto read_end = std::chrono::steady_clock::now();
  history::ReadStats stats;
  const std::optional<check::Verdict> verdict =
      check::CheckHistoryFile(history_path, options, &error, &stats);
  if (!verdict) {
    std::cerr << "lockstep report: " << error << "\n";
    return kExitBadInput;
  }
  const auto check_end = std::chrono::steady_clock::now();
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) {
    std::cerr << "lockstep report: cannot create " << out_dir << ": " << ec.message() << "\n";
    return kExitBadInput;
  }
  std::vector<reports::WrittenFile> written;
  bool reports_ok = false;
  {
    ReportsProgressLine progress(quiet, end_us);
    reports_ok = reports::WriteReportsFromFile(history_path, *verdict, meta, out_dir, &written,
                                               &error, progress.progress());
  }
  if (!reports_ok) {
    std::cerr << "lockstep report: " << error << "\n";
    return kExitFailed;
  }
  const auto seconds = [](auto from, auto to) {
    return std::chrono::duration<double>(to - from).count();
  };
  const auto end = std::chrono::steady_clock::now();
  const check::Judgement judgement = check::Judge(*verdict, expect);
  std::cout << FormatVerdict(*verdict, expect) << std::flush;
  if (!json_path.empty() || !junit_path.empty()) {
    if (scenario_file.empty()) {
      judged.name = meta.scenario_name.empty() ? "history" : meta.scenario_name;
      if (meta.seed) judged.seed = *meta.seed;
      judged.duration_us = end_us;
      judged.expect = expect;
    }
    RunRecord record;
    record.scenario = &judged;
    record.file = scenario_file.empty() ? history_path : scenario_file;
    record.verdict = &*verdict;
    record.judgement = &judgement;
    record.end_us = end_us;
    record.history_format = history::HistoryFileForm(history_path);
    record.history_path = history_path;
    record.history_events = stats.events;
    record.history_hash = history::HashHex(stats.hash);
    record.reports = written;
    record.reproduce = meta.reproduce;
    record.wall_s = seconds(wall_start, check_end);
    record.reports_s = seconds(check_end, end);
    std::string write_error;
    if (!json_path.empty() && !WriteWholeFile(json_path, RunJson(record), &write_error)) {
      std::cerr << "lockstep report: --json: " << write_error << "\n";
      return kExitFailed;
    }
    if (!junit_path.empty() && !WriteWholeFile(junit_path, RunJunit(record), &write_error)) {
      std::cerr << "lockstep report: --junit: " << write_error << "\n";
      return kExitFailed;
    }
  }
  if (!quiet) {
    for (const reports::WrittenFile& f : written) {
      std::printf("wrote      %s (%.1f KiB)\n", f.path.c_str(),
                  static_cast<double>(f.bytes) / 1024);
      if (!f.note.empty()) std::printf("           %s\n", f.note.c_str());
    }
    std::printf("from       %s (%llu events, hash %s)%s\n", history_path.c_str(),
                static_cast<unsigned long long>(stats.events), history::HashHex(stats.hash).c_str(),
                stats.truncated ? ", its last line cut short" : "");
    std::printf("wall       read %.2f s, checked %.2f s, rendered %.2f s\n",
                seconds(wall_start, read_end), seconds(read_end, check_end),
                seconds(check_end, end));
    std::fflush(stdout);
  }
  if (judgement.matches) {
    std::cout << "result     PASS: "
              << (scenario_file.empty() ? "no property violated"
                                        : "the verdict matches the scenario's expectations")
              << "\n";
    return kExitOk;
  }
  std::cout << "result     FAIL: "
            << (scenario_file.empty()
                    ? "properties violated (give --scenario to judge them by its [expect]):"
                    : "the verdict does not match the scenario's expectations:")
            << "\n";
  for (const std::string& m : judgement.mismatches) std::cout << "             " << m << "\n";
  return kExitFailed;
}

}  // namespace lockstep::cli
