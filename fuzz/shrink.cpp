#include "fuzz/shrink.h"

#include <rapidcheck/shrink/Shrink.h>

#include <algorithm>
#include <set>
#include <thread>

namespace lockstep::fuzz {

namespace {

constexpr int64_t kMs = 1000;
constexpr int64_t kSecond = 1'000'000;

// Kinds whose magnitude is a time (rounded like times), and those whose magnitude is a rate.
bool MagnitudeIsTime(int kind) {
  return kind == kClockJumpForward || kind == kClockJumpBackward || kind == kLatencySpike;
}
bool MagnitudeIsRate(int kind) { return kind == kMessageLoss || kind == kMessageDuplication; }

// Every value of rapidcheck's shrink sequence.
template <typename T>
std::vector<T> All(rc::Seq<T> seq) {
  std::vector<T> out;
  while (rc::Maybe<T> v = seq.next()) out.push_back(std::move(*v));
  return out;
}

// Smaller values for a time in us: toward `floor` in whole milliseconds.
std::vector<int64_t> TimesToward(int64_t us, int64_t floor_us) {
  std::vector<int64_t> out;
  if (us <= floor_us) return out;
  for (int64_t ms : All(rc::shrink::towards<int64_t>(us / kMs, floor_us / kMs))) {
    const int64_t v = std::max(floor_us, ms * kMs);
    if (v < us) out.push_back(v);
  }
  return out;
}

// The same time rounded down to a second, a tenth and a millisecond, where that changes it.
// Only down: every accepted step makes some number smaller, so shrinking ends.
std::vector<int64_t> Rounded(int64_t us, int64_t floor_us) {
  std::vector<int64_t> out;
  for (int64_t unit : {kSecond, 100 * kMs, kMs}) {
    const int64_t v = us / unit * unit;
    if (v >= floor_us && v < us && std::find(out.begin(), out.end(), v) == out.end()) {
      out.push_back(v);
    }
  }
  return out;
}

// A key that tells two cases apart, for remembering candidates that did not fail.
std::string Key(const FuzzCase& c) {
  std::string k;
  auto add = [&k](int64_t v) { k += std::to_string(v) + ","; };
  add(static_cast<int64_t>(c.seed));
  add(c.duration_us);
  add(c.clients);
  add(c.threads);
  add(c.lease_us.value_or(-2));
  add(c.wait_us.value_or(-2));
  add(c.critical ? c.critical->us * 2 + c.critical->exponential : -2);
  add(c.think ? c.think->us * 2 + c.think->exponential : -2);
  add(c.replication_lag_us.value_or(-2));
  k += c.version + ",";
  add(c.quiet_network);
  add(c.fixed_base_times);
  add(c.no_gc);
  for (const FaultDraw& f : c.faults) {
    k += "|";
    add(f.kind);
    add(f.at_us);
    add(f.duration_us);
    add(f.magnitude);
    add(f.target);
    add(f.mask);
  }
  return k;
}

bool BaseHasNoise(const Scenario& base) {
  return base.network.loss > 0 || base.network.duplicate > 0 ||
         base.network.latency_us.kind != Distribution::Kind::kFixed ||
         std::any_of(base.network.link_latency_us.begin(), base.network.link_latency_us.end(),
                     [](const auto& link) { return link.second.kind != Distribution::Kind::kFixed; });
}

bool BaseHasRandomTimes(const Scenario& base) {
  auto random = [](const Distribution& d) { return d.kind != Distribution::Kind::kFixed; };
  return random(base.workload.critical_us) || random(base.workload.think_us) ||
         random(base.replication.lag_us) || (base.gc.enabled && (random(base.gc.every_us) ||
                                                                 random(base.gc.pause_us)));
}

int MaxBaseThreads(const Scenario& base) {
  int most = 1;
  for (const ClientSpec& c : base.clients) most = std::max(most, c.threads);
  return most;
}

// A run's length just past true time t: t's whole second, plus two.
int64_t JustPast(int64_t t_us) { return (t_us + kSecond) / kSecond * kSecond + kSecond; }

// The passes, in order; each proposes smaller cases than `c`, the likeliest first.
std::vector<FuzzCase> Candidates(int pass, const FuzzCase& c, const Scenario& base,
                                 int64_t violation_end_us) {
  std::vector<FuzzCase> out;
  auto with = [&](auto change) {
    FuzzCase next = c;
    change(next);
    if (!(next == c)) out.push_back(std::move(next));
  };
  switch (pass) {
    case 0:  // Fewer faults.
      for (std::vector<FaultDraw>& faults : All(rc::shrink::removeChunks(c.faults))) {
        with([&](FuzzCase& n) { n.faults = faults; });
      }
      break;
    case 1: {  // A shorter run: just past the violation, then shorter still.
      const int64_t cut = JustPast(violation_end_us);
      if (cut < c.duration_us) with([&](FuzzCase& n) { n.duration_us = cut; });
      for (int64_t d : TimesToward(c.duration_us, kSecond)) {
        with([&](FuzzCase& n) { n.duration_us = d; });
      }
      break;
    }
    case 2:  // Less noise.
      if (!c.quiet_network && BaseHasNoise(base)) with([](FuzzCase& n) { n.quiet_network = true; });
      if (!c.no_gc && base.gc.enabled) with([](FuzzCase& n) { n.no_gc = true; });
      if (!c.fixed_base_times && BaseHasRandomTimes(base)) {
        with([](FuzzCase& n) { n.fixed_base_times = true; });
      }
      if (c.critical && c.critical->exponential) with([](FuzzCase& n) { n.critical->exponential = false; });
      if (c.think && c.think->exponential) with([](FuzzCase& n) { n.think->exponential = false; });
      break;
    case 3:  // Fewer clients and threads.
      for (int64_t k : All(rc::shrink::towards<int64_t>(c.clients, 1))) {
        with([&](FuzzCase& n) { n.clients = static_cast<int>(k); });
      }
      if (c.threads == 0 && MaxBaseThreads(base) > 1) with([](FuzzCase& n) { n.threads = 1; });
      if (c.threads > 1) {
        for (int64_t k : All(rc::shrink::towards<int64_t>(c.threads, 1))) {
          with([&](FuzzCase& n) { n.threads = static_cast<int>(k); });
        }
      }
      break;
    case 4:  // Each fault earlier, shorter, smaller, on the first process.
      for (size_t i = 0; i < c.faults.size(); ++i) {
        const FaultDraw& f = c.faults[i];
        for (int64_t v : TimesToward(f.duration_us, kMs)) {
          with([&](FuzzCase& n) { n.faults[i].duration_us = v; });
        }
        for (int64_t v : TimesToward(f.at_us, 0)) with([&](FuzzCase& n) { n.faults[i].at_us = v; });
        if (MagnitudeIsTime(f.kind)) {
          for (int64_t v : TimesToward(f.magnitude, kMs)) {
            with([&](FuzzCase& n) { n.faults[i].magnitude = v; });
          }
        }
        if (MagnitudeIsRate(f.kind) && f.magnitude < 1'000'000) {
          // Certain loss (or duplication) is simpler to follow than a chance of it.
          with([&](FuzzCase& n) { n.faults[i].magnitude = 1'000'000; });
        }
        for (int64_t v : All(rc::shrink::towards<int64_t>(f.target, 0))) {
          with([&](FuzzCase& n) { n.faults[i].target = v; });
        }
        if (f.mask != 0) with([&](FuzzCase& n) { n.faults[i].mask = 0; });
      }
      break;
    case 5:  // Round numbers.
      for (int64_t v : Rounded(c.duration_us, kSecond)) with([&](FuzzCase& n) { n.duration_us = v; });
      for (size_t i = 0; i < c.faults.size(); ++i) {
        const FaultDraw& f = c.faults[i];
        for (int64_t v : Rounded(f.at_us, 0)) with([&](FuzzCase& n) { n.faults[i].at_us = v; });
        if (f.duration_us > 0) {
          for (int64_t v : Rounded(f.duration_us, kMs)) {
            with([&](FuzzCase& n) { n.faults[i].duration_us = v; });
          }
        }
        if (MagnitudeIsTime(f.kind)) {
          for (int64_t v : Rounded(f.magnitude, kMs)) {
            with([&](FuzzCase& n) { n.faults[i].magnitude = v; });
          }
        }
      }
      if (c.lease_us) {
        for (int64_t v : Rounded(*c.lease_us, kMs)) with([&](FuzzCase& n) { n.lease_us = v; });
      }
      if (c.wait_us) {
        for (int64_t v : Rounded(*c.wait_us, 0)) with([&](FuzzCase& n) { n.wait_us = v; });
      }
      if (c.critical) {
        for (int64_t v : Rounded(c.critical->us, 0)) with([&](FuzzCase& n) { n.critical->us = v; });
      }
      if (c.think) {
        for (int64_t v : Rounded(c.think->us, 0)) with([&](FuzzCase& n) { n.think->us = v; });
      }
      break;
    default:
      break;
  }
  return out;
}
constexpr int kPasses = 6;

}  // namespace

int FirstGood(int n, int jobs, const std::function<CaseOutcome(int)>& run,
              const std::function<bool(const CaseOutcome&)>& good, CaseOutcome* found) {
  jobs = std::max(1, jobs);
  for (int begin = 0; begin < n; begin += jobs) {
    const int end = std::min(n, begin + jobs);
    std::vector<CaseOutcome> outcomes(static_cast<size_t>(end - begin));
    if (end - begin == 1) {
      outcomes[0] = run(begin);
    } else {
      std::vector<std::thread> threads;
      for (int i = begin; i < end; ++i) {
        threads.emplace_back([&, i] { outcomes[static_cast<size_t>(i - begin)] = run(i); });
      }
      for (std::thread& t : threads) t.join();
    }
    for (int i = begin; i < end; ++i) {
      if (good(outcomes[static_cast<size_t>(i - begin)])) {
        *found = std::move(outcomes[static_cast<size_t>(i - begin)]);
        return i;
      }
    }
  }
  return -1;
}

ShrinkResult Shrink(const Scenario& base, const FuzzCase& failing, const CaseOutcome& outcome,
                    const std::string& property, const std::vector<std::string>& watch,
                    const ShrinkOptions& options) {
  ShrinkResult result;
  result.shrunk = failing;
  result.outcome = outcome;
  auto violation_end = [&property](const CaseOutcome& o) {
    for (size_t i = 0; i < o.broken.size(); ++i) {
      if (o.broken[i] == property) return o.first_to_us[i];
    }
    return int64_t{0};
  };
  auto still_fails = [&property](const CaseOutcome& o) {
    return o.status == CaseStatus::kFail &&
           std::find(o.broken.begin(), o.broken.end(), property) != o.broken.end();
  };
  std::set<std::string> passed;  // Candidates that did not fail: never run twice.
  bool progress = true;
  auto cancelled = [&options] {
    return options.limits.cancel != nullptr && options.limits.cancel->load();
  };
  while (progress && result.tries < options.max_tries && !cancelled()) {
    progress = false;
    for (int pass = 0; pass < kPasses && !progress; ++pass) {
      std::vector<FuzzCase> candidates =
          Candidates(pass, result.shrunk, base, violation_end(result.outcome));
      std::erase_if(candidates, [&](const FuzzCase& c) { return passed.count(Key(c)) > 0; });
      const int budget = options.max_tries - result.tries;
      if (static_cast<int>(candidates.size()) > budget) candidates.resize(static_cast<size_t>(budget));
      if (candidates.empty()) continue;
      CaseOutcome found;
      const int index = FirstGood(
          static_cast<int>(candidates.size()), options.jobs,
          [&](int i) {
            return RunDrawnCase(base, options.reference, candidates[static_cast<size_t>(i)], watch,
                                options.lua_dir, options.limits);
          },
          still_fails,
          &found);
      // Everything before the one taken was run and did not fail.
      const int looked = index < 0 ? static_cast<int>(candidates.size()) : index;
      for (int i = 0; i < looked; ++i) passed.insert(Key(candidates[static_cast<size_t>(i)]));
      // Counted as one job would have run them (a batch may run one or two more), so that
      // the count, the limit and so the result do not depend on the number of jobs.
      result.tries += index < 0 ? static_cast<int>(candidates.size()) : index + 1;
      if (index >= 0) {
        result.shrunk = std::move(candidates[static_cast<size_t>(index)]);
        result.outcome = std::move(found);
        ++result.steps;
        progress = true;
      }
      if (options.progress) options.progress(result.steps, result.tries);
    }
  }
  // Shrinking cuts the run just past where the violation was seen; the file shows its whole
  // extent instead: run as long as the failing case did, and keep the run until the violated
  // condition ended (plus a second), or all of it when it lasted to the end.
  if (!cancelled() && result.shrunk.duration_us < failing.duration_us) {
    FuzzCase whole = result.shrunk;
    whole.duration_us = failing.duration_us;
    CaseOutcome long_run = RunDrawnCase(base, options.reference, whole, watch, options.lua_dir, options.limits);
    ++result.tries;
    if (still_fails(long_run)) {
      const int64_t ended = violation_end(long_run);
      const bool to_end = ended >= whole.duration_us;
      if (!to_end) {
        const int64_t cut = JustPast(ended);
        if (cut < whole.duration_us) {
          whole.duration_us = std::max(cut, result.shrunk.duration_us);
          long_run = RunDrawnCase(base, options.reference, whole, watch, options.lua_dir, options.limits);
          ++result.tries;
        }
      }
      if (still_fails(long_run)) {
        result.shrunk = std::move(whole);
        result.outcome = std::move(long_run);
        result.extended = true;
        result.extent_to_end = to_end;
      }
    }
  }
  return result;
}

}  // namespace lockstep::fuzz
