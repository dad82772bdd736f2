#include "model/scenario_scale.h"

#include <cassert>
#include <cmath>

namespace lockstep {

namespace {

class Scaler {
 public:
  explicit Scaler(double factor) : factor_(factor) {}

  // Any duration: whole microseconds.
  int64_t Us(int64_t us) const { return static_cast<int64_t>(std::llround(us * factor_)); }

  // A value the client passes to Redisson's API or config: whole milliseconds, a positive one
  // at least 1 ms. Zero and negative values mean "none" or "at once" and keep their meaning.
  int64_t ApiUs(int64_t us) const {
    if (us <= 0) return us;
    const int64_t ms = std::llround(us * factor_ / 1000.0);
    return (ms < 1 ? 1 : ms) * 1000;
  }

  Distribution Dist(Distribution d) const {
    switch (d.kind) {
      case Distribution::Kind::kFixed:
      case Distribution::Kind::kExponential:
        d.a *= factor_;
        break;
      case Distribution::Kind::kUniform:
      case Distribution::Kind::kNormal:
        d.a *= factor_;
        d.b *= factor_;  // max; stddev
        break;
      case Distribution::Kind::kPareto:
        d.a *= factor_;  // x_min; alpha is a shape
        break;
    }
    d.cap *= factor_;
    return d;
  }

  ClockSpec Clock(ClockSpec c) const {
    c.offset_us = Us(c.offset_us);
    for (ClockSpec::Jump& j : c.jumps) {
      j.at_us = Us(j.at_us);
      j.by_us = Us(j.by_us);
    }
    return c;
  }

  WorkloadSpec Workload(WorkloadSpec w) const {
    w.wait_us = ApiUs(w.wait_us);
    w.lease_us = ApiUs(w.lease_us);
    w.critical_us = Dist(w.critical_us);
    w.think_us = Dist(w.think_us);
    w.stagger_us = Us(w.stagger_us);
    return w;
  }

  WorkloadOverride Override(WorkloadOverride o) const {
    if (o.wait_us) o.wait_us = ApiUs(*o.wait_us);
    if (o.lease_us) o.lease_us = ApiUs(*o.lease_us);
    if (o.critical_us) o.critical_us = Dist(*o.critical_us);
    if (o.think_us) o.think_us = Dist(*o.think_us);
    if (o.stagger_us) o.stagger_us = Us(*o.stagger_us);
    return o;
  }

 private:
  double factor_;
};

}  // namespace

Scenario ScaleTimes(const Scenario& scenario, double factor) {
  assert(factor > 0);
  if (factor == 1) return scenario;
  const Scaler s(factor);
  Scenario out = scenario;
  out.duration_us = s.Us(scenario.duration_us);
  for (NodeSpec& n : out.nodes) n.clock = s.Clock(n.clock);
  for (ClientSpec& c : out.clients) {
    c.clock = s.Clock(c.clock);
    c.workload = s.Override(c.workload);
  }
  out.network.latency_us = s.Dist(out.network.latency_us);
  for (auto& [link, latency] : out.network.link_latency_us) latency = s.Dist(latency);
  out.replication.lag_us = s.Dist(out.replication.lag_us);
  out.sentinel.down_after_us = s.ApiUs(out.sentinel.down_after_us);
  out.sentinel.client_rediscover_us = s.Us(out.sentinel.client_rediscover_us);
  ProtocolSpec& p = out.protocol;
  p.watchdog_timeout_us = s.ApiUs(p.watchdog_timeout_us);
  p.timeout_us = s.ApiUs(p.timeout_us);
  p.retry_interval_us = s.ApiUs(p.retry_interval_us);
  p.fair_wait_timeout_us = s.ApiUs(p.fair_wait_timeout_us);
  out.workload = s.Workload(out.workload);
  for (FaultSpec& f : out.faults) {
    f.at_us = s.Us(f.at_us);
    f.duration_us = s.Us(f.duration_us);
    f.by_us = s.Us(f.by_us);
    f.extra_us = s.Us(f.extra_us);
  }
  out.gc.every_us = s.Dist(out.gc.every_us);
  out.gc.pause_us = s.Dist(out.gc.pause_us);
  out.liveness_bound_us = s.Us(out.liveness_bound_us);
  return out;
}

}  // namespace lockstep
