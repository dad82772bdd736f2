// The conformance suite: named golden cases (core/testdata/conformance/*.txt), in the style of
// Redis's tests/unit/*.tcl catalogues, each run on the emulator AND on a live redis-server
// 7.0.15 started by this test. A case passes only when both print the expected text, so the
// golden file cannot drift away from the real server and the emulator cannot drift from it.
//
// File format:
//   # a comment
//   === <case name>
//   > <command line, quoted as redis-cli accepts it>
//   <expected output, exactly as `redis-cli --no-raw` prints the reply; may span lines>
//   | <what the emulator prints instead: a difference documented in docs/fidelity.md; the
//   | case's name must contain "[differs]">
// Blank lines and lines starting with '#' are skipped everywhere. scripts/golden.sh fills in
// the expected output from a live redis-server.
//   > <next command> ...
// Every case starts from an empty keyspace and an empty script cache (FLUSHALL, SCRIPT FLUSH
// on both). The two servers see the same command sequence from the first case to the last, so
// state that survives the flush (the rand48 generator) stays in step.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "core/cli_format.h"
#include "core/server.h"
#include "live/redis_client.h"
#include "live/redis_process.h"

namespace {

using lockstep::Argv;
using lockstep::Reply;

struct Step {
  int line = 0;
  std::string command;
  Argv argv;
  std::string expected;
  // A documented difference (docs/fidelity.md): what the emulator prints instead, from "| "
  // lines. Only allowed in cases whose name says "[differs]".
  std::string emulator_expected;
};

struct Case {
  std::string file;
  int line = 0;
  std::string name;
  std::vector<Step> steps;
};

std::vector<Case> LoadCases(const std::filesystem::path& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::vector<Case> cases;
  std::string text;
  int line_no = 0;
  while (std::getline(in, text)) {
    ++line_no;
    // Blank lines and comments separate cases; no reply used here prints as either.
    if (text.empty() || text[0] == '#') continue;
    if (text.rfind("=== ", 0) == 0) {
      cases.push_back({path.filename().string(), line_no, text.substr(4), {}});
    } else if (text.rfind("> ", 0) == 0) {
      INFO(path.string() << ":" << line_no);
      REQUIRE(!cases.empty());
      auto argv = lockstep::SplitArgs(text.substr(2));
      REQUIRE(argv.has_value());
      cases.back().steps.push_back({line_no, text.substr(2), *argv, "", ""});
    } else if (text.rfind("| ", 0) == 0 && !cases.empty() && !cases.back().steps.empty()) {
      INFO(path.string() << ":" << line_no);
      REQUIRE(cases.back().name.find("[differs]") != std::string::npos);
      cases.back().steps.back().emulator_expected += text.substr(2) + "\n";
    } else if (!cases.empty() && !cases.back().steps.empty()) {
      cases.back().steps.back().expected += text + "\n";
    } else {
      FAIL(path.string() << ":" << line_no << ": text outside a case step: " << text);
    }
  }
  return cases;
}

int64_t WallMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace

TEST_CASE("conformance: golden cases agree with the emulator and with redis-server 7.0.15",
          "[live][conformance]") {
  const std::filesystem::path dir =
      std::filesystem::path(LOCKSTEP_SOURCE_DIR) / "core" / "testdata" / "conformance";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".txt") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());

  auto redis = lockstep::RedisProcess::StartOrThrow();
  lockstep::RedisClient live("127.0.0.1", redis->port());
  lockstep::Server emu;

  int cases_run = 0;
  int steps_run = 0;
  for (const auto& file : files) {
    for (const Case& c : LoadCases(file)) {
      for (const Argv& reset : {Argv{"FLUSHALL"}, Argv{"SCRIPT", "FLUSH"}}) {
        REQUIRE(live.Command(reset) == Reply::Ok());
        REQUIRE(emu.Execute(reset, WallMs()) == Reply::Ok());
      }
      for (const Step& step : c.steps) {
        const std::string from_live = lockstep::FormatCli(live.Command(step.argv));
        const std::string from_emu =
            lockstep::FormatCli(emu.Execute(step.argv, WallMs()).AsSeenByResp2Client());
        INFO("case '" << c.name << "' (" << c.file << ":" << step.line << ")\n> "
                      << step.command);
        CHECK(from_live == step.expected);  // The golden text is what Redis says ...
        if (step.emulator_expected.empty()) {
          CHECK(from_emu == step.expected);  // ... and the emulator says the same.
        } else {
          CHECK(from_emu == step.emulator_expected);  // ... or the documented difference.
        }
        ++steps_run;
      }
      ++cases_run;
    }
  }
  WARN("conformance: " << cases_run << " cases, " << steps_run << " commands, "
                       << files.size() << " files");
  CHECK(cases_run >= 100);
}
