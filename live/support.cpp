#include "live/support.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "history/fault_kinds.h"
#include "live/servers.h"

namespace lockstep::live {

namespace {

bool IsNode(const Scenario& s, const std::string& name) {
  return std::any_of(s.nodes.begin(), s.nodes.end(),
                     [&](const NodeSpec& n) { return n.name == name; });
}

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

std::string Where(const Scenario& s, const FaultSpec& f) {
  return s.file + ":" + std::to_string(f.line) + ": ";
}

}  // namespace

std::vector<std::string> LiveRefusals(const Scenario& scenario, bool own_servers,
                                      double time_scale) {
  std::vector<std::string> out;
  if (scenario.network.duplicate > 0) {
    out.push_back(scenario.file +
                  ": [network] duplicate > 0: a live replay cannot duplicate messages (TCP "
                  "delivers each byte once, and a command sent twice would desynchronise the "
                  "client's replies); set it to 0 for the replay");
  }
  if (scenario.network.reorder) {
    out.push_back(scenario.file +
                  ": [network] reorder = true: messages on one TCP connection arrive in order; "
                  "set reorder = false for the replay");
  }
  for (const FaultSpec& f : scenario.faults) {
    const bool names_sentinel =
        std::find(f.targets.begin(), f.targets.end(), "sentinel") != f.targets.end() ||
        std::find(f.peers.begin(), f.peers.end(), "sentinel") != f.peers.end();
    if (names_sentinel) {
      out.push_back(Where(scenario, f) +
                    "a fault that names \"sentinel\" cannot be made real: the sentinels talk to "
                    "the servers directly, not through the fault proxy; leave it out of the replay");
    }
    if (const history::FaultKindInfo& kind = history::InfoOf(f.kind); !kind.not_replayable.empty()) {
      out.push_back(Where(scenario, f) + "a fault of kind " + std::string(kind.name) +
                    " cannot be made real " + std::string(kind.not_replayable) +
                    "; remove it for the replay");
    }
  }
  if (scenario.sentinel.enabled && time_scale < 1) {
    // Sentinel's failover keeps a part no setting scales: kSentinelFixedDelayMs of real time,
    // 1 / time_scale times as much of the scenario's. Up to half of down_after_ms (the time
    // the scenario gives Sentinel to act) it is the scenario's failover, a little late; beyond
    // that it is another scenario, and the comparison would blame the emulator for it.
    const int64_t down_after_ms = scenario.sentinel.down_after_us / 1000;
    if (down_after_ms < 2 * kSentinelFixedDelayMs) {
      const double unscaled_ms = static_cast<double>(scenario.sentinel.down_after_us) / 1000.0 /
                                 time_scale;
      const double smallest =
          std::ceil(100.0 * 2.0 * static_cast<double>(kSentinelFixedDelayMs) / unscaled_ms) / 100.0;
      char remedy[96] = "this scenario replays only unscaled (no --time-scale)";
      if (smallest < 1) {
        std::snprintf(remedy, sizeof remedy,
                      "the smallest time scale that keeps it within half is %.2f", smallest);
      }
      char line[512];
      std::snprintf(
          line, sizeof(line),
          "%s: [sentinel] down_after_ms = %.0f becomes %lld ms at --time-scale %g, but a "
          "Sentinel failover lands up to %.1f s after the simulator's whatever the scale (a part "
          "of Sentinel's timing that no setting reaches: docs/live.md), which is %.1f s of this "
          "scenario's time, more than half its down_after_ms; %s",
          scenario.file.c_str(), unscaled_ms, static_cast<long long>(down_after_ms), time_scale,
          static_cast<double>(kSentinelFixedDelayMs) / 1000.0,
          static_cast<double>(kSentinelFixedDelayMs) / 1000.0 / time_scale,
          remedy);
      out.push_back(line);
    }
  }
  if (own_servers) return out;

  // The user's servers: lockstep controls neither their processes nor their configuration.
  const auto refuse = [&](const std::string& what) {
    out.push_back(scenario.file + ": " + what +
                  " needs control of the server processes, which --redis does not give; replay "
                  "without --redis (lockstep starts its own servers) or remove it");
  };
  for (const FaultSpec& f : scenario.faults) {
    const bool on_node = std::any_of(f.targets.begin(), f.targets.end(),
                                     [&](const std::string& t) { return IsNode(scenario, t); });
    std::string nodes;  // The nodes it names, for the message.
    for (const std::string& t : f.targets) {
      if (IsNode(scenario, t)) nodes += (nodes.empty() ? "" : ", ") + t;
    }
    switch (f.kind) {
      case FaultSpec::Kind::kCrash:
      case FaultSpec::Kind::kPause:
      case FaultSpec::Kind::kClockJump:
        if (on_node) {
          out.push_back(Where(scenario, f) + "a node " +
                        (f.kind == FaultSpec::Kind::kCrash   ? std::string("crash")
                         : f.kind == FaultSpec::Kind::kPause ? std::string("pause")
                                                             : std::string("clock jump")) +
                        " (of " + nodes + ") needs control of the server process, which "
                        "--redis does not give; replay without --redis or remove the fault");
        }
        break;
      case FaultSpec::Kind::kFailover:
        out.push_back(Where(scenario, f) + "a failover (of " + Join(f.targets) +
                      ") needs control of the servers, which --redis does not give; "
                      "replay without --redis or remove the fault");
        break;
      default: break;
    }
  }
  for (const NodeSpec& n : scenario.nodes) {
    if (!n.replica_of.empty()) refuse("node " + n.name + " as a replica (replica_of)");
    if (n.persistence != NodeSpec::Persistence::kNone) refuse("node " + n.name + "'s persistence");
    if (n.clock.offset_us != 0 || n.clock.drift_ppm != 0 || !n.clock.jumps.empty() || n.clock.ntp) {
      refuse("node " + n.name + "'s [clock]");
    }
  }
  if (scenario.sentinel.enabled) refuse("[sentinel]");
  if (scenario.cluster.enabled) refuse("[cluster]");
  // lockstep's own scripts take every key they touch through KEYS (or build it from one), so
  // the run's prefix covers them; a replaced script might name any key of the server.
  for (const auto& [name, file] : scenario.protocol.script_files) {
    out.push_back(scenario.file + ": [protocol.scripts] " + name + " = \"" + file +
                  "\": a replaced script could touch keys outside the run's prefix, which "
                  "lockstep cannot check on servers it did not start; replay it without --redis");
  }
  return out;
}

}  // namespace lockstep::live
