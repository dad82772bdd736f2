// The timeline: a History folded into the intervals a person reads off a swimlane diagram.
//
// One pass over the events builds, per client thread, its operations (invoke..completion,
// Jepsen's ok/fail/info), the spans in which it believed it held a lock (acquire ok that takes
// its hold count from 0 to 1 .. the invoke of the release that takes it back to 0, a
// forceUnlock, a crash of its process or the end of the run: the same rule as the
// mutual_exclusion checker) and its critical sections (resource enter..exit); per Redis node,
// who the lock key belongs to and its TTL; the faults; every clock's offset from true time; and
// the number of believed holders per lock. The three report writers (html.cpp, trace.cpp,
// markdown.cpp) only read this and the Verdict.
//
// Like the checkers it reads only the History, so it works on a history loaded from a file.
// Everything is kept in history order or sorted by name, never by pointer or hash, so the same
// history always gives the same timeline.
#ifndef LOCKSTEP_REPORTS_TIMELINE_H_
#define LOCKSTEP_REPORTS_TIMELINE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/history.h"

namespace lockstep::reports {

inline constexpr int kNone = -1;

// How an operation ended (Jepsen's vocabulary, plus the two ways of not ending).
enum class Outcome : uint8_t { kOk, kFail, kInfo, kCrashed, kPending };
const char* OutcomeName(Outcome o);

struct Op {
  std::string op;  // acquire, release, force_unlock
  std::string lock;
  int64_t from_us = 0;  // invoke
  int64_t to_us = 0;    // completion (or crash, or run end when pending)
  uint64_t invoke_seq = 0;
  uint64_t end_seq = 0;  // == invoke_seq when nothing ended it
  Outcome outcome = Outcome::kPending;
  std::string detail;  // "tryLock(wait=30000ms, lease=5000ms) -> acquired"
  int node = kNone;    // The node its last command ran on (Timeline::nodes index).
};

// A hold as the thread believes it, or a critical section.
struct Span {
  std::string lock;
  int64_t from_us = 0;
  int64_t to_us = 0;
  uint64_t from_seq = 0;
  uint64_t to_seq = 0;
  bool open = false;     // Still open at the end of the run.
  bool read = false;     // A read hold of a read-write lock (readers may share)
  std::string ended_by;  // "release", "force_unlock", "crash", "exit", "run end"
};

struct ThreadLane {
  std::string name;     // "c1.t0"
  std::string process;  // "c1"
  int thread = 0;
  int client = 0;  // Timeline::clients index
  std::vector<Op> ops;
  std::vector<Span> holds;
  std::vector<Span> sections;
};

// The remaining TTL of the lock key at a moment: a reset (acquire, reentry, renew) or a PTTL
// the node replied with.
struct TtlPoint {
  int64_t t_us = 0;
  int64_t ttl_us = 0;
  bool reset = false;  // true: the TTL was set here; false: a PTTL reply observed it
};

// Who the lock key belongs to on one node, from one lease event to the next.
struct Lease {
  std::string lock;
  std::string owners;        // Owner fields as displayed: "c2.t0" (or the raw field if unknown)
  int owner_thread = kNone;  // ThreadLane index of the first owner, for colour
  int64_t from_us = 0;
  int64_t to_us = 0;
  uint64_t from_seq = 0;
  uint64_t to_seq = 0;
  std::string ended_by;  // "released", "expired", "lost", "crash", "owners", "run end"
  std::vector<TtlPoint> ttl;
};

struct Exec {
  int64_t t_us = 0;
  uint64_t seq = 0;
  std::string op;    // acquire, unlock, renew, subscribe ...
  std::string peer;  // the client process
  std::string reply;
  int thread = kNone;    // ThreadLane it belongs to, when the history says or it is clear
  int op_index = kNone;  // index into that lane's ops
  int64_t cause_us = 0;  // latest recorded cause on the client: the request left after this
};

// A lease event that took the key away from its owners without a release: "expired" (the TTL
// ran out on the node's clock) or "lost" (a failover promoted a replica that never had it).
struct LeaseLoss {
  std::string lock;
  std::string op;      // expired, lost
  std::string owners;  // as displayed
  int64_t t_us = 0;
  uint64_t seq = 0;
};

struct NodeLane {
  std::string name;
  std::string role;  // "master", "replica of n1", or "" when unknown
  std::vector<Lease> leases;
  std::vector<LeaseLoss> losses;
  std::vector<Exec> execs;
  std::vector<TtlPoint> pttl;  // PTTL replies (acquire refused: the key's remaining TTL)
};

struct Fault {
  std::string kind;     // partition, pause, crash, lose_replies, clock_jump, failover, ...
  std::string process;  // Where it was recorded ("sim", "sentinel", "n1", "c2")
  std::string label;    // "pause c2 (GC pause for 13337.215ms)"
  int64_t from_us = 0;
  int64_t to_us = 0;  // == from_us for an instant
  bool instant = false;
  bool open = false;  // Never ended before the run did.
  uint64_t seq = 0;
  uint64_t end_seq = 0;
  std::vector<std::string> affects;  // Processes whose lanes it covers; empty: every node
};

struct ClockSample {
  int64_t t_us = 0;
  int64_t offset_us = 0;  // local clock minus true time (ms resolution: histories record ms)
};

struct ClockSeries {
  std::string process;
  std::vector<ClockSample> samples;  // Only where the offset changes (plus the first and last).
  int64_t min_offset_us = 0;
  int64_t max_offset_us = 0;
};

// The number of threads believing they hold `lock`, from t_us on.
struct HolderCount {
  std::string lock;
  int64_t t_us = 0;
  uint64_t seq = 0;
  int count = 0;
  int readers = 0;        // of which read holds
  bool conflict = false;  // more holders than the lock allows (see Builder::Conflict)
};

// A pub/sub message a client received. A long run has about one per acquisition, so the
// names are indices (Timeline::clients, Timeline::channels, Timeline::nodes), not strings.
struct PubSubMessage {
  int64_t t_us = 0;
  uint64_t seq = 0;
  int client = kNone;
  int channel = kNone;
  int node = kNone;
};

struct Timeline {
  int64_t end_us = 0;  // The run's end (from the "run" note, else the last event)
  size_t event_count = 0;
  std::string history_hash;

  std::vector<std::string> clients;       // Client processes, in natural order
  std::vector<std::string> client_uuids;  // Parallel to clients ("" when unknown)
  std::vector<ThreadLane> threads;        // By client, then thread index
  std::vector<NodeLane> nodes;
  std::vector<Fault> faults;         // In history order of their start
  std::vector<ClockSeries> clocks;   // Clients, then nodes
  std::vector<HolderCount> holders;  // Every change, in history order
  std::vector<std::string> locks;    // Locks that had holders, in order of appearance
  std::vector<PubSubMessage> messages;
  std::vector<std::string> channels;
  int max_holders = 0;
  // From the history's "protocol" note ("kind=rlock ... permits=1"), when it has one.
  std::string protocol_kind;
  int permits = 1;

  // The run's start as Unix ms (true time 0). When the history or scenario does not say, it is
  // estimated from the clocks (see clock_baseline_note).
  int64_t start_unix_ms = 0;
  std::string clock_baseline_note;

  int ThreadIndex(std::string_view name) const;  // kNone if absent
  int NodeIndex(std::string_view name) const;
  int ClientIndex(std::string_view name) const;
  // Indices of the lanes (threads and nodes) a process name stands for.
  std::vector<int> ThreadsOf(std::string_view process) const;
};

struct TimelineOptions {
  // From the scenario, when the report has one (they make the layout match the scenario even
  // for processes the history never mentions).
  std::vector<std::string> node_names;
  std::vector<std::string> node_roles;                      // parallel to node_names
  std::vector<std::pair<std::string, int>> client_threads;  // name, thread count
  std::optional<int64_t> start_unix_ms;
};

Timeline BuildTimeline(const History& history, const TimelineOptions& options);

// "c2" < "c10", "n1" < "n2": names compared with their digit runs as numbers.
bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace lockstep::reports

#endif  // LOCKSTEP_REPORTS_TIMELINE_H_
