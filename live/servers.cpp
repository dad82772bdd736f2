#include "live/servers.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <csignal>
#include <exception>
#include <map>
#include <thread>

#include "live/redis_client.h"

namespace lockstep {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kSettlePollMs = 50;

// The value of `key` in an INFO text ("key:value\r\n"), or "".
std::string InfoField(const std::string& info, const std::string& key) {
  const std::string needle = key + ":";
  size_t at = 0;
  while ((at = info.find(needle, at)) != std::string::npos) {
    if (at == 0 || info[at - 1] == '\n') {
      const size_t begin = at + needle.size();
      const size_t end = info.find_first_of("\r\n", begin);
      return info.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    }
    at += needle.size();
  }
  return {};
}

// A flat [k1, v1, k2, v2, ...] reply (SENTINEL MASTER) as a map.
std::map<std::string, std::string> PairsOf(const Reply& reply) {
  std::map<std::string, std::string> out;
  for (size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
    out[reply.elements[i].str] = reply.elements[i + 1].str;
  }
  return out;
}

bool IsOk(const std::optional<Reply>& reply) {
  return reply.has_value() && reply->type == Reply::Type::kStatus && reply->str == "OK";
}

std::vector<std::string> PersistenceArgs(NodeSpec::Persistence persistence) {
  switch (persistence) {
    case NodeSpec::Persistence::kNone: return {"--appendonly", "no", "--save", ""};
    case NodeSpec::Persistence::kAofEverySec:
      return {"--appendonly", "yes", "--appendfsync", "everysec"};
    case NodeSpec::Persistence::kAofAlways:
      return {"--appendonly", "yes", "--appendfsync", "always"};
  }
  assert(false);
  return {};
}

}  // namespace

std::unique_ptr<LiveServers> LiveServers::Start(const Scenario& scenario,
                                                const ServersOptions& options,
                                                std::string* error) {
  assert(error != nullptr);
  if (scenario.nodes.empty()) {
    *error = "the scenario has no nodes";
    return nullptr;
  }
  if (scenario.sentinel.enabled &&
      (options.sentinels < 1 || options.sentinel_quorum < 1 ||
       options.sentinel_quorum > options.sentinels)) {
    *error = "sentinel quorum " + std::to_string(options.sentinel_quorum) + " of " +
             std::to_string(options.sentinels) + " sentinels is not a layout";
    return nullptr;
  }
  std::unique_ptr<LiveServers> servers(new LiveServers(options));
  servers->nodes_.reserve(scenario.nodes.size());
  for (const NodeSpec& spec : scenario.nodes) {
    Node node;
    node.spec = spec;
    node.master = spec.replica_of;
    servers->nodes_.push_back(std::move(node));
  }
  for (const Node& node : servers->nodes_) {
    if (node.master.empty()) continue;
    const Node* master = servers->Find(node.master);
    if (master == nullptr || !master->master.empty()) {
      *error = "node " + node.spec.name + " replicates from " + node.master +
               ", which is not a master node";
      return nullptr;
    }
    if (scenario.cluster.enabled) {
      *error = "node " + node.spec.name + " is a replica; a [cluster] has masters only";
      return nullptr;
    }
  }
  if (scenario.cluster.enabled && scenario.sentinel.enabled) {
    *error = "[cluster] and [sentinel] cannot both be enabled";
    return nullptr;
  }

  // Masters first: a replica's config names its master's port.
  std::lock_guard<std::mutex> lock(servers->mu_);
  for (const bool replicas : {false, true}) {
    for (Node& node : servers->nodes_) {
      if (node.master.empty() == replicas) continue;
      if (!servers->StartNode(node, scenario.cluster.enabled, error)) return nullptr;
    }
  }
  if (scenario.cluster.enabled && !servers->FormCluster(error)) return nullptr;
  if (scenario.sentinel.enabled && !servers->StartSentinels(scenario, error)) return nullptr;
  if (!servers->WaitUntilSettled(error)) return nullptr;
  return servers;
}

LiveServers::~LiveServers() {
  // Sentinels first, so that none of them reacts to the servers going away.
  sentinels_.clear();
  nodes_.clear();
}

bool LiveServers::StartNode(Node& node, bool cluster, std::string* error) {
  RedisProcess::Options o;
  o.binary = options_.server_binary;
  o.cluster = cluster;
  o.extra_args = PersistenceArgs(node.spec.persistence);
  // The node's maxmemory, as the emulator has it (with Redis 7.0's default policy, noeviction).
  o.extra_args.insert(o.extra_args.end(), {"--maxmemory", std::to_string(node.spec.maxmemory_mb) + "mb",
                                           "--maxmemory-policy", "noeviction"});
  // A full sync starts at once instead of after redis's default 5 s wait for more replicas
  // to share a diskless transfer: the simulator resyncs a replica at once, and a short run
  // cannot spend 5 s per resync.
  o.extra_args.insert(o.extra_args.end(), {"--repl-diskless-sync-delay", "0"});
  if (!options_.notify_keyspace_events.empty()) {
    o.extra_args.insert(o.extra_args.end(),
                        {"--notify-keyspace-events", options_.notify_keyspace_events});
  }
  o.extra_args.insert(o.extra_args.end(), options_.extra_args.begin(), options_.extra_args.end());
  // The role lives in the config file, not on the command line, so that CONFIG REWRITE can
  // change it for the next start (a command-line value would override the file).
  o.config_text = "# lockstep node " + node.spec.name + "\n" + ReplicaofLine(node);
  if (options_.node_env) o.env = options_.node_env(node.spec.name);
  o.parent_death_signal = SIGKILL;
  o.startup_timeout_ms = options_.startup_timeout_ms;
  o.stop_timeout_ms = options_.stop_timeout_ms;
  std::string why;
  node.process = RedisProcess::Start(o, &why);
  if (node.process == nullptr) {
    *error = "node " + node.spec.name + ": " + why;
    return false;
  }
  return true;
}

std::string LiveServers::ReplicaofLine(const Node& node) const {
  if (node.master.empty()) return {};
  const Node* master = Find(node.master);
  assert(master != nullptr && master->process != nullptr);
  const Endpoint own{"127.0.0.1", master->process->port()};
  const Endpoint at = options_.replication_address
                          ? options_.replication_address(node.spec.name, node.master, own)
                          : own;
  return "replicaof " + at.host + " " + std::to_string(at.port);
}

bool LiveServers::FormCluster(std::string* error) {
  std::vector<std::string> endpoints;
  for (const Node& node : nodes_) {
    endpoints.push_back(Endpoint{"127.0.0.1", node.process->port()}.ToString());
  }
  // The same split the simulator makes (sim/simulation.cpp): ClusterTopology::Even over the
  // masters in declaration order.
  topology_ = std::make_unique<ClusterTopology>(ClusterTopology::Even(std::move(endpoints)));
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Endpoint at{"127.0.0.1", nodes_[i].process->port()};
    for (const SlotRange& r : topology_->RangesOf(static_cast<int>(i))) {
      const auto reply = CommandLocked(
          at, {"CLUSTER", "ADDSLOTSRANGE", std::to_string(r.first), std::to_string(r.last)},
          error);
      if (!IsOk(reply)) {
        if (reply.has_value()) *error = "CLUSTER ADDSLOTSRANGE: " + reply->Debug();
        *error = "node " + nodes_[i].spec.name + ": " + *error;
        return false;
      }
    }
  }
  const Endpoint first{"127.0.0.1", nodes_.front().process->port()};
  for (size_t i = 1; i < nodes_.size(); ++i) {
    const RedisProcess& p = *nodes_[i].process;
    const auto reply = CommandLocked(first,
                                     {"CLUSTER", "MEET", "127.0.0.1", std::to_string(p.port()),
                                      std::to_string(p.cluster_bus_port())},
                                     error);
    if (!IsOk(reply)) {
      if (reply.has_value()) *error = "CLUSTER MEET: " + reply->Debug();
      return false;
    }
  }
  return true;
}

bool LiveServers::StartSentinels(const Scenario& scenario, std::string* error) {
  const int64_t down_after_ms = std::max<int64_t>(1, scenario.sentinel.down_after_us / 1000);
  const int64_t failover_timeout_ms = options_.sentinel_failover_timeout_ms > 0
                                          ? options_.sentinel_failover_timeout_ms
                                          : scenario.duration_us / 1000 + 60'000;
  std::string config = "# lockstep sentinel\n";
  for (const Node& node : nodes_) {
    if (!node.master.empty()) continue;
    const std::string& name = node.spec.name;
    sentinel_master_names_.push_back(name);
    config += "sentinel monitor " + name + " 127.0.0.1 " + std::to_string(node.process->port()) +
              " " + std::to_string(options_.sentinel_quorum) + "\n";
    config += "sentinel down-after-milliseconds " + name + " " + std::to_string(down_after_ms) +
              "\n";
    config += "sentinel failover-timeout " + name + " " +
              std::to_string(failover_timeout_ms) + "\n";
    config += "sentinel parallel-syncs " + name + " 1\n";
  }
  for (int i = 0; i < options_.sentinels; ++i) {
    RedisProcess::Options o;
    o.binary = options_.sentinel_binary;
    o.config_text = config;
    o.config_file_name = "sentinel.conf";
    o.parent_death_signal = SIGKILL;
    o.startup_timeout_ms = options_.startup_timeout_ms;
    o.stop_timeout_ms = options_.stop_timeout_ms;
    std::string why;
    std::unique_ptr<RedisProcess> sentinel = RedisProcess::Start(o, &why);
    if (sentinel == nullptr) {
      *error = "sentinel " + std::to_string(i + 1) + ": " + why;
      return false;
    }
    sentinels_.push_back(std::move(sentinel));
  }
  if (options_.sentinel_time_scale < 1) {
    // Sentinel's defaults for these (sentinel.c), scaled; its timer runs at 10 to 20 Hz, so a
    // shorter period would change nothing.
    const auto scaled = [&](int64_t ms) {
      return std::to_string(std::max<int64_t>(
          kSentinelTimerMs, std::llround(static_cast<double>(ms) * options_.sentinel_time_scale)));
    };
    const Argv debug = {"SENTINEL",       "DEBUG",          "info-period",      scaled(10'000),
                        "ping-period",    scaled(1000),     "ask-period",       scaled(1000),
                        "publish-period", scaled(2000),     "election-timeout", scaled(10'000)};
    for (const auto& s : sentinels_) {
      std::string why;
      const auto reply = CommandLocked(Endpoint{"127.0.0.1", s->port()}, debug, &why);
      if (!IsOk(reply)) {
        *error = "SENTINEL DEBUG on sentinel port " + std::to_string(s->port()) + ": " +
                 (reply.has_value() ? reply->Debug() : why);
        return false;
      }
    }
  }
  return true;
}

bool LiveServers::WaitUntilSettled(std::string* error) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(options_.settle_timeout_ms);
  std::string waiting_for;
  while (true) {
    waiting_for.clear();
    std::string ignored;
    for (const Node& node : nodes_) {
      if (!waiting_for.empty()) break;
      const Endpoint at{"127.0.0.1", node.process->port()};
      if (!node.master.empty()) {
        const auto info = CommandLocked(at, {"INFO", "replication"}, &ignored);
        if (!info.has_value() || InfoField(info->str, "master_link_status") != "up") {
          waiting_for = "replica " + node.spec.name + " to sync with " + node.master;
        }
      }
      if (topology_ != nullptr) {
        const auto info = CommandLocked(at, {"CLUSTER", "INFO"}, &ignored);
        if (!info.has_value() || InfoField(info->str, "cluster_state") != "ok" ||
            InfoField(info->str, "cluster_known_nodes") != std::to_string(nodes_.size())) {
          waiting_for = "cluster_state:ok on " + node.spec.name;
        }
      }
    }
    for (size_t i = 0; i < sentinels_.size() && waiting_for.empty(); ++i) {
      const Endpoint at{"127.0.0.1", sentinels_[i]->port()};
      for (const std::string& name : sentinel_master_names_) {
        size_t replicas = 0;
        for (const Node& node : nodes_) replicas += node.master == name ? 1 : 0;
        const auto reply = CommandLocked(at, {"SENTINEL", "MASTER", name}, &ignored);
        std::map<std::string, std::string> fields;
        if (reply.has_value()) fields = PairsOf(*reply);
        if (fields["num-slaves"] != std::to_string(replicas) ||
            fields["num-other-sentinels"] != std::to_string(sentinels_.size() - 1)) {
          waiting_for = "sentinel " + std::to_string(i + 1) + " to see " +
                        std::to_string(replicas) + " replicas of " + name + " and " +
                        std::to_string(sentinels_.size() - 1) + " other sentinels";
          break;
        }
      }
    }
    if (waiting_for.empty()) return true;
    if (Clock::now() > deadline) {
      *error = "gave up after " + std::to_string(options_.settle_timeout_ms) +
               " ms waiting for " + waiting_for;
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(kSettlePollMs));
  }
}

LiveServers::Node* LiveServers::Find(const std::string& name) {
  for (Node& node : nodes_) {
    if (node.spec.name == name) return &node;
  }
  return nullptr;
}

const LiveServers::Node* LiveServers::Find(const std::string& name) const {
  for (const Node& node : nodes_) {
    if (node.spec.name == name) return &node;
  }
  return nullptr;
}

std::optional<Reply> LiveServers::CommandLocked(const Endpoint& at, const Argv& argv,
                                                std::string* error) const {
  try {
    RedisClient client(at.host, at.port, options_.command_timeout_ms);
    return client.Command(argv);
  } catch (const std::exception& e) {
    *error = e.what();
    return std::nullopt;
  }
}

std::vector<std::string> LiveServers::node_names() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> names;
  for (const Node& node : nodes_) names.push_back(node.spec.name);
  return names;
}

bool LiveServers::has_node(const std::string& node) const {
  std::lock_guard<std::mutex> lock(mu_);
  return Find(node) != nullptr;
}

Endpoint LiveServers::address(const std::string& node) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Node* n = Find(node);
  assert(n != nullptr);
  return Endpoint{"127.0.0.1", n->process->port()};
}

int LiveServers::pid(const std::string& node) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Node* n = Find(node);
  assert(n != nullptr);
  return n->process->pid();
}

bool LiveServers::paused(const std::string& node) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Node* n = Find(node);
  assert(n != nullptr);
  return n->process->paused();
}

std::string LiveServers::dir(const std::string& node) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Node* n = Find(node);
  assert(n != nullptr);
  return n->process->dir();
}

std::string LiveServers::NodeAt(int port) const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Node& node : nodes_) {
    if (node.process->port() == port) return node.spec.name;
  }
  return {};
}

std::string LiveServers::master_of(const std::string& node) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Node* n = Find(node);
  assert(n != nullptr);
  return n->master;
}

bool LiveServers::Pause(const std::string& node, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  Node* n = Find(node);
  if (n == nullptr || n->crashed || n->process->paused()) {
    *error = "cannot pause node " + node + (n == nullptr     ? ": no such node"
                                            : n->crashed     ? ": it is crashed"
                                                             : ": it is paused already");
    return false;
  }
  n->process->Pause();
  return true;
}

bool LiveServers::Resume(const std::string& node, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  Node* n = Find(node);
  if (n == nullptr || !n->process->paused()) {
    *error = "cannot resume node " + node + (n == nullptr ? ": no such node" : ": not paused");
    return false;
  }
  n->process->Resume();
  if (n->role_pending) {
    if (!ApplyRole(*n, error)) return false;
    n->role_pending = false;
  }
  return true;
}

bool LiveServers::Crash(const std::string& node, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  Node* n = Find(node);
  if (n == nullptr || (n->crashed && !n->starting)) {
    *error = "cannot crash node " + node + (n == nullptr ? ": no such node" : ": crashed already");
    return false;
  }
  n->process->Kill();
  n->crashed = true;
  n->starting = false;
  return true;
}

bool LiveServers::Restart(const std::string& node, std::string* error) {
  if (!BeginRestart(node, error)) return false;
  while (true) {
    const RedisProcess::RestartState state = PollRestart(node, error);
    if (state != RedisProcess::RestartState::kStarting) {
      return state == RedisProcess::RestartState::kReady;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

bool LiveServers::BeginRestart(const std::string& node, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  Node* n = Find(node);
  if (n == nullptr || !n->crashed || n->starting) {
    *error = "cannot restart node " + node +
             (n == nullptr ? ": no such node" : n->starting ? ": restarting already" : ": not crashed");
    return false;
  }
  if (n->role_pending) {
    // Later lines win in a config file: the role a failover gave it while it was down.
    const std::string line = n->master.empty() ? "replicaof no one" : ReplicaofLine(*n);
    if (!n->process->AppendConfig(line, error)) return false;
    n->role_pending = false;
  }
  std::string why;
  if (!n->process->BeginRestart(&why)) {
    *error = "cannot restart node " + node + ": " + why;
    return false;
  }
  n->starting = true;
  return true;
}

RedisProcess::RestartState LiveServers::PollRestart(const std::string& node, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  Node* n = Find(node);
  if (n == nullptr || !n->starting) {
    *error = "cannot restart node " + node + (n == nullptr ? ": no such node" : ": not restarting");
    return RedisProcess::RestartState::kFailed;
  }
  std::string why;
  const RedisProcess::RestartState state = n->process->PollRestart(&why);
  if (state == RedisProcess::RestartState::kFailed) {
    *error = "cannot restart node " + node + ": " + why;
    n->starting = false;
  } else if (state == RedisProcess::RestartState::kReady) {
    n->starting = false;
    n->crashed = false;
    if (n->role_pending) {
      // A failover while it started: its config file had been read already.
      if (!ApplyRole(*n, error)) return RedisProcess::RestartState::kFailed;
      n->role_pending = false;
    }
  }
  return state;
}

bool LiveServers::starting(const std::string& node) const {
  std::lock_guard<std::mutex> lock(mu_);
  const Node* n = Find(node);
  return n != nullptr && n->starting;
}

bool LiveServers::ApplyRole(Node& node, std::string* error) {
  const Endpoint at{"127.0.0.1", node.process->port()};
  Argv replicaof = {"REPLICAOF", "NO", "ONE"};
  if (!node.master.empty()) {
    const std::string line = ReplicaofLine(node);  // "replicaof HOST PORT"
    const size_t host_at = line.find(' ') + 1;
    const size_t port_at = line.find(' ', host_at) + 1;
    replicaof = {"REPLICAOF", line.substr(host_at, port_at - host_at - 1), line.substr(port_at)};
  }
  std::string why;
  const auto reply = CommandLocked(at, replicaof, &why);
  if (!IsOk(reply)) {
    *error = "node " + node.spec.name + ": REPLICAOF: " + (reply.has_value() ? reply->Debug() : why);
    return false;
  }
  const auto rewrite = CommandLocked(at, {"CONFIG", "REWRITE"}, &why);
  if (!IsOk(rewrite)) {
    *error = "node " + node.spec.name + ": CONFIG REWRITE: " +
             (rewrite.has_value() ? rewrite->Debug() : why);
    return false;
  }
  return true;
}

std::string LiveServers::Failover(const std::string& master, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  Node* old = Find(master);
  if (old == nullptr || !old->master.empty()) {
    *error = "cannot fail over " + master + ": " +
             (old == nullptr ? "no such node" : "it is a replica of " + old->master);
    return {};
  }
  // The most up-to-date replica that runs, by the replication offset it reports; the first
  // declared one among equals.
  Node* promoted = nullptr;
  int64_t best_offset = -1;
  std::vector<Node*> replicas;
  for (Node& node : nodes_) {
    if (node.master != master) continue;
    replicas.push_back(&node);
    if (node.crashed || node.process->paused()) continue;
    std::string ignored;
    const auto info = CommandLocked(Endpoint{"127.0.0.1", node.process->port()},
                                    {"INFO", "replication"}, &ignored);
    if (!info.has_value() || info->type != Reply::Type::kBulk) continue;
    const std::string offset = InfoField(info->str, "slave_repl_offset");
    if (offset.empty()) continue;
    const int64_t value = std::stoll(offset);
    if (value > best_offset) {
      best_offset = value;
      promoted = &node;
    }
  }
  if (promoted == nullptr) {
    *error = "cannot fail over " + master + ": " +
             (replicas.empty() ? "it has no replicas" : "none of its replicas answers");
    return {};
  }
  promoted->master.clear();
  if (!ApplyRole(*promoted, error)) return {};
  std::vector<Node*> followers;
  for (Node* r : replicas) {
    if (r != promoted) followers.push_back(r);
  }
  followers.push_back(old);
  for (Node* f : followers) {
    f->master = promoted->spec.name;
    if (f->crashed || f->process->paused()) {
      f->role_pending = true;
    } else {
      f->role_pending = false;
      if (!ApplyRole(*f, error)) return {};
    }
  }
  return promoted->spec.name;
}

std::vector<Endpoint> LiveServers::sentinel_addresses() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<Endpoint> out;
  for (const auto& s : sentinels_) out.push_back(Endpoint{"127.0.0.1", s->port()});
  return out;
}

std::vector<int> LiveServers::sentinel_pids() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<int> out;
  for (const auto& s : sentinels_) out.push_back(s->pid());
  return out;
}

std::vector<std::string> LiveServers::sentinel_master_names() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sentinel_master_names_;
}

std::optional<Endpoint> LiveServers::SentinelMasterAddress(const std::string& master_name,
                                                           std::string* error) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string last = "no sentinels";
  for (const auto& s : sentinels_) {
    std::string why;
    const auto reply = CommandLocked(Endpoint{"127.0.0.1", s->port()},
                                     {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", master_name}, &why);
    if (reply.has_value() && reply->type == Reply::Type::kArray && reply->elements.size() == 2) {
      try {
        return Endpoint{reply->elements[0].str, std::stoi(reply->elements[1].str)};
      } catch (const std::exception&) {
        why = "unexpected reply " + reply->Debug();
      }
    } else if (reply.has_value()) {
      why = "reply " + reply->Debug();
    }
    last = "sentinel port " + std::to_string(s->port()) + ": " + why;
  }
  *error = "no sentinel knows master " + master_name + " (" + last + ")";
  return std::nullopt;
}

bool LiveServers::SentinelFailover(const std::string& master_name, std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string last = "no sentinels";
  for (const auto& s : sentinels_) {
    std::string why;
    const auto reply = CommandLocked(Endpoint{"127.0.0.1", s->port()},
                                     {"SENTINEL", "FAILOVER", master_name}, &why);
    if (IsOk(reply)) return true;
    last = "sentinel port " + std::to_string(s->port()) + ": " +
           (reply.has_value() ? reply->Debug() : why);
  }
  *error = "SENTINEL FAILOVER " + master_name + " refused (" + last + ")";
  return false;
}

std::optional<Reply> LiveServers::Command(const std::string& node, const Argv& argv,
                                          std::string* error) {
  std::lock_guard<std::mutex> lock(mu_);
  const Node* n = Find(node);
  if (n == nullptr || n->crashed) {
    *error = "node " + node + (n == nullptr ? ": no such node" : ": crashed");
    return std::nullopt;
  }
  return CommandLocked(Endpoint{"127.0.0.1", n->process->port()}, argv, error);
}

}  // namespace lockstep
