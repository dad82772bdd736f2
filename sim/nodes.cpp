#include "sim/nodes.h"

#include <algorithm>
#include <cassert>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "base/ascii.h"
#include "core/script_host.h"
#include "core/session.h"
#include "core/strings.h"
#include "history/lease_owners.h"
#include "sim/world.h"

namespace lockstep::sim {

using history::EventType;
using history::Name;
namespace names = history::names;

namespace {

constexpr int64_t kReplicationRetryUs = 100'000;  // A replica that cannot take the stream now.
constexpr int64_t kAofFsyncPeriodUs = 1'000'000;

// The source of what client `c` sends a node: its command connection, or its pub/sub
// connection for SUBSCRIBE and UNSUBSCRIBE (as Redisson and the live driver keep them).
int ConnectionOf(const Client& c, const Argv& argv) {
  const bool pubsub = !argv.empty() && (EqualsIgnoreCase(argv[0], "SUBSCRIBE") ||
                                        EqualsIgnoreCase(argv[0], "UNSUBSCRIBE"));
  return 2 * c.index + (pubsub ? 1 : 0);
}

}  // namespace

// PUBLISH from a command or script on node n: delivers to the node's subscribers.
class NodeService::PubSubBridge : public PubSubRegistry {
 public:
  PubSubBridge(World& w, Node& node) : w_(w), node_(node) {}
  int64_t Publish(std::string_view channel, std::string_view message) override {
    auto it = node_.subscribers.find(channel);
    if (it == node_.subscribers.end()) return 0;
    // One copy of the message for all the subscribers' deliveries, which outlive the command
    // (its channel's name interned once for all of them).
    const auto published = std::make_shared<const Published>(
        Published{std::string(channel), std::string(message), w_.Intern(channel)});
    // The bridge lives only while the command runs; deliveries must not refer to it.
    World* w = &w_;
    for (int index : it->second) {
      Client& c = *w->clients[static_cast<size_t>(index)];
      const uint64_t incarnation = c.incarnation;
      const int node_index = node_.index;
      w->network.Send(node_.endpoint, c.endpoint, [w, &c, incarnation, node_index, published] {
        w->hosting.Receive(c, incarnation, [w, &c, node_index, published] {
          const std::string& ch = published->channel;
          const std::string& msg = published->message;
          history::Event e;
          e.type = EventType::kMessage;
          e.process = c.id;
          e.peer = w->nodes[static_cast<size_t>(node_index)]->id;
          e.op = published->channel_id;
          e.detail = history::Text{msg};
          w->Record(e);
          c.protocol->OnMessage(*c.outbox, w->SlotOf(c, node_index), ch, msg);
          w->CheckProgram(c);
        });
      });
    }
    return static_cast<int64_t>(it->second.size());
  }

 private:
  struct Published {
    std::string channel;
    std::string message;
    Name channel_id;
  };
  World& w_;
  Node& node_;
};

void NodeService::NewServer(Node& n) {
  ServerOptions options;
  options.replica = n.master >= 0;
  options.maxmemory_bytes = static_cast<size_t>(n.spec.maxmemory_mb) << 20;
  if (w_.cluster != nullptr) {
    options.cluster = w_.cluster;
    options.cluster_node = n.cluster_node;
  }
  n.server = std::make_unique<Server>(options);
  n.server->set_pubsub(nullptr);
}

void NodeService::Receive(Node& n, Client& c, uint64_t incarnation, locks::RequestId request,
                          SharedArgv command_argv, Name label, int thread) {
  if (!n.up) return;  // Nobody listens: the client's timeout will notice.
  const int source = ConnectionOf(c, *command_argv);
  Deliver(n.mailbox, [this, &n, &c, incarnation, request, command_argv = std::move(command_argv),
                      label, thread, source] {
    if (!n.up) return;
    Engine& engine = w_.engine;
    const Argv& argv = *command_argv;
    const int64_t now_ms = n.clock->WallMs(engine.now());
    Reply reply;
    Effects fx;
    int64_t wait_replicas = -1;
    Node::ClientSession* session = nullptr;  // The connection's session, if it has one.
    bool ran_out = false;  // A script ran past its step budget (ScriptHost::last_script_ran_out).
    const std::string_view command = argv.empty() ? std::string_view() : argv[0];
    if (EqualsIgnoreCase(command, "SUBSCRIBE") && argv.size() == 2) {
      auto& subs = n.subscribers[argv[1]];
      if (std::find(subs.begin(), subs.end(), c.index) == subs.end()) subs.push_back(c.index);
      reply = Reply::Array({Reply::Bulk("subscribe"), Reply::Bulk(argv[1]), Reply::Integer(1)});
    } else if (EqualsIgnoreCase(command, "UNSUBSCRIBE") && argv.size() == 2) {
      auto& subs = n.subscribers[argv[1]];
      subs.erase(std::remove(subs.begin(), subs.end(), c.index), subs.end());
      reply = Reply::Array({Reply::Bulk("unsubscribe"), Reply::Bulk(argv[1]), Reply::Integer(0)});
    } else if (EqualsIgnoreCase(command, "WAIT") && argv.size() == 3) {
      const auto numreplicas = ParseInt64(argv[1]);
      const auto timeout_ms = ParseInt64(argv[2]);
      if (!numreplicas || !timeout_ms) {
        reply = Reply::Error(std::string(err::kNotInteger));
      } else if (*timeout_ms < 0) {
        reply = Reply::Error("ERR timeout is negative");
      } else {
        wait_replicas = *numreplicas;
        Wait(n, c, incarnation, request, n.offset, *numreplicas,
             *timeout_ms == 0 ? kNever : engine.now() + *timeout_ms * 1000);
        reply = Reply::Integer(Acked(n, n.offset));
      }
    } else {
      PubSubBridge bridge(w_, n);
      n.server->set_pubsub(&bridge);
      Node::ClientSession* cs = SessionFor(n, c, thread, command);
      if (cs == nullptr) {
        reply = n.server->Execute(argv, now_ms, &fx);
      } else {
        if (cs->session.blocked()) {
          // The thread sends again while its last command still waits: its client gave up on
          // that one (a response timeout) and, as client libraries do, closed the connection.
          CloseSession(n, *cs);
        }
        std::optional<Reply> answer = n.server->Execute(cs->session, argv, now_ms, &fx);
        if (!answer) {
          // Blocked: the exec is recorded when a push serves it or its timeout ends it.
          n.server->set_pubsub(nullptr);
          cs->generation = ++n.session_generations;
          cs->incarnation = incarnation;
          cs->request = request;
          cs->label = label;
          ArmBlockTimeout(n, {c.index, thread}, cs->generation, now_ms);
          return;
        }
        reply = std::move(*answer);
        session = cs;
      }
      n.server->set_pubsub(nullptr);
      ran_out = reply.is_error() && command.size() >= 4 &&
                EqualsIgnoreCase(command.substr(0, 4), "eval") &&
                n.server->scripts().last_script_ran_out();
    }
    // A command queued in MULTI runs at EXEC: its exec is recorded then, with its element of
    // EXEC's reply, right after EXEC's own, as the live driver records it (a checker reads an
    // unlock's reply, and +QUEUED is not the unlock's).
    const bool queued = session != nullptr && reply.type == Reply::Type::kStatus &&
                        reply.str == "QUEUED" && session->session.in_multi();
    if (queued) {
      session->queued.push_back({label, request});
    } else {
      RecordExec(n, c, thread, label, request, now_ms, reply);
    }
    if (session != nullptr && !session->session.in_multi() && !session->queued.empty()) {
      // EXEC ran them (an array, one reply each), or EXEC, DISCARD or a refusal ended the
      // transaction without running them.
      if (EqualsIgnoreCase(command, "EXEC") && reply.type == Reply::Type::kArray &&
          reply.elements.size() == session->queued.size()) {
        for (size_t i = 0; i < reply.elements.size(); ++i) {
          const auto& q = session->queued[i];
          RecordExec(n, c, thread, q.label, q.request, now_ms, reply.elements[i]);
        }
      }
      session->queued.clear();
    }
    // Blocked pops this command's writes served, in Redis's order, after the command; their
    // execs follow the command's own lease event (a checker reads the lease event right
    // after an exec as what that exec did to the lock key).
    std::vector<Woken> woken = TakeWoken(n);
    if (ran_out && w_.stalled.empty()) {
      // A script past its step budget would keep redis-server busy until SCRIPT KILL: the
      // lock service is down from here on, and each retry would burn another budget.
      w_.stalled = "the run stopped at " + history::FormatMs(engine.now()) + " of true time: " +
                   n.name + " ran " + c.name + "'s " + std::string(command) +
                   " past the script step budget (" + reply.str.substr(0, reply.str.find(';')) +
                   "); on redis-server 7.0 it would keep the server busy, answering every other "
                   "client BUSY, until SCRIPT KILL. Fix the script (the scenario's "
                   "[protocol] scripts, or --lua-dir)";
      engine.Stop();
    }
    if (!fx.commands.empty()) ++n.offset;
    // redis-server with appendfsync always fsyncs the AOF in its one thread before it writes
    // any reply or replication stream (beforeSleep): on a stalled disk it stops after this
    // write, answering nobody (Sentinel included), until the disk is back.
    const bool blocks = !fx.commands.empty() && n.faults.on(history::FaultKind::kFsyncStall) &&
                        n.spec.persistence == NodeSpec::Persistence::kAofAlways;
    if (blocks) {
      n.fsync_blocked = true;
      n.mailbox.paused = true;
    }
    if (!blocks) Replicate(n, fx);
    if (w_.locks.Unchanged(n, now_ms)) {
      assert(w_.locks.AsSeen(n));
    } else {
      w_.locks.Track(n, names::kReleased);
    }
    if (w_.locks.verifying()) {
      w_.locks.Verify(n, [&] { return c.name + "'s " + std::string(w_.recorder.names().Str(label)); });
    }
    for (const Woken& w : woken) RecordExec(n, *w.client, w.thread, w.label, w.request, now_ms, w.reply);
    const bool lost = n.faults.on(history::FaultKind::kLoseReplies);
    if (blocks) {
      // The stream and the replies go out first when the fsync returns.
      Deliver(n.mailbox, [this, &n, &c, incarnation, request, fx = std::move(fx), lost,
                          reply = std::move(reply), woken = std::move(woken)]() mutable {
        Replicate(n, fx);
        if (lost) return;
        SendReply(n, c, incarnation, request, std::move(reply));
        SendWoken(n, std::move(woken));
      }, source);
      return;
    }
    if (lost) return;
    if (wait_replicas < 0) SendReply(n, c, incarnation, request, std::move(reply));  // WAIT answers later, by itself.
    SendWoken(n, std::move(woken));
  }, source);
}

void NodeService::RecordExec(const Node& n, const Client& c, int thread, Name label,
                             locks::RequestId request, int64_t now_ms, const Reply& reply) {
  history::Event e;
  e.type = EventType::kExec;
  e.process = n.id;
  e.thread = thread;  // The client thread whose operation sent it, or -1.
  e.peer = c.id;
  e.op = label;
  e.lock = w_.lock_id;
  e.local_ms = now_ms;
  e.has_value = true;
  e.value = static_cast<int64_t>(request);
  e.detail = history::ReplyDetail{&reply};
  w_.Record(e);
}

Node::ClientSession* NodeService::SessionFor(Node& n, const Client& c, int thread,
                                             std::string_view command) {
  if (n.sessions.empty() && !NeedsSession(command)) return nullptr;
  const Node::SessionKey key{c.index, thread};
  auto it = n.sessions.find(key);
  if (it == n.sessions.end()) {
    if (!NeedsSession(command)) return nullptr;
    it = n.sessions.emplace(key, std::make_unique<Node::ClientSession>()).first;
  }
  return it->second.get();
}

// The sessions the last command's writes served, with their clients and replies: each exec is
// recorded (as the pop it is, at the time of the command that served it) and sent by SendWoken.
std::vector<NodeService::Woken> NodeService::TakeWoken(Node& n) {
  std::vector<Woken> out;
  if (n.sessions.empty()) return out;
  for (Server::Woken& w : n.server->TakeWoken()) {
    for (auto& [key, cs] : n.sessions) {
      if (&cs->session != w.session) continue;
      Client& c = *w_.clients[static_cast<size_t>(key.client)];
      cs->generation = ++n.session_generations;  // Its timeout check is void.
      out.push_back({&c, key.thread, cs->label, cs->incarnation, cs->request, std::move(w.reply)});
      break;
    }
  }
  return out;
}

void NodeService::SendWoken(Node& n, std::vector<Woken> woken) {
  for (Woken& w : woken) SendReply(n, *w.client, w.incarnation, w.request, std::move(w.reply));
}

// A blocked session's timeout: checked when the node's clock should have passed the deadline
// (Redis answers a client whose timeout is strictly in the past), through the node's mailbox,
// so that a paused node answers when it resumes; again later if the clock was slow.
void NodeService::ArmBlockTimeout(Node& n, Node::SessionKey key, uint64_t generation,
                                  int64_t now_ms) {
  const auto it = n.sessions.find(key);
  if (it == n.sessions.end()) return;
  const int64_t deadline_ms = it->second->session.block_deadline_ms();
  if (deadline_ms == Session::kNoDeadline) return;
  const int64_t delay_us = std::max<int64_t>(1, deadline_ms + 1 - now_ms) * 1000;
  Node* np = &n;
  w_.engine.After(delay_us, [this, np, key, generation] {
    Node& n = *np;
    if (!n.up) return;
    Deliver(n.mailbox, [this, np, key, generation] {
      Node& n = *np;
      const auto it = n.sessions.find(key);
      if (!n.up || it == n.sessions.end() || it->second->generation != generation) return;
      Node::ClientSession& cs = *it->second;
      const int64_t now_ms = n.clock->WallMs(w_.engine.now());
      if (!cs.session.TimedOut(now_ms)) {
        ArmBlockTimeout(n, key, generation, now_ms);
        return;
      }
      AnswerBlocked(n, key, cs, n.server->TimeOut(cs.session), now_ms);
    }, 2 * key.client);
  });
}

void NodeService::AnswerBlocked(Node& n, Node::SessionKey key, Node::ClientSession& cs,
                                const Reply& reply, int64_t now_ms) {
  cs.generation = ++n.session_generations;  // Its timeout check is void.
  Client& c = *w_.clients[static_cast<size_t>(key.client)];
  RecordExec(n, c, key.thread, cs.label, cs.request, now_ms, reply);
  if (n.faults.on(history::FaultKind::kLoseReplies)) return;
  SendReply(n, c, cs.incarnation, cs.request, reply);
}

void NodeService::CloseSession(Node& n, Node::ClientSession& cs) {
  n.server->Disconnect(cs.session);  // Ends a wait, a transaction and the watches.
  cs.generation = ++n.session_generations;
  cs.queued.clear();
}

void NodeService::Demoted(Node& n) {
  if (!n.up) return;
  const int64_t now_ms = n.clock->WallMs(w_.engine.now());
  for (auto& [key, cs] : n.sessions) {
    if (!cs->session.blocked()) continue;
    CloseSession(n, *cs);  // CLIENT_CLOSE_AFTER_REPLY.
    AnswerBlocked(n, key, *cs,
                  Reply::Error("UNBLOCKED force unblock from blocking operation, instance state "
                               "changed (master -> replica?)"),
                  now_ms);
  }
}

void NodeService::ClientGone(const Client& c) {
  for (auto& np : w_.nodes) {
    Node& n = *np;
    for (auto it = n.sessions.begin(); it != n.sessions.end();) {
      if (it->first.client == c.index) {
        it = n.sessions.erase(it);  // ~Session: the server forgets the connection.
      } else {
        ++it;
      }
    }
  }
}

// Sends node n's reply to `request` back to client c's process as it was at `incarnation`.
// The reply travels boxed: the delivery's closure moves through the network, the engine and
// the client's mailbox, and a pointer moves for less than a Reply (a duplicated message
// shares the box).
void NodeService::SendReply(Node& n, Client& c, uint64_t incarnation, locks::RequestId request,
                            Reply reply) {
  auto boxed = std::make_shared<const Reply>(std::move(reply));
  World* w = &w_;
  auto deliver = [w, &c, incarnation, request, boxed = std::move(boxed)]() mutable {
    w->hosting.Receive(c, incarnation, [w, &c, request, boxed = std::move(boxed)] {
      c.protocol->OnReply(*c.outbox, request, *boxed);
      w->CheckProgram(c);
    });
  };
  w_.network.Send(n.endpoint, c.endpoint, std::move(deliver));
}

// How many replicas of n have applied everything up to `offset`.
int64_t NodeService::Acked(const Node& n, uint64_t offset) const {
  int64_t count = 0;
  for (int x : n.replicas) {
    const Node& r = *w_.nodes[static_cast<size_t>(x)];
    if (r.up && r.offset >= offset) ++count;
  }
  return count;
}

// WAIT numreplicas timeout: answers when enough replicas have acknowledged the writes made so
// far, or at the timeout (0: never), with the number that have. Polled every millisecond of
// true time, about as often as replicas send REPLCONF ACK when asked.
void NodeService::Wait(Node& n, Client& c, uint64_t incarnation, locks::RequestId request,
                       uint64_t offset, int64_t numreplicas, TrueTime deadline) {
  const int64_t acked = Acked(n, offset);
  if (acked >= numreplicas || w_.engine.now() >= deadline || !n.up) {
    if (!n.up || n.faults.on(history::FaultKind::kLoseReplies)) return;
    SendReply(n, c, incarnation, request, Reply::Integer(acked));
    return;
  }
  Node* np = &n;
  Client* cp = &c;
  w_.engine.After(1000, [this, np, cp, incarnation, request, offset, numreplicas, deadline] {
    Wait(*np, *cp, incarnation, request, offset, numreplicas, deadline);
  });
}

void NodeService::Replicate(Node& n, const Effects& fx) {
  if (fx.commands.empty()) return;
  for (int r : n.replicas) {
    Node::Stream& s = n.streams[r];
    s.batches.push_back({fx.commands, w_.engine.now()});
    Pump(n, r);
  }
}

void NodeService::Pump(Node& master, int replica_index) {
  Node::Stream& s = master.streams[replica_index];
  if (s.in_flight || s.batches.empty()) return;
  s.in_flight = true;
  const int64_t lag = w_.scenario.replication.lag_us.Sample(w_.net_rng);
  Node* mp = &master;
  w_.engine.After(lag, [this, mp, replica_index] {
    Node& m = *mp;
    Node& r = *w_.nodes[static_cast<size_t>(replica_index)];
    Node::Stream& stream = m.streams[replica_index];
    stream.in_flight = false;
    if (r.master != m.index) {  // Topology changed: this stream is gone.
      stream.batches.clear();
      return;
    }
    if (!m.up || !r.up) {  // Whoever comes back resyncs in full.
      stream.batches.clear();
      return;
    }
    if (w_.network.Blocked(m.endpoint, r.endpoint)) {  // The backlog waits for the link to heal.
      stream.in_flight = true;
      w_.engine.After(kReplicationRetryUs, [this, mp, replica_index] {
        mp->streams[replica_index].in_flight = false;
        Pump(*mp, replica_index);
      });
      return;
    }
    if (stream.batches.empty()) return;  // A full resync replaced the stream meanwhile.
    Node::Batch batch = std::move(stream.batches.front());
    stream.batches.pop_front();
    Deliver(r.mailbox, [this, &r, batch = std::move(batch)] {
      const int64_t now_ms = r.clock->WallMs(w_.engine.now());
      Effects forwarded;
      for (const Argv& cmd : batch.commands) r.server->ExecuteReplicated(cmd, now_ms, &forwarded);
      ++r.offset;
      Replicate(r, forwarded);
      w_.locks.Track(r, names::kReleased);
      TrackReplica(r, names::kApplied, w_.engine.now() - batch.written_at);
    }, Mailbox::kReplicationSource);
    Pump(m, replica_index);
  });
}

void NodeService::FullSync(Node& master, Node& replica) {
  replica.server->keyspace() = master.server->keyspace();
  // The replica's old data is flushed (signalFlushedDb): its watchers see every key touched.
  if (replica.server->has_watched_keys()) replica.server->TouchAllWatchedKeys();
  replica.offset = master.offset;
  master.streams[replica.index] = {};
  TrackReplica(replica, names::kResynced, 0);
}

// Replicated events: the lock key's owners on a replica, when replication changed them, and
// every full resync (the replica's data replaced, its master perhaps a new one). The replica's
// own clock does not expire the key (a replica waits for its master's DEL).
void NodeService::TrackReplica(Node& r, Name op, int64_t lag_us) {
  if (r.master < 0) return;
  const Entry* e = r.server->keyspace().Find(w_.scenario.protocol.lock_name);
  const bool same =
      e != nullptr ? history::OwnersAre(*e, r.replica_owners) : r.replica_owners.empty();
  if (same && op != names::kResynced) return;
  r.replica_owners = e != nullptr ? history::OwnersOf(*e) : std::string();
  history::Event ev;
  ev.type = EventType::kReplicated;
  ev.process = r.id;
  ev.peer = w_.nodes[static_cast<size_t>(r.master)]->id;
  ev.op = op;
  ev.lock = w_.lock_id;
  ev.local_ms = r.clock->WallMs(w_.engine.now());
  ev.has_value = true;
  ev.value = lag_us;
  if (!r.replica_owners.empty()) ev.detail = history::Owners{r.replica_owners};
  w_.Record(ev);
}

void NodeService::Switched(Node& n, history::FaultKind kind, bool on) {
  n.faults.Set(kind, on);
  if (kind == history::FaultKind::kFsyncStall && !on && n.fsync_blocked) {
    n.fsync_blocked = false;  // The fsync returns: the node goes on where it stopped.
    Resume(n.mailbox);
  }
}

void NodeService::Crash(Node& n) {
  if (!n.up) return;
  n.up = false;
  n.mailbox = Mailbox{};
  n.fsync_blocked = false;
  n.subscribers.clear();     // Connections die with the process.
  n.sessions.clear();
  n.replica_owners.clear();  // A restarted replica's first resync says what it has.
}

void NodeService::Restart(Node& n) {
  if (n.up) return;
  Keyspace kept;
  switch (n.spec.persistence) {
    case NodeSpec::Persistence::kNone: break;
    case NodeSpec::Persistence::kAofEverySec: kept = n.aof; break;
    case NodeSpec::Persistence::kAofAlways: kept = n.server->keyspace(); break;
  }
  NewServer(n);  // A new process: empty script cache, no subscribers.
  n.server->keyspace() = std::move(kept);
  n.up = true;
  if (n.master >= 0) {
    Node& m = *w_.nodes[static_cast<size_t>(n.master)];
    if (m.up) FullSync(m, n);
  }
  w_.locks.Track(n, names::kLost);
  if (w_.locks.verifying()) w_.locks.Verify(n, [] { return "its restart"; });
}

void NodeService::StartAof() {
  w_.engine.After(kAofFsyncPeriodUs, [this] { AofTick(); });
}

void NodeService::AofTick() {
  for (auto& n : w_.nodes) {
    // A stalled disk completes no fsync: the last one's data is what a crash keeps.
    if (n->up && n->spec.persistence == NodeSpec::Persistence::kAofEverySec &&
        !n->mailbox.paused && !n->faults.on(history::FaultKind::kFsyncStall)) {
      n->aof = n->server->keyspace();
    }
  }
  w_.engine.After(kAofFsyncPeriodUs, [this] { AofTick(); });
}

}  // namespace lockstep::sim
