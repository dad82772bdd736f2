// A live replay: one scenario on real processes, with its faults made real.
//
// Replay ties the live harness together. It starts one redis-server per node (LiveServers: temp
// directories, free loopback ports, replicas, persistence, Sentinel, cluster), each with the
// time shim preloaded and its clock (offset, drift, jumps) applied (ServerClock); a fault
// proxy (FaultProxy) with one link per client -> node connection, command and pub/sub, and one
// per replication link; and the driver (LiveRun) on the given recorder, whose clients connect
// through the proxy. Run() then runs the scenario in real time and makes each [[faults]] entry
// real at its time through the fault schedule both drivers share (drive/faults.h, with the
// replay as its target), so that it records the same fault events as the simulator:
//   partition / heal     the proxy drops whole messages on the links between the two sides
//                        (replication links hold them until the heal)
//   crash / restart      a node: SIGKILL, then a restart from its directory after duration;
//                        a client: the driver drops its connections, timers and threads
//   pause / resume       a node: SIGSTOP / SIGCONT; a client: the driver holds its work (a
//                        [gc] pause too: the driver draws it, the schedule records it)
//   clock_jump           already in the node's shim schedule or the client's clock; recorded
//   failover / promote   REPLICAOF NO ONE on the best replica (LiveServers::Failover), or the
//                        real Sentinel's own failover, noticed by asking the sentinels; the
//                        clients rediscover the new master client_rediscover later
//   lose_replies         the proxy drops every reply on the node's links
//   latency              the proxy holds each message extra_us on the affected links
// The scenario's standing network is on the proxy links from the start of Run: each message
// held a latency drawn from [network] latency_ms (or its link's own; [replication] lag_ms on
// a replication stream), in order per connection, and [network] loss on the client links.
// A reply the proxy drops reaches the driver out of band, so the exec the server ran is still
// recorded. What cannot be made real is refused before anything starts (live/support.h).
//
// Everything started is stopped when the Replay goes away (and, through the process registry,
// when the harness dies of a signal).
//
// On the user's servers (ReplayOptions::user_servers, `--redis`) nothing is started: the
// proxy's links lead to those servers, the driver keeps every key and channel under the run's
// prefix (live/user_servers.h) and observes expiry by probing, and Stop() deletes what is left
// under the prefix. Process and configuration faults are refused (LiveRefusals).
#ifndef LOCKSTEP_LIVE_REPLAY_H_
#define LOCKSTEP_LIVE_REPLAY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "history/history.h"
#include "live/user_servers.h"
#include "model/scenario.h"

namespace lockstep::live {

struct ReplayOptions {
  std::string lua_dir;
  // How often the sentinels are asked who the master is, when [sentinel] is on.
  int64_t sentinel_poll_us = 100'000;
  // Not empty: replay on these servers (one per node, in the scenario's order, checked by
  // CheckUserServers) instead of starting any, with every key under `keyspace`.
  std::vector<UserServer> user_servers;
  std::shared_ptr<const RunKeyspace> keyspace;
  // The --time-scale the scenario was scaled by: Sentinel's own periods are scaled with it
  // (ServersOptions::sentinel_time_scale).
  double time_scale = 1;
};

class Replay {
 public:
  // Starts the servers, the proxy and the driver (the run itself starts with Run). Null with
  // *error when the scenario cannot be replayed or a process cannot be started.
  static std::unique_ptr<Replay> Start(const Scenario& scenario, const ReplayOptions& options,
                                       history::Recorder& recorder, std::string* error);
  ~Replay();
  Replay(const Replay&) = delete;
  Replay& operator=(const Replay&) = delete;

  // Runs the scenario to its end in real time, or until should_stop (asked every 50 ms) says
  // stop.
  void Run(const std::function<bool()>& should_stop);

  // Stops the driver, the proxy and every process it started; on the user's servers, then
  // deletes the keys left under the run's prefix. One line per server on what was deleted
  // (or why not). Once; the destructor calls it if nobody did (and prints those lines).
  std::vector<std::string> Stop();

  int64_t end_us() const;
  bool interrupted() const;
  // A client program that failed live (LiveRun::program_error), or empty.
  const std::string& program_error() const;
  uint64_t commands_sent() const;
  // The most a timer of the run fired after its due time (EventLoop::timers_late_max_us).
  int64_t timers_late_max_us() const;
  // The run's parameters (the driver's, and where each node listens), for the summary.
  std::vector<std::pair<std::string, std::string>> derived() const;
  // Faults that could not be applied as asked (a node already down ...), one line each.
  const std::vector<std::string>& fault_notes() const;

 private:
  struct Impl;
  explicit Replay(std::unique_ptr<Impl> impl);
  static std::unique_ptr<Replay> StartOnUserServers(std::unique_ptr<Replay> replay,
                                                    history::Recorder& recorder,
                                                    std::string* error);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep::live

#endif  // LOCKSTEP_LIVE_REPLAY_H_
