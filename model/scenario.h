// A scenario as plain, validated data: what the TOML file said, with every default filled in
// and every unit converted (the file speaks milliseconds; the simulator runs on microseconds).
// The loader (scenario_toml.cpp) is the only producer; drivers (the simulator, later the live
// harness) and reports only read it. docs/scenario-format.md documents every key.
#ifndef LOCKSTEP_MODEL_SCENARIO_H_
#define LOCKSTEP_MODEL_SCENARIO_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/clock_spec.h"
#include "base/random.h"
#include "history/event.h"
#include "history/fault_kinds.h"
#include "history/kinds.h"
#include "history/names.h"
#include "model/fuzz_spec.h"

namespace lockstep {

// Which properties a run must keep, or must be shown to break.
enum class Expectation : uint8_t { kHold, kViolated, kAny };

struct NodeSpec {
  std::string name;             // "n1"
  ClockSpec clock;
  std::string replica_of;       // Empty for a master (or an independent node).
  enum class Persistence : uint8_t { kNone, kAofEverySec, kAofAlways } persistence =
      Persistence::kNone;
  // Redis's maxmemory for this node, in MiB of the emulator's used-memory estimate (core/
  // keyspace.h): beyond it write commands get Redis's OOM error. Bounded so that a run's
  // nodes fit in this machine's memory (a script may write up to twice this, lockstep's cap).
  static constexpr int64_t kMaxMemoryMbDefault = 256;
  static constexpr int64_t kMaxMemoryMbMax = 1024;
  int64_t maxmemory_mb = kMaxMemoryMbDefault;

  bool operator==(const NodeSpec&) const = default;
};

struct WorkloadSpec {
  using Mode = history::AcquireCall::Mode;  // As the history's acquire invokes say it.
  Mode mode = Mode::kTryLock;
  // What the thread passes to the API, in microseconds: lock()'s and tryLock()'s leaseTime and
  // tryLock()'s waitTime. Any value the client accepts: 0, negative and sub-millisecond ones
  // reach the client as Redisson's would (locks::LeaseGiven). -1 (and -1000, -1 ms, which the
  // loader stores as -1) is what lock() and tryLock(wait) pass: no explicit lease.
  int64_t wait_us = 10'000'000;   // tryLock wait; ignored by lock().
  int64_t lease_us = -1;          // -1: no explicit lease (the watchdog renews).
  Distribution critical_us = Distribution::Fixed(100'000);
  Distribution think_us = Distribution::Fixed(100'000);
  int reentry = 1;                // Acquisitions nested per iteration (2 = reentrant).
  double read_ratio = 0;          // Read-write locks: the share of iterations that read.
  // Read-write locks: kDrawn draws each iteration's side with read_ratio; a client group can
  // fix it (kRead, kWrite) instead.
  enum class Side : uint8_t { kDrawn, kRead, kWrite } side = Side::kDrawn;
  int64_t stagger_us = 0;         // Client i (0-based) starts its threads i * stagger later.
  int64_t ops_per_thread = 0;     // 0: unlimited (until the run ends).

  bool operator==(const WorkloadSpec&) const = default;
};

// A [[clients]] group's own workload: each field it sets replaces [workload]'s for the group's
// clients (Apply); the others come from [workload].
struct WorkloadOverride {
  std::optional<WorkloadSpec::Mode> mode;
  std::optional<int64_t> wait_us;
  std::optional<int64_t> lease_us;
  std::optional<Distribution> critical_us;
  std::optional<Distribution> think_us;
  std::optional<int> reentry;
  std::optional<WorkloadSpec::Side> side;
  std::optional<int64_t> stagger_us;
  std::optional<int64_t> ops_per_thread;

  bool operator==(const WorkloadOverride&) const = default;
};

// `base` with every field that `o` sets replaced.
WorkloadSpec Apply(const WorkloadSpec& base, const WorkloadOverride& o);

struct ClientSpec {
  // What the process's threads do. kWorker is the workload loop of every kind (think ->
  // acquire -> critical section -> release); a count-down latch also takes threads that only
  // await it (kAwait: await -> think -> again) and threads that only count it down
  // (kCountDown: think -> countDown -> again), so that the latch can open. A semaphore also
  // takes threads that change its permits instead of acquiring (think -> the operation ->
  // again): addPermits(1), addPermits(-1) (reducePermits), trySetPermits(permits),
  // drainPermits().
  using Role = history::RoleNote::Role;  // The history's role note says the same.
  std::string name;             // "c1"
  int threads = 1;
  Role role = Role::kWorker;
  ClockSpec clock;
  WorkloadOverride workload;    // The group's own workload fields, if any.

  bool operator==(const ClientSpec&) const = default;
};

struct NetworkSpec {
  Distribution latency_us = Distribution::Fixed(500);  // One way, per message.
  double loss = 0;               // Probability a message is dropped.
  double duplicate = 0;          // Probability a message is delivered twice.
  // false: each link delivers in order, as a TCP connection does; true: messages may overtake
  // each other when their latencies say so.
  bool reorder = false;
  // Per ordered pair ("c1->n1") overrides of the latency.
  std::map<std::string, Distribution> link_latency_us;

  bool operator==(const NetworkSpec&) const = default;
};

struct ReplicationSpec {
  Distribution lag_us = Distribution::Fixed(1000);  // Master -> replica, per effect batch.

  bool operator==(const ReplicationSpec&) const = default;
};

// The masters form one Redis Cluster: the 16384 hash slots are split among them as
// `redis-cli --cluster create` splits them, each node runs in cluster mode, and clients send
// each command to the master serving its key's slot.
struct ClusterSpec {
  bool enabled = false;

  bool operator==(const ClusterSpec&) const = default;
};

struct SentinelSpec {
  bool enabled = false;
  int64_t down_after_us = 30'000'000;       // Sentinel's down-after-milliseconds default.
  int64_t client_rediscover_us = 1'000'000;  // Clients learn the new master this much later.

  bool operator==(const SentinelSpec&) const = default;
};

// Redisson's client configuration and the lock protocol's settings.
struct ProtocolSpec {
  // Its row of history::kProtocolKinds (rlock by default), resolved once when the file is read:
  // every reader takes the kind's name, class, scripts and roles from it.
  const history::ProtocolKind* kind = &history::kProtocolKinds[0];
  std::string kind_name() const { return std::string(kind->name); }
  history::ProtocolVersion version = history::ProtocolVersion::k3136;
  std::string lock_name = "lock";
  int64_t watchdog_timeout_us = 30'000'000;  // lockWatchdogTimeout
  int64_t timeout_us = 3'000'000;            // Response timeout per attempt.
  int retry_attempts = 3;
  int64_t retry_interval_us = 1'500'000;
  // Replacement script files by script name ("acquire", "unlock", "renew", "force_unlock"),
  // resolved relative to the scenario file.
  std::map<std::string, std::string> script_files;
  // The fair lock's per-waiter wait (Config.fairLockWaitTimeout; 5000 ms before 3.13.3).
  int64_t fair_wait_timeout_us = 300'000'000;
  // Semaphores: the permits set when the run starts; count-down latches: the count.
  int64_t permits = 1;
  // The client kind: its program, a file (resolved relative to the scenario file) or the name
  // of a bundled client (lua/clients/<name>/client.lua).
  std::string client;

  bool operator==(const ProtocolSpec&) const = default;
};

struct FaultSpec {
  using Kind = history::FaultKind;  // Every kind's row: history/fault_kinds.h.
  Kind kind = Kind::kPartition;
  int64_t at_us = 0;
  int64_t duration_us = 0;
  std::vector<std::string> targets;
  std::vector<std::string> peers;
  bool one_way = false;
  int64_t by_us = 0;
  int64_t extra_us = 0;  // kLatency
  double rate = 0;       // kLoss, kDuplicate: 0 to 1
  int line = 0;  // Where it was declared (for messages and reports).

  bool operator==(const FaultSpec&) const = default;
};

// The protected resource every critical section writes to.
struct ResourceSpec {
  // The resource remembers the highest fencing token it has seen and rejects a write that
  // carries a lower one (only protocols that hand out tokens: the fenced lock).
  bool fencing = false;

  bool operator==(const ResourceSpec&) const = default;
};

// Random pauses of client processes (GC): each client pauses after an interval drawn from
// `every_us` for a duration drawn from `pause_us`.
struct GcSpec {
  bool enabled = false;
  std::vector<std::string> clients;  // Empty: every client.
  Distribution every_us = Distribution::Fixed(10'000'000);
  Distribution pause_us = Distribution::Fixed(100'000);

  bool operator==(const GcSpec&) const = default;
};

struct Scenario {
  std::string file;
  std::string name;
  std::string description;
  uint64_t seed = 1;
  int64_t duration_us = 60'000'000;
  int64_t start_unix_ms = 1'767'225'600'000;  // 2026-01-01T00:00:00Z

  std::vector<NodeSpec> nodes;
  std::vector<ClientSpec> clients;
  NetworkSpec network;
  ReplicationSpec replication;
  ClusterSpec cluster;
  SentinelSpec sentinel;
  ProtocolSpec protocol;
  WorkloadSpec workload;         // [workload]; a client's own is Apply(workload, client.workload).
  ResourceSpec resource;
  std::vector<FaultSpec> faults;
  GcSpec gc;

  // Bounds the liveness checker uses.
  int64_t liveness_bound_us = 5'000'000;
  // Expectations by property name (kProperties, model/scenario_toml.h), as [expect] states
  // them. A property not named is not judged (kAny), except those judged in every run, which
  // must hold: ExpectationOf says which applies.
  std::map<std::string, Expectation> expect;

  // What `lockstep fuzz` varies when this scenario is its base ([fuzz]; ignored by `run`).
  FuzzSpec fuzz;

  bool operator==(const Scenario&) const = default;
};

// The clock of process `name` (a node or a client) as a driver runs it: its own [clock] with
// the scenario's clock_jump faults that target it added as jumps (a jump is part of the clock,
// fixed before the run; the fault only records it).
ClockSpec ClockOf(const Scenario& scenario, const std::string& name, const ClockSpec& own);

// The expectation a run is judged by for `property`: as `expect` states it; else kHold for a
// property judged in every run (history::kJudgedInEveryRun: script_errors); else kAny.
inline Expectation ExpectationOf(const std::map<std::string, Expectation>& expect,
                                 std::string_view property) {
  const auto it = expect.find(std::string(property));
  if (it != expect.end()) return it->second;
  for (std::string_view p : history::kJudgedInEveryRun) {
    if (p == property) return Expectation::kHold;
  }
  return Expectation::kAny;
}

}  // namespace lockstep

#endif  // LOCKSTEP_MODEL_SCENARIO_H_
