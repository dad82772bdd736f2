// fencing: the protected resource sees fencing tokens only increase.
//
// Protocols with tokens (kind fencedlock, or an unknown kind whose acquire oks carry values).
// Per lock, the tokens of acquire oks (reentries included) in history order must strictly
// increase: an ok whose token is <= the highest token of an earlier ok is a violation
// "token_not_increasing" (a failover to a replica that missed the counter's latest INCR hands
// out an old token again). Resource writes (the `exit` of an access, detail "accepted" or
// "rejected: ..."): each rejected write is an observation "rejected_write" (the fence working);
// an accepted write whose token is lower than one accepted earlier for the same lock is a
// violation "stale_write_accepted".
#include "check/property.h"
#include "history/notes.h"

namespace lockstep::check {

namespace {

using history::Event;
using history::FactsPass;
using history::Op;

enum FencingKind : uint8_t { kTokenNotIncreasing, kStaleWriteAccepted };

// A resource write as the explanation names it.
struct Write {
  history::Seq seq = 0;
  int64_t t_us = 0;
  std::string who;  // "c1.t0"
  std::string lock;
  int process = history::kNone;
  int64_t token = 0;
  std::string detail;
};

struct Finding {
  Op op;  // token_not_increasing: the acquisition, and the one with the higher token before it.
  Op prior;
  Write write;  // stale_write_accepted and rejected_write: the write, and the one before it.
  bool has_prior_write = false;
  Write prior_write;
};

class Fencing : public PropertyChecker {
 public:
  explicit Fencing(const CheckOptions& options)
      : token_found_(options.max_violations), found_(options.max_violations),
        rejected_(options.max_violations) {}

  void OnOpEnded(const FactsPass& f, const Op& op) override {
    // Tokens are judged for the fenced lock, and for a history that does not say its kind.
    if (f.protocol().known() && !f.protocol().fenced()) return;
    if (op.kind != history::OpKind::kAcquire || op.outcome != history::Outcome::kOk) return;
    if (!op.has_value) return;
    any_token_ = true;
    if (best_op_.size() <= static_cast<size_t>(op.lock)) best_op_.resize(op.lock + 1);
    std::optional<Op>& best = best_op_[op.lock];
    if (best && op.value <= best->value) {
      const FindingKey key{best->end_us, op.end_seq, kTokenNotIncreasing,
                           static_cast<int64_t>(op.id), static_cast<int64_t>(best->id),
                           history::kNone};
      if (auto [number, x] = token_found_.Add(key); x != nullptr) {
        x->op = op;
        x->prior = *best;
      }
    }
    if (!best || op.value > best->value) best = op;
  }

  bool WantsEvents() const override { return true; }

  void OnEvent(const FactsPass& f, const Event& e) override {
    if (e.type != history::EventType::kResource || e.op != history::names::kExit) return;
    if (!history::IsJudgedWrite(e)) return;  // A write the resource judged by its token.
    writes_ = true;
    if (!e.has_value) return;
    const int lock = LockIndex(e.lock);
    std::optional<Write>& best = best_write_[lock];
    const bool accepted = history::IsAcceptedWrite(e);
    const int64_t from_us = best ? best->t_us : e.t_us;
    const int64_t prior = best ? static_cast<int64_t>(best->seq) : history::kNone;
    if (!accepted) {
      const FindingKey key{e.t_us, e.seq, 0, static_cast<int64_t>(e.seq), prior, history::kNone};
      if (auto [number, x] = rejected_.Add(key); x != nullptr) {
        x->write = WriteOf(f, e);
        x->has_prior_write = best.has_value();
        if (best) x->prior_write = *best;
      }
      return;
    }
    if (best && e.value < best->token) {
      const FindingKey key{from_us, e.seq, kStaleWriteAccepted, static_cast<int64_t>(e.seq), prior,
                           history::kNone};
      if (auto [number, x] = found_.Add(key); x != nullptr) {
        x->write = WriteOf(f, e);
        x->has_prior_write = true;
        x->prior_write = *best;
      }
    }
    if (!best || e.value > best->token) best = WriteOf(f, e);
  }

  PropertyResult Result(const Narrator& n) override {
    const history::ProtocolInfo& p = n.facts().protocol();
    const bool tokens = p.fenced() || (!p.known() && any_token_);
    if (!tokens && !writes_) return NotApplicable(kFencing);
    // Tokens are judged only for protocols that have them.
    if (tokens) found_.Absorb(token_found_);
    PropertyResult result = Conclude(kFencing, found_, [&](const FindingKey& key, const Finding& x) {
      return Explain(n, key, x);
    });
    Observe(&result, rejected_, [&](const FindingKey&, const Finding& x) {
      Observation v;
      const Write& e = x.write;
      v.kind = "rejected_write";
      v.to_us = e.t_us;
      v.threads = {e.who};
      v.events = {e.seq};
      v.explanation = "The resource of \"" + e.lock + "\" rejected " + e.who + "'s write at " +
                      Seconds(e.t_us) + " with token " + std::to_string(e.token) + " (" + e.detail +
                      ")";
      if (x.has_prior_write) {
        const Write& prior = x.prior_write;
        v.events.push_back(prior.seq);
        v.explanation += "; it had accepted token " + std::to_string(prior.token) + " from " +
                         prior.who + " at " + Seconds(prior.t_us);
      }
      v.explanation += ". The fence kept a stale holder out.";
      return v;
    });
    return result;
  }

 private:
  int LockIndex(history::Name lock) {
    for (size_t i = 0; i < write_locks_.size(); ++i) {
      if (write_locks_[i] == lock) return static_cast<int>(i);
    }
    write_locks_.push_back(lock);
    best_write_.emplace_back();
    return static_cast<int>(write_locks_.size() - 1);
  }

  static Write WriteOf(const FactsPass& f, const Event& e) {
    Write w;
    w.seq = e.seq;
    w.t_us = e.t_us;
    w.who = std::string(f.names().Str(e.process)) + ".t" + std::to_string(e.thread);
    w.lock = std::string(f.names().Str(e.lock));
    w.process = f.ProcessNamed(e.process);
    w.token = e.value;
    w.detail = history::DetailText(e);
    return w;
  }

  static Violation Explain(const Narrator& n, const FindingKey& key, const Finding& x) {
    Violation v;
    if (key.kind == kTokenNotIncreasing) {
      const Op& op = x.op;
      const Op& prior = x.prior;
      v.kind = "token_not_increasing";
      v.to_us = op.end_us;
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
      return v;
    }
    const Write& e = x.write;
    const Write& prior = x.prior_write;
    v.kind = "stale_write_accepted";
    v.to_us = e.t_us;
    v.threads = {prior.who, e.who};
    v.events = {prior.seq, e.seq};
    v.explanation = "The resource of \"" + e.lock + "\" accepted " + e.who + "'s write at " +
                    Seconds(e.t_us) + " with token " + std::to_string(e.token) +
                    " although it had accepted token " + std::to_string(prior.token) + " from " +
                    prior.who + " at " + Seconds(prior.t_us) +
                    ": a fenced resource must reject the lower token.";
    std::vector<int> clients;
    for (int p : {prior.process, e.process}) {
      if (p != history::kNone) clients.push_back(p);
    }
    v.explanation += n.Faults(prior.t_us, e.t_us, e.t_us, clients, &v.events);
    return v;
  }

  bool any_token_ = false;
  bool writes_ = false;
  std::vector<std::optional<Op>> best_op_;  // By lock: the acquisition with the highest token.
  std::vector<history::Name> write_locks_;
  std::vector<std::optional<Write>> best_write_;  // By write_locks_ index.
  Findings<Finding> token_found_;
  Findings<Finding> found_;  // Writes; the tokens' join at the end.
  Findings<Finding> rejected_;
};

}  // namespace

std::unique_ptr<PropertyChecker> MakeFencing(const CheckOptions& options) {
  return std::make_unique<Fencing>(options);
}

}  // namespace lockstep::check
