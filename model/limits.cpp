#include "model/limits.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>

namespace lockstep {

namespace {

// "0.004 ms", "60000 ms": microseconds as the file writes them.
std::string Ms(double us) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.15g ms", us / 1000);
  return buf;
}

}  // namespace

double MeanUs(const Distribution& d) {
  double mean = d.a;
  switch (d.kind) {
    case Distribution::Kind::kFixed:
    case Distribution::Kind::kExponential: break;
    case Distribution::Kind::kUniform: mean = (d.a + d.b) / 2; break;
    case Distribution::Kind::kNormal: mean = std::max(0.0, d.a); break;
    case Distribution::Kind::kPareto: mean = d.b > 1 ? d.a * d.b / (d.b - 1) : d.a; break;
  }
  if (d.cap > 0) mean = std::min(mean, d.cap);
  return std::max(0.0, mean);
}

std::optional<std::string> RunBoundsProblem(const Scenario& s) {
  const double duration_us = static_cast<double>(s.duration_us);
  if (s.duration_us > kMaxRunDurationMs * 1000) {
    return "duration_ms is " + Ms(duration_us) + "; a run lasts at most " +
           Ms(static_cast<double>(kMaxRunDurationMs) * 1000) + " (one simulated day)";
  }
  int64_t threads = 0;
  for (const ClientSpec& c : s.clients) threads += c.threads;
  if (threads > kMaxThreads) {
    return "the " + std::to_string(s.clients.size()) + " client processes have " +
           std::to_string(threads) + " threads in all; at most " + std::to_string(kMaxThreads) +
           " (fewer clients, or fewer threads per client)";
  }

  // Each iteration of a thread's loop takes at least its think time, its critical section
  // (workers) and a request and its reply, which the simulator makes at least 1 us each way.
  // Two round trips (an acquisition and a release) at the fastest link's mean latency.
  double latency_us = MeanUs(s.network.latency_us);
  for (const auto& [link, d] : s.network.link_latency_us) latency_us = std::min(latency_us, MeanUs(d));
  latency_us = std::max(1.0, latency_us);
  double run_iterations = 0;
  for (const ClientSpec& c : s.clients) {
    const WorkloadSpec w = Apply(s.workload, c.workload);
    const bool worker = c.role == ClientSpec::Role::kWorker;
    const double period_us =
        MeanUs(w.think_us) + (worker ? MeanUs(w.critical_us) : 0) + 4 * latency_us;
    double iterations = duration_us / period_us;
    if (w.ops_per_thread > 0) iterations = std::min(iterations, static_cast<double>(w.ops_per_thread));
    if (iterations > static_cast<double>(kMaxPeriodsPerProcess)) {
      return "client '" + c.name + "' would run about " +
             std::to_string(static_cast<int64_t>(iterations)) +
             " iterations per thread (duration_ms " + Ms(duration_us) + " over " +
             Ms(period_us) + " per iteration: think_ms" + (worker ? " + critical_ms" : "") +
             " + 4 x [network] latency_ms, by their means); at most " +
             std::to_string(kMaxPeriodsPerProcess) +
             ": lengthen think_ms, critical_ms or latency_ms, shorten duration_ms, or set "
             "ops_per_thread";
    }
    run_iterations += iterations * static_cast<double>(c.threads);
  }
  if (run_iterations > static_cast<double>(kMaxIterationsPerRun)) {
    return "the run's threads would run about " + std::to_string(static_cast<int64_t>(run_iterations)) +
           " iterations in all (each client group's iterations per thread times its threads); at "
           "most " + std::to_string(kMaxIterationsPerRun) +
           " per run: fewer clients or threads, a slower loop (think_ms, critical_ms, latency_ms), "
           "or a shorter duration_ms";
  }
  if (s.gc.enabled) {
    const double every_us = MeanUs(s.gc.every_us);
    const double pauses = every_us > 0 ? duration_us / every_us : INFINITY;
    if (pauses > static_cast<double>(kMaxPeriodsPerProcess)) {
      return "gc.every_ms has a mean of " + Ms(every_us) + ", about " +
             (std::isfinite(pauses) ? std::to_string(static_cast<int64_t>(pauses))
                                    : std::string("infinitely many")) +
             " GC pauses per client over duration_ms " + Ms(duration_us) + "; at most " +
             std::to_string(kMaxPeriodsPerProcess) + ": lengthen every_ms";
    }
  }
  return std::nullopt;
}

}  // namespace lockstep
