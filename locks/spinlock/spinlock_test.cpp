// Establishes that the SpinLock state machine polls with Redisson's exponential back-off
// (1, 2, ~4 ... 128 ms), never subscribes, unlocks with its own latch script, renews with the
// RLock watchdog and keeps the internalLockLeaseTime race of tryLockInnerAsync.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "locks/factory.h"
#include "locks/scripts.h"
#include "locks/spinlock/spinlock.h"
#include "locks/testing.h"
#include "base/random.h"

#ifndef LOCKSTEP_SOURCE_DIR
#define LOCKSTEP_SOURCE_DIR "."
#endif

namespace Catch {
template <>
struct StringMaker<lockstep::Reply> {
  static std::string convert(const lockstep::Reply& reply) { return reply.Debug(); }
};
}  // namespace Catch

namespace {

using lockstep::Argv;
using lockstep::Reply;
using lockstep::locks::AcquireArgs;
using lockstep::locks::ClientConfig;
using lockstep::locks::LoadScripts;
using lockstep::locks::MakeSpinLock;
using lockstep::locks::OpResult;
using lockstep::locks::ScriptSet;
using lockstep::locks::SpinBackOff;
using lockstep::locks::testing::World;
using Status = OpResult::Status;
using Catch::Matchers::Contains;

const std::string kLuaDir = std::string(LOCKSTEP_SOURCE_DIR) + "/lua";
constexpr int64_t kMs = 1'000;
constexpr int64_t kSecond = 1'000'000;

ScriptSet Scripts() {
  std::string error;
  auto scripts = LoadScripts(kLuaDir, "spinlock", lockstep::locks::testing::VersionOf("current"), {}, &error);
  INFO(error);
  REQUIRE(scripts.has_value());
  return *scripts;
}

ClientConfig Config(const std::string& uuid, int threads = 1) {
  ClientConfig config;
  config.uuid = uuid;
  config.version = lockstep::locks::testing::VersionOf("current");
  config.threads = threads;
  return config;
}

int AddClient(World& world, const std::string& uuid, int threads = 1, uint64_t seed = 1) {
  return world.AddClient(MakeSpinLock(Config(uuid, threads), Scripts()), seed);
}

AcquireArgs Lock(int64_t lease_us = -1) {
  return AcquireArgs{AcquireArgs::Mode::kLock, 0, lease_us};
}
AcquireArgs TryLock(int64_t wait_us, int64_t lease_us = -1) {
  return AcquireArgs{AcquireArgs::Mode::kTryLock, wait_us, lease_us};
}
AcquireArgs TryLockNoWait() { return AcquireArgs{AcquireArgs::Mode::kTryLockNoWait, 0, -1}; }

Reply Int(int64_t v) { return Reply::Integer(v); }
Reply Bulk(const std::string& s) { return Reply::Bulk(s); }

lockstep::locks::testing::Completion Done(const World& world, int client, int thread = 0) {
  const auto done = world.Last(client, thread);
  REQUIRE(done.has_value());
  return *done;
}

std::vector<int64_t> SentAt(const World& world, int client, const std::string& label) {
  std::vector<int64_t> at;
  for (const auto& command : world.Sent(client, label)) at.push_back(command.at_us);
  return at;
}

// Another process holds the lock for ttl_ms.
void HoldElsewhere(World& world, int64_t ttl_ms) {
  REQUIRE(world.Exec({"HSET", "lock", "other:1", "1"}) == Int(1));
  REQUIRE(world.Exec({"PEXPIRE", "lock", std::to_string(ttl_ms)}) == Int(1));
}

}  // namespace

TEST_CASE("SpinLock: scripts from spinlock/current plus the RLock renew, current only",
          "[spinlock]") {
  const ScriptSet scripts = Scripts();
  CHECK(scripts.bodies.size() == 4);
  CHECK_THAT(scripts.files.at("acquire"), Contains("lua/spinlock/current/acquire.lua"));
  CHECK_THAT(scripts.files.at("unlock"), Contains("lua/spinlock/current/unlock.lua"));
  CHECK_THAT(scripts.files.at("force_unlock"), Contains("lua/spinlock/current/force_unlock.lua"));
  CHECK_THAT(scripts.files.at("renew"), Contains("lua/rlock/current/renew.lua"));

  std::string error;
  CHECK_FALSE(LoadScripts(kLuaDir, "spinlock", lockstep::locks::testing::VersionOf("v3.13.6"), {}, &error).has_value());
  CHECK_THAT(error, Contains("no such script folder"));
  ClientConfig config = Config("A");
  config.version = lockstep::locks::testing::VersionOf("v3.13.6");
  CHECK_FALSE(lockstep::locks::CheckSpinLockConfig(config, scripts, &error));
  CHECK_THAT(error, Contains("3.15.0"));
  CHECK(lockstep::locks::MakeProtocol("spinlock", Config("A"), scripts, &error) != nullptr);
}

TEST_CASE("SpinLock: the back-off sleeps 1, 2, ~4 ... ms and stays at 128 ms", "[spinlock]") {
  World world;
  const int a = AddClient(world, "A", 1, /*seed=*/7);
  HoldElsewhere(world, 60'000);
  world.Acquire(a, 0, Lock());
  world.RunFor(3 * kSecond);
  CHECK(world.Busy(a, 0));
  CHECK(world.CountSent(a, "subscribe") == 0);

  const std::vector<int64_t> at = SentAt(world, a, "acquire");
  REQUIRE(at.size() >= 20);
  CHECK(at[0] == 0);
  std::vector<int64_t> gaps;
  for (size_t i = 1; i < at.size(); ++i) gaps.push_back(at[i] - at[i - 1]);

  // The first two sleeps have no jitter: nextInt(1) is 0.
  CHECK(gaps[0] == 1 * kMs);
  CHECK(gaps[1] == 2 * kMs);
  // Then next = next * 2 + rand[0, fails), fails = the number of sleeps so far, at most 128.
  bool capped = false;
  for (size_t k = 2; k < gaps.size(); ++k) {
    INFO("sleep " << k << ": " << gaps[k] << " us after " << gaps[k - 1]);
    if (capped) {
      CHECK(gaps[k] == 128 * kMs);
      continue;
    }
    const int64_t low = std::min<int64_t>(2 * gaps[k - 1], 128 * kMs);
    const int64_t high = std::min<int64_t>(2 * gaps[k - 1] + static_cast<int64_t>(k - 1) * kMs,
                                           128 * kMs);
    CHECK(gaps[k] >= low);
    CHECK(gaps[k] <= high);
    CHECK(gaps[k] % kMs == 0);
    capped = gaps[k] == 128 * kMs;
  }
  CHECK(capped);
  CHECK(gaps.back() == 128 * kMs);

  // Exactly the sleeps of ExponentialBackOff drawing from this client's generator.
  lockstep::Prng rng(7);
  SpinBackOff backoff;
  int64_t expected = 0;
  for (size_t i = 1; i < at.size(); ++i) {
    expected += backoff.NextSleepMs(rng) * kMs;
    CHECK(at[i] == expected);
  }
}

TEST_CASE("SpinLock: tryLock makes one more attempt after the sleep that crosses the wait",
          "[spinlock]") {
  World world;
  const int a = AddClient(world, "A");
  HoldElsewhere(world, 60'000);
  world.Acquire(a, 0, TryLock(10 * kMs));
  world.RunFor(1 * kSecond);
  const auto done = Done(world, a);
  CHECK(done.result.status == Status::kFail);
  CHECK(done.result.detail == "wait time elapsed");
  const std::vector<int64_t> at = SentAt(world, a, "acquire");
  REQUIRE(at.size() == 5);  // 0, 1, 3, 7 or 8, then one at >= 10 ms.
  CHECK(at[1] == 1 * kMs);
  CHECK(at[2] == 3 * kMs);
  CHECK(at[3] < 10 * kMs);
  CHECK(at[4] >= 10 * kMs);
  CHECK(done.at_us == at[4]);
}

TEST_CASE("SpinLock: a poll after the holder's key expired wins, the watchdog renews",
          "[spinlock]") {
  World world;
  const int a = AddClient(world, "A");
  HoldElsewhere(world, 50);
  world.Acquire(a, 0, Lock());
  world.RunFor(1 * kSecond);
  const auto done = Done(world, a);
  CHECK(done.result.status == Status::kOk);
  const std::vector<int64_t> at = SentAt(world, a, "acquire");
  REQUIRE(at.size() >= 2);
  CHECK(done.at_us == at.back());
  CHECK(at.back() >= 50 * kMs);
  CHECK(at[at.size() - 2] < 50 * kMs);
  CHECK(world.Sent(a, "acquire").back().argv.at(4) == "30000");
  CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("1"));

  // The watchdog: 10 s after the acquisition, PEXPIRE back to 30 s.
  world.RunUntil(done.at_us + 10 * kSecond);
  REQUIRE(world.CountSent(a, "renew") == 1);
  CHECK(world.Sent(a, "renew").at(0).at_us == done.at_us + 10 * kSecond);
  CHECK(world.Exec({"PTTL", "lock"}) == Int(30000));
}

TEST_CASE("SpinLock: reentrant unlock with the latch script, nothing published", "[spinlock]") {
  World world;
  const int a = AddClient(world, "A");
  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("2"));

  world.Release(a, 0);
  world.RunFor(0);
  CHECK(Done(world, a).result.status == Status::kOk);
  CHECK(Done(world, a).result.value == 0);
  const Argv unlock = world.Sent(a, "unlock").at(0).argv;
  CHECK(std::vector<std::string>(unlock.begin() + 2, unlock.end()) ==
        std::vector<std::string>{"2", "lock", "redisson_unlock_latch:{lock}:A-1", "30000", "A:1",
                                 "13500"});
  world.Release(a, 0);
  world.RunFor(0);
  CHECK(Done(world, a).result.value == 1);
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));
  CHECK(world.CountSent(a, "del_latch") == 2);
  CHECK(world.CountSent(a, "subscribe") == 0);

  world.Release(a, 0);
  world.RunFor(0);
  CHECK(Done(world, a).result.status == Status::kFail);
  CHECK_THAT(Done(world, a).result.detail, Contains("IllegalMonitorStateException"));
}

TEST_CASE("SpinLock: a no-lease attempt sends the lease another thread left in the field (#3484)",
          "[spinlock]") {
  World world;
  const int a = AddClient(world, "A", 2);
  world.Acquire(a, 0, TryLock(0, 5 * kSecond));
  world.RunFor(0);
  REQUIRE(Done(world, a, 0).result.status == Status::kOk);
  CHECK(world.Exec({"PTTL", "lock"}) == Int(5000));

  world.Acquire(a, 1, TryLockNoWait());
  world.RunFor(0);
  CHECK(Done(world, a, 1).result.status == Status::kFail);
  CHECK(world.Sent(a, "acquire").at(1).argv.at(4) == "5000");  // Not the 30 s watchdog.

  // A full unlock resets the field; thread 1 now acquires with the watchdog's 30 s.
  world.Release(a, 0);
  world.RunFor(0);
  REQUIRE(Done(world, a, 0).result.value == 1);
  world.Acquire(a, 1, TryLockNoWait());
  world.RunFor(0);
  CHECK(Done(world, a, 1).result.status == Status::kOk);
  CHECK(world.Sent(a, "acquire").at(2).argv.at(4) == "30000");
  CHECK(world.Exec({"PTTL", "lock"}) == Int(30000));
}

TEST_CASE("SpinLock: forceUnlock deletes the lock and stops the watchdog", "[spinlock]") {
  World world;
  const int a = AddClient(world, "A");
  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  world.ForceUnlock(a, 0);
  world.RunFor(0);
  CHECK(Done(world, a).result.status == Status::kOk);
  CHECK(Done(world, a).result.value == 1);
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));
  world.RunFor(35 * kSecond);
  CHECK(world.CountSent(a, "renew") == 0);
}
