// What the simulator's units share: the scenario, the engine and its PRNGs, the recorder, the
// processes, and the units themselves, each with its own state behind a narrow interface:
//   Network        links, latencies, partitions and network windows (sim/network.h);
//   NodeService    the nodes' commands, pub/sub, WAIT, replication, crash and restart
//                  (sim/nodes.h);
//   LockWatch      the lease events and the verification mode (sim/lock_watch.h);
//   Sentinel       failover (sim/sentinel.h);
//   ClientHosting  the client processes, their protocols, workloads and timers (sim/clients.h);
//   SimFaultTarget the fault schedule's primitives (sim/fault_target.h).
// The simulation (sim/simulation.cpp) builds the world from a scenario and runs it.
#ifndef LOCKSTEP_SIM_WORLD_H_
#define LOCKSTEP_SIM_WORLD_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/random.h"
#include "core/cluster.h"
#include "drive/resource.h"
#include "history/history.h"
#include "history/names.h"
#include "locks/client/client_program.h"
#include "locks/scripts.h"
#include "model/scenario.h"
#include "sim/clients.h"
#include "sim/engine.h"
#include "sim/fault_target.h"
#include "sim/lock_watch.h"
#include "sim/network.h"
#include "sim/nodes.h"
#include "sim/processes.h"
#include "sim/sentinel.h"

namespace lockstep::sim {

struct World {
  Scenario scenario;
  std::string lua_dir;
  locks::ScriptSet scripts;
  // A client program's declarations (the client kind), for the protocol note.
  std::optional<locks::ClientDeclarations> declarations;
  Engine engine;
  Prng rng{1};
  Prng net_rng{2};
  history::Recorder recorder;
  history::Name lock_id = history::names::kNone;  // The scenario's lock name.
  bool interrupted = false;
  // Why the run stopped early as bad input, or empty: a script ran past its step budget, or
  // the progress watchdog found a loop that never lets time advance.
  std::string stalled;
  // The first client program (the client kind) that failed, with its error: it stops the run.
  std::string program_error;
  // Stops the run if c's program has failed (an error, a limit passed); true if it has.
  // Called after every delivery to a client: a run of a built-in kind (no declarations) never
  // asks its protocol.
  bool CheckProgram(const Client& c) {
    if (!declarations) return false;
    if (!program_error.empty()) return true;
    if (c.protocol == nullptr) return false;
    std::string e = c.protocol->ProgramError();
    if (e.empty()) return false;
    program_error = "client " + c.name + "'s program failed: " + e;
    engine.Stop();
    return true;
  }
  TrueTime end_us = 0;
  std::vector<std::pair<std::string, std::string>> derived;
  std::vector<std::unique_ptr<Node>> nodes;
  std::vector<std::unique_ptr<Client>> clients;
  // [cluster]: the slot map every node and client shares, and for each of its nodes the index
  // in `nodes` (the masters, in declaration order). Null for independent masters.
  std::shared_ptr<const ClusterTopology> cluster;
  std::vector<int> cluster_nodes;
  // The protected resource every client's critical sections write to.
  std::unique_ptr<drive::Resource> resource;

  Network network{scenario.network, engine, net_rng};
  NodeService servers{*this};
  LockWatch locks{*this};
  Sentinel sentinel{*this};
  ClientHosting hosting{*this};
  SimFaultTarget faults{*this};

  // Appends an event at the current true time.
  void Record(history::Event& e) {
    e.t_us = engine.now();
    if (Looping()) ++loop_tally[{e.process, e.thread}];
    recorder.Append(e);
  }
  history::Name Intern(std::string_view s) { return recorder.names().Intern(s); }
  Node* FindNode(const std::string& name) const;
  Client* FindClient(const std::string& name) const;

  // [cluster]: the master a client sends a command to, as a cluster client (Redisson's
  // cluster connection manager) picks it from the slot map: the node serving the slot of the
  // command's first key; for SUBSCRIBE, UNSUBSCRIBE and PUBLISH, of the channel's name (the
  // connection Redisson opens for a channel); the first master for any other command without
  // keys. Clients know the slot map from the start, so no command is ever redirected (MOVED).
  int ClusterRoute(const Argv& argv) const;
  // The protocol's slot for a node (messages from a node the client does not address go to
  // slot 0's handler, which ignores channels it did not subscribe to).
  int SlotOf(const Client& c, int node_index) const;
  // How many nodes a protocol addresses: the masters, or one cluster.
  int NodeCountOf(const Client& c) const {
    return cluster != nullptr ? 1 : static_cast<int>(c.slots.size());
  }
  // "0-5460": the slots a cluster node serves.
  std::string SlotsOf(const Node& n) const;

  // --- the progress watchdog ---

  // Who acts in a loop that does not let time advance: once half the engine's limit of events
  // at one instant has run, each process's recorded events and handled work at that instant
  // are counted (by process and thread; -1 for none), for the message that ends the run. Until
  // then nothing is counted, so a healthy run pays one comparison per event.
  std::map<std::pair<history::Name, int>, uint64_t> loop_tally;
  TrueTime loop_tally_at = -1;
  bool Looping();
  // "c1 thread 0 (41000 events), n1 (20500)": the busiest at the instant the run stalled.
  std::string LoopingProcesses();
};

template <typename Work>
void ClientHosting::Receive(Client& c, uint64_t incarnation, Work work) {
  if (!c.up || c.incarnation != incarnation) return;
  Deliver(c.mailbox, [this, &c, incarnation, work = std::move(work)]() mutable {
    if (!c.up || c.incarnation != incarnation) return;
    if (w_.Looping()) ++w_.loop_tally[{c.id, -1}];
    work();
  });
}

template <typename Work>
Engine::EventId ClientHosting::Timer(Client& c, int64_t delay_us, Work work) {
  const uint64_t incarnation = c.incarnation;
  const TrueTime at = c.clock->AfterMono(w_.engine.now(), delay_us);
  return w_.engine.At(at == kNever ? w_.engine.now() + delay_us : at,
                      [this, &c, incarnation, work = std::move(work)]() mutable {
                        Receive(c, incarnation, std::move(work));
                      });
}

}  // namespace lockstep::sim

#endif  // LOCKSTEP_SIM_WORLD_H_
