// Establishes that where the checkers read the events changes nothing: every scenario of the
// library and every broken-script scenario gives the same verdict, to the last violation's
// text and event list, with its readers on a thread of their own (as `lockstep run` has them)
// and inline (as a search has them), and with the history file written the same hash.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "model/scenario_toml.h"
#include "pipeline/pipeline.h"

namespace lockstep {
namespace {

const std::string kSource = LOCKSTEP_SOURCE_DIR;

std::vector<std::string> LibraryFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(kSource + "/scenarios")) {
    if (entry.path().extension() == ".toml") files.push_back(entry.path().string());
  }
  const std::string broken = kSource + "/scenarios/testdata/broken-scripts";
  for (const auto& entry : std::filesystem::directory_iterator(broken)) {
    if (std::filesystem::exists(entry.path() / "broken.toml")) {
      files.push_back((entry.path() / "broken.toml").string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Everything a verdict says, as text.
std::string Describe(const check::Verdict& v) {
  std::ostringstream out;
  out << "end " << v.run_end_us << " kind " << v.protocol_kind << "\n";
  for (const check::PropertyResult& r : v.results) {
    out << r.property << " applicable=" << r.applicable << " violated=" << r.violated
        << " violations=" << r.violation_count << " observations=" << r.observation_count << "\n";
    for (const check::Violation& x : r.violations) {
      out << "  " << x.kind << " " << x.from_us << ".." << x.to_us << " events";
      for (uint64_t seq : x.events) out << " " << seq;
      out << " threads";
      for (const std::string& t : x.threads) out << " " << t;
      out << "\n  " << x.explanation << "\n";
    }
    for (const check::Observation& o : r.observations) {
      out << "  observed " << o.kind << " " << o.from_us << ".." << o.to_us << " "
          << o.explanation << "\n";
    }
  }
  for (const std::string& w : v.warnings) out << "warning " << w << "\n";
  return out.str();
}

struct Outcome {
  std::string verdict;
  uint64_t events = 0;
  uint64_t hash = 0;
};

Outcome Run(const Scenario& scenario, bool readers_thread, history::HistoryFormat format,
            const std::string& path) {
  std::string error;
  std::unique_ptr<sim::Simulation> sim = sim::Simulation::Create(scenario, kSource + "/lua", &error);
  REQUIRE(sim != nullptr);
  PipelineOptions options;
  options.readers_thread = readers_thread;
  options.history = format;
  options.history_path = path;
  std::optional<PipelineResult> result = RunPipeline(*sim, scenario, options, &error);
  REQUIRE(result.has_value());
  return {Describe(result->verdict), result->history_events, result->history_hash};
}

TEST_CASE("the library's verdicts are the same with the readers on their own thread or inline") {
  const std::string dir =
      (std::filesystem::temp_directory_path() / "lockstep-pipeline-test").string();
  std::filesystem::create_directories(dir);
  int compared = 0;
  const std::vector<std::string> files = LibraryFiles();
  REQUIRE(files.size() >= 40);
  for (size_t i = 0; i < files.size(); ++i) {
#ifdef LOCKSTEP_SANITIZED
    if (i % 4 != 0) continue;  // A quarter of them under the sanitizers, which run 10x slower.
#endif
    const std::string& file = files[i];
    INFO(file);
    ScenarioError load_error;
    std::optional<Scenario> scenario = LoadScenarioFile(file, &load_error);
    REQUIRE(scenario.has_value());
    const Outcome threaded =
        Run(*scenario, true, history::HistoryFormat::kJsonl, dir + "/threaded.jsonl");
    const Outcome inline_readers =
        Run(*scenario, false, history::HistoryFormat::kJsonl, dir + "/inline.jsonl");
    CHECK(threaded.verdict == inline_readers.verdict);
    CHECK(threaded.events == inline_readers.events);
    CHECK(threaded.hash == inline_readers.hash);
    CHECK(threaded.events > 0);
    ++compared;
  }
  std::filesystem::remove_all(dir);
  CHECK(compared >= 10);
}

}  // namespace
}  // namespace lockstep
