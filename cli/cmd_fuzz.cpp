// lockstep fuzz: searches fault schedules and workloads around a base scenario, and shrinks
// each failure to a minimal scenario file that `lockstep run` reproduces.
#include <signal.h>
#include <unistd.h>

#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "check/check.h"
#include "check/compare.h"
#include "cli/ci_outputs.h"
#include "cli/common.h"
#include "cli/fuzz_results.h"
#include "cli/run_store.h"
#include "cli/subcommands.h"
#include "fuzz/case.h"
#include "fuzz/moment.h"
#include "fuzz/run.h"
#include "fuzz/search.h"
#include "fuzz/shrink.h"
#include "history/jsonl.h"
#include "history/kinds.h"
#include "history/reader.h"
#include "model/limits.h"
#include "model/scenario_toml.h"
#include "model/scenario_write.h"
#include "pipeline/pipeline.h"
#include "reports/report.h"
#include "reports/text.h"
#include "sim/simulation.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace lockstep::cli {

namespace {

const char* kFuzzHelp =
    "usage: lockstep fuzz BASE.toml [--cases N | --time-budget S] [--jobs N] [options]\n"
    "\n"
    "Searches variations of a base scenario for a run that breaks a property the base\n"
    "expects to hold ([expect] ... = \"hold\"): fault schedules (partitions, pauses,\n"
    "crashes, clock jumps and drift, failovers, lost replies, latency spikes, message\n"
    "loss and duplication), client and thread counts, lease, wait and think times, as the\n"
    "base's [fuzz] table allows (docs/fuzzing.md; without one, every fault kind that\n"
    "applies). Cases run in this process on --jobs threads, without a history; each is\n"
    "bounded in events and wall time.\n"
    "\n"
    "Each case's coverage is counted: its abstract lock states (key owners, stale\n"
    "holders per node, thread phases, open faults) and their transitions.\n"
    "--until-saturated N stops once N cases in a row reached nothing new. Cases are\n"
    "drawn at random (--strategy random, the default): case I of seed S is the same on\n"
    "every machine and in every shard. --strategy guided steers by coverage instead: a\n"
    "case that reached new ground is kept, and later cases are either drawn fresh or\n"
    "mutations of kept ones (a fault added, dropped, moved, stretched or retargeted, a\n"
    "count or a time changed), the same whatever --jobs. On bench/fuzz-mutants/ it\n"
    "finds the bugs no sooner than random draws (docs/fuzzing.md).\n"
    "\n"
    "A failure is shrunk while the same property still breaks (fewer faults, a shorter\n"
    "run, fewer clients and threads, no noise, earlier, shorter and round faults) and\n"
    "written as a scenario file whose [expect] names the broken property, with the\n"
    "reports of its run: DIR/<property>/<name>.toml, report.html, trace.json, summary.md.\n"
    "`lockstep run` on that file reproduces the violation (exit 0); commit it as a\n"
    "regression test.\n"
    "\n"
    "With --reference REF a case counts only where the base breaks a watched property\n"
    "that the reference, run on the same case (same faults, seed, clients and draws),\n"
    "keeps: the limits every lease-based lock has (a clock jump past the lease, a pause\n"
    "longer than it) break both and are passed over, and the shrunk file isolates what\n"
    "differs. REF is `stock` (the base without its script overrides), `version=V` (the\n"
    "base on Redisson version V: v3.13.6, current) or a scenario file with the base's\n"
    "nodes and clients. The reference's twin of each shrunk file is written beside it\n"
    "(<name>.reference.toml, expecting the property to hold) with its reports in\n"
    "reference/, and both runs on one page, as a replay shows its two: comparison.html\n"
    "has both verdicts per property, the first operation whose outcome differs and both\n"
    "timelines on one axis (comparison.txt has the comparison as text).\n"
    "\n"
    "Shards: N processes with --shard I/N (or --shard auto in a CI matrix or a Kubernetes\n"
    "Indexed Job) search disjoint cases; `lockstep fuzz merge DIR...` merges their --out\n"
    "folders into one result (lockstep fuzz merge --help).\n"
    "\n"
    "Exit status: 0 nothing found, 1 a violation found and written (or a corpus case\n"
    "still fails), 2 bad input, 130 interrupted\n"
    "(SIGINT; 143 SIGTERM, 129 SIGHUP).\n"
    "\n"
    "Examples:\n"
    "  lockstep fuzz scenarios/contention-10.toml --cases 500\n"
    "  lockstep fuzz my-lock.toml --time-budget 300 --keep-going --junit fuzz.xml\n"
    "  lockstep fuzz my-lock.toml --shard 2/8 --cases 2000 --corpus fuzz-corpus/\n"
    "  lockstep fuzz my-lock.toml --reference stock --cases 5000\n"
    "\n"
    "Options";


// A written scenario's name: `stem` and `suffix`, the stem cut so that the whole stays within
// the names a scenario file may have (model/limits.h), or the file would not load again.
std::string DerivedName(const std::string& stem, const std::string& suffix) {
  const size_t room = static_cast<size_t>(kMaxNameLength) > suffix.size()
                          ? static_cast<size_t>(kMaxNameLength) - suffix.size()
                          : 1;
  return stem.substr(0, std::min(stem.size(), room)) + suffix;
}

std::string SizeText(const fuzz::CaseSize& size, const Scenario& materialized) {
  int threads = 0;
  for (const ClientSpec& c : materialized.clients) threads += c.threads;
  auto count = [](size_t n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  return count(materialized.faults.size(), "fault") + " (" + std::to_string(size.faults) +
         " drawn), " + count(materialized.clients.size(), "client") + ", " +
         count(static_cast<size_t>(threads), "thread") + ", " + Seconds(size.duration_us);
}

// The scenario --reference names, and what it is in words, or nullopt with *error. `stock`:
// the base without its script overrides; `version=V`: the base on version V; else a scenario
// file that declares the base's nodes and clients, so that a drawn case means the same
// processes in both.
std::optional<Scenario> ResolveReference(const std::string& ref, const Scenario& base,
                                         std::string* what, std::string* error) {
  Scenario s = base;
  if (ref == "stock") {
    if (base.protocol.script_files.empty()) {
      *error = "--reference stock: the base replaces none of its lock's scripts, so its stock "
               "twin is the base itself; name a scenario file or version=V instead";
      return std::nullopt;
    }
    std::string names;
    for (const auto& [name, path] : base.protocol.script_files) names += (names.empty() ? "" : ", ") + name;
    s.protocol.script_files.clear();
    *what = "the base with the stock scripts (overrides removed: " + names + ")";
  } else if (ref.rfind("version=", 0) == 0) {
    const std::string name = ref.substr(8);
    const std::optional<history::ProtocolVersion> v = history::FindProtocolVersion(name);
    if (!v) {
      std::string known;
      for (std::string_view k : history::kProtocolVersions) known += (known.empty() ? "" : ", ") + std::string(k);
      *error = "--reference " + ref + ": no such Redisson version; lockstep models " + known;
      return std::nullopt;
    }
    if (*v == base.protocol.version) {
      *error = "--reference " + ref + ": the base runs that version already; name the other one";
      return std::nullopt;
    }
    s.protocol.version = *v;
    *what = "the base on Redisson " + name;
  } else {
    ScenarioError load_error;
    std::optional<Scenario> loaded = LoadScenarioFile(ResolveScenario("fuzz", ref), &load_error);
    if (!loaded) {
      *error = load_error.ToString();
      return std::nullopt;
    }
    auto names_of = [](const auto& list) {
      std::string out;
      for (const auto& item : list) out += (out.empty() ? "" : ", ") + item.name;
      return out;
    };
    if (names_of(loaded->nodes) != names_of(base.nodes) ||
        names_of(loaded->clients) != names_of(base.clients)) {
      *error = ref + ": a reference declares the base's nodes and clients, in its order (here nodes " +
               names_of(loaded->nodes) + " and clients " + names_of(loaded->clients) +
               ", the base's nodes " + names_of(base.nodes) + " and clients " +
               names_of(base.clients) + "), so that a drawn case means the same processes in both";
      return std::nullopt;
    }
    s = std::move(*loaded);
    *what = s.name + " (" + ref + ")";
  }
  return s;
}

// Runs `lockstep run FILE --out DIR -q` in process (the same code a user runs) and returns its
// exit status; its printed summary goes to DIR/summary.txt as usual, not to our stdout.
// What a command prints to stdout, shown and kept: on the way out (whatever the exit) it is
// written to DIR/summary.txt, and a search in the run store is linked as its base's latest and
// listed in the store's index.html.
class KeptOutput {
 public:
  KeptOutput(std::string dir, bool stored)
      : dir_(std::move(dir)), stored_(stored), tee_(std::cout.rdbuf(), &text_),
        old_(std::cout.rdbuf(&tee_)) {}
  ~KeptOutput() {
    std::cout.flush();
    std::cout.rdbuf(old_);
    std::string error;
    if (!WriteWholeFile(dir_ + "/summary.txt", text_.str(), &error) ||
        (stored_ && !UpdateRunStore(RunStoreRoot(), dir_, &error))) {
      std::cerr << "lockstep fuzz: " << error << "\n";
    }
  }
  KeptOutput(const KeptOutput&) = delete;
  KeptOutput& operator=(const KeptOutput&) = delete;

 private:
  class Tee : public std::streambuf {
   public:
    Tee(std::streambuf* shown, std::ostringstream* kept) : shown_(shown), kept_(kept) {}

   protected:
    int overflow(int c) override {
      if (c == traits_type::eof()) return traits_type::not_eof(c);
      kept_->put(static_cast<char>(c));
      return shown_->sputc(static_cast<char>(c));
    }
    std::streamsize xsputn(const char* s, std::streamsize n) override {
      kept_->write(s, n);
      return shown_->sputn(s, n);
    }
    int sync() override { return shown_->pubsync(); }

   private:
    std::streambuf* shown_;
    std::ostringstream* kept_;
  };

  std::string dir_;
  bool stored_;
  std::ostringstream text_;
  Tee tee_;
  std::streambuf* old_;
};

// What the comparison page calls a shrunk failure's run (first, in the place a replay gives its
// live run) and its twin's on the reference (second, in reference/).
check::RunLabels ReferenceLabels(const std::string& base_name, const std::string& reference_what) {
  check::RunLabels l;
  l.first = {.name = "shrunk case",
             .where = "in the shrunk case",
             .run = "shrunk run",
             .tag = "shrunk",
             .op_where = "in the shrunk case",
             .row = "shrunk case",
             .time = "simulated time",
             .title = "SHRUNK CASE: the failing case, shrunk, on " + base_name};
  l.second = {.name = "reference",
              .where = "in the reference",
              .run = "reference run",
              .tag = "reference",
              .op_where = "in the reference",
              .row = "reference",
              .time = "simulated time",
              .title = "REFERENCE: the same case on " + reference_what};
  l.second_dir = "reference";
  l.page = "comparison.html";
  l.tool = "lockstep fuzz";
  l.pair = "a shrunk failure and the same case on its reference";
  l.agree = "The verdicts agree, although the search saw the reference keep what the shrunk case "
            "breaks: one of the two files does not run as the search's case did (each run's "
            "summary.txt says more).";
  l.differ = "The verdicts differ on the same case: the difference comes from what sets the base "
             "apart from the reference (its scripts, its version), which is what the search "
             "looked for.";
  return l;
}

// One run of the comparison page, from the folder `lockstep run` wrote it to: its history
// judged again as `lockstep report` judges one (the same checkers, with its scenario's options),
// its operations for the comparison position by position, and what its report says of it.
struct RunOnFile {
  RunOnFile() = default;
  RunOnFile(const RunOnFile&) = delete;  // ops points into names.
  RunOnFile& operator=(const RunOnFile&) = delete;

  std::string history_path;
  history::NameTable names;
  check::OperationLog ops{&names};
  check::Verdict verdict;
  reports::ReportMeta meta;
};

bool ReadRun(const std::string& file, const std::string& dir, const std::string& lua_dir,
             RunOnFile* run, std::string* error) {
  ScenarioError load_error;
  const std::optional<Scenario> scenario = LoadScenarioFile(file, &load_error);
  if (!scenario) {
    *error = load_error.ToString();
    return false;
  }
  run->history_path = dir + "/" + history::HistoryFileName(history::HistoryFormat::kJsonl);
  std::optional<check::Verdict> verdict =
      check::CheckHistoryFile(run->history_path, CheckOptionsOf(*scenario), error);
  if (!verdict) return false;
  run->verdict = std::move(*verdict);
  history::ReadStats stats;
  if (!history::ReadHistoryFile(run->history_path, &run->names, &run->ops, &stats, error)) {
    return false;
  }
  reports::DescribeScenario(*scenario, &run->meta);
  run->meta.scenario_file = file;
  run->meta.version = LOCKSTEP_VERSION;
  run->meta.reproduce = "lockstep run " + ShellQuote(file);
  // Only to learn the derived parameters (protocol, scripts, lease): nothing is run.
  std::string setup_error;
  if (auto sim = sim::Simulation::Create(*scenario, lua_dir, &setup_error)) {
    run->meta.parameters = sim->derived();
  }
  return true;
}

// The shrunk case's run beside its twin's on the reference, as a replay shows its live and
// simulated runs: w.comparison (comparison.html beside the shrunk file), and the same
// comparison as text in comparison.txt.
bool WriteComparison(const FuzzFailure& w, const check::RunLabels& labels, const std::string& lua_dir,
                     std::string* error) {
  RunOnFile shrunk, twin;
  if (!ReadRun(w.file, w.report_dir, lua_dir, &shrunk, error) ||
      !ReadRun(w.reference_file, w.reference_reports, lua_dir, &twin, error)) {
    return false;
  }
  const check::RunComparison c =
      check::CompareRuns(twin.verdict, twin.ops, shrunk.verdict, shrunk.ops, labels);
  return reports::WriteComparisonHtmlFromFiles(shrunk.history_path, shrunk.verdict, shrunk.meta,
                                               twin.history_path, twin.verdict, twin.meta, c,
                                               w.comparison, error) &&
         WriteWholeFile(w.report_dir + "/comparison.txt", check::FormatComparison(c), error);
}

int RunQuietly(const std::string& file, const std::string& out_dir, const std::string& lua_dir) {
  std::ostringstream captured;
  std::streambuf* old = std::cout.rdbuf(captured.rdbuf());
  int status = kExitFailed;
  try {
    // A failure's history as JSON Lines: short, and read with grep (docs/fuzzing.md).
    status = RunMain({file, "--out", out_dir, "--lua-dir", lua_dir, "-q", "--history", "jsonl"});
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  return status;
}

// --shard auto: "I/N" from the environment of what started this process, and which variables
// said so, or nullopt with *error. A CI matrix sets LOCKSTEP_SHARD_INDEX and
// LOCKSTEP_SHARD_COUNT itself; GitLab's `parallel: N` sets CI_NODE_INDEX (from 1) and
// CI_NODE_TOTAL; a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX, and its count (the Job's
// completions, which it does not export) comes from --shard-count.
std::optional<std::string> ShardFromEnvironment(uint64_t shard_count, std::string* source,
                                                std::string* error) {
  const auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0' ? std::optional<std::string>(v) : std::nullopt;
  };
  const auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 19 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (auto i = env("LOCKSTEP_SHARD_INDEX")) {
    auto n = env("LOCKSTEP_SHARD_COUNT");
    if (!n && shard_count == 0) {
      *error = "--shard auto: LOCKSTEP_SHARD_INDEX is set but not LOCKSTEP_SHARD_COUNT (nor --shard-count)";
      return std::nullopt;
    }
    *source = n ? "LOCKSTEP_SHARD_INDEX and LOCKSTEP_SHARD_COUNT" : "LOCKSTEP_SHARD_INDEX and --shard-count";
    return *i + "/" + (n ? *n : std::to_string(shard_count));
  }
  if (auto i = env("CI_NODE_INDEX"), n = env("CI_NODE_TOTAL"); i && n) {
    if (!digits(*i) || std::stoull(*i) == 0) {
      *error = "--shard auto: CI_NODE_INDEX is '" + *i + "', not a number from 1";
      return std::nullopt;
    }
    *source = "CI_NODE_INDEX and CI_NODE_TOTAL";
    return std::to_string(std::stoull(*i) - 1) + "/" + *n;
  }
  if (auto i = env("JOB_COMPLETION_INDEX")) {
    if (shard_count == 0) {
      *error = "--shard auto: JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) gives the index; "
               "give the Job's completions as --shard-count N";
      return std::nullopt;
    }
    *source = "JOB_COMPLETION_INDEX and --shard-count";
    return *i + "/" + std::to_string(shard_count);
  }
  *error = "--shard auto found no shard in the environment: set LOCKSTEP_SHARD_INDEX and "
           "LOCKSTEP_SHARD_COUNT (from a CI matrix), run as a Kubernetes Indexed Job "
           "(JOB_COMPLETION_INDEX) with --shard-count N, or in GitLab CI with parallel: N "
           "(CI_NODE_INDEX, CI_NODE_TOTAL); or give --shard I/N";
  return std::nullopt;
}

// Cases since the coverage last grew, in the shard's own count.
uint64_t CasesSinceGrowth(const fuzz::SearchStatus& s, uint64_t shard_index, uint64_t shard_count) {
  if (s.coverage_cases == 0) return 0;
  const uint64_t grew_k = (s.coverage_grew_at - shard_index) / shard_count;
  return s.coverage_cases - 1 - grew_k;
}

}  // namespace

int FuzzMain(const std::vector<std::string>& args) {
  // `lockstep fuzz merge DIR...`: the shards' results merged (cli/cmd_fuzz_merge.cpp).
  if (!args.empty() && args.front() == "merge") {
    return FuzzMergeMain(std::vector<std::string>(args.begin() + 1, args.end()));
  }
  std::string file, out_dir, lua_dir = DefaultLuaDir(), shard_text, junit_path, json_path,
                             corpus_dir, reference_text, strategy_text = "random";
  uint64_t seed = 1, cases = 0, shard_count_flag = 0, until_saturated = 0;
  double time_budget = 0;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int64_t max_events = 0;
  double max_case_s = 0;
  int max_shrink = 2000;
  bool keep_going = false, quiet = false, verify = false, force = false;
  po::options_description desc(kFuzzHelp);
  desc.add_options()("help,h", "show this help")(
      "seed", po::value(&seed)->default_value(seed), "the search's seed (cases derive from it)")(
      "cases", po::value(&cases),
      "cases to run (per shard); default 1000 unless --time-budget is given")(
      "time-budget", po::value(&time_budget), "stop starting cases after S seconds of wall time")(
      "strategy", po::value(&strategy_text)->default_value(strategy_text),
      "random: draw every case afresh; guided: steer by coverage, mutating the cases that "
      "reached new ground")(
      "until-saturated", po::value(&until_saturated),
      "stop once N cases in a row (in case order) added no coverage: a saturated search")(
      "keep-going", po::bool_switch(&keep_going),
      "collect every distinct failure (property and rule) instead of stopping at the first")(
      "jobs,j", po::value(&jobs)->default_value(jobs), "cases run at once (default: every core)")(
      "shard", po::value(&shard_text),
      "I/N: run only cases I, I+N, I+2N ... (0 <= I < N), for N machines or CI jobs; auto: I "
      "and N from the environment (a CI matrix, GitLab's parallel, a Kubernetes Indexed Job)")(
      "shard-count", po::value(&shard_count_flag),
      "N for --shard auto when the environment gives only the index (a Kubernetes Indexed Job)")(
      "out", po::value(&out_dir),
      "output directory (default: a new folder in the run store, "
      "lockstep-out/fuzz-<name>/<time>-seed<S>[-shard<I>of<N>])")(
      "reference", po::value(&reference_text),
      "count a case only where the base breaks what REF keeps on the same case: stock, "
      "version=V or a scenario file")(
      "corpus", po::value(&corpus_dir),
      "replay every scenario file in DIR first, and store each shrunk failure there")(
      "junit", po::value(&junit_path), "write JUnit XML: one testcase per watched property")(
      "json", po::value(&json_path), "write a machine-readable summary (docs/fuzzing.md)")(
      "max-events", po::value(&max_events),
      "per-case limit on simulator events (default: [fuzz] max_events)")(
      "max-case-s", po::value(&max_case_s),
      "per-case limit in wall seconds (default: [fuzz] max_case_s)")(
      "max-shrink", po::value(&max_shrink)->default_value(max_shrink),
      "candidates a shrink may run (0: write the failing case unshrunk)")(
      "lua-dir", po::value(&lua_dir)->default_value(lua_dir),
      "where the default lock scripts live (also $LOCKSTEP_LUA_DIR)")(
      "verify", po::bool_switch(&verify),
      "verification mode in every case and shrink step (lockstep run --verify): a difference "
      "is an internal error")(
      "force", po::bool_switch(&force), "replace the search results an existing --out holds")(
      "quiet,q", po::bool_switch(&quiet), "no progress line");
  po::options_description hidden;
  hidden.add_options()("base", po::value(&file));
  po::variables_map vm;
  if (std::optional<int> done = ParseArgs("fuzz", args, desc, hidden, "base", &vm)) return *done;
  if (file.empty()) {
    std::cerr << "lockstep fuzz: which base scenario? e.g. lockstep fuzz scenarios/contention-10.toml\n";
    return kExitBadInput;
  }
  uint64_t shard_index = 0, shard_count = 1;
  std::string shard_source;  // With --shard auto: the variables that gave it.
  if (vm.count("shard-count") && shard_text != "auto") {
    std::cerr << "lockstep fuzz: --shard-count goes with --shard auto\n";
    return kExitBadInput;
  }
  if (shard_text == "auto") {
    std::string shard_error;
    std::optional<std::string> from_env =
        ShardFromEnvironment(shard_count_flag, &shard_source, &shard_error);
    if (!from_env) {
      std::cerr << "lockstep fuzz: " << shard_error << "\n";
      return kExitBadInput;
    }
    shard_text = *from_env;
  }
  if (!shard_text.empty()) {
    unsigned long long i = 0, n = 0;
    char extra = 0;
    // sscanf's %llu clamps a number past 2^64 - 1 to it: more digits than that are refused.
    const size_t slash = shard_text.find('/');
    const bool too_long = slash == std::string::npos || slash > 19 || shard_text.size() - slash - 1 > 19;
    if (too_long ||
        std::sscanf(shard_text.c_str(), "%llu/%llu%c", &i, &n, &extra) != 2 || n == 0 || i >= n ||
        n > 1'000'000'000 || shard_text.find('-') != std::string::npos) {
      std::cerr << "lockstep fuzz: --shard takes I/N with 0 <= I < N <= 1000000000 (e.g. 0/4 ... 3/4), not '"
                << shard_text << "'" << (shard_source.empty() ? "" : " (from " + shard_source + ")")
                << "\n";
      return kExitBadInput;
    }
    shard_index = i;
    shard_count = n;
  }
  if (jobs < 1 || jobs > 1024) {
    std::cerr << "lockstep fuzz: --jobs must be between 1 and 1024\n";
    return kExitBadInput;
  }
  // Seconds of wall time: finite and at most what [fuzz] max_case_s takes (any duration's
  // bound, about 31.7 years); inf would run for ever, a value past 9.2e9 would overflow the
  // clock arithmetic and end every case at once as over its limit.
  const double max_seconds = static_cast<double>(kMaxDurationMs) / 1000;
  if (vm.count("time-budget") && !(time_budget > 0 && time_budget <= max_seconds)) {
    std::cerr << "lockstep fuzz: --time-budget must be a positive number of seconds, at most "
              << kMaxDurationMs / 1000 << "\n";
    return kExitBadInput;
  }
  if (vm.count("cases") && cases == 0) {
    std::cerr << "lockstep fuzz: --cases must be positive\n";
    return kExitBadInput;
  }
  if (vm.count("until-saturated") && until_saturated == 0) {
    std::cerr << "lockstep fuzz: --until-saturated must be positive\n";
    return kExitBadInput;
  }
  if (!vm.count("cases") && !vm.count("time-budget") && !vm.count("until-saturated")) cases = 1000;
  if (strategy_text != "guided" && strategy_text != "random") {
    std::cerr << "lockstep fuzz: --strategy takes guided or random, not '" << strategy_text << "'\n";
    return kExitBadInput;
  }
  const fuzz::Strategy strategy =
      strategy_text == "random" ? fuzz::Strategy::kRandom : fuzz::Strategy::kGuided;
  if (max_shrink < 0) {
    std::cerr << "lockstep fuzz: --max-shrink must not be negative\n";
    return kExitBadInput;
  }

  ScenarioError load_error;
  std::optional<Scenario> loaded = LoadScenarioFile(ResolveScenario("fuzz", file), &load_error);
  if (!loaded) {
    std::cerr << load_error.ToString() << "\n";
    return kExitBadInput;
  }
  const Scenario base = std::move(*loaded);
  if (!OutputsSpareInput("fuzz", base.file, {{"--json", json_path}, {"--junit", junit_path}})) {
    return kExitBadInput;
  }
  if (vm.count("max-events") && max_events <= 0) {
    std::cerr << "lockstep fuzz: --max-events must be positive\n";
    return kExitBadInput;
  }
  if (vm.count("max-case-s") && !(max_case_s > 0 && max_case_s <= max_seconds)) {
    std::cerr << "lockstep fuzz: --max-case-s must be a positive number of seconds, at most "
              << kMaxDurationMs / 1000 << " (as [fuzz] max_case_s)\n";
    return kExitBadInput;
  }
  const std::vector<std::string> watch = fuzz::HoldProperties(base);
  // A base must name a property to hold: those judged in every run (script_errors) are watched
  // too, but alone they make no search of the lock's promises (as `run` refuses an [expect]
  // that names nothing).
  const bool names_one = std::any_of(base.expect.begin(), base.expect.end(), [](const auto& e) {
    return e.second == Expectation::kHold;
  });
  if (watch.empty() || !names_one) {
    std::cerr << file << ": the base expects no property to hold, so there is nothing to search "
              << "for; add e.g. [expect] mutual_exclusion = \"hold\"\n";
    return kExitBadInput;
  }
  std::string error;
  std::optional<fuzz::FuzzPlan> plan = fuzz::MakePlan(base, &error);
  if (!plan) {
    std::cerr << file << ": " << error << "\n";
    return kExitBadInput;
  }
  if (!sim::Simulation::Create(base, lua_dir, &error)) {
    std::cerr << file << ": " << error << "\n";
    return kExitBadInput;
  }
  std::optional<Scenario> reference;
  std::string reference_what;
  if (vm.count("reference")) {
    reference = ResolveReference(reference_text, base, &reference_what, &error);
    if (!reference) {
      std::cerr << "lockstep fuzz: " << error << "\n";
      return kExitBadInput;
    }
    if (!sim::Simulation::Create(*reference, lua_dir, &error)) {
      std::cerr << "lockstep fuzz: --reference " << reference_text << ": " << error << "\n";
      return kExitBadInput;
    }
  }
  // The run store, as `run` and `replay` keep theirs: a new folder for every search,
  // lockstep-out/fuzz-<base>/<time>-seed<S>[-shard<I>of<N>], never an earlier one's. An --out
  // that holds a search's results is replaced only with --force, which removes them first.
  std::string what = "seed" + std::to_string(seed);
  if (shard_count > 1) {  // Shards run side by side on one machine must not share a folder.
    what += "-shard" + std::to_string(shard_index) + "of" + std::to_string(shard_count);
  }
  std::vector<std::string> subdirs(history::kProperties.begin(), history::kProperties.end());
  subdirs.push_back("errors");
  subdirs.push_back("over-limit");
  bool stored = false;
  if (std::optional<int> done = ChooseRunDir("fuzz", "fuzz-" + base.name, what, force, subdirs,
                                             &out_dir, &stored)) {
    return *done;
  }
  std::error_code ec;
  if (force) {
    // An earlier search's folders: <property>, <property>-<rule> (--keep-going), errors,
    // over-limit.
    for (const fs::directory_entry& e : fs::directory_iterator(out_dir, ec)) {
      const std::string name = e.path().filename().string();
      const bool ours = std::any_of(subdirs.begin(), subdirs.end(), [&](const std::string& s) {
        return name == s || name.rfind(s + "-", 0) == 0;
      });
      std::error_code ec2;
      if (ours && e.is_directory(ec2) && !e.is_symlink(ec2)) fs::remove_all(e.path(), ec2);
    }
    ec.clear();
  }
  fs::create_directories(out_dir, ec);
  if (ec) {
    std::cerr << "lockstep fuzz: cannot create " << out_dir << ": " << ec.message() << "\n";
    return kExitBadInput;
  }
  // Everything printed from here on is kept as OUT/summary.txt too (its result line last), and
  // a stored search becomes the newest of its base in the store's index.
  KeptOutput kept(out_dir, stored);
  if (!corpus_dir.empty()) {
    fs::create_directories(corpus_dir, ec);
    if (ec) {
      std::cerr << "lockstep fuzz: cannot create " << corpus_dir << ": " << ec.message() << "\n";
      return kExitBadInput;
    }
  }

  fuzz::CaseLimits limits;
  limits.max_events = vm.count("max-events") ? max_events : base.fuzz.max_events;
  limits.max_wall_s = vm.count("max-case-s") ? max_case_s : base.fuzz.max_case_s;
  limits.verify_keys = verify;

  InterruptScope interrupt;

  std::cout << "base       " << base.name << " (" << file << ")\n"
            << "watching   ";
  for (size_t i = 0; i < watch.size(); ++i) std::cout << (i ? ", " : "") << watch[i];
  if (reference) std::cout << "\nreference  " << reference_what;
  std::cout << "\nsearch     " << strategy_text << ", seed " << seed;
  if (!corpus_dir.empty() && !keep_going) std::cout << " (unless a corpus file still fails)";
  if (shard_count > 1) std::cout << ", shard " << shard_index << "/" << shard_count;
  if (!shard_source.empty()) std::cout << " (from " << shard_source << ")";
  if (cases > 0) std::cout << ", " << cases << " cases";
  if (time_budget > 0) std::cout << ", budget " << time_budget << " s";
  std::cout << ", " << jobs << " jobs" << (keep_going ? ", keep going" : ", until the first failure")
            << "\n" << std::flush;

  ProgressLine progress(quiet);
  std::vector<FuzzFailure> written;

  // Regression mode: the corpus's files first. Each expects the property it once broke to be
  // violated; a file that still breaks it is a failure found again.
  int corpus_replayed = 0, corpus_failing = 0;
  if (!corpus_dir.empty()) {
    std::vector<fs::path> files;
    for (const fs::directory_entry& entry : fs::directory_iterator(corpus_dir, ec)) {
      if (entry.path().extension() == ".toml") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& path : files) {
      ScenarioError corpus_error;
      std::optional<Scenario> c = LoadScenarioFile(path.string(), &corpus_error);
      if (!c) {
        std::cerr << "lockstep fuzz: corpus file skipped: " << corpus_error.ToString() << "\n";
        continue;
      }
      std::vector<std::string> expected;
      for (const auto& [property, want] : c->expect) {
        if (want == Expectation::kViolated) expected.push_back(property);
      }
      ++corpus_replayed;
      fuzz::CaseOutcome outcome = fuzz::RunCase(*c, expected, lua_dir, limits);
      if (outcome.status == fuzz::CaseStatus::kOverLimit) {
        std::cerr << "lockstep fuzz: corpus file " << path.string()
                  << " ran past its limit or stopped" << (outcome.error.empty() ? std::string() : " (" + outcome.error + ")") << " and was not judged\n";
      } else if (outcome.status == fuzz::CaseStatus::kError) {
        std::cerr << "lockstep fuzz: corpus file " << path.string() << " could not run: "
                  << outcome.error << "\n";
      }
      if (outcome.status != fuzz::CaseStatus::kFail) continue;
      ++corpus_failing;
      FuzzFailure w;
      w.property = outcome.broken.front();
      w.kind = outcome.first_kind.front();
      w.from = "corpus";
      w.file = path.string();
      w.explanation = outcome.first_explanation.front();
      w.reproduce = "lockstep run " + ShellQuote(path.string());
      w.reproduced = true;
      written.push_back(w);
    }
    std::cout << "corpus     " << corpus_replayed << " file(s) replayed from " << corpus_dir << ", "
              << corpus_failing << " still fail\n";
  }

  fuzz::SearchResult found;
  if (corpus_failing == 0 || keep_going) {
    fuzz::SearchOptions options;
    options.strategy = strategy;
    options.fuzz_seed = seed;
    options.cases = cases;
    options.time_budget_s = time_budget;
    options.keep_going = keep_going;
    options.until_saturated = until_saturated;
    options.jobs = jobs;
    options.shard_index = shard_index;
    options.shard_count = shard_count;
    options.lua_dir = lua_dir;
    options.reference = reference ? &*reference : nullptr;
    options.limits = limits;
    options.interrupted = interrupt.flag();
    found = fuzz::Search(base, *plan, watch, options, [&](const fuzz::SearchStatus& s) {
      char line[192];
      char shared[48] = "";
      if (reference) {
        std::snprintf(shared, sizeof(shared), ", %llu shared",
                      static_cast<unsigned long long>(s.shared));
      }
      std::snprintf(line, sizeof(line),
                    "[fuzz %llu cases, %.1f/s, %llu failing%s, %llu over limit or stopped, coverage %llu "
                    "(grew %llu cases ago), %.0f s]",
                    static_cast<unsigned long long>(s.cases_done),
                    s.wall_s > 0 ? static_cast<double>(s.cases_done) / s.wall_s : 0.0,
                    static_cast<unsigned long long>(s.failures), shared,
                    static_cast<unsigned long long>(s.over_limit),
                    static_cast<unsigned long long>(s.coverage),
                    static_cast<unsigned long long>(CasesSinceGrowth(s, shard_index, shard_count)),
                    s.wall_s);
      progress.Show(line);
    });
    progress.Clear();
    const fuzz::SearchStatus& s = found.status;
    char line[256];
    std::snprintf(line, sizeof(line),
                  "cases      %llu in %.2f s wall (%.1f per s), %llu failing, %llu over their limit or stopped%s\n",
                  static_cast<unsigned long long>(s.cases_done), s.wall_s,
                  s.wall_s > 0 ? static_cast<double>(s.cases_done) / s.wall_s : 0.0,
                  static_cast<unsigned long long>(s.failures),
                  static_cast<unsigned long long>(s.over_limit),
                  found.interrupted ? " (interrupted)" : found.budget_spent ? " (time budget spent)" : "");
    std::cout << line;
    std::cout << "coverage   " << s.coverage << " abstract transitions in " << s.coverage_cases
              << " case(s) counted in order; it last grew at case " << s.coverage_grew_at << " ("
              << CasesSinceGrowth(s, shard_index, shard_count) << " case(s) ago)"
              << (strategy == fuzz::Strategy::kGuided
                      ? "; " + std::to_string(s.corpus) + " case(s) kept to mutate"
                      : "")
              << (found.saturated ? "; SATURATED: " + std::to_string(until_saturated) +
                                        " cases in a row added nothing"
                                  : "")
              << "\n";
    if (reference) {
      std::cout << "shared     " << s.shared << " case(s) broke a watched property that the "
                << "reference broke too on the same case: not failures\n";
    }
    if (found.jobs_started < options.jobs) {
      std::cout << "jobs       " << found.jobs_started << " of the " << options.jobs
                << " asked for: the machine gave no more than " << found.threads_made
                << " threads (each reserves its stack; an address-space limit allows about 500 "
                   "in 4 GB), and a quarter of them were let go to leave the cases room\n";
    }
    // Written out, so that what ran away or failed to run can be run and looked at on its own.
    auto write_case = [&](const fuzz::SetAside& aside, const std::string& folder,
                          const std::string& why) {
      const uint64_t index = aside.index;
      const std::string dir = out_dir + "/" + folder;
      fs::create_directories(dir, ec);
      Scenario c = fuzz::Materialize(base, aside.c);
      c.name = DerivedName(base.name, "-case-" + std::to_string(index));
      ScenarioWriteOptions write;
      write.header = "Case " + std::to_string(index) + " of lockstep fuzz " + file + " --seed " +
                     std::to_string(seed) + " " + why;
      write.directory = dir;
      const std::string path = dir + "/" + c.name + ".toml";
      if (!WriteWholeFile(path, ScenarioToToml(c, write), &error)) std::cerr << "lockstep fuzz: " << error << "\n";
      std::cout << "           case " << index << " " << why << ": " << path << "\n";
    };
    char limit[128];
    std::snprintf(limit, sizeof(limit), "ran past its limit of %lld simulator events or %g s of wall time",
                  static_cast<long long>(limits.max_events), limits.max_wall_s);
    for (const fuzz::SetAside& aside : found.over_limit_cases) {
      write_case(aside, "over-limit", aside.message.empty() ? std::string(limit) : "stopped: " + aside.message);
    }
    for (const fuzz::SetAside& aside : found.errors) {
      write_case(aside, "errors", "could not run: " + aside.message);
    }
  }

  // Shrink and write each failure.
  for (size_t n = 0; n < found.failures.size() && !interrupt.interrupted(); ++n) {
    const fuzz::Failure& failure = found.failures[n];
    const Scenario original = fuzz::Materialize(base, failure.c);
    fuzz::ShrinkOptions shrink;
    shrink.jobs = jobs;
    shrink.lua_dir = lua_dir;
    shrink.reference = reference ? &*reference : nullptr;
    shrink.limits = limits;
    std::atomic<bool> cancel{false};
    shrink.limits.cancel = &cancel;
    shrink.max_tries = max_shrink;
    shrink.progress = [&](int steps, int tries) {
      if (interrupt.interrupted()) cancel.store(true);
      char line[160];
      std::snprintf(line, sizeof(line), "[shrink %s: %d steps, %d candidates tried]",
                    failure.property.c_str(), steps, tries);
      progress.Show(line);
    };
    fuzz::ShrinkResult shrunk =
        max_shrink > 0
            ? fuzz::Shrink(base, failure.c, failure.outcome, failure.property, watch, shrink)
            : fuzz::ShrinkResult{failure.c, failure.outcome, 0, 0};
    progress.Clear();
    Scenario result = fuzz::Materialize(base, shrunk.shrunk);
    result.name = DerivedName(base.name, "-" + failure.property);
    result.description = "found by lockstep fuzz from " + base.name + ": " + failure.property +
                         " breaks";
    result.expect = {{failure.property, Expectation::kViolated}};

    const std::string dir = out_dir + "/" + failure.property +
                            (keep_going && !failure.kind.empty() ? "-" + failure.kind : "");
    fs::create_directories(dir, ec);
    const std::string path = dir + "/" + result.name + ".toml";
    std::string explanation, lasted;
    for (size_t i = 0; i < shrunk.outcome.broken.size(); ++i) {
      if (shrunk.outcome.broken[i] != failure.property) continue;
      explanation = shrunk.outcome.first_explanation[i];
      // How long the violated condition lasted, in the shrunk file's run (which keeps it whole:
      // fuzz/shrink.h, ShrinkResult::extended).
      const int64_t from = shrunk.outcome.first_from_us[i], to = shrunk.outcome.first_to_us[i];
      const bool to_end = to >= shrunk.shrunk.duration_us;
      lasted = "from " + Seconds(from) + " to " + Seconds(to) + ", " + Seconds(to - from) +
               (to_end ? std::string(shrunk.extent_to_end
                                         ? " (to the end of the run: it did not end within the "
                                           "failing case's run)"
                                         : " (to the end of the run)")
                       : "");
    }
    FuzzFailure w;
    w.property = failure.property;
    w.kind = failure.kind;
    w.from = "search";
    w.index = failure.index;
    w.file = path;
    w.report_dir = dir;
    w.explanation = explanation;
    w.lasted = lasted;
    w.original_size = SizeText(fuzz::SizeOf(failure.c), original);
    w.shrunk_size = SizeText(fuzz::SizeOf(shrunk.shrunk), result);
    w.steps = shrunk.steps;
    w.tries = shrunk.tries;
    w.reproduce = "lockstep run " + ShellQuote(path);

    std::ostringstream header;
    header << "Found by lockstep fuzz: " << failure.property << " breaks.\n"
           << "  base      " << file << " (scenario " << base.name << ")\n"
           << "  search    seed " << seed << ", case " << failure.index;
    if (shard_count > 1) header << " (shard " << shard_index << "/" << shard_count << ")";
    header << "\n"
           << "  shrunk    in " << shrunk.steps << " steps (" << shrunk.tries
           << " candidates tried)\n"
           << "  from      " << w.original_size << "\n"
           << "  to        " << w.shrunk_size << "\n";
    if (reference) {
      header << "  reference " << reference_what << " keeps " << failure.property
             << " on this case: " << result.name << ".reference.toml\n";
    }
    header << "  reproduce lockstep run ";
    const std::string header_end =
        "\n\nFirst violation, " + lasted + ": " + explanation;
    ScenarioWriteOptions write;
    write.header = header.str() + result.name + ".toml" + header_end;
    write.directory = dir;
    if (!WriteWholeFile(path, ScenarioToToml(result, write), &error)) {
      std::cerr << "lockstep fuzz: " << error << "\n";
      return kExitFailed;
    }
    // The reports of the shrunk run come from `lockstep run` itself, which also proves that the
    // file reproduces the violation (its [expect] says "violated").
    w.check_status = RunQuietly(path, dir, lua_dir);
    w.reproduced = w.check_status == kExitOk;
    if (reference) {
      // The same shrunk case on the reference, expecting the property to hold there: the file
      // shows what differs, and `lockstep run` on it checks that it does.
      Scenario twin = fuzz::MaterializeReference(*reference, shrunk.shrunk);
      twin.name = DerivedName(result.name, "-reference");
      twin.description = "the reference's twin of " + result.name + ": the same case on " +
                         reference_what;
      twin.expect = {{failure.property, Expectation::kHold}};
      ScenarioWriteOptions twin_write;
      twin_write.header = "The reference's twin of " + result.name +
                          ".toml, from lockstep fuzz --reference " + reference_text +
                          ": the same case, on which " + failure.property +
                          " holds.\n  reproduce lockstep run " + result.name + ".reference.toml";
      twin_write.directory = dir;
      w.reference_file = dir + "/" + result.name + ".reference.toml";
      w.reference_reports = dir + "/reference";
      if (!WriteWholeFile(w.reference_file, ScenarioToToml(twin, twin_write), &error)) {
        std::cerr << "lockstep fuzz: " << error << "\n";
        return kExitFailed;
      }
      fs::create_directories(w.reference_reports, ec);
      w.reference_status = RunQuietly(w.reference_file, w.reference_reports, lua_dir);
      // What the reference was doing when the shrunk run's first violation began.
      for (size_t i = 0; i < shrunk.outcome.broken.size(); ++i) {
        if (shrunk.outcome.broken[i] != failure.property) continue;
        std::string moment_error;
        if (std::optional<std::string> m = fuzz::DescribeMoment(
                w.reference_reports + "/history.jsonl", shrunk.outcome.first_from_us[i],
                &moment_error)) {
          w.reference_moment = "the reference " + *m;
        }
      }
      // Both runs on one page. Without it the failure stands, with each run's own reports.
      w.comparison = dir + "/comparison.html";
      std::string compare_error;
      bool compared = false;
      try {
        compared = WriteComparison(w, ReferenceLabels(base.name, reference_what), lua_dir,
                                   &compare_error);
      } catch (const std::exception& e) {
        compare_error = std::string("internal error: ") + e.what();
      }
      if (!compared) {
        std::cerr << "lockstep fuzz: " << w.comparison << " not written: " << compare_error
                  << "\n";
        w.comparison.clear();
      }
    }
    if (!corpus_dir.empty()) {
      write.directory = corpus_dir;
      const std::string corpus_name = CorpusFileName(result.name, ScenarioToToml(result, write));
      write.header = header.str() + corpus_name + header_end;
      const std::string text = ScenarioToToml(result, write);
      const std::string corpus_path = corpus_dir + "/" + corpus_name;
      if (!WriteWholeFile(corpus_path, text, &error)) {
        std::cerr << "lockstep fuzz: " << error << "\n";
      }
    }
    written.push_back(w);
  }

  std::cout << FailuresText(written);

  const bool failed = !written.empty();
  // The search as data: --json and --junit for CI, and fuzz-result.toml for the merge of
  // the shards (lockstep fuzz merge), written whatever was found.
  FuzzSearch result;
  result.base = file;
  result.scenario = base.name;
  result.seed = seed;
  result.shard_index = shard_index;
  result.shard_count = shard_count;
  result.keep_going = keep_going;
  result.watched = watch;
  result.cases = found.status.cases_done;
  result.wall_s = found.status.wall_s;
  result.over_limit = found.status.over_limit;
  for (const fuzz::SetAside& aside : found.over_limit_cases) {
    result.over_limit_cases.push_back(aside.index);
  }
  result.strategy = strategy_text;
  result.corpus_kept = found.status.corpus;
  result.errors = found.errors.size();
  result.interrupted = found.interrupted;
  result.reference = reference ? reference_what : "";
  result.shared = found.status.shared;
  result.corpus_replayed = corpus_replayed;
  result.corpus_failing = corpus_failing;
  result.coverage = found.status.coverage;
  result.coverage_grew_at = found.status.coverage_grew_at;
  result.coverage_cases = found.status.coverage_cases;
  result.saturated = found.saturated;
  result.failures = written;
  if (!WriteWholeFile(out_dir + "/" + kFuzzResultFile, FuzzResultToml(result, out_dir), &error) ||
      !WriteWholeFile(out_dir + "/" + kCoverageFile, CoverageText(found.coverage), &error) ||
      (!json_path.empty() && !WriteWholeFile(json_path, FuzzJson(result), &error)) ||
      (!junit_path.empty() && !WriteWholeFile(junit_path, FuzzJunit(result), &error))) {
    std::cerr << "lockstep fuzz: " << error << "\n";
    return kExitFailed;
  }
  if (interrupt.interrupted() || found.interrupted) {
    std::cout << "result     INTERRUPTED" << (failed ? " (the failures above were written)" : "") << "\n";
    return interrupt.exit_status();
  }
  if (failed) {
    const bool all_corpus = std::all_of(written.begin(), written.end(),
                                        [](const FuzzFailure& w) { return w.from == "corpus"; });
    std::cout << "result     FAIL: " << written.size() << " failure(s) "
              << (all_corpus ? "replayed from " + corpus_dir : "written under " + out_dir) << "\n";
    return kExitFailed;
  }
  if (!found.errors.empty()) {
    const bool internal = std::any_of(found.errors.begin(), found.errors.end(), [](const auto& e) {
      return e.message.rfind("internal error", 0) == 0;
    });
    std::cout << "result     ERROR: " << found.errors.size() << " case(s) could not run (see above); "
              << (internal ? "an internal error is a bug in lockstep: please report it with the file above\n"
                           : "fix the base or its [fuzz] table\n");
    return kExitBadInput;
  }
  std::cout << "result     PASS: no watched property broke in " << found.status.cases_done
            << " cases\n";
  return kExitOk;
}

}  // namespace lockstep::cli
