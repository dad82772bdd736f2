#include "live/driver.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cctype>
#include <deque>
#include <optional>
#include <string_view>

#include "base/ascii.h"
#include "base/clock.h"
#include "base/random.h"
#include "core/cluster.h"
#include "core/script_host.h"
#include "core/session.h"
#include "drive/client.h"
#include "drive/named.h"
#include "drive/resource.h"
#include "drive/run_notes.h"
#include "drive/workload.h"
#include "history/kinds.h"
#include "history/lease_owners.h"
#include "history/notes.h"
#include "live/resp_connection.h"
#include "locks/factory.h"
#include "locks/client/client_program.h"
#include "locks/scripts.h"

namespace lockstep::live {

using history::EventType;
using history::Name;
namespace names = history::names;

namespace {

constexpr int64_t kNoExpiryMs = INT64_MIN;  // A lock key without a TTL (or none at all).
constexpr const char* kExpiredChannel = "__keyevent@0__:expired";

// Read-only: what the lock key is on this node right after the command before it in the same
// transaction. Its type, its owner fields (a hash) or value (a string), its PTTL, the server's
// clock and its expiry (PEXPIRETIME). The owners text is built by history::JoinOwners, as the
// simulator builds it.
constexpr const char* kProbeScript = R"(local t = redis.call('TYPE', KEYS[1])['ok']
local owners = {}
if t == 'hash' then
  owners = redis.call('HKEYS', KEYS[1])
elseif t == 'string' then
  owners = {redis.call('GET', KEYS[1])}
end
local now = redis.call('TIME')
local ok, at = pcall(redis.call, 'PEXPIRETIME', KEYS[1])
if not ok then at = -3 end
return {t, owners, redis.call('PTTL', KEYS[1]), now[1], now[2], at})";


int64_t RealtimeMs() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

std::optional<int64_t> IntOf(const Reply& r) {
  if (r.type == Reply::Type::kInteger) return r.integer;
  if (r.type != Reply::Type::kBulk && r.type != Reply::Type::kStatus) return std::nullopt;
  try {
    size_t used = 0;
    const int64_t v = std::stoll(r.str, &used);
    if (used == r.str.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// The lock key as the probe saw it.
struct KeyState {
  std::string owners;                // "" when there is no key.
  int64_t expire_ms = kNoExpiryMs;   // The node's wall clock at which it expires.
  int64_t local_ms = 0;              // The node's wall clock when the probe ran.
};

std::optional<KeyState> ParseProbe(const Reply& r) {
  if (r.type != Reply::Type::kArray || r.elements.size() != 6) return std::nullopt;
  const Reply& type = r.elements[0];
  const Reply& owners = r.elements[1];
  const auto pttl = IntOf(r.elements[2]);
  const auto sec = IntOf(r.elements[3]);
  const auto usec = IntOf(r.elements[4]);
  if (type.type != Reply::Type::kBulk || !pttl || !sec || !usec) return std::nullopt;
  KeyState k;
  k.local_ms = *sec * 1000 + *usec / 1000;
  std::vector<std::string> fields;
  if (owners.type == Reply::Type::kArray) {
    for (const Reply& f : owners.elements) fields.push_back(f.str);
  }
  if (type.str == "hash") {
    k.owners = history::JoinOwners(std::move(fields));
  } else if (type.str == "string") {
    k.owners = fields.empty() ? std::string() : fields[0];
  } else if (type.str != "none") {
    k.owners = type.str;  // As history::OwnersOf names a key of another type.
  }
  // The expiry itself (PEXPIRETIME, Redis 7.0), exact. TIME + PTTL can be a millisecond late:
  // a script sees a key until its start time passes the expiry, but PTTL counts from the real
  // time, clamped at 0, so a key read in the millisecond it expires gives TIME = expiry + 1 and
  // PTTL = 0, and the next owner's acquire in that millisecond would not count as after the
  // expiry. Before 7.0 (-3: no such command) the estimate is all there is.
  const auto at = IntOf(r.elements[5]);
  if (!k.owners.empty() && at && *at >= 0) {
    k.expire_ms = *at;
  } else if (!k.owners.empty() && *pttl >= 0 && (!at || *at == -3)) {
    k.expire_ms = k.local_ms + *pttl;
  }
  return k;
}

}  // namespace

// LiveNode::next_seq after the node restarted: its sequence key may start again anywhere.
constexpr int64_t kNumberingUnknown = 0;

// A Redis node as the driver sees it: its address, the lock key as last probed (a master), and
// the transaction results waiting to be recorded in the node's own order.
struct LiveNode {
  int index = 0;
  std::string name;
  Name id = names::kNone;
  NodeAddress address;
  bool master = true;

  std::string lock_owners;
  bool promoted = false;  // Promoted since the last look at its key (TrackLock).
  int64_t lock_expire_ms = kNoExpiryMs;
  // The node's wall clock minus ours, as of the last probe: the local_ms of what is not probed
  // (SUBSCRIBE, WAIT) is estimated from it.
  int64_t clock_offset_ms = 0;

  // A transaction's result, recorded when its number's turn comes. `record` is told whether
  // the result is late: recorded after a later number was (it waited past reorder_wait_us),
  // so its key state is superseded.
  struct Result {
    int64_t arrived_us = 0;  // Loop time.
    std::function<void(const KeyState&, bool late)> record;
    KeyState key;
  };
  int64_t next_seq = 1;  // kNumberingUnknown after a restart, until the first result.
  std::map<int64_t, Result> results;
  EventLoop::TimerId gap_timer = 0;
  EventLoop::TimerId expiry_timer = 0;  // probe_at_expiry: the probe when the PTTL runs out.

  std::unique_ptr<RespConnection> probe;     // Expiry probes.
  std::unique_ptr<RespConnection> observer;  // __keyevent@0__:expired.
};

// What a thread of a client program has open on one node, on a connection of its own. A real
// library's WATCH .. EXEC and its blocking pops hold a connection for the thread that sent
// them, so the driver gives each (thread, node) that needs one its own session connection,
// apart from the process's shared command connection, where one thread's MULTI would capture
// the other threads' commands and a blocked BLPOP would stall them. The server's state for the
// connection is followed from the commands sent on it, as redis-server moves a client
// (multi.c): MULTI opens a transaction (a nested one is refused and the open one stays), EXEC
// and DISCARD end it and every watch, WATCH (refused inside MULTI) and UNWATCH set and clear the
// watches, and a lost connection ends both, as the server drops them with its client.
struct LiveSession {
  // A command queued in the open MULTI: its exec is recorded from EXEC's reply.
  struct Queued {
    Name label = names::kNone;
    locks::RequestId request = 0;
    SharedArgv argv;  // As sent to the server.
    bool accepted = false;  // It was answered +QUEUED (a refused one is not in EXEC's reply).
  };
  struct Transaction {
    std::vector<Queued> queued;
    // In a [cluster], the probe joins the transaction only while every key of it is in the lock
    // key's slot (a transaction's keys must share one).
    bool probe_fits = true;
  };
  // Past this many queued commands the rest get no exec event from EXEC's reply.
  static constexpr size_t kQueuedMax = 1 << 16;

  std::unique_ptr<RespConnection> conn;
  bool in_multi = false;
  bool watching = false;
  std::shared_ptr<Transaction> tx;  // Exactly while in_multi.

  // Everything the thread sends to the node goes here while this holds.
  bool active() const { return in_multi || watching; }
  void Reset() {
    in_multi = false;
    watching = false;
    tx.reset();
  }
};

class LiveOutbox;

// A client process: what drive::ClientWorkload gets from the live driver (its host), and the
// process's own state: clock, PRNG, protocol, Outbox, connections, held work while paused.
class LiveClient final : public drive::ClientHost {
 public:
  explicit LiveClient(LiveRun::Impl& run) : run_(run) {}

  void Record(history::Event& e) override;
  Name Intern(std::string_view s) override;
  int64_t WallMs() override;
  Prng& Rng() override { return *rng_; }
  void After(int64_t delay_us, std::function<void()> work) override;

  locks::Outbox& outbox();

  // Runs `work` for this process as it is now: dropped if it crashes first, held while paused.
  void Deliver(uint64_t incarnation, std::function<void()> work) {
    if (!up || incarnation != this->incarnation) return;
    if (paused) {
      held.push_back(std::move(work));
      return;
    }
    work();
    CheckProgram();
  }
  // A client program that failed (an error, a limit passed) in what just ran stops the run,
  // whether or not an operation completed: a background task's error completes none.
  void CheckProgram();
  // The loop time at which delay_us of this process's monotonic time has passed.
  int64_t MonoDeadline(int64_t delay_us);

  RespConnection& Command(int node);
  RespConnection& PubSub(int node);
  void DropConnections() {
    for (auto& c : command) c.reset();
    for (auto& c : pubsub) c.reset();
    sessions.clear();
  }

  LiveRun::Impl& run_;
  int index = 0;
  std::string name;
  Name id = names::kNone;
  ClientSpec spec;
  std::unique_ptr<Clock> clock;
  std::unique_ptr<Prng> rng_;
  std::string uuid;
  std::unique_ptr<locks::LockProtocol> protocol_;
  std::unique_ptr<LiveOutbox> outbox_;
  std::unique_ptr<drive::ClientWorkload> workload;
  bool up = true;
  uint64_t incarnation = 0;
  bool paused = false;
  std::deque<std::function<void()>> held;
  std::map<locks::TimerId, EventLoop::TimerId> timers;
  std::vector<int> slots;  // Slot -> node index (the masters, in declaration order).
  std::vector<std::unique_ptr<RespConnection>> command, pubsub;  // By node index.
  // By (thread, node index); thread -1 is the process's own. At most one per thread and node.
  std::map<std::pair<int, int>, std::unique_ptr<LiveSession>> sessions;
};

struct LiveRun::Impl {
  Scenario scenario;
  LiveOptions options;
  history::Recorder* recorder = nullptr;
  EventLoop loop;
  locks::ScriptSet scripts;
  // A client program's declarations (the client kind), for the protocol note.
  std::optional<locks::ClientDeclarations> declarations;
  Prng rng{1};
  Name lock_id = names::kNone;
  std::unique_ptr<drive::Resource> resource;  // The run's protected resource.
  std::string seq_key;
  // The lock key as the servers name it: under the run's prefix on the user's servers.
  std::string server_lock_key;
  int64_t start_loop_us = 0;
  bool started = false;
  uint64_t late = 0;
  std::string program_error;  // LiveRun::program_error().
  uint64_t commands = 0;
  // Work given to AtTrueTime before the run began: armed when it begins.
  std::vector<std::pair<TrueTime, std::function<void()>>> before_start;
  std::vector<std::unique_ptr<LiveNode>> nodes;
  std::vector<std::unique_ptr<LiveClient>> clients;

  // [cluster]: the slot map the servers were given (the simulator's split), and for each of its
  // nodes the index in `nodes`. Null for independent masters.
  std::shared_ptr<const ClusterTopology> cluster;
  std::vector<int> cluster_nodes;

  // How many nodes a protocol addresses: the masters, or one cluster.
  int NodeCountOf(const LiveClient& c) const {
    return cluster != nullptr ? 1 : static_cast<int>(c.slots.size());
  }

  // The node a client sends `argv` for protocol slot `slot` to: the slot's master, or in a
  // cluster the master serving the command's slot, as a cluster client routes it.
  LiveNode& Route(const LiveClient& c, int slot, const Argv& argv) {
    if (cluster == nullptr) return *nodes[static_cast<size_t>(c.slots[static_cast<size_t>(slot)])];
    const int key_slot = ClientRouteSlot(argv);
    const int owner = key_slot < 0 ? 0 : cluster->owner(key_slot);
    assert(owner >= 0);
    return *nodes[static_cast<size_t>(cluster_nodes[static_cast<size_t>(owner)])];
  }

  TrueTime Now() const { return started ? EventLoop::NowUs() - start_loop_us : 0; }
  Name Intern(std::string_view s) { return recorder->names().Intern(s); }

  void Record(history::Event& e) {
    e.t_us = Now();
    recorder->Append(e);
  }

  LiveNode* FindNode(const std::string& name) const { return drive::FindNamed(nodes, name); }
  LiveClient* FindClient(const std::string& name) const { return drive::FindNamed(clients, name); }

  RespConnection::Options ConnectionTo(const LiveNode& n, bool pubsub,
                                       const std::string* client = nullptr) const {
    RespConnection::Options o;
    o.host = n.address.host;
    o.port = n.address.port;
    if (client != nullptr && options.client_address) {
      const NodeAddress a = options.client_address(*client, n.name, pubsub);
      o.host = a.host;
      o.port = a.port;
    }
    o.pubsub = pubsub;
    o.reconnect_delay_us = options.reconnect_delay_us;
    return o;
  }
  // The handlers every connection shares, with `h`'s own.
  RespConnection::Handlers WithHooks(RespConnection::Handlers h) const {
    h.before_pairing = options.before_pairing;
    return h;
  }

  // --- exec and lease events ---

  int64_t EstimatedLocalMs(const LiveNode& n) const { return RealtimeMs() + n.clock_offset_ms; }

  void Exec(LiveNode& n, LiveClient& c, int thread, Name label, locks::RequestId request,
            const Reply& reply, int64_t local_ms) {
    history::Event e;
    e.type = EventType::kExec;
    e.process = n.id;
    e.thread = thread;
    e.peer = c.id;
    e.op = label;
    e.lock = lock_id;
    e.local_ms = local_ms;
    e.has_value = true;
    e.value = static_cast<int64_t>(request);
    e.detail = history::ReplyDetail{&reply};
    Record(e);
  }

  void Lease(LiveNode& n, Name op, const std::string& owners, int64_t local_ms) {
    history::Event ev = history::LeaseEvent(n.id, lock_id, op, owners, local_ms);
    Record(ev);
  }

  // Lease events: compares the lock key as probed with what was last seen, as the simulator's
  // TrackLock does after every command.
  void TrackLock(LiveNode& n, const KeyState& key, Name gone_as, bool late) {
    if (!n.master) return;  // Replicas echo their master; only masters are judged.
    // A late result's state is older than the one last tracked: the server went on from it
    // to what a later number already showed (a release in between was its own thread's, and
    // an owners change covers it), so moving back to it would invent a lease change.
    if (late) return;
    if (n.promoted) {
      // The first look at a promoted node's key: the old master's owners it lacks were lost in
      // the failover, and what it holds is recorded as acquired (the simulator's Promote).
      n.promoted = false;
      const std::string gone = history::OwnersGone(n.lock_owners, key.owners);
      if (!gone.empty()) Lease(n, names::kLost, gone, key.local_ms);
      n.lock_owners.clear();
      n.lock_expire_ms = kNoExpiryMs;
    }
    if (key.owners != n.lock_owners) {
      const bool timed_out = n.lock_expire_ms != kNoExpiryMs && key.local_ms > n.lock_expire_ms;
      if (timed_out && !key.owners.empty() && !n.lock_owners.empty()) {
        // Expired and taken again between two probes: the simulator would have seen the expiry
        // on its own (active expiry), so it is recorded first.
        Lease(n, names::kExpired, n.lock_owners, key.local_ms);
        n.lock_owners.clear();
      }
      const Name op = history::LeaseOpOf(n.lock_owners, key.owners, timed_out, gone_as);
      Lease(n, op, key.owners.empty() ? n.lock_owners : key.owners, key.local_ms);
      n.lock_owners = key.owners;
    }
    const int64_t expire_ms = n.lock_owners.empty() ? kNoExpiryMs : key.expire_ms;
    if (options.probe_at_expiry && (expire_ms != n.lock_expire_ms || n.expiry_timer == 0)) {
      n.lock_expire_ms = expire_ms;
      ArmExpiryProbe(n);
    }
    n.lock_expire_ms = expire_ms;
  }

  // probe_at_expiry: a probe 1 ms after the lock key's expiry as last seen (the node's clock
  // as the last probe saw it), replacing the one armed before. Redis expires a key when its
  // clock is past the expiry; the probe's read then deletes it, and TrackLock records
  // `expired` (or, if the lease was renewed meanwhile, arms the next probe).
  void ArmExpiryProbe(LiveNode& n) {
    if (n.expiry_timer != 0) loop.Cancel(n.expiry_timer);
    n.expiry_timer = 0;
    if (n.lock_expire_ms == kNoExpiryMs || !started || n.probe == nullptr) return;
    const int64_t node_now_ms = RealtimeMs() + n.clock_offset_ms;
    // At least 0.5 ms: a key found alive at its expiry (our view of the node's clock is off
    // by up to a millisecond) is probed again soon, not in a busy loop.
    const int64_t delay_us = std::max<int64_t>(500, (n.lock_expire_ms + 1 - node_now_ms) * 1000);
    LiveNode* np = &n;
    n.expiry_timer = loop.After(delay_us, [this, np] {
      np->expiry_timer = 0;
      Probe(*np, names::kExpired);
    });
  }

  // A transaction's result arrived: it waits for its number's turn.
  void Ready(LiveNode& n, int64_t seq, KeyState key,
             std::function<void(const KeyState&, bool late)> record) {
    n.clock_offset_ms = key.local_ms - RealtimeMs();
    LiveNode::Result r;
    r.arrived_us = EventLoop::NowUs();
    r.key = std::move(key);
    r.record = std::move(record);
    n.results.emplace(seq, std::move(r));
  }

  // Records the results whose turn has come: every result in number order, except that a gap
  // (an earlier number not here yet) holds the later ones for options.reorder_wait_us.
  void Flush(bool force) {
    for (auto& np : nodes) FlushNode(*np, force);
  }
  void FlushNode(LiveNode& n, bool force) {
    while (!n.results.empty()) {
      auto it = n.results.begin();
      const int64_t seq = it->first;
      // After a restart the node numbers its transactions anew (from 1, or from where its
      // append-only file left the sequence key): the first result starts the numbering.
      if (n.next_seq == kNumberingUnknown) n.next_seq = seq;
      if (seq > n.next_seq && !force) {
        const int64_t due = it->second.arrived_us + options.reorder_wait_us;
        if (EventLoop::NowUs() < due) {
          if (n.gap_timer == 0) {
            LiveNode* node = &n;
            // Only wakes the loop: the iteration hook flushes.
            n.gap_timer = loop.At(due, [node] { node->gap_timer = 0; });
          }
          break;
        }
      }
      const bool is_late = seq < n.next_seq;
      if (is_late) ++late;
      n.next_seq = std::max(n.next_seq, seq + 1);
      LiveNode::Result r = std::move(it->second);
      n.results.erase(it);
      r.record(r.key, is_late);
    }
  }

  // Sends `argv` as MULTI / argv / probe / INCR seq / EXEC on `conn`; `done` gets the
  // command's own reply and the transaction's number and key state (or no number when the
  // transaction did not run: the command was refused when queued), and whether a fault proxy
  // dropped EXEC's reply on its way (`lost`: it handed the reply over; the client never saw
  // it, yet the server ran the transaction).
  using TransactionDone = std::function<void(const Reply& reply, std::optional<int64_t> seq,
                                             std::optional<KeyState> key, bool lost)>;
  void Transaction(RespConnection& conn, const Argv* argv, TransactionDone done) {
    struct Tx {
      std::optional<Reply> queued;  // The command's reply when queued (an error refuses it).
    };
    auto tx = std::make_shared<Tx>();
    conn.Send({"MULTI"}, nullptr);
    if (argv != nullptr) {
      conn.Send(*argv, [tx](const Reply& r) { tx->queued = r; });
    }
    conn.Send({"EVAL", kProbeScript, "1", server_lock_key}, nullptr);
    conn.Send({"INCR", seq_key}, nullptr);
    const bool with_command = argv != nullptr;
    auto finish = [tx, with_command, done = std::move(done)](const Reply& exec, bool lost) {
      const size_t want = with_command ? 3 : 2;
      if (exec.type == Reply::Type::kArray && exec.elements.size() == want) {
        const size_t at = with_command ? 1 : 0;
        const Reply command_reply = with_command ? exec.elements[0] : Reply::Null();
        done(command_reply, IntOf(exec.elements[at + 1]), ParseProbe(exec.elements[at]), lost);
        return;
      }
      // EXECABORT: the command was refused when queued (a wrong number of arguments, say);
      // the protocol sees that refusal, as it would without the transaction. (A lost
      // transaction's replies are all lost together, so then tx->queued is empty.)
      done(tx->queued && tx->queued->is_error() ? *tx->queued : exec, std::nullopt, std::nullopt,
           lost);
    };
    conn.Send(
        {"EXEC"}, [finish](const Reply& exec) { finish(exec, /*lost=*/false); },
        [finish](const Reply& exec) { finish(exec, /*lost=*/true); });
  }

  // Whether a command can go inside MULTI..EXEC. (WATCH, MULTI and EXEC go on a session and
  // never come here; a protocol of the built-in kinds sends none of them.)
  static bool Wrappable(const Argv& argv) {
    return !EqualsIgnoreCase(argv[0], "WAIT") && !EqualsIgnoreCase(argv[0], "MULTI") &&
           !EqualsIgnoreCase(argv[0], "EXEC") && !EqualsIgnoreCase(argv[0], "WATCH");
  }

  // Hands a reply to the protocol that sent the command (if its process still runs).
  using Deliverer = std::function<void(const Reply&)>;

  // A reply as the protocol sees it: on the user's servers, a pop's key without the run's prefix.
  Reply FromServer(const Argv& server_argv, const Reply& reply) const {
    if (options.keyspace == nullptr) return reply;
    return options.keyspace->ReplyFromServer(server_argv, reply);
  }

  void Send(LiveClient& c, int slot, locks::RequestId request, SharedArgv argv,
            const std::string& label, int thread) {
    assert(slot >= 0 && slot < NodeCountOf(c));
    assert(argv != nullptr && !argv->empty());
    ++commands;
    LiveNode& n = RouteOf(c, slot, thread, *argv);
    const Name label_id = Intern(label);
    LiveClient* cp = &c;
    LiveNode* np = &n;
    const uint64_t incarnation = c.incarnation;
    // The protocol's reply, after its exec (and lease events) are recorded.
    Deliverer deliver = [cp, incarnation, request](const Reply& reply) {
      cp->Deliver(incarnation, [cp, request, reply] {
        cp->protocol_->OnReply(cp->outbox(), request, reply);
      });
    };
    if (options.keyspace != nullptr) {
      // The user's servers: the command goes with its keys and channels under the run's
      // prefix, or not at all. A refused command gets an error reply, as from a server, and
      // no exec event: the server never saw it.
      std::string why;
      std::optional<Argv> mapped = options.keyspace->ToServer(*argv, &why);
      if (!mapped) {
        const Reply refused = Reply::Error("ERR lockstep --redis: not sent: " + why);
        loop.After(0, [deliver, refused] { deliver(refused); });
        return;
      }
      argv = ShareArgv(std::move(*mapped));
    }
    const std::string_view command = (*argv)[0];
    // A reply a fault proxy dropped, handed over: the server ran the command, so its exec is
    // recorded, as the simulator records it; the protocol never sees the reply.
    auto lost = [this, np, cp, thread, label_id, request, argv](const Reply& r) {
      Exec(*np, *cp, thread, label_id, request, FromServer(*argv, r), EstimatedLocalMs(*np));
    };
    if (EqualsIgnoreCase(command, "SUBSCRIBE") || EqualsIgnoreCase(command, "UNSUBSCRIBE")) {
      c.PubSub(n.index).Send(*argv, [this, np, cp, thread, label_id, request, deliver](const Reply& server_reply) {
        const Reply r = options.keyspace != nullptr
                            ? options.keyspace->ConfirmationFromServer(server_reply)
                            : server_reply;
        Exec(*np, *cp, thread, label_id, request, r, EstimatedLocalMs(*np));
        deliver(r);
      });
      return;
    }
    if (LiveSession* s = SessionFor(c, thread, n, *argv)) {
      SendOnSession(c, *s, n, thread, request, label_id, argv, deliver);
      return;
    }
    RespConnection& conn = c.Command(n.index);
    // In a cluster a transaction's keys must share one slot: a command on another slot than
    // the lock's goes alone.
    if (!Wrappable(*argv) || (cluster != nullptr && ClientRouteSlot(*argv) != KeyHashSlot(server_lock_key))) {
      conn.Send(
          *argv,
          [this, np, cp, thread, label_id, request, deliver, argv](const Reply& server_reply) {
            const Reply r = FromServer(*argv, server_reply);
            Exec(*np, *cp, thread, label_id, request, r, EstimatedLocalMs(*np));
            deliver(r);
          },
          lost);
      return;
    }
    Transaction(conn, argv.get(),
                [this, np, cp, thread, label_id, request, deliver, argv](
                    const Reply& server_reply, std::optional<int64_t> seq,
                    std::optional<KeyState> key, bool lost) {
                  const Reply reply = FromServer(*argv, server_reply);
                  if (!seq || !key) {
                    Exec(*np, *cp, thread, label_id, request, reply, EstimatedLocalMs(*np));
                    if (!lost) deliver(reply);
                    return;
                  }
                  Ready(*np, *seq, std::move(*key),
                        [this, np, cp, thread, label_id, request, deliver, reply, lost](const KeyState& k,
                                                                                      bool late) {
                          Exec(*np, *cp, thread, label_id, request, reply, k.local_ms);
                          TrackLock(*np, k, names::kReleased, late);
                          if (!lost) deliver(reply);
                        });
                });
  }

  // --- session connections (LiveSession) ---

  // The node a command goes to: the protocol's slot's (Route), except that in a [cluster] a
  // command without a key (MULTI, EXEC, DISCARD, UNWATCH) of a thread with a transaction or
  // watches open goes where they are, as a cluster client keeps a transaction on one node.
  LiveNode& RouteOf(const LiveClient& c, int slot, int thread, const Argv& argv) {
    if (cluster != nullptr && ClientRouteSlot(argv) < 0) {
      for (const auto& [at, s] : c.sessions) {
        if (at.first == thread && s->active()) return *nodes[static_cast<size_t>(at.second)];
      }
    }
    return Route(c, slot, argv);
  }

  // The session `argv` goes on, created when first needed; null: the command connection.
  LiveSession* SessionFor(LiveClient& c, int thread, const LiveNode& n, const Argv& argv) {
    const auto at = std::make_pair(thread, n.index);
    auto it = c.sessions.find(at);
    if (it != c.sessions.end() && it->second->active()) return it->second.get();
    if (!NeedsSession(argv[0])) return nullptr;
    if (it == c.sessions.end()) {
      auto s = std::make_unique<LiveSession>();
      LiveSession* sp = s.get();
      RespConnection::Handlers h;
      // The server dropped the transaction and the watches with the connection.
      h.on_down = [sp](const std::string&) { sp->Reset(); };
      s->conn = std::make_unique<RespConnection>(loop, ConnectionTo(n, false, &c.name),
                                                 WithHooks(std::move(h)));
      it = c.sessions.emplace(at, std::move(s)).first;
    }
    return it->second.get();
  }

  // Whether the probe of the lock key may run on `n` inside a transaction of a [cluster]: the
  // node serves the lock key's slot.
  bool ServesLockKey(const LiveNode& n) const {
    if (cluster == nullptr) return true;
    const int owner = cluster->owner(KeyHashSlot(server_lock_key));
    return owner >= 0 && cluster_nodes[static_cast<size_t>(owner)] == n.index;
  }

  // A command on a session goes bare, and its exec is recorded when its reply comes, with an
  // estimated local_ms, as any command sent alone; but the EXEC of an open transaction carries
  // the probe (SessionExec). A command queued in a MULTI gets its +QUEUED (or the error that
  // refused it, which is recorded as its exec) as its reply.
  void SendOnSession(LiveClient& c, LiveSession& s, LiveNode& n, int thread,
                     locks::RequestId request, Name label, const SharedArgv& argv,
                     const Deliverer& deliver) {
    assert(s.in_multi == (s.tx != nullptr));
    assert(s.conn != nullptr);
    const std::string name = AsciiLowered((*argv)[0]);
    if (s.in_multi && name == "exec") {
      return SessionExec(c, s, n, thread, request, label, argv, deliver);
    }
    // Inside a MULTI, redis-server runs these at once (multi.c); anything else it queues.
    const bool runs_now = name == "multi" || name == "watch" || name == "exec" || name == "discard";
    std::shared_ptr<LiveSession::Transaction> tx = s.in_multi && !runs_now ? s.tx : nullptr;
    const size_t at = tx != nullptr ? tx->queued.size() : 0;
    // The transaction a MULTI opens: if the server answers it with an error (an ACL refused
    // it, say), none is open and nothing is queued (the watches stay).
    const std::shared_ptr<LiveSession::Transaction> opens =
        name == "multi" && !s.in_multi ? std::make_shared<LiveSession::Transaction>() : nullptr;
    LiveClient* cp = &c;
    LiveNode* np = &n;
    LiveSession* sp = &s;
    auto on_reply = [this, np, cp, sp, thread, label, request, argv, deliver, tx, at,
                     opens](const Reply& server_reply, bool lost) {
      const Reply r = FromServer(*argv, server_reply);
      // A queued command runs at EXEC, and its exec comes from EXEC's reply; the +QUEUED itself
      // is no exec (the checkers would read an unlock's +QUEUED as its answer).
      const bool queued = tx != nullptr && r.type == Reply::Type::kStatus && r.str == "QUEUED";
      if (queued && at < tx->queued.size()) tx->queued[at].accepted = true;
      if (opens != nullptr && r.is_error() && sp->tx == opens) {
        sp->in_multi = false;
        sp->tx.reset();
      }
      if (!queued) Exec(*np, *cp, thread, label, request, r, EstimatedLocalMs(*np));
      if (!lost) deliver(r);
    };
    const int64_t index = s.conn->Send(
        *argv, [on_reply](const Reply& r) { on_reply(r, /*lost=*/false); },
        [on_reply](const Reply& r) { on_reply(r, /*lost=*/true); });
    if (index < 0) return;  // The server never gets it: its state stays.
    if (opens != nullptr) {
      s.in_multi = true;
      s.tx = opens;
    } else if (name == "discard") {
      if (s.in_multi) s.Reset();
    } else if (name == "watch") {
      if (!s.in_multi) s.watching = true;
    } else if (name == "unwatch" && !s.in_multi) {
      s.watching = false;
    } else if (tx != nullptr) {
      if (tx->queued.size() < LiveSession::kQueuedMax) {
        tx->queued.push_back(LiveSession::Queued{label, request, argv, false});
      }
      const int key_slot = ClientRouteSlot(*argv);
      if (cluster != nullptr && key_slot >= 0 && key_slot != KeyHashSlot(server_lock_key)) {
        tx->probe_fits = false;
      }
    }
  }

  // The program's EXEC of its open transaction: the probe and the sequence number are queued
  // last in it (their +QUEUED replies swallowed), so that the transaction's exec and lease
  // events are ordered with the node's others, as Transaction's are. From EXEC's reply the
  // program gets its own elements only; EXEC gets its exec, then each command it ran gets its
  // own with its element, at the node's TIME inside the transaction, then the lease events:
  // a lease change is recorded after the transaction's last command, which readers that take
  // the exec right before a lease event as its cause (the reentrancy checker) credit with it.
  // A null reply (a watched key changed), EXECABORT or another error: nothing ran, and only
  // EXEC's exec is recorded, with an estimated local_ms. A transaction without the probe (in a
  // [cluster], one with keys on other slots than the lock key's) records the same execs at an
  // estimated local_ms, and no lease change.
  void SessionExec(LiveClient& c, LiveSession& s, LiveNode& n, int thread,
                   locks::RequestId request, Name label, const SharedArgv& argv,
                   const Deliverer& deliver) {
    assert(s.in_multi && s.tx != nullptr);
    const std::shared_ptr<const LiveSession::Transaction> tx = std::move(s.tx);
    s.Reset();  // EXEC ends the transaction and every watch, whatever it answers.
    RespConnection& conn = *s.conn;
    bool probed = tx->probe_fits && ServesLockKey(n);
    if (probed) {
      probed = conn.Send({"EVAL", kProbeScript, "1", server_lock_key}, nullptr) >= 0 &&
               conn.Send({"INCR", seq_key}, nullptr) >= 0;
    }
    LiveClient* cp = &c;
    LiveNode* np = &n;
    auto finish = [this, np, cp, thread, label, request, deliver, tx, probed](const Reply& exec,
                                                                             bool lost) {
      // A transaction that ran answers an array; a null one (a watched key changed), EXECABORT
      // and other errors say nothing ran.
      if (exec.type != Reply::Type::kArray) {
        Exec(*np, *cp, thread, label, request, exec, EstimatedLocalMs(*np));
        if (!lost) deliver(exec);
        return;
      }
      const size_t size = exec.elements.size();
      std::optional<KeyState> key;
      std::optional<int64_t> seq;
      if (probed && size >= 2) {
        key = ParseProbe(exec.elements[size - 2]);
        seq = IntOf(exec.elements[size - 1]);
      }
      const bool exact = key && seq;
      Reply own = exec;
      if (exact) own.elements.resize(size - 2);
      // The program's elements, in the order of the commands the server queued.
      std::vector<const LiveSession::Queued*> ran;
      for (const LiveSession::Queued& q : tx->queued) {
        if (q.accepted) ran.push_back(&q);
      }
      if (ran.size() != own.elements.size()) {
        // A +QUEUED the driver did not see (a proxy dropped it with no bytes): pair by position.
        ran.clear();
        for (const LiveSession::Queued& q : tx->queued) ran.push_back(&q);
      }
      for (size_t i = 0; i < own.elements.size() && i < ran.size(); ++i) {
        own.elements[i] = FromServer(*ran[i]->argv, own.elements[i]);
      }
      // EXEC's exec, then its commands' (tx keeps what `ran` points to alive).
      auto record = [this, np, cp, thread, label, request, tx, ran, own](int64_t local_ms) {
        Exec(*np, *cp, thread, label, request, own, local_ms);
        for (size_t i = 0; i < own.elements.size() && i < ran.size(); ++i) {
          Exec(*np, *cp, thread, ran[i]->label, ran[i]->request, own.elements[i], local_ms);
        }
      };
      if (!exact) {
        // Without the probe (a [cluster] transaction on other slots): estimated, untracked.
        record(EstimatedLocalMs(*np));
        if (!lost) deliver(own);
        return;
      }
      Ready(*np, *seq, std::move(*key),
            [this, np, record, deliver, own, lost](const KeyState& k, bool late) {
              record(k.local_ms);
              TrackLock(*np, k, names::kReleased, late);
              if (!lost) deliver(own);
            });
    };
    conn.Send(
        *argv, [finish](const Reply& exec) { finish(exec, /*lost=*/false); },
        [finish](const Reply& exec) { finish(exec, /*lost=*/true); });
  }

  // --- expiry ---

  void WatchExpiry(LiveNode& n) {
    LiveNode* np = &n;
    RespConnection::Handlers h;
    h.on_message = [this, np](const std::string&, const std::string& key) {
      if (key == server_lock_key) Probe(*np, names::kExpired);
    };
    h.on_down = [this, np](const std::string&) {
      // The node is down (or paused past our limits); subscribe again once it may be back.
      loop.After(options.reconnect_delay_us, [this, np] { SubscribeExpiry(*np); });
    };
    n.observer = std::make_unique<RespConnection>(loop, ConnectionTo(n, true), WithHooks(std::move(h)));
    n.probe = std::make_unique<RespConnection>(loop, ConnectionTo(n, false), WithHooks({}));
    SubscribeExpiry(n);
  }

  void SubscribeExpiry(LiveNode& n) {
    if (!started) return;
    n.observer->Send({"SUBSCRIBE", kExpiredChannel}, nullptr);
  }

  // Looks at the lock key now: after the server expired it (gone_as expired), or on a master
  // just promoted (gone_as lost).
  void Probe(LiveNode& n, Name gone_as) {
    LiveNode* np = &n;
    Transaction(*n.probe, nullptr,
                [this, np, gone_as](const Reply&, std::optional<int64_t> seq,
                                    std::optional<KeyState> key, bool /*lost*/) {
                  if (!seq || !key) return;
                  Ready(*np, *seq, std::move(*key),
                        [this, np, gone_as](const KeyState& k, bool late) {
                          TrackLock(*np, k, gone_as, late);
                        });
                });
  }

  // --- clients ---

  // Starts (or restarts) a client process. A restarted process is a new RedissonClient with a
  // new UUID, as a real restart would be.
  void StartClient(LiveClient& c, bool restart) {
    if (restart || c.uuid.empty()) c.uuid = drive::NewClientUuid(*c.rng_);
    std::string error;
    c.protocol_ = locks::MakeProtocol(scenario.protocol.kind_name(),
                                      drive::ClientConfigFor(scenario, c.index, c.uuid), scripts,
                                      &error);
    assert(c.protocol_ != nullptr);  // Create() made the same call successfully.
    c.outbox_ = MakeOutbox(c);
    c.workload->Start(*c.protocol_, c.outbox(), c.uuid, restart);
  }

  std::unique_ptr<LiveOutbox> MakeOutbox(LiveClient& c);

  void CrashClient(LiveClient& c) {
    c.up = false;
    ++c.incarnation;
    c.protocol_->OnCrash();
    c.workload->Crash();
    for (const auto& [timer, id] : c.timers) loop.Cancel(id);
    c.timers.clear();
    c.paused = false;  // Its pause ends with it: no resume comes for a crashed process.
    c.held.clear();
    // Its connections die with it: what they were waiting for is never delivered, and the
    // servers drop its subscriptions.
    c.DropConnections();
  }

  // [gc]: pauses drawn from the client's PRNG, as the simulator draws them, each made and
  // recorded by the fault schedule's PauseFor (nothing when the client is down or paused).
  void ScheduleGc(LiveClient& c) {
    const int64_t every = scenario.gc.every_us.Sample(*c.rng_);
    LiveClient* cp = &c;
    loop.After(every, [this, cp] {
      const int64_t pause = scenario.gc.pause_us.Sample(*cp->rng_);
      if (pause > 0) drive::PauseFor(*options.faults, cp->name, pause, /*gc=*/true);
      ScheduleGc(*cp);
    });
  }

  // A pause of the whole process (a GC pause, SIGSTOP) ends: it runs everything that arrived
  // meanwhile, in order.
  void Resume(LiveClient& c) {
    c.paused = false;
    // Work run while resuming may pause again: stop there.
    while (!c.held.empty() && !c.paused) {
      auto work = std::move(c.held.front());
      c.held.pop_front();
      work();
      c.CheckProgram();
    }
  }
};

// --- the client's outbox and host -----------------------------------------------------------

class LiveOutbox final : public locks::Outbox {
 public:
  LiveOutbox(LiveRun::Impl& run, LiveClient& c) : run_(run), c_(c) {}
  int64_t MonoUs() override { return c_.clock->MonoUs(run_.Now()); }
  int64_t WallMs() override { return c_.clock->WallMs(run_.Now()); }
  Prng& Rng() override { return *c_.rng_; }
  int NodeCount() override { return run_.NodeCountOf(c_); }
  void ArmTimer(locks::TimerId timer, int64_t delay_us) override {
    CancelTimer(timer);  // Arming again replaces it, as the simulator's timers do.
    LiveClient* cp = &c_;
    const uint64_t incarnation = c_.incarnation;
    const EventLoop::TimerId id =
        run_.loop.At(c_.MonoDeadline(delay_us), [cp, incarnation, timer] {
          cp->timers.erase(timer);
          cp->Deliver(incarnation, [cp, timer] { cp->protocol_->OnTimer(cp->outbox(), timer); });
        });
    c_.timers[timer] = id;
  }
  void CancelTimer(locks::TimerId timer) override {
    auto it = c_.timers.find(timer);
    if (it == c_.timers.end()) return;
    run_.loop.Cancel(it->second);
    c_.timers.erase(it);
  }
  void Complete(int thread, const locks::OpResult& result) override {
    c_.workload->OnComplete(thread, result);
    c_.CheckProgram();
  }
  void HolderValue(int thread, std::string_view value) override {
    history::Event e = history::HolderValueNote(c_.id, thread, value, WallMs());
    c_.Record(e);
  }

 private:
  void DoSend(int slot, locks::RequestId request, SharedArgv argv, const std::string& label,
              int thread) override {
    run_.Send(c_, slot, request, std::move(argv), label, thread);
  }

  LiveRun::Impl& run_;
  LiveClient& c_;
};

std::unique_ptr<LiveOutbox> LiveRun::Impl::MakeOutbox(LiveClient& c) {
  return std::make_unique<LiveOutbox>(*this, c);
}

void LiveClient::Record(history::Event& e) { run_.Record(e); }

void LiveClient::CheckProgram() {
  // Only the client kind's protocols can fail; the others would pay a call for nothing.
  if (!run_.declarations || !run_.program_error.empty() || protocol_ == nullptr) return;
  const std::string error = protocol_->ProgramError();
  if (error.empty()) return;
  run_.program_error = "client " + name + "'s program failed: " + error;
  run_.loop.Stop();
}
Name LiveClient::Intern(std::string_view s) { return run_.Intern(s); }
int64_t LiveClient::WallMs() { return clock->WallMs(run_.Now()); }
locks::Outbox& LiveClient::outbox() { return *outbox_; }

int64_t LiveClient::MonoDeadline(int64_t delay_us) {
  const TrueTime now = run_.Now();
  const TrueTime at = clock->AfterMono(now, std::max<int64_t>(0, delay_us));
  return run_.start_loop_us + (at == kNever ? now + delay_us : at);
}

void LiveClient::After(int64_t delay_us, std::function<void()> work) {
  const uint64_t inc = incarnation;
  run_.loop.At(MonoDeadline(delay_us), [this, inc, work = std::move(work)]() mutable {
    Deliver(inc, std::move(work));
  });
}

RespConnection& LiveClient::Command(int node) {
  auto& conn = command[static_cast<size_t>(node)];
  if (!conn) {
    conn = std::make_unique<RespConnection>(
        run_.loop, run_.ConnectionTo(*run_.nodes[static_cast<size_t>(node)], false, &name),
        run_.WithHooks({}));
  }
  return *conn;
}

RespConnection& LiveClient::PubSub(int node) {
  auto& conn = pubsub[static_cast<size_t>(node)];
  if (!conn) {
    RespConnection::Handlers h;
    LiveNode* np = run_.nodes[static_cast<size_t>(node)].get();
    h.on_message = [this, np](const std::string& server_channel, const std::string& payload) {
      const std::string channel = run_.options.keyspace != nullptr
                                      ? run_.options.keyspace->FromServer(server_channel)
                                      : server_channel;
      Deliver(incarnation, [this, np, channel, payload] {
        history::Event e;
        e.type = EventType::kMessage;
        e.process = id;
        e.peer = np->id;
        e.op = run_.Intern(channel);
        e.detail = history::Text{payload};
        Record(e);
        // The protocol's slot for the node (a node it does not address: slot 0's handler,
        // which ignores channels it did not subscribe to), as in the simulator.
        int slot = 0;
        for (size_t i = 0; i < slots.size() && run_.cluster == nullptr; ++i) {
          if (slots[i] == np->index) slot = static_cast<int>(i);
        }
        protocol_->OnMessage(outbox(), slot, channel, payload);
      });
    };
    conn = std::make_unique<RespConnection>(run_.loop, run_.ConnectionTo(*np, true, &name),
                                            run_.WithHooks(std::move(h)));
  }
  return *conn;
}

// --- LiveRun --------------------------------------------------------------------------------

LiveRun::LiveRun(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LiveRun::~LiveRun() {
  // Connections unwatch their fds from the loop: they go first.
  for (auto& c : impl_->clients) {
    c->DropConnections();
    c->workload.reset();
  }
  for (auto& n : impl_->nodes) {
    n->probe.reset();
    n->observer.reset();
  }
}

std::unique_ptr<LiveRun> LiveRun::Create(const Scenario& scenario, LiveOptions options,
                                         history::Recorder& recorder, std::string* error) {
  auto impl = std::make_unique<Impl>();
  Impl& s = *impl;
  s.scenario = scenario;
  s.options = std::move(options);
  s.recorder = &recorder;
  s.rng = Prng(scenario.seed);
  // The simulator forks its network's generator first; the clients' generators come after it,
  // so that a seed gives each client the same UUID and draws in both drivers.
  [[maybe_unused]] Prng net_rng = s.rng.Fork();
  auto scripts = locks::LoadScripts(s.options.lua_dir, scenario.protocol.kind_name(),
                                    scenario.protocol.version, scenario.protocol.script_files,
                                    error, scenario.protocol.client);
  if (!scripts) return nullptr;
  s.scripts = std::move(*scripts);
  {
    locks::ClientConfig probe;
    probe.version = scenario.protocol.version;
    if (locks::MakeProtocol(scenario.protocol.kind_name(), probe, s.scripts, error) == nullptr) {
      return nullptr;
    }
    if (scenario.protocol.kind->client_program) {
      locks::ClientDeclarations d;
      if (!locks::ReadClientDeclarations(probe, s.scripts, &d, error)) return nullptr;
      s.declarations = std::move(d);
    }
  }
  if (scenario.gc.enabled && s.options.faults == nullptr) {
    *error = "[gc] needs a fault target for its pauses (LiveOptions::faults)";
    return nullptr;
  }
  if (s.options.keyspace != nullptr) {
    // Everything of the run under one prefix: the sequence key too ("<prefix>{lock}:seq").
    const std::string& p = s.options.keyspace->prefix();
    s.options.run_prefix = p.substr(0, p.size() - (p.back() == ':' ? 1 : 0));
  } else if (s.options.run_prefix.empty()) {
    s.options.run_prefix = "lockstep:" + std::to_string(::getpid()) + ":" +
                           std::to_string(EventLoop::NowUs());
  }
  // The sequence key shares the lock key's hash slot, so that one transaction may hold both
  // on a cluster: the lock's name as the hash tag, or the lock's own tag if it has one.
  const std::string& lock = scenario.protocol.lock_name;
  s.server_lock_key = s.options.keyspace != nullptr ? s.options.keyspace->Key(lock) : lock;
  s.seq_key = s.options.run_prefix + ":{" + lock + "}:seq";
  if (KeyHashSlot(s.seq_key) != KeyHashSlot(s.server_lock_key)) {
    s.seq_key = s.options.run_prefix + ":" + lock + ":seq";
  }

  std::vector<int> masters;
  for (size_t i = 0; i < scenario.nodes.size(); ++i) {
    const NodeSpec& spec = scenario.nodes[i];
    auto it = s.options.nodes.find(spec.name);
    if (it == s.options.nodes.end()) {
      *error = "node " + spec.name + " has no address";
      return nullptr;
    }
    auto n = std::make_unique<LiveNode>();
    n->index = static_cast<int>(i);
    n->name = spec.name;
    n->address = it->second;
    n->master = spec.replica_of.empty();
    if (n->master) masters.push_back(n->index);
    s.nodes.push_back(std::move(n));
  }
  if (masters.empty()) {
    *error = "the scenario has no master node";
    return nullptr;
  }
  if (scenario.cluster.enabled) {
    // Every node is a master, in declaration order, with the simulator's slot split.
    std::vector<std::string> endpoints;
    for (auto& n : s.nodes) {
      if (!n->master) {
        *error = "node " + n->name + " is a replica; a [cluster] has masters only";
        return nullptr;
      }
      endpoints.push_back(n->address.host + ":" + std::to_string(n->address.port));
      s.cluster_nodes.push_back(n->index);
    }
    s.cluster = std::make_shared<const ClusterTopology>(ClusterTopology::Even(std::move(endpoints)));
  }
  for (size_t i = 0; i < scenario.clients.size(); ++i) {
    auto c = std::make_unique<LiveClient>(s);
    c->index = static_cast<int>(i);
    c->name = scenario.clients[i].name;
    c->spec = scenario.clients[i];
    c->clock = std::make_unique<Clock>(ClockOf(scenario, c->name, c->spec.clock),
                                       scenario.start_unix_ms);
    c->rng_ = std::make_unique<Prng>(s.rng.Fork());
    c->slots = masters;
    c->uuid = drive::NewClientUuid(*c->rng_);
    c->command.resize(s.nodes.size());
    c->pubsub.resize(s.nodes.size());
    s.clients.push_back(std::move(c));
  }
  s.lock_id = s.Intern(lock);
  for (auto& n : s.nodes) n->id = s.Intern(n->name);
  for (auto& c : s.clients) c->id = s.Intern(c->name);
  s.resource = std::make_unique<drive::Resource>(s.lock_id, scenario.resource.fencing);
  for (auto& c : s.clients) {
    c->workload = std::make_unique<drive::ClientWorkload>(scenario, c->index, c->id, *s.resource, *c);
  }

  auto run = std::unique_ptr<LiveRun>(new LiveRun(std::move(impl)));
  auto& d = run->derived_;
  d.emplace_back("seed", std::to_string(scenario.seed));
  d.emplace_back("protocol", scenario.protocol.kind_name() + " " +
                                 std::string(history::VersionName(scenario.protocol.version)));
  for (const auto& [name, body] : s.scripts.bodies) {
    d.emplace_back("script " + name, ScriptHost::Sha1Hex(body) + " " + s.scripts.files[name]);
  }
  d.emplace_back("lease", drive::LeaseText(scenario.protocol, scenario.workload.lease_us));
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    const LiveNode& n = *s.nodes[i];
    std::string role = n.master ? "master" : "replica";
    if (s.cluster != nullptr) role = "cluster master, slots " + SlotRangesText(*s.cluster, static_cast<int>(i));
    d.emplace_back("node " + n.name,
                   role + " at " + n.address.host + ":" + std::to_string(n.address.port));
  }
  for (auto& c : s.clients) {
    const std::string role =
        c->spec.role == ClientSpec::Role::kWorker
            ? std::string()
            : ", role " + std::string(history::RoleName(
                              static_cast<history::RoleNote::Role>(c->spec.role)));
    d.emplace_back("client " + c->name,
                   std::to_string(c->spec.threads) + " thread(s)" + role + ", uuid " + c->uuid +
                       ", clock offset " + history::FormatMs(c->spec.clock.offset_us) +
                       drive::OwnWorkloadText(scenario.protocol, c->spec.workload));
  }
  d.emplace_back("sequence key", s.seq_key);
  if (s.options.keyspace != nullptr) {
    d.emplace_back("key prefix", s.options.keyspace->prefix() +
                                     " (every key and channel of the run on the servers)");
  }
  return run;
}

EventLoop& LiveRun::loop() { return impl_->loop; }
TrueTime LiveRun::NowUs() const { return impl_->Now(); }
uint64_t LiveRun::late_results() const { return impl_->late; }
const std::string& LiveRun::program_error() const { return impl_->program_error; }
uint64_t LiveRun::commands_sent() const { return impl_->commands; }

void LiveRun::AtTrueTime(TrueTime at_us, std::function<void()> work) {
  if (!impl_->started) {
    impl_->before_start.emplace_back(at_us, std::move(work));
    return;
  }
  impl_->loop.At(impl_->start_loop_us + at_us, std::move(work));
}

void LiveRun::Stop() { impl_->loop.Stop(); }

void LiveRun::Run(const std::function<bool()>& should_stop,
                  const volatile std::sig_atomic_t* interrupted, int64_t should_stop_every_us) {
  Impl& s = *impl_;
  assert(!s.started);
  s.start_loop_us = EventLoop::NowUs();
  s.started = true;
  {
    std::string slots;  // The cluster note's slot map; empty without [cluster].
    for (size_t i = 0; s.cluster != nullptr && i < s.cluster_nodes.size(); ++i) {
      const LiveNode& n = *s.nodes[static_cast<size_t>(s.cluster_nodes[i])];
      slots += (slots.empty() ? "" : " ") + n.name + "=" + SlotRangesText(*s.cluster, static_cast<int>(i));
    }
    drive::RecordRunNotes(s.scenario, s.clients.empty() ? 0 : s.NodeCountOf(*s.clients[0]), slots,
                          KeyHashSlot(s.scenario.protocol.lock_name),
                          [&s](history::Event& e) { s.Record(e); },
                          s.declarations ? &*s.declarations : nullptr);
    // The servers run on the machine's clock, not from the scenario's start date: what it
    // reads now is their base, so that a report shows their offsets from what was asked.
    const int64_t base_ms = RealtimeMs();
    for (const auto& n : s.nodes) {
      history::Event e;
      e.type = EventType::kNote;
      e.process = n->id;
      e.op = names::kClockBase;
      e.value = base_ms;
      e.has_value = true;
      s.Record(e);
    }
  }
  if (s.options.watch_expiry) {
    for (auto& n : s.nodes) {
      if (n->master) s.WatchExpiry(*n);
    }
  } else if (s.options.probe_at_expiry) {
    for (auto& n : s.nodes) {
      if (n->master && n->probe == nullptr) {
        n->probe = std::make_unique<RespConnection>(s.loop, s.ConnectionTo(*n, false), s.WithHooks({}));
      }
    }
  }
  for (auto& c : s.clients) s.StartClient(*c, /*restart=*/false);
  for (auto& [at_us, work] : s.before_start) s.loop.At(s.start_loop_us + at_us, std::move(work));
  s.before_start.clear();
  if (s.scenario.gc.enabled) {
    for (auto& c : s.clients) {
      const auto& only = s.scenario.gc.clients;
      if (only.empty() || std::find(only.begin(), only.end(), c->name) != only.end()) {
        s.ScheduleGc(*c);
      }
    }
  }
  s.loop.SetIterationHook([&s] { s.Flush(/*force=*/false); });
  s.loop.StopWhen(interrupted);
  // Asks should_stop now and then; lives until the loop has run.
  std::function<void()> ask;
  if (should_stop) {
    ask = [&s, &should_stop, &ask, should_stop_every_us] {
      if (should_stop()) return s.loop.Stop();
      s.loop.After(should_stop_every_us, ask);
    };
    s.loop.After(should_stop_every_us, ask);
  }
  const bool to_the_end = s.loop.Run(s.start_loop_us + s.scenario.duration_us);
  s.loop.SetIterationHook(nullptr);
  s.Flush(/*force=*/true);
  interrupted_ = !to_the_end;
  end_us_ = to_the_end ? s.scenario.duration_us : s.Now();
  history::Event e;
  e.type = EventType::kNote;
  e.process = names::kSim;
  e.op = names::kEnd;
  if (interrupted_) e.detail = history::Text{"interrupted"};
  // The end note at the run's end, as the simulator writes it (the loop may stop a little
  // after the deadline).
  e.t_us = std::max(end_us_, s.recorder->last_t_us());
  s.recorder->Append(e);
}

bool LiveRun::ClientDown(const std::string& name) const {
  const LiveClient* c = impl_->FindClient(name);
  return c != nullptr && !c->up;
}

bool LiveRun::CrashClient(const std::string& name) {
  Impl& s = *impl_;
  LiveClient* c = s.FindClient(name);
  if (c == nullptr || !c->up) return false;
  s.CrashClient(*c);
  return true;
}

bool LiveRun::RestartClient(const std::string& name) {
  Impl& s = *impl_;
  LiveClient* c = s.FindClient(name);
  if (c == nullptr || c->up) return false;
  c->up = true;
  s.StartClient(*c, /*restart=*/true);
  return true;
}

bool LiveRun::PauseClient(const std::string& name) {
  LiveClient* c = impl_->FindClient(name);
  if (c == nullptr || !c->up || c->paused) return false;
  c->paused = true;
  return true;
}

bool LiveRun::ResumeClient(const std::string& name) {
  Impl& s = *impl_;
  LiveClient* c = s.FindClient(name);
  if (c == nullptr || !c->up || !c->paused) return false;
  s.Resume(*c);
  return true;
}

bool LiveRun::NodeRestarted(const std::string& node) {
  Impl& s = *impl_;
  LiveNode* n = s.FindNode(node);
  if (n == nullptr) return false;
  // What the old process answered is recorded now, in its own numbering; the new process's
  // numbering starts with its first result.
  s.FlushNode(*n, /*force=*/true);
  n->next_seq = kNumberingUnknown;
  return true;
}

bool LiveRun::PromoteNode(const std::string& replica, const std::string& old_master) {
  Impl& s = *impl_;
  LiveNode* r = s.FindNode(replica);
  LiveNode* old = s.FindNode(old_master);
  if (r == nullptr || old == nullptr || r->master || !old->master || s.cluster != nullptr) return false;
  // The new master's view of the lock starts from the old master's, as in the simulator: its
  // first probe records `lost` for what the promoted replica lacks of what the old master had,
  // and `acquired` for what it holds (TrackLock).
  r->master = true;
  r->promoted = true;
  r->lock_owners = old->lock_owners;
  r->lock_expire_ms = kNoExpiryMs;
  old->master = false;
  old->lock_owners.clear();
  old->lock_expire_ms = kNoExpiryMs;
  if (s.started) {
    if (s.options.watch_expiry && r->observer == nullptr) s.WatchExpiry(*r);
    if (r->probe == nullptr) {
      r->probe = std::make_unique<RespConnection>(s.loop, s.ConnectionTo(*r, false), s.WithHooks({}));
    }
    s.Probe(*r, names::kLost);
  }
  return true;
}

bool LiveRun::Rediscover(const std::string& old_master, const std::string& new_master) {
  Impl& s = *impl_;
  LiveNode* old = s.FindNode(old_master);
  LiveNode* now = s.FindNode(new_master);
  if (old == nullptr || now == nullptr) return false;
  for (auto& c : s.clients) {
    for (int& slot : c->slots) {
      if (slot == old->index) slot = now->index;
    }
  }
  history::Event e;
  e.type = EventType::kNote;
  e.process = names::kSim;
  e.op = names::kRediscover;
  e.detail = history::RediscoverNote{now->name};
  s.Record(e);
  return true;
}

void LiveRun::Record(history::Event& e) { impl_->Record(e); }
history::Name LiveRun::Intern(std::string_view s) { return impl_->Intern(s); }

bool LiveRun::NoReplyFor(int local_port, int64_t index, std::string_view lost_reply) {
  Impl& s = *impl_;
  auto apply = [&](RespConnection* conn) {
    if (conn == nullptr || conn->local_port() != local_port) return false;
    conn->NoReplyFor(index, lost_reply);
    return true;
  };
  for (auto& c : s.clients) {
    for (auto& conn : c->command) {
      if (apply(conn.get())) return true;
    }
    for (auto& conn : c->pubsub) {
      if (apply(conn.get())) return true;
    }
    for (auto& [at, session] : c->sessions) {
      if (apply(session->conn.get())) return true;
    }
  }
  for (auto& n : s.nodes) {
    if (apply(n->probe.get()) || apply(n->observer.get())) return true;
  }
  return false;
}

}  // namespace lockstep::live
