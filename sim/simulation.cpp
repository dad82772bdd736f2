#include "sim/simulation.h"

#include <algorithm>
#include <cassert>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/random.h"
#include "core/cluster.h"
#include "core/script_host.h"
#include "drive/client.h"
#include "drive/faults.h"
#include "drive/run_notes.h"
#include "history/kinds.h"
#include "history/notes.h"
#include "locks/factory.h"
#include "locks/scripts.h"
#include "model/limits.h"
#include "sim/world.h"

namespace lockstep::sim {

using history::EventType;
using history::Name;
namespace names = history::names;

namespace {

std::string Ms(int64_t us) { return history::FormatMs(us); }

}  // namespace

// The simulation's state is its world (sim/world.h), which composes the units.
struct Simulation::Impl : World {};

// --- setup ----------------------------------------------------------------------------------

Simulation::Simulation(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Simulation::~Simulation() = default;

std::unique_ptr<Simulation> Simulation::Create(const Scenario& scenario, const std::string& lua_dir,
                                               std::string* error) {
  auto impl = std::make_unique<Impl>();
  Impl& s = *impl;
  s.scenario = scenario;
  s.end_us = scenario.duration_us;
  s.lua_dir = lua_dir;
  s.rng = Prng(scenario.seed);
  s.net_rng = s.rng.Fork();

  // The loader bounds each value; the work the values ask for together is bounded here, after
  // any overrides (--duration-ms, --time-scale) have been applied.
  if (std::optional<std::string> problem = RunBoundsProblem(scenario)) {
    *error = *problem;
    return nullptr;
  }
  s.engine.set_max_events_per_instant(kMaxEventsPerInstant);
  s.engine.set_work_bounds(kMaxRunEvents, kMaxPendingEvents);

  auto scripts = locks::LoadScripts(lua_dir, scenario.protocol.kind_name(), scenario.protocol.version,
                                    scenario.protocol.script_files, error,
                                    scenario.protocol.client);
  if (!scripts) return nullptr;
  s.scripts = std::move(*scripts);
  // Each client's own configuration (its threads, the scenario's timeouts), as StartClient will
  // make it: what the client refuses is refused here, before anything runs.
  for (size_t i = 0; i < scenario.clients.size(); ++i) {
    const locks::ClientConfig probe =
        drive::ClientConfigFor(scenario, static_cast<int>(i), "00000000-0000-0000-0000-000000000000");
    if (locks::MakeProtocol(scenario.protocol.kind_name(), probe, s.scripts, error) == nullptr) {
      *error = "client " + scenario.clients[i].name + ": " + *error;
      return nullptr;
    }
  }
  if (scenario.protocol.kind->client_program && !scenario.clients.empty()) {
    locks::ClientDeclarations d;
    const locks::ClientConfig probe =
        drive::ClientConfigFor(scenario, 0, "00000000-0000-0000-0000-000000000000");
    if (!locks::ReadClientDeclarations(probe, s.scripts, &d, error)) return nullptr;
    s.declarations = std::move(d);
  }

  // Clock jumps declared as faults belong to the clocks, which are fixed before the run.
  auto clock_of = [&](const std::string& name, const ClockSpec& own) {
    return std::make_unique<Clock>(ClockOf(scenario, name, own), scenario.start_unix_ms);
  };

  for (size_t i = 0; i < scenario.nodes.size(); ++i) {
    auto n = std::make_unique<Node>();
    n->index = static_cast<int>(i);
    n->name = scenario.nodes[i].name;
    n->spec = scenario.nodes[i];
    n->clock = clock_of(n->name, n->spec.clock);
    s.nodes.push_back(std::move(n));
  }
  if (scenario.cluster.enabled) {
    // The loader allows masters only in a cluster; every node is one, in declaration order.
    std::vector<std::string> endpoints;
    for (auto& n : s.nodes) {
      if (!n->spec.replica_of.empty()) {
        *error = "node " + n->name + " is a replica; a [cluster] has masters only";
        return nullptr;
      }
      n->cluster_node = static_cast<int>(endpoints.size());
      // What a MOVED reply names: the node's name and Redis's default port, as a node started
      // with cluster-announce-hostname <name> and cluster-preferred-endpoint-type hostname
      // would announce itself (docs/fidelity.md).
      endpoints.push_back(n->name + ":6379");
      s.cluster_nodes.push_back(n->index);
    }
    s.cluster = std::make_shared<const ClusterTopology>(ClusterTopology::Even(std::move(endpoints)));
  }
  for (auto& n : s.nodes) {
    if (!n->spec.replica_of.empty()) {
      Node* m = s.FindNode(n->spec.replica_of);
      if (m == nullptr) {
        *error = "node " + n->name + " replicates from unknown node " + n->spec.replica_of;
        return nullptr;
      }
      n->master = m->index;
      m->replicas.push_back(n->index);
    }
    s.servers.NewServer(*n);
  }
  std::vector<int> masters;
  for (auto& n : s.nodes) {
    if (n->master < 0) masters.push_back(n->index);
  }
  if (masters.empty()) {
    *error = "the scenario has no master node";
    return nullptr;
  }
  for (size_t i = 0; i < scenario.clients.size(); ++i) {
    auto c = std::make_unique<Client>();
    c->index = static_cast<int>(i);
    c->name = scenario.clients[i].name;
    c->spec = scenario.clients[i];
    c->clock = clock_of(c->name, c->spec.clock);
    c->rng = std::make_unique<Prng>(s.rng.Fork());
    c->slots = masters;
    c->uuid = drive::NewClientUuid(*c->rng);
    s.clients.push_back(std::move(c));
  }
  // Every name a message or a partition can refer to gets its endpoint: the nodes', the
  // clients' and the Sentinel's. Names shared by a node and a client (the loader refuses them)
  // would share one.
  for (auto& n : s.nodes) n->endpoint = s.network.AddEndpoint(n->name);
  for (auto& c : s.clients) c->endpoint = s.network.AddEndpoint(c->name);
  s.sentinel.set_endpoint(s.network.AddEndpoint("sentinel"));
  s.network.Connect();

  // The run's names, interned in a fixed order so that ids never depend on what runs first.
  s.lock_id = s.Intern(scenario.protocol.lock_name);
  for (auto& n : s.nodes) n->id = s.Intern(n->name);
  for (auto& c : s.clients) c->id = s.Intern(c->name);

  s.resource = std::make_unique<drive::Resource>(s.lock_id, scenario.resource.fencing);
  for (auto& c : s.clients) s.hosting.Host(*c);

  // Derived parameters, printed before anything runs.
  auto& d = s.derived;
  d.emplace_back("seed", std::to_string(scenario.seed));
  d.emplace_back("protocol", scenario.protocol.kind_name() + " " +
                                 std::string(history::VersionName(scenario.protocol.version)));
  for (const auto& [name, body] : s.scripts.bodies) {
    d.emplace_back("script " + name, ScriptHost::Sha1Hex(body) + " " + s.scripts.files[name]);
  }
  d.emplace_back("lease", drive::LeaseText(scenario.protocol, scenario.workload.lease_us));
  for (auto& n : s.nodes) {
    std::string role =
        n->master >= 0 ? "replica of " + s.nodes[static_cast<size_t>(n->master)]->name : "master";
    if (s.cluster != nullptr) role = "cluster master, slots " + s.SlotsOf(*n);
    d.emplace_back("node " + n->name, role + ", clock offset " + Ms(n->spec.clock.offset_us) +
                                          ", drift " + std::to_string(n->spec.clock.drift_ppm) +
                                          " ppm");
  }
  for (auto& c : s.clients) {
    // The loader gives roles other than worker only to kinds that have them.
    const history::RoleNote::Role note_role = static_cast<history::RoleNote::Role>(c->spec.role);
    assert(history::TakesRole(*scenario.protocol.kind,
                              history::RoleName(note_role)));
    const std::string role = c->spec.role == ClientSpec::Role::kWorker
                                 ? std::string()
                                 : ", role " + std::string(history::RoleName(note_role));
    d.emplace_back("client " + c->name, std::to_string(c->spec.threads) + " thread(s)" + role +
                                            ", uuid " + c->uuid + ", clock offset " +
                                            Ms(c->spec.clock.offset_us) +
                                            drive::OwnWorkloadText(scenario.protocol, c->spec.workload));
  }
  return std::unique_ptr<Simulation>(new Simulation(std::move(impl)));
}

void Simulation::Run(const std::function<void(TrueTime)>& progress, int64_t progress_every_us,
                     const std::function<bool()>& should_stop) {
  Impl& s = *impl_;
  {
    std::string slots;  // The cluster note's slot map; empty without [cluster].
    if (s.cluster != nullptr) {
      for (int x : s.cluster_nodes) {
        const Node& n = *s.nodes[static_cast<size_t>(x)];
        slots += (slots.empty() ? "" : " ") + n.name + "=" + s.SlotsOf(n);
      }
    }
    drive::RecordRunNotes(s.scenario, s.clients.empty() ? 0 : s.NodeCountOf(*s.clients[0]), slots,
                          KeyHashSlot(s.scenario.protocol.lock_name),
                          [&s](history::Event& e) { s.Record(e); },
                          s.declarations ? &*s.declarations : nullptr);
  }
  for (auto& c : s.clients) s.hosting.Start(*c, /*restart=*/false);
  for (const FaultSpec& f : s.scenario.faults) {
    s.engine.At(f.at_us, [&s, &f] { drive::ApplyFault(f, s.faults); });
  }
  if (s.scenario.gc.enabled) {
    for (auto& c : s.clients) {
      const auto& only = s.scenario.gc.clients;
      if (only.empty() || std::find(only.begin(), only.end(), c->name) != only.end()) {
        s.hosting.ScheduleGc(*c);
      }
    }
  }
  if (s.scenario.sentinel.enabled) s.sentinel.Start();
  s.servers.StartAof();

  const TrueTime end = s.scenario.duration_us;
  TrueTime next_report = progress_every_us;
  // A client program (the client kind) that raised an error or passed its limits ends the run
  // where it failed (World::CheckProgram), as a stall does.
  while (s.engine.now() < end) {
    const TrueTime until = std::min(end, next_report);
    if (!s.engine.RunUntil(until, should_stop ? &should_stop : nullptr)) {
      // A runaway script has said why already (stalled); else the watchdog, else a stop.
      if (s.stalled.empty() && !s.program_error.empty()) {
        s.stalled = "the run stopped at " + Ms(s.engine.now()) + " of true time: " + s.program_error;
      } else if (s.stalled.empty() && s.engine.over_bound() != 0) {
        s.stalled = "the run stopped at " + Ms(s.engine.now()) + " of true time: " +
                    (s.engine.over_bound() == 1
                         ? "more than " + std::to_string(kMaxRunEvents) +
                               " simulator events in all, lockstep's bound on one run's work"
                         : "more than " + std::to_string(kMaxPendingEvents) +
                               " events waiting at once (messages in flight and timers), "
                               "lockstep's bound on what one run holds") +
                    " (docs/scenario-format.md, \"Limits\"). Shorten duration_ms, slow the loop (think_ms, latency_ms, wait_ms), or "
                    "make the timeouts longer than the latency";
      } else if (s.stalled.empty() && s.engine.stalled()) {
        s.stalled = "the run stopped at " + Ms(s.engine.now()) + " of true time: more than " +
                    std::to_string(kMaxEventsPerInstant) +
                    " events at that one instant, so time would never advance (a loop that "
                    "never waits: zero delays, or retries at once); busiest there: " +
                    s.LoopingProcesses();
      } else if (s.stalled.empty()) {
        s.interrupted = true;
      }
      break;
    }
    if (progress && s.engine.now() < end) progress(s.engine.now());
    next_report += progress_every_us;
  }
  s.end_us = s.engine.now();
  history::Event e;
  e.type = EventType::kNote;
  e.process = names::kSim;
  e.op = names::kEnd;
  // An interrupted run says where it stopped: its end is not the scenario's.
  if (s.interrupted) e.detail = history::Text{"interrupted"};
  if (!s.stalled.empty()) e.detail = history::Text{"stalled"};
  s.Record(e);
}

history::Recorder& Simulation::recorder() { return impl_->recorder; }
uint64_t Simulation::events_run() const { return impl_->engine.events_run(); }
TrueTime Simulation::end_us() const { return impl_->end_us; }
bool Simulation::interrupted() const { return impl_->interrupted; }
const std::string& Simulation::stalled() const { return impl_->stalled; }

void Simulation::VerifyKeys() {
  impl_->recorder.AddSink(impl_->locks.StartVerifying(&impl_->recorder.names()));
}

const std::string& Simulation::verify_failure() const { return impl_->locks.verify_failure(); }
const std::vector<std::pair<std::string, std::string>>& Simulation::derived() const {
  return impl_->derived;
}

}  // namespace lockstep::sim
