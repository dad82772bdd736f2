// Establishes that the semaphore state machine, driven over the emulated Redis by
// locks/testing.h, does what Redisson's RedissonSemaphore does in 3.13.6 and at HEAD
// ("current"): each process sets the permits once (trySetPermits, only if absent), never more
// threads hold permits than there are, a release wakes a waiter through redisson_sc:{name},
// tryAcquire(wait) gives up when the wait elapses, a release without an acquire creates
// permits, and 3.13.6 resends tryAcquire after a lost reply (losing a permit) where current
// does not.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "locks/factory.h"
#include "locks/scripts.h"
#include "locks/semaphore/semaphore.h"
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
using lockstep::locks::MakeSemaphore;
using lockstep::locks::OpResult;
using lockstep::locks::ScriptSet;
using lockstep::locks::testing::World;
using Status = OpResult::Status;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

const std::string kLuaDir = std::string(LOCKSTEP_SOURCE_DIR) + "/lua";
const std::string kChannel = "redisson_sc:{sem}";
constexpr int64_t kMs = 1'000;
constexpr int64_t kSecond = 1'000'000;
constexpr int64_t kLatencyUs = 1 * kMs;  // Executes 1 ms after sending; the reply 1 ms later.

ScriptSet Scripts(const std::string& version) {
  std::string error;
  auto scripts = LoadScripts(kLuaDir, "semaphore", lockstep::locks::testing::VersionOf(version), {}, &error);
  INFO(error);
  REQUIRE(scripts.has_value());
  return *scripts;
}

ClientConfig Config(const std::string& uuid, const std::string& version, int64_t permits,
                    int threads = 1) {
  ClientConfig config;
  config.uuid = uuid;
  config.version = lockstep::locks::testing::VersionOf(version);
  config.threads = threads;
  config.lock_name = "sem";
  config.permits = permits;
  return config;  // Redisson's defaults: timeout 3 s, 3 retries, 1.5 s apart.
}

int AddClient(World& world, const std::string& uuid, const std::string& version,
              int64_t permits, int threads = 1) {
  return world.AddClient(MakeSemaphore(Config(uuid, version, permits, threads),
                                       Scripts(version)));
}

AcquireArgs Acquire(int64_t permits = 1) {  // acquire(permits)
  AcquireArgs args;
  args.mode = AcquireArgs::Mode::kLock;
  args.permits = permits;
  return args;
}
AcquireArgs TryAcquire(int64_t wait_us, int64_t permits = 1) {  // tryAcquire(permits, wait)
  AcquireArgs args;
  args.mode = AcquireArgs::Mode::kTryLock;
  args.wait_us = wait_us;
  args.permits = permits;
  return args;
}
AcquireArgs TryAcquireNoWait(int64_t permits = 1) {  // tryAcquire(permits)
  AcquireArgs args;
  args.mode = AcquireArgs::Mode::kTryLockNoWait;
  args.permits = permits;
  return args;
}

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

TEST_CASE("Semaphore: 3 clients, 2 permits: two hold, the third waits for a release",
          "[semaphore]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", version, 2);
  const int b = AddClient(world, "B", version, 2);
  const int c = AddClient(world, "C", version, 2);

  for (const int client : {a, b, c}) world.Acquire(client, 0, Acquire());
  world.RunFor(100 * kMs);
  // Every process initialised once; only the first found the semaphore missing.
  for (const int client : {a, b, c}) CHECK(world.CountSent(client, "try_set_permits") == 1);
  CHECK(Tail(world.Sent(a, "try_set_permits").at(0).argv) ==
        std::vector<std::string>{"2", "sem", kChannel, "2", "publish"});
  CHECK(Tail(world.Sent(a, "try_acquire").at(0).argv) ==
        std::vector<std::string>{"1", "sem", "1"});
  CHECK(Done(world, a, 0).result.status == Status::kOk);
  CHECK(Done(world, a, 0).result.value == 1);
  CHECK(Done(world, b, 0).result.status == Status::kOk);
  CHECK(world.Busy(c, 0));
  CHECK(world.Exec({"GET", "sem"}) == Bulk("0"));
  CHECK(world.Subscribers(kChannel) == 1);  // C waits on redisson_sc:{sem}.

  const int64_t released_at = world.now_us();
  world.Release(a, 0);
  world.RunFor(100 * kMs);
  CHECK(Done(world, a, 0).result.status == Status::kOk);
  CHECK(Done(world, a, 0).result.value == 1);
  CHECK(Tail(world.Sent(a, "release").at(0).argv) ==
        std::vector<std::string>{"2", "sem", kChannel, "1", "publish"});
  const auto woken = Done(world, c, 0);
  CHECK(woken.result.status == Status::kOk);
  // release runs at +1 ms and publishes "1", delivered at +2 ms; try_acquire replies at +4 ms.
  CHECK(woken.at_us == released_at + 4 * kMs);
  CHECK(world.Exec({"GET", "sem"}) == Bulk("0"));
  CHECK(world.Subscribers(kChannel) == 0);

  // Still never more than two: A cannot get one back until someone releases.
  world.Acquire(a, 0, TryAcquireNoWait());
  world.RunFor(10 * kMs);
  CHECK(Done(world, a, 0).result.status == Status::kFail);
  CHECK(Done(world, a, 0).result.detail == "not enough permits");
  world.Release(b, 0);
  world.Release(c, 0);
  world.RunFor(10 * kMs);
  CHECK(world.Exec({"GET", "sem"}) == Bulk("2"));
}

TEST_CASE("Semaphore: holders never exceed the permits under a steady workload",
          "[semaphore]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  std::vector<int> clients;
  for (const char* uuid : {"A", "B", "C"}) clients.push_back(AddClient(world, uuid, version, 2, 2));

  // Every thread: acquire(), hold 30 ms, release(), again, for 2 s, checked every millisecond.
  // A thread is a holder from its acquire's completion until it calls release.
  enum class Step { kAcquiring, kHolding, kReleasing };
  struct Worker {
    int client;
    int thread;
    Step step = Step::kAcquiring;
    int64_t release_at_us = 0;
    int cycles = 0;
  };
  std::vector<Worker> workers;
  for (const int client : clients) {
    for (int thread = 0; thread < 2; ++thread) {
      workers.push_back(Worker{client, thread});
      world.Acquire(client, thread, Acquire());
    }
  }
  int max_holders = 0;
  while (world.now_us() < 2 * kSecond) {
    world.RunFor(1 * kMs);
    int holders = 0;
    for (Worker& w : workers) {
      if (world.Busy(w.client, w.thread)) continue;
      if (w.step == Step::kAcquiring) {
        REQUIRE(Done(world, w.client, w.thread).result.status == Status::kOk);
        w.step = Step::kHolding;
        w.release_at_us = world.now_us() + 30 * kMs;
      } else if (w.step == Step::kReleasing) {
        REQUIRE(Done(world, w.client, w.thread).result.status == Status::kOk);
        ++w.cycles;
        w.step = Step::kAcquiring;
        world.Acquire(w.client, w.thread, Acquire());
        continue;
      }
      if (world.now_us() >= w.release_at_us) {
        w.step = Step::kReleasing;
        world.Release(w.client, w.thread);
        continue;
      }
      ++holders;
    }
    REQUIRE(holders <= 2);
    max_holders = std::max(max_holders, holders);
  }
  CHECK(max_holders == 2);
  // Redisson's semaphore is not fair: with this world's exact ties the process that subscribed
  // first always retries first, and C's threads are nearly starved. So only the total is
  // checked: 2 permits for 2 s at 30 ms + 4 ms of round trips per cycle, about 116 cycles.
  int total = 0;
  for (const Worker& w : workers) total += w.cycles;
  CHECK(total >= 110);
}

TEST_CASE("Semaphore: tryAcquire(wait) fails once the wait elapses", "[semaphore]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", version, 1);
  const int b = AddClient(world, "B", version, 1);

  world.Acquire(a, 0, Acquire());
  world.RunFor(10 * kMs);
  const int64_t started_at = world.now_us();
  world.Acquire(b, 0, TryAcquire(500 * kMs));
  world.RunFor(1 * kSecond);
  const auto done = Done(world, b, 0);
  CHECK(done.result.status == Status::kFail);
  CHECK(done.result.detail == "wait time elapsed");
  // Init (2 ms) first, then the 500 ms budget: it ends when the local wait runs out.
  CHECK(done.at_us == started_at + 2 * kMs + 500 * kMs);
  CHECK(world.Subscribers(kChannel) == 0);
  CHECK(world.Exec({"GET", "sem"}) == Bulk("0"));
}

TEST_CASE("Semaphore: a release without an acquire creates a permit (no ownership check)",
          "[semaphore]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", version, 2);
  const int b = AddClient(world, "B", version, 2);

  world.Release(a, 0);  // trySetPermits(2) first, then release(1).
  world.RunFor(10 * kMs);
  CHECK(Done(world, a, 0).result.status == Status::kOk);
  CHECK(Done(world, a, 0).result.value == 1);
  CHECK(world.Exec({"GET", "sem"}) == Bulk("3"));

  // Three can now hold it at once.
  world.Acquire(a, 0, TryAcquireNoWait(2));
  world.Acquire(b, 0, TryAcquireNoWait());
  world.RunFor(10 * kMs);
  CHECK(Done(world, a, 0).result.value == 2);
  CHECK(Done(world, b, 0).result.value == 1);
  CHECK(world.Exec({"GET", "sem"}) == Bulk("0"));
  CHECK(world.CountSent(b, "try_set_permits") == 1);  // Found it set: changed nothing.

  // Release gives back what the thread's last acquisition took.
  world.Release(a, 0);
  world.RunFor(10 * kMs);
  CHECK(Done(world, a, 0).result.value == 2);
  CHECK(world.Exec({"GET", "sem"}) == Bulk("2"));
}

TEST_CASE("Semaphore: 3.13.6 resends tryAcquire after a lost reply and loses the permit, "
          "current does not resend",
          "[semaphore]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", version, 1);

  world.DropReplies(a, "try_acquire");
  world.Acquire(a, 0, TryAcquireNoWait());
  world.RunFor(10 * kSecond);
  const auto done = Done(world, a, 0);
  CHECK(world.Exec({"GET", "sem"}) == Bulk("0"));  // The first try_acquire took it.
  if (version == "v3.13.6") {
    // After 3 s and a 1.5 s retry interval the resend finds no permit left.
    CHECK(world.CountSent(a, "try_acquire") == 2);
    CHECK(done.result.status == Status::kFail);
    CHECK(done.at_us == 2 * kMs + 4'500 * kMs + 2 * kMs);
  } else {
    CHECK(world.CountSent(a, "try_acquire") == 1);
    CHECK(done.result.status == Status::kInfo);
    CHECK_THAT(done.result.detail, StartsWith("RedisTimeoutException"));
    CHECK(done.at_us == 2 * kMs + 3 * kSecond);
  }
}

TEST_CASE("Semaphore: 0 permits need no command, negative ones are refused", "[semaphore]") {
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", "current", 1);
  world.Acquire(a, 0, TryAcquire(kSecond, 0));
  CHECK(Done(world, a, 0).result.status == Status::kOk);
  CHECK(Done(world, a, 0).result.value == 0);
  world.Acquire(a, 0, TryAcquire(kSecond, -1));
  CHECK(Done(world, a, 0).result.status == Status::kFail);
  CHECK_THAT(Done(world, a, 0).result.detail, StartsWith("IllegalArgumentException"));
  world.ForceUnlock(a, 0);
  CHECK_THAT(Done(world, a, 0).result.detail, StartsWith("UnsupportedOperationException"));
  CHECK(world.sent().empty());
}

TEST_CASE("Semaphore: the factory makes it, bad permits and missing scripts are reported",
          "[semaphore]") {
  std::string error;
  CHECK(lockstep::locks::MakeProtocol("semaphore", Config("A", "v3.13.6", 3),
                                      Scripts("v3.13.6"), &error) != nullptr);
  CHECK(Scripts("v3.13.6").files.at("release") == kLuaDir + "/semaphore/current/release.lua");
  CHECK(lockstep::locks::MakeProtocol("semaphore", Config("A", "current", -1), Scripts("current"),
                                      &error) == nullptr);
  CHECK(error == "semaphore: permits must be >= 0, not -1");
  ScriptSet partial = Scripts("current");
  partial.bodies.erase("try_set_permits");
  CHECK(lockstep::locks::MakeProtocol("semaphore", Config("A", "current", 1), partial, &error) ==
        nullptr);
  CHECK(error == "semaphore: missing script(s): try_set_permits");
  CHECK(lockstep::locks::SemaphoreChannel("{t}s") == "redisson_sc:{t}s");
}

TEST_CASE("Semaphore: the permit-changing operations, and 3.13.6's addPermits that wakes nobody",
          "[semaphore]") {
  using lockstep::locks::ExtraOp;
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int waiter = AddClient(world, "W", version, 0);
  const int changer = AddClient(world, "X", version, 0);

  world.Acquire(waiter, 0, Acquire());  // No permits: it waits on redisson_sc:{sem}.
  world.RunFor(100 * kMs);
  CHECK(world.Busy(waiter, 0));
  CHECK(world.Exec({"GET", "sem"}) == Bulk("0"));

  world.Extra(changer, 0, ExtraOp::kAddPermits);
  world.RunFor(100 * kMs);
  CHECK(Done(world, changer, 0).result.status == Status::kOk);
  CHECK(Tail(world.Sent(changer, "add_permits").at(0).argv) ==
        std::vector<std::string>{"2", "sem", kChannel, "1", "publish"});
  if (version == "v3.13.6") {
    // Nothing was published: the waiter sleeps on with the permit free.
    CHECK(world.Busy(waiter, 0));
    CHECK(world.Exec({"GET", "sem"}) == Bulk("1"));
    world.RunFor(10 * kSecond);
    CHECK(world.Busy(waiter, 0));
    return;
  }
  // The message "1" woke the waiter, which took the permit.
  CHECK(Done(world, waiter, 0).result.status == Status::kOk);
  CHECK(world.Exec({"GET", "sem"}) == Bulk("0"));

  world.Extra(changer, 0, ExtraOp::kReducePermits);
  world.RunFor(100 * kMs);
  CHECK(Done(world, changer, 0).result.status == Status::kOk);
  CHECK(Tail(world.Sent(changer, "add_permits").at(1).argv) ==
        std::vector<std::string>{"2", "sem", kChannel, "-1", "publish"});
  CHECK(world.Exec({"GET", "sem"}) == Bulk("-1"));

  world.Extra(changer, 0, ExtraOp::kTrySetPermits);  // The key exists: nothing changes.
  world.RunFor(100 * kMs);
  CHECK(Done(world, changer, 0).result.status == Status::kOk);
  CHECK(Done(world, changer, 0).result.value == 0);

  world.Release(waiter, 0);  // Back to 0; then two more, and drain them.
  world.RunFor(100 * kMs);
  world.Extra(changer, 0, ExtraOp::kAddPermits);
  world.RunFor(100 * kMs);
  world.Extra(changer, 0, ExtraOp::kAddPermits);
  world.RunFor(100 * kMs);
  CHECK(world.Exec({"GET", "sem"}) == Bulk("2"));
  world.Extra(changer, 0, ExtraOp::kDrainPermits);
  world.RunFor(100 * kMs);
  CHECK(Done(world, changer, 0).result.status == Status::kOk);
  CHECK(Done(world, changer, 0).result.value == 2);
  CHECK(world.Exec({"GET", "sem"}) == Bulk("0"));
}
