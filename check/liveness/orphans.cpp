// liveness (d), orphans: following the run (the rule is in orphans.h).
#include "check/liveness/orphans.h"

#include <algorithm>
#include <cassert>
#include <optional>

namespace lockstep::check::liveness {

using history::ClientCrash;
using history::FactsPass;
using history::kNone;
using history::kOpenSeq;
using history::LeaseFact;
using history::LeaseKind;
using history::Op;
using history::OpKind;
using history::Outcome;
using history::Role;
using history::Seq;
using history::Span;

namespace {

// A span made new, keeping the memory of its text and lists (orphan spans come and go with
// every release).
void ResetSpan(OrphanSpan* span) {
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

int64_t Lasted(const OrphanSpan& span) { return span.to_us - span.from_us - span.impaired_us; }

}  // namespace

void Orphans::OnEvent(const FactsPass& f, const history::Event& e) {
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
    const int process = f.ProcessNamed(e.process == history::names::kNone ? history::names::kSim : e.process);
    if (auto c = counters_.find(process); c != counters_.end()) {
      c->second = Counter{};  // A new incarnation, its threads counting down again.
      sync_all_ = true;
    }
  }
}

void Orphans::OnOpInvoked(const FactsPass& f, const Op& op) {
  if (op.kind == OpKind::kAcquire) {
    const AcquireRef& ref = facts_.JustInvoked(op);
    last_acquire_[Key(op.thread, op.lock)] = LastAcquire{ref, false, {}};
    ForOrphansOf(op.lock, [&](Orphan& o) {
      if (o.window.active()) o.window.Invoked(ref);
    });
  } else if (op.kind == OpKind::kRelease && f.protocol().ownerless()) {
    SyncState& st = SyncOf(op.lock);
    int64_t& mine = st.held[op.thread];
    const int64_t back = std::min(op.permits, mine);
    mine -= back;
    st.held_total -= back;
    if (mine == 0) st.held.erase(op.thread);
    sync_touched_.push_back(op.lock);
  }
}

void Orphans::OnOpEnded(const FactsPass& f, const Op& op) {
  if (op.kind != OpKind::kAcquire) return;
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
  // Synchronizers: an acquire ok takes permits (or a pass that owes a count-down).
  if (f.protocol().ownerless() && op.outcome == Outcome::kOk && op.end_seq != kOpenSeq) {
    if (!(Roles(f) && f.processes()[f.ProcessOfThread(op.thread)].role != Role::kWorker)) {
      SyncState& st = SyncOf(op.lock);
      st.held[op.thread] += op.permits;
      st.held_total += op.permits;
      sync_touched_.push_back(op.lock);
    }
  }
}

void Orphans::OnSpanStarted(const FactsPass& f, const Span& s) {
  if (s.access) return;
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
  if (!f.protocol().ownerless()) {
    ++believing_[Key(s.thread, s.lock)];
    Touch(s.lock);
  }
}

void Orphans::OnSpanEnded(const FactsPass& f, const Span& s) {
  if (s.access) return;
  if (auto it = last_acquire_.find(Key(s.thread, s.lock));
      it != last_acquire_.end() && it->second.has_belief && it->second.belief.id == s.id) {
    it->second.belief = s;
  }
  ForOrphansOf(s.lock, [&](Orphan& o) {
    for (OwnerStory& story : o.stories) {
      if (story.has_belief && story.belief.id == s.id) story.belief = s;
    }
  });
  // Beliefs that the run's end closes make no point of the orphan rule.
  if (!f.protocol().ownerless() && s.end_seq != kOpenSeq) {
    --believing_[Key(s.thread, s.lock)];
    Touch(s.lock);
  }
}

void Orphans::OnLease(const FactsPass& f, const LeaseFact& le) {
  const bool present = le.kind == LeaseKind::kAcquired || le.kind == LeaseKind::kOwners;
  if (!f.protocol().ownerless()) {
    OwnerKey& key = KeysOf(le.lock)[le.node];
    key.present = present;
    key.listed = key.present && le.owners_listed;
    key.owners = key.present ? le.owners : std::vector<int>{};
    key.fields = key.present ? std::string(le.detail) : "";
    Touch(le.lock);
    return;
  }
  // A semaphore's or latch's count is the key's value; a missing key counts 0.
  const std::optional<int64_t> count = present ? history::CountOf(le.detail) : std::optional<int64_t>(0);
  if (!count) return;
  SyncState& st = SyncOf(le.lock);
  // addPermits / drainPermits change the total, not permits taken or given back.
  st.resized += le.resized;
  st.count = *count;
  st.node = le.node;
  sync_touched_.push_back(le.lock);
}

// The crashed process's permits (or passes owing a count-down) are gone with it.
void Orphans::OnCrash(const FactsPass& f, const ClientCrash& crash) {
  if (!f.protocol().ownerless()) return;
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
}

void Orphans::OnFault(const FactsPass& f, const history::FaultRecord& fault) {
  if (fault.op != history::names::kPromote || f.protocol().ownerless() || f.protocol().nodes > 1) return;
  // A promoted replica carries on the old master's lease view (the simulator records its lease
  // events from the old master's owners), and the old master stops being judged. Which master a
  // promotion replaced the history does not say; with one master it is any other node, with
  // several (RedLock with replicas) nothing is dropped.
  for (size_t lock = 0; lock < keys_.size(); ++lock) {
    if (keys_[lock].empty()) continue;
    for (auto& [node, key] : keys_[lock]) {
      if (node != fault.process) key.present = false;
    }
    Touch(static_cast<int>(lock));
  }
}

void Orphans::OnEventDone(const FactsPass& f, const history::Event& e) {
  if (!sync_touched_.empty() || sync_all_) SettleSynchronizers(f, e);
  for (int lock : touched_) SettleOrphans(f, lock, e.seq, e.t_us);
  touched_.clear();
}

// Windows complete once time has passed their orphan's end; then it is judged.
void Orphans::Advance(const FactsPass& f, int64_t t_us) {
  for (auto& o : orphans_closing_) {
    if (o->span.to_us < t_us) o->window.Close(o->span.to_us);
  }
  if (t_us == kForever) return;
  for (auto& o : orphans_closing_) {
    if (!o->window.active() || o->window.closed()) JudgeOrphan(f, std::move(o));
  }
  std::erase_if(orphans_closing_, [](const auto& o) { return o == nullptr; });
}

// Orphans that ended during the run, then those open at its end.
void Orphans::OnFinish(const FactsPass& f) {
  const int64_t end = f.run_end_us();
  for (auto& o : orphans_closing_) {
    if (o->window.active()) o->window.Close(o->span.to_us);
    JudgeOrphan(f, std::move(o));
  }
  orphans_closing_.clear();
  std::vector<std::unique_ptr<Orphan>> open_at_end;
  for (std::map<int, OwnerKey>& keys : keys_) {
    for (auto& [node, key] : keys) {
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
        o->span.node == kNone ? 0 : facts_.ImpairedWithin(f, o->span.node, o->span.from_us, o->span.to_us);
    orphan_candidates_.push_back(std::move(o));
  }
  for (auto& o : orphan_candidates_) FinalJudgeOrphan(f, std::move(o));
  orphan_candidates_.clear();
}

std::map<int, Orphans::OwnerKey>& Orphans::KeysOf(int lock) {
  if (keys_.size() <= static_cast<size_t>(lock)) keys_.resize(lock + 1);
  return keys_[lock];
}

Orphans::SyncState& Orphans::SyncOf(int lock) {
  if (sync_.size() <= static_cast<size_t>(lock)) sync_.resize(lock + 1);
  return sync_[lock];
}

int Orphans::Believing(int thread, int lock) const {
  auto it = believing_.find(Key(thread, lock));
  return it == believing_.end() ? 0 : it->second;
}

void Orphans::Touch(int lock) {
  if (std::find(touched_.begin(), touched_.end(), lock) == touched_.end()) touched_.push_back(lock);
}

template <class F>
void Orphans::ForOrphansOf(int lock, F f) {
  if (static_cast<size_t>(lock) < keys_.size()) {
    for (auto& [node, key] : keys_[lock]) {
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

// Locks with owners: a key listing owner fields, none of them a thread's that believes it
// holds the lock. Settled after every event that touched the lock, node by node.
void Orphans::SettleOrphans(const FactsPass& f, int lock, Seq seq, int64_t t_us) {
  if (f.protocol().ownerless()) return;
  for (auto& [node, key] : KeysOf(lock)) {
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
      o.window.Open(t_us, facts_.InFlight(lock), false);
      o.stories.clear();
      for (int owner : key.owners) o.stories.push_back(StoryOf(owner, lock));
    } else if (!orphan && key.orphan) {
      Orphan& o = key.open;
      o.span.to_seq = seq;
      o.span.to_us = t_us;
      o.ended = true;
      // Short ones need no more: the allowance only grows.
      o.span.impaired_us = facts_.ImpairedWithin(f, node, o.span.from_us, o.span.to_us);
      if (Lasted(o.span) > facts_.Allowed(facts_.LongestLeaseUs(f, lock))) {
        orphans_closing_.push_back(std::make_unique<Orphan>(std::move(o)));
      }
      o.ended = false;
    }
    key.orphan = orphan;
  }
}

// The owner's latest acquisition of the lock, as far as it is known now.
OwnerStory Orphans::StoryOf(int thread, int lock) const {
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

// An orphan whose span has ended: a candidate if it lasted longer than allowed so far. It is
// judged at the end of the run, when the acquisitions it kept out have ended and (locks with
// owners) the longest lease of the run is known.
void Orphans::JudgeOrphan(const FactsPass& f, std::unique_ptr<Orphan> o) {
  OrphanSpan& span = o->span;
  span.impaired_us = span.node == kNone ? 0 : facts_.ImpairedWithin(f, span.node, span.from_us, span.to_us);
  const int64_t allowed_us =
      o->kind == kOrphanedLock ? facts_.Allowed(facts_.LongestLeaseUs(f, span.lock)) : bound_us_;
  if (Lasted(span) <= allowed_us) return;  // It will never be one: the allowance only grows.
  orphan_candidates_.push_back(std::move(o));
}

// At the end of the run: a violation if it lasted longer than allowed.
void Orphans::FinalJudgeOrphan(const FactsPass& f, std::unique_ptr<Orphan> o) {
  OrphanSpan& span = o->span;
  if (o->kind == kOrphanedLock) {
    span.lease_us = facts_.LongestLeaseUs(f, span.lock);
    span.allowed_us = facts_.Allowed(span.lease_us);
  } else {
    span.allowed_us = bound_us_;
  }
  if (Lasted(span) > span.allowed_us) AddOrphan(std::move(o));
}

void Orphans::AddOrphan(std::unique_ptr<Orphan> o) {
  explained_->Add(o->span.lock, o->span.from_us, o->span.to_us);
  const FindingKey key{o->span.from_us, o->span.from_seq, static_cast<uint8_t>(o->kind),
                       static_cast<int64_t>(orphans_++), kNone, kNone};
  Payload p;
  p.orphan = std::move(o);
  found_.Add(key, std::move(p));
}

// Semaphores: permits taken on the node (P minus its count) beyond those that threads
// believing they hold permits hold, for longer than B. Latches: a count above the count-downs
// that threads which passed the latch can still make, from the crash of such a thread, for
// longer than B. Latches whose clients have roles: a count above what worker threads that
// passed it still owe while no counting-down process can go on.
void Orphans::SettleSynchronizers(const FactsPass& f, const history::Event& e) {
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
      st.open = OpenSyncOrphan(f, e, l, st, crashed_here ? &crashed->second : nullptr);
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

// A semaphore's or latch's orphan beginning with event e; `crashed`: the holders a crash there
// just ended.
std::unique_ptr<Orphan> Orphans::OpenSyncOrphan(const FactsPass& f, const history::Event& e, int lock,
                                                const SyncState& st, const std::vector<int>* crashed) {
  const bool roles = Roles(f);
  auto o = std::make_unique<Orphan>();
  o->kind = f.protocol().semaphore() ? kLeakedPermits : kOrphanedLatch;
  OrphanSpan& span = o->span;
  span.lock = lock;
  span.node = st.node;
  span.from_seq = e.seq;
  span.from_us = e.t_us;
  span.count = st.count;
  span.held = st.held_total;
  span.by_role = roles;
  if (crashed != nullptr) span.owners = *crashed;
  span.from_type = e.type;
  span.from_op = e.op;
  span.from_process = e.process == history::names::kNone ? f.sim_process() : f.ProcessNamed(e.process);
  span.from_thread = e.thread;
  span.from_detail = history::DetailText(e);
  o->window.Open(e.t_us, facts_.InFlight(lock), roles);
  return o;
}

bool Orphans::CounterLeft(const FactsPass& f) const {
  return std::any_of(counters_.begin(), counters_.end(), [&](const auto& c) {
    return c.second.up && c.second.done < f.processes()[c.first].role_threads;
  });
}

std::unique_ptr<Rule> MakeOrphans(const CheckOptions& options, const LivenessFacts& facts,
                                  ExplainedStretches* explained) {
  assert(explained != nullptr);
  return std::make_unique<Orphans>(options, facts, explained);
}

}  // namespace lockstep::check::liveness
