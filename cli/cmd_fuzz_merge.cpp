// lockstep fuzz merge DIR...: the shards of one search (lockstep fuzz --shard I/N, each with its
// own --out folder) merged into one result, as if their cases had run in one process.
#include <boost/program_options.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "base/read_file.h"
#include "cli/common.h"
#include "cli/fuzz_results.h"
#include "cli/subcommands.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace lockstep::cli {

namespace {

const char* kMergeHelp =
    "usage: lockstep fuzz merge SHARD_DIR... --out DIR [--json F] [--junit F] [--corpus DIR]\n"
    "\n"
    "Merges the output folders of the shards of one search (lockstep fuzz --shard I/N with\n"
    "the same base, seed and N, each with its own --out) into one result, as if their\n"
    "cases had run in one process: cases and counts added up; failures de-duplicated by\n"
    "property and rule (with --keep-going) keeping the smallest case index, or, without it,\n"
    "the one failure with the smallest index; each kept failure's folder (shrunk file,\n"
    "reports, reference twin) copied into DIR; one JSON, one JUnit, one corpus. A shard\n"
    "folder missing from the list is named in the summary.\n"
    "\n"
    "Exit status: 0 no failure, 1 a failure in some shard, 2 bad input (a folder that is no\n"
    "search's result, shards of different searches).\n"
    "\n"
    "Example:\n"
    "  lockstep fuzz merge shard-0 shard-1 shard-2 shard-3 --out merged --junit fuzz.xml\n"
    "\n"
    "Options";

// Whether two shards' results belong to one search.
std::string Mismatch(const FuzzSearch& a, const FuzzSearch& b) {
  if (a.scenario != b.scenario) return "bases " + a.scenario + " and " + b.scenario;
  if (a.seed != b.seed) {
    return "seeds " + std::to_string(a.seed) + " and " + std::to_string(b.seed);
  }
  if (a.shard_count != b.shard_count) {
    return "shard counts " + std::to_string(a.shard_count) + " and " + std::to_string(b.shard_count);
  }
  if (a.keep_going != b.keep_going) return "one with --keep-going, one without";
  if (a.strategy != b.strategy) return "strategies " + a.strategy + " and " + b.strategy;
  if (a.reference != b.reference) return "references '" + a.reference + "' and '" + b.reference + "'";
  if (a.watched != b.watched) return "watched properties";
  return "";
}

}  // namespace

int FuzzMergeMain(const std::vector<std::string>& args) {
  std::vector<std::string> dirs;
  std::string out_dir, json_path, junit_path, corpus_dir;
  bool force = false;
  po::options_description desc(kMergeHelp);
  desc.add_options()("help,h", "show this help")(
      "out", po::value(&out_dir), "the merged result's folder (required)")(
      "json", po::value(&json_path), "write the merged summary as JSON (docs/fuzzing.md)")(
      "junit", po::value(&junit_path), "write JUnit XML: one testcase per watched property")(
      "corpus", po::value(&corpus_dir), "store each kept failure's shrunk file there")(
      "force", po::bool_switch(&force), "replace a merged result --out holds");
  po::options_description hidden;
  hidden.add_options()("dirs", po::value(&dirs));
  po::positional_options_description positional;
  positional.add("dirs", -1);
  po::variables_map vm;
  if (std::optional<int> done = ParseArgs("fuzz merge", args, desc, hidden, positional, &vm)) {
    return *done;
  }
  if (dirs.empty() || out_dir.empty()) {
    std::cerr << "lockstep fuzz merge: which shard folders, and where to? e.g. lockstep fuzz merge "
                 "shard-0 shard-1 --out merged\n";
    return kExitBadInput;
  }

  std::vector<FuzzSearch> shards;
  std::vector<std::vector<uint64_t>> coverages;  // Each shard's transitions.
  for (const std::string& dir : dirs) {
    std::string error;
    std::optional<FuzzSearch> s = ReadFuzzResult(dir, &error);
    if (!s) {
      std::cerr << "lockstep fuzz merge: " << error << "\n";
      return kExitBadInput;
    }
    if (!shards.empty()) {
      if (const std::string m = Mismatch(shards.front(), *s); !m.empty()) {
        std::cerr << "lockstep fuzz merge: " << dirs.front() << " and " << dir
                  << " are not shards of one search: " << m << "\n";
        return kExitBadInput;
      }
      for (size_t i = 0; i < shards.size(); ++i) {
        if (shards[i].shard_index == s->shard_index) {
          std::cerr << "lockstep fuzz merge: " << dirs[i] << " and " << dir << " are both shard "
                    << s->shard_index << "/" << s->shard_count << "\n";
          return kExitBadInput;
        }
      }
    }
    std::optional<std::vector<uint64_t>> transitions = ReadCoverage(dir, &error);
    if (!transitions) {
      std::cerr << "lockstep fuzz merge: " << error << "\n";
      return kExitBadInput;
    }
    coverages.push_back(std::move(*transitions));
    shards.push_back(std::move(*s));
  }
  std::error_code ec;
  if (fs::exists(fs::path(out_dir) / kFuzzResultFile) && !force) {
    std::cerr << "lockstep fuzz merge: " << out_dir
              << " holds a result already; give another --out, or --force to replace it\n";
    return kExitBadInput;
  }
  fs::create_directories(out_dir, ec);
  if (ec) {
    std::cerr << "lockstep fuzz merge: cannot create " << out_dir << ": " << ec.message() << "\n";
    return kExitBadInput;
  }

  // The sums, and the failures as one process would have kept them.
  FuzzSearch merged = shards.front();
  merged.shard_index = 0;
  merged.cases = merged.over_limit = merged.errors = merged.shared = 0;
  merged.wall_s = 0;
  merged.over_limit_cases.clear();
  merged.interrupted = false;
  merged.corpus_replayed = merged.corpus_failing = 0;
  merged.failures.clear();
  // Each shard steered by its own coverage; the merge says what their union reached.
  std::set<uint64_t> united;
  for (const std::vector<uint64_t>& c : coverages) united.insert(c.begin(), c.end());
  merged.coverage = united.size();
  merged.coverage_cases = merged.coverage_grew_at = 0;
  merged.saturated = true;
  merged.corpus_kept = 0;
  for (const FuzzSearch& s : shards) {
    merged.coverage_cases += s.coverage_cases;
    merged.corpus_kept += s.corpus_kept;
    merged.coverage_grew_at = std::max(merged.coverage_grew_at, s.coverage_grew_at);
    merged.saturated = merged.saturated && s.saturated;
  }
  std::map<std::string, FuzzFailure> kept;  // By "property/rule".
  std::map<std::string, FuzzFailure> corpus;  // Corpus files still failing, by file name.
  for (const FuzzSearch& s : shards) {
    merged.merged_shards.push_back(s.shard_index);
    merged.cases += s.cases;
    merged.over_limit += s.over_limit;
    merged.errors += s.errors;
    merged.shared += s.shared;
    merged.wall_s = std::max(merged.wall_s, s.wall_s);  // The shards ran side by side.
    merged.interrupted = merged.interrupted || s.interrupted;
    merged.corpus_replayed = std::max(merged.corpus_replayed, s.corpus_replayed);
    merged.over_limit_cases.insert(merged.over_limit_cases.end(), s.over_limit_cases.begin(),
                                   s.over_limit_cases.end());
    for (const FuzzFailure& f : s.failures) {
      if (f.from == "corpus") {
        corpus.emplace(fs::path(f.file).filename().string(), f);
        continue;
      }
      const std::string key = s.keep_going ? f.property + "/" + f.kind : "first";
      auto it = kept.find(key);
      if (it == kept.end() || f.index < it->second.index) kept[key] = f;
    }
  }
  std::sort(merged.merged_shards.begin(), merged.merged_shards.end());
  std::sort(merged.over_limit_cases.begin(), merged.over_limit_cases.end());
  if (merged.over_limit_cases.size() > 20) merged.over_limit_cases.resize(20);
  merged.corpus_failing = static_cast<int>(corpus.size());
  for (auto& [name, f] : corpus) merged.failures.push_back(f);
  std::vector<FuzzFailure> found;
  for (auto& [key, f] : kept) found.push_back(f);
  std::sort(found.begin(), found.end(),
            [](const FuzzFailure& a, const FuzzFailure& b) { return a.index < b.index; });

  // Each kept failure's folder, copied whole, with its paths moved along.
  for (FuzzFailure& f : found) {
    const fs::path from = f.report_dir;
    const fs::path to = fs::path(out_dir) / from.filename();
    fs::remove_all(to, ec);
    fs::copy(from, to, fs::copy_options::recursive, ec);
    if (ec) {
      std::cerr << "lockstep fuzz merge: cannot copy " << from.string() << " to " << to.string()
                << ": " << ec.message() << "\n";
      return kExitFailed;
    }
    auto moved = [&](std::string* path) {
      if (path->empty()) return;
      const fs::path relative = fs::path(*path).lexically_relative(from);
      if (!relative.empty() && *relative.begin() != "..") *path = (to / relative).string();
    };
    moved(&f.file);
    moved(&f.reference_file);
    moved(&f.reference_reports);
    moved(&f.comparison);
    f.report_dir = to.string();
    f.reproduce = "lockstep run " + ShellQuote(f.file);
    if (!corpus_dir.empty()) {
      std::string text, error;
      fs::create_directories(corpus_dir, ec);
      if (!ReadRegularFile(f.file, size_t{1} << 24, &text, &error) ||
          !WriteWholeFile((fs::path(corpus_dir) / CorpusFileName(fs::path(f.file).stem().string(), text)).string(), text, &error)) {
        std::cerr << "lockstep fuzz merge: " << f.file << ": " << error << "\n";
        return kExitFailed;
      }
    }
    merged.failures.push_back(f);
  }

  std::ostringstream summary;
  summary << "merged     " << shards.size() << " of " << merged.shard_count << " shard(s) of "
          << merged.scenario << " (seed " << merged.seed << "): shards";
  for (uint64_t i : merged.merged_shards) summary << " " << i;
  std::vector<uint64_t> missing;
  for (uint64_t i = 0; i < merged.shard_count && missing.size() < 20; ++i) {
    if (!std::binary_search(merged.merged_shards.begin(), merged.merged_shards.end(), i)) {
      missing.push_back(i);
    }
  }
  if (!missing.empty()) {
    summary << "; MISSING";
    for (uint64_t i : missing) summary << " " << i;
    if (merged.shard_count - shards.size() > missing.size()) summary << " ...";
  }
  summary << "\ncases      " << merged.cases << ", " << merged.over_limit << " over their limit, "
          << merged.errors << " could not run" << (merged.interrupted ? ", some shard interrupted" : "")
          << "\n";
  summary << "coverage   " << merged.coverage << " abstract transitions in the shards' union (each shard's:";
  for (const FuzzSearch& s : shards) summary << " " << s.coverage;
  summary << ")" << (merged.saturated ? "; every shard saturated" : "") << "\n";
  if (!merged.reference.empty()) {
    summary << "shared     " << merged.shared << " case(s) broke a watched property that the "
            << "reference broke too on the same case: not failures\n";
  }
  summary << FailuresText(merged.failures);
  summary << "result     "
          << (merged.failures.empty() ? "PASS: no watched property broke in " +
                                            std::to_string(merged.cases) + " cases"
                                      : "FAIL: " + std::to_string(merged.failures.size()) +
                                            " failure(s) merged into " + out_dir)
          << "\n";
  std::cout << summary.str();

  std::string error;
  if (!WriteWholeFile((fs::path(out_dir) / kFuzzResultFile).string(),
                      FuzzResultToml(merged, out_dir), &error) ||
      !WriteWholeFile((fs::path(out_dir) / "summary.txt").string(), summary.str(), &error) ||
      !WriteWholeFile((fs::path(out_dir) / kCoverageFile).string(),
                      CoverageText(std::vector<uint64_t>(united.begin(), united.end())), &error) ||
      (!json_path.empty() && !WriteWholeFile(json_path, FuzzJson(merged), &error)) ||
      (!junit_path.empty() && !WriteWholeFile(junit_path, FuzzJunit(merged), &error))) {
    std::cerr << "lockstep fuzz merge: " << error << "\n";
    return kExitFailed;
  }
  return merged.failures.empty() ? kExitOk : kExitFailed;
}

}  // namespace lockstep::cli
