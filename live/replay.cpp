#include "live/replay.h"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>

#include "drive/faults.h"
#include "history/names.h"
#include "live/driver.h"
#include "live/fault_proxy.h"
#include "live/server_clock.h"
#include "live/servers.h"
#include "live/support.h"

namespace lockstep::live {

namespace names = history::names;
using history::EventType;
using history::Name;

namespace {

// How often a restarting server is asked whether it answers yet.
constexpr int64_t kRestartPollUs = 5'000;

bool Contains(const std::vector<std::string>& v, const std::string& name) {
  return std::find(v.begin(), v.end(), name) != v.end();
}

bool ClockIsPlain(const ClockSpec& c) {
  return c.offset_us == 0 && c.drift_ppm == 0 && c.jumps.empty();
}

}  // namespace

// The replay's state, and the fault schedule's target (drive/faults.h): ApplyFault and the
// driver's [gc] pauses decide when each fault starts and ends and record it; the primitives
// below act on the servers, the proxy and the driver's clients.
struct Replay::Impl final : drive::FaultTarget {
  Scenario scenario;
  ReplayOptions options;
  history::Recorder* recorder = nullptr;
  std::string clock_dir;  // The shims' control files.
  std::map<std::string, std::unique_ptr<ServerClock>> clocks;  // By node; moved clocks only.
  std::unique_ptr<FaultProxy> proxy;
  std::unique_ptr<LiveServers> servers;
  std::unique_ptr<LiveRun> run;
  std::vector<std::string> notes;
  bool stopped = false;

  // One proxy link per client, node and connection kind, and per replication link. `a` is the
  // connecting side (a client, a replica), `b` the server side (a node, a master).
  struct Link {
    std::string a, b;
    bool pubsub = false;
    bool replication = false;
    int id = -1;
    int port = 0;
    // How many active faults block each direction (to the server, to the client), and the
    // latency they add.
    int blocked[2] = {0, 0};
    int64_t extra_us = 0;  // What latency windows add now, on top of the drawn latency.
  };
  std::vector<Link> links;

  // [sentinel]: the node each monitored group's master is, as last seen.
  std::map<std::string, std::string> sentinel_master;
  // Groups whose failover the scenario requested (SENTINEL FAILOVER) and not yet seen done.
  std::vector<std::string> requested_failovers;

  Link* FindLink(const std::string& a, const std::string& b, bool pubsub, bool replication) {
    for (Link& l : links) {
      if (l.a == a && l.b == b && l.pubsub == pubsub && l.replication == replication) return &l;
    }
    return nullptr;
  }

  Link* AddLink(const std::string& a, const std::string& b, bool pubsub, bool replication,
                const Endpoint& upstream, std::string* error) {
    if (Link* l = FindLink(a, b, pubsub, replication)) return l;
    const ProxyLinkKind kind = replication ? ProxyLinkKind::kReplication
                               : pubsub    ? ProxyLinkKind::kPubSub
                                           : ProxyLinkKind::kCommands;
    const std::string name = a + "->" + b + (replication ? " (replication)" : pubsub ? " (pub/sub)" : "");
    const FaultProxy::Endpoint e = proxy->AddLink(name, upstream.host, upstream.port, kind, error);
    if (e.link < 0) return nullptr;
    Link l;
    l.a = a;
    l.b = b;
    l.pubsub = pubsub;
    l.replication = replication;
    l.id = e.link;
    l.port = e.port;
    links.push_back(l);
    if (standing_network) SetStandingNetwork(links.back());
    return &links.back();
  }

  // Starts the live driver on the proxy: a client's connection goes through its link when it
  // has one, else straight to the node's address as `direct` gives it at that moment (a
  // restarted server may have moved); the proxy's drop reports (with
  // the replies they dropped) reach the driver before each reply is paired and as soon as they
  // are queued, so a lost reply's exec is recorded when the proxy dropped it.
  bool StartDriver(LiveOptions lo, std::function<Endpoint(const std::string&)> direct,
                   history::Recorder& recorder, std::string* error) {
    lo.client_address = [this, direct = std::move(direct)](const std::string& client,
                                                          const std::string& node, bool pubsub) {
      if (Link* l = FindLink(client, node, pubsub, false)) return NodeAddress{"127.0.0.1", l->port};
      const Endpoint e = direct(node);
      return NodeAddress{e.host, e.port};
    };
    lo.before_pairing = [this] { TakeDrops(); };
    lo.faults = this;
    run = LiveRun::Create(scenario, std::move(lo), recorder, error);
    if (!run) return false;
    run->loop().Watch(proxy->drop_fd(), true, false, [this](short) { TakeDrops(); });
    return true;
  }

  // The proxy's drop reports to the driver, with the replies it dropped.
  void TakeDrops() {
    for (const ProxyDrop& d : proxy->TakeDrops()) {
      run->NoReplyFor(d.client_port, static_cast<int64_t>(d.request_index), d.reply);
    }
  }

  // --- the fault target: the driver's time and history, the scenario's processes ---

  void After(int64_t delay_us, std::function<void()> work) override {
    run->loop().After(delay_us, std::move(work));
  }
  void Record(history::Event& e) override { run->Record(e); }
  Name Intern(std::string_view name) override { return run->Intern(name); }

  bool IsNode(const std::string& name) const override {
    return std::any_of(scenario.nodes.begin(), scenario.nodes.end(),
                       [&](const NodeSpec& n) { return n.name == name; });
  }

  // A node is down while its server is crashed (or failed to restart); on the user's servers,
  // whose processes lockstep does not control, never.
  bool Down(const std::string& name) const override {
    if (IsNode(name)) return servers != nullptr && servers->pid(name) == 0;
    return run->ClientDown(name);
  }

  void Crash(const std::string& name) override {
    if (IsNode(name)) {
      CrashNode(name);
    } else {
      run->CrashClient(name);
    }
  }

  void Restart(const std::string& name) override {
    if (IsNode(name)) {
      RestartNode(name);
    } else {
      run->RestartClient(name);
    }
  }

  bool Pause(const std::string& name) override {
    return IsNode(name) ? PauseNode(name) : run->PauseClient(name);
  }

  void Resume(const std::string& name) override {
    if (IsNode(name)) {
      ResumeNode(name);
    } else {
      run->ResumeClient(name);
    }
  }

  // --- network faults on the proxy ---

  // The partitions and network windows open now, by the handle their Open gave.
  std::map<uint64_t, FaultSpec> open_windows;
  uint64_t last_window = 0;

  uint64_t Opened(const FaultSpec& f) {
    open_windows.emplace(++last_window, f);
    return last_window;
  }
  FaultSpec Closed(uint64_t handle) {
    auto it = open_windows.find(handle);
    assert(it != open_windows.end());
    FaultSpec f = std::move(it->second);
    open_windows.erase(it);
    return f;
  }

  uint64_t OpenPartition(const FaultSpec& f) override {
    Partition(f, true);
    return Opened(f);
  }
  void ClosePartition(uint64_t handle) override { Partition(Closed(handle), false); }

  // A latency or loss window. A duplicate window never comes: it is refused before the run
  // (live/support.h), since TCP delivers each byte once.
  uint64_t OpenNetworkWindow(const FaultSpec& f) override {
    assert(f.kind != FaultSpec::Kind::kDuplicate);
    if (f.kind == FaultSpec::Kind::kLatency) {
      Latency(f, true);
    } else if (f.kind == FaultSpec::Kind::kLoss) {
      Loss(f, f.rate);
    }
    return Opened(f);
  }
  void CloseNetworkWindow(uint64_t handle) override {
    const FaultSpec f = Closed(handle);
    if (f.kind == FaultSpec::Kind::kLatency) {
      Latency(f, false);
    } else if (f.kind == FaultSpec::Kind::kLoss) {
      Loss(f, scenario.network.loss);  // Back to the standing loss.
    }
  }

  // A partition (or its heal): the links whose one end is in side A and the other in side B
  // lose what travels from A to B, and with a two-way partition also what travels back.
  void Partition(const FaultSpec& f, bool on) {
    const auto in_a = [&](const std::string& n) { return Contains(f.targets, n); };
    const auto in_b = [&](const std::string& n) { return Contains(f.peers, n); };
    for (Link& l : links) {
      const bool to_server = (in_a(l.a) && in_b(l.b)) || (!f.one_way && in_b(l.a) && in_a(l.b));
      const bool to_client = (in_a(l.b) && in_b(l.a)) || (!f.one_way && in_b(l.b) && in_a(l.a));
      Block(l, ProxyDirection::kToServer, to_server, on);
      Block(l, ProxyDirection::kToClient, to_client, on);
    }
  }
  void Block(Link& l, ProxyDirection d, bool applies, bool on) {
    if (!applies) return;
    int& count = l.blocked[d == ProxyDirection::kToServer ? 0 : 1];
    count += on ? 1 : -1;
    if ((on && count == 1) || (!on && count == 0)) proxy->SetBlocked(l.id, d, on);
  }

  // Whether a network window (latency, loss) covers link `l`: one end in targets and, when the
  // window names peers, the other end in peers.
  static bool InWindow(const FaultSpec& f, const Link& l) {
    if (f.peers.empty()) return Contains(f.targets, l.a) || Contains(f.targets, l.b);
    return (Contains(f.targets, l.a) && Contains(f.peers, l.b)) ||
           (Contains(f.targets, l.b) && Contains(f.peers, l.a));
  }

  // A latency window: every link with an end in targets (and, with peers, the other in peers).
  // The replication stream is left alone, as the simulator leaves it.
  void Latency(const FaultSpec& f, bool on) {
    for (Link& l : links) {
      if (l.replication || !InWindow(f, l)) continue;
      l.extra_us += on ? f.extra_us : -f.extra_us;
      proxy->SetExtraLatency(l.id, ProxyDirection::kToServer, l.extra_us);
      proxy->SetExtraLatency(l.id, ProxyDirection::kToClient, l.extra_us);
    }
  }

  // A loss window: each message on the affected links is dropped with probability `rate`
  // (overlapping loss windows on one link: the last one set wins).
  void Loss(const FaultSpec& f, double rate) {
    for (Link& l : links) {
      if (l.replication) continue;
      if (!InWindow(f, l)) continue;
      proxy->SetLoss(l.id, ProxyDirection::kToServer, rate);
      proxy->SetLoss(l.id, ProxyDirection::kToClient, rate);
    }
  }

  // The scenario's standing network: [network] latency_ms (or a link's own) on the client
  // links and [replication] lag_ms from master to replica, each message drawn from its
  // distribution by the proxy, and [network] loss on the client links, as in the simulator.
  // A link added later (a replica's new master after a failover) gets it when added.
  void SetStandingNetwork() {
    standing_network = true;
    for (const Link& l : links) SetStandingNetwork(l);
  }
  void SetStandingNetwork(const Link& l) {
    if (l.replication) {
      // The master's stream; the replica's acknowledgements go unlagged, as in the simulator.
      proxy->SetLatency(l.id, ProxyDirection::kToClient, scenario.replication.lag_us);
      return;
    }
    const auto link_latency = [&](const std::string& from, const std::string& to) {
      auto it = scenario.network.link_latency_us.find(from + "->" + to);
      return it != scenario.network.link_latency_us.end() ? it->second
                                                          : scenario.network.latency_us;
    };
    proxy->SetLatency(l.id, ProxyDirection::kToServer, link_latency(l.a, l.b));
    proxy->SetLatency(l.id, ProxyDirection::kToClient, link_latency(l.b, l.a));
    if (scenario.network.loss > 0) {
      proxy->SetLoss(l.id, ProxyDirection::kToServer, scenario.network.loss);
      proxy->SetLoss(l.id, ProxyDirection::kToClient, scenario.network.loss);
    }
  }
  bool standing_network = false;  // Since Run began.

  // The switched kinds a replay makes real. lose_replies: the proxy drops every reply on the
  // node's client links; the server still runs what it is sent. The others are refused before
  // a replay starts (history/fault_kinds.h, not_replayable).
  void Switch(history::FaultKind kind, const std::string& node, bool on) override {
    assert(kind == history::FaultKind::kLoseReplies);
    if (kind != history::FaultKind::kLoseReplies) return;
    for (Link& l : links) {
      if (!l.replication && l.b == node) proxy->SetLoseReplies(l.id, on);
    }
  }

  // --- node process faults ---

  void CrashNode(const std::string& node) {
    std::string error;
    if (!servers->Crash(node, &error)) notes.push_back("crash of " + node + ": " + error);
    for (Link& l : links) {
      if (l.b == node) proxy->CloseAll(l.id);
    }
  }

  void RestartNode(const std::string& node) {
    std::string error;
    if (!servers->BeginRestart(node, &error)) {
      notes.push_back("restart of " + node + ": " + error);
      return;
    }
    // Nothing of the old process is in flight (the crash closed its connections), so the new
    // process's numbering starts here, before the loop can read a reply of it.
    run->NodeRestarted(node);
    WatchRestart(node);
  }

  // The clients go on while the server starts (the loop must not wait for it: a frozen loop
  // would stall every client and then fire their timers at once).
  void WatchRestart(const std::string& node) {
    if (!servers->starting(node)) return;  // Crashed again meanwhile.
    std::string error;
    switch (servers->PollRestart(node, &error)) {
      case RedisProcess::RestartState::kReady: return;
      case RedisProcess::RestartState::kFailed:
        notes.push_back("restart of " + node + ": " + error);
        return;
      case RedisProcess::RestartState::kStarting:
        run->loop().After(kRestartPollUs, [this, node] { WatchRestart(node); });
        return;
    }
  }

  // SIGSTOP; false for a node that is down or paused already (which the schedule then leaves
  // alone) or that could not be stopped (noted).
  bool PauseNode(const std::string& node) {
    if (servers->pid(node) == 0 || servers->paused(node)) return false;
    std::string error;
    if (!servers->Pause(node, &error)) {
      notes.push_back("pause of " + node + ": " + error);
      return false;
    }
    return true;
  }

  void ResumeNode(const std::string& node) {
    std::string error;
    if (!servers->Resume(node, &error)) notes.push_back("resume of " + node + ": " + error);
  }

  // The clients learn of a new master client_rediscover after it was promoted.
  void Promoted(const std::string& old_master, const std::string& replica, const std::string& why) {
    // Recorded here, as Sentinel's own failovers are (PollSentinels): not the schedule's.
    drive::RecordFault(*this, run->Intern(replica), names::kPromote,
                       history::PromoteFault{replica, why});
    run->PromoteNode(replica, old_master);
    run->loop().After(scenario.sentinel.client_rediscover_us, [this, old_master, replica] {
      run->Rediscover(old_master, replica);
    });
  }

  // The scenario's failover of `master`, which the schedule has recorded.
  void Failover(const std::string& master) override {
    std::string error;
    if (scenario.sentinel.enabled) {
      // The sentinels do it (SENTINEL FAILOVER); PollSentinels sees the new master. A
      // promotion behind their back would be undone by them.
      // The group is named after its first master; after an earlier failover, `master` is
      // the group's current master.
      std::string group = master;
      for (const auto& [name, now] : sentinel_master) {
        if (now == master) group = name;
      }
      if (!servers->SentinelFailover(group, &error)) {
        notes.push_back("failover of " + master + ": " + error);
      } else {
        requested_failovers.push_back(group);
      }
      return;
    }
    const std::string promoted = servers->Failover(master, &error);
    if (promoted.empty()) {
      notes.push_back("failover of " + master + ": " + error);
      return;
    }
    Promoted(master, promoted, "manual failover");
  }

  // Asks the sentinels who each group's master is; a change is the real Sentinel's failover.
  void PollSentinels() {
    for (auto& [group, current] : sentinel_master) {
      std::string error;
      const std::optional<Endpoint> at = servers->SentinelMasterAddress(group, &error);
      if (!at) continue;
      const std::string node = servers->NodeAt(at->port);
      if (node.empty() || node == current) continue;
      auto requested = std::find(requested_failovers.begin(), requested_failovers.end(), group);
      if (requested != requested_failovers.end()) {
        // The scenario's failover, recorded when it was asked for.
        requested_failovers.erase(requested);
        Promoted(current, node, "manual failover");
      } else {
        // As the simulator records Sentinel's own failovers: by "sentinel".
        drive::RecordFault(*this, names::kSentinel, names::kFailover,
                           history::FailoverFault{current, scenario.sentinel.down_after_us});
        Promoted(current, node, "sentinel");
      }
      current = node;
    }
    run->loop().After(options.sentinel_poll_us, [this] { PollSentinels(); });
  }
};

Replay::Replay(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

// The user's servers: no process, no clock; the proxy's client links lead to them, and the
// driver keeps its keys under the run's prefix and probes for expiry (no keyspace
// notifications: lockstep does not change a server's configuration).
std::unique_ptr<Replay> Replay::StartOnUserServers(std::unique_ptr<Replay> replay,
                                                   history::Recorder& recorder,
                                                   std::string* error) {
  Impl& s = *replay->impl_;
  const Scenario& scenario = s.scenario;
  assert(s.options.user_servers.size() == scenario.nodes.size());
  s.proxy = std::make_unique<FaultProxy>(scenario.seed);
  const auto address_of = [&s](const std::string& node) {
    for (const UserServer& u : s.options.user_servers) {
      if (u.node == node) return Endpoint{u.host, u.port};
    }
    assert(false);
    return Endpoint{};
  };
  for (const ClientSpec& c : scenario.clients) {
    for (const NodeSpec& n : scenario.nodes) {
      for (const bool pubsub : {false, true}) {
        if (s.AddLink(c.name, n.name, pubsub, false, address_of(n.name), error) == nullptr) {
          return nullptr;
        }
      }
    }
  }
  LiveOptions lo;
  for (const UserServer& u : s.options.user_servers) lo.nodes[u.node] = NodeAddress{u.host, u.port};
  lo.lua_dir = s.options.lua_dir;
  lo.watch_expiry = false;
  lo.probe_at_expiry = true;
  lo.keyspace = s.options.keyspace;
  if (!s.StartDriver(std::move(lo), address_of, recorder, error)) return nullptr;
  return replay;
}

Replay::~Replay() {
  if (impl_->stopped) return;
  for (const std::string& line : Stop()) std::cerr << "lockstep replay: " << line << "\n";
}

std::vector<std::string> Replay::Stop() {
  Impl& s = *impl_;
  if (s.stopped) return {};
  s.stopped = true;
  // The driver first (its connections), then the proxy, then the servers; then the clocks'
  // control files and their folder.
  s.run.reset();
  s.proxy.reset();
  s.servers.reset();
  s.clocks.clear();
  if (!s.clock_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(s.clock_dir, ec);
  }
  std::vector<std::string> out;
  if (s.options.keyspace == nullptr) return out;
  // The user's servers: what is left under the run's prefix goes. Twice, the second time a
  // moment later: a command the proxy had passed on just before it closed may still be
  // executed after the first pass.
  const RunKeyspace& keyspace = *s.options.keyspace;
  std::vector<int64_t> removed(s.options.user_servers.size(), 0);
  std::vector<std::string> failed(s.options.user_servers.size());
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1) ::usleep(100'000);
    for (size_t i = 0; i < s.options.user_servers.size(); ++i) {
      std::string error;
      const std::optional<int64_t> n = RemoveRunKeys(s.options.user_servers[i], keyspace, &error);
      if (n) {
        removed[i] += *n;
        failed[i].clear();
      } else {
        failed[i] = error;
      }
    }
  }
  for (size_t i = 0; i < s.options.user_servers.size(); ++i) {
    const UserServer& u = s.options.user_servers[i];
    if (!failed[i].empty()) {
      out.push_back("node " + u.node + " (" + u.address() + "): the keys under " +
                    keyspace.prefix() + " could not all be deleted: " + failed[i] +
                    "; delete them with: redis-cli -h " + u.host + " -p " +
                    std::to_string(u.port) + " --scan --pattern '" + keyspace.prefix() +
                    "*' | xargs -r redis-cli -h " + u.host + " -p " + std::to_string(u.port) +
                    " unlink");
    } else {
      out.push_back("node " + u.node + " (" + u.address() + "): deleted " +
                    std::to_string(removed[i]) + " key" + (removed[i] == 1 ? "" : "s") +
                    " left under " + keyspace.prefix());
    }
  }
  return out;
}

std::unique_ptr<Replay> Replay::Start(const Scenario& scenario, const ReplayOptions& options,
                                      history::Recorder& recorder, std::string* error) {
  const bool user_servers = !options.user_servers.empty();
  assert(!user_servers || options.keyspace != nullptr);
  const std::vector<std::string> refusals = LiveRefusals(scenario, !user_servers);
  if (!refusals.empty()) {
    *error = refusals.front();
    for (size_t i = 1; i < refusals.size(); ++i) *error += "\n" + refusals[i];
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  Impl& s = *impl;
  s.scenario = scenario;
  s.options = options;
  s.recorder = &recorder;
  // Replay's pieces are torn down in order by ~Replay, also on the way out of a failed start.
  std::unique_ptr<Replay> replay(new Replay(std::move(impl)));
  if (user_servers) return StartOnUserServers(std::move(replay), recorder, error);

  // The node clocks: a shim control file each, for the nodes whose clock the scenario moves.
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                    "/lockstep-clocks-XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {
    *error = "cannot create a temporary directory for the node clocks under " + dir;
    return nullptr;
  }
  s.clock_dir = dir;
  const int64_t now_real_us = ServerClock::RealNowUs();
  for (const NodeSpec& n : scenario.nodes) {
    const ClockSpec spec = ClockOf(scenario, n.name, n.clock);
    if (ClockIsPlain(spec)) continue;
    if (const std::string why = ServerClock::Check(spec); !why.empty()) {
      *error = scenario.file + ": node " + n.name + "'s clock cannot be made real: " + why;
      return nullptr;
    }
    const std::string node_dir = dir + "/" + n.name;
    std::filesystem::create_directories(node_dir);
    auto clock = ServerClock::Create(node_dir, error);
    if (!clock) return nullptr;
    if (!clock->Apply(spec, now_real_us, error)) return nullptr;
    s.clocks[n.name] = std::move(clock);
  }

  s.proxy = std::make_unique<FaultProxy>(scenario.seed);

  ServersOptions so;
  so.notify_keyspace_events = "Ex";
  so.sentinel_time_scale = options.time_scale;
  Impl* sp = &s;
  so.replication_address = [sp](const std::string& replica, const std::string& master,
                                const Endpoint& own) {
    std::string link_error;
    Impl::Link* l = sp->AddLink(replica, master, false, true, own, &link_error);
    if (l == nullptr) return own;  // No proxy on this link: replication runs unfaulted.
    return Endpoint{"127.0.0.1", l->port};
  };
  so.node_env = [sp](const std::string& node) {
    auto it = sp->clocks.find(node);
    return it == sp->clocks.end() ? EnvEntries{} : it->second->Env();
  };
  s.servers = LiveServers::Start(scenario, so, error);
  if (!s.servers) return nullptr;

  for (const ClientSpec& c : scenario.clients) {
    for (const NodeSpec& n : scenario.nodes) {
      for (const bool pubsub : {false, true}) {
        if (s.AddLink(c.name, n.name, pubsub, false, s.servers->address(n.name), error) == nullptr) {
          return nullptr;
        }
      }
    }
  }

  LiveOptions lo;
  for (const NodeSpec& n : scenario.nodes) {
    const Endpoint e = s.servers->address(n.name);
    lo.nodes[n.name] = NodeAddress{e.host, e.port};
  }
  lo.lua_dir = options.lua_dir;
  if (!s.StartDriver(std::move(lo), [sp](const std::string& node) { return sp->servers->address(node); },
                     recorder, error)) {
    return nullptr;
  }
  if (scenario.sentinel.enabled) {
    for (const std::string& group : s.servers->sentinel_master_names()) {
      s.sentinel_master[group] = group;  // Each group is named after its first master.
    }
  }
  return replay;
}

void Replay::Run(const std::function<bool()>& should_stop) {
  Impl& s = *impl_;
  // True time 0 is now: the node clocks' schedules start here too.
  const int64_t zero_real_us = ServerClock::RealNowUs();
  for (auto& [node, clock] : s.clocks) {
    std::string error;
    for (const NodeSpec& n : s.scenario.nodes) {
      if (n.name == node && !clock->Apply(ClockOf(s.scenario, n.name, n.clock), zero_real_us, &error)) {
        s.notes.push_back("clock of " + node + ": " + error);
      }
    }
  }
  s.SetStandingNetwork();
  for (const FaultSpec& f : s.scenario.faults) {
    s.run->AtTrueTime(f.at_us, [this, f] { drive::ApplyFault(f, *impl_); });
  }
  if (s.scenario.sentinel.enabled) {
    s.run->AtTrueTime(0, [this] { impl_->PollSentinels(); });
  }
  s.run->Run(should_stop);
}

int64_t Replay::end_us() const { return impl_->run->end_us(); }
bool Replay::interrupted() const { return impl_->run->interrupted(); }
const std::string& Replay::program_error() const { return impl_->run->program_error(); }
uint64_t Replay::commands_sent() const { return impl_->run->commands_sent(); }
int64_t Replay::timers_late_max_us() const { return impl_->run->loop().timers_late_max_us(); }
const std::vector<std::string>& Replay::fault_notes() const { return impl_->notes; }

std::vector<std::pair<std::string, std::string>> Replay::derived() const {
  std::vector<std::pair<std::string, std::string>> d = impl_->run->derived();
  for (const UserServer& u : impl_->options.user_servers) {
    d.emplace_back("server " + u.node, "the user's redis-server " + u.redis_version + " at " +
                                           u.address() + " (--redis, run_id " + u.run_id + ")");
  }
  for (const std::string& node : impl_->servers ? impl_->servers->node_names()
                                                 : std::vector<std::string>{}) {
    d.emplace_back("server " + node,
                   "redis-server pid " + std::to_string(impl_->servers->pid(node)) + " at " +
                       impl_->servers->address(node).ToString() + ", dir " +
                       impl_->servers->dir(node) +
                       (impl_->clocks.count(node) ? ", clock moved by the time shim" : ""));
  }
  d.emplace_back("fault proxy", std::to_string(impl_->links.size()) +
                                    " links (one per client, node and connection; one per "
                                    "replication link)");
  return d;
}

}  // namespace lockstep::live
