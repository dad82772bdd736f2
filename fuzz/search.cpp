#include "fuzz/search.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <thread>

namespace lockstep::fuzz {

namespace {

constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();

struct Worker {
  std::atomic<uint64_t> k{kNone};  // The case it runs (its number within the shard).
  std::atomic<bool> cancel{false};
};

}  // namespace

SearchResult Search(const Scenario& base, const FuzzPlan& plan,
                    const std::vector<std::string>& watch, const SearchOptions& options,
                    const std::function<void(const SearchStatus&)>& progress,
                    double progress_every_s) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  SearchResult result;
  std::mutex mu;  // Guards result, the coverage and the corpus.
  std::condition_variable counted;  // Signalled as cases are counted (and when the search ends).
  std::map<std::string, Failure> distinct;  // Keep-going: by "property/rule".
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> stop_after{kNone};  // First-failure mode: the smallest failing k.
  std::atomic<bool> stop_all{false};
  // Coverage, counted in case order: the cases done out of order wait in `pending` until
  // every case before them is counted, so that what grew when does not depend on the jobs.
  struct Counted {
    std::vector<uint64_t> coverage;
    FuzzCase c;
    bool may_keep = false;  // It may join the corpus (judged, and not a shared failure).
  };
  std::set<uint64_t> covered;
  std::map<uint64_t, Counted> pending;  // By k.
  uint64_t next_to_count = 0;
  uint64_t last_grew_k = 0;
  // Guided: the cases that added coverage, by k, in case order.
  std::vector<std::pair<uint64_t, FuzzCase>> corpus;
  const bool guided = options.strategy == Strategy::kGuided;
  const int jobs = std::max(1, options.jobs);
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < jobs; ++i) workers.push_back(std::make_unique<Worker>());

  // Case k (global index `index`), or nullopt when the search ended while it waited.
  auto case_for = [&](uint64_t k, uint64_t index) -> std::optional<FuzzCase> {
    if (!guided || k < kGuideLag) return DrawCase(base, plan, options.fuzz_seed, index);
    // Its own stream, apart from DrawCase's, so that a fresh case is the random search's.
    Prng rng((options.fuzz_seed + 0x6775696465ull) ^ (index + 1) * 0xd1b54a32d192ed03ull);
    const bool fresh = rng.Bernoulli(0.5);
    std::unique_lock<std::mutex> lock(mu);
    counted.wait(lock, [&] {
      return next_to_count >= k - kGuideLag || stop_all.load() || k > stop_after.load();
    });
    if (next_to_count < k - kGuideLag) return std::nullopt;
    // The entries of the cases before k - kGuideLag.
    const auto seen = static_cast<int64_t>(
        std::lower_bound(corpus.begin(), corpus.end(), k - kGuideLag,
                         [](const auto& entry, uint64_t before) { return entry.first < before; }) -
        corpus.begin());
    if (fresh || seen == 0) {
      lock.unlock();
      return DrawCase(base, plan, options.fuzz_seed, index);
    }
    const FuzzCase parent = corpus[static_cast<size_t>(rng.UniformInt(0, seen - 1))].second;
    lock.unlock();
    return Mutate(base, plan, parent, rng);
  };

  auto work = [&](Worker& w) {
    CaseLimits limits = options.limits;
    limits.cancel = &w.cancel;
    while (!stop_all.load()) {
      const uint64_t k = next.fetch_add(1);
      if (options.cases > 0 && k >= options.cases) break;
      if (k > stop_after.load()) break;
      const uint64_t index = options.shard_index + k * options.shard_count;
      std::optional<FuzzCase> drawn = case_for(k, index);
      if (!drawn) break;
      FuzzCase c = std::move(*drawn);
      w.k.store(k);
      CaseOutcome outcome =
          RunDrawnCase(base, options.reference, c, watch, options.lua_dir, limits);
      w.k.store(kNone);
      if (outcome.cancelled) {
        w.cancel.store(false);
        continue;  // Not judged: the search no longer needs it.
      }
      std::lock_guard<std::mutex> lock(mu);
      Counted done;
      done.coverage = std::move(outcome.coverage);
      done.may_keep = (outcome.status == CaseStatus::kPass || outcome.status == CaseStatus::kFail) &&
                      (outcome.shared.empty() || !options.reference_steers);
      if (guided) done.c = c;
      ++result.status.cases_done;
      if (!outcome.shared.empty()) ++result.status.shared;
      if (outcome.status == CaseStatus::kOverLimit) {
        ++result.status.over_limit;
        if (result.over_limit_cases.size() < 20) result.over_limit_cases.push_back({index, c, outcome.error});
      } else if (outcome.status == CaseStatus::kError) {
        if (result.errors.size() < 20) result.errors.push_back({index, c, outcome.error});
      } else if (outcome.status == CaseStatus::kFail) {
        ++result.status.failures;
        Failure f;
        f.index = index;
        f.c = std::move(c);
        f.property = outcome.broken.front();
        f.kind = outcome.first_kind.front();
        f.outcome = std::move(outcome);
        if (options.keep_going) {
          const std::string key = f.property + "/" + f.kind;
          auto it = distinct.find(key);
          if (it == distinct.end() || it->second.index > f.index) distinct[key] = std::move(f);
        } else {
          uint64_t seen = stop_after.load();
          while (k < seen && !stop_after.compare_exchange_weak(seen, k)) {
          }
          if (result.failures.empty() || result.failures.front().index > f.index) {
            result.failures.assign(1, std::move(f));
          }
        }
      }
      // After a failure has set where the search stops, so that no case past it is counted.
      pending.emplace(k, std::move(done));
      while (!pending.empty() && pending.begin()->first == next_to_count &&
             next_to_count <= stop_after.load()) {
        Counted& head = pending.begin()->second;
        const size_t before = covered.size();
        covered.insert(head.coverage.begin(), head.coverage.end());
        const bool grew = covered.size() > before;
        if (grew || next_to_count == 0) last_grew_k = next_to_count;
        if (grew && guided && head.may_keep) corpus.emplace_back(next_to_count, std::move(head.c));
        pending.erase(pending.begin());
        result.status.coverage = covered.size();
        result.status.coverage_grew_at = options.shard_index + last_grew_k * options.shard_count;
        result.status.coverage_cases = ++next_to_count;
        result.status.corpus = corpus.size();
        if (options.until_saturated > 0 && !result.saturated &&
            next_to_count - 1 - last_grew_k >= options.until_saturated) {
          // Saturated at this case: none after it is started, as after a failure.
          result.saturated = true;
          const uint64_t at = next_to_count - 1;
          uint64_t seen = stop_after.load();
          while (at < seen && !stop_after.compare_exchange_weak(seen, at)) {
          }
        }
      }
      counted.notify_all();
    }
  };

  std::vector<std::thread> threads;
  std::atomic<int> running{jobs};
  // Every thread waits at the gate until all are made. When the machine refused some (a 4 GB
  // address space holds about 500 stacks), the search goes on with three quarters of those it
  // gave, or on this thread alone: the others leave at once and give their stacks back, so
  // that the cases have room for what they allocate.
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  bool gate_open = false;
  bool let_go = false;  // The threads past `active` have left and been joined.
  int active = jobs;
  bool refused = false;
  for (int i = 0; i < jobs; ++i) {
    try {
      threads.emplace_back([&, i] {
        {
          std::unique_lock<std::mutex> lock(gate_mu);
          gate_cv.wait(lock, [&] { return gate_open && (i >= active || let_go); });
        }
        if (i < active) work(*workers[static_cast<size_t>(i)]);
        --running;
      });
    } catch (const std::system_error&) {
      running -= jobs - i;
      refused = true;
      break;
    }
  }
  result.threads_made = static_cast<int>(threads.size());
  {
    std::lock_guard<std::mutex> lock(gate_mu);
    if (refused) active = static_cast<int>(threads.size()) * 3 / 4;
    gate_open = true;
  }
  gate_cv.notify_all();
  // Their stacks are given back before any case starts.
  for (size_t i = static_cast<size_t>(std::max(0, active)); i < threads.size(); ++i) threads[i].join();
  threads.resize(std::min(threads.size(), static_cast<size_t>(std::max(0, active))));
  {
    std::lock_guard<std::mutex> lock(gate_mu);
    let_go = true;
  }
  gate_cv.notify_all();
  result.jobs_started = static_cast<int>(threads.size());
  if (threads.empty()) {
    ++running;
    work(*workers[0]);
    --running;
    result.jobs_started = 1;
  }
  auto last_progress = start;
  while (running.load() > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const auto now = Clock::now();
    const double wall = std::chrono::duration<double>(now - start).count();
    bool cancel_all = false;
    if (options.interrupted != nullptr && *options.interrupted) {
      result.interrupted = true;
      cancel_all = true;
    }
    if (options.time_budget_s > 0 && wall >= options.time_budget_s) {
      result.budget_spent = true;
      cancel_all = true;
    }
    if (cancel_all) {
      {
        std::lock_guard<std::mutex> lock(mu);
        stop_all.store(true);
      }
      counted.notify_all();
    }
    const uint64_t bound = stop_after.load();
    for (auto& w : workers) {
      const uint64_t k = w->k.load();
      if (k != kNone && (cancel_all || k > bound)) w->cancel.store(true);
    }
    if (progress && std::chrono::duration<double>(now - last_progress).count() >= progress_every_s) {
      last_progress = now;
      SearchStatus status;
      {
        std::lock_guard<std::mutex> lock(mu);
        status = result.status;
      }
      status.wall_s = wall;
      progress(status);
    }
  }
  for (std::thread& t : threads) t.join();
  if (options.keep_going) {
    for (auto& [key, f] : distinct) result.failures.push_back(std::move(f));
    std::sort(result.failures.begin(), result.failures.end(),
              [](const Failure& a, const Failure& b) { return a.index < b.index; });
  }
  // In index order, not in the order the jobs finished them.
  const auto by_index = [](const SetAside& a, const SetAside& b) { return a.index < b.index; };
  std::sort(result.over_limit_cases.begin(), result.over_limit_cases.end(), by_index);
  std::sort(result.errors.begin(), result.errors.end(), by_index);
  result.coverage.assign(covered.begin(), covered.end());
  result.status.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace lockstep::fuzz
