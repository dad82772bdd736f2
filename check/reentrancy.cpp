// reentrancy: hold counts and unlock results are right, and a thread that holds nothing
// releases nothing.
//
// Per thread and lock the facts pass counts holds (+1 per acquire ok, -1 per release invoke,
// never below 0) and knows whether the lock hash agrees (history/facts.h). A release `ok` must
// return 0 when the count was > 1 and 1 when it was 1; a release by a thread holding nothing
// must not end `ok`, and no lease `released` event may occur on that lock between its invoke
// and its completion while another thread believes it holds it. Judged only while the count is
// known to match the lock hash. Per kind: a read release at count 1 may return 0 (other readers
// keep the hash); RedLock/MultiLock releases return how many members they fully released, so
// "fully released" is >= 1 and a non-holder's release is a violation only if it returned >= 1;
// semaphores and count-down latches have no owners and are not judged.
//
// Unlock replies: every unlock script's reply (its `exec`) is judged against what the node's
// lease events say the lock key held when the script ran, whatever the thread's count: a
// reply saying the caller held the lock (Redisson: 1 released, 0 still held; compare-and-
// delete: 1) while the caller's field was not in the key, a "not held" reply (nil; compare-and-
// delete: anything but 1) while it was, and a reply that says the opposite of what the script
// did to the caller's field (1 but the field stayed, 0 but it went) are violations, whoever wrote
// the script: the stock fair lock's unlock (every version) and 3.13.6's read-write lock's answer
// 1 for a key that no longer exists, which tells a holder that lost the lock that it released
// it (docs/protocols.md, "Known weaknesses of the stock scripts"). Only the first run of a
// request on a node is judged: its caller reads one reply per request, so a duplicated
// delivery's second run answers nobody.
//
// Renew replies, by the same key view: a watchdog renew that answers "still held, lease
// extended" (1, or the batched script's [1]) while the caller's field was not in the key on
// that node told a thread that had lost the lock that it still held it (a renew that re-creates
// the caller's field is one); a violation whoever wrote the script.
#include <algorithm>
#include <unordered_map>

#include "check/property.h"

namespace lockstep::check {

namespace {

using history::FactsPass;
using history::Op;
using history::OpKind;
using history::Outcome;

enum ReentrancyKind : uint8_t {
  kReleaseWithoutHold,   // A thread holding nothing released successfully.
  kForeignReleaseFreed,  // It failed, but the lock was deleted under its owner meanwhile.
  kLostReentrantHold,    // Count > 1 but the unlock reported a full release.
  kHoldLeaked,           // Count 1 but the unlock reported the lock still held.
  // Unlock replies, judged against the lock key on the node when the script ran.
  kUnlockAnsweredNonHolder,  // Said the caller held it (1 or 0); its field was not there.
  kUnlockRefusedHolder,      // Said "not held"; the caller's field was there.
  kUnlockMisreported,        // Said released but the field stayed, or still held but it went.
  // Renew replies (the watchdog's): said "still held, extended" while the caller's field was
  // not in the key on that node (it had expired, gone, or belongs to someone else).
  kRenewAnsweredNonHolder,
};

const char* KindName(uint8_t kind) {
  switch (kind) {
    case kReleaseWithoutHold: return "release_without_hold";
    case kForeignReleaseFreed: return "foreign_release_freed_lock";
    case kLostReentrantHold: return "lost_reentrant_hold";
    case kHoldLeaked: return "hold_leaked";
    case kUnlockAnsweredNonHolder: return "unlock_answered_non_holder";
    case kUnlockRefusedHolder: return "unlock_refused_holder";
    case kUnlockMisreported: return "unlock_misreported";
    case kRenewAnsweredNonHolder: return "renew_answered_non_holder";
    default: return "?";
  }
}

// A lease `released` event that took the lock from a thread believing it held it.
struct ForeignRelease {
  uint64_t id = 0;
  history::Seq seq = 0;
  int64_t t_us = 0;
  int node = history::kNone;
  std::vector<int> believers;
};

// What an unlock script's reply tells the caller.
enum class Claim : uint8_t {
  kNone,       // An error or a reply no client reads as an answer: not judged.
  kNotHeld,    // Redisson's nil (IllegalMonitorStateException); compare-and-delete's 0.
  kStillHeld,  // Redisson's 0 (one hold released, more remain).
  kReleased,   // 1: the caller's last hold is gone.
};

const char* ClaimText(Claim claim) {
  switch (claim) {
    case Claim::kNotHeld: return "not held";
    case Claim::kStillHeld: return "still held";
    case Claim::kReleased: return "released";
    case Claim::kNone: break;
  }
  return "?";
}

// An unlock script that ran on a node, with the lock key as it was before and after.
struct UnlockExec {
  Seq seq = 0;
  int64_t t_us = 0;
  int node = history::kNone;
  int lock = history::kNone;
  int thread = history::kNone;
  bool shared = false;  // The read side of a read-write lock.
  std::string reply;    // As the history writes it.
  Claim claim = Claim::kNone;
  bool repeat = false;  // A later run of a request that already ran there: nobody reads it.
  bool renew = false;   // The watchdog's renew, not an unlock: kStillHeld means "extended".
  // Before: whether the key existed and held the caller's field, its owner fields, and the
  // lease event that last said so (kOpenSeq: none yet, the key never existed there).
  bool key = false;
  bool held = false;
  std::vector<std::string> fields;
  Seq state_seq = history::kOpenSeq;
  bool expired = false;  // The key's time had run out: the lease event after it says expired.
  // After, from the lease event the script caused (kOpenSeq: it changed no owner).
  bool key_after = false;
  bool held_after = false;
  Seq after_seq = history::kOpenSeq;
  // The thread's operation in flight when it ran, if any.
  bool has_op = false;
  Seq op_seq = 0;
  int64_t op_us = 0;
};

struct Finding {
  Op op;
  bool has_foreign = false;
  ForeignRelease foreign;
  bool is_exec = false;
  UnlockExec exec;
};

class Reentrancy : public PropertyChecker {
 public:
  explicit Reentrancy(const CheckOptions& options) : found_(options.max_violations) {}

  bool WantsEvents() const override { return true; }

  // After the facts pass has seen the event (so names, threads and ops are up to date). The
  // lease event an unlock script causes is recorded right after its exec: an exec waits for
  // the next event to learn what the script did to the key.
  void OnEventDone(const FactsPass& f, const history::Event& e) override {
    if (f.protocol().ownerless()) return;
    if (pending_) Resolve(f, &e);
    switch (e.type) {
      case history::EventType::kLease: ApplyLease(f, e); break;
      case history::EventType::kExec: OnUnlockExec(f, e); break;
      case history::EventType::kFault:
        // A promoted replica's key is whatever it had replicated: unknown until its next
        // lease event says.
        if (e.op == history::names::kPromote) {
          if (const int node = f.ProcessNamed(e.process); node != history::kNone) {
            for (size_t lock = 0; lock < f.lock_count(); ++lock) {
              KeyAt(node, static_cast<int>(lock)).known = false;
            }
          }
        }
        break;
      default: break;
    }
  }

  void OnFinishing(const FactsPass& f) override {
    if (pending_) Resolve(f, nullptr);
  }

  void OnOpInvoked(const FactsPass& f, const Op& op) override {
    if (f.protocol().ownerless()) return;
    if (last_shared_.size() <= static_cast<size_t>(op.thread)) last_shared_.resize(op.thread + 1, 0);
    last_shared_[op.thread] = op.shared;
    // A release by a thread holding nothing: watch for the lock being deleted under its holder.
    if (op.kind == OpKind::kRelease && op.count_known && op.count_before == 0) {
      watched_[op.id] = Watch{op.thread, op.lock, false, {}};
    }
  }

  void OnLease(const FactsPass&, const history::LeaseFact& le) override {
    if (le.kind != history::LeaseKind::kReleased || watched_.empty()) return;
    for (auto& [id, w] : watched_) {
      if (w.found || w.lock != le.lock) continue;
      for (int believer : le.believers) {
        // The releaser held nothing on this side; it may hold the other side of a read-write
        // lock.
        if (believer == w.thread) continue;
        if (!le.owners_listed || le.Lists(believer)) {
          w.found = true;
          w.release = ForeignRelease{le.id, le.seq, le.t_us, le.node, le.believers};
          break;
        }
      }
    }
  }

  void OnOpEnded(const FactsPass& f, const Op& op) override {
    if (op.kind != OpKind::kRelease || f.protocol().ownerless()) return;
    Watch watch;
    if (auto it = watched_.find(op.id); it != watched_.end()) {
      watch = std::move(it->second);
      watched_.erase(it);
    }
    // Only judged while the lock hash is known to agree with the thread's count.
    if (!op.count_known) return;
    // RedLock/MultiLock releases return how many members they fully released (RedLock is ok
    // even when none was held).
    const bool members = f.protocol().quorum_kind();
    const bool full = members ? op.value >= 1 : op.value == 1;  // Of an ok with a value.
    uint8_t kind = 0;
    if (op.count_before == 0) {
      if (op.outcome == Outcome::kOk && (!members || (op.has_value && op.value >= 1))) {
        kind = kReleaseWithoutHold;
      } else if (watch.found) {
        kind = kForeignReleaseFreed;
      } else {
        return;
      }
    } else if (op.outcome != Outcome::kOk || !op.has_value) {
      return;
    } else if (op.count_before > 1 && op.value != 0) {
      kind = kLostReentrantHold;
    } else if (op.count_before == 1 && !full && !op.shared) {
      // A reader's last release returns 0 while other readers keep the hash.
      kind = kHoldLeaked;
    } else {
      return;
    }
    const FindingKey key{op.invoke_us, op.invoke_seq, kind, static_cast<int64_t>(op.id),
                         watch.found ? static_cast<int64_t>(watch.release.id) : history::kNone,
                         history::kNone};
    if (auto [number, x] = found_.Add(key); x != nullptr) {
      x->op = op;
      x->has_foreign = watch.found;
      x->foreign = std::move(watch.release);
    }
  }

  PropertyResult Result(const Narrator& n) override {
    if (n.facts().protocol().ownerless()) return NotApplicable(kReentrancy);
    return Conclude(kReentrancy, found_,
                    [&](const FindingKey& key, const Finding& x) { return Explain(n, key, x); });
  }

 private:
  struct Watch {
    int thread = history::kNone;
    int lock = history::kNone;
    bool found = false;
    ForeignRelease release;
  };

  static Violation Explain(const Narrator& n, const FindingKey& key, const Finding& x) {
    if (x.is_exec) return ExplainExec(n, key, x.exec);
    const Op& op = x.op;
    const std::string& who = n.Thread(op.thread);
    Violation v;
    v.kind = KindName(key.kind);
    v.to_us = op.end_us;
    v.threads = {who};
    v.events = {op.invoke_seq};
    if (op.end_seq != history::kOpenSeq) v.events.push_back(op.end_seq);
    const std::string value = op.has_value ? std::to_string(op.value) : "nothing";
    switch (key.kind) {
      case kReleaseWithoutHold:
        v.explanation = who + " released " + n.Lock(op.lock) + " at " + Seconds(op.invoke_us) +
                        " without holding it, and the release succeeded (returned " + value +
                        ") at " + Seconds(op.end_us) +
                        "; a release by a thread that does not hold the lock must fail.";
        break;
      case kForeignReleaseFreed:
        v.explanation = who + " tried to release " + n.Lock(op.lock) + " at " +
                        Seconds(op.invoke_us) + " without holding it; the release ended in " +
                        history::OutcomeName(op.outcome) + ",";
        break;
      case kLostReentrantHold:
        v.explanation = who + " held " + n.Lock(op.lock) + " " +
                        Count(static_cast<size_t>(op.count_before), "time") +
                        " and released it once at " + Seconds(op.invoke_us) +
                        ", but the unlock returned " + value + " (fully released) at " +
                        Seconds(op.end_us) + ": the lock was freed although " + who +
                        " still held it " + Count(static_cast<size_t>(op.count_before - 1), "time") +
                        ".";
        break;
      case kHoldLeaked:
        v.explanation = who + " made its last release of " + n.Lock(op.lock) + " at " +
                        Seconds(op.invoke_us) + ", but the unlock returned " + value +
                        " (still held) at " + Seconds(op.end_us) +
                        ": the lock stays locked although its holder believes it let it go.";
        break;
    }
    if (x.has_foreign) {
      const ForeignRelease& le = x.foreign;
      v.events.push_back(le.seq);
      std::string owners;
      for (int believer : le.believers) {
        owners += (owners.empty() ? "" : ", ") + n.Thread(believer);
        v.threads.push_back(n.Thread(believer));
      }
      v.explanation += std::string(key.kind == kForeignReleaseFreed ? " but" : " Meanwhile") +
                       " the lock was deleted on " + n.ProcessName(le.node) + " at " +
                       Seconds(le.t_us) + " while " + owners + " believed it held it.";
    }
    v.explanation += n.Faults(op.invoke_us, op.end_us, op.invoke_us, {n.ProcessOfThread(op.thread)},
                              &v.events);
    return v;
  }

  // The lock key on one node, as its lease events describe it.
  struct KeyState {
    bool known = true;               // False after a promotion, until the next lease event.
    std::vector<std::string> fields; // Its owner fields; empty: no key.
    Seq seq = history::kOpenSeq;     // The lease event that said so.
  };

  // A request a thread's unlock sent to a node.
  struct RequestRun {
    int node = history::kNone;
    int64_t request = 0;
  };
  static constexpr size_t kRequestsKept = 8;  // Per thread: duplicates come close together.
  // An expiry this soon after a script ran was seen by it (the simulator records both at one
  // instant, the live driver a transaction's round trip apart).
  static constexpr int64_t kAtOnceUs = 1000;

  static uint64_t NodeLock(int node, int lock) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(node)) << 32) | static_cast<uint32_t>(lock);
  }
  KeyState& KeyAt(int node, int lock) { return keys_[NodeLock(node, lock)]; }

  static std::vector<std::string> FieldsOf(std::string_view list) {
    std::vector<std::string> fields;
    history::ForEachOwnerField(list, [&](std::string_view field) {
      if (!field.empty()) fields.emplace_back(field);
    });
    return fields;
  }

  static std::string_view LeaseDetail(const history::Event& e) {
    if (const auto* o = std::get_if<history::Owners>(&e.detail)) return o->list;
    return e.source;
  }

  // Whether `field` is the caller's on the side its unlock releases: "<uuid>:<n>:write" for a
  // read-write lock's writer, "<uuid>:<n>" otherwise (a plain lock's value is that too).
  static bool IsCallers(const FactsPass& f, std::string_view field, int thread, bool write_side) {
    const auto parsed = history::AsOwnerField(field);
    // Not "<uuid>:<n>": a value the thread announced (a client program's value per
    // acquisition), or its process's uuid (a client that writes one for all its threads).
    if (!parsed) return !write_side && f.FieldNames(field, thread);
    if (f.OwnerThread(field) != thread) return false;
    return write_side ? parsed->suffix == ":write" : parsed->suffix.empty();
  }
  static bool Holds(const FactsPass& f, const std::vector<std::string>& fields, int thread,
                    bool write_side) {
    return std::any_of(fields.begin(), fields.end(), [&](const std::string& field) {
      return IsCallers(f, field, thread, write_side);
    });
  }
  static bool WriteSide(const FactsPass& f, bool shared) {
    return !shared && (f.protocol().rw() || (!f.protocol().known() && f.has_read_ops()));
  }

  void ApplyLease(const FactsPass& f, const history::Event& e) {
    const int node = f.ProcessNamed(e.process == history::names::kNone ? history::names::kSim
                                                                        : e.process);
    if (node == history::kNone || e.lock == history::names::kNone) return;
    KeyState& state = KeyAt(node, f.LockNamed(e.lock));
    state.known = true;
    state.seq = e.seq;
    if (e.op == history::names::kAcquired || e.op == history::names::kOwners) {
      state.fields = FieldsOf(LeaseDetail(e));
    } else {
      state.fields.clear();  // Released, expired or lost: the key is gone.
    }
  }


  // What the reply tells the caller, by the kind's unlock convention.
  static Claim ClaimOf(const FactsPass& f, std::string_view reply) {
    if (reply.empty() || reply.front() == '-') return Claim::kNone;  // An error.
    const auto integer = history::IntegerReply(reply);
    if (f.protocol().compare_and_delete) {
      return integer == 1 ? Claim::kReleased : Claim::kNotHeld;
    }
    if (f.protocol().zero_released) {
      if (!integer) return Claim::kNone;
      return integer == 0 ? Claim::kReleased : Claim::kNotHeld;
    }
    if (history::IsNilReply(reply)) return Claim::kNotHeld;
    if (!integer) return Claim::kNone;  // The client fails it as an unexpected reply.
    return *integer == 1 ? Claim::kReleased : Claim::kStillHeld;
  }

  // A renew's reply: 1 (or an array of one 1, the batched script's) says the caller still
  // holds the lock and its lease was extended; anything else is not judged.
  static Claim RenewClaimOf(std::string_view reply) {
    if (reply.size() >= 2 && reply.front() == '[' && reply.back() == ']') {
      reply = reply.substr(1, reply.size() - 2);
    }
    return history::IntegerReply(reply) == 1 ? Claim::kStillHeld : Claim::kNone;
  }

  void OnUnlockExec(const FactsPass& f, const history::Event& e) {
    if (e.peer == history::names::kNone || e.thread < 0) return;
    const bool renew = e.op == history::names::kRenew;
    if (!renew && f.names().Str(e.op) != "unlock") return;
    const int node = f.ProcessNamed(e.process == history::names::kNone ? history::names::kSim
                                                                        : e.process);
    const int thread = f.ExecThread(e);
    if (node == history::kNone || thread == history::kNone) return;
    const int lock = f.LockNamed(e.lock);
    if (lock == history::kNone) return;
    const KeyState& state = KeyAt(node, lock);
    if (!state.known) return;
    std::string scratch;
    UnlockExec x;
    x.seq = e.seq;
    x.t_us = e.t_us;
    x.node = node;
    x.lock = lock;
    x.thread = thread;
    if (const Op* op = f.OpOf(thread)) {
      x.shared = op->shared;
      x.has_op = true;
      x.op_seq = op->invoke_seq;
      x.op_us = op->invoke_us;
    } else {
      x.shared = static_cast<size_t>(thread) < last_shared_.size() && last_shared_[thread];
    }
    x.reply = std::string(history::ReplyText(e, &scratch));
    x.renew = renew;
    x.claim = renew ? RenewClaimOf(x.reply) : ClaimOf(f, x.reply);
    if (x.claim == Claim::kNone) return;
    x.key = !state.fields.empty();
    x.fields = state.fields;
    // A renew extends whatever the thread holds there (either side of a read-write lock).
    x.held = renew ? std::any_of(state.fields.begin(), state.fields.end(),
                                 [&](const std::string& field) {
                                   return f.FieldNames(field, thread);
                                 })
                   : Holds(f, state.fields, thread, WriteSide(f, x.shared));
    x.state_seq = state.seq;
    // A duplicated delivery: its caller read the first run's reply; a later one answers nobody.
    if (requests_.size() <= static_cast<size_t>(thread)) requests_.resize(thread + 1);
    std::vector<RequestRun>& runs = requests_[thread];
    if (e.has_value) {
      const auto first = std::find_if(runs.begin(), runs.end(), [&](const RequestRun& r) {
        return r.node == node && r.request == e.value;
      });
      if (first != runs.end()) {
        x.repeat = true;
      } else {
        if (runs.size() >= kRequestsKept) runs.erase(runs.begin());
        runs.push_back(RequestRun{node, e.value});
      }
    }
    pending_ = true;
    pending_exec_ = std::move(x);
  }

  // The event after an unlock exec (nullptr: the run ended): the lease event it caused, if any.
  void Resolve(const FactsPass& f, const history::Event* next) {
    pending_ = false;
    UnlockExec& x = pending_exec_;
    x.key_after = x.key;
    x.held_after = x.held;
    // The lease event right after the exec on its node and lock is the script's doing (the
    // live driver records it from the same transaction, microseconds later). An expiry is the
    // key's time running out as the script looked only when it comes at once: the next event
    // may be an expiry much later, when the script changed nothing and nothing else happened
    // meanwhile.
    const bool at_once =
        next != nullptr && (next->op != history::names::kExpired || next->t_us - x.t_us <= kAtOnceUs);
    if (next != nullptr && next->type == history::EventType::kLease && at_once &&
        f.ProcessNamed(next->process) == x.node && f.LockNamed(next->lock) == x.lock) {
      x.after_seq = next->seq;
      if (next->op == history::names::kExpired) {
        // The key's time had run out before the script looked: it saw no key.
        x.expired = true;
        x.key = x.held = x.key_after = x.held_after = false;
      } else if (next->op == history::names::kAcquired || next->op == history::names::kOwners) {
        const std::vector<std::string> after = FieldsOf(LeaseDetail(*next));
        x.key_after = !after.empty();
        x.held_after = Holds(f, after, x.thread, WriteSide(f, x.shared));
      } else {
        x.key_after = x.held_after = false;
      }
    }
    uint8_t kind = 0;
    if (x.renew) {
      if (x.held) return;
      kind = kRenewAnsweredNonHolder;
    } else {
      switch (x.claim) {
        case Claim::kNotHeld:
          if (!x.held) return;
          kind = kUnlockRefusedHolder;
          break;
        case Claim::kReleased:
        case Claim::kStillHeld: {
          if (!x.held) {
            kind = kUnlockAnsweredNonHolder;
            break;
          }
          // A read unlock's 0 and 1 are about the hash (other readers may keep it, without
          // the caller's field); the others' are about the caller's own field.
          const bool remains = x.shared ? x.key_after : x.held_after;
          if ((x.claim == Claim::kReleased) != remains) return;
          kind = kUnlockMisreported;
          break;
        }
        case Claim::kNone: return;
      }
    }
    if (x.repeat) return;
    const FindingKey key{x.t_us, x.seq, kind, static_cast<int64_t>(x.seq), history::kNone,
                         history::kNone};
    if (auto [number, payload] = found_.Add(key); payload != nullptr) {
      payload->is_exec = true;
      payload->exec = std::move(x);
    }
  }

  // "c2.t0", or the field as written when it is no thread of this run's ("uuid-c9:1").
  static std::string Owners(const Narrator& n, const std::vector<std::string>& fields,
                            std::vector<std::string>* threads) {
    std::string out;
    for (const std::string& field : fields) {
      if (const int p = n.facts().OwnerProcess(field); p != history::kNone) {
        out += (out.empty() ? "" : ", ") + n.ProcessName(p) + " (its process's id)";
        continue;
      }
      const int t = n.facts().OwnerThread(field);
      if (!history::AsOwnerField(field) && t == history::kNone) continue;  // "mode".
      std::string who = t == history::kNone ? field : n.Thread(t);
      const auto parsed = history::AsOwnerField(field);
      if (t != history::kNone && parsed && !parsed->suffix.empty()) {
        who += " (" + std::string(parsed->suffix.substr(1)) + ")";
      }
      if (t != history::kNone && threads != nullptr &&
          std::find(threads->begin(), threads->end(), n.Thread(t)) == threads->end()) {
        threads->push_back(n.Thread(t));
      }
      out += (out.empty() ? "" : ", ") + who;
    }
    return out;
  }

  static Violation ExplainExec(const Narrator& n, const FindingKey& key, const UnlockExec& x) {
    const std::string& who = n.Thread(x.thread);
    const std::string node = n.ProcessName(x.node);
    Violation v;
    v.kind = KindName(key.kind);
    v.to_us = x.t_us;
    v.threads = {who};
    v.events = {x.seq};
    if (x.state_seq != history::kOpenSeq) v.events.push_back(x.state_seq);
    if (x.after_seq != history::kOpenSeq) v.events.push_back(x.after_seq);
    if (x.has_op) v.events.push_back(x.op_seq);
    const std::string side = x.shared ? "read " : (WriteSideText(n, x.shared) ? "write " : "");
    std::string ran = who + "'s " + (x.renew ? std::string("renew (the watchdog's)") : side + "unlock") +
                      " of " + n.Lock(x.lock) + " ran on " + node + " at " + Seconds(x.t_us);
    if (x.has_op) ran += " (its release invoked at " + Seconds(x.op_us) + ")";
    ran += " and answered " + x.reply + " (" + (x.renew ? "still held, lease extended" : ClaimText(x.claim)) + ")";
    const std::string owners = Owners(n, x.fields, &v.threads);
    switch (key.kind) {
      case kRenewAnsweredNonHolder:
      case kUnlockAnsweredNonHolder: {
        std::string state;
        if (x.expired) {
          state = "the key's time had run out (owners: " + owners + ")";
        } else if (!x.key) {
          state = "the key did not exist";
        } else if (owners.empty()) {
          state = "the key held no owner field";
        } else {
          state = "the key was held by " + owners;
        }
        if (x.renew) {
          v.explanation = ran + ", but " + who + " did not hold it there: " + state +
                          (x.held_after ? "; the script put " + who + "'s field back" : "") +
                          ". The holder is told it still holds a lock it had lost.";
          break;
        }
        v.explanation = ran + ", but " + who +
                        (side.empty() ? " did not hold it there: "
                                      : " held no " + side + "hold of it there: ") +
                        state + ". The caller is told it " +
                        (x.claim == Claim::kReleased ? "released" : "still holds") +
                        " a lock it did not hold.";
        break;
      }
      case kUnlockRefusedHolder:
        v.explanation = ran + ", but " + who + "'s field was in the key there (owners: " +
                        owners + "): the holder is told it does not hold the lock" +
                        (x.held_after ? ", and its hold stays on " + node + "." : ".");
        break;
      case kUnlockMisreported:
        if (x.claim == Claim::kReleased) {
          v.explanation = ran + ", but " +
                          (x.shared ? "the lock's hash was still on " + node
                                    : who + "'s field was still in the key on " + node) +
                          " after the script: the caller believes it let go of a lock that "
                          "stays held.";
        } else {
          v.explanation = ran + ", but the script removed " +
                          (x.shared ? "the lock's hash" : who + "'s field") + " from " + node +
                          ": the caller believes it still holds a lock that is gone.";
        }
        break;
    }
    v.explanation += n.Faults(x.t_us, x.t_us, x.t_us, {n.ProcessOfThread(x.thread)}, &v.events);
    return v;
  }
  static bool WriteSideText(const Narrator& n, bool shared) { return WriteSide(n.facts(), shared); }

  Findings<Finding> found_;
  std::unordered_map<uint64_t, Watch> watched_;  // Releases in flight by non-holders, by op id.
  // Unlock replies.
  std::unordered_map<uint64_t, KeyState> keys_;  // By (node, lock).
  std::vector<uint8_t> last_shared_;             // By thread: the side of its latest op.
  std::vector<std::vector<RequestRun>> requests_;  // By thread: its latest unlock requests.
  bool pending_ = false;
  UnlockExec pending_exec_;
};

}  // namespace

std::unique_ptr<PropertyChecker> MakeReentrancy(const CheckOptions& options) {
  return std::make_unique<Reentrancy>(options);
}

}  // namespace lockstep::check
