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
};

const char* KindName(uint8_t kind) {
  switch (kind) {
    case kReleaseWithoutHold: return "release_without_hold";
    case kForeignReleaseFreed: return "foreign_release_freed_lock";
    case kLostReentrantHold: return "lost_reentrant_hold";
    case kHoldLeaked: return "hold_leaked";
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

struct Finding {
  Op op;
  bool has_foreign = false;
  ForeignRelease foreign;
};

class Reentrancy : public PropertyChecker {
 public:
  explicit Reentrancy(const CheckOptions& options) : found_(options.max_violations) {}

  void OnOpInvoked(const FactsPass& f, const Op& op) override {
    if (f.protocol().ownerless()) return;
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

  Findings<Finding> found_;
  std::unordered_map<uint64_t, Watch> watched_;  // Releases in flight by non-holders, by op id.
};

}  // namespace

std::unique_ptr<PropertyChecker> MakeReentrancy(const CheckOptions& options) {
  return std::make_unique<Reentrancy>(options);
}

}  // namespace lockstep::check
