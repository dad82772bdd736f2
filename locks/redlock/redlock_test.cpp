// Establishes that RedLock and MultiLock, composed of one RLock per node, follow
// RedissonMultiLock.tryLock: members in node order with their per-member wait, the failure
// limit (quorum for RedLock, all for MultiLock), unlocking everything after a failed round and
// starting again from the first node while the wait lasts, the lease set with PEXPIRE, and --
// for RedLock only -- the reference implementations' validity = TTL - elapsed - drift.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "locks/factory.h"
#include "locks/redlock/redlock.h"
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
using lockstep::locks::MakeMultiLock;
using lockstep::locks::MakeRedLock;
using lockstep::locks::MultiLockOptions;
using lockstep::locks::OpResult;
using lockstep::locks::ScriptSet;
using lockstep::locks::testing::World;
using Status = OpResult::Status;
using Catch::Matchers::Contains;

const std::string kLuaDir = std::string(LOCKSTEP_SOURCE_DIR) + "/lua";
constexpr int64_t kMs = 1'000;
constexpr int64_t kSecond = 1'000'000;

ScriptSet Scripts(const std::string& version) {
  std::string error;
  auto scripts = LoadScripts(kLuaDir, "redlock", lockstep::locks::testing::VersionOf(version), {}, &error);
  INFO(error);
  REQUIRE(scripts.has_value());
  return *scripts;
}

ClientConfig Config(const std::string& uuid, const std::string& version) {
  ClientConfig config;
  config.uuid = uuid;
  config.version = lockstep::locks::testing::VersionOf(version);
  return config;
}

int AddRedLock(World& world, const std::string& uuid, const std::string& version = "current") {
  return world.AddClient(MakeRedLock(Config(uuid, version), Scripts(version)));
}

int AddMultiLock(World& world, const std::string& uuid, const std::string& version = "current") {
  return world.AddClient(
      MakeMultiLock(Config(uuid, version), Scripts(version), MultiLockOptions{}));
}

AcquireArgs Lock(int64_t lease_us = -1) {
  return AcquireArgs{AcquireArgs::Mode::kLock, 0, lease_us};
}
AcquireArgs TryLock(int64_t wait_us, int64_t lease_us = -1) {
  return AcquireArgs{AcquireArgs::Mode::kTryLock, wait_us, lease_us};
}

Reply Int(int64_t v) { return Reply::Integer(v); }
Reply Bulk(const std::string& s) { return Reply::Bulk(s); }

lockstep::locks::testing::Completion Done(const World& world, int client, int thread = 0) {
  const auto done = world.Last(client, thread);
  REQUIRE(done.has_value());
  return *done;
}

int CountSentTo(const World& world, int client, const std::string& label, int node) {
  int count = 0;
  for (const auto& command : world.sent()) {
    if (command.client == client && command.label == label && command.node == node) ++count;
  }
  return count;
}

// Another process holds the lock on `node` for ttl_ms.
void HoldElsewhere(World& world, int node, int64_t ttl_ms = 30'000) {
  REQUIRE(world.Exec({"HSET", "lock", "other:1", "1"}, node) == Int(1));
  REQUIRE(world.Exec({"PEXPIRE", "lock", std::to_string(ttl_ms)}, node) == Int(1));
}

Reply Holds(World& world, int node) { return world.Exec({"HGET", "lock", "A:1"}, node); }

}  // namespace

TEST_CASE("RedLock: the kinds load the RLock scripts of their version", "[redlock]") {
  for (const std::string version : {"v3.13.6", "current"}) {
    const ScriptSet scripts = Scripts(version);
    CHECK(scripts.bodies.size() == 4);
    CHECK_THAT(scripts.files.at("acquire"), Contains("lua/rlock/" + version + "/acquire.lua"));
    std::string error;
    CHECK(lockstep::locks::MakeProtocol("redlock", Config("A", version), scripts, &error));
    CHECK(lockstep::locks::MakeProtocol("multilock", Config("A", version), scripts, &error));
  }
  CHECK(lockstep::locks::RedLockValidityUs(10 * kSecond, 0) == 9898 * kMs);
  CHECK(lockstep::locks::RedLockValidityUs(100 * kMs, 120 * kMs) == -23 * kMs);
}

TEST_CASE("RedLock over 5 nodes: a majority suffices when two nodes are held by another",
          "[redlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world(5);
  HoldElsewhere(world, 1);
  HoldElsewhere(world, 3);
  const int a = AddRedLock(world, "A", version);

  // wait 1000 ms: each member gets max(1000 / 5, 1) = 200 ms; nodes 1 and 3 use it up.
  world.Acquire(a, 0, TryLock(1000 * kMs));
  world.RunFor(5 * kSecond);
  const auto done = Done(world, a);
  CHECK(done.result.status == Status::kOk);
  CHECK(done.at_us == 400 * kMs);
  // validity = 30000 (watchdog TTL) - 400 - (300 + 2).
  CHECK(done.result.detail == "acquired on 3 of 5 nodes, validity 29298 ms");
  for (const int node : {0, 2, 4}) CHECK(Holds(world, node) == Bulk("1"));
  for (const int node : {1, 3}) {
    CHECK(Holds(world, node) == Reply::Null());
    CHECK(world.Exec({"HGET", "lock", "other:1"}, node) == Bulk("1"));
  }
  CHECK(CountSentTo(world, a, "acquire", 0) == 1);
  CHECK(CountSentTo(world, a, "acquire", 1) == 2);  // Before and after subscribing.
  CHECK(CountSentTo(world, a, "subscribe", 1) == 1);
  CHECK(world.CountSent(a, "unlock") == 0);

  // unlock() goes to every node; RedLock ignores the two that were not held.
  world.Release(a, 0);
  world.RunFor(0);
  const auto released = Done(world, a);
  CHECK(released.result.status == Status::kOk);
  CHECK(released.result.value == 1);
  CHECK_THAT(released.result.detail, Contains("released on 3 of 5 nodes"));
  CHECK(world.CountSent(a, "unlock") == 5);
  for (const int node : {0, 2, 4}) CHECK(world.Exec({"EXISTS", "lock"}, node) == Int(0));
  for (const int node : {1, 3}) CHECK(world.Exec({"EXISTS", "lock"}, node) == Int(1));
}

TEST_CASE("RedLock over 5 nodes: a minority fails, retrying from the first node while the wait "
          "lasts, and unlocks everything",
          "[redlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world(5);
  for (const int node : {1, 2, 3}) HoldElsewhere(world, node);
  const int a = AddRedLock(world, "A", version);

  // Round 1: node 0 at 0 ms, nodes 1, 2, 3 fail at 200, 400, 600 ms: unlock node 0, start
  // again. Round 2: node 0 at 600 ms, nodes 1, 2 fail at 800, 1000 ms: the wait is spent.
  world.Acquire(a, 0, TryLock(1000 * kMs));
  world.RunFor(5 * kSecond);
  const auto done = Done(world, a);
  CHECK(done.result.status == Status::kFail);
  CHECK(done.result.detail == "wait time elapsed");
  CHECK(done.at_us == 1000 * kMs);
  CHECK(CountSentTo(world, a, "acquire", 0) == 2);
  CHECK(CountSentTo(world, a, "unlock", 0) == 2);
  CHECK(CountSentTo(world, a, "acquire", 3) == 2);
  CHECK(CountSentTo(world, a, "acquire", 4) == 0);
  const auto unlocks = world.Sent(a, "unlock");
  REQUIRE(unlocks.size() == 2);
  CHECK(unlocks[0].at_us == 600 * kMs);
  CHECK(unlocks[1].at_us == 1000 * kMs);
  for (int node = 0; node < 5; ++node) CHECK(Holds(world, node) == Reply::Null());
  CHECK(world.Exec({"EXISTS", "lock"}, 0) == Int(0));
  for (const int node : {1, 2, 3}) {
    CHECK(world.Exec({"HGET", "lock", "other:1"}, node) == Bulk("1"));
  }
}

TEST_CASE("RedLock over 3 nodes: acquires with the majority when one node does not answer",
          "[redlock]") {
  World world(3);
  const int a = AddRedLock(world, "A");
  world.DropReplies(a, "acquire");  // Node 0's acquire runs, but its reply is lost.
  world.Acquire(a, 0, TryLock(10 * kSecond));
  world.RunFor(20 * kSecond);
  const auto done = Done(world, a);
  CHECK(done.result.status == Status::kOk);
  // Node 0's response timeout (3 s) ends its tryLock as unknown: it is unlocked (#1606) and
  // counts as failed; nodes 1 and 2 follow at once.
  CHECK(done.at_us == 3 * kSecond);
  CHECK(done.result.detail == "acquired on 2 of 3 nodes, validity 26698 ms");
  CHECK(CountSentTo(world, a, "unlock", 0) == 1);
  CHECK(world.Exec({"EXISTS", "lock"}, 0) == Int(0));
  CHECK(Holds(world, 1) == Bulk("1"));
  CHECK(Holds(world, 2) == Bulk("1"));
}

TEST_CASE("RedLock over 3 nodes: fails and unlocks everything when only a minority answers",
          "[redlock]") {
  World world(3);
  const int a = AddRedLock(world, "A");
  // wait 4000 ms: each member gets 1333 ms. Node 0's acquire is already sent; the acquire
  // replies of nodes 1 and 2 (and any later one) are lost.
  world.Acquire(a, 0, TryLock(4000 * kMs));
  world.DropReplies(a, "acquire", 100);
  world.RunFor(20 * kSecond);
  const auto done = Done(world, a);
  CHECK(done.result.status == Status::kFail);
  CHECK(done.result.detail == "wait time elapsed");
  // Node 1 times out at 3 s, node 2 at 6 s; then node 0 is unlocked and 1 s - 3 s < 0 is left.
  CHECK(done.at_us == 6 * kSecond);
  for (int node = 0; node < 3; ++node) {
    INFO("node " << node);
    CHECK(CountSentTo(world, a, "acquire", node) == 1);
    CHECK(CountSentTo(world, a, "unlock", node) == 1);
    CHECK(world.Exec({"EXISTS", "lock"}, node) == Int(0));
  }
  const auto unlocks = world.Sent(a, "unlock");
  REQUIRE(unlocks.size() == 3);
  CHECK(unlocks[0].node == 1);
  CHECK(unlocks[0].at_us == 3 * kSecond);
  CHECK(unlocks[1].node == 2);
  CHECK(unlocks[2].node == 0);
  CHECK(unlocks[2].at_us == 6 * kSecond);
}

TEST_CASE("MultiLock needs every node, RedLock in the same spot does not", "[redlock]") {
  SECTION("one node held for longer than the wait") {
    World world(3);
    HoldElsewhere(world, 2);
    const int multi = AddMultiLock(world, "A");
    world.Acquire(multi, 0, TryLock(500 * kMs));
    world.RunFor(5 * kSecond);
    const auto done = Done(world, multi);
    CHECK(done.result.status == Status::kFail);
    CHECK(done.result.detail == "wait time elapsed");
    CHECK(done.at_us == 500 * kMs);  // Node 2 had the whole remaining wait.
    CHECK(CountSentTo(world, multi, "unlock", 0) == 1);
    CHECK(CountSentTo(world, multi, "unlock", 1) == 1);
    for (int node = 0; node < 3; ++node) CHECK(Holds(world, node) == Reply::Null());

    const int red = AddRedLock(world, "R");
    world.Acquire(red, 0, TryLock(500 * kMs));
    world.RunFor(5 * kSecond);
    const auto red_done = Done(world, red);
    CHECK(red_done.result.status == Status::kOk);
    CHECK(red_done.at_us == 5 * kSecond + 166 * kMs);  // max(500 / 3, 1) ms on node 2.
    CHECK_THAT(red_done.result.detail, Contains("acquired on 2 of 3 nodes"));
  }
  SECTION("the held node frees up within the wait") {
    World world(3);
    // 1 ms of latency: at its expiry millisecond the key still lives with PTTL 0, and RLock
    // would retry within that same millisecond without end if no time passed per round trip.
    world.set_latency_us(1 * kMs);
    HoldElsewhere(world, 2, 300);
    const int multi = AddMultiLock(world, "A");
    world.Acquire(multi, 0, TryLock(500 * kMs));
    world.RunFor(5 * kSecond);
    const auto done = Done(world, multi);
    CHECK(done.result.status == Status::kOk);
    CHECK(done.result.detail == "acquired on 3 of 3 nodes");  // MultiLock reports no validity.
    // Node 2's member waits out the PTTL (291 ms, read at 9 ms) and tries again at 301 ms; the
    // script runs at 302 ms, after the expiry, and its reply comes at 303 ms.
    CHECK(done.at_us == 303 * kMs);
    for (int node = 0; node < 3; ++node) CHECK(Holds(world, node) == Bulk("1"));
  }
}

TEST_CASE("MultiLock: lock() repeats tryLock(n * 1500 ms) until every node is free",
          "[redlock]") {
  World world(3);
  world.set_latency_us(1 * kMs);
  HoldElsewhere(world, 1, 4900);
  const int a = AddMultiLock(world, "A");
  world.Acquire(a, 0, Lock());
  world.RunFor(10 * kSecond);
  const auto done = Done(world, a);
  CHECK(done.result.status == Status::kOk);
  // Round 1: node 0 is taken at 2 ms; node 1 gets the remaining 4498 ms and gives up at
  // 4500 ms; node 0 is unlocked. Round 2 starts at 4502 ms; node 1's key is gone after 4900 ms.
  CHECK(done.at_us == 4905 * kMs);
  CHECK(CountSentTo(world, a, "acquire", 0) == 2);
  CHECK(CountSentTo(world, a, "unlock", 0) == 1);
  const auto unlocks = world.Sent(a, "unlock");
  REQUIRE(unlocks.size() == 1);
  CHECK(unlocks[0].at_us == 4500 * kMs);
  for (int node = 0; node < 3; ++node) CHECK(Holds(world, node) == Bulk("1"));
}

TEST_CASE("RedLock: validity shrinks with the time the acquisition took", "[redlock]") {
  const int64_t latency_ms = GENERATE(as<int64_t>{}, 0, 10);
  INFO("latency " << latency_ms << " ms");
  World world(3);
  world.set_latency_us(latency_ms * kMs);
  const int a = AddRedLock(world, "A");
  world.Acquire(a, 0, TryLock(1 * kSecond, 10 * kSecond));
  world.RunFor(1 * kSecond);
  const auto done = Done(world, a);
  CHECK(done.result.status == Status::kOk);
  // Three sequential round trips: elapsed = 6 * latency; drift = 10000 / 100 + 2 = 102 ms.
  const int64_t validity_ms = 10000 - 6 * latency_ms - 102;
  CHECK(done.result.detail ==
        "acquired on 3 of 3 nodes, validity " + std::to_string(validity_ms) + " ms");
  CHECK(done.at_us == 8 * latency_ms * kMs);  // Plus the PEXPIRE round trip.
  for (int node = 0; node < 3; ++node) {
    INFO("node " << node);
    CHECK(CountSentTo(world, a, "acquire", node) == 1);
    // Members are acquired with 2 * wait, then given the lease.
    CHECK(world.Sent(a, "acquire").at(static_cast<size_t>(node)).argv.at(4) == "2000");
    CHECK(CountSentTo(world, a, "expire", node) == 1);
  }
  CHECK(world.Sent(a, "expire").at(0).argv == Argv{"PEXPIRE", "lock", "10000"});
  // The PEXPIREs ran at 7 * latency; it is now 1000 ms.
  CHECK(world.Exec({"PTTL", "lock"}, 0) == Int(10000 - (1000 - 7 * latency_ms)));
}

TEST_CASE("RedLock: an acquisition slower than TTL - drift fails and unlocks everything, "
          "MultiLock takes it",
          "[redlock]") {
  World world(3);
  world.set_latency_us(20 * kMs);
  const int red = AddRedLock(world, "A");
  // lease 100 ms: drift 3 ms; three round trips of 40 ms take 120 ms > 97 ms.
  world.Acquire(red, 0, TryLock(1 * kSecond, 100 * kMs));
  world.RunFor(1 * kSecond);
  const auto done = Done(world, red);
  CHECK(done.result.status == Status::kFail);
  CHECK(done.result.detail ==
        "not acquired: validity -23 ms <= 0 (TTL 100 ms, elapsed 120 ms)");
  CHECK(done.at_us == 160 * kMs);  // The unlocks go out together at 120 ms.
  CHECK(world.CountSent(red, "expire") == 0);
  for (int node = 0; node < 3; ++node) {
    INFO("node " << node);
    CHECK(CountSentTo(world, red, "unlock", node) == 1);
    CHECK(world.Sent(red, "unlock").at(static_cast<size_t>(node)).at_us == 120 * kMs);
    CHECK(world.Exec({"EXISTS", "lock"}, node) == Int(0));
  }

  const int multi = AddMultiLock(world, "A");
  world.Acquire(multi, 0, TryLock(1 * kSecond, 100 * kMs));
  world.RunFor(1 * kSecond);
  const auto multi_done = Done(world, multi);
  CHECK(multi_done.result.status == Status::kOk);
  CHECK(multi_done.result.detail == "acquired on 3 of 3 nodes");
  CHECK(world.CountSent(multi, "expire") == 3);
}

TEST_CASE("MultiLock: unlock reports the first node that was not held, forceUnlock is "
          "unsupported",
          "[redlock]") {
  World world(3);
  const int a = AddMultiLock(world, "A");
  world.Acquire(a, 0, TryLock(1 * kSecond));
  world.RunFor(0);
  REQUIRE(Done(world, a).result.status == Status::kOk);
  REQUIRE(world.Exec({"DEL", "lock"}, 1) == Int(1));

  world.Release(a, 0);
  world.RunFor(0);
  const auto done = Done(world, a);
  CHECK(done.result.status == Status::kFail);
  CHECK_THAT(done.result.detail, Contains("node 1: IllegalMonitorStateException"));
  CHECK(world.CountSent(a, "unlock") == 3);
  for (int node = 0; node < 3; ++node) CHECK(world.Exec({"EXISTS", "lock"}, node) == Int(0));

  world.ForceUnlock(a, 0);
  world.RunFor(0);
  CHECK(Done(world, a).result.status == Status::kFail);
  CHECK_THAT(Done(world, a).result.detail, Contains("UnsupportedOperationException"));
}

TEST_CASE("RedLock: members keep their own watchdog and pub/sub, a crash drops everything",
          "[redlock]") {
  World world(3);
  const int a = AddRedLock(world, "A");
  world.Acquire(a, 0, Lock());
  world.RunFor(10 * kSecond);
  REQUIRE(Done(world, a).result.status == Status::kOk);
  for (int node = 0; node < 3; ++node) {
    INFO("node " << node);
    CHECK(CountSentTo(world, a, "renew", node) == 1);
    CHECK(world.Exec({"PTTL", "lock"}, node) == Int(30000));
  }
  world.Crash(a);
  world.RunFor(40 * kSecond);
  CHECK(world.CountSent(a, "renew") == 3);
  for (int node = 0; node < 3; ++node) CHECK(world.Exec({"EXISTS", "lock"}, node) == Int(0));
}

TEST_CASE("RedLock: a reentrant hold releases with 0 (still held), then 1", "[redlock]") {
  World world(3);
  const int a = AddRedLock(world, "A");
  world.Acquire(a, 0, TryLock(1 * kSecond));
  world.RunFor(0);
  world.Acquire(a, 0, TryLock(1 * kSecond));
  world.RunFor(0);
  REQUIRE(Done(world, a).result.status == Status::kOk);
  for (int node = 0; node < 3; ++node) CHECK(Holds(world, node) == Bulk("2"));

  world.Release(a, 0);
  world.RunFor(0);
  auto done = Done(world, a);
  CHECK(done.result.status == Status::kOk);
  CHECK(done.result.has_value);
  CHECK(done.result.value == 0);
  CHECK(done.result.detail == "released on 0 of 3 nodes, still held on 3");
  world.Release(a, 0);
  world.RunFor(0);
  done = Done(world, a);
  CHECK(done.result.value == 1);
  CHECK(done.result.detail == "released on 3 of 3 nodes");
  for (int node = 0; node < 3; ++node) CHECK(world.Exec({"EXISTS", "lock"}, node) == Int(0));

  // Nothing held: RedLock still answers ok, without a value.
  world.Release(a, 0);
  world.RunFor(0);
  done = Done(world, a);
  CHECK(done.result.status == Status::kOk);
  CHECK_FALSE(done.result.has_value);
  CHECK_THAT(done.result.detail, Contains("member errors ignored"));
}

TEST_CASE("MultiLock 3.13.6: a negative wait with a lease gives members a negative lease",
          "[redlock]") {
  // tryLock(-2 ms, 5 s): leaseTime != -1 and waitTime != -1, so newLeaseTime = 2 * toMillis(wait)
  // = -4 ms, which each member's acquire script passes to PEXPIRE: the key is deleted at once.
  // remainTime (-2 ms) is spent after the first member, so the attempt unlocks it and fails.
  World world(3);
  const int a = AddMultiLock(world, "A", "v3.13.6");
  world.Acquire(a, 0, TryLock(-2 * kMs, 5 * kSecond));
  world.RunFor(kSecond);
  const auto& sent = world.Sent(a, "acquire");
  REQUIRE(sent.size() == 1);
  CHECK(sent.at(0).argv.at(4) == "-4");  // EVAL body 1 lock <lease> <field>
  CHECK(world.Exec({"EXISTS", "lock"}, 0) == Int(0));
  const auto done = Done(world, a);
  CHECK(done.result.status == Status::kFail);
  CHECK(done.result.detail == "wait time elapsed");

  // Today's client tests > 0: a negative wait is no wait, and the lease is the caller's.
  World today(3);
  const int b = AddMultiLock(today, "B", "current");
  today.Acquire(b, 0, TryLock(-2 * kMs, 5 * kSecond));
  today.RunFor(kSecond);
  CHECK(Done(today, b).result.status == Status::kOk);
  for (int node = 0; node < 3; ++node) {
    CHECK(today.Exec({"PTTL", "lock"}, node) == Int(4000));  // The 5 s lease, 1 s later.
  }
}
