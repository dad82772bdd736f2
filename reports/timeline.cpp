#include "reports/timeline.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <set>
#include <utility>
#include <variant>

#include "history/fault_kinds.h"
#include "history/notes.h"

namespace lockstep::reports {

namespace {

namespace hn = history::names;
using history::EventType;
using history::FactsPass;
using history::Name;

// A lease keeps at most this many TTL resets (a watchdog renewing every 10 s for hours).
constexpr size_t kMaxTtlPoints = 1024;
// Replies are shown, not read: a long script reply is cut.
constexpr size_t kMaxReplyChars = 200;
// Events of the lead violation kept wherever they are (the summary's diagram shows 14).
constexpr size_t kMaxPinned = 256;

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

const char* EndedBy(history::EndCause cause) {
  switch (cause) {
    case history::EndCause::kRelease: return "release";
    case history::EndCause::kForceUnlock: return "force_unlock";
    case history::EndCause::kCrash: return "crash";
    case history::EndCause::kExit: return "exit";
    case history::EndCause::kRunEnd: return "run end";
  }
  return "?";
}

Outcome OutcomeOf(history::Outcome o) {
  switch (o) {
    case history::Outcome::kOk: return Outcome::kOk;
    case history::Outcome::kFail: return Outcome::kFail;
    case history::Outcome::kInfo: return Outcome::kInfo;
    case history::Outcome::kCrashed: return Outcome::kCrashed;
    case history::Outcome::kPending: return Outcome::kPending;
  }
  return Outcome::kPending;
}

void AddSaturated(uint32_t* slot, int64_t v) {
  const int64_t sum = static_cast<int64_t>(*slot) + v;
  *slot = static_cast<uint32_t>(std::min<int64_t>(sum, std::numeric_limits<uint32_t>::max()));
}

template <class T>
void Bump(std::vector<T>* v, size_t bin) {
  if (v->empty()) return;
  if ((*v)[bin] < std::numeric_limits<T>::max()) ++(*v)[bin];
}

// Halves a binned vector's resolution: bin i becomes the merge of bins 2i and 2i+1.
template <class T, class F>
void MergePairs(std::vector<T>* v, F merge) {
  if (v->empty()) return;
  const size_t half = v->size() / 2;
  for (size_t i = 0; i < half; ++i) (*v)[i] = merge((*v)[2 * i], (*v)[2 * i + 1]);
  for (size_t i = half; i < v->size(); ++i) (*v)[i] = T{};
}

uint32_t SumU32(uint32_t a, uint32_t b) {
  return static_cast<uint32_t>(
      std::min<uint64_t>(uint64_t{a} + b, std::numeric_limits<uint32_t>::max()));
}
uint16_t SumU16(uint16_t a, uint16_t b) {
  return static_cast<uint16_t>(std::min<uint32_t>(uint32_t{a} + b, 0xffff));
}

// What a piece of detail is, and the trace events it costs (trace.cpp): an operation, a critical
// section, a lease or a message is one slice or instant; a hold is a begin and an end; a command
// is a slice and the two ends of its flow. Marks only the HTML draws cost 1.
enum class Kind : uint8_t { kOp, kHold, kSection, kLease, kExec, kLoss, kPttl, kMessage, kHolders, kClock };

// One piece of detail on its way into the timeline: complete (it arrives when it ends), with
// the lane it belongs to in the builder's own numbering (facts thread, node slot, lock, clock).
// An exec while it waits in the ring: its names as ids, made into an Exec's strings only when
// a window keeps it. Most never are (an hour of ten clients runs a million scripts): the execs'
// way through the ring (made, moved in, evicted) was 29 % of a long run's reports in a profile,
// much of it their strings.
struct ExecRef {
  Exec exec;  // Its op and peer empty until kept.
  history::Name op = history::names::kNone;
  history::Name peer = history::names::kNone;
};

struct Element {
  Kind kind = Kind::kOp;
  int slot = kNone;
  int64_t from_us = 0;
  int64_t to_us = 0;  // When it arrived
  uint32_t weight = 1;
  std::variant<Op, Span, Lease, ExecRef, LeaseLoss, TtlPoint, PubSubMessage, HolderCount, ClockSample>
      what;
};

struct Anchor {
  int64_t t_us = 0;
  size_t budget = 0;
};

}  // namespace

class TimelineBuilder::Impl {
 public:
  explicit Impl(const TimelineOptions& options) : options_(options) {
    // Budgets: the lead anchor gets 3/8; with no violation the start and the first fault both
    // may be the lead, so two such shares; the other anchors split what is left.
    const size_t windows = std::max<size_t>(3, options_.max_windows);
    lead_budget_ = options_.detail_budget * 3 / 8;
    other_budget_ = (options_.detail_budget - 2 * lead_budget_) / (windows - 2);
    ring_cap_ = lead_budget_ / 4;
    std::vector<int64_t> violations;
    for (int64_t t : options_.violation_anchors_us) {
      if (std::find(violations.begin(), violations.end(), t) != violations.end()) continue;
      if (violations.size() + 2 >= windows) {
        ++violations_without_window_;
        continue;
      }
      violations.push_back(t);
    }
    violations_ = !violations.empty();
    anchors_.push_back({0, violations_ ? other_budget_ : lead_budget_});
    for (size_t i = 0; i < violations.size(); ++i) {
      anchors_.push_back({std::max<int64_t>(0, violations[i]), i == 0 ? lead_budget_ : other_budget_});
    }
    std::stable_sort(anchors_.begin(), anchors_.end(),
                     [](const Anchor& a, const Anchor& b) { return a.t_us < b.t_us; });
    max_windows_ = windows;
    pinned_ = options_.pinned_seqs;
    std::sort(pinned_.begin(), pinned_.end());
    if (pinned_.size() > kMaxPinned) pinned_.resize(kMaxPinned);
    op_bins_.started.assign(kBins, 0);
    op_bins_.ok.assign(kBins, 0);
    op_bins_.failed.assign(kBins, 0);
    op_bins_.unknown.assign(kBins, 0);
    acquire_bins_.ok.assign(kBins, 0);
    acquire_bins_.not_ok.assign(kBins, 0);
    acquire_bins_.latency.assign(kBins * kLatencyBuckets, 0);
  }

  // --- raw events --------------------------------------------------------------------------

  void OnEvent(const FactsPass& f, const history::Event& e) {
    pass_ = &f;
    current_ = &e;
    if (!grid_set_) {
      // The run note comes first and says how long the run is meant to be: bins that fit it.
      grid_set_ = true;
      if (const auto run = history::AsRunNote(e); run && run->end_us > 0) {
        bin_us_ = std::max<int64_t>(1, (run->end_us + kBins - 1) / static_cast<int64_t>(kBins));
      }
    }
    while (next_anchor_ < anchors_.size() && anchors_[next_anchor_].t_us <= e.t_us) {
      Open(anchors_[next_anchor_++]);
    }
    Sample(e);
    switch (e.type) {
      case EventType::kNote: OnNote(e); break;
      case EventType::kExec: OnExec(e); break;
      case EventType::kLease: OnLeaseEvent(e); break;
      case EventType::kReplicated: OnReplicated(e); break;
      case EventType::kFault: OnFault(e); break;
      case EventType::kMessage: OnMessage(e); break;
      default: break;
    }
  }

  void OnEventDone() { current_ = nullptr; }

  // --- facts ----------------------------------------------------------------------------------

  void OnOpEnded(const FactsPass& f, const history::Op& op) {
    pass_ = &f;
    ThreadState& ts = Thread(op.thread);
    Op o;
    o.op = std::string(f.names().Str(op.name));
    o.lock = std::string(f.LockName(op.lock));
    o.from_us = op.invoke_us;
    o.to_us = op.end_us;
    o.invoke_seq = op.invoke_seq;
    o.end_seq = op.end_seq == history::kOpenSeq ? LastSeq() : op.end_seq;
    o.outcome = OutcomeOf(op.outcome);
    o.detail = op.invoke_detail.Render(EventType::kInvoke, op.name);
    if (o.outcome == Outcome::kCrashed) {
      o.detail += " -> client crashed";
    } else if (current_ != nullptr && current_->seq == op.end_seq) {
      if (current_->type == EventType::kInvoke) {
        o.detail += " -> superseded";  // Invoked again while this one was in flight.
      } else if (o.outcome != Outcome::kPending) {
        const std::string why = history::DetailText(*current_);
        if (!why.empty()) o.detail += " -> " + why;
      }
    }
    if (ts.exec_op == op.id) o.node = ts.exec_node;

    const size_t start = EnsureBin(op.invoke_us);
    Bump(&op_bins_.started, start);
    const size_t end = EnsureBin(o.to_us);
    LaneBins* bins = Bins(op.thread);
    if (op.name == hn::kAcquire) {
      if (bins != nullptr) Cover(&bins->wait_us, o.from_us, o.to_us);
      if (o.outcome == Outcome::kOk) {
        Bump(&acquire_bins_.ok, end);
        uint32_t& n = acquire_bins_.latency[end * kLatencyBuckets + LatencyBucket(o.to_us - o.from_us)];
        if (n < std::numeric_limits<uint32_t>::max()) ++n;
      } else if (o.outcome != Outcome::kPending) {
        Bump(&acquire_bins_.not_ok, end);
      }
    }
    switch (o.outcome) {
      case Outcome::kOk: Bump(&op_bins_.ok, end); break;
      case Outcome::kFail:
        Bump(&op_bins_.failed, end);
        if (bins != nullptr) Bump(&bins->failed, end);
        break;
      case Outcome::kInfo:
      case Outcome::kCrashed:
        Bump(&op_bins_.unknown, end);
        if (bins != nullptr) Bump(&bins->unknown, end);
        break;
      case Outcome::kPending: break;
    }
    Element el;
    el.kind = Kind::kOp;
    el.slot = op.thread;
    el.from_us = o.from_us;
    el.to_us = o.to_us;
    el.weight = 1;
    const bool pinned = Pinned(o.invoke_seq) || Pinned(o.end_seq);
    el.what = std::move(o);
    Arrive(std::move(el), pinned);
  }

  void OnSpanStarted(const FactsPass& f, const history::Span& s) {
    pass_ = &f;
    if (!s.access) ChangeHolders(s.lock, s.shared, +1, s.start_us, s.start_seq);
  }

  void OnSpanEnded(const FactsPass& f, const history::Span& s) {
    pass_ = &f;
    Span out;
    out.lock = std::string(f.LockName(s.lock));
    out.from_us = s.start_us;
    out.to_us = s.end_us;
    out.from_seq = s.start_seq;
    out.to_seq = s.end_seq == history::kOpenSeq ? LastSeq() : s.end_seq;
    out.read = s.shared;
    out.ended_by = EndedBy(s.cause);
    out.open = s.cause == history::EndCause::kRunEnd;
    Element el;
    el.slot = s.thread;
    el.from_us = out.from_us;
    el.to_us = out.to_us;
    if (s.access) {
      el.kind = Kind::kSection;
      el.weight = 1;
    } else {
      // The count stays as it was at the run's end: nobody stopped believing then.
      if (!f.finished()) ChangeHolders(s.lock, s.shared, -1, s.end_us, s.end_seq);
      if (LaneBins* bins = Bins(s.thread)) Cover(&bins->hold_us, out.from_us, out.to_us);
      el.kind = Kind::kHold;
      el.weight = 2;
    }
    const bool pinned = Pinned(out.from_seq) || Pinned(out.to_seq);
    el.what = std::move(out);
    Arrive(std::move(el), pinned);
  }

  void OnFinishing(const FactsPass& f) {
    pass_ = &f;
    while (next_anchor_ < anchors_.size()) Open(anchors_[next_anchor_++]);
  }

  void OnFinish(const FactsPass& f) {
    pass_ = &f;
    const int64_t end = f.run_end_us();
    for (size_t n = 0; n < nodes_.size(); ++n) {
      if (nodes_[n].has_open) CloseLease(static_cast<int>(n), end, LastSeq(), "run end");
    }
    for (const auto& [key, index] : open_faults_) {
      faults_[index].to_us = end;
      faults_[index].end_seq = LastSeq();
    }
    EnsureBin(end);
    for (size_t l = 0; l < locks_.size(); ++l) FillHolders(&locks_[l], BinOf(end));
    if (open_) Close(end);
    for (const Element& el : ring_) CountLeftOut(el);
    ring_.clear();
    ring_weight_ = 0;
    Assemble(f);
  }

  Timeline Take() { return std::move(result_); }

 private:
  struct ThreadState {
    std::vector<Op> ops;
    std::vector<Span> holds;
    std::vector<Span> sections;
    LaneBins bins;
    bool binned = false;
    uint64_t exec_op = std::numeric_limits<uint64_t>::max();  // The op its last command ran for
    int exec_node = kNone;                                     // ... and on which node
    int64_t last_exec_us = 0;
  };

  struct NodeState {
    Name name = hn::kNone;
    std::vector<Lease> leases;
    std::vector<LeaseLoss> losses;
    std::vector<Exec> execs;
    std::vector<TtlPoint> pttl;
    std::vector<uint32_t> owned_us;
    bool has_open = false;
    Lease open;
    int64_t pending_ttl_at_us = -1;  // An acquire set the TTL just before the lease event
    int64_t pending_ttl_us = 0;
    std::vector<RoleChange> role_changes;
    std::string role_now;  // Since the last change ("" before any: the scenario's role)
  };

  struct ClientState {
    int64_t last_message_us = 0;
    int64_t last_exec_us = 0;
  };

  struct LockState {
    int lock = kNone;  // The facts pass's id
    std::string name;
    int count = 0;
    int readers = 0;
    bool conflict = false;
    HolderBins bins;
    size_t filled = 0;  // Bins before this one carry their final value
    bool has_before = false;
    HolderCount before;  // The latest count not waiting in the ring
  };

  struct SeriesState {
    Name process = hn::kNone;
    std::vector<ClockSample> samples;  // offset_us holds the clock's base (ms) until the end
    int64_t first_base_ms = 0;
    int64_t last_base_ms = 0;
    int64_t min_base_ms = 0;
    int64_t max_base_ms = 0;
    // The bins (see Timeline's): seen always; bin_min and bin_max only once the base has
    // moved from first_base_ms, since a clock that never moves (most of them) would fill them
    // with that one value, 32 KiB a process.
    std::vector<int64_t> bin_min, bin_max;
    std::vector<uint8_t> seen;
    bool has_before = false;
    int64_t before_base_ms = 0;
  };

  // --- names and slots ---

  std::string Str(Name name) const { return std::string(pass_->names().Str(name)); }
  uint64_t LastSeq() const { return pass_->events() > 0 ? pass_->events() - 1 : 0; }

  ThreadState& Thread(int thread) {
    assert(thread >= 0);
    if (threads_.size() <= static_cast<size_t>(thread)) threads_.resize(thread + 1);
    return threads_[thread];
  }

  LaneBins* Bins(int thread) {
    ThreadState& ts = Thread(thread);
    if (!ts.binned && binned_lanes_ < kMaxBinnedLanes) {
      ts.binned = true;
      ++binned_lanes_;
      ts.bins.hold_us.assign(kBins, 0);
      ts.bins.wait_us.assign(kBins, 0);
      ts.bins.failed.assign(kBins, 0);
      ts.bins.unknown.assign(kBins, 0);
    }
    return ts.binned ? &ts.bins : nullptr;
  }

  int NodeSlot(Name name) {
    if (node_of_name_.size() <= name) node_of_name_.resize(name + 1, kNone);
    int& slot = node_of_name_[name];
    if (slot == kNone) {
      slot = static_cast<int>(nodes_.size());
      NodeState& n = nodes_.emplace_back();
      n.name = name;
      if (binned_lanes_ < kMaxBinnedLanes) {
        ++binned_lanes_;
        n.owned_us.assign(kBins, 0);
      }
    }
    return slot;
  }
  int FindNode(Name name) const {
    return name < node_of_name_.size() ? node_of_name_[name] : kNone;
  }

  ClientState& Client(Name name) {
    if (clients_.size() <= name) clients_.resize(name + 1);
    return clients_[name];
  }

  // The process's client id in the facts pass, when it is a client.
  bool IsClient(Name name) const {
    const int p = pass_->ProcessNamed(name);
    return p != kNone && pass_->processes()[p].client;
  }

  // The facts thread of process `name`'s thread `index`, or kNone.
  int FactsThread(Name name, int64_t index) const {
    const int p = pass_->ProcessNamed(name);
    if (p == kNone || index < 0) return kNone;
    const std::vector<int>& threads = pass_->processes()[p].threads;
    return static_cast<size_t>(index) < threads.size() ? threads[index] : kNone;
  }

  LockState& Lock(int lock) {
    if (lock_slot_.size() <= static_cast<size_t>(lock)) lock_slot_.resize(lock + 1, kNone);
    int& slot = lock_slot_[lock];
    if (slot == kNone) {
      slot = static_cast<int>(locks_.size());
      LockState& l = locks_.emplace_back();
      l.lock = lock;
      l.name = std::string(pass_->LockName(lock));
      if (locks_.size() <= kMaxBinnedLanes) {
        l.bins.max.assign(kBins, 0);
        l.bins.conflict.assign(kBins, 0);
      }
    }
    return locks_[slot];
  }

  bool Pinned(uint64_t seq) const { return std::binary_search(pinned_.begin(), pinned_.end(), seq); }

  // --- bins ---

  size_t BinOf(int64_t t_us) const { return static_cast<size_t>(std::max<int64_t>(0, t_us) / bin_us_); }

  // The bin of t_us, doubling the bins' width first if the run has outgrown them.
  size_t EnsureBin(int64_t t_us) {
    while (BinOf(t_us) >= kBins) Double();
    return BinOf(t_us);
  }

  void Double() {
    bin_us_ *= 2;
    auto max16 = [](uint16_t a, uint16_t b) { return std::max(a, b); };
    auto or8 = [](uint8_t a, uint8_t b) { return static_cast<uint8_t>(a | b); };
    for (ThreadState& ts : threads_) {
      MergePairs(&ts.bins.hold_us, SumU32);
      MergePairs(&ts.bins.wait_us, SumU32);
      MergePairs(&ts.bins.failed, SumU16);
      MergePairs(&ts.bins.unknown, SumU16);
    }
    for (NodeState& n : nodes_) MergePairs(&n.owned_us, SumU32);
    for (LockState& l : locks_) {
      MergePairs(&l.bins.max, max16);
      MergePairs(&l.bins.conflict, or8);
      l.filled = (l.filled + 1) / 2;
    }
    for (SeriesState& s : series_) {
      if (s.seen.empty()) continue;
      const size_t half = kBins / 2;
      const bool moved = !s.bin_min.empty();
      for (size_t i = 0; i < half; ++i) {
        const bool a = s.seen[2 * i], b = s.seen[2 * i + 1];
        s.seen[i] = a || b;
        if (!moved) continue;
        const size_t lo = a ? 2 * i : 2 * i + 1;
        s.bin_min[i] = a && b ? std::min(s.bin_min[2 * i], s.bin_min[2 * i + 1])
                       : a || b ? s.bin_min[lo]
                                : 0;
        s.bin_max[i] = a && b ? std::max(s.bin_max[2 * i], s.bin_max[2 * i + 1])
                       : a || b ? s.bin_max[lo]
                                : 0;
      }
      for (size_t i = half; i < kBins; ++i) {
        s.seen[i] = 0;
        if (moved) s.bin_min[i] = s.bin_max[i] = 0;
      }
    }
    MergePairs(&op_bins_.started, SumU32);
    MergePairs(&op_bins_.ok, SumU32);
    MergePairs(&op_bins_.failed, SumU32);
    MergePairs(&op_bins_.unknown, SumU32);
    MergePairs(&acquire_bins_.ok, SumU32);
    MergePairs(&acquire_bins_.not_ok, SumU32);
    std::vector<uint32_t>& lat = acquire_bins_.latency;
    for (size_t i = 0; i < kBins / 2; ++i) {
      for (size_t b = 0; b < kLatencyBuckets; ++b) {
        lat[i * kLatencyBuckets + b] =
            SumU32(lat[2 * i * kLatencyBuckets + b], lat[(2 * i + 1) * kLatencyBuckets + b]);
      }
    }
    std::fill(lat.begin() + (kBins / 2) * kLatencyBuckets, lat.end(), 0);
  }

  void Cover(std::vector<uint32_t>* bins, int64_t from_us, int64_t to_us) {
    if (bins->empty() || to_us <= from_us) return;
    const size_t last = EnsureBin(to_us);
    for (size_t b = BinOf(from_us); b <= last && b < kBins; ++b) {
      const int64_t lo = std::max<int64_t>(from_us, static_cast<int64_t>(b) * bin_us_);
      const int64_t hi = std::min<int64_t>(to_us, static_cast<int64_t>(b + 1) * bin_us_);
      if (hi > lo) AddSaturated(&(*bins)[b], hi - lo);
    }
  }

  // --- clocks ---

  void Sample(const history::Event& e) {
    if (e.local_ms == 0 || e.process == hn::kNone) return;
    // Histories record local clocks in ms, so the offset is known to the ms: an unskewed clock
    // reads exactly floor((start + t) / 1 ms). The start may be known only at the end, so
    // the series keeps local minus true time and subtracts the start then.
    const int64_t base = e.local_ms - FloorDiv(e.t_us, 1000);
    if (series_of_name_.size() <= e.process) series_of_name_.resize(e.process + 1, kNone);
    int& slot = series_of_name_[e.process];
    if (slot == kNone) {
      slot = static_cast<int>(series_.size());
      SeriesState& s = series_.emplace_back();
      s.process = e.process;
      s.first_base_ms = s.min_base_ms = s.max_base_ms = base;
      s.last_base_ms = base + 1;  // So the first reading is a change
      if (series_.size() <= kMaxBinnedLanes) s.seen.assign(kBins, 0);
    }
    const size_t bin = EnsureBin(e.t_us);
    SeriesState& s = series_[slot];
    if (!s.seen.empty()) {
      if (s.bin_min.empty() && base != s.first_base_ms) {
        // The clock moves for the first time: every bin seen so far read the first base.
        s.bin_min.assign(kBins, 0);
        s.bin_max.assign(kBins, 0);
        for (size_t b = 0; b < kBins; ++b) {
          if (s.seen[b]) s.bin_min[b] = s.bin_max[b] = s.first_base_ms;
        }
      }
      const bool moved = !s.bin_min.empty();
      if (!s.seen[bin]) {
        s.seen[bin] = 1;
        if (moved) s.bin_min[bin] = s.bin_max[bin] = base;
      } else if (moved) {
        s.bin_min[bin] = std::min(s.bin_min[bin], base);
        s.bin_max[bin] = std::max(s.bin_max[bin], base);
      }
    }
    s.min_base_ms = std::min(s.min_base_ms, base);
    s.max_base_ms = std::max(s.max_base_ms, base);
    if (base == s.last_base_ms) return;
    s.last_base_ms = base;
    Element el;
    el.kind = Kind::kClock;
    el.slot = slot;
    el.from_us = el.to_us = e.t_us;
    el.what = ClockSample{e.t_us, base};
    Arrive(std::move(el), false);
  }

  // --- notes, commands, leases, faults, messages ---

  void OnNote(const history::Event& e) {
    if (const auto client = history::AsClientNote(e)) {
      if (client->uuid.empty() || e.process == hn::kNone) return;
      const std::string uuid(client->uuid);
      uuid_client_[uuid] = e.process;
      first_uuid_.emplace(e.process, uuid);
    } else if (e.op == hn::kClockBase) {
      if (e.process != hn::kNone && e.has_value) clock_base_[e.process] = e.value;
    } else if (e.op == hn::kRediscover) {
      Fault f;
      f.kind = "rediscover";
      f.process = Str(e.process);
      const std::string text = history::DetailText(e);
      f.label = text.empty() ? "clients rediscover the master" : text;
      f.from_us = f.to_us = e.t_us;
      f.instant = true;
      f.seq = f.end_seq = e.seq;
      if (KeepFault(std::move(f))) rediscovers_.push_back(faults_.size() - 1);
    }
  }

  // The thread a command belongs to: the event's own thread, else the only thread of that
  // client with an operation on this lock in flight (as the checkers decide it).
  int ExecThread(const history::Event& e) const {
    if (e.thread >= 0) return FactsThread(e.peer, e.thread);
    const int p = pass_->ProcessNamed(e.peer);
    const std::string_view lock = pass_->names().Str(e.lock);
    int found = kNone;
    int candidates = 0;
    for (int t : pass_->processes()[p].threads) {
      if (t == kNone) continue;
      const history::Op* op = pass_->OpOf(t);
      if (op == nullptr || pass_->LockName(op->lock) != lock) continue;
      found = t;
      ++candidates;
    }
    return candidates == 1 ? found : kNone;
  }

  void OnExec(const history::Event& e) {
    const int node = NodeSlot(e.process);
    ExecRef ref;
    ref.op = e.op;
    ref.peer = e.peer;
    Exec& x = ref.exec;
    x.t_us = e.t_us;
    x.seq = e.seq;
    std::string scratch;
    const std::string_view reply = history::ReplyText(e, &scratch);
    x.reply = reply.size() <= kMaxReplyChars
                  ? std::string(reply)
                  : std::string(reply.substr(0, kMaxReplyChars - 3)) + "...";
    const bool nil = history::IsNilReply(reply);
    const std::optional<int64_t> integer = history::IntegerReply(reply);
    x.kind = e.op == hn::kAcquire ? (nil ? ExecKind::kAcquired : ExecKind::kRefused)
             : pass_->names().Str(e.op) == "unlock"       ? ExecKind::kUnlock
             : e.op == hn::kRenew ? (integer == 1 ? ExecKind::kRenewed : ExecKind::kRefused)
                                  : ExecKind::kOther;
    const history::Op* op = nullptr;
    if (e.peer != hn::kNone && IsClient(e.peer)) {
      ClientState& client = Client(e.peer);
      x.thread = ExecThread(e);
      int64_t cause = std::max<int64_t>(0, client.last_message_us);
      op = x.thread != kNone ? pass_->OpOf(x.thread) : nullptr;
      if (op != nullptr) {
        ThreadState& ts = Thread(x.thread);
        x.in_op = true;
        x.op_from_us = op->invoke_us;
        ts.exec_op = op->id;
        ts.exec_node = node;
        cause = std::max({cause, op->invoke_us, ts.last_exec_us});
      } else {
        cause = std::max(cause, client.last_exec_us);
      }
      x.cause_us = std::min(cause, e.t_us);
      if (x.thread != kNone) Thread(x.thread).last_exec_us = e.t_us;
      client.last_exec_us = e.t_us;
    } else {
      x.cause_us = e.t_us;
    }

    // The key's TTL: an acquire that returns nil set it (to the lease it asked for), a renew
    // that returns 1 reset it to the watchdog's lease, a refused acquire reports the PTTL.
    NodeState& n = nodes_[node];
    if (e.op == hn::kAcquire && nil) {
      const int64_t ttl =
          op != nullptr && op->lease_us > 0 ? op->lease_us : pass_->lease_default_us();
      if (n.has_open) {
        AddTtl(&n.open, {e.t_us, ttl, true});
      } else {
        n.pending_ttl_at_us = e.t_us;
        n.pending_ttl_us = ttl;
      }
    } else if (e.op == hn::kRenew && integer == 1 && n.has_open) {
      AddTtl(&n.open, {e.t_us, pass_->lease_default_us(), true});
    } else if (e.op == hn::kAcquire && integer && *integer >= 0) {
      const TtlPoint seen{e.t_us, *integer * 1000, false};
      // Only the first observation matters to the drawing (before any reset).
      if (n.has_open && n.open.ttl.empty()) n.open.ttl.push_back(seen);
      Element el;
      el.kind = Kind::kPttl;
      el.slot = node;
      el.from_us = el.to_us = e.t_us;
      el.what = seen;
      Arrive(std::move(el), false);
    }
    Element el;
    el.kind = Kind::kExec;
    el.slot = node;
    el.from_us = el.to_us = e.t_us;
    el.weight = 3;
    el.what = std::move(ref);
    Arrive(std::move(el), false);
  }

  static void AddTtl(Lease* l, const TtlPoint& p) {
    if (l->ttl.size() < kMaxTtlPoints) l->ttl.push_back(p);
  }

  // "uuid:2" -> "c1.t1" when the uuid is a known client's, an announced holder value -> its
  // thread, "uuid" -> "c1"; otherwise the field itself.
  std::string OwnerName(std::string_view field, int* thread) const {
    if (const auto owner = history::AsOwnerField(field)) {
      const auto it = uuid_client_.find(owner->uuid);
      if (it != uuid_client_.end() && owner->thread_number && *owner->thread_number >= 1) {
        const int64_t index = *owner->thread_number - 1;
        if (*thread == kNone) *thread = FactsThread(it->second, index);
        return Str(it->second) + ".t" + std::to_string(index) + std::string(owner->suffix);
      }
    }
    // A value a client program announced for its thread's acquisitions.
    if (const int t = pass_->OwnerThread(field); t != kNone) {
      if (*thread == kNone) *thread = t;
      return pass_->ThreadName(t);
    }
    // A client that writes its process's uuid for all its threads (a client program that
    // declares owner = "process"): the process's name.
    if (field.find(':') == std::string_view::npos) {
      const auto it = uuid_client_.find(field);
      if (it != uuid_client_.end()) return Str(it->second);
    }
    return std::string(field);
  }

  void OnLeaseEvent(const history::Event& e) {
    const int node = NodeSlot(e.process);
    if (nodes_[node].has_open) CloseLease(node, e.t_us, e.seq, Str(e.op));
    std::string text;
    std::string_view list;
    if (const auto* owners = std::get_if<history::Owners>(&e.detail)) {
      list = owners->list;
    } else {
      text = history::DetailText(e);
      list = text;
    }
    int owner_thread = kNone;
    std::string owners = OwnersShown(list, &owner_thread);
    if (e.op == hn::kExpired || e.op == hn::kLost) {
      Element el;
      el.kind = Kind::kLoss;
      el.slot = node;
      el.from_us = el.to_us = e.t_us;
      el.what = LeaseLoss{Str(e.lock), Str(e.op), owners, e.t_us, e.seq};
      Arrive(std::move(el), false);
    }
    if (e.op != hn::kAcquired && e.op != hn::kOwners) return;
    NodeState& n = nodes_[node];
    Lease l;
    l.lock = Str(e.lock);
    l.from_us = l.to_us = e.t_us;
    l.from_seq = l.to_seq = e.seq;
    l.owners = std::move(owners);
    l.owner_thread = owner_thread;
    if (n.pending_ttl_at_us == e.t_us) l.ttl.push_back({e.t_us, n.pending_ttl_us, true});
    n.pending_ttl_at_us = -1;
    n.open = std::move(l);
    n.has_open = true;
  }

  // A key's owner fields as displayed ("c2.t0, c3.t0"), and the first owner's thread. Owner
  // fields are "<uuid>:<thread+1>[:suffix]"; a lock hash may hold other fields too (a
  // read-write lock's "mode"), which are shown only when nothing looks like an owner.
  std::string OwnersShown(std::string_view list, int* owner_thread) const {
    bool any_owner = false;
    auto is_owner = [&](std::string_view field) {
      return history::AsOwnerField(field).has_value() || pass_->OwnerThread(field) != kNone;
    };
    history::ForEachOwnerField(list, [&](std::string_view field) {
      any_owner = any_owner || is_owner(field);
    });
    std::string owners;
    history::ForEachOwnerField(list, [&](std::string_view field) {
      if (any_owner && !is_owner(field)) return;
      if (!owners.empty()) owners += ", ";
      owners += OwnerName(field, owner_thread);
    });
    return owners;
  }

  // A replica's copy of the key: each replicated event ends the copy before it and, with
  // owners, starts the next.
  void OnReplicated(const history::Event& e) {
    const int node = NodeSlot(e.process);
    NodeState& n = nodes_[node];
    NoteRole(n, "replica of " + Str(e.peer), e.t_us);
    if (n.has_open) CloseLease(node, e.t_us, e.seq, Str(e.op));
    const auto* owners = std::get_if<history::Owners>(&e.detail);
    if (owners == nullptr || owners->list.empty()) return;
    Lease l;
    l.lock = Str(e.lock);
    l.from_us = l.to_us = e.t_us;
    l.from_seq = l.to_seq = e.seq;
    l.owner_thread = kNone;
    l.owners = OwnersShown(owners->list, &l.owner_thread);
    l.replica = true;
    l.lag_us = e.has_value ? e.value : 0;
    n.open = std::move(l);
    n.has_open = true;
  }

  // Records a role change when `role` is not the node's current one (at first: the scenario's).
  void NoteRole(NodeState& n, const std::string& role, int64_t t_us) {
    std::string current = n.role_now;
    if (current.empty()) {
      const std::string name = Str(n.name);
      for (size_t i = 0; i < options_.node_names.size() && i < options_.node_roles.size(); ++i) {
        if (options_.node_names[i] == name) current = options_.node_roles[i];
      }
    }
    if (role == current) return;
    n.role_now = role;
    if (n.role_changes.size() < kFaultsKept) n.role_changes.push_back({t_us, role});
  }

  void CloseLease(int node, int64_t t_us, uint64_t seq, const std::string& why) {
    NodeState& n = nodes_[node];
    Lease l = std::move(n.open);
    n.open = Lease{};
    n.has_open = false;
    l.to_us = t_us;
    l.to_seq = seq;
    l.ended_by = why;
    Cover(&n.owned_us, l.from_us, l.to_us);
    Element el;
    el.kind = Kind::kLease;
    el.slot = node;
    el.from_us = l.from_us;
    el.to_us = t_us;
    el.weight = why == "expired" || why == "lost" ? 2 : 1;  // and an instant for the loss
    const bool pinned = Pinned(l.from_seq) || Pinned(l.to_seq);
    el.what = std::move(l);
    Arrive(std::move(el), pinned);
  }

  bool KeepFault(Fault f) {
    ++fault_count_;
    if (faults_.size() >= kFaultsKept) return false;
    faults_.push_back(std::move(f));
    return true;
  }

  void OnFault(const history::Event& e) {
    // What the kinds' table (history/fault_kinds.h) says of the op: the start of a kind with a
    // duration (a band), the end of one, or an instant. Kinds keyed by text (partitions and
    // network windows, recorded by "sim") are told apart by their text, the others by process.
    const history::FaultKindInfo* started = history::FaultStartedBy(e.op);
    const history::FaultKindInfo* ended = started == nullptr ? history::FaultEndedBy(e.op) : nullptr;
    const std::string process = Str(e.process);
    const std::string text = history::DetailText(e);
    if (e.process != hn::kNone && e.process != hn::kSim && e.process != hn::kSentinel &&
        std::find(fault_processes_.begin(), fault_processes_.end(), e.process) ==
            fault_processes_.end()) {
      fault_processes_.push_back(e.process);
    }
    if (ended != nullptr) {
      const std::string kind(ended->name);
      const std::string key = ended->keyed_by_text ? text : process;
      auto it = open_faults_.find({kind, key});
      if (it == open_faults_.end() && ended->targets == history::FaultTargets::kPartitionSides) {
        // A heal that names no open partition ends the first one still open.
        it = std::find_if(open_faults_.begin(), open_faults_.end(),
                          [&kind](const auto& open) { return open.first.first == kind; });
      }
      if (it != open_faults_.end()) {
        Fault& f = faults_[it->second];
        f.to_us = e.t_us;
        f.end_seq = e.seq;
        f.open = false;
        open_faults_.erase(it);
      }
      return;
    }
    // A window around the fault, while there are slots for one, before anything the fault
    // ends arrives. With no violation, the first fault is where the reports lead (text.h:
    // AnchorUs), so it gets a lead's budget.
    if (opened_ < max_windows_) {
      Open({e.t_us, !violations_ && !fault_seen_ ? lead_budget_ : other_budget_});
    }
    fault_seen_ = true;
    const bool band = started != nullptr && started->end_op != hn::kNone;
    Fault f;
    f.kind = Str(e.op);
    f.process = process;
    f.from_us = f.to_us = e.t_us;
    f.seq = f.end_seq = e.seq;
    f.instant = !band;
    f.open = band;
    const bool keyed_by_text = started != nullptr && started->keyed_by_text;
    if (started != nullptr && started->targets == history::FaultTargets::kPartitionSides) {
      f.label = f.kind + " " + text;
      if (const auto* p = std::get_if<history::PartitionFault>(&e.detail)) {
        history::ForEachPartitionName(*p, [&](std::string_view name) { f.affects.emplace_back(name); });
      }
    } else if (const auto* n = std::get_if<history::NetworkFault>(&e.detail);
               n != nullptr && keyed_by_text) {
      // "loss rate=0.5 targets=c1 peers=n1", over the lanes of the targets and the peers.
      f.label = f.kind + " " + text;
      history::ForEachNetworkFaultName(
          *n, [&](std::string_view name) { f.affects.emplace_back(name); });
    } else if (e.op == hn::kFailover) {
      f.label = "failover (" + text + ")";
      // Every node's role may change: the band covers the node lanes (affects empty).
    } else {
      f.label = f.kind + " " + process;
      if (!text.empty()) f.label += " (" + text + ")";
      f.affects = {process};
    }
    const std::string kind = f.kind;
    if (KeepFault(std::move(f)) && band) {
      open_faults_[{kind, keyed_by_text ? text : process}] = faults_.size() - 1;
    }
    if (e.op == hn::kCrash) {
      if (const int node = FindNode(e.process); node != kNone && nodes_[node].has_open) {
        CloseLease(node, e.t_us, e.seq, "crash");
      }
    }
    if (e.op == hn::kPromote) {
      NoteRole(nodes_[NodeSlot(e.process)], "master", e.t_us);
      // A promoted replica's copy is now the master's key: the same owners, from here on a
      // lease (its lease events take over).
      if (const int node = FindNode(e.process);
          node != kNone && nodes_[node].has_open && nodes_[node].open.replica) {
        Lease l = nodes_[node].open;
        CloseLease(node, e.t_us, e.seq, "promoted");
        l.replica = false;
        l.lag_us = 0;
        l.from_us = l.to_us = e.t_us;
        l.from_seq = l.to_seq = e.seq;
        nodes_[node].open = std::move(l);
        nodes_[node].has_open = true;
      }
    }
  }

  void OnMessage(const history::Event& e) {
    if (e.process == hn::kNone || !IsClient(e.process)) return;
    Client(e.process).last_message_us = e.t_us;
    if (channel_of_name_.size() <= e.op) channel_of_name_.resize(e.op + 1, kNone);
    int& channel = channel_of_name_[e.op];
    if (channel == kNone) {
      channel = static_cast<int>(channels_.size());
      channels_.push_back(e.op);
    }
    Element el;
    el.kind = Kind::kMessage;
    el.from_us = el.to_us = e.t_us;
    el.what = PubSubMessage{e.t_us, e.seq, static_cast<int>(e.process), channel,
                            e.peer == hn::kNone ? kNone : NodeSlot(e.peer)};
    Arrive(std::move(el), false);
  }

  // --- believed holders ---

  // Whether the believed holders break the lock's promise: more than its permits for a
  // semaphore; a writer with anyone else for a read-write lock (readers may share); otherwise
  // two of anything.
  bool Conflict(int count, int readers) const {
    if (pass_->protocol().semaphore()) return count > pass_->protocol().permits;
    const int writers = count - readers;
    return writers >= 2 || (writers >= 1 && readers >= 1);
  }

  // Bins up to `bin` (inclusive) have held the current count: it is at least their maximum.
  void FillHolders(LockState* l, size_t bin) {
    if (l->bins.max.empty()) return;
    const uint16_t count = static_cast<uint16_t>(std::min(l->count, 0xffff));
    for (size_t b = l->filled; b <= bin && b < kBins; ++b) {
      l->bins.max[b] = std::max(l->bins.max[b], count);
      if (l->conflict) l->bins.conflict[b] = 1;
    }
    l->filled = std::max(l->filled, bin + 1);
  }

  void ChangeHolders(int lock, bool read, int delta, int64_t t_us, uint64_t seq) {
    LockState& l = Lock(lock);
    const size_t bin = EnsureBin(t_us);
    FillHolders(&l, bin);
    l.count += delta;
    if (read) l.readers += delta;
    assert(l.count >= 0 && l.readers >= 0 && l.readers <= l.count);
    l.conflict = Conflict(l.count, l.readers);
    if (!l.bins.max.empty()) {
      l.bins.max[bin] = std::max<uint16_t>(l.bins.max[bin], static_cast<uint16_t>(std::min(l.count, 0xffff)));
      if (l.conflict) l.bins.conflict[bin] = 1;
    }
    max_holders_ = std::max(max_holders_, l.count);
    Element el;
    el.kind = Kind::kHolders;
    el.slot = lock;
    el.from_us = el.to_us = t_us;
    el.what = HolderCount{l.name, t_us, seq, l.count, l.readers, l.conflict, false};
    Arrive(std::move(el), false);
  }

  // --- detail windows ---------------------------------------------------------------------

  // A piece of detail is complete: keep it if a window is open or it overlaps a closed one (or
  // the lead violation names it), else it waits in the ring in case a window opens soon.
  void Arrive(Element el, bool pinned) {
    if (pinned) {
      LeftRing(el);
      Keep(std::move(el));
      return;
    }
    if (open_) {
      const size_t weight = el.weight;
      const int64_t now = el.to_us;
      LeftRing(el);
      Keep(std::move(el));
      remaining_ = remaining_ > weight ? remaining_ - weight : 0;
      if (remaining_ == 0) Close(now);
      return;
    }
    if (last_close_us_ >= 0 && el.from_us <= last_close_us_) {
      LeftRing(el);
      Keep(std::move(el));
      return;
    }
    ring_weight_ += el.weight;
    ring_.push_back(std::move(el));
    while (ring_weight_ > ring_cap_ && !ring_.empty()) Evict();
  }

  void Evict() {
    Element& el = ring_.front();
    ring_weight_ -= el.weight;
    last_evicted_us_ = el.to_us;
    evicted_since_close_ = true;
    CountLeftOut(el);
    LeftRing(el);
    ring_.pop_front();
  }

  void CountLeftOut(const Element& el) {
    ++summarised_;
    switch (el.kind) {
      case Kind::kOp: ++left_out_.ops; break;
      case Kind::kHold: ++left_out_.holds; break;
      case Kind::kSection: ++left_out_.sections; break;
      case Kind::kLease: ++left_out_.leases; break;
      case Kind::kExec: ++left_out_.commands; break;
      case Kind::kLoss: ++left_out_.losses; break;
      case Kind::kPttl: ++left_out_.pttl; break;
      case Kind::kMessage: ++left_out_.messages; break;
      case Kind::kHolders: ++left_out_.holder_changes; break;
      case Kind::kClock: ++left_out_.clock_readings; break;
    }
  }

  // The latest count or clock reading outside the ring is what a window opening later carries
  // in at its start.
  void LeftRing(const Element& el) {
    if (el.kind == Kind::kHolders) {
      LockState& l = locks_[lock_slot_[el.slot]];
      l.has_before = true;
      l.before = std::get<HolderCount>(el.what);
    } else if (el.kind == Kind::kClock) {
      SeriesState& s = series_[el.slot];
      s.has_before = true;
      s.before_base_ms = std::get<ClockSample>(el.what).offset_us;
    }
  }

  void Open(const Anchor& anchor) {
    ++opened_;
    // Nothing comes before the start of the run: its window is all "after".
    const size_t lead = anchor.t_us == 0 ? 0 : anchor.budget / 4;
    const size_t after = anchor.budget - lead;
    if (open_) {
      remaining_ += after;  // Overlapping windows merge.
      open_budget_ += after;
      return;
    }
    while (ring_weight_ > lead && !ring_.empty()) Evict();
    int64_t from = 0;
    open_budget_ = anchor.budget;
    if (!evicted_since_close_) {
      // Nothing left out since the last window closed: this one continues it.
      if (!windows_.empty()) {
        from = windows_.back().from_us;
        open_budget_ += windows_.back().budget;
        windows_.pop_back();
      }
    } else {
      // Everything that ended after the last element left out is here.
      from = std::min(last_evicted_us_ + 1, anchor.t_us);
      Carry(from);
    }
    while (!ring_.empty()) {
      LeftRing(ring_.front());
      Keep(std::move(ring_.front()));
      ring_.pop_front();
    }
    ring_weight_ = 0;
    evicted_since_close_ = false;
    open_ = true;
    remaining_ = after;
    open_from_us_ = from;
    if (remaining_ == 0) Close(anchor.t_us);
  }

  void Close(int64_t now_us) {
    windows_.push_back(
        {open_from_us_, std::max(now_us, open_from_us_), open_budget_, remaining_ == 0});
    open_ = false;
    last_close_us_ = windows_.back().to_us;
    evicted_since_close_ = false;
  }

  // What a window starting at from_us carries in: each lock's holder count and each clock's
  // offset at that moment.
  void Carry(int64_t from_us) {
    for (LockState& l : locks_) {
      if (!l.has_before) continue;
      HolderCount h = l.before;
      h.t_us = from_us;
      h.carried = true;
      holders_.push_back(std::move(h));
    }
    for (SeriesState& s : series_) {
      if (s.has_before) s.samples.push_back({from_us, s.before_base_ms});
    }
  }

  void Keep(Element el) {
    switch (el.kind) {
      case Kind::kOp: Thread(el.slot).ops.push_back(std::move(std::get<Op>(el.what))); break;
      case Kind::kHold: Thread(el.slot).holds.push_back(std::move(std::get<Span>(el.what))); break;
      case Kind::kSection:
        Thread(el.slot).sections.push_back(std::move(std::get<Span>(el.what)));
        break;
      case Kind::kLease: nodes_[el.slot].leases.push_back(std::move(std::get<Lease>(el.what))); break;
      case Kind::kExec: {
        ExecRef& r = std::get<ExecRef>(el.what);
        r.exec.op = Str(r.op);
        r.exec.peer = Str(r.peer);
        nodes_[el.slot].execs.push_back(std::move(r.exec));
        break;
      }
      case Kind::kLoss:
        nodes_[el.slot].losses.push_back(std::move(std::get<LeaseLoss>(el.what)));
        break;
      case Kind::kPttl: nodes_[el.slot].pttl.push_back(std::get<TtlPoint>(el.what)); break;
      case Kind::kMessage: messages_.push_back(std::get<PubSubMessage>(el.what)); break;
      case Kind::kHolders: holders_.push_back(std::move(std::get<HolderCount>(el.what))); break;
      case Kind::kClock: series_[el.slot].samples.push_back(std::get<ClockSample>(el.what)); break;
    }
  }

  // --- the end: lanes in their final order ------------------------------------------------

  void Assemble(const FactsPass& f) {
    Timeline& tl = result_;
    tl.end_us = f.run_end_us();
    tl.event_count = f.events();
    tl.protocol_kind = f.protocol().kind;
    tl.permits = static_cast<int>(f.protocol().permits);
    tl.max_holders = max_holders_;

    // Clients: the scenario's order first, then the rest in natural order.
    for (const auto& [name, count] : options_.client_threads) tl.clients.push_back(name);
    std::set<std::string, decltype(&NaturalLess)> clients(&NaturalLess);
    for (const history::Process& p : f.processes()) {
      if (p.client) clients.insert(std::string(f.names().Str(p.name)));
    }
    for (const std::string& name : clients) {
      if (std::find(tl.clients.begin(), tl.clients.end(), name) == tl.clients.end()) {
        tl.clients.push_back(name);
      }
    }
    tl.client_uuids.resize(tl.clients.size());
    for (size_t c = 0; c < tl.clients.size(); ++c) {
      const Name name = f.names().Find(tl.clients[c]);
      if (const auto it = first_uuid_.find(name); name != hn::kNone && it != first_uuid_.end()) {
        tl.client_uuids[c] = it->second;
      }
    }

    // Threads: by client, then index; the scenario's idle threads too.
    std::vector<int> lane_of_thread(f.threads().size(), kNone);
    for (size_t c = 0; c < tl.clients.size(); ++c) {
      std::set<int> indices;
      for (const auto& [name, count] : options_.client_threads) {
        if (name != tl.clients[c]) continue;
        for (int i = 0; i < count; ++i) indices.insert(i);
      }
      const Name name = f.names().Find(tl.clients[c]);
      const int p = name == hn::kNone ? kNone : f.ProcessNamed(name);
      if (p != kNone) {
        const std::vector<int>& threads = f.processes()[p].threads;
        for (size_t i = 0; i < threads.size(); ++i) {
          if (threads[i] != kNone) indices.insert(static_cast<int>(i));
        }
      }
      for (int i : indices) {
        ThreadLane lane;
        lane.process = tl.clients[c];
        lane.thread = i;
        lane.client = static_cast<int>(c);
        lane.name = lane.process + ".t" + std::to_string(i);
        if (p != kNone && static_cast<size_t>(i) < f.processes()[p].threads.size()) {
          const int id = f.processes()[p].threads[i];
          if (id != kNone) lane_of_thread[id] = static_cast<int>(tl.threads.size());
        }
        tl.threads.push_back(std::move(lane));
      }
    }

    // Nodes: the scenario's first, then every process that ran commands, held keys, sent
    // messages or had faults, in natural order.
    for (size_t i = 0; i < options_.node_names.size(); ++i) {
      NodeLane n;
      n.name = options_.node_names[i];
      if (i < options_.node_roles.size()) n.role = options_.node_roles[i];
      tl.nodes.push_back(std::move(n));
    }
    std::set<std::string, decltype(&NaturalLess)> nodes(&NaturalLess);
    for (const NodeState& n : nodes_) nodes.insert(Str(n.name));
    for (Name name : fault_processes_) nodes.insert(Str(name));
    for (const std::string& name : nodes) {
      if (tl.ClientIndex(name) != kNone || tl.NodeIndex(name) != kNone) continue;
      NodeLane n;
      n.name = name;
      tl.nodes.push_back(std::move(n));
    }
    std::vector<int> lane_of_node(nodes_.size(), kNone);
    for (size_t s = 0; s < nodes_.size(); ++s) {
      const std::string name = Str(nodes_[s].name);
      if (tl.ClientIndex(name) == kNone) lane_of_node[s] = tl.NodeIndex(name);
    }
    auto thread_lane = [&](int id) { return id == kNone ? kNone : lane_of_thread[id]; };
    auto node_lane = [&](int slot) { return slot == kNone ? kNone : lane_of_node[slot]; };

    for (size_t id = 0; id < threads_.size() && id < lane_of_thread.size(); ++id) {
      const int lane = lane_of_thread[id];
      if (lane == kNone) continue;
      ThreadState& ts = threads_[id];
      ThreadLane& l = tl.threads[lane];
      l.ops = std::move(ts.ops);
      l.holds = std::move(ts.holds);
      l.sections = std::move(ts.sections);
      l.bins = std::move(ts.bins);
      for (Op& op : l.ops) op.node = node_lane(op.node);
      std::sort(l.ops.begin(), l.ops.end(),
                [](const Op& a, const Op& b) { return a.invoke_seq < b.invoke_seq; });
      auto by_start = [](const Span& a, const Span& b) { return a.from_seq < b.from_seq; };
      std::sort(l.holds.begin(), l.holds.end(), by_start);
      std::sort(l.sections.begin(), l.sections.end(), by_start);
    }
    for (size_t s = 0; s < nodes_.size(); ++s) {
      const int lane = lane_of_node[s];
      if (lane == kNone) continue;
      NodeState& ns = nodes_[s];
      NodeLane& n = tl.nodes[lane];
      n.leases = std::move(ns.leases);
      n.losses = std::move(ns.losses);
      n.execs = std::move(ns.execs);
      n.pttl = std::move(ns.pttl);
      n.owned_us = std::move(ns.owned_us);
      n.role_changes = std::move(ns.role_changes);
      for (Lease& l : n.leases) l.owner_thread = thread_lane(l.owner_thread);
      for (Exec& x : n.execs) x.thread = thread_lane(x.thread);
      std::sort(n.leases.begin(), n.leases.end(),
                [](const Lease& a, const Lease& b) { return a.from_seq < b.from_seq; });
      std::sort(n.execs.begin(), n.execs.end(),
                [](const Exec& a, const Exec& b) { return a.seq < b.seq; });
      std::sort(n.losses.begin(), n.losses.end(),
                [](const LeaseLoss& a, const LeaseLoss& b) { return a.seq < b.seq; });
      std::stable_sort(n.pttl.begin(), n.pttl.end(),
                       [](const TtlPoint& a, const TtlPoint& b) { return a.t_us < b.t_us; });
    }

    for (Name channel : channels_) tl.channels.push_back(Str(channel));
    for (PubSubMessage m : messages_) {
      m.client = tl.ClientIndex(Str(static_cast<Name>(m.client)));
      if (m.client == kNone) continue;
      m.node = node_lane(m.node);
      tl.messages.push_back(m);
    }
    std::sort(tl.messages.begin(), tl.messages.end(),
              [](const PubSubMessage& a, const PubSubMessage& b) { return a.seq < b.seq; });

    tl.holders = std::move(holders_);
    for (LockState& l : locks_) {
      tl.locks.push_back(l.name);
      tl.holder_bins.push_back(std::move(l.bins));
    }

    tl.faults = std::move(faults_);
    tl.fault_count = fault_count_;
    for (size_t i : rediscovers_) tl.faults[i].affects = tl.clients;

    EstimateStart(&tl);
    Clocks(&tl);

    tl.whole_run = summarised_ == 0;
    tl.summarised = summarised_;
    tl.left_out = left_out_;
    assert(left_out_.Total() == summarised_);
    tl.detail_budget = options_.detail_budget;
    tl.max_windows = max_windows_;
    tl.violations_without_window = violations_without_window_;
    tl.windows = tl.whole_run ? std::vector<DetailWindow>{{0, tl.end_us}} : std::move(windows_);
    tl.bin_us = bin_us_;
    tl.op_bins = std::move(op_bins_);
    tl.acquire_bins = std::move(acquire_bins_);
  }

  // True time 0 as Unix ms: from the scenario, else the clock reading most processes agree on
  // at their first event (most clocks in a scenario are not skewed).
  void EstimateStart(Timeline* tl) const {
    if (options_.start_unix_ms) {
      tl->start_unix_ms = *options_.start_unix_ms;
      tl->clock_baseline_note = clock_base_.empty()
                                    ? "offsets from the scenario's start_unix_ms"
                                    : "offsets from the scenario's start_unix_ms; the live "
                                      "servers' from the machine's clock at the run's start";
      return;
    }
    std::map<int64_t, int> votes;
    for (const SeriesState& s : series_) {
      if (!clock_base_.count(s.process)) ++votes[s.first_base_ms];
    }
    int best = 0;
    for (const auto& [base, n] : votes) {
      if (n > best) {
        best = n;
        tl->start_unix_ms = base;
      }
    }
    tl->clock_baseline_note =
        "estimated: the history does not record the run's start, so offsets are relative to "
        "the clock reading most processes agree on";
  }

  // Clocks: clients first, then nodes, then anything else, each in natural order.
  void Clocks(Timeline* tl) {
    std::vector<size_t> order(series_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::vector<std::string> names;
    for (const SeriesState& s : series_) names.push_back(Str(s.process));
    auto rank = [&](const std::string& p) {
      if (const int c = tl->ClientIndex(p); c != kNone) return c;
      if (const int n = tl->NodeIndex(p); n != kNone) return 100000 + n;
      return 200000;
    };
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const int ra = rank(names[a]), rb = rank(names[b]);
      if (ra != rb) return ra < rb;
      return NaturalLess(names[a], names[b]);
    });
    for (size_t i : order) {
      SeriesState& s = series_[i];
      // A process whose history names its own base (a live server's real clock) is measured
      // from that: its offset is then the one the scenario asked for, plus what really drifted.
      const auto own = clock_base_.find(s.process);
      const int64_t start = own != clock_base_.end() ? own->second : tl->start_unix_ms;
      ClockSeries c;
      c.process = names[i];
      c.samples = std::move(s.samples);
      for (ClockSample& p : c.samples) p.offset_us = (p.offset_us - start) * 1000;
      c.min_offset_us = (s.min_base_ms - start) * 1000;
      c.max_offset_us = (s.max_base_ms - start) * 1000;
      if (!s.seen.empty()) {
        if (!s.bin_min.empty()) {
          c.bin_min_us.resize(kBins);
          c.bin_max_us.resize(kBins);
          for (size_t b = 0; b < kBins; ++b) {
            c.bin_min_us[b] = s.seen[b] ? (s.bin_min[b] - start) * 1000 : 0;
            c.bin_max_us[b] = s.seen[b] ? (s.bin_max[b] - start) * 1000 : 0;
          }
        }
        c.seen = std::move(s.seen);
      }
      s.bin_min = {};
      s.bin_max = {};
      tl->clocks.push_back(std::move(c));
    }
  }

  const TimelineOptions options_;
  const FactsPass* pass_ = nullptr;
  const history::Event* current_ = nullptr;  // The event being handled, during its callbacks

  // Windows.
  std::vector<Anchor> anchors_;  // Known before the pass, by time
  size_t next_anchor_ = 0;
  size_t opened_ = 0;
  size_t max_windows_ = 16;
  size_t lead_budget_ = 0;
  size_t other_budget_ = 0;
  bool violations_ = false;
  bool fault_seen_ = false;
  std::vector<uint64_t> pinned_;
  std::deque<Element> ring_;
  size_t ring_weight_ = 0;
  size_t ring_cap_ = 0;
  bool open_ = false;
  size_t remaining_ = 0;
  int64_t open_from_us_ = 0;
  std::vector<DetailWindow> windows_;
  int64_t last_close_us_ = -1;
  bool evicted_since_close_ = false;
  int64_t last_evicted_us_ = -1;
  size_t summarised_ = 0;
  LeftOut left_out_;
  size_t open_budget_ = 0;  // The open window's share of the budget
  size_t violations_without_window_ = 0;

  // Bins.
  bool grid_set_ = false;
  int64_t bin_us_ = 1000;
  size_t binned_lanes_ = 0;
  OpBins op_bins_;
  AcquireBins acquire_bins_;

  // Lanes and what they keep, in the builder's own numbering.
  std::vector<ThreadState> threads_;  // By facts thread id
  std::vector<NodeState> nodes_;
  std::vector<int> node_of_name_;
  std::vector<ClientState> clients_;  // By Name
  std::vector<LockState> locks_;      // In order of their first holder
  std::vector<int> lock_slot_;        // By facts lock id
  std::vector<SeriesState> series_;
  std::vector<int> series_of_name_;
  std::vector<Name> channels_;
  std::vector<int> channel_of_name_;
  std::vector<PubSubMessage> messages_;  // client = the client's Name until the end
  std::vector<HolderCount> holders_;
  int max_holders_ = 0;
  std::map<std::string, Name, std::less<>> uuid_client_;
  std::map<Name, std::string> first_uuid_;
  std::map<Name, int64_t> clock_base_;  // Note clock_base: a process's own base, Unix ms.
  std::vector<Fault> faults_;
  size_t fault_count_ = 0;
  std::map<std::pair<std::string, std::string>, size_t> open_faults_;  // (kind, key) -> index
  std::vector<size_t> rediscovers_;
  std::vector<Name> fault_processes_;

  Timeline result_;
};

TimelineBuilder::TimelineBuilder(const TimelineOptions& options)
    : impl_(std::make_unique<Impl>(options)) {}
TimelineBuilder::~TimelineBuilder() = default;

void TimelineBuilder::OnEvent(const history::FactsPass& f, const history::Event& e) {
  impl_->OnEvent(f, e);
}
void TimelineBuilder::OnOpEnded(const history::FactsPass& f, const history::Op& op) {
  impl_->OnOpEnded(f, op);
}
void TimelineBuilder::OnSpanStarted(const history::FactsPass& f, const history::Span& s) {
  impl_->OnSpanStarted(f, s);
}
void TimelineBuilder::OnSpanEnded(const history::FactsPass& f, const history::Span& s) {
  impl_->OnSpanEnded(f, s);
}
void TimelineBuilder::OnEventDone(const history::FactsPass&, const history::Event&) {
  impl_->OnEventDone();
}
void TimelineBuilder::OnFinishing(const history::FactsPass& f) { impl_->OnFinishing(f); }
void TimelineBuilder::OnFinish(const history::FactsPass& f) { impl_->OnFinish(f); }
Timeline TimelineBuilder::Take() { return impl_->Take(); }

Timeline BuildTimeline(const history::History& history, const TimelineOptions& options) {
  history::FactsPass pass(&history.names(), history::FactsOptions{});
  TimelineBuilder builder(options);
  pass.AddObserver(&builder);
  for (const history::Event& e : history.events()) pass.OnEvent(e);
  pass.Finish();
  Timeline timeline = builder.Take();
  timeline.history_hash = history.HashHex();
  return timeline;
}

size_t LatencyBucket(int64_t latency_us) {
  if (latency_us < 2) return 0;
  // Half octaves: 2 log2(x), exact at the bucket edges, which are powers of sqrt(2).
  const double b = std::floor(2 * std::log2(static_cast<double>(latency_us)) + 1e-9);
  return std::min(static_cast<size_t>(b), kLatencyBuckets - 1);
}

double LatencyBucketHighUs(size_t bucket) { return std::exp2((static_cast<double>(bucket) + 1) / 2); }

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kFail:
      return "fail";
    case Outcome::kInfo:
      return "info";
    case Outcome::kCrashed:
      return "crashed";
    case Outcome::kPending:
      return "pending";
  }
  return "?";
}

bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ei = i, ej = j;
      while (ei < a.size() && digit(a[ei])) ++ei;
      while (ej < b.size() && digit(b[ej])) ++ej;
      std::string_view na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if ((a.size() - i) != (b.size() - j)) return (a.size() - i) < (b.size() - j);
  return a < b;  // Equal as numbers ("c01" vs "c1"): fall back to bytes for a total order.
}

int Timeline::ThreadIndex(std::string_view name) const {
  for (size_t i = 0; i < threads.size(); ++i) {
    if (threads[i].name == name) return static_cast<int>(i);
  }
  return kNone;
}

int Timeline::NodeIndex(std::string_view name) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == name) return static_cast<int>(i);
  }
  return kNone;
}

int Timeline::ClientIndex(std::string_view name) const {
  for (size_t i = 0; i < clients.size(); ++i) {
    if (clients[i] == name) return static_cast<int>(i);
  }
  return kNone;
}

std::vector<int> Timeline::ThreadsOf(std::string_view process) const {
  std::vector<int> out;
  for (size_t i = 0; i < threads.size(); ++i) {
    if (threads[i].process == process) out.push_back(static_cast<int>(i));
  }
  return out;
}

bool Timeline::InDetail(int64_t from_us, int64_t to_us) const {
  // Windows are few and in time order.
  for (const DetailWindow& w : windows) {
    if (to_us >= w.from_us && from_us <= w.to_us) return true;
    if (w.from_us > to_us) break;
  }
  return false;
}

int Timeline::WindowNear(int64_t t_us) const {
  for (size_t i = 0; i < windows.size(); ++i) {
    if (t_us <= windows[i].to_us) return static_cast<int>(i);
  }
  return windows.empty() ? kNone : static_cast<int>(windows.size()) - 1;
}

}  // namespace lockstep::reports
