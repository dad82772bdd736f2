// What `lockstep fuzz` varies when a scenario is its base: the scenario file's `[fuzz]` table as
// plain data (docs/scenario-format.md, docs/fuzzing.md). The loader fills it; `lockstep run`
// ignores it; the fuzzer (fuzz/) draws every concrete case from the base scenario, this spec, the
// fuzz seed and the case index alone.
//
// Times are microseconds here, milliseconds in the file, as everywhere in a scenario.
#ifndef LOCKSTEP_MODEL_FUZZ_SPEC_H_
#define LOCKSTEP_MODEL_FUZZ_SPEC_H_

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep {

// An inclusive range of numbers. In the file `{ min = 1, max = 5 }`, or one number for
// min = max.
struct FuzzRange {
  double min = 0;
  double max = 0;

  bool operator==(const FuzzRange&) const = default;
};

// The fault kinds a case may draw, by the name the [fuzz] table's `faults` keys use. Each maps to
// a FaultSpec (or, for clock_drift, to a target's ClockSpec::drift_ppm).
inline constexpr std::array<std::string_view, 16> kFuzzFaultKinds = {
    "partition",            // two-way: one node cut from everyone, or one client from some nodes
    "partition_one_way",    // the same, one direction only
    "node_pause",           // pause fault on a node (SIGSTOP)
    "client_pause",         // pause fault on a client process (GC)
    "node_crash",           // crash fault on a node, never restarted
    "node_crash_restart",   // crash fault on a node, restarted after the duration
    "client_crash",         // crash fault on a client, never restarted
    "client_crash_restart", // crash fault on a client, restarted after the duration
    "clock_jump_forward",   // clock_jump fault, by > 0, on a node or a client
    "clock_jump_backward",  // clock_jump fault, by < 0
    "clock_drift",          // a node's or a client's clock drifts (drift_ppm, for the whole run)
    "failover",             // failover fault on a master that has replicas
    "lose_replies",         // lose_replies fault on a node
    "latency_spike",        // latency fault on one process's links
    "message_loss",         // loss fault on one process's links
    // duplicate fault on one process's links: a message delivered twice, which no TCP
    // connection does (a faulty proxy or middlebox would); `lockstep replay` cannot make it real.
    // Drawn only when [fuzz] faults names it.
    "duplicate_delivery_not_tcp",
};

struct FuzzSpec {
  // Fault kinds (kFuzzFaultKinds names) and their relative weights. A kind with weight 0 never
  // appears. Empty: every kind that applies to the base and can happen to a Redis deployment
  // over TCP (failover only when a master has replicas; never duplicate_delivery_not_tcp;
  // docs/fuzzing.md lists the rules), each with weight 1.
  // File: `faults = { client_pause = 3, partition = 1 }`.
  std::map<std::string, double> faults;
  // How many faults a case has, drawn uniformly. File: `fault_count`.
  FuzzRange fault_count{0, 4};
  // Durations of partitions, pauses, crashes before restart, lost replies and network windows,
  // drawn log-uniformly. File: `fault_duration_ms`.
  FuzzRange fault_duration_us{10'000, 5'000'000};
  // The size of a clock jump, either direction, log-uniform. File: `clock_jump_ms`.
  FuzzRange clock_jump_us{100'000, 60'000'000};
  // The size of a drift, either direction, uniform. File: `drift_ppm`.
  FuzzRange drift_ppm{100, 100'000};
  // A latency spike's extra delay per message, log-uniform. File: `latency_spike_ms`.
  FuzzRange latency_spike_us{100'000, 5'000'000};
  // Loss and duplication probabilities in their windows. File: `loss_rate`, `duplicate_rate`.
  FuzzRange loss_rate{0.1, 1};
  FuzzRange duplicate_rate{0.1, 1};

  // Workload and topology. Absent: the base's value, unchanged. Drawn uniformly (integers for
  // counts); critical and think ranges give each case either a fixed value or an exponential with
  // that mean; the others give fixed values. `threads` applies to worker clients.
  std::optional<FuzzRange> clients;          // File: `clients`. Worker clients in the case.
  std::optional<FuzzRange> threads;          // File: `threads`. Threads per client.
  std::optional<FuzzRange> lease_us;         // File: `lease_ms`.
  std::optional<FuzzRange> wait_us;          // File: `wait_ms`.
  std::optional<FuzzRange> critical_us;      // File: `critical_ms`.
  std::optional<FuzzRange> think_us;         // File: `think_ms`.
  std::optional<FuzzRange> replication_lag_us;  // File: `replication_lag_ms`.
  // Protocol versions to draw from (history/kinds.h names). Empty: the base's. File: `versions`.
  std::vector<std::string> versions;

  // Per-case limits: a case that runs more engine events than this, or longer on the wall clock,
  // is reported as over its limit, not allowed to hang the search. Files: `max_events`,
  // `max_case_s`.
  int64_t max_events = 50'000'000;
  double max_case_s = 60;

  bool operator==(const FuzzSpec&) const = default;
};

}  // namespace lockstep

#endif  // LOCKSTEP_MODEL_FUZZ_SPEC_H_
