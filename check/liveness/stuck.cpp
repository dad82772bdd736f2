// liveness (c) "stuck": an operation of a live, unpaused process that never completes, invoked
// more than B + its wait before the end of the run (`lock(...)` without a wait waits forever and
// is exempt). Judged as the run's end closes the operations still in flight.
#include <cassert>

#include "check/liveness/rule.h"

namespace lockstep::check::liveness {

namespace {

using history::FactsPass;
using history::kNone;
using history::Op;

struct Payload {
  int64_t to_us = 0;
  AcquireRef op;
};

class Stuck : public Rule {
 public:
  Stuck(const CheckOptions& options, const LivenessFacts& facts)
      : facts_(facts), found_(options.max_violations) {}

  void OnOpEnded(const FactsPass& f, const Op& op) override {
    if (op.outcome != history::Outcome::kPending) return;
    const history::Process& p = f.processes()[f.ProcessOfThread(op.thread)];
    if (p.down() || p.paused()) return;  // Not a live process at the end.
    const int64_t bound_us = facts_.bound_us();
    if (op.wait_us == kForever || op.wait_us > kForever - bound_us - op.invoke_us) return;
    if (op.invoke_us + op.wait_us + bound_us >= f.run_end_us()) return;
    Payload payload;
    payload.to_us = f.run_end_us();
    payload.op = AcquireRef::Of(op);
    found_.Add(FindingKey{op.invoke_us, op.invoke_seq, kStuck, static_cast<int64_t>(op.id), kNone, kNone},
               std::move(payload));
  }

  size_t count() const override { return found_.count(); }
  std::vector<FindingKey> KeptKeys() const override { return found_.KeptKeys(); }
  void WriteUp(const Narrator& n, const FindingKey* last, std::vector<KeyedViolation>* out) const override {
    found_.WriteUp(last, out, [&](const FindingKey&, const Payload& p) { return Explain(n, p); });
  }

 private:
  Violation Explain(const Narrator& n, const Payload& p) const {
    const AcquireRef& op = p.op;
    const std::string& who = n.Thread(op.thread);
    const int64_t end = n.facts().run_end_us();
    const int64_t bound_us = facts_.bound_us();
    Violation v;
    v.kind = "stuck";
    v.to_us = p.to_us;
    v.threads = {who};
    v.events = {op.invoke_seq};
    const std::string detail = op.DetailText();
    v.explanation = who + "'s " + std::string(n.facts().names().Str(op.name)) + " of " + n.Lock(op.lock) +
                    (detail.empty() ? "" : " (" + detail + ")") + ", invoked at " + Seconds(op.invoke_us) +
                    ", never completed: the run ended at " + Seconds(end) + ", " + Seconds(end - op.invoke_us) +
                    " later, more than its wait (" + Seconds(op.wait_us) + ") plus the liveness bound (" +
                    Seconds(bound_us) + ").";
    v.explanation += n.Faults(op.invoke_us, end, op.invoke_us + op.wait_us + bound_us,
                              {n.ProcessOfThread(op.thread)}, &v.events);
    return v;
  }

  const LivenessFacts& facts_;
  RuleFindings<Payload> found_;
};

}  // namespace

std::unique_ptr<Rule> MakeStuck(const CheckOptions& options, const LivenessFacts& facts) {
  assert(facts.bound_us() >= 0);
  return std::make_unique<Stuck>(options, facts);
}

}  // namespace lockstep::check::liveness
