// The simulated Redis nodes as servers: a client's command runs on its node's emulated Redis
// (core/), or on the node's own pub/sub and WAIT; its write effects stream to the replicas;
// a crash loses the process and a restart brings back what its persistence kept.
#ifndef LOCKSTEP_SIM_NODES_H_
#define LOCKSTEP_SIM_NODES_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/argv.h"
#include "base/clock_spec.h"
#include "core/server.h"
#include "history/fault_kinds.h"
#include "history/names.h"
#include "locks/protocol.h"
#include "sim/processes.h"

namespace lockstep::sim {

struct World;
struct Node;
struct Client;

class NodeService {
 public:
  explicit NodeService(World& w) : w_(w) {}

  // A new server process for node n (empty script cache, no subscribers).
  void NewServer(Node& n);
  // Runs client c's command on node n when it arrives (held while n is paused) and sends the
  // reply back to c's process as it was at `incarnation`. `label` names the command in the
  // history; `thread` is the client thread whose operation sent it, or -1.
  void Receive(Node& n, Client& c, uint64_t incarnation, locks::RequestId request,
               SharedArgv argv, history::Name label, int thread);

  // Replication: streams one batch of effects to every replica (the caller has counted it in
  // n.offset), and copies a master's data to a replica (a full resync).
  void Replicate(Node& n, const Effects& fx);
  void FullSync(Node& master, Node& replica);

  // A switched fault kind (history/fault_kinds.h) on node n goes on or off.
  void Switched(Node& n, history::FaultKind kind, bool on);

  // Node n became a replica (replicaof): as Redis's disconnectAllBlockedClients, its clients
  // blocked in a pop are answered -UNBLOCKED and their connections closed.
  void Demoted(Node& n);
  // Client c's process died: its connections (and their sessions) close on every node.
  void ClientGone(const Client& c);

  void Crash(Node& n);
  void Restart(Node& n);
  // AOF everysec: from now on, what each such node has written is on disk once a second.
  void StartAof();

 private:
  class PubSubBridge;
  struct Woken {
    Client* client;
    int thread;
    history::Name label;
    uint64_t incarnation;
    locks::RequestId request;
    Reply reply;
  };
  void RecordExec(const Node& n, const Client& c, int thread, history::Name label,
                  locks::RequestId request, int64_t now_ms, const Reply& reply);
  Node::ClientSession* SessionFor(Node& n, const Client& c, int thread, std::string_view command);
  std::vector<Woken> TakeWoken(Node& n);
  void SendWoken(Node& n, std::vector<Woken> woken);
  void ArmBlockTimeout(Node& n, Node::SessionKey key, uint64_t generation, int64_t now_ms);
  // A blocked session's wait ended with `reply` (its timeout, a demotion): its exec is recorded
  // and the reply sent, unless replies are being lost.
  void AnswerBlocked(Node& n, Node::SessionKey key, Node::ClientSession& cs, const Reply& reply,
                     int64_t now_ms);
  // The connection closes (Server::Disconnect): no wait, transaction or watch is left on it.
  void CloseSession(Node& n, Node::ClientSession& cs);
  void SendReply(Node& n, Client& c, uint64_t incarnation, locks::RequestId request, Reply reply);
  int64_t Acked(const Node& n, uint64_t offset) const;
  void Wait(Node& n, Client& c, uint64_t incarnation, locks::RequestId request, uint64_t offset,
            int64_t numreplicas, TrueTime deadline);
  void Pump(Node& master, int replica_index);
  void TrackReplica(Node& r, history::Name op, int64_t lag_us);
  void AofTick();

  World& w_;
};

}  // namespace lockstep::sim

#endif  // LOCKSTEP_SIM_NODES_H_
