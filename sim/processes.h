// The simulator's processes: Redis nodes and client processes, as the units of the simulator
// (sim/world.h) share them. Each field says which unit keeps it.
#ifndef LOCKSTEP_SIM_PROCESSES_H_
#define LOCKSTEP_SIM_PROCESSES_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/random.h"
#include "core/server.h"
#include "core/session.h"
#include "drive/workload.h"
#include "history/fault_kinds.h"
#include "history/names.h"
#include "locks/protocol.h"
#include "model/scenario.h"
#include "sim/engine.h"
#include "sim/mailbox.h"

namespace lockstep::sim {

// The switched fault kinds (history/fault_kinds.h) that are on for a process now.
class SwitchedFaults {
 public:
  bool on(history::FaultKind kind) const { return (bits_ >> Bit(kind)) & 1u; }
  void Set(history::FaultKind kind, bool on) {
    bits_ = on ? bits_ | (1u << Bit(kind)) : bits_ & ~(1u << Bit(kind));
  }

 private:
  static unsigned Bit(history::FaultKind kind) { return static_cast<unsigned>(kind); }
  static_assert(std::size(history::kFaultKinds) <= 32);
  uint32_t bits_ = 0;
};

struct Node {
  int index = 0;
  int endpoint = 0;  // On the network.
  std::string name;
  history::Name id = history::names::kNone;  // `name` in the run's name table.
  NodeSpec spec;
  std::unique_ptr<Clock> clock;
  std::unique_ptr<Server> server;
  bool up = true;
  Mailbox mailbox;
  int master = -1;             // Index of the node this one replicates from, or -1.
  int cluster_node = -1;       // [cluster]: this node's index in the slot map, else -1.
  std::vector<int> replicas;   // Nodes replicating from this one.
  SwitchedFaults faults;
  Keyspace aof;                // What AOF everysec has fsynced.
  // Stopped in an fsync of its AOF (aof-always) that a stalled disk does not complete: its
  // mailbox holds everything until the stall ends (NodeService::Switched).
  bool fsync_blocked = false;
  // Replication offset, counted in effect batches: on a master, the batches it produced; on a
  // replica, the batches it applied (a full resync copies its master's). WAIT and Sentinel's
  // choice of replica compare these.
  uint64_t offset = 0;

  // Pub/sub subscriptions: channel -> client indices, in subscription order.
  std::map<std::string, std::vector<int>, std::less<>> subscribers;

  // The lock key as last seen, for lease events (LockWatch).
  std::string lock_owners;
  int64_t lock_expire_ms = kNoExpiry;
  // When LockWatch last looked at the lock key on this node as a master: the server, its count
  // of write commands and the node's wall clock then. Until the count moves, a command cannot
  // have changed the key (LockWatch::Unchanged).
  struct LockSeen {
    const Server* server = nullptr;
    uint64_t writes = 0;
    int64_t at_ms = 0;
  } lock_seen;
  // On a replica: the lock key's owners as replication last left them, for replicated events.
  std::string replica_owners;

  // Per-replica replication stream (FIFO): effect batches with the true time of the write.
  struct Batch {
    std::vector<Argv> commands;
    TrueTime written_at = 0;
  };
  struct Stream {
    std::deque<Batch> batches;
    bool in_flight = false;
  };
  std::map<int, Stream> streams;

  // Client connections with a state of their own on the server (core/session.h): a client
  // thread's connection to this node gets one with its first MULTI, EXEC, DISCARD, WATCH,
  // UNWATCH, BLPOP or BRPOP, and keeps it until the node or the client process dies. Declared
  // after `server`, so that they are gone before it is.
  struct SessionKey {
    int client = 0;
    int thread = -1;  // The client thread whose operations (and their tasks) send on it.
    bool operator<(const SessionKey& o) const {
      return client != o.client ? client < o.client : thread < o.thread;
    }
  };
  struct ClientSession {
    Session session;
    // Changes whenever a wait ends or a new one starts: a timeout check armed for an older
    // wait finds another number and does nothing.
    uint64_t generation = 0;
    // While session.blocked(): the command that waits, to answer when it is served.
    uint64_t incarnation = 0;
    locks::RequestId request = 0;
    history::Name label = history::names::kNone;
    // The commands queued in the open MULTI, whose execs EXEC records with their replies.
    struct Queued {
      history::Name label;
      locks::RequestId request;
    };
    std::vector<Queued> queued;
  };
  std::map<SessionKey, std::unique_ptr<ClientSession>> sessions;
  uint64_t session_generations = 0;  // The last generation given out on this node.
};

// The engine events of a client's armed protocol timers. A client has a handful armed at once
// (command timeouts, a retry, the watchdog), so a vector searched in place beats a tree; its
// order never reaches the history.
class ArmedTimers {
 public:
  // Arming an armed timer again replaces its event, as assigning into a map would.
  void Set(locks::TimerId timer, Engine::EventId event) {
    if (auto it = Find(timer); it != armed_.end()) {
      it->second = event;
    } else {
      armed_.emplace_back(timer, event);
    }
  }
  // Forgets the timer; returns its event, if it was armed.
  std::optional<Engine::EventId> Take(locks::TimerId timer) {
    auto it = Find(timer);
    if (it == armed_.end()) return std::nullopt;
    const Engine::EventId event = it->second;
    *it = armed_.back();
    armed_.pop_back();
    return event;
  }
  using Armed = std::vector<std::pair<locks::TimerId, Engine::EventId>>;
  // Forgets every timer; returns them with their events.
  Armed TakeAll() {
    Armed taken;
    taken.swap(armed_);
    return taken;
  }

 private:
  Armed::iterator Find(locks::TimerId timer) {
    return std::find_if(armed_.begin(), armed_.end(),
                        [timer](const auto& armed) { return armed.first == timer; });
  }
  Armed armed_;
};

struct Client {
  int index = 0;
  int endpoint = 0;  // On the network.
  std::string name;
  history::Name id = history::names::kNone;
  ClientSpec spec;
  std::unique_ptr<Clock> clock;
  std::unique_ptr<Prng> rng;
  std::string uuid;
  std::unique_ptr<locks::LockProtocol> protocol;
  std::unique_ptr<locks::Outbox> outbox;
  bool up = true;
  uint64_t incarnation = 0;
  Mailbox mailbox;
  ArmedTimers timers;
  // What the process's threads do (drive/workload.h), and what it gets from the simulator.
  std::unique_ptr<drive::ClientHost> host;
  std::unique_ptr<drive::ClientWorkload> workload;
  // For each slot the protocol addresses, the node the client takes for it: slot i is the i-th
  // master of the scenario (in declaration order) until a failover moves it to a promoted
  // replica and the client rediscovers it.
  std::vector<int> slots;
};

}  // namespace lockstep::sim

#endif  // LOCKSTEP_SIM_PROCESSES_H_
