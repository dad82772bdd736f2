#include "sim/simulation.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cctype>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include "base/ascii.h"
#include "base/clock.h"
#include "core/cluster.h"
#include "core/script_host.h"
#include "core/server.h"
#include "core/strings.h"
#include "drive/client.h"
#include "drive/faults.h"
#include "drive/named.h"
#include "drive/resource.h"
#include "drive/run_notes.h"
#include "drive/workload.h"
#include "history/kinds.h"
#include "history/facts.h"
#include "history/lease_owners.h"
#include "history/notes.h"
#include "locks/factory.h"
#include "locks/scripts.h"
#include "model/limits.h"
#include "sim/engine.h"
#include "sim/verify.h"
#include "base/random.h"

namespace lockstep::sim {

using history::EventType;
using history::Name;
namespace names = history::names;

namespace {

constexpr int64_t kReplicationRetryUs = 100'000;  // A replica that cannot take the stream now.
constexpr int64_t kSentinelPeriodUs = 100'000;
constexpr int64_t kAofFsyncPeriodUs = 1'000'000;

std::string Ms(int64_t us) { return history::FormatMs(us); }

}  // namespace

// --- processes ------------------------------------------------------------------------------

struct Node;
struct Client;

// Work a paused process will do when it resumes. Each piece names where it came from: a client
// process has one source (its work runs in arrival order); a node has one per connection and
// its own (see Impl::Resume).
struct Mailbox {
  // A node's own work (active expiry), which redis-server does after its connections' input.
  static constexpr int kOwnWork = -1;
  struct Held {
    int source = 0;
    Callback work;
  };
  bool paused = false;
  uint64_t pause = 0;  // While paused: the pause's number (FaultTarget::Pause).
  std::deque<Held> held;
};

struct Node {
  int index = 0;
  int endpoint = 0;  // On the network (Simulation::Impl::endpoints).
  std::string name;
  Name id = names::kNone;  // `name` in the run's name table.
  NodeSpec spec;
  std::unique_ptr<Clock> clock;
  std::unique_ptr<Server> server;
  bool up = true;
  Mailbox mailbox;
  int master = -1;             // Index of the node this one replicates from, or -1.
  int cluster_node = -1;       // [cluster]: this node's index in the slot map, else -1.
  std::vector<int> replicas;   // Nodes replicating from this one.
  bool lose_replies = false;
  Keyspace aof;                // What AOF everysec has fsynced.
  // Replication offset, counted in effect batches: on a master, the batches it produced; on a
  // replica, the batches it applied (a full resync copies its master's). WAIT and Sentinel's
  // choice of replica compare these.
  uint64_t offset = 0;

  // Pub/sub subscriptions: channel -> client indices, in subscription order.
  std::map<std::string, std::vector<int>, std::less<>> subscribers;

  // The lock key as last seen, for lease events.
  std::string lock_owners;
  int64_t lock_expire_ms = kNoExpiry;
  // When TrackLock last looked at the lock key on this node as a master: the server, its count
  // of write commands and the node's wall clock then. Until the count moves, a command cannot
  // have changed the key (LockUnchanged).
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
  int endpoint = 0;  // On the network (Simulation::Impl::endpoints).
  std::string name;
  Name id = names::kNone;
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

struct Simulation::Impl {
  Scenario scenario;
  std::string lua_dir;
  locks::ScriptSet scripts;
  Engine engine;
  Prng rng{1};
  Prng net_rng{2};
  history::Recorder recorder;
  Name lock_id = names::kNone;  // The scenario's lock name.
  bool interrupted = false;
  // Why the run stopped early as bad input, or empty: a script ran past its step budget, or
  // the progress watchdog found a loop that never lets time advance.
  std::string stalled;
  // The verification mode (sim/verify.h): a facts pass of its own, fed as events are recorded,
  // held against each master's lock key after every command; the first difference, or empty.
  std::unique_ptr<history::FactsPass> verify_facts;
  std::string verify_failure;
  TrueTime end_us = 0;
  std::vector<std::pair<std::string, std::string>> derived;
  std::vector<std::unique_ptr<Node>> nodes;
  std::vector<std::unique_ptr<Client>> clients;

  // [cluster]: the slot map every node and client shares, and for each of its nodes the index
  // in `nodes` (the masters, in declaration order). Null for independent masters.
  std::shared_ptr<const ClusterTopology> cluster;
  std::vector<int> cluster_nodes;

  // The network knows each process by its endpoint, a number given at setup to every distinct
  // name a message or a partition can refer to: the nodes', the clients' and the Sentinel's.
  // A message's link is then an index into the tables below, never a lookup by name.
  std::map<std::string, int, std::less<>> endpoints;
  int sentinel_endpoint = -1;
  size_t Link(int from, int to) const {
    return static_cast<size_t>(from) * endpoints.size() + static_cast<size_t>(to);
  }
  std::vector<const Distribution*> link_latency;  // By Link(): an override or the default.
  std::vector<TrueTime> last_arrival;             // By Link(): FIFO per link.

  struct Partition {
    std::vector<bool> a, b;  // By endpoint: which side each process is on, if any.
    bool one_way = false;
    bool active = false;
  };
  std::vector<Partition> partitions;

  // Latency, loss and duplicate faults: while a window is active it applies to every message
  // sent on a link with one end in `a` and, unless `every_peer`, the other end in `b`.
  struct NetworkWindow {
    FaultSpec::Kind kind = FaultSpec::Kind::kLatency;
    std::vector<bool> a, b;  // By endpoint: the targets, the peers.
    bool every_peer = true;  // No peers given: every link of a target.
    int64_t extra_us = 0;    // kLatency
    double rate = 0;         // kLoss, kDuplicate
    bool active = false;
  };
  std::vector<NetworkWindow> windows;
  int windows_active = 0;  // Send looks at the windows only while one is active.

  // The protected resource every client's critical sections write to.
  std::unique_ptr<drive::Resource> resource;

  // Sentinel: when each master was first seen down.
  std::map<int, TrueTime> down_since;

  // --- history ---

  void Record(history::Event& e) {
    e.t_us = engine.now();
    if (Looping()) ++loop_tally[{e.process, e.thread}];
    recorder.Append(e);
  }

  // --- the progress watchdog ---

  // Who acts in a loop that does not let time advance: once half the engine's limit of events
  // at one instant has run, each process's recorded events and handled work at that instant
  // are counted (by process and thread; -1 for none), for the message that ends the run. Until
  // then nothing is counted, so a healthy run pays one comparison per event.
  std::map<std::pair<Name, int>, uint64_t> loop_tally;
  TrueTime loop_tally_at = -1;
  bool Looping() {
    if (engine.events_at_now() <= kMaxEventsPerInstant / 2) return false;
    if (loop_tally_at != engine.now()) {
      loop_tally.clear();
      loop_tally_at = engine.now();
    }
    return true;
  }

  // "c1 thread 0 (41000 events), n1 (20500)": the busiest at the instant the run stalled.
  std::string LoopingProcesses() {
    std::vector<std::pair<uint64_t, std::pair<Name, int>>> busiest;
    for (const auto& [who, count] : loop_tally) busiest.push_back({count, who});
    std::sort(busiest.begin(), busiest.end(), [](const auto& a, const auto& b) {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    });
    std::string out;
    for (size_t i = 0; i < busiest.size() && i < 6; ++i) {
      const auto& [count, who] = busiest[i];
      out += (out.empty() ? "" : ", ") + std::string(recorder.names().Str(who.first));
      if (who.second >= 0) out += " thread " + std::to_string(who.second);
      out += " (" + std::to_string(count) + (i == 0 ? " events)" : ")");
    }
    if (busiest.size() > 6) out += ", and " + std::to_string(busiest.size() - 6) + " more";
    return out.empty() ? "no process recorded anything (timers only)" : out;
  }
  void Fault(Name process, Name op, const history::Detail& detail, int64_t value = 0,
             bool has_value = false) {
    history::Event e;
    e.type = EventType::kFault;
    e.process = process;
    e.op = op;
    e.detail = detail;
    e.has_value = has_value;
    e.value = value;
    Record(e);
  }
  Name Intern(std::string_view s) { return recorder.names().Intern(s); }

  // --- network ---

  // Gives every name its endpoint and every link its latency distribution. Names shared by a
  // node and a client (the loader refuses them) would share one endpoint, as they shared the
  // name-keyed tables before.
  void SetUpNetwork() {
    auto add = [&](const std::string& name) {
      return endpoints.emplace(name, static_cast<int>(endpoints.size())).first->second;
    };
    for (auto& n : nodes) n->endpoint = add(n->name);
    for (auto& c : clients) c->endpoint = add(c->name);
    sentinel_endpoint = add("sentinel");
    const size_t count = endpoints.size();
    link_latency.assign(count * count, &scenario.network.latency_us);
    last_arrival.assign(count * count, 0);
    for (const auto& [from, from_endpoint] : endpoints) {
      for (const auto& [to, to_endpoint] : endpoints) {
        const auto it = scenario.network.link_latency_us.find(from + "->" + to);
        if (it != scenario.network.link_latency_us.end()) {
          link_latency[Link(from_endpoint, to_endpoint)] = &it->second;
        }
      }
    }
  }

  // The endpoints of the names listed, as a partition side. A name that is no endpoint can
  // never be the end of a message, so it is left out.
  std::vector<bool> Side(const std::vector<std::string>& names) const {
    std::vector<bool> side(endpoints.size(), false);
    for (const std::string& name : names) {
      if (auto it = endpoints.find(name); it != endpoints.end()) {
        side[static_cast<size_t>(it->second)] = true;
      }
    }
    return side;
  }

  bool Blocked(int from, int to) const {
    const auto f = static_cast<size_t>(from), t = static_cast<size_t>(to);
    for (const Partition& p : partitions) {
      if (!p.active) continue;
      if (p.a[f] && p.b[t]) return true;
      if (!p.one_way && p.b[f] && p.a[t]) return true;
    }
    return false;
  }

  bool Applies(const NetworkWindow& w, int from, int to) const {
    const auto f = static_cast<size_t>(from), t = static_cast<size_t>(to);
    if (!w.active) return false;
    if (w.every_peer) return w.a[f] || w.a[t];
    return (w.a[f] && w.b[t]) || (w.b[f] && w.a[t]);
  }

  int64_t Latency(int from, int to) {
    // At least a microsecond: a reply never arrives at the instant it was asked for, or a
    // client that retries "at once" (PTTL 0) would spin without time moving.
    return std::max<int64_t>(1, link_latency[Link(from, to)]->Sample(net_rng));
  }

  // Delivers `deliver` at endpoint `to` after the link's latency, unless the message is lost
  // or a partition cuts the link when it is sent or when it arrives. `deliver` is a closure
  // that owns the message; a duplicated message is delivered by a copy of it.
  //
  // A network window active when the message is sent adds its latency, or drops or duplicates
  // it with its rate. Windows draw from net_rng only for the messages they apply to, so that a
  // scenario without them draws exactly what it drew before they existed.
  template <typename Deliver>
  void Send(int from, int to, Deliver deliver) {
    if (Blocked(from, to)) return;
    if (net_rng.Bernoulli(scenario.network.loss)) return;
    bool duplicated = net_rng.Bernoulli(scenario.network.duplicate);
    int64_t extra_us = 0;
    if (windows_active > 0) {
      for (const NetworkWindow& w : windows) {
        if (!Applies(w, from, to)) continue;
        switch (w.kind) {
          case FaultSpec::Kind::kLatency: extra_us += w.extra_us; break;
          case FaultSpec::Kind::kLoss:
            if (net_rng.Bernoulli(w.rate)) return;
            break;
          case FaultSpec::Kind::kDuplicate:
            if (net_rng.Bernoulli(w.rate)) duplicated = true;
            break;
          default: assert(false && "only network faults make windows");
        }
      }
    }
    assert(extra_us >= 0);
    const int copies = duplicated ? 2 : 1;
    for (int i = 0; i < copies; ++i) {
      TrueTime at = engine.now() + Latency(from, to) + extra_us;
      if (!scenario.network.reorder) {
        // TCP: a connection delivers in order, so a message never overtakes an earlier one.
        TrueTime& last = last_arrival[Link(from, to)];
        at = std::max(at, last);
        last = at;
      }
      if (i + 1 < copies) {
        Arrive(at, from, to, Deliver(deliver));
      } else {
        Arrive(at, from, to, std::move(deliver));
      }
    }
  }
  template <typename Deliver>
  void Arrive(TrueTime at, int from, int to, Deliver deliver) {
    engine.At(at, [this, from, to, deliver = std::move(deliver)]() mutable {
      if (Blocked(from, to)) return;
      deliver();
    });
  }

  // --- mailboxes (pause) ---

  // Runs `work` now, or holds it until the process resumes; `source` is where it came from
  // (Mailbox).
  template <typename Work>
  static void Deliver(Mailbox& box, Work work, int source = 0) {
    if (box.paused) {
      box.held.push_back(Mailbox::Held{source, Callback(std::move(work))});
      return;
    }
    work();
  }
  // Runs what was held, source by source: each source's work in arrival order, the sources in
  // the order their first work arrived, the process's own work (kOwnWork) last. That is how a
  // redis-server resumes after SIGSTOP: epoll reports its connections in the order they became
  // readable, it runs every command buffered on one connection before it reads the next
  // (processInputBuffer), and its timers (active expiry) come after the file events. A client
  // process has one source, so its work runs in arrival order.
  static void Resume(Mailbox& box) {
    box.paused = false;
    std::map<int, size_t> rank;  // Source -> the order its first work arrived.
    for (const Mailbox::Held& h : box.held) {
      rank.emplace(h.source, h.source == Mailbox::kOwnWork ? SIZE_MAX : rank.size());
    }
    std::stable_sort(box.held.begin(), box.held.end(),
                     [&rank](const Mailbox::Held& a, const Mailbox::Held& b) {
                       return rank.at(a.source) < rank.at(b.source);
                     });
    // Work delivered while resuming may pause again (a new GC pause): stop there.
    while (!box.held.empty() && !box.paused) {
      Callback work = std::move(box.held.front().work);
      box.held.pop_front();
      work();
    }
  }
  // The source of what client `c` sends a node: its command connection, or its pub/sub
  // connection for SUBSCRIBE and UNSUBSCRIBE (as Redisson and the live driver keep them).
  static int ConnectionOf(const Client& c, const Argv& argv) {
    const bool pubsub = !argv.empty() && (EqualsIgnoreCase(argv[0], "SUBSCRIBE") ||
                                          EqualsIgnoreCase(argv[0], "UNSUBSCRIBE"));
    return 2 * c.index + (pubsub ? 1 : 0);
  }
  // The source of a replica's stream from its master (one connection).
  static constexpr int kReplicationSource = -2;

  // --- nodes ---

  Node* FindNode(const std::string& name) const { return drive::FindNamed(nodes, name); }
  Client* FindClient(const std::string& name) const { return drive::FindNamed(clients, name); }

  void NewServer(Node& n) {
    ServerOptions options;
    options.replica = n.master >= 0;
    options.maxmemory_bytes = static_cast<size_t>(n.spec.maxmemory_mb) << 20;
    if (cluster != nullptr) {
      options.cluster = cluster;
      options.cluster_node = n.cluster_node;
    }
    n.server = std::make_unique<Server>(options);
    n.server->set_pubsub(nullptr);
  }

  // Runs a client's command on a node and sends the reply back.
  void NodeReceive(Node& n, Client& c, uint64_t incarnation, locks::RequestId request,
                   SharedArgv command_argv, Name label, int thread) {
    if (!n.up) return;  // Nobody listens: the client's timeout will notice.
    const int source = ConnectionOf(c, *command_argv);
    Deliver(n.mailbox, [this, &n, &c, incarnation, request, command_argv = std::move(command_argv),
                        label, thread] {
      if (!n.up) return;
      const Argv& argv = *command_argv;
      const int64_t now_ms = n.clock->WallMs(engine.now());
      Reply reply;
      Effects fx;
      int64_t wait_replicas = -1;
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
        PubSubBridge bridge(*this, n);
        n.server->set_pubsub(&bridge);
        reply = n.server->Execute(argv, now_ms, &fx);
        n.server->set_pubsub(nullptr);
        ran_out = reply.is_error() && command.size() >= 4 &&
                  EqualsIgnoreCase(command.substr(0, 4), "eval") &&
                  n.server->scripts().last_script_ran_out();
      }
      history::Event e;
      e.type = EventType::kExec;
      e.process = n.id;
      e.thread = thread;  // The client thread whose operation sent it, or -1.
      e.peer = c.id;
      e.op = label;
      e.lock = lock_id;
      e.local_ms = now_ms;
      e.has_value = true;
      e.value = static_cast<int64_t>(request);
      e.detail = history::ReplyDetail{&reply};
      Record(e);
      if (ran_out && stalled.empty()) {
        // A script past its step budget would keep redis-server busy until SCRIPT KILL: the
        // lock service is down from here on, and each retry would burn another budget.
        stalled = "the run stopped at " + Ms(engine.now()) + " of true time: " + n.name +
                  " ran " + c.name + "'s " + std::string(command) +
                  " past the script step budget (" + reply.str.substr(0, reply.str.find(';')) +
                  "); on redis-server 7.0 it would keep the server busy, answering every other "
                  "client BUSY, until SCRIPT KILL. Fix the script (the scenario's "
                  "[protocol] scripts, or --lua-dir)";
        engine.Stop();
      }
      if (!fx.commands.empty()) ++n.offset;
      Replicate(n, fx);
      if (LockUnchanged(n, now_ms)) {
        assert(LockAsSeen(n));
      } else {
        TrackLock(n, names::kReleased);
      }
      if (verify_facts) {
        VerifyKey(n, [&] { return c.name + "'s " + std::string(recorder.names().Str(label)); });
      }
      if (wait_replicas >= 0) return;  // WAIT answers later, by itself.
      if (n.lose_replies) return;
      SendReply(n, c, incarnation, request, std::move(reply));
    }, source);
  }

  // Sends node n's reply to `request` back to client c's process as it was at `incarnation`.
  // The reply travels boxed: the delivery's closure moves through the network, the engine and
  // the client's mailbox, and a pointer moves for less than a Reply (a duplicated message
  // shares the box).
  void SendReply(Node& n, Client& c, uint64_t incarnation, locks::RequestId request, Reply reply) {
    auto boxed = std::make_shared<const Reply>(std::move(reply));
    auto deliver = [this, &c, incarnation, request, boxed = std::move(boxed)]() mutable {
      ClientReceive(c, incarnation, [&c, request, boxed = std::move(boxed)] {
        c.protocol->OnReply(*c.outbox, request, *boxed);
      });
    };
    Send(n.endpoint, c.endpoint, std::move(deliver));
  }

  // How many replicas of n have applied everything up to `offset`.
  int64_t Acked(const Node& n, uint64_t offset) const {
    int64_t count = 0;
    for (int x : n.replicas) {
      const Node& r = *nodes[static_cast<size_t>(x)];
      if (r.up && r.offset >= offset) ++count;
    }
    return count;
  }

  // WAIT numreplicas timeout: answers when enough replicas have acknowledged the writes made
  // so far, or at the timeout (0: never), with the number that have. Polled every
  // millisecond of true time, about as often as replicas send REPLCONF ACK when asked.
  void Wait(Node& n, Client& c, uint64_t incarnation, locks::RequestId request, uint64_t offset,
            int64_t numreplicas, TrueTime deadline) {
    const int64_t acked = Acked(n, offset);
    if (acked >= numreplicas || engine.now() >= deadline || !n.up) {
      if (!n.up || n.lose_replies) return;
      SendReply(n, c, incarnation, request, Reply::Integer(acked));
      return;
    }
    Node* np = &n;
    Client* cp = &c;
    engine.After(1000, [this, np, cp, incarnation, request, offset, numreplicas, deadline] {
      Wait(*np, *cp, incarnation, request, offset, numreplicas, deadline);
    });
  }

  // PUBLISH from a command or script on node n: delivers to the node's subscribers.
  class PubSubBridge : public PubSubRegistry {
   public:
    PubSubBridge(Impl& impl, Node& node) : impl_(impl), node_(node) {}
    int64_t Publish(std::string_view channel, std::string_view message) override {
      auto it = node_.subscribers.find(channel);
      if (it == node_.subscribers.end()) return 0;
      // One copy of the message for all the subscribers' deliveries, which outlive the command
      // (its channel's name interned once for all of them).
      const auto published = std::make_shared<const Published>(
          Published{std::string(channel), std::string(message), impl_.Intern(channel)});
      // The bridge lives only while the command runs; deliveries must not refer to it.
      Impl* impl = &impl_;
      for (int index : it->second) {
        Client& c = *impl->clients[static_cast<size_t>(index)];
        const uint64_t incarnation = c.incarnation;
        const int node_index = node_.index;
        impl->Send(node_.endpoint, c.endpoint, [impl, &c, incarnation, node_index, published] {
          impl->ClientReceive(c, incarnation, [impl, &c, node_index, published] {
            const std::string& ch = published->channel;
            const std::string& msg = published->message;
            history::Event e;
            e.type = EventType::kMessage;
            e.process = c.id;
            e.peer = impl->nodes[static_cast<size_t>(node_index)]->id;
            e.op = published->channel_id;
            e.detail = history::Text{msg};
            impl->Record(e);
            c.protocol->OnMessage(*c.outbox, impl->SlotOf(c, node_index), ch, msg);
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
    Impl& impl_;
    Node& node_;
  };

  // [cluster]: the master a client sends a command to, as a cluster client (Redisson's
  // cluster connection manager) picks it from the slot map: the node serving the slot of the
  // command's first key; for SUBSCRIBE, UNSUBSCRIBE and PUBLISH, of the channel's name (the
  // connection Redisson opens for a channel); the first master for any other command without
  // keys. Clients know the slot map from the start, so no command is ever redirected (MOVED).
  int ClusterRoute(const Argv& argv) const {
    assert(cluster != nullptr);
    const int slot = ClientRouteSlot(argv);
    if (slot < 0) return cluster_nodes.front();
    const int owner = cluster->owner(slot);
    assert(owner >= 0);  // The simulated cluster serves every slot.
    return cluster_nodes[static_cast<size_t>(owner)];
  }

  // The protocol's slot for a node (messages from a node the client does not address go to
  // slot 0's handler, which ignores channels it did not subscribe to).
  int SlotOf(const Client& c, int node_index) const {
    if (cluster != nullptr) return 0;  // The cluster is one node to the protocol.
    for (size_t i = 0; i < c.slots.size(); ++i) {
      if (c.slots[i] == node_index) return static_cast<int>(i);
    }
    return 0;
  }

  // Streams one batch of effects to every replica. The caller has counted it in n.offset.
  void Replicate(Node& n, const Effects& fx) {
    if (fx.commands.empty()) return;
    for (int r : n.replicas) {
      Node::Stream& s = n.streams[r];
      s.batches.push_back({fx.commands, engine.now()});
      Pump(n, r);
    }
  }

  void Pump(Node& master, int replica_index) {
    Node::Stream& s = master.streams[replica_index];
    if (s.in_flight || s.batches.empty()) return;
    s.in_flight = true;
    const int64_t lag = scenario.replication.lag_us.Sample(net_rng);
    Node* mp = &master;
    engine.After(lag, [this, mp, replica_index] {
      Node& m = *mp;
      Node& r = *nodes[static_cast<size_t>(replica_index)];
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
      if (Blocked(m.endpoint, r.endpoint)) {  // The backlog waits for the link to heal.
        stream.in_flight = true;
        engine.After(kReplicationRetryUs, [this, mp, replica_index] {
          mp->streams[replica_index].in_flight = false;
          Pump(*mp, replica_index);
        });
        return;
      }
      if (stream.batches.empty()) return;  // A full resync replaced the stream meanwhile.
      Node::Batch batch = std::move(stream.batches.front());
      stream.batches.pop_front();
      Deliver(r.mailbox, [this, &r, batch = std::move(batch)] {
        const int64_t now_ms = r.clock->WallMs(engine.now());
        Effects forwarded;
        for (const Argv& cmd : batch.commands) r.server->ExecuteReplicated(cmd, now_ms, &forwarded);
        ++r.offset;
        Replicate(r, forwarded);
        TrackLock(r, names::kReleased);
        TrackReplica(r, names::kApplied, engine.now() - batch.written_at);
      }, kReplicationSource);
      Pump(m, replica_index);
    });
  }

  // Copies a master's data to a replica (a full resync: the replica's own data is dropped).
  void FullSync(Node& master, Node& replica) {
    replica.server->keyspace() = master.server->keyspace();
    replica.offset = master.offset;
    master.streams[replica.index] = {};
    TrackReplica(replica, names::kResynced, 0);
  }

  // Replicated events: the lock key's owners on a replica, when replication changed them, and
  // every full resync (the replica's data replaced, its master perhaps a new one). The
  // replica's own clock does not expire the key (a replica waits for its master's DEL).
  void TrackReplica(Node& r, Name op, int64_t lag_us) {
    if (r.master < 0) return;
    const Entry* e = r.server->keyspace().Find(scenario.protocol.lock_name);
    const bool same =
        e != nullptr ? history::OwnersAre(*e, r.replica_owners) : r.replica_owners.empty();
    if (same && op != names::kResynced) return;
    r.replica_owners = e != nullptr ? history::OwnersOf(*e) : std::string();
    history::Event ev;
    ev.type = EventType::kReplicated;
    ev.process = r.id;
    ev.peer = nodes[static_cast<size_t>(r.master)]->id;
    ev.op = op;
    ev.lock = lock_id;
    ev.local_ms = r.clock->WallMs(engine.now());
    ev.has_value = true;
    ev.value = lag_us;
    if (!r.replica_owners.empty()) ev.detail = history::Owners{r.replica_owners};
    Record(ev);
  }

  // A lease event on node n: `op` with the owners it names (none: no detail).
  void RecordLease(const Node& n, Name op, const std::string& owners, int64_t local_ms) {
    history::Event ev = history::LeaseEvent(n.id, lock_id, op, owners, local_ms);
    Record(ev);
  }

  // The verification mode: what the facts pass believes of the lock key on master n against
  // the key. The first difference stops the run, with both views and what came last.
  // `after()` says what came last; it is called only for a difference.
  template <class After>
  void VerifyKey(const Node& n, const After& after) {
    if (n.master >= 0 || !n.up || !verify_failure.empty()) return;
    const LockLook look = LookAtLock(n);
    const std::string difference =
        CompareKeyView(*verify_facts, n.id, lock_id, look.live, look.now_ms);
    if (difference.empty()) return;
    verify_failure = "verification failed at " + Ms(engine.now()) + " of true time on " + n.name +
                     ", after " + std::string(after()) + " (the history's last event is seq " +
                     std::to_string(recorder.count() - 1) + "): " + difference;
    engine.Stop();
  }

  // Lease events: compares the lock key on a master with what was last seen.
  // The lock key on node n now, against the owners TrackLock last recorded.
  struct LockLook {
    const Entry* live = nullptr;  // The key, when it exists and has not expired.
    int64_t now_ms = 0;           // The node's wall clock.
    int64_t expire_ms = kNoExpiry;
    bool same = false;  // Its owners are n.lock_owners (none when it is not live).
  };
  LockLook LookAtLock(const Node& n) const {
    LockLook look;
    look.now_ms = n.clock->WallMs(engine.now());
    const Entry* e = n.server->keyspace().Find(scenario.protocol.lock_name);
    if (e != nullptr && !Keyspace::IsExpired(*e, look.now_ms)) {
      look.live = e;
      look.expire_ms = e->expire_at_ms;
    }
    look.same = look.live ? history::OwnersAre(*look.live, n.lock_owners) : n.lock_owners.empty();
    assert(look.same ==
           ((look.live ? history::OwnersOf(*look.live) : std::string()) == n.lock_owners));
    return look;
  }

  void TrackLock(Node& n, Name gone_as) {
    if (n.master >= 0) return;  // Replicas echo their master; only masters are judged.
    const LockLook look = LookAtLock(n);
    const int64_t now_ms = look.now_ms;
    const int64_t expire_ms = look.expire_ms;
    // Only a change of owners makes an event, and builds the new owners' text.
    if (!look.same) {
      std::string owners = look.live ? history::OwnersOf(*look.live) : std::string();
      const bool timed_out = n.lock_expire_ms != kNoExpiry && now_ms > n.lock_expire_ms;
      RecordLease(n, history::LeaseOpOf(n.lock_owners, owners, timed_out, gone_as),
                  owners.empty() ? n.lock_owners : owners, now_ms);
      n.lock_owners = std::move(owners);
    }
    const bool held = !n.lock_owners.empty();  // What `owners` is now, changed or not.
    if (held && expire_ms != kNoExpiry && expire_ms != n.lock_expire_ms) {
      // Schedule the moment this node's clock passes the expiry: now_ms > expire_ms.
      const TrueTime at = n.clock->FirstTrueTimeWallExceeds((expire_ms + 1) * 1000 - 1, engine.now());
      if (at != kNever) {
        Node* np = &n;
        engine.At(at, [this, np, expire_ms] { ExpireCheck(*np, expire_ms); });
      }
    }
    n.lock_expire_ms = held ? expire_ms : kNoExpiry;
    n.lock_seen = {n.server.get(), n.server->write_commands_run(), now_ms};
  }

  // True when TrackLock would find nothing new on master n at now_ms: the same server has run
  // no write command since TrackLock last looked, the node's clock has not gone back (which
  // could bring an expired key back to life), and a held key has not reached its expiry (a
  // read of it may have deleted it lazily). Most commands of a contended lock are acquire
  // attempts that find it held and write nothing.
  bool LockUnchanged(const Node& n, int64_t now_ms) const {
    if (n.master >= 0 || n.lock_seen.server != n.server.get()) return false;
    if (n.server->write_commands_run() != n.lock_seen.writes) return false;
    if (now_ms < n.lock_seen.at_ms) return false;
    return n.lock_owners.empty() || n.lock_expire_ms == kNoExpiry || now_ms < n.lock_expire_ms;
  }
  // What TrackLock would find on master n now is what it last recorded (the debug build checks
  // every LockUnchanged with it).
  bool LockAsSeen(const Node& n) const {
    const LockLook look = LookAtLock(n);
    return look.same && (n.lock_owners.empty() || look.expire_ms == n.lock_expire_ms);
  }

  void ExpireCheck(Node& n, int64_t expire_ms) {
    if (!n.up || n.master >= 0) return;
    Deliver(n.mailbox, [this, &n, expire_ms] {
      if (!n.up || n.master >= 0) return;
      const std::string& key = scenario.protocol.lock_name;
      Entry* e = n.server->keyspace().Find(key);
      const int64_t now_ms = n.clock->WallMs(engine.now());
      if (e == nullptr || e->expire_at_ms != expire_ms || !Keyspace::IsExpired(*e, now_ms)) return;
      // Redis's active expiry: delete and replicate the DEL.
      n.server->keyspace().Erase(key);
      Effects fx;
      fx.commands.push_back({"DEL", key});
      ++n.offset;
      Replicate(n, fx);
      TrackLock(n, names::kExpired);
      if (verify_facts) VerifyKey(n, [] { return "the key's expiry"; });
    }, Mailbox::kOwnWork);
  }

  // --- clients ---

  // Work for client c's process as it was at `incarnation`: dropped if the process crashed
  // since, held if it is paused.
  template <typename Work>
  void ClientReceive(Client& c, uint64_t incarnation, Work work) {
    if (!c.up || c.incarnation != incarnation) return;
    Deliver(c.mailbox, [this, &c, incarnation, work = std::move(work)]() mutable {
      if (!c.up || c.incarnation != incarnation) return;
      if (Looping()) ++loop_tally[{c.id, -1}];
      work();
    });
  }

  // A timer on the client's monotonic clock; dropped if the process crashes meanwhile.
  template <typename Work>
  Engine::EventId ClientTimer(Client& c, int64_t delay_us, Work work) {
    const uint64_t incarnation = c.incarnation;
    const TrueTime at = c.clock->AfterMono(engine.now(), delay_us);
    return engine.At(at == kNever ? engine.now() + delay_us : at,
                     [this, &c, incarnation, work = std::move(work)]() mutable {
                       ClientReceive(c, incarnation, std::move(work));
                     });
  }

  class SimOutbox : public locks::Outbox {
   public:
    SimOutbox(Impl& impl, Client& c) : impl_(impl), c_(c) {}
    int64_t MonoUs() override { return c_.clock->MonoUs(impl_.engine.now()); }
    int64_t WallMs() override { return c_.clock->WallMs(impl_.engine.now()); }
    Prng& Rng() override { return *c_.rng; }
    int NodeCount() override { return impl_.NodeCountOf(c_); }
    void ArmTimer(locks::TimerId timer, int64_t delay_us) override {
      Client* cp = &c_;
      const Engine::EventId id = impl_.ClientTimer(c_, delay_us, [cp, timer] {
        cp->timers.Take(timer);
        cp->protocol->OnTimer(*cp->outbox, timer);
      });
      c_.timers.Set(timer, id);
    }
    void CancelTimer(locks::TimerId timer) override {
      if (const auto id = c_.timers.Take(timer)) impl_.engine.Cancel(*id);
    }
    void Complete(int thread, const locks::OpResult& result) override {
      c_.workload->OnComplete(thread, result);
    }

   private:
    void DoSend(int slot, locks::RequestId request, SharedArgv argv, const std::string& label,
                int thread) override {
      assert(slot >= 0 && slot < NodeCount());
      // A cluster is one Redis to the protocol; the cluster client routes by slot.
      const int node_index = impl_.cluster != nullptr ? impl_.ClusterRoute(*argv)
                                                      : c_.slots[static_cast<size_t>(slot)];
      assert(node_index >= 0 && static_cast<size_t>(node_index) < impl_.nodes.size());
      Node& n = *impl_.nodes[static_cast<size_t>(node_index)];
      const uint64_t incarnation = c_.incarnation;
      Client* cp = &c_;
      const Name label_id = impl_.Intern(label);
      // The delivery refers to the simulation, not to this outbox: a restart replaces the
      // outbox while the old process's commands are still on the wire.
      Impl* impl = &impl_;
      // The command itself is shared with the protocol, which keeps it to resend.
      auto deliver = [impl, &n, cp, incarnation, request, argv = std::move(argv), label_id,
                      thread]() mutable {
        impl->NodeReceive(n, *cp, incarnation, request, std::move(argv), label_id, thread);
      };
      impl_.Send(c_.endpoint, n.endpoint, std::move(deliver));
    }

    Impl& impl_;
    Client& c_;
  };

  // How many nodes a protocol addresses: the masters, or one cluster.
  int NodeCountOf(const Client& c) const {
    return cluster != nullptr ? 1 : static_cast<int>(c.slots.size());
  }

  // "0-5460": the slots a cluster node serves.
  std::string SlotsOf(const Node& n) const { return SlotRangesText(*cluster, n.cluster_node); }

  // --- client processes ---

  // What a client process's workload (drive/workload.h) gets from the simulator: the true time
  // and the recorder, the process's clock and PRNG, and its timers as engine events that a
  // crash drops and a pause holds.
  class SimClientHost : public drive::ClientHost {
   public:
    SimClientHost(Impl& impl, Client& c) : impl_(impl), c_(c) {}
    void Record(history::Event& e) override { impl_.Record(e); }
    Name Intern(std::string_view s) override { return impl_.Intern(s); }
    int64_t WallMs() override { return c_.clock->WallMs(impl_.engine.now()); }
    Prng& Rng() override { return *c_.rng; }
    void After(int64_t delay_us, std::function<void()> work) override {
      impl_.ClientTimer(c_, delay_us, std::move(work));
    }

   private:
    Impl& impl_;
    Client& c_;
  };

  // Starts (or restarts) a client process. A restarted process is a new RedissonClient with a
  // new UUID, as a real restart would be.
  void StartClient(Client& c, bool restart) {
    if (restart || c.uuid.empty()) c.uuid = drive::NewClientUuid(*c.rng);
    std::string error;
    c.protocol = locks::MakeProtocol(scenario.protocol.kind_name(),
                                     drive::ClientConfigFor(scenario, c.index, c.uuid), scripts,
                                     &error);
    assert(c.protocol != nullptr);  // Create() made the same call successfully.
    c.outbox = std::make_unique<SimOutbox>(*this, c);
    c.workload->Start(*c.protocol, *c.outbox, c.uuid, restart);
  }

  void CrashClient(Client& c) {
    if (!c.up) return;
    c.up = false;
    ++c.incarnation;
    c.protocol->OnCrash();
    c.workload->Crash();
    for (const auto& [timer, id] : c.timers.TakeAll()) engine.Cancel(id);
    c.mailbox = Mailbox{};
    for (auto& n : nodes) {
      for (auto& [channel, subs] : n->subscribers) {
        subs.erase(std::remove(subs.begin(), subs.end(), c.index), subs.end());
      }
    }
  }

  // --- faults ---

  void CrashNode(Node& n) {
    if (!n.up) return;
    n.up = false;
    n.mailbox = Mailbox{};
    n.subscribers.clear();  // Connections die with the process.
    n.replica_owners.clear();  // A restarted replica's first resync says what it has.
  }

  void RestartNode(Node& n) {
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
      Node& m = *nodes[static_cast<size_t>(n.master)];
      if (m.up) FullSync(m, n);
    }
    TrackLock(n, names::kLost);
    if (verify_facts) VerifyKey(n, [] { return "its restart"; });
  }

  void Promote(Node& r, const std::string& why) {
    if (r.master < 0) return;
    Node& old = *nodes[static_cast<size_t>(r.master)];
    Fault(r.id, names::kPromote, history::PromoteFault{r.name, why});
    const std::string old_owners = old.lock_owners;
    // r becomes the master of everyone who followed the old master, and of the old master.
    r.master = -1;
    r.server->set_replica(false);
    r.replica_owners.clear();
    std::vector<int> followers;
    for (int x : old.replicas) {
      if (x != r.index) followers.push_back(x);
    }
    followers.push_back(old.index);
    old.replicas.clear();
    old.streams.clear();
    for (int x : followers) {
      Node& f = *nodes[static_cast<size_t>(x)];
      f.master = r.index;
      f.server->set_replica(true);
      f.lock_owners.clear();
      f.lock_expire_ms = kNoExpiry;
      r.replicas.push_back(x);
      if (f.up) FullSync(r, f);  // The old master loses what it had.
    }
    // Lease events on the new master. The history has said nothing of its key so far (a
    // replica's lease events are not recorded), so the old master's owners that it lacks are
    // recorded as lost there (their holders lost the lock in the failover), and what it holds
    // as acquired: from here on its events describe its own key.
    const LockLook look = LookAtLock(r);
    const std::string gone =
        history::OwnersGone(old_owners, look.live ? history::OwnersOf(*look.live) : std::string());
    if (!gone.empty()) RecordLease(r, names::kLost, gone, look.now_ms);
    r.lock_owners.clear();
    r.lock_expire_ms = kNoExpiry;
    TrackLock(r, names::kLost);
    if (verify_facts) VerifyKey(r, [] { return "its promotion"; });
    // Clients find out later.
    const int new_master = r.index;
    const int old_master = old.index;
    engine.After(scenario.sentinel.client_rediscover_us, [this, new_master, old_master] {
      for (auto& c : clients) {
        for (int& slot : c->slots) {
          if (slot == old_master) slot = new_master;
        }
      }
      history::Event e;
      e.type = EventType::kNote;
      e.process = names::kSim;
      e.op = names::kRediscover;
      e.detail = history::RediscoverNote{nodes[static_cast<size_t>(new_master)]->name};
      Record(e);
    });
  }

  // The replica Sentinel would pick: up, most replicated data, then lowest index.
  Node* BestReplica(Node& m) {
    Node* best = nullptr;
    for (int x : m.replicas) {
      Node& r = *nodes[static_cast<size_t>(x)];
      if (!r.up) continue;
      if (best == nullptr || r.offset > best->offset) best = &r;
    }
    return best;
  }

  void SentinelTick() {
    for (auto& np : nodes) {
      Node& m = *np;
      if (m.master >= 0 || m.replicas.empty()) continue;
      const bool down = !m.up || m.mailbox.paused || Blocked(sentinel_endpoint, m.endpoint) ||
                        Blocked(m.endpoint, sentinel_endpoint);
      if (!down) {
        down_since.erase(m.index);
        continue;
      }
      auto [it, fresh] = down_since.emplace(m.index, engine.now());
      if (!fresh && engine.now() - it->second >= scenario.sentinel.down_after_us) {
        down_since.erase(it);
        if (Node* r = BestReplica(m)) {
          Fault(names::kSentinel, names::kFailover,
                history::FailoverFault{m.name, scenario.sentinel.down_after_us});
          Promote(*r, "sentinel");
        }
      }
    }
    engine.After(kSentinelPeriodUs, [this] { SentinelTick(); });
  }

  void ScheduleFault(const FaultSpec& f) {
    const FaultSpec fault = f;
    engine.At(f.at_us, [this, fault] { drive::ApplyFault(fault, *fault_target); });
  }

  // The simulator's side of the fault schedule (drive/faults.h).
  class SimFaultTarget : public drive::FaultTarget {
   public:
    explicit SimFaultTarget(Impl& impl) : s_(impl) {}
    void After(int64_t delay_us, std::function<void()> work) override {
      s_.engine.After(delay_us, std::move(work));
    }
    void Record(history::Event& e) override { s_.Record(e); }
    Name Intern(std::string_view name) override { return s_.Intern(name); }
    bool IsNode(const std::string& name) const override { return s_.FindNode(name) != nullptr; }
    bool Down(const std::string& name) const override {
      if (const Node* n = s_.FindNode(name)) return !n->up;
      if (const Client* c = s_.FindClient(name)) return !c->up;
      return false;
    }
    void Crash(const std::string& name) override {
      if (Node* n = s_.FindNode(name)) s_.CrashNode(*n);
      if (Client* c = s_.FindClient(name)) s_.CrashClient(*c);
    }
    void Restart(const std::string& name) override {
      if (Node* n = s_.FindNode(name)) s_.RestartNode(*n);
      if (Client* c = s_.FindClient(name)) {
        c->up = true;
        s_.StartClient(*c, /*restart=*/true);
      }
    }
    uint64_t Pause(const std::string& name) override {
      Mailbox* box = MailboxOf(name);
      if (box == nullptr || box->paused || Down(name)) return 0;
      box->paused = true;
      box->pause = ++pauses_;
      return box->pause;
    }
    bool InPause(const std::string& name, uint64_t pause) const override {
      const Mailbox* box = MailboxOf(name);
      return box != nullptr && box->paused && box->pause == pause;
    }
    void Resume(const std::string& name) override {
      if (Mailbox* box = MailboxOf(name)) Impl::Resume(*box);
    }
    void Failover(const std::string& name) override {
      if (Node* m = s_.FindNode(name)) {
        if (Node* r = s_.BestReplica(*m)) s_.Promote(*r, "manual failover");
      }
    }
    uint64_t OpenPartition(const FaultSpec& f) override {
      Partition p;
      p.a = s_.Side(f.targets);
      p.b = s_.Side(f.peers);
      p.one_way = f.one_way;
      p.active = true;
      s_.partitions.push_back(std::move(p));
      return s_.partitions.size() - 1;
    }
    void ClosePartition(uint64_t handle) override { s_.partitions[handle].active = false; }
    uint64_t OpenNetworkWindow(const FaultSpec& f) override {
      using K = FaultSpec::Kind;
      NetworkWindow w;
      w.kind = f.kind;
      w.a = s_.Side(f.targets);
      w.b = s_.Side(f.peers);
      w.every_peer = f.peers.empty();
      w.extra_us = f.kind == K::kLatency ? f.extra_us : 0;
      w.rate = f.kind == K::kLatency ? 0 : f.rate;
      assert(w.extra_us >= 0 && w.rate >= 0 && w.rate <= 1);
      w.active = true;
      s_.windows.push_back(std::move(w));
      ++s_.windows_active;
      return s_.windows.size() - 1;
    }
    void CloseNetworkWindow(uint64_t handle) override {
      assert(s_.windows[handle].active && s_.windows_active > 0);
      s_.windows[handle].active = false;
      --s_.windows_active;
    }
    void LoseReplies(const std::string& name, bool on) override {
      if (Node* n = s_.FindNode(name)) n->lose_replies = on;
    }

   private:
    // A process's mailbox: a node's, else a client's.
    Mailbox* MailboxOf(const std::string& name) const {
      if (Node* n = s_.FindNode(name)) return &n->mailbox;
      if (Client* c = s_.FindClient(name)) return &c->mailbox;
      return nullptr;
    }
    Impl& s_;
    uint64_t pauses_ = 0;
  };
  std::unique_ptr<SimFaultTarget> fault_target;

  void ScheduleGc(Client& c) {
    const int64_t every = scenario.gc.every_us.Sample(*c.rng);
    Client* cp = &c;
    engine.After(every, [this, cp] {
      const int64_t pause = scenario.gc.pause_us.Sample(*cp->rng);
      if (cp->up && pause > 0) drive::PauseFor(*fault_target, cp->name, pause, /*gc=*/true);
      ScheduleGc(*cp);
    });
  }

  void AofTick() {
    for (auto& n : nodes) {
      if (n->up && n->spec.persistence == NodeSpec::Persistence::kAofEverySec && !n->mailbox.paused) {
        n->aof = n->server->keyspace();
      }
    }
    engine.After(kAofFsyncPeriodUs, [this] { AofTick(); });
  }
};

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
                                    scenario.protocol.script_files, error);
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
    s.NewServer(*n);
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
  s.SetUpNetwork();
  s.fault_target = std::make_unique<Impl::SimFaultTarget>(s);

  // The run's names, interned in a fixed order so that ids never depend on what runs first.
  s.lock_id = s.Intern(scenario.protocol.lock_name);
  for (auto& n : s.nodes) n->id = s.Intern(n->name);
  for (auto& c : s.clients) c->id = s.Intern(c->name);

  s.resource = std::make_unique<drive::Resource>(s.lock_id, scenario.resource.fencing);
  for (auto& c : s.clients) {
    c->host = std::make_unique<Impl::SimClientHost>(s, *c);
    c->workload = std::make_unique<drive::ClientWorkload>(scenario, c->index, c->id, *s.resource,
                                                          *c->host);
  }

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
                          [&s](history::Event& e) { s.Record(e); });
  }
  for (auto& c : s.clients) s.StartClient(*c, /*restart=*/false);
  for (const FaultSpec& f : s.scenario.faults) s.ScheduleFault(f);
  if (s.scenario.gc.enabled) {
    for (auto& c : s.clients) {
      const auto& only = s.scenario.gc.clients;
      if (only.empty() || std::find(only.begin(), only.end(), c->name) != only.end()) {
        s.ScheduleGc(*c);
      }
    }
  }
  if (s.scenario.sentinel.enabled) s.engine.After(kSentinelPeriodUs, [&s] { s.SentinelTick(); });
  s.engine.After(kAofFsyncPeriodUs, [&s] { s.AofTick(); });

  const TrueTime end = s.scenario.duration_us;
  TrueTime next_report = progress_every_us;
  while (s.engine.now() < end) {
    const TrueTime until = std::min(end, next_report);
    if (!s.engine.RunUntil(until, should_stop ? &should_stop : nullptr)) {
      // A runaway script has said why already (stalled); else the watchdog, else a stop.
      if (s.stalled.empty() && s.engine.over_bound() != 0) {
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
  impl_->verify_facts =
      std::make_unique<history::FactsPass>(&impl_->recorder.names(), history::FactsOptions{});
  impl_->recorder.AddSink(impl_->verify_facts.get());
}

const std::string& Simulation::verify_failure() const { return impl_->verify_failure; }
const std::vector<std::pair<std::string, std::string>>& Simulation::derived() const {
  return impl_->derived;
}

}  // namespace lockstep::sim
