// lockstep run: scenario file -> Scenario -> simulator -> History -> checkers -> verdict.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/program_options.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "check/check.h"
#include "pipeline/pipeline.h"
#include "cli/ci_outputs.h"
#include "cli/common.h"
#include "cli/run_store.h"
#include "cli/seeds.h"
#include "cli/subcommands.h"
#include "history/jsonl.h"
#include "history/writer.h"
#include "locks/factory.h"
#include "model/scenario_scale.h"
#include "model/scenario_toml.h"
#include "reports/report.h"
#include "reports/text.h"
#include "sim/simulation.h"

namespace po = boost::program_options;

namespace lockstep::cli {

namespace {

const char* kRunHelp =
    "usage: lockstep run SCENARIO.toml [--seed N] [--out DIR] [options]\n"
    "\n"
    "Simulates the scenario deterministically (virtual time: clients, Redis nodes, clocks,\n"
    "network, faults), checks the recorded history, and compares the verdict with the\n"
    "scenario's [expect] section. The same scenario and seed always give the same history\n"
    "(its hash is printed), so any run can be replayed exactly.\n"
    "\n"
    "Properties checked (see docs/scenario-format.md):\n"
    "  mutual_exclusion    no two threads believe they hold the lock at the same true time\n"
    "  resource_exclusion  no two accesses to the protected resource overlap\n"
    "  reentrancy          hold counts and unlock results are right; a non-owner releases nothing\n"
    "  lease_safety        nobody acts as holder after its key expired or was lost on its node\n"
    "  liveness            crashed holders' locks come free; nobody waits while it is free;\n"
    "                      nothing is stuck at the end; nothing is left taken that nobody\n"
    "                      holds (orphaned locks, leaked permits, orphaned latch counts);\n"
    "                      a lock nobody holds can be obtained (MultiLock with a node down)\n"
    "  fairness            a fair lock grants in queue order; each exception has its reason\n"
    "  fencing             the resource sees fencing tokens only increase\n"
    "  rw_exclusion        no writer overlaps a reader or another writer\n"
    "  semaphore           never more permit holders than permits\n"
    "  latch               a count-down latch's await returns only once the count reached 0\n"
    "  script_errors       no lock script or command answers an error the protocol does not\n"
    "                      expect; judged in every run (hold unless [expect] says otherwise)\n"
    "\n"
    "The history streams through the checkers as it happens (nothing holds the whole run)\n"
    "and to a file: with --history binary (the default) DIR/history.bin, compact (about 11\n"
    "bytes an event; `lockstep history dump DIR/history.bin` prints its JSON Lines); jsonl:\n"
    "DIR/history.jsonl, one event per line, about 150 bytes each; jsonl.gz: the same\n"
    "compressed, DIR/history.jsonl.gz; none: no file and no reports, the fastest, for\n"
    "searches that re-run what they want to keep. Then DIR/summary.txt and the reports:\n"
    "DIR/report.html (timeline), DIR/trace.json (Perfetto) and DIR/summary.md (for a pull\n"
    "request); `lockstep report DIR/history.bin` rebuilds them from the history.\n"
    "\n"
    "DIR is created, and checked to be writable, before the simulation starts. Ctrl-C\n"
    "(SIGINT), SIGTERM or SIGHUP stops the run where it is: the history written so far, its\n"
    "verdict, its reports and DIR/summary.txt are kept. A write that fails (a full disk, a\n"
    "file-size limit) stops the run at once with a message; the file it was writing is\n"
    "removed, so nothing half-written is left behind.\n"
    "\n"
    "For CI: --json FILE writes the verdict per property, its violations, the seed, the\n"
    "history's hash and the timings (schema: docs/ci.md); --junit FILE one testcase per\n"
    "property. A scenario whose [expect] judges nothing is refused unless --no-expect.\n"
    "--seeds A..B runs every seed of the range (in process, on every core), lists each in\n"
    "DIR/seeds.txt and runs the first failing one again in full.\n"
    "\n"
    "Exit status: 0 the verdict matches [expect], 1 it does not, or an output file could not\n"
    "be written; 2 bad input (a flag, the scenario, an --out that cannot be created or\n"
    "written); interrupted: 130 by SIGINT, 143 by SIGTERM, 129 by SIGHUP.\n"
    "\n"
    "Example:\n"
    "  lockstep run scenarios/contention-10.toml\n"
    "  lockstep run scenarios/gc-pause-explicit-lease.toml --seed 7 --out /tmp/gc\n"
    "  lockstep run scenarios/gc-pause-explicit-lease.toml --seeds 1..200 --junit seeds.xml\n"
    "\n"
    "Options";

// The process's peak resident memory so far (every thread's, the reports' included).
long PeakRssKb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// Creates `dir` and proves it writable by writing and removing a file in it, so that an --out
// that cannot take the results is refused before the simulation, not found after it.
bool PrepareOutDir(const std::string& dir, std::string* error) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    *error = "cannot create " + dir + ": " + ec.message();
    return false;
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    *error = dir + " is not a directory";
    return false;
  }
  std::string probe = dir + "/.lockstep-write-test-XXXXXX";
  const int fd = mkstemp(probe.data());
  if (fd < 0) {
    *error = "cannot write in " + dir + ": " + std::strerror(errno);
    return false;
  }
  const bool wrote = write(fd, "\n", 1) == 1;
  const int write_errno = errno;
  close(fd);
  unlink(probe.c_str());
  if (!wrote) {
    *error = "cannot write in " + dir + ": " + std::strerror(write_errno);
    return false;
  }
  return true;
}

// --seeds: runs every seed, prints and writes what it found. A value: the command is done, with
// that exit status. nullopt: a seed failed; *failing is the first, to run again in full.
std::optional<int> SweepSeeds(const std::string& file, const Scenario& scenario,
                              const std::string& lua_dir, std::pair<uint64_t, uint64_t> range,
                              int jobs, const std::string& out_dir, bool quiet,
                              const std::string& json_path, const std::string& junit_path,
                              const InterruptScope& interrupt, uint64_t* failing) {
  const uint64_t count = range.second - range.first + 1;
  // What it prints is kept too: the sweep's summary.txt when no seed is run again in full.
  std::ostringstream said;
  const auto say = [&said](const std::string& text) {
    std::cout << text << std::flush;
    said << text;
  };
  const auto finish = [&](int status) {
    std::string write_error;
    if (!WriteWholeFile(out_dir + "/summary.txt", said.str(), &write_error)) {
      std::cerr << "lockstep run: " << write_error << "\n";
      return kExitFailed;
    }
    return status;
  };
  std::ostringstream first_lines;
  first_lines << "scenario   " << scenario.name << " (" << file << ")\n"
            << "seeds      " << range.first << ".." << range.second << " (" << count
            << " runs on " << std::min<uint64_t>(count, static_cast<uint64_t>(jobs))
            << " threads, no history kept)\n";
  say(first_lines.str());
  const bool tty = isatty(fileno(stderr)) && !quiet;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<SeedRun> runs =
      RunSeeds(scenario, lua_dir, range.first, range.second, jobs, interrupt.flag(),
               [&](uint64_t done) {
                 if (quiet) return;
                 const double wall =
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                 std::fprintf(stderr, "%s[%llu of %llu seeds, %.1f per s]%s", tty ? "\r" : "",
                              static_cast<unsigned long long>(done),
                              static_cast<unsigned long long>(count), wall > 0 ? done / wall : 0.0,
                              tty ? "" : "\n");
               });
  if (tty) std::fprintf(stderr, "\r%60s\r", "");
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string lines;
  uint64_t passed = 0, failed = 0, errors = 0, ran = 0;
  const SeedRun* first_failing = nullptr;
  const SeedRun* first_error = nullptr;
  std::ostringstream shown;
  for (const SeedRun& r : runs) {
    if (!r.ran) continue;
    ++ran;
    lines += SeedLine(r) + "\n";
    if (!r.error.empty()) {
      ++errors;
      if (first_error == nullptr) first_error = &r;
    } else if (r.matches) {
      ++passed;
    } else {
      ++failed;
      if (first_failing == nullptr) first_failing = &r;
      if (failed <= 20) {
        shown << "  seed " << r.seed << ": ";
        for (size_t i = 0; i < r.mismatches.size(); ++i) shown << (i ? "; " : "") << r.mismatches[i];
        shown << "\n";
      }
    }
  }
  if (failed > 20) shown << "  ... and " << failed - 20 << " more (" << out_dir << "/seeds.txt)\n";
  std::string error;
  if (!WriteWholeFile(out_dir + "/seeds.txt", lines, &error)) {
    std::cerr << "lockstep run: " << error << "\n";
    return kExitFailed;
  }
  char figures[160];
  std::snprintf(figures, sizeof(figures), "%llu pass, %llu fail, %llu could not run; %.2f s wall (%.1f runs per s)",
                static_cast<unsigned long long>(passed), static_cast<unsigned long long>(failed),
                static_cast<unsigned long long>(errors), wall_s, wall_s > 0 ? ran / wall_s : 0.0);
  // Per property, in how many seeds it was violated: what a sweep of a scenario that expects a
  // violation is for (in how many seeds does the fault break the lock?). A property is listed
  // when some seed violated it or [expect] says it must be violated.
  std::ostringstream by_property;
  std::vector<std::pair<std::string, uint64_t>> violated_in;
  for (const SeedRun& r : runs) {
    if (!r.ran || !r.error.empty()) continue;
    for (size_t i = 0; i < r.violations.size(); ++i) {
      if (violated_in.size() <= i) violated_in.emplace_back(r.violations[i].first, 0);
      if (r.violations[i].second > 0) ++violated_in[i].second;
    }
  }
  const uint64_t judged = passed + failed;
  for (const auto& [property, seeds_violated] : violated_in) {
    const auto e = scenario.expect.find(property);
    const bool expected_violated = e != scenario.expect.end() && e->second == Expectation::kViolated;
    if (seeds_violated == 0 && !expected_violated) continue;
    by_property << (by_property.tellp() == 0 ? "violated   " : "           ") << property << " in "
                << seeds_violated << " of " << judged << " seeds"
                << (expected_violated ? " ([expect]: violated, so the other "
                                          + std::to_string(judged - seeds_violated) +
                                          " seeds do not match)"
                                    : "")
                << "\n";
  }
  say("runs       " + std::string(figures) + "\n" + by_property.str() + shown.str() +
      "each seed  " + out_dir + "/seeds.txt (seed, pass/fail, violations per property)\n");
  const auto reproduce = [&file](uint64_t seed) {
    return "lockstep run " + ShellQuote(file) + " --seed " + std::to_string(seed);
  };
  if (!json_path.empty()) {
    std::ostringstream j;
    j << "{\n  \"schema\": \"lockstep-seeds/1\",\n  \"scenario\": {\"name\": " << reports::JsonString(scenario.name)
      << ", \"file\": " << reports::JsonString(file) << "},\n  \"seeds\": [" << range.first << ", "
      << range.second << "],\n  \"result\": \""
      << (interrupt.interrupted() ? "interrupted" : errors ? "error" : failed ? "fail" : "pass")
      << "\",\n  \"first_failing_seed\": "
      << (first_failing ? std::to_string(first_failing->seed) : std::string("null"))
      << ",\n  \"runs\": [";
    bool first = true;
    for (const SeedRun& r : runs) {
      if (!r.ran) continue;
      j << (first ? "\n" : ",\n") << "    {\"seed\": " << r.seed << ", \"result\": \""
        << (!r.error.empty() ? "error" : r.matches ? "pass" : "fail") << "\", \"violations\": {";
      for (size_t i = 0; i < r.violations.size(); ++i) {
        j << (i ? ", " : "") << reports::JsonString(r.violations[i].first) << ": " << r.violations[i].second;
      }
      j << "}}";
      first = false;
    }
    j << "\n  ]\n}\n";
    if (!WriteWholeFile(json_path, j.str(), &error)) {
      std::cerr << "lockstep run: --json: " << error << "\n";
      return kExitFailed;
    }
  }
  if (!junit_path.empty()) {
    std::ostringstream x;
    x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"lockstep run\" tests=\"" << ran
      << "\" failures=\"" << failed << "\" errors=\"" << errors << "\" time=\"" << wall_s << "\">\n"
      << "  <testsuite name=\"" << XmlEscape("lockstep run " + scenario.name + " --seeds " +
                                              std::to_string(range.first) + ".." +
                                              std::to_string(range.second))
      << "\" tests=\"" << ran << "\" failures=\"" << failed << "\" errors=\"" << errors << "\">\n";
    for (const SeedRun& r : runs) {
      if (!r.ran) continue;
      x << "    <testcase classname=\"" << XmlEscape("lockstep.run." + scenario.name)
        << "\" name=\"seed " << r.seed << "\" time=\"0\">";
      if (!r.error.empty()) {
        x << "<error message=\"" << XmlEscape(r.error) << "\"/>";
      } else if (!r.matches) {
        std::string message;
        for (size_t i = 0; i < r.mismatches.size(); ++i) message += (i ? "; " : "") + r.mismatches[i];
        x << "<failure message=\"" << XmlEscape(message) << "\">"
          << XmlEscape("reproduce: " + reproduce(r.seed)) << "</failure>";
      }
      x << "</testcase>\n";
    }
    x << "  </testsuite>\n</testsuites>\n";
    if (!WriteWholeFile(junit_path, x.str(), &error)) {
      std::cerr << "lockstep run: --junit: " << error << "\n";
      return kExitFailed;
    }
  }
  if (interrupt.interrupted()) {
    say("result     INTERRUPTED after " + std::to_string(ran) + " of " + std::to_string(count) +
        " seeds\n");
    return finish(interrupt.exit_status());
  }
  if (first_error != nullptr) {
    std::cerr << file << ": seed " << first_error->seed << ": " << first_error->error << "\n";
    say("result     ERROR: " + std::to_string(errors) + " seed(s) could not run\n");
    return finish(kExitBadInput);
  }
  if (first_failing == nullptr) {
    say("result     PASS: every seed's verdict matches the scenario's expectations\n");
    return finish(kExitOk);
  }
  std::cout << "first fail seed " << first_failing->seed << ": " << reproduce(first_failing->seed)
            << "\n           run again below, with its history and reports in " << out_dir
            << "\n\n" << std::flush;
  *failing = first_failing->seed;
  return std::nullopt;
}

}  // namespace

int RunMain(const std::vector<std::string>& args) {
  std::string file, out_dir, lua_dir = DefaultLuaDir(), history_format = "binary";
  uint64_t seed = 0;
  int64_t duration_ms = 0;
  double time_scale = 1;
  bool quiet = false, no_expect = false, force = false, verify = false;
  std::string json_path, junit_path, seeds_text;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  po::options_description desc(kRunHelp);
  desc.add_options()("help,h", "show this help")(
      "seed", po::value(&seed), "override the scenario's seed")(
      "duration-ms", po::value(&duration_ms), "override the scenario's duration_ms")(
      "time-scale", po::value(&time_scale),
      "multiply every duration of the scenario by this factor (after --duration-ms): 0.1 makes "
      "a minute six seconds with every ratio kept (rates, counts and dates stay)")(
      "out", po::value(&out_dir),
      "output directory (default: a new folder in the run store, "
      "lockstep-out/<scenario>/<time>-seed<N> under the current directory or $LOCKSTEP_STORE, with a latest link and an index.html)")(
      "lua-dir", po::value(&lua_dir)->default_value(lua_dir),
      "where the default lock scripts live (also $LOCKSTEP_LUA_DIR)")(
      "history", po::value(&history_format)->default_value(history_format),
      "what to keep of the history: binary, jsonl, jsonl.gz or none")(
      "json", po::value(&json_path),
      "also write the verdict as JSON to this file (schema lockstep-run/1, docs/ci.md)")(
      "junit", po::value(&junit_path),
      "also write JUnit XML to this file: one testcase per property, failed when it does not "
      "match [expect], skipped when not judged")(
      "seeds", po::value(&seeds_text),
      "run every seed A..B (e.g. 1..200) in process on --jobs threads, judge each, list them in "
      "DIR/seeds.txt, and run the first failing one again with its history and reports")(
      "jobs,j", po::value(&jobs), "threads for --seeds (default: every core)")(
      "force", po::bool_switch(&force), "replace the run an existing --out holds")(
      "verify", po::bool_switch(&verify),
      "verification mode: after every command, hold what the facts pass believes of each "
      "master's lock key against the key, and stop at the first difference (exit 1): a check "
      "of lockstep itself (docs/history.md)")(
      "no-expect", po::bool_switch(&no_expect),
      "run a scenario whose [expect] judges nothing (else refused: a run that cannot fail "
      "proves nothing)")(
      "quiet,q", po::bool_switch(&quiet),
      "no progress line, no details: only the verdict, the reproduce command and the result");
  po::options_description hidden;
  hidden.add_options()("scenario", po::value(&file));
  po::variables_map vm;
  if (std::optional<int> done = ParseArgs("run", args, desc, hidden, "scenario", &vm)) return *done;
  if (file.empty()) {
    std::cerr << "lockstep run: which scenario? e.g. lockstep run scenarios/contention-10.toml\n";
    return kExitBadInput;
  }
  const std::optional<history::HistoryFormat> format = history::ParseHistoryFormat(history_format);
  if (!format) {
    std::cerr << "lockstep run: --history takes binary, jsonl, jsonl.gz or none, not '" << history_format
              << "'\n";
    return kExitBadInput;
  }

  std::optional<Scenario> loaded =
      LoadScenarioForRun("run", file, RunOverrides{seed, duration_ms, time_scale}, vm);
  if (!loaded) return kExitBadInput;
  Scenario scenario = std::move(*loaded);
  if (!OutputsSpareInput("run", scenario.file, {{"--json", json_path}, {"--junit", junit_path}})) {
    return kExitBadInput;
  }

  std::string setup_error;
  auto sim = sim::Simulation::Create(scenario, lua_dir, &setup_error);
  if (!sim) {
    std::cerr << file << ": " << setup_error << "\n";
    return kExitBadInput;
  }

  // After every other check of the scenario: what cannot run is said first.
  const bool judges = std::any_of(scenario.expect.begin(), scenario.expect.end(),
                                  [](const auto& e) { return e.second != Expectation::kAny; });
  if (!judges && !no_expect) {
    std::cerr << file << ": nothing to judge: the scenario's [expect] names no property that must "
              << "hold or be violated, so the run could not fail. Add one, e.g.\n  [expect]\n  "
              << "mutual_exclusion = \"hold\"\nor pass --no-expect to run it unjudged\n";
    return kExitBadInput;
  }
  // Stops the simulator (or the sweep of seeds) at the next event boundary. It lasts to the
  // end, so that a signal while the reports and the summary are written lets them finish (no
  // half-written file) and still gives the interrupted exit status.
  InterruptScope interrupt;
  std::optional<std::pair<uint64_t, uint64_t>> seeds;
  if (!seeds_text.empty()) {
    seeds = ParseSeedRange(seeds_text);
    if (!seeds) {
      std::cerr << "lockstep run: --seeds takes a range of whole numbers A..B with A <= B <= 9223372036854775807, e.g. "
                   "1..200, not '" << seeds_text << "'\n";
      return kExitBadInput;
    }
    if (vm.count("seed")) {
      std::cerr << "lockstep run: --seed and --seeds: give one\n";
      return kExitBadInput;
    }
    if (seeds->second - seeds->first >= 1'000'000) {
      std::cerr << "lockstep run: --seeds: at most 1000000 seeds in one run\n";
      return kExitBadInput;
    }
    if (jobs < 1 || jobs > 1024) {
      std::cerr << "lockstep run: --jobs must be between 1 and 1024\n";
      return kExitBadInput;
    }
  }
  // No --out: a new folder in the run store. An --out holding an earlier run: only with --force.
  bool stored = false;
  if (std::optional<int> stop = ChooseRunDir(
          "run", scenario.name,
          seeds ? "seeds" + std::to_string(seeds->first) + "-" + std::to_string(seeds->second)
                : "seed" + std::to_string(scenario.seed),
          force, {}, &out_dir, &stored)) {
    return *stop;
  }
  std::string out_error;
  if (!PrepareOutDir(out_dir, &out_error)) {
    std::cerr << "lockstep run: --out: " << out_error << "\n";
    return kExitBadInput;
  }
  // After a run in the store: its latest link and index.html (a failure to write them fails
  // the command, as any output does).
  const auto store = [&](int status) {
    if (!stored) return status;
    std::string store_error;
    if (!UpdateRunStore(RunStoreRoot(), out_dir, &store_error)) {
      std::cerr << "lockstep run: " << store_error << "\n";
      return status == kExitOk ? kExitFailed : status;
    }
    if (!quiet) {
      std::cout << StoredLine(out_dir, scenario.name);
    }
    return status;
  };
  if (seeds) {
    std::optional<int> done = SweepSeeds(file, scenario, lua_dir, *seeds, jobs, out_dir, quiet,
                                         json_path, junit_path, interrupt, &scenario.seed);
    if (done) return store(*done);
    // The first failing seed, run again below with its history and reports; --json and
    // --junit already describe the sweep.
    json_path.clear();
    junit_path.clear();
    sim = sim::Simulation::Create(scenario, lua_dir, &setup_error);
    if (!sim) {
      std::cerr << file << ": " << setup_error << "\n";
      return kExitBadInput;
    }
  }
  const std::string history_path =
      *format == history::HistoryFormat::kNone ? "" : out_dir + "/" + history::HistoryFileName(*format);

  std::ostringstream head;
  head << "scenario   " << scenario.name << " (" << file << ")\n";
  if (!scenario.description.empty()) head << "           " << scenario.description << "\n";
  head << "seed       " << scenario.seed << "\n";
  head << "duration   " << Seconds(scenario.duration_us) << " simulated";
  if (vm.count("time-scale")) head << " (every duration times " << FormatFactor(time_scale) << ")";
  head << "\n";
  for (const auto& [name, value] : sim->derived()) head << "  " << name << ": " << value << "\n";
  // -q: the verdict and the result only (summary.txt has everything).
  if (!quiet) std::cout << head.str() << std::flush;

  const auto wall_start = std::chrono::steady_clock::now();
  const bool tty = isatty(fileno(stderr)) && !quiet;
  PipelineOptions pipeline;
  pipeline.history = *format;
  pipeline.history_path = history_path;
  pipeline.progress = [&](TrueTime now) {
    if (quiet) return;
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    std::fprintf(stderr, "%s[sim %s / %s, %llu simulator events, %.1f s wall]%s", tty ? "\r" : "",
                 Seconds(now).c_str(), Seconds(scenario.duration_us).c_str(),
                 static_cast<unsigned long long>(sim->events_run()), wall, tty ? "" : "\n");
  };
  std::string write_error;
  pipeline.interrupted = interrupt.flag();
  pipeline.verify_keys = verify;
  std::optional<PipelineResult> run = RunPipeline(*sim, scenario, pipeline, &write_error);
  if (tty) std::fprintf(stderr, "\r%60s\r", "");
  if (!run) {
    std::cerr << "lockstep run: " << write_error << "\n";
    return kExitFailed;
  }
  if (!run->stalled.empty()) {
    // A scenario that asks for a loop without delays is bad input, like any other value that
    // cannot run (docs/scenario-format.md, "Limits").
    std::cerr << file << ": " << run->stalled << "\n";
    return kExitBadInput;
  }
  if (!run->verify_failure.empty()) {
    // A bug in lockstep (a driver that recorded the key wrong, or a facts pass that reads it
    // wrong), not in the scenario: nothing after it can be trusted.
    std::cerr << "lockstep run: " << file << ": " << run->verify_failure
              << "\nlockstep run: this is a bug in lockstep; the history up to it is in "
              << (run->history_written ? history_path : "no file (--history none)") << "\n";
    return kExitFailed;
  }
  const bool interrupted = run->interrupted;
  const double wall_s = run->wall_s;
  if (interrupted) {
    std::cerr << "lockstep run: interrupted by " << interrupt.signal_name() << " at "
              << Seconds(run->end_us) << " simulated; the verdict, "
              << (run->history_written ? history_path : "the history")
              << ", the reports and the summary are of the run so far\n";
  }
  const check::Verdict& verdict = run->verdict;
  const check::Judgement judgement = check::Judge(verdict, scenario.expect);

  std::ostringstream body;
  body << FormatVerdict(verdict, scenario.expect);


  const double sim_s = static_cast<double>(run->end_us) / 1e6;
  const bool written_history = run->history_written;
  const std::string kept =
      written_history ? history_path + " (" + std::to_string(run->history_events) + " events, hash " +
                            history::HashHex(run->history_hash) + ")"
                      : "not kept (--history none; " + std::to_string(run->history_events) + " events)";
  std::string reproduce = "lockstep run " + ShellQuote(file) + " --seed " +
                          std::to_string(scenario.seed);
  if (vm.count("duration-ms")) reproduce += " --duration-ms " + std::to_string(duration_ms);
  if (vm.count("time-scale")) reproduce += " --time-scale " + FormatFactor(time_scale);
  // The reports read the history file once more, knowing the verdict: written after it, so a
  // report problem never costs the history or the verdict.
  reports::ReportMeta meta;
  reports::DescribeScenario(scenario, &meta);
  meta.scenario_file = file;
  meta.version = LOCKSTEP_VERSION;
  meta.parameters = sim->derived();
  meta.reproduce = reproduce;
  const auto report_start = std::chrono::steady_clock::now();
  std::vector<reports::WrittenFile> written;
  bool reports_ok = false;
  if (written_history) {
    try {
      ReportsProgressLine progress(quiet, run->end_us);
      reports_ok = reports::WriteReportsFromFile(history_path, verdict, meta, out_dir, &written,
                                                 &write_error, progress.progress());
    } catch (const std::exception& e) {
      write_error = std::string("internal error while writing reports: ") + e.what();
    }
    if (!reports_ok) {
      // The history and the verdict stand without the reports; say so and carry on.
      std::cerr << "lockstep run: reports not written: " << write_error << "\n";
    }
  }
  // Taken last, after checking and the reports: the process's real peak (the summary and the
  // lines printed below add nothing to it).
  char figures[512];
  std::snprintf(figures, sizeof(figures),
                "simulated  %.3f s in %.2f s wall (%.1f simulated s per wall s)\n"
                "engine     %llu simulator events run (%.0f per wall s), peak RSS %ld MiB\n",
                sim_s, wall_s, wall_s > 0 ? sim_s / wall_s : 0.0,
                static_cast<unsigned long long>(run->engine_events),
                wall_s > 0 ? static_cast<double>(run->engine_events) / wall_s : 0.0,
                PeakRssKb() / 1024);
  const double report_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - report_start).count();
  std::string report_line = !written_history ? "reports    none (no history to read them from)"
                            : reports_ok      ? "reports    "
                                              : "reports    NOT WRITTEN: " + write_error;
  for (const reports::WrittenFile& f : written) {
    const std::string name = std::filesystem::path(f.path).filename().string();
    report_line += (report_line.size() > 11 ? ", " + name : f.path) + " (" +
                   std::to_string((f.bytes + 1023) / 1024) + " KiB)";
  }
  char report_time[64];
  std::snprintf(report_time, sizeof(report_time), " in %.2f s wall\n", report_s);
  // What a capped file left out, a line each under the reports (none when nothing was).
  std::string report_notes;
  for (const reports::WrittenFile& f : written) {
    if (f.note.empty()) continue;
    report_notes += "           " + std::filesystem::path(f.path).filename().string() + ": " +
                    f.note + "\n";
  }

  std::ostringstream details, tail;
  details << "history    " << kept << "\n"
          << figures << report_line << (written_history && reports_ok ? report_time : "\n")
          << report_notes;
  tail << "reproduce  " << reproduce << "\n";
  if (interrupted) {
    tail << "result     INTERRUPTED at " << Seconds(run->end_us) << " of "
         << Seconds(scenario.duration_us) << " simulated: the verdict above is of that prefix\n";
  } else if (judgement.matches) {
    tail << "result     PASS: the verdict matches the scenario's expectations\n";
  } else {
    tail << "result     FAIL: the verdict does not match the scenario's expectations:\n";
    for (const std::string& m : judgement.mismatches) tail << "             " << m << "\n";
  }

  std::cout << body.str() << (quiet ? "" : details.str()) << tail.str() << std::flush;
  if (!WriteWholeFile(out_dir + "/summary.txt",
                      head.str() + body.str() + details.str() + tail.str(), &write_error)) {
    std::cerr << "lockstep run: " << write_error << "\n";
    return kExitFailed;
  }
  if (!json_path.empty() || !junit_path.empty()) {
    RunRecord record;
    record.scenario = &scenario;
    record.file = file;
    record.verdict = &verdict;
    record.judgement = &judgement;
    record.interrupted = interrupted;
    record.end_us = run->end_us;
    record.history_format = history::HistoryFormatName(*format);
    if (written_history) {
      record.history_path = history_path;
      record.history_hash = history::HashHex(run->history_hash);
    }
    record.history_events = run->history_events;
    record.reports = written;
    record.reproduce = reproduce;
    record.wall_s = wall_s;
    record.reports_s = written_history ? report_s : 0;
    record.peak_rss_kib = PeakRssKb();
    if (!json_path.empty() && !WriteWholeFile(json_path, RunJson(record), &write_error)) {
      std::cerr << "lockstep run: --json: " << write_error << "\n";
      return kExitFailed;
    }
    if (!junit_path.empty() && !WriteWholeFile(junit_path, RunJunit(record), &write_error)) {
      std::cerr << "lockstep run: --junit: " << write_error << "\n";
      return kExitFailed;
    }
  }
  // An output missing for want of space is a failure whatever the verdict: whoever reads the
  // exit status alone must not take the run for complete.
  if (written_history && !reports_ok) return store(kExitFailed);
  if (interrupt.interrupted()) {
    if (!interrupted) {
      std::cerr << "lockstep run: " << interrupt.signal_name()
                << " arrived after the run ended; its verdict, history, reports and summary are "
                   "complete\n";
    }
    return store(interrupt.exit_status());
  }
  return store(judgement.matches ? kExitOk : kExitFailed);
}

}  // namespace lockstep::cli
