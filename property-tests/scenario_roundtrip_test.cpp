// Round-trip property: for every valid Scenario, writing it as a scenario file
// (model/scenario_write.h) and loading that file (model/scenario_toml.h) gives the same Scenario.
//
// The generator makes only scenarios a file could describe, with the loader's constraints
// (model/scenario_toml.h, docs/scenario-format.md): times as the file writes them (distribution
// parameters are a millisecond number times 1000, as the loader computes them; integer times any
// whole microsecond), names unique across nodes and clients, references to declared names,
// faults with the targets their kind takes, roles only for the kinds that take them (the
// count-down latch's await and count_down, the semaphore's permit changes), a cluster only
// without replicas, Sentinel and the multi-master kinds, and a [fuzz] table whose ranges are in
// order and whose versions the protocol kind has.
//
//
// CTest pins rapidcheck's seed (RC_PARAMS, CMakeLists.txt); set RC_PARAMS to explore others.
#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "history/kinds.h"
#include "history/notes.h"
#include "model/scenario_toml.h"
#include "model/scenario_write.h"

namespace lockstep {

// rapidcheck shows a failing Scenario as the file it becomes.
void showValue(const Scenario& s, std::ostream& os) { os << "\n" << ScenarioToToml(s); }

}  // namespace lockstep

namespace {

namespace fs = std::filesystem;
namespace gen = rc::gen;

using lockstep::ClientSpec;
using lockstep::ClockSpec;
using lockstep::Distribution;
using lockstep::Expectation;
using lockstep::FaultSpec;
using lockstep::NodeSpec;
using lockstep::Scenario;
using lockstep::WorkloadOverride;
using lockstep::WorkloadSpec;

fs::path RepoRoot() { return fs::path(LOCKSTEP_SOURCE_DIR).lexically_normal(); }

// The largest time any *_ms key takes, in microseconds.
constexpr int64_t kMaxUs = lockstep::kMaxDurationMs * 1000;

// Scenario::file says where the text came from and FaultSpec::line where each [[faults]] header
// stands in it; both legitimately differ between a file and its rewrite. Only these two are
// cleared before comparing.
Scenario WithoutOrigin(Scenario s) {
  s.file.clear();
  for (FaultSpec& f : s.faults) f.line = 0;
  return s;
}

// ---- Numbers as a file writes them -------------------------------------------------------

// A decimal number with up to `max_decimals` digits after the point, from 0 to about `max`,
// as the loader reads it: the nearest double to k / 10^d, which is what dividing gives.
double Decimal(double max, int max_decimals) {
  const int decimals = *gen::inRange(0, max_decimals + 1);
  double scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  const double limit = std::min(max * scale, 9e15);  // Integers below 2^53 are exact.
  const auto units = *gen::inRange<int64_t>(0, static_cast<int64_t>(limit) + 1);
  return static_cast<double>(units) / scale;
}

// A distribution parameter: milliseconds in the file, ms * 1000 in the Scenario (unrounded, as
// the loader computes it). Small values are the common case.
double ParamUs(bool positive) {
  const double max_ms = *gen::element(1.0, 1000.0, 1e6, static_cast<double>(lockstep::kMaxDurationMs));
  double ms = Decimal(max_ms, 6);
  // A value that must be above 0 must stay so in whole microseconds (the loader's rule).
  if (positive && std::llround(ms * 1000) == 0) ms = 0.001;
  return ms * 1000;
}

// Any whole microsecond in [min, max]: every one has an exact decimal of milliseconds.
int64_t Us(int64_t min, int64_t max) {
  // Mostly whole milliseconds of modest size, as people write them; sometimes anything.
  return *gen::weightedOneOf<int64_t>({
      {3, gen::map(gen::inRange<int64_t>(std::max<int64_t>(min, 0) / 1000,
                                         std::min<int64_t>(max, 100'000'000) / 1000 + 1),
                   [min, max](int64_t ms) { return std::clamp(ms * 1000, min, max); })},
      {1, gen::inRange<int64_t>(min, max + (max < std::numeric_limits<int64_t>::max() ? 1 : 0))},
  });
}

Distribution Dist() {
  using Kind = Distribution::Kind;
  Distribution d;
  d.kind = *gen::element(Kind::kFixed, Kind::kUniform, Kind::kExponential, Kind::kNormal,
                         Kind::kPareto);
  switch (d.kind) {
    case Kind::kFixed: d.a = ParamUs(false); break;
    case Kind::kUniform: {
      const double x = ParamUs(false);
      const double y = ParamUs(false);
      d.a = std::min(x, y);
      d.b = std::max(x, y);
      break;
    }
    case Kind::kExponential: d.a = ParamUs(true); break;
    case Kind::kNormal:
      d.a = ParamUs(false);
      d.b = ParamUs(false);
      break;
    case Kind::kPareto:
      d.a = ParamUs(true);
      d.b = Decimal(10, 4);  // shape: no unit
      if (d.b == 0) d.b = 1.5;
      break;
  }
  if (*gen::weightedElement<bool>({{3, false}, {1, true}})) d.cap = ParamUs(true);
  return d;
}

// ---- Strings and names -------------------------------------------------------------------

// One line of text as description and lock_name take it: visible characters only (no controls
// or zero-width marks), TOML's awkward ones included.
std::string VisibleText(bool non_empty) {
  static const std::vector<std::string> kPieces = {
      "lock", "a", "Z", "0", " ", "\"", "\\", "#", "=", "{}", "[]", "'",
      "é", "→", "日本", "${x}", "\\u0041", "'''", "\"\"\""};
  std::string out;
  const int pieces = *gen::inRange(non_empty ? 1 : 0, 8);
  for (int i = 0; i < pieces; ++i) out += *gen::elementOf(kPieces);
  return out;
}

// A scenario name: it names the output folder, so only name characters, and not only dots.
std::string ScenarioName() {
  static const std::vector<std::string> kPieces = {"lock", "a", "Z", "0", "_", "-", ".", "x9"};
  std::string out = *gen::elementOf(kPieces);
  const int pieces = *gen::inRange(0, 6);
  for (int i = 0; i < pieces; ++i) out += *gen::elementOf(kPieces);
  if (out.find_first_not_of('.') == std::string::npos) out += "n";
  return out;
}

// ---- Sections ----------------------------------------------------------------------------

ClockSpec Clock(int64_t duration_us) {
  ClockSpec c;
  if (*gen::weightedElement<bool>({{2, true}, {1, false}})) return c;  // Most clocks are perfect.
  if (*gen::arbitrary<bool>()) c.offset_us = Us(-kMaxUs, kMaxUs);
  if (*gen::arbitrary<bool>()) {
    c.drift_ppm = Decimal(lockstep::kMaxDriftPpm, 3) * (*gen::arbitrary<bool>() ? 1 : -1);
  }
  c.ntp = *gen::arbitrary<bool>();
  if (*gen::arbitrary<bool>()) {
    c.slew_ppm = Decimal(lockstep::kMaxDriftPpm, 3);
    if (c.slew_ppm == 0) c.slew_ppm = 1;
  }
  const int jumps = *gen::inRange(0, 4);
  for (int i = 0; i < jumps; ++i) {
    ClockSpec::Jump j;
    j.at_us = Us(0, duration_us - 1);
    j.by_us = Us(1, kMaxUs) * (*gen::arbitrary<bool>() ? 1 : -1);
    c.jumps.push_back(j);
  }
  return c;
}

// A non-empty subset of `names`, in their order or reversed (the loader keeps either).
std::vector<std::string> Subset(const std::vector<std::string>& names) {
  assert(!names.empty());
  const auto picked = *gen::container<std::vector<bool>>(names.size(), gen::arbitrary<bool>());
  std::vector<std::string> out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (picked[i]) out.push_back(names[i]);
  }
  if (out.empty()) out.push_back(names[*gen::inRange<size_t>(0, names.size())]);
  if (*gen::arbitrary<bool>()) std::reverse(out.begin(), out.end());
  return out;
}

// The script files a generated scenario may name: any regular file will do for the loader.
const std::vector<std::string>& ScriptFiles() {
  static const std::vector<std::string> files = [] {
    std::vector<std::string> out;
    for (const fs::path& dir : {RepoRoot() / "lua" / "rlock" / "v3.13.6",
                               RepoRoot() / "scenarios" / "testdata" / "broken-scripts" / "rlock",
                               RepoRoot() / "scenarios" / "scripts"}) {
      for (const auto& e : fs::directory_iterator(dir)) {
        // Lua files only: the loader compiles every script it is given.
        if (e.is_regular_file() && e.path().extension() == ".lua") {
          out.push_back(e.path().lexically_normal().string());
        }
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }();
  return files;
}

// What the generated scenario is declared with, for the references made later.
struct Names {
  std::vector<std::string> nodes;
  std::vector<std::string> masters_with_replicas;
  std::vector<std::string> clients;
  std::vector<std::string> all;  // Nodes and clients.
};

void GenNodes(Scenario* s, bool cluster, Names* names) {
  const int count = *gen::inRange(1, 6);
  for (int i = 0; i < count; ++i) {
    NodeSpec node;
    static const std::vector<std::string> kPrefixes = {"n", "redis-", "r.a_"};
    node.name = *gen::elementOf(kPrefixes) + std::to_string(i + 1);
    node.persistence = *gen::element(NodeSpec::Persistence::kNone,
                                     NodeSpec::Persistence::kAofEverySec,
                                     NodeSpec::Persistence::kAofAlways);
    std::vector<std::string> masters;
    for (const NodeSpec& n : s->nodes) {
      if (n.replica_of.empty()) masters.push_back(n.name);
    }
    if (!cluster && !masters.empty() && *gen::arbitrary<bool>()) {
      node.replica_of = *gen::elementOf(masters);
      auto& with = names->masters_with_replicas;
      if (std::find(with.begin(), with.end(), node.replica_of) == with.end()) {
        with.push_back(node.replica_of);
      }
    }
    node.clock = Clock(s->duration_us);
    names->nodes.push_back(node.name);
    names->all.push_back(node.name);
    s->nodes.push_back(std::move(node));
  }
}

// Clients as a file declares them: named ones and `count` groups, numbered per prefix as the
// loader numbers them, so that the writer has groups to find (and names that only look like
// a group's).
// A group's own workload fields, each set or not; side only where the kind has two, a lease of
// 0 or less only where the kind takes one.
WorkloadOverride GenWorkloadOverride(const lockstep::history::ProtocolKind& kind) {
  WorkloadOverride o;
  if (*gen::arbitrary<bool>()) return o;
  if (*gen::arbitrary<bool>()) {
    o.mode = *gen::element(WorkloadSpec::Mode::kLock, WorkloadSpec::Mode::kTryLock);
  }
  if (*gen::arbitrary<bool>()) o.wait_us = Us(-kMaxUs, kMaxUs);
  if (*gen::arbitrary<bool>()) {
    o.lease_us = kind.ttl_lease ? *gen::element<int64_t>(-1, Us(1, kMaxUs)) : Us(-kMaxUs, kMaxUs);
    if (*o.lease_us == -1000) o.lease_us = -1;  // -1 ms is stored as -1, "none given".
  }
  if (*gen::arbitrary<bool>()) o.critical_us = Dist();
  if (*gen::arbitrary<bool>()) o.think_us = Dist();
  if (*gen::arbitrary<bool>()) o.reentry = *gen::inRange(1, lockstep::kMaxReentry + 1);
  if (kind.cls == lockstep::history::KindClass::kRw && *gen::arbitrary<bool>()) {
    o.side = *gen::element(WorkloadSpec::Side::kRead, WorkloadSpec::Side::kWrite);
  }
  if (*gen::arbitrary<bool>()) o.stagger_us = Us(0, kMaxUs);
  if (*gen::arbitrary<bool>()) o.ops_per_thread = *gen::inRange<int64_t>(0, INT64_MAX);
  return o;
}

void GenClients(Scenario* s, const lockstep::history::ProtocolKind& kind, Names* names) {
  // The roles the kind takes, worker first.
  std::vector<ClientSpec::Role> roles = {ClientSpec::Role::kWorker};
  for (const ClientSpec::Role role :
       {ClientSpec::Role::kAwait, ClientSpec::Role::kCountDown, ClientSpec::Role::kAddPermits,
        ClientSpec::Role::kReducePermits, ClientSpec::Role::kTrySetPermits,
        ClientSpec::Role::kDrainPermits}) {
    if (lockstep::history::TakesRole(
            kind, lockstep::history::RoleName(static_cast<lockstep::history::RoleNote::Role>(role)))) {
      roles.push_back(role);
    }
  }
  std::map<std::string, int> generated;
  const int declarations = *gen::inRange(1, 5);
  for (int i = 0; i < declarations; ++i) {
    ClientSpec client;
    client.threads = *gen::weightedOneOf<int>(
        {{4, gen::inRange(1, 5)}, {1, gen::inRange(1, lockstep::kMaxThreadsPerClient + 1)}});
    if (roles.size() > 1) client.role = *gen::elementOf(roles);
    client.clock = Clock(s->duration_us);
    client.workload = GenWorkloadOverride(kind);
    std::vector<std::string> new_names;
    if (*gen::arbitrary<bool>()) {
      static const std::vector<std::string> kNames = {"c", "w", "late", "x.y-"};
      new_names.push_back(*gen::elementOf(kNames) + std::to_string(*gen::inRange(1, 6)));
    } else {
      static const std::vector<std::string> kPrefixes = {"c", "w", "worker_"};
      const std::string prefix = *gen::elementOf(kPrefixes);
      const int count = *gen::inRange(1, 5);
      for (int k = 0; k < count; ++k) {
        new_names.push_back(prefix + std::to_string(generated[prefix] + k + 1));
      }
      generated[prefix] += count;
    }
    for (const std::string& name : new_names) {
      // A name already taken would make the file invalid; that client is left out.
      if (std::find(names->all.begin(), names->all.end(), name) != names->all.end()) continue;
      client.name = name;
      names->clients.push_back(name);
      names->all.push_back(name);
      s->clients.push_back(client);
    }
  }
  if (s->clients.empty()) {  // Every declaration collided: one more, surely new.
    ClientSpec client;
    client.name = "only";
    names->clients.push_back(client.name);
    names->all.push_back(client.name);
    s->clients.push_back(client);
  }
}

FaultSpec GenFault(const Scenario& s, const Names& names) {
  using Kind = FaultSpec::Kind;
  std::vector<Kind> kinds = {Kind::kPartition,   Kind::kCrash,   Kind::kPause, Kind::kClockJump,
                             Kind::kLoseReplies, Kind::kLatency, Kind::kLoss,  Kind::kDuplicate,
                             Kind::kFsyncStall};
  if (!names.masters_with_replicas.empty()) kinds.push_back(Kind::kFailover);
  FaultSpec f;
  f.kind = *gen::elementOf(kinds);
  f.at_us = Us(0, s.duration_us - 1);
  switch (f.kind) {
    case Kind::kPartition: {
      std::vector<std::string> sides = names.all;
      if (s.sentinel.enabled) sides.push_back("sentinel");
      // Each name on side A, side B or neither; at least one on each side.
      const auto side = *gen::container<std::vector<int>>(sides.size(), gen::inRange(0, 3));
      const size_t a = *gen::inRange<size_t>(0, sides.size());
      size_t b = *gen::inRange<size_t>(0, sides.size() - 1);
      if (b >= a) ++b;
      for (size_t i = 0; i < sides.size(); ++i) {
        const int where = i == a ? 1 : i == b ? 2 : side[i];
        if (where == 1) f.targets.push_back(sides[i]);
        if (where == 2) f.peers.push_back(sides[i]);
      }
      f.duration_us = Us(1, kMaxUs);
      f.one_way = *gen::arbitrary<bool>();
      break;
    }
    case Kind::kCrash:
      f.targets = Subset(names.all);
      f.duration_us = *gen::arbitrary<bool>() ? 0 : Us(0, kMaxUs);
      break;
    case Kind::kPause:
      f.targets = Subset(names.all);
      f.duration_us = Us(1, kMaxUs);
      break;
    case Kind::kClockJump:
      f.targets = Subset(names.all);
      f.by_us = Us(1, kMaxUs) * (*gen::arbitrary<bool>() ? 1 : -1);
      break;
    case Kind::kFailover: f.targets = Subset(names.masters_with_replicas); break;
    case Kind::kLoseReplies:
    case Kind::kFsyncStall:
      f.targets = Subset(names.nodes);
      f.duration_us = Us(1, kMaxUs);
      break;
    case Kind::kLatency:
    case Kind::kLoss:
    case Kind::kDuplicate: {
      f.targets = Subset(names.all);
      // Peers are optional: the other ends of the targets' links, none of them a target.
      std::vector<std::string> others;
      for (const std::string& name : names.all) {
        if (std::find(f.targets.begin(), f.targets.end(), name) == f.targets.end()) {
          others.push_back(name);
        }
      }
      if (!others.empty() && *gen::arbitrary<bool>()) f.peers = Subset(others);
      f.duration_us = Us(1, kMaxUs);
      if (f.kind == Kind::kLatency) {
        f.extra_us = Us(1, kMaxUs);
      } else {
        f.rate = Decimal(1, 4);  // A probability above 0.
        if (f.rate == 0) f.rate = 1;
      }
      break;
    }
  }
  return f;
}

// A [fuzz] range from min to max with both bounds drawn by `bound` (sometimes one number).
lockstep::FuzzRange Range(const std::function<double()>& bound) {
  const double x = bound();
  const double y = *gen::arbitrary<bool>() ? x : bound();
  return {std::min(x, y), std::max(x, y)};
}

// [fuzz] ranges of times are whole microseconds (the loader rounds them as any duration).
double RangeUs(int64_t min) { return static_cast<double>(Us(min, kMaxUs)); }

lockstep::FuzzSpec GenFuzz(const lockstep::history::ProtocolKind& kind) {
  lockstep::FuzzSpec f;
  if (*gen::arbitrary<bool>()) {
    for (std::string_view k : lockstep::kFuzzFaultKinds) {
      if (*gen::arbitrary<bool>()) f.faults[std::string(k)] = Decimal(100, 2);
    }
  }
  const auto count = [](int64_t lo, int64_t hi) {
    return [lo, hi] { return static_cast<double>(*gen::inRange<int64_t>(lo, hi + 1)); };
  };
  if (*gen::arbitrary<bool>()) f.fault_count = Range(count(0, lockstep::kMaxFaults));
  // Weights that are all 0 leave nothing to draw a fault from.
  const bool all_zero = std::all_of(f.faults.begin(), f.faults.end(),
                                    [](const auto& kv) { return kv.second == 0; });
  if (!f.faults.empty() && all_zero && f.fault_count.max > 0) f.faults.begin()->second = 1;
  if (*gen::arbitrary<bool>()) f.fault_duration_us = Range([] { return RangeUs(1); });
  if (*gen::arbitrary<bool>()) f.clock_jump_us = Range([] { return RangeUs(1); });
  if (*gen::arbitrary<bool>()) {
    f.drift_ppm = Range([] { return Decimal(lockstep::kMaxDriftPpm, 3); });
  }
  if (*gen::arbitrary<bool>()) f.latency_spike_us = Range([] { return RangeUs(1); });
  if (*gen::arbitrary<bool>()) f.loss_rate = Range([] { return Decimal(1, 4); });
  if (*gen::arbitrary<bool>()) f.duplicate_rate = Range([] { return Decimal(1, 4); });
  if (*gen::arbitrary<bool>()) f.clients = Range(count(1, lockstep::kMaxClients));
  if (*gen::arbitrary<bool>()) f.threads = Range(count(1, lockstep::kMaxThreadsPerClient));
  if (*gen::arbitrary<bool>()) f.lease_us = Range([] { return RangeUs(1); });
  if (*gen::arbitrary<bool>()) f.wait_us = Range([] { return RangeUs(0); });
  if (*gen::arbitrary<bool>()) f.critical_us = Range([] { return RangeUs(0); });
  if (*gen::arbitrary<bool>()) f.think_us = Range([] { return RangeUs(0); });
  if (*gen::arbitrary<bool>()) f.replication_lag_us = Range([] { return RangeUs(0); });
  if (*gen::arbitrary<bool>()) {
    // Kinds newer than 3.13.6 exist only as "current".
    for (std::string_view v : lockstep::kProtocolVersions) {
      if ((kind.added_in.empty() || v == "current") && *gen::arbitrary<bool>()) {
        f.versions.emplace_back(v);
      }
    }
    if (f.versions.empty()) f.versions.emplace_back("current");
    if (*gen::arbitrary<bool>()) std::reverse(f.versions.begin(), f.versions.end());
  }
  if (*gen::arbitrary<bool>()) f.max_events = *gen::inRange<int64_t>(1, INT64_MAX);
  if (*gen::arbitrary<bool>()) {
    f.max_case_s = Decimal(1e6, 3);
    if (f.max_case_s == 0) f.max_case_s = 0.5;
  }
  return f;
}

Scenario GenScenario() {
  Scenario s;
  s.name = ScenarioName();
  s.description = VisibleText(/*non_empty=*/false);
  s.seed = *gen::map(gen::arbitrary<uint64_t>(),
                     [](uint64_t x) { return x & static_cast<uint64_t>(INT64_MAX); });
  s.duration_us = Us(1, lockstep::kMaxRunDurationMs * 1000);
  if (*gen::arbitrary<bool>()) s.start_unix_ms = *gen::inRange<int64_t>(0, 253'402'300'800'000);

  const auto& kind =
      lockstep::kProtocolKinds[*gen::inRange<size_t>(0, std::size(lockstep::kProtocolKinds))];
  s.protocol.kind = &kind;
  // Kinds newer than 3.13.6 exist only as "current".
  s.protocol.version =
      kind.added_in.empty()
          ? static_cast<lockstep::history::ProtocolVersion>(
                *gen::inRange<size_t>(0, std::size(lockstep::kProtocolVersions)))
          : lockstep::history::ProtocolVersion::kCurrent;
  // A cluster has masters only, no Sentinel, and one lock (not redlock or multilock).
  const bool cluster =
      kind.cls != lockstep::history::KindClass::kQuorum && *gen::arbitrary<bool>();
  s.cluster.enabled = cluster;

  Names names;
  GenNodes(&s, cluster, &names);
  GenClients(&s, kind, &names);

  if (*gen::arbitrary<bool>()) s.network.latency_us = Dist();
  if (*gen::arbitrary<bool>()) s.network.loss = Decimal(1, 4);
  if (*gen::arbitrary<bool>()) s.network.duplicate = Decimal(1, 4);
  s.network.reorder = *gen::arbitrary<bool>();
  const int links = *gen::inRange(0, 4);
  for (int i = 0; i < links && names.all.size() >= 2; ++i) {
    const std::string from = *gen::elementOf(names.all);
    const std::string to = *gen::elementOf(names.all);
    if (from != to) s.network.link_latency_us[from + "->" + to] = Dist();
  }
  if (*gen::arbitrary<bool>()) s.replication.lag_us = Dist();

  if (!cluster) s.sentinel.enabled = *gen::arbitrary<bool>();
  if (*gen::arbitrary<bool>()) s.sentinel.down_after_us = Us(1, kMaxUs);
  if (*gen::arbitrary<bool>()) s.sentinel.client_rediscover_us = Us(0, kMaxUs);

  if (*gen::arbitrary<bool>()) s.protocol.lock_name = VisibleText(/*non_empty=*/true);
  if (*gen::arbitrary<bool>()) {
    s.protocol.watchdog_timeout_us = Us(lockstep::kMinWatchdogTimeoutMs * 1000, kMaxUs);
  }
  if (*gen::arbitrary<bool>()) s.protocol.timeout_us = Us(lockstep::kMinTimeoutMs * 1000, kMaxUs);
  s.protocol.retry_attempts = *gen::inRange(0, lockstep::kMaxRetryAttempts + 1);
  if (*gen::arbitrary<bool>()) s.protocol.retry_interval_us = Us(0, kMaxUs);
  if (*gen::arbitrary<bool>()) s.protocol.fair_wait_timeout_us = Us(1, kMaxUs);
  s.protocol.permits = *gen::inRange<int64_t>(0, 1'000'001);
  for (std::string_view script : kind.scripts) {
    if (!script.empty() && *gen::weightedElement<bool>({{3, false}, {1, true}})) {
      s.protocol.script_files[std::string(script)] = *gen::elementOf(ScriptFiles());
    }
  }

  WorkloadSpec& w = s.workload;
  w.mode = *gen::element(WorkloadSpec::Mode::kLock, WorkloadSpec::Mode::kTryLock);
  if (*gen::arbitrary<bool>()) w.wait_us = Us(-kMaxUs, kMaxUs);
  if (*gen::arbitrary<bool>()) {
    w.lease_us = kind.ttl_lease ? Us(1, kMaxUs) : Us(-kMaxUs, kMaxUs);
    if (w.lease_us == -1000) w.lease_us = -1;  // -1 ms is stored as -1, "none given".
  }
  if (*gen::arbitrary<bool>()) w.critical_us = Dist();
  if (*gen::arbitrary<bool>()) w.think_us = Dist();
  w.reentry = *gen::inRange(1, lockstep::kMaxReentry + 1);
  if (*gen::arbitrary<bool>()) w.read_ratio = Decimal(1, 3);
  if (*gen::arbitrary<bool>()) w.stagger_us = Us(0, kMaxUs);
  if (*gen::arbitrary<bool>()) w.ops_per_thread = *gen::inRange<int64_t>(0, INT64_MAX);
  s.resource.fencing = *gen::arbitrary<bool>();

  const int faults = *gen::inRange(0, 7);
  for (int i = 0; i < faults; ++i) s.faults.push_back(GenFault(s, names));

  if (*gen::arbitrary<bool>()) {
    s.gc.enabled = *gen::weightedElement<bool>({{3, true}, {1, false}});
    if (*gen::arbitrary<bool>()) s.gc.clients = Subset(names.clients);
    // The time between pauses needs a mean above 0.
    s.gc.every_us = *gen::suchThat(gen::exec(Dist), [](const Distribution& d) {
      return d.kind == Distribution::Kind::kUniform ? d.a + d.b > 0 : d.a > 0;
    });
    s.gc.pause_us = Dist();
  }
  if (*gen::arbitrary<bool>()) s.liveness_bound_us = Us(0, kMaxUs);
  for (std::string_view property : lockstep::kProperties) {
    if (*gen::arbitrary<bool>()) {
      s.expect[std::string(property)] =
          *gen::element(Expectation::kHold, Expectation::kViolated, Expectation::kAny);
    }
  }
  if (*gen::arbitrary<bool>()) s.fuzz = GenFuzz(kind);
  return s;
}

}  // namespace

TEST_CASE("a written scenario loads back as the same Scenario", "[property][scenario]") {
  rc::prop("LoadScenarioString(ScenarioToToml(s)) == s", [] {
    const Scenario s = *gen::exec(GenScenario);
    // The file's directory decides how script paths are written: beside them (relative), in
    // the repository (relative, a folder or two up) or far away (absolute).
    const fs::path directory = *gen::element(
        RepoRoot() / "scenarios" / "testdata" / "broken-scripts" / "rlock",
        RepoRoot() / "property-tests", RepoRoot(), fs::path("/nonexistent/elsewhere"));
    lockstep::ScenarioWriteOptions options;
    options.header = "generated by property-tests/scenario_roundtrip_test.cpp";
    options.directory = directory.string();
    const std::string text = lockstep::ScenarioToToml(s, options);
    lockstep::ScenarioError error;
    const std::optional<Scenario> loaded =
        lockstep::LoadScenarioString(text, (directory / "generated.toml").string(), &error);
    RC_LOG() << "--- written ---\n" << text;
    if (!loaded) RC_FAIL("the loader refused the text: " + error.ToString());
    if (WithoutOrigin(*loaded) != WithoutOrigin(s)) {
      RC_FAIL("loaded back different; written again:\n" +
              lockstep::ScenarioToToml(*loaded, options));
    }
  });
}
