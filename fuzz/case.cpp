#include "fuzz/case.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "base/random.h"
#include "model/limits.h"
#include "model/scenario_toml.h"

namespace lockstep::fuzz {

namespace {

bool HasReplicatedMaster(const Scenario& s) {
  for (const NodeSpec& n : s.nodes) {
    if (!n.replica_of.empty()) return true;
  }
  return false;
}

int WorkerCount(const Scenario& s) {
  int n = 0;
  for (const ClientSpec& c : s.clients) n += c.role == ClientSpec::Role::kWorker;
  return n;
}

// Log-uniform in [lo, hi] (both >= 1), as an integer: as many short faults as long ones per
// factor of ten, which is where the interesting boundaries (a lease, a timeout) are spread.
int64_t LogUniform(Prng& rng, double lo, double hi) {
  lo = std::max(1.0, lo);
  hi = std::max(lo, hi);
  const double v = std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * rng.Uniform01());
  return std::clamp<int64_t>(std::llround(v), static_cast<int64_t>(std::ceil(lo)),
                             static_cast<int64_t>(std::floor(hi)));
}

int64_t UniformIn(Prng& rng, const FuzzRange& r) {
  const auto lo = static_cast<int64_t>(std::ceil(r.min));
  const auto hi = std::max(lo, static_cast<int64_t>(std::floor(r.max)));
  return rng.UniformInt(lo, hi);
}

TimeDraw DrawTime(Prng& rng, const FuzzRange& r) {
  TimeDraw t;
  t.us = UniformIn(rng, r);
  t.exponential = rng.Bernoulli(0.5) && t.us > 0;
  return t;
}

// A distribution parameter as a scenario file gives it: the file's milliseconds times 1000, so
// that the case written out and loaded again is the same case.
double FileParameter(int64_t us) { return (static_cast<double>(us) / 1000.0) * 1000.0; }

Distribution ToDistribution(const TimeDraw& t) {
  if (t.exponential) {
    return Distribution{Distribution::Kind::kExponential, FileParameter(t.us), 0, 0};
  }
  return Distribution::Fixed(FileParameter(t.us));
}

double MeanOf(const Distribution& d) {
  switch (d.kind) {
    case Distribution::Kind::kFixed:
    case Distribution::Kind::kExponential:
    case Distribution::Kind::kNormal:
      return d.a;
    case Distribution::Kind::kUniform:
      return (d.a + d.b) / 2;
    case Distribution::Kind::kPareto:
      return d.b > 1 ? d.a * d.b / (d.b - 1) : d.a * 2;
  }
  return d.a;
}

Distribution FixedAtMean(const Distribution& d) {
  double mean = std::round(MeanOf(d));
  if (d.cap > 0 && mean > d.cap) mean = std::floor(d.cap);
  return Distribution::Fixed(FileParameter(static_cast<int64_t>(mean)));
}

// A client name not taken by any node or client: c<k> for the smallest k from `from` up.
std::string FreshClientName(const Scenario& s, int from) {
  std::set<std::string> taken;
  for (const NodeSpec& n : s.nodes) taken.insert(n.name);
  for (const ClientSpec& c : s.clients) taken.insert(c.name);
  for (int k = from;; ++k) {
    std::string name = "c" + std::to_string(k);
    if (!taken.count(name)) return name;
  }
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

std::optional<FuzzPlan> MakePlan(const Scenario& base, std::string* error) {
  FuzzPlan plan;
  plan.weights.assign(kFuzzFaultKinds.size(), 0);
  const bool failover_applies = HasReplicatedMaster(base);
  if (base.fuzz.faults.empty()) {
    // What can happen to a Redis deployment, and what `lockstep replay` can make real: no
    // message is delivered twice on a TCP connection, so that kind is drawn only when named.
    for (size_t k = 0; k < kFuzzFaultKinds.size(); ++k) {
      const bool applies = !(static_cast<int>(k) == kFailover && !failover_applies) &&
                           static_cast<int>(k) != kMessageDuplication;
      plan.weights[k] = applies ? 1 : 0;
    }
  } else {
    for (const auto& [name, weight] : base.fuzz.faults) {
      auto it = std::find(kFuzzFaultKinds.begin(), kFuzzFaultKinds.end(), name);
      if (it == kFuzzFaultKinds.end()) {
        *error = "fuzz.faults: unknown fault kind '" + name + "'";
        return std::nullopt;
      }
      const auto k = static_cast<size_t>(it - kFuzzFaultKinds.begin());
      if (static_cast<int>(k) == kFailover && weight > 0 && !failover_applies) {
        *error = "fuzz.faults: 'failover' needs a master with a replica (replica_of), and the "
                 "base has none; give it weight 0 or add a replica";
        return std::nullopt;
      }
      plan.weights[k] = weight;
    }
  }
  for (double w : plan.weights) plan.total_weight += w;
  if (plan.total_weight <= 0 && base.fuzz.fault_count.max > 0) {
    *error = "fuzz.faults: every weight is 0, so no fault can be drawn; set fault_count = 0 to "
             "fuzz without faults";
    return std::nullopt;
  }
  // The most work a case can ask for: the most clients and threads, the shortest critical
  // sections and think times, fixed. If a run may not do that much (model/limits.h), cases
  // would be refused one by one during the search; the table is refused now instead.
  const FuzzSpec& spec = base.fuzz;
  FuzzCase heaviest = BaseCase(base);
  const auto low = [](const FuzzRange& r) { return static_cast<int64_t>(std::ceil(r.min)); };
  const auto high = [&](const FuzzRange& r) {
    return std::max(low(r), static_cast<int64_t>(std::floor(r.max)));
  };
  if (spec.clients) heaviest.clients = static_cast<int>(high(*spec.clients));
  if (spec.threads) heaviest.threads = static_cast<int>(high(*spec.threads));
  if (spec.critical_us) heaviest.critical = TimeDraw{low(*spec.critical_us), false};
  if (spec.think_us) heaviest.think = TimeDraw{low(*spec.think_us), false};
  if (std::optional<std::string> problem = RunBoundsProblem(Materialize(base, heaviest))) {
    *error = "fuzz: the heaviest case this table can draw (the most clients and threads, the "
             "shortest critical_ms and think_ms) asks for too much work: " + *problem;
    return std::nullopt;
  }
  return plan;
}

FuzzCase BaseCase(const Scenario& base) {
  FuzzCase c;
  c.seed = base.seed;
  c.duration_us = base.duration_us;
  c.clients = WorkerCount(base);
  c.threads = 0;  // The base's own, per client.
  c.version = std::string(history::VersionName(base.protocol.version));
  return c;
}

FaultDraw DrawFault(const Scenario& base, const FuzzPlan& plan, int64_t duration_us, Prng& rng) {
  const FuzzSpec& spec = base.fuzz;
  FaultDraw f;
  double pick = rng.Uniform01() * plan.total_weight;
  f.kind = 0;
  for (size_t k = 0; k < plan.weights.size(); ++k) {
    if (plan.weights[k] <= 0) continue;
    f.kind = static_cast<int>(k);
    if (pick < plan.weights[k]) break;
    pick -= plan.weights[k];
  }
  f.at_us = rng.UniformInt(0, std::max<int64_t>(0, duration_us - 1));
  const int64_t length =
      LogUniform(rng, spec.fault_duration_us.min, spec.fault_duration_us.max);
  switch (f.kind) {
    case kClockJumpForward:
    case kClockJumpBackward:
      f.magnitude = LogUniform(rng, spec.clock_jump_us.min, spec.clock_jump_us.max);
      break;
    case kClockDrift: {
      const int64_t ppm = std::max<int64_t>(1, UniformIn(rng, spec.drift_ppm));
      f.magnitude = rng.Bernoulli(0.5) ? ppm : -ppm;
      f.at_us = 0;  // A drift lasts the whole run.
      break;
    }
    case kFailover:
      break;
    case kNodeCrash:
    case kClientCrash:
      break;  // Never restarted.
    case kLatencySpike:
      f.duration_us = length;
      f.magnitude = LogUniform(rng, spec.latency_spike_us.min, spec.latency_spike_us.max);
      break;
    case kMessageLoss:
    case kMessageDuplication: {
      const FuzzRange& r = f.kind == kMessageLoss ? spec.loss_rate : spec.duplicate_rate;
      f.duration_us = length;
      f.magnitude = std::clamp<int64_t>(
          std::llround((r.min + (r.max - r.min) * rng.Uniform01()) * 1e6), 1, 1'000'000);
      break;
    }
    default:
      f.duration_us = length;
      break;
  }
  f.target = rng.UniformInt(0, (1 << 30) - 1);
  f.mask = rng.UniformInt(0, (1 << 30) - 1);
  return f;
}

FuzzCase DrawCase(const Scenario& base, const FuzzPlan& plan, uint64_t fuzz_seed, uint64_t index) {
  const FuzzSpec& spec = base.fuzz;
  // One stream per case, from the search's seed and the case's index alone.
  Prng rng(fuzz_seed ^ (index + 1) * 0x9e3779b97f4a7c15ull);
  FuzzCase c = BaseCase(base);
  c.seed = rng.Next() >> 1;  // Scenario seeds stay within what a TOML integer can hold.
  if (spec.clients) c.clients = static_cast<int>(UniformIn(rng, *spec.clients));
  if (spec.threads) c.threads = static_cast<int>(UniformIn(rng, *spec.threads));
  if (spec.lease_us) c.lease_us = UniformIn(rng, *spec.lease_us);
  if (spec.wait_us) c.wait_us = UniformIn(rng, *spec.wait_us);
  if (spec.critical_us) c.critical = DrawTime(rng, *spec.critical_us);
  if (spec.think_us) c.think = DrawTime(rng, *spec.think_us);
  if (spec.replication_lag_us) c.replication_lag_us = UniformIn(rng, *spec.replication_lag_us);
  if (!spec.versions.empty()) {
    c.version = spec.versions[static_cast<size_t>(
        rng.UniformInt(0, static_cast<int64_t>(spec.versions.size()) - 1))];
  }
  const int64_t count = plan.total_weight > 0 ? UniformIn(rng, spec.fault_count) : 0;
  for (int64_t i = 0; i < count; ++i) c.faults.push_back(DrawFault(base, plan, c.duration_us, rng));
  return c;
}

namespace {

// `v` scaled by a factor between 1/`spread` and `spread` (log-uniform), kept in [lo, hi].
int64_t Scaled(Prng& rng, int64_t v, double spread, double lo, double hi) {
  const double factor = std::exp((rng.Uniform01() * 2 - 1) * std::log(spread));
  const double scaled = std::round(static_cast<double>(std::max<int64_t>(1, v)) * factor);
  const double floor = std::ceil(lo);
  const double ceiling = std::max(floor, std::floor(hi));
  return static_cast<int64_t>(std::clamp(scaled, floor, ceiling));
}

bool HasLength(int kind) {
  return kind != kClockJumpForward && kind != kClockJumpBackward && kind != kClockDrift &&
         kind != kFailover && kind != kNodeCrash && kind != kClientCrash;
}

bool HasSize(int kind) {
  return kind == kClockJumpForward || kind == kClockJumpBackward || kind == kClockDrift ||
         kind == kLatencySpike || kind == kMessageLoss || kind == kMessageDuplication;
}

// One change to `c`; false when the change drawn does not apply to it (the caller draws again).
bool MutateOnce(const Scenario& base, const FuzzPlan& plan, FuzzCase& c, Prng& rng) {
  const FuzzSpec& spec = base.fuzz;
  enum Change { kAdd, kDrop, kReplace, kMove, kStretch, kResize, kRetarget, kReseed, kCount,
                kTime, kVersion, kChanges };
  const auto change = static_cast<Change>(rng.UniformInt(0, kChanges - 1));
  const auto n = static_cast<int64_t>(c.faults.size());
  FaultDraw* fault = n > 0 ? &c.faults[static_cast<size_t>(rng.UniformInt(0, n - 1))] : nullptr;
  switch (change) {
    case kAdd:
      if (plan.total_weight <= 0 || static_cast<double>(n) + 1 > spec.fault_count.max) return false;
      c.faults.push_back(DrawFault(base, plan, c.duration_us, rng));
      return true;
    case kDrop:
      if (fault == nullptr || static_cast<double>(n) - 1 < spec.fault_count.min) return false;
      c.faults.erase(c.faults.begin() + (fault - c.faults.data()));
      return true;
    case kReplace:
      if (fault == nullptr) return false;
      *fault = DrawFault(base, plan, c.duration_us, rng);
      return true;
    case kMove: {
      if (fault == nullptr || fault->kind == kClockDrift || c.duration_us <= 1) return false;
      // Near (a shift of 1 ms up to half the run, either way) more often than far.
      const int64_t shift = LogUniform(rng, 1000, std::max<double>(1000, c.duration_us / 2.0));
      const int64_t at = fault->at_us + (rng.Bernoulli(0.5) ? shift : -shift);
      fault->at_us = std::clamp<int64_t>(at, 0, c.duration_us - 1);
      return true;
    }
    case kStretch:
      if (fault == nullptr || !HasLength(fault->kind)) return false;
      fault->duration_us = Scaled(rng, fault->duration_us, 4, spec.fault_duration_us.min,
                                  spec.fault_duration_us.max);
      return true;
    case kResize: {
      if (fault == nullptr || !HasSize(fault->kind)) return false;
      FuzzRange range = spec.clock_jump_us;
      if (fault->kind == kClockDrift) range = spec.drift_ppm;
      if (fault->kind == kLatencySpike) range = spec.latency_spike_us;
      if (fault->kind == kMessageLoss || fault->kind == kMessageDuplication) {
        const FuzzRange& r = fault->kind == kMessageLoss ? spec.loss_rate : spec.duplicate_rate;
        range = FuzzRange{std::max(1.0, r.min * 1e6), std::min(1e6, r.max * 1e6)};
      }
      const int64_t sign = fault->magnitude < 0 ? -1 : 1;
      fault->magnitude =
          sign * Scaled(rng, std::abs(fault->magnitude), 4, std::max(1.0, range.min), range.max);
      return true;
    }
    case kRetarget:
      if (fault == nullptr) return false;
      fault->target = rng.UniformInt(0, (1 << 30) - 1);
      fault->mask = rng.UniformInt(0, (1 << 30) - 1);
      return true;
    case kReseed:
      c.seed = rng.Next() >> 1;
      return true;
    case kCount: {
      const bool clients = rng.Bernoulli(0.5);
      const std::optional<FuzzRange>& range = clients ? spec.clients : spec.threads;
      if (!range) return false;
      int& count = clients ? c.clients : c.threads;
      const int64_t step = rng.Bernoulli(0.5) ? 1 : -1;
      const int64_t lo = static_cast<int64_t>(std::ceil(range->min));
      const int64_t hi = std::max(lo, static_cast<int64_t>(std::floor(range->max)));
      const int next = static_cast<int>(std::clamp<int64_t>(count + step, lo, hi));
      if (next == count) return false;
      count = next;
      return true;
    }
    case kTime:
      switch (rng.UniformInt(0, 4)) {
        case 0:
          if (!spec.lease_us) return false;
          c.lease_us = UniformIn(rng, *spec.lease_us);
          return true;
        case 1:
          if (!spec.wait_us) return false;
          c.wait_us = UniformIn(rng, *spec.wait_us);
          return true;
        case 2:
          if (!spec.critical_us) return false;
          c.critical = DrawTime(rng, *spec.critical_us);
          return true;
        case 3:
          if (!spec.think_us) return false;
          c.think = DrawTime(rng, *spec.think_us);
          return true;
        default:
          if (!spec.replication_lag_us) return false;
          c.replication_lag_us = UniformIn(rng, *spec.replication_lag_us);
          return true;
      }
    case kVersion:
      if (spec.versions.size() < 2) return false;
      c.version = spec.versions[static_cast<size_t>(
          rng.UniformInt(0, static_cast<int64_t>(spec.versions.size()) - 1))];
      return true;
    case kChanges:
      break;
  }
  return false;
}

}  // namespace

FuzzCase Mutate(const Scenario& base, const FuzzPlan& plan, const FuzzCase& parent, Prng& rng) {
  FuzzCase c = parent;
  // One change half the time, two or three otherwise (as havoc stages stack theirs). A new
  // seed always applies, so every draw ends.
  const int changes = rng.Bernoulli(0.5) ? 1 : static_cast<int>(rng.UniformInt(2, 3));
  for (int i = 0; i < changes;) i += MutateOnce(base, plan, c, rng) ? 1 : 0;
  return c;
}

Scenario Materialize(const Scenario& base, const FuzzCase& c) {
  Scenario s = base;
  s.fuzz = FuzzSpec{};
  s.seed = c.seed;
  s.duration_us = c.duration_us;
  // The loader took only known names into [fuzz] versions.
  if (!c.version.empty()) s.protocol.version = history::FindProtocolVersion(c.version).value();

  // Worker clients: the base's in order, cut or extended to the case's count (new ones copy the
  // last worker); other roles stay as they are.
  {
    std::vector<ClientSpec> clients;
    const ClientSpec* last_worker = nullptr;
    int workers = 0;
    for (const ClientSpec& client : base.clients) {
      if (client.role != ClientSpec::Role::kWorker) {
        clients.push_back(client);
        continue;
      }
      last_worker = &client;
      if (workers < c.clients) {
        clients.push_back(client);
        ++workers;
      }
    }
    s.clients = clients;
    int next_name = static_cast<int>(base.clients.size()) + 1;
    while (workers < c.clients && last_worker != nullptr) {
      ClientSpec added = *last_worker;
      added.name = FreshClientName(s, next_name);
      next_name = std::stoi(added.name.substr(1)) + 1;
      s.clients.push_back(added);
      ++workers;
    }
    if (c.threads > 0) {
      for (ClientSpec& client : s.clients) {
        if (client.role == ClientSpec::Role::kWorker) client.threads = c.threads;
      }
    }
    // A case stays inside the limit on all threads together (model/limits.h): with many
    // clients, each worker gets fewer threads.
    int64_t total = 0, others = 0;
    for (const ClientSpec& client : s.clients) {
      total += client.threads;
      if (client.role != ClientSpec::Role::kWorker) others += client.threads;
    }
    if (total > kMaxThreads && workers > 0) {
      const int cap = static_cast<int>(std::max<int64_t>(1, (kMaxThreads - others) / workers));
      for (ClientSpec& client : s.clients) {
        if (client.role == ClientSpec::Role::kWorker) client.threads = std::min(client.threads, cap);
      }
    }
  }
  // What refers to a client that is gone goes with it.
  auto exists = [&s](const std::string& name) {
    for (const NodeSpec& n : s.nodes) {
      if (n.name == name) return true;
    }
    for (const ClientSpec& cl : s.clients) {
      if (cl.name == name) return true;
    }
    return name == "sentinel";
  };
  for (auto it = s.network.link_latency_us.begin(); it != s.network.link_latency_us.end();) {
    const std::string& link = it->first;
    const size_t arrow = link.find("->");
    const bool keep = arrow != std::string::npos && exists(link.substr(0, arrow)) &&
                      exists(link.substr(arrow + 2));
    it = keep ? std::next(it) : s.network.link_latency_us.erase(it);
  }
  std::erase_if(s.gc.clients, [&](const std::string& name) { return !exists(name); });
  std::erase_if(s.faults, [&](const FaultSpec& f) {
    if (f.at_us >= s.duration_us) return true;
    for (const std::string& t : f.targets) {
      if (!exists(t)) return true;
    }
    for (const std::string& p : f.peers) {
      if (!exists(p)) return true;
    }
    return false;
  });
  for (NodeSpec& n : s.nodes) {
    std::erase_if(n.clock.jumps, [&](const ClockSpec::Jump& j) { return j.at_us >= s.duration_us; });
  }
  for (ClientSpec& cl : s.clients) {
    std::erase_if(cl.clock.jumps, [&](const ClockSpec::Jump& j) { return j.at_us >= s.duration_us; });
  }

  if (c.lease_us) s.workload.lease_us = *c.lease_us;
  if (c.wait_us) s.workload.wait_us = *c.wait_us;
  if (c.critical) s.workload.critical_us = ToDistribution(*c.critical);
  if (c.think) s.workload.think_us = ToDistribution(*c.think);
  if (c.replication_lag_us) {
    s.replication.lag_us = Distribution::Fixed(FileParameter(*c.replication_lag_us));
  }
  if (c.fixed_base_times) {
    if (!c.critical) s.workload.critical_us = FixedAtMean(s.workload.critical_us);
    if (!c.think) s.workload.think_us = FixedAtMean(s.workload.think_us);
    if (!c.replication_lag_us) s.replication.lag_us = FixedAtMean(s.replication.lag_us);
    s.gc.every_us = FixedAtMean(s.gc.every_us);
    s.gc.pause_us = FixedAtMean(s.gc.pause_us);
  }
  if (c.quiet_network) {
    s.network.loss = 0;
    s.network.duplicate = 0;
    s.network.latency_us = FixedAtMean(s.network.latency_us);
    for (auto& [link, d] : s.network.link_latency_us) d = FixedAtMean(d);
  }
  if (c.no_gc) s.gc = GcSpec{};

  // The case's faults, resolved against the processes the case has.
  std::vector<std::string> nodes, clients, processes;
  for (const NodeSpec& n : s.nodes) nodes.push_back(n.name);
  for (const ClientSpec& cl : s.clients) clients.push_back(cl.name);
  processes = nodes;
  processes.insert(processes.end(), clients.begin(), clients.end());
  std::vector<std::string> replicated_masters;
  for (const NodeSpec& n : s.nodes) {
    if (!n.replica_of.empty() && !Contains(replicated_masters, n.replica_of)) {
      replicated_masters.push_back(n.replica_of);
    }
  }
  auto pick = [](const std::vector<std::string>& from, int64_t index) -> const std::string& {
    return from[static_cast<size_t>(index % static_cast<int64_t>(from.size()))];
  };
  for (const FaultDraw& d : c.faults) {
    if (d.at_us >= s.duration_us) continue;  // Cut off with the run.
    FaultSpec f;
    f.at_us = d.at_us;
    f.duration_us = d.duration_us;
    switch (d.kind) {
      case kPartition:
      case kPartitionOneWay: {
        if (processes.size() < 2) continue;
        const std::string& target = pick(processes, d.target);
        f.kind = FaultSpec::Kind::kPartition;
        f.one_way = d.kind == kPartitionOneWay;
        f.targets = {target};
        if (Contains(nodes, target)) {
          for (const std::string& p : processes) {
            if (p != target) f.peers.push_back(p);
          }
        } else {
          // A client is cut from a subset of the nodes (all of them when the mask picks none).
          const int64_t bits = nodes.size() >= 30 ? d.mask : d.mask % (int64_t{1} << nodes.size());
          for (size_t i = 0; i < nodes.size(); ++i) {
            if ((bits >> i) & 1) f.peers.push_back(nodes[i]);
          }
          if (f.peers.empty()) f.peers = nodes;
        }
        break;
      }
      case kNodePause:
      case kClientPause:
        f.kind = FaultSpec::Kind::kPause;
        f.targets = {pick(d.kind == kNodePause ? nodes : clients, d.target)};
        break;
      case kNodeCrash:
      case kNodeCrashRestart:
      case kClientCrash:
      case kClientCrashRestart:
        f.kind = FaultSpec::Kind::kCrash;
        f.targets = {pick(d.kind == kNodeCrash || d.kind == kNodeCrashRestart ? nodes : clients,
                          d.target)};
        if (d.kind == kNodeCrash || d.kind == kClientCrash) f.duration_us = 0;
        break;
      case kClockJumpForward:
      case kClockJumpBackward:
        f.kind = FaultSpec::Kind::kClockJump;
        f.targets = {pick(processes, d.target)};
        f.by_us = d.kind == kClockJumpForward ? d.magnitude : -d.magnitude;
        f.duration_us = 0;
        if (f.by_us == 0) continue;
        break;
      case kClockDrift: {
        // Not a fault in the file: the target's clock drifts for the whole run.
        const std::string& target = pick(processes, d.target);
        const double ppm = std::clamp<double>(static_cast<double>(d.magnitude), -kMaxDriftPpm,
                                              kMaxDriftPpm);
        for (NodeSpec& n : s.nodes) {
          if (n.name == target) n.clock.drift_ppm = ppm;
        }
        for (ClientSpec& cl : s.clients) {
          if (cl.name == target) cl.clock.drift_ppm = ppm;
        }
        continue;
      }
      case kFailover:
        if (replicated_masters.empty()) continue;
        f.kind = FaultSpec::Kind::kFailover;
        f.targets = {pick(replicated_masters, d.target)};
        f.duration_us = 0;
        break;
      case kLoseReplies:
        f.kind = FaultSpec::Kind::kLoseReplies;
        f.targets = {pick(nodes, d.target)};
        break;
      case kLatencySpike:
        f.kind = FaultSpec::Kind::kLatency;
        f.targets = {pick(processes, d.target)};
        f.extra_us = std::max<int64_t>(1, d.magnitude);
        break;
      case kMessageLoss:
      case kMessageDuplication:
        f.kind = d.kind == kMessageLoss ? FaultSpec::Kind::kLoss : FaultSpec::Kind::kDuplicate;
        f.targets = {pick(processes, d.target)};
        f.rate = static_cast<double>(std::clamp<int64_t>(d.magnitude, 1, 1'000'000)) / 1e6;
        break;
      default:
        continue;
    }
    // Kinds that last need a positive length.
    const bool needs_length = f.kind == FaultSpec::Kind::kPartition ||
                              f.kind == FaultSpec::Kind::kPause ||
                              f.kind == FaultSpec::Kind::kLoseReplies ||
                              f.kind == FaultSpec::Kind::kLatency ||
                              f.kind == FaultSpec::Kind::kLoss ||
                              f.kind == FaultSpec::Kind::kDuplicate;
    if (needs_length && f.duration_us <= 0) f.duration_us = 1;
    s.faults.push_back(f);
  }
  return s;
}

CaseSize SizeOf(const FuzzCase& c) {
  CaseSize size;
  size.faults = static_cast<int>(c.faults.size());
  size.clients = c.clients;
  size.threads = c.threads;
  size.duration_us = c.duration_us;
  return size;
}

}  // namespace lockstep::fuzz
