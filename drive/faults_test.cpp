// Establishes what the shared fault schedule records and asks of a driver, in which order,
// on a fake target that logs each primitive beside the events: the same sequence either driver
// then produces.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "drive/faults.h"
#include "history/history.h"

namespace {

namespace history = lockstep::history;
using lockstep::FaultSpec;
using lockstep::drive::ApplyFault;
using lockstep::drive::FaultTarget;
using lockstep::drive::PauseFor;

// Processes n1 (a node) and c1 (a client). The log interleaves "event <process> <op> <detail>"
// and "<primitive> <name>", each prefixed by its true time in ms.
class FakeTarget : public FaultTarget {
 public:
  std::vector<std::string> log;
  std::map<std::string, bool> down;
  std::set<std::string> paused;

  void After(int64_t delay_us, std::function<void()> work) override {
    pending_.emplace(now_us_ + delay_us, std::move(work));
  }
  void Record(history::Event& e) override {
    e.t_us = now_us_;
    const history::Event& appended = h_.Append(e);
    Log("event " + std::string(h_.names().Str(e.process)) + " " +
        std::string(h_.names().Str(e.op)) + " " + h_.DetailOf(appended));
  }
  history::Name Intern(std::string_view name) override { return h_.names().Intern(name); }
  bool IsNode(const std::string& name) const override { return name == "n1"; }
  bool Down(const std::string& name) const override {
    auto it = down.find(name);
    return it != down.end() && it->second;
  }
  void Crash(const std::string& name) override {
    Log("crash " + name);
    down[name] = true;
    paused.erase(name);
  }
  void Restart(const std::string& name) override {
    Log("restart " + name);
    down[name] = false;
  }
  bool Pause(const std::string& name) override {
    if (Down(name) || paused.count(name) != 0) return false;
    Log("pause " + name);
    paused.insert(name);
    return true;
  }
  void Resume(const std::string& name) override {
    Log("resume " + name);
    paused.erase(name);
  }
  void Failover(const std::string& name) override { Log("failover " + name); }
  uint64_t OpenPartition(const FaultSpec&) override {
    Log("cut");
    return 7;
  }
  void ClosePartition(uint64_t handle) override { Log("heal " + std::to_string(handle)); }
  uint64_t OpenNetworkWindow(const FaultSpec&) override {
    Log("open");
    return 3;
  }
  void CloseNetworkWindow(uint64_t handle) override { Log("close " + std::to_string(handle)); }
  void Switch(history::FaultKind kind, const std::string& name, bool on) override {
    Log(std::string(history::InfoOf(kind).name) + (on ? " on " : " off ") + name);
  }

  // Runs the scheduled work in time order until `until_us`.
  void RunUntil(int64_t until_us) {
    while (!pending_.empty() && pending_.begin()->first <= until_us) {
      auto it = pending_.begin();
      now_us_ = it->first;
      std::function<void()> work = std::move(it->second);
      pending_.erase(it);
      work();
    }
    now_us_ = until_us;
  }

 private:
  void Log(const std::string& line) { log.push_back(std::to_string(now_us_ / 1000) + " " + line); }
  history::History h_;
  std::multimap<int64_t, std::function<void()>> pending_;
  int64_t now_us_ = 0;
};

FaultSpec Fault(FaultSpec::Kind kind, std::vector<std::string> targets, int64_t duration_us) {
  FaultSpec f;
  f.kind = kind;
  f.targets = std::move(targets);
  f.duration_us = duration_us;
  return f;
}

using Log = std::vector<std::string>;

TEST_CASE("a crash is recorded before the process dies, its restart before it starts",
          "[faults]") {
  FakeTarget t;
  ApplyFault(Fault(FaultSpec::Kind::kCrash, {"n1", "c1"}, 2'000'000), t);
  t.RunUntil(5'000'000);
  CHECK(t.log == Log{"0 event n1 crash process killed", "0 crash n1",
                     "0 event c1 crash process killed", "0 crash c1",
                     "2000 event n1 restart process restarted", "2000 restart n1",
                     "2000 event c1 restart process restarted", "2000 restart c1"});
}

TEST_CASE("a crash of a process that is down changes nothing and records nothing", "[faults]") {
  FakeTarget t;
  t.down["c1"] = true;
  ApplyFault(Fault(FaultSpec::Kind::kCrash, {"c1"}, 1'000'000), t);
  t.RunUntil(5'000'000);
  CHECK(t.log.empty());
}

TEST_CASE("a pause ends with its resume, unless a crash ended it first", "[faults]") {
  FakeTarget t;
  PauseFor(t, "c1", 3'000'000, /*gc=*/true);
  t.RunUntil(4'000'000);
  CHECK(t.log == Log{"0 pause c1", "0 event c1 pause GC pause for 3000ms",
                     "3000 event c1 resume resumed", "3000 resume c1"});

  // Paused at 10 s for 5 s, crashed at 11 s, restarted at 12 s and paused again at 13 s for
  // 5 s: the first pause's end (15 s) neither records a resume nor cuts the second short.
  FakeTarget u;
  u.RunUntil(10'000'000);
  ApplyFault(Fault(FaultSpec::Kind::kPause, {"c1"}, 5'000'000), u);
  u.RunUntil(11'000'000);
  ApplyFault(Fault(FaultSpec::Kind::kCrash, {"c1"}, 1'000'000), u);
  u.RunUntil(13'000'000);
  ApplyFault(Fault(FaultSpec::Kind::kPause, {"c1"}, 5'000'000), u);
  u.RunUntil(20'000'000);
  CHECK(u.log == Log{"10000 pause c1", "10000 event c1 pause pause for 5000ms",
                     "11000 event c1 crash process killed", "11000 crash c1",
                     "12000 event c1 restart process restarted", "12000 restart c1",
                     "13000 pause c1", "13000 event c1 pause pause for 5000ms",
                     "18000 event c1 resume resumed", "18000 resume c1"});
}

TEST_CASE("a partition's heal names the sides its start named, after the fault spec is gone",
          "[faults]") {
  FakeTarget t;
  {
    FaultSpec f = Fault(FaultSpec::Kind::kPartition, {"c1", "c2"}, 1'000'000);
    f.peers = {"n1"};
    ApplyFault(f, t);
  }
  t.RunUntil(2'000'000);
  CHECK(t.log == Log{"0 event sim partition c1,c2 | n1", "0 cut", "1000 heal 7",
                     "1000 event sim heal c1,c2 | n1"});
}

TEST_CASE("a network window and lost replies open and close around their events", "[faults]") {
  FakeTarget t;
  {
    FaultSpec f = Fault(FaultSpec::Kind::kLatency, {"n1"}, 1'000'000);
    f.extra_us = 200'000;
    ApplyFault(f, t);
  }
  ApplyFault(Fault(FaultSpec::Kind::kLoseReplies, {"n1", "c1"}, 2'000'000), t);
  t.RunUntil(3'000'000);
  CHECK(t.log == Log{"0 event sim latency extra=200ms targets=n1", "0 open",
                     "0 event n1 lose_replies replies from n1 are lost", "0 lose_replies on n1",
                     "1000 close 3", "1000 event sim latency_end extra=200ms targets=n1",
                     "2000 lose_replies off n1", "2000 event n1 lose_replies_end replies from n1 flow again"});
}

TEST_CASE("a failover is recorded, then asked of the driver, for nodes only", "[faults]") {
  FakeTarget t;
  ApplyFault(Fault(FaultSpec::Kind::kFailover, {"n1", "c1"}, 0), t);
  CHECK(t.log == Log{"0 event n1 failover failover of n1 requested", "0 failover n1"});
}

}  // namespace
