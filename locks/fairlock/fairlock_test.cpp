// Establishes that the FairLock state machine, driven over the emulated Redis by locks/testing.h,
// does what Redisson's RedissonFairLock does in 3.13.6 and at HEAD ("current"): the keys and
// arguments it sends, FIFO grants with per-thread wake-ups, acquireFailed on tryLock's way out,
// purging of dead waiters, and the version differences the scripts and the client carry
// (#4153, #4705, #4743, #5019).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "locks/factory.h"
#include "locks/fairlock/fairlock.h"
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
using lockstep::locks::FairLockChannel;
using lockstep::locks::FairLockOptions;
using lockstep::locks::LoadScripts;
using lockstep::locks::LockProtocol;
using lockstep::locks::MakeFairLock;
using lockstep::locks::OpResult;
using lockstep::locks::Outbox;
using lockstep::locks::RequestId;
using lockstep::locks::ScriptSet;
using lockstep::locks::TimerId;
using lockstep::locks::testing::World;
using Status = OpResult::Status;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

const std::string kLuaDir = std::string(LOCKSTEP_SOURCE_DIR) + "/lua";
const std::string kQueue = "redisson_lock_queue:{lock}";
const std::string kTimeouts = "redisson_lock_timeout:{lock}";
const std::string kPrefix = "redisson_lock__channel:{lock}";
constexpr int64_t kSecond = 1'000'000;
constexpr int64_t kT0 = World::kStartUnixMs;  // Every client's wall clock at time 0, in ms.

ScriptSet Scripts(const std::string& version) {
  std::string error;
  auto scripts = LoadScripts(kLuaDir, "fairlock", lockstep::locks::testing::VersionOf(version), {}, &error);
  INFO(error);
  REQUIRE(scripts.has_value());
  return *scripts;
}

ClientConfig Config(const std::string& uuid, const std::string& version, int threads = 1,
                    int64_t fair_wait_us = 300'000'000) {
  ClientConfig config;
  config.uuid = uuid;
  config.version = lockstep::locks::testing::VersionOf(version);
  config.threads = threads;
  config.fair_wait_timeout_us = fair_wait_us;
  return config;  // Otherwise Redisson's defaults: watchdog 30 s, timeout 3 s, 3 retries.
}

int AddClient(World& world, const std::string& uuid, const std::string& version,
              int threads = 1, int64_t fair_wait_us = 300'000'000,
              const FairLockOptions& options = {}) {
  return world.AddClient(
      MakeFairLock(Config(uuid, version, threads, fair_wait_us), Scripts(version), options));
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
Reply Bulks(const std::vector<std::string>& items) {
  std::vector<Reply> elements;
  for (const std::string& item : items) elements.push_back(Reply::Bulk(item));
  return Reply::Array(std::move(elements));
}

// The queue, and the deadlines with their scores, as the server has them.
Reply Queue(World& world) { return world.Exec({"LRANGE", kQueue, "0", "-1"}); }
Reply Deadlines(World& world) {
  return world.Exec({"ZRANGE", kTimeouts, "0", "-1", "WITHSCORES"});
}
std::string Ms(int64_t ms) { return std::to_string(ms); }

// The arguments after the script body: numkeys, keys..., args...
std::vector<std::string> Tail(const Argv& argv) {
  REQUIRE(argv.size() >= 3);
  REQUIRE(argv[0] == "EVAL");
  return std::vector<std::string>(argv.begin() + 2, argv.end());
}

// How many acquire attempts (acquire or try_acquire) carried this lockName.
int AttemptsOf(const World& world, int client, const std::string& field) {
  int count = 0;
  for (const std::string label : {"acquire", "try_acquire"}) {
    for (const auto& sent : world.Sent(client, label)) {
      if (sent.argv.size() > 7 && sent.argv[7] == field) ++count;
    }
  }
  return count;
}

lockstep::locks::testing::Completion Done(const World& world, int client, int thread) {
  const auto done = world.Last(client, thread);
  REQUIRE(done.has_value());
  return *done;
}

// A bystander process that subscribes to the channels it is given (on "Acquire") and records
// every message it receives: it shows exactly which channel a script published on.
class ChannelSpy final : public LockProtocol {
 public:
  explicit ChannelSpy(std::vector<std::string> channels) : channels_(std::move(channels)) {}
  void Acquire(Outbox& out, int thread, const AcquireArgs& args) override {
    (void)args;
    for (const std::string& channel : channels_) {
      out.Send(0, out.NewRequestId(), {"SUBSCRIBE", channel}, "spy_subscribe", -1);
    }
    out.Complete(thread, OpResult{});
  }
  void Release(Outbox& out, int thread) override { out.Complete(thread, OpResult{}); }
  void ForceUnlock(Outbox& out, int thread) override { out.Complete(thread, OpResult{}); }
  void OnReply(Outbox& out, RequestId request, const Reply& reply) override {
    (void)out, (void)request, (void)reply;
  }
  void OnMessage(Outbox& out, int node, const std::string& channel,
                 const std::string& payload) override {
    (void)out, (void)node;
    messages.emplace_back(channel, payload);
  }
  void OnTimer(Outbox& out, TimerId timer) override { (void)out, (void)timer; }
  void OnCrash() override {}

  std::vector<std::pair<std::string, std::string>> messages;

 private:
  std::vector<std::string> channels_;
};

ChannelSpy* AddSpy(World& world, std::vector<std::string> channels) {
  auto spy = std::make_unique<ChannelSpy>(std::move(channels));
  ChannelSpy* raw = spy.get();
  const int client = world.AddClient(std::move(spy));
  world.Acquire(client, 0, AcquireArgs{});
  world.RunFor(0);
  return raw;
}

using Messages = std::vector<std::pair<std::string, std::string>>;

}  // namespace

TEST_CASE("FairLock: scripts get the KEYS and ARGV their headers give, per version",
          "[fairlock]") {
  SECTION("v3.13.6") {
    World world;
    const int a = AddClient(world, "A", "v3.13.6");
    const int b = AddClient(world, "B", "v3.13.6");
    const ScriptSet scripts = Scripts("v3.13.6");
    world.RunUntil(1 * kSecond);
    world.Acquire(a, 0, TryLock(0, 5 * kSecond));
    world.RunFor(0);
    world.Acquire(b, 0, TryLockNoWait());
    world.RunFor(0);
    world.RunUntil(2 * kSecond);
    world.Release(a, 0);
    world.RunFor(0);
    world.ForceUnlock(a, 0);
    world.RunFor(0);
    const auto acquire = world.Sent(a, "acquire").at(0).argv;
    CHECK(acquire[1] == scripts.bodies.at("acquire"));
    // lease, lockName, wait (tryLock's 0 ms: 3.13.6 takes any waitTime != -1), now = wall ms.
    CHECK(Tail(acquire) == std::vector<std::string>{"3", "lock", kQueue, kTimeouts, "5000",
                                                     "A:1", "0", Ms(kT0 + 1000)});
    // tryLock(): the EVAL_NULL_BOOLEAN script, now and wait swapped, threadWaitTime.
    const auto try_acquire = world.Sent(b, "try_acquire").at(0).argv;
    CHECK(try_acquire[1] == scripts.bodies.at("try_acquire"));
    CHECK(Tail(try_acquire) == std::vector<std::string>{"3", "lock", kQueue, kTimeouts, "30000",
                                                         "B:1", Ms(kT0 + 1000), "300000"});
    CHECK(Done(world, b, 0).result.detail ==
          "not acquired: held, or others queued first (try_acquire returned 1)");
    const auto unlock = world.Sent(a, "unlock").at(0).argv;
    CHECK(Tail(unlock) == std::vector<std::string>{"4", "lock", kQueue, kTimeouts, kPrefix, "0",
                                                    "5000", "A:1", Ms(kT0 + 2000)});
    const auto force = world.Sent(a, "force_unlock").at(0).argv;
    CHECK(Tail(force) ==
          std::vector<std::string>{"4", "lock", kQueue, kTimeouts, kPrefix, "0", Ms(kT0 + 2000)});
    CHECK(world.CountSent(a, "acquire_failed") == 0);
    CHECK(world.CountSent(b, "subscribe") == 0);
  }
  SECTION("current") {
    World world;
    const int a = AddClient(world, "A", "current");
    world.RunUntil(1 * kSecond);
    world.Acquire(a, 0, Lock());
    world.RunFor(0);
    world.RunUntil(2 * kSecond);
    world.Release(a, 0);
    world.RunFor(0);
    world.ForceUnlock(a, 0);
    world.RunFor(0);
    CHECK(Tail(world.Sent(a, "acquire").at(0).argv) ==
          std::vector<std::string>{"3", "lock", kQueue, kTimeouts, "30000", "A:1", "300000",
                                   Ms(kT0 + 1000)});
    CHECK(Tail(world.Sent(a, "unlock").at(0).argv) ==
          std::vector<std::string>{"5", "lock", kQueue, kTimeouts, kPrefix,
                                   "redisson_unlock_latch:{lock}:A-1", "0", "30000", "A:1",
                                   Ms(kT0 + 2000), "publish", "13500"});
    CHECK(world.Sent(a, "del_latch").at(0).argv ==
          Argv{"DEL", "redisson_unlock_latch:{lock}:A-1"});
    CHECK(Tail(world.Sent(a, "force_unlock").at(0).argv) ==
          std::vector<std::string>{"4", "lock", kQueue, kTimeouts, kPrefix, "0", Ms(kT0 + 2000),
                                   "publish"});
    CHECK(Done(world, a, 0).result.value == 0);  // Nothing left to delete.
  }
  SECTION("names") {
    CHECK(FairLockChannel("lock", "A", 0) == "redisson_lock__channel:{lock}:A:1");
    CHECK(FairLockChannel("{user}:lock", "u-1", 6) == "redisson_lock__channel:{user}:lock:u-1:7");
    CHECK(lockstep::locks::FairLockQueue("{x}y") == "redisson_lock_queue:{x}y");
    CHECK(lockstep::locks::FairLockTimeouts("x") == "redisson_lock_timeout:{x}");
  }
}

TEST_CASE("FairLock: waiters are granted in arrival order, each woken on its own channel",
          "[fairlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  const int h = AddClient(world, "H", version);
  const int x = AddClient(world, "X", version, 2);  // Two threads: two channels, two places.
  const int y = AddClient(world, "Y", version);
  world.Acquire(h, 0, Lock());
  world.RunFor(0);
  // Arrivals: X thread 1 at 1 s, Y at 2 s, X thread 0 at 3 s: not the order of the clients.
  world.RunUntil(1 * kSecond);
  world.Acquire(x, 1, Lock());
  world.RunUntil(2 * kSecond);
  world.Acquire(y, 0, Lock());
  world.RunUntil(3 * kSecond);
  world.Acquire(x, 0, Lock());
  world.RunFor(0);

  CHECK(Queue(world) == Bulks({"X:2", "Y:1", "X:1"}));
  // Deadlines: the head's is the lock's PTTL (29 s) + wait (300 s) + its now; each later one
  // is its predecessor's + 300 s.
  CHECK(Deadlines(world) == Bulks({"X:2", Ms(kT0 + 330'000), "Y:1", Ms(kT0 + 630'000), "X:1",
                                   Ms(kT0 + 930'000)}));
  CHECK(world.Subscribers(FairLockChannel("lock", "X", 0)) == 1);
  CHECK(world.Subscribers(FairLockChannel("lock", "X", 1)) == 1);
  CHECK(world.Subscribers(FairLockChannel("lock", "Y", 0)) == 1);
  CHECK(world.Subscribers(kPrefix) == 0);  // Nobody waits on RLock's shared channel.

  // Each holder releases one second after it got the lock: the head, and only the head, is
  // woken each time (X thread 0 shares a process with X thread 1 and stays asleep).
  world.RunUntil(10 * kSecond);
  world.Release(h, 0);
  world.RunFor(0);
  CHECK(Done(world, x, 1).result.status == Status::kOk);
  CHECK(Done(world, x, 1).at_us == 10 * kSecond);
  CHECK(world.Busy(x, 0));
  CHECK(world.Busy(y, 0));
  CHECK(AttemptsOf(world, x, "X:1") == 2);
  CHECK(AttemptsOf(world, y, "Y:1") == 2);
  // The grant moved every remaining deadline forward by the wait.
  CHECK(Queue(world) == Bulks({"Y:1", "X:1"}));
  CHECK(Deadlines(world) == Bulks({"Y:1", Ms(kT0 + 330'000), "X:1", Ms(kT0 + 630'000)}));
  CHECK(world.Subscribers(FairLockChannel("lock", "X", 1)) == 0);  // Unsubscribed.

  world.RunUntil(11 * kSecond);
  world.Release(x, 1);
  world.RunFor(0);
  CHECK(Done(world, y, 0).result.status == Status::kOk);
  CHECK(Done(world, y, 0).at_us == 11 * kSecond);
  CHECK(world.Busy(x, 0));

  world.RunUntil(12 * kSecond);
  world.Release(y, 0);
  world.RunFor(0);
  CHECK(Done(world, x, 0).result.status == Status::kOk);
  CHECK(Done(world, x, 0).at_us == 12 * kSecond);
  CHECK(world.Exec({"HGETALL", "lock"}) == Bulks({"X:1", "1"}));
  CHECK(world.Exec({"EXISTS", kQueue, kTimeouts}) == Int(0));

  // The grants, in order, and nobody was granted twice.
  std::vector<std::pair<int, int>> grants;
  for (const auto& done : world.completions()) {
    if (done.result.detail == "acquired") grants.emplace_back(done.client, done.thread);
  }
  CHECK(grants == std::vector<std::pair<int, int>>{{h, 0}, {x, 1}, {y, 0}, {x, 0}});
}

TEST_CASE("FairLock: a tryLock that times out leaves the queue and the next waiter is granted",
          "[fairlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  const int h = AddClient(world, "H", version);
  const int b = AddClient(world, "B", version);
  const int c = AddClient(world, "C", version);
  world.Acquire(h, 0, Lock());
  world.RunUntil(1 * kSecond);
  world.Acquire(b, 0, TryLock(5 * kSecond));
  world.RunUntil(2 * kSecond);
  world.Acquire(c, 0, Lock());
  world.RunFor(0);
  // B queued with tryLock's wait (5 s): 29 s + 5 s + now. C behind it with 300 s.
  CHECK(Queue(world) == Bulks({"B:1", "C:1"}));
  CHECK(Deadlines(world) == Bulks({"B:1", Ms(kT0 + 35'000), "C:1", Ms(kT0 + 335'000)}));

  world.RunUntil(6 * kSecond - 1);
  CHECK(world.Busy(b, 0));
  world.RunUntil(6 * kSecond);
  const auto done = Done(world, b, 0);
  CHECK(done.result.status == Status::kFail);
  CHECK(done.result.detail == "wait time elapsed");
  CHECK(done.at_us == 6 * kSecond);
  const auto failed = world.Sent(b, "acquire_failed");
  REQUIRE(failed.size() == 1);
  CHECK(Tail(failed[0].argv) == std::vector<std::string>{"2", kQueue, kTimeouts, "B:1", "5000"});
  // B is gone from both; C, behind it, moved forward by B's wait.
  CHECK(Queue(world) == Bulks({"C:1"}));
  CHECK(Deadlines(world) == Bulks({"C:1", Ms(kT0 + 330'000)}));
  CHECK(world.Subscribers(FairLockChannel("lock", "B", 0)) == 0);

  world.RunUntil(8 * kSecond);
  world.Release(h, 0);
  world.RunFor(0);
  CHECK(Done(world, c, 0).result.status == Status::kOk);
  CHECK(Done(world, c, 0).at_us == 8 * kSecond);
  CHECK(world.Exec({"HGET", "lock", "C:1"}) == Bulk("1"));
  CHECK(world.Exec({"EXISTS", kQueue, kTimeouts}) == Int(0));
  CHECK(AttemptsOf(world, b, "B:1") == 2);
}

TEST_CASE("FairLock: a response timeout in tryLock's loop runs acquireFailed in current only",
          "[fairlock]") {
  // One-way latency 1 ms, so that the reply of B's second attempt (the first inside the loop)
  // can be dropped on its own: first attempt 1.000 -> 1.002, SUBSCRIBE 1.002 -> 1.004, second
  // attempt sent at 1.004.
  World world;
  world.set_latency_us(1000);
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  const int h = AddClient(world, "H", version);
  const int b = AddClient(world, "B", version);
  world.Acquire(h, 0, Lock());
  world.RunUntil(1 * kSecond);
  world.Acquire(b, 0, TryLock(60 * kSecond));
  world.RunUntil(1 * kSecond + 3000);
  REQUIRE(world.CountSent(b, "acquire") == 1);
  world.DropReplies(b, "acquire", 1);
  world.RunUntil(10 * kSecond);
  if (version == "current") {
    // 4.7.0 (#5019): the timeout at 4.004 s runs acquireFailed (sent with retry) and tryLock
    // returns false; the attempt may have run, so lockstep records the outcome as unknown.
    const auto done = Done(world, b, 0);
    CHECK(done.result.status == Status::kInfo);
    CHECK(done.at_us == 4'006'000);
    CHECK_THAT(done.result.detail, StartsWith("RedisTimeoutException") &&
                                       Contains("Redisson 4.7+ makes tryLock return false"));
    CHECK(world.CountSent(b, "acquire") == 2);
    CHECK(world.Sent(b, "acquire_failed").at(0).at_us == 4'004'000);
    CHECK(Queue(world) == Reply::Array());
    CHECK(Deadlines(world) == Reply::Array());
  } else {
    // 3.13.6 resends the attempt 1.5 s after the timeout and goes on waiting, still queued.
    CHECK(world.Busy(b, 0));
    const auto acquires = world.Sent(b, "acquire");
    REQUIRE(acquires.size() == 3);
    CHECK(acquires[2].at_us == 5'504'000);
    CHECK(acquires[2].argv == acquires[1].argv);
    CHECK(world.CountSent(b, "acquire_failed") == 0);
    CHECK(Queue(world) == Bulks({"B:1"}));
  }
}

TEST_CASE("FairLock: a crashed waiter is purged once its deadline passes", "[fairlock]") {
  // threadWaitTime 5 s (the pre-3.13.3 default) so that the dead waiter's deadline comes soon.
  // One-way latency 1 ms: current's waiters re-poll with no delay while the lock is free and
  // the head is someone else, and that loop must let the clock move.
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(1000);
  const int h = AddClient(world, "H", version, 1, 5 * kSecond);
  const int b = AddClient(world, "B", version, 1, 5 * kSecond);
  const int c = AddClient(world, "C", version, 1, 5 * kSecond);
  const int d = AddClient(world, "D", version, 1, 5 * kSecond);
  world.Acquire(h, 0, Lock());  // Runs at 1 ms: expires at 30.001 s.
  world.RunUntil(1 * kSecond);
  world.Acquire(b, 0, Lock());  // pttl 29000 + wait 5000 + now (sent at 1 s).
  world.RunUntil(2 * kSecond);
  world.Acquire(c, 0, Lock());  // B's deadline - now + 5000 + now.
  world.RunUntil(3 * kSecond);
  CHECK(Deadlines(world) == Bulks({"B:1", Ms(kT0 + 35'000), "C:1", Ms(kT0 + 40'000)}));

  world.Crash(b);
  world.RunUntil(10 * kSecond);
  world.Release(h, 0);
  world.RunUntil(10 * kSecond + 10'000);
  CHECK(Done(world, h, 0).result.value == 1);
  // The lock is free, but B (dead) is still the head until its deadline: nobody else may take
  // the lock, and tryLock() does not barge in either.
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));
  CHECK(Queue(world) == Bulks({"B:1", "C:1"}));
  CHECK(world.Busy(c, 0));
  world.Acquire(d, 0, TryLockNoWait());
  world.RunUntil(11 * kSecond);
  CHECK(Done(world, d, 0).result.status == Status::kFail);
  CHECK(world.CountSent(d, "subscribe") == 0);
  CHECK(Queue(world) == Bulks({"B:1", "C:1"}));

  world.RunUntil(60 * kSecond);
  const auto done = Done(world, c, 0);
  CHECK(done.result.status == Status::kOk);
  CHECK(world.Exec({"HGETALL", "lock"}) == Bulks({"C:1", "1"}));
  CHECK(world.Exec({"EXISTS", kQueue, kTimeouts}) == Int(0));
  if (version == "v3.13.6") {
    // C's second attempt (sent at 2.004 s) got its own head-of-line estimate, 32996 ms; the
    // attempt after that wait, sent at 35.002 s, purged B and took the lock.
    CHECK(done.at_us == 35'004'000);
    CHECK(AttemptsOf(world, c, "C:1") == 3);
  } else {
    // C waits the lock's PTTL until 30.002 s; from then on the script answers max(0, pttl) = 0
    // and C re-polls every round trip (2 ms) until B's deadline: 2 + 2500 attempts.
    CHECK(done.at_us == 35'002'000);
    CHECK(AttemptsOf(world, c, "C:1") == 2502);
  }
}

TEST_CASE("FairLock: reentrant acquire counts holds, unlock returns 0, then 1", "[fairlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  const int a = AddClient(world, "A", version);
  const int b = AddClient(world, "B", version);
  world.Acquire(a, 0, Lock());
  world.RunFor(0);
  world.Acquire(b, 0, TryLock(60 * kSecond));
  world.RunUntil(1 * kSecond);
  // Re-entering skips the queue: B is the head, A holds and takes it again.
  world.Acquire(a, 0, TryLock(10 * kSecond));
  world.RunFor(0);
  CHECK(Done(world, a, 0).result.status == Status::kOk);
  CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("2"));
  CHECK(world.Exec({"PTTL", "lock"}) == Int(30000));
  CHECK(Queue(world) == Bulks({"B:1"}));
  CHECK(world.CountSent(a, "subscribe") == 0);

  world.RunUntil(2 * kSecond);
  world.Release(a, 0);
  world.RunFor(0);
  auto done = Done(world, a, 0);
  CHECK(done.result.value == 0);
  CHECK(done.result.detail == "still held");
  CHECK(world.Exec({"HGET", "lock", "A:1"}) == Bulk("1"));
  CHECK(world.Busy(b, 0));  // No message for a partial release.

  world.RunUntil(3 * kSecond);
  world.Release(a, 0);
  world.RunFor(0);
  done = Done(world, a, 0);
  CHECK(done.result.value == 1);
  CHECK(Done(world, b, 0).result.status == Status::kOk);
  CHECK(Done(world, b, 0).at_us == 3 * kSecond);
  CHECK(world.Exec({"HGETALL", "lock"}) == Bulks({"B:1", "1"}));
}

TEST_CASE("FairLock: unlock publishes only on the queue head's channel", "[fairlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  const int h = AddClient(world, "H", version);
  const int b = AddClient(world, "B", version);
  const int c = AddClient(world, "C", version);
  const std::string b_channel = FairLockChannel("lock", "B", 0);
  const std::string c_channel = FairLockChannel("lock", "C", 0);
  ChannelSpy* spy = AddSpy(world, {b_channel, c_channel, kPrefix});
  world.Acquire(h, 0, Lock());
  world.RunUntil(1 * kSecond);
  world.Acquire(b, 0, Lock());
  world.RunUntil(2 * kSecond);
  world.Acquire(c, 0, Lock());
  world.RunUntil(5 * kSecond);
  CHECK(spy->messages.empty());

  world.Release(h, 0);
  world.RunFor(0);
  CHECK(spy->messages == Messages{{b_channel, "0"}});
  CHECK(Done(world, b, 0).result.status == Status::kOk);
  CHECK(world.Busy(c, 0));

  world.RunUntil(6 * kSecond);
  world.Release(b, 0);
  world.RunFor(0);
  CHECK(spy->messages == Messages{{b_channel, "0"}, {c_channel, "0"}});
  CHECK(Done(world, c, 0).result.status == Status::kOk);

  // With nobody queued, a release publishes nothing at all.
  world.RunUntil(7 * kSecond);
  world.Release(c, 0);
  world.RunFor(0);
  CHECK(Done(world, c, 0).result.value == 1);
  CHECK(spy->messages.size() == 2);

  // Unlocking a lock that does not exist is "released" (1), as Redisson still has it.
  world.Release(c, 0);
  world.RunFor(0);
  CHECK(Done(world, c, 0).result.status == Status::kOk);
  CHECK(Done(world, c, 0).result.value == 1);
}

TEST_CASE("FairLock: forceUnlock deletes the lock whoever holds it and wakes the head",
          "[fairlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  const int h = AddClient(world, "H", version);
  const int b = AddClient(world, "B", version);
  const int f = AddClient(world, "F", version);
  ChannelSpy* spy = AddSpy(world, {FairLockChannel("lock", "B", 0)});
  world.Acquire(h, 0, Lock());
  world.RunUntil(1 * kSecond);
  world.Acquire(b, 0, Lock());
  world.RunUntil(5 * kSecond);
  world.ForceUnlock(f, 0);
  world.RunFor(0);
  const auto forced = Done(world, f, 0);
  CHECK(forced.result.status == Status::kOk);
  CHECK(forced.result.value == 1);
  CHECK(forced.result.detail == "deleted");
  CHECK(spy->messages == Messages{{FairLockChannel("lock", "B", 0), "0"}});
  CHECK(Done(world, b, 0).result.status == Status::kOk);
  CHECK(Done(world, b, 0).at_us == 5 * kSecond);
  CHECK(world.Exec({"HGETALL", "lock"}) == Bulks({"B:1", "1"}));
  CHECK(Queue(world) == Reply::Array());

  // H does not know: its watchdog's renew at 10 s finds B's lock and changes nothing.
  world.RunUntil(10 * kSecond);
  CHECK(world.CountSent(h, "renew") == 1);
  CHECK(world.Exec({"PTTL", "lock"}) == Int(25000));

  world.ForceUnlock(f, 0);
  world.RunFor(0);
  world.ForceUnlock(f, 0);
  world.RunFor(0);
  CHECK(Done(world, f, 0).result.value == 0);
  CHECK(Done(world, f, 0).result.detail == "no lock");
}

TEST_CASE("FairLock: a queue head without a deadline breaks 3.13.6's scripts (#4153)",
          "[fairlock]") {
  // A lockName in the LIST with no ZSET entry (how #4153 reports it arising in production); put
  // there directly. 3.13.6's purge compares nil with a number; current stops purging there.
  World world;
  world.set_latency_us(1000);  // current re-polls with no delay behind the ghost head.
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  const int a = AddClient(world, "A", version);
  world.Exec({"RPUSH", kQueue, "ghost:1"});
  world.Acquire(a, 0, TryLock(5 * kSecond));
  world.RunUntil(10 * kSecond);
  const auto done = Done(world, a, 0);
  CHECK(done.result.status == Status::kFail);
  if (version == "v3.13.6") {
    CHECK_THAT(done.result.detail, Contains("attempt to compare nil with number"));
    CHECK(done.at_us == 2000);
    CHECK(world.CountSent(a, "acquire") == 1);
    CHECK(world.CountSent(a, "acquire_failed") == 0);  // An exception, not false.
  } else {
    // The lock is free, but the ghost is ahead forever: queued with ttl = pttl = -2, A waits
    // out its 5 s and leaves. The ghost stays.
    CHECK(done.result.detail == "wait time elapsed");
    CHECK(world.Sent(a, "acquire").at(0).at_us == 0);
    CHECK(world.CountSent(a, "acquire_failed") == 1);
  }
  CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));
  CHECK(Queue(world) == Bulks({"ghost:1"}));
  CHECK(Deadlines(world) == Reply::Array());
}

TEST_CASE("FairLock: a head that outwaits its estimate hangs in 3.13.6 (#4705)", "[fairlock]") {
  // The holder keeps the lock (watchdog) longer than B's estimate. 3.13.6 answers B's attempt
  // at 30.002 s with deadline - wait - now = -2: a negative ttl, so lock() waits for a message
  // with no timeout. B's deadline (35 s) passes, H's unlock at 40 s purges B first and finds
  // nobody to wake: B sleeps forever on a free lock. current answers max(0, pttl) instead, so
  // B polls on the lock's TTL and takes it once free (its place in the queue long gone).
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  world.set_latency_us(1000);
  const int h = AddClient(world, "H", version, 1, 5 * kSecond);
  const int b = AddClient(world, "B", version, 1, 5 * kSecond);
  world.Acquire(h, 0, Lock());
  world.RunUntil(1 * kSecond);
  world.Acquire(b, 0, Lock());
  world.RunUntil(40 * kSecond);
  CHECK(Deadlines(world) == Bulks({"B:1", Ms(kT0 + 35'000)}));
  world.Release(h, 0);
  world.RunUntil(100 * kSecond);
  CHECK(Done(world, h, 0).result.value == 1);
  CHECK(Queue(world) == Reply::Array());
  const auto attempts = world.Sent(b, "acquire");
  REQUIRE(attempts.size() >= 3);
  CHECK(attempts[2].at_us == 30'002'000);
  if (version == "v3.13.6") {
    CHECK(attempts.size() == 3);
    CHECK(world.Busy(b, 0));
    CHECK(world.Exec({"EXISTS", "lock"}) == Int(0));
  } else {
    // pttl at 30.003 s was 20002 (renewed at 20.005 s): the next attempt at 50.006 s wins.
    CHECK(attempts.size() == 4);
    CHECK(Done(world, b, 0).result.status == Status::kOk);
    CHECK(Done(world, b, 0).at_us == 50'008'000);
  }
}

TEST_CASE("FairLock: tryLock(wait, SECONDS) without a lease queues with the bare number (#4743)",
          "[fairlock]") {
  // The modelled caller passes TimeUnit.SECONDS. Without a lease the acquire script gets
  // waitTime unconverted (5 "ms"), acquireFailed gets unit.toMillis (5000): the waiters behind
  // are moved forward by 4995 ms more than the leaver ever added. Same in both versions (HEAD
  // undid the 3.24.0 fix in 3.24.1).
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  const FairLockOptions seconds{1'000'000};
  World world;
  const int h = AddClient(world, "H", version);
  const int b = AddClient(world, "B", version, 2, 300'000'000, seconds);
  const int c = AddClient(world, "C", version);
  world.Acquire(h, 0, Lock());
  world.RunUntil(1 * kSecond);
  world.Acquire(b, 0, TryLock(5 * kSecond));
  world.RunUntil(2 * kSecond);
  world.Acquire(c, 0, Lock());
  world.RunFor(0);
  CHECK(world.Sent(b, "acquire").at(0).argv.at(8) == "5");
  // B: pttl 29000 + 5 + now; C: B's deadline - now + 300000 + now.
  CHECK(Deadlines(world) == Bulks({"B:1", Ms(kT0 + 30'005), "C:1", Ms(kT0 + 330'005)}));
  world.RunUntil(6 * kSecond);
  CHECK(Done(world, b, 0).result.status == Status::kFail);
  CHECK(world.Sent(b, "acquire_failed").at(0).argv.back() == "5000");
  CHECK(Deadlines(world) == Bulks({"C:1", Ms(kT0 + 325'005)}));

  // With a lease the unit is honoured: 5 s is 5000 ms in the script too.
  world.Acquire(b, 1, TryLock(5 * kSecond, 10 * kSecond));
  world.RunFor(0);
  CHECK(world.Sent(b, "acquire").back().argv.at(8) == "5000");
  // Behind C: C's deadline - now + 5000 + now.
  CHECK(world.Exec({"ZSCORE", kTimeouts, "B:2"}) == Bulk(Ms(kT0 + 330'005)));
}

TEST_CASE("FairLock: tryLock(0) queues and leaves at once, its wait differs by version",
          "[fairlock]") {
  // 3.13.6 takes any waitTime != -1, so tryLock(0) queues with wait 0; current (> 0) falls
  // back to threadWaitTime. acquireFailed undoes it with the same value.
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  World world;
  const int h = AddClient(world, "H", version);
  const int b = AddClient(world, "B", version);
  world.Acquire(h, 0, Lock());
  world.RunUntil(1 * kSecond);
  world.Acquire(b, 0, TryLock(0));
  world.RunFor(0);
  const auto done = Done(world, b, 0);
  CHECK(done.result.status == Status::kFail);
  CHECK(done.result.detail == "wait time elapsed");
  const std::string wait = version == "v3.13.6" ? "0" : "300000";
  CHECK(world.Sent(b, "acquire").at(0).argv.at(8) == wait);
  CHECK(Tail(world.Sent(b, "acquire_failed").at(0).argv) ==
        std::vector<std::string>{"2", kQueue, kTimeouts, "B:1", wait});
  CHECK(world.CountSent(b, "subscribe") == 0);
  CHECK(world.Exec({"EXISTS", kQueue, kTimeouts}) == Int(0));
}

TEST_CASE("FairLock: the watchdog renews with RLock's script every 10 s", "[fairlock]") {
  const std::string version = GENERATE(as<std::string>{}, "v3.13.6", "current");
  INFO(version);
  const ScriptSet scripts = Scripts(version);
  // lua/fairlock/ has no renew.lua: LoadScripts takes RLock's, which RedissonFairLock inherits.
  CHECK_THAT(scripts.files.at("renew"), Contains("lua/rlock/" + version + "/renew.lua"));
  CHECK_THAT(scripts.files.at("acquire"), Contains("lua/fairlock/" + version + "/acquire.lua"));
  World world;
  const int a = AddClient(world, "A", version);
  world.Acquire(a, 0, Lock());
  world.RunUntil(35 * kSecond);
  const auto renews = world.Sent(a, "renew");
  REQUIRE(renews.size() == 3);
  CHECK(renews[0].at_us == 10 * kSecond);
  CHECK(renews[2].at_us == 30 * kSecond);
  CHECK(renews[0].argv[1] == scripts.bodies.at("renew"));
  CHECK(Tail(renews[0].argv) == std::vector<std::string>{"1", "lock", "30000", "A:1"});
  CHECK(world.Exec({"PTTL", "lock"}) == Int(25000));
  world.Release(a, 0);
  world.RunUntil(100 * kSecond);
  CHECK(world.CountSent(a, "renew") == 3);
}

TEST_CASE("FairLock: config checks, the factory and the script folder", "[fairlock]") {
  std::string error;
  const ScriptSet scripts = Scripts("current");
  CHECK(scripts.bodies.size() == 6);
  CHECK(lockstep::locks::RequiredScripts("fairlock") ==
        std::vector<std::string>{"acquire", "try_acquire", "unlock", "force_unlock",
                                 "acquire_failed", "renew"});
  ClientConfig config = Config("A", "current");
  CHECK(lockstep::locks::CheckFairLockConfig(config, scripts, &error));
  CHECK_FALSE(lockstep::locks::CheckFairLockConfig(config, scripts, &error, FairLockOptions{1}));
  CHECK_THAT(error, Contains("whole number of ms"));
  config.fair_wait_timeout_us = -1;
  CHECK_FALSE(lockstep::locks::CheckFairLockConfig(config, scripts, &error));
  CHECK_THAT(error, Contains("fair wait timeout"));
  ScriptSet partial = scripts;
  partial.bodies.erase("acquire_failed");
  CHECK_FALSE(lockstep::locks::CheckFairLockConfig(Config("A", "current"), partial, &error));
  CHECK(error == "fairlock: missing script(s): acquire_failed");

  CHECK(lockstep::locks::MakeProtocol("fairlock", Config("A", "v3.13.6"), Scripts("v3.13.6"),
                                      &error) != nullptr);
  CHECK(lockstep::locks::MakeProtocol("fairlock", Config("A", "current"), partial, &error) ==
        nullptr);
  CHECK(error == "fairlock: missing script(s): acquire_failed");
  const auto& kinds = lockstep::locks::ProtocolKinds();
  CHECK(std::find(kinds.begin(), kinds.end(), "fairlock") != kinds.end());
}
