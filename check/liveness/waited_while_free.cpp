// liveness (b) "waited_while_free": an acquire in flight while its lock is free on the node its
// commands went to (free = from a lease released/expired/lost to the next acquired on that node;
// free from the start of the run) for a continuous stretch longer than B while neither the node,
// the client nor the whole system was impaired. An acquire whose commands name no node is judged
// on the node its client last used for the lock, else on the lock's only node (if the whole run
// shows one). RedLock/MultiLock: free on at least a quorum of its nodes. Semaphores,
// "waited_with_free_permits": free = the node's count (its lease events) is at least the permits
// the acquire asks for. Latches, "waited_while_open": an await while the latch is open there (no
// key, or a count <= 0). One violation per acquire, judged when it ends.
//
// Online, the free stretches of every node (and a quorum's) are kept back to the oldest
// acquisition of the lock in flight.
#include <algorithm>
#include <cassert>
#include <deque>
#include <optional>
#include <unordered_map>

#include "check/liveness/rule.h"

namespace lockstep::check::liveness {

namespace {

using history::FactsPass;
using history::ImpairedSpan;
using history::kNone;
using history::kOpenSeq;
using history::LeaseFact;
using history::LeaseKind;
using history::Op;
using history::Seq;

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

struct Payload {
  int64_t to_us = 0;
  AcquireRef op;
  int node = kNone;  // kNone: a quorum.
  FreeSpan freed;    // How the lock came free there.
};

class WaitedWhileFree : public Rule {
 public:
  WaitedWhileFree(const CheckOptions& options, const LivenessFacts& facts)
      : facts_(facts), bound_us_(facts.bound_us()), found_(options.max_violations) {}

  void OnOpEnded(const FactsPass& f, const Op& op) override {
    if (op.kind != history::OpKind::kAcquire) return;
    if (f.protocol().quorum > 0 && !f.protocol().ownerless()) {
      CheckQuorumWait(f, op);
    } else if (!f.protocol().semaphore() || op.permits > 0) {
      CheckWait(f, op);
    }
    Prune(op.lock);  // The stretches it waited through are no longer needed.
  }

  void OnLease(const FactsPass& f, const LeaseFact& le) override;
  void OnFault(const FactsPass& f, const history::FaultRecord& fault) override {
    if (f.protocol().quorum > 0) {
      for (size_t lock = 0; lock < quorum_.size(); ++lock) {
        QuorumChanged(f, static_cast<int>(lock), fault.process, fault.t_us);
      }
    }
  }
  // Quorum changes at the previous moment take effect together.
  void Advance(const FactsPass& f, int64_t t_us) override {
    if (quorum_pending_ && t_us > quorum_t_) ApplyQuorum(f);
  }
  void OnFinish(const FactsPass& f) override;

  size_t count() const override { return found_.count(); }
  std::vector<FindingKey> KeptKeys() const override { return found_.KeptKeys(); }
  void WriteUp(const Narrator& n, const FindingKey* last, std::vector<KeyedViolation>* out) const override {
    found_.WriteUp(last, out, [&](const FindingKey& key, const Payload& p) {
      return key.kind == kWaitedWhileFree ? ExplainLockWait(n, key, p) : ExplainSynchronizerWait(n, key, p);
    });
  }

 private:
  struct FreeState {
    bool free = true;
    FreeSpan span;  // The current one, while free.
    std::deque<FreeSpan> closed;
  };
  struct CountState {
    CountSpan current;
    std::deque<CountSpan> closed;  // Back to the oldest acquisition in flight.
  };
  struct QuorumState {
    std::vector<int> nodes;          // Seen, in the order seen.
    std::vector<char> free;          // Free and unimpaired now.
    std::vector<char> free_before;   // At the start of the pending moment.
    std::vector<char> dipped;        // Stopped being free during it.
    int64_t since_us = 0;            // Quorum-free since (-1: not).
    std::deque<FreeSpan> spans;      // Closed quorum-free stretches still of interest.
  };
  // A wait judged on the lock's only node, confirmed at the end if it stayed the only one.
  struct SoleWait {
    AcquireRef op;
    int node = kNone;  // The only node when it ended; kNone: none yet.
    FindingKey key;
    Payload payload;
  };

  void Prune(int lock);
  void CheckWait(const FactsPass& f, const Op& op);
  std::vector<FreeSpan> FreeSpansOn(const FactsPass& f, const Op& op, int node) const;
  bool WaitFinding(const FactsPass& f, const AcquireRef& op, int node, int64_t from_us, int64_t to_us,
                   const std::vector<FreeSpan>& spans, SoleWait* defer = nullptr);
  void CheckQuorumWait(const FactsPass& f, const Op& op);
  bool NodeFree(const FactsPass& f, int lock, int node) const;
  void QuorumChanged(const FactsPass& f, int lock, int node, int64_t t_us);
  void ApplyQuorum(const FactsPass& f);
  std::pair<int64_t, int64_t> LongestUnimpaired(const FactsPass& f, int64_t a, int64_t b,
                                                std::initializer_list<int> processes) const;
  Violation ExplainLockWait(const Narrator& n, const FindingKey& key, const Payload& p) const;
  Violation ExplainSynchronizerWait(const Narrator& n, const FindingKey& key, const Payload& p) const;

  static Kind WaitKind(const FactsPass& f) {
    return f.protocol().semaphore() ? kWaitedWithFreePermits
           : f.protocol().latch()   ? kWaitedWhileOpen
                                    : kWaitedWhileFree;
  }

  const LivenessFacts& facts_;
  const int64_t bound_us_;
  RuleFindings<Payload> found_;
  std::unordered_map<uint64_t, FreeState> free_;     // (node, lock)
  std::unordered_map<uint64_t, CountState> counts_;  // (node, lock): semaphores and latches
  std::vector<QuorumState> quorum_;
  bool quorum_pending_ = false;
  int64_t quorum_t_ = 0;
  std::vector<SoleWait> sole_waits_;
};

void WaitedWhileFree::OnLease(const FactsPass& f, const LeaseFact& le) {
  // The lock's free stretches on the node.
  FreeState& fs = free_[Key(le.node, le.lock)];
  const bool present = le.kind == LeaseKind::kAcquired || le.kind == LeaseKind::kOwners;
  if (present) {
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
  if (!f.protocol().ownerless()) return;
  // Semaphores and latches: the node's count from now on (the key's value; no key counts 0).
  const std::optional<int64_t> count = present ? history::CountOf(le.detail) : std::optional<int64_t>(0);
  if (!count) return;
  CountState& cs = counts_[Key(le.node, le.lock)];
  cs.current.to_us = le.t_us;
  if (cs.current.to_us > cs.current.from_us) cs.closed.push_back(cs.current);
  cs.current = CountSpan{le.t_us, kForever, *count, true, le.kind, le.seq, le.id};
  Prune(le.lock);
}

void WaitedWhileFree::OnFinish(const FactsPass& f) {
  if (quorum_pending_) ApplyQuorum(f);
  // Waits judged on the lock's only node, if it stayed the only one.
  for (SoleWait& w : sole_waits_) {
    const std::vector<int>& nodes = f.NodesOfLock(w.op.lock);
    if (nodes.size() != 1) continue;
    if (w.node == kNone) {
      // The lock had no node when the acquire ended: it was free there throughout (a
      // semaphore without a key has no permits).
      if (f.protocol().semaphore()) continue;
      WaitFinding(f, w.op, nodes[0], w.op.invoke_us, w.op.end_us, {FreeSpan{}});
    } else if (w.node == nodes[0]) {
      found_.Add(w.key, std::move(w.payload));
    }
  }
  sole_waits_.clear();
}

// Free stretches (per node, and a quorum's) are kept back to the oldest acquisition in flight.
void WaitedWhileFree::Prune(int lock) {
  const std::vector<AcquireRef>& inflight = facts_.InFlight(lock);
  const int64_t oldest = inflight.empty() ? facts_.now_us() : inflight.front().invoke_us;
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

void WaitedWhileFree::CheckWait(const FactsPass& f, const Op& op) {
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
std::vector<FreeSpan> WaitedWhileFree::FreeSpansOn(const FactsPass& f, const Op& op, int node) const {
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

// Looks for a stretch longer than B in [from_us, to_us] while `op` waited on `node` and the
// lock was free there; records it (or, with `defer`, keeps it there). True if there is one.
bool WaitedWhileFree::WaitFinding(const FactsPass& f, const AcquireRef& op, int node, int64_t from_us,
                                  int64_t to_us, const std::vector<FreeSpan>& spans, SoleWait* defer) {
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
      found_.Add(key, std::move(p));
    }
    return true;
  }
  return false;
}

// RedLock/MultiLock: the lock is free when it is free (and the node neither down, paused nor
// losing replies) on at least a quorum of its nodes; nodes without lease events for it (so
// far) count as free. An acquire waiting through such a stretch longer than B (not counting
// its client's impairments or the whole system's) is a violation; one per acquire.
void WaitedWhileFree::CheckQuorumWait(const FactsPass& f, const Op& op) {
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
      found_.Add(FindingKey{stretch.first, op.invoke_seq, kWaitedWhileFree, static_cast<int64_t>(op.id), kNone,
                            kNone},
                 std::move(p));
      return;
    }
  }
}

bool WaitedWhileFree::NodeFree(const FactsPass& f, int lock, int node) const {
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
void WaitedWhileFree::QuorumChanged(const FactsPass& f, int lock, int node, int64_t t_us) {
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

void WaitedWhileFree::ApplyQuorum(const FactsPass& f) {
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
std::pair<int64_t, int64_t> WaitedWhileFree::LongestUnimpaired(const FactsPass& f, int64_t a, int64_t b,
                                                               std::initializer_list<int> processes) const {
  std::vector<ImpairedSpan> cuts;
  for (int p : processes) {
    for (const ImpairedSpan& s : f.ImpairedMerged(p, std::max(facts_.now_us(), b))) {
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

// Where the lock was free, and for how long: the part of a wait's explanation every kind shares.
std::string WhereAndHowLong(const Narrator& n, const FindingKey& key, const Payload& p, int64_t bound_us) {
  const history::ProtocolInfo& protocol = n.facts().protocol();
  const std::string where = p.node != kNone ? n.ProcessName(p.node)
                                            : "at least " + std::to_string(protocol.quorum) + " of its " +
                                                  std::to_string(protocol.nodes) + " nodes (a quorum)";
  return where + " from " + Seconds(key.from_us) + " to " + Seconds(p.to_us) + ": " +
         Seconds(p.to_us - key.from_us) + ", longer than the liveness bound of " + Seconds(bound_us) + ".";
}

Violation WaitedWhileFree::ExplainLockWait(const Narrator& n, const FindingKey& key, const Payload& p) const {
  const AcquireRef& op = p.op;
  const std::string& who = n.Thread(op.thread);
  Violation v;
  v.kind = "waited_while_free";
  v.to_us = p.to_us;
  v.threads = {who};
  v.events = {op.invoke_seq};
  v.explanation = who + " was waiting to acquire " + n.Lock(op.lock) + " (" + op.DetailText() +
                  ", invoked at " + Seconds(op.invoke_us) + ") while the lock was free on " +
                  WhereAndHowLong(n, key, p, bound_us_);
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

// Semaphores ("waited_with_free_permits") and latches ("waited_while_open").
Violation WaitedWhileFree::ExplainSynchronizerWait(const Narrator& n, const FindingKey& key,
                                                   const Payload& p) const {
  assert(key.kind == kWaitedWithFreePermits || key.kind == kWaitedWhileOpen);
  const AcquireRef& op = p.op;
  const std::string& who = n.Thread(op.thread);
  const bool semaphore = key.kind == kWaitedWithFreePermits;
  Violation v;
  v.kind = semaphore ? "waited_with_free_permits" : "waited_while_open";
  v.to_us = p.to_us;
  v.threads = {who};
  v.events = {op.invoke_seq};
  v.explanation = who + " was waiting to " + (semaphore ? "acquire " : "await ") + n.Lock(op.lock) + " (" +
                  op.DetailText() + ", invoked at " + Seconds(op.invoke_us) + ") while " +
                  (semaphore ? "the semaphore had enough free permits" : "the latch was open (count 0)") +
                  " on " + WhereAndHowLong(n, key, p, bound_us_);
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
  const char* what = semaphore ? "acquire" : "await";
  if (op.end_seq != kOpenSeq) {
    v.events.push_back(op.end_seq);
    v.explanation += " The " + std::string(what) + " ended in " + std::string(history::OutcomeName(op.outcome)) +
                     " at " + Seconds(op.end_us) + ".";
  } else {
    v.explanation += std::string(" The ") + what + " was still waiting when the run ended.";
  }
  v.explanation += n.Faults(op.invoke_us, p.to_us, key.from_us, {n.ProcessOfThread(op.thread)}, &v.events);
  return v;
}

}  // namespace

std::unique_ptr<Rule> MakeWaitedWhileFree(const CheckOptions& options, const LivenessFacts& facts) {
  return std::make_unique<WaitedWhileFree>(options, facts);
}

}  // namespace lockstep::check::liveness
