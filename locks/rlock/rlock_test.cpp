// Establishes that the RLock state machine, driven over the emulated Redis by locks/testing.h,
// does what Redisson 3.13.6 and Redisson HEAD ("current") do: the keys and arguments it sends,
// waits and wake-ups, the watchdog's schedule, and what lost replies and crashes lead to,
// including the double execution that 3.13.6's retries cause.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "locks/redisson_common.h"
#include "locks/rlock/rlock.h"
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
using lockstep::locks::MakeRLock;
using lockstep::locks::OpResult;
using lockstep::locks::ScriptSet;
using lockstep::locks::testing::World;
using Status = OpResult::Status;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

const std::string kLuaDir = std::string(LOCKSTEP_SOURCE_DIR) + "/lua";
const std::string kChannel = "redisson_lock__channel:{lock}";
constexpr int64_t kSecond = 1'000'000;

ScriptSet Scripts(const std::string& version) {
  std::string error;
  auto scripts = LoadScripts(kLuaDir, "rlock", lockstep::locks::testing::VersionOf(version), {}, &error);
  INFO(error);
  REQUIRE(scripts.has_value());
  return *scripts;
}

ClientConfig Config(const std::string& uuid, const std::string& version, int threads = 1) {
  ClientConfig config;
  config.uuid = uuid;
  config.version = lockstep::locks::testing::VersionOf(version);
  config.threads = threads;
  return config;  // Redisson's defaults: watchdog 30 s, timeout 3 s, 3 retries, 1.5 s apart.
}

int AddClient(World& world, const std::string& uuid, const std::string& version,
              int threads = 1) {
  return world.AddClient(MakeRLock(Config(uuid, version, threads), Scripts(version)));
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

// The arguments after the script body: numkeys, keys..., args...
std::vector<std::string> Tail(const Argv& argv) {
  REQUIRE(argv.size() >= 3);
  REQUIRE(argv[0] == "EVAL");
  return std::vector<std::string>(argv.begin() + 2, argv.end());
}

// The last completion of (client, thread), which must exist.
lockstep::locks::testing::Completion Done(const World& world, int client, int thread) {
  const auto done = world.Last(client, thread);
  REQUIRE(done.has_value());
  return *done;
}

}  // namespace

TEST_CASE("RLock: an uncontended lock() is granted at once and unlock() deletes it", "[rlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  const int a = AddClient(world, "A", version);

  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  auto done = Done(world, a, 0);
  CHECK(done.result.status == Status::kOk);
  CHECK(done.result.detail == "acquired");
  CHECK(done.at_us == 0);
  CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("1"));
  CHECK(world.Exec({"PTTL", "lock"}) == Int(30000));

  world.RunFor(1 * kSecond);
  world.Release(a, 0);
  world.RunFor(0);
  done = Done(world, a, 0);
  CHECK(done.result.status == Status::kOk);
  CHECK(done.result.has_value);
  CHECK(done.result.value == 1);
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));
  CHECK(world.CountSent(a, "acquire") == 1);
  CHECK(world.CountSent(a, "unlock") == 1);
  CHECK(world.CountSent(a, "subscribe") == 0);
  // current deletes its unlock latch once the reply is in; 3.13.6 has none.
  CHECK(world.CountSent(a, "del_latch") == (version == "current" ? 1 : 0));
  CHECK(world.Exec({"KEYS", "*"}) == Reply::Array());
}

TEST_CASE("RLock: scripts get the KEYS and ARGV their headers give, per version", "[rlock]") {
  SECTION("v3.13.6") {
    World world;
    const int a = AddClient(world, "A", "v3.13.6");
    const ScriptSet scripts = Scripts("v3.13.6");
    world.Acquire(a, 0, TryLock(0, 5 * kSecond));
    world.RunFor(0);
    world.Release(a, 0);
    world.RunFor(0);
    world.ForceUnlock(a, 0);
    world.RunFor(0);
    const auto acquire = world.Sent(a, "acquire").at(0).argv;
    CHECK(acquire[1] == scripts.bodies.at("acquire"));
    CHECK(Tail(acquire) == std::vector<std::string>{"1", "lock", "5000", "A:1"});
    const auto unlock = world.Sent(a, "unlock").at(0).argv;
    CHECK(unlock[1] == scripts.bodies.at("unlock"));
    CHECK(Tail(unlock) ==
          std::vector<std::string>{"2", "lock", kChannel, "0", "5000", "A:1"});
    const auto force = world.Sent(a, "force_unlock").at(0).argv;
    CHECK(Tail(force) == std::vector<std::string>{"2", "lock", kChannel, "0"});
    CHECK(Done(world, a, 0).result.value == 0);  // Nothing left to delete.
  }
  SECTION("current") {
    World world;
    const int a = AddClient(world, "A", "current");
    world.Acquire(a, 0, TryLock(0, 5 * kSecond));
    world.RunFor(0);
    world.Release(a, 0);
    world.RunFor(0);
    world.Acquire(a, 0, Lock());
    world.RunFor(0);
    world.Release(a, 0);
    world.RunFor(0);
    world.ForceUnlock(a, 0);
    world.RunFor(0);
    const auto acquires = world.Sent(a, "acquire");
    CHECK(Tail(acquires.at(0).argv) == std::vector<std::string>{"1", "lock", "5000", "A:1"});
    CHECK(Tail(acquires.at(1).argv) == std::vector<std::string>{"1", "lock", "30000", "A:1"});
    const auto unlocks = world.Sent(a, "unlock");
    // Latch TTL = (timeout 3000 + retryInterval 1500) * retryAttempts 3; one request id per
    // unlock() call; the lease of the explicit-lease hold is used until a full unlock.
    CHECK(Tail(unlocks.at(0).argv) ==
          std::vector<std::string>{"3", "lock", kChannel, "redisson_unlock_latch:{lock}:A-1",
                                   "0", "5000", "A:1", "publish", "13500"});
    CHECK(Tail(unlocks.at(1).argv) ==
          std::vector<std::string>{"3", "lock", kChannel, "redisson_unlock_latch:{lock}:A-2",
                                   "0", "30000", "A:1", "publish", "13500"});
    const auto dels = world.Sent(a, "del_latch");
    REQUIRE(dels.size() == 2);
    CHECK(dels[1].argv == Argv{"DEL", "redisson_unlock_latch:{lock}:A-2"});
    const auto force = world.Sent(a, "force_unlock").at(0).argv;
    CHECK(Tail(force) == std::vector<std::string>{"2", "lock", kChannel, "0", "publish"});
  }
  SECTION("names that carry their own hash tag are not braced again") {
    CHECK(lockstep::locks::RLockChannel("{user}:lock") == "redisson_lock__channel:{user}:lock");
    CHECK(lockstep::locks::RLockUnlockLatch("a", "r1") == "redisson_unlock_latch:{a}:r1");
  }
}

TEST_CASE("RLock: reentrant acquire counts holds, unlock returns 0, then 1", "[rlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  const int a = AddClient(world, "A", version);

  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  CHECK(Done(world, a, 0).result.status == Status::kOk);
  CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("2"));

  world.RunFor(1 * kSecond);
  world.Release(a, 0);
  world.RunFor(0);
  auto done = Done(world, a, 0);
  CHECK(done.result.status == Status::kOk);
  CHECK(done.result.value == 0);
  CHECK(done.result.detail == "still held");
  CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("1"));
  CHECK(world.Exec({"PTTL", "lock"}) == Int(30000));  // The unlock script's pexpire.

  // One watchdog acquisition is still counted: the renewal goes on.
  world.RunUntil(15 * kSecond);
  CHECK(world.CountSent(a, "renew") == 1);

  world.Release(a, 0);
  world.RunFor(0);
  done = Done(world, a, 0);
  CHECK(done.result.value == 1);
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));
  world.RunUntil(60 * kSecond);
  CHECK(world.CountSent(a, "renew") == 1);
}

TEST_CASE("RLock: a blocked client subscribes and is woken by the unlock message", "[rlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  const int a = AddClient(world, "A", version);
  const int b = AddClient(world, "B", version);

  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  world.Acquire(b, 0, TryLock(60 * kSecond));
  world.RunFor(0);
  // First attempt, SUBSCRIBE, second attempt; then it waits min(ttl 30 s, 60 s left).
  CHECK(world.Busy(b, 0));
  CHECK(world.CountSent(b, "acquire") == 2);
  CHECK(world.CountSent(b, "subscribe") == 1);
  CHECK(world.Sent(b, "subscribe").at(0).argv == Argv{"SUBSCRIBE", kChannel});
  CHECK(world.Subscribers(kChannel) == 1);

  world.RunUntil(5 * kSecond);
  world.Release(a, 0);
  world.RunFor(0);
  const auto done = Done(world, b, 0);
  CHECK(done.result.status == Status::kOk);
  CHECK(done.at_us == 5 * kSecond);
  CHECK(world.CountSent(b, "acquire") == 3);
  CHECK(world.Exec({"HGET", "lock", "B:1"}) == Bulk("1"));
  CHECK(world.Exec({"HEXISTS", "lock", "A:1"}) == Int(0));
  CHECK(world.Exec({"PTTL", "lock"}) == Int(30000));
  // Redisson's finally { unsubscribe } once nobody in the process waits.
  CHECK(world.Sent(b, "unsubscribe").size() == 1);
  CHECK(world.Subscribers(kChannel) == 0);
}

TEST_CASE("RLock: without a message, a waiter retries when the holder's ttl is up", "[rlock]") {
  // A holds with a 4 s lease and never unlocks: B's permit wait is min(ttl, remaining), after
  // which its next attempt finds the lock expired. One-way latency 1 ms: with none, the
  // attempt at the expiry instant would see PTTL 0 forever (Redis expires a key when
  // now > when), since a 0 ms wait does not advance the clock.
  World world;
  world.set_latency_us(1000);
  const int a = AddClient(world, "A", "v3.13.6");
  const int b = AddClient(world, "B", "v3.13.6");
  world.Acquire(a, 0, TryLock(0, 4 * kSecond));  // Runs at 1 ms: expires after 4001 ms.
  world.RunUntil(1 * kSecond);
  world.Acquire(b, 0, TryLock(10 * kSecond));
  world.RunUntil(4 * kSecond);
  CHECK(world.Busy(b, 0));
  CHECK(world.CountSent(b, "acquire") == 2);
  world.RunUntil(5 * kSecond);
  const auto done = Done(world, b, 0);
  CHECK(done.result.status == Status::kOk);
  // Second attempt ran at 1.005 s and saw pttl 2996; the wait ended at 4.002 s; the third
  // attempt ran at 4.003 s, after the expiry, and its reply came back at 4.004 s.
  CHECK(done.at_us == 4'004'000);
  CHECK(world.CountSent(b, "acquire") == 3);
  CHECK(world.CountSent(b, "subscribe") == 1);
}

TEST_CASE("RLock: tryLock gives up when its wait time is spent", "[rlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  const int a = AddClient(world, "A", version);
  const int b = AddClient(world, "B", version);
  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  world.Acquire(b, 0, TryLock(2 * kSecond));
  world.RunUntil(1999 * 1000);
  CHECK(world.Busy(b, 0));
  world.RunUntil(2 * kSecond);
  const auto done = Done(world, b, 0);
  CHECK(done.result.status == Status::kFail);
  CHECK(done.result.detail == "wait time elapsed");
  CHECK(done.at_us == 2 * kSecond);
  CHECK(world.CountSent(b, "acquire") == 2);
  CHECK(world.CountSent(b, "unsubscribe") == 1);
  CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("1"));
  CHECK(world.Exec({"PTTL", "lock"}) == Int(28000));
}

TEST_CASE("RLock: tryLock() without a wait makes one attempt and never subscribes", "[rlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  const int a = AddClient(world, "A", version);
  const int b = AddClient(world, "B", version);
  world.Acquire(a, 0, Lock());
  world.RunFor(2 * kSecond);
  world.Acquire(b, 0, TryLockNoWait());
  world.RunFor(0);
  const auto done = Done(world, b, 0);
  CHECK(done.result.status == Status::kFail);
  CHECK(done.result.detail == "not acquired: held by another (pttl 28000 ms)");
  CHECK(world.CountSent(b, "acquire") == 1);
  CHECK(world.CountSent(b, "subscribe") == 0);
}

TEST_CASE("RLock: an explicit lease gets no watchdog and the key expires", "[rlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  const int a = AddClient(world, "A", version);
  world.Acquire(a, 0, TryLock(0, 5 * kSecond));
  world.RunFor(0);
  CHECK(Done(world, a, 0).result.status == Status::kOk);
  CHECK(world.Exec({"PTTL", "lock"}) == Int(5000));
  world.RunUntil(4 * kSecond);
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(1));
  world.RunUntil(6 * kSecond);
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));
  world.RunUntil(20 * kSecond);
  CHECK(world.CountSent(a, "renew") == 0);

  // The holder unlocking after its lease ran out is told it does not hold the lock.
  world.Release(a, 0);
  world.RunFor(0);
  const auto done = Done(world, a, 0);
  CHECK(done.result.status == Status::kFail);
  CHECK_THAT(done.result.detail, StartsWith("IllegalMonitorStateException"));
}

TEST_CASE("RLock: the watchdog renews every 10 s while the lock is held", "[rlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  const int a = AddClient(world, "A", version);
  world.Acquire(a, 0, Lock());
  world.RunUntil(35 * kSecond);

  const auto renews = world.Sent(a, "renew");
  REQUIRE(renews.size() == 3);
  CHECK(renews[0].at_us == 10 * kSecond);
  CHECK(renews[1].at_us == 20 * kSecond);
  CHECK(renews[2].at_us == 30 * kSecond);
  // Per-lock (3.13.6) and batched (current) renew have the same shape for one lock.
  CHECK(Tail(renews[0].argv) == std::vector<std::string>{"1", "lock", "30000", "A:1"});
  CHECK(world.Exec({"PTTL", "lock"}) == Int(25000));

  world.Release(a, 0);
  world.RunUntil(100 * kSecond);
  CHECK(world.CountSent(a, "renew") == 3);
}

TEST_CASE("RLock: unlock by a thread that does not hold it fails", "[rlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  const int a = AddClient(world, "A", version);
  const int b = AddClient(world, "B", version, 2);
  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  world.Release(b, 1);
  world.RunFor(0);
  const auto done = Done(world, b, 1);
  CHECK(done.result.status == Status::kFail);
  CHECK(done.result.detail ==
        "IllegalMonitorStateException: attempt to unlock lock, not locked by current thread by "
        "node id: B thread-id: 2");
  CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("1"));
  // The unlock script wrote no latch for a lock it did not release.
  CHECK(world.Exec({"KEYS", "redisson_unlock_latch*"}) == Reply::Array());
}

TEST_CASE("RLock: a lost acquire reply runs the script twice in 3.13.6", "[rlock]") {
  World world;
  const int a = AddClient(world, "A", "v3.13.6");
  world.DropReplies(a, "acquire", 1);
  world.Acquire(a, 0, Lock());
  world.RunUntil(10 * kSecond);

  // Response timeout at 3 s, resend after 1.5 s: the script runs again and re-enters.
  const auto done = Done(world, a, 0);
  CHECK(done.result.status == Status::kOk);
  CHECK(done.at_us == 4500 * 1000);
  const auto acquires = world.Sent(a, "acquire");
  REQUIRE(acquires.size() == 2);
  CHECK(acquires[1].argv == acquires[0].argv);
  CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("2"));

  // The thread believes it holds once: its unlock at 10 s (value 0) leaves the lock held,
  // and with the watchdog cancelled nothing renews it; it expires 30 s after that unlock's
  // pexpire, though no thread of the process holds it.
  world.Release(a, 0);
  world.RunFor(0);
  CHECK(Done(world, a, 0).result.value == 0);
  CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("1"));
  world.RunUntil(40 * kSecond);
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(1));
  world.RunUntil(41 * kSecond);
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));
  CHECK(world.CountSent(a, "renew") == 0);
}

TEST_CASE("RLock: a lost acquire reply in current ends the operation as info", "[rlock]") {
  World world;
  const int a = AddClient(world, "A", "current");
  world.DropReplies(a, "acquire", 1);
  world.Acquire(a, 0, Lock());
  world.RunUntil(10 * kSecond);

  const auto done = Done(world, a, 0);
  CHECK(done.result.status == Status::kInfo);
  CHECK(done.at_us == 3 * kSecond);
  CHECK_THAT(done.result.detail, StartsWith("RedisTimeoutException: Redis server response "
                                            "timeout (3000 ms) occurred after 0 of 3"));
  CHECK_THAT(done.result.detail, Contains("is non-idempotent command: true"));
  CHECK(world.CountSent(a, "acquire") == 1);
  // It did run once: the lock is held, but by nobody who knows it, and nothing renews it.
  CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("1"));
  world.RunUntil(31 * kSecond);
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));
  CHECK(world.CountSent(a, "renew") == 0);
}

TEST_CASE("RLock: a lost unlock reply releases two holds in 3.13.6", "[rlock]") {
  SECTION("v3.13.6: the resend decrements again") {
    World world;
    const int a = AddClient(world, "A", "v3.13.6");
    world.Acquire(a, 0, Lock());
    world.RunFor(0);
    world.Acquire(a, 0, Lock());
    world.RunFor(0);
    world.DropReplies(a, "unlock", 1);
    world.Release(a, 0);
    world.RunUntil(10 * kSecond);
    const auto done = Done(world, a, 0);
    CHECK(done.result.status == Status::kOk);
    CHECK(done.result.value == 1);  // The second run saw count 1 and deleted the lock.
    CHECK(done.at_us == 4500 * 1000);
    CHECK(world.CountSent(a, "unlock") == 2);
    CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));
  }
  SECTION("current: no resend; the outcome is unknown") {
    World world;
    const int a = AddClient(world, "A", "current");
    world.Acquire(a, 0, Lock());
    world.RunFor(0);
    world.Acquire(a, 0, Lock());
    world.RunFor(0);
    world.DropReplies(a, "unlock", 1);
    world.Release(a, 0);
    world.RunUntil(10 * kSecond);
    const auto done = Done(world, a, 0);
    CHECK(done.result.status == Status::kInfo);
    CHECK(done.at_us == 3 * kSecond);
    CHECK(world.CountSent(a, "unlock") == 1);
    CHECK(world.CountSent(a, "del_latch") == 0);
    CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("1"));
    // The latch of the lost unlock records its result until its TTL (13.5 s) ends.
    CHECK(world.Exec({"GET", "redisson_unlock_latch:{lock}:A-1"}) == Bulk("0"));
  }
}

TEST_CASE("RLock: a crashed process renews no more and its lock expires", "[rlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(1000);  // See the ttl-wait test: B's wait ends at the expiry instant.
  const int a = AddClient(world, "A", version);
  const int b = AddClient(world, "B", version);
  world.Acquire(a, 0, Lock());
  world.RunUntil(15 * kSecond);
  CHECK(world.CountSent(a, "renew") == 1);  // At 10.002 s (watchdog armed on the reply).
  world.Acquire(b, 0, Lock());
  world.RunFor(10 * 1000);
  CHECK(world.Busy(b, 0));

  world.Crash(a);
  world.RunUntil(40 * kSecond);
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(1));  // Renewed at 10.003 s for 30 s.
  CHECK(world.Busy(b, 0));
  world.RunUntil(60 * kSecond);
  CHECK(world.CountSent(a, "renew") == 1);
  // Nobody publishes for an expiry: B finds out when its ttl wait ends. Its last attempt
  // before that ran at 15.005 s and saw pttl 24998 (expiry at 40.003 s); the wait ended at
  // 40.004 s, the attempt ran at 40.005 s and its reply arrived at 40.006 s.
  const auto done = Done(world, b, 0);
  CHECK(done.result.status == Status::kOk);
  CHECK(done.at_us == 40'006'000);
  CHECK(world.Exec({"HGET", "lock", "B:1"}) == Bulk("1"));
}

TEST_CASE("RLock: a crash ends waiting operations and drops the subscription", "[rlock]") {
  World world;
  const int a = AddClient(world, "A", "current");
  const int b = AddClient(world, "B", "current");
  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  world.Acquire(b, 0, TryLock(60 * kSecond));
  world.RunFor(0);
  REQUIRE(world.Subscribers(kChannel) == 1);
  world.Crash(b);
  CHECK(Done(world, b, 0).result.status == Status::kInfo);
  CHECK(world.Subscribers(kChannel) == 0);
  world.Release(a, 0);
  world.RunUntil(60 * kSecond);
  CHECK(world.CountSent(b, "acquire") == 2);
  // The restarted process (state dropped) acquires normally.
  world.Acquire(b, 0, TryLock(0));
  world.RunFor(0);
  CHECK(Done(world, b, 0).result.status == Status::kOk);
}

TEST_CASE("RLock: one subscription per process, message 0 wakes one thread, 1 wakes all",
          "[rlock]") {
  World world;
  const int a = AddClient(world, "A", "v3.13.6");
  const int b = AddClient(world, "B", "v3.13.6", 2);
  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  world.Acquire(b, 0, TryLock(60 * kSecond));
  world.Acquire(b, 1, TryLock(60 * kSecond));
  world.RunFor(0);
  CHECK(world.CountSent(b, "subscribe") == 1);
  CHECK(world.CountSent(b, "acquire") == 4);

  world.RunUntil(1 * kSecond);
  CHECK(world.Exec({"PUBLISH", kChannel, "0"}) == Int(1));  // One subscribed process.
  world.RunFor(0);
  CHECK(world.CountSent(b, "acquire") == 5);

  world.RunUntil(2 * kSecond);
  world.Exec({"PUBLISH", kChannel, "1"});
  world.RunFor(0);
  CHECK(world.CountSent(b, "acquire") == 7);

  // Anything else on the channel wakes nobody.
  world.Exec({"PUBLISH", kChannel, "hello"});
  world.RunFor(0);
  CHECK(world.CountSent(b, "acquire") == 7);

  // The holder's unlock publishes "0": the longest waiter wakes and gets the lock. Thread 0
  // went to the back of the queue when the first message woke it, so that is thread 1. The
  // other goes on waiting, so the process stays subscribed.
  world.Release(a, 0);
  world.RunFor(0);
  CHECK(world.CountSent(b, "acquire") == 8);
  REQUIRE(world.Last(b, 1).has_value());
  CHECK(world.Last(b, 1)->result.status == Status::kOk);
  CHECK_FALSE(world.Last(b, 0).has_value());
  CHECK(world.Busy(b, 0));
  CHECK(world.CountSent(b, "unsubscribe") == 0);
}

TEST_CASE("RLock: an unused permit lets the next wait end at once", "[rlock]") {
  // With latency, the unlock message reaches B while its thread's attempt is in flight: the
  // permit waits, and the wait that follows the attempt's ttl reply ends immediately.
  World world;
  world.set_latency_us(1000);
  const int a = AddClient(world, "A", "v3.13.6");
  const int b = AddClient(world, "B", "v3.13.6");
  world.Acquire(a, 0, TryLock(0, 10 * kSecond));  // Lease: nothing renews it.
  world.RunUntil(1 * kSecond);
  world.Acquire(b, 0, TryLock(60 * kSecond));
  world.RunUntil(1 * kSecond + 4000);  // First attempt, subscribed, second attempt sent.
  REQUIRE(world.CountSent(b, "acquire") == 2);
  // B's second attempt executes at +4.5 ms... publish in between, from outside.
  world.Exec({"PUBLISH", kChannel, "0"});
  world.RunUntil(1 * kSecond + 20000);
  // The attempt saw the lock held (ttl), the stored permit ended the wait at once: a third
  // attempt went out without waiting for the ttl.
  CHECK(world.CountSent(b, "acquire") == 3);
  CHECK(world.Busy(b, 0));
}

TEST_CASE("RLock: forceUnlock deletes the lock, publishes, and stops the watchdog", "[rlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  const int a = AddClient(world, "A", version, 2);
  const int b = AddClient(world, "B", version);
  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  world.Acquire(b, 0, TryLock(60 * kSecond));
  world.RunUntil(5 * kSecond);
  world.ForceUnlock(a, 1);
  world.RunFor(0);
  const auto forced = Done(world, a, 1);
  CHECK(forced.result.status == Status::kOk);
  CHECK(forced.result.value == 1);
  const auto done = Done(world, b, 0);
  CHECK(done.result.status == Status::kOk);
  CHECK(done.at_us == 5 * kSecond);
  world.RunUntil(30 * kSecond);
  CHECK(world.CountSent(a, "renew") == 0);
  CHECK(world.Exec({"HGET", "lock", "B:1"}) == Bulk("1"));
}

TEST_CASE("RLock: another thread's lease overwrites the watchdog's lease in 3.13.6 (#3484)",
          "[rlock]") {
  SECTION("v3.13.6") {
    World world;
    const int a = AddClient(world, "A", "v3.13.6", 2);
    world.Acquire(a, 0, Lock());
    world.RunUntil(1 * kSecond);
    world.Acquire(a, 1, TryLock(0, 5 * kSecond));  // Fails, but sets internalLockLeaseTime.
    world.RunFor(0);
    CHECK(Done(world, a, 1).result.status == Status::kFail);
    world.RunUntil(10 * kSecond);
    CHECK(world.Exec({"PTTL", "lock"}) == Int(5000));
    const auto renews = world.Sent(a, "renew");
    REQUIRE(renews.size() == 1);
    CHECK(Tail(renews[0].argv) == std::vector<std::string>{"1", "lock", "5000", "A:1"});
    world.RunUntil(12 * kSecond);
    REQUIRE(world.CountSent(a, "renew") == 2);
    CHECK(world.Sent(a, "renew")[1].at_us == 11666 * 1000);  // 5000 / 3 ms later.
  }
  SECTION("current") {
    World world;
    const int a = AddClient(world, "A", "current", 2);
    world.Acquire(a, 0, Lock());
    world.RunUntil(1 * kSecond);
    world.Acquire(a, 1, TryLock(0, 5 * kSecond));
    world.RunUntil(10 * kSecond);
    CHECK(world.Exec({"PTTL", "lock"}) == Int(30000));
    world.RunUntil(12 * kSecond);
    CHECK(world.CountSent(a, "renew") == 1);
  }
}

TEST_CASE("RLock: a renewal that finds the lock gone", "[rlock]") {
  SECTION("v3.13.6 leaves a dead entry: later holds of the process are never renewed") {
    World world;
    const int a = AddClient(world, "A", "v3.13.6", 2);
    world.Acquire(a, 0, Lock());
    world.RunUntil(5 * kSecond);
    world.Exec({"DEL", "lock"});
    world.RunUntil(12 * kSecond);  // The renew at 10 s returned 0.
    world.Acquire(a, 1, Lock());
    world.RunFor(0);
    CHECK(Done(world, a, 1).result.status == Status::kOk);
    world.RunUntil(42 * kSecond);
    CHECK(world.Exec({"EXISTS", "lock"}) == Int(1));
    world.RunUntil(43 * kSecond);
    CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));  // Thread 1 still thinks it holds it.
    CHECK(world.CountSent(a, "renew") == 1);
  }
  SECTION("current cancels the entry; the next hold starts the task again") {
    World world;
    const int a = AddClient(world, "A", "current", 2);
    world.Acquire(a, 0, Lock());
    world.RunUntil(5 * kSecond);
    world.Exec({"DEL", "lock"});
    world.RunUntil(12 * kSecond);
    world.Acquire(a, 1, Lock());
    world.RunUntil(60 * kSecond);
    const auto renews = world.Sent(a, "renew");
    REQUIRE(renews.size() == 5);
    CHECK(renews[1].at_us == 22 * kSecond);
    CHECK(Tail(renews[1].argv) == std::vector<std::string>{"1", "lock", "30000", "A:2"});
    CHECK(world.Exec({"HGET", "lock", "A:2"}) == Bulk("1"));
  }
}

TEST_CASE("RLock: error replies end operations with the error text", "[rlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  SECTION("a broken acquire script") {
    ScriptSet scripts = Scripts(version);
    scripts.bodies["acquire"] = "return redis.error_reply('ERR boom')";
    World world;
    const int a = world.AddClient(MakeRLock(Config("A", version), scripts));
    world.Acquire(a, 0, Lock());
    world.RunFor(0);
    const auto done = Done(world, a, 0);
    CHECK(done.result.status == Status::kFail);
    CHECK(done.result.detail == "ERR boom");
  }
  SECTION("a broken unlock script: the thread's watchdog acquisition is cancelled anyway") {
    ScriptSet scripts = Scripts(version);
    scripts.bodies["unlock"] = "return redis.call('nosuchcommand')";
    World world;
    const int a = world.AddClient(MakeRLock(Config("A", version), scripts));
    world.Acquire(a, 0, Lock());
    world.RunFor(0);
    world.Release(a, 0);
    world.RunFor(0);
    const auto done = Done(world, a, 0);
    CHECK(done.result.status == Status::kFail);
    CHECK_THAT(done.result.detail, Contains("Unknown Redis command"));
    world.RunUntil(40 * kSecond);
    CHECK(world.CountSent(a, "renew") == 0);
    CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));  // Expired at 30 s.
  }
  SECTION("a reply of the wrong shape") {
    ScriptSet scripts = Scripts(version);
    scripts.bodies["acquire"] = "return 'yes'";
    World world;
    const int a = world.AddClient(MakeRLock(Config("A", version), scripts));
    world.Acquire(a, 0, Lock());
    world.RunFor(0);
    const auto done = Done(world, a, 0);
    CHECK(done.result.status == Status::kFail);
    CHECK_THAT(done.result.detail, StartsWith("unexpected reply to acquire"));
  }
}

TEST_CASE("RLock: lock() gives up when its subscription is not confirmed in time", "[rlock]") {
  World world;
  const int a = AddClient(world, "A", "v3.13.6");
  const int b = AddClient(world, "B", "v3.13.6");
  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  world.DropReplies(b, "subscribe", 4);
  world.Acquire(b, 0, Lock());
  world.RunUntil(60 * kSecond);
  const auto done = Done(world, b, 0);
  CHECK(done.result.status == Status::kFail);
  CHECK(done.result.detail == "RedisTimeoutException: Subscribe timeout: (7500ms)");
  CHECK(done.at_us == 7500 * 1000);  // timeout + retryInterval * retryAttempts.
  CHECK(world.CountSent(b, "subscribe") == 4);
  // The SUBSCRIBEs did reach the server; the failed entry unsubscribes.
  CHECK(world.CountSent(b, "unsubscribe") == 1);
  CHECK(world.Subscribers(kChannel) == 0);
}

TEST_CASE("RLock: LoadScripts reads the folder, applies overrides, and explains failures",
          "[rlock][scripts]") {
  namespace fs = std::filesystem;
  std::string error;
  SECTION("defaults") {
    const auto scripts = LoadScripts(kLuaDir, "rlock", lockstep::locks::testing::VersionOf("current"), {}, &error);
    REQUIRE(scripts.has_value());
    CHECK(scripts->bodies.size() == 4);
    CHECK_THAT(scripts->files.at("renew"), Contains("lua/rlock/current/renew.lua"));
    CHECK_THAT(scripts->bodies.at("unlock"), Contains("redisson_unlock_latch"));
  }
  SECTION("an override replaces one body") {
    const fs::path file = fs::temp_directory_path() / "lockstep_rlock_test_override.lua";
    std::ofstream(file) << "return nil\n";
    const auto scripts =
        LoadScripts(kLuaDir, "rlock", lockstep::locks::testing::VersionOf("v3.13.6"), {{"acquire", file.string()}}, &error);
    REQUIRE(scripts.has_value());
    CHECK(scripts->bodies.at("acquire") == "return nil\n");
    CHECK(scripts->files.at("acquire") == file.string());
    CHECK_THAT(scripts->files.at("unlock"), Contains("lua/rlock/v3.13.6/unlock.lua"));
    fs::remove(file);
  }
  SECTION("a missing override file") {
    CHECK_FALSE(LoadScripts(kLuaDir, "rlock", lockstep::locks::testing::VersionOf("v3.13.6"), {{"unlock", "/nonexistent/u.lua"}},
                            &error));
    CHECK_THAT(error, Contains("'unlock'") && Contains("/nonexistent/u.lua") &&
                          Contains("cannot read"));
  }
  SECTION("an override of a script the folder does not have") {
    CHECK_FALSE(LoadScripts(kLuaDir, "rlock", lockstep::locks::testing::VersionOf("v3.13.6"), {{"aquire", "/tmp/x.lua"}}, &error));
    CHECK_THAT(error, Contains("'aquire'") && Contains("acquire, force_unlock, renew, unlock"));
  }
  const fs::path root = fs::temp_directory_path() / "lockstep_rlock_test_lua";
  fs::remove_all(root);
  SECTION("a lua folder without the version's folder") {
    fs::create_directories(root / "rlock" / "v3.13.6");
    CHECK_FALSE(LoadScripts(root.string(), "rlock", lockstep::history::ProtocolVersion::kCurrent,
                            {}, &error));
    CHECK_THAT(error, Contains("rlock/current") && Contains("no such script folder"));
  }
  SECTION("a folder without a script the kind needs") {
    fs::create_directories(root / "rlock" / "v3.13.6");
    for (const char* name : {"acquire", "unlock", "force_unlock"}) {
      std::ofstream(root / "rlock" / "v3.13.6" / (std::string(name) + ".lua")) << "return 1\n";
    }
    CHECK_FALSE(LoadScripts(root.string(), "rlock", lockstep::history::ProtocolVersion::k3136, {},
                            &error));
    CHECK_THAT(error, Contains("rlock/v3.13.6/renew.lua: missing"));
  }
  fs::remove_all(root);
  SECTION("CheckRLockConfig catches missing scripts") {
    ScriptSet scripts = Scripts("current");
    ClientConfig config = Config("A", "current");
    scripts.bodies.erase("renew");
    CHECK_FALSE(lockstep::locks::CheckRLockConfig(config, scripts, &error));
    CHECK_THAT(error, Contains("missing script(s): renew"));
  }
}

TEST_CASE("RLock: a waiter's attempts share one copy of the command while its lease is the same",
          "[rlock]") {
  World world;
  const int a = AddClient(world, "A", "v3.13.6");
  const int b = AddClient(world, "B", "v3.13.6");
  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  world.Acquire(b, 0, TryLock(60 * kSecond, 20 * kSecond));
  world.RunFor(0);
  world.RunUntil(kSecond);
  world.Release(a, 0);
  world.RunFor(0);
  REQUIRE(Done(world, b, 0).result.status == Status::kOk);
  const auto attempts = world.Sent(b, "acquire");
  REQUIRE(attempts.size() == 3);  // Before and after SUBSCRIBE, and when woken.
  CHECK(attempts[1].copy == attempts[0].copy);
  CHECK(attempts[2].copy == attempts[0].copy);
  CHECK(Tail(attempts[2].argv).at(2) == "20000");
  world.Release(b, 0);
  world.RunFor(0);
  // Another lease is another command.
  world.Acquire(b, 0, TryLock(0, 5 * kSecond));
  world.RunFor(0);
  const auto next = world.Sent(b, "acquire").back();
  CHECK(Tail(next.argv).at(2) == "5000");
  CHECK(next.copy != attempts[0].copy);
}

TEST_CASE("RLock: every lease the API takes reaches the script as its version sends it",
          "[rlock]") {
  // (lease as the caller gives it, 3.13.6's script ARGV[1], current's ARGV[1]). 3.13.6 tests
  // leaseTime != -1 and sends toMillis(lease); current (3.17.1+) tests leaseTime > 0 and sends
  // the watchdog timeout otherwise. -1 ms and -1 us are both the API's -1.
  struct Case {
    int64_t lease_us;
    std::string v3136;
    std::string current;
  };
  const std::vector<Case> cases = {
      {-1, "30000", "30000"},      {-1000, "30000", "30000"}, {0, "0", "30000"},
      {-5000, "-5", "30000"},      {500, "0", "0"},           {-1500, "-1", "30000"},
      {1999, "1", "1"},            {5000, "5", "5"},
  };
  for (const Case& c : cases) {
    for (const std::string version : {"v3.13.6", "current"}) {
      INFO(version << ", lease " << c.lease_us << " us");
      World world;
      const int a = AddClient(world, "A", version);
      world.Acquire(a, 0, TryLock(0, c.lease_us));
      world.RunFor(0);
      const std::vector<std::string> tail = Tail(world.Sent(a, "acquire").at(0).argv);
      CHECK(tail.at(2) == (version == "v3.13.6" ? c.v3136 : c.current));
      // The script answers nil whatever the lease: the caller holds, as far as it knows.
      CHECK(Done(world, a, 0).result.status == Status::kOk);
      const bool deleted = std::stoll(tail.at(2)) <= 0;
      CHECK(world.Exec({"EXISTS", "lock"}) == Int(deleted ? 0 : 1));
      // A lease the client takes as given has no watchdog; one it does not, has.
      world.RunUntil(15 * kSecond);
      const bool watchdog = version == "v3.13.6" ? c.v3136 == "30000" : c.current == "30000";
      CHECK((world.CountSent(a, "renew") > 0) == watchdog);
    }
  }
}

TEST_CASE("RLock: tryLock with a wait of 0 or less makes one attempt", "[rlock]") {
  for (const int64_t wait_us : {int64_t{0}, int64_t{-1000}, int64_t{-5000}, int64_t{-1}}) {
    for (const std::string version : {"v3.13.6", "current"}) {
      INFO(version << ", wait " << wait_us << " us");
      World world;
      const int a = AddClient(world, "A", version);
      const int b = AddClient(world, "B", version);
      world.Acquire(a, 0, Lock());
      world.RunFor(0);
      world.Acquire(b, 0, TryLock(wait_us));
      world.RunFor(kSecond);
      CHECK(Done(world, b, 0).result.status == Status::kFail);
      CHECK(world.CountSent(b, "acquire") == 1);
    }
  }
}
