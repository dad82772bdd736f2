// Establishes that the plain single-key locks (common SET NX designs) behave as modelled, including the
// two broken variants' failures: setnx-expire's key without a TTL after a crash between SETNX
// and EXPIRE, and get-del's DEL of another client's lock.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "history/kinds.h"
#include "locks/factory.h"
#include "locks/plainlock/plainlock.h"
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
using lockstep::locks::MakePlainLock;
using lockstep::locks::OpResult;
using lockstep::locks::ScriptSet;
using lockstep::locks::testing::World;
using Status = OpResult::Status;
using Catch::Matchers::Contains;

const std::string kLuaDir = std::string(LOCKSTEP_SOURCE_DIR) + "/lua";
constexpr int64_t kMs = 1'000;
constexpr int64_t kSecond = 1'000'000;

ScriptSet Scripts(const std::string& kind) {
  std::string error;
  auto scripts = LoadScripts(kLuaDir, kind, lockstep::history::ProtocolVersion::kCurrent, {}, &error);
  INFO(error);
  REQUIRE(scripts.has_value());
  return *scripts;
}

int AddClient(World& world, const std::string& kind, const std::string& uuid) {
  ClientConfig config;
  config.uuid = uuid;
  return world.AddClient(MakePlainLock(kind, config, Scripts(kind)));
}

AcquireArgs TryLock(int64_t wait_us, int64_t lease_us) {
  return AcquireArgs{AcquireArgs::Mode::kTryLock, wait_us, lease_us};
}

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

}  // namespace

TEST_CASE("Plain: the kinds load lua/plain and are made by the factory", "[plainlock]") {
  for (const std::string kind : {"setnx-px", "setnx-expire", "get-del"}) {
    INFO(kind);
    const ScriptSet scripts = Scripts(kind);
    REQUIRE(scripts.bodies.count("unlock_compare_and_delete") == 1);
    CHECK_THAT(scripts.files.at("unlock_compare_and_delete"),
               Contains("lua/plain/unlock_compare_and_delete.lua"));
    ClientConfig config;
    config.uuid = "A";
    std::string error;
    CHECK(lockstep::locks::MakeProtocol(kind, config, scripts, &error) != nullptr);
    CHECK(error.empty());
  }
  std::string error;
  ClientConfig config;
  CHECK_FALSE(lockstep::locks::CheckPlainLockConfig("setnx-px", config, ScriptSet{}, &error));
  CHECK_THAT(error, Contains("unlock_compare_and_delete"));
}

TEST_CASE("setnx-px: SET NX PX takes the key, a waiter retries every 100 ms until its wait ends",
          "[plainlock]") {
  World world;
  const int a = AddClient(world, "setnx-px", "A");
  const int b = AddClient(world, "setnx-px", "B");

  world.Acquire(a, 0, TryLock(0, 10 * kSecond));
  world.RunFor(0);
  CHECK(Done(world, a).result.status == Status::kOk);
  CHECK(world.Sent(a, "acquire").at(0).argv == Argv{"SET", "lock", "A:1", "NX", "PX", "10000"});
  CHECK(world.Exec({"GET", "lock"}) == Bulk("A:1"));
  CHECK(world.Exec({"PTTL", "lock"}) == Int(10000));

  world.Acquire(b, 0, TryLock(250 * kMs, 10 * kSecond));
  world.RunFor(1 * kSecond);
  const auto done = Done(world, b);
  CHECK(done.result.status == Status::kFail);
  CHECK(done.result.detail == "wait time elapsed");
  CHECK(done.at_us == 250 * kMs);
  // Attempts at 0, 100 and 200 ms, and a last one when the wait ends.
  CHECK(SentAt(world, b, "acquire") == std::vector<int64_t>{0, 100 * kMs, 200 * kMs, 250 * kMs});

  world.Release(a, 0);
  world.RunFor(0);
  CHECK(Done(world, a).result.status == Status::kOk);
  CHECK(Done(world, a).result.value == 1);
  CHECK(world.Sent(a, "unlock").at(0).argv.at(3) == "lock");
  CHECK(world.Sent(a, "unlock").at(0).argv.at(4) == "A:1");
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));
}

TEST_CASE("setnx-px: no lease given means the 30 s watchdog timeout as TTL, never renewed",
          "[plainlock]") {
  World world;
  const int a = AddClient(world, "setnx-px", "A");
  world.Acquire(a, 0, TryLock(0, -1));
  world.RunFor(0);
  CHECK(Done(world, a).result.status == Status::kOk);
  CHECK(world.Exec({"PTTL", "lock"}) == Int(30000));
  world.RunFor(31 * kSecond);
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));
  CHECK(world.sent().size() == 1);
}

TEST_CASE("setnx-px: compare-and-delete does not delete another owner's key", "[plainlock]") {
  World world;
  const int a = AddClient(world, "setnx-px", "A");
  const int b = AddClient(world, "setnx-px", "B");

  world.Acquire(a, 0, TryLock(0, 100 * kMs));
  world.RunFor(0);
  REQUIRE(Done(world, a).result.status == Status::kOk);

  // A's lease runs out while it still "works"; B takes the key.
  world.RunUntil(150 * kMs);
  world.Acquire(b, 0, TryLock(0, 10 * kSecond));
  world.RunFor(0);
  REQUIRE(Done(world, b).result.status == Status::kOk);

  world.RunUntil(200 * kMs);
  world.Release(a, 0);
  world.RunFor(0);
  const auto done = Done(world, a);
  CHECK(done.result.status == Status::kFail);
  CHECK_THAT(done.result.detail, Contains("holds another token"));
  CHECK(world.Exec({"GET", "lock"}) == Bulk("B:1"));
  CHECK(world.Exec({"PTTL", "lock"}) == Int(9950));
}

TEST_CASE("setnx-expire: SETNX then a separate EXPIRE in whole seconds", "[plainlock]") {
  World world;
  world.set_latency_us(10 * kMs);
  const int a = AddClient(world, "setnx-expire", "A");
  world.Acquire(a, 0, TryLock(0, 4500 * kMs));
  world.RunFor(1 * kSecond);
  const auto done = Done(world, a);
  CHECK(done.result.status == Status::kOk);
  CHECK(done.at_us == 40 * kMs);  // Two round trips.
  REQUIRE(world.CountSent(a, "setnx") == 1);
  CHECK(world.Sent(a, "setnx").at(0).argv == Argv{"SETNX", "lock", "A:1"});
  REQUIRE(world.CountSent(a, "expire") == 1);
  CHECK(world.Sent(a, "expire").at(0).at_us == 20 * kMs);
  CHECK(world.Sent(a, "expire").at(0).argv == Argv{"EXPIRE", "lock", "5"});  // 4.5 s, rounded up.
  // EXPIRE ran at 30 ms with 5 s; it is now 1000 ms.
  CHECK(world.Exec({"PTTL", "lock"}) == Int(4030));
}

TEST_CASE("setnx-expire: a crash between SETNX and EXPIRE leaves a key with no TTL forever",
          "[plainlock]") {
  World world;
  world.set_latency_us(10 * kMs);
  const int a = AddClient(world, "setnx-expire", "A");
  const int b = AddClient(world, "setnx-expire", "B");

  world.Acquire(a, 0, TryLock(0, 5 * kSecond));
  // SETNX executes at 10 ms; its reply would arrive at 20 ms. The process dies in between.
  world.RunUntil(15 * kMs);
  CHECK(world.Exec({"GET", "lock"}) == Bulk("A:1"));
  world.Crash(a);
  world.RunFor(1 * kSecond);
  CHECK(Done(world, a).result.status == Status::kInfo);
  CHECK(world.CountSent(a, "expire") == 0);
  CHECK(world.Exec({"PTTL", "lock"}) == Int(-1));

  // Nobody can take it, an hour later either.
  world.RunFor(3600 * kSecond);
  world.Acquire(b, 0, TryLock(500 * kMs, 5 * kSecond));
  world.RunFor(1 * kSecond);
  CHECK(Done(world, b).result.status == Status::kFail);
  CHECK(world.Exec({"PTTL", "lock"}) == Int(-1));
  CHECK(world.Exec({"GET", "lock"}) == Bulk("A:1"));
}

TEST_CASE("get-del: the DEL after GET deletes another owner's key that expired and was "
          "re-acquired in between",
          "[plainlock]") {
  World world;
  world.set_latency_us(10 * kMs);
  const int a = AddClient(world, "get-del", "A");
  const int b = AddClient(world, "get-del", "B");

  // A's SET executes at 10 ms with a 100 ms lease: the key expires at 110 ms.
  world.Acquire(a, 0, TryLock(0, 100 * kMs));
  world.RunUntil(85 * kMs);
  REQUIRE(Done(world, a).result.status == Status::kOk);

  // A unlocks: GET runs at 95 ms (still A's), its reply comes at 105 ms, DEL runs at 115 ms.
  world.Release(a, 0);
  // B asks at 101 ms: its SET runs at 111 ms, after the expiry, and takes the key.
  world.RunUntil(101 * kMs);
  world.Acquire(b, 0, TryLock(0, 10 * kSecond));
  world.RunUntil(112 * kMs);
  CHECK(world.Exec({"GET", "lock"}) == Bulk("B:1"));

  world.RunUntil(200 * kMs);
  const auto b_done = Done(world, b);
  CHECK(b_done.result.status == Status::kOk);
  CHECK(b_done.at_us == 121 * kMs);
  const auto a_done = Done(world, a);
  CHECK(a_done.result.status == Status::kOk);
  CHECK(a_done.result.value == 1);  // A's DEL removed a key: B's.
  CHECK(a_done.at_us == 125 * kMs);
  REQUIRE(world.CountSent(a, "get") == 1);
  REQUIRE(world.CountSent(a, "del") == 1);
  CHECK(world.Sent(a, "del").at(0).at_us == 105 * kMs);
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));  // B believes it holds the lock.

  // B's own unlock now finds nothing.
  world.Release(b, 0);
  world.RunFor(1 * kSecond);
  CHECK(Done(world, b).result.status == Status::kFail);
  CHECK_THAT(Done(world, b).result.detail, Contains("GET returned"));
}

TEST_CASE("Plain: a lost reply ends the operation as info after the response timeout",
          "[plainlock]") {
  World world;
  const int a = AddClient(world, "setnx-px", "A");
  world.DropReplies(a, "acquire");
  world.Acquire(a, 0, TryLock(10 * kSecond, 10 * kSecond));
  world.RunFor(5 * kSecond);
  const auto done = Done(world, a);
  CHECK(done.result.status == Status::kInfo);
  CHECK(done.at_us == 3 * kSecond);
  CHECK(world.CountSent(a, "acquire") == 1);  // Not resent.
  CHECK(world.Exec({"GET", "lock"}) == Bulk("A:1"));  // It ran.
}

TEST_CASE("every protocol kind of history/kinds.h has a client registered, and no other",
          "[locks][registry]") {
  for (const lockstep::history::ProtocolKind& kind : lockstep::history::kProtocolKinds) {
    INFO(kind.name);
    CHECK(lockstep::locks::HasClient(kind.name));
  }
  CHECK(lockstep::locks::ProtocolKinds().size() == std::size(lockstep::history::kProtocolKinds));
  CHECK_FALSE(lockstep::locks::HasClient("no-such-kind"));
  std::string error;
  CHECK(lockstep::locks::MakeProtocol("no-such-kind", {}, {}, &error) == nullptr);
  CHECK(error.find("unknown protocol kind 'no-such-kind' (known: rlock, fairlock") == 0);
}
