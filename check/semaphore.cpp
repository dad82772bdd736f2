// semaphore: permits in use never exceed the permits of the protocol note (default 1).
//
// Semaphores (kind semaphore). An acquire ok takes its permits (invoke detail "permits=<n>",
// else the invoke's value, else 1) until the thread's release invokes give them back (at most
// what it holds) or its process crashes. An acquire ok that puts more than P permits in use is
// a violation "over_permits" naming the holders (earliest first) and the new one; it lasts until
// the count is back within P. Permits an addPermits script added raise P from then on
// (FactsPass::PermitsAllowed, which the exclusion checkers use too).
#include <algorithm>
#include <optional>

#include "check/property.h"

namespace lockstep::check {

namespace {

using history::FactsPass;
using history::Op;

struct Holder {
  int thread = history::kNone;
  int64_t permits = 0;
  history::Seq since_seq = 0;  // The ok that started its current holding.
  int64_t since_us = 0;
};

struct Over {
  Op op;
  int64_t in_use = 0;
  int64_t permits = 0;  // The semaphore's permits then.
  int64_t to_us = 0;
  bool open = true;
  std::vector<Holder> holders;
  bool has_unowned = false;  // The latest release by a thread holding no permit.
  Op unowned_release;
};

class Semaphore : public PropertyChecker {
 public:
  explicit Semaphore(const CheckOptions& options) : found_(options.max_violations) {}

  void OnOpEnded(const FactsPass& f, const Op& op) override {
    if (!f.protocol().semaphore()) return;
    if (op.kind != history::OpKind::kAcquire || op.outcome != history::Outcome::kOk) return;
    Lock& l = LockOf(op.lock);
    auto it = Find(l, op.thread);
    if (it == l.holders.end()) {
      l.holders.push_back({op.thread, 0, op.end_seq, op.end_us});
      it = l.holders.end() - 1;
    }
    it->permits += op.permits;
    l.in_use += op.permits;
    if (l.in_use <= f.PermitsAllowed(op.lock)) return;
    const FindingKey key{op.end_us, op.end_seq, 0, static_cast<int64_t>(overs_++), history::kNone,
                         history::kNone};
    if (auto [number, over] = found_.Add(key); over != nullptr) {
      over->op = op;
      over->in_use = l.in_use;
      over->permits = f.PermitsAllowed(op.lock);
      over->holders = l.holders;
      over->has_unowned = l.has_unowned;
      over->unowned_release = l.unowned;
      l.open.push_back(number);
    }
  }

  void OnOpInvoked(const FactsPass& f, const Op& op) override {
    if (!f.protocol().semaphore() || op.kind != history::OpKind::kRelease) return;
    Lock& l = LockOf(op.lock);
    auto it = Find(l, op.thread);
    if (it == l.holders.end()) {
      // Redisson's release has no owner check: it adds permits.
      l.has_unowned = true;
      l.unowned = op;
      return;
    }
    const int64_t back = std::min(op.permits, it->permits);
    it->permits -= back;
    l.in_use -= back;
    if (it->permits == 0) l.holders.erase(it);
    Settle(f, op.lock, op.invoke_us);
  }

  void OnCrash(const FactsPass& f, const history::ClientCrash& crash) override {
    if (!f.protocol().semaphore()) return;
    for (size_t lock = 0; lock < locks_.size(); ++lock) {
      Lock& l = locks_[lock];
      std::erase_if(l.holders, [&](const Holder& h) {
        if (f.ProcessOfThread(h.thread) != crash.process) return false;
        l.in_use -= h.permits;
        return true;
      });
      Settle(f, static_cast<int>(lock), crash.t_us);
    }
  }

  void OnFinish(const FactsPass& f) override {
    for (Lock& l : locks_) {
      for (uint64_t number : l.open) {
        if (Over* over = found_.Get(number)) over->to_us = f.run_end_us();
      }
      l.open.clear();
    }
  }

  PropertyResult Result(const Narrator& n) override {
    if (!n.facts().protocol().semaphore()) return NotApplicable(kSemaphore);
    return Conclude(kSemaphore, found_, [&](const FindingKey&, const Over& over) {
      const Op& op = over.op;
      Violation v;
      v.kind = "over_permits";
      v.to_us = over.to_us;
      std::string others;
      std::vector<int> clients;
      for (const Holder& h : over.holders) {
        clients.push_back(n.ProcessOfThread(h.thread));
        v.events.push_back(h.since_seq);
        if (h.thread == op.thread) continue;
        v.threads.push_back(n.Thread(h.thread));
        others += (others.empty() ? "" : ", ") + n.Thread(h.thread) + " (" +
                  Count(static_cast<size_t>(h.permits), "permit") + " since " +
                  Seconds(h.since_us) + ")";
      }
      v.threads.push_back(n.Thread(op.thread));
      v.events.push_back(op.end_seq);
      v.explanation = n.Thread(op.thread) + " acquired " +
                      Count(static_cast<size_t>(op.permits), "permit") + " of " + n.Lock(op.lock) +
                      " at " + Seconds(op.end_us) + ", putting " + std::to_string(over.in_use) +
                      " in use with only " + Count(static_cast<size_t>(over.permits), "permit") +
                      (others.empty() ? "" : "; the others: " + others) + ". " +
                      (over.open ? "Still over when the run ended."
                                 : "Back within the permits at " + Seconds(over.to_us) + ".");
      if (over.has_unowned) {
        const Op& r = over.unowned_release;
        v.events.push_back(r.invoke_seq);
        v.explanation += " Earlier, " + n.Thread(r.thread) + " released at " +
                         Seconds(r.invoke_us) + " while holding no permit, which adds one: " +
                         "the semaphore's release does not check ownership.";
      }
      v.explanation += n.Faults(op.end_us, over.to_us, op.end_us, clients, &v.events);
      return v;
    });
  }

 private:
  struct Lock {
    std::vector<Holder> holders;  // In holding order.
    int64_t in_use = 0;
    bool has_unowned = false;
    Op unowned;
    std::vector<uint64_t> open;  // Kept findings still over the permits.
  };

  Lock& LockOf(int lock) {
    if (locks_.size() <= static_cast<size_t>(lock)) locks_.resize(lock + 1);
    return locks_[lock];
  }
  static std::vector<Holder>::iterator Find(Lock& l, int thread) {
    return std::find_if(l.holders.begin(), l.holders.end(),
                        [&](const Holder& h) { return h.thread == thread; });
  }

  // An over-permits stretch ends when the count is back within the permits.
  void Settle(const FactsPass& f, int lock, int64_t t_us) {
    Lock& l = LockOf(lock);
    if (l.in_use > f.PermitsAllowed(lock)) return;
    for (uint64_t number : l.open) {
      if (Over* over = found_.Get(number)) {
        over->to_us = t_us;
        over->open = false;
      }
    }
    l.open.clear();
  }

  Findings<Over> found_;
  uint64_t overs_ = 0;  // Every over-permits moment, numbered as it comes.
  std::vector<Lock> locks_;
};

}  // namespace

std::unique_ptr<PropertyChecker> MakeSemaphore(const CheckOptions& options) {
  return std::make_unique<Semaphore>(options);
}

}  // namespace lockstep::check
