// A fuzz case: one concrete variation of a base scenario, drawn from (base, fuzz seed, case
// index) alone, so that the same command line finds the same case on any machine.
//
// A case is kept in an abstract form (FuzzCase): faults name their targets by index, not by
// name, so that the shrinker can drop clients or threads without leaving a fault pointing at a
// process that no longer exists; Materialize() turns it into a valid Scenario. Every number the
// shrinker may change is an integer with a meaning of its own (a time in microseconds, a rate
// in millionths), so that shrinking an integer toward its floor always makes the case simpler.
#ifndef LOCKSTEP_FUZZ_CASE_H_
#define LOCKSTEP_FUZZ_CASE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/random.h"
#include "model/scenario.h"

namespace lockstep::fuzz {

// kFuzzFaultKinds indexes, by name, so that code reads as the list does.
enum FaultKind : int {
  kPartition,
  kPartitionOneWay,
  kNodePause,
  kClientPause,
  kNodeCrash,
  kNodeCrashRestart,
  kClientCrash,
  kClientCrashRestart,
  kClockJumpForward,
  kClockJumpBackward,
  kClockDrift,
  kFailover,
  kLoseReplies,
  kLatencySpike,
  kMessageLoss,
  kMessageDuplication,
  kFaultKindCount
};
static_assert(kFaultKindCount == static_cast<int>(kFuzzFaultKinds.size()));

// One drawn fault. `kind` indexes kFuzzFaultKinds (model/fuzz_spec.h): a FaultKind.
struct FaultDraw {
  int kind = 0;
  int64_t at_us = 0;
  int64_t duration_us = 0;   // 0 for kinds without one (clock jumps, drift, failover).
  // The size: a clock jump's |by| in us, a drift's |ppm|, a latency spike's extra us, a loss or
  // duplication rate in millionths.
  int64_t magnitude = 0;
  // Which process: an index into the kind's candidates (taken modulo their number).
  int64_t target = 0;
  // Partitions of a client: which nodes it is cut from, as a bit mask over the nodes (taken
  // modulo 2^nodes; 0 means all of them). Unused by other kinds.
  int64_t mask = 0;

  bool operator==(const FaultDraw&) const = default;
};

// A time distribution the case sets: a fixed value, or an exponential with that mean.
struct TimeDraw {
  int64_t us = 0;
  bool exponential = false;

  bool operator==(const TimeDraw&) const = default;
};

struct FuzzCase {
  uint64_t seed = 1;            // The simulation's seed.
  int64_t duration_us = 0;
  int clients = 0;              // Worker clients (other roles are the base's).
  int threads = 0;              // Threads per worker client.
  std::optional<int64_t> lease_us;
  std::optional<int64_t> wait_us;
  std::optional<TimeDraw> critical;
  std::optional<TimeDraw> think;
  std::optional<int64_t> replication_lag_us;
  std::string version;
  std::vector<FaultDraw> faults;
  // Simplifications only the shrinker sets: the base's network noise off (no loss, no
  // duplication, fixed latency at the distribution's mean, per-link latencies kept), its own
  // critical and think distributions replaced by fixed values at their means, GC pauses off.
  bool quiet_network = false;
  bool fixed_base_times = false;
  bool no_gc = false;

  bool operator==(const FuzzCase&) const = default;
};

// What the fuzzer may do with a base: its fault kinds with their weights (the spec's, or the
// defaults that apply to the base), and the processes each kind can target.
struct FuzzPlan {
  std::vector<double> weights;  // By kFuzzFaultKinds index; 0 = never drawn.
  double total_weight = 0;
};

// The plan for `base`, or nullopt with *error when the spec names a kind that cannot apply
// (failover without a replica, say) or leaves nothing to draw while fault_count.max > 0.
std::optional<FuzzPlan> MakePlan(const Scenario& base, std::string* error);

// The case `index` of the search `fuzz_seed` over `base`.
FuzzCase DrawCase(const Scenario& base, const FuzzPlan& plan, uint64_t fuzz_seed, uint64_t index);

// One fault as DrawCase draws it, within a run of `duration_us`: its kind by the plan's weights,
// its start, length and size within the base's [fuzz] ranges, its target and mask.
FaultDraw DrawFault(const Scenario& base, const FuzzPlan& plan, int64_t duration_us, Prng& rng);

// A neighbour of `parent` for a guided search (fuzz/search.h): one to three changes, each
// within what the base's [fuzz] table allows: add, drop or replace a fault; move its start;
// stretch or shrink its length or its size (a jump, a drift, a spike, a rate); retarget it;
// draw a new simulation seed, another count of clients or threads, another lease, wait,
// critical-section or think time, another version.
FuzzCase Mutate(const Scenario& base, const FuzzPlan& plan, const FuzzCase& parent, Prng& rng);

// The case as the base would run it unchanged (no faults added): the starting point of a
// search's own sanity check and of tests.
FuzzCase BaseCase(const Scenario& base);

// The scenario the case describes: the base with the case's values, its faults appended to the
// base's own, every name resolved. Its [fuzz] table is cleared; its expectations are the
// base's.
Scenario Materialize(const Scenario& base, const FuzzCase& c);

// Sizes for "the first failing case vs the shrunk one".
struct CaseSize {
  int faults = 0;    // The case's own faults (the base's are not counted).
  int clients = 0;
  int threads = 0;
  int64_t duration_us = 0;
};
CaseSize SizeOf(const FuzzCase& c);

}  // namespace lockstep::fuzz

#endif  // LOCKSTEP_FUZZ_CASE_H_
