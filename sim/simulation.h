// The deterministic simulator: drives lock clients (sans-IO protocols, locks/) against
// emulated Redis nodes (core/) through a simulated network, under the faults a scenario
// declares, and hands every event to a history::Recorder (history/history.h) as it happens.
// What the client processes' threads do, and the protected resource they write to, are the
// workload every driver shares (drive/workload.h); the simulator hosts it on virtual time.
//
// One seed decides everything: the network's latencies and losses, GC pauses, think times,
// client UUIDs. Events run in (true time, sequence) order. Nothing reads the wall clock of the
// machine running the simulation, so one seed replays one run, event for event, byte for byte.
//
// What is modelled (docs/scenario-format.md has the knobs):
//  - processes: Redis nodes and client processes, each with its own clock (base/clock.h);
//    a process can crash (and restart), or pause (a GC pause or SIGSTOP: it does nothing, then
//    does everything that arrived, in order);
//  - network: one-way latency per message, loss, duplication, FIFO per link unless reordering
//    is on, partitions (symmetric or one-way) that start and heal on schedule;
//  - replication: a master streams each command's write effects (core/server.h Effects, with
//    absolute expiry times) to its replicas after a lag; a replica that was down resyncs fully;
//  - Sentinel: a master that is down or cut off from the sentinel for down_after is replaced by
//    its most up-to-date replica; clients learn of it client_rediscover later; the old master
//    comes back as a replica and loses what it had;
//  - persistence: none (a restart is empty), AOF everysec (what was written up to the last
//    full second survives), AOF always (everything survives);
//  - active expiry: a lock key is expired (and DEL replicated) at the true time its node's
//    clock passes its expiry, which is when redis-server would typically reclaim it.
//
// The simulator keeps nothing of the run: each event goes through the recorder to whatever
// sinks the caller added (the facts pass and the checkers, a history file, an in-memory
// History for tests) the moment it happens.
#ifndef LOCKSTEP_SIM_SIMULATION_H_
#define LOCKSTEP_SIM_SIMULATION_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "history/history.h"
#include "model/scenario.h"

namespace lockstep::sim {

class Simulation {
 public:
  // lua_dir: the folder holding the default scripts (lua/<kind>/<version>/<name>.lua).
  // Returns null and sets *error when the scenario cannot be set up (e.g. a script file is
  // missing or an unknown protocol).
  static std::unique_ptr<Simulation> Create(const Scenario& scenario, const std::string& lua_dir,
                                            std::string* error);
  ~Simulation();

  // Where the run's events go: add sinks before Run(). Its name table names every event.
  history::Recorder& recorder();

  // Runs the whole scenario. `progress`, when given, is called about every `progress_every_us`
  // of simulated time with the current true time (for a progress line). `should_stop`, when
  // given, is asked about every 1024 events (an interrupt, or a case's event or time limit);
  // when it answers true the run stops at that event boundary and records its end there;
  // interrupted() then says so.
  void Run(const std::function<void(TrueTime)>& progress = nullptr,
           int64_t progress_every_us = 60'000'000,
           const std::function<bool()>& should_stop = nullptr);

  uint64_t events_run() const;
  // The run's end: the scenario's duration, or where an interrupted run stopped.
  TrueTime end_us() const;
  bool interrupted() const;
  // Why the progress watchdog ended the run, or empty: more than kMaxEventsPerInstant
  // (model/limits.h) events at one instant of true time, a loop that would never let time
  // advance. The message names the processes (and threads) busiest at that instant. The run
  // ends there, as an interrupted one does.
  const std::string& stalled() const;
  // The verification mode (sim/verify.h): call before Run(). After every command on a master
  // (and its key's expiry, a promotion, a restart) what a facts pass of the run's own events
  // believes of the lock key there is held against the key; the first difference stops the run
  // (as an interrupt does) and verify_failure() says what differed, else it is empty.
  void VerifyKeys();
  const std::string& verify_failure() const;
  // The derived parameters of the run (client UUIDs, script SHAs, clocks ...), name and value,
  // printed before the verdict so that a run can be understood without reading code.
  const std::vector<std::pair<std::string, std::string>>& derived() const;

 private:
  struct Impl;
  explicit Simulation(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep::sim

#endif  // LOCKSTEP_SIM_SIMULATION_H_
