// The timeline: a History folded into what a person reads off a swimlane diagram, in memory
// bounded whatever the run's length.
//
// TimelineBuilder is an observer of the facts pass (history/facts.h), the same pass the checkers
// observe, fed the same events:
//
//   thread lanes   operations (invoke .. ok / fail / info, a crash, or still pending at the
//                  end), holds (the pass's beliefs: what the thread believes it holds) and
//                  critical sections (its accesses), exactly as the pass defines them; no rule
//                  of its own
//   node lanes     who the lock key belongs to on each node (from the lease events) and its
//                  TTL, the commands with their replies (exec events), the lease losses; on a
//                  replica, its copy of the key as replication left it (replicated events)
//   the rest       faults, every clock's offset from true time, pub/sub messages (raw events)
//                  and the number of believed holders per lock (the pass's beliefs)
//
// Detail windows. A long run has tens of millions of events, so the builder keeps detail (each
// operation, hold, command ...) only inside windows, and bins everything:
//
//   - A window is anchored at a moment: the start of the run, a violation's from_us (given
//     before the pass: the reports are made after the checkers), or a fault as the pass meets
//     it. It holds the last budget/4 of detail that ended before its anchor (a ring of recent
//     detail is kept for that) and the first 3/4 that ends after it; then it closes. Every
//     element that overlaps a window in time is kept with it, so a window's detail is complete
//     from its from_us to its to_us. Windows that touch merge.
//   - At most `max_windows` anchors: the violations first (the lead one, the first of every
//     other violated property, the rest in Verdict order; at most max_windows - 2 of them), the
//     start of the run, then faults in the order they happen while slots remain.
//   - Budgets are counted in trace events (an operation 1, a hold 2, a command 3 ...): the lead
//     anchor (the lead violation; with none, both the start and the first fault) gets 3/8 of
//     `detail_budget`, the others share what is left, so all windows together stay within it.
//   - The events the lead violation names (`pinned_seqs`) are kept wherever they are, for the
//     summary's sequence diagram.
//   - Outside the windows, everything is summarised in kBins fixed-width time bins (the width
//     doubles, merging bins pairwise, if the run outgrows them): per thread the time spent
//     holding and waiting and the failed and unknown outcomes; per node the time its key was
//     owned; per lock the most believed holders; per clock its lowest and highest offset; the
//     operations started and their outcomes; and the acquires' outcomes and latencies (a
//     histogram per bin, for the report's quantile charts). The bins cover the whole run,
//     inside windows too.
//
// Like the checkers it reads only the History. Everything is kept in history order or sorted by
// name, never by pointer or hash, so the same history always gives the same timeline.
#ifndef LOCKSTEP_REPORTS_TIMELINE_H_
#define LOCKSTEP_REPORTS_TIMELINE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "history/facts.h"
#include "history/history.h"

namespace lockstep::reports {

inline constexpr int kNone = -1;
// Time bins over the whole run (see the header comment).
inline constexpr size_t kBins = 2048;
// Threads, nodes, locks and clocks binned at most (beyond: detail only).
inline constexpr size_t kMaxBinnedLanes = 1024;
// Faults kept (the rest are counted in Timeline::fault_count).
inline constexpr size_t kFaultsKept = 10'000;

// How an operation ended (Jepsen's vocabulary, plus the two ways of not ending).
enum class Outcome : uint8_t { kOk, kFail, kInfo, kCrashed, kPending };
const char* OutcomeName(Outcome o);

struct Op {
  std::string op;  // acquire, release, force_unlock
  std::string lock;
  int64_t from_us = 0;  // invoke
  int64_t to_us = 0;    // completion (or crash, or run end when pending)
  uint64_t invoke_seq = 0;
  uint64_t end_seq = 0;  // The last event's seq when nothing ended it
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

// A lane's binned summary: per bin (Timeline::bin_us wide), the microseconds spent holding and
// waiting (acquire in flight), and the operations that failed or ended unknown there.
struct LaneBins {
  std::vector<uint32_t> hold_us;
  std::vector<uint32_t> wait_us;
  std::vector<uint16_t> failed;
  std::vector<uint16_t> unknown;
};

struct ThreadLane {
  std::string name;     // "c1.t0"
  std::string process;  // "c1"
  int thread = 0;
  int client = 0;  // Timeline::clients index
  std::vector<Op> ops;         // Detail: inside windows (or pinned), by invoke
  std::vector<Span> holds;     // Detail, by start
  std::vector<Span> sections;  // Detail, by start
  LaneBins bins;               // The whole run (empty: not binned)
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
  std::string ended_by;  // "released", "expired", "lost", "crash", "owners", "run end",
                         // and for a replica's copy "applied", "resynced", "promoted"
  // Where the TTL was set (and the first observation, if it came before any reset).
  std::vector<TtlPoint> ttl;
  // A replica's copy of the key, as replication left it (replicated events), not a master's
  // lease: no TTL, and lag_us is how long after its master's write the replica applied it.
  bool replica = false;
  int64_t lag_us = 0;
};

// What a command did to the lock, for its colour.
enum class ExecKind : uint8_t { kAcquired, kRefused, kUnlock, kRenewed, kOther };

struct Exec {
  int64_t t_us = 0;
  uint64_t seq = 0;
  std::string op;    // acquire, unlock, renew, subscribe ...
  std::string peer;  // the client process
  std::string reply;
  ExecKind kind = ExecKind::kOther;
  int thread = kNone;      // ThreadLane it belongs to, when the history says or it is clear
  bool in_op = false;      // It ran for that thread's operation in flight ...
  int64_t op_from_us = 0;  // ... which was invoked then.
  int64_t cause_us = 0;    // latest recorded cause on the client: the request left after this
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

// A node's role changed: a promotion made it a master, or replication shows it following
// another master than its role said (an old master that came back as a replica).
struct RoleChange {
  int64_t t_us = 0;
  std::string role;  // "master", "replica of n2"
};

struct NodeLane {
  std::string name;
  std::string role;  // "master", "replica of n1", or "" when unknown: its role at the start
  std::vector<RoleChange> role_changes;  // In time order (at most kFaultsKept)
  std::vector<Lease> leases;       // Detail
  std::vector<LeaseLoss> losses;   // Detail
  std::vector<Exec> execs;         // Detail, in history order
  std::vector<TtlPoint> pttl;      // Detail: PTTL replies (a refused acquire's remaining TTL)
  std::vector<uint32_t> owned_us;  // Bins: microseconds the key had owners (empty: not binned)
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
  // Detail: where the offset changes, inside windows (each window starts with the offset it
  // carried in).
  std::vector<ClockSample> samples;
  int64_t min_offset_us = 0;  // Over the whole run
  int64_t max_offset_us = 0;
  // Bins: the lowest and highest offset seen in each (equal and 0 where nothing was seen: see
  // seen). Empty: not binned (seen is empty too), or the offset never moved (seen is not, and
  // every seen bin read min_offset_us == max_offset_us): BinMinUs and BinMaxUs read both cases.
  std::vector<int64_t> bin_min_us, bin_max_us;
  std::vector<uint8_t> seen;
  int64_t BinMinUs(size_t bin) const { return bin_min_us.empty() ? min_offset_us : bin_min_us[bin]; }
  int64_t BinMaxUs(size_t bin) const { return bin_max_us.empty() ? max_offset_us : bin_max_us[bin]; }
};

// The number of threads believing they hold `lock`, from t_us on.
struct HolderCount {
  std::string lock;
  int64_t t_us = 0;
  uint64_t seq = 0;
  int count = 0;
  int readers = 0;        // of which read holds
  bool conflict = false;  // more holders than the lock allows
  bool carried = false;   // Not a change: the count a window starts with
};

// A lock's believed holders per bin: the most at any moment of it, and whether that broke the
// lock's promise then.
struct HolderBins {
  std::vector<uint16_t> max;
  std::vector<uint8_t> conflict;
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

// A stretch of true time kept in full detail.
struct DetailWindow {
  int64_t from_us = 0;
  int64_t to_us = 0;
  // Its share of TimelineOptions::detail_budget, in trace events' worth: what its anchors were
  // given (those of the windows merged into it too). 0 for the whole run's one window.
  size_t budget = 0;
  // It ended because that share was spent; else the run ended inside it.
  bool spent = false;
};

// The detail left out (outside every window, so in the bins only), by what it was. The last
// three are never in trace.json, inside a window or not: report.html's marks only.
struct LeftOut {
  size_t ops = 0;
  size_t holds = 0;
  size_t sections = 0;
  size_t leases = 0;          // Who a node's key belonged to, lease by lease
  size_t commands = 0;        // exec events
  size_t messages = 0;        // pub/sub
  size_t holder_changes = 0;  // Changes of a lock's believed holders
  size_t losses = 0;          // A key that expired or was lost under its owners
  size_t pttl = 0;            // PTTL replies
  size_t clock_readings = 0;  // Changes of a clock's offset
  // What trace.json would have drawn (the rest it never draws).
  size_t InTrace() const {
    return ops + holds + sections + leases + commands + messages + holder_changes;
  }
  size_t Total() const { return InTrace() + losses + pttl + clock_readings; }
};

// Operations per bin, over the whole run: started (by invoke) and how they ended.
struct OpBins {
  std::vector<uint32_t> started, ok, failed, unknown;
};

// Acquire latency (invoke to its end) in buckets of half an octave: bucket b holds latencies in
// [2^(b/2), 2^((b+1)/2)) microseconds (bucket 0 also below 1 us, the last one everything from
// 2^31.5 us, about 50 minutes, on).
inline constexpr size_t kLatencyBuckets = 64;
size_t LatencyBucket(int64_t latency_us);
double LatencyBucketHighUs(size_t bucket);  // Its upper end (a quantile is read as that)

// Acquires per bin (by where they ended), over the whole run: how many took the lock and how
// many did not (fail or unknown), and the latencies of those that took it.
struct AcquireBins {
  std::vector<uint32_t> ok, not_ok;
  std::vector<uint32_t> latency;  // kBins * kLatencyBuckets: bin i's bucket b at [i * K + b]
};

struct Timeline {
  int64_t end_us = 0;  // The run's end (see history::FactsPass::run_end_us)
  size_t event_count = 0;
  std::string history_hash;

  std::vector<std::string> clients;       // Client processes, in natural order
  std::vector<std::string> client_uuids;  // Parallel to clients ("" when unknown)
  std::vector<ThreadLane> threads;        // By client, then thread index
  std::vector<NodeLane> nodes;
  std::vector<Fault> faults;         // In history order of their start, at most kFaultsKept
  size_t fault_count = 0;            // All of them
  std::vector<ClockSeries> clocks;   // Clients, then nodes
  std::vector<HolderCount> holders;  // Detail: every change inside windows, in history order
  std::vector<std::string> locks;    // Locks that had holders, in order of appearance
  std::vector<HolderBins> holder_bins;  // Parallel to locks (empty past kMaxBinnedLanes)
  std::vector<PubSubMessage> messages;  // Detail
  std::vector<std::string> channels;
  int max_holders = 0;
  // From the history's "protocol" note ("kind=rlock ... permits=1"), when it has one.
  std::string protocol_kind;
  int permits = 1;

  // Where the detail is complete, in time order; whole_run when nothing was left out.
  std::vector<DetailWindow> windows;
  bool whole_run = true;
  size_t summarised = 0;  // Elements left out of the detail (counted in the bins only)
  LeftOut left_out;       // The same, by kind (left_out.Total() == summarised)
  // What the windows were given: TimelineOptions::detail_budget and max_windows as used.
  size_t detail_budget = 0;
  size_t max_windows = 0;
  // Violation anchors past the max_windows - 2 first, which got no window of their own (they
  // may still lie in another one).
  size_t violations_without_window = 0;
  // The bins: bin i covers [i * bin_us, (i + 1) * bin_us); kBins of them.
  int64_t bin_us = 1;
  OpBins op_bins;
  AcquireBins acquire_bins;

  // The run's start as Unix ms (true time 0). When the history or scenario does not say, it is
  // estimated from the clocks (see clock_baseline_note).
  int64_t start_unix_ms = 0;
  std::string clock_baseline_note;

  int ThreadIndex(std::string_view name) const;  // kNone if absent
  int NodeIndex(std::string_view name) const;
  int ClientIndex(std::string_view name) const;
  // Indices of the lanes (threads and nodes) a process name stands for.
  std::vector<int> ThreadsOf(std::string_view process) const;
  // Whether [from_us, to_us] meets a window (the detail there is complete).
  bool InDetail(int64_t from_us, int64_t to_us) const;
  // The window that contains t_us, else the first one after it, else the last one; kNone when
  // there are none.
  int WindowNear(int64_t t_us) const;
};

struct TimelineOptions {
  // From the scenario, when the report has one (they make the layout match the scenario even
  // for processes the history never mentions).
  std::vector<std::string> node_names;
  std::vector<std::string> node_roles;                      // parallel to node_names
  std::vector<std::pair<std::string, int>> client_threads;  // name, thread count
  std::optional<int64_t> start_unix_ms;

  // Where to keep detail (reports/report.h's DetailPlan fills these from the Verdict).
  std::vector<int64_t> violation_anchors_us;  // In priority order: the first is the lead
  std::vector<uint64_t> pinned_seqs;          // Events whose elements are always kept
  size_t detail_budget = 400'000;             // Trace events' worth (kTraceDetailEvents)
  size_t max_windows = 16;
};

// Builds the Timeline from the facts pass it observes. Add it to the pass, feed the pass every
// event, call the pass's Finish(), then Take().
class TimelineBuilder : public history::FactsObserver {
 public:
  explicit TimelineBuilder(const TimelineOptions& options);
  ~TimelineBuilder() override;
  TimelineBuilder(const TimelineBuilder&) = delete;
  TimelineBuilder& operator=(const TimelineBuilder&) = delete;

  // The node lanes, faults, clocks and messages come from the raw events.
  bool WantsEvents() const override { return true; }
  void OnEvent(const history::FactsPass& f, const history::Event& e) override;
  void OnOpEnded(const history::FactsPass& f, const history::Op& op) override;
  void OnSpanStarted(const history::FactsPass& f, const history::Span& s) override;
  void OnSpanEnded(const history::FactsPass& f, const history::Span& s) override;
  void OnEventDone(const history::FactsPass& f, const history::Event& e) override;
  void OnFinishing(const history::FactsPass& f) override;
  void OnFinish(const history::FactsPass& f) override;

  // The timeline (history_hash left empty: the caller knows it). REQUIRES: the pass finished.
  Timeline Take();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// The timeline of an in-memory history (a facts pass of its own).
Timeline BuildTimeline(const history::History& history, const TimelineOptions& options);

// "c2" < "c10", "n1" < "n2": names compared with their digit runs as numbers.
bool NaturalLess(std::string_view a, std::string_view b);

}  // namespace lockstep::reports

#endif  // LOCKSTEP_REPORTS_TIMELINE_H_
