// The facts pass on its own, below the checkers: small hand-written histories, and the facts
// an observer is handed for them, in order, with their ids, times and ends.
#include "history/facts.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "history/testing.h"

namespace lockstep::history {
namespace {

using testing::operator""_ms;
using testing::operator""_s;
using testing::Recorder;

// Every fact as one line, in the order the pass handed them over.
class Log : public FactsObserver {
 public:
  void OnOpInvoked(const FactsPass& f, const Op& op) override {
    Add(f, "invoked op" + std::to_string(op.id) + " " + Thread(f, op.thread) + " " +
               std::string(f.names().Str(op.name)));
  }
  void OnOpEnded(const FactsPass& f, const Op& op) override {
    Add(f, "ended op" + std::to_string(op.id) + " " + OutcomeName(op.outcome) +
               (op.end_seq == kOpenSeq ? " open" : " at " + std::to_string(op.end_us)));
  }
  void OnSpanStarted(const FactsPass& f, const Span& s) override {
    Add(f, std::string(s.access ? "access" : "belief") + std::to_string(s.id) + " from " +
               std::to_string(s.start_us) + " " + Thread(f, s.thread));
  }
  void OnSpanEnded(const FactsPass& f, const Span& s) override {
    Add(f, std::string(s.access ? "access" : "belief") + std::to_string(s.id) + " to " +
               std::to_string(s.end_us) + " " + Cause(s.cause));
  }
  void OnLease(const FactsPass& f, const LeaseFact& l) override {
    std::string line = "lease" + std::to_string(l.id) + " " + Kind(l.kind) + " on " +
                       std::string(f.ProcessName(l.node)) + " owners";
    for (int t : l.owners) line += " " + Thread(f, t);
    line += " believers";
    for (int t : l.believers) line += " " + Thread(f, t);
    Add(f, line);
  }
  void OnGapClosed(const FactsPass& f, const LeaseGap& g) override {
    Add(f, "gap" + std::to_string(g.id) + " " + Thread(f, g.thread) + " " +
               std::to_string(g.from_us) + ".." + std::to_string(g.to_us) + " " +
               GapEndName(g.end) + (g.used_resource ? " used" : ""));
  }
  void OnCrash(const FactsPass& f, const ClientCrash& c) override {
    Add(f, "crash of " + std::string(f.ProcessName(c.process)) + " ended " +
               std::to_string(c.beliefs.size()) + " belief(s)");
  }
  void OnFinish(const FactsPass& f) override {
    Add(f, "finish at " + std::to_string(f.run_end_us()));
  }

  std::vector<std::string> lines;

 private:
  void Add(const FactsPass&, std::string line) { lines.push_back(std::move(line)); }
  static std::string Thread(const FactsPass& f, int t) {
    return t == kNone ? "-" : f.ThreadName(t);
  }
  static const char* Cause(EndCause c) {
    switch (c) {
      case EndCause::kRunEnd:
        return "run-end";
      case EndCause::kRelease:
        return "release";
      case EndCause::kForceUnlock:
        return "force-unlock";
      case EndCause::kCrash:
        return "crash";
      case EndCause::kExit:
        return "exit";
    }
    return "?";
  }
  static const char* Kind(LeaseKind k) {
    switch (k) {
      case LeaseKind::kAcquired:
        return "acquired";
      case LeaseKind::kReleased:
        return "released";
      case LeaseKind::kExpired:
        return "expired";
      case LeaseKind::kLost:
        return "lost";
      case LeaseKind::kOwners:
        return "owners";
    }
    return "?";
  }
  static const char* GapEndName(GapEnd e) {
    switch (e) {
      case GapEnd::kRunEnd:
        return "run-end";
      case GapEnd::kStoppedHolding:
        return "stopped-holding";
      case GapEnd::kReacquired:
        return "reacquired";
      case GapEnd::kCrash:
        return "crash";
    }
    return "?";
  }
};

// The pass over the recorder's history, finished, with `log` told every fact.
std::unique_ptr<FactsPass> Pass(const Recorder& r, FactsObserver* log) {
  auto pass = std::make_unique<FactsPass>(&r.history().names(), FactsOptions{});
  pass->AddObserver(log);
  for (const Event& e : r.history().events()) pass->OnEvent(e);
  pass->Finish();
  return pass;
}

TEST_CASE("facts: a belief runs from the acquire's ok to the release's invoke", "[facts]") {
  Recorder r(10_s);
  r.Client("c1");
  r.Invoke(1000_ms, "c1.t0", "acquire", "lock()");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Enter(1003_ms, "c1.t0");
  r.Exit(1500_ms, "c1.t0");
  r.Invoke(2000_ms, "c1.t0", "release");
  r.Lease(2001_ms, "n1", "released", "c1.t0");
  r.Ok(2002_ms, "c1.t0", "release", 1);
  Log log;
  const std::unique_ptr<FactsPass> f = Pass(r, &log);
  CHECK(log.lines == std::vector<std::string>{
                         "invoked op0 c1.t0 acquire",
                         "lease0 acquired on n1 owners c1.t0 believers",
                         "ended op0 ok at 1002000",
                         "belief0 from 1002000 c1.t0",
                         "access0 from 1003000 c1.t0",
                         "access0 to 1500000 exit",
                         "invoked op1 c1.t0 release",  // Told first; the belief ends at its invoke.
                         "belief0 to 2000000 release",
                         "lease1 released on n1 owners c1.t0 believers",
                         "ended op1 ok at 2002000",
                         "finish at 10000000",
                     });
  // After the release the key is gone as the lease events tell it.
  const int n1 = f->ProcessNamed(f->names().Find("n1"));
  REQUIRE(n1 != kNone);
  CHECK(f->KeyOn(n1, 0).empty());
}

TEST_CASE("facts: a reentrant hold ends with the release that takes the count to 0", "[facts]") {
  Recorder r(10_s);
  r.Client("c1");
  r.Invoke(1_s, "c1.t0", "acquire", "lock()");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Invoke(2_s, "c1.t0", "acquire", "lock()");
  r.Ok(2001_ms, "c1.t0", "acquire");
  r.Invoke(3_s, "c1.t0", "release");
  r.Ok(3001_ms, "c1.t0", "release", 0);
  r.Invoke(4_s, "c1.t0", "release");
  r.Lease(4001_ms, "n1", "released", "c1.t0");
  r.Ok(4002_ms, "c1.t0", "release", 1);
  Log log;
  Pass(r, &log);
  std::vector<std::string> beliefs;
  for (const std::string& line : log.lines) {
    if (line.rfind("belief", 0) == 0) beliefs.push_back(line);
  }
  // One belief, from the first ok to the invoke of the second release.
  CHECK(beliefs ==
        std::vector<std::string>{"belief0 from 1002000 c1.t0", "belief0 to 4000000 release"});
}

TEST_CASE("facts: an expiry under a holder opens a lease gap, closed when it stops holding",
          "[facts]") {
  Recorder r(20_s);
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=5000ms)", 5000);
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Enter(1003_ms, "c1.t0");
  r.Lease(6001_ms, "n1", "expired", "c1.t0");
  r.Exit(9_s, "c1.t0");
  r.Invoke(10_s, "c1.t0", "release");
  r.Ok(10001_ms, "c1.t0", "release", 0);
  Log log;
  Pass(r, &log);
  const std::vector<std::string> want_in_order = {
      "lease1 expired on n1 owners c1.t0 believers c1.t0",
      "access0 to 9000000 exit",
      "belief0 to 10000000 release",
      "gap0 c1.t0 6001000..10000000 stopped-holding used",
  };
  size_t at = 0;
  for (const std::string& line : log.lines) {
    if (at < want_in_order.size() && line == want_in_order[at]) ++at;
  }
  INFO("facts:\n" + [&] {
    std::string all;
    for (const std::string& l : log.lines) all += l + "\n";
    return all;
  }());
  CHECK(at == want_in_order.size());
}

TEST_CASE("facts: a value a client program announced names its thread, as long as it is kept",
          "[facts]") {
  Recorder r(60_s);
  r.Client("c1");
  r.Client("c2");
  // c1.t0 announces a value per acquisition; the key holding the first one is c1.t0's.
  r.HolderValue(1_s, "c1.t0", "aa01");
  r.Invoke(1_s, "c1.t0", "acquire", "lock()");
  r.LeaseFields(1001_ms, "n1", "acquired", "aa01");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Invoke(2_s, "c1.t0", "release");
  r.LeaseFields(2001_ms, "n1", "released", "aa01");
  r.Ok(2002_ms, "c1.t0", "release", 1);
  // c2.t0's value, then a value nobody announced.
  r.HolderValue(3_s, "c2.t0", "bb01");
  r.LeaseFields(3001_ms, "n1", "acquired", "bb01");
  r.LeaseFields(4001_ms, "n1", "owners", "cc01");
  // c1.t0 announces nine more: ten in all, of which the last eight are kept.
  for (int i = 2; i <= 10; ++i) {
    r.HolderValue(5_s + i * 1000, "c1.t0", "aa0" + std::to_string(i));
  }
  Log log;
  const std::unique_ptr<FactsPass> f = Pass(r, &log);
  CHECK(std::find(log.lines.begin(), log.lines.end(), "lease0 acquired on n1 owners c1.t0 believers") !=
        log.lines.end());
  CHECK(std::find(log.lines.begin(), log.lines.end(), "lease2 acquired on n1 owners c2.t0 believers") !=
        log.lines.end());
  CHECK(std::find(log.lines.begin(), log.lines.end(), "lease3 owners on n1 owners believers") !=
        log.lines.end());
  const int c1t0 = f->processes()[f->ProcessNamed(f->names().Find("c1"))].threads[0];
  CHECK(f->OwnerThread("aa010") == c1t0);
  CHECK(f->OwnerThread("aa03") == c1t0);
  CHECK(f->OwnerThread("aa02") == kNone);
  CHECK(f->OwnerThread("aa01") == kNone);
  CHECK(f->OwnerThread("cc01") == kNone);
}

TEST_CASE("facts: with owner=process a process's uuid names every thread of that process",
          "[facts]") {
  Recorder r(20_s);
  r.Protocol("kind=client layout=string-token unlock=compare-and-delete owner=process");
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t1", "acquire", "lock()");
  r.LeaseFields(1001_ms, "n1", "acquired", Recorder::Uuid("c1"));
  r.Ok(1002_ms, "c1.t1", "acquire");
  r.Invoke(1100_ms, "c2.t0", "acquire", "lock()");
  // c1.t0 first appears while its process holds the key: the key names it too, so that its
  // expiry is a loss for it as for c1.t1.
  r.Invoke(1200_ms, "c1.t0", "acquire", "lock()");
  r.LeaseFields(5_s, "n1", "expired", Recorder::Uuid("c1"));
  Log log;
  const std::unique_ptr<FactsPass> f = Pass(r, &log);
  CHECK(std::find(log.lines.begin(), log.lines.end(),
                  "lease0 acquired on n1 owners c1.t1 believers") != log.lines.end());
  CHECK(std::find(log.lines.begin(), log.lines.end(),
                  "lease1 expired on n1 owners c1.t0 c1.t1 believers c1.t1") != log.lines.end());
  const int c1 = f->ProcessNamed(f->names().Find("c1"));
  const int c2 = f->ProcessNamed(f->names().Find("c2"));
  CHECK(f->OwnerProcess(Recorder::Uuid("c1")) == c1);
  CHECK(f->OwnerProcess(Recorder::Uuid("c2")) == c2);
  CHECK(f->OwnerProcess(Recorder::Owner("c1.t0")) == kNone);  // A thread's field is no process's.
  CHECK(f->FieldNames(Recorder::Uuid("c1"), f->processes()[c1].threads[1]));
  CHECK(!f->FieldNames(Recorder::Uuid("c1"), f->processes()[c2].threads[0]));
}

TEST_CASE("facts: a client crash ends its beliefs, and the pass says how many", "[facts]") {
  Recorder r(20_s);
  r.Client("c1");
  r.Invoke(1_s, "c1.t0", "acquire", "lock()");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Fault(5_s, "c1", "crash");
  Log log;
  Pass(r, &log);
  CHECK(std::find(log.lines.begin(), log.lines.end(), "belief0 to 5000000 crash") !=
        log.lines.end());
  CHECK(std::find(log.lines.begin(), log.lines.end(), "crash of c1 ended 1 belief(s)") !=
        log.lines.end());
}

TEST_CASE("facts: an operation still in flight at the run's end is ended open", "[facts]") {
  Recorder r(8_s);
  r.Client("c1");
  r.Invoke(1_s, "c1.t0", "acquire", "lock()");
  Log log;
  Pass(r, &log);
  CHECK(log.lines == std::vector<std::string>{
                         "invoked op0 c1.t0 acquire",
                         "ended op0 nothing (still pending at the end) open",
                         "finish at 8000000",
                     });
}

TEST_CASE("facts: a paused client's stretch is an impaired span until it resumes", "[facts]") {
  Recorder r(20_s);
  r.Client("c1");
  r.Fault(2_s, "c1", "pause", "3000ms");
  r.Fault(5_s, "c1", "resume");
  Log log;
  const std::unique_ptr<FactsPass> f = Pass(r, &log);
  const int c1 = f->ProcessNamed(f->names().Find("c1"));
  REQUIRE(c1 != kNone);
  const std::vector<ImpairedSpan> spans = f->ImpairedSpans(c1, 20_s);
  REQUIRE(spans.size() == 1);
  CHECK(spans[0].kind == kPaused);
  CHECK(spans[0].from_us == 2_s);
  CHECK(spans[0].to_us == 5_s);
  // The fault log keeps both events, for explanations.
  REQUIRE(f->faults().size() == 2);
  CHECK(f->names().Str(f->faults()[0].op) == "pause");
}

TEST_CASE("facts: ids are numbered in the order facts are made, the same on every pass",
          "[facts]") {
  Recorder r(10_s);
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire", "lock()");
  r.Invoke(1100_ms, "c2.t0", "acquire", "lock()");
  r.Lease(1101_ms, "n1", "acquired", "c2.t0");
  r.Ok(1102_ms, "c2.t0", "acquire");
  r.Ok(1200_ms, "c1.t0", "acquire");
  Log first;
  Log second;
  Pass(r, &first);
  Pass(r, &second);
  CHECK(first.lines == second.lines);
  CHECK(std::find(first.lines.begin(), first.lines.end(), "invoked op1 c2.t0 acquire") !=
        first.lines.end());
  CHECK(std::find(first.lines.begin(), first.lines.end(), "belief1 from 1200000 c1.t0") !=
        first.lines.end());
}

}  // namespace
}  // namespace lockstep::history
