// Short live runs of an RLock scenario on a real redis-server: the history the live driver
// records reads through the same checkers as a simulated run (mutual exclusion holds), with
// invoke/ok pairs, an exec for every command, lease events from the probe transactions, an
// expiry seen through keyspace notifications (or, on servers without them, through a probe at
// the lock key's PTTL), and client faults (crash and restart, pause, [gc]) made by the shared
// fault schedule (drive/faults.h) on the driver's client primitives.
#include "live/driver.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <chrono>

#include "check/check.h"
#include "core/cluster.h"
#include "drive/faults.h"
#include "live/fault_proxy.h"
#include "live/redis_client.h"
#include "live/redis_process.h"
#include "model/scenario_scale.h"
#include "model/scenario_toml.h"
#include "pipeline/pipeline.h"

namespace lockstep::live {
namespace {

using history::EventType;
namespace names = history::names;

// The servers' ports of the running RunLive, by node index (for a test's faults).
std::vector<int> ports_;

// The fault schedule's target on a LiveRun's clients, as the replay's target is for its
// clients: the schedule records each fault, the run's primitives act. RunLive gives one to
// every run (its [gc] pauses go through it).
class ClientFaults final : public drive::FaultTarget {
 public:
  LiveRun* run = nullptr;

  void After(int64_t delay_us, std::function<void()> work) override {
    run->loop().After(delay_us, std::move(work));
  }
  void Record(history::Event& e) override { run->Record(e); }
  history::Name Intern(std::string_view name) override { return run->Intern(name); }
  bool IsNode(const std::string&) const override { return false; }
  bool Down(const std::string& name) const override { return run->ClientDown(name); }
  void Crash(const std::string& name) override { CHECK(run->CrashClient(name)); }
  void Restart(const std::string& name) override { CHECK(run->RestartClient(name)); }
  bool Pause(const std::string& name) override { return run->PauseClient(name); }
  void Resume(const std::string& name) override { CHECK(run->ResumeClient(name)); }
  // Node and link faults are the replay's (live/replay.cpp), not these tests'.
  void Failover(const std::string&) override { FAIL("no failover here"); }
  uint64_t OpenPartition(const FaultSpec&) override { FAIL("no partition here"); return 0; }
  void ClosePartition(uint64_t) override {}
  uint64_t OpenNetworkWindow(const FaultSpec&) override { FAIL("no network window here"); return 0; }
  void CloseNetworkWindow(uint64_t) override {}
  void Switch(lockstep::history::FaultKind, const std::string&, bool) override {
    FAIL("no switched faults here");
  }
};

// The client fault target of the running RunLive (for a test's faults).
ClientFaults* client_faults_ = nullptr;

// A fault of kind `kind` on client `client` for duration_us, as a scenario's [[faults]] entry.
FaultSpec ClientFault(FaultSpec::Kind kind, const std::string& client, int64_t duration_us) {
  FaultSpec f;
  f.kind = kind;
  f.targets = {client};
  f.duration_us = duration_us;
  return f;
}

struct LiveResult {
  check::Verdict streamed;
  check::Verdict from_file;
  history::History history;
  std::map<std::string, int> counts;  // "invoke acquire", "ok release", "lease acquired", "exec".
  std::vector<std::string> keys_left;  // On the servers after the run.
  uint64_t late = 0;  // Transaction results recorded after a later number (LiveRun::late_results).
  std::string program_error;  // LiveRun::program_error().
};

Scenario Load(const std::string& toml) {
  ScenarioError error;
  auto s = LoadScenarioString(toml, "test.toml", &error);
  INFO(error.ToString());
  REQUIRE(s.has_value());
  return *s;
}

// Runs `scenario` live on one fresh redis-server (n1) through the run's pipeline: the checkers
// and a history file as sinks, as `lockstep run` has them. `faults` runs after the run began.
// Redis servers for a scenario's nodes, started with keyspace notifications of expiries.
std::vector<std::unique_ptr<RedisProcess>> StartServers(size_t count, bool cluster = false,
                                                        bool notify_expiry = true) {
  RedisProcess::Options options;
  if (notify_expiry) options.extra_args = {"--notify-keyspace-events", "Ex"};
  options.cluster = cluster;
  std::vector<std::unique_ptr<RedisProcess>> servers;
  for (size_t i = 0; i < count; ++i) servers.push_back(RedisProcess::StartOrThrow(options));
  return servers;
}

// Forms one cluster of `servers` with the simulator's slot split, and waits until every node
// says cluster_state:ok.
void FormCluster(const std::vector<std::unique_ptr<RedisProcess>>& servers) {
  const std::vector<SlotRange> ranges = EvenSlotRanges(static_cast<int>(servers.size()));
  for (size_t i = 0; i < servers.size(); ++i) {
    RedisClient c("127.0.0.1", servers[i]->port());
    REQUIRE(c.Command({"CLUSTER", "ADDSLOTSRANGE", std::to_string(ranges[i].first),
                       std::to_string(ranges[i].last)}) == Reply::Ok());
    if (i > 0) {
      REQUIRE(c.Command({"CLUSTER", "MEET", "127.0.0.1", std::to_string(servers[0]->port()),
                         std::to_string(servers[0]->cluster_bus_port())}) == Reply::Ok());
    }
  }
  const int64_t deadline = EventLoop::NowUs() + 20'000'000;
  for (const auto& server : servers) {
    RedisClient c("127.0.0.1", server->port());
    while (c.Command({"CLUSTER", "INFO"}).str.find("cluster_state:ok") == std::string::npos) {
      REQUIRE(EventLoop::NowUs() < deadline);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
}

// `configure` changes the driver's options; without it the servers notify expiries.
LiveResult RunLive(const Scenario& scenario,
                   const std::function<void(LiveRun&, history::Recorder&)>& faults = nullptr,
                   bool cluster = false,
                   const std::function<void(LiveOptions&, const std::vector<int>& ports)>& configure =
                       nullptr) {
  auto servers = StartServers(scenario.nodes.size(), cluster, /*notify_expiry=*/!configure);
  if (cluster) FormCluster(servers);
  for (size_t i = 0; i < servers.size(); ++i) {
    const std::string& master = scenario.nodes[i].replica_of;
    if (master.empty()) continue;
    size_t m = 0;
    while (scenario.nodes[m].name != master) ++m;
    RedisClient c("127.0.0.1", servers[i]->port());
    REQUIRE(c.Command({"REPLICAOF", "127.0.0.1", std::to_string(servers[m]->port())}) == Reply::Ok());
  }
  ports_.clear();
  for (const auto& server : servers) ports_.push_back(server->port());

  history::Recorder recorder;
  ClientFaults client_faults;
  client_faults_ = &client_faults;
  LiveOptions options;
  for (size_t i = 0; i < servers.size(); ++i) {
    options.nodes[scenario.nodes[i].name] = NodeAddress{"127.0.0.1", servers[i]->port()};
  }
  options.lua_dir = std::string(LOCKSTEP_SOURCE_DIR) + "/lua";
  options.faults = &client_faults;
  if (configure) configure(options, ports_);
  std::string error;
  auto run = LiveRun::Create(scenario, options, recorder, &error);
  INFO(error);
  REQUIRE(run != nullptr);
  client_faults.run = run.get();

  LiveResult result{check::Verdict{}, check::Verdict{}, history::History(recorder.shared_names()), {}, {}, 0, {}};
  recorder.AddSink(&result.history);
  if (faults) faults(*run, recorder);
  // The pipeline `lockstep run` uses: the checkers and the history file as sinks.
  PipelineOptions pipeline;
  pipeline.readers_thread = false;  // As `lockstep replay` runs a live pipeline.
  pipeline.history = history::HistoryFormat::kJsonl;
  pipeline.history_path =
      (std::filesystem::temp_directory_path() / ("lockstep-live-" + scenario.name + ".jsonl")).string();
  const std::string& path = pipeline.history_path;
  std::optional<PipelineResult> out = RunPipelineWith(
      recorder, scenario, pipeline,
      [&run](const std::function<bool()>& should_stop) {
        run->Run(should_stop);
        return DriveOutcome{run->commands_sent(), run->end_us(), run->interrupted()};
      },
      &error);
  REQUIRE(out.has_value());
  for (const auto& server : servers) {
    RedisClient c("127.0.0.1", server->port());
    for (const Reply& k : c.Command({"KEYS", "*"}).elements) result.keys_left.push_back(k.str);
  }
  result.late = run->late_results();
  result.program_error = run->program_error();
  CHECK(out->history_written);
  if (result.program_error.empty()) {  // A failed client program stops the run where it failed.
    CHECK_FALSE(out->interrupted);
    CHECK(out->end_us == scenario.duration_us);
  }
  result.streamed = out->verdict;
  auto from_file = check::CheckHistoryFile(path, CheckOptionsOf(scenario), &error);
  INFO(error);
  REQUIRE(from_file.has_value());
  result.from_file = *from_file;
  // LOCKSTEP_KEEP_LIVE_HISTORY=1 keeps the file, to look at a run (`lockstep report` reads it).
  if (std::getenv("LOCKSTEP_KEEP_LIVE_HISTORY") == nullptr) std::filesystem::remove(path);
  const history::History& h = result.history;
  for (const history::Event& e : h.events()) {
    std::string key = history::TypeName(e.type);
    if (e.type != EventType::kExec) key += " " + h.Str(e.op);
    ++result.counts[key];
  }
  client_faults_ = nullptr;
  return result;
}

bool Holds(const check::Verdict& v, std::string_view property) {
  const check::PropertyResult* r = v.Find(property);
  REQUIRE(r != nullptr);
  if (r->violated && !r->violations.empty()) UNSCOPED_INFO(r->violations.front().explanation);
  return !r->violated;
}

// Six threads contending for an RLock on one healthy node, for 25 s of scenario time: run
// at a tenth of its times (model/scenario_scale.h), 2.5 s of real time.
constexpr const char* kRlock = R"(
name = "live-rlock"
seed = 3
duration_ms = 25000

[[nodes]]
name = "n1"

[[clients]]
count = 3
threads = 2

[protocol]
kind = "rlock"
version = "v3.13.6"

[workload]
mode = "trylock"
wait_ms = 10000
critical_ms = { dist = "uniform", min = 50, max = 300 }
think_ms = { dist = "uniform", min = 50, max = 400 }
)";

Scenario LoadScaled(const char* toml) {
  Scenario s = ScaleTimes(Load(toml), 0.1);
  REQUIRE(s.duration_us == 2'500'000);
  return s;
}

// Does `action` (a fault) once, the first time `client` holds the lock after 300 ms.
class OnFirstHold : public history::EventSink {
 public:
  OnFirstHold(std::string client, std::function<void(LiveRun&)> action)
      : client_name_(std::move(client)), action_(std::move(action)) {}
  void Attach(LiveRun& run, history::Recorder& recorder) {
    run_ = &run;
    client_ = recorder.names().Intern(client_name_);
    recorder.AddSink(this);
  }
  void OnEvent(const history::Event& e) override {
    if (done_ || e.process != client_ || e.type != EventType::kOk || e.op != names::kAcquire) return;
    if (e.t_us < 300'000) return;
    done_ = true;
    // Not inside the recorder's call: as the loop's own work, at once.
    run_->loop().After(0, [this] { action_(*run_); });
  }
  bool done_ = false;

 private:
  std::string client_name_;
  std::function<void(LiveRun&)> action_;
  LiveRun* run_ = nullptr;
  history::Name client_ = names::kNone;
};

// Two single-thread clients, critical sections of 100 ms and a lease of 300 ms: a holder that
// stops for long enough outlives its lease.
Scenario ShortLeases() {
  Scenario scenario = LoadScaled(kRlock);
  scenario.workload.lease_us = 300'000;  // An explicit lease: no watchdog keeps it alive.
  scenario.workload.critical_us = Distribution::Fixed(100'000);
  scenario.clients.resize(2);
  for (ClientSpec& c : scenario.clients) c.threads = 1;
  return scenario;
}

TEST_CASE("LiveRun: a short RLock run on redis-server holds mutual exclusion") {
  const Scenario scenario = LoadScaled(kRlock);
  LiveResult r = RunLive(scenario);
  for (const auto& [what, count] : r.counts) UNSCOPED_INFO(what << ": " << count);
  CHECK(Holds(r.streamed, "mutual_exclusion"));
  CHECK(Holds(r.streamed, "resource_exclusion"));
  CHECK(Holds(r.streamed, "lease_safety"));
  CHECK(Holds(r.from_file, "mutual_exclusion"));
  // Contention: many acquisitions, each with its release, each seen on the node.
  CHECK(r.counts["invoke acquire"] >= 20);
  CHECK(r.counts["ok acquire"] >= 20);
  CHECK(r.counts["ok release"] >= 20);
  CHECK(r.counts["invoke release"] - r.counts["ok release"] <= 6);  // In flight at the end.
  CHECK(r.counts["lease acquired"] >= r.counts["ok acquire"] - 6);
  CHECK(r.counts["lease released"] >= r.counts["ok release"] - 6);
  CHECK(r.counts["lease expired"] == 0);
  CHECK(r.counts["exec"] >= r.counts["invoke acquire"] + r.counts["invoke release"]);
  CHECK(r.counts["note client"] == 3);
  // Every lease event is of the lock on n1, and acquired/released alternate on the one master.
  history::Name last = names::kNone;
  for (const history::Event& e : r.history.events()) {
    if (e.type != EventType::kLease) continue;
    CHECK(r.history.Str(e.process) == "n1");
    CHECK(e.op != last);
    last = e.op;
  }
}

TEST_CASE("LiveRun: a crashed holder's lease expires on the server, and the client restarts anew") {
  Scenario scenario = ShortLeases();
  scenario.name = "live-rlock-crash";
  // Crashes c1 the first time it holds the lock after 300 ms; restarts it 500 ms later.
  OnFirstHold crash("c1", [](LiveRun&) {
    drive::ApplyFault(ClientFault(FaultSpec::Kind::kCrash, "c1", 500'000), *client_faults_);
  });
  LiveResult r = RunLive(scenario, [&crash](LiveRun& run, history::Recorder& recorder) {
    crash.Attach(run, recorder);
  });
  REQUIRE(crash.done_);
  for (const auto& [what, count] : r.counts) UNSCOPED_INFO(what << ": " << count);
  CHECK(r.counts["fault crash"] == 1);
  CHECK(r.counts["fault restart"] == 1);
  CHECK(r.counts["note client"] == 3);  // Two starts and one restart.
  // Its lease ran out on the server: seen through the expiry notification's probe.
  CHECK(r.counts["lease expired"] >= 1);
  CHECK(Holds(r.streamed, "lease_safety"));
  CHECK(Holds(r.streamed, "mutual_exclusion"));
  CHECK(Holds(r.from_file, "mutual_exclusion"));
  // The restarted c1 has a new UUID and takes the lock again.
  std::vector<std::string> c1_uuids;
  bool c1_after_restart = false;
  bool restarted = false;
  for (const history::Event& e : r.history.events()) {
    if (r.history.Str(e.process) != "c1") continue;
    if (e.type == EventType::kNote && e.op == names::kClient) c1_uuids.push_back(r.history.DetailOf(e));
    if (e.type == EventType::kFault && e.op == names::kRestart) restarted = true;
    if (restarted && e.type == EventType::kOk && e.op == names::kAcquire) c1_after_restart = true;
  }
  REQUIRE(c1_uuids.size() == 2);
  CHECK(c1_uuids[0] != c1_uuids[1]);
  CHECK(c1_after_restart);
}

}  // namespace
}  // namespace lockstep::live

namespace lockstep::live {
namespace {

TEST_CASE("LiveRun: a holder paused past its lease breaks mutual exclusion on a real server") {
  Scenario scenario = ShortLeases();
  scenario.name = "live-rlock-pause";
  // c1 stops for 800 ms while it holds the lock: its 300 ms lease runs out on the server, c2
  // takes the lock, and c1 goes on in its critical section when it resumes.
  OnFirstHold pause("c1", [](LiveRun&) {
    drive::ApplyFault(ClientFault(FaultSpec::Kind::kPause, "c1", 800'000), *client_faults_);
  });
  LiveResult r = RunLive(scenario, [&pause](LiveRun& run, history::Recorder& recorder) {
    pause.Attach(run, recorder);
  });
  REQUIRE(pause.done_);
  for (const auto& [what, count] : r.counts) UNSCOPED_INFO(what << ": " << count);
  CHECK(r.counts["fault pause"] == 1);
  CHECK(r.counts["fault resume"] == 1);
  // c1's hold ends on the server without its release: seen as an expiry when the driver's
  // look at the key at its expiry comes first, or as c2 in c1's place when c2's retry (timed
  // to the same moment) does, as it can on a loaded machine.
  CHECK(r.counts["lease expired"] + r.counts["lease owners"] >= 1);
  CHECK_FALSE(Holds(r.streamed, "mutual_exclusion"));
  CHECK_FALSE(Holds(r.streamed, "lease_safety"));
  CHECK_FALSE(Holds(r.from_file, "mutual_exclusion"));
  // Nothing reached c1 while it was paused: its first event after the pause is the resume.
  bool paused = false;
  for (const history::Event& e : r.history.events()) {
    if (r.history.Str(e.process) != "c1") continue;
    if (e.type == EventType::kFault && e.op == names::kPause) {
      paused = true;
      continue;
    }
    if (paused) {
      CHECK(e.type == EventType::kFault);
      CHECK(e.op == names::kResume);
      break;
    }
  }
}

TEST_CASE("LiveRun: a crash ends a client's pause, so no resume is recorded for it") {
  Scenario scenario = ShortLeases();
  scenario.name = "live-rlock-crash-in-pause";
  // c1 stops for 800 ms while it holds the lock; 200 ms into the pause it crashes, and it
  // restarts 300 ms later, before the pause would have ended.
  OnFirstHold pause("c1", [](LiveRun& run) {
    drive::ApplyFault(ClientFault(FaultSpec::Kind::kPause, "c1", 800'000), *client_faults_);
    run.loop().After(200'000, [] {
      drive::ApplyFault(ClientFault(FaultSpec::Kind::kCrash, "c1", 300'000), *client_faults_);
    });
  });
  LiveResult r = RunLive(scenario, [&pause](LiveRun& run, history::Recorder& recorder) {
    pause.Attach(run, recorder);
  });
  REQUIRE(pause.done_);
  for (const auto& [what, count] : r.counts) UNSCOPED_INFO(what << ": " << count);
  CHECK(r.counts["fault pause"] == 1);
  CHECK(r.counts["fault crash"] == 1);
  CHECK(r.counts["fault restart"] == 1);
  // The restarted c1 is a new process that was never paused.
  CHECK(r.counts["fault resume"] == 0);
  CHECK(Holds(r.streamed, "mutual_exclusion"));
  // Nothing reached c1 between the pause and the crash; after the restart it works again.
  std::vector<std::string> c1_faults;
  bool c1_after_restart = false;
  for (const history::Event& e : r.history.events()) {
    if (r.history.Str(e.process) != "c1") continue;
    if (e.type == EventType::kFault) {
      c1_faults.push_back(r.history.Str(e.op));
    } else if (c1_faults.size() == 1) {
      FAIL_CHECK("c1 did something while paused: " << r.history.Str(e.op));
    }
    if (c1_faults.size() == 3 && e.type == EventType::kOk && e.op == names::kAcquire) {
      c1_after_restart = true;
    }
  }
  CHECK(c1_faults == std::vector<std::string>{"pause", "crash", "restart"});
  CHECK(c1_after_restart);
}

TEST_CASE("LiveRun: [gc] pauses go through the fault target, each recorded with its resume") {
  Scenario scenario = LoadScaled(kRlock);
  scenario.name = "live-rlock-gc";
  scenario.gc.enabled = true;
  scenario.gc.every_us = Distribution::Fixed(400'000);
  scenario.gc.pause_us = Distribution::Fixed(50'000);
  LiveResult r = RunLive(scenario);
  for (const auto& [what, count] : r.counts) UNSCOPED_INFO(what << ": " << count);
  // Three clients, each paused every 400 ms over 2.5 s.
  CHECK(r.counts["fault pause"] >= 12);
  CHECK(r.counts["fault resume"] >= r.counts["fault pause"] - 3);  // Paused at the end.
  CHECK(r.counts["fault resume"] <= r.counts["fault pause"]);
  CHECK(Holds(r.streamed, "mutual_exclusion"));
  std::map<std::string, bool> paused;  // By client.
  for (const history::Event& e : r.history.events()) {
    if (e.type != EventType::kFault) continue;
    const std::string client = r.history.Str(e.process);
    if (e.op == names::kPause) {
      CHECK(r.history.DetailOf(e) == "GC pause for 50ms");
      CHECK_FALSE(paused[client]);
      paused[client] = true;
    } else if (e.op == names::kResume) {
      CHECK(paused[client]);
      paused[client] = false;
    }
  }
}

}  // namespace
}  // namespace lockstep::live

namespace lockstep::live {
namespace {

TEST_CASE("LiveRun: an RLock on a three-master Redis Cluster, routed by slot") {
  ScenarioError error;
  auto loaded = LoadScenarioFile(std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/cluster-rlock-3-masters.toml", &error);
  INFO(error.ToString());
  REQUIRE(loaded.has_value());
  const Scenario scenario = ScaleTimes(*loaded, 0.05);  // 60 s of scenario time in 3 s.
  LiveResult r = RunLive(scenario, nullptr, /*cluster=*/true);
  for (const auto& [what, count] : r.counts) UNSCOPED_INFO(what << ": " << count);
  CHECK(Holds(r.streamed, "mutual_exclusion"));
  CHECK(Holds(r.streamed, "lease_safety"));
  CHECK(Holds(r.from_file, "mutual_exclusion"));
  CHECK(r.counts["ok acquire"] >= 10);
  CHECK(r.counts["lease acquired"] >= r.counts["ok acquire"] - 8);
  CHECK(r.counts["note cluster"] == 1);
  // The lock's slot (14370) is n3's: every command of the lock ran there.
  for (const history::Event& e : r.history.events()) {
    if (e.type == EventType::kExec || e.type == EventType::kLease) CHECK(r.history.Str(e.process) == "n3");
  }
}

}  // namespace
}  // namespace lockstep::live

namespace lockstep::live {
namespace {

// `client`'s command connections (its sessions' too) go to 127.0.0.1:port, a proxy's link; every
// other connection goes straight to its node.
void RouteCommandsVia(LiveOptions& o, const std::string& client, int port) {
  const std::map<std::string, NodeAddress> direct = o.nodes;
  o.client_address = [direct, client, port](const std::string& c, const std::string& node, bool pubsub) {
    if (c == client && !pubsub) return NodeAddress{"127.0.0.1", port};
    return direct.at(node);
  };
}

// A result that arrives after a later number of its node was recorded (on a loaded machine, a
// reply later than the reorder wait) carries a key state that the later one superseded: it
// must not move the lease back. Client c1's command connection goes through a fault proxy that
// holds every reply 30 ms, past the driver's 20 ms wait, while nine other clients keep the node
// busy: c1's results come late, deterministically (with or without the sanitizers); the lease
// events still follow the server's order.
TEST_CASE("LiveRun: late transaction results do not move the lease back") {
  ScenarioError error;
  auto loaded = LoadScenarioFile(std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/contention-10.toml", &error);
  INFO(error.ToString());
  REQUIRE(loaded.has_value());
  Scenario scenario = ScaleTimes(*loaded, 0.05);
  scenario.duration_us = 2'000'000;
  FaultProxy proxy(/*seed=*/7);
  LiveResult r = RunLive(scenario, nullptr, false, [&proxy](LiveOptions& o, const std::vector<int>& ports) {
    std::string proxy_error;
    const FaultProxy::Endpoint slow =
        proxy.AddLink("c1->n1", "127.0.0.1", ports[0], ProxyLinkKind::kCommands, &proxy_error);
    INFO(proxy_error);
    REQUIRE(slow.link >= 0);
    proxy.SetExtraLatency(slow.link, ProxyDirection::kToClient, 30'000);
    REQUIRE(o.reorder_wait_us < 30'000);
    RouteCommandsVia(o, "c1", slow.port);
    o.watch_expiry = false;  // RunLive starts servers without notifications when configured.
    o.probe_at_expiry = true;
  });
  UNSCOPED_INFO("late results: " << r.late);
  for (const auto& [what, count] : r.counts) UNSCOPED_INFO(what << ": " << count);
  CHECK(r.late > 0);
  CHECK(Holds(r.streamed, "mutual_exclusion"));
  CHECK(Holds(r.streamed, "lease_safety"));
  CHECK(Holds(r.from_file, "lease_safety"));
}

TEST_CASE("LiveRun: a replica promoted by REPLICAOF NO ONE takes over once clients rediscover it") {
  Scenario scenario = LoadScaled(kRlock);
  scenario.name = "live-rlock-failover";
  NodeSpec replica;
  replica.name = "n2";
  replica.replica_of = "n1";
  scenario.nodes.push_back(replica);
  LiveResult r = RunLive(scenario, [](LiveRun& run, history::Recorder&) {
    run.AtTrueTime(1'000'000, [&run] {
      RedisClient n2("127.0.0.1", ports_.at(1));
      CHECK(n2.Command({"REPLICAOF", "NO", "ONE"}) == Reply::Ok());
      CHECK(run.PromoteNode("n2", "n1"));
      run.AtTrueTime(1'100'000, [&run] { CHECK(run.Rediscover("n1", "n2")); });
    });
  });
  for (const auto& [what, count] : r.counts) UNSCOPED_INFO(what << ": " << count);
  CHECK(r.counts["note rediscover"] == 1);
  int n2_execs = 0, n2_leases = 0, n1_execs_after = 0, acquired_after = 0;
  bool rediscovered = false;
  for (const history::Event& e : r.history.events()) {
    if (e.type == EventType::kNote && e.op == names::kRediscover) rediscovered = true;
    const std::string process = r.history.Str(e.process);
    if (e.type == EventType::kExec && process == "n2") ++n2_execs;
    if (e.type == EventType::kLease && process == "n2") ++n2_leases;
    if (rediscovered && e.type == EventType::kExec && process == "n1") ++n1_execs_after;
    if (rediscovered && e.type == EventType::kOk && e.op == names::kAcquire) ++acquired_after;
  }
  CHECK(n2_execs >= 10);
  CHECK(n2_leases >= 2);
  CHECK(acquired_after >= 5);
  CHECK(n1_execs_after <= 12);  // Only replies already on their way from n1.
}

}  // namespace
}  // namespace lockstep::live

namespace lockstep::live {
namespace {

// The user's servers (--redis): no keyspace notifications, every key under the run's prefix.
// One client holds the lock past its 300 ms lease (a 1 s critical section) and nobody else
// touches the key: the probe armed at the key's PTTL records the expiry when it happens, not
// when the holder's unlock finds the key gone 700 ms later; and the server holds no key
// outside the prefix afterwards.
TEST_CASE("LiveRun: on servers without expiry notifications, a probe at the PTTL sees the lease expire") {
  Scenario scenario = LoadScaled(kRlock);
  scenario.name = "live-rlock-probe-expiry";
  scenario.workload.lease_us = 300'000;
  scenario.workload.critical_us = Distribution::Fixed(1'000'000);
  scenario.workload.think_us = Distribution::Fixed(200'000);
  scenario.clients.resize(1);
  scenario.clients[0].threads = 1;
  const std::string prefix = "lockstep:3:driver-test:";
  LiveResult r = RunLive(scenario, nullptr, false, [&](LiveOptions& o, const std::vector<int>&) {
    o.watch_expiry = false;
    o.probe_at_expiry = true;
    o.keyspace = std::make_shared<const RunKeyspace>(prefix);
  });
  for (const auto& [what, count] : r.counts) UNSCOPED_INFO(what << ": " << count);
  REQUIRE(r.counts["lease expired"] >= 1);
  CHECK_FALSE(Holds(r.streamed, "lease_safety"));  // c1 used the resource without a lease.
  const history::History& h = r.history;
  int64_t acquired_us = -1;
  bool checked = false;
  for (size_t i = 0; i < h.events().size() && !checked; ++i) {
    const history::Event& e = h.events()[i];
    if (e.type != EventType::kLease) continue;
    if (e.op == names::kAcquired) acquired_us = e.t_us;
    if (e.op != names::kExpired || acquired_us < 0) continue;
    INFO("expired " << (e.t_us - acquired_us) << " us after it was acquired");
    CHECK(e.t_us - acquired_us >= 290'000);
    CHECK(e.t_us - acquired_us <= 500'000);  // Not at the unlock, 1 s after the acquire.
    // Recorded by the driver's probe, not after a client's command.
    REQUIRE(i > 0);
    CHECK(h.events()[i - 1].type != EventType::kExec);
    checked = true;
  }
  CHECK(checked);
  // Every key the run left is under its prefix (the sequence key at least); the lock's own
  // name was never written.
  REQUIRE_FALSE(r.keys_left.empty());
  for (const std::string& k : r.keys_left) CHECK(k.rfind(prefix, 0) == 0);
}

}  // namespace
}  // namespace lockstep::live

namespace lockstep::live {
namespace {

// A client program whose threads take a lock with WATCH / GET / MULTI / SET / EXEC and wait for
// it in BLPOP on a list the release pushes to (scenarios/testdata/live/watch-blpop/): each
// thread's transactions and blocking pops go on a connection of its own. The program checks
// every reply and stops the run on a wrong one (a MULTI refused as nested, an EXEC holding
// another thread's commands, a BLPOP answered from another list, a reply that never came);
// thread 0 of each process blocks in BLPOP until thread 1 has released three times, which it
// could not do were its commands stuck behind that BLPOP; and the transactions' exec and lease
// events are recorded from the probe the driver queues in them, in the node's order.
Scenario WatchBlpop() {
  ScenarioError error;
  auto loaded = LoadScenarioFile(
      std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/testdata/live/watch-blpop.toml", &error);
  INFO(error.ToString());
  REQUIRE(loaded.has_value());
  return *loaded;
}

// What every run of watch-blpop shows: the program met no reply it did not expect (it would
// have stopped the run), the lock held, and its holders came and went.
void CheckWatchBlpopRan(const LiveResult& r) {
  for (const auto& [what, count] : r.counts) UNSCOPED_INFO(what << ": " << count);
  INFO(r.program_error);
  REQUIRE(r.program_error.empty());
  CHECK(Holds(r.streamed, "mutual_exclusion"));
  CHECK(Holds(r.streamed, "resource_exclusion"));
  CHECK(Holds(r.from_file, "mutual_exclusion"));
  CHECK(r.counts.at("ok acquire") >= 10);
  CHECK(r.counts.at("ok release") >= 10);
}

TEST_CASE("LiveRun: a client program's threads each have a connection of their own for WATCH, MULTI and BLPOP") {
  LiveResult r = RunLive(WatchBlpop());
  for (const auto& [what, count] : r.counts) UNSCOPED_INFO(what << ": " << count);
  INFO(r.program_error);
  REQUIRE(r.program_error.empty());
  CHECK(Holds(r.streamed, "mutual_exclusion"));
  CHECK(Holds(r.streamed, "resource_exclusion"));
  CHECK(Holds(r.streamed, "lease_safety"));
  CHECK(Holds(r.streamed, "reentrancy"));
  CHECK(Holds(r.from_file, "mutual_exclusion"));
  CHECK(r.counts["ok acquire"] >= 20);
  CHECK(r.counts["ok release"] >= 20);
  CHECK(r.counts["lease acquired"] >= r.counts["ok acquire"] - 2);
  CHECK(r.counts["lease released"] >= r.counts["ok release"] - 2);

  const history::History& h = r.history;
  std::string scratch;
  auto reply_of = [&h, &scratch](const history::Event& e) {
    return std::string(history::ReplyText(e, &scratch));
  };
  // By client: thread 1's ok releases before thread 0's first ok acquire, and thread 0's gate.
  std::map<std::string, int> releases_before_gate;
  std::map<std::string, bool> thread0_acquired;
  std::map<std::string, std::string> gate_reply;
  int queued_set_execs = 0;
  int exec_arrays = 0;
  int waits = 0;
  const std::vector<history::Event>& events = h.events();
  for (size_t i = 0; i < events.size(); ++i) {
    const history::Event& e = events[i];
    const std::string op = h.Str(e.op);
    if (e.type == EventType::kOk && e.thread == 1 && e.op == names::kRelease &&
        !thread0_acquired[h.Str(e.process)]) {
      ++releases_before_gate[h.Str(e.process)];
    }
    if (e.type == EventType::kOk && e.thread == 0 && e.op == names::kAcquire) {
      thread0_acquired[h.Str(e.process)] = true;
    }
    if (e.type == EventType::kExec) {
      const std::string reply = reply_of(e);
      INFO(h.Str(e.peer) << ".t" << e.thread << " " << op << " -> " << reply);
      // No command was refused: no MULTI inside another thread's MULTI, no EXEC without one.
      CHECK(reply.rfind('-', 0) != 0);
      if (op == "gate") gate_reply[h.Str(e.peer)] = reply;
      if (op == "wait") ++waits;
      if (op == "exec" && reply.rfind('[', 0) == 0) ++exec_arrays;
      if (op == "acquire") {
        // The SET of a transaction that ran, recorded from EXEC's reply (a +QUEUED is no exec),
        // after EXEC's own exec and right before the lease event the probe in it showed.
        CHECK(reply == "+OK");
        ++queued_set_execs;
        if (r.late > 0) continue;  // A late result records no lease change.
        REQUIRE(i > 0);
        CHECK(h.Str(events[i - 1].op) == "exec");
        REQUIRE(i + 1 < events.size());
        CHECK(events[i + 1].type == EventType::kLease);
        CHECK(events[i + 1].op == names::kAcquired);
      }
      if (op == "unlock") {
        CHECK(reply == "1");
        if (r.late > 0) continue;
        REQUIRE(i + 1 < events.size());
        CHECK(events[i + 1].type == EventType::kLease);
        CHECK(events[i + 1].op == names::kReleased);
      }
    }
  }
  CHECK(queued_set_execs >= r.counts["ok acquire"]);
  CHECK(exec_arrays >= r.counts["ok acquire"] + r.counts["ok release"]);
  CHECK(waits >= 1);  // Threads did wait in BLPOP for a release's signal.
  for (const std::string client : {"c1", "c2"}) {
    INFO(client);
    CHECK(thread0_acquired[client]);
    CHECK(releases_before_gate[client] >= 3);
    CHECK(gate_reply[client].find("go") != std::string::npos);
  }
}

// Does `action` once, the first time thread `thread` of `client` completes a release.
class OnFirstRelease : public history::EventSink {
 public:
  OnFirstRelease(std::string client, int thread, std::function<void(LiveRun&)> action)
      : client_name_(std::move(client)), thread_(thread), action_(std::move(action)) {}
  void Attach(LiveRun& run, history::Recorder& recorder) {
    run_ = &run;
    client_ = recorder.names().Intern(client_name_);
    recorder.AddSink(this);
  }
  void OnEvent(const history::Event& e) override {
    if (done_ || e.process != client_ || e.thread != thread_ || e.type != EventType::kOk ||
        e.op != names::kRelease) {
      return;
    }
    done_ = true;
    run_->loop().After(0, [this] { action_(*run_); });
  }
  bool done_ = false;

 private:
  std::string client_name_;
  int thread_ = 0;
  std::function<void(LiveRun&)> action_;
  LiveRun* run_ = nullptr;
  history::Name client_ = names::kNone;
};

// c1 crashes while its thread 0 is blocked in BLPOP on its gate (thread 1 has released once of
// the three times that open it) and while its other threads may be inside MULTI or blocked
// on the signal: the crash closes those session connections, and the restarted c1 (a new
// UUID, so a new gate) gets connections of its own: its thread 0 blocks on the new gate and
// passes it once the new thread 1 has released three times, which it could not do were its
// BLPOP queued behind the old one on an old connection, or were the old reply delivered to it
// (the program checks that the gate it passes is its own).
TEST_CASE("LiveRun: a crash closes a client program's session connections, its blocked BLPOP with them") {
  Scenario scenario = WatchBlpop();
  scenario.name = "live-watch-blpop-crash";
  scenario.duration_us = 5'000'000;
  scenario.workload.lease_us = 400'000;  // A holder's crash stalls the others this long.
  OnFirstRelease crash("c1", 1, [](LiveRun&) {
    drive::ApplyFault(ClientFault(FaultSpec::Kind::kCrash, "c1", 200'000), *client_faults_);
  });
  LiveResult r = RunLive(scenario, [&crash](LiveRun& run, history::Recorder& recorder) {
    crash.Attach(run, recorder);
  });
  REQUIRE(crash.done_);
  CheckWatchBlpopRan(r);
  CHECK(r.counts["fault crash"] == 1);
  CHECK(r.counts["fault restart"] == 1);
  const history::History& h = r.history;
  std::vector<std::string> c1_faults;
  bool t0_acquired_before_crash = false;
  bool t0_acquired_after_restart = false;
  for (const history::Event& e : h.events()) {
    const bool c1 = h.Str(e.process) == "c1" || (e.type == EventType::kExec && h.Str(e.peer) == "c1");
    if (!c1) continue;
    if (e.type == EventType::kFault) {
      c1_faults.push_back(h.Str(e.op));
      continue;
    }
    // Nothing of c1 between its crash and its restart: a reply to the old process's pending
    // commands reaches nobody. (The exec of a transaction whose result was on its way may
    // still be recorded: the server ran it.)
    if (c1_faults.size() == 1 && e.type != EventType::kExec) {
      FAIL_CHECK("c1 did something while down: " << history::TypeName(e.type) << " " << h.Str(e.op));
    }
    if (e.type == EventType::kOk && e.thread == 0 && e.op == names::kAcquire) {
      (c1_faults.empty() ? t0_acquired_before_crash : t0_acquired_after_restart) = true;
    }
  }
  CHECK(c1_faults == std::vector<std::string>{"crash", "restart"});
  CHECK_FALSE(t0_acquired_before_crash);  // It was at its gate when c1 crashed.
  CHECK(t0_acquired_after_restart);
}

// The user's servers (--redis): every key under the run's prefix, no keyspace notifications.
// The program's UNWATCH goes to the server (it names no key, and touches no data), and a
// BLPOP's reply names the list without the prefix: the program checks that the list it got
// an element from is the one it named, and stops the run otherwise.
TEST_CASE("LiveRun: on the user's servers a client program's UNWATCH is sent and BLPOP's key comes back unprefixed") {
  Scenario scenario = WatchBlpop();
  scenario.name = "live-watch-blpop-prefixed";
  const std::string prefix = "lockstep:11:driver-test:";
  LiveResult r = RunLive(scenario, nullptr, false, [&](LiveOptions& o, const std::vector<int>&) {
    o.watch_expiry = false;
    o.probe_at_expiry = true;
    o.keyspace = std::make_shared<const RunKeyspace>(prefix);
  });
  CheckWatchBlpopRan(r);
  CHECK(r.counts["lease acquired"] >= r.counts["ok acquire"] - 2);
  REQUIRE_FALSE(r.keys_left.empty());
  for (const std::string& k : r.keys_left) CHECK(k.rfind(prefix, 0) == 0);
}

// c1's connections go through a fault proxy link with a latency each way: its session
// connections too (the link accepts more than the command connection), and the program's
// own MULTI .. EXEC, sent one command per reply, passes the proxy's transaction grouping
// with the probe the driver queues before its EXEC.
TEST_CASE("LiveRun: a client program's session connections go through the fault proxy as its command connection does") {
  Scenario scenario = WatchBlpop();
  scenario.name = "live-watch-blpop-proxy";
  // c1 alone: a client behind the slower link would lose most WATCH races to a direct one, and
  // might not release three times (its gate) within the run.
  scenario.clients.resize(1);
  FaultProxy proxy(/*seed=*/5);
  int link = -1;
  LiveResult r = RunLive(scenario, nullptr, false, [&proxy, &link](LiveOptions& o, const std::vector<int>& ports) {
    std::string proxy_error;
    const FaultProxy::Endpoint slow =
        proxy.AddLink("c1->n1", "127.0.0.1", ports[0], ProxyLinkKind::kCommands, &proxy_error);
    INFO(proxy_error);
    REQUIRE(slow.link >= 0);
    link = slow.link;
    for (ProxyDirection d : {ProxyDirection::kToServer, ProxyDirection::kToClient}) {
      proxy.SetLatency(slow.link, d, Distribution{Distribution::Kind::kUniform, 200, 2'000, 0});
    }
    RouteCommandsVia(o, "c1", slow.port);
    o.watch_expiry = false;
    o.probe_at_expiry = true;
  });
  CheckWatchBlpopRan(r);
  const ProxyLinkStats stats = proxy.Stats(link);
  // The command connection and a session per thread (three).
  CHECK(stats.connections >= 4);
  CHECK(stats.dropped == 0);
  // A transaction's messages share one draw: fewer draws than messages.
  CHECK(stats.latency_draws < stats.forwarded);
  // c1's transactions ran and were probed through the proxy.
  int c1_acquire_execs = 0;
  for (const history::Event& e : r.history.events()) {
    if (e.type == EventType::kExec && r.history.Str(e.peer) == "c1" && r.history.Str(e.op) == "acquire") {
      ++c1_acquire_execs;
    }
  }
  CHECK(c1_acquire_execs >= 3);
}

// A program that, before its first acquire, walks each thread through the ways a transaction
// ends on its session connection, checking every reply (a wrong one stops the run): a watched
// key the thread itself changed (EXEC answers nil), a command refused when queued (EXECABORT),
// DISCARD, a nested MULTI (refused; the open transaction goes on), and UNWATCH. Its lock is a
// plain SET NX on the command connection.
constexpr const char* kSessionEdgesProgram = R"lua(
local key = lockstep.config.lock_name
local lock = { layout = "string-token", unlock_reply = "compare-and-delete" }
local walked = {}

local function show(reply)
  if reply == nil then return "no reply" end
  if reply == false then return "(nil)" end
  if type(reply) ~= "table" then return tostring(reply) end
  if reply.ok then return "+" .. reply.ok end
  if reply.err then return "-" .. reply.err end
  local parts = {}
  for i = 1, #reply do parts[i] = show(reply[i]) end
  return "[" .. table.concat(parts, ", ") .. "]"
end

local function expect(argv, label, want)
  local got = show(lockstep.call(0, argv, {label = label}))
  if got ~= want then error(label .. ": expected " .. want .. ", got " .. got) end
end

local function walk(t)
  local k = key .. ":edge:" .. lockstep.config.uuid .. ":" .. t
  -- The thread's own write to a key it watches: EXEC runs nothing and answers nil.
  expect({"WATCH", k}, "watch", "+OK")
  expect({"SET", k, "mine"}, "touch", "+OK")
  expect({"MULTI"}, "multi", "+OK")
  expect({"SET", k, "never"}, "never_set", "+QUEUED")
  expect({"EXEC"}, "exec_nil", "(nil)")
  expect({"GET", k}, "get", "mine")
  -- A command refused when queued: EXECABORT, nothing runs.
  expect({"MULTI"}, "multi", "+OK")
  expect({"SET", k}, "refused", "-ERR wrong number of arguments for 'set' command")
  expect({"SET", k, "aborted"}, "aborted_set", "+QUEUED")
  expect({"EXEC"}, "exec_abort", "-EXECABORT Transaction discarded because of previous errors.")
  -- DISCARD: nothing runs.
  expect({"MULTI"}, "multi", "+OK")
  expect({"SET", k, "discarded"}, "discarded_set", "+QUEUED")
  expect({"DISCARD"}, "discard", "+OK")
  expect({"GET", k}, "get", "mine")
  -- A nested MULTI is refused and the open transaction goes on.
  expect({"MULTI"}, "multi", "+OK")
  expect({"MULTI"}, "nested_multi", "-ERR MULTI calls can not be nested")
  expect({"SET", k, "ran"}, "ran_set", "+QUEUED")
  expect({"GET", k}, "ran_get", "+QUEUED")
  expect({"EXEC"}, "exec_ran", "[+OK, ran]")
  -- UNWATCH ends the watch: the next EXEC runs although the key changed.
  expect({"WATCH", k}, "watch", "+OK")
  expect({"UNWATCH"}, "unwatch", "+OK")
  expect({"SET", k, "again"}, "touch", "+OK")
  expect({"MULTI"}, "multi", "+OK")
  expect({"GET", k}, "after_unwatch_get", "+QUEUED")
  expect({"EXEC"}, "exec_after_unwatch", "[again]")
  -- EXEC without MULTI, on the session as every EXEC goes.
  expect({"EXEC"}, "exec_alone", "-ERR EXEC without MULTI")
end

function lock.acquire(op)
  if not walked[op.thread] then
    walk(op.thread)
    walked[op.thread] = true
  end
  while true do
    local r = lockstep.call(0, {"SET", key, op.token, "NX", "PX", 2000}, {label = "acquire"})
    if r == nil then return "unknown", "no reply" end
    if type(r) == "table" and r.ok then return "ok", "acquired" end
    lockstep.sleep(20000)
  end
end

function lock.release(op)
  local r = lockstep.call(0, {"DEL", key}, {label = "unlock"})
  if r == 1 then return "ok", "released", 1 end
  return "fail", "not released: " .. show(r)
end

return lock
)lua";

// A scenario whose client program is `program`, in a folder of its own (the scenario's
// `client = "client.lua"` is found beside it) that lives as long as this does.
struct ProgramScenario {
  ProgramScenario(const std::string& name, const char* program, const std::string& toml)
      : dir(std::filesystem::temp_directory_path() /
            ("lockstep-live-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "client.lua") << program;
    std::ofstream(dir / "scenario.toml") << toml;
    ScenarioError error;
    scenario = LoadScenarioFile((dir / "scenario.toml").string(), &error);
    UNSCOPED_INFO(error.ToString());
  }
  ~ProgramScenario() { std::filesystem::remove_all(dir); }
  ProgramScenario(const ProgramScenario&) = delete;
  ProgramScenario& operator=(const ProgramScenario&) = delete;

  std::filesystem::path dir;
  std::optional<Scenario> scenario;
};

TEST_CASE("LiveRun: a client program's transaction that runs nothing records only its EXEC, estimated") {
  const ProgramScenario loaded(
      "session-edges", kSessionEdgesProgram,
      "name = \"live-session-edges\"\nseed = 4\nduration_ms = 1500\n\n"
      "[[nodes]]\nname = \"n1\"\n\n[[clients]]\ncount = 2\nthreads = 2\n\n"
      "[protocol]\nkind = \"client\"\nclient = \"client.lua\"\ntimeout_ms = 1000\n\n"
      "[workload]\nmode = \"lock\"\nlease_ms = 2000\ncritical_ms = 20\nthink_ms = 20\n");
  REQUIRE(loaded.scenario.has_value());
  LiveResult r = RunLive(*loaded.scenario);
  for (const auto& [what, count] : r.counts) UNSCOPED_INFO(what << ": " << count);
  INFO(r.program_error);
  REQUIRE(r.program_error.empty());
  CHECK(Holds(r.streamed, "mutual_exclusion"));
  CHECK(r.counts["ok acquire"] >= 4);  // Each thread walked through and took the lock.

  const history::History& h = r.history;
  std::string scratch;
  std::map<std::string, std::vector<std::string>> replies;  // Exec replies by label.
  const std::vector<history::Event>& events = h.events();
  for (size_t i = 0; i < events.size(); ++i) {
    const history::Event& e = events[i];
    if (e.type != EventType::kExec) continue;
    const std::string op = h.Str(e.op);
    replies[op].push_back(std::string(history::ReplyText(e, &scratch)));
    // A transaction that ran: EXEC's exec, then its commands' in order, at the same local_ms.
    if (op == "exec_ran" && r.late == 0) {
      REQUIRE(i + 2 < events.size());
      CHECK(h.Str(events[i + 1].op) == "ran_set");
      CHECK(h.Str(events[i + 2].op) == "ran_get");
      CHECK(events[i + 1].local_ms == e.local_ms);
      CHECK(events[i + 2].local_ms == e.local_ms);
    }
  }
  const size_t threads = 4;
  // Commands queued in a transaction that ran nothing have no exec; the transaction's EXEC
  // (or DISCARD) has its own, with the reply the program got.
  CHECK(replies["never_set"].empty());
  CHECK(replies["aborted_set"].empty());
  CHECK(replies["discarded_set"].empty());
  CHECK(replies["exec_nil"] == std::vector<std::string>(threads, "(nil)"));
  REQUIRE(replies["exec_abort"].size() == threads);
  CHECK(replies["exec_abort"][0].rfind("-EXECABORT", 0) == 0);
  CHECK(replies["discard"].size() == threads);
  // A command refused when queued has its exec: the server answered it.
  REQUIRE(replies["refused"].size() == threads);
  CHECK(replies["refused"][0].rfind("-ERR wrong number of arguments", 0) == 0);
  CHECK(replies["nested_multi"].size() == threads);
  // A transaction that ran: each command's exec with its own element.
  CHECK(replies["ran_set"] == std::vector<std::string>(threads, "+OK"));
  CHECK(replies["ran_get"].size() == threads);
  CHECK(replies["exec_ran"].size() == threads);
  CHECK(replies["after_unwatch_get"].size() == threads);
  CHECK(replies["exec_alone"].size() == threads);
  CHECK(replies["unwatch"].size() == threads);
}

// watch-blpop on a three-master Redis Cluster, its keys under one hash tag: a thread's WATCH
// goes to the master of the lock's slot, and so do its MULTI, EXEC and UNWATCH, which name no
// key (routed by slot alone they would go to the first master, where no transaction is open:
// EXEC without MULTI); the probe joins the transactions there, so their lease events appear.
TEST_CASE("LiveRun: in a cluster a client program's keyless MULTI and EXEC follow its WATCH to its node") {
  Scenario scenario = WatchBlpop();
  scenario.name = "live-watch-blpop-cluster";
  scenario.protocol.lock_name = "{inventory}";  // Slot 14370: served by n3.
  for (const char* name : {"n2", "n3"}) {
    NodeSpec node;
    node.name = name;
    scenario.nodes.push_back(node);
  }
  scenario.cluster.enabled = true;
  LiveResult r = RunLive(scenario, nullptr, /*cluster=*/true);
  CheckWatchBlpopRan(r);
  CHECK(r.counts["lease acquired"] >= r.counts["ok acquire"] - 2);
  for (const history::Event& e : r.history.events()) {
    if (e.type == EventType::kExec || e.type == EventType::kLease) CHECK(r.history.Str(e.process) == "n3");
  }
}

// A program that sends its transaction at once (MULTI, SET NX PX, EXEC by call_all), on its
// thread's session, and takes a missing reply as an unknown outcome.
constexpr const char* kPipelinedProgram = R"lua(
local key = lockstep.config.lock_name
local lock = { layout = "string-token", unlock_reply = "compare-and-delete" }

function lock.acquire(op)
  while true do
    local r = lockstep.call_all({{0, {"MULTI"}}, {0, {"SET", key, op.token, "NX", "PX", 300}},
                                 {0, {"EXEC"}}})
    if r[3] == lockstep.timeout then return "unknown", "no reply to EXEC" end
    if type(r[3]) == "table" and type(r[3][1]) == "table" and r[3][1].ok then
      return "ok", "acquired"
    end
    lockstep.sleep(20000)
  end
end

function lock.release(op)
  local r = lockstep.call(0, {"DEL", key}, {label = "unlock"})
  if r == 1 then return "ok", "released", 1 end
  return "fail", "not released"
end

return lock
)lua";

// c1 (alone, so that its first attempt takes the lock) on a link that loses every reply: the
// proxy hands over the replies of c1's transactions, sent on c1's session, and EXEC's records
// its exec, its SET's and the lease c1 took, in the node's order, though c1 itself sees no
// reply and never believes it holds the lock.
TEST_CASE("LiveRun: a client program's EXEC whose reply a proxy drops still records its execs and lease") {
  const ProgramScenario loaded(
      "session-lost", kPipelinedProgram,
      "name = \"live-session-lost-exec\"\nseed = 6\nduration_ms = 1500\n\n"
      "[[nodes]]\nname = \"n1\"\n\n[[clients]]\ncount = 1\n\n"
      "[protocol]\nkind = \"client\"\nclient = \"client.lua\"\ntimeout_ms = 100\n\n"
      "[workload]\nmode = \"lock\"\nlease_ms = 300\ncritical_ms = 20\nthink_ms = 50\n");
  REQUIRE(loaded.scenario.has_value());
  FaultProxy proxy(/*seed=*/9);
  LiveRun* running = nullptr;
  auto take_drops = [&proxy, &running] {
    for (const ProxyDrop& d : proxy.TakeDrops()) {
      running->NoReplyFor(d.client_port, static_cast<int64_t>(d.request_index), d.reply);
    }
  };
  LiveResult r = RunLive(
      *loaded.scenario,
      [&proxy, &running, &take_drops](LiveRun& run, history::Recorder&) {
        running = &run;
        run.loop().Watch(proxy.drop_fd(), true, false, [&take_drops](short) { take_drops(); });
      },
      false,
      [&proxy, &take_drops](LiveOptions& o, const std::vector<int>& ports) {
        std::string proxy_error;
        const FaultProxy::Endpoint lossy =
            proxy.AddLink("c1->n1", "127.0.0.1", ports[0], ProxyLinkKind::kCommands, &proxy_error);
        INFO(proxy_error);
        REQUIRE(lossy.link >= 0);
        proxy.SetLoseReplies(lossy.link, true);
        RouteCommandsVia(o, "c1", lossy.port);
        o.before_pairing = take_drops;
        o.watch_expiry = false;
        o.probe_at_expiry = true;
      });
  for (const auto& [what, count] : r.counts) UNSCOPED_INFO(what << ": " << count);
  INFO(r.program_error);
  REQUIRE(r.program_error.empty());
  const history::History& h = r.history;
  std::string c1_uuid;
  for (const history::Event& e : h.events()) {
    if (e.type == EventType::kNote && e.op == names::kClient && h.Str(e.process) == "c1") {
      c1_uuid = std::string(history::AsClientNote(e)->uuid);
    }
  }
  REQUIRE_FALSE(c1_uuid.empty());
  int c1_ok = 0, c1_exec_arrays = 0, c1_sets = 0, c1_leases = 0;
  std::string scratch;
  const std::vector<history::Event>& events = h.events();
  for (size_t i = 0; i < events.size(); ++i) {
    const history::Event& e = events[i];
    if (e.type == EventType::kOk && e.op == names::kAcquire && h.Str(e.process) == "c1") ++c1_ok;
    if (e.type == EventType::kLease && e.op == names::kAcquired &&
        h.DetailOf(e).find(c1_uuid) != std::string::npos) {
      ++c1_leases;
      // Taken by c1's transaction: its EXEC's exec, then its SET's, right before.
      if (r.late == 0) {
        REQUIRE(i >= 2);
        CHECK(h.Str(events[i - 1].op) == "set");
        CHECK(h.Str(events[i - 2].op) == "exec");
      }
    }
    if (e.type != EventType::kExec || h.Str(e.peer) != "c1") continue;
    const std::string reply(history::ReplyText(e, &scratch));
    if (h.Str(e.op) == "exec" && reply == "[+OK]") ++c1_exec_arrays;
    if (h.Str(e.op) == "set" && reply == "+OK") ++c1_sets;
  }
  CHECK(c1_ok == 0);  // c1 saw no reply at all.
  CHECK(c1_leases >= 1);
  CHECK(c1_exec_arrays >= c1_leases);
  CHECK(c1_sets >= c1_leases);
}

// A task's error completes no operation: the run must stop on it all the same, not at the next
// completion (the acquire here waits 5 s, longer than the run's 3 s: it never completes).
constexpr const char* kFailingTaskProgram = R"lua(
local lock = {layout = "string-token"}
function lock.acquire(op)
  lockstep.spawn(function()
    lockstep.sleep(100000)
    error("the renewal task broke")
  end)
  lockstep.sleep(5000000)
  return "ok", "acquired"
end
function lock.release(op) return "ok", "released", 1 end
return lock
)lua";

TEST_CASE("LiveRun: a client program's background task that fails stops the run at once") {
  const ProgramScenario loaded(
      "failing-task", kFailingTaskProgram,
      "name = \"live-failing-task\"\nseed = 2\nduration_ms = 3000\n\n"
      "[[nodes]]\nname = \"n1\"\n\n[[clients]]\ncount = 1\n\n"
      "[protocol]\nkind = \"client\"\nclient = \"client.lua\"\n\n"
      "[workload]\nmode = \"lock\"\nlease_ms = 1000\n");
  REQUIRE(loaded.scenario.has_value());
  LiveResult r = RunLive(*loaded.scenario);
  // Before, the error surfaced only at a completion, and this run has none.
  INFO(r.program_error);
  CHECK(r.program_error.find("client c1's program failed") != std::string::npos);
  CHECK(r.program_error.find("the renewal task broke") != std::string::npos);
  // The history stops at the error, long before the run's 3 s.
  REQUIRE(!r.history.events().empty());
  CHECK(r.history.events().back().t_us < 2'000'000);
}

}  // namespace
}  // namespace lockstep::live
