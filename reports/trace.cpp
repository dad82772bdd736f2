// trace.json: the run in Chrome Trace Event format (ui.perfetto.dev, chrome://tracing).
//
// Layout (toolchain-facts section 4):
//   pid 1 "run"          faults and violations as instants (s=g), their intervals as async
//                        slices, and the counter "holders(<lock>)" (believed holders)
//   pid 2.. clients      one tid per thread: operations and critical sections as X slices,
//                        which nest on a thread; holds as async b/e slices (they may overlap
//                        another thread's: that overlap is the split brain); a "connection"
//                        tid for commands no operation accounts for (watchdog renewals ...)
//   pid .. nodes         tid 1 "commands": every command or script as a 1 us X slice, the end
//                        of a flow (s/f) that starts on the client thread that sent it;
//                        tid 2 "lock key": who the key belongs to, as X slices
//
// Perfetto's JSON importer needs X slices on one track to nest; WriteNested() checks that and
// moves any slice that would not nest to an "(overlapping)" track of its own, so the property
// holds by construction.
//
// Detail: every operation, hold, command, lease and message the timeline kept, that is
// everything inside its detail windows (timeline.h). Outside them the trace has the faults, the
// violations and counters from the timeline's bins: the believed holders per lock (the most in
// each bin, so a moment with two holders is never lost), the operations started and how they
// ended, and the offset of every skewed clock. So the counters cover the whole run.
//
// Timestamps are true time in microseconds. A flow starts at the latest recorded cause of the
// request on the client (its invoke, a pub/sub message, its previous command), but at most 1 ms
// before the command ran: the history records no send events.
#include <algorithm>
#include <cassert>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

#include "reports/report.h"
#include "reports/text.h"

namespace lockstep::reports {

namespace {

// Thread ids are unique across the trace (pid * kTidsPerPid + n), as Chrome's are: Perfetto
// keys threads by tid. n: 1 + thread index for client threads, kConnection for a client's
// connection; kCommands and kKey on a node; + kOverlap for a track's overlapping twin.
constexpr int kRunPid = 1;
constexpr int kTidsPerPid = 10000;
constexpr int kFaultTid = kRunPid * kTidsPerPid + 1;
constexpr int kViolationTid = kRunPid * kTidsPerPid + 2;
constexpr int kDetailTid = kRunPid * kTidsPerPid + 3;
constexpr int kConnection = 4999;
constexpr int kCommands = 1;
constexpr int kKey = 2;
constexpr int kOverlap = 5000;
int Tid(int pid, int n) { return pid * kTidsPerPid + n; }
constexpr int64_t kMaxFlowLeadUs = 1000;
// Clocks given an offset counter at most (the skewed ones, in the timeline's order).
constexpr size_t kClockCounters = 32;

// Time in half microseconds, so flow ends can sit inside 1 us slices and still sort exactly.
using Half = int64_t;
Half H(int64_t us) { return us * 2; }

std::string Ts(Half h) {
  if (h % 2 == 0) return Format("%lld", static_cast<long long>(h / 2));
  return Format("%lld.5", static_cast<long long>((h - 1) / 2));
}

// An event's JSON lives in one arena (TraceWriter::arena_): a trace of 400,000 events would
// otherwise cost as many string allocations, and twice its size when joined.
struct TraceEvent {
  Half ts = 0;
  int order = 0;  // Ties at one ts: ends before begins, longer slices before shorter
  Half neg_dur = 0;
  uint64_t serial = 0;
  size_t offset = 0;
  size_t size = 0;
};

struct Slice {
  Half from = 0;
  Half to = 0;
  std::string name;
  std::string cat;
  std::string args;  // The inside of an args object, without braces
  std::string cname;
  int pid = 0;
  int tid = 0;
};

// The faults the trace draws (its first kFaultsKept) that start outside every detail window.
size_t FaultsOutsideWindows(const Timeline& tl) {
  if (tl.whole_run) return 0;
  const auto outside = [&tl](const Fault& f) { return !tl.InDetail(f.from_us, f.from_us); };
  return static_cast<size_t>(std::count_if(tl.faults.begin(), tl.faults.end(), outside));
}

class TraceWriter {
 public:
  TraceWriter(const Timeline& tl, const check::Verdict& verdict, const ReportMeta& meta)
      : tl_(tl), verdict_(verdict), meta_(meta) {}

  void Render(std::ostream& out) {
    AssignPids();
    Metadata();
    Clients();
    Nodes();
    Faults();
    Violations();
    DetailMarks();
    Counters();
    Messages();
    for (auto& [track, slices] : x_slices_) {
      WriteNested(track, slices);
      std::vector<Slice>().swap(slices);  // Written: free it before the next track grows
    }
    Finish(out);
  }

 private:
  // --- what the timeline kept in full detail ---

  bool InWindow(int64_t from_us, int64_t to_us) const { return tl_.InDetail(from_us, to_us); }

  void AssignPids() {
    int pid = kRunPid + 1;
    for (size_t c = 0; c < tl_.clients.size(); ++c) client_pid_.push_back(pid++);
    for (size_t n = 0; n < tl_.nodes.size(); ++n) node_pid_.push_back(pid++);
  }
  int PidOf(const std::string& process) const {
    if (const int c = tl_.ClientIndex(process); c != kNone) return client_pid_[c];
    if (const int n = tl_.NodeIndex(process); n != kNone) return node_pid_[n];
    return kNone;
  }

  // --- emitting ---

  // Where an async slice's end sorts among the events at its time: before the begins there
  // (one slice ending as the next begins does not overlap it), except for a slice of no length,
  // whose end must follow its own begin (emitted just before it, so next in serial order).
  static int EndOrder(int64_t from_us, int64_t to_us) { return from_us == to_us ? 2 : 1; }

  void Emit(Half ts, int order, Half dur, const std::string& json) {
    events_.push_back({ts, order, -dur, serial_++, arena_.size(), json.size()});
    arena_ += json;
  }

  static std::string Head(const std::string& name, const std::string& cat, char ph, Half ts,
                          int pid, int tid) {
    std::string s = "{\"name\":";
    AppendJsonString(&s, name);
    if (!cat.empty()) {
      s += ",\"cat\":";
      AppendJsonString(&s, cat);
    }
    s += ",\"ph\":\"";
    s.push_back(ph);
    s += "\",\"ts\":" + Ts(ts) + Format(",\"pid\":%d,\"tid\":%d", pid, tid);
    return s;
  }

  void Meta(const char* what, int pid, int tid, const std::string& key, const std::string& value,
            bool number) {
    std::string s =
        Format("{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{", what, pid, tid);
    AppendJsonString(&s, key);
    s += ":";
    s += number ? value : JsonString(value);
    s += "}}";
    metadata_.push_back(std::move(s));
  }

  void Metadata() {
    Meta("process_name", kRunPid, 0, "name", "run: faults, violations, holders", false);
    Meta("process_sort_index", kRunPid, 0, "sort_index", "0", true);
    Meta("thread_name", kRunPid, kFaultTid, "name", "faults", false);
    Meta("thread_name", kRunPid, kViolationTid, "name", "violations", false);
    if (!tl_.whole_run) Meta("thread_name", kRunPid, kDetailTid, "name", "trace detail", false);
    for (size_t c = 0; c < tl_.clients.size(); ++c) {
      const int pid = client_pid_[c];
      Meta("process_name", pid, 0, "name", "client " + tl_.clients[c], false);
      Meta("process_sort_index", pid, 0, "sort_index", std::to_string(pid), true);
      if (!tl_.client_uuids[c].empty()) {
        Meta("process_labels", pid, 0, "labels", "uuid " + tl_.client_uuids[c], false);
      }
      for (int lane : tl_.ThreadsOf(tl_.clients[c])) {
        const ThreadLane& l = tl_.threads[lane];
        Meta("thread_name", pid, Tid(pid, l.thread + 1), "name", l.name, false);
        Meta("thread_sort_index", pid, Tid(pid, l.thread + 1), "sort_index",
             std::to_string(l.thread + 1), true);
      }
      Meta("thread_name", pid, Tid(pid, kConnection), "name", tl_.clients[c] + " connection",
           false);
    }
    for (size_t n = 0; n < tl_.nodes.size(); ++n) {
      const int pid = node_pid_[n];
      std::string name = "redis " + tl_.nodes[n].name;
      if (!tl_.nodes[n].role.empty()) name += " (" + tl_.nodes[n].role + ")";
      Meta("process_name", pid, 0, "name", name, false);
      Meta("process_sort_index", pid, 0, "sort_index", std::to_string(pid), true);
      Meta("thread_name", pid, Tid(pid, kCommands), "name", tl_.nodes[n].name + " commands", false);
      Meta("thread_name", pid, Tid(pid, kKey), "name", tl_.nodes[n].name + " lock key", false);
    }
  }

  void AddSlice(Slice s) {
    assert(s.to >= s.from);
    x_slices_[{s.pid, s.tid}].push_back(std::move(s));
  }

  static std::string Seqs(uint64_t a, uint64_t b) {
    return Format("\"seq\":[%llu,%llu]", static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b));
  }

  void Clients() {
    for (const ThreadLane& l : tl_.threads) {
      const int pid = client_pid_[l.client];
      const int tid = Tid(pid, l.thread + 1);
      for (const Op& op : l.ops) {
        Slice s;
        s.from = H(op.from_us);
        s.to = H(op.to_us);
        s.name = op.op + " " + op.lock;
        s.cat = "op";
        s.cname = op.outcome == Outcome::kOk     ? "good"
                  : op.outcome == Outcome::kFail ? "bad"
                                                 : "yellow";
        s.args = "\"outcome\":" + JsonString(OutcomeName(op.outcome)) +
                 ",\"detail\":" + JsonString(op.detail) + "," + Seqs(op.invoke_seq, op.end_seq);
        if (op.node != kNone) s.args += ",\"node\":" + JsonString(tl_.nodes[op.node].name);
        s.pid = pid;
        s.tid = tid;
        AddSlice(std::move(s));
      }
      for (const Span& cs : l.sections) {
        Slice s;
        s.from = H(cs.from_us);
        s.to = H(cs.to_us);
        s.name = "critical section " + cs.lock;
        s.cat = "resource";
        s.cname = "olive";
        s.args = "\"ended_by\":" + JsonString(cs.ended_by) + "," + Seqs(cs.from_seq, cs.to_seq);
        s.pid = pid;
        s.tid = tid;
        AddSlice(std::move(s));
      }
      for (const Span& h : l.holds) {
        const uint64_t id = next_id_++;
        const std::string name = (h.read ? "reads " : "holds ") + h.lock;
        std::string b = Head(name, "hold", 'b', H(h.from_us), pid, tid);
        b += Format(",\"id\":%llu,\"args\":{\"thread\":", static_cast<unsigned long long>(id)) +
             JsonString(l.name) + ",\"ended_by\":" + JsonString(h.ended_by) + "," +
             Seqs(h.from_seq, h.to_seq) + "}}";
        Emit(H(h.from_us), 2, 0, b);
        std::string e = Head(name, "hold", 'e', H(h.to_us), pid, tid);
        e += Format(",\"id\":%llu}", static_cast<unsigned long long>(id));
        Emit(H(h.to_us), EndOrder(h.from_us, h.to_us), 0, std::move(e));
      }
    }
  }

  void Nodes() {
    for (size_t n = 0; n < tl_.nodes.size(); ++n) {
      const NodeLane& node = tl_.nodes[n];
      const int pid = node_pid_[n];
      for (const Lease& l : node.leases) {
        Slice s;
        s.from = H(l.from_us);
        s.to = H(l.to_us);
        s.name = (l.replica ? "copy names " : "owned by ") +
                 (l.owners.empty() ? std::string("?") : l.owners);
        s.cat = l.replica ? "replica" : "lease";
        s.args = "\"lock\":" + JsonString(l.lock) + ",\"ended_by\":" + JsonString(l.ended_by) +
                 "," + Seqs(l.from_seq, l.to_seq);
        if (l.replica) s.args += Format(",\"lag_us\":%lld", static_cast<long long>(l.lag_us));
        if (!l.ttl.empty() && l.ttl.front().reset) {
          s.args += Format(",\"ttl_ms\":%lld", static_cast<long long>(l.ttl.front().ttl_us / 1000));
        }
        s.pid = pid;
        s.tid = Tid(pid, kKey);
        AddSlice(std::move(s));
        if ((l.ended_by == "expired" || l.ended_by == "lost") && InWindow(l.to_us, l.to_us)) {
          std::string i = Head("lease " + l.ended_by + ": " + l.owners, "lease", 'i', H(l.to_us),
                               pid, Tid(pid, kKey));
          i += ",\"s\":\"t\",\"args\":{" +
               Format("\"seq\":%llu", static_cast<unsigned long long>(l.to_seq)) + "}}";
          Emit(H(l.to_us), 3, 0, std::move(i));
        }
      }
      // Commands at the same microsecond share one slice, so the track nests.
      size_t i = 0;
      while (i < node.execs.size()) {
        size_t j = i;
        while (j < node.execs.size() && node.execs[j].t_us == node.execs[i].t_us) ++j;
        ExecGroup(pid, node, i, j);
        i = j;
      }
    }
  }

  void ExecGroup(int pid, const NodeLane& node, size_t begin, size_t end) {
    const Exec& first = node.execs[begin];
    Slice s;
    s.from = H(first.t_us);
    s.to = H(first.t_us + 1);
    s.name = first.op;
    if (end - begin > 1) s.name += Format(" (+%zu more)", end - begin - 1);
    s.cat = "command";
    s.pid = pid;
    s.tid = Tid(pid, kCommands);
    for (size_t k = begin; k < end; ++k) {
      const Exec& x = node.execs[k];
      if (k > begin) s.args += ",";
      s.args += Format("\"%zu\":", k - begin);
      s.args += JsonString(x.peer + " " + x.op + " -> " + x.reply +
                           Format(" (seq %llu)", static_cast<unsigned long long>(x.seq)));
      Flow(x, pid);
    }
    AddSlice(std::move(s));
  }

  void Flow(const Exec& x, int node_pid) {
    const int client = tl_.ClientIndex(x.peer);
    if (client == kNone) return;
    const int pid = client_pid_[client];
    Half from = H(std::max(x.cause_us, x.t_us - kMaxFlowLeadUs));
    int tid = Tid(pid, kConnection);
    if (x.thread != kNone && x.in_op) {
      tid = Tid(pid, tl_.threads[x.thread].thread + 1);
      // Half a microsecond into the operation, so the flow binds to it and not to the slice
      // that ended at its invoke.
      from = std::max(from, H(x.op_from_us) + 1);
    } else {
      // A 1 us "send" slice on the connection track for the flow to start from.
      const auto key = std::make_pair(pid, from);
      if (connection_sends_.insert(key).second) {
        Slice s;
        s.from = from;
        s.to = from + 2;
        s.name = "send " + x.op;
        s.cat = "command";
        s.pid = pid;
        s.tid = Tid(pid, kConnection);
        AddSlice(std::move(s));
      }
      from += 1;
    }
    const uint64_t id = next_id_++;
    std::string s = Head("request", "request", 's', from, pid, tid);
    s += Format(",\"id\":%llu}", static_cast<unsigned long long>(id));
    Emit(from, 4, 0, std::move(s));
    std::string f =
        Head("request", "request", 'f', H(x.t_us) + 1, node_pid, Tid(node_pid, kCommands));
    f += Format(",\"bp\":\"e\",\"id\":%llu}", static_cast<unsigned long long>(id));
    Emit(H(x.t_us) + 1, 4, 0, std::move(f));
  }

  void Faults() {
    for (const Fault& f : tl_.faults) {
      // Process-scoped when the fault belongs to one lane's process, global otherwise.
      const int pid = f.affects.size() == 1 ? PidOf(f.affects.front()) : kNone;
      const std::string args = "\"kind\":" + JsonString(f.kind) +
                               ",\"process\":" + JsonString(f.process) +
                               Format(",\"seq\":%llu", static_cast<unsigned long long>(f.seq));
      std::string i = Head(f.label, "fault", 'i', H(f.from_us), pid == kNone ? kRunPid : pid,
                           pid == kNone ? kFaultTid : 0);
      i += std::string(",\"s\":\"") + (pid == kNone ? "g" : "p") + "\",\"args\":{" + args + "}}";
      Emit(H(f.from_us), 3, 0, std::move(i));
      if (f.instant) continue;
      if (!f.open) {
        std::string end = Head("end of " + f.kind + " " + f.process, "fault", 'i', H(f.to_us),
                               pid == kNone ? kRunPid : pid, pid == kNone ? kFaultTid : 0);
        end += std::string(",\"s\":\"") + (pid == kNone ? "g" : "p") + "\",\"args\":{" +
               Format("\"seq\":%llu", static_cast<unsigned long long>(f.end_seq)) + "}}";
        Emit(H(f.to_us), 3, 0, std::move(end));
      }
      // The band as an async slice on the run's faults, so its length shows. Perfetto makes a
      // track per async name, so the name is the kind and place, and the label goes in args.
      const uint64_t id = next_id_++;
      const std::string band =
          f.kind + " " + (f.kind == "partition" ? f.label.substr(10) : f.process);
      std::string b = Head(band, "fault", 'b', H(f.from_us), kRunPid, kFaultTid);
      b += Format(",\"id\":%llu,\"args\":{", static_cast<unsigned long long>(id)) + args +
           ",\"label\":" + JsonString(f.label) + "}}";
      Emit(H(f.from_us), 2, 0, std::move(b));
      std::string e = Head(band, "fault", 'e', H(f.to_us), kRunPid, kFaultTid);
      e += Format(",\"id\":%llu}", static_cast<unsigned long long>(id));
      Emit(H(f.to_us), EndOrder(f.from_us, f.to_us), 0, std::move(e));
    }
  }

  void Violations() {
    for (const ShownViolation& shown : ShownViolations(verdict_, kViolationsShown)) {
      const check::Violation& v = *shown.violation;
      std::string threads, events;
      for (const std::string& t : v.threads)
        threads += (threads.empty() ? "" : ",") + JsonString(t);
      for (uint64_t seq : v.events) {
        events += (events.empty() ? "" : ",") + std::to_string(seq);
      }
      const std::string name = "VIOLATION " + v.property + " (" + v.kind + ")";
      const std::string args =
          "\"property\":" + JsonString(v.property) + ",\"kind\":" + JsonString(v.kind) +
          ",\"threads\":[" + threads + "]" +
          Format(",\"from_us\":%lld,\"to_us\":%lld", static_cast<long long>(v.from_us),
                 static_cast<long long>(v.to_us)) +
          ",\"events\":[" + events + "],\"explanation\":" + JsonString(v.explanation);
      std::string i = Head(name, "violation", 'i', H(v.from_us), kRunPid, kViolationTid);
      i += ",\"s\":\"g\",\"args\":{" + args + "}}";
      Emit(H(v.from_us), 3, 0, std::move(i));
      const uint64_t id = next_id_++;
      std::string b = Head(name, "violation", 'b', H(v.from_us), kRunPid, kViolationTid);
      b += Format(",\"id\":%llu,\"args\":{", static_cast<unsigned long long>(id)) + args + "}}";
      Emit(H(v.from_us), 2, 0, std::move(b));
      std::string e = Head(name, "violation", 'e', H(v.to_us), kRunPid, kViolationTid);
      e += Format(",\"id\":%llu}", static_cast<unsigned long long>(id));
      Emit(H(v.to_us), EndOrder(v.from_us, v.to_us), 0, std::move(e));
    }
  }

  // Where the detail stops and starts again, as instants a reader of the trace cannot miss: a
  // trace that goes quiet after a minute reads as a run that did nothing.
  void DetailMarks() {
    if (tl_.whole_run) return;
    const size_t n = tl_.windows.size();
    for (size_t i = 0; i < n; ++i) {
      const DetailWindow& w = tl_.windows[i];
      const std::string window = Format("\"window\":%zu,\"windows\":%zu,", i + 1, n) +
                                 Format("\"from_us\":%lld,\"to_us\":%lld",
                                        static_cast<long long>(w.from_us),
                                        static_cast<long long>(w.to_us));
      if (w.from_us > 0) {
        std::string b = Head(Format("trace detail resumes here: window %zu of %zu, to ", i + 1, n) +
                                 Seconds(w.to_us),
                             "detail", 'i', H(w.from_us), kRunPid, kDetailTid);
        b += ",\"s\":\"g\",\"args\":{" + window + "}}";
        Emit(H(w.from_us), 3, 0, std::move(b));
      }
      if (!w.spent || w.to_us >= tl_.end_us) continue;
      const std::string until =
          i + 1 < n ? Seconds(tl_.windows[i + 1].from_us) : "the run's end, " + Seconds(tl_.end_us);
      std::string e = Head(Format("trace detail ends here: the window's share of the detail "
                                  "budget is spent (%s of %s trace events); only faults, "
                                  "violations and counters until ",
                                  Grouped(w.budget).c_str(), Grouped(tl_.detail_budget).c_str()) +
                               until,
                           "detail", 'i', H(w.to_us), kRunPid, kDetailTid);
      e += ",\"s\":\"g\",\"args\":{" + window +
           Format(",\"window_budget\":%zu,\"detail_budget\":%zu", w.budget, tl_.detail_budget) +
           ",\"budget\":" + JsonString(BudgetName()) + "}}";
      Emit(H(w.to_us), 3, 0, std::move(e));
    }
  }

  std::string BudgetName() const {
    return tl_.detail_budget == kTraceDetailEvents ? "kTraceDetailEvents (reports/report.h)"
                                                   : "TimelineOptions::detail_budget";
  }

  void Counter(const std::string& lock, int64_t t_us, int count) {
    std::string c = Head("holders(" + lock + ")", "holders", 'C', H(t_us), kRunPid, kFaultTid);
    c += Format(",\"args\":{\"holders\":%d}}", count);
    Emit(H(t_us), 5, 0, std::move(c));
  }

  // Every change the timeline kept (inside its windows); outside them, from its bins: the most
  // holders per bin (so a moment with two holders is never lost to the summary), emitted where
  // it changes.
  void Counters() {
    const int64_t w = tl_.bin_us;
    auto outside = [&](size_t b) {
      const int64_t t = static_cast<int64_t>(b) * w;
      return t <= tl_.end_us && !InWindow(t, t);
    };
    for (size_t l = 0; l < tl_.locks.size(); ++l) {
      const std::string& lock = tl_.locks[l];
      Counter(lock, 0, 0);
      for (const HolderCount& h : tl_.holders) {
        if (h.lock == lock) Counter(lock, h.t_us, h.count);
      }
      if (l >= tl_.holder_bins.size() || tl_.holder_bins[l].max.empty()) continue;
      const std::vector<uint16_t>& max = tl_.holder_bins[l].max;
      int last = -1;
      for (size_t b = 0; b < max.size(); ++b) {
        if (!outside(b)) {
          last = -1;  // After a window, say the count again.
          continue;
        }
        if (max[b] != last) Counter(lock, static_cast<int64_t>(b) * w, max[b]);
        last = max[b];
      }
    }
    // Operations per bin, the whole run.
    const OpBins& ops = tl_.op_bins;
    std::string last;
    for (size_t b = 0; b < ops.started.size() && static_cast<int64_t>(b) * w <= tl_.end_us; ++b) {
      const std::string args =
          Format("{\"started\":%u,\"ok\":%u,\"fail\":%u,\"unknown\":%u}", ops.started[b],
                 ops.ok[b], ops.failed[b], ops.unknown[b]);
      if (args == last) continue;
      last = args;
      const int64_t t = static_cast<int64_t>(b) * w;
      std::string c = Head("operations per " + Duration(w), "operations", 'C', H(t), kRunPid,
                           kFaultTid);
      c += ",\"args\":" + args + "}";
      Emit(H(t), 5, 0, c);
    }
    // Skewed clocks' offsets per bin (lowest and highest), the whole run.
    size_t clocks = 0;
    for (const ClockSeries& c : tl_.clocks) {
      if ((c.min_offset_us == 0 && c.max_offset_us == 0) || c.seen.empty()) continue;
      if (++clocks > kClockCounters) break;
      std::string previous;
      for (size_t b = 0; b < c.seen.size() && static_cast<int64_t>(b) * w <= tl_.end_us; ++b) {
        if (!c.seen[b]) continue;
        const std::string args = Format("{\"min_ms\":%.3f,\"max_ms\":%.3f}", c.BinMinUs(b) / 1e3,
                                        c.BinMaxUs(b) / 1e3);
        if (args == previous) continue;
        previous = args;
        const int64_t t = static_cast<int64_t>(b) * w;
        std::string e = Head("clock offset(" + c.process + ")", "clock", 'C', H(t), kRunPid,
                             kFaultTid);
        e += ",\"args\":" + args + "}";
        Emit(H(t), 5, 0, e);
      }
    }
  }

  void Messages() {
    for (const PubSubMessage& m : tl_.messages) {
      const int client = m.client;
      std::string i = Head("message " + tl_.channels[m.channel], "pubsub", 'i', H(m.t_us),
                           client_pid_[client], Tid(client_pid_[client], kConnection));
      i += ",\"s\":\"t\",\"args\":{\"from\":" +
           JsonString(m.node == kNone ? "?" : tl_.nodes[m.node].name) +
           Format(",\"seq\":%llu}}", static_cast<unsigned long long>(m.seq));
      Emit(H(m.t_us), 3, 0, std::move(i));
    }
  }

  // Writes a track's X slices; a slice that would not nest inside the ones open at its start
  // goes to the track's "(overlapping)" twin instead.
  void WriteNested(const std::pair<int, int>& track, std::vector<Slice>& slices) {
    std::stable_sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
      if (a.from != b.from) return a.from < b.from;
      return a.to > b.to;
    });
    std::vector<Half> open;  // ends of the enclosing slices
    bool overflow_named = false;
    for (Slice& s : slices) {
      while (!open.empty() && open.back() <= s.from) open.pop_back();
      if (!open.empty() && s.to > open.back()) {
        if (!overflow_named) {
          Meta("thread_name", track.first, track.second + kOverlap, "name", "overlapping slices",
               false);
          overflow_named = true;
        }
        s.tid = track.second + kOverlap;
        ++overflowed_;
        WriteSlice(s);
        continue;
      }
      open.push_back(s.to);
      WriteSlice(s);
    }
  }

  void WriteSlice(const Slice& s) {
    std::string x = Head(s.name, s.cat, 'X', s.from, s.pid, s.tid);
    x += ",\"dur\":" + Ts(s.to - s.from);
    if (!s.cname.empty()) x += ",\"cname\":" + JsonString(s.cname);
    x += ",\"args\":{" + s.args + "}}";
    Emit(s.from, 3, s.to - s.from, std::move(x));
  }

  void Finish(std::ostream& out) {
    std::sort(events_.begin(), events_.end(), [](const TraceEvent& a, const TraceEvent& b) {
      if (a.ts != b.ts) return a.ts < b.ts;
      if (a.order != b.order) return a.order < b.order;
      if (a.neg_dur != b.neg_dur) return a.neg_dur < b.neg_dur;
      return a.serial < b.serial;
    });
    out << "{\"traceEvents\":[\n";
    bool first = true;
    auto line = [&](std::string_view s) {
      if (!first) out << ",\n";
      first = false;
      out << s;
    };
    for (const std::string& m : metadata_) line(m);
    for (const TraceEvent& e : events_) line(std::string_view(arena_).substr(e.offset, e.size));
    std::string tail = "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{";
    tail += "\"scenario\":" + JsonString(meta_.scenario_name);
    if (meta_.seed) tail += Format(",\"seed\":%llu", static_cast<unsigned long long>(*meta_.seed));
    tail += ",\"version\":" + JsonString(meta_.version);
    tail += ",\"history_hash\":" + JsonString(tl_.history_hash);
    tail += Format(",\"history_events\":%zu", tl_.event_count);
    tail += Format(",\"end_us\":%lld", static_cast<long long>(tl_.end_us));
    tail += ",\"reproduce\":" + JsonString(meta_.reproduce);
    tail += ",\"detail_windows\":[";
    for (size_t i = 0; i < tl_.windows.size(); ++i) {
      tail += Format("%s[%lld,%lld]", i ? "," : "", static_cast<long long>(tl_.windows[i].from_us),
                     static_cast<long long>(tl_.windows[i].to_us));
    }
    tail += "]";
    tail += tl_.whole_run
                ? ",\"summarised\":false"
                : ",\"summarised\":true,\"summary_note\":" +
                      JsonString(Format("full detail only inside detail_windows (around the start, "
                                        "the violations and the faults, as far as the detail "
                                        "budget and the window limit go: see detail; %zu "
                                        "elements left out); outside them only faults, "
                                        "violations and counters per ",
                                        tl_.summarised) +
                                 Duration(tl_.bin_us) +
                                 " bin (the most believed holders, operations, clock offsets)") +
                      ",\"detail\":" + DetailJson();
    tail += Format(",\"overlapping_slices_moved\":%zu", overflowed_);
    tail += ",\"flows\":" + JsonString(
                                "from the latest recorded cause on the client (at most 1 ms "
                                "before the command ran) to the command on the node; the "
                                "history has no send events");
    tail += "}}\n";
    out << tail;
  }

  // otherData.detail: the budget, each window's share of it and why it ended, what was left
  // out by kind, the anchors that found no window, and the sentence `run` and `report` print.
  std::string DetailJson() const {
    std::string o = "{\"budget\":" + JsonString(BudgetName()) +
                    Format(",\"budget_trace_events\":%zu,\"max_windows\":%zu,\"windows\":[",
                           tl_.detail_budget, tl_.max_windows);
    for (size_t i = 0; i < tl_.windows.size(); ++i) {
      const DetailWindow& w = tl_.windows[i];
      o += Format("%s{\"from_us\":%lld,\"to_us\":%lld,\"budget_trace_events\":%zu,\"ended\":",
                  i ? "," : "", static_cast<long long>(w.from_us),
                  static_cast<long long>(w.to_us), w.budget) +
           JsonString(w.spent ? "its budget spent" : "the run's end") + "}";
    }
    const LeftOut& l = tl_.left_out;
    o += Format("],\"left_out\":{\"operations\":%zu,\"holds\":%zu,\"critical_sections\":%zu,"
                "\"leases\":%zu,\"commands\":%zu,\"messages\":%zu,\"holder_changes\":%zu,"
                "\"in_trace\":%zu,",
                l.ops, l.holds, l.sections, l.leases, l.commands, l.messages, l.holder_changes,
                l.InTrace()) +
         Format("\"lease_losses\":%zu,\"pttl_replies\":%zu,\"clock_readings\":%zu,"
                "\"total\":%zu}",
                l.losses, l.pttl, l.clock_readings, l.Total());
    // Shares are handed out as anchors come; those of anchors that never came stay unused.
    size_t given = 0;
    for (const DetailWindow& w : tl_.windows) given += w.budget;
    o += Format(",\"budget_unused_trace_events\":%zu",
                tl_.detail_budget - std::min(given, tl_.detail_budget));
    o += Format(",\"faults_outside_windows\":%zu,\"violation_anchors_without_window\":%zu",
                FaultsOutsideWindows(tl_), tl_.violations_without_window);
    o += ",\"note\":" + JsonString(TraceDetailNote(tl_)) + "}";
    return o;
  }

  const Timeline& tl_;
  const check::Verdict& verdict_;
  const ReportMeta& meta_;
  std::vector<int> client_pid_, node_pid_;
  std::vector<std::string> metadata_;
  std::vector<TraceEvent> events_;
  std::string arena_;
  std::map<std::pair<int, int>, std::vector<Slice>> x_slices_;
  std::set<std::pair<int, Half>> connection_sends_;
  uint64_t serial_ = 0;
  uint64_t next_id_ = 1;
  size_t overflowed_ = 0;
};

}  // namespace

std::string TraceDetailNote(const Timeline& tl) {
  if (tl.whole_run || tl.windows.empty()) return "";
  const size_t n = tl.windows.size();
  size_t spent = 0;
  int64_t covered_us = 0;
  for (const DetailWindow& w : tl.windows) {
    spent += w.spent;
    covered_us += w.to_us - w.from_us;
  }
  const DetailWindow& last = tl.windows.back();
  std::string o = "full detail ";
  if (n == 1) {
    o += "only from " + Seconds(last.from_us) + " to " + Seconds(last.to_us) + " of " +
         Seconds(tl.end_us);
  } else {
    o += Format("only in %zu windows, ", n) + Seconds(covered_us) + " of " + Seconds(tl.end_us) +
         " (the last from " + Seconds(last.from_us) + " to " + Seconds(last.to_us) + ")";
  }
  o += ", elsewhere faults, violations and counters only; ";
  const std::string budget = Grouped(tl.detail_budget) + " trace events" +
                             (tl.detail_budget == kTraceDetailEvents ? ", kTraceDetailEvents" : "");
  if (n == 1 && spent == 1) {
    o += "the window's share of the detail budget (" + Grouped(last.budget) + " of " + budget +
         ") was spent";
  } else if (spent == n) {
    o += "each window's share of the detail budget (" + budget + ") was spent";
  } else if (spent > 0) {
    o += Format("%zu of the windows' shares of the detail budget (", spent) + budget +
         ") were spent";
  } else {
    o += "no window spent its share of the detail budget (" + budget + ")";
  }
  o += "; " + Grouped(tl.left_out.InTrace()) + " operations, holds, commands ... left out";
  // A fault opens a window while fewer than max_windows have opened, so one outside them all
  // came after that.
  if (const size_t outside = FaultsOutsideWindows(tl); outside > 0) {
    o += "; " + Grouped(outside) + " of the " + Grouped(tl.faults.size()) +
         " faults in the trace lie outside the windows (" + Grouped(tl.max_windows) +
         " at most)";
  }
  return o;
}

void WriteTrace(const Timeline& timeline, const check::Verdict& verdict, const ReportMeta& meta,
                std::ostream& out) {
  TraceWriter(timeline, verdict, meta).Render(out);
}

std::string RenderTrace(const Timeline& timeline, const check::Verdict& verdict,
                        const ReportMeta& meta) {
  std::ostringstream out;
  WriteTrace(timeline, verdict, meta, out);
  return std::move(out).str();
}

}  // namespace lockstep::reports
