// The facts pass: one pass over the History, event by event, that turns what the processes did
// into what it means for a lock. The checkers and the reports both read its facts; nothing else
// derives them.
//
// Per client thread and lock it keeps what the thread believes (its hold count per side, its
// belief: the span from the acquire `ok` that takes the count from 0 to 1 to the `invoke` of the
// release that takes it back to 0, a forceUnlock, a crash of its process, or the end of the
// run) and whether the lock hash is known to agree with it; per node and lock, whose owner
// fields the key holds; per process, when it was down, paused, cut off or losing replies. It
// hands each fact to its observers the moment the fact is complete:
//
//   an operation      invoke .. its ok / fail / info, a crash, or the end of the run
//   a belief          as above; an access: resource enter .. exit (or crash, or run end)
//   a lease event     a lock key's owners changed on a node: who gained, who lost, who
//                     believed it held the lock then
//   a lease gap       a thread held (or used) a lock that a node had recorded as lost for it
//   a crash           of a client process, with the beliefs it ended
//
// and drops it. What it keeps for the whole run is bounded by the run's processes, threads,
// locks and faults (the fault log and every impaired stretch, which explanations name), never
// by its length: an hour of a hundred clients passes through in a few megabytes.
//
// Ids: every operation, belief, access, lease event, gap and crash gets the next number of its
// kind (0, 1, 2 ...) in the order it is made, so the same history always gives the same ids.
// Processes, threads and locks are numbered in the order the history first names them.
#ifndef LOCKSTEP_HISTORY_FACTS_H_
#define LOCKSTEP_HISTORY_FACTS_H_

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "history/event.h"
#include "history/fault_kinds.h"
#include "history/holder_values.h"
#include "history/kinds.h"
#include "history/notes.h"

namespace lockstep::history {

using Seq = uint64_t;
inline constexpr Seq kOpenSeq = std::numeric_limits<Seq>::max();  // Not closed in the history.
inline constexpr int kNone = -1;

// Checker-facing settings the history itself may not say.
struct FactsOptions {
  // The lease assumed when an acquire gave none and the history has no lease_default note
  // (Redisson's lockWatchdogTimeout default).
  int64_t lease_default_us = 30'000'000;
  // The fair lock's wait timeout when the protocol note gives none.
  int64_t fair_wait_timeout_us = 300'000'000;
  size_t max_warnings = 100;
  // RedLock/MultiLock histories whose protocol note does not say how many nodes the lock has:
  // the count a pre-scan of the whole history found (ScanNodeCount), else 0.
  int nodes_hint = 0;
};

// What the "protocol" note says about the lock the history exercised.
struct ProtocolInfo {
  std::string kind;          // Empty: no note (judged as an RLock).
  std::string version;       // "v3.13.6", "current", or empty (no note, or none written).
  bool fencing = false;
  int64_t permits = 1;       // Semaphores.
  int nodes = 0;             // RedLock/MultiLock: masters (0: unknown).
  int quorum = 0;            // RedLock/MultiLock: nodes a holder must keep; 0 otherwise.
  int64_t fair_wait_us = 0;  // Fair lock: the queue's wait timeout.

  // What the kind is, asked on every event by the checkers, worked out once from `kind`: its
  // class (history/kinds.h); none when the history has no protocol note. A kind this build
  // does not know is judged as one exclusive lock (kPlain).
  std::optional<KindClass> cls;
  bool majority = false;  // kQuorum: a majority of the nodes suffices (RedLock).
  void SetKind(std::string k);

  bool known() const { return cls.has_value(); }
  bool fair() const { return cls == KindClass::kFair; }
  bool semaphore() const { return cls == KindClass::kSemaphore; }
  bool latch() const { return cls == KindClass::kLatch; }
  bool rw() const { return cls == KindClass::kRw; }
  bool fenced() const { return cls == KindClass::kFenced; }
  bool quorum_kind() const { return cls == KindClass::kQuorum; }
  // Kinds whose key's presence does not mean "held by someone" and that have no owners.
  bool ownerless() const { return semaphore() || latch(); }
  // The kind unlocks with the plain compare-and-delete script (1: deleted, 0: not the
  // caller's key), not with a Redisson unlock script (nil / 0 / 1).
  bool compare_and_delete = false;
  // A client program's unlock answers 0 when it deleted the caller's key and 1 when the key
  // was not the caller's (python-redis-lock's).
  bool zero_released = false;
  // A client program whose holders write their process's uuid, one for all its threads
  // (Spring's RedisLockRegistry): such a value names every thread of that process.
  bool process_owners = false;
};

// n/2 + 1: RedLock's quorum, and how many of its nodes a multi-node lock should be obtainable
// with.
inline int MajorityOf(int nodes) { return nodes / 2 + 1; }

enum class OpKind : uint8_t { kAcquire, kRelease, kForceUnlock, kOther };
enum class Outcome : uint8_t { kPending, kOk, kFail, kInfo, kCrashed };
enum class EndCause : uint8_t { kRunEnd, kRelease, kForceUnlock, kCrash, kExit };
// kOwners: the key still exists but its set of owner fields changed (a reader joined or left).
enum class LeaseKind : uint8_t { kAcquired, kReleased, kExpired, kLost, kOwners };
enum class GapEnd : uint8_t { kRunEnd, kStoppedHolding, kReacquired, kCrash };
// Impairment: history/fault_kinds.h.
const char* ImpairmentName(Impairment kind);
const char* OutcomeName(Outcome outcome);  // "ok", "fail", "info (unknown)", ...

// A stretch of true time during which a process could not take part normally.
struct ImpairedSpan {
  int64_t from_us = 0;
  int64_t to_us = 0;
  Impairment kind = kDown;
};

// What a client process's threads do (its "role" note; no note: a worker).
using Role = RoleNote::Role;

struct Process {
  Name name = names::kNone;
  bool client = false;
  Role role = Role::kWorker;
  int role_threads = 1;      // Its threads, as its role note says.
  std::vector<int> threads;  // By thread index: thread id, or kNone.
  std::array<int64_t, kImpairmentKinds> impaired_since_us{-1, -1, -1, -1, -1};
  // Crashed (not restarted) or paused (not resumed) now; until Finish closes every stretch.
  bool down() const { return impaired_since_us[kDown] >= 0; }
  bool paused() const { return impaired_since_us[kPaused] >= 0; }
  // Latency and loss windows this process recorded that are still open: they may overlap, and
  // the kSlowOrLossy stretch ends with the last of them.
  int network_windows_open = 0;
  // Every impaired stretch that has ended, sorted by from_us (open ones are in
  // impaired_since_us).
  std::vector<ImpairedSpan> impaired;
};

// An operation's invoke detail, kept with the operation: typed details are copied as they are,
// any other as its text.
class KeptDetail {
 public:
  KeptDetail() = default;
  explicit KeptDetail(const Event& e);
  // The text the history file has for it.
  std::string Render(EventType type, Name op) const;
  const Detail& typed() const { return typed_; }

 private:
  Detail typed_;  // NoDetail, StockText or AcquireCall: nothing that refers to an event's text.
  std::string text_;
};

// One client operation: its invoke and how it ended.
struct Op {
  uint64_t id = 0;
  Name name = names::kNone;  // "acquire", "release_read" ...
  OpKind kind = OpKind::kOther;
  bool shared = false;     // The read side of a read-write lock ("acquire_read" ...).
  int thread = kNone;
  int lock = kNone;
  Seq invoke_seq = 0;
  int64_t invoke_us = 0;
  Outcome outcome = Outcome::kPending;
  Seq end_seq = kOpenSeq;  // The completion or crash; kOpenSeq while pending.
  int64_t end_us = 0;      // The run end while pending.
  bool has_value = false;  // Of the completion.
  int64_t value = 0;
  int64_t lease_us = -1;   // Acquire: the explicit lease (invoke value, ms), -1 if none.
  int64_t wait_us = 0;     // How long it may wait (not releases); kForeverUs for lock().
  int64_t permits = 1;     // Semaphores: the permits it takes or gives back.
  // Release: the thread's hold count at the invoke, and whether the lock hash was known to
  // agree with it.
  int count_before = 0;
  bool count_known = true;
  int fallback_node = kNone;                   // Acquire: the node the process last used.
  std::vector<std::pair<int64_t, int>> nodes;  // Acquire: (t_us, node) where its commands ran.
  // Acquire (fair lock): its first "acquire" exec with a nil or integer reply, and whether
  // that reply was an integer (it queued). kOpenSeq if none could be attributed to it.
  Seq arrival_seq = kOpenSeq;
  int64_t arrival_us = 0;
  bool queued = false;
  // Its arrival exec was granted (nil) while the node's key already named the thread as an
  // owner: the script re-entered a hold the thread still had there (a release that never took
  // effect on the node, e.g. its unlock was cut off), not a grant in the queue's order.
  bool node_reentry = false;
  bool exec_ambiguous = false;  // An exec without a thread might have been its.
  KeptDetail invoke_detail;
  std::string end_detail;       // The completion's detail, for fail and info outcomes.
};

// A belief (a thread holding a lock) or a resource access (enter .. exit).
struct Span {
  uint64_t id = 0;         // Beliefs and accesses are numbered apart.
  bool access = false;
  int thread = kNone;
  int lock = kNone;
  Seq start_seq = 0;
  int64_t start_us = 0;
  Seq end_seq = kOpenSeq;
  int64_t end_us = 0;
  EndCause cause = EndCause::kRunEnd;
  uint64_t op = 0;         // Beliefs: the id of the acquire that started it.
  int64_t lease_us = -1;   // Beliefs: the latest acquisition's explicit lease, -1 if none.
  bool shared = false;     // A read belief / read access.
  bool has_token = false;  // The fencing token of the acquisition / access.
  int64_t token = 0;
};

// A lease event as it concerns threads. The lists are the facts pass's own and valid only
// during the callback.
struct LeaseFact {
  uint64_t id = 0;
  Seq seq = 0;
  int64_t t_us = 0;
  int node = kNone;
  int lock = kNone;
  LeaseKind kind = LeaseKind::kAcquired;
  bool owners_listed = false;  // The detail named owner fields (maybe of unknown clients).
  std::string_view detail;     // As written: the owner fields, or a count.
  std::vector<int> owners;     // Threads whose owner fields it listed.
  std::vector<int> believers;  // Threads believing they held the lock at that moment.
  std::vector<int> added;      // kAcquired/kOwners: threads with a field there now, not before.
  std::vector<int> removed;    // Threads whose field it took away from the node.
  // Semaphores: when an add_permits or drain_permits exec on this node came right before, the
  // change of the node's count it made (how many permits there are, not permits taken or
  // given back); else 0.
  int64_t resized = 0;

  bool Lists(int thread) const;
  bool Removes(int thread) const;
  // Whether it took `thread`'s field away (what a loss narrative names): a release, expiry or
  // loss that listed or removed it, or an owners change that removed it.
  bool TookFrom(int thread) const;
  // Whether it recorded `thread`'s field as (newly) there.
  bool Gave(int thread) const;
};

// What a lease event that took a thread's field away says, kept for explanations.
struct LossRecord {
  Seq seq = 0;
  int64_t t_us = 0;
  int node = kNone;
  LeaseKind kind = LeaseKind::kExpired;
};
inline constexpr size_t kLossesKept = 4;  // Explanations name at most this many.

// A stretch during which a thread held a lock (or was inside its resource) although a node had
// recorded its lease as expired or lost.
struct LeaseGap {
  uint64_t id = 0;
  int thread = kNone;
  int lock = kNone;
  int node = kNone;
  LossRecord loss;         // The lease event.
  int alive = -1;          // RedLock/MultiLock: nodes its field was alive on after the loss.
  bool has_belief = false; // The belief it cut short (none: only inside the resource).
  Span belief;
  // Losses of the thread's field on the lock after the belief began and before this one.
  std::vector<LossRecord> earlier_losses;
  bool at_acquire = false; // The loss came while the acquire was in flight; starts at its ok.
  Seq from_seq = 0;
  int64_t from_us = 0;
  Seq to_seq = kOpenSeq;
  int64_t to_us = 0;
  GapEnd end = GapEnd::kRunEnd;
  bool used_resource = false;
  Seq use_seq = 0;         // The enter event of the access.
  int64_t use_us = 0;      // When the use began (or the loss, if already inside).
  bool use_has_token = false;
  int64_t use_token = 0;
};

struct ClientCrash {
  uint64_t id = 0;
  int process = kNone;
  Seq seq = 0;
  int64_t t_us = 0;
  std::vector<Span> beliefs;  // Ended by the crash (their end is the crash).
};

// A fault event, kept for explanations ("Faults: pause c1 at 10.500 s (3000ms)").
struct FaultRecord {
  Seq seq = 0;
  int64_t t_us = 0;
  int process = kNone;
  Name op = names::kNone;
  std::string detail;
};

struct Thread {
  int process = kNone;
  int index = 0;
  std::string name;  // "c1.t0"
};

class FactsPass;

// Receives facts as the pass makes them. Every callback has an empty default.
class FactsObserver {
 public:
  virtual ~FactsObserver() = default;
  // Whether it wants OnEvent and OnEventDone (every event, twice: most observers need only
  // the facts). Asked once, when the observer is added.
  virtual bool WantsEvents() const { return false; }
  // Every event, before the pass handles it.
  virtual void OnEvent(const FactsPass&, const Event&) {}
  // When the invoke is read, before anything it ends: the belief a release ends is ended next
  // (OnSpanEnded, at the invoke's time).
  virtual void OnOpInvoked(const FactsPass&, const Op&) {}
  // The operation ended: completed, cut short by a crash or superseded, or (end_seq kOpenSeq,
  // outcome kPending) still in flight when the run ended. Before the beliefs it starts.
  virtual void OnOpEnded(const FactsPass&, const Op&) {}
  // An acquire's first "acquire" exec with a nil or integer reply ran (Op::arrival_seq): the
  // fair lock granted it at once or queued it.
  virtual void OnOpArrived(const FactsPass&, const Op&) {}
  virtual void OnSpanStarted(const FactsPass&, const Span&) {}
  virtual void OnSpanEnded(const FactsPass&, const Span&) {}
  // After the pass has applied it (the losses it caused are reported by the gap callbacks).
  virtual void OnLease(const FactsPass&, const LeaseFact&) {}
  virtual void OnGapClosed(const FactsPass&, const LeaseGap&) {}
  virtual void OnCrash(const FactsPass&, const ClientCrash&) {}
  virtual void OnFault(const FactsPass&, const FaultRecord&) {}
  // After every fact of the event.
  virtual void OnEventDone(const FactsPass&, const Event&) {}
  // The run is ending at f.run_end_us(): nothing is closed yet (operations still in flight are
  // still in flight).
  virtual void OnFinishing(const FactsPass&) {}
  // The run ended at f.run_end_us(): what was open has been closed through the callbacks
  // above (operations pending, beliefs and accesses and gaps ended by the run end).
  virtual void OnFinish(const FactsPass&) {}
};

class FactsPass : public EventSink {
 public:
  FactsPass(const NameTable* names, const FactsOptions& options);
  ~FactsPass() override;
  FactsPass(const FactsPass&) = delete;
  FactsPass& operator=(const FactsPass&) = delete;

  void AddObserver(FactsObserver* observer) {
    observers_.push_back(observer);
    if (observer->WantsEvents()) event_observers_.push_back(observer);
  }

  void OnEvent(const Event& e) override;
  // Closes what is open at the run's end (the end note's time, else the later of the run
  // note's end_us and the last event) and tells the observers.
  void Finish();

  // --- what the pass knows (valid for the whole run) ---
  const NameTable& names() const { return *names_; }
  const ProtocolInfo& protocol() const { return protocol_; }
  int64_t lease_default_us() const { return lease_default_us_; }
  int64_t run_end_us() const { return run_end_us_; }  // After Finish.
  bool finished() const { return finished_; }
  bool has_read_ops() const { return has_read_ops_; }
  bool roles() const { return roles_; }  // Some process has a role note.
  uint64_t events() const { return events_; }
  int sim_process() const { return sim_process_; }

  const std::vector<Process>& processes() const { return processes_; }
  const std::vector<Thread>& threads() const { return threads_; }
  size_t lock_count() const { return lock_names_.size(); }
  std::string_view ProcessName(int p) const { return names_->Str(processes_[p].name); }
  const std::string& ThreadName(int t) const { return threads_[t].name; }
  std::string_view LockName(int l) const { return names_->Str(lock_names_[l]); }
  int ProcessOfThread(int t) const { return threads_[t].process; }
  // The process named so, or kNone.
  int ProcessNamed(Name name) const;
  // Threads that have touched the lock (invokes, resource events), in the order they did.
  const std::vector<int>& ThreadsOfLock(int lock) const { return lock_threads_[lock]; }

  const std::vector<FaultRecord>& faults() const { return faults_; }
  // "c1 paused from 10.5 s": the stretches when the process was impaired, every one that has
  // ended by `now_us` plus the open ones cut at now_us, sorted by from_us; and their union.
  std::vector<ImpairedSpan> ImpairedSpans(int process, int64_t now_us) const;
  std::vector<ImpairedSpan> ImpairedMerged(int process, int64_t now_us) const;

  // The node the thread's op would be judged on when its commands name none (see liveness).
  const std::vector<std::string>& warnings() const { return warnings_; }
  size_t warning_count() const { return warning_count_; }

  // The thread's open belief on the lock (per side), if any.
  const Span* BeliefOf(int thread, int lock, bool shared) const;
  // The thread's open access to the lock's resource, if any.
  const Span* AccessOf(int thread, int lock) const;
  // The thread's operation in flight, if any.
  const Op* OpOf(int thread) const;
  // The losses of the thread's field since its belief on that side began (at most
  // kLossesKept, in order), the first of them one while the acquire that began it was in
  // flight, if there was one.
  const std::vector<LossRecord>& LossesSinceBelief(int thread, int lock, bool shared) const;
  // The seq of the last lease event that recorded the thread's field as there, or kOpenSeq.
  Seq LastGiven(int thread, int lock) const;
  // The thread whose owner field ("<uuid>:<thread+1>", perhaps with a suffix such as ":write")
  // this is, by the uuid its client announces now, or whose announced holder value it is, or
  // kNone (another client, a dead incarnation, a hash's other fields such as "mode").
  int OwnerThread(std::string_view field) const;
  // A process-level owner (ProtocolInfo::process_owners): the process whose uuid `field` is,
  // or kNone (a thread's field, another client, a dead incarnation).
  int OwnerProcess(std::string_view field) const;
  // Whether `field` names `thread`: its own field, or its process's uuid where holders write
  // that.
  bool FieldNames(std::string_view field, int thread) const;
  // The threads `field` names: its thread, or every thread of its process.
  template <typename Fn>
  void ForEachOwnerThread(std::string_view field, Fn fn) const {
    if (const int p = OwnerProcess(field); p != kNone) {
      for (int t : processes_[p].threads) {
        if (t != kNone) fn(t);
      }
    } else if (const int t = OwnerThread(field); t != kNone) {
      fn(t);
    }
  }
  // The lock's nodes seen so far in lease events, in the order they appeared.
  const std::vector<int>& NodesOfLock(int lock) const { return lock_nodes_[lock]; }
  // Semaphores: the permits the lock allows now, the protocol's plus those addPermits scripts
  // added (the rise of the node's count in the lease event right after an add_permits exec).
  // Permits drainPermits or reducePermits took away do not lower it: threads keep what they
  // had taken.
  int64_t PermitsAllowed(int lock) const;
  // Nodes seen in lease events of any lock, and promotions seen so far.
  size_t lease_node_count() const { return lease_nodes_.size(); }

  // The lock named so, or kNone.
  int LockNamed(Name name) const;
  // The client thread whose operation sent an exec (its peer and thread), or kNone.
  int ExecThread(const Event& exec) const;
  // The lock key on the node as the lease events so far tell it: the owners text of the last
  // event that left it there (a hash's owner fields, a string lock's value, a semaphore's
  // count), or "" when none did or the last one took it away. The verification mode
  // (sim/verify.h) holds it against the node's actual key.
  std::string_view KeyOn(int node, int lock) const;

 private:
  struct HoldState;
  struct ThreadState;

  int NewProcess(Name name);
  int LockId(Name name);
  int ThreadOf(int process, int index);
  HoldState& Hold(int thread, int lock);
  // owner=process: adds a thread first seen now to the keys its process holds.
  void JoinProcessKeys(int process, int thread);
  const HoldState* FindHold(int thread, int lock) const;
  void Warn(const Event& e, const std::string& what);
  void TouchLock(int thread, int lock);

  void OnNote(const Event& e);
  void OnInvoke(const Event& e);
  void OnCompletion(const Event& e);
  void OnResource(const Event& e);
  void OnLeaseEvent(const Event& e, int resizing_node);
  void OnExec(const Event& e);
  void OnFaultEvent(const Event& e);

  void EndOp(int thread, const Event& e, Outcome outcome);
  void OnAcquireEnd(Op& op, const Event& e);
  void StartBelief(int thread, int lock, const Event& e, const Op& op);
  void EndBelief(int thread, int lock, Seq seq, int64_t t_us, EndCause cause, bool shared);
  void EndAccess(int thread, int lock, Seq seq, int64_t t_us, EndCause cause);
  void Lose(int thread, int lock, const LossRecord& loss, const Event& at);
  void OpenGap(int thread, int lock, const LossRecord& loss, const Event& at, bool at_acquire);
  void CloseGap(int thread, int lock, Seq seq, int64_t t_us, GapEnd end);
  void MaybeCloseGap(int thread, int lock, const Event& e);
  void StartImpairment(int process, Impairment kind, int64_t t_us);
  void EndImpairment(int process, Impairment kind, int64_t t_us);
  void CrashClient(int process, const Event& e);
  bool Inside(int thread, int lock) const;
  bool Holding(int thread, int lock) const;
  bool Releasing(int thread, int lock) const;
  int Alive(int thread, int lock) const;
  int Quorum() const { return protocol_.quorum; }
  template <class F>
  void ForLocksOfResource(int thread, int lock, F f);

  const NameTable* names_;
  FactsOptions options_;
  std::vector<FactsObserver*> observers_;
  std::vector<FactsObserver*> event_observers_;  // Those that want every event.
  ProtocolInfo protocol_;
  bool protocol_seen_ = false;
  int64_t lease_default_us_;
  int64_t run_end_us_ = 0;
  int64_t run_note_end_us_ = -1;
  int64_t end_note_us_ = -1;
  int64_t last_t_us_ = 0;
  bool finished_ = false;
  bool has_read_ops_ = false;
  bool roles_ = false;
  uint64_t events_ = 0;
  int sim_process_ = kNone;

  std::vector<int> process_of_name_;  // By Name: process id or kNone.
  std::vector<int> lock_of_name_;     // By Name: lock id or kNone.
  std::vector<Process> processes_;
  std::vector<Thread> threads_;
  std::vector<ThreadState> thread_states_;
  std::vector<Name> lock_names_;
  std::vector<std::vector<int>> lock_threads_;
  std::vector<std::vector<int>> lock_nodes_;
  std::vector<int> lease_nodes_;
  int empty_lock_ = kNone;

  // Transparent: an owner field's uuid is looked up as a view, without a string to allocate.
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, int, StringHash, std::equal_to<>> uuid_process_;
  // Values client programs announced as their threads' (holder_value notes), by thread.
  HolderValues holder_values_;
  std::vector<std::string> process_uuid_;  // By process.
  // (node, lock) -> threads whose fields the node's key held at its last lease event.
  std::unordered_map<uint64_t, std::vector<int>> node_owners_;
  // Semaphores: (node, lock) -> the count at its last lease event; per lock, permits added;
  // the node of an exec that resizes the permits (LeaseFact::resized) when it was the last
  // event, or kNone.
  std::unordered_map<uint64_t, int64_t> node_count_;
  // By (node, lock): what the last lease event says the key holds (KeyOn).
  std::unordered_map<uint64_t, std::string> node_key_;
  std::vector<int64_t> added_permits_;
  int resizing_node_ = kNone;
  // (client process, lock) -> node of its last command.
  std::unordered_map<uint64_t, int> last_node_;
  std::vector<std::vector<int>> believers_;  // Per lock, in the order they started.

  std::vector<FaultRecord> faults_;
  std::vector<std::string> warnings_;
  size_t warning_count_ = 0;

  uint64_t next_op_ = 0;
  uint64_t next_belief_ = 0;
  uint64_t next_access_ = 0;
  uint64_t next_lease_ = 0;
  uint64_t next_gap_ = 0;
  uint64_t next_crash_ = 0;
  LeaseFact lease_;  // Reused: its vectors keep their capacity.
};

// RedLock/MultiLock histories without nodes= in their protocol note: the node count the whole
// history implies ("acquired on k of n nodes" in acquire oks, else the nodes with lease events
// minus the promotions). Feed it every event, then read count().
class NodeCountScan : public EventSink {
 public:
  explicit NodeCountScan(const NameTable* names) : names_(names) {}
  void OnEvent(const Event& e) override;
  int count() const;

 private:
  const NameTable* names_;
  int detail_nodes_ = 0;
  int promotions_ = 0;
  std::vector<Name> lease_nodes_;
};

}  // namespace lockstep::history

#endif  // LOCKSTEP_HISTORY_FACTS_H_
