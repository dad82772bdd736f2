// Establishes that the CountDownLatch state machine, driven over the emulated Redis by
// locks/testing.h, does what Redisson's RedissonCountDownLatch does in 3.13.6 and at HEAD
// ("current"): each process sets the count once (trySetCount, only if absent), await returns
// after the N-th countDown and not before (woken by ZERO_COUNT on the latch channel),
// await(wait) gives up when the wait elapses, countDown at or below 0 deletes the key and
// publishes only at exactly 0, and 3.13.6 resends a countDown whose reply was lost (counting
// down twice, #3850) where current does not.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "locks/countdownlatch/countdownlatch.h"
#include "locks/factory.h"
#include "locks/scripts.h"
#include "locks/testing.h"

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
using lockstep::locks::MakeCountDownLatch;
using lockstep::locks::OpResult;
using lockstep::locks::ScriptSet;
using lockstep::locks::testing::Listener;
using lockstep::locks::testing::World;
using Status = OpResult::Status;
using Catch::Matchers::StartsWith;

const std::string kLuaDir = std::string(LOCKSTEP_SOURCE_DIR) + "/lua";
const std::string kChannel = "redisson_countdownlatch__channel__{latch}";
constexpr int64_t kMs = 1'000;
constexpr int64_t kSecond = 1'000'000;
constexpr int64_t kLatencyUs = 1 * kMs;  // Executes 1 ms after sending; the reply 1 ms later.

ScriptSet Scripts(const std::string& version) {
  std::string error;
  auto scripts = LoadScripts(kLuaDir, "countdownlatch", lockstep::locks::testing::VersionOf(version), {}, &error);
  INFO(error);
  REQUIRE(scripts.has_value());
  return *scripts;
}

ClientConfig Config(const std::string& uuid, const std::string& version, int64_t count,
                    int threads = 1) {
  ClientConfig config;
  config.uuid = uuid;
  config.version = lockstep::locks::testing::VersionOf(version);
  config.threads = threads;
  config.lock_name = "latch";
  config.permits = count;
  return config;
}

int AddClient(World& world, const std::string& uuid, const std::string& version, int64_t count,
              int threads = 1) {
  return world.AddClient(
      MakeCountDownLatch(Config(uuid, version, count, threads), Scripts(version)));
}

AcquireArgs Await() { return AcquireArgs{AcquireArgs::Mode::kLock, 0, -1}; }
AcquireArgs AwaitFor(int64_t wait_us) {
  return AcquireArgs{AcquireArgs::Mode::kTryLock, wait_us, -1};
}

Reply Int(int64_t v) { return Reply::Integer(v); }
Reply Bulk(const std::string& s) { return Reply::Bulk(s); }

std::vector<std::string> Tail(const Argv& argv) {
  REQUIRE(argv.size() >= 3);
  REQUIRE(argv[0] == "EVAL");
  return std::vector<std::string>(argv.begin() + 2, argv.end());
}

lockstep::locks::testing::Completion Done(const World& world, int client, int thread) {
  const auto done = world.Last(client, thread);
  REQUIRE(done.has_value());
  return *done;
}

}  // namespace

TEST_CASE("CountDownLatch: await returns after the N-th countDown, not before",
          "[countdownlatch]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", version, 3, 2);
  const int b = AddClient(world, "B", version, 3);

  world.Acquire(a, 0, Await());
  world.Acquire(a, 1, AwaitFor(10 * kSecond));
  world.RunFor(100 * kMs);
  CHECK(world.CountSent(a, "try_set_count") == 1);  // Once per process.
  CHECK(Tail(world.Sent(a, "try_set_count").at(0).argv) ==
        std::vector<std::string>{"2", "latch", kChannel, "1", "3", "publish"});
  CHECK(world.Exec({"GET", "latch"}) == Bulk("3"));
  CHECK(world.Busy(a, 0));
  CHECK(world.Busy(a, 1));
  CHECK(world.CountSent(a, "subscribe") == 1);
  CHECK(world.Sent(a, "get_count").at(0).argv == Argv{"GET", "latch"});

  for (int n = 1; n <= 2; ++n) {
    world.Release(b, 0);
    world.RunFor(100 * kMs);
    INFO("countDown " << n);
    CHECK(Done(world, b, 0).result.status == Status::kOk);
    CHECK_FALSE(Done(world, b, 0).result.has_value);
    CHECK(world.Exec({"GET", "latch"}) == Bulk(std::to_string(3 - n)));
    CHECK(world.Busy(a, 0));
    CHECK(world.Busy(a, 1));
  }
  CHECK(world.CountSent(b, "try_set_count") == 1);  // Found the latch: changed nothing.
  CHECK(Tail(world.Sent(b, "count_down").at(0).argv) ==
        std::vector<std::string>{"2", "latch", kChannel, "0", "publish"});

  const int64_t last_at = world.now_us();
  world.Release(b, 0);
  world.RunFor(100 * kMs);
  CHECK(world.Exec({"EXISTS", "latch"}) == Int(0));
  for (int thread = 0; thread < 2; ++thread) {
    INFO("thread " << thread);
    const auto done = Done(world, a, thread);
    CHECK(done.result.status == Status::kOk);
    CHECK(done.result.value == 0);
    // countDown runs at +1 ms and publishes 0, delivered at +2 ms; GET replies at +4 ms.
    CHECK(done.at_us == last_at + 4 * kMs);
  }
  CHECK(world.Subscribers(kChannel) == 0);
}

TEST_CASE("CountDownLatch: await(wait) fails once the wait elapses", "[countdownlatch]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", version, 2);

  world.Acquire(a, 0, AwaitFor(500 * kMs));
  world.RunFor(1 * kSecond);
  const auto done = Done(world, a, 0);
  CHECK(done.result.status == Status::kFail);
  CHECK(done.result.detail == "wait time elapsed (count is 2)");
  // Init 2 ms, then the wait; after it runs out one more GET (+2 ms) still reads 2.
  CHECK(done.at_us == 2 * kMs + 500 * kMs + 2 * kMs);
  CHECK(world.Subscribers(kChannel) == 0);
}

TEST_CASE("CountDownLatch: countDown at or below 0 deletes, only exactly 0 publishes",
          "[countdownlatch]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  auto listener_owner = std::make_unique<Listener>(kChannel);
  Listener* listener = listener_owner.get();
  const int l = world.AddClient(std::move(listener_owner));
  world.Acquire(l, 0, AcquireArgs{});
  world.RunFor(2 * kMs);
  const int a = AddClient(world, "A", version, 1);

  world.Release(a, 0);  // trySetCount(1) publishes NEW_COUNT 1; the count goes 1 -> 0.
  world.RunFor(10 * kMs);
  CHECK(world.Exec({"EXISTS", "latch"}) == Int(0));
  CHECK(listener->messages == std::vector<std::string>{"1", "0"});

  world.Release(a, 0);  // DECR of a missing key gives -1: deleted again, nothing published.
  world.RunFor(10 * kMs);
  CHECK(Done(world, a, 0).result.status == Status::kOk);
  CHECK(world.Exec({"EXISTS", "latch"}) == Int(0));
  CHECK(listener->messages == std::vector<std::string>{"1", "0"});
  CHECK(world.CountSent(a, "try_set_count") == 1);

  // Now an await of this (initialised) process passes at once: a missing latch reads 0.
  world.Acquire(a, 0, Await());
  world.RunFor(10 * kMs);
  CHECK(Done(world, a, 0).result.status == Status::kOk);
  CHECK(world.CountSent(a, "subscribe") == 0);
}

TEST_CASE("CountDownLatch: 3.13.6 resends a countDown whose reply was lost (counts down "
          "twice, #3850), current does not",
          "[countdownlatch]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", version, 3);

  world.DropReplies(a, "count_down");
  world.Release(a, 0);
  world.RunFor(10 * kSecond);
  const auto done = Done(world, a, 0);
  if (version == "v3.13.6") {
    CHECK(world.CountSent(a, "count_down") == 2);
    CHECK(done.result.status == Status::kOk);
    CHECK(world.Exec({"GET", "latch"}) == Bulk("1"));  // One countDown(), two decrements.
  } else {
    CHECK(world.CountSent(a, "count_down") == 1);
    CHECK(done.result.status == Status::kInfo);
    CHECK_THAT(done.result.detail, StartsWith("RedisTimeoutException"));
    CHECK(world.Exec({"GET", "latch"}) == Bulk("2"));
  }
}

TEST_CASE("CountDownLatch: forceUnlock deletes the latch (NEW_COUNT 1)", "[countdownlatch]") {
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", "current", 2);
  world.Release(a, 0);
  world.RunFor(10 * kMs);
  REQUIRE(world.Exec({"GET", "latch"}) == Bulk("1"));
  world.ForceUnlock(a, 0);
  world.RunFor(10 * kMs);
  CHECK(Done(world, a, 0).result.value == 1);
  CHECK(Tail(world.Sent(a, "delete").at(0).argv) ==
        std::vector<std::string>{"2", "latch", kChannel, "1", "publish"});
  CHECK(world.Exec({"EXISTS", "latch"}) == Int(0));
  world.ForceUnlock(a, 0);
  world.RunFor(10 * kMs);
  CHECK(Done(world, a, 0).result.value == 0);
}

TEST_CASE("CountDownLatch: the factory makes it and reports missing scripts",
          "[countdownlatch]") {
  std::string error;
  CHECK(lockstep::locks::MakeProtocol("countdownlatch", Config("A", "v3.13.6", 2),
                                      Scripts("v3.13.6"), &error) != nullptr);
  ScriptSet partial = Scripts("current");
  partial.bodies.erase("count_down");
  CHECK(lockstep::locks::MakeProtocol("countdownlatch", Config("A", "current", 2), partial,
                                      &error) == nullptr);
  CHECK(error == "countdownlatch: missing script(s): count_down");
  CHECK(lockstep::locks::CountDownLatchChannel("{x}") ==
        "redisson_countdownlatch__channel__{{x}}");
}
