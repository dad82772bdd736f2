// What a `lockstep fuzz` search found, as data: the search's figures and each failure it wrote.
// One search writes it three ways: --json and --junit for CI, and fuzz-result.toml in its
// output folder, which `lockstep fuzz merge` reads back to merge the shards of one search.
#ifndef LOCKSTEP_CLI_FUZZ_RESULTS_H_
#define LOCKSTEP_CLI_FUZZ_RESULTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lockstep::cli {

// One failure written (or a corpus file that still fails).
struct FuzzFailure {
  std::string property;
  std::string kind;  // The rule of its first violation.
  std::string from;  // "search" or "corpus"
  uint64_t index = 0;
  std::string file;        // The shrunk scenario file.
  std::string report_dir;  // Its run's reports.
  std::string reproduce;
  std::string explanation;
  std::string original_size, shrunk_size;
  std::string lasted;  // How long the first violation lasted in the shrunk run.
  int steps = 0, tries = 0;
  bool reproduced = false;
  int check_status = 0;  // `lockstep run` on the written file: 0 reproduced, 1 did not, else could not run.
  // With --reference: the reference's twin of the shrunk file and `lockstep run`'s status on it
  // (0: the reference holds the property there, as the search found), what the reference was
  // doing when the shrunk run's first violation began, and the page with both runs.
  std::string reference_file;
  std::string reference_reports;
  int reference_status = 0;
  std::string reference_moment;
  std::string comparison;  // The page with both runs; "" when it could not be written.
};

// The search's figures.
struct FuzzSearch {
  std::string base;      // The BASE path as given.
  std::string scenario;  // The base's scenario name.
  uint64_t seed = 1;
  uint64_t shard_index = 0;
  uint64_t shard_count = 1;
  bool keep_going = false;
  // A merged result (lockstep fuzz merge): the shard indexes it holds; empty for one search.
  std::vector<uint64_t> merged_shards;
  std::vector<std::string> watched;
  uint64_t cases = 0;
  double wall_s = 0;
  uint64_t over_limit = 0;
  std::vector<uint64_t> over_limit_cases;
  uint64_t errors = 0;
  bool interrupted = false;
  std::string reference;  // What the reference is; empty without --reference.
  uint64_t shared = 0;
  int corpus_replayed = 0, corpus_failing = 0;
  // Coverage (fuzz/coverage.h): distinct abstract transitions, the case (global index) that
  // last added some, the cases counted in order, and whether --until-saturated ended it.
  uint64_t coverage = 0;
  uint64_t coverage_grew_at = 0;
  uint64_t coverage_cases = 0;
  bool saturated = false;
  std::string strategy = "random";  // random or guided (fuzz/search.h).
  uint64_t corpus_kept = 0;         // Guided: the cases it kept to mutate (summed by a merge).
  std::vector<FuzzFailure> failures;
};

// coverage.txt: the transitions a search reached, one hex number a line, sorted, which
// `lockstep fuzz merge` unites across the shards.
inline constexpr const char* kCoverageFile = "coverage.txt";
std::string CoverageText(const std::vector<uint64_t>& transitions);
// nullopt with *error when the file cannot be read or has a line that is no hex number.
std::optional<std::vector<uint64_t>> ReadCoverage(const std::string& folder, std::string* error);

// The failures as the summary prints them, each a block opening with "FAILURE".
std::string FailuresText(const std::vector<FuzzFailure>& failures);

// A corpus file's name: the scenario's name and a hash of its text, so that distinct failures
// of one property sit side by side and the same one is stored once.
std::string CorpusFileName(const std::string& name, const std::string& text);

// The --json document (docs/fuzzing.md, "--json").
std::string FuzzJson(const FuzzSearch& s);
// The --junit document: one testcase per watched property.
std::string FuzzJunit(const FuzzSearch& s);

// fuzz-result.toml: the same data, for `lockstep fuzz merge`. Paths in it are relative to the
// folder it is in, so that a shard's folder can be moved (a CI artifact) before the merge.
inline constexpr const char* kFuzzResultFile = "fuzz-result.toml";
std::string FuzzResultToml(const FuzzSearch& s, const std::string& folder);
// Reads one back, its paths made relative to the current directory again; nullopt with
// *error when it cannot be read or is not one.
std::optional<FuzzSearch> ReadFuzzResult(const std::string& folder, std::string* error);

}  // namespace lockstep::cli

#endif  // LOCKSTEP_CLI_FUZZ_RESULTS_H_
