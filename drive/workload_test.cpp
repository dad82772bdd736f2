// Establishes that a client process's workload runs its threads' loop in the order the
// scenario format promises (think -> acquire -> enter -> exit -> release -> think, reentry,
// the unwinding of a failed nested acquisition, ops_per_thread, the latch's and the
// semaphore's roles), draws from the process's PRNG in its documented order, never calls the
// protocol from inside the protocol's own call, and leaves a crashed incarnation's work behind,
// all through a fake host and a scripted fake protocol.
#include <catch2/catch.hpp>

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "drive/resource.h"
#include "drive/workload.h"
#include "history/history.h"

namespace {

using lockstep::ClientSpec;
using lockstep::Distribution;
using lockstep::Prng;
using lockstep::Scenario;
using lockstep::drive::ClientWorkload;
using lockstep::drive::Resource;
namespace history = lockstep::history;
namespace locks = lockstep::locks;
using Status = locks::OpResult::Status;

constexpr int64_t kStartUnixMs = 1'767'225'600'000;

// One run's shared world: true time, the work every host has pending (run in (time, sequence)
// order, as a driver's event loop would), and the history.
struct World {
  struct Pending {
    int64_t at_us;
    uint64_t seq;
    std::function<void()> work;
  };
  int64_t now_us = 0;
  uint64_t seq = 0;
  std::vector<Pending> pending;
  history::History h;
  uint64_t work_run = 0;

  // Runs every piece of work due up to `until_us`, then sets the time to it.
  void RunUntil(int64_t until_us) {
    while (true) {
      auto next = pending.end();
      for (auto it = pending.begin(); it != pending.end(); ++it) {
        if (next == pending.end() || it->at_us < next->at_us ||
            (it->at_us == next->at_us && it->seq < next->seq)) {
          next = it;
        }
      }
      if (next == pending.end() || next->at_us > until_us) break;
      REQUIRE(++work_run < 100'000);  // A runaway loop fails the test instead of hanging it.
      now_us = next->at_us;
      std::function<void()> work = std::move(next->work);
      pending.erase(next);
      work();
    }
    now_us = until_us;
  }

  // "invoke acquire t0 [tryLock(wait=10000ms, no lease)]": an event as the tests compare it.
  std::string Line(const history::Event& e) const {
    std::string line = std::string(history::TypeName(e.type)) + " " + h.Str(e.op);
    if (e.thread >= 0) line += " t" + std::to_string(e.thread);
    if (e.has_value) line += " =" + std::to_string(e.value);
    const std::string detail = h.DetailOf(e);
    if (!detail.empty()) line += " [" + detail + "]";
    return line;
  }
  // Every event of `process` (all of them when empty) from `from_us` on, as lines.
  std::vector<std::string> Lines(const std::string& process = "", int64_t from_us = 0) const {
    std::vector<std::string> out;
    for (const history::Event& e : h.events()) {
      if (e.t_us < from_us) continue;
      if (!process.empty() && h.Str(e.process) != process) continue;
      out.push_back(Line(e));
    }
    return out;
  }
  // The true time of the n-th (0-based) event whose line starts with `prefix`, or -1.
  int64_t TimeOf(const std::string& prefix, int n = 0) const {
    for (const history::Event& e : h.events()) {
      if (Line(e).rfind(prefix, 0) == 0 && n-- == 0) return e.t_us;
    }
    return -1;
  }
  size_t Count(const std::string& prefix) const {
    size_t count = 0;
    for (const history::Event& e : h.events()) count += Line(e).rfind(prefix, 0) == 0;
    return count;
  }
};

// A client process's host: the world's time and history, a PRNG of its own, and work that
// belongs to the incarnation that gave it.
class FakeHost : public lockstep::drive::ClientHost {
 public:
  FakeHost(World& world, uint64_t seed) : world_(world), rng_(seed) {}
  void Record(history::Event& e) override {
    e.t_us = world_.now_us;
    world_.h.Append(e);
  }
  history::Name Intern(std::string_view s) override { return world_.h.names().Intern(s); }
  int64_t WallMs() override { return kStartUnixMs + world_.now_us / 1000; }
  Prng& Rng() override { return rng_; }
  void After(int64_t delay_us, std::function<void()> work) override {
    REQUIRE(delay_us >= 0);
    world_.pending.push_back({world_.now_us + delay_us, ++world_.seq,
                              [this, incarnation = incarnation_, work = std::move(work)] {
                                if (incarnation == incarnation_) work();
                              }});
  }
  // The process died: the work it had pending is dropped when due.
  void Crash() { ++incarnation_; }

 private:
  World& world_;
  Prng rng_;
  uint64_t incarnation_ = 0;
};

// A lock protocol that answers every operation at once with the next scripted result (ok when
// the script is empty), logs the calls, and hands out scripted fencing tokens.
class FakeProtocol : public locks::LockProtocol {
 public:
  std::vector<std::string> calls;
  std::deque<locks::OpResult> results;
  // Token() hands out the front one (and pops it); none left: the protocol has no token.
  mutable std::deque<int64_t> tokens;

  void Acquire(locks::Outbox& out, int thread, const locks::AcquireArgs& args) override {
    Call(out, thread, "acquire" + std::string(args.shared ? "_read" : ""));
  }
  void Release(locks::Outbox& out, int thread) override { Call(out, thread, "release"); }
  void ForceUnlock(locks::Outbox& out, int thread) override { Call(out, thread, "force_unlock"); }
  void Extra(locks::Outbox& out, int thread, locks::ExtraOp op) override {
    Call(out, thread, "extra" + std::to_string(static_cast<int>(op)));
  }
  void OnReply(locks::Outbox&, locks::RequestId, const lockstep::Reply&) override {}
  void OnMessage(locks::Outbox&, int, const std::string&, const std::string&) override {}
  void OnTimer(locks::Outbox&, locks::TimerId) override {}
  void OnCrash() override {}
  bool Token(int thread, int64_t* token) const override {
    (void)thread;
    if (tokens.empty()) return false;
    *token = tokens.front();
    tokens.pop_front();
    return true;
  }

 private:
  void Call(locks::Outbox& out, int thread, const std::string& what) {
    // The workload takes its next step as work of its own, never inside this call.
    REQUIRE_FALSE(in_call_);
    calls.push_back(what + " t" + std::to_string(thread));
    locks::OpResult result;
    if (!results.empty()) {
      result = results.front();
      results.pop_front();
    }
    in_call_ = true;
    out.Complete(thread, result);
    in_call_ = false;
  }
  bool in_call_ = false;
};

// The driver's Outbox, reduced to what the workload needs: Complete goes to the workload.
class FakeOutbox : public locks::Outbox {
 public:
  ClientWorkload* workload = nullptr;
  int64_t MonoUs() override { return 0; }
  int64_t WallMs() override { return kStartUnixMs; }
  Prng& Rng() override { return rng_; }
  int NodeCount() override { return 1; }
  void ArmTimer(locks::TimerId, int64_t) override {}
  void CancelTimer(locks::TimerId) override {}
  void Complete(int thread, const locks::OpResult& result) override {
    workload->OnComplete(thread, result);
  }

 private:
  void DoSend(int, locks::RequestId, lockstep::SharedArgv, const std::string&, int) override {
    FAIL("the fake protocol sends nothing");
  }
  Prng rng_{99};
};

locks::OpResult Result(Status status, std::string detail = "") {
  locks::OpResult r;
  r.status = status;
  r.detail = std::move(detail);
  return r;
}

// A scenario of `clients` clients of `threads` threads each: think 100 ms, critical 50 ms.
Scenario MakeScenario(int clients = 1, int threads = 1) {
  Scenario s;
  s.workload.think_us = Distribution::Fixed(100'000);
  s.workload.critical_us = Distribution::Fixed(50'000);
  for (int i = 0; i < clients; ++i) {
    ClientSpec c;
    c.name = "c" + std::to_string(i + 1);
    c.threads = threads;
    s.clients.push_back(c);
  }
  return s;
}

// One client process as a driver holds it: host, protocol, outbox and workload.
struct Process {
  FakeHost host;
  std::unique_ptr<FakeProtocol> protocol = std::make_unique<FakeProtocol>();
  FakeOutbox outbox;
  ClientWorkload workload;

  Process(World& world, const Scenario& s, int client, Resource& resource, uint64_t seed = 1)
      : host(world, seed),
        workload(s, client, world.h.names().Intern(s.clients[static_cast<size_t>(client)].name),
                 resource, host) {
    outbox.workload = &workload;
  }
  void Start(bool restart = false) {
    workload.Start(*protocol, outbox, restart ? "uuid-2" : "uuid-1", restart);
  }
  void Crash() {
    host.Crash();
    protocol->OnCrash();
    workload.Crash();
  }
};

struct Run {
  Scenario s;
  World world;
  Resource resource;
  explicit Run(Scenario scenario)
      : s(std::move(scenario)),
        resource(world.h.names().Intern(s.protocol.lock_name), s.resource.fencing) {}
};

TEST_CASE("a worker thinks, acquires, enters, leaves, releases, and thinks again", "[workload]") {
  Run run(MakeScenario());
  Process c1(run.world, run.s, 0, run.resource);
  c1.Start();
  run.world.RunUntil(260'000);
  CHECK(run.world.Lines() == std::vector<std::string>{
                                 "note client [uuid=uuid-1]",
                                 "invoke acquire t0 [tryLock(wait=10000ms, no lease)]",
                                 "ok acquire t0",
                                 "resource enter t0",
                                 "resource exit t0",
                                 "invoke release t0 [unlock()]",
                                 "ok release t0",
                                 "invoke acquire t0 [tryLock(wait=10000ms, no lease)]",
                                 "ok acquire t0",
                                 "resource enter t0",
                             });
  // Think 100 ms, critical section 50 ms, think 100 ms: on the process's clock.
  CHECK(run.world.TimeOf("invoke acquire") == 100'000);
  CHECK(run.world.TimeOf("resource enter") == 100'000);
  CHECK(run.world.TimeOf("resource exit") == 150'000);
  CHECK(run.world.TimeOf("invoke release") == 150'000);
  CHECK(run.world.TimeOf("invoke acquire", 1) == 250'000);
  CHECK(c1.protocol->calls ==
        std::vector<std::string>{"acquire t0", "release t0", "acquire t0"});
  CHECK(c1.workload.iterations(0) == 1);
  // Events carry the process's wall clock.
  CHECK(run.world.h.events()[1].local_ms == kStartUnixMs + 100);
}

TEST_CASE("a failed acquisition thinks and tries again without entering", "[workload]") {
  Run run(MakeScenario());
  Process c1(run.world, run.s, 0, run.resource);
  c1.protocol->results = {Result(Status::kFail, "wait timed out")};
  c1.Start();
  run.world.RunUntil(200'000);
  CHECK(run.world.Lines() == std::vector<std::string>{
                                 "note client [uuid=uuid-1]",
                                 "invoke acquire t0 [tryLock(wait=10000ms, no lease)]",
                                 "fail acquire t0 [wait timed out]",
                                 "invoke acquire t0 [tryLock(wait=10000ms, no lease)]",
                                 "ok acquire t0",
                                 "resource enter t0",
                             });
  CHECK(c1.workload.iterations(0) == 0);
}

TEST_CASE("reentry nests acquisitions and releases as many times", "[workload]") {
  Scenario s = MakeScenario();
  s.workload.reentry = 2;
  Run run(s);
  Process c1(run.world, run.s, 0, run.resource);
  c1.Start();
  run.world.RunUntil(150'000);
  CHECK(c1.protocol->calls ==
        std::vector<std::string>{"acquire t0", "acquire t0", "release t0", "release t0"});
  CHECK(run.world.Lines("c1", 100'000) == std::vector<std::string>{
                                              "invoke acquire t0 [tryLock(wait=10000ms, no lease)]",
                                              "ok acquire t0",
                                              "invoke acquire t0 [tryLock(wait=10000ms, no lease)]",
                                              "ok acquire t0",
                                              "resource enter t0",
                                              "resource exit t0",
                                              "invoke release t0 [unlock()]",
                                              "ok release t0",
                                              "invoke release t0 [unlock()]",
                                              "ok release t0",
                                          });
  CHECK(c1.workload.iterations(0) == 1);
}

TEST_CASE("a failed nested acquisition unwinds the holds the thread has", "[workload]") {
  Scenario s = MakeScenario();
  s.workload.reentry = 3;
  Run run(s);
  Process c1(run.world, run.s, 0, run.resource);
  // Two holds, the third acquisition fails: two releases unwind them, no critical section.
  c1.protocol->results = {Result(Status::kOk), Result(Status::kOk),
                          Result(Status::kFail, "wait timed out")};
  c1.Start();
  run.world.RunUntil(199'999);
  CHECK(c1.protocol->calls == std::vector<std::string>{"acquire t0", "acquire t0", "acquire t0",
                                                       "release t0", "release t0"});
  CHECK(run.world.Count("resource") == 0);
  // The unwinding ends the iteration; the thread thinks, then starts the next one afresh.
  CHECK(c1.workload.iterations(0) == 1);
  run.world.RunUntil(200'000);
  CHECK(c1.protocol->calls == std::vector<std::string>{"acquire t0", "acquire t0", "acquire t0",
                                                       "release t0", "release t0", "acquire t0",
                                                       "acquire t0", "acquire t0"});
  CHECK(run.world.Count("resource enter") == 1);
}

TEST_CASE("a release that fails drops every hold at once", "[workload]") {
  Scenario s = MakeScenario();
  s.workload.reentry = 2;
  Run run(s);
  Process c1(run.world, run.s, 0, run.resource);
  c1.protocol->results = {Result(Status::kOk), Result(Status::kOk),
                          Result(Status::kFail, "IllegalMonitorStateException")};
  c1.Start();
  run.world.RunUntil(249'999);
  // Not the owner any more: no second release.
  CHECK(c1.protocol->calls ==
        std::vector<std::string>{"acquire t0", "acquire t0", "release t0"});
  CHECK(c1.workload.iterations(0) == 1);
}

TEST_CASE("ops_per_thread stops each thread after its iterations", "[workload]") {
  Scenario s = MakeScenario(1, 2);
  s.workload.ops_per_thread = 2;
  Run run(s);
  Process c1(run.world, run.s, 0, run.resource);
  c1.Start();
  run.world.RunUntil(60'000'000);
  CHECK(run.world.Count("invoke acquire t0") == 2);
  CHECK(run.world.Count("invoke acquire t1") == 2);
  CHECK(run.world.Count("invoke release") == 4);
  CHECK(c1.workload.iterations(0) == 2);
  CHECK(c1.workload.iterations(1) == 2);
  CHECK(run.world.pending.empty());  // Nothing left to do: the threads stopped.
  CHECK(run.world.Count("note done") == 0);  // Workers say nothing when they stop.
}

TEST_CASE("awaiting threads await at once and count only awaits that passed", "[workload]") {
  Scenario s = MakeScenario(1, 2);
  s.clients[0].role = ClientSpec::Role::kAwait;
  Run run(s);
  Process c1(run.world, run.s, 0, run.resource);
  c1.protocol->results = {Result(Status::kFail, "latch closed"), Result(Status::kOk)};
  c1.Start();
  run.world.RunUntil(0);
  CHECK(run.world.Lines() == std::vector<std::string>{
                                 "note client [uuid=uuid-1]",
                                 "note role [role=await threads=2]",
                                 "invoke acquire t0 [tryLock(wait=10000ms, no lease)]",
                                 "fail acquire t0 [latch closed]",
                                 "invoke acquire t1 [tryLock(wait=10000ms, no lease)]",
                                 "ok acquire t1",
                             });
  CHECK(c1.workload.iterations(0) == 0);
  CHECK(c1.workload.iterations(1) == 1);
  // No critical section and no release: await, think, await again.
  run.world.RunUntil(100'000);
  CHECK(c1.protocol->calls == std::vector<std::string>{"acquire t0", "acquire t1", "acquire t0",
                                                       "acquire t1"});
  CHECK(run.world.Count("resource") == 0);
}

TEST_CASE("counting-down threads think, count down, and say when they are done", "[workload]") {
  Scenario s = MakeScenario();
  s.clients[0].role = ClientSpec::Role::kCountDown;
  s.workload.ops_per_thread = 2;
  Run run(s);
  Process c1(run.world, run.s, 0, run.resource);
  // A countDown counts as an iteration whatever its outcome.
  c1.protocol->results = {Result(Status::kInfo, "RedisTimeoutException")};
  c1.Start();
  run.world.RunUntil(10'000'000);
  CHECK(run.world.Lines() == std::vector<std::string>{
                                 "note client [uuid=uuid-1]",
                                 "note role [role=count_down threads=1]",
                                 "invoke release t0 [unlock()]",
                                 "info release t0 [RedisTimeoutException]",
                                 "invoke release t0 [unlock()]",
                                 "ok release t0",
                                 "note done t0 [ops_per_thread=2]",
                             });
  CHECK(run.world.TimeOf("invoke release") == 100'000);
  CHECK(run.world.TimeOf("invoke release", 1) == 200'000);
  CHECK(c1.protocol->calls == std::vector<std::string>{"release t0", "release t0"});
}

TEST_CASE("a permit-changing thread runs its role's operation, named after the role",
          "[workload]") {
  Scenario s = MakeScenario();
  s.protocol.permits = 3;
  s.clients[0].role = ClientSpec::Role::kTrySetPermits;
  s.workload.ops_per_thread = 1;
  Run run(s);
  Process c1(run.world, run.s, 0, run.resource);
  c1.Start();
  run.world.RunUntil(10'000'000);
  CHECK(run.world.Lines() == std::vector<std::string>{
                                 "note client [uuid=uuid-1]",
                                 "note role [role=try_set_permits threads=1]",
                                 "invoke try_set_permits t0 [trySetPermits(3)]",
                                 "ok try_set_permits t0",
                             });
  CHECK(c1.protocol->calls == std::vector<std::string>{
                                  "extra" + std::to_string(static_cast<int>(
                                                locks::ExtraOp::kTrySetPermits)) + " t0"});
}

TEST_CASE("the fenced resource refuses the write of a client whose token is stale",
          "[workload]") {
  Scenario s = MakeScenario(2);
  s.resource.fencing = true;
  // c2 enters 20 ms after c1 and leaves 20 ms after it, with an older token.
  s.clients[1].workload.think_us = Distribution::Fixed(120'000);
  Run run(s);
  Process c1(run.world, run.s, 0, run.resource, 1);
  Process c2(run.world, run.s, 1, run.resource, 2);
  c1.protocol->tokens = {9};
  c2.protocol->tokens = {7};
  c1.Start();
  c2.Start();
  run.world.RunUntil(170'000);
  CHECK(run.world.Lines("c1", 100'000) == std::vector<std::string>{
                                              "invoke acquire t0 [tryLock(wait=10000ms, no lease)]",
                                              "ok acquire t0",
                                              "resource enter t0 =9",
                                              "resource exit t0 =9 [accepted]",
                                              "invoke release t0 [unlock()]",
                                              "ok release t0",
                                          });
  CHECK(run.world.Lines("c2", 120'000) == std::vector<std::string>{
                                              "invoke acquire t0 [tryLock(wait=10000ms, no lease)]",
                                              "ok acquire t0",
                                              "resource enter t0 =7",
                                              "resource exit t0 =7 [rejected: stale token 7 < 9]",
                                              "invoke release t0 [unlock()]",
                                              "ok release t0",
                                          });
  CHECK(run.resource.token_max() == 9);
}

TEST_CASE("a crash drops the incarnation's work, a restart starts afresh without stagger",
          "[workload]") {
  Scenario s = MakeScenario(2);
  s.clients[1].role = ClientSpec::Role::kAwait;
  s.workload.stagger_us = 30'000;
  Run run(s);
  Process c2(run.world, run.s, 1, run.resource);  // Client index 1: staggered by 30 ms.
  c2.Start();
  run.world.RunUntil(29'999);
  CHECK(run.world.Count("invoke") == 0);
  run.world.RunUntil(30'000);
  CHECK(run.world.TimeOf("invoke acquire t0") == 30'000);
  // Crashed while thinking after its await: the next await never comes.
  c2.Crash();
  CHECK_FALSE(c2.workload.running());
  run.world.RunUntil(1'000'000);
  CHECK(run.world.Count("invoke") == 1);
  // The restart: a new protocol object, a new UUID, no role note, no stagger.
  c2.protocol = std::make_unique<FakeProtocol>();
  c2.Start(/*restart=*/true);
  CHECK(c2.workload.running());
  run.world.RunUntil(1'000'000);
  CHECK(run.world.Lines("c2", 1'000'000) == std::vector<std::string>{
                                                "note client [uuid=uuid-2]",
                                                "invoke acquire t0 [tryLock(wait=10000ms, no lease)]",
                                                "ok acquire t0",
                                            });
  CHECK(run.world.Count("note role") == 1);
  CHECK(c2.workload.iterations(0) == 1);  // Counted afresh.
}

TEST_CASE("the workload draws think, side and critical section in its documented order",
          "[workload]") {
  Scenario s = MakeScenario();
  s.workload.think_us = Distribution{Distribution::Kind::kUniform, 10'000, 90'000, 0};
  s.workload.critical_us = Distribution{Distribution::Kind::kUniform, 1'000, 9'000, 0};
  s.workload.read_ratio = 0.5;
  Run run(s);
  Process c1(run.world, run.s, 0, run.resource, 42);
  c1.Start();
  run.world.RunUntil(1'000'000);
  // The same draws from the same seed, in the order workload.h documents. An iteration is six
  // events after the client note: invoke, ok, enter, exit, invoke release, ok.
  const auto& events = run.world.h.events();
  Prng r(42);
  int64_t t = 0;
  int reads = 0;
  for (size_t i = 0; i < 4; ++i) {
    t += s.workload.think_us.Sample(r);
    const bool read = r.Bernoulli(0.5);
    reads += read;
    const int64_t critical = s.workload.critical_us.Sample(r);
    INFO("iteration " << i);
    REQUIRE(events.size() > 6 * i + 6);
    const history::Event& invoke = events[1 + 6 * i];
    CHECK(invoke.t_us == t);
    CHECK(run.world.Line(invoke).rfind(read ? "invoke acquire_read t0" : "invoke acquire t0", 0) ==
          0);
    t += critical;
    const history::Event& exit = events[4 + 6 * i];
    CHECK(run.world.Line(exit).rfind("resource exit t0", 0) == 0);
    CHECK(exit.t_us == t);
    CHECK(run.world.Line(events[5 + 6 * i]).rfind(read ? "invoke release_read" : "invoke release",
                                                  0) == 0);
  }
  // Seed 42 draws both sides in these four iterations, so the test sees both paths.
  CHECK(reads > 0);
  CHECK(reads < 4);
}

}  // namespace
