// Establishes that ScenarioToToml writes a file the loader turns back into the same Scenario:
// every scenario in the library, times that need more than whole milliseconds, client groups
// and script paths; and that the text is the hand-written kind (pinned in full for one example).
#include "model/scenario_write.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "model/scenario_toml.h"

using lockstep::ClientSpec;
using lockstep::Distribution;
using lockstep::Expectation;
using lockstep::FaultSpec;
using lockstep::LoadScenarioFile;
using lockstep::LoadScenarioString;
using lockstep::Scenario;
using lockstep::ScenarioError;
using lockstep::ScenarioToToml;
using lockstep::ScenarioWriteOptions;
using lockstep::WorkloadOverride;
using lockstep::WorkloadSpec;

namespace {

namespace fs = std::filesystem;

fs::path RepoRoot() {
#ifdef LOCKSTEP_SOURCE_DIR
  return fs::path(LOCKSTEP_SOURCE_DIR);
#else
  return (fs::path(__FILE__).parent_path() / "..").lexically_normal();
#endif
}

// Scenario::file says where the text came from and FaultSpec::line where each [[faults]] header
// stands in it; both legitimately differ between a file and its rewrite. Everything else must
// come back equal, so only these two are cleared before comparing.
Scenario WithoutOrigin(Scenario s) {
  s.file.clear();
  for (FaultSpec& f : s.faults) f.line = 0;
  return s;
}

Scenario Load(const std::string& text, const std::string& source_name) {
  ScenarioError error;
  std::optional<Scenario> s = LoadScenarioString(text, source_name, &error);
  INFO("--- text ---\n" << text);
  INFO(error.ToString());
  REQUIRE(s.has_value());
  return *s;
}

// Writes `s` as a file in `directory`, loads it from there, and requires the same Scenario.
// Returns the text.
std::string RequireRoundTrip(const Scenario& s, const fs::path& directory) {
  ScenarioWriteOptions options;
  options.header = "written by scenario_write_test";
  options.directory = directory.string();
  const std::string text = ScenarioToToml(s, options);
  const Scenario again = Load(text, (directory / "rewritten.toml").string());
  INFO("--- text ---\n" << text);
  INFO("--- written again ---\n" << ScenarioToToml(again, options));
  CHECK(WithoutOrigin(again) == WithoutOrigin(s));
  // A second pass changes nothing: the text is a fixed point.
  CHECK(ScenarioToToml(again, options) == text);
  return text;
}

std::vector<fs::path> LibraryFiles() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(RepoRoot() / "scenarios")) {
    if (e.path().extension() == ".toml") files.push_back(e.path());
  }
  for (const auto& e :
       fs::directory_iterator(RepoRoot() / "scenarios" / "testdata" / "broken-scripts")) {
    if (e.is_directory() && fs::exists(e.path() / "broken.toml")) {
      files.push_back(e.path() / "broken.toml");
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST_CASE("every scenario in the library comes back from its rewrite", "[scenario][write]") {
  const std::vector<fs::path> files = LibraryFiles();
  REQUIRE(files.size() >= 40);  // 31 scenarios and 11 broken-script files when this was written.
  for (const fs::path& file : files) {
    INFO(file.string());
    ScenarioError error;
    const std::optional<Scenario> s = LoadScenarioFile(file.string(), &error);
    INFO(error.ToString());
    REQUIRE(s.has_value());
    // Beside the original, in the repository's root (relative script paths), and far away
    // (absolute ones).
    RequireRoundTrip(*s, file.parent_path());
    RequireRoundTrip(*s, RepoRoot());
    RequireRoundTrip(*s, fs::temp_directory_path() / "lockstep-write-test");
  }
}

TEST_CASE("a rewritten scenario reads like a hand-written one", "[scenario][write]") {
  const Scenario s = Load(R"(
name = "example"
description = "a \"quoted\" word"
seed = 9
duration_ms = 30000
[[nodes]]
[[nodes]]
replica_of = "n1"
clock = { drift_ppm = 50, jumps = [{ at_ms = 100, by_ms = -2.5 }] }
[[clients]]
count = 3
threads = 2
[[clients]]
name = "late"
clock = { offset_ms = -150, ntp = true }
[network]
latency_ms = { dist = "uniform", min = 0.2, max = 1.5 }
links = { "late->n1" = 5 }
[sentinel]
enabled = true
down_after_ms = 5000
[protocol]
kind = "fairlock"
[workload]
lease_ms = 2000
critical_ms = { dist = "pareto", scale = 50, shape = 1.5, cap = 5000 }
[[faults]]
kind = "partition"
at_ms = 1000
duration_ms = 2000
targets = ["n1", "c1"]
peers = ["sentinel", "n2"]
[[faults]]
kind = "crash"
at_ms = 4000.5
targets = ["c2"]
[gc]
clients = ["late"]
[expect]
reentrancy = "violated"
mutual_exclusion = "hold"
)",
                          "example.toml");
  ScenarioWriteOptions options;
  options.header = "An example.\n\nTwo paragraphs.";
  const std::string text = ScenarioToToml(s, options);
  CHECK(text == R"(# An example.
#
# Two paragraphs.
name = "example"
description = "a \"quoted\" word"
seed = 9
duration_ms = 30000

[[nodes]]
name = "n1"

[[nodes]]
name = "n2"
replica_of = "n1"
clock = { drift_ppm = 50, jumps = [{ at_ms = 100, by_ms = -2.5 }] }

[[clients]]
count = 3
threads = 2

[[clients]]
name = "late"
clock = { offset_ms = -150, ntp = true }

[network]
latency_ms = { dist = "uniform", min = 0.2, max = 1.5 }
links = { "late->n1" = 5 }

[sentinel]
enabled = true
down_after_ms = 5000

[protocol]
kind = "fairlock"
version = "v3.13.6"

[workload]
lease_ms = 2000
critical_ms = { dist = "pareto", scale = 50, shape = 1.5, cap = 5000 }

[[faults]]
kind = "partition"
at_ms = 1000
duration_ms = 2000
targets = ["n1", "c1"]
peers = ["sentinel", "n2"]

[[faults]]
kind = "crash"
at_ms = 4000.5
targets = ["c2"]

[gc]
clients = ["late"]

[expect]
mutual_exclusion = "hold"
reentrancy = "violated"
)");
  RequireRoundTrip(s, ".");
}

TEST_CASE("the smallest scenario writes the keys a reader looks for", "[scenario][write]") {
  const Scenario s = Load("[[nodes]]\n[[clients]]\n", "smallest.toml");
  CHECK(ScenarioToToml(s) == R"(name = "smallest"
seed = 1
duration_ms = 60000

[[nodes]]
name = "n1"

[[clients]]
name = "c1"

[protocol]
kind = "rlock"
version = "v3.13.6"

[expect]
)");
  RequireRoundTrip(s, "");
}

TEST_CASE("every client role is written and comes back", "[scenario][write]") {
  // The latch's roles, and the semaphore's permit-changing ones.
  const Scenario latch = Load(
      "[[nodes]]\n[[clients]]\nrole = \"await\"\n[[clients]]\nrole = \"count_down\"\n"
      "[protocol]\nkind = \"countdownlatch\"\n",
      "latch.toml");
  const std::string latch_text = RequireRoundTrip(latch, "");
  CHECK_THAT(latch_text, Catch::Contains("role = \"await\"\n"));
  CHECK_THAT(latch_text, Catch::Contains("role = \"count_down\"\n"));
  const Scenario semaphore = Load(
      "[[nodes]]\n"
      "[[clients]]\nrole = \"add_permits\"\n"
      "[[clients]]\ncount = 2\nname_prefix = \"r\"\nrole = \"reduce_permits\"\n"
      "[[clients]]\nrole = \"try_set_permits\"\n"
      "[[clients]]\nrole = \"drain_permits\"\n"
      "[[clients]]\n"
      "[protocol]\nkind = \"semaphore\"\npermits = 3\n",
      "semaphore.toml");
  REQUIRE(semaphore.clients.size() == 6);
  const std::string text = RequireRoundTrip(semaphore, "");
  for (const char* role : {"add_permits", "reduce_permits", "try_set_permits", "drain_permits"}) {
    CHECK_THAT(text, Catch::Contains("role = \"" + std::string(role) + "\"\n"));
  }
  // The two reducers stay one count group; the worker keeps the default role, unwritten.
  CHECK_THAT(text, Catch::Contains("count = 2\nname_prefix = \"r\"\nrole = \"reduce_permits\"\n"));
}

TEST_CASE("times come back to the microsecond", "[scenario][write]") {
  Scenario s = Load("[[nodes]]\n[[clients]]\n", "times.toml");
  s.duration_us = 86'399'999'999;  // The loader's limit for a run, one day, less one microsecond.
  s.workload.wait_us = 1;                 // 0.001 ms
  s.workload.lease_us = 999'999'999;
  s.workload.stagger_us = 1'000'000'000'000'000;
  s.nodes[0].clock.offset_us = -1;
  s.nodes[0].clock.jumps = {{0, -999'999'999'999'999}};
  // Distribution parameters are the double ms * 1000, unrounded. For 0.000049 ms (0.049 us)
  // us / 1000 is not the double that 0.000049 reads as: the writer must find that one.
  s.workload.critical_us = {Distribution::Kind::kUniform, 0.000049 * 1000, 0.1 * 1000, 0};
  REQUIRE(s.workload.critical_us.a / 1000 != 0.000049);
  s.workload.think_us = {Distribution::Kind::kNormal, 123.456789 * 1000, 1e-3 * 1000, 7.7 * 1000};
  s.network.latency_us = {Distribution::Kind::kPareto, 1.2e-3 * 1000, 2.5, 0};
  const std::string text = RequireRoundTrip(s, "");
  CHECK_THAT(text, Catch::Contains("duration_ms = 86399999.999\n"));
  CHECK_THAT(text, Catch::Contains("wait_ms = 0.001\n"));
  CHECK_THAT(text, Catch::Contains("clock = { offset_ms = -0.001, "));
  CHECK_THAT(text, Catch::Contains("min = 0.000049, max = 0.1"));
  CHECK_THAT(text, Catch::Contains("mean = 123.456789, stddev = 0.001, cap = 7.7"));
}

TEST_CASE("clients regroup only where count groups give the same names", "[scenario][write]") {
  const Scenario s = Load(R"(
[[nodes]]
[[clients]]
count = 2
[[clients]]
name = "c9"
[[clients]]
count = 3
name_prefix = "w"
threads = 4
[[clients]]
count = 2
[[clients]]
count = 2
name_prefix = "w"
threads = 5
[[clients]]
name = "w6"
threads = 6
)",
                          "groups.toml");
  REQUIRE(s.clients.size() == 11);
  CHECK(s.clients[6].name == "c3");
  const std::string text = RequireRoundTrip(s, "");
  // c1, c2 | c9 | w1..w3 | c3, c4 | w4, w5 | w6: named, because a group of one says less.
  CHECK_THAT(text, Catch::Contains("[[clients]]\ncount = 2\n\n[[clients]]\nname = \"c9\"\n"));
  CHECK_THAT(text, Catch::Contains("count = 3\nname_prefix = \"w\"\nthreads = 4\n"));
  CHECK_THAT(text, Catch::Contains("count = 2\nname_prefix = \"w\"\nthreads = 5\n"));
  CHECK_THAT(text, Catch::Contains("name = \"w6\"\nthreads = 6\n"));

  // Names a group cannot give (out of order, or after explicit ones took the numbers) are
  // written one by one.
  Scenario shuffled = s;
  std::swap(shuffled.clients[0], shuffled.clients[1]);
  const std::string shuffled_text = RequireRoundTrip(shuffled, "");
  CHECK_THAT(shuffled_text, Catch::Contains("name = \"c2\"\n\n[[clients]]\nname = \"c1\"\n"));
}

TEST_CASE("script paths resolve to the same files from the new directory", "[scenario][write]") {
  const fs::path broken = RepoRoot() / "scenarios/testdata/broken-scripts/rlock/broken.toml";
  ScenarioError error;
  const std::optional<Scenario> s = LoadScenarioFile(broken.string(), &error);
  INFO(error.ToString());
  REQUIRE(s.has_value());
  const auto written = [&](const fs::path& dir) {
    ScenarioWriteOptions options;
    options.directory = dir.string();
    return ScenarioToToml(*s, options);
  };
  CHECK_THAT(written(broken.parent_path()),
             Catch::Contains("scripts = { unlock = \"unlock_no_owner_check.lua\" }"));
  CHECK_THAT(written(RepoRoot() / "scenarios"),
             Catch::Contains("\"testdata/broken-scripts/rlock/unlock_no_owner_check.lua\""));
  CHECK_THAT(written(broken.parent_path() / "a" / "b"),
             Catch::Contains("\"../../unlock_no_owner_check.lua\""));
  // Three folders up is no longer short: the absolute path.
  CHECK_THAT(written(broken.parent_path() / "a" / "b" / "c"),
             Catch::Contains("\"" + (broken.parent_path() / "unlock_no_owner_check.lua").string() +
                             "\""));
}

TEST_CASE("every fault kind and [fuzz] are written and come back", "[scenario][write]") {
  Scenario s = Load("[[nodes]]\n[[nodes]]\nreplica_of = \"n1\"\n[[clients]]\n", "faults.toml");
  const auto fault = [](FaultSpec::Kind kind) {
    FaultSpec f;
    f.kind = kind;
    f.at_us = 1500;
    f.targets = {"n1"};
    return f;
  };
  FaultSpec latency = fault(FaultSpec::Kind::kLatency);
  latency.duration_us = 2'000'000;
  latency.extra_us = 250'500;
  latency.peers = {"c1"};
  FaultSpec loss = fault(FaultSpec::Kind::kLoss);
  loss.duration_us = 1000;
  loss.rate = 0.25;
  FaultSpec duplicate = fault(FaultSpec::Kind::kDuplicate);
  duplicate.duration_us = 1000;
  duplicate.rate = 1;
  s.faults = {latency, loss, duplicate};
  s.fuzz.faults = {{"client_pause", 3}, {"partition", 1}};
  s.fuzz.fault_count = {2, 2};
  s.fuzz.latency_spike_us = {500, 2'500'000};
  s.fuzz.threads = lockstep::FuzzRange{1, 8};
  s.fuzz.versions = {"current"};
  s.fuzz.max_case_s = 2.5;
  const std::string text = ScenarioToToml(s);
  CHECK_THAT(text, Catch::Contains("[[faults]]\nkind = \"latency\"\nat_ms = 1.5\n"
                                   "duration_ms = 2000\ntargets = [\"n1\"]\npeers = [\"c1\"]\n"
                                   "extra_ms = 250.5\n"));
  CHECK_THAT(text, Catch::Contains("kind = \"loss\"\nat_ms = 1.5\nduration_ms = 1\n"
                                   "targets = [\"n1\"]\nrate = 0.25\n"));
  CHECK_THAT(text, Catch::Contains("kind = \"duplicate\"\nat_ms = 1.5\nduration_ms = 1\n"
                                   "targets = [\"n1\"]\nrate = 1\n"));
  CHECK_THAT(text, Catch::EndsWith("[fuzz]\nfaults = { client_pause = 3, partition = 1 }\n"
                                   "fault_count = 2\n"
                                   "latency_spike_ms = { min = 0.5, max = 2500 }\n"
                                   "threads = { min = 1, max = 8 }\n"
                                   "versions = [\"current\"]\nmax_case_s = 2.5\n"));

  // Every kind comes back, each with the keys it uses, and so does [fuzz].
  s.faults = {latency, loss, duplicate};
  for (FaultSpec::Kind kind :
       {FaultSpec::Kind::kPartition, FaultSpec::Kind::kCrash, FaultSpec::Kind::kPause,
        FaultSpec::Kind::kClockJump, FaultSpec::Kind::kFailover, FaultSpec::Kind::kLoseReplies}) {
    FaultSpec f = fault(kind);
    if (kind == FaultSpec::Kind::kPartition) {
      f.peers = {"c1", "n2"};
      f.one_way = true;
    }
    if (kind != FaultSpec::Kind::kClockJump && kind != FaultSpec::Kind::kFailover) {
      f.duration_us = 7;
    }
    if (kind == FaultSpec::Kind::kClockJump) f.by_us = -3;
    s.faults.push_back(f);
  }
  RequireRoundTrip(s, "");
}

TEST_CASE("long lists and tables break over lines and still load", "[scenario][write]") {
  Scenario s = Load("[[nodes]]\n[[clients]]\ncount = 40\n", "long.toml");
  for (int i = 0; i < 40; ++i) {
    s.nodes[0].clock.jumps.push_back({1000 * i, 1 + i});
    s.network.link_latency_us["c" + std::to_string(i + 1) + "->n1"] = Distribution::Fixed(7000);
  }
  FaultSpec pause;
  pause.kind = FaultSpec::Kind::kPause;
  pause.duration_us = 5;
  for (const ClientSpec& c : s.clients) pause.targets.push_back(c.name);
  s.faults.push_back(pause);
  s.gc.enabled = true;
  s.gc.clients = pause.targets;
  s.expect["liveness"] = Expectation::kAny;
  const std::string text = RequireRoundTrip(s, "");
  CHECK_THAT(text, Catch::Contains("clock.jumps = [\n  { at_ms = 0, by_ms = 0.001 },\n"));
  CHECK_THAT(text, Catch::Contains("\n\n[network.links]\n\"c1->n1\" = 7\n"));
  CHECK_THAT(text, !Catch::Contains("[network]"));
  CHECK_THAT(text, Catch::Contains("targets = [\n  \"c1\",\n"));
}

TEST_CASE("client groups' own workloads and every lease come back", "[scenario][write]") {
  Scenario s = Load(
      "[[nodes]]\n"
      "[[clients]]\ncount = 2\nside = \"read\"\nlease_ms = 0\n"
      "[[clients]]\nname = \"w\"\nside = \"write\"\nmode = \"lock\"\nwait_ms = -1\n"
      "lease_ms = -1\ncritical_ms = { dist = \"uniform\", min = 1, max = 5 }\nthink_ms = 7\n"
      "reentry = 2\nops_per_thread = 3\nstagger_ms = 0.5\n"
      "[[clients]]\ncount = 2\n"
      "[protocol]\nkind = \"rwlock\"\nversion = \"v3.13.6\"\n"
      "[workload]\nlease_ms = -0.5\nwait_ms = 0\n",
      "groups.toml");
  REQUIRE(s.clients.size() == 5);
  CHECK(s.workload.lease_us == -500);
  CHECK(s.workload.wait_us == 0);
  CHECK(s.clients[0].workload.side == WorkloadSpec::Side::kRead);
  CHECK(s.clients[0].workload.lease_us == 0);
  CHECK(s.clients[1].workload == s.clients[0].workload);
  CHECK(s.clients[2].workload.lease_us == -1);  // -1 ms: Redisson's "none given".
  CHECK(s.clients[2].workload.wait_us == -1000);
  CHECK(s.clients[3].workload == WorkloadOverride{});

  const WorkloadSpec w = lockstep::Apply(s.workload, s.clients[2].workload);
  CHECK(w.mode == WorkloadSpec::Mode::kLock);
  CHECK(w.side == WorkloadSpec::Side::kWrite);
  CHECK(w.lease_us == -1);
  CHECK(w.critical_us == Distribution{Distribution::Kind::kUniform, 1000, 5000, 0});
  CHECK(w.think_us == Distribution::Fixed(7000));
  CHECK(w.reentry == 2);
  CHECK(w.ops_per_thread == 3);
  CHECK(w.stagger_us == 500);
  // What a group leaves out comes from [workload].
  CHECK(lockstep::Apply(s.workload, s.clients[0].workload).wait_us == 0);
  CHECK(lockstep::Apply(s.workload, s.clients[3].workload) == s.workload);

  const std::string text = RequireRoundTrip(s, "");
  CHECK_THAT(text, Catch::Contains("count = 2\nside = \"read\"\nlease_ms = 0\n"));
  CHECK_THAT(text, Catch::Contains("lease_ms = -1\n"));
  CHECK_THAT(text, Catch::Contains("[workload]\nwait_ms = 0\nlease_ms = -0.5\n"));
}

TEST_CASE("a node's maxmemory_mb is written when it is not the default", "[scenario][write]") {
  const Scenario s =
      Load("[[nodes]]\n[[nodes]]\nmaxmemory_mb = 16\n[[clients]]\n", "maxmemory.toml");
  const std::string text = RequireRoundTrip(s, "");
  CHECK_THAT(text, Catch::Contains("maxmemory_mb = 16\n"));
  CHECK(text.find("maxmemory_mb = 256") == std::string::npos);
}
