#include "history/facts.h"

#include <algorithm>
#include <cassert>

namespace lockstep::history {

namespace {

uint64_t Key(int a, int b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

bool Contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

OpKind KindOf(Name op) {
  if (op == names::kAcquire || op == names::kAcquireRead) return OpKind::kAcquire;
  if (op == names::kRelease || op == names::kReleaseRead) return OpKind::kRelease;
  if (op == names::kForceUnlock) return OpKind::kForceUnlock;
  return OpKind::kOther;
}

bool IsReadOp(Name op) { return op == names::kAcquireRead || op == names::kReleaseRead; }

std::optional<LeaseKind> LeaseKindOf(Name op) {
  switch (op) {
    case names::kAcquired: return LeaseKind::kAcquired;
    case names::kReleased: return LeaseKind::kReleased;
    case names::kExpired: return LeaseKind::kExpired;
    case names::kLost: return LeaseKind::kLost;
    case names::kOwners: return LeaseKind::kOwners;
    default: return std::nullopt;
  }
}

bool IsClientEvent(EventType type) {
  return type == EventType::kInvoke || type == EventType::kOk || type == EventType::kFail ||
         type == EventType::kInfo || type == EventType::kResource;
}

}  // namespace

void ProtocolInfo::SetKind(std::string k) {
  kind = std::move(k);
  const ProtocolKind* known = FindProtocolKind(kind);
  majority = known != nullptr && known->majority;
  compare_and_delete = false;
  zero_released = false;
  process_owners = false;
  if (known != nullptr) {
    for (std::string_view script : known->scripts) {
      if (script == "unlock_compare_and_delete") compare_and_delete = true;
    }
  }
  if (kind.empty()) {
    cls.reset();
  } else {
    cls = known == nullptr ? KindClass::kPlain : known->cls;
  }
}

const char* ImpairmentName(Impairment kind) {
  switch (kind) {
    case kDown: return "down";
    case kPaused: return "paused";
    case kPartitioned: return "partitioned";
    case kDeaf: return "losing replies";
    case kSlowOrLossy: return "on slow or lossy links";
    default: return "?";
  }
}

const char* OutcomeName(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk: return "ok";
    case Outcome::kFail: return "fail";
    case Outcome::kInfo: return "info (unknown)";
    case Outcome::kCrashed: return "a crash";
    case Outcome::kPending: return "nothing (still pending at the end)";
  }
  return "?";
}

KeptDetail::KeptDetail(const Event& e) {
  if (std::holds_alternative<AcquireCall>(e.detail) || std::holds_alternative<StockText>(e.detail) ||
      (std::holds_alternative<NoDetail>(e.detail) && e.source.empty())) {
    typed_ = e.detail;  // Nothing in it refers to the event's text.
    return;
  }
  typed_ = Text{};
  if (!e.source.empty()) {
    text_ = std::string(e.source);
  } else if (const Text* t = std::get_if<Text>(&e.detail)) {
    text_ = std::string(t->text);
  }
}

std::string KeptDetail::Render(EventType type, Name op) const {
  if (std::holds_alternative<history::Text>(typed_)) return text_;
  Event e;
  e.type = type;
  e.op = op;
  e.detail = typed_;
  return DetailText(e);
}

bool LeaseFact::Lists(int thread) const { return Contains(owners, thread); }
bool LeaseFact::Removes(int thread) const { return Contains(removed, thread); }
bool LeaseFact::TookFrom(int thread) const { return kind != LeaseKind::kAcquired && Removes(thread); }
bool LeaseFact::Gave(int thread) const {
  if (kind == LeaseKind::kAcquired) return Lists(thread) || Removes(thread);
  return kind == LeaseKind::kOwners && Contains(added, thread);
}

// Per thread and lock: what the thread believes, and whether the lock hash agrees.
struct FactsPass::HoldState {
  int count = 0;       // Acquisitions minus releases, never below 0.
  int read_count = 0;  // The same for the read side of a read-write lock.
  // Whether the count of the thread's field in the lock hash is known to equal `count`. An
  // unknown outcome, a crash or a lease loss makes it unknown; a definite "not held" (release
  // returned 1 or failed, the key was deleted) at count 0 makes it known again.
  bool count_known = true;
  bool has_belief[2] = {false, false};  // [shared]
  Span belief[2];
  bool has_access = false;
  Span access;
  int access_depth = 0;
  bool has_gap = false;
  LeaseGap gap;
  bool has_pending_loss = false;
  LossRecord pending_loss;  // A loss that came while the acquire was in flight.
  std::vector<LossRecord> losses[2];  // Since the belief on that side began, at most kLossesKept.
  Seq last_given = kOpenSeq;
  std::vector<int> alive_nodes;  // Nodes whose lock key holds this thread's field.

  int Count(bool shared) const { return shared ? read_count : count; }
  int& Count(bool shared) { return shared ? read_count : count; }
  int total() const { return count + read_count; }
  bool believes() const { return has_belief[0] || has_belief[1]; }
  const Span* any_belief() const {
    return has_belief[0] ? &belief[0] : has_belief[1] ? &belief[1] : nullptr;
  }
};

struct FactsPass::ThreadState {
  bool has_op = false;
  Op op;
  std::vector<HoldState> holds;  // By lock id.
  std::vector<int> locks;        // Locks it touches (invokes or resource events).
};

FactsPass::FactsPass(const NameTable* names, const FactsOptions& options)
    : names_(names), options_(options), lease_default_us_(options.lease_default_us) {
  protocol_.fair_wait_us = options.fair_wait_timeout_us;
  sim_process_ = NewProcess(names::kSim);
}

FactsPass::~FactsPass() = default;

int FactsPass::NewProcess(Name name) {
  if (process_of_name_.size() <= name) process_of_name_.resize(name + 1, kNone);
  int& id = process_of_name_[name];
  if (id == kNone) {
    id = static_cast<int>(processes_.size());
    processes_.emplace_back().name = name;
    process_uuid_.emplace_back();
  }
  return id;
}

int FactsPass::ProcessNamed(Name name) const {
  return name < process_of_name_.size() ? process_of_name_[name] : kNone;
}

int FactsPass::LockId(Name name) {
  if (lock_of_name_.size() <= name) lock_of_name_.resize(name + 1, kNone);
  int& id = lock_of_name_[name];
  if (id == kNone) {
    id = static_cast<int>(lock_names_.size());
    lock_names_.push_back(name);
    lock_threads_.emplace_back();
    lock_nodes_.emplace_back();
    believers_.emplace_back();
    if (name == names::kNone) empty_lock_ = id;
  }
  return id;
}

int FactsPass::ThreadOf(int process, int index) {
  assert(index >= 0);
  std::vector<int>& by_index = processes_[process].threads;
  if (by_index.size() <= static_cast<size_t>(index)) by_index.resize(index + 1, kNone);
  if (by_index[index] == kNone) {
    by_index[index] = static_cast<int>(threads_.size());
    Thread& t = threads_.emplace_back();
    t.process = process;
    t.index = index;
    t.name = std::string(ProcessName(process)) + ".t" + std::to_string(index);
    thread_states_.emplace_back();
    if (protocol_.process_owners) JoinProcessKeys(process, by_index[index]);
  }
  return by_index[index];
}

void FactsPass::TouchLock(int thread, int lock) {
  std::vector<int>& locks = thread_states_[thread].locks;
  if (std::find(locks.begin(), locks.end(), lock) == locks.end()) {
    locks.push_back(lock);
    lock_threads_[lock].push_back(thread);
  }
}

FactsPass::HoldState& FactsPass::Hold(int thread, int lock) {
  assert(thread >= 0 && lock >= 0);
  std::vector<HoldState>& holds = thread_states_[thread].holds;
  if (holds.size() <= static_cast<size_t>(lock)) holds.resize(lock + 1);
  return holds[lock];
}

const FactsPass::HoldState* FactsPass::FindHold(int thread, int lock) const {
  if (thread < 0 || lock < 0) return nullptr;
  const std::vector<HoldState>& holds = thread_states_[thread].holds;
  return static_cast<size_t>(lock) < holds.size() ? &holds[lock] : nullptr;
}

void FactsPass::Warn(const Event& e, const std::string& what) {
  ++warning_count_;
  if (warnings_.size() < options_.max_warnings) {
    warnings_.push_back("seq " + std::to_string(e.seq) + ": " + what);
  }
}

// The thread whose owner field ("<uuid>:<thread+1>", perhaps with a suffix such as ":write")
// this is, or kNone for a client or thread the history does not know.
int FactsPass::OwnerThread(std::string_view field) const {
  if (const auto announced = holder_values_.Find(field)) return static_cast<int>(*announced);
  const size_t colon = field.find(':');
  if (colon == std::string_view::npos) return kNone;
  const auto it = uuid_process_.find(field.substr(0, colon));
  if (it == uuid_process_.end()) return kNone;
  std::string_view rest = field.substr(colon + 1);
  rest = rest.substr(0, rest.find(':'));
  const auto number = ParseInt(rest);
  if (!number || *number < 1) return kNone;
  const std::vector<int>& threads = processes_[it->second].threads;
  return static_cast<size_t>(*number - 1) < threads.size() ? threads[*number - 1] : kNone;
}

// A thread first seen in a process whose uuid is a key's owner (owner=process): the keys its
// process holds name it too, as they name its process's other threads.
void FactsPass::JoinProcessKeys(int process, int thread) {
  const std::vector<int>& siblings = processes_[process].threads;
  for (auto& [key, owners] : node_owners_) {
    const bool held = std::any_of(owners.begin(), owners.end(), [&](int t) {
      return t != thread && Contains(siblings, t);
    });
    if (!held || Contains(owners, thread)) continue;
    owners.push_back(thread);
    const int node = static_cast<int>(key >> 32);
    const int lock = static_cast<int>(key & 0xffffffffu);
    std::vector<int>& alive = Hold(thread, lock).alive_nodes;
    if (!Contains(alive, node)) alive.push_back(node);
  }
}

int FactsPass::OwnerProcess(std::string_view field) const {
  if (!protocol_.process_owners || field.find(':') != std::string_view::npos) return kNone;
  const auto it = uuid_process_.find(field);
  return it == uuid_process_.end() ? kNone : it->second;
}

bool FactsPass::FieldNames(std::string_view field, int thread) const {
  if (const int p = OwnerProcess(field); p != kNone) return Contains(processes_[p].threads, thread);
  return OwnerThread(field) == thread;
}

bool FactsPass::Inside(int thread, int lock) const {
  if (const HoldState* hs = FindHold(thread, lock); hs && hs->access_depth > 0) return true;
  if (empty_lock_ == kNone) return false;
  const HoldState* any = FindHold(thread, empty_lock_);
  return any != nullptr && any->access_depth > 0;
}

bool FactsPass::Holding(int thread, int lock) const {
  const HoldState* hs = FindHold(thread, lock);
  return (hs != nullptr && hs->believes()) || Inside(thread, lock);
}

bool FactsPass::Releasing(int thread, int lock) const {
  const ThreadState& t = thread_states_[thread];
  return t.has_op && t.op.lock == lock &&
         (t.op.kind == OpKind::kRelease || t.op.kind == OpKind::kForceUnlock);
}

int FactsPass::Alive(int thread, int lock) const {
  const HoldState* hs = FindHold(thread, lock);
  return hs == nullptr ? 0 : static_cast<int>(hs->alive_nodes.size());
}

template <class F>
void FactsPass::ForLocksOfResource(int thread, int lock, F f) {
  if (lock != empty_lock_) {
    f(lock);
    return;
  }
  // Resource events without a lock stand for the resource of every lock the thread uses. (A
  // copy: f may touch the thread's locks.)
  const std::vector<int> locks = thread_states_[thread].locks;
  for (int l : locks) f(l);
}

const Span* FactsPass::BeliefOf(int thread, int lock, bool shared) const {
  const HoldState* hs = FindHold(thread, lock);
  return hs != nullptr && hs->has_belief[shared] ? &hs->belief[shared] : nullptr;
}

const Span* FactsPass::AccessOf(int thread, int lock) const {
  const HoldState* hs = FindHold(thread, lock);
  return hs != nullptr && hs->has_access ? &hs->access : nullptr;
}

const Op* FactsPass::OpOf(int thread) const {
  const ThreadState& t = thread_states_[thread];
  return t.has_op ? &t.op : nullptr;
}

const std::vector<LossRecord>& FactsPass::LossesSinceBelief(int thread, int lock, bool shared) const {
  static const std::vector<LossRecord> kNoLosses;
  const HoldState* hs = FindHold(thread, lock);
  return hs == nullptr ? kNoLosses : hs->losses[shared];
}

int FactsPass::LockNamed(Name name) const {
  return name < lock_of_name_.size() ? lock_of_name_[name] : kNone;
}

int FactsPass::ExecThread(const Event& exec) const {
  if (exec.peer == names::kNone || exec.thread < 0) return kNone;
  const int client = ProcessNamed(exec.peer);
  if (client == kNone) return kNone;
  const std::vector<int>& threads = processes_[client].threads;
  return static_cast<size_t>(exec.thread) < threads.size() ? threads[exec.thread] : kNone;
}

std::string_view FactsPass::KeyOn(int node, int lock) const {
  const auto it = node_key_.find(Key(node, lock));
  return it == node_key_.end() ? std::string_view() : std::string_view(it->second);
}

int64_t FactsPass::PermitsAllowed(int lock) const {
  const int64_t added =
      static_cast<size_t>(lock) < added_permits_.size() ? added_permits_[lock] : 0;
  return protocol_.permits + added;
}

Seq FactsPass::LastGiven(int thread, int lock) const {
  const HoldState* hs = FindHold(thread, lock);
  return hs == nullptr ? kOpenSeq : hs->last_given;
}

// --- the pass --------------------------------------------------------------------------------

void FactsPass::OnEvent(const Event& e) {
  assert(!finished_);
  ++events_;
  last_t_us_ = e.t_us;
  for (FactsObserver* o : event_observers_) o->OnEvent(*this, e);
  // Every process, thread and lock gets its id the first time the history names it.
  const int process = e.process == names::kNone ? sim_process_ : NewProcess(e.process);
  if (e.peer != names::kNone) NewProcess(e.peer);
  const int lock = LockId(e.lock);
  if (IsClientEvent(e.type) && e.thread >= 0) {
    processes_[process].client = true;
    TouchLock(ThreadOf(process, e.thread), lock);
  }
  // A semaphore script that resizes the permits (addPermits, drainPermits): its effect is the
  // lease event that follows its exec at once.
  const int resizing = resizing_node_;
  resizing_node_ = kNone;
  if (e.type == EventType::kExec && protocol_.semaphore()) {
    const std::string_view label = names_->Str(e.op);
    if (label == "add_permits" || label == "drain_permits") resizing_node_ = process;
  }
  switch (e.type) {
    case EventType::kNote: OnNote(e); break;
    case EventType::kInvoke: OnInvoke(e); break;
    case EventType::kOk:
    case EventType::kFail:
    case EventType::kInfo: OnCompletion(e); break;
    case EventType::kResource: OnResource(e); break;
    case EventType::kLease: OnLeaseEvent(e, resizing); break;
    case EventType::kExec: OnExec(e); break;
    case EventType::kFault: OnFaultEvent(e); break;
    case EventType::kMessage:
    case EventType::kReplicated: break;  // Replicas are not judged.
  }
  for (FactsObserver* o : event_observers_) o->OnEventDone(*this, e);
}

void FactsPass::OnNote(const Event& e) {
  const int process = e.process == names::kNone ? sim_process_ : ProcessNamed(e.process);
  switch (e.op) {
    case names::kClient: {
      processes_[process].client = true;
      const auto note = AsClientNote(e);
      if (!note || note->uuid.empty()) {
        Warn(e, "client note without uuid=");
        return;
      }
      const std::string uuid(note->uuid);
      // A restarted client announces a new uuid; fields of the old one belong to a dead
      // incarnation, not to the threads running now.
      std::string& current = process_uuid_[process];
      if (!current.empty() && current != uuid) uuid_process_.erase(current);
      current = uuid;
      uuid_process_[uuid] = process;
      // A new uuid (a restarted client) has no fields in any lock hash yet.
      const std::vector<int>& threads = processes_[process].threads;
      for (int thread : threads) {
        if (thread == kNone) continue;
        for (HoldState& hs : thread_states_[thread].holds) {
          if (hs.total() == 0) hs.count_known = true;
          hs.alive_nodes.clear();
        }
      }
      for (auto& [key, owners] : node_owners_) {
        std::erase_if(owners, [&](int t) {
          return std::find(threads.begin(), threads.end(), t) != threads.end();
        });
      }
      for (int thread : threads) {
        if (thread != kNone) holder_values_.Forget(thread);
      }
      return;
    }
    case names::kHolderValue: {
      const auto note = AsHolderNote(e);
      const int thread = e.thread >= 0 ? ThreadOf(process, e.thread) : kNone;
      if (!note || thread == kNone) {
        Warn(e, "holder_value note without a thread or value=");
        return;
      }
      holder_values_.Announce(note->value, thread);
      return;
    }
    case names::kRun:
      if (const auto run = AsRunNote(e)) run_note_end_us_ = run->end_us;
      return;
    case names::kEnd: end_note_us_ = e.t_us; return;
    case names::kLeaseDefault:
      if (e.has_value) lease_default_us_ = e.value;
      return;
    case names::kProtocol: {
      const auto note = AsProtocolNote(e);
      if (!note) return;
      protocol_seen_ = true;
      ProtocolInfo& p = protocol_;
      p.SetKind(std::string(note->kind));
      // A client program declares its unlock's answers (the built-in kinds are known by name).
      if (note->unlock == "compare-and-delete") p.compare_and_delete = true;
      if (note->unlock == "redisson") p.compare_and_delete = false;
      if (note->unlock == "zero-released") p.zero_released = true;
      if (note->owner == "process") p.process_owners = true;
      // And whether its lock is the key on every master (Redlock's majority, or all of them).
      if (note->quorum == "majority" || note->quorum == "all") {
        p.cls = KindClass::kQuorum;
        p.majority = note->quorum == "majority";
      }
      p.version = std::string(note->version);
      p.fencing = note->fencing;
      p.permits = note->permits;
      p.nodes = note->nodes > 0 ? note->nodes : 0;
      p.fair_wait_us =
          note->fair_wait_timeout_us > 0 ? note->fair_wait_timeout_us : options_.fair_wait_timeout_us;
      if (p.quorum_kind()) {
        if (p.nodes == 0) p.nodes = std::max(1, options_.nodes_hint);
        p.quorum = p.majority ? MajorityOf(p.nodes) : p.nodes;
      }
      return;
    }
    case names::kRole: {
      Process& p = processes_[process];
      const auto role = AsRoleNote(e);
      if (!role) {
        Warn(e, "role note with an unknown role=");
        return;
      }
      p.role = role->role;
      p.role_threads = role->threads;
      roles_ = true;
      return;
    }
    default: return;
  }
}

void FactsPass::OnInvoke(const Event& e) {
  if (e.thread < 0) {
    Warn(e, "invoke without a thread");
    return;
  }
  if (IsReadOp(e.op)) has_read_ops_ = true;
  const int thread = ThreadOf(ProcessNamed(e.process == names::kNone ? names::kSim : e.process),
                              e.thread);
  const int lock = lock_of_name_[e.lock];
  ThreadState& ts = thread_states_[thread];
  if (ts.has_op) {
    // One operation at a time per thread: the earlier one's outcome is unknown.
    Warn(e, threads_[thread].name + " invoked while an operation was in flight");
    EndOp(thread, e, Outcome::kInfo);
  }
  ts.has_op = true;
  Op& op = ts.op;
  std::vector<std::pair<int64_t, int>> nodes = std::move(op.nodes);  // Keep the capacity.
  nodes.clear();
  op = Op{};
  op.nodes = std::move(nodes);
  op.id = next_op_++;
  op.name = e.op;
  op.kind = KindOf(e.op);
  op.shared = IsReadOp(e.op);
  op.thread = thread;
  op.lock = lock;
  op.invoke_seq = e.seq;
  op.invoke_us = e.t_us;
  op.invoke_detail = KeptDetail(e);
  HoldState& hs = Hold(thread, lock);
  op.count_before = hs.Count(op.shared);
  op.count_known = hs.count_known;
  const bool semaphore = protocol_.semaphore();
  if (semaphore) op.permits = PermitsOf(e);
  if (op.kind != OpKind::kRelease && op.kind != OpKind::kForceUnlock) op.wait_us = AcquireWaitUs(e);
  if (op.kind == OpKind::kAcquire) {
    if (!semaphore) {  // A semaphore's invoke value is its permits, not a lease.
      op.lease_us = !e.has_value ? -1 : std::clamp<int64_t>(e.value, 0, kForeverUs / 1000) * 1000;
    }
    const auto node = last_node_.find(Key(threads_[thread].process, lock));
    op.fallback_node = node == last_node_.end() ? kNone : node->second;
  }
  for (FactsObserver* o : observers_) o->OnOpInvoked(*this, op);

  const bool shared = op.shared;
  if (op.kind == OpKind::kRelease && hs.Count(shared) > 0) {
    // The thread stops relying on the lock when it starts the release that ends its last
    // hold, whatever the release's outcome.
    if (--hs.Count(shared) == 0) EndBelief(thread, lock, e.seq, e.t_us, EndCause::kRelease, shared);
    MaybeCloseGap(thread, lock, e);
  } else if (op.kind == OpKind::kForceUnlock) {
    for (const bool side : {false, true}) {
      if (hs.Count(side) > 0) {
        hs.Count(side) = 0;
        EndBelief(thread, lock, e.seq, e.t_us, EndCause::kForceUnlock, side);
      }
    }
    MaybeCloseGap(thread, lock, e);
    hs.count_known = false;  // Until the forceUnlock is known to have deleted the key.
  }
}

// Ends the thread's operation in flight without a completion event (crash, superseded).
void FactsPass::EndOp(int thread, const Event& e, Outcome outcome) {
  ThreadState& ts = thread_states_[thread];
  assert(ts.has_op);
  Op& op = ts.op;
  op.outcome = outcome;
  op.end_seq = e.seq;
  op.end_us = e.t_us;
  ts.has_op = false;
  HoldState& hs = Hold(thread, op.lock);
  hs.has_pending_loss = false;
  if (op.kind != OpKind::kOther) hs.count_known = false;
  for (FactsObserver* o : observers_) o->OnOpEnded(*this, op);
}

void FactsPass::OnCompletion(const Event& e) {
  if (e.thread < 0) {
    Warn(e, std::string(TypeName(e.type)) + " without a thread");
    return;
  }
  const int thread = ThreadOf(ProcessNamed(e.process == names::kNone ? names::kSim : e.process),
                              e.thread);
  ThreadState& ts = thread_states_[thread];
  if (!ts.has_op) {
    Warn(e, std::string(TypeName(e.type)) + " of " + threads_[thread].name + " without an invoke");
    return;
  }
  ts.has_op = false;
  Op& op = ts.op;
  if (e.op != op.name || lock_of_name_[e.lock] != op.lock) {
    Warn(e, "completion does not match its invoke (seq " + std::to_string(op.invoke_seq) + ")");
  }
  op.outcome = e.type == EventType::kOk     ? Outcome::kOk
               : e.type == EventType::kFail ? Outcome::kFail
                                            : Outcome::kInfo;
  op.end_seq = e.seq;
  op.end_us = e.t_us;
  op.has_value = e.has_value;
  op.value = e.value;
  if (op.outcome != Outcome::kOk) op.end_detail = DetailText(e);
  HoldState& hs = Hold(thread, op.lock);
  switch (op.kind) {
    case OpKind::kAcquire: OnAcquireEnd(op, e); return;
    case OpKind::kRelease:
      if (op.outcome == Outcome::kOk && op.has_value && op.value >= 1) {
        hs.count_known = hs.total() == 0;  // The field is gone from the hash.
      } else if (op.outcome == Outcome::kOk && op.has_value && op.value == 0) {
        if (hs.total() == 0) hs.count_known = false;  // The hash still counts a hold.
      } else if (op.outcome == Outcome::kFail) {
        hs.count_known = hs.total() == 0;  // Not the owner: the field is absent.
      } else if (op.outcome == Outcome::kInfo) {
        hs.count_known = false;
      }
      break;
    case OpKind::kForceUnlock: hs.count_known = op.outcome == Outcome::kOk; break;
    case OpKind::kOther: break;
  }
  for (FactsObserver* o : observers_) o->OnOpEnded(*this, op);
}

void FactsPass::OnAcquireEnd(Op& op, const Event& e) {
  HoldState& hs = Hold(op.thread, op.lock);
  const bool pending = hs.has_pending_loss;
  const LossRecord pending_loss = hs.pending_loss;
  hs.has_pending_loss = false;
  if (op.outcome == Outcome::kInfo) hs.count_known = false;  // It may hold now.
  for (FactsObserver* o : observers_) o->OnOpEnded(*this, op);
  if (op.outcome != Outcome::kOk) return;
  if (++hs.Count(op.shared) == 1) {
    StartBelief(op.thread, op.lock, e, op);
  } else {
    // A reentry sets the lease again (Redisson's script runs pexpire with it).
    Span& belief = hs.belief[op.shared];
    belief.lease_us = op.lease_us;
    if (e.has_value) {
      belief.has_token = true;
      belief.token = e.value;
    }
  }
  if (pending && hs.Count(op.shared) == 1) {
    // The loss while the acquire was in flight is the first of the belief it starts: what an
    // explanation of that belief says about its lease (LossesSinceBelief) includes it.
    hs.losses[op.shared].push_back(pending_loss);
  }
  if (pending && !(Quorum() > 0 && Alive(op.thread, op.lock) >= Quorum())) {
    // The lease was lost while the acquire was in flight: the thread starts out believing it
    // holds a lock the node (for RedLock: a quorum of nodes) no longer records for it.
    assert(hs.Count(op.shared) == 1);
    hs.count_known = false;
    OpenGap(op.thread, op.lock, pending_loss, e, /*at_acquire=*/true);
  }
}

void FactsPass::StartBelief(int thread, int lock, const Event& e, const Op& op) {
  HoldState& hs = Hold(thread, lock);
  const bool shared = op.shared;
  assert(!hs.has_belief[shared]);
  const bool believed = hs.believes();
  Span& s = hs.belief[shared];
  s = Span{};
  s.id = next_belief_++;
  s.thread = thread;
  s.lock = lock;
  s.start_seq = e.seq;
  s.start_us = e.t_us;
  s.op = op.id;
  s.lease_us = op.lease_us;
  s.shared = shared;
  s.has_token = e.has_value;
  s.token = e.value;
  hs.has_belief[shared] = true;
  hs.losses[shared].clear();
  if (!believed) believers_[lock].push_back(thread);
  for (FactsObserver* o : observers_) o->OnSpanStarted(*this, s);
}

void FactsPass::EndBelief(int thread, int lock, Seq seq, int64_t t_us, EndCause cause, bool shared) {
  HoldState& hs = Hold(thread, lock);
  assert(hs.has_belief[shared]);
  Span& s = hs.belief[shared];
  assert(seq > s.start_seq);
  s.end_seq = seq;
  s.end_us = t_us;
  s.cause = cause;
  hs.has_belief[shared] = false;
  // A gap that cut this belief short tells of the belief as it ended (a reentry may have set a
  // new lease since the gap opened).
  if (hs.has_gap && hs.gap.has_belief && hs.gap.belief.id == s.id) hs.gap.belief = s;
  if (!hs.believes()) {
    std::vector<int>& believers = believers_[lock];
    believers.erase(std::find(believers.begin(), believers.end(), thread));
  }
  for (FactsObserver* o : observers_) o->OnSpanEnded(*this, s);
}

void FactsPass::EndAccess(int thread, int lock, Seq seq, int64_t t_us, EndCause cause) {
  HoldState& hs = Hold(thread, lock);
  assert(hs.has_access);
  Span& s = hs.access;
  s.end_seq = seq;
  s.end_us = t_us;
  s.cause = cause;
  hs.has_access = false;
  for (FactsObserver* o : observers_) o->OnSpanEnded(*this, s);
}

void FactsPass::OnResource(const Event& e) {
  if (e.thread < 0) {
    Warn(e, "resource event without a thread");
    return;
  }
  const int thread = ThreadOf(ProcessNamed(e.process == names::kNone ? names::kSim : e.process),
                              e.thread);
  const int lock = lock_of_name_[e.lock];
  HoldState& hs = Hold(thread, lock);
  if (e.op == names::kEnter) {
    if (hs.access_depth++ > 0) return;  // Nested: the outer access covers it.
    Span& s = hs.access;
    s = Span{};
    s.id = next_access_++;
    s.access = true;
    s.thread = thread;
    s.lock = lock;
    s.start_seq = e.seq;
    s.start_us = e.t_us;
    s.shared = IsReadAccess(e);
    s.has_token = e.has_value;
    s.token = e.value;
    hs.has_access = true;
    for (FactsObserver* o : observers_) o->OnSpanStarted(*this, s);
    const Span access = s;
    ForLocksOfResource(thread, lock, [&](int l) {
      HoldState& h = Hold(thread, l);
      if (!h.has_gap || h.gap.used_resource) return;
      h.gap.used_resource = true;
      h.gap.use_seq = e.seq;
      h.gap.use_us = e.t_us;
      h.gap.use_has_token = access.has_token;
      h.gap.use_token = access.token;
    });
  } else if (e.op == names::kExit) {
    if (hs.access_depth == 0) {
      Warn(e, "exit of " + threads_[thread].name + " without an enter");
      return;
    }
    if (--hs.access_depth > 0) return;
    EndAccess(thread, lock, e.seq, e.t_us, EndCause::kExit);
    ForLocksOfResource(thread, lock, [&](int l) { MaybeCloseGap(thread, l, e); });
  } else {
    Warn(e, "unknown resource op \"" + std::string(names_->Str(e.op)) + "\"");
  }
}

void FactsPass::OnLeaseEvent(const Event& e, int resizing_node) {
  const auto kind = LeaseKindOf(e.op);
  if (!kind) {
    Warn(e, "unknown lease op \"" + std::string(names_->Str(e.op)) + "\"");
    return;
  }
  const int lock = lock_of_name_[e.lock];
  LeaseFact& le = lease_;
  le.id = next_lease_++;
  le.seq = e.seq;
  le.t_us = e.t_us;
  le.node = ProcessNamed(e.process == names::kNone ? names::kSim : e.process);
  le.lock = lock;
  le.kind = *kind;
  le.detail = {};
  if (const Owners* o = std::get_if<Owners>(&e.detail)) le.detail = o->list;
  else if (!e.source.empty()) le.detail = e.source;
  le.owners_listed = !Trim(le.detail).empty();
  le.owners.clear();
  le.added.clear();
  le.removed.clear();
  le.resized = 0;
  ForEachOwnerField(le.detail, [&](std::string_view field) {
    ForEachOwnerThread(field, [&](int owner) {
      if (!Contains(le.owners, owner)) le.owners.push_back(owner);
    });
  });
  if (!Contains(lease_nodes_, le.node)) lease_nodes_.push_back(le.node);
  if (!Contains(lock_nodes_[lock], le.node)) lock_nodes_[lock].push_back(le.node);
  std::string& key_text = node_key_[Key(le.node, lock)];
  if (le.kind == LeaseKind::kAcquired || le.kind == LeaseKind::kOwners) {
    key_text.assign(le.detail);
  } else {
    key_text.clear();
  }
  // What changed on this node: the fields that appeared and those that went.
  std::vector<int>& before = node_owners_[Key(le.node, lock)];
  if (le.kind == LeaseKind::kAcquired || le.kind == LeaseKind::kOwners) {
    for (int t : le.owners) {
      if (!Contains(before, t)) le.added.push_back(t);
    }
    for (int t : before) {
      if (!Contains(le.owners, t)) le.removed.push_back(t);
    }
    before = le.owners;
  } else {
    le.removed = le.owners;
    for (int t : before) {
      if (!Contains(le.removed, t)) le.removed.push_back(t);
    }
    before.clear();
  }
  le.believers = believers_[lock];
  const LossRecord record{le.seq, le.t_us, le.node, le.kind};
  auto note = [&](int thread) {
    HoldState& hs = Hold(thread, lock);
    if (le.TookFrom(thread)) {
      for (auto& losses : hs.losses) {
        if (losses.size() < kLossesKept) losses.push_back(record);
      }
    }
    if (le.Gave(thread)) hs.last_given = le.seq;
  };
  for (int owner : le.owners) note(owner);
  for (int gone : le.removed) {
    if (!Contains(le.owners, gone)) note(gone);
  }
  for (int t : le.added) {
    std::vector<int>& alive = Hold(t, lock).alive_nodes;
    if (!Contains(alive, le.node)) alive.push_back(le.node);
  }
  for (int t : le.removed) std::erase(Hold(t, lock).alive_nodes, le.node);
  if (protocol_.semaphore()) {
    const bool present = le.kind == LeaseKind::kAcquired || le.kind == LeaseKind::kOwners;
    const std::optional<int64_t> count = present ? CountOf(le.detail) : std::optional<int64_t>(0);
    if (count) {
      int64_t& before = node_count_.try_emplace(Key(le.node, lock), -1).first->second;
      if (resizing_node == le.node) {
        le.resized = *count - std::max<int64_t>(before, 0);
        if (added_permits_.size() <= static_cast<size_t>(lock)) added_permits_.resize(lock + 1);
        added_permits_[lock] += std::max<int64_t>(0, le.resized);
      }
      before = *count;
    }
  }
  for (FactsObserver* o : observers_) o->OnLease(*this, le);

  if (le.kind == LeaseKind::kAcquired || le.kind == LeaseKind::kOwners) {
    const std::vector<int> arrived = le.kind == LeaseKind::kAcquired ? le.owners : le.added;
    for (int owner : arrived) {
      HoldState& hs = Hold(owner, lock);
      if (Quorum() > 0) {
        // RedLock: the loss that mattered was the quorum's; it is back once a quorum is.
        if (hs.has_gap && Alive(owner, lock) >= Quorum()) {
          CloseGap(owner, lock, e.seq, e.t_us, GapEnd::kReacquired);
        }
        continue;
      }
      if (hs.has_pending_loss && hs.pending_loss.node == le.node) {
        hs.has_pending_loss = false;  // Its acquire ran after the loss and created the key anew.
      }
      if (hs.has_gap && hs.gap.node == le.node) {
        CloseGap(owner, lock, e.seq, e.t_us, GapEnd::kReacquired);
      }
    }
    // A field dropped while the key stays (a reader's field going): harmless when its own
    // release removed it, a loss when it still believed it held the lock.
    const std::vector<int> removed = le.removed;
    for (int gone : removed) {
      HoldState& hs = Hold(gone, lock);
      hs.count_known = hs.total() == 0;
      if (le.kind == LeaseKind::kOwners && !Releasing(gone, lock)) Lose(gone, lock, record, e);
    }
    return;
  }
  // The key is gone from this node, so every field that was in it is at 0.
  const std::vector<int> affected = le.owners_listed ? le.removed : lock_threads_[lock];
  for (int thread : affected) {
    HoldState& hs = Hold(thread, lock);
    hs.count_known = hs.total() == 0;
  }
  const std::vector<int> removed = le.removed;
  if (le.kind == LeaseKind::kExpired || le.kind == LeaseKind::kLost) {
    for (int owner : removed) Lose(owner, lock, record, e);
  } else {
    // Deleted by a command: the owner's own release, or someone else's (an unlock that does
    // not check the owner, a read unlock discarding readers whose timeouts ran out), which
    // takes the lease away from under it as surely as an expiry.
    for (int owner : removed) {
      if (!Releasing(owner, lock)) Lose(owner, lock, record, e);
    }
  }
}

// The thread's field went from a node. For RedLock/MultiLock that is a loss of the lease only
// when its field is left on fewer than a quorum of nodes; a loss while its acquire is in flight
// is remembered and judged at the acquire's ok.
void FactsPass::Lose(int thread, int lock, const LossRecord& loss, const Event& at) {
  if (Quorum() > 0 && Holding(thread, lock) && Alive(thread, lock) >= Quorum()) return;
  OpenGap(thread, lock, loss, at, /*at_acquire=*/false);
}

// `at` is the loss itself, or the ok of an acquire during which the loss came.
void FactsPass::OpenGap(int thread, int lock, const LossRecord& loss, const Event& at,
                        bool at_acquire) {
  HoldState& hs = Hold(thread, lock);
  if (hs.has_gap || hs.has_pending_loss) return;  // The first loss counts.
  if (!Holding(thread, lock)) {
    const ThreadState& ts = thread_states_[thread];
    if (ts.has_op && ts.op.kind == OpKind::kAcquire && ts.op.lock == lock) {
      hs.has_pending_loss = true;
      hs.pending_loss = loss;
    }
    return;
  }
  LeaseGap& g = hs.gap;
  g = LeaseGap{};
  g.id = next_gap_++;
  g.thread = thread;
  g.lock = lock;
  g.node = loss.node;
  g.loss = loss;
  g.alive = Quorum() > 0 ? Alive(thread, lock) : -1;
  if (const Span* b = hs.any_belief()) {
    g.has_belief = true;
    g.belief = *b;
    for (const LossRecord& r : hs.losses[b->shared]) {
      if (r.seq < loss.seq) g.earlier_losses.push_back(r);
    }
  }
  g.at_acquire = at_acquire;
  g.from_seq = at.seq;
  g.from_us = at.t_us;
  if (Inside(thread, lock)) {
    const HoldState* owner = hs.has_access ? &hs : FindHold(thread, empty_lock_);
    g.used_resource = true;
    if (owner != nullptr && owner->has_access) {
      g.use_seq = owner->access.start_seq;
      g.use_has_token = owner->access.has_token;
      g.use_token = owner->access.token;
    }
    g.use_us = at.t_us;
  }
  hs.has_gap = true;
}

void FactsPass::CloseGap(int thread, int lock, Seq seq, int64_t t_us, GapEnd end) {
  HoldState& hs = Hold(thread, lock);
  assert(hs.has_gap);
  LeaseGap& g = hs.gap;
  g.to_seq = seq;
  g.to_us = t_us;
  g.end = end;
  assert(g.to_us >= g.from_us);
  // The belief it cut short as it stands now (a reentry may have set a new lease since).
  if (g.has_belief) {
    if (const Span* b = BeliefOf(thread, lock, g.belief.shared); b && b->id == g.belief.id) {
      g.belief = *b;
    }
  }
  hs.has_gap = false;
  for (FactsObserver* o : observers_) o->OnGapClosed(*this, g);
}

void FactsPass::MaybeCloseGap(int thread, int lock, const Event& e) {
  if (Hold(thread, lock).has_gap && !Holding(thread, lock)) {
    CloseGap(thread, lock, e.seq, e.t_us, GapEnd::kStoppedHolding);
  }
}

void FactsPass::OnExec(const Event& e) {
  if (e.peer == names::kNone || e.lock == names::kNone) return;
  const int node = ProcessNamed(e.process == names::kNone ? names::kSim : e.process);
  const int client = ProcessNamed(e.peer);
  const int lock = lock_of_name_[e.lock];
  assert(client != kNone);
  last_node_[Key(client, lock)] = node;
  // Which acquire in flight the command belongs to: the event's thread, or else the only
  // thread of that client acquiring this lock.
  const std::vector<int>& threads = processes_[client].threads;
  int owner = kNone;
  if (e.thread >= 0) {
    if (static_cast<size_t>(e.thread) < threads.size()) owner = threads[e.thread];
  } else {
    int candidates[2] = {kNone, kNone};
    int n = 0;
    for (int t : threads) {
      if (t == kNone || !thread_states_[t].has_op) continue;
      const Op& op = thread_states_[t].op;
      if (op.kind == OpKind::kAcquire && op.lock == lock) {
        if (n < 2) candidates[n] = t;
        ++n;
      }
    }
    if (n == 1) {
      owner = candidates[0];
    } else if (n > 1 && (e.op == names::kAcquire || e.op == names::kTryAcquire)) {
      // Any of them may have queued (or been granted) here: none can be placed in the queue.
      for (int t : threads) {
        if (t == kNone || !thread_states_[t].has_op) continue;
        Op& op = thread_states_[t].op;
        if (op.kind == OpKind::kAcquire && op.lock == lock && op.arrival_seq == kOpenSeq) {
          op.exec_ambiguous = true;
        }
      }
    }
  }
  if (owner == kNone || !thread_states_[owner].has_op) return;
  Op& op = thread_states_[owner].op;
  if (op.kind != OpKind::kAcquire || op.lock != lock) return;
  if (op.nodes.empty() || op.nodes.back().second != node) op.nodes.emplace_back(e.t_us, node);
  // The fair lock's queue: the op's first acquire script either granted it (nil) or queued it
  // (an integer, the ttl); error replies do neither. tryLock()'s "try_acquire" never queues:
  // only its grant (nil) is an arrival.
  if (op.arrival_seq == kOpenSeq && !op.exec_ambiguous &&
      (e.op == names::kAcquire || e.op == names::kTryAcquire)) {
    std::string scratch;
    const std::string_view reply = ReplyText(e, &scratch);
    const bool nil = IsNilReply(reply);
    if ((e.op == names::kAcquire && (nil || IntegerReply(reply).has_value())) ||
        (e.op == names::kTryAcquire && nil)) {
      op.arrival_seq = e.seq;
      op.arrival_us = e.t_us;
      op.queued = !nil;
      const auto held = node_owners_.find(Key(node, lock));
      op.node_reentry = nil && held != node_owners_.end() && Contains(held->second, owner);
      for (FactsObserver* o : observers_) o->OnOpArrived(*this, op);
    }
  }
}

void FactsPass::OnFaultEvent(const Event& e) {
  const int process = e.process == names::kNone ? sim_process_ : ProcessNamed(e.process);
  FaultRecord& f = faults_.emplace_back();
  f.seq = e.seq;
  f.t_us = e.t_us;
  f.process = process;
  f.op = e.op;
  f.detail = DetailText(e);
  Process& p = processes_[process];
  if (e.op == names::kCrash && p.client) CrashClient(process, e);
  // What the fault keeps its process from doing, as the kinds' table says
  // (history/fault_kinds.h). Messages that arrive late or not at all keep a process from taking
  // part as a partition does; several such windows may be open at once, and the stretch ends
  // with the last of them.
  if (const FaultKindInfo* started = FaultStartedBy(e.op);
      started != nullptr && started->impairment != kImpairmentKinds) {
    if (!started->network_window || p.network_windows_open++ == 0) {
      StartImpairment(process, started->impairment, e.t_us);
    }
  } else if (const FaultKindInfo* ended = FaultEndedBy(e.op);
             ended != nullptr && ended->impairment != kImpairmentKinds) {
    if (ended->network_window) {
      if (p.network_windows_open > 0 && --p.network_windows_open == 0) {
        EndImpairment(process, ended->impairment, e.t_us);
      }
    } else if (ended->keyed_by_text && process == sim_process_) {
      // The simulator's heal ends the stretch of every process.
      for (size_t i = 0; i < processes_.size(); ++i) {
        EndImpairment(static_cast<int>(i), ended->impairment, e.t_us);
      }
    } else {
      EndImpairment(process, ended->impairment, e.t_us);
    }
  }
  for (FactsObserver* o : observers_) o->OnFault(*this, faults_.back());
}

void FactsPass::StartImpairment(int process, Impairment kind, int64_t t_us) {
  int64_t& since = processes_[process].impaired_since_us[kind];
  if (since < 0) since = t_us;
}

void FactsPass::EndImpairment(int process, Impairment kind, int64_t t_us) {
  Process& p = processes_[process];
  int64_t& since = p.impaired_since_us[kind];
  if (since < 0) return;
  if (t_us > since) {
    // Kept sorted by from_us (ties in the order they ended), as a stable sort of the ended
    // stretches would leave them.
    const ImpairedSpan span{since, t_us, kind};
    auto at = std::upper_bound(p.impaired.begin(), p.impaired.end(), span.from_us,
                               [](int64_t t, const ImpairedSpan& s) { return t < s.from_us; });
    p.impaired.insert(at, span);
  }
  since = -1;
}

std::vector<ImpairedSpan> FactsPass::ImpairedSpans(int process, int64_t now_us) const {
  const Process& p = processes_[process];
  std::vector<ImpairedSpan> spans = p.impaired;
  for (int kind = 0; kind < kImpairmentKinds; ++kind) {
    const int64_t since = p.impaired_since_us[kind];
    if (since >= 0 && now_us > since) spans.push_back({since, now_us, static_cast<Impairment>(kind)});
  }
  std::stable_sort(spans.begin(), spans.end(),
                   [](const ImpairedSpan& a, const ImpairedSpan& b) { return a.from_us < b.from_us; });
  return spans;
}

std::vector<ImpairedSpan> FactsPass::ImpairedMerged(int process, int64_t now_us) const {
  std::vector<ImpairedSpan> merged;
  for (const ImpairedSpan& s : ImpairedSpans(process, now_us)) {
    if (!merged.empty() && s.from_us <= merged.back().to_us) {
      merged.back().to_us = std::max(merged.back().to_us, s.to_us);
    } else {
      merged.push_back(s);
    }
  }
  return merged;
}

// A client crash ends every belief, resource access and operation of its threads.
void FactsPass::CrashClient(int process, const Event& e) {
  ClientCrash crash;
  crash.id = next_crash_++;
  crash.process = process;
  crash.seq = e.seq;
  crash.t_us = e.t_us;
  const std::vector<int> threads = processes_[process].threads;
  for (int thread : threads) {
    if (thread == kNone) continue;
    if (thread_states_[thread].has_op) EndOp(thread, e, Outcome::kCrashed);
    const std::vector<int> locks = thread_states_[thread].locks;
    for (int lock : locks) {
      HoldState& hs = Hold(thread, lock);
      if (hs.has_gap) CloseGap(thread, lock, e.seq, e.t_us, GapEnd::kCrash);
      if (hs.has_access) EndAccess(thread, lock, e.seq, e.t_us, EndCause::kCrash);
      hs.access_depth = 0;
      for (const bool side : {false, true}) {
        if (hs.has_belief[side]) {
          EndBelief(thread, lock, e.seq, e.t_us, EndCause::kCrash, side);
          crash.beliefs.push_back(hs.belief[side]);
        }
      }
      // A field of a thread that held the lock may linger in the hash until it expires.
      if (hs.total() > 0) hs.count_known = false;
      hs.count = 0;
      hs.read_count = 0;
      hs.has_pending_loss = false;
    }
  }
  for (FactsObserver* o : observers_) o->OnCrash(*this, crash);
}

void FactsPass::Finish() {
  assert(!finished_);
  run_end_us_ = end_note_us_ >= 0 ? end_note_us_ : std::max(run_note_end_us_, last_t_us_);
  finished_ = true;
  const int64_t end = run_end_us_;
  for (FactsObserver* o : observers_) o->OnFinishing(*this);
  for (size_t thread = 0; thread < threads_.size(); ++thread) {
    ThreadState& ts = thread_states_[thread];
    if (ts.has_op) {
      ts.has_op = false;
      ts.op.end_us = end;  // Still pending: end_seq stays kOpenSeq.
      for (FactsObserver* o : observers_) o->OnOpEnded(*this, ts.op);
    }
  }
  for (size_t thread = 0; thread < threads_.size(); ++thread) {
    ThreadState& ts = thread_states_[thread];
    for (HoldState& hs : ts.holds) {
      for (const bool side : {false, true}) {
        if (!hs.has_belief[side]) continue;
        hs.has_belief[side] = false;
        hs.belief[side].end_us = end;
        for (FactsObserver* o : observers_) o->OnSpanEnded(*this, hs.belief[side]);
      }
    }
  }
  for (size_t thread = 0; thread < threads_.size(); ++thread) {
    for (HoldState& hs : thread_states_[thread].holds) {
      if (!hs.has_access) continue;
      hs.has_access = false;
      hs.access.end_us = end;
      for (FactsObserver* o : observers_) o->OnSpanEnded(*this, hs.access);
    }
  }
  for (size_t thread = 0; thread < threads_.size(); ++thread) {
    for (HoldState& hs : thread_states_[thread].holds) {
      if (!hs.has_gap) continue;
      hs.has_gap = false;
      LeaseGap& g = hs.gap;
      g.to_us = end;
      g.end = GapEnd::kRunEnd;
      for (FactsObserver* o : observers_) o->OnGapClosed(*this, g);
    }
  }
  for (size_t i = 0; i < processes_.size(); ++i) {
    for (int kind = 0; kind < kImpairmentKinds; ++kind) {
      EndImpairment(static_cast<int>(i), static_cast<Impairment>(kind), end);
    }
  }
  for (FactsObserver* o : observers_) o->OnFinish(*this);
}

// --- node count scan -----------------------------------------------------------------------

void NodeCountScan::OnEvent(const Event& e) {
  if (e.type == EventType::kOk && e.op == names::kAcquire) {
    detail_nodes_ = std::max(detail_nodes_, NodesInCompletion(e));
  } else if (e.type == EventType::kLease) {
    if (std::find(lease_nodes_.begin(), lease_nodes_.end(), e.process) == lease_nodes_.end()) {
      lease_nodes_.push_back(e.process);
    }
  } else if (e.type == EventType::kFault && e.op == names::kPromote) {
    ++promotions_;
  }
}

int NodeCountScan::count() const {
  if (detail_nodes_ > 0) return detail_nodes_;
  return std::max(1, static_cast<int>(lease_nodes_.size()) - promotions_);
}

}  // namespace lockstep::history
