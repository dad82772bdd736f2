// latch: a count-down latch's await returns only once the count trySetCount gave it has been
// counted down.
//
// Count-down latches (kind countdownlatch). A lease event "acquired" whose detail is N > 0
// records the latch created with count N; each countDown (release) invoked takes one off, a
// forceUnlock (delete) all. A countDown invoked while there was nothing to count (no latch, or
// one already open) takes one off when its count_down exec runs after all, on a latch created
// meanwhile: a restarted counter's first countDown runs trySetCount first, and when that
// re-creates the latch, the decrement that follows counts on it. An await (acquire) that ends ok is a violation "opened_early" if
// something remained when its client's last getCount exec (label "get_count") during its
// flight read 0 or nil -- or, in a history without such execs, at every moment of its flight.
// The latch key expiring or being lost with its node (lease expired/lost) opens it early in
// this sense.
#include <algorithm>
#include <unordered_map>

#include "check/property.h"
#include "history/notes.h"

namespace lockstep::check {

namespace {

using history::FactsPass;
using history::Op;

struct Early {
  Op op;
  int64_t count = 0;        // What the latch was created with,
  history::Seq set_seq = 0;  // by this lease event,
  int64_t set_us = 0;
  int set_node = history::kNone;
  int64_t counted = 0;      // and the countDowns invoked since.
  std::vector<history::LossRecord> losses;  // Expiries and losses of its key since.
};

class Latch : public PropertyChecker {
 public:
  explicit Latch(const CheckOptions& options) : found_(options.max_violations) {}

  // getCount replies of 0 or nil: the read that lets an await return. (The simulator's latch
  // labels it "get_count"; execs name the client, not the thread.)
  bool WantsEvents() const override { return true; }

  void OnEvent(const FactsPass& f, const history::Event& e) override {
    if (!f.protocol().latch()) return;
    if (e.type != history::EventType::kExec || e.peer == history::names::kNone) return;
    if (e.op != history::names::kGetCount) {
      if (e.thread >= 0 && f.names().Str(e.op) == "count_down") OnCountDownExec(f, e);
      return;
    }
    std::string scratch;
    std::string_view reply = history::Trim(history::ReplyText(e, &scratch));
    if (reply.size() >= 2 && reply.front() == '"' && reply.back() == '"') {
      reply = reply.substr(1, reply.size() - 2);
    }
    const auto count = history::ParseInt(reply);
    if (!history::IsNilReply(reply) && !(count && *count <= 0)) return;
    const int reader = f.ProcessNamed(e.peer);
    for (State& l : locks_) {
      for (auto& [id, await] : l.waiting) {
        if (f.ProcessOfThread(await.thread) == reader) await.read_remaining = l.remaining;
      }
    }
  }

  void OnLease(const FactsPass& f, const history::LeaseFact& le) override {
    if (!f.protocol().latch()) return;
    State& l = LockOf(le.lock);
    if (le.kind == history::LeaseKind::kExpired || le.kind == history::LeaseKind::kLost) {
      if (l.remaining >= 0 && l.losses.size() < history::kLossesKept) {
        l.losses.push_back({le.seq, le.t_us, le.node, le.kind});
      }
      return;
    }
    if (le.kind != history::LeaseKind::kAcquired) return;
    const auto count = history::CountOf(le.detail);
    if (!count || *count <= 0) return;
    l.remaining = *count;
    l.count = *count;
    l.set_seq = le.seq;
    l.set_us = le.t_us;
    l.set_node = le.node;
    l.counted = 0;
    l.losses.clear();
  }

  void OnOpInvoked(const FactsPass& f, const Op& op) override {
    if (!f.protocol().latch()) return;
    State& l = LockOf(op.lock);
    switch (op.kind) {
      case history::OpKind::kAcquire:
        l.waiting.emplace_back(op.id, Await{op.thread, l.remaining <= 0, -2});
        break;
      case history::OpKind::kRelease:
        if (l.remaining > 0) {
          ++l.counted;
          if (--l.remaining == 0) OpenNow(l);
        } else {
          l.pending.push_back(op.id);  // Counted if its decrement lands on a latch after all.
        }
        break;
      case history::OpKind::kForceUnlock:
        if (l.remaining > 0) {
          l.remaining = 0;
          OpenNow(l);
        }
        break;
      case history::OpKind::kOther: break;
    }
  }

  void OnOpEnded(const FactsPass& f, const Op& op) override {
    if (!f.protocol().latch()) return;
    if (op.kind == history::OpKind::kRelease) std::erase(LockOf(op.lock).pending, op.id);
    if (op.kind != history::OpKind::kAcquire) return;
    State& l = LockOf(op.lock);
    auto it = std::find_if(l.waiting.begin(), l.waiting.end(),
                           [&](const auto& w) { return w.first == op.id; });
    if (it == l.waiting.end()) return;
    const Await await = it->second;
    l.waiting.erase(it);
    if (op.outcome != history::Outcome::kOk) return;
    // Judged by the read that let it return when the history has it; otherwise it passed
    // rightly if nothing remained at any moment of its flight.
    const bool opened_early = await.read_remaining != -2 ? await.read_remaining > 0
                                                         : l.remaining > 0 && !await.saw_open;
    if (!opened_early) return;
    const FindingKey key{op.end_us, op.end_seq, 0, static_cast<int64_t>(early_++), history::kNone,
                         history::kNone};
    if (auto [number, x] = found_.Add(key); x != nullptr) {
      *x = Early{op, l.count, l.set_seq, l.set_us, l.set_node, l.counted, l.losses};
    }
  }

  PropertyResult Result(const Narrator& n) override {
    if (!n.facts().protocol().latch()) return NotApplicable(kLatch);
    return Conclude(kLatch, found_, [&](const FindingKey&, const Early& e) {
      const Op& op = e.op;
      Violation v;
      v.kind = "opened_early";
      v.to_us = op.end_us;
      v.threads = {n.Thread(op.thread)};
      v.events = {e.set_seq, op.invoke_seq, op.end_seq};
      v.explanation = n.Thread(op.thread) + "'s await of latch " + n.Lock(op.lock) +
                      " (invoked at " + Seconds(op.invoke_us) + ") returned at " +
                      Seconds(op.end_us) + ", but the latch had been created on " +
                      n.ProcessName(e.set_node) + " at " + Seconds(e.set_us) + " with count " +
                      std::to_string(e.count) + " and only " +
                      Count(static_cast<size_t>(e.counted), "countDown") +
                      " had been invoked since: an await must not return before the count " +
                      "reaches 0.";
      for (const history::LossRecord& lost : e.losses) {
        v.events.push_back(lost.seq);
        v.explanation += std::string(" The latch key ") +
                         (lost.kind == history::LeaseKind::kExpired ? "expired" : "was lost") +
                         " on " + n.ProcessName(lost.node) + " at " + Seconds(lost.t_us) +
                         ", without being counted down.";
      }
      v.explanation += n.Faults(e.set_us, op.end_us, op.end_us, {n.ProcessOfThread(op.thread)},
                                &v.events);
      return v;
    });
  }

 private:
  struct Await {
    int thread = history::kNone;
    bool saw_open = false;        // In flight while nothing remained.
    int64_t read_remaining = -2;  // What remained at its client's last zero read; -2: none.
  };
  struct State {
    int64_t remaining = -1;  // -1: no latch created yet.
    int64_t count = 0;
    history::Seq set_seq = 0;
    int64_t set_us = 0;
    int set_node = history::kNone;
    int64_t counted = 0;
    std::vector<history::LossRecord> losses;
    std::vector<std::pair<uint64_t, Await>> waiting;  // Awaits in flight, by op id.
    std::vector<uint64_t> pending;  // countDowns invoked with nothing to count, not yet run.
  };

  // A countDown's count_down exec: one invoked while there was nothing to count takes one off
  // now if a latch was created meanwhile (its first exec decides; a retry does not count again).
  void OnCountDownExec(const FactsPass& f, const history::Event& e) {
    const int thread = f.ExecThread(e);
    if (thread == history::kNone) return;
    const Op* op = f.OpOf(thread);
    if (op == nullptr || op->kind != history::OpKind::kRelease) return;
    State& l = LockOf(op->lock);
    const auto it = std::find(l.pending.begin(), l.pending.end(), op->id);
    if (it == l.pending.end()) return;
    l.pending.erase(it);
    if (l.remaining > 0) {
      ++l.counted;
      if (--l.remaining == 0) OpenNow(l);
    }
  }

  State& LockOf(int lock) {
    if (locks_.size() <= static_cast<size_t>(lock)) locks_.resize(lock + 1);
    return locks_[lock];
  }
  static void OpenNow(State& l) {
    for (auto& [id, await] : l.waiting) await.saw_open = true;
  }

  Findings<Early> found_;
  uint64_t early_ = 0;
  std::vector<State> locks_;
};

}  // namespace

std::unique_ptr<PropertyChecker> MakeLatch(const CheckOptions& options) {
  return std::make_unique<Latch>(options);
}

}  // namespace lockstep::check
