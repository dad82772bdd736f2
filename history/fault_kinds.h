// The fault kinds lockstep can inject, in one table: what a scenario file calls each and the
// keys it takes, the history events that start and end it, whether it troubles links or
// processes, whether `lockstep replay` makes it real, what it keeps a process from doing (the
// facts pass), and how the reports draw it. The scenario loader and writer (model/), the facts
// pass, the reports and both drivers read this table, as history/kinds.h is read for
// protocols; none of them spells a fault kind's name.
//
// A new kind is a row here (and its FaultKind), its effect in each driver (the simulator's and
// the live replay's fault targets), and its scenario keys' checks in the loader.
#ifndef LOCKSTEP_HISTORY_FAULT_KINDS_H_
#define LOCKSTEP_HISTORY_FAULT_KINDS_H_

#include <array>
#include <cstdint>
#include <string_view>

#include "history/names.h"

namespace lockstep::history {

enum class FaultKind : uint8_t {
  kPartition,    // targets = side A, peers = side B; one_way: only A -> B is cut
  kCrash,        // a node or a client process; restart after duration (0: never)
  kPause,        // a node or client process stops for duration (GC, SIGSTOP)
  kClockJump,    // by_us on the target's wall clock
  kFailover,     // Sentinel promotes a replica of the target master now
  kLoseReplies,  // replies from the target nodes are dropped during duration
  // Network trouble on every link with an end in targets (and, when peers is not empty, the
  // other end in peers), during duration:
  kLatency,      // each message takes extra_us longer ("latency spike")
  kLoss,         // each message is dropped with probability rate
  kDuplicate,    // each message is delivered twice with probability rate
  kFsyncStall,   // the target nodes' disks complete no fsync during duration
};

// What a fault keeps a process from doing while it lasts, as the facts pass records it for
// explanations ("c1 was paused from 10.5 s"). kSlowOrLossy: a latency or loss window was open
// on the links of the process that recorded it ("sim": every process, as for a partition).
enum Impairment : uint8_t {
  kDown, kPaused, kPartitioned, kDeaf, kSlowOrLossy, kImpairmentKinds
};

// What a fault's targets may name.
enum class FaultTargets : uint8_t {
  kProcesses,           // nodes and clients
  kPartitionSides,      // nodes, clients and "sentinel": one side of a partition (peers: the other)
  kNodes,               // nodes only
  kMastersWithReplica,  // master nodes that have a replica
};

struct FaultKindInfo {
  FaultKind kind;
  // The scenario file's word for it (`kind = "lose_replies"`), which is also the name of the
  // history op its start records.
  std::string_view name;
  // The scenario keys it takes besides kind and at_ms; empty slots end the list. Which are
  // required, and their ranges, are the loader's (model/scenario_toml.cpp, ParseFault).
  std::array<std::string_view, 4> keys = {};
  FaultTargets targets = FaultTargets::kProcesses;
  // With a duration_ms key: empty when it must be given (above 0); else it may be 0 or left
  // out, and this says what that means.
  std::string_view no_duration_means = {};
  Name start_op = names::kNone;  // The history op of its start event.
  Name end_op = names::kNone;    // Of its end event; kNone: it has no duration (an instant).
  // Recorded by the simulator's own process ("sim") with a detail that names the links: two
  // open faults of the kind are told apart by that text, not by their process.
  bool keyed_by_text = false;
  // Troubles links for a while (latency, loss, duplicate): several may be open on one process.
  bool network_window = false;
  // A state of each target that the driver switches on at the start and off at the end
  // (drive::FaultTarget::Switch), read by the driver's code where it acts: its events are the
  // target's, the start's value its duration in ms.
  bool switched = false;
  // What it keeps its process from doing while open; kImpairmentKinds: nothing.
  Impairment impairment = kImpairmentKinds;
  // Why `lockstep replay` cannot make it real, after "a fault of kind <name> cannot be made real";
  // empty: it can.
  std::string_view not_replayable = {};
  // Its band's class in report.html (the stylesheet's .f-* rules).
  std::string_view report_class = {};
  // The report labels it by its kind and process ("pause c1") rather than its detail.
  bool labelled_by_process = false;
};

inline constexpr FaultKindInfo kFaultKinds[] = {
    {.kind = FaultKind::kPartition,
     .name = "partition",
     .keys = {"duration_ms", "targets", "peers", "one_way"},
     .targets = FaultTargets::kPartitionSides,
     .start_op = names::kPartition,
     .end_op = names::kHeal,
     .keyed_by_text = true,
     .impairment = kPartitioned,
     .report_class = "f-partition"},
    {.kind = FaultKind::kCrash,
     .name = "crash",
     .keys = {"duration_ms", "targets"},
     .no_duration_means = "0 (or no duration_ms) means the process never restarts",
     .start_op = names::kCrash,
     .end_op = names::kRestart,
     .impairment = kDown,
     .report_class = "f-crash",
     .labelled_by_process = true},
    {.kind = FaultKind::kPause,
     .name = "pause",
     .keys = {"duration_ms", "targets"},
     .start_op = names::kPause,
     .end_op = names::kResume,
     .impairment = kPaused,
     .report_class = "f-pause",
     .labelled_by_process = true},
    {.kind = FaultKind::kClockJump,
     .name = "clock_jump",
     .keys = {"targets", "by_ms"},
     .start_op = names::kClockJump,
     .report_class = "f-jump"},
    {.kind = FaultKind::kFailover,
     .name = "failover",
     .keys = {"targets"},
     .targets = FaultTargets::kMastersWithReplica,
     .start_op = names::kFailover,
     .report_class = "f-failover"},
    {.kind = FaultKind::kLoseReplies,
     .name = "lose_replies",
     .keys = {"duration_ms", "targets"},
     .targets = FaultTargets::kNodes,
     .start_op = names::kLoseReplies,
     .end_op = names::kLoseRepliesEnd,
     .switched = true,
     .impairment = kDeaf,
     .report_class = "f-lose",
     .labelled_by_process = true},
    {.kind = FaultKind::kLatency,
     .name = "latency",
     .keys = {"duration_ms", "targets", "peers", "extra_ms"},
     .start_op = names::kLatency,
     .end_op = names::kLatencyEnd,
     .keyed_by_text = true,
     .network_window = true,
     .impairment = kSlowOrLossy,
     .report_class = "f-net"},
    {.kind = FaultKind::kLoss,
     .name = "loss",
     .keys = {"duration_ms", "targets", "peers", "rate"},
     .start_op = names::kLoss,
     .end_op = names::kLossEnd,
     .keyed_by_text = true,
     .network_window = true,
     .impairment = kSlowOrLossy,
     .report_class = "f-net"},
    // Duplicated messages still all arrive: no impairment.
    {.kind = FaultKind::kDuplicate,
     .name = "duplicate",
     .keys = {"duration_ms", "targets", "peers", "rate"},
     .start_op = names::kDuplicate,
     .end_op = names::kDuplicateEnd,
     .keyed_by_text = true,
     .network_window = true,
     .not_replayable = "on TCP connections, which deliver each byte once",
     .report_class = "f-net"},
    // A disk that completes no fsync: an aof-everysec node's fsyncs wait (what a crash then
    // loses grows), an aof-always node stops at its next write until the disk is back
    // (sim/nodes.cpp). Replay cannot stall a real disk.
    {.kind = FaultKind::kFsyncStall,
     .name = "fsync_stall",
     .keys = {"duration_ms", "targets"},
     .targets = FaultTargets::kNodes,
     .start_op = names::kFsyncStall,
     .end_op = names::kFsyncStallEnd,
     .switched = true,
     .not_replayable = "by a replay, which cannot stall a real disk",
     .report_class = "f-disk",
     .labelled_by_process = true},
};

// Whether the kind takes the scenario key `key`.
constexpr bool Takes(const FaultKindInfo& kind, std::string_view key) {
  for (std::string_view k : kind.keys) {
    if (!k.empty() && k == key) return true;
  }
  return false;
}

// The row of `kind`.
constexpr const FaultKindInfo& InfoOf(FaultKind kind) {
  return kFaultKinds[static_cast<size_t>(kind)];
}

// The row whose start (or, with `end`, whose end) is the history op `op`, or null: the fault
// ops that are no kind's start or end ("promote", "rediscover") have none.
constexpr const FaultKindInfo* FaultStartedBy(Name op) {
  for (const FaultKindInfo& k : kFaultKinds) {
    if (k.start_op == op) return &k;
  }
  return nullptr;
}
constexpr const FaultKindInfo* FaultEndedBy(Name op) {
  for (const FaultKindInfo& k : kFaultKinds) {
    if (k.end_op != names::kNone && k.end_op == op) return &k;
  }
  return nullptr;
}

// The row named so in a scenario file, or null.
constexpr const FaultKindInfo* FindFaultKind(std::string_view name) {
  for (const FaultKindInfo& k : kFaultKinds) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

// The table is in FaultKind's order.
constexpr bool FaultKindsInOrder() {
  for (size_t i = 0; i < std::size(kFaultKinds); ++i) {
    if (static_cast<size_t>(kFaultKinds[i].kind) != i) return false;
  }
  return true;
}
static_assert(FaultKindsInOrder());

}  // namespace lockstep::history

#endif  // LOCKSTEP_HISTORY_FAULT_KINDS_H_
