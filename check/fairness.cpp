// fairness: a fair lock grants in queue order, and each exception has its reason.
//
// Fair locks only (kind fairlock; never violated for other kinds). A waiter is an acquisition
// (not a reentry) whose first "acquire" exec on the node (error replies skipped) returned a
// number: it queued there, and the order of those execs is the queue order. An acquisition whose
// first "acquire" (or tryLock()'s "try_acquire") exec returned nil was granted at once. An exec
// belongs to the thread it names, else to the only thread of its client acquiring the lock then.
// Exempt waiters, each listed as an observation with its reason: "timed_out" (the acquire ended
// fail), "unknown_outcome" (info), "crashed", "purged" (it waited longer than the fair wait
// timeout W after queueing: W from the protocol note's fair_wait_timeout=, else
// CheckOptions::fair_wait_timeout_us, 300 s), and "unattributed" (an exec without a thread could
// be any of several threads of its client, so it is unknown whether or where they queued).
// Every grant (acquire ok) of a non-exempt acquisition with a known arrival is judged: if a
// non-exempt waiter that queued before the granted one arrived (its queueing exec, or the exec
// that granted it at once) is still waiting, the grant is one violation: "out_of_order" if the
// granted thread had queued, "barged" if it was granted at once. It names the passed-over
// waiter (the earliest) first, then the granted thread, with their queue positions (1 + the
// waiters still queued ahead of them when they queued); it lasts from the grant until the
// passed-over waiter is granted (or the run ends).
//
// Online: whether a waiter is exempt is known only when it stops waiting, so a grant with
// waiters queued ahead of it is judged once each of them has ended (at the latest when the run
// does).
#include <algorithm>
#include <cassert>
#include <unordered_map>

#include "check/property.h"

namespace lockstep::check {

namespace {

using history::FactsPass;
using history::Op;
using history::Outcome;

enum FairnessKind : uint8_t { kOutOfOrder, kBarged };
enum ExemptKind : uint8_t {
  kTimedOut, kUnknownOutcome, kCrashedWaiter, kPurged, kUnattributed, kNodeReentry
};

const char* ExemptKindName(uint8_t kind) {
  switch (kind) {
    case kTimedOut: return "timed_out";
    case kUnknownOutcome: return "unknown_outcome";
    case kCrashedWaiter: return "crashed";
    case kPurged: return "purged";
    case kUnattributed: return "unattributed";
    case kNodeReentry: return "node_reentry";
    default: return "?";
  }
}

// A first acquisition (not a reentry) of the exclusive lock.
bool Judged(const Op& op) {
  return op.kind == history::OpKind::kAcquire && !op.shared && op.count_before == 0;
}

// An acquisition as the explanations tell it: the op as it ended, and its queue position.
struct Waiter {
  Op op;
  int position = 0;  // 1 + the waiters still queued ahead of it when it queued; 0: not queued.
  // Its place was its thread's earlier acquire's (op.arrival_* are that one's): see Effective.
  bool inherited = false;
};

struct Grant {
  Waiter granted;
  Waiter skipped;   // The earliest non-exempt waiter queued before it, still waiting.
  int ahead = 0;    // How many such waiters.
};

struct Exempt {
  Waiter waiter;
};

class Fairness : public PropertyChecker {
 public:
  explicit Fairness(const CheckOptions& options)
      : found_(options.max_violations), exempt_(options.max_violations) {}

  // Exec events: an acquire_failed script takes its thread out of the node's queue.
  bool WantsEvents() const override { return true; }

  void OnEvent(const FactsPass& f, const history::Event& e) override {
    if (e.type != history::EventType::kExec || !f.protocol().fair()) return;
    if (acquire_failed_ == history::names::kNone) {
      acquire_failed_ = f.names().Find("acquire_failed");
      if (acquire_failed_ == history::names::kNone) return;
    }
    if (e.op != acquire_failed_) return;
    const int thread = f.ExecThread(e);
    const int lock = f.LockNamed(e.lock);
    if (thread == history::kNone || lock == history::kNone) return;
    if (queues_.size() <= static_cast<size_t>(lock)) return;
    for (uint64_t id : queues_[lock]) {
      WaiterState& w = waiters_.at(id);
      if (w.thread == thread && w.left_us < 0) w.left_us = e.t_us;
    }
  }

  void OnLease(const FactsPass& f, const history::LeaseFact& le) override {
    if (!f.protocol().fair() || le.added.empty() || le.lock == history::kNone) return;
    if (queues_.size() <= static_cast<size_t>(le.lock)) return;
    for (uint64_t id : queues_[le.lock]) {
      WaiterState& w = waiters_.at(id);
      if (w.left_us < 0 && std::find(le.added.begin(), le.added.end(), w.thread) != le.added.end()) {
        w.left_us = le.t_us;
      }
    }
  }

  void OnOpArrived(const FactsPass& f, const Op& arrived) override {
    if (!f.protocol().fair() || !Judged(arrived) || !arrived.queued) return;
    const Op op = Effective(arrived, f.protocol().fair_wait_us);
    Enqueue(op);
  }

  void OnOpEnded(const FactsPass& f, const Op& ended) override {
    if (!f.protocol().fair() || !Judged(ended)) return;
    const int64_t wait_us = f.protocol().fair_wait_us;
    if (ended.arrival_seq == history::kOpenSeq) {
      if (ended.exec_ambiguous) AddExempt(ended, 0, kUnattributed, ended.invoke_us);
      return;
    }
    if (ended.node_reentry) {
      // The thread still held the lock on the node: the script re-entered that hold, ahead of
      // any queue, as it does for every holder. Not a grant in the queue's order.
      AddExempt(ended, 0, kNodeReentry, ended.arrival_us);
      return;
    }
    Op op = ended;
    if (auto it = inherited_.find(op.id); it != inherited_.end()) {
      op.arrival_seq = it->second.first;
      op.arrival_us = it->second.second;
      op.queued = true;
      inherited_.erase(it);
    } else if (!op.queued) {
      op = Effective(ended, wait_us);
      // Granted at once, maybe from its thread's earlier place in the queue.
      if (op.queued) {
        Enqueue(op);
        inherited_.erase(op.id);
      }
    }
    if (!op.queued) {
      // Granted at once: never exempt.
      if (op.outcome == Outcome::kOk) JudgeGrant(op, 0);
      return;
    }
    auto it = waiters_.find(op.id);
    if (it == waiters_.end()) return;  // Queued before the protocol was known: not judged.
    WaiterState state = std::move(it->second);
    waiters_.erase(it);
    std::vector<uint64_t>& queue = QueueOf(op.lock);
    queue.erase(std::find(queue.begin(), queue.end(), op.id));
    if (op.outcome == Outcome::kInfo && op.end_us - op.arrival_us <= wait_us &&
        state.left_us < 0) {
      // It never learned whether it queued, so its thread never cancelled the entry: the
      // node keeps the thread in the queue where it stood, for the thread's next acquire.
      lingering_[LingerKey(op)] = Lingering{op.arrival_seq, op.arrival_us};
    }
    bool exempt = true;
    if (op.outcome == Outcome::kFail) AddExempt(op, state.position, kTimedOut, op.arrival_us);
    else if (op.outcome == Outcome::kInfo) AddExempt(op, state.position, kUnknownOutcome, op.arrival_us);
    else if (op.outcome == Outcome::kCrashed) AddExempt(op, state.position, kCrashedWaiter, op.arrival_us);
    else if (op.end_us - op.arrival_us > wait_us) AddExempt(op, state.position, kPurged, op.arrival_us);
    else exempt = false;
    // The grants that waited to learn whether this waiter counts.
    for (uint64_t grant : state.grants) {
      Pending& p = pending_.at(grant);
      for (Ahead& a : p.ahead) {
        if (a.id != op.id) continue;
        a.ended = true;
        a.exempt = exempt;
        a.left_us = state.left_us;
        a.waiter = Waiter{op, state.position, state.inherited};
      }
      if (--p.unresolved == 0) Resolve(grant);
    }
    if (!exempt && op.outcome == Outcome::kOk) {
      // Granted on the node when a lease event added its thread (else at its completion).
      JudgeGrant(op, state.position, state.inherited,
                 state.left_us >= 0 ? state.left_us : op.end_us);
    }
  }

  PropertyResult Result(const Narrator& n) override {
    if (!n.facts().protocol().fair()) return NotApplicable(kFairness);
    const int64_t wait_us = n.facts().protocol().fair_wait_us;
    PropertyResult result = Conclude(kFairness, found_, [&](const FindingKey& key, const Grant& x) {
      return Explain(n, key, x);
    });
    Observe(&result, exempt_, [&](const FindingKey& key, const Exempt& x) {
      return ExplainExempt(n, key, x, wait_us);
    });
    return result;
  }

 private:
  struct WaiterState {
    int position = 0;
    history::Seq arrival_seq = 0;
    std::vector<uint64_t> grants;  // Pending grants it was queued ahead of.
    bool inherited = false;
    int thread = history::kNone;
    // When it left the node's queue: the node granted it (a lease event added its thread) or
    // its thread's acquire_failed script ran; -1 while neither has. A reply lost on the way
    // leaves the acquire waiting at the client, but not in the node's queue.
    int64_t left_us = -1;
  };
  // A queue entry the node keeps for a thread whose acquire queued and then ended without
  // learning its outcome (a lost reply, a response timeout).
  struct Lingering {
    history::Seq arrival_seq = 0;
    int64_t arrival_us = 0;
  };
  static uint64_t LingerKey(const Op& op) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(op.thread)) << 32) |
           static_cast<uint32_t>(op.lock);
  }

  // The op as the node's queue places it. The fair lock's script keeps one entry per thread
  // (its uuid:thread id) and answers a thread that has one from it, so a thread whose earlier
  // acquire queued and ended without learning its outcome stands where that one queued, as
  // long as the entry can still be there (within the fair wait timeout of its queueing).
  Op Effective(const Op& op, int64_t wait_us) {
    auto it = lingering_.find(LingerKey(op));
    if (it == lingering_.end()) return op;
    const Lingering l = it->second;
    lingering_.erase(it);
    if (op.arrival_us - l.arrival_us > wait_us) return op;
    Op x = op;
    x.arrival_seq = l.arrival_seq;
    x.arrival_us = l.arrival_us;
    x.queued = true;
    inherited_[op.id] = {l.arrival_seq, l.arrival_us};
    return x;
  }

  // Into the lock's queue at its arrival's place; its position: the waiters queued before it
  // that still wait (exempt or not).
  void Enqueue(const Op& op) {
    std::vector<uint64_t>& queue = QueueOf(op.lock);
    auto at = queue.begin();
    while (at != queue.end() && waiters_.at(*at).arrival_seq < op.arrival_seq) ++at;
    const int position = static_cast<int>(at - queue.begin()) + 1;
    waiters_[op.id] =
        WaiterState{position, op.arrival_seq, {}, inherited_.count(op.id) > 0, op.thread, -1};
    queue.insert(at, op.id);
  }
  struct Ahead {
    uint64_t id = 0;
    bool ended = false;
    bool exempt = false;
    int64_t left_us = -1;
    Waiter waiter;
  };
  struct Pending {
    Waiter granted;
    int64_t granted_us = 0;  // When the node granted it.
    std::vector<Ahead> ahead;  // In queue order.
    size_t unresolved = 0;
  };

  std::vector<uint64_t>& QueueOf(int lock) {
    if (queues_.size() <= static_cast<size_t>(lock)) queues_.resize(lock + 1);
    return queues_[lock];
  }

  void AddExempt(const Op& op, int position, ExemptKind kind, int64_t from_us) {
    const FindingKey key{from_us, op.invoke_seq, kind, static_cast<int64_t>(op.id), history::kNone,
                         history::kNone};
    if (auto [number, x] = exempt_.Add(key); x != nullptr) x->waiter = Waiter{op, position};
  }

  // A grant of a non-exempt acquisition: the waiters queued before it that still wait decide.
  void JudgeGrant(const Op& op, int position, bool inherited = false, int64_t granted_us = -1) {
    const std::vector<uint64_t>& queue = QueueOf(op.lock);
    Pending p;
    p.granted = Waiter{op, position, inherited};
    p.granted_us = granted_us >= 0 ? granted_us : op.arrival_us;
    for (uint64_t id : queue) {
      const WaiterState& w = waiters_.at(id);
      if (w.arrival_seq >= op.arrival_seq) break;  // Queued after it arrived.
      p.ahead.push_back(Ahead{id, false, false, -1, {}});
    }
    if (p.ahead.empty()) return;
    p.unresolved = p.ahead.size();
    const uint64_t grant = next_grant_++;
    for (const Ahead& a : p.ahead) waiters_.at(a.id).grants.push_back(grant);
    pending_.emplace(grant, std::move(p));
  }

  void Resolve(uint64_t grant) {
    auto it = pending_.find(grant);
    const Pending p = std::move(it->second);
    pending_.erase(it);
    const Ahead* skipped = nullptr;
    int ahead = 0;
    const int64_t granted_us = p.granted_us;
    for (const Ahead& a : p.ahead) {
      if (a.exempt) continue;
      // Out of the node's queue first (granted or cancelled there, its reply lost on the way):
      // it was not passed over.
      if (a.left_us >= 0 && a.left_us <= granted_us) continue;
      if (skipped == nullptr) skipped = &a;
      ++ahead;
    }
    if (skipped == nullptr) return;
    const Op& op = p.granted.op;
    const FindingKey key{op.end_us, op.end_seq, static_cast<uint8_t>(op.queued ? kOutOfOrder : kBarged),
                         static_cast<int64_t>(op.id), static_cast<int64_t>(skipped->id), ahead};
    if (auto [number, x] = found_.Add(key); x != nullptr) {
      *x = Grant{p.granted, skipped->waiter, ahead};
    }
  }

  // "queued at 3.001 s (position 1)" or "did not queue: its first attempt, at 4.500 s, was
  // granted at once".
  static std::string Arrival(const Waiter& w) {
    if (w.inherited) {
      return "queued at " + Seconds(w.op.arrival_us) + " (position " + std::to_string(w.position) +
             ") by its earlier acquire, which never learned its outcome";
    }
    if (w.op.queued) {
      return "queued at " + Seconds(w.op.arrival_us) + " (position " + std::to_string(w.position) + ")";
    }
    return "did not queue: its first attempt, at " + Seconds(w.op.arrival_us) + ", was granted at once";
  }

  static Violation Explain(const Narrator& n, const FindingKey& key, const Grant& x) {
    const Op& granted = x.granted.op;
    const Op& skipped = x.skipped.op;
    const std::string& g = n.Thread(granted.thread);
    const std::string& w = n.Thread(skipped.thread);
    Violation v;
    v.kind = key.kind == kOutOfOrder ? "out_of_order" : "barged";
    v.to_us = std::max(granted.end_us, skipped.end_us);
    v.threads = {w, g};
    v.events = {skipped.arrival_seq, granted.arrival_seq, granted.end_seq};
    v.explanation = g + " was granted " + n.Lock(granted.lock) + " at " + Seconds(granted.end_us) +
                    " ahead of " + w + ", which had queued before it: " + w + " " +
                    Arrival(x.skipped) + ", " + g + " " + Arrival(x.granted) + ". " + w;
    if (skipped.outcome == Outcome::kOk) {
      v.events.push_back(skipped.end_seq);
      v.explanation += " was granted only at " + Seconds(skipped.end_us) + ".";
    } else {
      v.explanation += " was still waiting when the run ended at " +
                       Seconds(n.facts().run_end_us()) + ".";
    }
    if (x.ahead > 1) {
      v.explanation += " " + Count(static_cast<size_t>(x.ahead - 1), "other waiter") +
                       " that queued before " + g + (x.ahead == 2 ? " was" : " were") +
                       " passed over too.";
    }
    v.explanation += n.Faults(skipped.arrival_us, granted.end_us, granted.end_us,
                              {n.ProcessOfThread(skipped.thread), n.ProcessOfThread(granted.thread)},
                              &v.events);
    return v;
  }

  static Observation ExplainExempt(const Narrator& n, const FindingKey& key, const Exempt& x,
                                   int64_t wait_us) {
    const Op& op = x.waiter.op;
    const std::string& who = n.Thread(op.thread);
    Observation v;
    v.kind = ExemptKindName(key.kind);
    v.to_us = std::max(key.from_us, op.end_us);
    v.threads = {who};
    v.events = {op.invoke_seq};
    if (op.arrival_seq != history::kOpenSeq) v.events.push_back(op.arrival_seq);
    if (op.end_seq != history::kOpenSeq) v.events.push_back(op.end_seq);
    const std::string lock = n.Lock(op.lock);
    const std::string queued =
        op.arrival_seq == history::kOpenSeq ? "" : who + " " + Arrival(x.waiter) + " for " + lock;
    switch (key.kind) {
      case kTimedOut:
        v.explanation = queued + " and its acquire failed at " + Seconds(op.end_us) + " (" +
                        op.end_detail + "): it left the queue.";
        break;
      case kUnknownOutcome:
        v.explanation = queued + " and its acquire ended with an unknown outcome at " +
                        Seconds(op.end_us) + ".";
        break;
      case kCrashedWaiter:
        v.explanation = queued + " and its process crashed at " + Seconds(op.end_us) + ".";
        break;
      case kPurged:
        v.explanation = queued + " and waited " + Seconds(op.end_us - op.arrival_us) +
                        (op.outcome == Outcome::kOk ? " until it was granted" : " until the run ended") +
                        ", longer than the fair wait timeout of " + Seconds(wait_us) +
                        ": its queue entry may have been purged and queued again further back.";
        break;
      case kNodeReentry:
        v.explanation = who + "'s acquire of " + lock + " was granted at " +
                        Seconds(op.arrival_us) + " by re-entering the hold it still had on the " +
                        "node: the node's key still named it (a release of it had not taken " +
                        "effect there), and the script grants a holder ahead of any queue.";
        break;
      case kUnattributed:
        v.explanation = who + "'s acquire of " + lock + " (invoked at " + Seconds(op.invoke_us) +
                        ") ran while other threads of " +
                        n.ProcessName(n.ProcessOfThread(op.thread)) +
                        " were acquiring it too, and the node's exec events name no thread: "
                        "whether and where it queued is unknown.";
        break;
    }
    v.explanation += " Its place in the order is not judged.";
    return v;
  }

  Findings<Grant> found_;
  Findings<Exempt> exempt_;
  std::vector<std::vector<uint64_t>> queues_;         // By lock: waiters in flight, queue order.
  std::unordered_map<uint64_t, WaiterState> waiters_;  // By op id.
  std::unordered_map<uint64_t, Pending> pending_;      // Grants waiting on waiters ahead.
  std::unordered_map<uint64_t, Lingering> lingering_;  // By LingerKey.
  history::Name acquire_failed_ = history::names::kNone;  // The exec label, once interned.
  // Ops standing in an earlier acquire's place: op id -> that arrival (seq, us).
  std::unordered_map<uint64_t, std::pair<history::Seq, int64_t>> inherited_;
  uint64_t next_grant_ = 0;
};

}  // namespace

std::unique_ptr<PropertyChecker> MakeFairness(const CheckOptions& options) {
  return std::make_unique<Fairness>(options);
}

}  // namespace lockstep::check
