// Establishes that the FencedLock (RLock current behind the token-script adapter) hands out
// tokens 1, 2, 3 ... on every acquisition including reentry, reports the current hold's token,
// and otherwise behaves as RLock current (pub/sub wake-up, watchdog).
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "locks/factory.h"
#include "locks/fencedlock/fencedlock.h"
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
using lockstep::locks::LockProtocol;
using lockstep::locks::MakeFencedLock;
using lockstep::locks::OpResult;
using lockstep::locks::ScriptSet;
using lockstep::locks::testing::World;
using Status = OpResult::Status;
using Catch::Matchers::Contains;

const std::string kLuaDir = std::string(LOCKSTEP_SOURCE_DIR) + "/lua";
const std::string kTokenKey = "redisson_lock_token:{lock}";
constexpr int64_t kSecond = 1'000'000;

ScriptSet Scripts() {
  std::string error;
  auto scripts = LoadScripts(kLuaDir, "fencedlock", lockstep::locks::testing::VersionOf("current"), {}, &error);
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

// Adds a client and returns its protocol (owned by the world) for Token().
const LockProtocol* AddClient(World& world, const std::string& uuid, int* client,
                              int threads = 1) {
  auto protocol = MakeFencedLock(Config(uuid, threads), Scripts());
  const LockProtocol* raw = protocol.get();
  *client = world.AddClient(std::move(protocol));
  return raw;
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

// Token(thread), or -100 when the protocol reports none.
int64_t TokenOf(const LockProtocol* protocol, int thread = 0) {
  int64_t token = 0;
  return protocol->Token(thread, &token) ? token : -100;
}

}  // namespace

TEST_CASE("FencedLock: token script from fencedlock/current, the rest from rlock/current",
          "[fencedlock]") {
  const ScriptSet scripts = Scripts();
  CHECK_THAT(scripts.files.at("acquire_with_token"),
             Contains("lua/fencedlock/current/acquire_with_token.lua"));
  CHECK_THAT(scripts.files.at("unlock"), Contains("lua/rlock/current/unlock.lua"));
  CHECK_THAT(scripts.files.at("renew"), Contains("lua/rlock/current/renew.lua"));
  CHECK_THAT(scripts.files.at("force_unlock"), Contains("lua/rlock/current/force_unlock.lua"));
  // fencedlock's own plain acquire stays the fencedlock one, not RLock's.
  CHECK_THAT(scripts.files.at("acquire"), Contains("lua/fencedlock/current/acquire.lua"));

  std::string error;
  ClientConfig old = Config("A");
  old.version = lockstep::history::ProtocolVersion::k3136;
  CHECK_FALSE(lockstep::locks::CheckFencedLockConfig(old, scripts, &error));
  CHECK_THAT(error, Contains("3.19.0"));
  CHECK(lockstep::locks::MakeProtocol("fencedlock", Config("A"), scripts, &error) != nullptr);
}

TEST_CASE("FencedLock: tokens 1, 2, 3 across acquisitions and reentry", "[fencedlock]") {
  World world;
  int a = 0;
  const LockProtocol* fenced = AddClient(world, "A", &a);
  CHECK(TokenOf(fenced) == -100);

  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  auto done = Done(world, a);
  CHECK(done.result.status == Status::kOk);
  CHECK(done.result.has_value);
  CHECK(done.result.value == 1);
  CHECK(done.result.detail == "acquired (token 1)");
  CHECK(TokenOf(fenced) == 1);
  const Argv acquire = world.Sent(a, "acquire").at(0).argv;
  CHECK(std::vector<std::string>(acquire.begin() + 2, acquire.end()) ==
        std::vector<std::string>{"2", "lock", kTokenKey, "30000", "A:1"});
  CHECK(acquire.at(1) == Scripts().bodies.at("acquire_with_token"));

  // Reentry: a new token for the inner hold.
  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  CHECK(Done(world, a).result.value == 2);
  CHECK(TokenOf(fenced) == 2);
  CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("2"));

  // Leaving the inner hold gives back the outer hold's token.
  world.Release(a, 0);
  world.RunFor(0);
  CHECK(Done(world, a).result.value == 0);
  CHECK(TokenOf(fenced) == 1);
  world.Release(a, 0);
  world.RunFor(0);
  CHECK(Done(world, a).result.value == 1);
  CHECK(TokenOf(fenced) == -100);
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));

  world.Acquire(a, 0, TryLock(1 * kSecond));
  world.RunFor(0);
  CHECK(Done(world, a).result.value == 3);
  CHECK(TokenOf(fenced) == 3);
  CHECK(world.Exec({"GET", kTokenKey}) == Bulk("3"));
}

TEST_CASE("FencedLock: a waiter woken by the unlock message gets the next token, failed "
          "attempts take none",
          "[fencedlock]") {
  World world;
  int a = 0;
  int b = 0;
  const LockProtocol* fa = AddClient(world, "A", &a);
  const LockProtocol* fb = AddClient(world, "B", &b);

  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  REQUIRE(TokenOf(fa) == 1);
  world.Acquire(b, 0, Lock());
  world.RunFor(1 * kSecond);
  CHECK(world.Busy(b, 0));
  CHECK(world.CountSent(b, "acquire") == 2);  // Before and after subscribing.
  CHECK(world.CountSent(b, "subscribe") == 1);
  CHECK(world.Exec({"GET", kTokenKey}) == Bulk("1"));
  CHECK(TokenOf(fb) == -100);

  world.Release(a, 0);
  world.RunFor(0);
  const auto done = Done(world, b);
  CHECK(done.result.status == Status::kOk);
  CHECK(done.result.value == 2);
  CHECK(done.at_us == 1 * kSecond);
  CHECK(TokenOf(fb) == 2);
  CHECK(TokenOf(fa) == -100);
  CHECK(world.Exec({"HGET", "lock", "B:1"}) == Bulk("1"));
}

TEST_CASE("FencedLock: lockAndGetToken(lease) ignores the lease, tryLock keeps it",
          "[fencedlock]") {
  World world;
  int a = 0;
  AddClient(world, "A", &a, 2);

  world.Acquire(a, 0, Lock(5 * kSecond));
  world.RunFor(0);
  CHECK(world.Sent(a, "acquire").at(0).argv.at(5) == "30000");
  CHECK(world.Exec({"PTTL", "lock"}) == Int(30000));
  world.RunFor(10 * kSecond);
  CHECK(world.CountSent(a, "renew") == 1);  // The watchdog, as for a lock without a lease.
  CHECK(world.Exec({"PTTL", "lock"}) == Int(30000));

  world.Release(a, 0);
  world.RunFor(0);
  world.Acquire(a, 1, TryLock(1 * kSecond, 5 * kSecond));
  world.RunFor(0);
  CHECK(Done(world, a, 1).result.value == 2);
  CHECK(world.Sent(a, "acquire").at(1).argv.at(5) == "5000");
  CHECK(world.Exec({"PTTL", "lock"}) == Int(5000));
}

TEST_CASE("FencedLock: a lost acquire reply advances the counter but gives the thread no token",
          "[fencedlock]") {
  World world;
  int a = 0;
  const LockProtocol* fenced = AddClient(world, "A", &a);
  world.DropReplies(a, "acquire");
  world.Acquire(a, 0, Lock());
  world.RunFor(5 * kSecond);
  const auto done = Done(world, a);
  CHECK(done.result.status == Status::kInfo);
  CHECK_FALSE(done.result.has_value);
  CHECK(done.at_us == 3 * kSecond);
  CHECK(TokenOf(fenced) == -100);
  CHECK(world.Exec({"GET", kTokenKey}) == Bulk("1"));
  CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("1"));

  // The next acquisition is a reentry on the server and takes token 2.
  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  CHECK(Done(world, a).result.value == 2);
  CHECK(TokenOf(fenced) == 2);

  world.Crash(a);
  CHECK(TokenOf(fenced) == -100);
}
