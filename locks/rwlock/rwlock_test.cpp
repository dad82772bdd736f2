// Establishes that the read-write lock state machine, driven over the emulated Redis by
// locks/testing.h, does what Redisson's RedissonReadLock / RedissonWriteLock do in 3.13.6 and
// at HEAD ("current"): readers share and exclude writers, the keys and arguments are
// Redisson's, write reentry accumulates the TTL (#1110), read unlock publishes 0 and write
// unlock 1, the watchdog renews read holds (3.13.6: every reader's, current: only its own) and
// the write field, a downgrade releases the read hold first, and unlocking a missing lock
// answers 1 in 3.13.6 and nil in current.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "locks/factory.h"
#include "locks/rwlock/rwlock.h"
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
using lockstep::locks::MakeRwLock;
using lockstep::locks::OpResult;
using lockstep::locks::ScriptSet;
using lockstep::locks::testing::Listener;
using lockstep::locks::testing::World;
using Status = OpResult::Status;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

const std::string kLuaDir = std::string(LOCKSTEP_SOURCE_DIR) + "/lua";
const std::string kChannel = "redisson_rwlock:{lock}";
constexpr int64_t kMs = 1'000;
constexpr int64_t kSecond = 1'000'000;

ScriptSet Scripts(const std::string& version) {
  std::string error;
  auto scripts = LoadScripts(kLuaDir, "rwlock", lockstep::locks::testing::VersionOf(version), {}, &error);
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
  return world.AddClient(MakeRwLock(Config(uuid, version, threads), Scripts(version)));
}

AcquireArgs Write(AcquireArgs::Mode mode = AcquireArgs::Mode::kLock, int64_t wait_us = 0,
                  int64_t lease_us = -1) {
  AcquireArgs args;
  args.mode = mode;
  args.wait_us = wait_us;
  args.lease_us = lease_us;
  return args;
}
AcquireArgs Read(AcquireArgs::Mode mode = AcquireArgs::Mode::kLock, int64_t wait_us = 0,
                 int64_t lease_us = -1) {
  AcquireArgs args = Write(mode, wait_us, lease_us);
  args.shared = true;
  return args;
}

Reply Int(int64_t v) { return Reply::Integer(v); }
Reply Bulk(const std::string& s) { return Reply::Bulk(s); }

// The arguments after the script body: numkeys, keys..., args...
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

// Every world here: a command executes 1 ms after it is sent, its reply arrives 1 ms later.
constexpr int64_t kLatencyUs = 1 * kMs;

Listener* AddListener(World& world) {
  auto listener = std::make_unique<Listener>(kChannel);
  Listener* raw = listener.get();
  const int client = world.AddClient(std::move(listener));
  world.Acquire(client, 0, AcquireArgs{});
  world.RunFor(2 * kMs);
  REQUIRE(world.Subscribers(kChannel) == 1);
  return raw;
}

}  // namespace

TEST_CASE("RwLock: readers share the lock, with Redisson's keys and arguments", "[rwlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", version);
  const int b = AddClient(world, "B", version);
  const int c = AddClient(world, "C", version);

  world.Acquire(a, 0, Read());
  world.Acquire(b, 0, Read(AcquireArgs::Mode::kTryLock, 5 * kSecond, 10 * kSecond));
  world.RunFor(2 * kMs);
  CHECK(Done(world, a, 0).result.status == Status::kOk);
  CHECK(Done(world, a, 0).result.detail == "acquired");
  CHECK(Done(world, b, 0).result.status == Status::kOk);
  CHECK(world.Exec({"HGET", "lock", "mode"}) == Bulk("read"));
  CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("1"));
  CHECK(world.Exec({"HGET", "lock", "B:1"}) == Bulk("1"));
  // Both executed at 1 ms: A's hold with the watchdog lease, B's with its own 10 s.
  CHECK(world.Exec({"PTTL", "{lock}:A:1:rwlock_timeout:1"}) == Int(29999));
  CHECK(world.Exec({"PTTL", "{lock}:B:1:rwlock_timeout:1"}) == Int(9999));
  CHECK(world.Exec({"PTTL", "lock"}) == Int(29999));  // max(pttl, lease) (#2144).
  CHECK(Tail(world.Sent(a, "read_acquire").at(0).argv) ==
        std::vector<std::string>{"2", "lock", "{lock}:A:1:rwlock_timeout", "30000", "A:1",
                                 "A:1:write"});
  CHECK(Tail(world.Sent(b, "read_acquire").at(0).argv) ==
        std::vector<std::string>{"2", "lock", "{lock}:B:1:rwlock_timeout", "10000", "B:1",
                                 "B:1:write"});

  // A writer is refused while they read.
  world.Acquire(c, 0, Write(AcquireArgs::Mode::kTryLockNoWait));
  world.RunFor(2 * kMs);
  const auto refused = Done(world, c, 0);
  CHECK(refused.result.status == Status::kFail);
  CHECK(refused.result.detail == "not acquired: held by another (pttl 29998 ms)");
  CHECK(Tail(world.Sent(c, "write_acquire").at(0).argv) ==
        std::vector<std::string>{"1", "lock", "30000", "C:1:write"});
  CHECK(world.CountSent(a, "subscribe") == 0);
}

TEST_CASE("RwLock: a writer waits for the readers, the last read unlock wakes it", "[rwlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", version);
  const int b = AddClient(world, "B", version);
  const int w = AddClient(world, "W", version);

  world.Acquire(a, 0, Read());
  world.Acquire(b, 0, Read());
  world.RunFor(2 * kMs);
  world.Acquire(w, 0, Write());
  world.RunFor(100 * kMs - world.now_us());
  CHECK(world.Busy(w, 0));
  CHECK(world.CountSent(w, "subscribe") == 1);
  CHECK(world.CountSent(w, "write_acquire") == 2);  // Before and after subscribing.
  CHECK(world.Subscribers(kChannel) == 1);

  // The first reader's unlock leaves the lock to the other reader (0): the writer may wake on
  // nothing, but it stays out.
  world.Release(a, 0);
  world.RunFor(50 * kMs);
  CHECK(Done(world, a, 0).result.value == 0);
  CHECK(world.Busy(w, 0));
  CHECK(world.Exec({"HGET", "lock", "mode"}) == Bulk("read"));

  const int64_t released_at = world.now_us();
  world.Release(b, 0);
  world.RunFor(50 * kMs);
  CHECK(Done(world, b, 0).result.status == Status::kOk);
  CHECK(Done(world, b, 0).result.value == 1);
  const auto granted = Done(world, w, 0);
  CHECK(granted.result.status == Status::kOk);
  // Unlock runs at +1 ms and publishes 0, delivered at +2 ms; the attempt replies at +4 ms.
  CHECK(granted.at_us == released_at + 4 * kMs);
  CHECK(world.Exec({"HGET", "lock", "mode"}) == Bulk("write"));
  CHECK(world.Exec({"HGET", "lock", "W:1:write"}) == Bulk("1"));
  CHECK(world.Subscribers(kChannel) == 0);  // Unsubscribed once granted.
}

TEST_CASE("RwLock: readers wait for a writer, its unlock (message 1) wakes all of them",
          "[rwlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int w = AddClient(world, "W", version);
  const int r = AddClient(world, "R", version, 3);

  world.Acquire(w, 0, Write());
  world.RunFor(2 * kMs);
  for (int thread = 0; thread < 3; ++thread) {
    world.Acquire(r, thread, Read(AcquireArgs::Mode::kTryLock, 10 * kSecond));
  }
  world.RunFor(500 * kMs);
  for (int thread = 0; thread < 3; ++thread) CHECK(world.Busy(r, thread));
  CHECK(world.CountSent(r, "subscribe") == 1);  // One entry per process, shared by threads.

  const int64_t released_at = world.now_us();
  world.Release(w, 0);
  world.RunFor(50 * kMs);
  CHECK(Done(world, w, 0).result.value == 1);
  for (int thread = 0; thread < 3; ++thread) {
    INFO("thread " << thread);
    const auto done = Done(world, r, thread);
    CHECK(done.result.status == Status::kOk);
    CHECK(done.at_us == released_at + 4 * kMs);  // All woken by the one message.
  }
  CHECK(world.Exec({"HGET", "lock", "mode"}) == Bulk("read"));
  CHECK(world.Exec({"HLEN", "lock"}) == Int(4));  // mode + R:1, R:2, R:3.
}

TEST_CASE("RwLock: read unlock publishes 0 (wake one), write unlock publishes 1 (wake all)",
          "[rwlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  Listener* listener = AddListener(world);
  const int a = AddClient(world, "A", version);
  const ScriptSet scripts = Scripts(version);

  world.Acquire(a, 0, Read());
  world.RunFor(2 * kMs);
  world.Release(a, 0);
  world.RunFor(2 * kMs);
  CHECK(Done(world, a, 0).result.value == 1);
  world.Acquire(a, 0, Write());
  world.RunFor(2 * kMs);
  world.Release(a, 0);
  world.RunFor(2 * kMs);
  CHECK(Done(world, a, 0).result.value == 1);
  CHECK(listener->messages == std::vector<std::string>{"0", "1"});
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));

  const auto unlocks = world.Sent(a, "unlock");
  REQUIRE(unlocks.size() == 2);
  CHECK(unlocks[0].argv[1] == scripts.bodies.at("read_unlock"));
  CHECK(unlocks[1].argv[1] == scripts.bodies.at("write_unlock"));
  if (version == "v3.13.6") {
    CHECK(Tail(unlocks[0].argv) ==
          std::vector<std::string>{"4", "lock", kChannel, "{lock}:A:1:rwlock_timeout", "{lock}",
                                   "0", "A:1"});
    CHECK(Tail(unlocks[1].argv) ==
          std::vector<std::string>{"2", "lock", kChannel, "1", "30000", "A:1:write"});
  } else {
    CHECK(Tail(unlocks[0].argv) ==
          std::vector<std::string>{"5", "lock", kChannel, "{lock}:A:1:rwlock_timeout", "{lock}",
                                   "redisson_unlock_latch:{lock}:A-1", "0", "A:1", "publish",
                                   "13500"});
    CHECK(Tail(unlocks[1].argv) ==
          std::vector<std::string>{"3", "lock", kChannel, "redisson_unlock_latch:{lock}:A-2",
                                   "1", "30000", "A:1:write", "publish", "13500"});
    CHECK(world.CountSent(a, "del_latch") == 2);
  }
}

TEST_CASE("RwLock: write reentry adds the lease to the TTL (#1110), unlock resets it",
          "[rwlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", version);

  // Executed at 1, 3 and 5 ms: 30000 (expires at 30001), then 29998 + 30000 (at 60001), then
  // 59996 + 30000 (at 90001).
  for (int hold = 1; hold <= 3; ++hold) {
    world.Acquire(a, 0, Write());
    world.RunFor(2 * kMs);
    CHECK(Done(world, a, 0).result.status == Status::kOk);
  }
  CHECK(world.Exec({"HGET", "lock", "A:1:write"}) == Bulk("3"));
  CHECK(world.Exec({"PTTL", "lock"}) == Int(89995));  // At 6 ms.

  // Unlocking one hold sets the TTL back to internalLockLeaseTime.
  world.Release(a, 0);
  world.RunFor(2 * kMs);
  CHECK(Done(world, a, 0).result.value == 0);
  CHECK(world.Exec({"PTTL", "lock"}) == Int(29999));
  CHECK(world.Exec({"HGET", "lock", "A:1:write"}) == Bulk("2"));

  // With an explicit lease the sum is of that lease: 10000, then 9998 + 10000.
  World leased;
  leased.set_latency_us(kLatencyUs);
  const int l = AddClient(leased, "L", version);
  leased.Acquire(l, 0, Write(AcquireArgs::Mode::kTryLock, kSecond, 10 * kSecond));
  leased.RunFor(2 * kMs);
  leased.Acquire(l, 0, Write(AcquireArgs::Mode::kTryLock, kSecond, 10 * kSecond));
  leased.RunFor(2 * kMs);
  CHECK(leased.Exec({"PTTL", "lock"}) == Int(19997));  // Expires at 20001, read at 4 ms.
}

TEST_CASE("RwLock: a reader's watchdog renews its read-hold timeout keys", "[rwlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", version);

  world.Acquire(a, 0, Read());
  world.RunFor(25 * kSecond);
  // Ticks at 10.002 s and 20.004 s, each renewing at +1 ms: the key now expires at 50.005 s.
  CHECK(world.CountSent(a, "renew") == 2);
  CHECK(world.Exec({"PTTL", "{lock}:A:1:rwlock_timeout:1"}) == Int(25005));
  CHECK(world.Exec({"PTTL", "lock"}) == Int(25005));
  const auto renew = world.Sent(a, "renew").at(0).argv;
  CHECK(renew[1] == Scripts(version).bodies.at("read_renew"));
  if (version == "v3.13.6") {
    CHECK(Tail(renew) == std::vector<std::string>{"2", "lock", "{lock}", "30000", "A:1"});
  } else {
    CHECK(Tail(renew) == std::vector<std::string>{"2", "lock", "{lock}", "30000", "1", "A:1"});
  }

  // Unlocking ends the renewal.
  world.Release(a, 0);
  world.RunFor(40 * kSecond);
  CHECK(world.CountSent(a, "renew") == 2);
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));
}

TEST_CASE("RwLock: the 3.13.6 read watchdog renews every reader's holds, current only its own",
          "[rwlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", version);
  const int b = AddClient(world, "B", version);

  world.Acquire(a, 0, Read());  // Watchdog.
  world.Acquire(b, 0, Read(AcquireArgs::Mode::kTryLock, kSecond, 15 * kSecond));  // No watchdog.
  world.RunFor(12 * kSecond);
  REQUIRE(world.CountSent(a, "renew") == 1);  // At 10.002 s, executed at 10.003 s.
  CHECK(world.CountSent(b, "renew") == 0);
  if (version == "v3.13.6") {
    // B's hold was renewed by A's watchdog to 30 s at 10.003 s: it would outlive B's lease.
    CHECK(world.Exec({"PTTL", "{lock}:B:1:rwlock_timeout:1"}) == Int(28003));
  } else {
    // Only A's own keys: B's hold keeps its 15 s lease (set at 1 ms).
    CHECK(world.Exec({"PTTL", "{lock}:B:1:rwlock_timeout:1"}) == Int(3001));
  }
  CHECK(world.Exec({"PTTL", "{lock}:A:1:rwlock_timeout:1"}) == Int(28003));
}

TEST_CASE("RwLock: the write watchdog renews the ':write' field with RLock's renew", "[rwlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", version);
  const ScriptSet scripts = Scripts(version);

  world.Acquire(a, 0, Write());
  world.RunFor(25 * kSecond);
  REQUIRE(world.CountSent(a, "renew") == 2);
  const auto renew = world.Sent(a, "renew").at(0).argv;
  CHECK(renew[1] == scripts.bodies.at("renew"));
  CHECK(Tail(renew) == std::vector<std::string>{"1", "lock", "30000", "A:1:write"});
  CHECK(world.Exec({"PTTL", "lock"}) == Int(25005));
  CHECK(world.Exec({"HGET", "lock", "A:1:write"}) == Bulk("1"));
}

TEST_CASE("RwLock: a writer may also read (downgrade), Release gives back the newest hold first",
          "[rwlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", version);
  const int b = AddClient(world, "B", version);
  const ScriptSet scripts = Scripts(version);

  world.Acquire(a, 0, Write());
  world.RunFor(2 * kMs);
  world.Acquire(a, 0, Read());
  world.RunFor(2 * kMs);
  CHECK(Done(world, a, 0).result.status == Status::kOk);
  CHECK(world.Exec({"HGET", "lock", "mode"}) == Bulk("write"));
  CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("1"));
  CHECK(world.Exec({"HGET", "lock", "A:1:write"}) == Bulk("1"));

  // Another process may not read while A writes.
  world.Acquire(b, 0, Read(AcquireArgs::Mode::kTryLockNoWait));
  world.RunFor(2 * kMs);
  CHECK(Done(world, b, 0).result.status == Status::kFail);

  world.Release(a, 0);  // The read hold: the writer stays.
  world.RunFor(2 * kMs);
  CHECK(world.Sent(a, "unlock").at(0).argv[1] == scripts.bodies.at("read_unlock"));
  CHECK(Done(world, a, 0).result.value == 0);
  CHECK(world.Exec({"HGET", "lock", "mode"}) == Bulk("write"));
  CHECK(world.Exec({"HEXISTS", "lock", "A:1"}) == Int(0));

  world.Release(a, 0);  // The write hold.
  world.RunFor(2 * kMs);
  CHECK(world.Sent(a, "unlock").at(1).argv[1] == scripts.bodies.at("write_unlock"));
  CHECK(Done(world, a, 0).result.value == 1);
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));

  // A third Release finds nothing held and unlocks the side of the last acquire (read).
  world.Release(a, 0);
  world.RunFor(2 * kMs);
  CHECK(world.Sent(a, "unlock").at(2).argv[1] == scripts.bodies.at("read_unlock"));
}

TEST_CASE("RwLock: unlocking a missing lock answers 1 in 3.13.6, nil in current (3.44.0)",
          "[rwlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  Listener* listener = AddListener(world);
  const int r = AddClient(world, "R", version);
  const int w = AddClient(world, "W", version);

  // R's last acquire was a (refused) read, so its Release unlocks the read side.
  world.Acquire(w, 0, Write());
  world.RunFor(2 * kMs);
  world.Acquire(r, 0, Read(AcquireArgs::Mode::kTryLockNoWait));
  world.RunFor(2 * kMs);
  REQUIRE(Done(world, r, 0).result.status == Status::kFail);
  world.Release(w, 0);
  world.RunFor(2 * kMs);
  REQUIRE(world.Exec({"EXISTS", "lock"}) == Int(0));
  listener->messages.clear();

  world.Release(r, 0);  // read_unlock of nothing.
  world.RunFor(2 * kMs);
  world.Release(w, 0);  // write_unlock of nothing.
  world.RunFor(2 * kMs);
  for (const int client : {r, w}) {
    const auto done = Done(world, client, 0);
    if (version == "v3.13.6") {
      CHECK(done.result.status == Status::kOk);
      CHECK(done.result.value == 1);
    } else {
      CHECK(done.result.status == Status::kFail);
      CHECK_THAT(done.result.detail, StartsWith("IllegalMonitorStateException"));
    }
  }
  // Both versions publish anyway: 0 from the read side, 1 from the write side.
  CHECK(listener->messages == std::vector<std::string>{"0", "1"});
}

TEST_CASE("RwLock: forceUnlock acts on the side the thread used", "[rwlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(kLatencyUs);
  const int a = AddClient(world, "A", version);
  const int b = AddClient(world, "B", version);

  world.Acquire(a, 0, Read());
  world.RunFor(2 * kMs);
  world.ForceUnlock(b, 0);  // B never acquired: the write side, which finds mode "read".
  world.RunFor(2 * kMs);
  CHECK(Done(world, b, 0).result.value == 0);
  CHECK(world.Exec({"HGET", "lock", "mode"}) == Bulk("read"));
  world.ForceUnlock(a, 0);
  world.RunFor(2 * kMs);
  CHECK(Done(world, a, 0).result.value == 1);
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));
  CHECK(world.Sent(a, "force_unlock").at(0).argv[1] ==
        Scripts(version).bodies.at("force_unlock_read"));
  // The watchdog entry went with it.
  world.RunFor(20 * kSecond);
  CHECK(world.CountSent(a, "renew") == 0);
}

TEST_CASE("RwLock: the factory makes it and reports missing scripts", "[rwlock]") {
  std::string error;
  CHECK(lockstep::locks::MakeProtocol("rwlock", Config("A", "v3.13.6"), Scripts("v3.13.6"),
                                      &error) != nullptr);
  ScriptSet partial = Scripts("current");
  partial.bodies.erase("read_renew");
  CHECK(lockstep::locks::MakeProtocol("rwlock", Config("A", "current"), partial, &error) ==
        nullptr);
  CHECK(error == "rwlock: missing script(s): read_renew");
  CHECK(Scripts("current").files.at("renew") == kLuaDir + "/rlock/current/renew.lua");
  CHECK(lockstep::locks::RwLockTimeoutPrefix("{u}:rw", "A", 0) == "{u}:rw:A:1:rwlock_timeout");
  CHECK(lockstep::locks::RwLockKeyPrefix("{u}:rw") == "{u}:rw");
}
