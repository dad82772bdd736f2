// The real processes of a live run: one redis-server per [[nodes]] entry of a Scenario, the
// redis-sentinel processes of its [sentinel], the cluster of its [cluster], and the process
// faults applied to them by node name (pause, crash, restart, failover).
//
// Every server and sentinel runs on a free loopback port in its own temporary directory
// (RedisProcess), is a child of this process, and is in the process-wide table of
// live/process_registry.h from fork to reap: lockstep signals only pids it started, a signal
// handler can kill them all (process_registry::KillAllFromSignalHandler), and they get SIGKILL
// when the thread that started them dies (PR_SET_PDEATHSIG; SIGKILL rather than SIGTERM so a
// paused server dies too). Start and Restart from a thread that outlives the servers.
//
// Only servers started here are ever sent FLUSHALL, FLUSHDB, CONFIG SET, CONFIG REWRITE,
// DEBUG, SHUTDOWN, REPLICAOF or a signal. A user's own Redis (`--redis HOST:PORT`) is never
// handed to this class, and nothing here connects to a port it did not start a process on.
//
// Mapping (docs in the lead's docs/live.md):
//   persistence none         --appendonly no --save ""
//   persistence aof-everysec --appendonly yes --appendfsync everysec
//   persistence aof-always   --appendonly yes --appendfsync always
//   replica_of M             `replicaof HOST PORT` in the node's config file, HOST:PORT from
//                            ServersOptions::replication_address (default: M's own address)
//   [sentinel]               ServersOptions::sentinels redis-sentinel processes (3, quorum 2)
//                            monitoring every master under the master's node name, with
//                            down-after-milliseconds = down_after_ms
//   [cluster]                cluster-mode servers, slots split by ClusterTopology::Even as the
//                            simulator splits them, joined with CLUSTER MEET
//
// Each server reads a config file in its directory (redis.conf) holding its replication
// role, and its other settings from the command line. CONFIG REWRITE (which Sentinel sends
// after reconfiguring a server, and Failover sends too) saves the current role there, so a
// crashed server restarts with the role it last had, as a real deployment would.
//
// Thread-safe: every method takes one lock (a Restart holds it for as long as the server
// takes to load its AOF; BeginRestart and PollRestart do not wait).
#ifndef LOCKSTEP_LIVE_SERVERS_H_
#define LOCKSTEP_LIVE_SERVERS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/cluster.h"
#include "core/reply.h"
#include "live/redis_process.h"
#include "model/scenario.h"

namespace lockstep {

struct Endpoint {
  std::string host = "127.0.0.1";
  int port = 0;

  std::string ToString() const { return host + ":" + std::to_string(port); }
  bool operator==(const Endpoint&) const = default;
};

using EnvEntries = std::vector<std::pair<std::string, std::string>>;

// Sentinel's timer runs 10 to 20 times a second (sentinel.c draws its hz from 10 to 19 each
// cycle), so no period it keeps is effectively shorter than this.
constexpr int64_t kSentinelTimerMs = 100;
// The part of a Sentinel failover that no setting scales: during a failover Sentinel asks the
// replica it promotes for INFO once a second (a constant in sentinel.c, not the info-period),
// and it moves through the failover's states one timer tick at a time. Measured on
// redis-sentinel 7.0.15 (docs/live.md), a failover is seen done this long after the
// simulator, which promotes at once, would have it, at most; a scaled replay stretches it
// by 1 / --time-scale in the scenario's time.
constexpr int64_t kSentinelFixedDelayMs = 1500;

struct ServersOptions {
  std::string server_binary = "redis-server";
  std::string sentinel_binary = "redis-sentinel";
  // The address a replica's `replicaof` names for its master (so that a fault proxy can sit
  // on the replication link): called when a replica is configured, at start, at a Failover
  // and at a Restart after one. `master_address` is the master's own. Null: the master's
  // own address.
  std::function<Endpoint(const std::string& replica, const std::string& master,
                         const Endpoint& master_address)>
      replication_address;
  // Environment entries for a node's server (e.g. the time shim's LD_PRELOAD and control
  // file), by node name. Null: none. Sentinels get none.
  std::function<EnvEntries(const std::string& node)> node_env;
  // --notify-keyspace-events for every server (e.g. "Ex" to watch expirations). Empty: the
  // server's default (none).
  std::string notify_keyspace_events;
  // More server arguments, after ours (a later value wins in redis): never --port, --bind,
  // --dir, --pidfile, --logfile, --daemonize, --replicaof or the persistence settings.
  std::vector<std::string> extra_args;

  // Sentinel layout. Three sentinels with quorum 2 is the smallest layout in which a
  // failover needs a majority (Sentinel elects a leader with votes of a majority of the
  // sentinels it knows) and one sentinel being cut off cannot fail a master over alone.
  int sentinels = 3;
  int sentinel_quorum = 2;
  // failover-timeout. 0: a minute longer than the scenario. Sentinel also waits this long
  // before it "fixes" a replica whose replicaof names another address than the master's own,
  // which is what every replica behind the fault proxy looks like to it: it points the replica
  // at the master's own port (replication then runs around the proxy, free of the scenario's
  // faults), and a failover asked for while that reconfiguration runs is aborted for want of a
  // replica fit to promote. Longer than the run, that never happens within it; the price is
  // that a failover Sentinel aborts is not tried again within the run (it waits twice this).
  int64_t sentinel_failover_timeout_ms = 0;
  // The replay's --time-scale. Below 1, the sentinels' own periods that SENTINEL DEBUG can set
  // are multiplied by it (never below Sentinel's timer period, 100 ms): how often they ask a
  // server for INFO, ping, ask each other whether a master is down and publish hellos (and so
  // the 8 s, four hello periods, before Sentinel demotes a master that comes back), and the
  // election timeout. What no setting reaches stays as it is: see kSentinelFixedDelayMs.
  double sentinel_time_scale = 1;

  // Bounds: a server's start (per attempt) and stop, one command to a server, and the wait
  // for the layout to settle (replicas in sync, sentinels aware of each other and of the
  // replicas, cluster_state:ok everywhere).
  int startup_timeout_ms = 5000;
  int stop_timeout_ms = 5000;
  int command_timeout_ms = 2000;
  int settle_timeout_ms = 20000;
};

class LiveServers {
 public:
  // Starts every server (masters first, then replicas), forms the cluster, starts the
  // sentinels, and waits until the layout has settled. Null with *error set on failure
  // (everything started so far is stopped).
  static std::unique_ptr<LiveServers> Start(const Scenario& scenario,
                                            const ServersOptions& options, std::string* error);

  // Stops the sentinels, then the servers: SIGTERM (and SIGCONT to a paused one), SIGKILL
  // after stop_timeout_ms, reaped; their temporary directories are removed.
  ~LiveServers();
  LiveServers(const LiveServers&) = delete;
  LiveServers& operator=(const LiveServers&) = delete;

  // --- nodes, by scenario name ---
  std::vector<std::string> node_names() const;  // Declaration order.
  bool has_node(const std::string& node) const;
  Endpoint address(const std::string& node) const;  // The server's own: 127.0.0.1:port.
  int pid(const std::string& node) const;           // 0 while crashed.
  bool paused(const std::string& node) const;
  std::string dir(const std::string& node) const;   // Its data directory (AOF, log, config).
  // The node listening on `port`, or "" (to name what Sentinel or a MOVED reply reports).
  std::string NodeAt(int port) const;
  // The master a node replicates from as lockstep configured it ("" for a master). Follows
  // Failover; after a Sentinel failover ask SentinelMasterAddress instead.
  std::string master_of(const std::string& node) const;

  // --- process faults, by node name; false with *error set when they cannot apply ---
  bool Pause(const std::string& node, std::string* error);    // SIGSTOP
  bool Resume(const std::string& node, std::string* error);   // SIGCONT
  bool Crash(const std::string& node, std::string* error);    // SIGKILL, reaped
  // Same port, same directory, same config file: an AOF reloads what was written to it.
  // Returns once the server answers PING (its AOF loaded): BeginRestart, then PollRestart
  // every 10 ms.
  bool Restart(const std::string& node, std::string* error);
  // The same in steps, for an event loop that must keep running meanwhile: BeginRestart
  // launches the server; PollRestart looks once whether it answers (kStarting: call again).
  // Until it does the node counts as crashed (no failover picks it) and may be crashed again,
  // which ends the restart (starting() turns false).
  bool BeginRestart(const std::string& node, std::string* error);
  RedisProcess::RestartState PollRestart(const std::string& node, std::string* error);
  bool starting(const std::string& node) const;
  // The failover a Sentinel performs, done by lockstep: among the replicas of `master` that
  // run (neither crashed nor paused), the one with the highest replication offset is
  // promoted (REPLICAOF NO ONE); the other replicas and the old master are pointed at it
  // (REPLICAOF host port, the host and port from replication_address); each is saved with
  // CONFIG REWRITE. A node that is crashed or paused is reconfigured when it comes back: a
  // crashed one restarts with the new role in its config file, a paused one gets REPLICAOF
  // on Resume. Returns the promoted node's name, or "" with *error set.
  std::string Failover(const std::string& master, std::string* error);

  // --- [sentinel] ---
  bool sentinel_enabled() const { return !sentinels_.empty(); }
  std::vector<Endpoint> sentinel_addresses() const;
  std::vector<int> sentinel_pids() const;
  // The names the sentinels monitor: each master node's scenario name. A name stays the
  // group's name after a failover moved the master elsewhere.
  std::vector<std::string> sentinel_master_names() const;
  // SENTINEL GET-MASTER-ADDR-BY-NAME, asked of each sentinel in turn until one answers (as a
  // Redis client does). nullopt with *error set when none does.
  std::optional<Endpoint> SentinelMasterAddress(const std::string& master_name,
                                                std::string* error) const;
  // SENTINEL FAILOVER, asked of each sentinel in turn until one accepts it.
  bool SentinelFailover(const std::string& master_name, std::string* error);

  // --- [cluster] ---
  // The slot map (endpoints are the servers' own addresses), or null without [cluster].
  const ClusterTopology* cluster_topology() const { return topology_.get(); }

  // One command to a started node, e.g. for tests and the driver's checks. A Redis error
  // reply is returned as a reply; an I/O error (or a crashed node) gives nullopt and *error.
  std::optional<Reply> Command(const std::string& node, const Argv& argv, std::string* error);

 private:
  struct Node {
    NodeSpec spec;
    std::unique_ptr<RedisProcess> process;
    std::string master;          // Current master as lockstep configured it; "" for a master.
    bool role_pending = false;   // `master` changed while the node was crashed or paused.
    bool crashed = false;
    bool starting = false;       // Crashed, and a BeginRestart's process not answering yet.
  };

  explicit LiveServers(ServersOptions options) : options_(std::move(options)) {}
  bool StartNode(Node& node, bool cluster, std::string* error);
  bool FormCluster(std::string* error);
  bool StartSentinels(const Scenario& scenario, std::string* error);
  bool WaitUntilSettled(std::string* error);
  // REPLICAOF toward `node.master` (or NO ONE) and CONFIG REWRITE on a running node.
  bool ApplyRole(Node& node, std::string* error);
  std::string ReplicaofLine(const Node& node) const;  // "replicaof 127.0.0.1 7001" or "".
  Node* Find(const std::string& name);
  const Node* Find(const std::string& name) const;
  std::optional<Reply> CommandLocked(const Endpoint& at, const Argv& argv,
                                     std::string* error) const;

  ServersOptions options_;
  mutable std::mutex mu_;
  std::vector<Node> nodes_;  // Declaration order.
  std::vector<std::unique_ptr<RedisProcess>> sentinels_;
  std::vector<std::string> sentinel_master_names_;
  std::unique_ptr<ClusterTopology> topology_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_LIVE_SERVERS_H_
