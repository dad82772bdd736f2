// liveness: crashed holders' locks come free; nobody waits while the lock is free; nothing is
// stuck at the end; nothing stays taken that nobody holds; a lock nobody holds can be obtained.
//
// With B = CheckOptions::liveness_bound_us (docs/scenario-format.md has every rule in full):
// (a) "no_takeover_after_crash": a client crashes while believing it holds lock L with lease D.
//     Let free = crash + D and try = the first moment >= free at which some acquire of L is in
//     flight. Some acquire of L must end ok (after the crash) by try + B. Not judged if nobody
//     tries or the run ends first, nor for semaphores and latches (see (d)).
// (b) "waited_while_free": an acquire in flight while its lock is free on the node its commands
//     went to, for a continuous stretch longer than B while neither the node, the client nor the
//     whole system was impaired. RedLock/MultiLock: free on at least a quorum of its nodes.
//     Semaphores, "waited_with_free_permits": free = the node's count (its lease events) is at
//     least the permits the acquire asks for. Latches, "waited_while_open": an await while the
//     latch is open there (no key, or a count <= 0).
// (c) "stuck": an operation of a live, unpaused process that never completes, invoked more than
//     B + its wait before the end of the run.
// (d) Orphans: the node keeps something taken that no thread believing it holds the lock
//     accounts for: "orphaned_lock" (longer than the longest lease plus B), "leaked_permits",
//     "orphaned_latch" (longer than B). Time with the node impaired does not count.
// (e) "unobtainable": nobody holds the lock, someone tries from T, and no acquisition succeeds
//     by T + the longest lease + B (not counting time with fewer than a majority of its nodes
//     up) while someone still tries after that. Not reported where (a) or (d) explains it.
//
// Online, each rule keeps only what is open: acquisitions in flight, a crash's holds until the
// lock is taken over, free stretches back to the oldest acquisition in flight, open orphans and
// the current free gap. Where a rule depends on the whole run -- the longest lease any
// acquisition asks for, whether (a) or (d) explains a stretch -- a finding that could still be
// withdrawn waits for the end of the run and is judged then. Which nodes a lock has is what the
// history has shown by the moment a rule is judged.
#include <algorithm>
#include <cassert>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "check/property.h"

namespace lockstep::check {

namespace {

using history::ClientCrash;
using history::FactsPass;
using history::ImpairedSpan;
using history::kNone;
using history::kOpenSeq;
using history::LeaseFact;
using history::LeaseKind;
using history::LossRecord;
using history::Op;
using history::OpKind;
using history::Outcome;
using history::Role;
using history::Seq;
using history::Span;

constexpr int64_t kForever = history::kForeverUs;
constexpr size_t kMaxOrphanThreadsNamed = 6;  // Per orphan: its owners, then waiters kept out.

enum LivenessKind : uint8_t {
  kNoTakeover, kWaitedWhileFree, kStuck, kOrphanedLock, kLeakedPermits, kOrphanedLatch,
  kUnobtainable, kWaitedWithFreePermits, kWaitedWhileOpen
};

uint64_t Key(int a, int b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

// An acquisition as liveness keeps it: enough to name it and say how it ended.
struct AcquireRef {
  uint64_t id = 0;
  int thread = kNone;
  int lock = kNone;
  Seq invoke_seq = 0;
  int64_t invoke_us = 0;
  bool ended = false;
  Outcome outcome = Outcome::kPending;
  Seq end_seq = kOpenSeq;
  int64_t end_us = 0;
  std::string end_detail;
  int64_t wait_us = 0;
  history::KeptDetail detail;  // The invoke's.
  history::Name name = history::names::kNone;

  std::string DetailText() const { return detail.Render(history::EventType::kInvoke, name); }

  static AcquireRef Of(const Op& op) {
    AcquireRef r;
    r.id = op.id;
    r.thread = op.thread;
    r.lock = op.lock;
    r.invoke_seq = op.invoke_seq;
    r.invoke_us = op.invoke_us;
    r.wait_us = op.wait_us;
    r.detail = op.invoke_detail;
    r.name = op.name;
    return r;
  }
  static AcquireRef Ended(const Op& op) {
    AcquireRef r = Of(op);
    r.End(op);
    return r;
  }
  void End(const Op& op) {
    ended = true;
    outcome = op.outcome;
    end_seq = op.end_seq;
    end_us = op.end_us;
    end_detail = op.end_detail;
  }
};

// Acquisitions of one lock invoked within a window [from, to], as explanations count and name
// them: how many did not succeed, and each thread's first one that did not.
class AcquireWindow {
 public:
  // Opens the window at from_us (reusing its buffers). early: the acquisitions in flight when
  // the window opened count for naming too.
  void Open(int64_t from_us, const std::vector<AcquireRef>& inflight, bool early) {
    active_ = true;
    from_us_ = from_us;
    to_us_ = kForever;
    others_after_us_ = -1;
    others_excluded_ = UINT64_MAX;
    recent_us_ = -1;
    recent_ = 0;
    pending_.clear();
    denied_ = 0;
    others_ = 0;
    first_.clear();
    for (const AcquireRef& r : inflight) {
      if (r.invoke_us >= from_us) {
        Invoked(r);
      } else if (early) {
        pending_.push_back({r.id, r.thread, r.invoke_seq, r.invoke_us, true});
      }
    }
  }

  bool active() const { return active_; }
  void Clear() { active_ = false; }
  void Invoked(const AcquireRef& r) {
    if (!active_ || (closed() && r.invoke_us > to_us_)) return;
    pending_.push_back({r.id, r.thread, r.invoke_seq, r.invoke_us, false});
  }

  void Ended(const Op& op) {
    if (!active_) return;
    auto it = std::find_if(pending_.begin(), pending_.end(), [&](const Entry& e) { return e.id == op.id; });
    if (it == pending_.end()) return;
    const Entry e = *it;
    pending_.erase(it);
    if (op.outcome == Outcome::kOk) return;
    if (!e.early) {
      ++denied_;
      if (e.invoke_us > others_after_us_ && e.id != others_excluded_) {
        // "Before the window's end" is decided once its end is known.
        if (closed()) {
          others_ += e.invoke_us < to_us_;
        } else if (e.invoke_us > recent_us_) {
          others_ += recent_;
          recent_ = 1;
          recent_us_ = e.invoke_us;
        } else if (e.invoke_us == recent_us_) {
          ++recent_;
        } else {
          ++others_;
        }
      }
    }
    if (std::none_of(first_.begin(), first_.end(), [&](const auto& f) { return f.second == e.thread; })) {
      first_.emplace_back(e.invoke_seq, e.thread);
    }
  }

  // No acquisition invoked after to_us belongs to the window.
  void Close(int64_t to_us) {
    if (!active_ || closed()) return;
    to_us_ = to_us;
    std::erase_if(pending_, [&](const Entry& e) { return e.invoke_us > to_us; });
    if (recent_us_ < to_us) others_ += recent_;
    recent_ = 0;
  }
  // Unobtainable: "others" are those invoked after `after_us` (and before the end), but one.
  void CountOthers(int64_t after_us, uint64_t excluded) {
    others_after_us_ = after_us;
    others_excluded_ = excluded;
  }

  bool closed() const { return to_us_ != kForever; }
  bool nothing_pending() const { return pending_.empty(); }
  size_t denied() const { return denied_; }
  size_t others() const { return others_; }
  // Threads in the order of their first unsuccessful acquisition, with its invoke seq.
  std::vector<std::pair<Seq, int>> Named() const {
    std::vector<std::pair<Seq, int>> out = first_;
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  struct Entry {
    uint64_t id;
    int thread;
    Seq invoke_seq;
    int64_t invoke_us;
    bool early;
  };
  bool active_ = false;
  int64_t from_us_ = 0;
  int64_t to_us_ = kForever;
  int64_t others_after_us_ = -1;
  uint64_t others_excluded_ = UINT64_MAX;
  int64_t recent_us_ = -1;
  size_t recent_ = 0;
  std::vector<Entry> pending_;
  size_t denied_ = 0;
  size_t others_ = 0;
  std::vector<std::pair<Seq, int>> first_;  // (seq, thread): each thread's first failure.
};

// (a) A lock held by a client when it crashed.
struct CrashedHold {
  uint64_t crash_id = 0;
  int process = kNone;
  Seq crash_seq = 0;
  int64_t crash_us = 0;
  int index = 0;  // Among the crash's holds.
  int lock = kNone;
  std::vector<Span> beliefs;
  std::vector<std::vector<LossRecord>> losses;  // Per belief: its losses after the crash.
  int64_t lease_us = 0;
  bool lease_is_default = false;
  int64_t free_us = 0;
  bool looked = false;               // free_us has passed.
  std::vector<uint64_t> candidates;  // In flight at free_us and not yet ended.
  bool has_trier = false;
  AcquireRef trier;
  int64_t try_us = 0;
  bool has_first_ok = false;
  AcquireRef first_ok;
};

// (d) A stretch during which a node kept something taken that no believer accounts for.
struct OrphanSpan {
  int lock = kNone;
  int node = kNone;
  Seq from_seq = 0;
  int64_t from_us = 0;
  Seq to_seq = kOpenSeq;
  int64_t to_us = 0;
  int64_t allowed_us = 0;
  int64_t lease_us = 0;
  int64_t impaired_us = 0;
  std::string fields;
  std::vector<int> owners;
  int64_t units = 0;
  int64_t count = 0;
  int64_t held = 0;
  bool by_role = false;
  // The event that began it (synchronizers).
  history::EventType from_type = history::EventType::kNote;
  history::Name from_op = history::names::kNone;
  int from_process = kNone;
  int from_thread = -1;
  std::string from_detail;
};

// What an owner of an orphaned key was doing: its latest acquisition of the lock before the
// orphan began, and the belief that acquisition started.
struct OwnerStory {
  int thread = kNone;
  bool has_acquire = false;
  AcquireRef acquire;
  bool has_belief = false;
  Span belief;
};

struct Orphan {
  LivenessKind kind = kOrphanedLock;
  OrphanSpan span;
  std::vector<OwnerStory> stories;
  AcquireWindow window;
  bool ended = false;  // The span has ended (its window closes once time passes its end).
};

// (e) A stretch nobody held the lock while someone tried, longer than allowed.
struct Unobtainable {
  int lock = kNone;
  int64_t free_from_us = 0;
  int64_t free_to_us = 0;
  bool to_run_end = false;
  std::vector<uint64_t> candidates;  // In flight when the gap began, not yet ended.
  bool has_trier = false;
  AcquireRef trier;
  int64_t try_us = 0;
  int64_t deadline_us = 0;
  int64_t excused_us = 0;
  int64_t lease_us = 0;
  int nodes = 0;
  int majority = 0;
  std::vector<int> lock_nodes;
  AcquireWindow window;
  // To judge it again at the end: whether someone still tried after a later deadline.
  bool in_flight_at_end = false;
  int64_t max_end_before_us = -1;
};

struct FreeSpan {
  int64_t from_us = 0;
  int64_t to_us = kForever;
  bool opened = false;   // Freed by a lease event (else free from the start of the run),
  LeaseKind opened_kind = LeaseKind::kReleased;  // this one,
  Seq opened_seq = 0;    // at this seq,
  uint64_t opened_id = 0;  // with this id.
  int64_t count = 0;     // Semaphores and latches: the node's count from then on.
};

// Semaphores and latches: the node's count from from_us (its lease events; no key counts 0).
struct CountSpan {
  int64_t from_us = 0;
  int64_t to_us = kForever;
  int64_t count = 0;
  bool opened = false;  // Set by a lease event (else the count since the start of the run).
  LeaseKind kind = LeaseKind::kReleased;
  Seq seq = 0;
  uint64_t id = 0;
};

// What a kept finding needs for its explanation.
struct Payload {
  int64_t to_us = 0;
  std::unique_ptr<CrashedHold> hold;    // no_takeover_after_crash
  AcquireRef op;                        // waited_while_free, stuck
  int node = kNone;                     // waited_while_free: the node; kNone: a quorum
  FreeSpan freed;                       // waited_while_free: how the lock came free there
  std::unique_ptr<Orphan> orphan;       // orphans
  std::unique_ptr<Unobtainable> unobtainable;
};

class Liveness : public PropertyChecker {
 public:
  explicit Liveness(const CheckOptions& options)
      : bound_us_(options.liveness_bound_us), found_(options.max_violations) {
    assert(bound_us_ >= 0);
  }

  bool WantsEvents() const override { return true; }

  void OnEvent(const FactsPass& f, const history::Event& e) override {
    if (e.t_us > now_us_) Advance(f, e.t_us);
    now_us_ = e.t_us;
    if (e.type == history::EventType::kNote && e.op == history::names::kRole) {
      // Counting-down processes, as their role notes (at the run's start) name them.
      if (const auto role = history::AsRoleNote(e); role && role->role == Role::kCountDown) {
        counters_.try_emplace(f.ProcessNamed(e.process));
      }
    }
    if (e.type == history::EventType::kNote && e.op == history::names::kDone && Roles(f)) {
      const int process = f.ProcessNamed(e.process);
      if (process != kNone && f.processes()[process].role == Role::kCountDown) {
        ++counters_[process].done;
        sync_all_ = true;
      }
    }
    if (e.type == history::EventType::kFault && e.op == history::names::kRestart && Roles(f)) {
      const int process = f.ProcessNamed(e.process == history::names::kNone ? history::names::kSim
                                                                            : e.process);
      if (auto c = counters_.find(process); c != counters_.end()) {
        c->second = Counter{};  // A new incarnation, its threads counting down again.
        sync_all_ = true;
      }
    }
  }

  void OnOpInvoked(const FactsPass& f, const Op& op) override {
    LockState& l = LockOf(op.lock);
    if (op.kind == OpKind::kAcquire) {
      const AcquireRef ref = AcquireRef::Of(op);
      l.inflight.push_back(ref);
      l.max_lease_us = std::max(l.max_lease_us, op.lease_us >= 0 ? op.lease_us : f.lease_default_us());
      last_acquire_[Key(op.thread, op.lock)] = LastAcquire{ref, false, {}};
      ForOrphansOf(op.lock, [&](Orphan& o) {
        if (o.window.active()) o.window.Invoked(ref);
      });
      if (l.gap_open) {
        Unobtainable& g = l.gap;
        if (g.window.active()) g.window.Invoked(ref);
        if (l.gap_looked && !g.has_trier && g.candidates.empty() && op.invoke_us > g.free_from_us) {
          // Nobody was in flight when the lock came free: the first to try is the trier.
          g.has_trier = true;
          g.trier = ref;
          g.try_us = op.invoke_us;
          g.window.Open(g.try_us, l.inflight, false);
          g.window.CountOthers(g.try_us, op.id);
        }
      }
      for (auto& u : gaps_closing_) {
        if (u->lock == op.lock) u->window.Invoked(ref);
      }
      for (CrashedHold* h : holds_waiting_invoke_) {
        if (h->lock == op.lock && !h->has_trier && op.invoke_us > h->free_us) {
          h->has_trier = true;
          h->trier = ref;
          h->try_us = op.invoke_us;
        }
      }
      std::erase_if(holds_waiting_invoke_, [](CrashedHold* h) { return h->has_trier; });
    } else if (op.kind == OpKind::kRelease) {
      l.max_holds = std::max(l.max_holds, op.count_before);
      if (f.protocol().ownerless()) {
        SyncState& st = SyncOf(op.lock);
        int64_t& mine = st.held[op.thread];
        const int64_t back = std::min(op.permits, mine);
        mine -= back;
        st.held_total -= back;
        if (mine == 0) st.held.erase(op.thread);
        sync_touched_.push_back(op.lock);
      }
    }
  }

  void OnOpEnded(const FactsPass& f, const Op& op) override {
    if (op.outcome == Outcome::kPending) Stuck(f, op);
    if (op.kind != OpKind::kAcquire) return;
    LockState& l = LockOf(op.lock);
    std::erase_if(l.inflight, [&](const AcquireRef& r) { return r.id == op.id; });
    if (op.end_seq != kOpenSeq) {
      l.max_end_ended_us = std::max(l.max_end_ended_us, op.end_us);
    } else if (op.invoke_us < op.end_us) {
      l.pending_at_end = true;  // Still trying when the run ended.
    }
    if (auto it = last_acquire_.find(Key(op.thread, op.lock)); it != last_acquire_.end() &&
        it->second.ref.id == op.id) {
      it->second.ref.End(op);
    }
    ForOrphansOf(op.lock, [&](Orphan& o) {
      if (o.window.active()) o.window.Ended(op);
      for (OwnerStory& s : o.stories) {
        if (s.has_acquire && s.acquire.id == op.id) s.acquire.End(op);
      }
    });
    if (l.gap_open) GapOpEnded(l.gap, op);
    for (auto& u : gaps_closing_) {
      if (u->lock == op.lock) GapOpEnded(*u, op);
    }
    // Only the candidates an acquisition can still change: a run with thousands of settled
    // ones would otherwise cost every operation's end that many visits.
    for (size_t i = 0; i < gap_unsettled_.size();) {
      Unobtainable& u = *gap_candidates_[gap_unsettled_[i]];
      if (u.lock == op.lock) GapOpEnded(u, op);
      if (GapSettled(u)) {
        gap_unsettled_[i] = gap_unsettled_.back();
        gap_unsettled_.pop_back();
      } else {
        ++i;
      }
    }
    // (a): the trier among those in flight when the lock should have come free, and the first
    // success after the crash.
    for (auto& h : holds_) {
      if (h->lock != op.lock) continue;
      if (h->has_trier && h->trier.id == op.id) h->trier.End(op);
      if (auto c = std::find(h->candidates.begin(), h->candidates.end(), op.id); c != h->candidates.end()) {
        h->candidates.erase(c);
        // The one that ends last tried when the lock came free (ties: the first invoked).
        if (!h->has_trier || op.end_us > h->trier.end_us ||
            (op.end_us == h->trier.end_us && op.id < h->trier.id)) {
          h->has_trier = true;
          h->trier = AcquireRef::Ended(op);
        }
      }
      if (!h->has_first_ok && op.outcome == Outcome::kOk && op.end_seq > h->crash_seq) {
        h->has_first_ok = true;
        h->first_ok = AcquireRef::Ended(op);
      }
    }
    // (b)
    if (f.protocol().quorum > 0 && !f.protocol().ownerless()) {
      CheckQuorumWait(f, op);
    } else if (!f.protocol().semaphore() || op.permits > 0) {
      CheckWait(f, op);
    }
    Prune(op.lock);  // After (b): the stretches it waited through are no longer needed.
    // (d) synchronizers: an acquire ok takes permits (or a pass that owes a count-down).
    if (f.protocol().ownerless() && op.outcome == Outcome::kOk && op.end_seq != kOpenSeq) {
      if (!(Roles(f) && f.processes()[f.ProcessOfThread(op.thread)].role != Role::kWorker)) {
        SyncState& st = SyncOf(op.lock);
        st.held[op.thread] += op.permits;
        st.held_total += op.permits;
        sync_touched_.push_back(op.lock);
      }
    }
  }

  void OnSpanStarted(const FactsPass& f, const Span& s) override {
    if (s.access) return;
    LockState& l = LockOf(s.lock);
    if (auto it = last_acquire_.find(Key(s.thread, s.lock)); it != last_acquire_.end() &&
        it->second.ref.id == s.op) {
      it->second.has_belief = true;
      it->second.belief = s;
    }
    ForOrphansOf(s.lock, [&](Orphan& o) {
      for (OwnerStory& story : o.stories) {
        if (story.has_acquire && story.acquire.id == s.op && !story.has_belief) {
          story.has_belief = true;
          story.belief = s;
        }
      }
    });
    // (e) the free gap ends.
    if (l.believers++ == 0 && l.gap_open) EndGap(f, s.lock, s.start_us, /*to_run_end=*/false);
    if (!f.protocol().ownerless()) {
      ++believing_[Key(s.thread, s.lock)];
      Touch(s.lock);
    }
  }

  void OnSpanEnded(const FactsPass& f, const Span& s) override {
    if (s.access) return;
    LockState& l = LockOf(s.lock);
    if (auto it = last_acquire_.find(Key(s.thread, s.lock));
        it != last_acquire_.end() && it->second.has_belief && it->second.belief.id == s.id) {
      it->second.belief = s;
    }
    ForOrphansOf(s.lock, [&](Orphan& o) {
      for (OwnerStory& story : o.stories) {
        if (story.has_belief && story.belief.id == s.id) story.belief = s;
      }
    });
    l.free_from_us = std::max(l.free_from_us, s.end_us);
    if (--l.believers == 0 && !f.finished()) StartGap(f, s.lock);
    // Beliefs that the run's end closes make no point of the orphan rule.
    if (!f.protocol().ownerless() && s.end_seq != kOpenSeq) {
      --believing_[Key(s.thread, s.lock)];
      Touch(s.lock);
    }
  }

  void OnLease(const FactsPass& f, const LeaseFact& le) override {
    // (a) losses after a crash, named in its explanation.
    for (auto& h : holds_) {
      if (h->lock != le.lock || le.seq <= h->crash_seq) continue;
      for (size_t i = 0; i < h->beliefs.size(); ++i) {
        if (le.TookFrom(h->beliefs[i].thread) && h->losses[i].size() < history::kLossesKept) {
          h->losses[i].push_back({le.seq, le.t_us, le.node, le.kind});
        }
      }
    }
    // (b) the lock's free stretches on the node.
    FreeState& fs = free_[Key(le.node, le.lock)];
    if (le.kind == LeaseKind::kAcquired || le.kind == LeaseKind::kOwners) {
      if (fs.free) {
        fs.span.to_us = le.t_us;
        if (fs.span.to_us > fs.span.from_us) fs.closed.push_back(fs.span);
        fs.free = false;
        Prune(le.lock);
      }
    } else if (!fs.free) {
      fs.free = true;
      fs.span = FreeSpan{le.t_us, kForever, true, le.kind, le.seq, le.id};
    }
    if (f.protocol().quorum > 0) QuorumChanged(f, le.lock, le.node, le.t_us);
    // (d)
    if (f.protocol().ownerless()) {
      // A semaphore's or latch's count is the key's value; a missing key counts 0.
      const std::optional<int64_t> count =
          le.kind == LeaseKind::kAcquired || le.kind == LeaseKind::kOwners ? history::CountOf(le.detail)
                                                                           : std::optional<int64_t>(0);
      if (count) {
        SyncState& st = SyncOf(le.lock);
        // addPermits / drainPermits change the total, not permits taken or given back (d).
        st.resized += le.resized;
        st.count = *count;
        st.node = le.node;
        sync_touched_.push_back(le.lock);
        // (b) for semaphores and latches: the node's count from now on.
        CountState& cs = counts_[Key(le.node, le.lock)];
        cs.current.to_us = le.t_us;
        if (cs.current.to_us > cs.current.from_us) cs.closed.push_back(cs.current);
        cs.current = CountSpan{le.t_us, kForever, *count, true, le.kind, le.seq, le.id};
        Prune(le.lock);
      }
    } else {
      OwnerKey& key = LockOf(le.lock).keys[le.node];
      key.present = le.kind == LeaseKind::kAcquired || le.kind == LeaseKind::kOwners;
      key.listed = key.present && le.owners_listed;
      key.owners = key.present ? le.owners : std::vector<int>{};
      key.fields = key.present ? std::string(le.detail) : "";
      Touch(le.lock);
    }
  }

  void OnCrash(const FactsPass& f, const ClientCrash& crash) override {
    if (f.protocol().ownerless()) {
      // (d) The crashed process's permits (or passes owing a count-down) are gone with it.
      if (auto c = counters_.find(crash.process); c != counters_.end()) c->second.up = false;
      crashed_holders_.clear();
      for (size_t lock = 0; lock < sync_.size(); ++lock) {
        SyncState& st = sync_[lock];
        for (auto it = st.held.begin(); it != st.held.end();) {
          if (f.ProcessOfThread(it->first) != crash.process) {
            ++it;
            continue;
          }
          st.held_total -= it->second;
          crashed_holders_[static_cast<int>(lock)].push_back(it->first);
          it = st.held.erase(it);
        }
      }
      crash_point_ = true;
      sync_all_ = true;
      return;
    }
    // (a) Semaphore permits and latch passes have no lease to run out; (d) judges them.
    std::vector<std::unique_ptr<CrashedHold>> holds;  // One per lock.
    for (const Span& belief : crash.beliefs) {
      auto it = std::find_if(holds.begin(), holds.end(), [&](const auto& h) { return h->lock == belief.lock; });
      if (it == holds.end()) {
        auto h = std::make_unique<CrashedHold>();
        h->crash_id = crash.id;
        h->process = crash.process;
        h->crash_seq = crash.seq;
        h->crash_us = crash.t_us;
        h->index = static_cast<int>(holds.size());
        h->lock = belief.lock;
        holds.push_back(std::move(h));
        it = holds.end() - 1;
      }
      CrashedHold& h = **it;
      h.beliefs.push_back(belief);
      h.losses.emplace_back();
      const int64_t lease_us = belief.lease_us >= 0 ? belief.lease_us : f.lease_default_us();
      if (lease_us >= h.lease_us) {
        h.lease_us = lease_us;
        h.lease_is_default = belief.lease_us < 0;
      }
    }
    for (auto& h : holds) {
      h->free_us = h->crash_us + h->lease_us;
      awaiting_free_.insert(std::upper_bound(awaiting_free_.begin(), awaiting_free_.end(), h->free_us,
                                             [](int64_t t, const CrashedHold* x) { return t < x->free_us; }),
                            h.get());
      holds_.push_back(std::move(h));
    }
  }

  void OnFault(const FactsPass& f, const history::FaultRecord& fault) override {
    if (fault.op == history::names::kPromote && !f.protocol().ownerless() && f.protocol().nodes <= 1) {
      // A promoted replica carries on the old master's lease view (the simulator records its
      // lease events from the old master's owners), and the old master stops being judged.
      // Which master a promotion replaced the history does not say; with one master it is any
      // other node, with several (RedLock with replicas) nothing is dropped.
      for (size_t lock = 0; lock < locks_.size(); ++lock) {
        if (locks_[lock].keys.empty()) continue;
        for (auto& [node, key] : locks_[lock].keys) {
          if (node != fault.process) key.present = false;
        }
        Touch(static_cast<int>(lock));
      }
    }
    if (f.protocol().quorum > 0) {
      for (size_t lock = 0; lock < quorum_.size(); ++lock) {
        QuorumChanged(f, static_cast<int>(lock), fault.process, fault.t_us);
      }
    }
  }

  void OnEventDone(const FactsPass& f, const history::Event& e) override {
    if (!sync_touched_.empty() || sync_all_) SettleSynchronizers(f, e);
    for (int lock : touched_) SettleOrphans(f, lock, e.seq, e.t_us);
    touched_.clear();
  }

  void OnFinishing(const FactsPass& f) override {
    // Everything before the end has happened: the moments that passed decide.
    Advance(f, kForever);
    now_us_ = f.run_end_us();
  }

  void OnFinish(const FactsPass& f) override {
    const int64_t end = f.run_end_us();
    if (quorum_pending_) ApplyQuorum(f);
    // (d) Orphans that ended during the run, then those open at its end.
    for (auto& o : orphans_closing_) {
      if (o->window.active()) o->window.Close(o->span.to_us);
      JudgeOrphan(f, std::move(o));
    }
    orphans_closing_.clear();
    std::vector<std::unique_ptr<Orphan>> open_at_end;
    for (LockState& l : locks_) {
      for (auto& [node, key] : l.keys) {
        if (!key.orphan) continue;
        open_at_end.push_back(std::make_unique<Orphan>(std::move(key.open)));
        key.orphan = false;
      }
    }
    for (SyncState& st : sync_) {
      if (st.open) open_at_end.push_back(std::move(st.open));
    }
    for (auto& o : open_at_end) {
      o->span.to_us = end;
      if (o->window.active()) o->window.Close(end);
      o->span.impaired_us =
          o->span.node == kNone ? 0 : ImpairedWithin(f, o->span.node, o->span.from_us, o->span.to_us);
      orphan_candidates_.push_back(std::move(o));
    }
    for (auto& o : orphan_candidates_) FinalJudgeOrphan(f, std::move(o));
    orphan_candidates_.clear();
    // (a)
    for (auto& h : holds_) JudgeCrashedHold(f, std::move(h));
    holds_.clear();
    // (b) Waits judged on the lock's only node, if it stayed the only one.
    for (SoleWait& w : sole_waits_) {
      const std::vector<int>& nodes = f.NodesOfLock(w.op.lock);
      if (nodes.size() != 1) continue;
      if (w.node == kNone) {
        // The lock had no node when the acquire ended: it was free there throughout (a
        // semaphore without a key has no permits).
        if (f.protocol().semaphore()) continue;
        WaitFinding(f, w.op, nodes[0], w.op.invoke_us, w.op.end_us, {FreeSpan{}});
      } else if (w.node == nodes[0]) {
        AddFinding(w.key, std::move(w.payload));
      }
    }
    sole_waits_.clear();
    // (e) The last free gap, then every candidate: after (a) and (d), whose violations explain a
    // stretch better.
    for (size_t lock = 0; lock < locks_.size(); ++lock) {
      if (locks_[lock].gap_open) EndGap(f, static_cast<int>(lock), end, /*to_run_end=*/true);
    }
    for (auto& u : gaps_closing_) AddGapCandidate(std::move(u));
    gaps_closing_.clear();
    for (auto& u : gap_candidates_) {
      if (u->window.active()) u->window.Close(u->free_to_us);
      JudgeUnobtainable(f, std::move(u));
    }
    gap_candidates_.clear();
    gap_unsettled_.clear();
  }

  PropertyResult Result(const Narrator& n) override {
    return Conclude(kLiveness, found_,
                    [&](const FindingKey& key, const Payload& p) { return Explain(n, key, p); });
  }

 private:
  struct OwnerKey {
    bool present = false;
    bool listed = false;
    std::vector<int> owners;
    std::string fields;
    bool orphan = false;
    // While orphan: the span so far. Kept here and reused, since most last a moment (the key
    // outlives its holder's belief from the release's invoke to the script's run).
    Orphan open;
  };
  struct LockState {
    std::vector<AcquireRef> inflight;  // Acquisitions in flight, in invoke order.
    int64_t max_end_ended_us = -1;
    int64_t max_lease_us = 0;
    int max_holds = 1;
    int believers = 0;
    int64_t free_from_us = 0;
    bool pending_at_end = false;  // An acquisition was still in flight when the run ended.
    // Nobody believes it holds the lock since gap.free_from_us (the start of the run, at
    // first). Kept here and reused: a gap opens at every release.
    bool gap_open = true;
    Unobtainable gap;
    bool gap_looked = false;  // The moment the gap began has passed.
    std::map<int, OwnerKey> keys;  // By node, ordered.
  };
  struct FreeState {
    bool free = true;
    FreeSpan span;  // The current one, while free.
    std::deque<FreeSpan> closed;
  };
  struct CountState {
    CountSpan current;
    std::deque<CountSpan> closed;  // Back to the oldest acquisition in flight.
  };
  struct Counter {
    bool up = true;
    int done = 0;
  };
  struct SyncState {
    int64_t count = -1;  // The node's count; -1 until the key first appears.
    // Semaphores: permits that addPermits / drainPermits added (or took away) on the node.
    int64_t resized = 0;
    int node = kNone;
    std::map<int, int64_t> held;  // Thread -> permits (latch: passes not yet counted down).
    int64_t held_total = 0;
    std::unique_ptr<Orphan> open;
  };
  struct QuorumState {
    std::vector<int> nodes;          // Seen, in the order seen.
    std::vector<char> free;          // Free and unimpaired now.
    std::vector<char> free_before;   // At the start of the pending moment.
    std::vector<char> dipped;        // Stopped being free during it.
    int64_t since_us = 0;            // Quorum-free since (-1: not).
    std::deque<FreeSpan> spans;      // Closed quorum-free stretches still of interest.
  };
  struct LastAcquire {
    AcquireRef ref;
    bool has_belief = false;
    Span belief;
  };
  struct SoleWait {
    AcquireRef op;
    int node = kNone;  // The only node when it ended; kNone: none yet.
    FindingKey key;
    Payload payload;
  };
  struct Interval {
    int lock;
    int64_t from_us;
    int64_t to_us;
  };

  LockState& LockOf(int lock) {
    while (locks_.size() <= static_cast<size_t>(lock)) {
      LockState& l = locks_.emplace_back();
      l.gap.lock = static_cast<int>(locks_.size() - 1);
      // Free from the start of the run; nothing of it was in flight at 0 unless it is 0 now.
      l.gap_looked = now_us_ > 0;
    }
    return locks_[lock];
  }
  SyncState& SyncOf(int lock) {
    if (sync_.size() <= static_cast<size_t>(lock)) sync_.resize(lock + 1);
    return sync_[lock];
  }
  int Believing(int thread, int lock) const {
    auto it = believing_.find(Key(thread, lock));
    return it == believing_.end() ? 0 : it->second;
  }
  void Touch(int lock) {
    if (std::find(touched_.begin(), touched_.end(), lock) == touched_.end()) touched_.push_back(lock);
  }
  static bool Roles(const FactsPass& f) { return f.protocol().latch() && f.roles(); }

  template <class F>
  void ForOrphansOf(int lock, F f) {
    if (static_cast<size_t>(lock) < locks_.size()) {
      for (auto& [node, key] : locks_[lock].keys) {
        if (key.orphan) f(key.open);
      }
    }
    if (static_cast<size_t>(lock) < sync_.size() && sync_[lock].open) f(*sync_[lock].open);
    for (auto& o : orphans_closing_) {
      if (o->span.lock == lock) f(*o);
    }
    for (auto& o : orphan_candidates_) {
      if (o->span.lock == lock) f(*o);
    }
  }

  void AddFinding(const FindingKey& key, Payload payload) {
    if (auto [number, p] = found_.Add(key); p != nullptr) *p = std::move(payload);
  }

  // The longest a key may outlive its holders' beliefs: the longest lease any acquisition of
  // the lock asked for (the watchdog's without an explicit one), times the most holds a thread
  // stacked (a write lock's reentry adds its lease to the TTL).
  int64_t LongestLeaseUs(const FactsPass& f, int lock) {
    const LockState& l = LockOf(lock);
    const int64_t lease_us = l.max_lease_us == 0 ? f.lease_default_us() : l.max_lease_us;
    const int holds = std::max(1, l.max_holds);
    return lease_us > kForever / holds ? kForever : lease_us * holds;
  }

  // Time moves on to t_us: what was waiting for a moment before it is decided.
  void Advance(const FactsPass& f, int64_t t_us) {
    // (a) Crashed holds whose lock should be free by now: who was trying then.
    while (!awaiting_free_.empty() && awaiting_free_.front()->free_us < t_us) {
      CrashedHold* h = awaiting_free_.front();
      awaiting_free_.erase(awaiting_free_.begin());
      h->looked = true;
      const bool at_end = t_us == kForever;
      for (const AcquireRef& r : LockOf(h->lock).inflight) {
        // At the run's end, the acquisitions still in flight end with it.
        if (r.invoke_us <= h->free_us && (!at_end || f.run_end_us() > h->free_us)) {
          h->candidates.push_back(r.id);
        }
      }
      if (!h->candidates.empty()) {
        h->try_us = h->free_us;
      } else {
        holds_waiting_invoke_.push_back(h);
      }
    }
    // (e) Free gaps that began before now: who was trying when the lock came free.
    for (size_t lock = 0; lock < locks_.size(); ++lock) {
      LockState& l = locks_[lock];
      if (!l.gap_open || l.gap_looked || l.gap.free_from_us >= t_us) continue;
      l.gap_looked = true;
      Unobtainable& g = l.gap;
      const bool at_end = t_us == kForever;
      for (const AcquireRef& r : l.inflight) {
        if (r.invoke_us <= g.free_from_us && (!at_end || f.run_end_us() > g.free_from_us)) {
          g.candidates.push_back(r.id);
        }
      }
      if (!g.candidates.empty()) {
        g.try_us = g.free_from_us;
        g.window.Open(g.try_us, l.inflight, false);
        g.window.CountOthers(g.try_us, UINT64_MAX);
      }
    }
    // Windows complete once time has passed their end.
    for (auto& o : orphans_closing_) {
      if (o->span.to_us < t_us) o->window.Close(o->span.to_us);
    }
    for (auto& u : gaps_closing_) {
      if (u->free_to_us < t_us) u->window.Close(u->free_to_us);
    }
    if (t_us != kForever) {
      for (auto& o : orphans_closing_) {
        if (!o->window.active() || o->window.closed()) JudgeOrphan(f, std::move(o));
      }
      std::erase_if(orphans_closing_, [](const auto& o) { return o == nullptr; });
      for (auto& u : gaps_closing_) {
        if (!u->window.active() || u->window.closed()) AddGapCandidate(std::move(u));
      }
      std::erase_if(gaps_closing_, [](const auto& u) { return u == nullptr; });
    }
    // Quorum changes at the previous moment take effect together.
    if (quorum_pending_ && t_us > quorum_t_) ApplyQuorum(f);
  }

  // --- (a) ---

  void JudgeCrashedHold(const FactsPass& f, std::unique_ptr<CrashedHold> h) {
    if (!h->looked || !h->has_trier) return;  // Nobody tried to take the lock over.
    const int64_t deadline_us = h->try_us + bound_us_;
    if (h->has_first_ok && h->first_ok.end_us <= deadline_us) return;
    if (deadline_us >= f.run_end_us()) return;  // The run ended first.
    const int64_t to_us = h->has_first_ok ? h->first_ok.end_us : f.run_end_us();
    crashed_violations_.push_back({h->lock, h->crash_us, to_us});
    const FindingKey key{h->crash_us, h->crash_seq, kNoTakeover,
                         static_cast<int64_t>((h->crash_id << 16) | static_cast<uint64_t>(h->index)),
                         kNone, kNone};
    Payload p;
    p.to_us = to_us;
    p.hold = std::move(h);
    AddFinding(key, std::move(p));
  }

  // --- (b) ---

  // Free stretches (per node, and a quorum's) are kept back to the oldest acquisition in flight.
  void Prune(int lock) {
    const LockState& l = LockOf(lock);
    const int64_t oldest = l.inflight.empty() ? now_us_ : l.inflight.front().invoke_us;
    for (auto& [key, fs] : free_) {
      if (static_cast<int>(key & 0xffffffffu) != lock) continue;
      while (!fs.closed.empty() && fs.closed.front().to_us < oldest) fs.closed.pop_front();
    }
    for (auto& [key, cs] : counts_) {
      if (static_cast<int>(key & 0xffffffffu) != lock) continue;
      while (!cs.closed.empty() && cs.closed.front().to_us < oldest) cs.closed.pop_front();
    }
    if (static_cast<size_t>(lock) < quorum_.size()) {
      std::deque<FreeSpan>& spans = quorum_[lock].spans;
      while (!spans.empty() && spans.front().to_us < oldest) spans.pop_front();
    }
  }

  void CheckWait(const FactsPass& f, const Op& op) {
    std::vector<std::pair<int64_t, int>> nodes = op.nodes;
    bool sole = false;
    if (nodes.empty()) {
      int node = op.fallback_node;
      if (node == kNone) {
        // The lock's only node: judged now, confirmed at the end of the run.
        const std::vector<int>& lock_nodes = f.NodesOfLock(op.lock);
        if (lock_nodes.size() >= 2) return;
        if (lock_nodes.empty()) {
          SoleWait w;
          w.op = AcquireRef::Ended(op);
          sole_waits_.push_back(std::move(w));
          return;
        }
        node = lock_nodes[0];
        sole = true;
      }
      nodes.emplace_back(op.invoke_us, node);
    }
    const AcquireRef ref = AcquireRef::Ended(op);
    for (size_t k = 0; k < nodes.size(); ++k) {
      const int64_t from_us = k == 0 ? op.invoke_us : nodes[k].first;
      const int64_t to_us = k + 1 < nodes.size() ? nodes[k + 1].first : op.end_us;
      if (to_us - from_us <= bound_us_) continue;
      const std::vector<FreeSpan> spans = FreeSpansOn(f, op, nodes[k].second);
      if (sole) {
        SoleWait w;
        w.op = ref;
        w.node = nodes[k].second;
        if (!WaitFinding(f, ref, nodes[k].second, from_us, to_us, spans, &w)) return;
        sole_waits_.push_back(std::move(w));
        return;
      }
      if (WaitFinding(f, ref, nodes[k].second, from_us, to_us, spans)) return;
    }
  }

  // The stretches when `op`'s lock was free on `node`, as far back as they are kept: for locks,
  // from a lease event that removed the key to the next that recorded it; for semaphores, while
  // the node's count was at least the permits `op` asks for; for latches, while it was open
  // (no key, or a count <= 0). A node without lease events for the lock never had the key.
  std::vector<FreeSpan> FreeSpansOn(const FactsPass& f, const Op& op, int node) const {
    std::vector<FreeSpan> spans;
    if (!f.protocol().ownerless()) {
      if (auto it = free_.find(Key(node, op.lock)); it != free_.end()) {
        spans.assign(it->second.closed.begin(), it->second.closed.end());
        if (it->second.free) spans.push_back(it->second.span);
      } else {
        spans.push_back(FreeSpan{});  // Never created on that node.
      }
      return spans;
    }
    const bool semaphore = f.protocol().semaphore();
    auto free = [&](int64_t count) { return semaphore ? count >= op.permits : count <= 0; };
    std::vector<CountSpan> counts;
    if (auto it = counts_.find(Key(node, op.lock)); it != counts_.end()) {
      counts.assign(it->second.closed.begin(), it->second.closed.end());
      counts.push_back(it->second.current);
    } else {
      counts.push_back(CountSpan{});  // No key there so far: a count of 0.
    }
    // Consecutive stretches that are all free make one, named by the event that began it.
    for (const CountSpan& c : counts) {
      if (!free(c.count)) continue;
      if (!spans.empty() && spans.back().to_us == c.from_us) {
        spans.back().to_us = c.to_us;
        continue;
      }
      spans.push_back(FreeSpan{c.from_us, c.to_us, c.opened, c.kind, c.seq, c.id, c.count});
    }
    return spans;
  }

  LivenessKind WaitKind(const FactsPass& f) const {
    return f.protocol().semaphore() ? kWaitedWithFreePermits
           : f.protocol().latch()   ? kWaitedWhileOpen
                                    : kWaitedWhileFree;
  }

  // Looks for a stretch longer than B in [from_us, to_us] while `op` waited on `node` and the
  // lock was free there; records it (or, with `defer`, keeps it there). True if there is one.
  bool WaitFinding(const FactsPass& f, const AcquireRef& op, int node, int64_t from_us, int64_t to_us,
                   const std::vector<FreeSpan>& spans, SoleWait* defer = nullptr) {
    if (to_us - from_us <= bound_us_) return false;
    for (const FreeSpan& s : spans) {
      if (s.to_us <= from_us) continue;
      if (s.from_us >= to_us) break;
      const int64_t a = std::max(from_us, s.from_us);
      const int64_t b = std::min(to_us, s.to_us);
      if (b - a <= bound_us_) continue;
      const auto stretch = LongestUnimpaired(f, a, b, {node, f.ProcessOfThread(op.thread), f.sim_process()});
      if (stretch.second - stretch.first <= bound_us_) continue;
      const FindingKey key{stretch.first, op.invoke_seq, WaitKind(f), static_cast<int64_t>(op.id),
                           node, s.opened ? static_cast<int64_t>(s.opened_id) : kNone};
      Payload p;
      p.to_us = stretch.second;
      p.op = op;
      p.node = node;
      p.freed = s;
      if (defer != nullptr) {
        defer->key = key;
        defer->payload = std::move(p);
      } else {
        AddFinding(key, std::move(p));
      }
      return true;
    }
    return false;
  }

  // RedLock/MultiLock: the lock is free when it is free (and the node neither down, paused nor
  // losing replies) on at least a quorum of its nodes; nodes without lease events for it (so
  // far) count as free. An acquire waiting through such a stretch longer than B (not counting
  // its client's impairments or the whole system's) is a violation; one per acquire.
  void CheckQuorumWait(const FactsPass& f, const Op& op) {
    if (op.end_us - op.invoke_us <= bound_us_) return;
    std::vector<FreeSpan> spans;
    if (static_cast<size_t>(op.lock) < quorum_.size()) {
      const QuorumState& q = quorum_[op.lock];
      spans.assign(q.spans.begin(), q.spans.end());
      if (q.since_us >= 0) spans.push_back(FreeSpan{q.since_us, kForever});
    } else {
      spans.push_back(FreeSpan{});  // No node has had the lock yet.
    }
    for (const FreeSpan& span : spans) {
      const int64_t a = std::max(op.invoke_us, span.from_us);
      const int64_t b = std::min(op.end_us, span.to_us);
      if (b - a <= bound_us_) continue;
      const auto stretch = LongestUnimpaired(f, a, b, {f.ProcessOfThread(op.thread), f.sim_process()});
      if (stretch.second - stretch.first > bound_us_) {
        Payload p;
        p.to_us = stretch.second;
        p.op = AcquireRef::Ended(op);
        p.node = kNone;
        AddFinding(FindingKey{stretch.first, op.invoke_seq, kWaitedWhileFree, static_cast<int64_t>(op.id),
                              kNone, kNone},
                   std::move(p));
        return;
      }
    }
  }

  bool NodeFree(const FactsPass& f, int lock, int node) const {
    auto it = free_.find(Key(node, lock));
    const bool lease_free = it == free_.end() || it->second.free;
    const history::Process& p = f.processes()[node];
    bool impaired = false;
    for (int kind = 0; kind < history::kImpairmentKinds; ++kind) impaired |= p.impaired_since_us[kind] >= 0;
    return lease_free && !impaired;
  }

  // A node's lease or impairment changed at t_us. The lock's quorum-free state is worked out
  // once every change at t_us is known, with a node that stopped being free at t_us counted as
  // not free at t_us even if it is free again (as a sweep over the nodes' free intervals, ends
  // before starts, sees it).
  void QuorumChanged(const FactsPass& f, int lock, int node, int64_t t_us) {
    const std::vector<int>& seen = f.NodesOfLock(lock);
    if (std::find(seen.begin(), seen.end(), node) == seen.end()) return;
    if (quorum_pending_ && t_us > quorum_t_) ApplyQuorum(f);
    if (quorum_.size() <= static_cast<size_t>(lock)) quorum_.resize(lock + 1);
    if (!quorum_pending_) {
      for (QuorumState& q : quorum_) {
        q.free_before = q.free;
        std::fill(q.dipped.begin(), q.dipped.end(), 0);
      }
      quorum_pending_ = true;
      quorum_t_ = t_us;
    }
    QuorumState& q = quorum_[lock];
    auto it = std::find(q.nodes.begin(), q.nodes.end(), node);
    if (it == q.nodes.end()) {
      // Seen for the first time: until now it counted as free, as nodes not seen yet do.
      q.nodes.push_back(node);
      q.free.push_back(1);
      q.free_before.push_back(1);
      q.dipped.push_back(0);
      it = q.nodes.end() - 1;
    }
    const size_t i = static_cast<size_t>(it - q.nodes.begin());
    const bool now_free = NodeFree(f, lock, node);
    if (q.free[i] && !now_free) q.dipped[i] = 1;
    q.free[i] = now_free;
  }

  void ApplyQuorum(const FactsPass& f) {
    quorum_pending_ = false;
    const int quorum = f.protocol().quorum;
    for (QuorumState& q : quorum_) {
      const int unseen = std::max(0, f.protocol().nodes - static_cast<int>(q.nodes.size()));
      int during = unseen;
      int after = unseen;
      for (size_t i = 0; i < q.nodes.size(); ++i) {
        during += q.free_before[i] && !q.dipped[i] && q.free[i];
        after += q.free[i];
      }
      if (q.since_us >= 0 && during < quorum) {
        if (quorum_t_ > q.since_us) q.spans.push_back(FreeSpan{q.since_us, quorum_t_});
        q.since_us = -1;
      }
      if (q.since_us < 0 && after >= quorum) q.since_us = quorum_t_;
    }
  }

  // The first stretch of [a, b] longer than B during which none of `processes` was impaired (or
  // the longest one, if none is longer).
  std::pair<int64_t, int64_t> LongestUnimpaired(const FactsPass& f, int64_t a, int64_t b,
                                                std::initializer_list<int> processes) const {
    std::vector<ImpairedSpan> cuts;
    for (int p : processes) {
      for (const ImpairedSpan& s : f.ImpairedMerged(p, std::max(now_us_, b))) {
        if (s.to_us > a && s.from_us < b) cuts.push_back(s);
      }
    }
    std::sort(cuts.begin(), cuts.end(),
              [](const ImpairedSpan& x, const ImpairedSpan& y) { return x.from_us < y.from_us; });
    std::pair<int64_t, int64_t> best{a, a};
    int64_t cursor = a;
    auto consider = [&](int64_t end) {
      if (end - cursor > best.second - best.first) best = {cursor, end};
      return best.second - best.first > bound_us_;
    };
    for (const ImpairedSpan& cut : cuts) {
      if (cut.from_us > cursor && consider(std::min(cut.from_us, b))) return best;
      cursor = std::max(cursor, cut.to_us);
      if (cursor >= b) return best;
    }
    consider(b);
    return best;
  }

  // Time in [from_us, to_us] during which `process` was impaired.
  int64_t ImpairedWithin(const FactsPass& f, int process, int64_t from_us, int64_t to_us) const {
    int64_t total = 0;
    for (const ImpairedSpan& s : f.ImpairedMerged(process, std::max(now_us_, to_us))) {
      if (s.from_us >= to_us) break;
      total += std::max<int64_t>(0, std::min(to_us, s.to_us) - std::max(from_us, s.from_us));
    }
    return total;
  }

  // --- (c) ---

  void Stuck(const FactsPass& f, const Op& op) {
    const history::Process& p = f.processes()[f.ProcessOfThread(op.thread)];
    if (p.down || p.paused) return;  // Not a live process at the end.
    if (op.wait_us == kForever || op.wait_us > kForever - bound_us_ - op.invoke_us) return;
    if (op.invoke_us + op.wait_us + bound_us_ >= f.run_end_us()) return;
    Payload payload;
    payload.to_us = f.run_end_us();
    payload.op = AcquireRef::Of(op);
    AddFinding(FindingKey{op.invoke_us, op.invoke_seq, kStuck, static_cast<int64_t>(op.id), kNone, kNone},
               std::move(payload));
  }

  // --- (d) ---

  // Locks with owners: a key listing owner fields, none of them a thread's that believes it
  // holds the lock. Settled after every event that touched the lock, node by node.
  void SettleOrphans(const FactsPass& f, int lock, Seq seq, int64_t t_us) {
    if (f.protocol().ownerless()) return;
    LockState& l = LockOf(lock);
    for (auto& [node, key] : l.keys) {
      const bool orphan = key.present && key.listed &&
                          std::none_of(key.owners.begin(), key.owners.end(),
                                       [&](int t) { return Believing(t, lock) > 0; });
      if (orphan && !key.orphan) {
        Orphan& o = key.open;
        o.kind = kOrphanedLock;
        ResetSpan(&o.span);
        o.span.lock = lock;
        o.span.node = node;
        o.span.from_seq = seq;
        o.span.from_us = t_us;
        o.span.fields.assign(key.fields);
        o.span.owners.assign(key.owners.begin(), key.owners.end());
        o.window.Open(t_us, l.inflight, false);
        o.stories.clear();
        for (int owner : key.owners) o.stories.push_back(StoryOf(f, owner, lock));
      } else if (!orphan && key.orphan) {
        Orphan& o = key.open;
        o.span.to_seq = seq;
        o.span.to_us = t_us;
        o.ended = true;
        // Short ones need no more: the allowance only grows.
        o.span.impaired_us = ImpairedWithin(f, node, o.span.from_us, o.span.to_us);
        if (Lasted(o.span) > Allowed(LongestLeaseUs(f, lock))) {
          orphans_closing_.push_back(std::make_unique<Orphan>(std::move(o)));
        }
        o.ended = false;
      }
      key.orphan = orphan;
    }
  }

  // The owner's latest acquisition of the lock, as far as it is known now.
  OwnerStory StoryOf(const FactsPass&, int thread, int lock) {
    OwnerStory s;
    s.thread = thread;
    auto it = last_acquire_.find(Key(thread, lock));
    if (it == last_acquire_.end()) return s;
    s.has_acquire = true;
    s.acquire = it->second.ref;
    if (it->second.has_belief) {
      s.has_belief = true;
      s.belief = it->second.belief;
    }
    return s;
  }

  // A span made new, keeping the memory of its text and lists (orphan spans come and go with
  // every release).
  static void ResetSpan(OrphanSpan* span) {
    std::string fields = std::move(span->fields);
    std::vector<int> owners = std::move(span->owners);
    std::string detail = std::move(span->from_detail);
    *span = OrphanSpan{};
    fields.clear();
    owners.clear();
    detail.clear();
    span->fields = std::move(fields);
    span->owners = std::move(owners);
    span->from_detail = std::move(detail);
  }

  static int64_t Lasted(const OrphanSpan& span) { return span.to_us - span.from_us - span.impaired_us; }

  // An orphan whose span has ended: a candidate if it lasted longer than allowed so far. It is
  // judged at the end of the run, when the acquisitions it kept out have ended and (locks with
  // owners) the longest lease of the run is known.
  void JudgeOrphan(const FactsPass& f, std::unique_ptr<Orphan> o) {
    OrphanSpan& span = o->span;
    span.impaired_us = span.node == kNone ? 0 : ImpairedWithin(f, span.node, span.from_us, span.to_us);
    const int64_t allowed_us = o->kind == kOrphanedLock ? Allowed(LongestLeaseUs(f, span.lock)) : bound_us_;
    if (Lasted(span) <= allowed_us) return;  // It will never be one: the allowance only grows.
    orphan_candidates_.push_back(std::move(o));
  }

  // At the end of the run: a violation if it lasted longer than allowed.
  void FinalJudgeOrphan(const FactsPass& f, std::unique_ptr<Orphan> o) {
    OrphanSpan& span = o->span;
    if (o->kind == kOrphanedLock) {
      span.lease_us = LongestLeaseUs(f, span.lock);
      span.allowed_us = Allowed(span.lease_us);
    } else {
      span.allowed_us = bound_us_;
    }
    if (Lasted(span) > span.allowed_us) AddOrphan(std::move(o));
  }

  int64_t Allowed(int64_t lease_us) const {
    return lease_us > kForever - bound_us_ ? kForever : lease_us + bound_us_;
  }

  void AddOrphan(std::unique_ptr<Orphan> o) {
    orphan_violations_.push_back({o->span.lock, o->span.from_us, o->span.to_us});
    const FindingKey key{o->span.from_us, o->span.from_seq, static_cast<uint8_t>(o->kind),
                         static_cast<int64_t>(orphans_++), kNone, kNone};
    Payload p;
    p.to_us = o->span.to_us;
    p.orphan = std::move(o);
    AddFinding(key, std::move(p));
  }

  // Semaphores: permits taken on the node (P minus its count) beyond those that threads
  // believing they hold permits hold, for longer than B. Latches: a count above the count-downs
  // that threads which passed the latch can still make, from the crash of such a thread, for
  // longer than B. Latches whose clients have roles: a count above what worker threads that
  // passed it still owe while no counting-down process can go on.
  void SettleSynchronizers(const FactsPass& f, const history::Event& e) {
    const bool semaphore = f.protocol().semaphore();
    const bool roles = Roles(f);
    std::vector<int> touched = sync_touched_;
    if (sync_all_) {
      touched.clear();
      for (size_t l = 0; l < sync_.size(); ++l) touched.push_back(static_cast<int>(l));
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    const bool counter_left = CounterLeft(f);
    for (int l : touched) {
      if (static_cast<size_t>(l) >= sync_.size()) continue;
      SyncState& st = sync_[l];
      const int64_t excess = st.count < 0 ? 0
                             : semaphore  ? f.protocol().permits + st.resized - st.count - st.held_total
                                          : st.count - st.held_total;
      // Without roles, a latch count nobody has begun to count down waits for counters the
      // history cannot see; only a crash of a thread that would have counted it down orphans
      // it. With roles the history names the counters.
      const auto crashed = crashed_holders_.find(l);
      const bool crashed_here = crash_point_ && crashed != crashed_holders_.end() && !crashed->second.empty();
      const bool was_orphan = st.open != nullptr;
      const bool orphan = excess > 0 && (roles ? !counter_left : semaphore || was_orphan || crashed_here);
      if (orphan && !was_orphan) {
        auto o = std::make_unique<Orphan>();
        o->kind = semaphore ? kLeakedPermits : kOrphanedLatch;
        OrphanSpan& span = o->span;
        span.lock = l;
        span.node = st.node;
        span.from_seq = e.seq;
        span.from_us = e.t_us;
        span.count = st.count;
        span.held = st.held_total;
        span.by_role = roles;
        if (crashed_here) span.owners = crashed->second;
        span.from_type = e.type;
        span.from_op = e.op;
        span.from_process = e.process == history::names::kNone ? f.sim_process() : f.ProcessNamed(e.process);
        span.from_thread = e.thread;
        span.from_detail = history::DetailText(e);
        o->window.Open(e.t_us, LockOf(l).inflight, roles);
        st.open = std::move(o);
      } else if (!orphan && was_orphan) {
        st.open->span.to_seq = e.seq;
        st.open->span.to_us = e.t_us;
        st.open->ended = true;
        orphans_closing_.push_back(std::move(st.open));
      }
      if (orphan) st.open->span.units = std::max(st.open->span.units, excess);
    }
    sync_touched_.clear();
    sync_all_ = false;
    crash_point_ = false;
    crashed_holders_.clear();
  }

  bool CounterLeft(const FactsPass& f) const {
    return std::any_of(counters_.begin(), counters_.end(), [&](const auto& c) {
      return c.second.up && c.second.done < f.processes()[c.first].role_threads;
    });
  }

  // --- (e) ---

  void StartGap(const FactsPass&, int lock) {
    LockState& l = LockOf(lock);
    Unobtainable& g = l.gap;
    g.lock = lock;
    g.free_from_us = l.free_from_us;
    g.free_to_us = 0;
    g.to_run_end = false;
    g.candidates.clear();
    g.has_trier = false;
    g.try_us = 0;
    g.deadline_us = 0;
    g.excused_us = 0;
    g.lock_nodes.clear();
    g.window.Clear();
    g.in_flight_at_end = false;
    g.max_end_before_us = -1;
    l.gap_open = true;
    l.gap_looked = false;
  }

  // Whether no acquisition's end can change the candidate any more: its window is closed and
  // holds no acquisition in flight, and its candidates and trier have ended.
  static bool GapSettled(const Unobtainable& g) {
    return (!g.window.active() || (g.window.closed() && g.window.nothing_pending())) &&
           g.candidates.empty() && (!g.has_trier || g.trier.ended);
  }

  void AddGapCandidate(std::unique_ptr<Unobtainable> u) {
    const bool settled = GapSettled(*u);
    gap_candidates_.push_back(std::move(u));
    if (!settled) gap_unsettled_.push_back(gap_candidates_.size() - 1);
  }

  void GapOpEnded(Unobtainable& g, const Op& op) {
    if (g.window.active()) g.window.Ended(op);
    if (g.has_trier && g.trier.id == op.id) g.trier.End(op);
    if (auto c = std::find(g.candidates.begin(), g.candidates.end(), op.id); c != g.candidates.end()) {
      g.candidates.erase(c);
      if (!g.has_trier || op.end_us > g.trier.end_us ||
          (op.end_us == g.trier.end_us && op.id < g.trier.id)) {
        g.has_trier = true;
        g.trier = AcquireRef::Ended(op);
      }
    }
  }

  // Stretches when fewer than `majority` of `nodes` were unimpaired, or "sim" cut everyone off;
  // disjoint and sorted.
  std::vector<ImpairedSpan> ExcusedSpans(const FactsPass& f, const std::vector<int>& nodes, int majority,
                                         int64_t now_us) const {
    std::vector<std::pair<int64_t, int>> deltas;  // (t, +1 impaired | -1 recovered)
    for (int node : nodes) {
      for (const ImpairedSpan& s : f.ImpairedMerged(node, now_us)) {
        deltas.emplace_back(s.from_us, +1);
        deltas.emplace_back(s.to_us, -1);
      }
    }
    std::sort(deltas.begin(), deltas.end());
    std::vector<ImpairedSpan> spans = f.ImpairedMerged(f.sim_process(), now_us);
    int impaired = 0;
    int64_t since = -1;
    for (const auto& [t, d] : deltas) {
      impaired += d;
      const bool short_of_majority = static_cast<int>(nodes.size()) - impaired < majority;
      if (short_of_majority && since < 0) {
        since = t;
      } else if (!short_of_majority && since >= 0) {
        if (t > since) spans.push_back({since, t, history::kDown});
        since = -1;
      }
    }
    if (since >= 0) spans.push_back({since, kForever, history::kDown});
    std::sort(spans.begin(), spans.end(),
              [](const ImpairedSpan& a, const ImpairedSpan& b) { return a.from_us < b.from_us; });
    std::vector<ImpairedSpan> merged;
    for (const ImpairedSpan& s : spans) {
      if (!merged.empty() && s.from_us <= merged.back().to_us) {
        merged.back().to_us = std::max(merged.back().to_us, s.to_us);
      } else {
        merged.push_back(s);
      }
    }
    return merged;
  }

  // The moment `allowed_us` of time not in `excused` has passed since from_us (kForever if
  // never); *excused_us gets the excused time skipped on the way.
  static int64_t Deadline(const std::vector<ImpairedSpan>& excused, int64_t from_us, int64_t allowed_us,
                          int64_t* excused_us) {
    assert(allowed_us >= 0 && from_us >= 0);
    int64_t t = from_us;
    int64_t left = allowed_us;
    *excused_us = 0;
    for (const ImpairedSpan& s : excused) {
      if (s.to_us <= t) continue;
      if (s.from_us > t) {
        if (s.from_us - t >= left) return t + left;
        left -= s.from_us - t;
        t = s.from_us;
      }
      if (s.to_us == kForever) return kForever;
      *excused_us += s.to_us - t;
      t = s.to_us;
    }
    return left > kForever - t ? kForever : t + left;
  }

  // Whether the gap [from, to] is one (so far): someone tried, and no acquisition succeeded
  // by the deadline while someone still tried after it. Fills the deadline.
  bool Unobtained(const FactsPass& f, Unobtainable& u, int64_t lease_us, int64_t now_us) {
    const int n = std::max(1, f.protocol().nodes);
    u.nodes = n;
    u.majority = history::MajorityOf(n);
    u.lease_us = lease_us;
    const int64_t allowed_us = lease_us > kForever - bound_us_ ? kForever : lease_us + bound_us_;
    const std::vector<ImpairedSpan> excused = ExcusedSpans(f, u.lock_nodes, u.majority, now_us);
    u.deadline_us = Deadline(excused, u.try_us, allowed_us, &u.excused_us);
    if (u.deadline_us >= u.free_to_us) return false;
    // Someone still tried after the deadline (in flight then, or invoked before the gap's end).
    return u.in_flight_at_end || u.max_end_before_us > u.deadline_us;
  }

  // Nobody held the lock from the gap's start to to_us: a candidate if someone was trying and
  // no acquisition succeeded by the deadline while someone still tried after it.
  void EndGap(const FactsPass& f, int lock, int64_t to_us, bool to_run_end) {
    LockState& l = LockOf(lock);
    l.gap_open = false;
    Unobtainable& u = l.gap;
    if (f.protocol().ownerless() || to_us <= u.free_from_us) return;
    // The first acquisition in flight when the gap began, or invoked in (from, to).
    if (u.candidates.empty() && (!u.has_trier || u.trier.invoke_us >= to_us)) return;
    if (!u.candidates.empty()) u.try_us = u.free_from_us;
    u.lock = lock;
    u.free_to_us = to_us;
    u.to_run_end = to_run_end;
    // Whether someone still tried after a deadline before to_us: an acquisition invoked before
    // to_us still in flight then, or one that ended after the deadline.
    for (const AcquireRef& r : l.inflight) u.in_flight_at_end |= r.invoke_us < to_us;
    u.in_flight_at_end |= to_run_end && l.pending_at_end;
    u.max_end_before_us = l.max_end_ended_us;
    u.lock_nodes = f.NodesOfLock(lock);
    std::sort(u.lock_nodes.begin(), u.lock_nodes.end());
    if (!u.lock_nodes.empty() &&
        !Unobtained(f, u, LongestLeaseUs(f, lock), to_run_end ? f.run_end_us() : to_us)) {
      return;
    }
    // A candidate: judged again at the end, with the longest lease of the run, after (a)
    // and (d). Its window takes acquisitions invoked at exactly to_us until time moves on.
    auto candidate = std::make_unique<Unobtainable>(std::move(u));
    if (to_run_end) {
      AddGapCandidate(std::move(candidate));
    } else {
      gaps_closing_.push_back(std::move(candidate));
    }
  }

  bool Explained(int lock, int64_t from_us, int64_t to_us) const {
    for (const Interval& i : crashed_violations_) {
      if (i.lock == lock && i.from_us < to_us && i.to_us > from_us) return true;
    }
    for (const Interval& i : orphan_violations_) {
      if (i.lock == lock && i.from_us < to_us && i.to_us > from_us) return true;
    }
    return false;
  }

  void JudgeUnobtainable(const FactsPass& f, std::unique_ptr<Unobtainable> u) {
    // Locks that never had a lease event are not judged; a gap that ended before the first one
    // is judged with the nodes the lock had in the end.
    if (f.NodesOfLock(u->lock).empty()) return;
    if (u->lock_nodes.empty()) {
      u->lock_nodes = f.NodesOfLock(u->lock);
      std::sort(u->lock_nodes.begin(), u->lock_nodes.end());
    }
    if (!Unobtained(f, *u, LongestLeaseUs(f, u->lock), f.run_end_us())) return;
    if (Explained(u->lock, u->try_us, u->free_to_us)) return;
    const FindingKey key{u->try_us, u->trier.invoke_seq, kUnobtainable, static_cast<int64_t>(unobtainable_++),
                         kNone, kNone};
    Payload p;
    p.to_us = u->free_to_us;
    p.unobtainable = std::move(u);
    AddFinding(key, std::move(p));
  }

  // --- explanations ---

  Violation Explain(const Narrator& n, const FindingKey& key, const Payload& p) const {
    switch (key.kind) {
      case kNoTakeover: return ExplainNoTakeover(n, p);
      case kWaitedWhileFree:
      case kWaitedWithFreePermits:
      case kWaitedWhileOpen: return ExplainWait(n, key, p);
      case kStuck: return ExplainStuck(n, p);
      case kUnobtainable: return ExplainUnobtainable(n, p);
      default: return ExplainOrphan(n, p);
    }
  }

  Violation ExplainNoTakeover(const Narrator& n, const Payload& p) const {
    const CrashedHold& hold = *p.hold;
    const AcquireRef& trier = hold.trier;
    Violation v;
    v.kind = "no_takeover_after_crash";
    v.to_us = p.to_us;
    v.events = {hold.crash_seq, trier.invoke_seq};
    std::string holders;
    int64_t held_since_us = hold.crash_us;
    for (const Span& belief : hold.beliefs) {
      v.threads.push_back(n.Thread(belief.thread));
      v.events.push_back(belief.start_seq);
      held_since_us = std::min(held_since_us, belief.start_us);
      holders += (holders.empty() ? "" : " and ") + n.Thread(belief.thread);
    }
    v.threads.push_back(n.Thread(trier.thread));
    v.explanation = n.ProcessName(hold.process) + " crashed at " + Seconds(hold.crash_us) + " while " +
                    holders + " held " + n.Lock(hold.lock) + " (lease " + Seconds(hold.lease_us) +
                    (hold.lease_is_default ? ", the watchdog's" : "") +
                    "), so the lock should have been free by " + Seconds(hold.crash_us + hold.lease_us) +
                    ". " + n.Thread(trier.thread) + " was trying to acquire it from " +
                    Seconds(hold.try_us) + ", but no acquisition succeeded ";
    if (hold.has_first_ok) {
      v.events.push_back(hold.first_ok.end_seq);
      v.explanation += "until " + Seconds(hold.first_ok.end_us) + " (" + n.Thread(hold.first_ok.thread) + ")";
    } else {
      v.explanation += "before the run ended at " + Seconds(n.facts().run_end_us());
    }
    const int64_t deadline_us = hold.try_us + bound_us_;
    v.explanation += ", later than " + Seconds(deadline_us) + " (" + Seconds(hold.try_us) +
                     " + the liveness bound of " + Seconds(bound_us_) + ").";
    std::string losses;
    for (size_t i = 0; i < hold.beliefs.size(); ++i) {
      losses += n.Losses(hold.beliefs[i].thread, hold.losses[i], &v.events);
    }
    v.explanation += losses.empty() ? " No node recorded the lease as expired or lost." : losses;
    v.explanation += n.Faults(held_since_us, p.to_us, hold.crash_us + hold.lease_us,
                              {hold.process, n.ProcessOfThread(trier.thread)}, &v.events);
    return v;
  }

  Violation ExplainWait(const Narrator& n, const FindingKey& key, const Payload& p) const {
    const AcquireRef& op = p.op;
    const std::string& who = n.Thread(op.thread);
    const history::ProtocolInfo& protocol = n.facts().protocol();
    Violation v;
    v.to_us = p.to_us;
    v.threads = {who};
    v.events = {op.invoke_seq};
    const std::string where = p.node != kNone ? n.ProcessName(p.node)
                                              : "at least " + std::to_string(protocol.quorum) + " of its " +
                                                    std::to_string(protocol.nodes) + " nodes (a quorum)";
    const std::string stretch = " from " + Seconds(key.from_us) + " to " + Seconds(p.to_us) + ": " +
                                Seconds(p.to_us - key.from_us) + ", longer than the liveness bound of " +
                                Seconds(bound_us_) + ".";
    if (key.kind == kWaitedWithFreePermits || key.kind == kWaitedWhileOpen) {
      const bool semaphore = key.kind == kWaitedWithFreePermits;
      v.kind = semaphore ? "waited_with_free_permits" : "waited_while_open";
      v.explanation = who + " was waiting to " + (semaphore ? "acquire " : "await ") + n.Lock(op.lock) + " (" +
                      op.DetailText() + ", invoked at " + Seconds(op.invoke_us) + ") while " +
                      (semaphore ? "the semaphore had enough free permits" : "the latch was open (count 0)") +
                      " on " + where + stretch;
      if (p.freed.opened) {
        v.events.push_back(p.freed.opened_seq);
        v.explanation += semaphore ? " Its count there became " + std::to_string(p.freed.count) + " at " +
                                         Seconds(p.freed.from_us) + "."
                                   : std::string(" The latch's count there ") +
                                         (p.freed.opened_kind == LeaseKind::kReleased
                                              ? "reached 0 (the key was deleted)"
                                              : "became " + std::to_string(p.freed.count)) +
                                         " at " + Seconds(p.freed.from_us) + ".";
      } else if (!semaphore) {
        v.explanation += " The latch had no count there since the run began.";
      }
      v.explanation += semaphore ? " A waiter is woken by the message a release publishes; it missed it, "
                                   "or none was published."
                                 : " An awaiting thread is woken by the message the count-down to 0 "
                                   "publishes; it missed it, or none was published.";
      if (op.end_seq != kOpenSeq) {
        v.events.push_back(op.end_seq);
        v.explanation += " The " + std::string(semaphore ? "acquire" : "await") + " ended in " +
                         std::string(history::OutcomeName(op.outcome)) + " at " + Seconds(op.end_us) + ".";
      } else {
        v.explanation += std::string(" The ") + (semaphore ? "acquire" : "await") +
                         " was still waiting when the run ended.";
      }
      v.explanation += n.Faults(op.invoke_us, p.to_us, key.from_us, {n.ProcessOfThread(op.thread)}, &v.events);
      return v;
    }
    v.kind = "waited_while_free";
    v.explanation = who + " was waiting to acquire " + n.Lock(op.lock) + " (" + op.DetailText() +
                    ", invoked at " + Seconds(op.invoke_us) + ") while the lock was free on " + where +
                    stretch;
    // (A quorum's free stretch has no single lease event behind it.)
    if (p.node != kNone && p.freed.opened) {
      v.events.push_back(p.freed.opened_seq);
      const char* how = p.freed.opened_kind == LeaseKind::kExpired ? "expired"
                        : p.freed.opened_kind == LeaseKind::kLost  ? "was lost"
                                                                   : "was released";
      v.explanation += " The lock " + std::string(how) + " there at " + Seconds(p.freed.from_us) + ".";
    } else if (p.node != kNone) {
      v.explanation += " The lock had not been taken there since the run began.";
    }
    if (op.end_seq != kOpenSeq) {
      v.events.push_back(op.end_seq);
      v.explanation += " The acquire ended in " + std::string(history::OutcomeName(op.outcome)) + " at " +
                       Seconds(op.end_us) + ".";
    } else {
      v.explanation += " The acquire was still waiting when the run ended.";
    }
    v.explanation += n.Faults(op.invoke_us, p.to_us, key.from_us, {n.ProcessOfThread(op.thread)}, &v.events);
    return v;
  }

  Violation ExplainStuck(const Narrator& n, const Payload& p) const {
    const AcquireRef& op = p.op;
    const std::string& who = n.Thread(op.thread);
    const int64_t end = n.facts().run_end_us();
    Violation v;
    v.kind = "stuck";
    v.to_us = p.to_us;
    v.threads = {who};
    v.events = {op.invoke_seq};
    const std::string detail = op.DetailText();
    v.explanation = who + "'s " + std::string(n.facts().names().Str(op.name)) + " of " + n.Lock(op.lock) +
                    (detail.empty() ? "" : " (" + detail + ")") + ", invoked at " +
                    Seconds(op.invoke_us) + ", never completed: the run ended at " + Seconds(end) + ", " +
                    Seconds(end - op.invoke_us) + " later, more than its wait (" + Seconds(op.wait_us) +
                    ") plus the liveness bound (" + Seconds(bound_us_) + ").";
    v.explanation += n.Faults(op.invoke_us, end, op.invoke_us + op.wait_us + bound_us_,
                              {n.ProcessOfThread(op.thread)}, &v.events);
    return v;
  }

  // What one owner of an orphaned key was doing: why it did not believe it held the lock.
  std::string Story(const Narrator& n, const OwnerStory& s, std::vector<Seq>* events, int64_t* context_us) const {
    const std::string& who = n.Thread(s.thread);
    if (!s.has_acquire) return who + " never acquired it before then";
    const AcquireRef& op = s.acquire;
    *context_us = std::min(*context_us, op.invoke_us);
    events->push_back(op.invoke_seq);
    if (op.end_seq != kOpenSeq) events->push_back(op.end_seq);
    if (op.outcome == Outcome::kOk) {
      if (s.has_belief) {
        return who + " had acquired it at " + Seconds(s.belief.start_us) + " and believed it held it " +
               n.Until(s.belief);
      }
      return who + "'s acquire of it succeeded at " + Seconds(op.end_us);
    }
    const std::string invoked = who + "'s acquire invoked at " + Seconds(op.invoke_us);
    switch (op.outcome) {
      case Outcome::kInfo:
        return invoked + " ended with an unknown outcome at " + Seconds(op.end_us) + " (" + op.end_detail +
               "), so it never believed it held the lock";
      case Outcome::kFail:
        return invoked + " failed at " + Seconds(op.end_us) + ", so it never believed it held it";
      case Outcome::kCrashed: return invoked + " was cut short by its process's crash at " + Seconds(op.end_us);
      default: return invoked + " was still in flight";
    }
  }

  Violation ExplainOrphan(const Narrator& n, const Payload& p) const {
    const Orphan& orphan = *p.orphan;
    const OrphanSpan& span = orphan.span;
    const history::FactsPass& f = n.facts();
    Violation v;
    v.to_us = span.to_us;
    v.events = {span.from_seq};
    if (span.to_seq != kOpenSeq) v.events.push_back(span.to_seq);
    const std::string lasted =
        "from " + Seconds(span.from_us) + (span.to_seq == kOpenSeq ? " until the run ended at " : " to ") +
        Seconds(span.to_us) + " (" + Seconds(span.to_us - span.from_us) +
        (span.impaired_us > 0 ? ", " + Seconds(span.impaired_us) + " of it with the node impaired, not counted"
                              : "") +
        ")";
    const std::string where = span.node == kNone ? "" : " on " + n.ProcessName(span.node);
    const size_t denied = orphan.window.denied();
    const std::string starved = denied == 0 ? ""
                                            : " Meanwhile " + Count(denied, "acquisition") + " of it " +
                                                  (denied == 1 ? "was" : "were") + " refused or left waiting.";
    std::vector<int> clients;
    int64_t context_us = span.from_us;  // Faults from here on are named.
    if (orphan.kind == kOrphanedLock) {
      v.kind = "orphaned_lock";
      std::string stories;
      for (const OwnerStory& s : orphan.stories) {
        v.threads.push_back(n.Thread(s.thread));
        clients.push_back(n.ProcessOfThread(s.thread));
        stories += (stories.empty() ? "" : "; ") + Story(n, s, &v.events, &context_us);
      }
      v.explanation = "The key of " + n.Lock(span.lock) + where + " was held by " + Quoted(span.fields) + " " +
                      lasted + ", but nobody who believed it held the lock was among its owners: ";
      v.explanation += stories.empty()
                           ? "the fields belong to no client running then (a crashed or restarted incarnation)"
                           : stories;
      v.explanation += ". That is longer than the longest lease any acquisition asked for (" +
                       Seconds(span.lease_us) + ") plus the liveness bound (" + Seconds(bound_us_) +
                       "): an orphaned lock, which nobody else can take until its key goes" +
                       (span.to_seq == kOpenSeq ? ", and it had not gone when the run ended." : ".");
    } else if (orphan.kind == kLeakedPermits) {
      v.kind = "leaked_permits";
      v.explanation = Count(static_cast<size_t>(span.units), "permit") + " of " + n.Lock(span.lock) + " (" +
                      Count(static_cast<size_t>(f.protocol().permits), "permit") + " in all) " +
                      (span.units == 1 ? "was" : "were") + " taken" + where +
                      " but held by no thread that believed it held one, " + lasted +
                      ", longer than the liveness bound (" + Seconds(bound_us_) +
                      "). A semaphore's permits have no lease: one taken by a process that crashed, or by an "
                      "acquire whose reply was lost, never comes back.";
    } else if (span.by_role) {
      v.kind = "orphaned_latch";
      v.explanation = "The count of latch " + n.Lock(span.lock) + where + " stayed at " +
                      std::to_string(span.count) + " " + lasted + ", longer than the liveness bound (" +
                      Seconds(bound_us_) + "), while no count_down client could count it down any more" +
                      (span.held > 0 ? " and worker threads that had passed it owed only " +
                                           Count(static_cast<size_t>(span.held), "count-down")
                                     : std::string()) +
                      ": the latch can never open.";
    } else {
      v.kind = "orphaned_latch";
      v.explanation = "The count of latch " + n.Lock(span.lock) + where + " stayed at " +
                      std::to_string(span.count) + ", above the " + std::to_string(span.held) + " count-down" +
                      (span.held == 1 ? "" : "s") + " still owed by threads that had passed it, " + lasted +
                      ", longer than the liveness bound (" + Seconds(bound_us_) +
                      "): a thread that would have counted it down crashed first, so the latch can never open.";
    }
    if (orphan.kind != kOrphanedLock) {
      // What began it: a crash of holders, a release, or the node's count changing.
      const std::string from_process = n.ProcessName(span.from_process);
      const std::string from_detail = span.from_detail.empty() ? "0" : span.from_detail;
      if (span.by_role && span.owners.empty()) {
        std::string counters;
        size_t n_counters = 0;
        for (const history::Process& proc : f.processes()) {
          if (proc.role != Role::kCountDown) continue;
          ++n_counters;
          counters += (counters.empty() ? "" : ", ") + std::string(f.names().Str(proc.name));
        }
        const std::string their =
            n_counters == 0 ? "The run has no count_down client" : "Its count_down clients: " + counters;
        if (span.from_type == history::EventType::kFault && span.from_op == history::names::kCrash) {
          v.threads.push_back(from_process);
          v.explanation += " It began when " + from_process +
                           ", the last count_down client still counting, crashed at " + Seconds(span.from_us) +
                           "; nobody counts down for a crashed client.";
        } else if (span.from_type == history::EventType::kNote && span.from_op == history::names::kDone) {
          const std::string thread = from_process + ".t" + std::to_string(span.from_thread);
          v.threads.push_back(thread);
          v.explanation += " It began when " + thread + ", the last thread still counting down, stopped at " +
                           Seconds(span.from_us) + " (" + span.from_detail + ").";
        } else {
          v.explanation += " It began at " + Seconds(span.from_us) + ", when " + from_process +
                           "'s count became " + from_detail + ".";
        }
        v.explanation += " " + their + ".";
      } else if (!span.owners.empty()) {
        std::string holders;
        for (int t : span.owners) {
          v.threads.push_back(n.Thread(t));
          holders += (holders.empty() ? "" : " and ") + n.Thread(t);
        }
        clients.push_back(n.ProcessOfThread(span.owners.front()));
        v.explanation += " It began when " + from_process + " crashed at " + Seconds(span.from_us) + " while " +
                         holders +
                         (orphan.kind == kLeakedPermits
                              ? " held permits; nothing gives them back."
                              : " had passed the latch and not yet counted down; nobody counts down for a "
                                "crashed client.");
      } else if (span.from_type == history::EventType::kLease) {
        v.explanation += " It began at " + Seconds(span.from_us) + ", when " + from_process + "'s count became " +
                         from_detail + " without a successful acquisition taking the permits.";
      } else if (span.from_type == history::EventType::kInvoke && span.from_thread >= 0) {
        v.explanation += " It began when " + from_process + ".t" + std::to_string(span.from_thread) +
                         " began to release at " + Seconds(span.from_us) +
                         " and the node's count did not go back up.";
      }
    }
    v.explanation += starved;
    // The waiters it kept out, after the threads behind it.
    if (orphan.window.active()) {
      for (const auto& [seq, thread] : orphan.window.Named()) {
        if (v.threads.size() >= kMaxOrphanThreadsNamed) break;
        const std::string& name = n.Thread(thread);
        if (std::find(v.threads.begin(), v.threads.end(), name) != v.threads.end()) continue;
        v.threads.push_back(name);
        v.events.push_back(seq);
        clients.push_back(n.ProcessOfThread(thread));
      }
    }
    if (v.threads.empty()) v.threads.push_back(n.ProcessName(span.node == kNone ? f.sim_process() : span.node));
    std::sort(clients.begin(), clients.end());
    clients.erase(std::unique(clients.begin(), clients.end()), clients.end());
    v.explanation += n.Faults(context_us, span.to_us, span.from_us, clients, &v.events);
    return v;
  }

  Violation ExplainUnobtainable(const Narrator& n, const Payload& p) const {
    const Unobtainable& u = *p.unobtainable;
    const AcquireRef& trier = u.trier;
    const history::FactsPass& f = n.facts();
    Violation v;
    v.kind = "unobtainable";
    v.to_us = u.free_to_us;
    v.threads = {n.Thread(trier.thread)};
    v.events = {trier.invoke_seq};
    std::vector<int> clients = {n.ProcessOfThread(trier.thread)};
    v.explanation = "Nobody held " + n.Lock(u.lock) + " (no thread believed it held it) from " +
                    Seconds(u.free_from_us) + (u.to_run_end ? " until the run ended at " : " to ") +
                    Seconds(u.free_to_us) + ". " + n.Thread(trier.thread) + " was trying to acquire it from " +
                    Seconds(u.try_us);
    if (trier.outcome == Outcome::kOk) {
      v.events.push_back(trier.end_seq);
      v.explanation += "; that acquire succeeded only at " + Seconds(trier.end_us);
    } else if (trier.end_seq != kOpenSeq) {
      v.events.push_back(trier.end_seq);
      v.explanation += "; that acquire ended in " + std::string(history::OutcomeName(trier.outcome)) + " at " +
                       Seconds(trier.end_us);
    } else {
      v.explanation += "; that acquire was still waiting when the run ended";
    }
    const size_t others = u.window.others();
    if (others > 0) v.explanation += ", and " + Count(others, "later acquisition") + " did not succeed either";
    v.explanation += ". No acquisition succeeded by " + Seconds(u.deadline_us) + ": " + Seconds(u.try_us) +
                     " + the longest lease any acquisition asked for (" + Seconds(u.lease_us) +
                     ") + the liveness bound (" + Seconds(bound_us_) + ")";
    if (u.excused_us > 0) {
      v.explanation += " + " + Seconds(u.excused_us) + " with fewer than " + std::to_string(u.majority) +
                       " of its " + std::to_string(u.nodes) + " nodes up";
    }
    v.explanation += u.nodes == 1 ? ", while its node was up."
                                  : ", while at least " + std::to_string(u.majority) + " of its " +
                                        std::to_string(u.nodes) + " nodes were up.";
    if (f.protocol().quorum > u.majority) {
      v.explanation += " " + f.protocol().kind + " needs every one of its " + std::to_string(f.protocol().quorum) +
                       " nodes (it tolerates no failed member), so a node that is down or cut off makes the "
                       "lock unobtainable although a majority is up.";
    }
    // The lock's nodes that were impaired meanwhile.
    std::string impaired;
    for (int node : u.lock_nodes) {
      for (const ImpairedSpan& s : f.ImpairedSpans(node, f.run_end_us())) {
        if (s.to_us <= u.try_us || s.from_us >= u.free_to_us) continue;
        impaired += (impaired.empty() ? "" : "; ") + n.ProcessName(node) + " " + history::ImpairmentName(s.kind) +
                    " from " + Seconds(s.from_us) +
                    (s.to_us >= f.run_end_us() ? " to the end" : " to " + Seconds(s.to_us));
      }
    }
    if (!impaired.empty()) v.explanation += " Meanwhile: " + impaired + ".";
    // The waiters kept out.
    if (u.window.active()) {
      for (const auto& [seq, thread] : u.window.Named()) {
        if (v.threads.size() >= kMaxOrphanThreadsNamed) break;
        const std::string& name = n.Thread(thread);
        if (std::find(v.threads.begin(), v.threads.end(), name) != v.threads.end()) continue;
        v.threads.push_back(name);
        clients.push_back(n.ProcessOfThread(thread));
      }
    }
    v.explanation += n.Faults(u.free_from_us, u.free_to_us, u.try_us, clients, &v.events);
    return v;
  }

  const int64_t bound_us_;
  Findings<Payload> found_;
  int64_t now_us_ = 0;
  std::vector<LockState> locks_;
  std::unordered_map<uint64_t, int> believing_;  // (thread, lock) -> open beliefs
  std::vector<int> touched_;                     // Locks the current event touched (orphans).
  std::unordered_map<uint64_t, LastAcquire> last_acquire_;  // (thread, lock)
  // (a)
  std::vector<CrashedHold*> awaiting_free_;  // Sorted by free_us.
  std::vector<std::unique_ptr<CrashedHold>> holds_;
  std::vector<CrashedHold*> holds_waiting_invoke_;
  std::vector<Interval> crashed_violations_;
  // (b)
  std::unordered_map<uint64_t, FreeState> free_;  // (node, lock)
  std::unordered_map<uint64_t, CountState> counts_;  // (node, lock): semaphores and latches
  std::vector<QuorumState> quorum_;
  bool quorum_pending_ = false;
  int64_t quorum_t_ = 0;
  std::vector<SoleWait> sole_waits_;
  // (d)
  std::vector<std::unique_ptr<Orphan>> orphans_closing_;    // Ended; windows still open.
  std::vector<std::unique_ptr<Orphan>> orphan_candidates_;  // Locks with owners, for the end.
  std::vector<Interval> orphan_violations_;
  uint64_t orphans_ = 0;
  std::vector<SyncState> sync_;
  std::vector<int> sync_touched_;
  bool sync_all_ = false;
  bool crash_point_ = false;
  std::map<int, std::vector<int>> crashed_holders_;  // Lock -> threads whose holds a crash ended.
  std::map<int, Counter> counters_;                  // Counting-down processes.
  // (e)
  std::vector<std::unique_ptr<Unobtainable>> gaps_closing_;
  std::vector<std::unique_ptr<Unobtainable>> gap_candidates_;
  std::vector<size_t> gap_unsettled_;  // Indices into gap_candidates_ not GapSettled yet.
  uint64_t unobtainable_ = 0;
};

}  // namespace

std::unique_ptr<PropertyChecker> MakeLiveness(const CheckOptions& options) {
  return std::make_unique<Liveness>(options);
}

}  // namespace lockstep::check
