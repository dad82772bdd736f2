#include "check/checkers.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace lockstep::check {
namespace {

using Seq = uint64_t;

constexpr Seq kOpenSeq = std::numeric_limits<Seq>::max();  // Not closed within the history.
constexpr int64_t kForever = std::numeric_limits<int64_t>::max();
constexpr int kNone = -1;
constexpr size_t kMaxFaultsNamed = 8;           // Per violation.
constexpr size_t kMaxFaultsScanned = 100'000;   // Per violation: bounds explanation cost.
constexpr size_t kMaxLeaseEventsNamed = 4;      // Per violation.

// ---------------------------------------------------------------------------------------------
// Text

// "12.350 s": true time in seconds with millisecond precision (truncated).
std::string Seconds(int64_t us) {
  const bool negative = us < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(us) : static_cast<uint64_t>(us);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%s%" PRIu64 ".%03" PRIu64 " s", negative ? "-" : "",
                magnitude / 1'000'000, (magnitude % 1'000'000) / 1000);
  return buf;
}

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

std::string Count(size_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// The value after `key` ("wait=") in a detail such as "tryLock(wait=10000ms, lease=30000ms)",
// up to the next ',', ' ' or ')'. Empty if absent. The key must start a word, so "wait=" does
// not match inside "await=".
std::string_view DetailValue(std::string_view detail, std::string_view key) {
  for (size_t pos = detail.find(key); pos != std::string_view::npos;
       pos = detail.find(key, pos + 1)) {
    const bool starts_word = pos == 0 || !(std::isalnum(static_cast<unsigned char>(detail[pos - 1])) ||
                                           detail[pos - 1] == '_');
    if (!starts_word) continue;
    const size_t start = pos + key.size();
    size_t end = start;
    while (end < detail.size() && detail[end] != ',' && detail[end] != ' ' && detail[end] != ')') {
      ++end;
    }
    return detail.substr(start, end - start);
  }
  return {};
}

std::optional<int64_t> ParseInt(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool negative = false;
  size_t i = 0;
  if (s[0] == '-') {
    negative = true;
    i = 1;
  }
  if (i == s.size()) return std::nullopt;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return negative ? -v : v;
}

// "10000ms" -> 10'000'000, "500us", "2s"; a bare number is milliseconds.
std::optional<int64_t> ParseDurationUs(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) ||
                                  (digits == 0 && text[0] == '-'))) {
    ++digits;
  }
  const auto number = ParseInt(text.substr(0, digits));
  if (!number) return std::nullopt;
  const std::string_view unit = text.substr(digits);
  int64_t scale = 0;
  if (unit.empty() || unit == "ms") scale = 1000;
  else if (unit == "us") scale = 1;
  else if (unit == "s") scale = 1'000'000;
  else return std::nullopt;
  if (*number > kForever / scale || *number < -(kForever / scale)) return std::nullopt;
  return *number * scale;
}

// How long an acquire may wait, from its invoke detail: tryLock(wait=...) waits that long,
// lock() and lock(lease) wait until they get the lock, tryLock() does not wait.
int64_t AcquireWaitUs(std::string_view detail) {
  if (const auto wait = ParseDurationUs(DetailValue(detail, "wait="))) {
    return *wait < 0 ? kForever : *wait;  // Redisson treats a negative wait as "forever".
  }
  if (detail.substr(0, 4) == "lock") return kForever;
  return 0;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// ---------------------------------------------------------------------------------------------
// Facts: what the history says happened, reconstructed in one pass

enum class OpKind : uint8_t { kAcquire, kRelease, kForceUnlock, kOther };
enum class Outcome : uint8_t { kPending, kOk, kFail, kInfo, kCrashed };
enum class EndCause : uint8_t { kRunEnd, kRelease, kForceUnlock, kCrash, kExit };
enum class LeaseKind : uint8_t { kAcquired, kReleased, kExpired, kLost };
enum class GapEnd : uint8_t { kRunEnd, kStoppedHolding, kReacquired, kCrash };
enum Impairment : uint8_t { kDown, kPaused, kPartitioned, kDeaf, kImpairmentKinds };

const char* ImpairmentName(Impairment kind) {
  switch (kind) {
    case kDown: return "down";
    case kPaused: return "paused";
    case kPartitioned: return "partitioned";
    case kDeaf: return "losing replies";
    default: return "?";
  }
}

// A stretch of true time during which a process could not take part normally.
struct ImpairedSpan {
  int64_t from_us = 0;
  int64_t to_us = 0;
  Impairment kind = kDown;
};

struct Process {
  std::string name;
  bool client = false;
  bool down = false;
  bool paused = false;
  std::vector<int> threads;  // By thread index: thread id, or kNone.
  std::array<int64_t, kImpairmentKinds> impaired_since_us{-1, -1, -1, -1};
  std::vector<ImpairedSpan> impaired;         // Every span, sorted by from_us.
  std::vector<ImpairedSpan> impaired_merged;  // Their union: disjoint, sorted.
};

// One client operation: its invoke and how it ended.
struct Op {
  OpKind kind = OpKind::kOther;
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
  int64_t wait_us = 0;     // Acquire: how long it may wait; kForever for lock().
  // Release: the thread's hold count at the invoke, and whether the lock hash was known to
  // agree with it.
  int count_before = 0;
  bool count_known = true;
  int fallback_node = kNone;                  // Acquire: the node the process last used.
  std::vector<std::pair<int64_t, int>> nodes;  // Acquire: (t_us, node) where its commands ran.
};

// A belief (a thread holding a lock) or a resource access (enter .. exit).
struct Span {
  int thread = kNone;
  int lock = kNone;
  Seq start_seq = 0;
  int64_t start_us = 0;
  Seq end_seq = kOpenSeq;
  int64_t end_us = 0;
  EndCause cause = EndCause::kRunEnd;
  int op = kNone;          // Beliefs: the acquire that started it.
  int64_t lease_us = -1;   // Beliefs: the latest acquisition's explicit lease, -1 if none.
  bool has_token = false;  // The fencing token of the acquisition / access.
  int64_t token = 0;
};

struct LeaseEvent {
  Seq seq = 0;
  int64_t t_us = 0;
  int node = kNone;
  int lock = kNone;
  LeaseKind kind = LeaseKind::kAcquired;
  bool owners_listed = false;  // The detail named owner fields (maybe of unknown clients).
  std::vector<int> owners;     // Threads whose owner fields it listed.
  std::vector<int> believers;  // Threads believing they held the lock at that moment.
};

// A stretch during which a thread held a lock (or was inside its resource) although a node had
// recorded its lease as expired or lost.
struct LeaseGap {
  int thread = kNone;
  int lock = kNone;
  int node = kNone;
  int loss = kNone;        // The lease event.
  int belief = kNone;      // The belief it cut short (kNone: only inside the resource).
  bool at_acquire = false; // The loss came while the acquire was in flight; starts at its ok.
  Seq from_seq = 0;
  int64_t from_us = 0;
  Seq to_seq = kOpenSeq;
  int64_t to_us = 0;
  GapEnd end = GapEnd::kRunEnd;
  bool used_resource = false;
  Seq use_seq = 0;         // The enter event of the access.
  int64_t use_us = 0;      // When the use began (or the loss, if already inside).
  int access = kNone;
};

struct ClientCrash {
  int process = kNone;
  Seq seq = 0;
  int64_t t_us = 0;
  std::vector<int> beliefs;  // Ended by the crash.
};

// Per thread and lock: what the thread believes, and whether the lock hash agrees.
struct HoldState {
  int count = 0;            // Acquisitions minus releases, never below 0.
  // Whether the count of the thread's field in the lock hash is known to equal `count`. An
  // unknown outcome, a crash or a lease loss makes it unknown; a definite "not held" (release
  // returned 1 or failed, the key was deleted) at count 0 makes it known again.
  bool count_known = true;
  int belief = kNone;
  int access = kNone;
  int access_depth = 0;
  int gap = kNone;
  int pending_loss = kNone;     // A loss that came while the acquire was in flight.
  std::vector<int> lease_events;  // Lease events that listed this thread's owner field.
};

struct Thread {
  int process = kNone;
  int index = 0;
  std::string name;  // "c1.t0"
  int op = kNone;    // In flight.
  std::vector<HoldState> holds;  // By lock id.
  std::vector<int> locks;        // Locks it touches (invokes or resource events).
};

struct LockFacts {
  std::string name;
  std::vector<int> threads;       // Threads that touch it.
  std::vector<int> beliefs;       // In start order.
  std::vector<int> accesses;      // In start order.
  std::vector<int> acquires;      // Acquire ops in invoke order.
  std::vector<int> acquired_ok;   // Acquire ops that ended ok, in completion order.
  std::vector<int> lease_events;  // In order.
};

struct Facts {
  const std::vector<Event>* events = nullptr;
  int64_t run_end_us = 0;
  int64_t lease_default_us = 0;
  int sim_process = kNone;
  std::vector<Process> processes;
  std::vector<Thread> threads;
  std::vector<LockFacts> locks;
  std::vector<Op> ops;
  std::vector<Span> beliefs;
  std::vector<Span> accesses;
  std::vector<LeaseEvent> lease_events;
  std::vector<LeaseGap> gaps;
  std::vector<ClientCrash> crashes;
  std::vector<Seq> faults;  // Seqs of fault events, in order,
  std::vector<int64_t> fault_us;   // their times
  std::vector<int> fault_process;  // and target processes.
  std::vector<std::string> warnings;
  size_t warning_count = 0;

  const Event& event(Seq seq) const { return (*events)[seq]; }
};

class FactsBuilder {
 public:
  FactsBuilder(const History& history, const CheckOptions& options)
      : history_(history), options_(options) {}

  Facts Build() {
    facts_.events = &history_.events();
    facts_.lease_default_us = options_.lease_default_us;
    Register();
    for (const Event& e : history_.events()) {
      switch (e.type) {
        case Event::Type::kNote: OnNote(e); break;
        case Event::Type::kInvoke: OnInvoke(e); break;
        case Event::Type::kOk:
        case Event::Type::kFail:
        case Event::Type::kInfo: OnCompletion(e); break;
        case Event::Type::kResource: OnResource(e); break;
        case Event::Type::kLease: OnLease(e); break;
        case Event::Type::kExec: OnExec(e); break;
        case Event::Type::kFault: OnFault(e); break;
        case Event::Type::kMessage: break;
      }
    }
    Finish();
    return std::move(facts_);
  }

 private:
  static bool IsClientEvent(Event::Type type) {
    return type == Event::Type::kInvoke || type == Event::Type::kOk ||
           type == Event::Type::kFail || type == Event::Type::kInfo ||
           type == Event::Type::kResource;
  }

  // Assigns every process, thread and lock its id before the main pass, so that vectors do not
  // grow (and references into them stay valid) while events are handled.
  void Register() {
    facts_.sim_process = NewProcess("sim");
    for (const Event& e : history_.events()) {
      // Checkers address events by seq; History::Append makes seq the index.
      assert(&e - history_.events().data() == static_cast<std::ptrdiff_t>(e.seq));
      const int process = e.process.empty() ? facts_.sim_process : NewProcess(e.process);
      if (!e.peer.empty()) NewProcess(e.peer);
      const int lock = NewLock(e.lock);
      if (IsClientEvent(e.type) && e.thread >= 0) {
        facts_.processes[process].client = true;
        const int thread = NewThread(process, e.thread);
        Thread& t = facts_.threads[thread];
        if (std::find(t.locks.begin(), t.locks.end(), lock) == t.locks.end()) {
          t.locks.push_back(lock);
          facts_.locks[lock].threads.push_back(thread);
        }
      }
      if (e.type == Event::Type::kNote && e.op == "client") facts_.processes[process].client = true;
    }
    for (Thread& t : facts_.threads) t.holds.resize(facts_.locks.size());
    believers_.resize(facts_.locks.size());
    const auto empty = lock_ids_.find("");
    empty_lock_ = empty == lock_ids_.end() ? kNone : empty->second;
  }

  int NewProcess(const std::string& name) {
    const auto [it, added] = process_ids_.emplace(name, static_cast<int>(facts_.processes.size()));
    if (added) {
      facts_.processes.emplace_back();
      facts_.processes.back().name = name;
    }
    return it->second;
  }
  int NewLock(const std::string& name) {
    const auto [it, added] = lock_ids_.emplace(name, static_cast<int>(facts_.locks.size()));
    if (added) {
      facts_.locks.emplace_back();
      facts_.locks.back().name = name;
    }
    return it->second;
  }
  int NewThread(int process, int index) {
    assert(index >= 0);
    std::vector<int>& by_index = facts_.processes[process].threads;
    if (by_index.size() <= static_cast<size_t>(index)) by_index.resize(index + 1, kNone);
    if (by_index[index] == kNone) {
      by_index[index] = static_cast<int>(facts_.threads.size());
      Thread& t = facts_.threads.emplace_back();
      t.process = process;
      t.index = index;
      t.name = facts_.processes[process].name + ".t" + std::to_string(index);
    }
    return by_index[index];
  }

  int ProcessOf(const Event& e) const {
    if (e.process.empty()) return facts_.sim_process;
    const auto it = process_ids_.find(e.process);
    assert(it != process_ids_.end());
    return it->second;
  }
  int ProcessNamed(const std::string& name) const {
    const auto it = process_ids_.find(name);
    return it == process_ids_.end() ? kNone : it->second;
  }
  int LockOf(const Event& e) const {
    const auto it = lock_ids_.find(e.lock);
    assert(it != lock_ids_.end());
    return it->second;
  }
  int ThreadOf(const Event& e) const {
    assert(e.thread >= 0);
    const int thread = facts_.processes[ProcessOf(e)].threads[e.thread];
    assert(thread != kNone);
    return thread;
  }
  HoldState& Hold(int thread, int lock) {
    assert(thread >= 0 && lock >= 0);
    return facts_.threads[thread].holds[lock];
  }

  // The thread whose owner field ("<uuid>:<thread+1>", perhaps with a suffix such as ":write")
  // this is, or kNone for a client or thread the history does not know.
  int OwnerThread(std::string_view field) const {
    const size_t colon = field.find(':');
    if (colon == std::string_view::npos) return kNone;
    const auto it = uuid_process_.find(std::string(field.substr(0, colon)));
    if (it == uuid_process_.end()) return kNone;
    std::string_view rest = field.substr(colon + 1);
    rest = rest.substr(0, rest.find(':'));
    const auto number = ParseInt(rest);
    if (!number || *number < 1) return kNone;
    const std::vector<int>& threads = facts_.processes[it->second].threads;
    return static_cast<size_t>(*number - 1) < threads.size() ? threads[*number - 1] : kNone;
  }

  void Warn(const Event& e, const std::string& what) {
    ++facts_.warning_count;
    if (facts_.warnings.size() < options_.max_warnings) {
      facts_.warnings.push_back("seq " + std::to_string(e.seq) + ": " + what);
    }
  }

  bool Inside(int thread, int lock) {
    if (Hold(thread, lock).access_depth > 0) return true;
    return empty_lock_ != kNone && Hold(thread, empty_lock_).access_depth > 0;
  }
  int CurrentAccess(int thread, int lock) {
    if (Hold(thread, lock).access != kNone) return Hold(thread, lock).access;
    return empty_lock_ == kNone ? kNone : Hold(thread, empty_lock_).access;
  }
  bool Holding(int thread, int lock) {
    return Hold(thread, lock).belief != kNone || Inside(thread, lock);
  }
  // Resource events without a lock stand for the resource of every lock the thread uses.
  template <class F>
  void ForLocksOfResource(int thread, int lock, F f) {
    if (lock != empty_lock_) {
      f(lock);
      return;
    }
    for (int l : facts_.threads[thread].locks) f(l);
  }

  // --- Handlers ------------------------------------------------------------------------------

  void OnNote(const Event& e) {
    if (e.op == "client") {
      const std::string uuid(DetailValue(e.detail, "uuid="));
      if (uuid.empty()) {
        Warn(e, "client note without uuid=");
        return;
      }
      const int process = ProcessOf(e);
      // A restarted client announces a new uuid; fields of the old one belong to a dead
      // incarnation, not to the threads running now.
      std::string& current = process_uuid_[process];
      if (!current.empty() && current != uuid) uuid_process_.erase(current);
      current = uuid;
      uuid_process_[uuid] = process;
      // A new uuid (a restarted client) has no fields in any lock hash yet.
      for (int thread : facts_.processes[process].threads) {
        if (thread == kNone) continue;
        for (HoldState& hs : facts_.threads[thread].holds) {
          if (hs.count == 0) hs.count_known = true;
        }
      }
    } else if (e.op == "run") {
      if (const auto end = ParseInt(DetailValue(e.detail, "end_us="))) run_end_note_us_ = *end;
    } else if (e.op == "lease_default" && e.has_value) {
      facts_.lease_default_us = e.value;
    }
  }

  static OpKind KindOf(const std::string& op) {
    if (op == "acquire") return OpKind::kAcquire;
    if (op == "release") return OpKind::kRelease;
    if (op == "force_unlock") return OpKind::kForceUnlock;
    return OpKind::kOther;
  }

  void OnInvoke(const Event& e) {
    if (e.thread < 0) {
      Warn(e, "invoke without a thread");
      return;
    }
    const int thread = ThreadOf(e);
    const int lock = LockOf(e);
    if (facts_.threads[thread].op != kNone) {
      // One operation at a time per thread: the earlier one's outcome is unknown.
      Warn(e, facts_.threads[thread].name + " invoked while an operation was in flight");
      EndOp(thread, e, Outcome::kInfo);
    }
    Op op;
    op.kind = KindOf(e.op);
    op.thread = thread;
    op.lock = lock;
    op.invoke_seq = e.seq;
    op.invoke_us = e.t_us;
    HoldState& hs = Hold(thread, lock);
    op.count_before = hs.count;
    op.count_known = hs.count_known;
    if (op.kind == OpKind::kAcquire) {
      op.lease_us = !e.has_value ? -1 : std::clamp<int64_t>(e.value, 0, kForever / 1000) * 1000;
      op.wait_us = AcquireWaitUs(e.detail);
      const auto node = last_node_.find(Key(facts_.threads[thread].process, lock));
      op.fallback_node = node == last_node_.end() ? kNone : node->second;
      facts_.locks[lock].acquires.push_back(static_cast<int>(facts_.ops.size()));
    }
    facts_.threads[thread].op = static_cast<int>(facts_.ops.size());
    facts_.ops.push_back(std::move(op));

    if (facts_.ops.back().kind == OpKind::kRelease && hs.count > 0) {
      // The thread stops relying on the lock when it starts the release that ends its last
      // hold, whatever the release's outcome.
      if (--hs.count == 0) EndBelief(thread, lock, e, EndCause::kRelease);
    } else if (facts_.ops.back().kind == OpKind::kForceUnlock) {
      if (hs.count > 0) {
        hs.count = 0;
        EndBelief(thread, lock, e, EndCause::kForceUnlock);
      }
      hs.count_known = false;  // Until the forceUnlock is known to have deleted the key.
    }
  }

  // Ends the thread's operation in flight without a completion event (crash, superseded).
  void EndOp(int thread, const Event& e, Outcome outcome) {
    Thread& t = facts_.threads[thread];
    assert(t.op != kNone);
    Op& op = facts_.ops[t.op];
    op.outcome = outcome;
    op.end_seq = e.seq;
    op.end_us = e.t_us;
    t.op = kNone;
    HoldState& hs = Hold(thread, op.lock);
    hs.pending_loss = kNone;
    if (op.kind != OpKind::kOther) hs.count_known = false;
  }

  void OnCompletion(const Event& e) {
    if (e.thread < 0) {
      Warn(e, std::string(TypeName(e.type)) + " without a thread");
      return;
    }
    const int thread = ThreadOf(e);
    const int id = facts_.threads[thread].op;
    if (id == kNone) {
      Warn(e, std::string(TypeName(e.type)) + " of " + facts_.threads[thread].name +
                  " without an invoke");
      return;
    }
    facts_.threads[thread].op = kNone;
    Op& op = facts_.ops[id];
    if (e.op != facts_.event(op.invoke_seq).op || LockOf(e) != op.lock) {
      Warn(e, "completion does not match its invoke (seq " + std::to_string(op.invoke_seq) + ")");
    }
    op.outcome = e.type == Event::Type::kOk     ? Outcome::kOk
                 : e.type == Event::Type::kFail ? Outcome::kFail
                                                : Outcome::kInfo;
    op.end_seq = e.seq;
    op.end_us = e.t_us;
    op.has_value = e.has_value;
    op.value = e.value;
    HoldState& hs = Hold(thread, op.lock);
    switch (op.kind) {
      case OpKind::kAcquire: OnAcquireEnd(id, e); break;
      case OpKind::kRelease:
        if (op.outcome == Outcome::kOk && op.has_value && op.value == 1) {
          hs.count_known = hs.count == 0;  // The field is gone from the hash.
        } else if (op.outcome == Outcome::kOk && op.has_value && op.value == 0) {
          if (hs.count == 0) hs.count_known = false;  // The hash still counts a hold.
        } else if (op.outcome == Outcome::kFail) {
          hs.count_known = hs.count == 0;  // Not the owner: the field is absent.
        } else if (op.outcome == Outcome::kInfo) {
          hs.count_known = false;
        }
        break;
      case OpKind::kForceUnlock: hs.count_known = op.outcome == Outcome::kOk; break;
      case OpKind::kOther: break;
    }
  }

  void OnAcquireEnd(int id, const Event& e) {
    const Op& op = facts_.ops[id];
    HoldState& hs = Hold(op.thread, op.lock);
    const int pending = hs.pending_loss;
    hs.pending_loss = kNone;
    if (op.outcome == Outcome::kInfo) hs.count_known = false;  // It may hold now.
    if (op.outcome != Outcome::kOk) return;
    facts_.locks[op.lock].acquired_ok.push_back(id);
    if (++hs.count == 1) {
      StartBelief(op.thread, op.lock, e, id);
    } else {
      // A reentry sets the lease again (Redisson's script runs pexpire with it).
      Span& belief = facts_.beliefs[hs.belief];
      belief.lease_us = op.lease_us;
      if (e.has_value) {
        belief.has_token = true;
        belief.token = e.value;
      }
    }
    if (pending != kNone) {
      // The lease was lost while the acquire was in flight: the thread starts out believing it
      // holds a lock the node no longer records for it.
      assert(hs.count == 1);
      hs.count_known = false;
      OpenGap(op.thread, op.lock, pending, e, /*at_acquire=*/true);
    }
  }

  void StartBelief(int thread, int lock, const Event& e, int op) {
    HoldState& hs = Hold(thread, lock);
    assert(hs.belief == kNone);
    Span s;
    s.thread = thread;
    s.lock = lock;
    s.start_seq = e.seq;
    s.start_us = e.t_us;
    s.op = op;
    s.lease_us = facts_.ops[op].lease_us;
    s.has_token = e.has_value;
    s.token = e.value;
    hs.belief = static_cast<int>(facts_.beliefs.size());
    facts_.beliefs.push_back(s);
    facts_.locks[lock].beliefs.push_back(hs.belief);
    believers_[lock].push_back(thread);
  }

  void EndSpan(Span* s, const Event& e, EndCause cause) {
    assert(s->end_seq == kOpenSeq);
    assert(e.seq > s->start_seq);
    s->end_seq = e.seq;
    s->end_us = e.t_us;
    s->cause = cause;
  }

  void EndBelief(int thread, int lock, const Event& e, EndCause cause) {
    HoldState& hs = Hold(thread, lock);
    assert(hs.belief != kNone);
    EndSpan(&facts_.beliefs[hs.belief], e, cause);
    hs.belief = kNone;
    std::vector<int>& believers = believers_[lock];
    believers.erase(std::find(believers.begin(), believers.end(), thread));
    MaybeCloseGap(thread, lock, e);
  }

  void OnResource(const Event& e) {
    if (e.thread < 0) {
      Warn(e, "resource event without a thread");
      return;
    }
    const int thread = ThreadOf(e);
    const int lock = LockOf(e);
    HoldState& hs = Hold(thread, lock);
    if (e.op == "enter") {
      if (hs.access_depth++ > 0) return;  // Nested: the outer access covers it.
      Span s;
      s.thread = thread;
      s.lock = lock;
      s.start_seq = e.seq;
      s.start_us = e.t_us;
      s.has_token = e.has_value;
      s.token = e.value;
      hs.access = static_cast<int>(facts_.accesses.size());
      facts_.accesses.push_back(s);
      facts_.locks[lock].accesses.push_back(hs.access);
      const int access = hs.access;
      ForLocksOfResource(thread, lock, [&](int l) {
        const int gap = Hold(thread, l).gap;
        if (gap == kNone || facts_.gaps[gap].used_resource) return;
        LeaseGap& g = facts_.gaps[gap];
        g.used_resource = true;
        g.use_seq = e.seq;
        g.use_us = e.t_us;
        g.access = access;
      });
    } else if (e.op == "exit") {
      if (hs.access_depth == 0) {
        Warn(e, "exit of " + facts_.threads[thread].name + " without an enter");
        return;
      }
      if (--hs.access_depth > 0) return;
      EndSpan(&facts_.accesses[hs.access], e, EndCause::kExit);
      hs.access = kNone;
      ForLocksOfResource(thread, lock, [&](int l) { MaybeCloseGap(thread, l, e); });
    } else {
      Warn(e, "unknown resource op \"" + e.op + "\"");
    }
  }

  static std::optional<LeaseKind> ParseLeaseKind(const std::string& op) {
    if (op == "acquired") return LeaseKind::kAcquired;
    if (op == "released") return LeaseKind::kReleased;
    if (op == "expired") return LeaseKind::kExpired;
    if (op == "lost") return LeaseKind::kLost;
    return std::nullopt;
  }

  void OnLease(const Event& e) {
    const auto kind = ParseLeaseKind(e.op);
    if (!kind) {
      Warn(e, "unknown lease op \"" + e.op + "\"");
      return;
    }
    const int lock = LockOf(e);
    LeaseEvent le;
    le.seq = e.seq;
    le.t_us = e.t_us;
    le.node = ProcessOf(e);
    le.lock = lock;
    le.kind = *kind;
    le.owners_listed = !Trim(e.detail).empty();
    std::string_view rest = e.detail;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const int owner = OwnerThread(Trim(rest.substr(0, comma)));
      if (owner != kNone && std::find(le.owners.begin(), le.owners.end(), owner) == le.owners.end()) {
        le.owners.push_back(owner);
      }
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    le.believers = believers_[lock];
    const int id = static_cast<int>(facts_.lease_events.size());
    facts_.lease_events.push_back(std::move(le));
    facts_.locks[lock].lease_events.push_back(id);
    const LeaseEvent& ev = facts_.lease_events[id];
    for (int owner : ev.owners) Hold(owner, lock).lease_events.push_back(id);

    if (ev.kind == LeaseKind::kAcquired) {
      for (int owner : ev.owners) {
        HoldState& hs = Hold(owner, lock);
        if (hs.pending_loss != kNone && facts_.lease_events[hs.pending_loss].node == ev.node) {
          hs.pending_loss = kNone;  // Its acquire ran after the loss and created the key anew.
        }
        if (hs.gap != kNone && facts_.gaps[hs.gap].node == ev.node) {
          CloseGap(owner, lock, &e, GapEnd::kReacquired);
        }
      }
      return;
    }
    // The key is gone from this node, so every field that was in it is at 0.
    const std::vector<int>& affected = ev.owners_listed ? ev.owners : facts_.locks[lock].threads;
    for (int thread : affected) {
      HoldState& hs = Hold(thread, lock);
      hs.count_known = hs.count == 0;
    }
    if (ev.kind == LeaseKind::kExpired || ev.kind == LeaseKind::kLost) {
      for (int owner : ev.owners) OpenGap(owner, lock, id, e, /*at_acquire=*/false);
    }
  }

  // `at` is the loss itself, or the ok of an acquire during which the loss came.
  void OpenGap(int thread, int lock, int loss, const Event& at, bool at_acquire) {
    HoldState& hs = Hold(thread, lock);
    if (hs.gap != kNone || hs.pending_loss != kNone) return;  // The first loss counts.
    if (!Holding(thread, lock)) {
      const int op = facts_.threads[thread].op;
      if (op != kNone && facts_.ops[op].kind == OpKind::kAcquire && facts_.ops[op].lock == lock) {
        hs.pending_loss = loss;
      }
      return;
    }
    LeaseGap g;
    g.thread = thread;
    g.lock = lock;
    g.node = facts_.lease_events[loss].node;
    g.loss = loss;
    g.belief = hs.belief;
    g.at_acquire = at_acquire;
    g.from_seq = at.seq;
    g.from_us = at.t_us;
    if (Inside(thread, lock)) {
      g.used_resource = true;
      g.access = CurrentAccess(thread, lock);
      g.use_seq = facts_.accesses[g.access].start_seq;
      g.use_us = at.t_us;
    }
    hs.gap = static_cast<int>(facts_.gaps.size());
    facts_.gaps.push_back(g);
  }

  void CloseGap(int thread, int lock, const Event* at, GapEnd end) {
    HoldState& hs = Hold(thread, lock);
    assert(hs.gap != kNone);
    LeaseGap& g = facts_.gaps[hs.gap];
    g.to_seq = at ? at->seq : kOpenSeq;
    g.to_us = at ? at->t_us : facts_.run_end_us;
    g.end = end;
    assert(g.to_us >= g.from_us);
    hs.gap = kNone;
  }

  void MaybeCloseGap(int thread, int lock, const Event& e) {
    if (Hold(thread, lock).gap != kNone && !Holding(thread, lock)) {
      CloseGap(thread, lock, &e, GapEnd::kStoppedHolding);
    }
  }

  static uint64_t Key(int a, int b) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
  }

  void OnExec(const Event& e) {
    if (e.peer.empty() || e.lock.empty()) return;
    const int node = ProcessOf(e);
    const int client = ProcessNamed(e.peer);
    const int lock = LockOf(e);
    assert(client != kNone);
    last_node_[Key(client, lock)] = node;
    // Which acquire in flight the command belongs to: the event's thread, or else the only
    // thread of that client acquiring this lock.
    const std::vector<int>& threads = facts_.processes[client].threads;
    int owner = kNone;
    if (e.thread >= 0) {
      if (static_cast<size_t>(e.thread) < threads.size()) owner = threads[e.thread];
    } else {
      int candidates = 0;
      for (int t : threads) {
        if (t == kNone || facts_.threads[t].op == kNone) continue;
        const Op& op = facts_.ops[facts_.threads[t].op];
        if (op.kind == OpKind::kAcquire && op.lock == lock) {
          owner = t;
          ++candidates;
        }
      }
      if (candidates != 1) owner = kNone;
    }
    if (owner == kNone || facts_.threads[owner].op == kNone) return;
    Op& op = facts_.ops[facts_.threads[owner].op];
    if (op.kind != OpKind::kAcquire || op.lock != lock) return;
    if (op.nodes.empty() || op.nodes.back().second != node) op.nodes.emplace_back(e.t_us, node);
  }

  void OnFault(const Event& e) {
    facts_.faults.push_back(e.seq);
    facts_.fault_us.push_back(e.t_us);
    const int process = ProcessOf(e);
    facts_.fault_process.push_back(process);
    Process& p = facts_.processes[process];
    const std::string& op = e.op;
    if (op == "crash") {
      if (p.client) CrashClient(process, e);
      p.down = true;
      StartImpairment(process, kDown, e.t_us);
    } else if (op == "restart") {
      p.down = false;
      EndImpairment(process, kDown, e.t_us);
    } else if (op == "pause") {
      p.paused = true;
      StartImpairment(process, kPaused, e.t_us);
    } else if (op == "resume") {
      p.paused = false;
      EndImpairment(process, kPaused, e.t_us);
    } else if (op == "partition") {
      StartImpairment(process, kPartitioned, e.t_us);
    } else if (op == "heal") {
      if (process == facts_.sim_process) {
        for (size_t i = 0; i < facts_.processes.size(); ++i) {
          EndImpairment(static_cast<int>(i), kPartitioned, e.t_us);
        }
      } else {
        EndImpairment(process, kPartitioned, e.t_us);
      }
    } else if (op == "lose_replies") {
      StartImpairment(process, kDeaf, e.t_us);
    } else if (op == "lose_replies_end") {
      EndImpairment(process, kDeaf, e.t_us);
    }
  }

  void StartImpairment(int process, Impairment kind, int64_t t_us) {
    int64_t& since = facts_.processes[process].impaired_since_us[kind];
    if (since < 0) since = t_us;
  }
  void EndImpairment(int process, Impairment kind, int64_t t_us) {
    Process& p = facts_.processes[process];
    int64_t& since = p.impaired_since_us[kind];
    if (since < 0) return;
    if (t_us > since) p.impaired.push_back(ImpairedSpan{since, t_us, kind});
    since = -1;
  }

  // A client crash ends every belief, resource access and operation of its threads.
  void CrashClient(int process, const Event& e) {
    ClientCrash crash{.process = process, .seq = e.seq, .t_us = e.t_us, .beliefs = {}};
    for (int thread : facts_.processes[process].threads) {
      if (thread == kNone) continue;
      if (facts_.threads[thread].op != kNone) EndOp(thread, e, Outcome::kCrashed);
      for (int lock : facts_.threads[thread].locks) {
        HoldState& hs = Hold(thread, lock);
        if (hs.gap != kNone) CloseGap(thread, lock, &e, GapEnd::kCrash);
        if (hs.access != kNone) EndSpan(&facts_.accesses[hs.access], e, EndCause::kCrash);
        hs.access = kNone;
        hs.access_depth = 0;
        if (hs.belief != kNone) {
          crash.beliefs.push_back(hs.belief);
          EndBelief(thread, lock, e, EndCause::kCrash);
        }
        // A field of a thread that held the lock may linger in the hash until it expires.
        if (hs.count > 0) hs.count_known = false;
        hs.count = 0;
        hs.pending_loss = kNone;
      }
    }
    facts_.crashes.push_back(std::move(crash));
  }

  void Finish() {
    const std::vector<Event>& events = history_.events();
    const int64_t last_us = events.empty() ? 0 : events.back().t_us;
    facts_.run_end_us = std::max(run_end_note_us_, last_us);
    const int64_t end = facts_.run_end_us;
    for (Op& op : facts_.ops) {
      if (op.outcome == Outcome::kPending) op.end_us = end;
    }
    for (Span& s : facts_.beliefs) {
      if (s.end_seq == kOpenSeq) s.end_us = end;
    }
    for (Span& s : facts_.accesses) {
      if (s.end_seq == kOpenSeq) s.end_us = end;
    }
    for (Thread& t : facts_.threads) {
      for (HoldState& hs : t.holds) {
        if (hs.gap != kNone) {
          LeaseGap& g = facts_.gaps[hs.gap];
          g.to_us = end;
          g.end = GapEnd::kRunEnd;
          hs.gap = kNone;
        }
      }
    }
    for (size_t i = 0; i < facts_.processes.size(); ++i) {
      Process& p = facts_.processes[i];
      for (int kind = 0; kind < kImpairmentKinds; ++kind) {
        EndImpairment(static_cast<int>(i), static_cast<Impairment>(kind), end);
      }
      std::sort(p.impaired.begin(), p.impaired.end(),
                [](const ImpairedSpan& a, const ImpairedSpan& b) { return a.from_us < b.from_us; });
      for (const ImpairedSpan& s : p.impaired) {
        if (!p.impaired_merged.empty() && s.from_us <= p.impaired_merged.back().to_us) {
          p.impaired_merged.back().to_us = std::max(p.impaired_merged.back().to_us, s.to_us);
        } else {
          p.impaired_merged.push_back(s);
        }
      }
    }
  }

  const History& history_;
  const CheckOptions& options_;
  Facts facts_;
  std::unordered_map<std::string, int> process_ids_;
  std::unordered_map<std::string, int> lock_ids_;
  std::unordered_map<std::string, int> uuid_process_;
  std::unordered_map<int, std::string> process_uuid_;
  std::unordered_map<uint64_t, int> last_node_;  // (client, lock) -> node of its last command.
  // Per lock: the threads believing they hold it, in the order they started.
  std::vector<std::vector<int>> believers_;
  int empty_lock_ = kNone;
  int64_t run_end_note_us_ = -1;
};

// ---------------------------------------------------------------------------------------------
// Findings: violations before they are written up

struct Finding {
  int64_t from_us = 0;
  int64_t to_us = 0;
  Seq order = 0;  // The event that revealed it; breaks ties between equal from_us.
  uint8_t kind = 0;
  int a = kNone;  // Indices whose meaning depends on the property.
  int b = kNone;
  int c = kNone;
};

bool Earlier(const Finding& x, const Finding& y) {
  return std::tie(x.from_us, x.order, x.kind, x.a, x.b, x.c) <
         std::tie(y.from_us, y.order, y.kind, y.a, y.b, y.c);
}

// Counts every finding and keeps the `limit` earliest, in a max-heap, so memory stays bounded
// however many violations a run has.
class Findings {
 public:
  explicit Findings(size_t limit) : limit_(limit) {}

  void Add(const Finding& f) {
    assert(f.to_us >= f.from_us);
    ++count_;
    if (limit_ == 0) return;
    if (kept_.size() < limit_) {
      kept_.push_back(f);
      std::push_heap(kept_.begin(), kept_.end(), Earlier);
    } else if (Earlier(f, kept_.front())) {
      std::pop_heap(kept_.begin(), kept_.end(), Earlier);
      kept_.back() = f;
      std::push_heap(kept_.begin(), kept_.end(), Earlier);
    }
    assert(kept_.size() <= limit_);
  }

  size_t count() const { return count_; }

  std::vector<Finding> Sorted() const {
    std::vector<Finding> sorted = kept_;
    std::sort(sorted.begin(), sorted.end(), Earlier);
    return sorted;
  }

 private:
  size_t limit_;
  size_t count_ = 0;
  std::vector<Finding> kept_;
};

template <class Explain>
PropertyResult Conclude(std::string_view property, const Findings& findings, Explain explain) {
  PropertyResult result;
  result.property = std::string(property);
  result.violation_count = findings.count();
  result.violated = findings.count() > 0;
  for (const Finding& f : findings.Sorted()) {
    Violation v = explain(f);
    v.property = result.property;
    v.from_us = f.from_us;
    v.to_us = f.to_us;
    std::sort(v.events.begin(), v.events.end());
    v.events.erase(std::unique(v.events.begin(), v.events.end()), v.events.end());
    assert(!v.threads.empty());
    result.violations.push_back(std::move(v));
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Narration: the words and context shared by every explanation

class Narrator {
 public:
  explicit Narrator(const Facts& facts) : f_(facts) {}

  const std::string& Thread(int t) const { return f_.threads[t].name; }
  const std::string& ProcessName(int p) const { return f_.processes[p].name; }
  std::string Lock(int l) const { return Quoted(f_.locks[l].name); }
  int ProcessOfThread(int t) const { return f_.threads[t].process; }

  // How a belief or access ended: "until 13.600 s, when it began to release it".
  std::string Until(const Span& s) const {
    switch (s.cause) {
      case EndCause::kRelease: return "until " + Seconds(s.end_us) + ", when it began to release it";
      case EndCause::kForceUnlock: return "until " + Seconds(s.end_us) + ", when it called forceUnlock";
      case EndCause::kCrash: return "until its process crashed at " + Seconds(s.end_us);
      case EndCause::kExit: return "until it left at " + Seconds(s.end_us);
      case EndCause::kRunEnd: return "until the run ended at " + Seconds(s.end_us);
    }
    return "";
  }

  static std::string Token(const Span& s) {
    return s.has_token ? " with token " + std::to_string(s.token) : "";
  }

  // ", while c1 was paused (10.500 s to 13.500 s)", or "" if the process was not impaired.
  std::string ImpairedAt(int process, int64_t t_us) const {
    for (const ImpairedSpan& s : f_.processes[process].impaired) {
      if (s.from_us > t_us) break;
      if (t_us < s.to_us) {
        return ", while " + ProcessName(process) + " was " + ImpairmentName(s.kind) + " (" +
               Seconds(s.from_us) + " to " + Seconds(s.to_us) + ")";
      }
    }
    return "";
  }

  // "c1.t0's lease expired on n1 at 12.001 s, while c1 was paused (...)."
  std::string Loss(int thread, const LeaseEvent& le) const {
    const char* what = le.kind == LeaseKind::kExpired ? "expired"
                       : le.kind == LeaseKind::kLost  ? "was lost"
                                                      : "was deleted";
    return Thread(thread) + "'s lease " + what + " on " + ProcessName(le.node) + " at " +
           Seconds(le.t_us) + ImpairedAt(ProcessOfThread(thread), le.t_us) + ".";
  }

  // Sentences on the lease events that took `thread`'s field away from `lock` in (after,
  // before); appends their seqs to *events.
  std::string Losses(int thread, int lock, Seq after, Seq before, std::vector<Seq>* events) const {
    const std::vector<int>& listed = f_.threads[thread].holds[lock].lease_events;
    auto it = std::upper_bound(listed.begin(), listed.end(), after,
                               [&](Seq s, int id) { return s < f_.lease_events[id].seq; });
    std::string text;
    size_t named = 0;
    for (; it != listed.end() && f_.lease_events[*it].seq < before; ++it) {
      const LeaseEvent& le = f_.lease_events[*it];
      if (le.kind == LeaseKind::kAcquired) continue;
      if (named++ == kMaxLeaseEventsNamed) break;
      events->push_back(le.seq);
      text += " " + Loss(thread, le);
    }
    return text;
  }

  // The last lease event before `before` recording `thread`'s field as acquired on `lock`.
  void AddAcquired(int thread, int lock, Seq before, std::vector<Seq>* events) const {
    const std::vector<int>& listed = f_.threads[thread].holds[lock].lease_events;
    auto it = std::lower_bound(listed.begin(), listed.end(), before,
                               [&](int id, Seq s) { return f_.lease_events[id].seq < s; });
    while (it != listed.begin()) {
      --it;
      if (f_.lease_events[*it].kind == LeaseKind::kAcquired) {
        events->push_back(f_.lease_events[*it].seq);
        return;
      }
    }
  }

  // " Faults: pause c1 at 10.500 s (3000ms); ..." for the faults in [from_us, to_us] on the
  // given client processes, on nodes, or on the whole system: at most kMaxFaultsNamed, those
  // nearest focus_us. Appends their seqs to *events.
  std::string Faults(int64_t from_us, int64_t to_us, int64_t focus_us,
                     const std::vector<int>& clients, std::vector<Seq>* events) const {
    const auto lo = std::lower_bound(f_.fault_us.begin(), f_.fault_us.end(), from_us);
    const auto hi = std::upper_bound(lo, f_.fault_us.end(), to_us);
    std::vector<Seq> relevant;
    for (auto it = lo; it != hi && relevant.size() < kMaxFaultsScanned; ++it) {
      const size_t i = it - f_.fault_us.begin();
      const int process = f_.fault_process[i];
      if (f_.processes[process].client &&
          std::find(clients.begin(), clients.end(), process) == clients.end()) {
        continue;  // A client not involved.
      }
      relevant.push_back(f_.faults[i]);
    }
    if (relevant.empty()) return "";
    const size_t total = relevant.size();
    if (total > kMaxFaultsNamed) {
      auto distance = [&](Seq s) {
        const int64_t t = f_.event(s).t_us;
        return t > focus_us ? t - focus_us : focus_us - t;
      };
      std::nth_element(relevant.begin(), relevant.begin() + kMaxFaultsNamed, relevant.end(),
                       [&](Seq a, Seq b) {
                         return std::make_pair(distance(a), a) < std::make_pair(distance(b), b);
                       });
      relevant.resize(kMaxFaultsNamed);
      std::sort(relevant.begin(), relevant.end());
    }
    std::string text = " Faults:";
    for (size_t i = 0; i < relevant.size(); ++i) {
      const Event& e = f_.event(relevant[i]);
      events->push_back(e.seq);
      text += (i == 0 ? " " : "; ") + e.op + " " + (e.process.empty() ? "sim" : e.process) +
              " at " + Seconds(e.t_us);
      if (!e.detail.empty()) text += " (" + e.detail + ")";
    }
    if (total > relevant.size()) text += "; and " + std::to_string(total - relevant.size()) + " more";
    return text + ".";
  }

 private:
  const Facts& f_;
};

// ---------------------------------------------------------------------------------------------
// mutual_exclusion and resource_exclusion

// Calls report(earlier, later) for every pair of spans of different threads in `group` (span
// indices in start order) where `later` starts before `earlier` ends. A thread has at most one
// open span per group, so the active list stays as short as the number of threads.
template <class Report>
void ForEachOverlap(const std::vector<Span>& spans, const std::vector<int>& group, Report report) {
  std::vector<int> active;
  for (int later : group) {
    const Span& s = spans[later];
    std::erase_if(active, [&](int i) { return spans[i].end_seq < s.start_seq; });
    for (int earlier : active) {
      assert(spans[earlier].start_seq < s.start_seq);
      if (spans[earlier].thread != s.thread) report(earlier, later);
    }
    active.push_back(later);
  }
}

PropertyResult CheckMutualExclusion(const Facts& f, const Narrator& n, const CheckOptions& o) {
  Findings found(o.max_violations);
  for (const LockFacts& lock : f.locks) {
    ForEachOverlap(f.beliefs, lock.beliefs, [&](int earlier, int later) {
      const Span& a = f.beliefs[earlier];
      const Span& b = f.beliefs[later];
      found.Add({.from_us = b.start_us, .to_us = std::min(a.end_us, b.end_us),
                 .order = b.start_seq, .kind = 0, .a = earlier, .b = later, .c = kNone});
    });
  }
  return Conclude(kMutualExclusion, found, [&](const Finding& x) {
    const Span& a = f.beliefs[x.a];
    const Span& b = f.beliefs[x.b];
    Violation v;
    v.kind = "overlap";
    v.threads = {n.Thread(a.thread), n.Thread(b.thread)};
    v.events = {a.start_seq, b.start_seq};
    v.explanation = n.Thread(b.thread) + " acquired " + n.Lock(b.lock) + " at " +
                    Seconds(b.start_us) + n.Token(b) + " while " + n.Thread(a.thread) +
                    " still believed it held it (acquired at " + Seconds(a.start_us) + n.Token(a) +
                    ", believed " + n.Until(a) + ").";
    const std::string losses = n.Losses(a.thread, a.lock, a.start_seq, b.start_seq, &v.events);
    v.explanation += losses.empty() ? " The history records no expiry or loss of " +
                                          n.Thread(a.thread) + "'s lease before that."
                                    : losses;
    n.AddAcquired(b.thread, b.lock, b.start_seq, &v.events);
    v.explanation += n.Faults(a.start_us, x.to_us, b.start_us,
                              {n.ProcessOfThread(a.thread), n.ProcessOfThread(b.thread)}, &v.events);
    return v;
  });
}

PropertyResult CheckResourceExclusion(const Facts& f, const Narrator& n, const CheckOptions& o) {
  Findings found(o.max_violations);
  for (const LockFacts& lock : f.locks) {
    ForEachOverlap(f.accesses, lock.accesses, [&](int earlier, int later) {
      const Span& a = f.accesses[earlier];
      const Span& b = f.accesses[later];
      found.Add({.from_us = b.start_us, .to_us = std::min(a.end_us, b.end_us),
                 .order = b.start_seq, .kind = 0, .a = earlier, .b = later, .c = kNone});
    });
  }
  return Conclude(kResourceExclusion, found, [&](const Finding& x) {
    const Span& a = f.accesses[x.a];
    const Span& b = f.accesses[x.b];
    const std::string resource =
        f.locks[b.lock].name.empty() ? "the resource" : "the resource of " + n.Lock(b.lock);
    Violation v;
    v.kind = "overlap";
    v.threads = {n.Thread(a.thread), n.Thread(b.thread)};
    v.events = {a.start_seq, b.start_seq};
    v.explanation = n.Thread(b.thread) + " entered " + resource + " at " + Seconds(b.start_us) +
                    n.Token(b) + " while " + n.Thread(a.thread) + " was still inside (entered at " +
                    Seconds(a.start_us) + n.Token(a) + ", inside " + n.Until(a) + ").";
    if (a.has_token && b.has_token && b.token <= a.token) {
      v.explanation += " The later access carried a token no greater than the earlier one's.";
    }
    v.explanation += n.Faults(a.start_us, x.to_us, b.start_us,
                              {n.ProcessOfThread(a.thread), n.ProcessOfThread(b.thread)}, &v.events);
    return v;
  });
}

// ---------------------------------------------------------------------------------------------
// reentrancy

enum ReentrancyKind : uint8_t {
  kReleaseWithoutHold,     // A thread holding nothing released successfully.
  kForeignReleaseFreed,    // It failed, but the lock was deleted under its owner meanwhile.
  kLostReentrantHold,      // Count > 1 but the unlock reported a full release.
  kHoldLeaked,             // Count 1 but the unlock reported the lock still held.
};

const char* ReentrancyKindName(uint8_t kind) {
  switch (kind) {
    case kReleaseWithoutHold: return "release_without_hold";
    case kForeignReleaseFreed: return "foreign_release_freed_lock";
    case kLostReentrantHold: return "lost_reentrant_hold";
    case kHoldLeaked: return "hold_leaked";
    default: return "?";
  }
}

// The first lease "released" event on the op's lock while the op was in flight that took the
// lock from a thread that believed it held it (not the releasing thread), or kNone.
int ForeignRelease(const Facts& f, const Op& op) {
  const std::vector<int>& events = f.locks[op.lock].lease_events;
  auto it = std::upper_bound(events.begin(), events.end(), op.invoke_seq,
                             [&](Seq s, int id) { return s < f.lease_events[id].seq; });
  for (; it != events.end() && f.lease_events[*it].seq < op.end_seq; ++it) {
    const LeaseEvent& le = f.lease_events[*it];
    if (le.kind != LeaseKind::kReleased) continue;
    for (int believer : le.believers) {
      // The releaser held nothing at its invoke and cannot start a hold during its release.
      assert(believer != op.thread);
      if (!le.owners_listed ||
          std::find(le.owners.begin(), le.owners.end(), believer) != le.owners.end()) {
        return *it;
      }
    }
  }
  return kNone;
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

// Writes up a reentrancy finding: a = the release op, b = a lease event that deleted the lock
// under another thread during it (or kNone).
Violation ExplainReentrancy(const Facts& f, const Narrator& n, const Finding& x) {
  const Op& op = f.ops[x.a];
  const std::string& who = n.Thread(op.thread);
  Violation v;
  v.kind = ReentrancyKindName(x.kind);
  v.threads = {who};
  v.events = {op.invoke_seq};
  if (op.end_seq != kOpenSeq) v.events.push_back(op.end_seq);
  const std::string value = op.has_value ? std::to_string(op.value) : "nothing";
  switch (x.kind) {
    case kReleaseWithoutHold:
      v.explanation = who + " released " + n.Lock(op.lock) + " at " + Seconds(op.invoke_us) +
                      " without holding it, and the release succeeded (returned " + value +
                      ") at " + Seconds(op.end_us) +
                      "; a release by a thread that does not hold the lock must fail.";
      break;
    case kForeignReleaseFreed:
      v.explanation = who + " tried to release " + n.Lock(op.lock) + " at " +
                      Seconds(op.invoke_us) + " without holding it; the release ended in " +
                      OutcomeName(op.outcome) + ",";
      break;
    case kLostReentrantHold:
      v.explanation = who + " held " + n.Lock(op.lock) + " " +
                      Count(op.count_before, "time") + " and released it once at " +
                      Seconds(op.invoke_us) + ", but the unlock returned " + value +
                      " (fully released) at " + Seconds(op.end_us) +
                      ": the lock was freed although " + who + " still held it " +
                      Count(op.count_before - 1, "time") + ".";
      break;
    case kHoldLeaked:
      v.explanation = who + " made its last release of " + n.Lock(op.lock) + " at " +
                      Seconds(op.invoke_us) + ", but the unlock returned " + value +
                      " (still held) at " + Seconds(op.end_us) +
                      ": the lock stays locked although its holder believes it let it go.";
      break;
  }
  if (x.b != kNone) {
    const LeaseEvent& le = f.lease_events[x.b];
    v.events.push_back(le.seq);
    std::string owners;
    for (int believer : le.believers) {
      owners += (owners.empty() ? "" : ", ") + n.Thread(believer);
      v.threads.push_back(n.Thread(believer));
    }
    v.explanation += std::string(x.kind == kForeignReleaseFreed ? " but" : " Meanwhile") +
                     " the lock was deleted on " + n.ProcessName(le.node) + " at " +
                     Seconds(le.t_us) + " while " + owners + " believed it held it.";
  }
  v.explanation += n.Faults(op.invoke_us, op.end_us, op.invoke_us,
                            {n.ProcessOfThread(op.thread)}, &v.events);
  return v;
}

PropertyResult CheckReentrancy(const Facts& f, const Narrator& n, const CheckOptions& o) {
  Findings found(o.max_violations);
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const Op& op = f.ops[i];
    // Only judged while the lock hash is known to agree with the thread's count.
    if (op.kind != OpKind::kRelease || !op.count_known) continue;
    Finding x{.from_us = op.invoke_us, .to_us = op.end_us, .order = op.invoke_seq, .kind = 0,
              .a = static_cast<int>(i), .b = kNone, .c = kNone};
    if (op.count_before == 0) {
      x.b = ForeignRelease(f, op);
      if (op.outcome == Outcome::kOk) {
        x.kind = kReleaseWithoutHold;
      } else if (x.b != kNone) {
        x.kind = kForeignReleaseFreed;
      } else {
        continue;
      }
    } else if (op.outcome != Outcome::kOk || !op.has_value) {
      continue;
    } else if (op.count_before > 1 && op.value != 0) {
      x.kind = kLostReentrantHold;
    } else if (op.count_before == 1 && op.value != 1) {
      x.kind = kHoldLeaked;
    } else {
      continue;
    }
    found.Add(x);
  }
  return Conclude(kReentrancy, found,
                  [&](const Finding& x) { return ExplainReentrancy(f, n, x); });
}

// ---------------------------------------------------------------------------------------------
// lease_safety

PropertyResult CheckLeaseSafety(const Facts& f, const Narrator& n, const CheckOptions& o) {
  Findings found(o.max_violations);
  for (size_t i = 0; i < f.gaps.size(); ++i) {
    const LeaseGap& g = f.gaps[i];
    if (g.to_us <= g.from_us) continue;  // Stopped holding in the same microsecond.
    found.Add({.from_us = g.from_us, .to_us = g.to_us, .order = g.from_seq,
               .kind = static_cast<uint8_t>(g.used_resource ? 1 : 0),
               .a = static_cast<int>(i), .b = kNone, .c = kNone});
  }
  return Conclude(kLeaseSafety, found, [&](const Finding& x) {
    const LeaseGap& g = f.gaps[x.a];
    const LeaseEvent& loss = f.lease_events[g.loss];
    const std::string& who = n.Thread(g.thread);
    Violation v;
    v.kind = g.used_resource ? "used_after_loss" : "held_after_loss";
    v.threads = {who};
    v.events = {loss.seq, g.from_seq};
    if (g.to_seq != kOpenSeq) v.events.push_back(g.to_seq);
    v.explanation = n.Loss(g.thread, loss);
    int64_t context_from_us = loss.t_us;
    if (g.belief != kNone) {
      const Span& b = f.beliefs[g.belief];
      v.events.push_back(b.start_seq);
      context_from_us = std::min(context_from_us, b.start_us);
      const std::string lease = b.lease_us >= 0
                                    ? "a lease of " + Seconds(b.lease_us)
                                    : "the watchdog (lease " + Seconds(f.lease_default_us) + ")";
      if (g.at_acquire) {
        v.explanation += " That was while its acquire of " + n.Lock(g.lock) +
                         " was in flight; the acquire then succeeded at " + Seconds(b.start_us) +
                         " with " + lease + ", so " + who +
                         " believed it held a lock the node no longer recorded for it, ";
      } else {
        v.explanation += " " + who + " had acquired " + n.Lock(g.lock) + " at " +
                         Seconds(b.start_us) + " with " + lease + " and still believed it held it, ";
      }
    } else {
      v.explanation += " " + who + " was inside the resource of " + n.Lock(g.lock) + " then, ";
    }
    switch (g.end) {
      case GapEnd::kStoppedHolding: v.explanation += "until " + Seconds(g.to_us); break;
      case GapEnd::kReacquired:
        v.explanation += "until its field was acquired again on " + n.ProcessName(g.node) +
                         " at " + Seconds(g.to_us);
        break;
      case GapEnd::kCrash: v.explanation += "until its process crashed at " + Seconds(g.to_us); break;
      case GapEnd::kRunEnd: v.explanation += "until the run ended at " + Seconds(g.to_us); break;
    }
    v.explanation += ": " + Seconds(g.to_us - g.from_us) + " without a lease.";
    if (g.used_resource) {
      v.events.push_back(g.use_seq);
      const Span& access = f.accesses[g.access];
      v.explanation += " It used the resource during that time (from " + Seconds(g.use_us) +
                       n.Token(access) + "), where another client could be too.";
    } else {
      v.explanation += " It did not use the resource during that time.";
    }
    v.explanation += n.Faults(context_from_us, g.to_us, loss.t_us,
                              {n.ProcessOfThread(g.thread)}, &v.events);
    return v;
  });
}

// ---------------------------------------------------------------------------------------------
// liveness

enum LivenessKind : uint8_t { kNoTakeover, kWaitedWhileFree, kStuck };

// A lock held by a client when it crashed.
struct CrashedHold {
  int crash = kNone;
  int lock = kNone;
  std::vector<int> beliefs;
  int64_t lease_us = 0;
  bool lease_is_default = false;
  int trier = kNone;  // The acquire that was trying when the lock should have been free.
  int64_t try_us = 0;
  int64_t deadline_us = 0;
  int first_ok = kNone;  // The first acquire after the crash that succeeded (too late).
};

struct FreeSpan {
  int64_t from_us = 0;
  int64_t to_us = 0;
  int opened_by = kNone;  // The lease event that freed the lock; kNone: free from the start.
};

class LivenessChecker {
 public:
  LivenessChecker(const Facts& f, const Narrator& n, const CheckOptions& o)
      : f_(f), n_(n), bound_us_(o.liveness_bound_us), found_(o.max_violations) {
    assert(bound_us_ >= 0);
  }

  PropertyResult Run() {
    CheckCrashedHolds();
    CheckWaits();
    CheckStuck();
    return Conclude(kLiveness, found_, [&](const Finding& x) { return Explain(x); });
  }

 private:
  static uint64_t Key(int node, int lock) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(node)) << 32) |
           static_cast<uint32_t>(lock);
  }

  // (a) After a crash while holding, some acquisition must succeed within lease + B of the
  // moment someone was trying.
  void CheckCrashedHolds() {
    std::vector<std::vector<int64_t>> max_end_us(f_.locks.size());  // Prefix maxima of ends.
    std::vector<std::vector<int>> max_end_op(f_.locks.size());
    for (size_t l = 0; l < f_.locks.size(); ++l) {
      int64_t best = -1;
      int best_op = kNone;
      for (int op : f_.locks[l].acquires) {
        if (f_.ops[op].end_us > best) {
          best = f_.ops[op].end_us;
          best_op = op;
        }
        max_end_us[l].push_back(best);
        max_end_op[l].push_back(best_op);
      }
    }
    for (size_t c = 0; c < f_.crashes.size(); ++c) {
      const ClientCrash& crash = f_.crashes[c];
      std::vector<CrashedHold> holds;  // One per lock.
      for (int b : crash.beliefs) {
        const Span& belief = f_.beliefs[b];
        auto it = std::find_if(holds.begin(), holds.end(),
                               [&](const CrashedHold& h) { return h.lock == belief.lock; });
        if (it == holds.end()) {
          CrashedHold& hold = holds.emplace_back();
          hold.crash = static_cast<int>(c);
          hold.lock = belief.lock;
          it = holds.end() - 1;
        }
        it->beliefs.push_back(b);
        const int64_t lease_us = belief.lease_us >= 0 ? belief.lease_us : f_.lease_default_us;
        if (lease_us >= it->lease_us) {
          it->lease_us = lease_us;
          it->lease_is_default = belief.lease_us < 0;
        }
      }
      for (CrashedHold& hold : holds) {
        if (JudgeCrashedHold(&hold, max_end_us[hold.lock], max_end_op[hold.lock])) {
          const int64_t to_us = hold.first_ok == kNone ? f_.run_end_us : f_.ops[hold.first_ok].end_us;
          found_.Add({.from_us = crash.t_us, .to_us = to_us, .order = crash.seq,
                      .kind = kNoTakeover, .a = static_cast<int>(crashed_.size()),
                      .b = kNone, .c = kNone});
          crashed_.push_back(std::move(hold));
        }
      }
    }
  }

  // True if `hold` is a violation; fills in its trier, deadline and first_ok.
  bool JudgeCrashedHold(CrashedHold* hold, const std::vector<int64_t>& max_end_us,
                        const std::vector<int>& max_end_op) {
    const ClientCrash& crash = f_.crashes[hold->crash];
    const std::vector<int>& acquires = f_.locks[hold->lock].acquires;
    const int64_t free_us = crash.t_us + hold->lease_us;
    // Acquires invoked by free_us: is one of them still in flight then?
    const size_t invoked = std::upper_bound(acquires.begin(), acquires.end(), free_us,
                                            [&](int64_t t, int op) { return t < f_.ops[op].invoke_us; }) -
                           acquires.begin();
    if (invoked > 0 && max_end_us[invoked - 1] > free_us) {
      hold->trier = max_end_op[invoked - 1];
      hold->try_us = free_us;
    } else if (invoked < acquires.size()) {
      hold->trier = acquires[invoked];
      hold->try_us = f_.ops[hold->trier].invoke_us;
    } else {
      return false;  // Nobody tried to take the lock over.
    }
    hold->deadline_us = hold->try_us + bound_us_;
    const std::vector<int>& oks = f_.locks[hold->lock].acquired_ok;
    const auto after = std::upper_bound(oks.begin(), oks.end(), crash.seq,
                                        [&](Seq s, int op) { return s < f_.ops[op].end_seq; });
    if (after != oks.end()) {
      hold->first_ok = *after;
      if (f_.ops[*after].end_us <= hold->deadline_us) return false;
    }
    return hold->deadline_us < f_.run_end_us;  // Otherwise the run ended first.
  }

  // (b) No acquire waits longer than B while its lock is free on its node.
  void CheckWaits() {
    BuildFreeSpans();
    for (size_t i = 0; i < f_.ops.size(); ++i) {
      const Op& op = f_.ops[i];
      if (op.kind != OpKind::kAcquire) continue;
      std::vector<std::pair<int64_t, int>> nodes = op.nodes;
      if (nodes.empty()) {
        const int node = op.fallback_node != kNone ? op.fallback_node : SoleNode(op.lock);
        if (node == kNone) continue;  // Cannot tell which node it waited on.
        nodes.emplace_back(op.invoke_us, node);
      }
      for (size_t k = 0; k < nodes.size(); ++k) {
        const int64_t from_us = k == 0 ? op.invoke_us : nodes[k].first;
        const int64_t to_us = k + 1 < nodes.size() ? nodes[k + 1].first : op.end_us;
        if (CheckSegment(static_cast<int>(i), nodes[k].second, from_us, to_us)) break;
      }
    }
  }

  // Free spans per (node, lock): from a released/expired/lost to the next acquired. A lock
  // is free on a node from the start of the run until it is first acquired there.
  void BuildFreeSpans() {
    struct State {
      bool free = true;
      FreeSpan span{0, kForever, kNone};
    };
    std::unordered_map<uint64_t, State> states;
    for (size_t i = 0; i < f_.lease_events.size(); ++i) {
      const LeaseEvent& le = f_.lease_events[i];
      const uint64_t key = Key(le.node, le.lock);
      State& state = states[key];
      if (le.kind == LeaseKind::kAcquired) {
        if (!state.free) continue;
        state.span.to_us = le.t_us;
        if (state.span.to_us > state.span.from_us) free_[key].push_back(state.span);
        state.free = false;
      } else if (!state.free) {
        state.free = true;
        state.span = FreeSpan{le.t_us, kForever, static_cast<int>(i)};
      }
    }
    // Each key gets at most one span here, after its others, so the hash order cannot leak.
    for (auto& [key, state] : states) {
      seen_.insert(key);
      if (!state.free) continue;
      state.span.to_us = f_.run_end_us;
      if (state.span.to_us > state.span.from_us) free_[key].push_back(state.span);
    }
  }

  // The only node with lease events for `lock`, or kNone.
  int SoleNode(int lock) const {
    int node = kNone;
    for (int id : f_.locks[lock].lease_events) {
      const int n = f_.lease_events[id].node;
      if (node != kNone && node != n) return kNone;
      node = n;
    }
    return node;
  }

  // Looks for a stretch longer than B in [from_us, to_us] while `op` waited on `node` and the
  // lock was free there. Returns true (and records it) if there is one.
  bool CheckSegment(int op_id, int node, int64_t from_us, int64_t to_us) {
    const Op& op = f_.ops[op_id];
    if (to_us - from_us <= bound_us_) return false;
    const uint64_t key = Key(node, op.lock);
    std::vector<FreeSpan> never_held;
    const std::vector<FreeSpan>* spans = &never_held;
    if (const auto it = free_.find(key); it != free_.end()) {
      spans = &it->second;
    } else if (!seen_.count(key)) {
      never_held.push_back(FreeSpan{0, f_.run_end_us, kNone});  // Never created on that node.
    }
    auto it = std::upper_bound(spans->begin(), spans->end(), from_us,
                               [](int64_t t, const FreeSpan& s) { return t < s.to_us; });
    for (; it != spans->end() && it->from_us < to_us; ++it) {
      const int64_t a = std::max(from_us, it->from_us);
      const int64_t b = std::min(to_us, it->to_us);
      if (b - a <= bound_us_) continue;
      const auto stretch = LongestUnimpaired(a, b, {node, f_.threads[op.thread].process,
                                                    f_.sim_process});
      if (stretch.second - stretch.first > bound_us_) {
        found_.Add({.from_us = stretch.first, .to_us = stretch.second, .order = op.invoke_seq,
                    .kind = kWaitedWhileFree, .a = op_id, .b = node, .c = it->opened_by});
        return true;
      }
    }
    return false;
  }

  // The first stretch of [a, b] longer than B during which none of `processes` was impaired
  // (or the longest one, if none is longer).
  std::pair<int64_t, int64_t> LongestUnimpaired(int64_t a, int64_t b,
                                                std::initializer_list<int> processes) const {
    std::vector<ImpairedSpan> cuts;
    for (int p : processes) {
      const std::vector<ImpairedSpan>& merged = f_.processes[p].impaired_merged;
      auto it = std::upper_bound(merged.begin(), merged.end(), a,
                                 [](int64_t t, const ImpairedSpan& s) { return t < s.to_us; });
      for (; it != merged.end() && it->from_us < b; ++it) cuts.push_back(*it);
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

  // (c) Every operation of a live process completes, unless invoked within the last B + its
  // wait before the end of the run.
  void CheckStuck() {
    for (size_t i = 0; i < f_.ops.size(); ++i) {
      const Op& op = f_.ops[i];
      if (op.outcome != Outcome::kPending) continue;
      const Process& p = f_.processes[f_.threads[op.thread].process];
      if (p.down || p.paused) continue;  // Not a live process at the end.
      if (op.wait_us == kForever || op.wait_us > kForever - bound_us_ - op.invoke_us) continue;
      if (op.invoke_us + op.wait_us + bound_us_ >= f_.run_end_us) continue;
      found_.Add({.from_us = op.invoke_us, .to_us = f_.run_end_us, .order = op.invoke_seq,
                  .kind = kStuck, .a = static_cast<int>(i), .b = kNone, .c = kNone});
    }
  }

  Violation Explain(const Finding& x) const {
    switch (x.kind) {
      case kNoTakeover: return ExplainNoTakeover(x);
      case kWaitedWhileFree: return ExplainWait(x);
      default: return ExplainStuck(x);
    }
  }

  Violation ExplainNoTakeover(const Finding& x) const {
    const CrashedHold& hold = crashed_[x.a];
    const ClientCrash& crash = f_.crashes[hold.crash];
    const Op& trier = f_.ops[hold.trier];
    Violation v;
    v.kind = "no_takeover_after_crash";
    v.events = {crash.seq, trier.invoke_seq};
    std::string holders;
    int64_t held_since_us = crash.t_us;
    for (int b : hold.beliefs) {
      const Span& belief = f_.beliefs[b];
      v.threads.push_back(n_.Thread(belief.thread));
      v.events.push_back(belief.start_seq);
      held_since_us = std::min(held_since_us, belief.start_us);
      holders += (holders.empty() ? "" : " and ") + n_.Thread(belief.thread);
    }
    v.threads.push_back(n_.Thread(trier.thread));
    v.explanation = n_.ProcessName(crash.process) + " crashed at " + Seconds(crash.t_us) +
                    " while " + holders + " held " + n_.Lock(hold.lock) + " (lease " +
                    Seconds(hold.lease_us) + (hold.lease_is_default ? ", the watchdog's" : "") +
                    "), so the lock should have been free by " +
                    Seconds(crash.t_us + hold.lease_us) + ". " + n_.Thread(trier.thread) +
                    " was trying to acquire it from " + Seconds(hold.try_us) +
                    ", but no acquisition succeeded ";
    if (hold.first_ok != kNone) {
      const Op& ok = f_.ops[hold.first_ok];
      v.events.push_back(ok.end_seq);
      v.explanation += "until " + Seconds(ok.end_us) + " (" + n_.Thread(ok.thread) + ")";
    } else {
      v.explanation += "before the run ended at " + Seconds(f_.run_end_us);
    }
    v.explanation += ", later than " + Seconds(hold.deadline_us) + " (" + Seconds(hold.try_us) +
                     " + the liveness bound of " + Seconds(bound_us_) + ").";
    std::string losses;
    for (int b : hold.beliefs) {
      const Span& belief = f_.beliefs[b];
      losses += n_.Losses(belief.thread, belief.lock, crash.seq, kOpenSeq, &v.events);
    }
    v.explanation += losses.empty() ? " No node recorded the lease as expired or lost." : losses;
    std::vector<int> clients = {crash.process, f_.threads[trier.thread].process};
    v.explanation += n_.Faults(held_since_us, x.to_us, crash.t_us + hold.lease_us, clients,
                               &v.events);
    return v;
  }

  Violation ExplainWait(const Finding& x) const {
    const Op& op = f_.ops[x.a];
    const std::string& who = n_.Thread(op.thread);
    Violation v;
    v.kind = "waited_while_free";
    v.threads = {who};
    v.events = {op.invoke_seq};
    v.explanation = who + " was waiting to acquire " + n_.Lock(op.lock) + " (" +
                    f_.event(op.invoke_seq).detail + ", invoked at " + Seconds(op.invoke_us) +
                    ") while the lock was free on " + n_.ProcessName(x.b) + " from " +
                    Seconds(x.from_us) + " to " + Seconds(x.to_us) + ": " +
                    Seconds(x.to_us - x.from_us) + ", longer than the liveness bound of " +
                    Seconds(bound_us_) + ".";
    if (x.c != kNone) {
      const LeaseEvent& le = f_.lease_events[x.c];
      v.events.push_back(le.seq);
      const char* how = le.kind == LeaseKind::kExpired ? "expired"
                        : le.kind == LeaseKind::kLost  ? "was lost"
                                                       : "was released";
      v.explanation += " The lock " + std::string(how) + " there at " + Seconds(le.t_us) + ".";
    } else {
      v.explanation += " The lock had not been taken there since the run began.";
    }
    if (op.end_seq != kOpenSeq) {
      v.events.push_back(op.end_seq);
      v.explanation += " The acquire ended in " + std::string(OutcomeName(op.outcome)) + " at " +
                       Seconds(op.end_us) + ".";
    } else {
      v.explanation += " The acquire was still waiting when the run ended.";
    }
    v.explanation += n_.Faults(op.invoke_us, x.to_us, x.from_us,
                               {f_.threads[op.thread].process}, &v.events);
    return v;
  }

  Violation ExplainStuck(const Finding& x) const {
    const Op& op = f_.ops[x.a];
    const Event& invoke = f_.event(op.invoke_seq);
    const std::string& who = n_.Thread(op.thread);
    Violation v;
    v.kind = "stuck";
    v.threads = {who};
    v.events = {op.invoke_seq};
    v.explanation = who + "'s " + invoke.op + " of " + n_.Lock(op.lock) +
                    (invoke.detail.empty() ? "" : " (" + invoke.detail + ")") + ", invoked at " +
                    Seconds(op.invoke_us) + ", never completed: the run ended at " +
                    Seconds(f_.run_end_us) + ", " + Seconds(f_.run_end_us - op.invoke_us) +
                    " later, more than its wait (" + Seconds(op.wait_us) +
                    ") plus the liveness bound (" + Seconds(bound_us_) + ").";
    v.explanation += n_.Faults(op.invoke_us, f_.run_end_us, op.invoke_us + op.wait_us + bound_us_,
                               {f_.threads[op.thread].process}, &v.events);
    return v;
  }

  const Facts& f_;
  const Narrator& n_;
  const int64_t bound_us_;
  Findings found_;
  std::vector<CrashedHold> crashed_;  // The violating ones, addressed by Finding::a.
  std::unordered_map<uint64_t, std::vector<FreeSpan>> free_;  // (node, lock) -> free spans.
  std::unordered_set<uint64_t> seen_;  // (node, lock) pairs with lease events.
};

}  // namespace

const PropertyResult* Verdict::Find(std::string_view property) const {
  for (const PropertyResult& r : results) {
    if (r.property == property) return &r;
  }
  return nullptr;
}

bool Verdict::AnyViolated() const {
  return std::any_of(results.begin(), results.end(),
                     [](const PropertyResult& r) { return r.violated; });
}

Verdict CheckHistory(const History& history, const CheckOptions& options) {
  const Facts facts = FactsBuilder(history, options).Build();
  const Narrator narrator(facts);
  Verdict verdict;
  verdict.run_end_us = facts.run_end_us;
  verdict.warnings = facts.warnings;
  verdict.warning_count = facts.warning_count;
  verdict.results.push_back(CheckMutualExclusion(facts, narrator, options));
  verdict.results.push_back(CheckResourceExclusion(facts, narrator, options));
  verdict.results.push_back(CheckReentrancy(facts, narrator, options));
  verdict.results.push_back(CheckLeaseSafety(facts, narrator, options));
  verdict.results.push_back(LivenessChecker(facts, narrator, options).Run());
  assert(verdict.results.size() == kProperties.size());
  for (size_t i = 0; i < kProperties.size(); ++i) {
    assert(verdict.results[i].property == kProperties[i]);
  }
  return verdict;
}

Judgement Judge(const Verdict& verdict, const std::map<std::string, Expectation>& expect) {
  Judgement judgement;
  for (const auto& [property, expectation] : expect) {
    const PropertyResult* result = verdict.Find(property);
    if (result == nullptr) {
      judgement.mismatches.push_back(property + ": no such property");
      continue;
    }
    if (expectation == Expectation::kHold && result->violated) {
      judgement.mismatches.push_back(property + ": expected to hold, violated (" +
                                     Count(result->violation_count, "violation") + ")");
    } else if (expectation == Expectation::kViolated && !result->violated) {
      judgement.mismatches.push_back(property + ": expected to be violated, held");
    }
  }
  judgement.matches = judgement.mismatches.empty();
  return judgement;
}

}  // namespace lockstep::check
