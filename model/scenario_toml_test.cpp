// Establishes that a scenario file becomes exactly the Scenario it describes (every key, every
// default, milliseconds to microseconds), and that every kind of mistake is reported at its
// file:line:column with its full key and a message that says what to write instead. The
// malformed fixtures in model/testdata/ pin the whole message; the inline cases pin position and
// key exactly and the part of the message that tells the user what to fix.
#include "model/scenario_toml.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

using lockstep::ClientSpec;
using lockstep::Distribution;
using lockstep::Expectation;
using lockstep::FaultSpec;
using lockstep::LoadScenarioFile;
using lockstep::LoadScenarioString;
using lockstep::NodeSpec;
using lockstep::Scenario;
using lockstep::ScenarioError;
using lockstep::WorkloadSpec;

namespace {

namespace fs = std::filesystem;

// The repository root. CMake may pass LOCKSTEP_SOURCE_DIR; otherwise __FILE__ (absolute under
// CMake, relative to the repository root when compiled by hand from there) locates it.
fs::path RepoRoot() {
#ifdef LOCKSTEP_SOURCE_DIR
  return fs::path(LOCKSTEP_SOURCE_DIR);
#else
  return (fs::path(__FILE__).parent_path() / "..").lexically_normal();
#endif
}

std::string TestData(const std::string& name) {
  return (RepoRoot() / "model" / "testdata" / name).string();
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void CheckDistribution(const Distribution& d, Distribution::Kind kind, double a, double b = 0,
                       double cap = 0) {
  CHECK(d.kind == kind);
  CHECK(d.a == Approx(a));
  CHECK(d.b == Approx(b));
  CHECK(d.cap == Approx(cap));
}

// A problem the loader must find: where it is, its key, and a phrase the message must contain.
struct BadCase {
  const char* what;
  const char* text;
  int line;
  int column;
  const char* key;
  const char* fragment;
};

void CheckBadCases(std::initializer_list<BadCase> cases) {
  for (const BadCase& c : cases) {
    INFO(c.what << "\n--- text ---\n" << c.text);
    ScenarioError error;
    const std::optional<Scenario> s = LoadScenarioString(c.text, "inline.toml", &error);
    REQUIRE_FALSE(s.has_value());
    INFO("got: " << error.ToString());
    CHECK(error.file == "inline.toml");
    CHECK(error.line == c.line);
    CHECK(error.column == c.column);
    CHECK(error.key == c.key);
    CHECK_THAT(error.message, Catch::Contains(c.fragment));
  }
}

Scenario LoadGood(const std::string& text) {
  ScenarioError error;
  std::optional<Scenario> s = LoadScenarioString(text, "inline.toml", &error);
  INFO(error.ToString());
  REQUIRE(s.has_value());
  return *s;
}

}  // namespace

TEST_CASE("the minimal fixture gets every default", "[scenario]") {
  const std::string path = TestData("minimal.toml");
  ScenarioError error;
  const std::optional<Scenario> loaded = LoadScenarioFile(path, &error);
  INFO(error.ToString());
  REQUIRE(loaded.has_value());
  const Scenario& s = *loaded;
  const Scenario defaults;

  CHECK(s.file == path);
  CHECK(s.name == "minimal");  // The file's stem.
  CHECK(s.description.empty());
  CHECK(s.seed == 1);
  CHECK(s.duration_us == 60'000'000);
  CHECK(s.start_unix_ms == 1'767'225'600'000);

  REQUIRE(s.nodes.size() == 1);
  CHECK(s.nodes[0].name == "n1");
  CHECK(s.nodes[0].replica_of.empty());
  CHECK(s.nodes[0].persistence == NodeSpec::Persistence::kNone);
  CHECK(s.nodes[0].clock.offset_us == 0);
  CHECK(s.nodes[0].clock.drift_ppm == 0);
  CHECK_FALSE(s.nodes[0].clock.ntp);
  CHECK(s.nodes[0].clock.slew_ppm == 500);
  CHECK(s.nodes[0].clock.jumps.empty());
  REQUIRE(s.clients.size() == 1);
  CHECK(s.clients[0].name == "c1");
  CHECK(s.clients[0].threads == 1);
  CHECK(s.clients[0].clock.offset_us == 0);

  CheckDistribution(s.network.latency_us, Distribution::Kind::kFixed, 500);
  CHECK(s.network.loss == 0);
  CHECK(s.network.duplicate == 0);
  CHECK_FALSE(s.network.reorder);
  CHECK(s.network.link_latency_us.empty());
  CheckDistribution(s.replication.lag_us, Distribution::Kind::kFixed, 1000);
  CHECK_FALSE(s.sentinel.enabled);
  CHECK(s.sentinel.down_after_us == 30'000'000);
  CHECK(s.sentinel.client_rediscover_us == 1'000'000);

  CHECK(s.protocol.kind->name == "rlock");
  CHECK(s.protocol.version ==
        lockstep::history::ProtocolVersion::k3136);
  CHECK(s.protocol.lock_name == "lock");
  CHECK(s.protocol.watchdog_timeout_us == 30'000'000);
  CHECK(s.protocol.timeout_us == 3'000'000);
  CHECK(s.protocol.retry_attempts == 3);
  CHECK(s.protocol.retry_interval_us == 1'500'000);
  CHECK(s.protocol.script_files.empty());

  CHECK(s.workload.mode == WorkloadSpec::Mode::kTryLock);
  CHECK(s.workload.wait_us == 10'000'000);
  CHECK(s.workload.lease_us == -1);
  CheckDistribution(s.workload.critical_us, Distribution::Kind::kFixed, 100'000);
  CheckDistribution(s.workload.think_us, Distribution::Kind::kFixed, 100'000);
  CHECK(s.workload.reentry == 1);
  CHECK(s.workload.ops_per_thread == 0);

  CHECK(s.faults.empty());
  CHECK_FALSE(s.gc.enabled);
  CHECK(s.gc.clients.empty());
  CHECK(s.liveness_bound_us == 5'000'000);
  CHECK(s.expect.empty());
  // The defaults above are the struct's own, not a second copy that could drift from it.
  CHECK(s.liveness_bound_us == defaults.liveness_bound_us);
  CHECK(s.workload.wait_us == defaults.workload.wait_us);
}

TEST_CASE("the full fixture sets every field", "[scenario]") {
  const std::string path = TestData("full.toml");
  ScenarioError error;
  const std::optional<Scenario> loaded = LoadScenarioFile(path, &error);
  INFO(error.ToString());
  REQUIRE(loaded.has_value());
  const Scenario& s = *loaded;

  CHECK(s.file == path);
  CHECK(s.name == "full");
  CHECK(s.description == "Two masters, one with a replica; partitions, crashes and GC pauses");
  CHECK(s.seed == 42);
  CHECK(s.duration_us == 120'000'000);
  CHECK(s.start_unix_ms == 1'700'000'000'000);

  REQUIRE(s.nodes.size() == 3);
  const NodeSpec& m1 = s.nodes[0];
  CHECK(m1.name == "m1");
  CHECK(m1.persistence == NodeSpec::Persistence::kAofAlways);
  CHECK(m1.replica_of.empty());
  CHECK(m1.clock.offset_us == 250'000);
  CHECK(m1.clock.drift_ppm == 100);
  CHECK(m1.clock.ntp);
  CHECK(m1.clock.slew_ppm == 400);
  REQUIRE(m1.clock.jumps.size() == 2);
  CHECK(m1.clock.jumps[0].at_us == 1'000'000);
  CHECK(m1.clock.jumps[0].by_us == 500'000);
  CHECK(m1.clock.jumps[1].at_us == 2'000'000);
  CHECK(m1.clock.jumps[1].by_us == -1'500'500);  // Fractional milliseconds.
  CHECK(s.nodes[1].name == "r1");
  CHECK(s.nodes[1].replica_of == "m1");
  CHECK(s.nodes[1].persistence == NodeSpec::Persistence::kAofEverySec);
  CHECK(s.nodes[1].clock.jumps.empty());
  CHECK(s.nodes[2].name == "n1");  // Unnamed nodes count n1, n2, ... among themselves.
  CHECK(s.nodes[2].persistence == NodeSpec::Persistence::kNone);

  REQUIRE(s.clients.size() == 6);
  const char* const names[] = {"solo", "c1", "c2", "c3", "slow1", "slow2"};
  const int threads[] = {4, 1, 1, 1, 2, 2};
  for (size_t i = 0; i < s.clients.size(); ++i) {
    CHECK(s.clients[i].name == names[i]);
    CHECK(s.clients[i].threads == threads[i]);
  }
  CHECK(s.clients[0].clock.offset_us == -20'000);
  CHECK(s.clients[0].clock.drift_ppm == -35.5);
  CHECK(s.clients[1].clock.offset_us == 0);

  CheckDistribution(s.network.latency_us, Distribution::Kind::kUniform, 200, 1500);
  CHECK(s.network.loss == 0.01);
  CHECK(s.network.duplicate == 0.001);
  CHECK(s.network.reorder);
  REQUIRE(s.network.link_latency_us.size() == 2);
  CheckDistribution(s.network.link_latency_us.at("solo->m1"), Distribution::Kind::kFixed, 5000);
  CheckDistribution(s.network.link_latency_us.at("m1->r1"), Distribution::Kind::kExponential, 2000,
                    0, 20'000);
  CheckDistribution(s.replication.lag_us, Distribution::Kind::kNormal, 3000, 1000);
  CHECK(s.sentinel.enabled);
  CHECK(s.sentinel.down_after_us == 5'000'000);
  CHECK(s.sentinel.client_rediscover_us == 250'000);

  CHECK(s.protocol.kind->name == "rlock");
  CHECK(s.protocol.version ==
        lockstep::history::ProtocolVersion::kCurrent);
  CHECK(s.protocol.lock_name == "orders");
  CHECK(s.protocol.watchdog_timeout_us == 10'000'000);
  CHECK(s.protocol.timeout_us == 1'500'000);
  CHECK(s.protocol.retry_attempts == 5);
  CHECK(s.protocol.retry_interval_us == 750'000);
  REQUIRE(s.protocol.script_files.size() == 1);
  // Resolved against the scenario file's directory.
  CHECK(s.protocol.script_files.at("unlock") ==
        (RepoRoot() / "lua/rlock/v3.13.6/unlock.lua").lexically_normal().string());

  CHECK(s.workload.mode == WorkloadSpec::Mode::kLock);
  CHECK(s.workload.wait_us == 2'500'000);
  CHECK(s.workload.lease_us == 8'000'000);
  CheckDistribution(s.workload.critical_us, Distribution::Kind::kFixed, 40'000);
  CheckDistribution(s.workload.think_us, Distribution::Kind::kFixed, 12'500);
  CHECK(s.workload.reentry == 2);
  CHECK(s.workload.ops_per_thread == 100);

  REQUIRE(s.faults.size() == 7);
  const FaultSpec& partition = s.faults[0];
  CHECK(partition.kind == FaultSpec::Kind::kPartition);
  CHECK(partition.at_us == 5'000'000);
  CHECK(partition.duration_us == 2'000'000);
  CHECK(partition.targets == std::vector<std::string>{"solo", "c1"});
  CHECK(partition.peers == std::vector<std::string>{"m1", "sentinel"});
  CHECK(partition.one_way);
  CHECK(partition.line == 71);
  CHECK(s.faults[1].kind == FaultSpec::Kind::kCrash);
  CHECK(s.faults[1].at_us == 10'000'000);
  CHECK(s.faults[1].duration_us == 3'000'000);
  CHECK(s.faults[1].targets == std::vector<std::string>{"m1"});
  CHECK(s.faults[1].line == 79);
  CHECK(s.faults[2].kind == FaultSpec::Kind::kCrash);
  CHECK(s.faults[2].duration_us == 0);  // Never restarts.
  CHECK(s.faults[2].targets == std::vector<std::string>{"c2"});
  CHECK(s.faults[3].kind == FaultSpec::Kind::kPause);
  CHECK(s.faults[3].at_us == 20'000'000);
  CHECK(s.faults[3].duration_us == 1'500'000);
  CHECK(s.faults[3].line == 90);
  CHECK(s.faults[4].kind == FaultSpec::Kind::kClockJump);
  CHECK(s.faults[4].targets == std::vector<std::string>{"r1", "c3"});
  CHECK(s.faults[4].by_us == -2'000'000);
  CHECK(s.faults[4].duration_us == 0);
  CHECK(s.faults[5].kind == FaultSpec::Kind::kFailover);
  CHECK(s.faults[5].at_us == 40'000'000);
  CHECK(s.faults[5].targets == std::vector<std::string>{"m1"});
  CHECK(s.faults[6].kind == FaultSpec::Kind::kLoseReplies);
  CHECK(s.faults[6].duration_us == 100'000);
  CHECK(s.faults[6].targets == std::vector<std::string>{"n1"});
  CHECK(s.faults[6].line == 107);
  for (const FaultSpec& f : s.faults) {
    if (f.kind != FaultSpec::Kind::kPartition) {
      CHECK(f.peers.empty());
      CHECK_FALSE(f.one_way);
    }
  }

  CHECK(s.gc.enabled);
  CHECK(s.gc.clients == std::vector<std::string>{"slow1", "slow2"});
  CheckDistribution(s.gc.every_us, Distribution::Kind::kExponential, 10'000'000);
  CheckDistribution(s.gc.pause_us, Distribution::Kind::kPareto, 50'000, 1.5, 5'000'000);
  CHECK(s.liveness_bound_us == 7'500'000);
  CHECK(s.expect == std::map<std::string, Expectation>{
                        {"mutual_exclusion", Expectation::kViolated},
                        {"resource_exclusion", Expectation::kHold},
                        {"reentrancy", Expectation::kHold},
                        {"lease_safety", Expectation::kAny},
                        {"liveness", Expectation::kHold},
                    });
}

// The five malformed fixtures the issue names, each with its whole message.
TEST_CASE("malformed fixtures: exact file, position, key and message", "[scenario][errors]") {
  struct Fixture {
    const char* file;
    int line;
    int column;
    const char* key;
    const char* message;
  };
  const Fixture fixtures[] = {
      {"syntax_error.toml", 10, 17, "workload.lease_ms",
       "TOML syntax error while parsing decimal integer: expected digit, saw 'm'; write the "
       "number alone, the unit is already in the key's name"},
      {"unknown_key.toml", 10, 1, "workload.lese_ms",
       "unknown key; did you mean 'lease_ms'? [workload] takes: mode, wait_ms, lease_ms, "
       "critical_ms, think_ms, reentry, ops_per_thread, read_ratio, stagger_ms"},
      {"wrong_type.toml", 6, 11, "clients[0].threads",
       "must be an integer, got string (write 4 without the quotes)"},
      {"negative_duration.toml", 9, 14, "workload.stagger_ms",
       "must not be negative, got -1"},
      {"unknown_protocol.toml", 7, 8, "protocol.kind",
       "unknown protocol kind 'rlok'; did you mean 'rlock'? known protocol kinds: rlock, fairlock, redlock, multilock, fencedlock, spinlock, setnx-px, setnx-expire, get-del, rwlock, semaphore, countdownlatch, client"},
  };
  for (const Fixture& f : fixtures) {
    const std::string path = TestData(f.file);
    INFO(path);
    ScenarioError error;
    REQUIRE_FALSE(LoadScenarioFile(path, &error).has_value());
    CHECK(error.file == path);
    CHECK(error.line == f.line);
    CHECK(error.column == f.column);
    CHECK(error.key == f.key);
    CHECK(error.message == f.message);
    CHECK(error.ToString() == path + ":" + std::to_string(f.line) + ":" + std::to_string(f.column) +
                                  ": key '" + f.key + "': " + f.message);
  }
}

TEST_CASE("syntax errors name the key being read", "[scenario][errors]") {
  CheckBadCases({
      {"a key given twice (toml++ rejects it)", "seed = 1\nseed = 2\n", 2, 8, "seed",
       "cannot redefine existing integer 'seed'"},
      {"an unterminated string inside an array-of-tables element",
       "[[nodes]]\n[[nodes]]\nname = \"n2\n", 3, 11, "nodes[1].name", "TOML syntax error"},
      {"a sub-table of the second node", "[[nodes]]\n[[nodes]]\n[nodes.clock]\noffset_ms = 1x\n", 4,
       14, "nodes[1].clock.offset_ms", "the unit is already in the key's name"},
      {"an unclosed table header", "[workload\nmode = \"lock\"\n", 1, 10, "workload",
       "expected ']'"},
  });
}

TEST_CASE("unknown keys list the allowed keys and suggest the closest", "[scenario][errors]") {
  CheckBadCases({
      {"a unit missing from the key", "[[nodes]]\n[[clients]]\n[workload]\nlease = 5\n", 4, 1,
       "workload.lease", "did you mean 'lease_ms'?"},
      {"a different unit", "[[nodes]]\n[[clients]]\n[sentinel]\ndown_after_s = 5\n", 4, 1,
       "sentinel.down_after_s", "did you mean 'down_after_ms'?"},
      {"a top-level key under a table header", "[[nodes]]\n[[clients]]\nseed = 3\n", 3, 1,
       "clients[0].seed", "'seed' belongs at the top level, above the first [table] header"},
      {"a workload key in [protocol]", "[[nodes]]\n[[clients]]\n[protocol]\nwait_ms = 5\n", 4, 1,
       "protocol.wait_ms", "'wait_ms' belongs in [workload]"},
      {"nothing close", "qqqq = 1\n[[nodes]]\n[[clients]]\n", 1, 1, "qqqq",
       "unknown key; the top level takes: name, description, seed,"},
      {"a typo in a clock", "[[nodes]]\nclock = { ofset_ms = 3 }\n[[clients]]\n", 2, 11,
       "nodes[0].clock.ofset_ms", "did you mean 'offset_ms'? a clock takes: offset_ms,"},
      {"a typo in a clock jump",
       "[[nodes]]\nclock = { jumps = [{ at_ms = 1, by_sm = 2 }] }\n[[clients]]\n", 2, 33,
       "nodes[0].clock.jumps[0].by_sm", "did you mean 'by_ms'?"},
      {"a parameter of another distribution",
       "[[nodes]]\n[[clients]]\n[network]\nlatency_ms = { dist = \"fixed\", value = 1, mean = 2 "
       "}\n",
       4, 43, "network.latency_ms.mean", "a 'fixed' distribution takes: dist, value, cap"},
      {"a key of another fault kind",
       "[[nodes]]\n[[clients]]\n[[faults]]\nkind = \"crash\"\nat_ms = 1\ntargets = [\"c1\"]\n"
       "peers = [\"n1\"]\n",
       7, 1, "faults[0].peers",
       "is not used by a 'crash' fault; a 'crash' fault takes: kind, at_ms, duration_ms, targets"},
      {"duration_ms on a failover",
       "[[nodes]]\n[[nodes]]\nreplica_of = \"n1\"\n[[clients]]\n[sentinel]\nenabled = true\n"
       "[[faults]]\nkind = \"failover\"\nat_ms = 1\nduration_ms = 5\ntargets = [\"n1\"]\n",
       10, 1, "faults[0].duration_ms", "is not used by a 'failover' fault"},
      {"a typo in a property name",
       "[[nodes]]\n[[clients]]\n[expect]\nmutual_exclusoin = \"hold\"\n", 4, 1,
       "expect.mutual_exclusoin",
       "unknown property; did you mean 'mutual_exclusion'? known properties: mutual_exclusion, "
       "resource_exclusion, reentrancy, lease_safety, liveness"},
  });
}

TEST_CASE("wrong types say what was expected and what was found", "[scenario][errors]") {
  CheckBadCases({
      {"a float count", "[[nodes]]\n[[clients]]\nthreads = 2.0\n", 3, 11, "clients[0].threads",
       "must be an integer, got float (write 2 without the '.0')"},
      {"a quoted probability", "[[nodes]]\n[[clients]]\n[network]\nloss = \"0.1\"\n", 4, 8,
       "network.loss", "must be a number, got string (write 0.1 without the quotes)"},
      {"a seed as a string", "seed = \"abc\"\n[[nodes]]\n[[clients]]\n", 1, 8, "seed",
       "must be an integer, got string"},
      {"a boolean as a string", "[[nodes]]\n[[clients]]\n[sentinel]\nenabled = \"yes\"\n", 4, 11,
       "sentinel.enabled", "must be true or false, got string"},
      {"a single target instead of a list",
       "[[nodes]]\n[[clients]]\n[[faults]]\nkind = \"pause\"\nat_ms = 1\nduration_ms = 1\n"
       "targets = \"c1\"\n",
       7, 11, "faults[0].targets", "must be an array of names, e.g. [\"c1\", \"n1\"], got string"},
      {"a number among the targets",
       "[[nodes]]\n[[clients]]\n[[faults]]\nkind = \"pause\"\nat_ms = 1\nduration_ms = 1\n"
       "targets = [\"c1\", 2]\n",
       7, 18, "faults[0].targets[1]", "must be a string, got integer"},
      {"a section as a value", "network = 5\n[[nodes]]\n[[clients]]\n", 1, 11, "network",
       "must be a table, written [network] or network = { ... }, got integer"},
      {"[nodes] instead of [[nodes]]", "[nodes]\nname = \"n1\"\n[[clients]]\n", 1, 1, "nodes",
       "must be an array of tables, each written [[nodes]], got table"},
      {"a distribution as a string", "[[nodes]]\n[[clients]]\n[workload]\ncritical_ms = \"fast\"\n",
       4, 15, "workload.critical_ms",
       "must be a number of milliseconds or a distribution table such as { dist = \"uniform\", "
       "min = 1, max = 5 }, got string"},
      {"a date", "start_unix_ms = 2026-01-01T00:00:00Z\n[[nodes]]\n[[clients]]\n", 1, 17,
       "start_unix_ms", "must be an integer, got date-time"},
  });
}

TEST_CASE("values out of range", "[scenario][errors]") {
  CheckBadCases({
      {"a zero run", "duration_ms = 0\n[[nodes]]\n[[clients]]\n", 1, 15, "duration_ms",
       "must be greater than 0"},
      {"a negative stagger", "[[nodes]]\n[[clients]]\n[workload]\nstagger_ms = -1\n", 4, 14,
       "workload.stagger_ms", "must not be negative, got -1"},
      {"a zero lease as a SET NX TTL",
       "[[nodes]]\n[[clients]]\n[protocol]\nkind = \"setnx-px\"\n[workload]\nlease_ms = 0\n", 6,
       12, "workload.lease_ms", "'setnx-px' sends the lease as the key's TTL, which must be above 0"},
      {"a negative lease as a SET NX TTL, in a client group",
       "[[nodes]]\n[[clients]]\nlease_ms = -5\n[protocol]\nkind = \"get-del\"\n", 3, 12,
       "clients[0].lease_ms", "ERR invalid expire time in 'set' command"},
      {"a side on a lock with one side",
       "[[nodes]]\n[[clients]]\nside = \"read\"\n", 3, 8, "clients[0].side",
       "side (read or write) is for protocol kind rwlock only, and protocol.kind is 'rlock'"},
      {"an unknown side", "[[nodes]]\n[[clients]]\nside = \"reader\"\n[protocol]\nkind = \"rwlock\"\n",
       3, 8, "clients[0].side", "unknown side 'reader'"},
      {"a probability above 1", "[[nodes]]\n[[clients]]\n[network]\nloss = 1.5\n", 4, 8,
       "network.loss", "must be a probability between 0 and 1, got 1.5"},
      {"a negative probability", "[[nodes]]\n[[clients]]\n[network]\nduplicate = -0.1\n", 4, 13,
       "network.duplicate", "must be a probability between 0 and 1, got -0.1"},
      {"reentry 0", "[[nodes]]\n[[clients]]\n[workload]\nreentry = 0\n", 4, 11, "workload.reentry",
       "must be between 1 and 100, got 0"},
      {"too many threads", "[[nodes]]\n[[clients]]\nthreads = 1000\n", 3, 11, "clients[0].threads",
       "must be between 1 and 256, got 1000"},
      {"a negative seed", "seed = -1\n[[nodes]]\n[[clients]]\n", 1, 8, "seed",
       "must be at least 0, got -1"},
      {"an absurd duration", "duration_ms = 1e13\n[[nodes]]\n[[clients]]\n", 1, 15, "duration_ms",
       "must be at most 1000000000000 (about 31 years), got 10000000000000"},
      {"not a number", "[[nodes]]\n[[clients]]\n[workload]\nwait_ms = nan\n", 4, 11,
       "workload.wait_ms", "must be a finite number"},
      {"a clock running backwards", "[[nodes]]\nclock = { drift_ppm = -2000000 }\n[[clients]]\n", 2,
       23, "nodes[0].clock.drift_ppm",
       "must be a drift in ppm between -500000 and 500000, got -2000000"},
      {"no slew", "[[nodes]]\nclock = { ntp = true, slew_ppm = 0 }\n[[clients]]\n", 2, 34,
       "nodes[0].clock.slew_ppm", "must be greater than 0"},
      {"a zero clock jump",
       "[[nodes]]\nclock = { jumps = [{ at_ms = 5, by_ms = 0 }] }\n[[clients]]\n", 2, 41,
       "nodes[0].clock.jumps[0].by_ms", "must not be 0; a jump of 0 ms does nothing"},
      {"a zero-length pause",
       "[[nodes]]\n[[clients]]\n[[faults]]\nkind = \"pause\"\nat_ms = 1\nduration_ms = 0\n"
       "targets = [\"c1\"]\n",
       6, 15, "faults[0].duration_ms", "must be greater than 0"},
      {"a negative crash duration",
       "[[nodes]]\n[[clients]]\n[[faults]]\nkind = \"crash\"\nat_ms = 1\nduration_ms = -5\n"
       "targets = [\"c1\"]\n",
       6, 15, "faults[0].duration_ms", "must not be negative, got -5; 0 (or no duration_ms)"},
      {"a zero-length clock_jump fault",
       "[[nodes]]\n[[clients]]\n[[faults]]\nkind = \"clock_jump\"\nat_ms = 1\nby_ms = 0\n"
       "targets = [\"c1\"]\n",
       6, 9, "faults[0].by_ms", "must not be 0"},
      {"an empty lock name", "[[nodes]]\n[[clients]]\n[protocol]\nlock_name = \"\"\n", 4, 13,
       "protocol.lock_name", "must not be empty"},
      {"an empty scenario name", "name = \"\"\n[[nodes]]\n[[clients]]\n", 1, 8, "name",
       "must not be empty (omit it to use the file name)"},
  });
}

TEST_CASE("distributions", "[scenario]") {
  const Scenario s = LoadGood(
      "[[nodes]]\n[[clients]]\n"
      "[network]\nlatency_ms = { dist = \"normal\", mean = 2, stddev = 0.5, cap = 10 }\n"
      "[replication]\nlag_ms = 0\n"
      "[workload]\ncritical_ms = { dist = \"pareto\", scale = 0.25, shape = 2 }\n"
      "think_ms = { dist = \"uniform\", min = 3, max = 3 }\n");
  CheckDistribution(s.network.latency_us, Distribution::Kind::kNormal, 2000, 500, 10'000);
  CheckDistribution(s.replication.lag_us, Distribution::Kind::kFixed, 0);
  CheckDistribution(s.workload.critical_us, Distribution::Kind::kPareto, 250, 2);  // No unit.
  CheckDistribution(s.workload.think_us, Distribution::Kind::kUniform, 3000, 3000);
  // Pareto's shape is not a duration: neither microsecond rounding nor the
  // 31-year bound applies to it; only > 0 and finite do.
  for (const char* shape : {"0.0004", "1e13"}) {
    const Scenario p = LoadGood(std::string("[[nodes]]\n[[clients]]\n[workload]\n"
                                            "critical_ms = { dist = \"pareto\", scale = 1, shape = ") +
                                shape + " }\n");
    CheckDistribution(p.workload.critical_us, Distribution::Kind::kPareto, 1000, std::stod(shape));
  }

  CheckBadCases({
      {"a pareto shape of 0",
       "[[nodes]]\n[[clients]]\n[workload]\nthink_ms = { dist = \"pareto\", scale = 1, shape = 0 }\n",
       4, 50, "workload.think_ms.shape", "must be greater than 0 (it has no unit), got 0"},
      {"no dist", "[[nodes]]\n[[clients]]\n[workload]\nthink_ms = { min = 1, max = 2 }\n", 4, 12,
       "workload.think_ms.dist",
       "missing; a distribution table names its kind: dist = fixed, uniform, exponential, "
       "normal, pareto"},
      {"an unknown dist",
       "[[nodes]]\n[[clients]]\n[workload]\nthink_ms = { dist = \"exponentail\", mean = 1 }\n", 4,
       21, "workload.think_ms.dist",
       "unknown distribution 'exponentail'; did you mean 'exponential'?"},
      {"a missing parameter",
       "[[nodes]]\n[[clients]]\n[workload]\nthink_ms = { dist = \"uniform\", min = 1 }\n", 4, 12,
       "workload.think_ms.max", "missing; a 'uniform' distribution needs min, max"},
      {"max below min",
       "[[nodes]]\n[[clients]]\n[workload]\nthink_ms = { dist = \"uniform\", min = 5, max = 1 }\n",
       4, 47, "workload.think_ms.max", "must not be less than min (5), got 1"},
      {"a zero mean",
       "[[nodes]]\n[[clients]]\n[workload]\nthink_ms = { dist = \"exponential\", mean = 0 }\n", 4,
       43, "workload.think_ms.mean", "must be greater than 0"},
      {"a zero cap",
       "[[nodes]]\n[[clients]]\n[workload]\nthink_ms = { dist = \"fixed\", value = 1, cap = 0 }\n",
       4, 47, "workload.think_ms.cap", "must be greater than 0; omit cap for no cap"},
      {"a negative fixed value", "[[nodes]]\n[[clients]]\n[workload]\nthink_ms = -3\n", 4, 12,
       "workload.think_ms", "must not be negative, got -3"},
      {"GC pauses back to back", "[[nodes]]\n[[clients]]\n[gc]\nevery_ms = 0\n", 4, 12,
       "gc.every_ms", "must have a mean greater than 0"},
  });
}

TEST_CASE("names: defaults, count groups, duplicates", "[scenario]") {
  const Scenario s = LoadGood(
      "[[nodes]]\nname = \"master\"\n[[nodes]]\n[[nodes]]\n"
      "[[clients]]\nname = \"victim\"\n"
      "[[clients]]\ncount = 2\n"
      "[[clients]]\ncount = 2\nname_prefix = \"w\"\nthreads = 3\n"
      "[[clients]]\n"
      "[[clients]]\ncount = 1\n");
  REQUIRE(s.nodes.size() == 3);
  CHECK(s.nodes[0].name == "master");
  CHECK(s.nodes[1].name == "n1");
  CHECK(s.nodes[2].name == "n2");
  std::vector<std::string> names;
  for (const ClientSpec& c : s.clients) names.push_back(c.name);
  // Generated names number on per prefix across groups.
  CHECK(names == std::vector<std::string>{"victim", "c1", "c2", "w1", "w2", "c3", "c4"});
  CHECK(s.clients[3].threads == 3);
  CHECK(s.clients[4].threads == 3);

  CheckBadCases({
      {"a node and a client with one name", "[[nodes]]\nname = \"x\"\n[[clients]]\nname = \"x\"\n",
       4, 8, "clients[0].name",
       "duplicate name 'x', already declared at line 2; node and client names must all differ"},
      {"a count group colliding with a name",
       "[[nodes]]\n[[clients]]\nname = \"c2\"\n[[clients]]\ncount = 3\n", 5, 9, "clients[1].count",
       "duplicate name 'c2', already declared at line 3"},
      {"name and count", "[[nodes]]\n[[clients]]\nname = \"a\"\ncount = 3\n", 4, 9,
       "clients[0].count", "set either name (one client) or count"},
      {"name_prefix with a name", "[[nodes]]\n[[clients]]\nname = \"a\"\nname_prefix = \"b\"\n", 4,
       15, "clients[0].name_prefix", "name_prefix names the clients of a count group"},
      {"a name with a space", "[[nodes]]\nname = \"a b\"\n[[clients]]\n", 2, 8, "nodes[0].name",
       "'a b' is not a valid name; use 1 to 64 letters, digits, '_', '.' or '-'"},
      {"a reserved name", "[[nodes]]\n[[clients]]\nname = \"sentinel\"\n", 3, 8, "clients[0].name",
       "'sentinel' is reserved (the history uses it for the Sentinel); choose another name"},
      {"another reserved name", "[[nodes]]\nname = \"sim\"\n[[clients]]\n", 2, 8, "nodes[0].name",
       "'sim' is reserved (the history uses it for the simulator)"},
      {"a name with an arrow", "[[nodes]]\n[[clients]]\nname = \"c->n\"\n", 3, 8, "clients[0].name",
       "is not a valid name"},
      {"no nodes", "name = \"x\"\n[[clients]]\n", 1, 1, "nodes",
       "missing; a scenario needs at least one Redis node: add a [[nodes]] table"},
      {"no clients", "[[nodes]]\n", 1, 1, "clients",
       "missing; a scenario needs at least one client process: add a [[clients]] table"},
      {"an empty node list", "nodes = []\n[[clients]]\n", 1, 9, "nodes",
       "must not be empty; a scenario needs at least one Redis node"},
      {"a typo in [[nodes]]", "[[node]]\n[[clients]]\n", 1, 3, "node",
       "unknown key; did you mean 'nodes'?"},
      {"too many clients", "[[nodes]]\n[[clients]]\ncount = 1000\n[[clients]]\ncount = 25\n", 5, 9,
       "clients[1].count", "too many clients; at most 1024 in all"},
  });
}

TEST_CASE("references to names must resolve", "[scenario][errors]") {
  const std::string base = "[[nodes]]\n[[nodes]]\nreplica_of = \"n1\"\n[[clients]]\ncount = 2\n";
  // Lines 1-5 above; each case's text starts on line 6.
  const std::string unknown_target = base +
                                     "[[faults]]\nkind = \"crash\"\nat_ms = 1\n"
                                     "targets = [\"c3\"]\n";
  const std::string unknown_peer = base +
                                   "[[faults]]\nkind = \"partition\"\nat_ms = 1\nduration_ms = 1\n"
                                   "targets = [\"c1\"]\npeers = [\"n1\", \"nn\"]\n";
  const std::string both_sides = base +
                                 "[[faults]]\nkind = \"partition\"\nat_ms = 1\nduration_ms = 1\n"
                                 "targets = [\"c1\", \"n1\"]\npeers = [\"n1\"]\n";
  const std::string listed_twice = base +
                                   "[[faults]]\nkind = \"crash\"\nat_ms = 1\n"
                                   "targets = [\"c1\", \"c1\"]\n";
  const std::string unknown_link = base + "[network]\nlinks = { \"c1->n3\" = 1 }\n";
  const std::string bad_link = base + "[network]\nlinks = { \"c1-n1\" = 1 }\n";
  const std::string self_link = base + "[network]\nlinks = { \"c1->c1\" = 1 }\n";
  const std::string gc_node = base + "[gc]\nclients = [\"c2\", \"n2\"]\n";
  const std::string lose_client = base +
                                  "[[faults]]\nkind = \"lose_replies\"\nat_ms = 1\n"
                                  "duration_ms = 1\ntargets = [\"c1\"]\n";
  const std::string sentinel = "[sentinel]\nenabled = true\n";
  const std::string crash_sentinel =
      base + sentinel + "[[faults]]\nkind = \"crash\"\nat_ms = 1\ntargets = [\"sentinel\"]\n";
  const std::string failover_replica = base +
                                       "[[faults]]\nkind = \"failover\"\nat_ms = 1\n"
                                       "targets = [\"n2\"]\n" +
                                       sentinel;
  const std::string failover_alone =
      "[[nodes]]\n[[clients]]\n[[faults]]\nkind = \"failover\"\nat_ms = 1\n"
      "targets = [\"n1\"]\n" +
      sentinel;
  CheckBadCases({
      {"an unknown target", unknown_target.c_str(), 9, 12, "faults[0].targets[0]",
       "no node or client is named 'c3'; did you mean 'c1'? declared names: n1, n2, c1, c2"},
      {"an unknown peer", unknown_peer.c_str(), 11, 16, "faults[0].peers[1]",
       "no node or client is named 'nn'"},
      {"a name on both sides", both_sides.c_str(), 11, 10, "faults[0].peers[0]",
       "'n1' is on both sides of the partition (also in targets)"},
      {"a target listed twice", listed_twice.c_str(), 9, 18, "faults[0].targets[1]",
       "'c1' is listed twice"},
      {"an unknown link end", unknown_link.c_str(), 7, 11, "network.links.\"c1->n3\"",
       "no node or client is named 'n3'"},
      {"a link without an arrow", bad_link.c_str(), 7, 11, "network.links.c1-n1",
       "a link is written \"from->to\" with two declared names, e.g. \"c1->n1\""},
      {"a link to itself", self_link.c_str(), 7, 11, "network.links.\"c1->c1\"",
       "a link joins two different processes"},
      {"a node among gc.clients", gc_node.c_str(), 7, 18, "gc.clients[1]",
       "'n2' is a node; gc.clients names clients"},
      {"lose_replies on a client", lose_client.c_str(), 10, 12, "faults[0].targets[0]",
       "'c1' is a client; a 'lose_replies' fault targets nodes"},
      {"a failover of a replica", failover_replica.c_str(), 9, 12, "faults[0].targets[0]",
       "'n2' is a replica (of 'n1'); a 'failover' fault targets master nodes that have a replica"},
      {"a failover of a lone master", failover_alone.c_str(), 6, 12, "faults[0].targets[0]",
       "'n1' has no replica to promote; add a [[nodes]] table with replica_of = \"n1\""},
      {"'sentinel' in a partition while Sentinel is off",
       "[[nodes]]\n[[clients]]\n[[faults]]\nkind = \"partition\"\nat_ms = 1\nduration_ms = 1\n"
       "targets = [\"n1\"]\npeers = [\"sentinel\"]\n",
       8, 10, "faults[0].peers[0]",
       "'sentinel' stands for the Sentinel process, which is off; set enabled = true in "
       "[sentinel] or leave it out of the partition"},
      {"'sentinel' outside a partition", crash_sentinel.c_str(), 11, 12, "faults[0].targets[0]",
       "no node or client is named 'sentinel'"},
      {"replica_of an unknown node", "[[nodes]]\n[[nodes]]\nreplica_of = \"m1\"\n[[clients]]\n", 3,
       14, "nodes[1].replica_of",
       "no node is named 'm1'; did you mean 'n1'? replica_of must name a master node declared "
       "above this one"},
      {"replica_of a later node", "[[nodes]]\nreplica_of = \"n2\"\n[[nodes]]\n[[clients]]\n", 2, 14,
       "nodes[0].replica_of", "'n2' is declared below this node"},
      {"replica_of itself", "[[nodes]]\nname = \"a\"\nreplica_of = \"a\"\n[[clients]]\n", 3, 14,
       "nodes[0].replica_of", "a node cannot be a replica of itself"},
      {"replica_of a replica",
       "[[nodes]]\n[[nodes]]\nreplica_of = \"n1\"\n[[nodes]]\nreplica_of = \"n2\"\n[[clients]]\n",
       5, 14, "nodes[2].replica_of", "'n2' is itself a replica (of 'n1')"},
      {"replica_of a client", "[[nodes]]\nreplica_of = \"c1\"\n[[clients]]\n", 2, 14,
       "nodes[0].replica_of", "'c1' is a client"},
  });
}

TEST_CASE("a failover needs no [sentinel]: it is a manual one", "[scenario]") {
  // The simulator promotes the replica on the fault itself; [sentinel] enabled adds automatic
  // failovers of masters that are down for down_after_ms.
  const Scenario s = LoadGood(
      "[[nodes]]\n[[nodes]]\nreplica_of = \"n1\"\n[[clients]]\n"
      "[[faults]]\nkind = \"failover\"\nat_ms = 1\ntargets = [\"n1\"]\n");
  CHECK_FALSE(s.sentinel.enabled);
  REQUIRE(s.faults.size() == 1);
  CHECK(s.faults[0].kind == FaultSpec::Kind::kFailover);
}

TEST_CASE("faults: required keys, kinds and the run's bounds", "[scenario][errors]") {
  const std::string head = "duration_ms = 10000\n[[nodes]]\n[[clients]]\n";  // Lines 1-3.
  const std::string no_kind = head + "[[faults]]\nat_ms = 1\ntargets = [\"c1\"]\n";
  const std::string no_at = head + "[[faults]]\nkind = \"crash\"\ntargets = [\"c1\"]\n";
  const std::string bad_kind = head + "[[faults]]\nkind = \"partiton\"\nat_ms = 1\n";
  const std::string no_duration =
      head + "[[faults]]\nkind = \"lose_replies\"\nat_ms = 1\ntargets = [\"n1\"]\n";
  const std::string no_peers =
      head + "[[faults]]\nkind = \"partition\"\nat_ms = 1\nduration_ms = 1\ntargets = [\"c1\"]\n";
  const std::string no_targets =
      head + "[[faults]]\nkind = \"pause\"\nat_ms = 1\nduration_ms = 1\n";
  const std::string empty_targets =
      head + "[[faults]]\nkind = \"crash\"\nat_ms = 1\ntargets = []\n";
  const std::string no_by =
      head + "[[faults]]\nkind = \"clock_jump\"\nat_ms = 1\ntargets = [\"n1\"]\n";
  const std::string outside =
      head + "[[faults]]\nkind = \"crash\"\nat_ms = 10000\ntargets = [\"c1\"]\n";
  const std::string jump_outside =
      "duration_ms = 10000\n[[nodes]]\nclock = { jumps = [{ at_ms = 20000, by_ms = 5 }] }\n"
      "[[clients]]\n";
  // An inline array of faults must come before the first [table] header.
  const std::string inline_fault =
      "duration_ms = 10000\n"
      "faults = [{ kind = \"crash\", at_ms = 1, targets = [\"c1\"] },\n"
      "          { kind = \"crash\", at_ms = 99999, targets = [\"c1\"] }]\n"
      "[[nodes]]\n[[clients]]\n";
  CheckBadCases({
      {"no kind", no_kind.c_str(), 4, 1, "faults[0].kind",
       "missing; every fault needs a kind: partition, crash, pause, clock_jump, failover, "
       "lose_replies"},
      {"no at_ms", no_at.c_str(), 4, 1, "faults[0].at_ms",
       "missing; every fault needs at_ms, when it starts"},
      {"an unknown kind", bad_kind.c_str(), 5, 8, "faults[0].kind",
       "unknown fault kind 'partiton'; did you mean 'partition'?"},
      {"no duration", no_duration.c_str(), 4, 1, "faults[0].duration_ms",
       "missing; a 'lose_replies' fault needs duration_ms, how long it lasts"},
      {"no peers", no_peers.c_str(), 4, 1, "faults[0].peers",
       "missing; a partition needs peers, the names on the other side"},
      {"no targets", no_targets.c_str(), 4, 1, "faults[0].targets",
       "missing; a 'pause' fault needs targets"},
      {"empty targets", empty_targets.c_str(), 7, 11, "faults[0].targets",
       "must name at least one node or client"},
      {"a clock_jump without by_ms", no_by.c_str(), 4, 1, "faults[0].by_ms",
       "missing; a clock_jump needs by_ms"},
      {"a fault at the end of the run", outside.c_str(), 6, 9, "faults[0].at_ms",
       "is outside the run: must be less than duration_ms (10000), got 10000"},
      {"a clock jump after the run", jump_outside.c_str(), 3, 30, "nodes[0].clock.jumps[0].at_ms",
       "is outside the run"},
      {"an inline fault array", inline_fault.c_str(), 3, 37, "faults[1].at_ms",
       "is outside the run"},
  });

  // FaultSpec::line is where each fault was declared, for inline tables too.
  const Scenario s = LoadGood(
      "faults = [{ kind = \"crash\", at_ms = 1, targets = [\"c1\"] },\n"
      "          { kind = \"crash\", at_ms = 2, targets = [\"n1\"] }]\n[[nodes]]\n[[clients]]\n");
  REQUIRE(s.faults.size() == 2);
  CHECK(s.faults[0].line == 1);
  CHECK(s.faults[1].line == 2);
}

TEST_CASE("network windows: latency, loss and duplicate faults", "[scenario][network]") {
  const Scenario s = LoadGood(
      "[[nodes]]\n[[clients]]\ncount = 2\n"
      "[[faults]]\nkind = \"latency\"\nat_ms = 1000\nduration_ms = 2000\nextra_ms = 0.25\n"
      "targets = [\"n1\"]\n"
      "[[faults]]\nkind = \"loss\"\nat_ms = 2000\nduration_ms = 500\nrate = 1\n"
      "targets = [\"c1\", \"n1\"]\npeers = [\"c2\"]\n"
      "[[faults]]\nkind = \"duplicate\"\nat_ms = 0\nduration_ms = 1\nrate = 0.05\n"
      "targets = [\"c2\"]\n");
  REQUIRE(s.faults.size() == 3);
  const FaultSpec& latency = s.faults[0];
  CHECK(latency.kind == FaultSpec::Kind::kLatency);
  CHECK(latency.at_us == 1'000'000);
  CHECK(latency.duration_us == 2'000'000);
  CHECK(latency.extra_us == 250);
  CHECK(latency.rate == 0);
  CHECK(latency.targets == std::vector<std::string>{"n1"});
  CHECK(latency.peers.empty());
  const FaultSpec& loss = s.faults[1];
  CHECK(loss.kind == FaultSpec::Kind::kLoss);
  CHECK(loss.duration_us == 500'000);
  CHECK(loss.rate == 1);
  CHECK(loss.extra_us == 0);
  CHECK(loss.targets == std::vector<std::string>{"c1", "n1"});
  CHECK(loss.peers == std::vector<std::string>{"c2"});
  const FaultSpec& duplicate = s.faults[2];
  CHECK(duplicate.kind == FaultSpec::Kind::kDuplicate);
  CHECK(duplicate.rate == 0.05);
  CHECK(duplicate.duration_us == 1'000);
  CHECK(duplicate.targets == std::vector<std::string>{"c2"});
}

TEST_CASE("network windows: each mistake", "[scenario][network][errors]") {
  const std::string head = "duration_ms = 10000\n[[nodes]]\n[[clients]]\ncount = 2\n";  // 1-4.
  auto fault = [&](const std::string& body) { return head + "[[faults]]\n" + body; };  // 5-.
  const std::string no_extra =
      fault("kind = \"latency\"\nat_ms = 1\nduration_ms = 5\ntargets = [\"n1\"]\n");
  const std::string zero_extra = fault(
      "kind = \"latency\"\nat_ms = 1\nduration_ms = 5\nextra_ms = 0\ntargets = [\"n1\"]\n");
  const std::string unit_extra = fault(
      "kind = \"latency\"\nat_ms = 1\nduration_ms = 5\nextra_ms = \"5ms\"\n"
      "targets = [\"n1\"]\n");
  const std::string no_duration =
      fault("kind = \"loss\"\nat_ms = 1\nrate = 0.5\ntargets = [\"n1\"]\n");
  const std::string zero_duration = fault(
      "kind = \"duplicate\"\nat_ms = 1\nduration_ms = 0\nrate = 0.5\ntargets = [\"n1\"]\n");
  const std::string no_rate =
      fault("kind = \"loss\"\nat_ms = 1\nduration_ms = 5\ntargets = [\"n1\"]\n");
  const std::string zero_rate = fault(
      "kind = \"loss\"\nat_ms = 1\nduration_ms = 5\nrate = 0\ntargets = [\"n1\"]\n");
  const std::string big_rate = fault(
      "kind = \"duplicate\"\nat_ms = 1\nduration_ms = 5\nrate = 1.5\ntargets = [\"n1\"]\n");
  const std::string text_rate = fault(
      "kind = \"duplicate\"\nat_ms = 1\nduration_ms = 5\nrate = \"0.5\"\n"
      "targets = [\"n1\"]\n");
  const std::string no_targets =
      fault("kind = \"loss\"\nat_ms = 1\nduration_ms = 5\nrate = 0.5\n");
  const std::string empty_targets =
      fault("kind = \"loss\"\nat_ms = 1\nduration_ms = 5\nrate = 0.5\ntargets = []\n");
  const std::string empty_peers = fault(
      "kind = \"loss\"\nat_ms = 1\nduration_ms = 5\nrate = 0.5\ntargets = [\"n1\"]\n"
      "peers = []\n");
  const std::string peer_in_targets = fault(
      "kind = \"latency\"\nat_ms = 1\nduration_ms = 5\nextra_ms = 5\n"
      "targets = [\"n1\", \"c1\"]\npeers = [\"c2\", \"c1\"]\n");
  const std::string unknown_peer = fault(
      "kind = \"latency\"\nat_ms = 1\nduration_ms = 5\nextra_ms = 5\n"
      "targets = [\"n1\"]\npeers = [\"c3\"]\n");
  const std::string sentinel_peer =
      fault("kind = \"loss\"\nat_ms = 1\nduration_ms = 5\nrate = 1\ntargets = [\"n1\"]\n"
            "peers = [\"sentinel\"]\n") +
      "[sentinel]\nenabled = true\n";
  const std::string rate_on_latency = fault(
      "kind = \"latency\"\nat_ms = 1\nduration_ms = 5\nextra_ms = 5\nrate = 0.5\n"
      "targets = [\"n1\"]\n");
  const std::string extra_on_loss = fault(
      "kind = \"loss\"\nat_ms = 1\nduration_ms = 5\nextra_ms = 5\nrate = 0.5\n"
      "targets = [\"n1\"]\n");
  const std::string one_way = fault(
      "kind = \"duplicate\"\nat_ms = 1\nduration_ms = 5\nrate = 0.5\ntargets = [\"n1\"]\n"
      "one_way = true\n");
  const std::string typo = fault(
      "kind = \"loss\"\nat_ms = 1\nduration_ms = 5\nrat = 0.5\ntargets = [\"n1\"]\n");
  const std::string kind_typo = fault(
      "kind = \"latncy\"\nat_ms = 1\nduration_ms = 5\nextra_ms = 5\ntargets = [\"n1\"]\n");
  const std::string outside = fault(
      "kind = \"latency\"\nat_ms = 10000\nduration_ms = 5\nextra_ms = 5\n"
      "targets = [\"n1\"]\n");
  CheckBadCases({
      {"latency without extra_ms", no_extra.c_str(), 5, 1, "faults[0].extra_ms",
       "missing; a latency fault needs extra_ms, the delay added to each message"},
      {"an extra_ms of 0", zero_extra.c_str(), 9, 12, "faults[0].extra_ms",
       "must be greater than 0"},
      {"an extra_ms with its unit", unit_extra.c_str(), 9, 12, "faults[0].extra_ms",
       "must be a number, got string"},
      {"loss without duration_ms", no_duration.c_str(), 5, 1, "faults[0].duration_ms",
       "missing; a 'loss' fault needs duration_ms, how long it lasts"},
      {"a duration_ms of 0", zero_duration.c_str(), 8, 15, "faults[0].duration_ms",
       "must be greater than 0"},
      {"loss without rate", no_rate.c_str(), 5, 1, "faults[0].rate",
       "missing; a 'loss' fault needs rate, the probability that it strikes a message (0 to 1)"},
      {"a rate of 0", zero_rate.c_str(), 9, 8, "faults[0].rate",
       "must be a probability greater than 0 and at most 1, got 0; a rate of 0 does nothing, "
       "remove the fault"},
      {"a rate above 1", big_rate.c_str(), 9, 8, "faults[0].rate",
       "must be a probability greater than 0 and at most 1, got 1.5"},
      {"a rate in quotes", text_rate.c_str(), 9, 8, "faults[0].rate",
       "must be a number, got string (write 0.5 without the quotes)"},
      {"no targets", no_targets.c_str(), 5, 1, "faults[0].targets",
       "missing; a 'loss' fault needs targets"},
      {"empty targets", empty_targets.c_str(), 10, 11, "faults[0].targets",
       "must name at least one node or client"},
      {"empty peers", empty_peers.c_str(), 11, 9, "faults[0].peers",
       "must name at least one node or client; leave peers out to affect every link of the "
       "targets"},
      {"a peer that is a target", peer_in_targets.c_str(), 11, 16, "faults[0].peers[1]",
       "'c1' is also in targets; peers are the other ends of the targets' links"},
      {"an unknown peer", unknown_peer.c_str(), 11, 10, "faults[0].peers[0]",
       "no node or client is named 'c3'; did you mean 'c1'?"},
      {"the Sentinel as a peer", sentinel_peer.c_str(), 11, 10, "faults[0].peers[0]",
       "no node or client is named 'sentinel'"},
      {"rate on a latency fault", rate_on_latency.c_str(), 10, 1, "faults[0].rate",
       "is not used by a 'latency' fault; a 'latency' fault takes: kind, at_ms, duration_ms, "
       "targets, peers, extra_ms"},
      {"extra_ms on a loss fault", extra_on_loss.c_str(), 9, 1, "faults[0].extra_ms",
       "is not used by a 'loss' fault; a 'loss' fault takes: kind, at_ms, duration_ms, targets, "
       "peers, rate"},
      {"one_way on a duplicate fault", one_way.c_str(), 11, 1, "faults[0].one_way",
       "is not used by a 'duplicate' fault"},
      {"a typo in rate", typo.c_str(), 9, 1, "faults[0].rat", "unknown key; did you mean 'rate'?"},
      {"a typo in the kind", kind_typo.c_str(), 6, 8, "faults[0].kind",
       "unknown fault kind 'latncy'; did you mean 'latency'?"},
      {"a window after the run", outside.c_str(), 7, 9, "faults[0].at_ms", "is outside the run"},
  });
}

TEST_CASE("[fuzz]: every key, its units and its defaults", "[scenario][fuzz]") {
  // Absent, the table keeps FuzzSpec's defaults; `run` ignores it either way.
  CHECK(LoadGood("[[nodes]]\n[[clients]]\n").fuzz == lockstep::FuzzSpec{});
  CHECK(LoadGood("[[nodes]]\n[[clients]]\n[fuzz]\n").fuzz == lockstep::FuzzSpec{});
  const Scenario s = LoadGood(
      "[[nodes]]\n[[clients]]\n"
      "[fuzz]\n"
      "faults = { client_pause = 3, partition = 1.5, failover = 0 }\n"
      "fault_count = { min = 1, max = 6 }\n"
      "fault_duration_ms = { min = 0.5, max = 2000 }\n"
      "clock_jump_ms = 1500\n"
      "drift_ppm = { min = 0, max = 500 }\n"
      "latency_spike_ms = { min = 100, max = 3000.0004 }\n"
      "loss_rate = { min = 0, max = 1 }\n"
      "duplicate_rate = 0.25\n"
      "clients = { min = 2, max = 8 }\n"
      "threads = 3\n"
      "lease_ms = { min = 1000, max = 30000 }\n"
      "wait_ms = 0\n"
      "critical_ms = { min = 10, max = 200 }\n"
      "think_ms = { min = 0, max = 100 }\n"
      "replication_lag_ms = 5\n"
      "versions = [\"v3.13.6\", \"current\"]\n"
      "max_events = 1000000\n"
      "max_case_s = 2.5\n");
  const lockstep::FuzzSpec& f = s.fuzz;
  CHECK(f.faults == std::map<std::string, double>{
                        {"client_pause", 3}, {"partition", 1.5}, {"failover", 0}});
  CHECK(f.fault_count == lockstep::FuzzRange{1, 6});
  CHECK(f.fault_duration_us == lockstep::FuzzRange{500, 2'000'000});
  CHECK(f.clock_jump_us == lockstep::FuzzRange{1'500'000, 1'500'000});
  CHECK(f.drift_ppm == lockstep::FuzzRange{0, 500});
  // Rounded to whole microseconds, as every duration in a scenario.
  CHECK(f.latency_spike_us == lockstep::FuzzRange{100'000, 3'000'000});
  CHECK(f.loss_rate == lockstep::FuzzRange{0, 1});
  CHECK(f.duplicate_rate == lockstep::FuzzRange{0.25, 0.25});
  CHECK(f.clients == lockstep::FuzzRange{2, 8});
  CHECK(f.threads == lockstep::FuzzRange{3, 3});
  CHECK(f.lease_us == lockstep::FuzzRange{1'000'000, 30'000'000});
  CHECK(f.wait_us == lockstep::FuzzRange{0, 0});
  CHECK(f.critical_us == lockstep::FuzzRange{10'000, 200'000});
  CHECK(f.think_us == lockstep::FuzzRange{0, 100'000});
  CHECK(f.replication_lag_us == lockstep::FuzzRange{5'000, 5'000});
  CHECK(f.versions == std::vector<std::string>{"v3.13.6", "current"});
  CHECK(f.max_events == 1'000'000);
  CHECK(f.max_case_s == 2.5);
  // Everything else in the scenario is as it would be without [fuzz].
  Scenario without = LoadGood("[[nodes]]\n[[clients]]\n");
  without.fuzz = s.fuzz;
  CHECK(without == s);
}

TEST_CASE("[fuzz]: each mistake", "[scenario][fuzz][errors]") {
  const std::string head = "[[nodes]]\n[[clients]]\n[fuzz]\n";  // Lines 1-3; the key on 4.
  struct Fuzz {
    std::string text;
    explicit Fuzz(const std::string& line) : text("[[nodes]]\n[[clients]]\n[fuzz]\n" + line) {}
  };
  const Fuzz unknown_kind("faults = { client_paus = 1 }\n");
  const Fuzz negative_weight("faults = { partition = -1 }\n");
  const Fuzz text_weight("faults = { partition = \"2\" }\n");
  const Fuzz all_zero("faults = { partition = 0, node_crash = 0 }\n");
  const Fuzz no_kind("faults = {}\n");
  const Fuzz faults_array("faults = [\"partition\"]\n");
  const Fuzz float_count("fault_count = 2.0\n");
  const Fuzz big_count("fault_count = { min = 0, max = 20000 }\n");
  const Fuzz negative_count("fault_count = -1\n");
  const Fuzz reversed("fault_count = { min = 5, max = 2 }\n");
  const Fuzz no_max("fault_count = { min = 5 }\n");
  const Fuzz range_typo("fault_count = { min = 1, mx = 2 }\n");
  const Fuzz range_array("fault_count = [1, 2]\n");
  const Fuzz zero_duration("fault_duration_ms = { min = 0, max = 10 }\n");
  const Fuzz reversed_ms("latency_spike_ms = { min = 500, max = 0.5 }\n");
  const Fuzz huge_ms("clock_jump_ms = 1e13\n");
  const Fuzz big_drift("drift_ppm = { min = 1, max = 600000 }\n");
  const Fuzz big_rate("loss_rate = { min = 0.5, max = 1.5 }\n");
  const Fuzz no_clients("clients = 0\n");
  const Fuzz many_threads("threads = { min = 1, max = 257 }\n");
  const Fuzz zero_lease("lease_ms = 0\n");
  const Fuzz negative_wait("wait_ms = { min = -1, max = 5 }\n");
  const Fuzz unknown_version("versions = [\"v3.13.7\"]\n");
  const Fuzz twice("versions = [\"current\", \"current\"]\n");
  const Fuzz no_versions("versions = []\n");
  const Fuzz zero_events("max_events = 0\n");
  const Fuzz zero_case("max_case_s = 0\n");
  const Fuzz typo("fault_cont = 3\n");
  const std::string current_only =
      "[[nodes]]\n[[clients]]\n[protocol]\nkind = \"fencedlock\"\n[fuzz]\n"
      "versions = [\"current\", \"v3.13.6\"]\n";
  const std::string misplaced = "[[nodes]]\n[[clients]]\n[workload]\nfault_count = 2\n";
  CheckBadCases({
      {"an unknown fault kind", unknown_kind.text.c_str(), 4, 12, "fuzz.faults.client_paus",
       "unknown fault kind; did you mean 'client_pause'? [fuzz] faults takes: partition, "
       "partition_one_way, node_pause"},
      {"a negative weight", negative_weight.text.c_str(), 4, 24, "fuzz.faults.partition",
       "must not be negative, got -1; a weight of 0 keeps the kind out"},
      {"a weight in quotes", text_weight.text.c_str(), 4, 24, "fuzz.faults.partition",
       "must be a number, got string (write 2 without the quotes)"},
      {"every weight 0", all_zero.text.c_str(), 4, 10, "fuzz.faults",
       "every weight is 0, so no fault can be drawn"},
      {"an empty faults table", no_kind.text.c_str(), 4, 10, "fuzz.faults",
       "names no kind, so no fault can be drawn"},
      {"faults as an array", faults_array.text.c_str(), 4, 10, "fuzz.faults",
       "must be a table"},
      {"a fractional count", float_count.text.c_str(), 4, 15, "fuzz.fault_count",
       "must be an integer between 0 and 10000, got float (write 2 without the '.0')"},
      {"a count above the limit", big_count.text.c_str(), 4, 32, "fuzz.fault_count.max",
       "must be between 0 and 10000, got 20000"},
      {"a negative count", negative_count.text.c_str(), 4, 15, "fuzz.fault_count",
       "must be between 0 and 10000, got -1"},
      {"min above max", reversed.text.c_str(), 4, 32, "fuzz.fault_count.max",
       "must not be less than min (5), got 2"},
      {"a range without max", no_max.text.c_str(), 4, 15, "fuzz.fault_count.max",
       "missing; a range is written { min = 1, max = 5 }, or as one number for a fixed value"},
      {"a typo in a range", range_typo.text.c_str(), 4, 26, "fuzz.fault_count.mx",
       "unknown key; did you mean 'max'? a range takes: min, max"},
      {"a range as an array", range_array.text.c_str(), 4, 15, "fuzz.fault_count",
       "must be a number or a range such as { min = 1, max = 5 }, got array"},
      {"a duration of 0", zero_duration.text.c_str(), 4, 29, "fuzz.fault_duration_ms.min",
       "must be greater than 0"},
      {"durations reversed", reversed_ms.text.c_str(), 4, 39, "fuzz.latency_spike_ms.max",
       "must not be less than min (500), got 0.5"},
      {"a duration past the limit", huge_ms.text.c_str(), 4, 17, "fuzz.clock_jump_ms",
       "must be at most 1000000000000 (about 31 years)"},
      {"a drift past the limit", big_drift.text.c_str(), 4, 30, "fuzz.drift_ppm.max",
       "must be a drift in ppm between 0 and 500000, got 600000"},
      {"a rate above 1", big_rate.text.c_str(), 4, 32, "fuzz.loss_rate.max",
       "must be a probability between 0 and 1, got 1.5"},
      {"no clients", no_clients.text.c_str(), 4, 11, "fuzz.clients",
       "must be between 1 and 1024, got 0"},
      {"too many threads", many_threads.text.c_str(), 4, 28, "fuzz.threads.max",
       "must be between 1 and 256, got 257"},
      {"a lease of 0", zero_lease.text.c_str(), 4, 12, "fuzz.lease_ms", "must be greater than 0"},
      {"a negative wait", negative_wait.text.c_str(), 4, 19, "fuzz.wait_ms.min",
       "must not be negative, got -1"},
      {"an unknown version", unknown_version.text.c_str(), 4, 13, "fuzz.versions[0]",
       "unknown protocol version 'v3.13.7'; did you mean 'v3.13.6'? known protocol versions: "
       "v3.13.6, current"},
      {"a version twice", twice.text.c_str(), 4, 24, "fuzz.versions[1]",
       "'current' is listed twice"},
      {"no versions", no_versions.text.c_str(), 4, 12, "fuzz.versions",
       "must name at least one version; leave versions out to keep the base's"},
      {"max_events of 0", zero_events.text.c_str(), 4, 14, "fuzz.max_events",
       "must be at least 1, got 0"},
      {"max_case_s of 0", zero_case.text.c_str(), 4, 14, "fuzz.max_case_s",
       "must be greater than 0 and at most 1000000000 (seconds of wall time per case), got 0"},
      {"a typo in [fuzz]", typo.text.c_str(), 4, 1, "fuzz.fault_cont",
       "unknown key; did you mean 'fault_count'? [fuzz] takes: faults, fault_count"},
      {"a version the kind lacks", current_only.c_str(), 6, 24, "fuzz.versions[1]",
       "'fencedlock' exists only as \"current\" (Redisson added it in 3.19.0)"},
      {"a [fuzz] key in [workload]", misplaced.c_str(), 4, 1, "workload.fault_count",
       "unknown key; 'fault_count' belongs in [fuzz]"},
  });
}

TEST_CASE("protocol kinds, versions and script files", "[scenario][errors]") {
  // Every kind the loader knows loads with each of its script names (new kinds are added to
  // kProtocolKinds; this keeps each new entry loadable).
  const std::string script =
      (RepoRoot() / "lua/rlock/current/acquire.lua").lexically_normal().string();
  for (const lockstep::history::ProtocolKind& kind : lockstep::kProtocolKinds) {
    for (std::string_view name : kind.scripts) {
      if (name.empty()) continue;
      INFO(kind.name << " " << name);
      const Scenario s =
          LoadGood("[[nodes]]\n[[clients]]\n[protocol]\nkind = \"" + std::string(kind.name) +
                   "\"\nscripts = { " + std::string(name) + " = \"" + script + "\" }\n");
      CHECK(s.protocol.kind == &kind);
      CHECK(s.protocol.script_files.at(std::string(name)) == script);
    }
  }

  const std::string missing_file =
      "[[nodes]]\n[[clients]]\n[protocol]\n"
      "scripts = { unlock = \"no_such.lua\" }\n";
  CheckBadCases({
      {"an unknown version", "[[nodes]]\n[[clients]]\n[protocol]\nversion = \"3.13.6\"\n", 4, 11,
       "protocol.version",
       "unknown protocol version '3.13.6'; did you mean 'v3.13.6'? known protocol versions: "
       "v3.13.6, current"},
      {"an unknown script name",
       "[[nodes]]\n[[clients]]\n[protocol]\nscripts = { unlok = \"x.lua\" }\n", 4, 13,
       "protocol.scripts.unlok",
       "unknown script 'unlok' for protocol kind 'rlock'; did you mean 'unlock'? its scripts "
       "are: acquire, unlock, renew, force_unlock"},
      {"a script file that does not exist", missing_file.c_str(), 4, 22, "protocol.scripts.unlock",
       "no such file: no_such.lua (script paths are relative to the scenario file's directory)"},
      {"an unknown workload mode", "[[nodes]]\n[[clients]]\n[workload]\nmode = \"trylok\"\n", 4, 8,
       "workload.mode", "unknown workload mode 'trylok'; did you mean 'trylock'?"},
      {"an unknown persistence", "[[nodes]]\npersistence = \"aof\"\n[[clients]]\n", 2, 15,
       "nodes[0].persistence", "known persistence modes: none, aof-everysec, aof-always"},
      {"an unknown expectation", "[[nodes]]\n[[clients]]\n[expect]\nliveness = \"holds\"\n", 4, 12,
       "expect.liveness",
       "unknown expectation 'holds'; did you mean 'hold'? write \"hold\", \"violated\" or \"any\""},
  });
}

TEST_CASE("the first problem in the file is the one reported", "[scenario][errors]") {
  // [[faults]] is read after [workload] by the loader but comes first in this file, and the
  // unknown target would only be found in the second phase.
  CheckBadCases({
      {"file order wins over the loader's order",
       "[[nodes]]\n[[clients]]\n[[faults]]\nkind = \"crash\"\nat_ms = -1\ntargets = [\"c1\"]\n"
       "[workload]\nstagger_ms = -1\n",
       5, 9, "faults[0].at_ms", "must not be negative"},
      {"references are checked only once every table is right",
       "[[nodes]]\n[[clients]]\n[[faults]]\nkind = \"crash\"\nat_ms = 1\ntargets = [\"zz\"]\n"
       "[workload]\nstagger_ms = -1\n",
       8, 14, "workload.stagger_ms", "must not be negative"},
  });
}

TEST_CASE("milliseconds become microseconds", "[scenario]") {
  const Scenario s = LoadGood(
      "duration_ms = 1.5\nstart_unix_ms = 0\n[[nodes]]\nclock = { offset_ms = -0.25 }\n"
      "[[clients]]\n[workload]\nwait_ms = 0.0004\nlease_ms = 1e3\n[checks]\n"
      "liveness_bound_ms = 0\n");
  CHECK(s.duration_us == 1500);
  CHECK(s.start_unix_ms == 0);  // Stays in ms: it is a wall-clock instant, not a duration.
  CHECK(s.nodes[0].clock.offset_us == -250);
  CHECK(s.workload.wait_us == 0);  // Finer than a microsecond: rounded.
  CHECK(s.workload.lease_us == 1'000'000);
  CHECK(s.liveness_bound_us == 0);
}

TEST_CASE("other valid forms", "[scenario]") {
  // Tables written as headers, as inline tables and as dotted keys are the same to the loader.
  const Scenario s = LoadGood(
      "workload.reentry = 3\nnodes = [{ name = \"a\" }]\n"
      "[[clients]]\nclock.ntp = true\n[gc]\nenabled = false\n[network.links]\n\"a->c1\" = 2\n");
  CHECK(s.workload.reentry == 3);
  CHECK(s.nodes[0].name == "a");
  CHECK(s.clients[0].clock.ntp);
  CHECK_FALSE(s.gc.enabled);
  CheckDistribution(s.network.link_latency_us.at("a->c1"), Distribution::Kind::kFixed, 2000);

  // The source name gives the default scenario name.
  ScenarioError error;
  const auto named = LoadScenarioString("[[nodes]]\n[[clients]]\n", "dir/two-nodes.toml", &error);
  REQUIRE(named.has_value());
  CHECK(named->name == "two-nodes");
  CHECK(named->file == "dir/two-nodes.toml");
}

TEST_CASE("files that cannot be read, and ToString without a key or position", "[scenario]") {
  ScenarioError error;
  const std::string missing = TestData("no_such_file.toml");
  REQUIRE_FALSE(LoadScenarioFile(missing, &error).has_value());
  CHECK(error.file == missing);
  CHECK(error.line == 0);
  CHECK(error.ToString() == missing + ": cannot open: No such file or directory");

  const std::string directory = TestData("");
  REQUIRE_FALSE(LoadScenarioFile(directory, &error).has_value());
  CHECK(error.ToString() == directory + ": is a directory, not a scenario file");

  ScenarioError no_key;
  no_key.file = "f.toml";
  no_key.line = 3;
  no_key.column = 4;
  no_key.message = "m";
  CHECK(no_key.ToString() == "f.toml:3:4: m");
}

TEST_CASE("the complete example in docs/scenario-format.md loads", "[scenario][docs]") {
  const fs::path doc = RepoRoot() / "docs" / "scenario-format.md";
  const std::string text = ReadFile(doc);
  // The example is the first ```toml block after the "Complete example" heading.
  const size_t heading = text.find("## Complete example");
  REQUIRE(heading != std::string::npos);
  const size_t open = text.find("```toml\n", heading);
  REQUIRE(open != std::string::npos);
  const size_t begin = open + 8;
  const size_t end = text.find("```", begin);
  REQUIRE(end != std::string::npos);
  ScenarioError error;
  const std::optional<Scenario> s =
      LoadScenarioString(std::string_view(text).substr(begin, end - begin),
                         (RepoRoot() / "scenarios/example.toml").string(), &error);
  INFO(error.ToString());
  REQUIRE(s.has_value());
  CHECK(s->name == "failover-partition");
  CHECK(s->faults.size() >= 3);
  CHECK(s->expect.size() == 5);
}

TEST_CASE("[cluster]: the table turns cluster mode on", "[scenario][cluster]") {
  CHECK_FALSE(LoadGood("[[nodes]]\n[[clients]]\n").cluster.enabled);
  CHECK(LoadGood("[[nodes]]\n[[nodes]]\n[[nodes]]\n[[clients]]\n[cluster]\n").cluster.enabled);
  CHECK(LoadGood("[[nodes]]\n[[clients]]\n[cluster]\nenabled = true\n").cluster.enabled);
  CHECK_FALSE(LoadGood("[[nodes]]\n[[clients]]\n[cluster]\nenabled = false\n").cluster.enabled);
  CHECK(LoadGood("cluster = { }\n[[nodes]]\n[[clients]]\n").cluster.enabled);
  // What a cluster refuses is allowed again when it is switched off.
  CHECK_FALSE(LoadGood("[[nodes]]\n[[nodes]]\nreplica_of = \"n1\"\n[[clients]]\n"
                       "[cluster]\nenabled = false\n")
                  .cluster.enabled);
}

TEST_CASE("[cluster]: mistakes and what a cluster cannot be combined with",
          "[scenario][cluster][errors]") {
  CheckBadCases({
      {"unknown key", "[[nodes]]\n[[clients]]\n[cluster]\nmasters = 3\n", 4, 1, "cluster.masters",
       "[cluster] takes: enabled"},
      {"wrong type", "[[nodes]]\n[[clients]]\n[cluster]\nenabled = \"yes\"\n", 4, 11,
       "cluster.enabled", "must be true or false"},
      {"not a table", "cluster = true\n[[nodes]]\n[[clients]]\n", 1, 11, "cluster",
       "must be a table"},
      {"a replica", "[[nodes]]\n[[nodes]]\nreplica_of = \"n1\"\n[[clients]]\n[cluster]\n", 3, 14,
       "nodes[1].replica_of", "a [cluster] (line 5) has masters only"},
      {"Sentinel", "[[nodes]]\n[[clients]]\n[sentinel]\nenabled = true\n[cluster]\n", 4, 11,
       "sentinel.enabled", "Sentinel does not watch a Redis Cluster (line 5"},
      {"RedLock", "[[nodes]]\n[[clients]]\n[cluster]\n[protocol]\nkind = \"redlock\"\n", 5, 8,
       "protocol.kind", "'redlock' locks several independent masters"},
      {"MultiLock", "[cluster]\nenabled = true\n[[nodes]]\n[[clients]]\n[protocol]\n"
                    "kind = \"multilock\"\n", 6, 8, "protocol.kind", "(line 2)"},
  });
}

TEST_CASE("kinds newer than 3.13.6 default to version current and refuse v3.13.6",
          "[scenario][protocol]") {
  CHECK(LoadGood("[[nodes]]\n[[clients]]\n[protocol]\nkind = \"spinlock\"\n").protocol.version ==
        lockstep::history::ProtocolVersion::kCurrent);
  CHECK(LoadGood("[[nodes]]\n[[clients]]\n[protocol]\nkind = \"fencedlock\"\n").protocol.version ==
        lockstep::history::ProtocolVersion::kCurrent);
  CHECK(LoadGood("[[nodes]]\n[[clients]]\n[protocol]\nkind = \"rlock\"\n").protocol.version ==
        lockstep::history::ProtocolVersion::k3136);
  CheckBadCases({
      {"spin lock in 3.13.6",
       "[[nodes]]\n[[clients]]\n[protocol]\nkind = \"spinlock\"\nversion = \"v3.13.6\"\n", 5, 11,
       "protocol.version",
       "'spinlock' exists only as \"current\" (Redisson added it in 3.15.0); write version = "
       "\"current\" or leave version out"},
  });
}

TEST_CASE("client roles: the latch's awaiting and counting-down threads", "[scenario][role]") {
  // Every kind takes the default role, worker; the latch also takes await and count_down.
  const Scenario plain = LoadGood("[[nodes]]\n[[clients]]\n");
  CHECK(plain.clients[0].role == ClientSpec::Role::kWorker);
  CHECK(LoadGood("[[nodes]]\n[[clients]]\nrole = \"worker\"\n").clients[0].role ==
        ClientSpec::Role::kWorker);
  const Scenario latch = LoadGood(
      "[[nodes]]\n"
      "[[clients]]\ncount = 2\nrole = \"await\"\n"
      "[[clients]]\nname = \"counter\"\nrole = \"count_down\"\n"
      "[[clients]]\n"
      "[protocol]\nkind = \"countdownlatch\"\npermits = 2\n");
  REQUIRE(latch.clients.size() == 4);
  CHECK(latch.clients[0].role == ClientSpec::Role::kAwait);
  CHECK(latch.clients[1].role == ClientSpec::Role::kAwait);  // A count group shares its role.
  CHECK(latch.clients[2].name == "counter");
  CHECK(latch.clients[2].role == ClientSpec::Role::kCountDown);
  CHECK(latch.clients[3].role == ClientSpec::Role::kWorker);
  // The semaphore takes its permit-changing operations as roles.
  const Scenario semaphore = LoadGood(
      "[[nodes]]\n"
      "[[clients]]\nrole = \"add_permits\"\n"
      "[[clients]]\nrole = \"reduce_permits\"\n"
      "[[clients]]\nrole = \"try_set_permits\"\n"
      "[[clients]]\nrole = \"drain_permits\"\n"
      "[[clients]]\n"
      "[protocol]\nkind = \"semaphore\"\npermits = 2\n");
  REQUIRE(semaphore.clients.size() == 5);
  CHECK(semaphore.clients[0].role == ClientSpec::Role::kAddPermits);
  CHECK(semaphore.clients[1].role == ClientSpec::Role::kReducePermits);
  CHECK(semaphore.clients[2].role == ClientSpec::Role::kTrySetPermits);
  CHECK(semaphore.clients[3].role == ClientSpec::Role::kDrainPermits);
  CHECK(semaphore.clients[4].role == ClientSpec::Role::kWorker);

  CheckBadCases({
      {"an unknown role", "[[nodes]]\n[[clients]]\nrole = \"counter\"\n", 3, 8, "clients[0].role",
       "unknown client role 'counter'; known client roles: worker, await, count_down, "
       "add_permits, reduce_permits, try_set_permits, drain_permits"},
      {"a misspelt role", "[[nodes]]\n[[clients]]\nrole = \"countdown\"\n", 3, 8,
       "clients[0].role", "did you mean 'count_down'?"},
      {"a role that is not a string", "[[nodes]]\n[[clients]]\nrole = 1\n", 3, 8,
       "clients[0].role", "must be a string"},
      {"await on the default kind", "[[nodes]]\n[[clients]]\nrole = \"await\"\n", 3, 8,
       "clients[0].role",
       "role 'await' is taken by protocol kind countdownlatch only (await, count_down), and "
       "protocol.kind is 'rlock' (the default); every kind takes role = \"worker\", the default; "
       "remove the key"},
      {"count_down on a semaphore",
       "[[nodes]]\n[[clients]]\n[[clients]]\nrole = \"count_down\"\n[protocol]\n"
       "kind = \"semaphore\"\n",
       4, 8, "clients[1].role", "protocol.kind is 'semaphore' (line 6)"},
      {"add_permits on a latch",
       "[[nodes]]\n[[clients]]\nrole = \"add_permits\"\n[protocol]\nkind = \"countdownlatch\"\n", 3,
       8, "clients[0].role",
       "role 'add_permits' is taken by protocol kind semaphore only (add_permits, reduce_permits, "
       "try_set_permits, drain_permits), and protocol.kind is 'countdownlatch' (line 5)"},
      {"the role is checked once everything else is right",
       "[[nodes]]\n[[clients]]\nrole = \"await\"\n[workload]\nstagger_ms = -1\n", 5, 14,
       "workload.stagger_ms", "must not be negative"},
  });
}

// What a hostile or mistaken file could use to crash the loader or the run, or to slip
// past it, is refused where it is written, with the limit (model/limits.h) in the message.
TEST_CASE("hostile values are refused with their position and the limit", "[scenario][errors]") {
  std::string dotted = "a";
  for (int i = 0; i < 100'000; ++i) dotted += ".a";
  std::string header = "[";
  for (int i = 0; i < 100'000; ++i) header += "a.";
  header += "a]\n";
  const std::string arrays = "x = " + std::string(100'000, '[') + std::string(100'000, ']') + "\n";
  for (const std::string& text : {dotted + " = 1\n", header, arrays}) {
    ScenarioError error;
    REQUIRE_FALSE(LoadScenarioString(text, "deep.toml", &error).has_value());
    CHECK(error.line == 1);
    CHECK(error.column > 1);
    CHECK_THAT(error.message, Catch::Contains("nested more than 32 levels deep"));
  }
  CheckBadCases({
      {"watchdog of 1 ms", "[[nodes]]\n[[clients]]\n[protocol]\nwatchdog_timeout_ms = 1\n", 4, 23,
       "protocol.watchdog_timeout_ms", "must be at least 3"},
      {"timeout below a microsecond", "[[nodes]]\n[[clients]]\n[protocol]\ntimeout_ms = 0.0001\n",
       4, 14, "protocol.timeout_ms", "rounds to 0 microseconds"},
      {"a run of 31 years", "duration_ms = 1000000000000\n[[nodes]]\n[[clients]]\n", 1, 15,
       "duration_ms", "must be at most 86400000 (one simulated day)"},
      {"a duration that rounds to 0", "duration_ms = 1e-9\n[[nodes]]\n[[clients]]\n", 1, 15,
       "duration_ms", "rounds to 0 microseconds"},
      {"a jump that rounds to 0",
       "[[nodes]]\n[[clients]]\n[[faults]]\nkind = \"clock_jump\"\nat_ms = 1\ntargets = [\"n1\"]\n"
       "by_ms = 0.0001\n",
       7, 9, "faults[0].by_ms", "rounds to 0 microseconds"},
      {"an exponential mean below a microsecond",
       "[[nodes]]\n[[clients]]\n[gc]\nevery_ms = { dist = \"exponential\", mean = 0.0001 }\n", 4,
       43, "gc.every_ms.mean", "rounds to 0 microseconds"},
      {"NUL in the scenario's name", "name = \"n1\\u0000\"\n[[nodes]]\n[[clients]]\n", 1, 8, "name",
       "'n1\\u{0000}' is not a valid scenario name"},
      {"a name that leaves the output folder", "name = \"../x\"\n[[nodes]]\n[[clients]]\n", 1, 8,
       "name", "it names the output folder"},
      {"a zero-width space in a node's name", "[[nodes]]\nname = \"n\\u200b1\"\n[[clients]]\n", 2, 8,
       "nodes[0].name", "'n\\u{200B}1' is not a valid name"},
      {"a direction mark in the lock's name",
       "[[nodes]]\n[[clients]]\n[protocol]\nlock_name = \"a\\u202eb\"\n", 4, 13,
       "protocol.lock_name", "holds U+202E, an invisible format character"},
      {"a line break in the description", "description = \"a\\nb\"\n[[nodes]]\n[[clients]]\n", 1, 15,
       "description", "holds U+000A, a control character"},
      // The whole class, not a list of the usual suspects.
      {"a line separator in the lock's name",
       "[[nodes]]\n[[clients]]\n[protocol]\nlock_name = \"a\\u2028b\"\n", 4, 13,
       "protocol.lock_name", "holds U+2028, a line or paragraph separator"},
      {"a paragraph separator in the description",
       "description = \"a\\u2029b\"\n[[nodes]]\n[[clients]]\n", 1, 15, "description",
       "holds U+2029, a line or paragraph separator"},
      {"an Arabic letter mark in the lock's name",
       "[[nodes]]\n[[clients]]\n[protocol]\nlock_name = \"a\\u061cb\"\n", 4, 13,
       "protocol.lock_name", "holds U+061C, an invisible format character"},
      {"a Mongolian vowel separator in the description",
       "description = \"a\\u180eb\"\n[[nodes]]\n[[clients]]\n", 1, 15, "description",
       "holds U+180E, an invisible format character"},
      {"a variation selector in the lock's name",
       "[[nodes]]\n[[clients]]\n[protocol]\nlock_name = \"a\\ufe0fb\"\n", 4, 13,
       "protocol.lock_name", "holds U+FE0F, an invisible format character"},
      {"a tag character in the description",
       "description = \"a\\U000E0041b\"\n[[nodes]]\n[[clients]]\n", 1, 15, "description",
       "holds U+E0041, an invisible format character"},
      {"a device as a script", "[[nodes]]\n[[clients]]\n[protocol]\nscripts.unlock = \"/dev/zero\"\n",
       4, 18, "protocol.scripts.unlock", "/dev/zero is not a regular file"},
      {"/proc/self/mem as a script",
       "[[nodes]]\n[[clients]]\n[protocol]\nscripts.unlock = \"/proc/self/mem\"\n", 4, 18,
       "protocol.scripts.unlock", "cannot read /proc/self/mem"},
  });
  const std::string long_description =
      "description = \"" + std::string(1025, 'x') + "\"\n[[nodes]]\n[[clients]]\n";
  ScenarioError error;
  REQUIRE_FALSE(LoadScenarioString(long_description, "inline.toml", &error).has_value());
  CHECK(error.key == "description");
  CHECK_THAT(error.message, Catch::Contains("is 1025 bytes long; at most 1024"));
}

TEST_CASE("the nesting scan skips strings and comments and lets real files through",
          "[scenario]") {
  // Brackets and dots inside strings and comments are not nesting.
  const Scenario s = LoadGood(
      "description = \"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[ a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q.r.s.t.u.v.w.x.y.z.a.b.c.d.e.f.g\"\n"
      "# {{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\n"
      "[[nodes]]\n[[clients]]\n"
      "[network]\nlinks = { \"c1->n1\" = { dist = \"uniform\", min = 0.1, max = 0.5 } }\n");
  CHECK(s.network.link_latency_us.size() == 1);
  // Every library scenario loads (they nest about 5 deep).
  for (const auto& entry : fs::directory_iterator(RepoRoot() / "scenarios")) {
    if (entry.path().extension() != ".toml") continue;
    ScenarioError error;
    INFO(entry.path());
    CHECK(lockstep::LoadScenarioFile(entry.path().string(), &error).has_value());
  }
}

TEST_CASE("an override that does not compile is refused with Redis's message", "[scenario]") {
  const fs::path dir = fs::temp_directory_path() / "lockstep-model-test-not-lua";
  fs::create_directories(dir);
  {
    std::ofstream(dir / "not-lua.lua") << "this is not Lua\n";
    std::ofstream(dir / "ok.lua") << "return redis.call('get', KEYS[1])\n";
  }
  const std::string file = (dir / "s.toml").string();
  ScenarioError error;
  REQUIRE_FALSE(LoadScenarioString(
                    "[[nodes]]\n[[clients]]\n[protocol]\nscripts.unlock = \"not-lua.lua\"\n", file,
                    &error)
                    .has_value());
  CHECK(error.line == 4);
  CHECK(error.key == "protocol.scripts.unlock");
  CHECK_THAT(error.message,
             Catch::Contains("not-lua.lua does not compile: ERR Error compiling script (new "
                             "function): user_script:1: syntax error near 'is'"));
  const Scenario s = [&] {
    ScenarioError e;
    auto loaded = LoadScenarioString(
        "[[nodes]]\n[[clients]]\n[protocol]\nscripts.unlock = \"ok.lua\"\n", file, &e);
    INFO(e.ToString());
    REQUIRE(loaded.has_value());
    return *loaded;
  }();
  CHECK(s.protocol.script_files.at("unlock") == (dir / "ok.lua").string());
  fs::remove_all(dir);
}

TEST_CASE("maxmemory_mb: a default per node, bounds refused with the key", "[scenario]") {
  const Scenario s = LoadGood("[[nodes]]\n[[nodes]]\nmaxmemory_mb = 8\n[[clients]]\n");
  REQUIRE(s.nodes.size() == 2);
  CHECK(s.nodes[0].maxmemory_mb == NodeSpec::kMaxMemoryMbDefault);
  CHECK(s.nodes[0].maxmemory_mb == 256);
  CHECK(s.nodes[1].maxmemory_mb == 8);
  CheckBadCases({
      {"zero", "[[nodes]]\nmaxmemory_mb = 0\n[[clients]]\n", 2, 16, "nodes[0].maxmemory_mb",
       "must be between 1 and 1024, got 0"},
      {"beyond the bound", "[[nodes]]\nmaxmemory_mb = 4096\n[[clients]]\n", 2, 16,
       "nodes[0].maxmemory_mb", "must be between 1 and 1024, got 4096"},
      {"not an integer", "[[nodes]]\nmaxmemory_mb = \"1gb\"\n[[clients]]\n", 2, 16,
       "nodes[0].maxmemory_mb", "must be an integer, got string"},
  });
}
