#include "cli/seeds.h"

#include <atomic>
#include <charconv>
#include <chrono>
#include <mutex>
#include <system_error>
#include <thread>

#include "check/verdict.h"
#include "pipeline/pipeline.h"

namespace lockstep::cli {

std::optional<std::pair<uint64_t, uint64_t>> ParseSeedRange(std::string_view text) {
  const size_t dots = text.find("..");
  if (dots == std::string_view::npos) return std::nullopt;
  auto whole = [](std::string_view s) -> std::optional<uint64_t> {
    uint64_t v = 0;
    if (s.empty() || s.front() == '-' || s.front() == '+') return std::nullopt;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    if (v > 9223372036854775807ull) return std::nullopt;  // A scenario file's largest seed.
    return v;
  };
  const auto first = whole(text.substr(0, dots));
  const auto last = whole(text.substr(dots + 2));
  if (!first || !last || *first > *last) return std::nullopt;
  return std::make_pair(*first, *last);
}

std::string SeedLine(const SeedRun& r) {
  std::string line = std::to_string(r.seed) + " " +
                     (!r.error.empty() ? "error" : r.matches ? "pass" : "fail");
  for (const auto& [property, count] : r.violations) {
    line += " " + property + "=" + std::to_string(count);
  }
  return line;
}

std::vector<SeedRun> RunSeeds(const Scenario& scenario, const std::string& lua_dir, uint64_t first,
                              uint64_t last, int jobs, const volatile std::sig_atomic_t* interrupted,
                              const std::function<void(uint64_t done)>& progress) {
  const uint64_t count = last - first + 1;
  std::vector<SeedRun> runs(count);
  std::atomic<uint64_t> next{0}, done{0};
  const auto stop = [interrupted] { return interrupted != nullptr && *interrupted != 0; };
  auto work = [&] {
    while (!stop()) {
      const uint64_t i = next.fetch_add(1);
      if (i >= count) return;
      SeedRun& r = runs[i];
      r.seed = first + i;
      Scenario s = scenario;
      s.seed = r.seed;
      std::string error;
      std::unique_ptr<sim::Simulation> sim = sim::Simulation::Create(s, lua_dir, &error);
      if (!sim) {
        r.ran = true;
        r.error = error;
        done.fetch_add(1);
        continue;
      }
      PipelineOptions options;
      options.history = history::HistoryFormat::kNone;
      options.readers_thread = false;  // Every core runs seeds already.
      options.progress_every_us = s.duration_us + 1;
      options.interrupted = interrupted;
      std::optional<PipelineResult> result = RunPipeline(*sim, s, options, &error);
      if (!result || result->interrupted) {
        if (!result) r.error = error;
        r.ran = !result.has_value();
        done.fetch_add(1);
        continue;
      }
      r.ran = true;
      if (!result->stalled.empty()) r.error = result->stalled;
      const check::Judgement judgement = check::Judge(result->verdict, s.expect);
      r.matches = judgement.matches;
      r.mismatches = judgement.mismatches;
      for (const check::PropertyResult& p : result->verdict.results) {
        r.violations.emplace_back(p.property, p.violation_count);
      }
      done.fetch_add(1);
    }
  };
  const int threads = static_cast<int>(std::min<uint64_t>(static_cast<uint64_t>(jobs), count));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // No more threads to be had: the ones started (and this one) do the work.
    }
  }
  std::thread progress_thread;
  std::atomic<bool> finished{false};
  if (progress) {
    // The calling thread works too; a thread of its own reports.
    progress_thread = std::thread([&] {
      while (!finished.load()) {
        for (int k = 0; k < 50 && !finished.load(); ++k) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));  // A line a second.
        }
        if (!finished.load()) progress(done.load());
      }
    });
  }
  work();
  for (std::thread& t : pool) t.join();
  finished.store(true);
  if (progress_thread.joinable()) progress_thread.join();
  return runs;
}

}  // namespace lockstep::cli
