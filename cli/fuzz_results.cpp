#include "cli/fuzz_results.h"

#include <cstdio>
#include <filesystem>
#include <sstream>

#include <toml++/toml.h>

#include "base/read_file.h"
#include "cli/ci_outputs.h"
#include "cli/common.h"
#include "history/jsonl.h"
#include "reports/text.h"

namespace lockstep::cli {

namespace fs = std::filesystem;
using reports::JsonString;

namespace {

std::string Fixed(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

double CasesPerSecond(const FuzzSearch& s) {
  return s.wall_s > 0 ? static_cast<double>(s.cases) / s.wall_s : 0.0;
}

// `path` relative to `folder` when it lies inside it, else as it is.
std::string Inside(const std::string& path, const std::string& folder) {
  if (path.empty()) return path;
  std::error_code ec;
  const fs::path relative = fs::relative(path, folder, ec);
  if (ec || relative.empty() || *relative.begin() == "..") return path;
  return relative.string();
}

std::string Outside(const std::string& path, const std::string& folder) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(folder) / path).lexically_normal().string();
}

}  // namespace

std::string CorpusFileName(const std::string& name, const std::string& text) {
  char hash[20];
  std::snprintf(hash, sizeof(hash), "%08llx",
                static_cast<unsigned long long>(history::FnvAppend(history::kFnvOffset, text) &
                                                0xffffffffull));
  return name + "-" + hash + ".toml";
}

std::string FailuresText(const std::vector<FuzzFailure>& failures) {
  std::ostringstream out;
  for (const FuzzFailure& w : failures) {
    out << "FAILURE    " << w.property << (w.from == "corpus" ? " (corpus)" : "") << "\n"
        << "  first    " << Printable(w.explanation) << "\n";
    if (!w.lasted.empty()) out << "  lasted   " << w.lasted << "\n";
    if (w.from == "search") {
      out << "  case     " << w.index << ": " << w.original_size << "\n"
          << "  shrunk   " << w.shrunk_size << " (" << w.steps << " steps, " << w.tries
          << " tried)\n"
          << "  file     " << w.file << "\n"
          << "  reports  " << w.report_dir << "/report.html, trace.json, summary.md\n";
      if (w.check_status == 1) {
        out << "  WARNING  `lockstep run` on the file did not reproduce the violation; "
            << "see " << w.report_dir << "/summary.txt\n";
      } else if (!w.reproduced) {
        out << "  WARNING  `lockstep run` on the file could not run (exit " << w.check_status
            << ", its message above): the file is written, its violation not checked again\n";
      }
    }
    if (!w.reference_file.empty()) {
      out << "  reference " << w.reference_file << ": " << w.property
          << (w.reference_status == 0 ? " holds" : " does NOT hold")
          << " on the same case (reports " << w.reference_reports << "/report.html)\n";
      if (!w.reference_moment.empty()) out << "  there    " << w.reference_moment << "\n";
      if (!w.comparison.empty()) out << "  compare  " << w.comparison << "\n";
      if (w.reference_status != 0) {
        out << "  WARNING  the search saw the reference hold here; see " << w.reference_reports
            << "/summary.txt\n";
      }
    }
    out << "  reproduce " << w.reproduce << "\n";
  }
  return out.str();
}

std::string FuzzJson(const FuzzSearch& s) {
  std::ostringstream j;
  j << "{\n  \"base\": " << JsonString(s.base) << ",\n  \"scenario\": " << JsonString(s.scenario)
    << ",\n  \"seed\": " << s.seed << ",\n  \"shard\": {\"index\": " << s.shard_index
    << ", \"count\": " << s.shard_count << "},\n  \"strategy\": " << JsonString(s.strategy) << ",\n";
  if (!s.merged_shards.empty()) {
    j << "  \"merged_shards\": [";
    for (size_t i = 0; i < s.merged_shards.size(); ++i) j << (i ? ", " : "") << s.merged_shards[i];
    j << "],\n";
  }
  j << "  \"watched\": [";
  for (size_t i = 0; i < s.watched.size(); ++i) j << (i ? ", " : "") << JsonString(s.watched[i]);
  j << "],\n  \"cases\": " << s.cases << ",\n  \"wall_s\": " << Fixed("%.3f", s.wall_s)
    << ",\n  \"cases_per_s\": " << Fixed("%.2f", CasesPerSecond(s))
    << ",\n  \"over_limit\": " << s.over_limit << ",\n  \"over_limit_cases\": [";
  for (size_t i = 0; i < s.over_limit_cases.size(); ++i) {
    j << (i ? ", " : "") << s.over_limit_cases[i];
  }
  j << "],\n  \"errors\": " << s.errors
    << ",\n  \"interrupted\": " << (s.interrupted ? "true" : "false")
    << ",\n  \"reference\": " << (s.reference.empty() ? "null" : JsonString(s.reference))
    << ",\n  \"shared\": " << s.shared << ",\n  \"coverage\": {\"transitions\": " << s.coverage
    << ", \"last_grew_at_case\": " << s.coverage_grew_at << ", \"cases_counted\": "
    << s.coverage_cases << ", \"saturated\": " << (s.saturated ? "true" : "false")
    << ", \"corpus_kept\": " << s.corpus_kept << "}"
    << ",\n  \"corpus\": {\"replayed\": " << s.corpus_replayed
    << ", \"failing\": " << s.corpus_failing << "},\n  \"failures\": [";
  for (size_t i = 0; i < s.failures.size(); ++i) {
    const FuzzFailure& w = s.failures[i];
    j << (i ? "," : "") << "\n    {\"property\": " << JsonString(w.property)
      << ", \"rule\": " << JsonString(w.kind) << ", \"from\": " << JsonString(w.from)
      << ", \"case\": " << w.index << ", \"file\": " << JsonString(w.file)
      << ", \"reports\": " << JsonString(w.report_dir)
      << ", \"reproduce\": " << JsonString(w.reproduce)
      << ", \"reproduced\": " << (w.reproduced ? "true" : "false")
      << ", \"first_violation\": " << JsonString(w.explanation)
      << ", \"original\": " << JsonString(w.original_size)
      << ", \"shrunk\": " << JsonString(w.shrunk_size) << ", \"shrink_steps\": " << w.steps
      << ", \"shrink_tries\": " << w.tries;
    if (!w.reference_file.empty()) {
      j << ", \"reference\": {\"file\": " << JsonString(w.reference_file)
        << ", \"reports\": " << JsonString(w.reference_reports)
        << ", \"holds\": " << (w.reference_status == 0 ? "true" : "false")
        << ", \"at_violation\": " << JsonString(w.reference_moment)
        << ", \"comparison\": " << (w.comparison.empty() ? "null" : JsonString(w.comparison)) << "}";
    }
    j << "}";
  }
  j << (s.failures.empty() ? "" : "\n  ") << "],\n  \"result\": "
    << JsonString(s.failures.empty() ? "pass" : "fail") << "\n}\n";
  return j.str();
}

std::string FuzzJunit(const FuzzSearch& s) {
  std::ostringstream x;
  int failures = 0;
  for (const std::string& property : s.watched) {
    for (const FuzzFailure& w : s.failures) {
      if (w.property == property) {
        ++failures;
        break;
      }
    }
  }
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<testsuites>\n  <testsuite name=\"" << XmlEscape("lockstep fuzz " + s.scenario)
    << "\" tests=\"" << s.watched.size() << "\" failures=\"" << failures << "\" time=\""
    << Fixed("%.3f", s.wall_s) << "\">\n"
    << "    <properties><property name=\"seed\" value=\"" << s.seed
    << "\"/><property name=\"cases\" value=\"" << s.cases << "\"/><property name=\"shard\" value=\""
    << s.shard_index << "/" << s.shard_count << "\"/></properties>\n";
  for (const std::string& property : s.watched) {
    x << "    <testcase classname=\"" << XmlEscape("lockstep.fuzz." + s.scenario) << "\" name=\""
      << XmlEscape(property) << "\">";
    bool any = false;
    for (const FuzzFailure& w : s.failures) {
      if (w.property != property) continue;
      any = true;
      x << "\n      <failure message=\"" << XmlEscape(property + " violated; shrunk file " + w.file)
        << "\" type=\"" << XmlEscape(w.kind) << "\">" << XmlEscape(w.explanation)
        << "\nfile: " << XmlEscape(w.file) << "\nreproduce: " << XmlEscape(w.reproduce)
        << "</failure>";
    }
    x << (any ? "\n    " : "") << "</testcase>\n";
  }
  x << "  </testsuite>\n</testsuites>\n";
  return x.str();
}

std::string FuzzResultToml(const FuzzSearch& s, const std::string& folder) {
  toml::array watched;
  for (const std::string& w : s.watched) watched.push_back(w);
  toml::array over;
  for (uint64_t i : s.over_limit_cases) over.push_back(static_cast<int64_t>(i));
  toml::table search{
      {"base", s.base},
      {"scenario", s.scenario},
      {"seed", static_cast<int64_t>(s.seed)},
      {"shard_index", static_cast<int64_t>(s.shard_index)},
      {"shard_count", static_cast<int64_t>(s.shard_count)},
      {"keep_going", s.keep_going},
      {"watched", watched},
      {"cases", static_cast<int64_t>(s.cases)},
      {"wall_s", s.wall_s},
      {"over_limit", static_cast<int64_t>(s.over_limit)},
      {"over_limit_cases", over},
      {"errors", static_cast<int64_t>(s.errors)},
      {"interrupted", s.interrupted},
      {"reference", s.reference},
      {"shared", static_cast<int64_t>(s.shared)},
      {"corpus_replayed", s.corpus_replayed},
      {"corpus_failing", s.corpus_failing},
      {"coverage", static_cast<int64_t>(s.coverage)},
      {"coverage_grew_at", static_cast<int64_t>(s.coverage_grew_at)},
      {"coverage_cases", static_cast<int64_t>(s.coverage_cases)},
      {"saturated", s.saturated},
      {"strategy", s.strategy},
      {"corpus_kept", static_cast<int64_t>(s.corpus_kept)},
  };
  toml::array failures;
  for (const FuzzFailure& w : s.failures) {
    failures.push_back(toml::table{
        {"property", w.property},
        {"rule", w.kind},
        {"from", w.from},
        {"case", static_cast<int64_t>(w.index)},
        {"file", Inside(w.file, folder)},
        {"reports", Inside(w.report_dir, folder)},
        {"reproduce", w.reproduce},
        {"first_violation", w.explanation},
        {"original", w.original_size},
        {"shrunk", w.shrunk_size},
        {"lasted", w.lasted},
        {"shrink_steps", w.steps},
        {"shrink_tries", w.tries},
        {"reproduced", w.reproduced},
        {"check_status", w.check_status},
        {"reference_file", Inside(w.reference_file, folder)},
        {"reference_reports", Inside(w.reference_reports, folder)},
        {"reference_status", w.reference_status},
        {"reference_moment", w.reference_moment},
        {"comparison", Inside(w.comparison, folder)},
    });
  }
  if (!s.merged_shards.empty()) {
    toml::array shards;
    for (uint64_t i : s.merged_shards) shards.push_back(static_cast<int64_t>(i));
    search.insert("merged_shards", shards);
  }
  toml::table root{{"search", search}, {"failures", failures}};
  std::ostringstream out;
  out << "# What lockstep fuzz found in this folder, for lockstep fuzz merge (paths relative to "
         "the folder).\n"
      << root << "\n";
  return out.str();
}

std::optional<FuzzSearch> ReadFuzzResult(const std::string& folder, std::string* error) {
  const std::string path = (fs::path(folder) / kFuzzResultFile).string();
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    *error = path + ": " + std::string(e.description()) +
             (fs::exists(path) ? "" : " (is " + folder + " the --out folder of a lockstep fuzz search?)");
    return std::nullopt;
  }
  const toml::table* search = root["search"].as_table();
  if (search == nullptr) {
    *error = path + ": no [search] table; not a lockstep fuzz result";
    return std::nullopt;
  }
  auto text = [](const toml::node_view<const toml::node> n) { return n.value_or(std::string()); };
  auto count = [](const toml::node_view<const toml::node> n) {
    return static_cast<uint64_t>(std::max<int64_t>(0, n.value_or(int64_t{0})));
  };
  const toml::table& t = *search;
  FuzzSearch s;
  s.base = text(t["base"]);
  s.scenario = text(t["scenario"]);
  s.seed = count(t["seed"]);
  s.shard_index = count(t["shard_index"]);
  s.shard_count = std::max<uint64_t>(1, count(t["shard_count"]));
  s.keep_going = t["keep_going"].value_or(false);
  if (const toml::array* a = t["merged_shards"].as_array()) {
    for (const toml::node& n : *a) s.merged_shards.push_back(static_cast<uint64_t>(n.value_or(int64_t{0})));
  }
  if (const toml::array* a = t["watched"].as_array()) {
    for (const toml::node& n : *a) s.watched.push_back(n.value_or(std::string()));
  }
  s.cases = count(t["cases"]);
  s.wall_s = t["wall_s"].value_or(0.0);
  s.over_limit = count(t["over_limit"]);
  if (const toml::array* a = t["over_limit_cases"].as_array()) {
    for (const toml::node& n : *a) s.over_limit_cases.push_back(static_cast<uint64_t>(n.value_or(int64_t{0})));
  }
  s.errors = count(t["errors"]);
  s.interrupted = t["interrupted"].value_or(false);
  s.reference = text(t["reference"]);
  s.shared = count(t["shared"]);
  s.corpus_replayed = static_cast<int>(count(t["corpus_replayed"]));
  s.corpus_failing = static_cast<int>(count(t["corpus_failing"]));
  s.coverage = count(t["coverage"]);
  s.coverage_grew_at = count(t["coverage_grew_at"]);
  s.coverage_cases = count(t["coverage_cases"]);
  s.saturated = t["saturated"].value_or(false);
  s.strategy = t["strategy"].value_or(std::string("random"));
  s.corpus_kept = count(t["corpus_kept"]);
  if (const toml::array* a = root["failures"].as_array()) {
    for (const toml::node& n : *a) {
      const toml::table* f = n.as_table();
      if (f == nullptr) continue;
      FuzzFailure w;
      w.property = text((*f)["property"]);
      w.kind = text((*f)["rule"]);
      w.from = text((*f)["from"]);
      w.index = count((*f)["case"]);
      w.file = Outside(text((*f)["file"]), folder);
      w.report_dir = Outside(text((*f)["reports"]), folder);
      w.reproduce = text((*f)["reproduce"]);
      w.explanation = text((*f)["first_violation"]);
      w.original_size = text((*f)["original"]);
      w.shrunk_size = text((*f)["shrunk"]);
      w.lasted = text((*f)["lasted"]);
      w.steps = static_cast<int>(count((*f)["shrink_steps"]));
      w.tries = static_cast<int>(count((*f)["shrink_tries"]));
      w.reproduced = (*f)["reproduced"].value_or(false);
      w.check_status = static_cast<int>((*f)["check_status"].value_or(int64_t{0}));
      w.reference_file = Outside(text((*f)["reference_file"]), folder);
      w.reference_reports = Outside(text((*f)["reference_reports"]), folder);
      w.reference_status = static_cast<int>((*f)["reference_status"].value_or(int64_t{0}));
      w.reference_moment = text((*f)["reference_moment"]);
      w.comparison = Outside(text((*f)["comparison"]), folder);
      if (w.property.empty()) {
        *error = path + ": a failure without a property";
        return std::nullopt;
      }
      s.failures.push_back(std::move(w));
    }
  }
  return s;
}

std::string CoverageText(const std::vector<uint64_t>& transitions) {
  std::string out;
  out.reserve(transitions.size() * 17);
  char line[24];
  for (uint64_t t : transitions) {
    std::snprintf(line, sizeof(line), "%016llx\n", static_cast<unsigned long long>(t));
    out += line;
  }
  return out;
}

std::optional<std::vector<uint64_t>> ReadCoverage(const std::string& folder, std::string* error) {
  const std::string path = (fs::path(folder) / kCoverageFile).string();
  std::string text;
  if (!ReadRegularFile(path, size_t{1} << 30, &text, error)) {
    *error = path + ": " + *error;
    return std::nullopt;
  }
  std::vector<uint64_t> out;
  std::istringstream lines(text);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    if (line.empty() || line.size() > 16 ||
        line.find_first_not_of("0123456789abcdef") != std::string::npos) {
      *error = path + ":" + std::to_string(n) + ": not a transition (16 hex digits)";
      return std::nullopt;
    }
    out.push_back(std::stoull(line, nullptr, 16));
  }
  return out;
}

}  // namespace lockstep::cli
