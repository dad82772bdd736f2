// Establishes that a ServerClock moves a real redis-server's wall clock through the time shim
// while it runs: a jump expires keys at once (lazily and by active expiry), TIME moves by the
// jump, a backward jump lengthens PTTL, drift makes TIME run fast or slow, a whole ClockSpec
// makes its jumps on schedule (and its NTP slewing), and monotonic timing (timers, blocking timeouts under a constant
// offset) is untouched. Also that the schedule equals the simulator's Clock for the same spec,
// that the shim reads plain time until its control file exists, and
// interposes exactly the realtime readings of every thread (timeshim_probe).
#include <catch2/catch.hpp>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "live/redis_client.h"
#include "live/redis_process.h"
#include "live/server_clock.h"
#include "base/clock.h"

namespace lockstep {
namespace {

using Steady = std::chrono::steady_clock;
constexpr int64_t kSecondUs = 1'000'000;
// Slack for the time between a reading here and one in the server (a loopback round trip and
// scheduling on a shared machine), not for the shim's arithmetic, which is exact.
constexpr int64_t kSlackUs = 250'000;

// A temporary directory for a control file, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "lockstep-clock-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A redis-server whose wall clock a ServerClock drives.
struct ClockedServer {
  ClockedServer() {
    std::string error;
    clock = ServerClock::Create(dir.path(), &error);
    REQUIRE(clock != nullptr);
    RedisProcess::Options options;
    options.env = clock->Env();
    server = RedisProcess::StartOrThrow(options);
    client = std::make_unique<RedisClient>("127.0.0.1", server->port());
  }
  Reply Command(const Argv& argv) { return client->Command(argv); }

  TempDir dir;
  std::unique_ptr<ServerClock> clock;
  std::unique_ptr<RedisProcess> server;
  std::unique_ptr<RedisClient> client;
};

int64_t ServerTimeUs(RedisClient& client) {
  const Reply time = client.Command({"TIME"});
  REQUIRE(time.type == Reply::Type::kArray);
  REQUIRE(time.elements.size() == 2);
  return std::stoll(time.elements[0].str) * kSecondUs + std::stoll(time.elements[1].str);
}

int64_t Integer(const Reply& reply) {
  REQUIRE(reply.type == Reply::Type::kInteger);
  return reply.integer;
}

// A field of INFO's text, as a number.
int64_t InfoField(RedisClient& client, const std::string& section, const std::string& field) {
  const Reply info = client.Command({"INFO", section});
  REQUIRE(info.type == Reply::Type::kBulk);
  const size_t at = info.str.find("\r\n" + field + ":");
  REQUIRE(at != std::string::npos);
  return std::stoll(info.str.substr(at + field.size() + 3));
}

// Polls DBSIZE (which counts keys that are logically expired but not yet removed) without
// touching any key, until it is `want` or `limit` has passed.
int64_t WaitForDbSize(RedisClient& client, int64_t want, std::chrono::milliseconds limit) {
  const auto deadline = Steady::now() + limit;
  int64_t size = Integer(client.Command({"DBSIZE"}));
  while (size != want && Steady::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    size = Integer(client.Command({"DBSIZE"}));
  }
  return size;
}

int64_t ElapsedUs(Steady::time_point since) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Steady::now() - since).count();
}

TEST_CASE("a +120 s jump expires a PX 60000 key at once, lazily and by active expiry") {
  ClockedServer node;
  REQUIRE(node.clock->attached_processes() >= 1);  // The server did load the shim.
  REQUIRE(node.Command({"SET", "read", "v", "PX", "60000"}) == Reply::Ok());
  REQUIRE(node.Command({"SET", "untouched", "v", "PX", "60000"}) == Reply::Ok());
  const int64_t pttl = Integer(node.Command({"PTTL", "read"}));
  CHECK(pttl > 59'000);
  CHECK(pttl <= 60'000);
  CHECK(InfoField(*node.client, "stats", "expired_keys") == 0);

  node.clock->Jump(120 * kSecondUs);
  CHECK(node.Command({"GET", "read"}).type == Reply::Type::kNull);
  // The other key is never named again: only the server's own expiry cycle can remove it.
  CHECK(WaitForDbSize(*node.client, 0, std::chrono::milliseconds(2000)) == 0);
  CHECK(InfoField(*node.client, "stats", "expired_keys") == 2);
}

TEST_CASE("TIME moves by a jump, forward and back, and agrees with ServerClock::WallUsAt") {
  ClockedServer node;
  const int64_t before_us = ServerTimeUs(*node.client);
  CHECK(std::abs(before_us - ServerClock::RealNowUs()) < kSlackUs);

  node.clock->Jump(120 * kSecondUs);
  const int64_t forward_us = ServerTimeUs(*node.client) - before_us;
  CHECK(forward_us >= 120 * kSecondUs);
  CHECK(forward_us < 120 * kSecondUs + kSlackUs);
  CHECK(node.clock->OffsetUsNow() == 120 * kSecondUs);

  node.clock->Jump(-300 * kSecondUs);
  const int64_t server_us = ServerTimeUs(*node.client);
  const int64_t net_us = server_us - before_us;
  CHECK(net_us <= -180 * kSecondUs + kSlackUs);
  CHECK(net_us > -180 * kSecondUs);
  CHECK(std::abs(server_us - node.clock->WallUsAt(ServerClock::RealNowUs())) < kSlackUs);

  node.clock->SetOffset(0);
  CHECK(std::abs(ServerTimeUs(*node.client) - ServerClock::RealNowUs()) < kSlackUs);
}

TEST_CASE("a backward jump makes PTTL grow by the jump") {
  ClockedServer node;
  REQUIRE(node.Command({"SET", "k", "v", "PX", "10000"}) == Reply::Ok());
  const int64_t before_ms = Integer(node.Command({"PTTL", "k"}));
  node.clock->Jump(-60 * kSecondUs);
  const int64_t after_ms = Integer(node.Command({"PTTL", "k"}));
  CHECK(before_ms <= 10'000);
  CHECK(after_ms > 69'000);
  CHECK(after_ms <= 70'000);
  CHECK(after_ms - before_ms > 59'000);
}

TEST_CASE("drift makes TIME run fast or slow, measured over about half a second each") {
  ClockedServer node;
  // Half a second at +-20 %: 100 ms either way, far beyond a round trip's jitter.
  for (const double drift_ppm : {200'000.0, -200'000.0}) {
    node.clock->SetDriftPpm(drift_ppm);
    const auto start = Steady::now();
    const int64_t server_start_us = ServerTimeUs(*node.client);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const int64_t server_us = ServerTimeUs(*node.client) - server_start_us;
    const int64_t real_us = ElapsedUs(start);
    const double rate = static_cast<double>(server_us) / static_cast<double>(real_us);
    INFO("drift_ppm " << drift_ppm << ": server " << server_us << " us over " << real_us << " us");
    CHECK(rate > 1 + drift_ppm / 1e6 - 0.08);
    CHECK(rate < 1 + drift_ppm / 1e6 + 0.08);
  }
}

TEST_CASE("a ClockSpec applied over real time: initial offset, drift, and a jump on schedule") {
  ClockedServer node;
  ClockSpec spec;
  spec.offset_us = -5 * kSecondUs;
  spec.drift_ppm = 100;
  spec.jumps = {{.at_us = 400'000, .by_us = 30 * kSecondUs}};
  const int64_t zero_us = ServerClock::RealNowUs();
  std::string error;
  REQUIRE(node.clock->Apply(spec, zero_us, &error));
  REQUIRE(node.Command({"SET", "k", "v", "PX", "10000"}) == Reply::Ok());

  const int64_t early_us = ServerTimeUs(*node.client) - ServerClock::RealNowUs();
  CHECK(std::abs(early_us - (-5 * kSecondUs)) < kSlackUs);
  CHECK(node.Command({"GET", "k"}) == Reply::Bulk("v"));

  // No call from here: the shim makes the jump itself when real time reaches it.
  std::this_thread::sleep_for(std::chrono::microseconds(zero_us + 450'000 - ServerClock::RealNowUs()));
  const int64_t late_us = ServerTimeUs(*node.client) - ServerClock::RealNowUs();
  CHECK(std::abs(late_us - 25 * kSecondUs) < kSlackUs);
  CHECK(node.Command({"GET", "k"}).type == Reply::Type::kNull);
  // 100 ppm over 400 ms is 40 us before the jump, in the harness's view of the schedule.
  CHECK(node.clock->WallUsAt(zero_us + 400'000) == zero_us + 400'000 - 5 * kSecondUs + 40 + 30 * kSecondUs);
}

TEST_CASE("NTP slewing: the wall clock runs slew_ppm slow until the offset is gone") {
  ClockedServer node;
  ClockSpec spec;
  spec.offset_us = 2 * kSecondUs;
  spec.ntp = true;
  spec.slew_ppm = 500'000;  // Half speed: the 2 s offset is gone after 4 s.
  spec.jumps = {{.at_us = 10 * kSecondUs, .by_us = -kSecondUs}};
  const int64_t zero_us = ServerClock::RealNowUs();
  std::string error;
  REQUIRE(node.clock->Apply(spec, zero_us, &error));

  const auto start = Steady::now();
  const int64_t server_start_us = ServerTimeUs(*node.client);
  CHECK(std::abs(server_start_us - ServerClock::RealNowUs() - 2 * kSecondUs) < kSlackUs);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const double rate = static_cast<double>(ServerTimeUs(*node.client) - server_start_us) /
                      static_cast<double>(ElapsedUs(start));
  CHECK(rate > 0.42);
  CHECK(rate < 0.58);

  // The rest of the schedule, as the harness (and the shim) compute it.
  const ServerClock& clock = *node.clock;
  CHECK(clock.WallUsAt(zero_us + 2 * kSecondUs) == zero_us + 3 * kSecondUs);
  CHECK(clock.WallUsAt(zero_us + 4 * kSecondUs) == zero_us + 4 * kSecondUs);
  CHECK(clock.WallUsAt(zero_us + 9 * kSecondUs) == zero_us + 9 * kSecondUs);
  // A backward jump of 1 s: slewed away at 1.5 times real speed over the next 2 s.
  CHECK(clock.WallUsAt(zero_us + 10 * kSecondUs) == zero_us + 9 * kSecondUs);
  CHECK(clock.WallUsAt(zero_us + 11 * kSecondUs) == zero_us + 10'500'000);
  CHECK(clock.WallUsAt(zero_us + 13 * kSecondUs) == zero_us + 13 * kSecondUs);
}

TEST_CASE("the schedule a ClockSpec becomes is the simulator's Clock, to the microsecond") {
  using J = ClockSpec::Jump;
  const std::vector<ClockSpec> specs = [] {
    std::vector<ClockSpec> out(6);
    out[0].offset_us = -150'000;
    out[1].drift_ppm = 250;
    out[1].jumps = {J{3'000'000, 40'000'000}, J{1'000'000, -2'000'000}, J{3'000'000, 1'000}};
    out[2].offset_us = -150'000;
    out[2].ntp = true;
    out[2].jumps = {J{45'000'000, 2'000'000}};
    out[3].offset_us = 700'000;
    out[3].drift_ppm = -80;
    out[3].ntp = true;
    out[3].slew_ppm = 400;
    out[3].jumps = {J{0, 5'000}, J{1'000'000, -3'000'000}, J{1'500'000, 250'000}};
    out[4].drift_ppm = 100'000;
    out[4].ntp = true;
    out[4].slew_ppm = 50'000;
    out[4].jumps = {J{2'000'000, -500'000}};
    out[5].offset_us = 1'000'000;
    out[5].ntp = true;
    out[5].jumps = {J{100'000'000, -1'000'000}};
    return out;
  }();
  constexpr int64_t kStartUnixMs = 1'790'000'000'000;
  constexpr int64_t kZeroUs = kStartUnixMs * 1000;
  TempDir dir;
  std::string error;
  auto clock = ServerClock::Create(dir.path(), &error);
  REQUIRE(clock != nullptr);
  for (size_t i = 0; i < specs.size(); ++i) {
    REQUIRE(clock->Apply(specs[i], kZeroUs, &error));
    const Clock expected(specs[i], kStartUnixMs);
    // Every 1/7 s over the first 5 minutes, and around every jump.
    std::vector<TrueTime> instants;
    for (TrueTime t = 0; t < 300 * kSecondUs; t += kSecondUs / 7) instants.push_back(t);
    for (const ClockSpec::Jump& jump : specs[i].jumps) {
      for (TrueTime d : {-1, 0, 1}) instants.push_back(std::max<TrueTime>(0, jump.at_us + d));
    }
    for (TrueTime t : instants) {
      INFO("spec " << i << " at true time " << t << " us");
      CHECK(std::abs(clock->WallUsAt(kZeroUs + t) - expected.WallUs(t)) <= 1);
    }
  }
}

TEST_CASE("ClockSpecs the shim cannot make are refused with a message") {
  ClockSpec no_slew;
  no_slew.ntp = true;
  no_slew.slew_ppm = 0;
  CHECK_THAT(ServerClock::Check(no_slew), Catch::Contains("slew_ppm"));
  ClockSpec backwards;
  backwards.drift_ppm = -1e6;
  CHECK_THAT(ServerClock::Check(backwards), Catch::Contains("drift_ppm"));
  ClockSpec many;
  many.jumps.resize(64);
  CHECK_THAT(ServerClock::Check(many), Catch::Contains("at most 63 jumps"));
  many.ntp = true;
  many.jumps.resize(32);
  CHECK_THAT(ServerClock::Check(many), Catch::Contains("at most 31 jumps with ntp"));
  CHECK(ServerClock::Check(ClockSpec{}).empty());

  TempDir dir;
  std::string error;
  auto clock = ServerClock::Create(dir.path(), &error);
  REQUIRE(clock != nullptr);
  CHECK_FALSE(clock->Apply(backwards, ServerClock::RealNowUs(), &error));
  CHECK_THAT(error, Catch::Contains("drift_ppm"));
  CHECK(clock->OffsetUsNow() == 0);  // The schedule is unchanged.
}

TEST_CASE("monotonic timing is untouched: timers run and a BLPOP times out after about 1 s") {
  ClockedServer node;
  // An hour back: a timer on the wall clock would wait an hour; serverCron runs on the
  // monotonic clock, so active expiry still removes a short-lived key that is never touched.
  node.clock->Jump(-3600 * kSecondUs);
  REQUIRE(node.Command({"SET", "short", "v", "PX", "300"}) == Reply::Ok());
  CHECK(WaitForDbSize(*node.client, 0, std::chrono::milliseconds(2000)) == 0);
  CHECK(node.Command({"PING"}) == Reply::Status("PONG"));

  node.clock->Jump(7200 * kSecondUs);
  const auto start = Steady::now();
  CHECK(node.Command({"BLPOP", "nothing", "1"}).type == Reply::Type::kNull);
  const int64_t waited_us = ElapsedUs(start);
  CHECK(waited_us >= 900'000);
  CHECK(waited_us < 1'600'000);
}

TEST_CASE("Redis 7.0's blocking timeouts follow its wall clock: a jump ends a BLPOP early") {
  ClockedServer node;
  RedisClient blocked("127.0.0.1", node.server->port());
  int64_t waited_us = 0;
  Reply reply;
  std::thread waiter([&] {
    const auto start = Steady::now();
    reply = blocked.Command({"BLPOP", "nothing", "3"});
    waited_us = ElapsedUs(start);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  node.clock->Jump(10 * kSecondUs);
  waiter.join();
  CHECK(reply.type == Reply::Type::kNull);
  CHECK(waited_us < 1'500'000);
}

TEST_CASE("the shim reads plain time until its control file exists, then follows it") {
  TempDir dir;
  RedisProcess::Options options;
  options.env = {{"LD_PRELOAD", ServerClock::DefaultShimPath()},
                 {"LOCKSTEP_TIMESHIM_CONTROL", dir.path() + "/timeshim.control"}};
  auto server = RedisProcess::StartOrThrow(options);
  RedisClient client("127.0.0.1", server->port());
  CHECK(std::abs(ServerTimeUs(client) - ServerClock::RealNowUs()) < kSlackUs);

  std::string error;
  auto clock = ServerClock::Create(dir.path(), &error);
  REQUIRE(clock != nullptr);
  CHECK(clock->attached_processes() == 0);
  clock->Jump(120 * kSecondUs);
  // The shim looks for the file again at most every 100 ms.
  const auto deadline = Steady::now() + std::chrono::milliseconds(1000);
  int64_t offset_us = ServerTimeUs(client) - ServerClock::RealNowUs();
  while (offset_us < 60 * kSecondUs && Steady::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    offset_us = ServerTimeUs(client) - ServerClock::RealNowUs();
  }
  CHECK(std::abs(offset_us - 120 * kSecondUs) < kSlackUs);
  CHECK(clock->attached_processes() == 1);
}

TEST_CASE("a server restarted with the same environment reads the same clock") {
  ClockedServer node;
  node.clock->Jump(-90 * kSecondUs);
  RedisProcess::Options options;
  options.env = node.clock->Env();
  node.client.reset();
  node.server.reset();  // Stopped, as after a crash; the ServerClock stays.
  node.server = RedisProcess::StartOrThrow(options);
  RedisClient client("127.0.0.1", node.server->port());
  CHECK(std::abs(ServerTimeUs(client) - ServerClock::RealNowUs() + 90 * kSecondUs) < kSlackUs);
  CHECK(node.clock->attached_processes() == 2);
}

// Runs timeshim_probe with `env` added to its environment; returns its readings by name.
std::map<std::string, int64_t> Probe(const std::vector<std::pair<std::string, std::string>>& env) {
  std::string command;
  for (const auto& [name, value] : env) command += name + "='" + value + "' ";
  command += LOCKSTEP_TIMESHIM_PROBE;
  FILE* out = ::popen(command.c_str(), "r");
  REQUIRE(out != nullptr);
  std::map<std::string, int64_t> readings;
  char name[64];
  long long value = 0;
  while (::fscanf(out, "%63s %lld", name, &value) == 2) readings[name] = value;
  REQUIRE(::pclose(out) == 0);
  REQUIRE(readings.size() == 9);
  return readings;
}

int64_t OwnClockUs(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kSecondUs + ts.tv_nsec / 1000;
}

TEST_CASE("the shim moves every realtime reading of every thread and no other clock") {
  TempDir dir;
  std::string error;
  auto clock = ServerClock::Create(dir.path(), &error);
  REQUIRE(clock != nullptr);
  clock->SetOffset(3600 * kSecondUs);

  const int64_t real_us = OwnClockUs(CLOCK_REALTIME);
  const int64_t monotonic_us = OwnClockUs(CLOCK_MONOTONIC);
  const std::map<std::string, int64_t> shimmed = Probe(clock->Env());
  for (const char* name : {"realtime", "realtime_coarse", "gettimeofday", "timespec_get",
                           "thread_realtime", "time"}) {
    INFO(name);
    // time() has whole seconds, the coarse clock a tick's resolution.
    CHECK(std::abs(shimmed.at(name) - real_us - 3600 * kSecondUs) < kSlackUs + kSecondUs);
  }
  CHECK(std::abs(shimmed.at("monotonic") - monotonic_us) < kSlackUs);
  CHECK(std::abs(shimmed.at("monotonic_raw") - OwnClockUs(CLOCK_MONOTONIC_RAW)) < kSlackUs);
  CHECK(std::abs(shimmed.at("boottime") - OwnClockUs(CLOCK_BOOTTIME)) < kSlackUs);
  CHECK(clock->attached_processes() == 1);

  // Without a control file, or without the variable naming one: plain time.
  for (const auto& env : std::vector<std::vector<std::pair<std::string, std::string>>>{
           {{"LD_PRELOAD", clock->shim_path()}, {"LOCKSTEP_TIMESHIM_CONTROL", dir.path() + "/none"}},
           {{"LD_PRELOAD", clock->shim_path()}}}) {
    const std::map<std::string, int64_t> plain = Probe(env);
    CHECK(std::abs(plain.at("realtime") - OwnClockUs(CLOCK_REALTIME)) < kSlackUs);
    CHECK(std::abs(plain.at("gettimeofday") - OwnClockUs(CLOCK_REALTIME)) < kSlackUs);
    CHECK(std::abs(plain.at("monotonic") - OwnClockUs(CLOCK_MONOTONIC)) < kSlackUs);
  }
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

TEST_CASE("readers in another process never see a torn schedule while it is rewritten") {
  TempDir dir;
  std::string error;
  auto clock = ServerClock::Create(dir.path(), &error);
  REQUIRE(clock != nullptr);
  // Two schedules whose fields, mixed, give other offsets: true time 0 100 s ago and a 10 %
  // fast clock read +10 s now; 200 s ago and 10 % slow, -20 s. A reader mixing one's start
  // with the other's drift would see -10 s or +20 s.
  ClockSpec fast;
  fast.drift_ppm = 100'000;
  ClockSpec slow;
  slow.drift_ppm = -100'000;
  const int64_t now_us = ServerClock::RealNowUs();
  REQUIRE(clock->Apply(fast, now_us - 100 * kSecondUs, &error));

  std::string command;
  for (const auto& [name, value] : clock->Env()) command += name + "='" + value + "' ";
  command += std::string(LOCKSTEP_TIMESHIM_PROBE) + " stress 400";
  FILE* out = ::popen(command.c_str(), "r");
  REQUIRE(out != nullptr);
  int64_t writes = 0;
  bool applied = true;
  const auto until = Steady::now() + std::chrono::milliseconds(600);
  while (Steady::now() < until) {
    applied = applied && clock->Apply(writes % 2 == 0 ? slow : fast,
                                      now_us - (writes % 2 == 0 ? 200 : 100) * kSecondUs, &error);
    ++writes;
  }
  REQUIRE(applied);
  std::map<std::string, int64_t> seen;
  char offset[32];
  long long count = 0;
  while (::fscanf(out, " offset %31s %lld", offset, &count) == 2) seen[offset] = count;
  REQUIRE(::pclose(out) == 0);
  INFO("writes " << writes);
  std::string seen_text;
  for (const auto& [offset_s, n] : seen) seen_text += " " + offset_s + " s: " + std::to_string(n);
  INFO("offsets seen:" << seen_text);
  CHECK(writes > 100);
  CHECK(seen.size() == 2);
  CHECK(seen["10"] > 0);
  CHECK(seen["-20"] > 0);
}

}  // namespace
}  // namespace lockstep
