// Establishes that the simulator is deterministic (one seed, one history, byte for byte) and
// that its basic mechanics do what the scenario says: clients acquire and release through the
// real lock scripts on emulated nodes, the watchdog renews, faults appear in the history, and a
// [cluster] routes each command to the master serving its key's slot. Underneath, the engine
// runs events in (time, sequence) order and a cancelled event never runs.
#include <catch2/catch.hpp>

#include <array>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "check/check.h"
#include "core/cluster.h"
#include "history/history.h"
#include "history/jsonl.h"
#include "model/scenario.h"
#include "model/scenario_toml.h"
#include "sim/engine.h"
#include "sim/simulation.h"

namespace {

using lockstep::history::EventType;
using lockstep::history::History;
using lockstep::history::TextEvent;
using lockstep::Scenario;

Scenario Basic(uint64_t seed) {
  Scenario s;
  s.name = "basic";
  s.seed = seed;
  s.duration_us = 30'000'000;
  lockstep::NodeSpec n;
  n.name = "n1";
  s.nodes.push_back(n);
  for (int i = 1; i <= 3; ++i) {
    lockstep::ClientSpec c;
    c.name = "c" + std::to_string(i);
    c.threads = 2;
    s.clients.push_back(c);
  }
  s.network.latency_us = {lockstep::Distribution::Kind::kUniform, 200, 1500, 0};
  s.workload.critical_us = lockstep::Distribution::Fixed(20'000);
  s.workload.think_us = {lockstep::Distribution::Kind::kExponential, 50'000, 0, 0};
  return s;
}

// A finished run and every event it recorded.
struct SimRun {
  std::unique_ptr<lockstep::sim::Simulation> sim;
  std::unique_ptr<History> kept;
  const History& history() const { return *kept; }
};

std::unique_ptr<SimRun> RunOf(const Scenario& s) {
  std::string error;
  auto run = std::make_unique<SimRun>();
  run->sim = lockstep::sim::Simulation::Create(s, LOCKSTEP_SOURCE_DIR "/lua", &error);
  INFO(error);
  REQUIRE(run->sim != nullptr);
  run->kept = std::make_unique<History>(run->sim->recorder().shared_names());
  run->sim->recorder().AddSink(run->kept.get());
  run->sim->Run();
  return run;
}

// The events with their names and details as text, to read them in assertions.
std::vector<TextEvent> Text(const History& h) {
  std::vector<TextEvent> out;
  for (const lockstep::history::Event& e : h.events()) {
    TextEvent t;
    t.t_us = e.t_us;
    t.type = e.type;
    t.process = h.Str(e.process);
    t.thread = e.thread;
    t.op = h.Str(e.op);
    t.lock = h.Str(e.lock);
    t.peer = h.Str(e.peer);
    t.local_ms = e.local_ms;
    t.has_value = e.has_value;
    t.value = e.value;
    t.detail = h.DetailOf(e);
    out.push_back(std::move(t));
  }
  return out;
}

std::map<std::string, int> Count(const History& h) {
  std::map<std::string, int> counts;
  for (const TextEvent& e : Text(h)) {
    counts[std::string(lockstep::history::TypeName(e.type)) + ":" + e.op]++;
  }
  return counts;
}

}  // namespace

TEST_CASE("the same seed gives a byte-identical history", "[sim][determinism]") {
  auto a = RunOf(Basic(42));
  auto b = RunOf(Basic(42));
  REQUIRE(a->history().size() == b->history().size());
  CHECK(a->history().HashHex() == b->history().HashHex());
  for (size_t i = 0; i < a->history().size(); ++i) {
    std::string line_a, line_b;
    lockstep::history::AppendJsonLine(a->history().events()[i], a->history().names(), &line_a);
    lockstep::history::AppendJsonLine(b->history().events()[i], b->history().names(), &line_b);
    REQUIRE(line_a == line_b);
  }
  auto c = RunOf(Basic(43));
  CHECK(c->history().HashHex() != a->history().HashHex());
}

TEST_CASE("clients acquire and release through the lock scripts", "[sim]") {
  auto sim = RunOf(Basic(1));
  const auto counts = Count(sim->history());
  CHECK(counts.at("ok:acquire") > 100);
  CHECK(counts.at("ok:release") > 100);
  CHECK(counts.at("exec:acquire") >= counts.at("ok:acquire"));
  CHECK(counts.at("resource:enter") == counts.at("ok:acquire"));
  CHECK(counts.count("lease:acquired") == 1);
  CHECK(sim->sim->events_run() > 1000);
}

TEST_CASE("the watchdog renews a lock held longer than its timeout", "[sim][watchdog]") {
  Scenario s = Basic(3);
  s.clients.resize(1);
  s.clients[0].threads = 1;
  s.workload.critical_us = lockstep::Distribution::Fixed(45'000'000);
  s.duration_us = 50'000'000;
  auto sim = RunOf(s);
  const auto counts = Count(sim->history());
  CHECK(counts.count("exec:renew") == 1);
  CHECK(counts.at("exec:renew") == 4);  // At 10, 20, 30 and 40 s.
  CHECK(counts.count("lease:expired") == 0);
}

TEST_CASE("a history survives a round trip through its file", "[sim][history]") {
  auto sim = RunOf(Basic(5));
  const std::string path = "/tmp/lockstep-sim-test-history.jsonl";
  std::string error;
  REQUIRE(sim->history().WriteFile(path, &error));
  auto back = History::ReadFile(path, &error);
  INFO(error);
  REQUIRE(back.has_value());
  CHECK(back->HashHex() == sim->history().HashHex());
  CHECK(back->size() == sim->history().size());
  std::remove(path.c_str());
}

namespace {

// Basic, on a Redis Cluster of three masters.
Scenario ClusterOfThree(uint64_t seed, const std::string& lock_name) {
  Scenario s = Basic(seed);
  s.nodes.clear();
  for (int i = 1; i <= 3; ++i) {
    lockstep::NodeSpec n;
    n.name = "n" + std::to_string(i);
    s.nodes.push_back(n);
  }
  s.cluster.enabled = true;
  s.protocol.lock_name = lock_name;
  return s;
}

Scenario LoadScenario(const std::string& relative_path) {
  lockstep::ScenarioError error;
  auto s = lockstep::LoadScenarioFile(LOCKSTEP_SOURCE_DIR "/" + relative_path, &error);
  INFO(error.ToString());
  REQUIRE(s.has_value());
  return *s;
}

}  // namespace

TEST_CASE("a cluster sends each command to the master serving its slot", "[sim][cluster]") {
  // n1 serves 0-5460, n2 5461-10922, n3 10923-16383 (redis-cli's split).
  const std::map<std::string, std::string> lock_home = {
      {"orders", "n1"}, {"payments", "n2"}, {"inventory", "n3"}};
  for (const auto& [lock, home] : lock_home) {
    INFO("lock " << lock << ", slot " << lockstep::KeyHashSlot(lock));
    auto sim = RunOf(ClusterOfThree(7, lock));
    std::set<std::string> exec_nodes;
    int messages = 0;
    bool cluster_note = false;
    for (const TextEvent& e : Text(sim->history())) {
      if (e.type == EventType::kExec) {
        exec_nodes.insert(e.process);
        CHECK(e.detail.find("MOVED") == std::string::npos);
        CHECK(e.detail.find("CROSSSLOT") == std::string::npos);
      }
      if (e.type == EventType::kMessage) {
        ++messages;
        CHECK(e.peer == home);  // The channel, {lock}-tagged, is in the lock's slot too.
      }
      if (e.type == EventType::kNote && e.op == "protocol") {
        CHECK(e.detail.find(" nodes=1 ") != std::string::npos);  // One Redis to the protocol.
      }
      if (e.type == EventType::kNote && e.op == "cluster") {
        cluster_note = true;
        CHECK(e.detail == "n1=0-5460 n2=5461-10922 n3=10923-16383 lock_slot=" +
                              std::to_string(lockstep::KeyHashSlot(lock)));
      }
    }
    CHECK(exec_nodes == std::set<std::string>{home});
    CHECK(messages > 10);
    CHECK(cluster_note);
    const auto counts = Count(sim->history());
    CHECK(counts.at("ok:acquire") > 100);
    CHECK(counts.count("fail:acquire") == 0);  // Think 50 ms, wait 10 s: nobody gives up.
  }
}

TEST_CASE("a cluster run is deterministic", "[sim][cluster][determinism]") {
  auto a = RunOf(ClusterOfThree(11, "inventory"));
  auto b = RunOf(ClusterOfThree(11, "inventory"));
  CHECK(a->history().HashHex() == b->history().HashHex());
}

TEST_CASE("a user script touching a key of another master fails on a cluster, not alone",
          "[sim][cluster]") {
  const std::string non_local = "ERR Script attempted to access a non local key in a cluster node";
  Scenario s = LoadScenario("scenarios/cluster-crossslot-user-script.toml");
  REQUIRE(s.cluster.enabled);
  {
    auto sim = RunOf(s);
    int refused_execs = 0;
    int refused_acquires = 0;
    std::set<std::string> refused_clients;
    for (const TextEvent& e : Text(sim->history())) {
      const bool refused = e.detail.rfind(non_local, 0) != std::string::npos ||
                           e.detail.rfind("-" + non_local, 0) != std::string::npos;
      if (e.type == EventType::kExec && refused) {
        ++refused_execs;
        CHECK(e.process == "n3");  // The lock's master; lock_stats is on n2.
        CHECK(e.op == "acquire");
      }
      if (e.type == EventType::kFail && refused) {
        ++refused_acquires;
        refused_clients.insert(e.process);
      }
    }
    // Each client's first (fresh) acquisition is refused, after it wrote the lock.
    CHECK(refused_execs == 3);
    CHECK(refused_acquires == 3);
    CHECK(refused_clients == std::set<std::string>{"c1", "c2", "c3"});
  }
  {
    // One Redis: the same script works, every acquisition succeeds at its first try.
    s.cluster.enabled = false;
    s.nodes.resize(1);
    auto sim = RunOf(s);
    const auto counts = Count(sim->history());
    CHECK(counts.count("fail:acquire") == 0);
    CHECK(counts.at("ok:acquire") == 15);  // 3 clients, 5 iterations each.
    for (const TextEvent& e : Text(sim->history())) {
      CHECK(e.detail.find("non local") == std::string::npos);
    }
  }
}

TEST_CASE("latch roles: awaiters only await, counters only count down", "[sim][role]") {
  // Two awaiting threads and two counting-down processes on a latch of count 2: the counters
  // count down once each (ops_per_thread), every await passes after the second count-down,
  // and the history says who had which role.
  Scenario s = Basic(5);
  s.protocol.kind = lockstep::history::FindProtocolKind("countdownlatch");
  s.protocol.version = lockstep::history::ProtocolVersion::kCurrent;
  s.protocol.permits = 2;
  s.workload.mode = lockstep::WorkloadSpec::Mode::kLock;
  s.workload.think_us = lockstep::Distribution::Fixed(1'000'000);
  s.workload.ops_per_thread = 1;
  s.clients[0].role = lockstep::ClientSpec::Role::kAwait;  // c1: two threads
  s.clients[1].role = lockstep::ClientSpec::Role::kCountDown;
  s.clients[1].threads = 1;
  s.clients[2].role = lockstep::ClientSpec::Role::kCountDown;
  s.clients[2].threads = 1;
  auto sim = RunOf(s);
  const History& h = sim->history();
  std::map<std::string, std::string> roles;
  int64_t last_count_down_us = -1;
  std::vector<int64_t> passed_us;
  for (const TextEvent& e : Text(h)) {
    if (e.type == EventType::kNote && e.op == "role") {
      CHECK(e.t_us == 0);
      roles[e.process] = e.detail;
    }
    if (e.type == EventType::kInvoke) {
      // Awaiters never count down; counters never await.
      CHECK(e.op == (e.process == "c1" ? "acquire" : "release"));
    }
    if (e.type == EventType::kOk && e.op == "release") last_count_down_us = e.t_us;
    if (e.type == EventType::kOk && e.op == "acquire") passed_us.push_back(e.t_us);
  }
  CHECK(roles == std::map<std::string, std::string>{{"c1", "role=await threads=2"},
                                                    {"c2", "role=count_down threads=1"},
                                                    {"c3", "role=count_down threads=1"}});
  const auto counts = Count(h);
  CHECK(counts.at("ok:release") == 2);
  CHECK(counts.at("note:done") == 2);
  REQUIRE(passed_us.size() == 2);
  for (int64_t t : passed_us) CHECK(t >= last_count_down_us);
  CHECK(RunOf(s)->history().Hash() == h.Hash());  // Roles keep the run deterministic.
}

TEST_CASE("exec events name the client thread, so a fair lock with threads is judged in full",
          "[sim][fairness]") {
  Scenario s = Basic(7);  // 3 clients with 2 threads each.
  s.protocol.kind = lockstep::history::FindProtocolKind("fairlock");
  s.protocol.version = lockstep::history::ProtocolVersion::kCurrent;
  auto sim = RunOf(s);
  size_t acquire_execs = 0;
  for (const TextEvent& e : Text(sim->history())) {
    if (e.type != EventType::kExec) continue;
    if (e.op == "acquire" || e.op == "try_acquire" || e.op == "unlock") {
      ++acquire_execs;
      CHECK(e.thread >= 0);  // Sent by a thread's operation.
    }
    if (e.op == "subscribe") CHECK(e.thread == -1);  // The process's own command.
  }
  CHECK(acquire_execs > 100);
  lockstep::check::CheckOptions options;
  const lockstep::check::Verdict verdict = lockstep::check::CheckHistory(sim->history(), options);
  for (const auto& result : verdict.results) {
    if (result.property != "fairness") continue;
    CHECK_FALSE(result.violated);
    for (const auto& o : result.observations) CHECK(o.kind != "unattributed");
  }
}

// --- network windows (latency, loss and duplicate faults) ---

namespace {

// One client thread on one node, one way latency fixed at 500 us, and a window of `kind` on
// n1's links from 5 s to 15 s.
Scenario WithWindow(lockstep::FaultSpec::Kind kind) {
  Scenario s = Basic(9);
  s.clients.resize(1);
  s.clients[0].threads = 1;
  s.network.latency_us = lockstep::Distribution::Fixed(500);
  s.workload.think_us = lockstep::Distribution::Fixed(100'000);
  lockstep::FaultSpec f;
  f.kind = kind;
  f.at_us = 5'000'000;
  f.duration_us = 10'000'000;
  f.targets = {"n1"};
  f.extra_us = kind == lockstep::FaultSpec::Kind::kLatency ? 50'000 : 0;
  f.rate = kind == lockstep::FaultSpec::Kind::kLatency ? 0 : 1;
  s.faults.push_back(f);
  return s;
}

constexpr int64_t kWindowFromUs = 5'000'000;
constexpr int64_t kWindowToUs = 15'000'000;

// The window's start and end faults: when, the value (ms) and the detail.
void CheckWindowRecorded(const History& h, const std::string& op, const std::string& detail) {
  int starts = 0, ends = 0;
  for (const TextEvent& e : Text(h)) {
    if (e.type != EventType::kFault) continue;
    CHECK(e.process == "sim");
    CHECK(e.detail == detail);
    if (e.op == op) {
      ++starts;
      CHECK(e.t_us == kWindowFromUs);
      CHECK(e.value == 10'000);
    } else if (e.op == op + "_end") {
      ++ends;
      CHECK(e.t_us == kWindowToUs);
    }
  }
  CHECK(starts == 1);
  CHECK(ends == 1);
}

}  // namespace

TEST_CASE("a latency window adds its extra to every message on the target's links",
          "[sim][network]") {
  auto sim = RunOf(WithWindow(lockstep::FaultSpec::Kind::kLatency));
  CheckWindowRecorded(sim->history(), "latency", "extra=50ms targets=n1");
  // Each acquisition is one round trip: the command's hop, then the reply's. Each hop takes the
  // link's 500 us, plus 50 ms when it is sent inside the window. Acquisitions invoked just
  // before or after the window straddle its edge and are left out.
  int inside = 0, outside = 0;
  int64_t invoked_us = -1, executed_us = -1;
  for (const TextEvent& e : Text(sim->history())) {
    if (e.type == EventType::kInvoke && e.op == "acquire") {
      invoked_us = e.t_us;
      executed_us = -1;
    } else if (e.type == EventType::kExec && e.op == "acquire" && invoked_us >= 0) {
      executed_us = e.t_us;
    } else if (e.type == EventType::kOk && e.op == "acquire" && executed_us >= 0) {
      const bool in = invoked_us >= kWindowFromUs && invoked_us < kWindowToUs - 200'000;
      const bool out = invoked_us < kWindowFromUs - 200'000 || invoked_us >= kWindowToUs + 200'000;
      const int64_t hop_us = in ? 50'500 : 500;
      if (in || out) {
        CHECK(executed_us - invoked_us == hop_us);
        CHECK(e.t_us - executed_us == hop_us);
        ++(in ? inside : outside);
      }
      invoked_us = executed_us = -1;
    }
  }
  CHECK(inside > 10);
  CHECK(outside > 10);
}

TEST_CASE("a loss window of rate 1 drops every message, so the client times out",
          "[sim][network]") {
  Scenario s = WithWindow(lockstep::FaultSpec::Kind::kLoss);
  s.protocol.retry_attempts = 0;  // The first timeout ends the operation (3 s, the default).
  auto sim = RunOf(s);
  CheckWindowRecorded(sim->history(), "loss", "rate=1 targets=n1");
  int execs_inside = 0, timeouts_inside = 0, ok_after = 0;
  for (const TextEvent& e : Text(sim->history())) {
    // A command sent just before the window may still arrive in its first 500 us.
    const bool inside = e.t_us > kWindowFromUs + 500 && e.t_us < kWindowToUs;
    if (e.type == EventType::kExec && inside) ++execs_inside;
    if (e.type == EventType::kInfo && inside) ++timeouts_inside;
    if (e.type == EventType::kOk && e.op == "acquire" && e.t_us > kWindowToUs) ++ok_after;
  }
  CHECK(execs_inside == 0);
  CHECK(timeouts_inside > 0);
  CHECK(ok_after > 10);  // Messages flow again after the window.
}

TEST_CASE("a duplicate window of rate 1 delivers every message twice", "[sim][network]") {
  auto sim = RunOf(WithWindow(lockstep::FaultSpec::Kind::kDuplicate));
  CheckWindowRecorded(sim->history(), "duplicate", "rate=1 targets=n1");
  // A command runs once per copy that arrives: twice for a command sent inside the window,
  // once outside it. The exec's value is the command's request id.
  std::map<int64_t, std::pair<int, int64_t>> runs;  // request id -> (runs, first run's time)
  for (const TextEvent& e : Text(sim->history())) {
    if (e.type != EventType::kExec || e.peer != "c1" || !e.has_value) continue;
    auto [it, fresh] = runs.try_emplace(e.value, 0, e.t_us);
    ++it->second.first;
  }
  int twice = 0, once = 0;
  for (const auto& [request, seen] : runs) {
    const auto [count, first_us] = seen;
    if (first_us > kWindowFromUs + 500 && first_us < kWindowToUs) {
      CHECK(count == 2);
      ++twice;
    } else if (first_us < kWindowFromUs || first_us > kWindowToUs + 500) {
      CHECK(count == 1);
      ++once;
    }
  }
  CHECK(twice > 10);
  CHECK(once > 10);
}

TEST_CASE("network windows apply only to the links between targets and peers",
          "[sim][network][determinism]") {
  // c1 and c2 share n1; the window slows only c1 <-> n1.
  Scenario s = WithWindow(lockstep::FaultSpec::Kind::kLatency);
  s.clients.resize(2);
  s.clients[1] = s.clients[0];
  s.clients[1].name = "c2";
  s.faults[0].peers = {"c1"};
  auto sim = RunOf(s);
  CheckWindowRecorded(sim->history(), "latency", "extra=50ms targets=n1 peers=c1");
  int c2_in_window = 0;
  int64_t invoked_us = -1;
  for (const TextEvent& e : Text(sim->history())) {
    if (e.process != "c2" || e.op != "acquire") continue;
    if (e.type == EventType::kInvoke) invoked_us = e.t_us;
    if (e.type == EventType::kOk && invoked_us >= kWindowFromUs && e.t_us < kWindowToUs) {
      // Fast unless it had to wait for c1's release, which the window slows.
      if (e.t_us - invoked_us == 1'000) ++c2_in_window;
    }
  }
  CHECK(c2_in_window > 0);
  CHECK(RunOf(s)->history().Hash() == sim->history().Hash());
}

// --- node pause ---

TEST_CASE("a paused node resumes connection by connection, as redis-server after SIGCONT",
          "[sim][pause]") {
  // n1 is paused for 8 s while c2 sends an acquire (and its retry) and then c1 an unlock (and
  // its retry). A real server runs every command buffered on one connection before the next
  // connection's, in the order the connections became readable: c2's two, then c1's two.
  // Arrival order would interleave them and let c2's retried acquire take the lock c1 freed.
  const Scenario s = LoadScenario("scenarios/testdata/live/node-pause.toml");
  auto run = RunOf(s);
  const std::vector<TextEvent> events = Text(run->history());
  int64_t resumed_us = -1;
  for (const TextEvent& e : events) {
    if (e.type == EventType::kFault && e.op == "resume") resumed_us = e.t_us;
  }
  REQUIRE(resumed_us > 0);
  std::vector<std::string> peers;  // Of the execs the node ran when it resumed, in order.
  for (const TextEvent& e : events) {
    if (e.type == EventType::kExec && e.t_us == resumed_us) peers.push_back(e.peer);
  }
  CHECK(peers == std::vector<std::string>{"c2", "c2", "c1", "c1"});
  // So c2's retry found the lock still held by c1, and nothing was acquired behind c2's back.
  const lockstep::check::Verdict verdict =
      lockstep::check::CheckHistory(run->history(), lockstep::check::CheckOptions{});
  const lockstep::check::PropertyResult* reentrancy = verdict.Find("reentrancy");
  REQUIRE(reentrancy != nullptr);
  CHECK_FALSE(reentrancy->violated);
}

// --- a disk that stalls its fsyncs ---

// One client thread that takes the lock at about 0.1 s and holds it for 20 s (the watchdog
// renews it), on a node with `persistence`, whose disk stalls from 0 to 7 s; `crash_at_us`, when
// set, kills the node then and restarts it 0.5 s later.
Scenario WithFsyncStall(lockstep::NodeSpec::Persistence persistence, bool stall,
                        int64_t crash_at_us) {
  Scenario s = Basic(3);
  s.nodes[0].persistence = persistence;
  s.clients.resize(1);
  s.clients[0].threads = 1;
  s.network.latency_us = lockstep::Distribution::Fixed(500);
  s.workload.critical_us = lockstep::Distribution::Fixed(20'000'000);
  if (stall) {
    lockstep::FaultSpec f;
    f.kind = lockstep::FaultSpec::Kind::kFsyncStall;
    f.at_us = 0;
    f.duration_us = 7'000'000;
    f.targets = {"n1"};
    s.faults.push_back(f);
  }
  if (crash_at_us > 0) {
    lockstep::FaultSpec f;
    f.kind = lockstep::FaultSpec::Kind::kCrash;
    f.at_us = crash_at_us;
    f.duration_us = 500'000;
    f.targets = {"n1"};
    s.faults.push_back(f);
  }
  return s;
}

// The lease events `op` on n1 at true time at_us.
int LeaseEventsAt(const History& h, const std::string& op, int64_t at_us) {
  int count = 0;
  for (const TextEvent& e : Text(h)) {
    if (e.type == EventType::kLease && e.process == "n1" && e.op == op && e.t_us == at_us) ++count;
  }
  return count;
}

TEST_CASE("an fsync stall on an aof-everysec node: a crash loses what the stall kept off disk",
          "[sim][fsync_stall]") {
  using P = lockstep::NodeSpec::Persistence;
  // Without the stall the fsync at 1 s keeps the lock taken at 0.1 s: the node restarted at
  // 7 s still has it. With the disk stalled until 7 s no fsync happened, so the restarted node
  // is empty and its holder has lost the lock.
  auto kept = RunOf(WithFsyncStall(P::kAofEverySec, /*stall=*/false, 6'500'000));
  CHECK(LeaseEventsAt(kept->history(), "lost", 7'000'000) == 0);
  auto stalled = RunOf(WithFsyncStall(P::kAofEverySec, /*stall=*/true, 6'500'000));
  CHECK(LeaseEventsAt(stalled->history(), "lost", 7'000'000) == 1);
  bool started = false, ended = false;
  for (const TextEvent& e : Text(stalled->history())) {
    if (e.type != EventType::kFault || e.process != "n1") continue;
    if (e.op == "fsync_stall") started = e.t_us == 0 && e.has_value && e.value == 7'000;
    if (e.op == "fsync_stall_end") ended = e.t_us == 7'000'000;
  }
  CHECK(started);
  CHECK(ended);
  CHECK(RunOf(WithFsyncStall(P::kAofEverySec, true, 6'500'000))->history().Hash() ==
        stalled->history().Hash());
}

TEST_CASE("an fsync stall on an aof-always node stops it at its first write until the disk is "
          "back",
          "[sim][fsync_stall]") {
  using P = lockstep::NodeSpec::Persistence;
  // The acquire at about 0.1 s writes: redis-server fsyncs before it replies, so the node
  // runs nothing more, and the acquire's reply leaves it, only when the stall ends at 7 s.
  // Meanwhile the client's timeouts and retries pile up in the node's connections.
  auto run = RunOf(WithFsyncStall(P::kAofAlways, /*stall=*/true, 0));
  int64_t first_exec_us = -1, acquired_us = -1;
  int execs_while_blocked = 0, execs_at_end = 0;
  for (const TextEvent& e : Text(run->history())) {
    if (e.type == EventType::kExec && e.process == "n1") {
      if (first_exec_us < 0) {
        first_exec_us = e.t_us;
      } else if (e.t_us < 7'000'000) {
        ++execs_while_blocked;
      } else if (e.t_us == 7'000'000) {
        ++execs_at_end;
      }
    }
    if (e.type == EventType::kOk && e.op == "acquire" && acquired_us < 0) acquired_us = e.t_us;
  }
  CHECK(first_exec_us > 0);
  CHECK(first_exec_us < 200'000);
  CHECK(execs_while_blocked == 0);
  CHECK(execs_at_end > 0);          // What waited in its connections runs when it goes on.
  CHECK(acquired_us >= 7'000'000);  // The first reply leaves only then.
  // Without the stall the same acquire is answered within a millisecond.
  auto plain = RunOf(WithFsyncStall(P::kAofAlways, /*stall=*/false, 0));
  for (const TextEvent& e : Text(plain->history())) {
    if (e.type == EventType::kOk && e.op == "acquire") {
      CHECK(e.t_us < 200'000);
      break;
    }
  }
}

// --- the engine ---

using lockstep::sim::Callback;
using lockstep::sim::Engine;

TEST_CASE("engine: events run in time order, and in scheduling order at one time",
          "[sim][engine]") {
  Engine engine;
  std::string order;
  engine.At(20, [&] { order += "c"; });
  engine.At(10, [&] { order += "a"; });
  engine.At(10, [&] { order += "b"; });
  engine.At(10, [&] {
    order += "x";
    engine.After(0, [&] { order += "y"; });  // Now, but after everything already due now.
  });
  engine.At(10, [&] { order += "z"; });
  CHECK(engine.RunUntil(15));
  CHECK(order == "abxzy");
  CHECK(engine.now() == 15);
  CHECK(engine.RunUntil(100));
  CHECK(order == "abxzyc");
  CHECK(engine.events_run() == 6);
}

TEST_CASE("engine: a cancelled event never runs and its closure is destroyed at once",
          "[sim][engine]") {
  Engine engine;
  auto token = std::make_shared<int>(0);
  std::string order;
  const Engine::EventId cancelled = engine.At(10, [&, token] { order += "cancelled"; });
  engine.At(10, [&] { order += "kept"; });
  CHECK(token.use_count() == 2);
  engine.Cancel(cancelled);
  CHECK(token.use_count() == 1);
  engine.Cancel(cancelled);  // Twice does nothing more.
  CHECK(engine.RunUntil(20));
  CHECK(order == "kept");
  CHECK(engine.events_run() == 1);
}

TEST_CASE("engine: an id whose event ran cancels nothing, even when its slot is reused",
          "[sim][engine]") {
  Engine engine;
  std::string order;
  const Engine::EventId ran = engine.At(1, [&] { order += "a"; });
  CHECK(engine.RunUntil(1));
  engine.At(2, [&] { order += "b"; });  // Reuses the first event's slot.
  engine.Cancel(ran);
  CHECK(engine.RunUntil(2));
  CHECK(order == "ab");
}

TEST_CASE("engine: many cancellations keep the order of the events that remain", "[sim][engine]") {
  // Enough cancelled timeouts that their records are dropped from the queue several times.
  Engine engine;
  std::vector<int> ran;
  std::vector<Engine::EventId> timeouts;
  for (int i = 0; i < 1000; ++i) {
    engine.At(1000 + i % 7, [&ran, i] { ran.push_back(i); });
    timeouts.push_back(engine.At(5000 + i, [&ran] { ran.push_back(-1); }));
    if (i >= 3) engine.Cancel(timeouts[static_cast<size_t>(i - 3)]);
  }
  CHECK(engine.RunUntil(100'000));
  std::vector<int> expected;
  for (int t = 0; t < 7; ++t) {
    for (int i = t; i < 1000; i += 7) expected.push_back(i);
  }
  for (int i = 0; i < 3; ++i) expected.push_back(-1);  // The last three were never cancelled.
  CHECK(ran == expected);
}

TEST_CASE("callback: small closures stay inline, big and move-only ones work", "[sim][engine]") {
  int calls = 0;
  Callback small([&calls] { ++calls; });
  std::array<char, 2 * Callback::kInlineBytes> big_payload{};
  big_payload[0] = 1;
  Callback big([&calls, big_payload] { calls += big_payload[0]; });
  auto owned = std::make_unique<int>(5);
  Callback move_only([&calls, owned = std::move(owned)] { calls += *owned; });
  Callback moved = std::move(move_only);
  CHECK_FALSE(move_only);
  small();
  big();
  moved();
  CHECK(calls == 7);
  moved.Reset();
  CHECK_FALSE(moved);
}

// The progress watchdog: a callback that schedules itself at the same instant forever stops
// the engine once the limit is passed, at that instant, instead of spinning.
TEST_CASE("the engine stops a loop that does not let time advance", "[sim][engine]") {
  lockstep::sim::Engine engine;
  engine.set_max_events_per_instant(1000);
  uint64_t runs = 0;
  std::function<void()> again = [&] {
    ++runs;
    engine.After(0, [&] { again(); });
  };
  engine.At(5, [&] { again(); });
  // Events at other instants each start a new count.
  for (int t = 0; t < 5; ++t) engine.At(t, [] {});
  CHECK_FALSE(engine.RunUntil(1'000'000));
  CHECK(engine.stalled());
  CHECK(engine.now() == 5);
  CHECK(runs == 1000);
  CHECK(engine.events_run() == 1005);
}

// The run's work bounds, on what the engine really does: events in all, and events
// waiting at once (a message resent on every timeout piles up in flight).
TEST_CASE("the engine stops a run past its work bounds", "[sim][engine]") {
  {
    lockstep::sim::Engine engine;
    engine.set_work_bounds(10'000, 0);
    std::function<void()> tick = [&] { engine.After(1, [&] { tick(); }); };
    engine.At(0, [&] { tick(); });
    CHECK_FALSE(engine.RunUntil(1'000'000'000));
    CHECK(engine.over_bound() == 1);
    CHECK(engine.events_run() >= 10'000);
    CHECK(engine.events_run() < 10'000 + 1024);
  }
  {
    lockstep::sim::Engine engine;
    engine.set_work_bounds(0, 5'000);
    // Each event sends two messages that arrive far later: what waits doubles.
    std::function<void()> send = [&] {
      engine.After(1, [&] { send(); });
      engine.After(1'000'000'000, [] {});
    };
    engine.At(0, [&] { send(); });
    CHECK_FALSE(engine.RunUntil(100'000'000));
    CHECK(engine.over_bound() == 2);
    CHECK(engine.pending() > 5'000);
  }
}

TEST_CASE("many events at one instant below the limit run to the end", "[sim][engine]") {
  lockstep::sim::Engine engine;
  engine.set_max_events_per_instant(1000);
  int runs = 0;
  for (int t = 0; t < 3; ++t) {
    for (int i = 0; i < 1000; ++i) engine.At(t, [&] { ++runs; });
  }
  CHECK(engine.RunUntil(10));
  CHECK_FALSE(engine.stalled());
  CHECK(runs == 3000);
  CHECK(engine.now() == 10);
}

TEST_CASE("a replica's replicated events follow its master's key, one lag later",
          "[sim][replication]") {
  Scenario s = Basic(7);
  lockstep::NodeSpec replica;
  replica.name = "n2";
  replica.replica_of = "n1";
  s.nodes.push_back(replica);
  s.replication.lag_us = lockstep::Distribution::Fixed(50'000);
  auto run = RunOf(s);
  const std::vector<TextEvent> events = Text(run->history());
  // The master's owners over time, from its lease events (a release's detail names the owners
  // it ended: afterwards there are none).
  std::vector<std::pair<int64_t, std::string>> master;  // (from t_us, owners)
  int replicated = 0;
  for (const TextEvent& e : events) {
    if (e.type == EventType::kLease && e.process == "n1") {
      const bool owned = e.op == "acquired" || e.op == "owners";
      master.emplace_back(e.t_us, owned ? e.detail : std::string());
    }
    if (e.type != EventType::kReplicated) continue;
    ++replicated;
    INFO("replicated at " << e.t_us << " us: " << e.detail);
    CHECK(e.process == "n2");
    CHECK(e.peer == "n1");
    CHECK(e.op == "applied");
    REQUIRE(e.has_value);
    CHECK(e.value >= 50'000);  // The lag, and a wait behind earlier batches.
    // The replica holds what the master held right after the write it applies (one of the
    // master's states at that microsecond: a release and the next acquire can share one).
    const int64_t written = e.t_us - e.value;
    std::set<std::string> states;
    std::string before;
    for (const auto& [t, o] : master) {
      if (t < written) before = o;
      if (t == written) states.insert(o);
    }
    states.insert(before);
    CHECK(states.count(e.detail) == 1);
  }
  CHECK(replicated > 100);  // An acquisition and a release reach it each turn.
}

TEST_CASE("a failover after a write the replica never got: no replicated event before it",
          "[sim][replication]") {
  lockstep::ScenarioError error;
  auto s = lockstep::LoadScenarioFile(LOCKSTEP_SOURCE_DIR "/scenarios/failover-unreplicated.toml",
                                      &error);
  REQUIRE(s);
  auto run = RunOf(*s);
  int64_t promoted_at = -1, first_copy_at = -1;
  for (const TextEvent& e : Text(run->history())) {
    if (e.type == EventType::kFault && e.op == "promote" && promoted_at < 0) promoted_at = e.t_us;
    if (e.type == EventType::kReplicated && first_copy_at < 0) first_copy_at = e.t_us;
  }
  REQUIRE(promoted_at > 0);
  // The master died 0.9 s after the acquisition, within the 2 s lag: n2 never had the key.
  CHECK(first_copy_at > promoted_at);
}

TEST_CASE("a promoted replica's key is recorded: acquired for what it holds, lost for what it lacks",
          "[sim][replication]") {
  lockstep::ScenarioError error;
  auto s = lockstep::LoadScenarioFile(
      LOCKSTEP_SOURCE_DIR "/scenarios/failover-leaked-reentry.toml", &error);
  REQUIRE(s);
  {
    // The replica has c1's key (replicated 20 ms after the acquisition, 2 s before the
    // failover): at the promotion the history says the new master holds it.
    auto run = RunOf(*s);
    int64_t promoted_at = -1;
    std::string master_owners, replica_lease;
    for (const TextEvent& e : Text(run->history())) {
      if (e.type == EventType::kFault && e.op == "promote" && promoted_at < 0) promoted_at = e.t_us;
      if (e.type != EventType::kLease) continue;
      if (e.process == "master" && master_owners.empty()) master_owners = e.detail;
      if (e.process == "replica" && replica_lease.empty()) {
        CHECK(e.t_us == promoted_at);
        replica_lease = e.op + " " + e.detail;
      }
    }
    REQUIRE(promoted_at > 0);
    REQUIRE(!master_owners.empty());
    CHECK(replica_lease == "acquired " + master_owners);
  }
  {
    // With a replication lag longer than the time to the failover the replica never got the
    // key: its holder lost the lock there, at the promotion, and nothing is acquired.
    s->replication.lag_us = lockstep::Distribution::Fixed(5'000'000);
    auto run = RunOf(*s);
    std::vector<std::string> replica_leases;
    int64_t promoted_at = -1;
    for (const TextEvent& e : Text(run->history())) {
      if (e.type == EventType::kFault && e.op == "promote" && promoted_at < 0) promoted_at = e.t_us;
      if (e.type == EventType::kLease && e.process == "replica" && e.t_us == promoted_at) {
        replica_leases.push_back(e.op);
      }
    }
    CHECK(replica_leases == std::vector<std::string>{"lost"});
  }
}
