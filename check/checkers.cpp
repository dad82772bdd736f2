#include "check/checkers.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <optional>
#include <set>
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
constexpr size_t kMaxOrphanThreadsNamed = 6;    // Per orphan: its owners, then waiters kept out.

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

// How long an operation may wait, from its invoke detail: tryLock(wait=...) waits that long,
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

// An exec's reply as Reply::Debug renders it: "(nil)" (also "nil"), or an integer.
bool IsNilReply(std::string_view reply) { return reply == "(nil)" || reply == "nil"; }
bool IsIntegerReply(std::string_view reply) { return ParseInt(Trim(reply)).has_value(); }

// n in "acquired on k of n nodes" (RedLock/MultiLock acquire detail), or 0.
int NodesInDetail(std::string_view detail) {
  const size_t of = detail.find(" of ");
  if (of == std::string_view::npos) return 0;
  std::string_view rest = detail.substr(of + 4);
  const size_t space = rest.find(' ');
  if (space == std::string_view::npos || rest.substr(space + 1, 4) != "node") return 0;
  const auto n = ParseInt(rest.substr(0, space));
  return n && *n > 0 && *n < 1'000'000 ? static_cast<int>(*n) : 0;
}

// n/2 + 1: RedLock's quorum, and how many of its nodes a multi-node lock should be obtainable
// with (liveness).
int MajorityOf(int nodes) { return nodes / 2 + 1; }

// What the "protocol" note says about the lock the history exercised.
struct ProtocolInfo {
  std::string kind;               // Empty: no note (judged as an RLock).
  bool fencing = false;
  int64_t permits = 1;            // Semaphores.
  int nodes = 0;                  // RedLock/MultiLock: masters (0: unknown).
  int quorum = 0;                 // RedLock/MultiLock: nodes a holder must keep; 0 otherwise.
  int64_t fair_wait_us = 0;       // Fair lock: the queue's wait timeout.

  bool fair() const { return kind == "fairlock"; }
  bool semaphore() const { return kind == "semaphore"; }
  bool latch() const { return kind == "countdownlatch"; }
  bool quorum_kind() const { return kind == "redlock" || kind == "multilock"; }
  // Kinds whose key's presence does not mean "held by someone" and that have no owners.
  bool ownerless() const { return kind == "semaphore" || kind == "countdownlatch"; }
};

// ---------------------------------------------------------------------------------------------
// Facts: what the history says happened, reconstructed in one pass

enum class OpKind : uint8_t { kAcquire, kRelease, kForceUnlock, kOther };
enum class Outcome : uint8_t { kPending, kOk, kFail, kInfo, kCrashed };
enum class EndCause : uint8_t { kRunEnd, kRelease, kForceUnlock, kCrash, kExit };
// kOwners: the key still exists but its set of owner fields changed (a reader joined or left).
enum class LeaseKind : uint8_t { kAcquired, kReleased, kExpired, kLost, kOwners };
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

// What a client process's threads do (its "role" note; no note: a worker). Roles other than
// worker split a count-down latch's await and countDown between processes.
enum class Role : uint8_t { kWorker, kAwait, kCountDown };

struct Process {
  std::string name;
  bool client = false;
  Role role = Role::kWorker;
  int role_threads = 1;      // Its threads, as its role note says.
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
  int64_t wait_us = 0;     // How long it may wait (not releases); kForever for lock().
  int64_t permits = 1;     // Semaphores: the permits it takes or gives back.
  // Release: the thread's hold count at the invoke, and whether the lock hash was known to
  // agree with it.
  int count_before = 0;
  bool count_known = true;
  int fallback_node = kNone;                  // Acquire: the node the process last used.
  std::vector<std::pair<int64_t, int>> nodes;  // Acquire: (t_us, node) where its commands ran.
  // Acquire (fair lock): its first "acquire" exec with a nil or integer reply, and whether that
  // reply was an integer (it queued). kOpenSeq if none could be attributed to it.
  Seq arrival_seq = kOpenSeq;
  bool queued = false;
  bool exec_ambiguous = false;  // An exec without a thread might have been its.
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
  bool shared = false;     // A read belief / read access.
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
  std::vector<int> added;      // kAcquired/kOwners: threads with a field there now, not before.
  std::vector<int> removed;    // Threads whose field it took away from the node.
};

// A stretch during which a thread held a lock (or was inside its resource) although a node had
// recorded its lease as expired or lost.
struct LeaseGap {
  int thread = kNone;
  int lock = kNone;
  int node = kNone;
  int loss = kNone;        // The lease event.
  int alive = -1;          // RedLock/MultiLock: nodes its field was alive on after the loss.
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
  int read_count = 0;       // The same for the read side of a read-write lock.
  // Whether the count of the thread's field in the lock hash is known to equal `count`. An
  // unknown outcome, a crash or a lease loss makes it unknown; a definite "not held" (release
  // returned 1 or failed, the key was deleted) at count 0 makes it known again.
  bool count_known = true;
  int belief = kNone;
  int read_belief = kNone;
  int access = kNone;
  int access_depth = 0;
  int gap = kNone;
  int pending_loss = kNone;     // A loss that came while the acquire was in flight.
  std::vector<int> lease_events;  // Lease events that listed or removed this thread's field.
  std::vector<int> alive_nodes;   // Nodes whose lock key holds this thread's field.

  int Count(bool shared) const { return shared ? read_count : count; }
  int& Count(bool shared) { return shared ? read_count : count; }
  int Belief(bool shared) const { return shared ? read_belief : belief; }
  int& Belief(bool shared) { return shared ? read_belief : belief; }
  int total() const { return count + read_count; }
  bool believes() const { return belief != kNone || read_belief != kNone; }
  int any_belief() const { return belief != kNone ? belief : read_belief; }
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
  std::vector<Seq> writes;        // Resource exits with "accepted"/"rejected..." details.
};

struct Facts {
  const std::vector<Event>* events = nullptr;
  int64_t run_end_us = 0;
  int64_t lease_default_us = 0;
  ProtocolInfo protocol;
  bool has_read_ops = false;
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
  bool roles = false;            // Some process has a role note.
  // (seq, process): a thread of a counting-down process stopped for good (a "done" note).
  std::vector<std::pair<Seq, int>> done_notes;
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
    ReadProtocol();
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

  // The protocol note, and what the rest of the history says about the RedLock node count.
  void ReadProtocol() {
    ProtocolInfo& p = facts_.protocol;
    p.fair_wait_us = options_.fair_wait_timeout_us;
    int detail_nodes = 0;
    int promotions = 0;
    std::unordered_set<std::string> lease_nodes;
    for (const Event& e : history_.events()) {
      if (e.type == Event::Type::kNote && e.op == "protocol") {
        p.kind = std::string(DetailValue(e.detail, "kind="));
        p.fencing = DetailValue(e.detail, "fencing=") == "on";
        if (const auto permits = ParseInt(DetailValue(e.detail, "permits="))) p.permits = *permits;
        if (const auto nodes = ParseInt(DetailValue(e.detail, "nodes="));
            nodes && *nodes > 0 && *nodes < 1'000'000) {
          p.nodes = static_cast<int>(*nodes);
        }
        if (const auto wait = ParseDurationUs(DetailValue(e.detail, "fair_wait_timeout="));
            wait && *wait > 0) {
          p.fair_wait_us = *wait;
        }
      } else if (e.type == Event::Type::kOk && e.op == "acquire") {
        detail_nodes = std::max(detail_nodes, NodesInDetail(e.detail));
      } else if (e.type == Event::Type::kLease) {
        lease_nodes.insert(e.process);
      } else if (e.type == Event::Type::kFault && e.op == "promote") {
        ++promotions;
      } else if ((e.type == Event::Type::kInvoke) &&
                 (e.op == "acquire_read" || e.op == "release_read")) {
        facts_.has_read_ops = true;
      }
    }
    if (p.quorum_kind()) {
      if (p.nodes == 0) p.nodes = detail_nodes;
      if (p.nodes == 0) p.nodes = std::max(1, static_cast<int>(lease_nodes.size()) - promotions);
      p.quorum = p.kind == "redlock" ? MajorityOf(p.nodes) : p.nodes;
    }
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
    return Hold(thread, lock).believes() || Inside(thread, lock);
  }
  // RedLock/MultiLock: how many nodes a thread must keep its field on; 0 for other kinds.
  int Quorum() const { return facts_.protocol.quorum; }
  int Alive(int thread, int lock) {
    return static_cast<int>(Hold(thread, lock).alive_nodes.size());
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
      const std::vector<int>& threads = facts_.processes[process].threads;
      for (int thread : threads) {
        if (thread == kNone) continue;
        for (HoldState& hs : facts_.threads[thread].holds) {
          if (hs.total() == 0) hs.count_known = true;
          hs.alive_nodes.clear();
        }
      }
      for (auto& [key, owners] : node_owners_) {
        std::erase_if(owners, [&](int t) {
          return std::find(threads.begin(), threads.end(), t) != threads.end();
        });
      }
    } else if (e.op == "run") {
      if (const auto end = ParseInt(DetailValue(e.detail, "end_us="))) run_end_note_us_ = *end;
    } else if (e.op == "lease_default" && e.has_value) {
      facts_.lease_default_us = e.value;
    } else if (e.op == "role") {
      Process& p = facts_.processes[ProcessOf(e)];
      const std::string_view role = DetailValue(e.detail, "role=");
      if (role == "await") {
        p.role = Role::kAwait;
      } else if (role == "count_down") {
        p.role = Role::kCountDown;
      } else if (role != "worker") {
        Warn(e, "role note with an unknown role=");
        return;
      }
      const auto threads = ParseInt(DetailValue(e.detail, "threads="));
      p.role_threads = threads && *threads > 0 && *threads < 1'000'000 ? static_cast<int>(*threads) : 1;
      facts_.roles = true;
    } else if (e.op == "done") {
      const int process = ProcessOf(e);
      if (facts_.processes[process].role == Role::kCountDown) {
        facts_.done_notes.emplace_back(e.seq, process);
      }
    }
  }

  static OpKind KindOf(const std::string& op) {
    if (op == "acquire" || op == "acquire_read") return OpKind::kAcquire;
    if (op == "release" || op == "release_read") return OpKind::kRelease;
    if (op == "force_unlock") return OpKind::kForceUnlock;
    return OpKind::kOther;
  }
  static bool IsReadOp(const std::string& op) { return op == "acquire_read" || op == "release_read"; }

  // Semaphores: the permits an acquire or release takes or gives back.
  static int64_t PermitsOf(const Event& e) {
    if (const auto n = ParseInt(DetailValue(e.detail, "permits=")); n && *n >= 0) return *n;
    if (e.has_value && e.value >= 0) return e.value;
    return 1;
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
    op.shared = IsReadOp(e.op);
    op.thread = thread;
    op.lock = lock;
    op.invoke_seq = e.seq;
    op.invoke_us = e.t_us;
    HoldState& hs = Hold(thread, lock);
    op.count_before = hs.Count(op.shared);
    op.count_known = hs.count_known;
    const bool semaphore = facts_.protocol.semaphore();
    if (semaphore) op.permits = PermitsOf(e);
    if (op.kind != OpKind::kRelease && op.kind != OpKind::kForceUnlock) {
      op.wait_us = AcquireWaitUs(e.detail);
    }
    if (op.kind == OpKind::kAcquire) {
      if (!semaphore) {  // A semaphore's invoke value is its permits, not a lease.
        op.lease_us = !e.has_value ? -1 : std::clamp<int64_t>(e.value, 0, kForever / 1000) * 1000;
      }
      const auto node = last_node_.find(Key(facts_.threads[thread].process, lock));
      op.fallback_node = node == last_node_.end() ? kNone : node->second;
      facts_.locks[lock].acquires.push_back(static_cast<int>(facts_.ops.size()));
    }
    facts_.threads[thread].op = static_cast<int>(facts_.ops.size());
    facts_.ops.push_back(std::move(op));

    const bool shared = facts_.ops.back().shared;
    if (facts_.ops.back().kind == OpKind::kRelease && hs.Count(shared) > 0) {
      // The thread stops relying on the lock when it starts the release that ends its last
      // hold, whatever the release's outcome.
      if (--hs.Count(shared) == 0) EndBelief(thread, lock, e, EndCause::kRelease, shared);
    } else if (facts_.ops.back().kind == OpKind::kForceUnlock) {
      for (const bool side : {false, true}) {
        if (hs.Count(side) > 0) {
          hs.Count(side) = 0;
          EndBelief(thread, lock, e, EndCause::kForceUnlock, side);
        }
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
  }

  void OnAcquireEnd(int id, const Event& e) {
    const Op& op = facts_.ops[id];
    HoldState& hs = Hold(op.thread, op.lock);
    const int pending = hs.pending_loss;
    hs.pending_loss = kNone;
    if (op.outcome == Outcome::kInfo) hs.count_known = false;  // It may hold now.
    if (op.outcome != Outcome::kOk) return;
    facts_.locks[op.lock].acquired_ok.push_back(id);
    if (++hs.Count(op.shared) == 1) {
      StartBelief(op.thread, op.lock, e, id);
    } else {
      // A reentry sets the lease again (Redisson's script runs pexpire with it).
      Span& belief = facts_.beliefs[hs.Belief(op.shared)];
      belief.lease_us = op.lease_us;
      if (e.has_value) {
        belief.has_token = true;
        belief.token = e.value;
      }
    }
    if (pending != kNone && !(Quorum() > 0 && Alive(op.thread, op.lock) >= Quorum())) {
      // The lease was lost while the acquire was in flight: the thread starts out believing it
      // holds a lock the node (for RedLock: a quorum of nodes) no longer records for it.
      assert(hs.Count(op.shared) == 1);
      hs.count_known = false;
      OpenGap(op.thread, op.lock, pending, e, /*at_acquire=*/true);
    }
  }

  void StartBelief(int thread, int lock, const Event& e, int op) {
    HoldState& hs = Hold(thread, lock);
    const bool shared = facts_.ops[op].shared;
    assert(hs.Belief(shared) == kNone);
    const bool believed = hs.believes();
    Span s;
    s.thread = thread;
    s.lock = lock;
    s.start_seq = e.seq;
    s.start_us = e.t_us;
    s.op = op;
    s.lease_us = facts_.ops[op].lease_us;
    s.shared = shared;
    s.has_token = e.has_value;
    s.token = e.value;
    hs.Belief(shared) = static_cast<int>(facts_.beliefs.size());
    facts_.beliefs.push_back(s);
    facts_.locks[lock].beliefs.push_back(hs.Belief(shared));
    if (!believed) believers_[lock].push_back(thread);
  }

  void EndSpan(Span* s, const Event& e, EndCause cause) {
    assert(s->end_seq == kOpenSeq);
    assert(e.seq > s->start_seq);
    s->end_seq = e.seq;
    s->end_us = e.t_us;
    s->cause = cause;
  }

  void EndBelief(int thread, int lock, const Event& e, EndCause cause, bool shared) {
    HoldState& hs = Hold(thread, lock);
    assert(hs.Belief(shared) != kNone);
    EndSpan(&facts_.beliefs[hs.Belief(shared)], e, cause);
    hs.Belief(shared) = kNone;
    if (!hs.believes()) {
      std::vector<int>& believers = believers_[lock];
      believers.erase(std::find(believers.begin(), believers.end(), thread));
    }
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
      s.shared = e.detail == "read";
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
      if (e.detail.starts_with("accepted") || e.detail.starts_with("rejected")) {
        facts_.locks[lock].writes.push_back(e.seq);  // A write the resource judged by token.
      }
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
    if (op == "owners") return LeaseKind::kOwners;
    return std::nullopt;
  }

  static bool Contains(const std::vector<int>& v, int x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  }

  // True if the thread's operation in flight is a release or forceUnlock of `lock`.
  bool Releasing(int thread, int lock) const {
    const int op = facts_.threads[thread].op;
    return op != kNone && facts_.ops[op].lock == lock &&
           (facts_.ops[op].kind == OpKind::kRelease || facts_.ops[op].kind == OpKind::kForceUnlock);
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
      if (owner != kNone && !Contains(le.owners, owner)) le.owners.push_back(owner);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
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
    const int id = static_cast<int>(facts_.lease_events.size());
    facts_.lease_events.push_back(std::move(le));
    facts_.locks[lock].lease_events.push_back(id);
    const LeaseEvent& ev = facts_.lease_events[id];
    for (int owner : ev.owners) Hold(owner, lock).lease_events.push_back(id);
    for (int gone : ev.removed) {
      if (!Contains(ev.owners, gone)) Hold(gone, lock).lease_events.push_back(id);
    }
    for (int t : ev.added) {
      std::vector<int>& alive = Hold(t, lock).alive_nodes;
      if (!Contains(alive, ev.node)) alive.push_back(ev.node);
    }
    for (int t : ev.removed) std::erase(Hold(t, lock).alive_nodes, ev.node);

    if (ev.kind == LeaseKind::kAcquired || ev.kind == LeaseKind::kOwners) {
      const std::vector<int>& arrived = ev.kind == LeaseKind::kAcquired ? ev.owners : ev.added;
      for (int owner : arrived) {
        HoldState& hs = Hold(owner, lock);
        if (Quorum() > 0) {
          // RedLock: the loss that mattered was the quorum's; it is back once a quorum is.
          if (hs.gap != kNone && Alive(owner, lock) >= Quorum()) {
            CloseGap(owner, lock, &e, GapEnd::kReacquired);
          }
          continue;
        }
        if (hs.pending_loss != kNone && facts_.lease_events[hs.pending_loss].node == ev.node) {
          hs.pending_loss = kNone;  // Its acquire ran after the loss and created the key anew.
        }
        if (hs.gap != kNone && facts_.gaps[hs.gap].node == ev.node) {
          CloseGap(owner, lock, &e, GapEnd::kReacquired);
        }
      }
      // A field dropped while the key stays (a reader's field going): harmless when its own
      // release removed it, a loss when it still believed it held the lock.
      for (int gone : ev.removed) {
        HoldState& hs = Hold(gone, lock);
        hs.count_known = hs.total() == 0;
        if (ev.kind == LeaseKind::kOwners && !Releasing(gone, lock)) Lose(gone, lock, id, e);
      }
      return;
    }
    // The key is gone from this node, so every field that was in it is at 0.
    const std::vector<int>& affected = ev.owners_listed ? ev.removed : facts_.locks[lock].threads;
    for (int thread : affected) {
      HoldState& hs = Hold(thread, lock);
      hs.count_known = hs.total() == 0;
    }
    if (ev.kind == LeaseKind::kExpired || ev.kind == LeaseKind::kLost) {
      for (int owner : ev.removed) Lose(owner, lock, id, e);
    } else {
      // Deleted by a command: the owner's own release, or someone else's (an unlock that does
      // not check the owner, a read unlock discarding readers whose timeouts ran out), which
      // takes the lease away from under it as surely as an expiry.
      for (int owner : ev.removed) {
        if (!Releasing(owner, lock)) Lose(owner, lock, id, e);
      }
    }
  }

  // The thread's field went from a node (lease event `loss`). For RedLock/MultiLock that is a
  // loss of the lease only when its field is left on fewer than a quorum of nodes; a loss while
  // its acquire is in flight is remembered and judged at the acquire's ok.
  void Lose(int thread, int lock, int loss, const Event& at) {
    if (Quorum() > 0 && Holding(thread, lock) && Alive(thread, lock) >= Quorum()) return;
    OpenGap(thread, lock, loss, at, /*at_acquire=*/false);
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
    g.alive = Quorum() > 0 ? Alive(thread, lock) : -1;
    g.belief = hs.any_belief();
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
      std::vector<int> candidates;
      for (int t : threads) {
        if (t == kNone || facts_.threads[t].op == kNone) continue;
        const Op& op = facts_.ops[facts_.threads[t].op];
        if (op.kind == OpKind::kAcquire && op.lock == lock) candidates.push_back(t);
      }
      if (candidates.size() == 1) {
        owner = candidates[0];
      } else if (e.op == "acquire" || e.op == "try_acquire") {
        // Any of them may have queued (or been granted) here: none can be placed in the queue.
        for (int t : candidates) {
          Op& op = facts_.ops[facts_.threads[t].op];
          if (op.arrival_seq == kOpenSeq) op.exec_ambiguous = true;
        }
      }
    }
    if (owner == kNone || facts_.threads[owner].op == kNone) return;
    Op& op = facts_.ops[facts_.threads[owner].op];
    if (op.kind != OpKind::kAcquire || op.lock != lock) return;
    if (op.nodes.empty() || op.nodes.back().second != node) op.nodes.emplace_back(e.t_us, node);
    // The fair lock's queue: the op's first acquire script either granted it (nil) or queued
    // it (an integer, the ttl); error replies do neither. tryLock()'s "try_acquire" never
    // queues: only its grant (nil) is an arrival.
    if (op.arrival_seq == kOpenSeq && !op.exec_ambiguous) {
      const bool nil = IsNilReply(e.detail);
      if ((e.op == "acquire" && (nil || IsIntegerReply(e.detail))) ||
          (e.op == "try_acquire" && nil)) {
        op.arrival_seq = e.seq;
        op.queued = !nil;
      }
    }
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
        for (const bool side : {false, true}) {
          if (hs.Belief(side) != kNone) {
            crash.beliefs.push_back(hs.Belief(side));
            EndBelief(thread, lock, e, EndCause::kCrash, side);
          }
        }
        // A field of a thread that held the lock may linger in the hash until it expires.
        if (hs.total() > 0) hs.count_known = false;
        hs.count = 0;
        hs.read_count = 0;
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
  // (node, lock) -> threads whose fields the node's key held at its last lease event.
  std::unordered_map<uint64_t, std::vector<int>> node_owners_;
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

// Writes up the kept findings (a Violation or an Observation each), earliest first.
template <class Record, class Explain>
std::vector<Record> WriteUp(const std::string& property, const Findings& findings,
                            Explain explain) {
  std::vector<Record> out;
  for (const Finding& f : findings.Sorted()) {
    Record v = explain(f);
    v.property = property;
    v.from_us = f.from_us;
    v.to_us = f.to_us;
    std::sort(v.events.begin(), v.events.end());
    v.events.erase(std::unique(v.events.begin(), v.events.end()), v.events.end());
    assert(!v.threads.empty());
    out.push_back(std::move(v));
  }
  return out;
}

template <class Explain>
PropertyResult Conclude(std::string_view property, const Findings& findings, Explain explain) {
  PropertyResult result;
  result.property = std::string(property);
  result.violation_count = findings.count();
  result.violated = findings.count() > 0;
  result.violations = WriteUp<Violation>(result.property, findings, explain);
  return result;
}

// Adds the observations (things noticed that are not violations) to a result.
template <class Explain>
void Observe(PropertyResult* result, const Findings& findings, Explain explain) {
  result->observation_count = findings.count();
  result->observations = WriteUp<Observation>(result->property, findings, explain);
}

PropertyResult NotApplicable(std::string_view property) {
  PropertyResult result;
  result.property = std::string(property);
  result.applicable = false;
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
  // "its read lock" / "its write lock" for a read-write lock's belief.
  static const char* Side(const Span& s) { return s.shared ? "read lock" : "write lock"; }

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
                       : le.kind == LeaseKind::kOwners ? "was removed from the key"
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
      if (le.kind == LeaseKind::kOwners &&
          std::find(le.removed.begin(), le.removed.end(), thread) == le.removed.end()) {
        continue;  // Its field stayed; others' changed.
      }
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
      const LeaseEvent& le = f_.lease_events[*it];
      if (le.kind == LeaseKind::kAcquired ||
          (le.kind == LeaseKind::kOwners &&
           std::find(le.added.begin(), le.added.end(), thread) != le.added.end())) {
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
// open span per group and side (read/write), so the active list stays as short as twice the
// number of threads.
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

// The spans of other threads open when span `later` of `group` starts, in start order.
std::vector<int> OpenAt(const std::vector<Span>& spans, const std::vector<int>& group, int later) {
  const Span& s = spans[later];
  std::vector<int> open;
  for (int i : group) {
    if (spans[i].start_seq >= s.start_seq) break;
    if (spans[i].thread != s.thread && spans[i].end_seq > s.start_seq) open.push_back(i);
  }
  return open;
}

// Semaphores with P > 1 permits: a span that starts while spans of P or more other threads are
// open is a violation "over_permits"; it lasts while P others stay open (and it does).
PropertyResult CheckOverPermits(std::string_view property, const std::vector<Span>& spans,
                                bool accesses, const Facts& f, const Narrator& n,
                                const CheckOptions& o) {
  const size_t permits = static_cast<size_t>(f.protocol.permits);
  Findings found(o.max_violations);
  for (size_t l = 0; l < f.locks.size(); ++l) {
    const std::vector<int>& group = accesses ? f.locks[l].accesses : f.locks[l].beliefs;
    std::vector<int> active;
    for (int later : group) {
      const Span& s = spans[later];
      std::erase_if(active, [&](int i) { return spans[i].end_seq < s.start_seq; });
      std::vector<int64_t> ends;
      for (int i : active) {
        if (spans[i].thread != s.thread) ends.push_back(spans[i].end_us);
      }
      if (ends.size() >= permits) {
        // The count of others falls below P when the P-th latest of them ends.
        std::nth_element(ends.begin(), ends.begin() + (permits - 1), ends.end(),
                         std::greater<int64_t>());
        found.Add({.from_us = s.start_us, .to_us = std::min(s.end_us, ends[permits - 1]),
                   .order = s.start_seq, .kind = 0, .a = later, .b = static_cast<int>(l),
                   .c = kNone});
      }
      active.push_back(later);
    }
  }
  return Conclude(property, found, [&](const Finding& x) {
    const Span& b = spans[x.a];
    const std::vector<int>& group = accesses ? f.locks[x.b].accesses : f.locks[x.b].beliefs;
    const std::vector<int> open = OpenAt(spans, group, x.a);
    Violation v;
    v.kind = "over_permits";
    std::string others;
    std::vector<int> clients = {n.ProcessOfThread(b.thread)};
    for (int i : open) {
      const Span& a = spans[i];
      v.threads.push_back(n.Thread(a.thread));
      v.events.push_back(a.start_seq);
      clients.push_back(n.ProcessOfThread(a.thread));
      others += (others.empty() ? "" : "; ") + n.Thread(a.thread) + " (since " +
                Seconds(a.start_us) + ", " + n.Until(a) + ")";
    }
    v.threads.push_back(n.Thread(b.thread));
    v.events.push_back(b.start_seq);
    v.explanation = n.Thread(b.thread) + (accesses ? " entered the resource of " : " acquired ") +
                    n.Lock(b.lock) + " at " + Seconds(b.start_us) + " while " +
                    Count(open.size(), "other thread") + (accesses ? " were inside" : " held it") +
                    ", more than its " + Count(f.protocol.permits, "permit") + " allow: " +
                    others + ".";
    v.explanation += n.Faults(b.start_us, x.to_us, b.start_us, clients, &v.events);
    return v;
  });
}

PropertyResult CheckMutualExclusion(const Facts& f, const Narrator& n, const CheckOptions& o) {
  if (f.protocol.latch()) return NotApplicable(kMutualExclusion);  // An open latch admits all.
  if (f.protocol.semaphore() && f.protocol.permits > 1) {
    return CheckOverPermits(kMutualExclusion, f.beliefs, /*accesses=*/false, f, n, o);
  }
  Findings found(o.max_violations);
  for (const LockFacts& lock : f.locks) {
    ForEachOverlap(f.beliefs, lock.beliefs, [&](int earlier, int later) {
      const Span& a = f.beliefs[earlier];
      const Span& b = f.beliefs[later];
      if (a.shared && b.shared) return;  // Readers share a read-write lock.
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
    if (a.shared || b.shared) {
      v.explanation += " " + n.Thread(b.thread) + " took its " + n.Side(b) + ", " +
                       n.Thread(a.thread) + " held its " + n.Side(a) + ".";
    }
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
  if (f.protocol.latch()) return NotApplicable(kResourceExclusion);
  if (f.protocol.semaphore() && f.protocol.permits > 1) {
    return CheckOverPermits(kResourceExclusion, f.accesses, /*accesses=*/true, f, n, o);
  }
  Findings found(o.max_violations);
  for (const LockFacts& lock : f.locks) {
    ForEachOverlap(f.accesses, lock.accesses, [&](int earlier, int later) {
      const Span& a = f.accesses[earlier];
      const Span& b = f.accesses[later];
      if (a.shared && b.shared) return;  // Two readers.
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
      // The releaser held nothing on this side; it may hold the other side of a read-write lock.
      if (believer == op.thread) continue;
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
  if (f.protocol.ownerless()) return NotApplicable(kReentrancy);
  // RedLock/MultiLock releases return how many members they fully released (RedLock is ok
  // even when none was held).
  const bool members = f.protocol.quorum_kind();
  Findings found(o.max_violations);
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const Op& op = f.ops[i];
    // Only judged while the lock hash is known to agree with the thread's count.
    if (op.kind != OpKind::kRelease || !op.count_known) continue;
    Finding x{.from_us = op.invoke_us, .to_us = op.end_us, .order = op.invoke_seq, .kind = 0,
              .a = static_cast<int>(i), .b = kNone, .c = kNone};
    const bool full = members ? op.value >= 1 : op.value == 1;  // Of an ok with a value.
    if (op.count_before == 0) {
      x.b = ForeignRelease(f, op);
      if (op.outcome == Outcome::kOk && (!members || (op.has_value && op.value >= 1))) {
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
    } else if (op.count_before == 1 && !full && !op.shared) {
      // A reader's last release returns 0 while other readers keep the hash.
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
    if (g.alive >= 0) {
      v.explanation += " That left its field on " + std::to_string(g.alive) + " of the " +
                       std::to_string(f.protocol.nodes) + " nodes, fewer than the quorum of " +
                       std::to_string(f.protocol.quorum) + ".";
      if (g.belief != kNone) {
        const Span& b = f.beliefs[g.belief];
        const std::string earlier = n.Losses(g.thread, g.lock, b.start_seq, loss.seq, &v.events);
        if (!earlier.empty()) v.explanation += " Before that:" + earlier;
      }
    }
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
        v.explanation += g.alive >= 0 ? "until its field was on a quorum of nodes again at " +
                                            Seconds(g.to_us)
                                      : "until its field was acquired again on " +
                                            n.ProcessName(g.node) + " at " + Seconds(g.to_us);
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

enum LivenessKind : uint8_t {
  kNoTakeover, kWaitedWhileFree, kStuck, kOrphanedLock, kLeakedPermits, kOrphanedLatch,
  kUnobtainable
};

// A stretch during which nobody believed it held a lock while others kept trying to take it.
struct Unobtainable {
  int lock = kNone;
  int64_t free_from_us = 0;  // Nobody believed it held the lock from here
  int64_t free_to_us = 0;    // to here (the next belief, or the run's end).
  bool to_run_end = false;
  int trier = kNone;         // The acquisition trying first.
  int64_t try_us = 0;
  int64_t deadline_us = 0;   // try_us + the longest lease + B, not counting excused time.
  int64_t excused_us = 0;    // Time before the deadline with fewer than a majority of nodes up.
  int64_t lease_us = 0;
  int nodes = 0;
  int majority = 0;
};

// A stretch during which a node kept something taken -- a lock key with owner fields, semaphore
// permits, a latch count -- that no thread believing it held the lock accounted for.
struct OrphanSpan {
  int lock = kNone;
  int node = kNone;          // The node whose key it is (synchronizers: of the latest count).
  Seq from_seq = 0;          // The event that made it an orphan.
  int64_t from_us = 0;
  Seq to_seq = kOpenSeq;     // The event that ended it; kOpenSeq: it lasted to the run's end.
  int64_t to_us = 0;
  int64_t allowed_us = 0;    // How long it may last: the longest lease plus B, or B.
  int64_t lease_us = 0;      // Locks: the longest lease in allowed_us.
  int64_t impaired_us = 0;   // Time within it the node was down, paused, cut off or deaf.
  std::string fields;        // Locks: the owner fields the key listed when it began.
  std::vector<int> owners;   // Locks: their threads, where the history knows them.
  int64_t units = 0;         // Synchronizers: the most permits leaked / count left over.
  int64_t count = 0;         // Synchronizers: the node's count when it began.
  int64_t held = 0;          // Synchronizers: what believers held when it began.
  bool by_role = false;      // Latches with roles: no counting-down process could go on.
};

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
    CheckOrphans();
    CheckUnobtainable();
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
    // Semaphore permits and latch passes have no lease to run out; (d) judges what a crash
    // leaves behind there.
    if (f_.protocol.ownerless()) return;
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
    if (f_.protocol.ownerless()) return;  // A semaphore's key exists when permits are free.
    BuildFreeSpans();
    if (f_.protocol.quorum > 0) return CheckQuorumWaits();
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
      if (le.kind == LeaseKind::kAcquired || le.kind == LeaseKind::kOwners) {
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

  // RedLock/MultiLock: the lock is free when it is free (and the node neither down, paused,
  // partitioned nor losing replies) on at least a quorum of its nodes; nodes without lease
  // events for it count as free. An acquire waiting through such a stretch longer than B (not
  // counting its client's impairments) is a violation; one per acquire.
  void CheckQuorumWaits() {
    const int quorum = f_.protocol.quorum;
    std::vector<std::vector<FreeSpan>> quorum_free(f_.locks.size());
    for (size_t l = 0; l < f_.locks.size(); ++l) {
      std::vector<std::pair<int64_t, int>> deltas;  // (t, -1 | +1)
      int seen = 0;
      for (size_t p = 0; p < f_.processes.size(); ++p) {
        const uint64_t key = Key(static_cast<int>(p), static_cast<int>(l));
        if (!seen_.count(key)) continue;
        ++seen;
        const auto it = free_.find(key);
        if (it == free_.end()) continue;
        const std::vector<ImpairedSpan>& cuts = f_.processes[p].impaired_merged;
        for (const FreeSpan& span : it->second) {
          int64_t from = span.from_us;
          for (const ImpairedSpan& cut : cuts) {
            if (cut.to_us <= from || cut.from_us >= span.to_us) continue;
            if (cut.from_us > from) {
              deltas.emplace_back(from, +1);
              deltas.emplace_back(cut.from_us, -1);
            }
            from = std::max(from, cut.to_us);
          }
          if (span.to_us > from) {
            deltas.emplace_back(from, +1);
            deltas.emplace_back(span.to_us, -1);
          }
        }
      }
      std::sort(deltas.begin(), deltas.end());  // At equal times ends (-1) come first.
      int free_nodes = std::max(0, f_.protocol.nodes - seen);
      int64_t since = free_nodes >= quorum ? 0 : -1;
      for (const auto& [t, d] : deltas) {
        free_nodes += d;
        if (since < 0 && free_nodes >= quorum) {
          since = t;
        } else if (since >= 0 && free_nodes < quorum) {
          if (t > since) quorum_free[l].push_back(FreeSpan{since, t, kNone});
          since = -1;
        }
      }
      if (since >= 0 && f_.run_end_us > since) {
        quorum_free[l].push_back(FreeSpan{since, f_.run_end_us, kNone});
      }
    }
    for (size_t i = 0; i < f_.ops.size(); ++i) {
      const Op& op = f_.ops[i];
      if (op.kind != OpKind::kAcquire || op.end_us - op.invoke_us <= bound_us_) continue;
      for (const FreeSpan& span : quorum_free[op.lock]) {
        const int64_t a = std::max(op.invoke_us, span.from_us);
        const int64_t b = std::min(op.end_us, span.to_us);
        if (b - a <= bound_us_) continue;
        const auto stretch = LongestUnimpaired(a, b, {f_.threads[op.thread].process,
                                                      f_.sim_process});
        if (stretch.second - stretch.first > bound_us_) {
          found_.Add({.from_us = stretch.first, .to_us = stretch.second, .order = op.invoke_seq,
                      .kind = kWaitedWhileFree, .a = static_cast<int>(i), .b = kNone,
                      .c = kNone});
          break;
        }
      }
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
      case kStuck: return ExplainStuck(x);
      case kUnobtainable: return ExplainUnobtainable(x);
      default: return ExplainOrphan(x);
    }
  }

  // (d) Orphans: the node keeps something taken that no thread believing it holds the lock
  // accounts for (see checkers.h).
  void CheckOrphans() {
    if (f_.protocol.semaphore() || f_.protocol.latch()) return CheckSynchronizerOrphans();
    CheckOrphanedLocks();
  }

  // The longest a key may outlive its holders' beliefs: the longest lease any acquisition of
  // the lock asked for (the watchdog's without an explicit one), times the most holds a thread
  // stacked (a write lock's reentry adds its lease to the TTL).
  int64_t LongestLeaseUs(int lock) const {
    int64_t lease_us = 0;
    for (int id : f_.locks[lock].acquires) {
      const Op& op = f_.ops[id];
      lease_us = std::max(lease_us, op.lease_us >= 0 ? op.lease_us : f_.lease_default_us);
    }
    if (lease_us == 0) lease_us = f_.lease_default_us;
    int holds = 1;
    for (const Op& op : f_.ops) {
      if (op.lock == lock && op.kind == OpKind::kRelease) holds = std::max(holds, op.count_before);
    }
    return lease_us > kForever / holds ? kForever : lease_us * holds;
  }

  // Time in [from_us, to_us] during which `process` was impaired.
  int64_t ImpairedWithin(int process, int64_t from_us, int64_t to_us) const {
    int64_t total = 0;
    for (const ImpairedSpan& s : f_.processes[process].impaired_merged) {
      if (s.from_us >= to_us) break;
      total += std::max<int64_t>(0, std::min(to_us, s.to_us) - std::max(from_us, s.from_us));
    }
    return total;
  }

  // Records the orphan if it lasted longer than allowed while its node was unimpaired.
  void JudgeOrphan(OrphanSpan span, LivenessKind kind) {
    assert(span.to_us >= span.from_us && span.allowed_us >= 0);
    span.impaired_us = span.node == kNone ? 0 : ImpairedWithin(span.node, span.from_us, span.to_us);
    const int64_t lasted_us = span.to_us - span.from_us - span.impaired_us;
    if (lasted_us <= span.allowed_us) return;
    found_.Add({.from_us = span.from_us, .to_us = span.to_us, .order = span.from_seq,
                .kind = kind, .a = static_cast<int>(orphans_.size()), .b = kNone, .c = kNone});
    orphans_.push_back(std::move(span));
  }

  // Locks with owners: a key listing owner fields, none of them a thread's that believes it
  // holds the lock, for longer than the longest lease plus B.
  void CheckOrphanedLocks() {
    struct Point {
      Seq seq;
      int lease;   // A lease event, or kNone
      int thread;  // with a belief starting (+1) or ending (-1),
      int delta;
      int promoted = kNone;  // or a replica promoted to master.
    };
    struct Key {
      bool present = false;
      bool listed = false;
      std::vector<int> owners;
      std::string fields;
      bool orphan = false;
      OrphanSpan span;
    };
    std::vector<int> believing(f_.threads.size(), 0);
    for (size_t l = 0; l < f_.locks.size(); ++l) {
      const LockFacts& lock = f_.locks[l];
      if (lock.lease_events.empty()) continue;
      const int64_t lease_us = LongestLeaseUs(static_cast<int>(l));
      const int64_t allowed_us = lease_us > kForever - bound_us_ ? kForever : lease_us + bound_us_;
      std::vector<Point> points;
      for (int id : lock.lease_events) points.push_back({f_.lease_events[id].seq, id, kNone, 0});
      for (int b : lock.beliefs) {
        const Span& s = f_.beliefs[b];
        points.push_back({s.start_seq, kNone, s.thread, +1});
        if (s.end_seq != kOpenSeq) points.push_back({s.end_seq, kNone, s.thread, -1});
      }
      // A promoted replica carries on the old master's lease view (the simulator records its
      // lease events from the old master's owners), and the old master stops being judged.
      // Which master a promotion replaced the history does not say; with one master it is any
      // other node, with several (RedLock with replicas) nothing is dropped.
      if (f_.protocol.nodes <= 1) {
        for (size_t i = 0; i < f_.faults.size(); ++i) {
          if (f_.event(f_.faults[i]).op != "promote") continue;
          points.push_back({f_.faults[i], kNone, kNone, 0, f_.fault_process[i]});
        }
      }
      std::stable_sort(points.begin(), points.end(),
                       [](const Point& a, const Point& b) { return a.seq < b.seq; });
      std::fill(believing.begin(), believing.end(), 0);
      std::map<int, Key> keys;  // By node; ordered, so that findings come out the same way.
      auto settle = [&](Seq seq, int64_t t_us) {
        for (auto& [node, key] : keys) {
          const bool orphan = key.present && key.listed &&
                              std::none_of(key.owners.begin(), key.owners.end(),
                                           [&](int t) { return believing[t] > 0; });
          if (orphan && !key.orphan) {
            key.span = OrphanSpan{};
            key.span.lock = static_cast<int>(l);
            key.span.node = node;
            key.span.from_seq = seq;
            key.span.from_us = t_us;
            key.span.allowed_us = allowed_us;
            key.span.lease_us = lease_us;
            key.span.fields = key.fields;
            key.span.owners = key.owners;
          } else if (!orphan && key.orphan) {
            key.span.to_seq = seq;
            key.span.to_us = t_us;
            JudgeOrphan(std::move(key.span), kOrphanedLock);
          }
          key.orphan = orphan;
        }
      };
      for (size_t i = 0; i < points.size(); ++i) {
        const Point& p = points[i];
        if (p.lease != kNone) {
          const LeaseEvent& le = f_.lease_events[p.lease];
          Key& key = keys[le.node];
          key.present = le.kind == LeaseKind::kAcquired || le.kind == LeaseKind::kOwners;
          key.listed = key.present && le.owners_listed;
          key.owners = key.present ? le.owners : std::vector<int>{};
          key.fields = key.present ? f_.event(le.seq).detail : "";
        } else if (p.promoted != kNone) {
          for (auto& [node, key] : keys) {
            if (node != p.promoted) key.present = false;
          }
        } else {
          believing[p.thread] += p.delta;
          assert(believing[p.thread] >= 0);
        }
        if (i + 1 == points.size() || points[i + 1].seq != p.seq) {
          settle(p.seq, f_.event(p.seq).t_us);
        }
      }
      for (auto& [node, key] : keys) {
        if (!key.orphan) continue;
        key.span.to_us = f_.run_end_us;
        JudgeOrphan(std::move(key.span), kOrphanedLock);
      }
    }
  }

  // The count a semaphore's or latch's lease event records (the key's value), if it is one.
  std::optional<int64_t> CountOf(const LeaseEvent& le) const {
    if (le.kind != LeaseKind::kAcquired && le.kind != LeaseKind::kOwners) return 0;  // No key.
    return ParseInt(Trim(f_.event(le.seq).detail));
  }

  // Semaphores: permits taken on the node (P minus its count) beyond those that threads
  // believing they hold permits hold, for longer than B. Latches: a count above the count-downs
  // that threads which passed the latch can still make, from the crash of such a thread, for
  // longer than B. Latches whose clients have roles: a count above what worker threads that
  // passed it still owe while no counting-down process can go on (every one crashed, or its
  // threads did their ops_per_thread), for longer than B; awaiting threads owe nothing.
  void CheckSynchronizerOrphans() {
    const bool semaphore = f_.protocol.semaphore();
    const bool roles = !semaphore && f_.roles;
    struct Point {
      Seq seq;
      int lease = kNone;
      int op = kNone;     // An acquire ok (takes) or a release invoke (gives back).
      int crash = kNone;
      int counter = kNone;  // A counting-down process restarted (restart) or a thread of it
      bool restart = false;  // stopped (a done note).
    };
    // Counting-down processes: up, and how many of their threads have stopped.
    struct Counter {
      bool up = true;
      int done = 0;
    };
    std::map<int, Counter> counters;
    std::vector<Point> points;
    if (roles) {
      for (size_t p = 0; p < f_.processes.size(); ++p) {
        if (f_.processes[p].role == Role::kCountDown) counters[static_cast<int>(p)] = Counter{};
      }
      for (size_t i = 0; i < f_.faults.size(); ++i) {
        if (f_.event(f_.faults[i]).op == "restart" && counters.contains(f_.fault_process[i])) {
          points.push_back({f_.faults[i], kNone, kNone, kNone, f_.fault_process[i], true});
        }
      }
      for (const auto& [seq, process] : f_.done_notes) {
        points.push_back({seq, kNone, kNone, kNone, process, false});
      }
    }
    // Whether some counting-down process can still count the latch down.
    auto counter_left = [&] {
      return std::any_of(counters.begin(), counters.end(), [&](const auto& c) {
        return c.second.up && c.second.done < f_.processes[c.first].role_threads;
      });
    };
    for (size_t i = 0; i < f_.lease_events.size(); ++i) {
      points.push_back({f_.lease_events[i].seq, static_cast<int>(i), kNone, kNone});
    }
    for (size_t i = 0; i < f_.ops.size(); ++i) {
      const Op& op = f_.ops[i];
      if (op.kind == OpKind::kAcquire && op.outcome == Outcome::kOk) {
        // An awaiting thread's pass owes no count-down.
        if (roles && f_.processes[f_.threads[op.thread].process].role != Role::kWorker) continue;
        points.push_back({op.end_seq, kNone, static_cast<int>(i), kNone});
      } else if (op.kind == OpKind::kRelease) {
        points.push_back({op.invoke_seq, kNone, static_cast<int>(i), kNone});
      }
    }
    for (size_t c = 0; c < f_.crashes.size(); ++c) {
      points.push_back({f_.crashes[c].seq, kNone, kNone, static_cast<int>(c)});
    }
    std::stable_sort(points.begin(), points.end(),
                     [](const Point& a, const Point& b) { return a.seq < b.seq; });
    struct State {
      int64_t count = -1;  // The node's count; -1 until the key first appears.
      int node = kNone;
      std::map<int, int64_t> held;  // Thread -> permits (latch: passes not yet counted down).
      int64_t held_total = 0;
      bool orphan = false;
      OrphanSpan span;
    };
    std::vector<State> states(f_.locks.size());
    const LivenessKind kind = semaphore ? kLeakedPermits : kOrphanedLatch;
    for (size_t i = 0; i < points.size(); ++i) {
      const Point& p = points[i];
      std::vector<int> touched;
      std::vector<std::vector<int>> crashed(p.crash != kNone ? f_.locks.size() : 0);
      if (p.counter != kNone) {
        Counter& c = counters[p.counter];
        if (p.restart) {
          c = Counter{};  // A new incarnation, its threads counting down again.
        } else {
          ++c.done;
        }
        for (size_t l = 0; l < states.size(); ++l) touched.push_back(static_cast<int>(l));
      } else if (p.lease != kNone) {
        const LeaseEvent& le = f_.lease_events[p.lease];
        if (const auto count = CountOf(le)) {
          State& st = states[le.lock];
          st.count = *count;
          st.node = le.node;
          touched.push_back(le.lock);
        }
      } else if (p.op != kNone) {
        const Op& op = f_.ops[p.op];
        State& st = states[op.lock];
        int64_t& mine = st.held[op.thread];
        const int64_t delta = op.kind == OpKind::kAcquire ? op.permits : -std::min(op.permits, mine);
        mine += delta;
        st.held_total += delta;
        if (mine == 0) st.held.erase(op.thread);
        touched.push_back(op.lock);
      } else {
        const int process = f_.crashes[p.crash].process;
        if (auto c = counters.find(process); c != counters.end()) c->second.up = false;
        for (size_t l = 0; l < states.size(); ++l) {
          State& st = states[l];
          for (auto it = st.held.begin(); it != st.held.end();) {
            if (f_.threads[it->first].process != process) {
              ++it;
              continue;
            }
            st.held_total -= it->second;
            crashed[l].push_back(it->first);
            it = st.held.erase(it);
          }
          touched.push_back(static_cast<int>(l));
        }
      }
      const Event& e = f_.event(p.seq);
      for (int l : touched) {
        State& st = states[l];
        const int64_t excess = st.count < 0 ? 0
                               : semaphore  ? f_.protocol.permits - st.count - st.held_total
                                            : st.count - st.held_total;
        // Without roles, a latch count nobody has begun to count down waits for counters the
        // history cannot see; only a crash of a thread that would have counted it down orphans
        // it. With roles the history names the counters.
        const bool crashed_here = p.crash != kNone && !crashed[l].empty();
        const bool orphan =
            excess > 0 && (roles ? !counter_left() : semaphore || st.orphan || crashed_here);
        if (orphan && !st.orphan) {
          st.span = OrphanSpan{};
          st.span.lock = l;
          st.span.node = st.node;
          st.span.from_seq = p.seq;
          st.span.from_us = e.t_us;
          st.span.allowed_us = bound_us_;
          st.span.count = st.count;
          st.span.held = st.held_total;
          st.span.by_role = roles;
          if (crashed_here) st.span.owners = crashed[l];
        } else if (!orphan && st.orphan) {
          st.span.to_seq = p.seq;
          st.span.to_us = e.t_us;
          JudgeOrphan(std::move(st.span), kind);
        }
        if (orphan) st.span.units = std::max(st.span.units, excess);
        st.orphan = orphan;
      }
    }
    for (State& st : states) {
      if (!st.orphan) continue;
      st.span.to_us = f_.run_end_us;
      JudgeOrphan(std::move(st.span), kind);
    }
  }

  // Acquisitions of `lock` invoked in [from_us, to_us] that did not succeed.
  size_t Denied(int lock, int64_t from_us, int64_t to_us) const {
    size_t n = 0;
    for (int id : f_.locks[lock].acquires) {
      const Op& op = f_.ops[id];
      if (op.invoke_us > to_us) break;
      if (op.invoke_us >= from_us && op.outcome != Outcome::kOk) ++n;
    }
    return n;
  }

  // What one owner of an orphaned key was doing: why it did not believe it held the lock.
  // *context_us: moved back to the invoke of the acquisition it tells of.
  std::string OwnerStory(int thread, const OrphanSpan& span, std::vector<Seq>* events,
                         int64_t* context_us) const {
    const std::string& who = n_.Thread(thread);
    // Its latest acquisition of the lock invoked before the orphan began.
    const std::vector<int>& acquires = f_.locks[span.lock].acquires;
    int last = kNone;
    for (int id : acquires) {
      if (f_.ops[id].invoke_seq > span.from_seq) break;
      if (f_.ops[id].thread == thread) last = id;
    }
    if (last == kNone) return who + " never acquired it before then";
    const Op& op = f_.ops[last];
    *context_us = std::min(*context_us, op.invoke_us);
    events->push_back(op.invoke_seq);
    if (op.end_seq != kOpenSeq) events->push_back(op.end_seq);
    if (op.outcome == Outcome::kOk) {
      const auto b = std::find_if(f_.beliefs.begin(), f_.beliefs.end(),
                                  [&](const Span& s) { return s.op == last; });
      if (b != f_.beliefs.end()) {
        return who + " had acquired it at " + Seconds(b->start_us) + " and believed it held it " +
               n_.Until(*b);
      }
      return who + "'s acquire of it succeeded at " + Seconds(op.end_us);
    }
    const std::string invoked = who + "'s acquire invoked at " + Seconds(op.invoke_us);
    switch (op.outcome) {
      case Outcome::kInfo:
        return invoked + " ended with an unknown outcome at " + Seconds(op.end_us) + " (" +
               f_.event(op.end_seq).detail + "), so it never believed it held the lock";
      case Outcome::kFail:
        return invoked + " failed at " + Seconds(op.end_us) + ", so it never believed it held it";
      case Outcome::kCrashed: return invoked + " was cut short by its process's crash at " + Seconds(op.end_us);
      default: return invoked + " was still in flight";
    }
  }

  Violation ExplainOrphan(const Finding& x) const {
    const OrphanSpan& span = orphans_[x.a];
    Violation v;
    v.events = {span.from_seq};
    if (span.to_seq != kOpenSeq) v.events.push_back(span.to_seq);
    const std::string lasted = "from " + Seconds(span.from_us) +
                               (span.to_seq == kOpenSeq ? " until the run ended at "
                                                        : " to ") +
                               Seconds(span.to_us) + " (" + Seconds(span.to_us - span.from_us) +
                               (span.impaired_us > 0 ? ", " + Seconds(span.impaired_us) +
                                                           " of it with the node impaired, not counted"
                                                     : "") +
                               ")";
    const std::string where = span.node == kNone ? "" : " on " + n_.ProcessName(span.node);
    const size_t denied = Denied(span.lock, span.from_us, span.to_us);
    const std::string starved =
        denied == 0 ? ""
                    : " Meanwhile " + Count(denied, "acquisition") + " of it " +
                          (denied == 1 ? "was" : "were") + " refused or left waiting.";
    std::vector<int> clients;
    int64_t context_us = span.from_us;  // Faults from here on are named.
    if (x.kind == kOrphanedLock) {
      v.kind = "orphaned_lock";
      std::string stories;
      for (int t : span.owners) {
        v.threads.push_back(n_.Thread(t));
        clients.push_back(n_.ProcessOfThread(t));
        stories += (stories.empty() ? "" : "; ") + OwnerStory(t, span, &v.events, &context_us);
      }
      v.explanation = "The key of " + n_.Lock(span.lock) + where + " was held by " +
                      Quoted(span.fields) + " " + lasted + ", but nobody who believed it held " +
                      "the lock was among its owners: ";
      v.explanation += stories.empty() ? "the fields belong to no client running then (a crashed "
                                         "or restarted incarnation)"
                                       : stories;
      v.explanation += ". That is longer than the longest lease any acquisition asked for (" +
                       Seconds(span.lease_us) + ") plus the liveness bound (" +
                       Seconds(bound_us_) + "): an orphaned lock, which nobody else can take " +
                       "until its key goes" +
                       (span.to_seq == kOpenSeq ? ", and it had not gone when the run ended."
                                                : ".");
    } else if (x.kind == kLeakedPermits) {
      v.kind = "leaked_permits";
      v.explanation = Count(static_cast<size_t>(span.units), "permit") + " of " +
                      n_.Lock(span.lock) + " (" + Count(f_.protocol.permits, "permit") +
                      " in all) " + (span.units == 1 ? "was" : "were") + " taken" + where +
                      " but held by no thread that believed it held one, " + lasted +
                      ", longer than the liveness bound (" + Seconds(bound_us_) +
                      "). A semaphore's permits have no lease: one taken by a process that " +
                      "crashed, or by an acquire whose reply was lost, never comes back.";
    } else if (span.by_role) {
      v.kind = "orphaned_latch";
      v.explanation = "The count of latch " + n_.Lock(span.lock) + where + " stayed at " +
                      std::to_string(span.count) + " " + lasted +
                      ", longer than the liveness bound (" + Seconds(bound_us_) +
                      "), while no count_down client could count it down any more" +
                      (span.held > 0 ? " and worker threads that had passed it owed only " +
                                           Count(static_cast<size_t>(span.held), "count-down")
                                     : std::string()) +
                      ": the latch can never open.";
    } else {
      v.kind = "orphaned_latch";
      v.explanation = "The count of latch " + n_.Lock(span.lock) + where + " stayed at " +
                      std::to_string(span.count) + ", above the " +
                      std::to_string(span.held) + " count-down" + (span.held == 1 ? "" : "s") +
                      " still owed by threads that had passed it, " + lasted +
                      ", longer than the liveness bound (" + Seconds(bound_us_) +
                      "): a thread that would have counted it down crashed first, so the " +
                      "latch can never open.";
    }
    if (x.kind != kOrphanedLock) {
      // What began it: a crash of holders, a release, or the node's count changing.
      const Event& from = f_.event(span.from_seq);
      if (span.by_role && span.owners.empty()) {
        std::string counters;
        size_t n_counters = 0;
        for (const Process& p : f_.processes) {
          if (p.role != Role::kCountDown) continue;
          ++n_counters;
          counters += (counters.empty() ? "" : ", ") + p.name;
        }
        const std::string their = n_counters == 0 ? "The run has no count_down client"
                                                  : "Its count_down clients: " + counters;
        if (from.type == Event::Type::kFault && from.op == "crash") {
          v.threads.push_back(from.process);
          v.explanation += " It began when " + from.process + ", the last count_down client " +
                           "still counting, crashed at " + Seconds(from.t_us) +
                           "; nobody counts down for a crashed client.";
        } else if (from.type == Event::Type::kNote && from.op == "done") {
          v.threads.push_back(from.process + ".t" + std::to_string(from.thread));
          v.explanation += " It began when " + from.process + ".t" + std::to_string(from.thread) +
                           ", the last thread still counting down, stopped at " +
                           Seconds(from.t_us) + " (" + from.detail + ").";
        } else {
          v.explanation += " It began at " + Seconds(from.t_us) + ", when " + from.process +
                           "'s count became " + (from.detail.empty() ? "0" : from.detail) + ".";
        }
        v.explanation += " " + their + ".";
      } else if (!span.owners.empty()) {
        std::string holders;
        for (int t : span.owners) {
          v.threads.push_back(n_.Thread(t));
          holders += (holders.empty() ? "" : " and ") + n_.Thread(t);
        }
        clients.push_back(n_.ProcessOfThread(span.owners.front()));
        v.explanation += " It began when " + from.process + " crashed at " + Seconds(from.t_us) +
                         " while " + holders +
                         (x.kind == kLeakedPermits
                              ? " held permits; nothing gives them back."
                              : " had passed the latch and not yet counted down; nobody counts "
                                "down for a crashed client.");
      } else if (from.type == Event::Type::kLease) {
        v.explanation += " It began at " + Seconds(from.t_us) + ", when " + from.process +
                         "'s count became " + (from.detail.empty() ? "0" : from.detail) +
                         " without a successful acquisition taking the permits.";
      } else if (from.type == Event::Type::kInvoke && from.thread >= 0) {
        v.explanation += " It began when " + from.process + ".t" + std::to_string(from.thread) +
                         " began to release at " + Seconds(from.t_us) +
                         " and the node's count did not go back up.";
      }
    }
    v.explanation += starved;
    // The waiters it kept out, after the threads behind it.
    for (int id : f_.locks[span.lock].acquires) {
      const Op& op = f_.ops[id];
      if (op.invoke_us > span.to_us || v.threads.size() >= kMaxOrphanThreadsNamed) break;
      // Latch awaiters that were already waiting when the last counter went are kept out too.
      const bool waiting_then = span.by_role && op.end_us >= span.from_us;
      if ((op.invoke_us < span.from_us && !waiting_then) || op.outcome == Outcome::kOk) continue;
      const std::string& name = n_.Thread(op.thread);
      if (std::find(v.threads.begin(), v.threads.end(), name) != v.threads.end()) continue;
      v.threads.push_back(name);
      v.events.push_back(op.invoke_seq);
      clients.push_back(n_.ProcessOfThread(op.thread));
    }
    if (v.threads.empty()) {
      v.threads.push_back(n_.ProcessName(span.node == kNone ? f_.sim_process : span.node));
    }
    std::sort(clients.begin(), clients.end());
    clients.erase(std::unique(clients.begin(), clients.end()), clients.end());
    v.explanation += n_.Faults(context_us, span.to_us, span.from_us, clients, &v.events);
    return v;
  }

  // (e) Unobtainable: from the moment someone tries to take a lock that nobody believes it
  // holds, some acquisition must succeed within the longest lease plus B, not counting time
  // when fewer than a majority of the lock's nodes are up (or the whole system is cut off).
  void CheckUnobtainable() {
    if (f_.protocol.ownerless()) return;
    const int n = std::max(1, f_.protocol.nodes);
    const int majority = MajorityOf(n);
    for (size_t l = 0; l < f_.locks.size(); ++l) {
      const LockFacts& lock = f_.locks[l];
      if (lock.acquires.empty() || lock.lease_events.empty()) continue;
      std::vector<int> nodes;
      for (int id : lock.lease_events) nodes.push_back(f_.lease_events[id].node);
      std::sort(nodes.begin(), nodes.end());
      nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
      const std::vector<ImpairedSpan> excused = ExcusedSpans(nodes, majority);
      // Acquisitions in invoke order, with the latest end among those invoked so far.
      std::vector<int64_t> max_end_us;
      std::vector<int> max_end_op;
      for (int op : lock.acquires) {
        const bool later = max_end_us.empty() || f_.ops[op].end_us > max_end_us.back();
        max_end_us.push_back(later ? f_.ops[op].end_us : max_end_us.back());
        max_end_op.push_back(later ? op : max_end_op.back());
      }
      // The first acquisition in flight at t_us or invoked in (t_us, until_us), and when.
      auto trying = [&](int64_t t_us, int64_t until_us) -> std::pair<int, int64_t> {
        const size_t k = std::upper_bound(lock.acquires.begin(), lock.acquires.end(), t_us,
                                          [&](int64_t t, int op) { return t < f_.ops[op].invoke_us; }) -
                         lock.acquires.begin();
        if (k > 0 && max_end_us[k - 1] > t_us) return {max_end_op[k - 1], t_us};
        if (k < lock.acquires.size() && f_.ops[lock.acquires[k]].invoke_us < until_us) {
          return {lock.acquires[k], f_.ops[lock.acquires[k]].invoke_us};
        }
        return {kNone, 0};
      };
      const int64_t lease_us = LongestLeaseUs(static_cast<int>(l));
      const int64_t allowed_us = lease_us > kForever - bound_us_ ? kForever : lease_us + bound_us_;
      auto judge = [&](int64_t from_us, int64_t to_us, bool to_run_end) {
        if (to_us <= from_us) return;
        const auto [trier, try_us] = trying(from_us, to_us);
        if (trier == kNone) return;
        int64_t excused_us = 0;
        const int64_t deadline_us = Deadline(excused, try_us, allowed_us, &excused_us);
        if (deadline_us >= to_us) return;
        if (trying(deadline_us, to_us).first == kNone) return;  // Nobody tried any more.
        if (Explained(static_cast<int>(l), try_us, to_us)) return;
        found_.Add({.from_us = try_us, .to_us = to_us, .order = f_.ops[trier].invoke_seq,
                    .kind = kUnobtainable, .a = static_cast<int>(unobtainable_.size()),
                    .b = kNone, .c = kNone});
        unobtainable_.push_back({.lock = static_cast<int>(l), .free_from_us = from_us,
                                 .free_to_us = to_us, .to_run_end = to_run_end, .trier = trier,
                                 .try_us = try_us, .deadline_us = deadline_us,
                                 .excused_us = excused_us, .lease_us = lease_us,
                                 .nodes = n, .majority = majority});
      };
      // The gaps between the union of the lock's beliefs (in start order).
      int64_t free_from_us = 0;
      for (int b : lock.beliefs) {
        const Span& s = f_.beliefs[b];
        if (s.start_us > free_from_us) judge(free_from_us, s.start_us, false);
        free_from_us = std::max(free_from_us, s.end_us);
      }
      judge(free_from_us, f_.run_end_us, true);
    }
  }

  // True if a crashed hold (a) or an orphaned key (d) already reported on `lock` overlaps
  // [from_us, to_us]: they say more precisely why nobody could take the lock.
  bool Explained(int lock, int64_t from_us, int64_t to_us) const {
    for (const CrashedHold& hold : crashed_) {
      const int64_t end_us = hold.first_ok == kNone ? f_.run_end_us : f_.ops[hold.first_ok].end_us;
      if (hold.lock == lock && f_.crashes[hold.crash].t_us < to_us && end_us > from_us) return true;
    }
    for (const OrphanSpan& orphan : orphans_) {
      if (orphan.lock == lock && orphan.from_us < to_us && orphan.to_us > from_us) return true;
    }
    return false;
  }

  // Stretches when fewer than `majority` of `nodes` were unimpaired, or "sim" cut everyone off;
  // disjoint and sorted.
  std::vector<ImpairedSpan> ExcusedSpans(const std::vector<int>& nodes, int majority) const {
    std::vector<std::pair<int64_t, int>> deltas;  // (t, +1 impaired | -1 recovered)
    for (int node : nodes) {
      for (const ImpairedSpan& s : f_.processes[node].impaired_merged) {
        deltas.emplace_back(s.from_us, +1);
        deltas.emplace_back(s.to_us, -1);
      }
    }
    std::sort(deltas.begin(), deltas.end());
    std::vector<ImpairedSpan> spans = f_.processes[f_.sim_process].impaired_merged;
    int impaired = 0;
    int64_t since = -1;
    for (const auto& [t, d] : deltas) {
      impaired += d;
      const bool short_of_majority = static_cast<int>(nodes.size()) - impaired < majority;
      if (short_of_majority && since < 0) {
        since = t;
      } else if (!short_of_majority && since >= 0) {
        if (t > since) spans.push_back({since, t, kDown});
        since = -1;
      }
    }
    if (since >= 0) spans.push_back({since, kForever, kDown});
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
  static int64_t Deadline(const std::vector<ImpairedSpan>& excused, int64_t from_us,
                          int64_t allowed_us, int64_t* excused_us) {
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

  Violation ExplainUnobtainable(const Finding& x) const {
    const Unobtainable& u = unobtainable_[x.a];
    const Op& trier = f_.ops[u.trier];
    Violation v;
    v.kind = "unobtainable";
    v.threads = {n_.Thread(trier.thread)};
    v.events = {trier.invoke_seq};
    std::vector<int> clients = {n_.ProcessOfThread(trier.thread)};
    v.explanation = "Nobody held " + n_.Lock(u.lock) + " (no thread believed it held it) from " +
                    Seconds(u.free_from_us) +
                    (u.to_run_end ? " until the run ended at " : " to ") + Seconds(u.free_to_us) +
                    ". " + n_.Thread(trier.thread) + " was trying to acquire it from " +
                    Seconds(u.try_us);
    if (trier.outcome == Outcome::kOk) {
      v.events.push_back(trier.end_seq);
      v.explanation += "; that acquire succeeded only at " + Seconds(trier.end_us);
    } else if (trier.end_seq != kOpenSeq) {
      v.events.push_back(trier.end_seq);
      v.explanation += "; that acquire ended in " + std::string(OutcomeName(trier.outcome)) +
                       " at " + Seconds(trier.end_us);
    } else {
      v.explanation += "; that acquire was still waiting when the run ended";
    }
    size_t others = 0;  // Later acquisitions that did not succeed.
    for (int id : f_.locks[u.lock].acquires) {
      const Op& op = f_.ops[id];
      if (op.invoke_us >= u.free_to_us) break;
      if (op.invoke_us > u.try_us && id != u.trier && op.outcome != Outcome::kOk) ++others;
    }
    if (others > 0) {
      v.explanation += ", and " + Count(others, "later acquisition") + " did not succeed either";
    }
    v.explanation += ". No acquisition succeeded by " + Seconds(u.deadline_us) + ": " +
                     Seconds(u.try_us) + " + the longest lease any acquisition asked for (" +
                     Seconds(u.lease_us) + ") + the liveness bound (" + Seconds(bound_us_) + ")";
    if (u.excused_us > 0) {
      v.explanation += " + " + Seconds(u.excused_us) + " with fewer than " +
                       std::to_string(u.majority) + " of its " + std::to_string(u.nodes) +
                       " nodes up";
    }
    v.explanation += u.nodes == 1 ? ", while its node was up."
                                  : ", while at least " + std::to_string(u.majority) + " of its " +
                                        std::to_string(u.nodes) + " nodes were up.";
    if (f_.protocol.quorum > u.majority) {
      v.explanation += " " + f_.protocol.kind + " needs every one of its " +
                       std::to_string(f_.protocol.quorum) +
                       " nodes (it tolerates no failed member), so a node that is down or cut " +
                       "off makes the lock unobtainable although a majority is up.";
    }
    // The lock's nodes that were impaired meanwhile.
    std::vector<int> nodes;
    for (int id : f_.locks[u.lock].lease_events) nodes.push_back(f_.lease_events[id].node);
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    std::string impaired;
    for (int node : nodes) {
      for (const ImpairedSpan& s : f_.processes[node].impaired) {
        if (s.to_us <= u.try_us || s.from_us >= u.free_to_us) continue;
        impaired += (impaired.empty() ? "" : "; ") + n_.ProcessName(node) + " " +
                    ImpairmentName(s.kind) + " from " + Seconds(s.from_us) +
                    (s.to_us >= f_.run_end_us ? " to the end" : " to " + Seconds(s.to_us));
      }
    }
    if (!impaired.empty()) v.explanation += " Meanwhile: " + impaired + ".";
    // The waiters kept out.
    for (int id : f_.locks[u.lock].acquires) {
      const Op& op = f_.ops[id];
      if (op.invoke_us > u.free_to_us || v.threads.size() >= kMaxOrphanThreadsNamed) break;
      if (op.invoke_us < u.try_us || op.outcome == Outcome::kOk) continue;
      const std::string& name = n_.Thread(op.thread);
      if (std::find(v.threads.begin(), v.threads.end(), name) != v.threads.end()) continue;
      v.threads.push_back(name);
      clients.push_back(n_.ProcessOfThread(op.thread));
    }
    v.explanation += n_.Faults(u.free_from_us, u.free_to_us, u.try_us, clients, &v.events);
    return v;
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
    const std::string where =
        x.b != kNone ? n_.ProcessName(x.b)
                     : "at least " + std::to_string(f_.protocol.quorum) + " of its " +
                           std::to_string(f_.protocol.nodes) + " nodes (a quorum)";
    v.explanation = who + " was waiting to acquire " + n_.Lock(op.lock) + " (" +
                    f_.event(op.invoke_seq).detail + ", invoked at " + Seconds(op.invoke_us) +
                    ") while the lock was free on " + where + " from " +
                    Seconds(x.from_us) + " to " + Seconds(x.to_us) + ": " +
                    Seconds(x.to_us - x.from_us) + ", longer than the liveness bound of " +
                    Seconds(bound_us_) + ".";
    // (A quorum's free stretch has no single lease event behind it.)
    if (x.b != kNone && x.c != kNone) {
      const LeaseEvent& le = f_.lease_events[x.c];
      v.events.push_back(le.seq);
      const char* how = le.kind == LeaseKind::kExpired ? "expired"
                        : le.kind == LeaseKind::kLost  ? "was lost"
                                                       : "was released";
      v.explanation += " The lock " + std::string(how) + " there at " + Seconds(le.t_us) + ".";
    } else if (x.b != kNone) {
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
  std::vector<OrphanSpan> orphans_;    // The violating ones, addressed by Finding::a.
  std::vector<Unobtainable> unobtainable_;  // Likewise.
};

// ---------------------------------------------------------------------------------------------
// fairness

enum FairnessKind : uint8_t { kOutOfOrder, kBarged };
enum ExemptKind : uint8_t { kTimedOut, kUnknownOutcome, kCrashedWaiter, kPurged, kUnattributed };

const char* ExemptKindName(uint8_t kind) {
  switch (kind) {
    case kTimedOut: return "timed_out";
    case kUnknownOutcome: return "unknown_outcome";
    case kCrashedWaiter: return "crashed";
    case kPurged: return "purged";
    case kUnattributed: return "unattributed";
    default: return "?";
  }
}

class FairnessChecker {
 public:
  FairnessChecker(const Facts& f, const Narrator& n, const CheckOptions& o)
      : f_(f), n_(n), wait_us_(f.protocol.fair_wait_us), found_(o.max_violations),
        exempt_(o.max_violations), position_(f.ops.size(), 0) {}

  PropertyResult Run() {
    if (!f_.protocol.fair()) return NotApplicable(kFairness);
    for (const LockFacts& lock : f_.locks) CheckLock(lock);
    PropertyResult result =
        Conclude(kFairness, found_, [&](const Finding& x) { return Explain(x); });
    Observe(&result, exempt_, [&](const Finding& x) { return ExplainExempt(x); });
    return result;
  }

 private:
  // A first acquisition (not a reentry) of the exclusive lock.
  static bool Judged(const Op& op) {
    return op.kind == OpKind::kAcquire && !op.shared && op.count_before == 0;
  }

  void CheckLock(const LockFacts& lock) {
    std::vector<int> queued;  // Waiters (exempt or not), in queue order.
    std::vector<bool> exempt(f_.ops.size(), false);
    for (int id : lock.acquires) {
      const Op& op = f_.ops[id];
      if (!Judged(op)) continue;
      if (op.arrival_seq == kOpenSeq) {
        if (op.exec_ambiguous) Exempt(id, kUnattributed, op.invoke_us, &exempt);
        continue;
      }
      if (!op.queued) continue;
      queued.push_back(id);
      const int64_t queued_us = f_.event(op.arrival_seq).t_us;
      if (op.outcome == Outcome::kFail) Exempt(id, kTimedOut, queued_us, &exempt);
      else if (op.outcome == Outcome::kInfo) Exempt(id, kUnknownOutcome, queued_us, &exempt);
      else if (op.outcome == Outcome::kCrashed) Exempt(id, kCrashedWaiter, queued_us, &exempt);
      else if (op.end_us - queued_us > wait_us_) Exempt(id, kPurged, queued_us, &exempt);
    }
    std::sort(queued.begin(), queued.end(),
              [&](int a, int b) { return f_.ops[a].arrival_seq < f_.ops[b].arrival_seq; });
    // Queue positions: 1 + the waiters queued earlier and still waiting.
    std::multiset<Seq> waiting_ends;
    for (int id : queued) {
      const Seq at = f_.ops[id].arrival_seq;
      waiting_ends.erase(waiting_ends.begin(), waiting_ends.upper_bound(at));
      position_[id] = static_cast<int>(waiting_ends.size()) + 1;
      waiting_ends.insert(f_.ops[id].end_seq);
    }
    // Sweep: a non-exempt waiter joins the queue at its arrival and leaves at its grant. A grant
    // while a waiter that arrived earlier is still waiting is out of order.
    struct Step {
      Seq seq;
      bool grant;
      int op;
    };
    std::vector<Step> steps;
    for (int id : queued) {
      if (!exempt[id]) steps.push_back({f_.ops[id].arrival_seq, false, id});
    }
    for (int id : lock.acquired_ok) {
      const Op& op = f_.ops[id];
      if (Judged(op) && op.arrival_seq != kOpenSeq && !exempt[id]) {
        steps.push_back({op.end_seq, true, id});
      }
    }
    std::sort(steps.begin(), steps.end(),
              [](const Step& a, const Step& b) { return a.seq < b.seq; });
    std::set<std::pair<Seq, int>> waiting;  // (arrival, op)
    for (const Step& step : steps) {
      const Op& op = f_.ops[step.op];
      if (!step.grant) {
        waiting.emplace(op.arrival_seq, step.op);
        continue;
      }
      waiting.erase({op.arrival_seq, step.op});
      const auto ahead_end = waiting.lower_bound({op.arrival_seq, -1});
      if (ahead_end == waiting.begin()) continue;
      const int skipped = waiting.begin()->second;
      const int ahead = static_cast<int>(std::distance(waiting.begin(), ahead_end));
      found_.Add({.from_us = op.end_us, .to_us = std::max(op.end_us, f_.ops[skipped].end_us),
                  .order = op.end_seq,
                  .kind = static_cast<uint8_t>(op.queued ? kOutOfOrder : kBarged),
                  .a = step.op, .b = skipped, .c = ahead});
    }
  }

  void Exempt(int id, ExemptKind kind, int64_t from_us, std::vector<bool>* exempt) {
    (*exempt)[id] = true;
    const Op& op = f_.ops[id];
    exempt_.Add({.from_us = from_us, .to_us = std::max(from_us, op.end_us),
                 .order = op.invoke_seq, .kind = kind, .a = id, .b = kNone, .c = kNone});
  }

  // "queued at 3.001 s (position 1)" or "did not queue: its first attempt, at 4.500 s, was
  // granted at once".
  std::string Arrival(const Op& op) const {
    const int64_t at = f_.event(op.arrival_seq).t_us;
    if (op.queued) {
      return "queued at " + Seconds(at) + " (position " +
             std::to_string(position_[&op - f_.ops.data()]) + ")";
    }
    return "did not queue: its first attempt, at " + Seconds(at) + ", was granted at once";
  }

  Violation Explain(const Finding& x) const {
    const Op& granted = f_.ops[x.a];
    const Op& skipped = f_.ops[x.b];
    const std::string& g = n_.Thread(granted.thread);
    const std::string& w = n_.Thread(skipped.thread);
    Violation v;
    v.kind = x.kind == kOutOfOrder ? "out_of_order" : "barged";
    v.threads = {w, g};
    v.events = {skipped.arrival_seq, granted.arrival_seq, granted.end_seq};
    v.explanation = g + " was granted " + n_.Lock(granted.lock) + " at " +
                    Seconds(granted.end_us) + " ahead of " + w + ", which had queued before it: " +
                    w + " " + Arrival(skipped) + ", " + g + " " + Arrival(granted) + ". " + w;
    if (skipped.outcome == Outcome::kOk) {
      v.events.push_back(skipped.end_seq);
      v.explanation += " was granted only at " + Seconds(skipped.end_us) + ".";
    } else {
      v.explanation += " was still waiting when the run ended at " + Seconds(f_.run_end_us) + ".";
    }
    if (x.c > 1) {
      v.explanation += " " + Count(x.c - 1, "other waiter") + " that queued before " + g +
                       (x.c == 2 ? " was" : " were") + " passed over too.";
    }
    v.explanation += n_.Faults(f_.event(skipped.arrival_seq).t_us, granted.end_us, granted.end_us,
                               {n_.ProcessOfThread(skipped.thread),
                                n_.ProcessOfThread(granted.thread)},
                               &v.events);
    return v;
  }

  Observation ExplainExempt(const Finding& x) const {
    const Op& op = f_.ops[x.a];
    const std::string& who = n_.Thread(op.thread);
    Observation v;
    v.kind = ExemptKindName(x.kind);
    v.threads = {who};
    v.events = {op.invoke_seq};
    if (op.arrival_seq != kOpenSeq) v.events.push_back(op.arrival_seq);
    if (op.end_seq != kOpenSeq) v.events.push_back(op.end_seq);
    const std::string lock = n_.Lock(op.lock);
    const std::string queued =
        op.arrival_seq == kOpenSeq ? "" : who + " " + Arrival(op) + " for " + lock;
    switch (x.kind) {
      case kTimedOut:
        v.explanation = queued + " and its acquire failed at " + Seconds(op.end_us) + " (" +
                        f_.event(op.end_seq).detail + "): it left the queue.";
        break;
      case kUnknownOutcome:
        v.explanation = queued + " and its acquire ended with an unknown outcome at " +
                        Seconds(op.end_us) + ".";
        break;
      case kCrashedWaiter:
        v.explanation = queued + " and its process crashed at " + Seconds(op.end_us) + ".";
        break;
      case kPurged:
        v.explanation = queued + " and waited " +
                        Seconds(op.end_us - f_.event(op.arrival_seq).t_us) +
                        (op.outcome == Outcome::kOk ? " until it was granted"
                                                    : " until the run ended") +
                        ", longer than the fair wait timeout of " + Seconds(wait_us_) +
                        ": its queue entry may have been purged and queued again further back.";
        break;
      case kUnattributed:
        v.explanation = who + "'s acquire of " + lock + " (invoked at " + Seconds(op.invoke_us) +
                        ") ran while other threads of " + n_.ProcessName(n_.ProcessOfThread(op.thread)) +
                        " were acquiring it too, and the node's exec events name no thread: "
                        "whether and where it queued is unknown.";
        break;
    }
    v.explanation += " Its place in the order is not judged.";
    return v;
  }

  const Facts& f_;
  const Narrator& n_;
  const int64_t wait_us_;
  Findings found_;
  Findings exempt_;
  std::vector<int> position_;  // By op: queue position of a waiter, 0 otherwise.
};

// ---------------------------------------------------------------------------------------------
// fencing

enum FencingKind : uint8_t { kTokenNotIncreasing, kStaleWriteAccepted };

PropertyResult CheckFencing(const Facts& f, const Narrator& n, const CheckOptions& o) {
  bool tokens = f.protocol.kind == "fencedlock";
  bool writes = false;
  for (const LockFacts& lock : f.locks) {
    writes = writes || !lock.writes.empty();
    if (f.protocol.kind.empty()) {
      for (int id : lock.acquired_ok) tokens = tokens || f.ops[id].has_value;
    }
  }
  if (!tokens && !writes) return NotApplicable(kFencing);
  Findings found(o.max_violations);
  Findings rejected(o.max_violations);
  for (const LockFacts& lock : f.locks) {
    if (tokens) {
      int best = kNone;  // The acquisition with the highest token so far.
      for (int id : lock.acquired_ok) {
        const Op& op = f.ops[id];
        if (!op.has_value) continue;
        if (best != kNone && op.value <= f.ops[best].value) {
          found.Add({.from_us = f.ops[best].end_us, .to_us = op.end_us, .order = op.end_seq,
                     .kind = kTokenNotIncreasing, .a = id, .b = best, .c = kNone});
        }
        if (best == kNone || op.value > f.ops[best].value) best = id;
      }
    }
    Seq best = kOpenSeq;  // The accepted write with the highest token so far.
    for (Seq seq : lock.writes) {
      const Event& e = f.event(seq);
      if (!e.has_value) continue;
      const bool accepted = e.detail.starts_with("accepted");
      const int64_t from_us = best == kOpenSeq ? e.t_us : f.event(best).t_us;
      const int prior = best == kOpenSeq ? kNone : static_cast<int>(best);
      if (!accepted) {
        rejected.Add({.from_us = e.t_us, .to_us = e.t_us, .order = seq, .kind = 0,
                      .a = static_cast<int>(seq), .b = prior, .c = kNone});
        continue;
      }
      if (best != kOpenSeq && e.value < f.event(best).value) {
        found.Add({.from_us = from_us, .to_us = e.t_us, .order = seq,
                   .kind = kStaleWriteAccepted, .a = static_cast<int>(seq), .b = prior,
                   .c = kNone});
      }
      if (best == kOpenSeq || e.value > f.event(best).value) best = seq;
    }
  }
  auto who = [&](const Event& e) { return e.process + ".t" + std::to_string(e.thread); };
  auto clients = [&](const Event& a, const Event& b) {
    std::vector<int> out;
    for (const Event* e : {&a, &b}) {
      for (size_t p = 0; p < f.processes.size(); ++p) {
        if (f.processes[p].name == e->process) out.push_back(static_cast<int>(p));
      }
    }
    return out;
  };
  PropertyResult result = Conclude(kFencing, found, [&](const Finding& x) {
    Violation v;
    if (x.kind == kTokenNotIncreasing) {
      const Op& op = f.ops[x.a];
      const Op& prior = f.ops[x.b];
      v.kind = "token_not_increasing";
      v.threads = {n.Thread(prior.thread), n.Thread(op.thread)};
      v.events = {prior.end_seq, op.end_seq};
      v.explanation = n.Thread(op.thread) + " acquired " + n.Lock(op.lock) + " at " +
                      Seconds(op.end_us) + " with token " + std::to_string(op.value) +
                      ", not greater than token " + std::to_string(prior.value) + " that " +
                      n.Thread(prior.thread) + " got at " + Seconds(prior.end_us) +
                      ": tokens must strictly increase, or a fenced resource cannot tell the "
                      "stale holder from the current one.";
      v.explanation += n.Faults(prior.end_us, op.end_us, op.end_us,
                                {n.ProcessOfThread(prior.thread), n.ProcessOfThread(op.thread)},
                                &v.events);
    } else {
      const Event& e = f.event(static_cast<Seq>(x.a));
      const Event& prior = f.event(static_cast<Seq>(x.b));
      v.kind = "stale_write_accepted";
      v.threads = {who(prior), who(e)};
      v.events = {prior.seq, e.seq};
      v.explanation = "The resource of \"" + e.lock + "\" accepted " + who(e) + "'s write at " +
                      Seconds(e.t_us) + " with token " + std::to_string(e.value) +
                      " although it had accepted token " + std::to_string(prior.value) +
                      " from " + who(prior) + " at " + Seconds(prior.t_us) +
                      ": a fenced resource must reject the lower token.";
      v.explanation += n.Faults(prior.t_us, e.t_us, e.t_us, clients(prior, e), &v.events);
    }
    return v;
  });
  Observe(&result, rejected, [&](const Finding& x) {
    const Event& e = f.event(static_cast<Seq>(x.a));
    Observation v;
    v.kind = "rejected_write";
    v.threads = {who(e)};
    v.events = {e.seq};
    v.explanation = "The resource of \"" + e.lock + "\" rejected " + who(e) + "'s write at " +
                    Seconds(e.t_us) + " with token " + std::to_string(e.value) + " (" + e.detail +
                    ")";
    if (x.b != kNone) {
      const Event& prior = f.event(static_cast<Seq>(x.b));
      v.events.push_back(prior.seq);
      v.explanation += "; it had accepted token " + std::to_string(prior.value) + " from " +
                       who(prior) + " at " + Seconds(prior.t_us);
    }
    v.explanation += ". The fence kept a stale holder out.";
    return v;
  });
  return result;
}

// ---------------------------------------------------------------------------------------------
// rw_exclusion

PropertyResult CheckRwExclusion(const Facts& f, const Narrator& n, const CheckOptions& o) {
  const bool rw = f.protocol.kind == "rwlock" || (f.protocol.kind.empty() && f.has_read_ops);
  if (!rw) return NotApplicable(kRwExclusion);
  Findings found(o.max_violations);
  for (const LockFacts& lock : f.locks) {
    ForEachOverlap(f.beliefs, lock.beliefs, [&](int earlier, int later) {
      const Span& a = f.beliefs[earlier];
      const Span& b = f.beliefs[later];
      if (a.shared && b.shared) return;
      found.Add({.from_us = b.start_us, .to_us = std::min(a.end_us, b.end_us),
                 .order = b.start_seq, .kind = static_cast<uint8_t>(a.shared || b.shared ? 0 : 1),
                 .a = earlier, .b = later, .c = kNone});
    });
  }
  return Conclude(kRwExclusion, found, [&](const Finding& x) {
    const Span& a = f.beliefs[x.a];
    const Span& b = f.beliefs[x.b];
    Violation v;
    v.kind = x.kind == 0 ? "write_read" : "write_write";
    v.threads = {n.Thread(a.thread), n.Thread(b.thread)};
    v.events = {a.start_seq, b.start_seq};
    v.explanation = n.Thread(b.thread) + " acquired the " + n.Side(b) + " of " + n.Lock(b.lock) +
                    " at " + Seconds(b.start_us) + " while " + n.Thread(a.thread) +
                    " still believed it held the " + n.Side(a) + " (acquired at " +
                    Seconds(a.start_us) + ", believed " + n.Until(a) + "); only readers may " +
                    "hold the lock together.";
    v.explanation += n.Losses(a.thread, a.lock, a.start_seq, b.start_seq, &v.events);
    v.explanation += n.Faults(a.start_us, x.to_us, b.start_us,
                              {n.ProcessOfThread(a.thread), n.ProcessOfThread(b.thread)}, &v.events);
    return v;
  });
}

// ---------------------------------------------------------------------------------------------
// semaphore

PropertyResult CheckSemaphore(const Facts& f, const Narrator& n, const CheckOptions& o) {
  if (!f.protocol.semaphore()) return NotApplicable(kSemaphore);
  const int64_t permits = f.protocol.permits;
  // Steps in history order: an acquire ok takes permits, a release invoke gives the thread's
  // back, a crash ends all of its process's.
  struct Step {
    Seq seq;
    int op;     // kNone: a crash
    int crash;
  };
  std::vector<Step> steps;
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const Op& op = f.ops[i];
    if (op.kind == OpKind::kAcquire && op.outcome == Outcome::kOk) {
      steps.push_back({op.end_seq, static_cast<int>(i), kNone});
    } else if (op.kind == OpKind::kRelease) {
      steps.push_back({op.invoke_seq, static_cast<int>(i), kNone});
    }
  }
  for (size_t c = 0; c < f.crashes.size(); ++c) {
    steps.push_back({f.crashes[c].seq, kNone, static_cast<int>(c)});
  }
  std::sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.seq < b.seq; });

  struct Holder {
    int thread = kNone;
    int64_t permits = 0;
    Seq since_seq = 0;  // The ok that started its current holding.
    int64_t since_us = 0;
  };
  struct Over {
    int op = kNone;
    int64_t in_use = 0;
    int64_t to_us = 0;
    bool open = true;
    std::vector<Holder> holders;  // Kept for the first max_violations only.
    int unowned_release = kNone;  // The latest release by a thread holding no permit.
  };
  std::vector<Over> overs;
  std::vector<std::vector<Holder>> holders(f.locks.size());  // Per lock, in holding order.
  std::vector<int64_t> in_use(f.locks.size(), 0);
  std::vector<int> unowned(f.locks.size(), kNone);
  std::vector<std::vector<int>> open(f.locks.size());  // Indices into overs.
  auto settle = [&](int lock, int64_t t_us) {
    std::erase_if(open[lock], [&](int i) {
      if (in_use[lock] > permits) return false;
      overs[i].to_us = t_us;
      overs[i].open = false;
      return true;
    });
  };
  for (const Step& step : steps) {
    const int64_t t_us = f.event(step.seq).t_us;
    if (step.op == kNone) {
      for (size_t l = 0; l < f.locks.size(); ++l) {
        std::erase_if(holders[l], [&](const Holder& h) {
          if (f.threads[h.thread].process != f.crashes[step.crash].process) return false;
          in_use[l] -= h.permits;
          return true;
        });
        settle(static_cast<int>(l), t_us);
      }
      continue;
    }
    const Op& op = f.ops[step.op];
    std::vector<Holder>& hs = holders[op.lock];
    auto it = std::find_if(hs.begin(), hs.end(), [&](const Holder& h) { return h.thread == op.thread; });
    if (op.kind == OpKind::kRelease) {
      if (it == hs.end()) {
        unowned[op.lock] = step.op;  // Redisson's release has no owner check: it adds permits.
        continue;
      }
      const int64_t back = std::min(op.permits, it->permits);
      it->permits -= back;
      in_use[op.lock] -= back;
      if (it->permits == 0) hs.erase(it);
      settle(op.lock, t_us);
      continue;
    }
    if (it == hs.end()) {
      hs.push_back({op.thread, 0, op.end_seq, op.end_us});
      it = hs.end() - 1;
    }
    it->permits += op.permits;
    in_use[op.lock] += op.permits;
    if (in_use[op.lock] > permits) {
      Over over;
      over.op = step.op;
      over.in_use = in_use[op.lock];
      over.unowned_release = unowned[op.lock];
      if (overs.size() < o.max_violations) over.holders = hs;
      open[op.lock].push_back(static_cast<int>(overs.size()));
      overs.push_back(std::move(over));
    }
  }
  Findings found(o.max_violations);
  for (size_t i = 0; i < overs.size(); ++i) {
    const Op& op = f.ops[overs[i].op];
    found.Add({.from_us = op.end_us, .to_us = overs[i].open ? f.run_end_us : overs[i].to_us,
               .order = op.end_seq, .kind = 0, .a = static_cast<int>(i), .b = kNone, .c = kNone});
  }
  return Conclude(kSemaphore, found, [&](const Finding& x) {
    const Over& over = overs[x.a];
    const Op& op = f.ops[over.op];
    Violation v;
    v.kind = "over_permits";
    std::string others;
    std::vector<int> clients;
    for (const Holder& h : over.holders) {
      clients.push_back(n.ProcessOfThread(h.thread));
      v.events.push_back(h.since_seq);
      if (h.thread == op.thread) continue;
      v.threads.push_back(n.Thread(h.thread));
      others += (others.empty() ? "" : ", ") + n.Thread(h.thread) + " (" +
                Count(h.permits, "permit") + " since " + Seconds(h.since_us) + ")";
    }
    v.threads.push_back(n.Thread(op.thread));
    v.events.push_back(op.end_seq);
    v.explanation = n.Thread(op.thread) + " acquired " + Count(op.permits, "permit") + " of " +
                    n.Lock(op.lock) + " at " + Seconds(op.end_us) + ", putting " +
                    std::to_string(over.in_use) + " in use with only " +
                    Count(permits, "permit") + (others.empty() ? "" : "; the others: " + others) +
                    ". " + (over.open ? "Still over when the run ended."
                                      : "Back within the permits at " + Seconds(x.to_us) + ".");
    if (over.unowned_release != kNone) {
      const Op& r = f.ops[over.unowned_release];
      v.events.push_back(r.invoke_seq);
      v.explanation += " Earlier, " + n.Thread(r.thread) + " released at " +
                       Seconds(r.invoke_us) + " while holding no permit, which adds one: " +
                       "the semaphore's release does not check ownership.";
    }
    v.explanation += n.Faults(op.end_us, x.to_us, op.end_us, clients, &v.events);
    return v;
  });
}

// Count-down latches (kind countdownlatch): an await may return only once the count that
// trySetCount gave the latch has been counted down. From a lease event recording the latch
// created with count N (an "acquired" whose detail is N > 0), every countDown invoked takes one
// off what remains, and a forceUnlock (delete) takes all; an await (acquire) that ends ok
// although something remained throughout its flight is a violation "opened_early". Before any
// latch was created nothing is judged.
PropertyResult CheckLatch(const Facts& f, const Narrator& n, const CheckOptions& o) {
  if (!f.protocol.latch()) return NotApplicable(kLatch);
  struct Point {
    Seq seq;
    int lease = kNone;
    int op = kNone;
    bool end = false;  // The op's completion rather than its invoke.
    int reader = kNone;  // Or a getCount that read 0 (or no latch) for this client process.
  };
  std::vector<Point> points;
  // getCount replies of 0 or nil: the read that lets an await return. (The simulator's latch
  // labels it "get_count"; execs name the client, not the thread.)
  for (const Event& e : *f.events) {
    if (e.type != Event::Type::kExec || e.op != "get_count" || e.peer.empty()) continue;
    std::string_view reply = Trim(e.detail);
    if (reply.size() >= 2 && reply.front() == '"' && reply.back() == '"') {
      reply = reply.substr(1, reply.size() - 2);
    }
    const auto count = ParseInt(reply);
    if (!IsNilReply(reply) && !(count && *count <= 0)) continue;
    for (size_t p = 0; p < f.processes.size(); ++p) {
      if (f.processes[p].name == e.peer) points.push_back({e.seq, kNone, kNone, false, static_cast<int>(p)});
    }
  }
  for (size_t i = 0; i < f.lease_events.size(); ++i) {
    if (f.lease_events[i].kind == LeaseKind::kAcquired) {
      points.push_back({f.lease_events[i].seq, static_cast<int>(i), kNone, false});
    }
  }
  for (size_t i = 0; i < f.ops.size(); ++i) {
    const Op& op = f.ops[i];
    points.push_back({op.invoke_seq, kNone, static_cast<int>(i), false});
    if (op.kind == OpKind::kAcquire && op.outcome == Outcome::kOk) {
      points.push_back({op.end_seq, kNone, static_cast<int>(i), true});
    }
  }
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.seq < b.seq; });
  struct Latch {
    int64_t remaining = -1;  // -1: no latch created yet.
    int64_t count = 0;       // What it was created with,
    Seq set_seq = 0;         // by this lease event.
    int64_t counted = 0;     // countDowns invoked since.
    std::vector<Seq> losses;  // Lease events since that removed the key without a count-down.
  };
  std::vector<Latch> latches(f.locks.size());
  std::vector<bool> saw_open(f.ops.size(), false);  // The await was in flight while nothing remained.
  // What remained when the await's client last read 0 during its flight; -2: no such read.
  std::vector<int64_t> read_remaining(f.ops.size(), -2);
  std::vector<std::vector<int>> waiting(f.locks.size());
  struct Early {
    int op;
    Latch latch;
  };
  std::vector<Early> early;
  Findings found(o.max_violations);
  // Lease events that removed a latch key (kept per lock, to name them in explanations).
  std::vector<std::vector<int>> gone(f.locks.size());
  for (size_t i = 0; i < f.lease_events.size(); ++i) {
    const LeaseEvent& le = f.lease_events[i];
    if (le.kind == LeaseKind::kExpired || le.kind == LeaseKind::kLost) gone[le.lock].push_back(static_cast<int>(i));
  }
  auto open_now = [&](int lock) {
    for (int id : waiting[lock]) saw_open[id] = true;
  };
  for (const Point& p : points) {
    if (p.reader != kNone) {
      for (size_t l = 0; l < waiting.size(); ++l) {
        for (int id : waiting[l]) {
          if (f.threads[f.ops[id].thread].process == p.reader) {
            read_remaining[id] = latches[l].remaining;
          }
        }
      }
      continue;
    }
    if (p.lease != kNone) {
      const LeaseEvent& le = f.lease_events[p.lease];
      const auto count = ParseInt(Trim(f.event(le.seq).detail));
      if (!count || *count <= 0) continue;
      Latch& l = latches[le.lock];
      l = Latch{.remaining = *count, .count = *count, .set_seq = le.seq, .counted = 0, .losses = {}};
      continue;
    }
    const Op& op = f.ops[p.op];
    Latch& l = latches[op.lock];
    if (p.end) {
      std::erase(waiting[op.lock], p.op);
      // Judged by the read that let it return when the history has it; otherwise it passed
      // rightly if nothing remained at any moment of its flight.
      const bool opened_early = read_remaining[p.op] != -2 ? read_remaining[p.op] > 0
                                                           : l.remaining > 0 && !saw_open[p.op];
      if (opened_early) {
        Latch seen = l;
        for (int id : gone[op.lock]) {
          const Seq s = f.lease_events[id].seq;
          if (s > l.set_seq && s < op.end_seq) seen.losses.push_back(s);
        }
        found.Add({.from_us = op.end_us, .to_us = op.end_us, .order = op.end_seq, .kind = 0,
                   .a = static_cast<int>(early.size()), .b = kNone, .c = kNone});
        early.push_back({p.op, std::move(seen)});
      }
      continue;
    }
    switch (op.kind) {
      case OpKind::kAcquire:
        waiting[op.lock].push_back(p.op);
        if (l.remaining <= 0) saw_open[p.op] = true;
        break;
      case OpKind::kRelease:
        if (l.remaining > 0) {
          ++l.counted;
          if (--l.remaining == 0) open_now(op.lock);
        }
        break;
      case OpKind::kForceUnlock:
        if (l.remaining > 0) {
          l.remaining = 0;
          open_now(op.lock);
        }
        break;
      case OpKind::kOther: break;
    }
  }
  return Conclude(kLatch, found, [&](const Finding& x) {
    const Early& e = early[x.a];
    const Op& op = f.ops[e.op];
    Violation v;
    v.kind = "opened_early";
    v.threads = {n.Thread(op.thread)};
    v.events = {e.latch.set_seq, op.invoke_seq, op.end_seq};
    const Event& set = f.event(e.latch.set_seq);
    v.explanation = n.Thread(op.thread) + "'s await of latch " + n.Lock(op.lock) + " (invoked at " +
                    Seconds(op.invoke_us) + ") returned at " + Seconds(op.end_us) +
                    ", but the latch had been created on " + set.process + " at " +
                    Seconds(set.t_us) + " with count " + std::to_string(e.latch.count) +
                    " and only " + Count(static_cast<size_t>(e.latch.counted), "countDown") +
                    " had been invoked since: an await must not return before the count " +
                    "reaches 0.";
    size_t named = 0;
    for (Seq s : e.latch.losses) {
      if (named++ == kMaxLeaseEventsNamed) break;
      const Event& lost = f.event(s);
      v.events.push_back(s);
      v.explanation += std::string(" The latch key ") +
                       (lost.op == "expired" ? "expired" : "was lost") + " on " + lost.process +
                       " at " + Seconds(lost.t_us) + ", without being counted down.";
    }
    v.explanation += n.Faults(set.t_us, op.end_us, op.end_us, {n.ProcessOfThread(op.thread)},
                              &v.events);
    return v;
  });
}

}  // namespace

Verdict CheckHistory(const History& history, const CheckOptions& options) {
  const Facts facts = FactsBuilder(history, options).Build();
  const Narrator narrator(facts);
  Verdict verdict;
  verdict.run_end_us = facts.run_end_us;
  verdict.protocol_kind = facts.protocol.kind;
  verdict.warnings = facts.warnings;
  verdict.warning_count = facts.warning_count;
  verdict.results.push_back(CheckMutualExclusion(facts, narrator, options));
  verdict.results.push_back(CheckResourceExclusion(facts, narrator, options));
  verdict.results.push_back(CheckReentrancy(facts, narrator, options));
  verdict.results.push_back(CheckLeaseSafety(facts, narrator, options));
  verdict.results.push_back(LivenessChecker(facts, narrator, options).Run());
  verdict.results.push_back(FairnessChecker(facts, narrator, options).Run());
  verdict.results.push_back(CheckFencing(facts, narrator, options));
  verdict.results.push_back(CheckRwExclusion(facts, narrator, options));
  verdict.results.push_back(CheckSemaphore(facts, narrator, options));
  verdict.results.push_back(CheckLatch(facts, narrator, options));
  assert(verdict.results.size() == kProperties.size());
  for (size_t i = 0; i < kProperties.size(); ++i) {
    assert(verdict.results[i].property == kProperties[i]);
  }
  return verdict;
}

}  // namespace lockstep::check
