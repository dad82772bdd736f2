// Benchmark: Redisson's reentrant-lock acquire and unlock scripts, run by EVALSHA on the
// emulator and on a live redis-server started in this same run (pipelined, so the network
// round trip is amortised and Redis is measured near its best). Prints both throughputs and
// their ratio. It asserts nothing about time: figures are for people and for the closing notes.
// Each round uses a fresh emulator and a fresh redis-server; the median of the rounds' ratios is
// the figure (a shared 2-core machine has noisy moments that one round would report as fact).
//
//   ./build/bench_scripts [--pairs N] [--pipeline P] [--version v3.13.6|current] [--rounds R]
//                         [--side both|emulator]
#include <boost/program_options.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/script_host.h"
#include "core/server.h"
#include "live/redis_client.h"
#include "live/redis_process.h"

namespace po = boost::program_options;
using lockstep::Argv;
using lockstep::Reply;

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

int64_t WallMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// One acquire + one unlock of the same lock by the same owner: the lock is free again after
// each pair, so every acquire takes the "lock is free" path and every unlock releases and
// publishes, the common path of an uncontended lock.
struct Workload {
  std::string acquire_sha, unlock_sha;
  bool current = false;

  Argv Acquire() const { return {"EVALSHA", acquire_sha, "1", "bench-lock", "30000", "uuid-1:1"}; }
  Argv Unlock() const {
    if (current) {
      return {"EVALSHA", unlock_sha, "3", "bench-lock", "redisson_lock__channel:{bench-lock}",
              "redisson_unlock_latch:{bench-lock}:0", "0", "30000", "uuid-1:1", "publish", "13500"};
    }
    return {"EVALSHA", unlock_sha, "2", "bench-lock", "redisson_lock__channel:{bench-lock}", "0",
            "30000", "uuid-1:1"};
  }
};


// Today's unlock keeps an idempotency latch per request: each pair needs its own request id,
// or every unlock after the first would answer from the latch and release nothing.
void NextRequest(const Workload& w, int64_t i, Argv* unlock_argv) {
  if (w.current) (*unlock_argv)[5] = "redisson_unlock_latch:{bench-lock}:" + std::to_string(i);
}

// One round on a fresh emulator: scripts per second, or nothing after printing why.
std::optional<double> MeasureEmulator(const std::string& version, const std::string& acquire,
                                      const std::string& unlock, int64_t pairs) {
  Workload w;
  w.current = version == "current";
  lockstep::Server emu;
  w.acquire_sha = emu.Execute({"SCRIPT", "LOAD", acquire}, 0).str;
  w.unlock_sha = emu.Execute({"SCRIPT", "LOAD", unlock}, 0).str;
  const Argv acquire_argv = w.Acquire();
  Argv unlock_argv = w.Unlock();
  {
    // Sanity: the pair does what it should before it is timed.
    const Reply a = emu.Execute(acquire_argv, WallMs());
    const Reply u = emu.Execute(unlock_argv, WallMs());
    if (a.type != Reply::Type::kNull || u.type != Reply::Type::kInteger || u.integer != 1) {
      std::cerr << "bench_scripts: unexpected emulator replies: " << a.Debug() << " " << u.Debug()
                << "\n";
      return std::nullopt;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  int64_t now_ms = WallMs();
  for (int64_t i = 0; i < pairs; ++i) {
    NextRequest(w, i, &unlock_argv);
    emu.Execute(acquire_argv, now_ms);
    emu.Execute(unlock_argv, now_ms);
    if ((i & 1023) == 0) now_ms = WallMs();
  }
  return 2.0 * static_cast<double>(pairs) / Seconds(std::chrono::steady_clock::now() - start);
}

// One round on a fresh redis-server started for it, EVALSHA pipelined `pipeline` deep.
std::optional<double> MeasureRedis(const std::string& version, const std::string& acquire,
                                   const std::string& unlock, int64_t pairs, int pipeline) {
  std::string error;
  auto redis = lockstep::RedisProcess::Start({}, &error);
  if (!redis) {
    std::cerr << "bench_scripts: cannot start redis-server: " << error << "\n";
    return std::nullopt;
  }
  lockstep::RedisClient live("127.0.0.1", redis->port());
  Workload w;
  w.current = version == "current";
  w.acquire_sha = live.Command({"SCRIPT", "LOAD", acquire}).str;
  w.unlock_sha = live.Command({"SCRIPT", "LOAD", unlock}).str;
  if (w.acquire_sha != lockstep::ScriptHost::Sha1Hex(acquire) ||
      w.unlock_sha != lockstep::ScriptHost::Sha1Hex(unlock)) {
    std::cerr << "bench_scripts: SHA mismatch between emulator and redis-server\n";
    return std::nullopt;
  }
  const Argv acquire_argv = w.Acquire();
  Argv unlock_argv = w.Unlock();
  const auto start = std::chrono::steady_clock::now();
  int64_t sent = 0;
  while (sent < pairs) {
    const int64_t batch = std::min<int64_t>(pipeline / 2, pairs - sent);
    for (int64_t i = 0; i < batch; ++i) {
      NextRequest(w, sent + i, &unlock_argv);
      live.Append(acquire_argv);
      live.Append(unlock_argv);
    }
    for (int64_t i = 0; i < 2 * batch; ++i) {
      const Reply r = live.ReadReply();
      if (r.is_error()) {
        std::cerr << "bench_scripts: redis-server error: " << r.str << "\n";
        return std::nullopt;
      }
    }
    sent += batch;
  }
  return 2.0 * static_cast<double>(pairs) / Seconds(std::chrono::steady_clock::now() - start);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t pairs = 200000;
  int pipeline = 1000;
  std::string version = "v3.13.6";
  std::string side = "both";
  int rounds = 3;
  po::options_description desc(
      "bench_scripts: Redisson lock scripts on the emulator vs a pipelined redis-server");
  desc.add_options()("help", "show this help")(
      "pairs", po::value(&pairs)->default_value(pairs), "acquire+unlock pairs per side")(
      "pipeline", po::value(&pipeline)->default_value(pipeline),
      "commands in flight per batch on the live side")(
      "version", po::value(&version)->default_value(version), "lua/rlock/<version>/ scripts")(
      "rounds", po::value(&rounds)->default_value(rounds),
      "rounds per side, each on a fresh emulator and a fresh redis-server; the median ratio "
      "is reported, so a noisy moment of the machine does not decide the figure")(
      "side", po::value(&side)->default_value(side),
      "both, or only 'emulator' (for profiling it alone, no ratio)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "bench_scripts: " << e.what() << "\n" << desc;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc;
    return 0;
  }
  if (side != "both" && side != "emulator") {
    std::cerr << "bench_scripts: --side must be 'both' or 'emulator'\n";
    return 2;
  }
  if (pairs <= 0 || pipeline <= 0 || rounds <= 0) {
    std::cerr << "bench_scripts: --pairs, --pipeline and --rounds must be positive\n";
    return 2;
  }

  const std::string dir = std::string(LOCKSTEP_SOURCE_DIR) + "/lua/rlock/" + version + "/";
  const std::string acquire = ReadFile(dir + "acquire.lua");
  const std::string unlock = ReadFile(dir + "unlock.lua");
  const double scripts = 2.0 * static_cast<double>(pairs);
  std::printf("lua/rlock/%s acquire+unlock, %lld pairs (%.0f scripts) per side and round, %d "
              "round(s)\n",
              version.c_str(), static_cast<long long>(pairs), scripts, rounds);
  std::fflush(stdout);
  std::vector<double> ratios;
  for (int round = 1; round <= rounds; ++round) {
    const std::optional<double> emu_rate = MeasureEmulator(version, acquire, unlock, pairs);
    if (!emu_rate) return 1;
    if (side == "emulator") {
      std::printf("  round %d  emulator %10.0f scripts/s (%.0f ns/script)\n", round, *emu_rate,
                  1e9 / *emu_rate);
      std::fflush(stdout);
      continue;
    }
    const std::optional<double> live_rate =
        MeasureRedis(version, acquire, unlock, pairs, pipeline);
    if (!live_rate) return 1;
    ratios.push_back(*emu_rate / *live_rate);
    std::printf("  round %d  emulator %10.0f scripts/s (%.0f ns/script)   redis-server 7.0.15 "
                "%8.0f scripts/s   ratio %5.2fx\n",
                round, *emu_rate, 1e9 / *emu_rate, *live_rate, ratios.back());
    std::fflush(stdout);
  }
  if (!ratios.empty()) {
    std::vector<double> sorted = ratios;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    const double median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    std::printf("  ratio emulator/redis: median %.2fx, min %.2fx, max %.2fx (redis-server: "
                "EVALSHA, pipeline %d, loopback)\n",
                median, sorted.front(), sorted.back(), pipeline);
  }
  return 0;
}
