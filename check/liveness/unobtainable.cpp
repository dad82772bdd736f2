// liveness (e) "unobtainable": nobody believes it holds the lock, someone is trying to acquire it
// from moment T, and no acquisition succeeds by T + L + B (L: the longest lease any acquisition
// asked for), not counting time while fewer than a majority of the lock's nodes are up (or `sim`
// cuts everyone off), while someone still tries after that deadline. When the last acquisition
// in flight ends in its process's crash, T restarts at the next acquisition invoked. Not
// reported where (a) or (d) already explains the same stretch, and not judged for semaphores
// and latches.
//
// Online, a lock keeps its current free gap (reused: a gap opens at every release); a gap that
// could be one waits for the end of the run, when the longest lease is known and (a) and (d)
// have been judged.
#include <algorithm>
#include <cassert>

#include "check/liveness/rule.h"

namespace lockstep::check::liveness {

namespace {

using history::FactsPass;
using history::ImpairedSpan;
using history::kNone;
using history::kOpenSeq;
using history::Op;
using history::OpKind;
using history::Outcome;
using history::Span;

// A stretch nobody held the lock while someone tried, longer than allowed.
struct Gap {
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

struct Payload {
  std::unique_ptr<Gap> gap;
};

// Stretches when fewer than `majority` of `nodes` were unimpaired, or "sim" cut everyone off;
// disjoint and sorted.
std::vector<ImpairedSpan> ExcusedSpans(const FactsPass& f, const std::vector<int>& nodes, int majority,
                                       int64_t now_us) {
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
int64_t Deadline(const std::vector<ImpairedSpan>& excused, int64_t from_us, int64_t allowed_us,
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

// Whether no acquisition's end can change the gap any more: its window is closed and holds no
// acquisition in flight, and its candidates and trier have ended.
bool Settled(const Gap& g) {
  return (!g.window.active() || (g.window.closed() && g.window.nothing_pending())) && g.candidates.empty() &&
         (!g.has_trier || g.trier.ended);
}

// An acquisition of the gap's lock ended: the trier among those in flight when the gap began,
// and the window's count.
void GapOpEnded(Gap& g, const Op& op) {
  if (g.window.active()) g.window.Ended(op);
  if (g.has_trier && g.trier.id == op.id) g.trier.End(op);
  if (auto c = std::find(g.candidates.begin(), g.candidates.end(), op.id); c != g.candidates.end()) {
    g.candidates.erase(c);
    if (!g.has_trier || op.end_us > g.trier.end_us || (op.end_us == g.trier.end_us && op.id < g.trier.id)) {
      g.has_trier = true;
      g.trier = AcquireRef::Ended(op);
    }
  }
}

class Unobtainable : public Rule {
 public:
  Unobtainable(const CheckOptions& options, const LivenessFacts& facts, const ExplainedStretches& explained)
      : facts_(facts), bound_us_(facts.bound_us()), explained_(explained), found_(options.max_violations) {}

  void OnOpInvoked(const FactsPass& f, const Op& op) override;
  void OnOpEnded(const FactsPass& f, const Op& op) override;
  void OnSpanStarted(const FactsPass& f, const Span& s) override {
    if (s.access) return;
    LockState& l = LockOf(s.lock);
    if (l.believers++ == 0 && l.gap_open) EndGap(f, s.lock, s.start_us, /*to_run_end=*/false);
  }
  void OnSpanEnded(const FactsPass& f, const Span& s) override {
    if (s.access) return;
    LockState& l = LockOf(s.lock);
    l.free_from_us = std::max(l.free_from_us, s.end_us);
    if (--l.believers == 0 && !f.finished()) StartGap(s.lock);
  }
  void Advance(const FactsPass& f, int64_t t_us) override;
  void OnFinish(const FactsPass& f) override;

  size_t count() const override { return found_.count(); }
  std::vector<FindingKey> KeptKeys() const override { return found_.KeptKeys(); }
  void WriteUp(const Narrator& n, const FindingKey* last, std::vector<KeyedViolation>* out) const override {
    found_.WriteUp(last, out, [&](const FindingKey&, const Payload& p) { return Explain(n, *p.gap); });
  }

 private:
  struct LockState {
    int64_t max_end_ended_us = -1;
    int believers = 0;
    int64_t free_from_us = 0;
    bool pending_at_end = false;  // An acquisition was still in flight when the run ended.
    // Nobody believes it holds the lock since gap.free_from_us (the start of the run, at
    // first). Kept here and reused: a gap opens at every release.
    bool gap_open = true;
    Gap gap;
    bool gap_looked = false;  // The moment the gap began has passed.
  };

  LockState& LockOf(int lock) {
    while (locks_.size() <= static_cast<size_t>(lock)) {
      LockState& l = locks_.emplace_back();
      l.gap.lock = static_cast<int>(locks_.size() - 1);
      // Free from the start of the run; nothing of it was in flight at 0 unless it is 0 now.
      l.gap_looked = facts_.now_us() > 0;
    }
    return locks_[lock];
  }
  void StartGap(int lock);
  // Nobody is trying any more: the next acquisition invoked starts the wait anew.
  static void RestartDemand(Gap& g);
  void AddCandidate(std::unique_ptr<Gap> u);
  bool Unobtained(const FactsPass& f, Gap& u, int64_t lease_us, int64_t now_us) const;
  void EndGap(const FactsPass& f, int lock, int64_t to_us, bool to_run_end);
  void Judge(const FactsPass& f, std::unique_ptr<Gap> u);
  Violation Explain(const Narrator& n, const Gap& u) const;

  const LivenessFacts& facts_;
  const int64_t bound_us_;
  const ExplainedStretches& explained_;
  RuleFindings<Payload> found_;
  std::vector<LockState> locks_;
  std::vector<std::unique_ptr<Gap>> gaps_closing_;
  std::vector<std::unique_ptr<Gap>> gap_candidates_;
  std::vector<size_t> gap_unsettled_;  // Indices into gap_candidates_ not Settled yet.
  uint64_t unobtainable_ = 0;
};

void Unobtainable::OnOpInvoked(const FactsPass&, const Op& op) {
  LockState& l = LockOf(op.lock);
  if (op.kind != OpKind::kAcquire) return;
  const AcquireRef& ref = facts_.JustInvoked(op);
  if (l.gap_open) {
    Gap& g = l.gap;
    if (g.window.active()) g.window.Invoked(ref);
    if (l.gap_looked && !g.has_trier && g.candidates.empty() && op.invoke_us > g.free_from_us) {
      // Nobody was in flight when the lock came free: the first to try is the trier.
      g.has_trier = true;
      g.trier = ref;
      g.try_us = op.invoke_us;
      g.window.Open(g.try_us, facts_.InFlight(op.lock), false);
      g.window.CountOthers(g.try_us, op.id);
    }
  }
  for (auto& u : gaps_closing_) {
    if (u->lock == op.lock) u->window.Invoked(ref);
  }
}

void Unobtainable::OnOpEnded(const FactsPass&, const Op& op) {
  if (op.kind != OpKind::kAcquire) return;
  LockState& l = LockOf(op.lock);
  if (op.end_seq != kOpenSeq) {
    l.max_end_ended_us = std::max(l.max_end_ended_us, op.end_us);
  } else if (op.invoke_us < op.end_us) {
    l.pending_at_end = true;  // Still trying when the run ended.
  }
  if (l.gap_open) {
    GapOpEnded(l.gap, op);
    // The last one trying died trying (its process crashed): the demand died with it. Who
    // tries next starts the wait anew, so that a waiter that died does not count against the
    // next one to come. (A tryLock that gave up is still a thread that wants the lock: its
    // next try goes on with the same wait, and a wait while the lock was free is rule (a)'s.)
    bool others = false;
    for (const AcquireRef& r : facts_.InFlight(op.lock)) others |= r.id != op.id;
    if (l.gap_looked && op.outcome == Outcome::kCrashed && !others) {
      RestartDemand(l.gap);
    }
  }
  for (auto& u : gaps_closing_) {
    if (u->lock == op.lock) GapOpEnded(*u, op);
  }
  // Only the candidates an acquisition can still change: a run with thousands of settled
  // ones would otherwise cost every operation's end that many visits.
  for (size_t i = 0; i < gap_unsettled_.size();) {
    Gap& u = *gap_candidates_[gap_unsettled_[i]];
    if (u.lock == op.lock) GapOpEnded(u, op);
    if (Settled(u)) {
      gap_unsettled_[i] = gap_unsettled_.back();
      gap_unsettled_.pop_back();
    } else {
      ++i;
    }
  }
}

// Free gaps that began before now: who was trying when the lock came free. Windows complete
// once time has passed their gap's end.
void Unobtainable::Advance(const FactsPass& f, int64_t t_us) {
  for (size_t lock = 0; lock < locks_.size(); ++lock) {
    LockState& l = locks_[lock];
    if (!l.gap_open || l.gap_looked || l.gap.free_from_us >= t_us) continue;
    l.gap_looked = true;
    Gap& g = l.gap;
    const bool at_end = t_us == kForever;
    for (const AcquireRef& r : facts_.InFlight(static_cast<int>(lock))) {
      if (r.invoke_us <= g.free_from_us && (!at_end || f.run_end_us() > g.free_from_us)) {
        g.candidates.push_back(r.id);
      }
    }
    if (!g.candidates.empty()) {
      g.try_us = g.free_from_us;
      g.window.Open(g.try_us, facts_.InFlight(static_cast<int>(lock)), false);
      g.window.CountOthers(g.try_us, UINT64_MAX);
    }
  }
  for (auto& u : gaps_closing_) {
    if (u->free_to_us < t_us) u->window.Close(u->free_to_us);
  }
  if (t_us == kForever) return;
  for (auto& u : gaps_closing_) {
    if (!u->window.active() || u->window.closed()) AddCandidate(std::move(u));
  }
  std::erase_if(gaps_closing_, [](const auto& u) { return u == nullptr; });
}

// The last free gap, then every candidate: (a) and (d) have been judged, and explain a stretch
// better.
void Unobtainable::OnFinish(const FactsPass& f) {
  const int64_t end = f.run_end_us();
  for (size_t lock = 0; lock < locks_.size(); ++lock) {
    if (locks_[lock].gap_open) EndGap(f, static_cast<int>(lock), end, /*to_run_end=*/true);
  }
  for (auto& u : gaps_closing_) AddCandidate(std::move(u));
  gaps_closing_.clear();
  for (auto& u : gap_candidates_) {
    if (u->window.active()) u->window.Close(u->free_to_us);
    Judge(f, std::move(u));
  }
  gap_candidates_.clear();
  gap_unsettled_.clear();
}

void Unobtainable::RestartDemand(Gap& g) {
  g.candidates.clear();
  g.has_trier = false;
  g.try_us = 0;
  g.window.Clear();
  g.in_flight_at_end = false;
}

void Unobtainable::StartGap(int lock) {
  LockState& l = LockOf(lock);
  Gap& g = l.gap;
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

void Unobtainable::AddCandidate(std::unique_ptr<Gap> u) {
  const bool settled = Settled(*u);
  gap_candidates_.push_back(std::move(u));
  if (!settled) gap_unsettled_.push_back(gap_candidates_.size() - 1);
}

// Whether the gap [from, to] is one (so far): someone tried, and no acquisition succeeded
// by the deadline while someone still tried after it. Fills the deadline.
bool Unobtainable::Unobtained(const FactsPass& f, Gap& u, int64_t lease_us, int64_t now_us) const {
  const int n = std::max(1, f.protocol().nodes);
  u.nodes = n;
  u.majority = history::MajorityOf(n);
  u.lease_us = lease_us;
  const std::vector<ImpairedSpan> excused = ExcusedSpans(f, u.lock_nodes, u.majority, now_us);
  u.deadline_us = Deadline(excused, u.try_us, facts_.Allowed(lease_us), &u.excused_us);
  if (u.deadline_us >= u.free_to_us) return false;
  // Someone still tried after the deadline (in flight then, or invoked before the gap's end).
  return u.in_flight_at_end || u.max_end_before_us > u.deadline_us;
}

// Nobody held the lock from the gap's start to to_us: a candidate if someone was trying and
// no acquisition succeeded by the deadline while someone still tried after it.
void Unobtainable::EndGap(const FactsPass& f, int lock, int64_t to_us, bool to_run_end) {
  LockState& l = LockOf(lock);
  l.gap_open = false;
  Gap& u = l.gap;
  if (f.protocol().ownerless() || to_us <= u.free_from_us) return;
  // The first acquisition in flight when the gap began, or invoked in (from, to).
  if (u.candidates.empty() && (!u.has_trier || u.trier.invoke_us >= to_us)) return;
  if (!u.candidates.empty()) u.try_us = u.free_from_us;
  u.lock = lock;
  u.free_to_us = to_us;
  u.to_run_end = to_run_end;
  // Whether someone still tried after a deadline before to_us: an acquisition invoked before
  // to_us still in flight then, or one that ended after the deadline.
  for (const AcquireRef& r : facts_.InFlight(lock)) u.in_flight_at_end |= r.invoke_us < to_us;
  u.in_flight_at_end |= to_run_end && l.pending_at_end;
  u.max_end_before_us = l.max_end_ended_us;
  u.lock_nodes = f.NodesOfLock(lock);
  std::sort(u.lock_nodes.begin(), u.lock_nodes.end());
  if (!u.lock_nodes.empty() &&
      !Unobtained(f, u, facts_.LongestLeaseUs(f, lock), to_run_end ? f.run_end_us() : to_us)) {
    return;
  }
  // A candidate: judged again at the end, with the longest lease of the run, after (a)
  // and (d). Its window takes acquisitions invoked at exactly to_us until time moves on.
  auto candidate = std::make_unique<Gap>(std::move(u));
  if (to_run_end) {
    AddCandidate(std::move(candidate));
  } else {
    gaps_closing_.push_back(std::move(candidate));
  }
}

void Unobtainable::Judge(const FactsPass& f, std::unique_ptr<Gap> u) {
  // Locks that never had a lease event are not judged; a gap that ended before the first one
  // is judged with the nodes the lock had in the end.
  if (f.NodesOfLock(u->lock).empty()) return;
  if (u->lock_nodes.empty()) {
    u->lock_nodes = f.NodesOfLock(u->lock);
    std::sort(u->lock_nodes.begin(), u->lock_nodes.end());
  }
  if (!Unobtained(f, *u, facts_.LongestLeaseUs(f, u->lock), f.run_end_us())) return;
  if (explained_.Overlaps(u->lock, u->try_us, u->free_to_us)) return;
  const FindingKey key{u->try_us, u->trier.invoke_seq, kUnobtainable, static_cast<int64_t>(unobtainable_++),
                       kNone, kNone};
  Payload p;
  p.gap = std::move(u);
  found_.Add(key, std::move(p));
}

Violation Unobtainable::Explain(const Narrator& n, const Gap& u) const {
  const AcquireRef& trier = u.trier;
  const FactsPass& f = n.facts();
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
      if (v.threads.size() >= kMaxThreadsNamed) break;
      const std::string& name = n.Thread(thread);
      if (std::find(v.threads.begin(), v.threads.end(), name) != v.threads.end()) continue;
      v.threads.push_back(name);
      clients.push_back(n.ProcessOfThread(thread));
    }
  }
  v.explanation += n.Faults(u.free_from_us, u.free_to_us, u.try_us, clients, &v.events);
  return v;
}

}  // namespace

std::unique_ptr<Rule> MakeUnobtainable(const CheckOptions& options, const LivenessFacts& facts,
                                       const ExplainedStretches& explained) {
  return std::make_unique<Unobtainable>(options, facts, explained);
}

}  // namespace lockstep::check::liveness
