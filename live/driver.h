// The live driver: a scenario's clients run against real redis-server processes, in real time,
// through the same sans-IO lock protocols the simulator drives (locks/protocol.h), and every
// event goes to a history::Recorder in the simulator's format, so that the same checkers and
// reports read a live run.
//
// One thread, one EventLoop. Per client process: its protocol, a LiveOutbox (its clocks: the
// harness's monotonic clock since the run start through the client's ClockSpec; its timers
// on the loop; its commands on a command connection and SUBSCRIBE/UNSUBSCRIBE on a pub/sub
// connection per node, as Redisson has), its workload, and its faults (crash and restart,
// pause and resume) as primitives the fault schedule (drive/faults.h) calls, which records
// them. The workload is drive::ClientWorkload, the simulator's own loop (drive/workload.h),
// hosted on the event loop.
//
// Exec and lease events. A real server does not say what a command did to the lock key, so
// every command a protocol sends on its command connection (but WAIT, which a transaction
// cannot hold) goes as one transaction:
//     MULTI / <the command, byte for byte> / EVAL <probe> 1 <lock key> / INCR <seq key> / EXEC
// The probe is read-only and returns the lock key's type, its owner fields or value, its PTTL
// and the server's TIME; INCR numbers the transactions of the run on that node in the order
// the server executed them. The protocol sees only its command's reply, unwrapped. Exec and
// lease events of a node are recorded in that order (replies that arrive in one loop
// iteration, or within reorder_wait_us of a missing number, are sorted), and a command's exec
// (and the lease change it made) is recorded before the protocol sees its reply.
// A fault proxy between a client and a node must treat MULTI..EXEC as one unit: drop all of
// it or none, and the same for its replies. When it drops the replies, it hands EXEC's reply
// over (NoReplyFor): the exec and lease events are recorded from it, the protocol sees none.
//
// Session connections. A client program's thread (a client library's connection from its pool) may
// hold a connection's state: WATCH, MULTI .. EXEC, or a blocking pop (BLPOP, BRPOP, BLMOVE,
// BRPOPLPUSH, BZPOPMIN, BZPOPMAX, BLMPOP, BZMPOP). On the process's shared command connection one
// thread's MULTI would capture the other threads' commands, a blocked BLPOP would stall them, and
// the driver's own MULTI would break the program's. So those commands, and every command of that
// thread to that node while it is inside MULTI or watches keys (the driver follows redis-server's
// state for the connection from the commands, the replies and the connection itself: LiveSession),
// go on a session connection of that (thread, node), opened when first needed; thread -1 (the
// process's own commands) has its own. They go bare, and their exec is recorded when the reply
// comes with an estimated local_ms, as WAIT's is; a command queued in a MULTI gets its exec from
// EXEC's reply instead (its +QUEUED is none). The program's EXEC carries the probe: EVAL <probe>
// and INCR <seq key> are queued just before it (their +QUEUED swallowed), EXEC's reply gives the
// program its own elements only, and the exec of EXEC, then of each command it ran, then the lease
// events are recorded in the node's order at the node's TIME, as for a wrapped command. Exact
// therefore: what a transaction that ran did to the lock key, and where it stands among the node's
// transactions. Estimated: the time and order of the bare commands (WATCH, the GET between WATCH
// and MULTI, MULTI, BLPOP, an EXEC that ran nothing: a null reply when a watched key changed,
// EXECABORT); a bare command that changes the lock key (a SET between WATCH and MULTI) shows only
// in the node's next probe, credited to that later transaction. In a [cluster] a keyless command
// (MULTI, EXEC) of a thread with a transaction or watches open goes to their node, and the probe
// joins only a transaction whose keys are all in the lock key's slot on the node serving it
// (another's execs are estimated). A crash closes the sessions with the process's other connections
// (the server then drops their transactions and watches, and a blocked pop takes nothing), and no
// reply of an old incarnation reaches the new one. Sessions go where the command connection goes
// (LiveOptions::client_address), and a fault proxy sees each as one more connection of that
// client's link: a program's own MULTI .. EXEC, probe included, is one unit there.
//
// Expiry: on servers the harness started with notify-keyspace-events Ex, an observer
// connection per master subscribes to __keyevent@0__:expired; an expiry of the lock key sends
// a probe transaction on the node's probe connection, which records `lease expired` in the
// same order as everything else. On servers the harness did not start (probe_at_expiry), no
// notification is asked for: the probe goes when the lock key's last seen PTTL runs out.
//
// On servers the harness did not start (LiveOptions::keyspace), every key and channel goes to
// the server under the run's prefix and comes back without it (live/user_servers.h), so the
// protocols, the history and the checkers see the same names as in the simulator.
//
// True time (t_us) is the harness's monotonic clock since Run() started. docs/live.md lists
// how a live history differs from a simulated one.
#ifndef LOCKSTEP_LIVE_DRIVER_H_
#define LOCKSTEP_LIVE_DRIVER_H_

#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "drive/faults.h"
#include "history/history.h"
#include "live/event_loop.h"
#include "live/user_servers.h"
#include "locks/protocol.h"
#include "model/scenario.h"

namespace lockstep::live {

struct NodeAddress {
  std::string host = "127.0.0.1";
  int port = 0;
};

struct LiveOptions {
  // Every node of the scenario by name: where its clients connect (a server, or a proxy).
  std::map<std::string, NodeAddress> nodes;
  std::string lua_dir;
  // The run's own keys (the transaction sequence) are "<prefix>:seq" inside the lock key's
  // hash tag; empty: "lockstep:<pid>:<monotonic start>".
  std::string run_prefix;
  // Subscribe to __keyevent@0__:expired on every master (servers started with
  // notify-keyspace-events Ex).
  bool watch_expiry = true;
  // Probe the lock key on a master when its last seen PTTL runs out (1 ms after), which
  // records its expiry without keyspace notifications: the probe's own read makes Redis
  // expire the key then, as any client's read would.
  bool probe_at_expiry = false;
  // Servers the harness did not start: every key and channel under the run's prefix (which
  // then also holds the sequence key). Null: names go to the servers as they are.
  std::shared_ptr<const RunKeyspace> keyspace;
  // How long a transaction's result waits for a missing earlier number (a reply still on its
  // way on another connection, or one a proxy dropped) before it is recorded anyway.
  int64_t reorder_wait_us = 20'000;
  int64_t reconnect_delay_us = 100'000;
  // Called on every connection after it read bytes and before it pairs the replies in them:
  // a fault proxy's drop reports go to NoReplyFor here (live/fault_proxy.h's ordering
  // guarantee makes that exact).
  std::function<void()> before_pairing;
  // Where client `client`'s command (pubsub false) or pub/sub connection to `node` goes, when
  // it is not the node's address: a fault proxy's link for that client and node. The
  // harness's own connections (the expiry observer and probe) always go to `nodes`.
  std::function<NodeAddress(const std::string& client, const std::string& node, bool pubsub)>
      client_address;
  // The fault target the scenario's [gc] pauses go through: drive::PauseFor on it makes each
  // one and records it with its resume, as it does a pause fault. A replay gives its own
  // (live/replay.cpp), whose client pauses are PauseClient and ResumeClient below. Needed
  // when the scenario has [gc].
  drive::FaultTarget* faults = nullptr;
};

class LiveRun {
 public:
  // Null (and *error) when the scenario cannot run live: an unknown protocol, a missing
  // script, a node without an address, a replica in a [cluster], [gc] without
  // LiveOptions::faults. A [cluster] scenario needs servers in cluster mode with the
  // simulator's slot split (core/cluster.h EvenSlotRanges over the nodes in declaration
  // order): the driver routes by that map and is never redirected.
  static std::unique_ptr<LiveRun> Create(const Scenario& scenario, LiveOptions options,
                                         history::Recorder& recorder, std::string* error);
  ~LiveRun();

  // Runs the scenario for its duration of real time, or until Stop(), *interrupted is
  // non-zero (a signal handler's flag: seen at once when the handler also calls
  // loop().Wake(), else within poll's one-second limit), or should_stop() answers true (asked
  // every should_stop_every_us). Call once.
  void Run(const std::function<bool()>& should_stop = nullptr,
           const volatile std::sig_atomic_t* interrupted = nullptr,
           int64_t should_stop_every_us = 50'000);
  void Stop();

  EventLoop& loop();
  // True time: microseconds of the harness's monotonic clock since Run() began.
  TrueTime NowUs() const;
  // Runs `work` at true time at_us (a fault schedule); before Run(), armed when it begins.
  void AtTrueTime(TrueTime at_us, std::function<void()> work);

  // A client's process faults, for a fault target (drive/faults.h) to call: they act and
  // record nothing, since the fault schedule records the crash, restart, pause and resume, so
  // that a fault gives the same events in either driver. The scenario's [gc] pauses are drawn
  // here (from each client's PRNG, as the simulator draws them) and go through
  // LiveOptions::faults.
  //
  // ClientDown: the client is crashed now (false for an unknown name). A crash drops the
  // client's connections, timers and held work and calls the protocol's OnCrash; a restart
  // starts it again as a new process (a new UUID). False when there is no such client, or it
  // is down already (crash) or up (restart).
  bool ClientDown(const std::string& name) const;
  bool CrashClient(const std::string& name);
  bool RestartClient(const std::string& name);
  // A pause holds everything that arrives for the client and every timer that fires until
  // ResumeClient, which runs them in arrival order; a crash ends it. PauseClient: false when
  // the client is down or paused already. ResumeClient: false when it is not paused.
  bool PauseClient(const std::string& name);
  bool ResumeClient(const std::string& name);

  // Failover, as the fault schedule (or the real Sentinel it watches) performs it. PromoteNode:
  // `replica` is now the master in place of `old_master` for lease events (its first probe
  // records `lost` if it lacks the lock the old master had); the schedule records the promote
  // fault. Rediscover: clients now send what they sent to `old_master` to `new_master` (the
  // simulator's client_rediscover), with the rediscover note. Not for a [cluster].
  bool PromoteNode(const std::string& replica, const std::string& old_master);
  // `node`'s process was restarted (a crash fault's restart): its transaction numbers start
  // again (from 1 without persistence, or wherever its append-only file left them), so results
  // are ordered by the new process's numbers from its first one on. False for an unknown node.
  bool NodeRestarted(const std::string& node);
  bool Rediscover(const std::string& old_master, const std::string& new_master);

  // A fault proxy's report: request `index` on the connection from local port `local_port`
  // got no reply. False if no connection of this run has that port. `lost_reply`, when not
  // empty, is the reply the proxy dropped (its RESP bytes): the server ran the command, so
  // its exec (and, for a transaction, its lease events) are recorded from it, in the node's
  // transaction order, while the protocol still sees no reply, as in the simulator.
  bool NoReplyFor(int local_port, int64_t index, std::string_view lost_reply = {});

  // Records an event of the harness (a fault it made, a note) at the current true time, in
  // order with the driver's own events; `Intern` names it in the run's table.
  void Record(history::Event& e);
  history::Name Intern(std::string_view s);

  TrueTime end_us() const { return end_us_; }
  bool interrupted() const { return interrupted_; }
  const std::vector<std::pair<std::string, std::string>>& derived() const { return derived_; }
  // Transactions whose result was recorded out of order (their number came after a later
  // one's); 0 in a run without lost replies.
  uint64_t late_results() const;
  // The first client program (the client kind) that failed, with its error; it stopped the
  // run. Empty when none did.
  const std::string& program_error() const;
  // Commands the clients sent (a transaction counts once): the live run's "events".
  uint64_t commands_sent() const;

  // The driver's state (driver.cpp); public so that its parts there can name it.
  struct Impl;

 private:
  explicit LiveRun(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  TrueTime end_us_ = 0;
  bool interrupted_ = false;
  std::vector<std::pair<std::string, std::string>> derived_;
};

}  // namespace lockstep::live

#endif  // LOCKSTEP_LIVE_DRIVER_H_
