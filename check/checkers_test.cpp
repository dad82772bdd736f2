// Establishes that each checker judges hand-written histories the way check/checkers.h says:
// a clean history holds, a violating one is reported with the right threads, interval, event
// seqs and explanation, and the edge cases (reentrant holds, crashes, unknown outcomes, the end
// of the run) are treated as documented. Histories are written event by event, in time order,
// with the conventions the simulator follows (client notes with uuids, a run note, lease
// events listing owner fields "<uuid>:<thread+1>").
#include "check/check.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "history/history.h"
#include "history/jsonl.h"

namespace lockstep::check {
namespace {

using history::EventType;
using history::History;
using history::TextEvent;

constexpr int64_t operator""_ms(unsigned long long v) { return static_cast<int64_t>(v) * 1000; }
constexpr int64_t operator""_s(unsigned long long v) { return static_cast<int64_t>(v) * 1'000'000; }

// Appends events the way the simulator writes them. Threads are named "c1.t0".
class Recorder {
 public:
  explicit Recorder(int64_t end_us = 60_s, int64_t lease_default_us = 30_s) {
    Note("sim", "run", "end_us=" + std::to_string(end_us));
    TextEvent e;
    e.type = EventType::kNote;
    e.process = "sim";
    e.op = "lease_default";
    e.has_value = true;
    e.value = lease_default_us;
    history_.Append(e);
  }

  // A client note; a restarted client announces a new uuid later in the run.
  void Client(const std::string& process, int64_t t = 0, const std::string& uuid = "") {
    Note(process, "client", "uuid=" + (uuid.empty() ? Uuid(process) : uuid), t);
  }

  uint64_t Invoke(int64_t t, const std::string& thread, const std::string& op,
                  const std::string& detail = "", std::optional<int64_t> value = std::nullopt) {
    return Op(t, EventType::kInvoke, thread, op, detail, value);
  }
  uint64_t Ok(int64_t t, const std::string& thread, const std::string& op,
              std::optional<int64_t> value = std::nullopt) {
    return Op(t, EventType::kOk, thread, op, "", value);
  }
  uint64_t Fail(int64_t t, const std::string& thread, const std::string& op,
                const std::string& detail = "") {
    return Op(t, EventType::kFail, thread, op, detail, std::nullopt);
  }
  uint64_t Info(int64_t t, const std::string& thread, const std::string& op) {
    return Op(t, EventType::kInfo, thread, op, "RedisTimeoutException", std::nullopt);
  }

  uint64_t Enter(int64_t t, const std::string& thread, std::optional<int64_t> token = std::nullopt) {
    return Op(t, EventType::kResource, thread, "enter", "", token);
  }
  uint64_t Exit(int64_t t, const std::string& thread) {
    return Op(t, EventType::kResource, thread, "exit", "", std::nullopt);
  }

  // owners: threads ("c1.t0,c2.t0"), written as their owner fields.
  uint64_t Lease(int64_t t, const std::string& node, const std::string& op,
                 const std::string& owners) {
    TextEvent e = At(t, EventType::kLease, node, op);
    e.lock = "lock";
    std::string fields;
    size_t start = 0;
    while (start < owners.size()) {
      const size_t comma = std::min(owners.find(',', start), owners.size());
      fields += (fields.empty() ? "" : ",") + Owner(owners.substr(start, comma - start));
      start = comma + 1;
    }
    e.detail = fields;
    return history_.Append(e).seq;
  }

  // A lease event with owner fields written out ("uuid-c1:1").
  uint64_t LeaseFields(int64_t t, const std::string& node, const std::string& op,
                       const std::string& fields) {
    TextEvent e = At(t, EventType::kLease, node, op);
    e.lock = "lock";
    e.detail = fields;
    return history_.Append(e).seq;
  }

  uint64_t Fault(int64_t t, const std::string& target, const std::string& op,
                 const std::string& detail = "") {
    TextEvent e = At(t, EventType::kFault, target, op);
    e.detail = detail;
    return history_.Append(e).seq;
  }

  uint64_t Exec(int64_t t, const std::string& node, const std::string& thread,
                const std::string& label, const std::string& reply) {
    TextEvent e = At(t, EventType::kExec, node, label);
    e.peer = thread.substr(0, thread.find('.'));
    e.thread = std::stoi(thread.substr(thread.find(".t") + 2));
    e.lock = "lock";
    e.detail = reply;
    return history_.Append(e).seq;
  }

  // The protocol note the simulator writes at the start ("kind=fairlock ...").
  void Protocol(const std::string& detail) { Note("sim", "protocol", detail); }

  // A read access (the read side of a read-write lock).
  uint64_t EnterRead(int64_t t, const std::string& thread) {
    return Op(t, EventType::kResource, thread, "enter", "read", std::nullopt);
  }
  // The write at the end of a fenced critical section: detail "accepted" or "rejected: ...".
  uint64_t Write(int64_t t, const std::string& thread, int64_t token, const std::string& detail) {
    return Op(t, EventType::kResource, thread, "exit", detail, token);
  }
  // An exec that names its client but not the thread (as the simulator writes them).
  uint64_t ExecNoThread(int64_t t, const std::string& node, const std::string& client,
                        const std::string& label, const std::string& reply) {
    TextEvent e = At(t, EventType::kExec, node, label);
    e.peer = client;
    e.lock = "lock";
    e.detail = reply;
    return history_.Append(e).seq;
  }

  // A client's role note, at t = 0 as the simulator writes it ("role=count_down threads=1").
  void Role(const std::string& process, const std::string& role, int threads = 1) {
    Note(process, "role", "role=" + role + " threads=" + std::to_string(threads));
  }
  // A counting-down thread that did its ops_per_thread.
  uint64_t Done(int64_t t, const std::string& thread) {
    return Op(t, EventType::kNote, thread, "done", "ops_per_thread=1", std::nullopt);
  }

  const History& history() const { return history_; }

  Verdict Check(int64_t bound_us = 5_s, size_t max_violations = 100) const {
    CheckOptions options;
    options.liveness_bound_us = bound_us;
    options.max_violations = max_violations;
    return CheckHistory(history_, options);
  }

  static std::string Uuid(const std::string& process) { return "uuid-" + process; }
  static std::string Owner(const std::string& thread) {
    const size_t dot = thread.find(".t");
    return Uuid(thread.substr(0, dot)) + ":" + std::to_string(std::stoi(thread.substr(dot + 2)) + 1);
  }

 private:
  TextEvent At(int64_t t, EventType type, const std::string& process, const std::string& op) {
    TextEvent e;
    e.t_us = t;
    e.type = type;
    e.process = process;
    e.op = op;
    return e;
  }
  void Note(const std::string& process, const std::string& op, const std::string& detail,
            int64_t t = 0) {
    TextEvent e = At(t, EventType::kNote, process, op);
    e.detail = detail;
    history_.Append(e);
  }
  uint64_t Op(int64_t t, EventType type, const std::string& thread, const std::string& op,
              const std::string& detail, std::optional<int64_t> value) {
    const size_t dot = thread.find(".t");
    TextEvent e = At(t, type, thread.substr(0, dot), op);
    e.thread = std::stoi(thread.substr(dot + 2));
    e.lock = "lock";
    e.detail = detail;
    if (value) {
      e.has_value = true;
      e.value = *value;
    }
    return history_.Append(e).seq;
  }

  History history_;
};

// A copy, so that `const auto& x = Result(r.Check(), ...)` does not outlive the verdict.
PropertyResult Result(const Verdict& v, std::string_view property) {
  const PropertyResult* r = v.Find(property);
  REQUIRE(r != nullptr);
  return *r;
}

bool Contains(const std::vector<uint64_t>& events, uint64_t seq) {
  return std::find(events.begin(), events.end(), seq) != events.end();
}

// Two clients taking turns on one lock with the watchdog: every property holds.
Recorder CleanTurns() {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1000_ms, "c1.t0", "acquire", "tryLock(wait=10000ms)");
  r.Exec(1001_ms, "n1", "c1.t0", "acquire", "nil");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Enter(1003_ms, "c1.t0");
  r.Invoke(1500_ms, "c2.t0", "acquire", "tryLock(wait=10000ms)");
  r.Exec(1501_ms, "n1", "c2.t0", "acquire", "29500");
  r.Exit(1900_ms, "c1.t0");
  r.Invoke(2000_ms, "c1.t0", "release");
  r.Exec(2001_ms, "n1", "c1.t0", "unlock", "1");
  r.Lease(2001_ms, "n1", "released", "c1.t0");
  r.Ok(2002_ms, "c1.t0", "release", 1);
  r.Exec(2003_ms, "n1", "c2.t0", "acquire", "nil");
  r.Lease(2003_ms, "n1", "acquired", "c2.t0");
  r.Ok(2004_ms, "c2.t0", "acquire");
  r.Enter(2005_ms, "c2.t0");
  r.Exit(2500_ms, "c2.t0");
  r.Invoke(2600_ms, "c2.t0", "release");
  r.Lease(2601_ms, "n1", "released", "c2.t0");
  r.Ok(2602_ms, "c2.t0", "release", 1);
  return r;
}

TEST_CASE("checkers: a clean history holds every property", "[check]") {
  const Verdict v = CleanTurns().Check();
  REQUIRE(v.results.size() == kProperties.size());
  for (size_t i = 0; i < kProperties.size(); ++i) {
    INFO(kProperties[i]);
    CHECK(v.results[i].property == kProperties[i]);
    CHECK_FALSE(v.results[i].violated);
    CHECK(v.results[i].violation_count == 0);
  }
  CHECK(v.run_end_us == 60_s);
  CHECK(v.warnings.empty());
  CHECK_FALSE(v.AnyViolated());
  CHECK(v.Find("no_such_property") == nullptr);
}

// The brief's example: c1 pauses while holding, its lease expires, c2 takes the lock, and c1
// wakes up still believing it holds it and uses the resource.
TEST_CASE("mutual_exclusion: a paused holder whose lease expired overlaps the next holder",
          "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(10'000_ms, "c1.t0", "acquire", "tryLock(wait=10000ms, lease=2000ms)", 2000);
  const uint64_t c1_acquired = r.Lease(10'000_ms, "n1", "acquired", "c1.t0");
  const uint64_t c1_ok = r.Ok(10'001_ms, "c1.t0", "acquire");
  const uint64_t pause = r.Fault(10'500_ms, "c1", "pause", "3000ms");
  const uint64_t expired = r.Lease(12'001_ms, "n1", "expired", "c1.t0");
  r.Invoke(12'340_ms, "c2.t0", "acquire", "tryLock(wait=10000ms)");
  const uint64_t c2_acquired = r.Lease(12'345_ms, "n1", "acquired", "c2.t0");
  const uint64_t c2_ok = r.Ok(12'350_ms, "c2.t0", "acquire");
  const uint64_t resume = r.Fault(13'500_ms, "c1", "resume");
  const uint64_t enter = r.Enter(13'550_ms, "c1.t0");
  r.Exit(13'590_ms, "c1.t0");
  r.Invoke(13'600_ms, "c1.t0", "release");
  r.Fail(13'601_ms, "c1.t0", "release", "IllegalMonitorStateException: not locked by current thread");
  r.Invoke(14'000_ms, "c2.t0", "release");
  r.Lease(14'001_ms, "n1", "released", "c2.t0");
  r.Ok(14'002_ms, "c2.t0", "release", 1);
  const Verdict v = r.Check();

  const PropertyResult& me = Result(v, kMutualExclusion);
  REQUIRE(me.violated);
  REQUIRE(me.violation_count == 1);
  const Violation& overlap = me.violations.at(0);
  CHECK(overlap.property == "mutual_exclusion");
  CHECK(overlap.kind == "overlap");
  CHECK(overlap.threads == std::vector<std::string>{"c1.t0", "c2.t0"});
  CHECK(overlap.from_us == 12'350_ms);
  CHECK(overlap.to_us == 13'600_ms);  // c1's release invoke ends its belief.
  CHECK(overlap.events ==
        std::vector<uint64_t>{c1_ok, pause, expired, c2_acquired, c2_ok, resume});
  CHECK_FALSE(Contains(overlap.events, c1_acquired));
  CHECK(overlap.explanation.find("c2.t0 acquired \"lock\" at 12.350 s while c1.t0 still "
                                 "believed it held it (acquired at 10.001 s") != std::string::npos);
  CHECK(overlap.explanation.find("c1.t0's lease expired on n1 at 12.001 s, while c1 was paused "
                                 "(10.500 s to 13.500 s)") != std::string::npos);
  CHECK(overlap.explanation.find("pause c1 at 10.500 s (3000ms)") != std::string::npos);

  // The same history also breaks lease safety, dangerously: c1 used the resource.
  const PropertyResult& lease = Result(v, kLeaseSafety);
  REQUIRE(lease.violation_count == 1);
  const Violation& gap = lease.violations.at(0);
  CHECK(gap.kind == "used_after_loss");
  CHECK(gap.threads == std::vector<std::string>{"c1.t0"});
  CHECK(gap.from_us == 12'001_ms);
  CHECK(gap.to_us == 13'600_ms);
  CHECK(Contains(gap.events, expired));
  CHECK(Contains(gap.events, enter));
  CHECK(Contains(gap.events, c1_ok));
  CHECK(gap.explanation.find("1.599 s without a lease") != std::string::npos);

  // A failed release while (wrongly) believing to hold is a lease problem, not reentrancy.
  CHECK_FALSE(Result(v, kReentrancy).violated);
  CHECK_FALSE(Result(v, kResourceExclusion).violated);  // c2 never entered.
}

TEST_CASE("mutual_exclusion: a reentrant hold lasts until its last release", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire");
  const uint64_t first_ok = r.Ok(1001_ms, "c1.t0", "acquire");
  r.Invoke(1100_ms, "c1.t0", "acquire");
  r.Ok(1101_ms, "c1.t0", "acquire");
  r.Invoke(1200_ms, "c1.t0", "release");
  r.Ok(1201_ms, "c1.t0", "release", 0);  // Count 2 -> 1: still held.

  SECTION("another thread acquiring between the two releases overlaps") {
    r.Invoke(1300_ms, "c2.t0", "acquire");
    const uint64_t c2_ok = r.Ok(1301_ms, "c2.t0", "acquire");
    r.Invoke(1400_ms, "c1.t0", "release");
    r.Ok(1401_ms, "c1.t0", "release", 1);
    const PropertyResult& me = Result(r.Check(), kMutualExclusion);
    REQUIRE(me.violation_count == 1);
    CHECK(me.violations[0].threads == std::vector<std::string>{"c1.t0", "c2.t0"});
    CHECK(me.violations[0].from_us == 1301_ms);
    CHECK(me.violations[0].to_us == 1400_ms);
    CHECK(me.violations[0].events == std::vector<uint64_t>{first_ok, c2_ok});
  }
  SECTION("another thread acquiring after the last release does not") {
    r.Invoke(1400_ms, "c1.t0", "release");
    r.Ok(1401_ms, "c1.t0", "release", 1);
    r.Invoke(1500_ms, "c2.t0", "acquire");
    r.Ok(1501_ms, "c2.t0", "acquire");
    const Verdict v = r.Check();
    CHECK_FALSE(Result(v, kMutualExclusion).violated);
    CHECK_FALSE(Result(v, kReentrancy).violated);
  }
}

TEST_CASE("mutual_exclusion: a crash ends the crashed client's belief", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Invoke(2_s, "c2.t0", "acquire", "lock()");

  SECTION("the next holder after the crash does not overlap") {
    r.Fault(5_s, "c1", "crash");
    r.Lease(35_s, "n1", "expired", "c1.t0");
    r.Lease(35'001_ms, "n1", "acquired", "c2.t0");
    r.Ok(35'002_ms, "c2.t0", "acquire");
    const Verdict v = r.Check();
    CHECK_FALSE(Result(v, kMutualExclusion).violated);
    CHECK_FALSE(Result(v, kLeaseSafety).violated);  // c1 no longer believed anything.
    CHECK_FALSE(Result(v, kLiveness).violated);     // Taken over by 5 s + 30 s + B.
  }
  SECTION("without the crash the same acquisition overlaps") {
    r.Lease(35_s, "n1", "expired", "c1.t0");
    r.Lease(35'001_ms, "n1", "acquired", "c2.t0");
    r.Ok(35'002_ms, "c2.t0", "acquire");
    const Verdict v = r.Check();
    const PropertyResult& me = Result(v, kMutualExclusion);
    REQUIRE(me.violation_count == 1);
    CHECK(me.violations[0].to_us == 60_s);  // c1 believes until the end of the run.
    CHECK(me.violations[0].explanation.find("until the run ended at 60.000 s") !=
          std::string::npos);
  }
}

TEST_CASE("mutual_exclusion: an acquisition with an unknown outcome is not a hold", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Info(4_s, "c1.t0", "acquire");
  r.Invoke(5_s, "c2.t0", "acquire");
  r.Ok(5001_ms, "c2.t0", "acquire");
  // c1 releases anyway; with the outcome unknown its count is not judged.
  r.Invoke(6_s, "c1.t0", "release");
  r.Ok(6001_ms, "c1.t0", "release", 1);
  const Verdict v = r.Check();
  CHECK_FALSE(Result(v, kMutualExclusion).violated);
  CHECK_FALSE(Result(v, kReentrancy).violated);

  SECTION("whereas an ok acquisition is") {
    Recorder s;
    s.Client("c1");
    s.Client("c2");
    s.Invoke(1_s, "c1.t0", "acquire");
    s.Ok(4_s, "c1.t0", "acquire");
    s.Invoke(5_s, "c2.t0", "acquire");
    s.Ok(5001_ms, "c2.t0", "acquire");
    CHECK(Result(s.Check(), kMutualExclusion).violated);
  }
}

TEST_CASE("mutual_exclusion: violations beyond max_violations are counted, not kept",
          "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Ok(1001_ms, "c1.t0", "acquire");  // Never released: overlaps every hold of c2.
  for (int i = 0; i < 150; ++i) {
    const int64_t t = 2_s + i * 100_ms;
    r.Invoke(t, "c2.t0", "acquire");
    r.Ok(t + 1_ms, "c2.t0", "acquire");
    r.Invoke(t + 50_ms, "c2.t0", "release");
    r.Ok(t + 51_ms, "c2.t0", "release", 1);
  }
  const PropertyResult& me = Result(r.Check(5_s, /*max_violations=*/100), kMutualExclusion);
  CHECK(me.violation_count == 150);
  REQUIRE(me.violations.size() == 100);
  CHECK(me.violations.front().from_us == 2001_ms);  // The earliest are the ones kept.
  CHECK(me.violations.back().from_us == 2_s + 99 * 100_ms + 1_ms);
  CHECK(std::is_sorted(me.violations.begin(), me.violations.end(),
                       [](const Violation& a, const Violation& b) { return a.from_us < b.from_us; }));
  CHECK(Result(r.Check(5_s, 0), kMutualExclusion).violations.empty());
  CHECK(Result(r.Check(5_s, 0), kMutualExclusion).violated);
}

TEST_CASE("resource_exclusion: accesses of different threads must not overlap", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  const uint64_t c1_enter = r.Enter(1_s, "c1.t0", 7);

  SECTION("back to back accesses hold") {
    r.Exit(2_s, "c1.t0");
    r.Enter(2_s, "c2.t0", 8);  // Same microsecond, after the exit: no overlap.
    r.Exit(3_s, "c2.t0");
    CHECK_FALSE(Result(r.Check(), kResourceExclusion).violated);
  }
  SECTION("overlapping accesses are reported with their tokens") {
    const uint64_t c2_enter = r.Enter(1500_ms, "c2.t0", 6);
    r.Exit(2_s, "c1.t0");
    r.Exit(3_s, "c2.t0");
    const PropertyResult& res = Result(r.Check(), kResourceExclusion);
    REQUIRE(res.violation_count == 1);
    const Violation& v = res.violations[0];
    CHECK(v.threads == std::vector<std::string>{"c1.t0", "c2.t0"});
    CHECK(v.from_us == 1500_ms);
    CHECK(v.to_us == 2_s);
    CHECK(v.events == std::vector<uint64_t>{c1_enter, c2_enter});
    CHECK(v.explanation.find("c2.t0 entered the resource of \"lock\" at 1.500 s with token 6 "
                             "while c1.t0 was still inside (entered at 1.000 s with token 7") !=
          std::string::npos);
    CHECK(v.explanation.find("token no greater") != std::string::npos);
  }
  SECTION("one thread's nested accesses are not an overlap") {
    r.Enter(1200_ms, "c1.t0", 7);
    r.Exit(1300_ms, "c1.t0");
    r.Exit(2_s, "c1.t0");
    CHECK_FALSE(Result(r.Check(), kResourceExclusion).violated);
  }
  SECTION("a crash ends the access") {
    r.Fault(1200_ms, "c1", "crash");
    r.Enter(1500_ms, "c2.t0", 8);
    r.Exit(2_s, "c2.t0");
    CHECK_FALSE(Result(r.Check(), kResourceExclusion).violated);
  }
}

TEST_CASE("reentrancy: unlock results must follow the hold count", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Invoke(1100_ms, "c1.t0", "acquire");
  r.Ok(1101_ms, "c1.t0", "acquire");

  SECTION("0 then 1 holds") {
    r.Invoke(1200_ms, "c1.t0", "release");
    r.Ok(1201_ms, "c1.t0", "release", 0);
    r.Invoke(1300_ms, "c1.t0", "release");
    r.Lease(1301_ms, "n1", "released", "c1.t0");
    r.Ok(1302_ms, "c1.t0", "release", 1);
    CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
  }
  SECTION("a full release while held twice loses the reentrant hold") {
    const uint64_t invoke = r.Invoke(1200_ms, "c1.t0", "release");
    const uint64_t ok = r.Ok(1201_ms, "c1.t0", "release", 1);
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    const Violation& v = re.violations[0];
    CHECK(v.kind == "lost_reentrant_hold");
    CHECK(v.threads == std::vector<std::string>{"c1.t0"});
    CHECK(v.from_us == 1200_ms);
    CHECK(v.to_us == 1201_ms);
    CHECK(v.events == std::vector<uint64_t>{invoke, ok});
    CHECK(v.explanation.find("held \"lock\" 2 times") != std::string::npos);
  }
  SECTION("a last release that leaves the lock held leaks it") {
    r.Invoke(1200_ms, "c1.t0", "release");
    r.Ok(1201_ms, "c1.t0", "release", 0);
    r.Invoke(1300_ms, "c1.t0", "release");
    r.Ok(1301_ms, "c1.t0", "release", 0);
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    CHECK(re.violations[0].kind == "hold_leaked");
    CHECK(re.violations[0].from_us == 1300_ms);
  }
}

TEST_CASE("reentrancy: a release by a thread that does not hold must fail", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  const uint64_t invoke = r.Invoke(2_s, "c2.t0", "release");

  SECTION("failing holds") {
    r.Fail(2001_ms, "c2.t0", "release", "IllegalMonitorStateException");
    CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
  }
  SECTION("succeeding is a violation") {
    r.Ok(2001_ms, "c2.t0", "release", 1);
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    CHECK(re.violations[0].kind == "release_without_hold");
    CHECK(re.violations[0].threads == std::vector<std::string>{"c2.t0"});
  }
  SECTION("failing after deleting the owner's lock is a violation") {
    const uint64_t released = r.Lease(2001_ms, "n1", "released", "c1.t0");
    r.Fail(2002_ms, "c2.t0", "release", "IllegalMonitorStateException");
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    const Violation& v = re.violations[0];
    CHECK(v.kind == "foreign_release_freed_lock");
    CHECK(v.threads == std::vector<std::string>{"c2.t0", "c1.t0"});
    CHECK(v.from_us == 2_s);
    CHECK(v.to_us == 2002_ms);
    CHECK(Contains(v.events, invoke));
    CHECK(Contains(v.events, released));
    CHECK(v.explanation.find("deleted on n1 at 2.001 s while c1.t0 believed it held it") !=
          std::string::npos);
  }
  SECTION("the owner's own release during it is not blamed on it") {
    r.Invoke(2000_ms, "c1.t0", "release");
    r.Lease(2001_ms, "n1", "released", "c1.t0");
    r.Ok(2001_ms, "c1.t0", "release", 1);
    r.Fail(2002_ms, "c2.t0", "release", "IllegalMonitorStateException");
    CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
  }
}

TEST_CASE("reentrancy: a crash makes only the crashed holders' counts unknown", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Ok(1001_ms, "c1.t0", "acquire");
  r.Fault(2_s, "c1", "crash");
  r.Fault(3_s, "c1", "restart");
  // t0's field may still be in the hash, so its release may succeed; t1 never held anything.
  r.Invoke(4_s, "c1.t0", "release");
  r.Ok(4001_ms, "c1.t0", "release", 1);
  r.Invoke(5_s, "c1.t1", "release");
  r.Ok(5001_ms, "c1.t1", "release", 1);
  const PropertyResult& re = Result(r.Check(), kReentrancy);
  REQUIRE(re.violation_count == 1);
  CHECK(re.violations[0].threads == std::vector<std::string>{"c1.t1"});
  CHECK(re.violations[0].kind == "release_without_hold");
}

TEST_CASE("lease_safety: holding after the lease is gone", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=1000ms)", 1000);
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  const uint64_t ok = r.Ok(1002_ms, "c1.t0", "acquire");

  SECTION("releasing before the expiry holds") {
    r.Invoke(1500_ms, "c1.t0", "release");
    r.Lease(1501_ms, "n1", "released", "c1.t0");
    r.Ok(1502_ms, "c1.t0", "release", 1);
    r.Lease(3_s, "n1", "expired", "c1.t0");  // A stale event after the release: harmless.
    CHECK_FALSE(Result(r.Check(), kLeaseSafety).violated);
  }
  SECTION("releasing in the same microsecond as the expiry holds") {
    r.Lease(2001_ms, "n1", "expired", "c1.t0");
    r.Invoke(2001_ms, "c1.t0", "release");
    r.Fail(2002_ms, "c1.t0", "release", "IllegalMonitorStateException");
    CHECK_FALSE(Result(r.Check(), kLeaseSafety).violated);
  }
  SECTION("believing after the expiry without using the resource") {
    const uint64_t expired = r.Lease(2001_ms, "n1", "expired", "c1.t0");
    const uint64_t release = r.Invoke(2500_ms, "c1.t0", "release");
    r.Fail(2501_ms, "c1.t0", "release", "IllegalMonitorStateException");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    const Violation& v = lease.violations[0];
    CHECK(v.kind == "held_after_loss");
    CHECK(v.from_us == 2001_ms);
    CHECK(v.to_us == 2500_ms);
    CHECK(v.events == std::vector<uint64_t>{ok, expired, release});
    CHECK(v.explanation.find("with a lease of 1.000 s") != std::string::npos);
    CHECK(v.explanation.find("did not use the resource") != std::string::npos);
  }
  SECTION("a node crash that loses the key counts like an expiry") {
    r.Enter(1100_ms, "c1.t0");
    const uint64_t lost = r.Lease(1200_ms, "n1", "lost", "c1.t0");
    r.Fault(1200_ms, "n1", "crash", "no persistence");
    r.Exit(1300_ms, "c1.t0");
    r.Invoke(1400_ms, "c1.t0", "release");
    r.Fail(1401_ms, "c1.t0", "release", "RedisConnectionException");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    CHECK(lease.violations[0].kind == "used_after_loss");  // Inside the resource at the loss.
    CHECK(lease.violations[0].from_us == 1200_ms);
    CHECK(lease.violations[0].to_us == 1400_ms);
    CHECK(Contains(lease.violations[0].events, lost));
  }
}

TEST_CASE("lease_safety: a key deleted by someone else's command is a lost lease", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=10000ms)", 10'000);
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Enter(1003_ms, "c1.t0");
  // c2's unlock does not check the owner and deletes c1's key.
  r.Invoke(2_s, "c2.t0", "release", "unlock()");
  const uint64_t deleted = r.Lease(2001_ms, "n1", "released", "c1.t0");
  r.Ok(2002_ms, "c2.t0", "release", 1);

  SECTION("while c1 still believes it holds the lock: a gap") {
    r.Exit(3_s, "c1.t0");
    r.Invoke(3100_ms, "c1.t0", "release", "unlock()");
    r.Fail(3101_ms, "c1.t0", "release", "IllegalMonitorStateException");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    const Violation& x = lease.violations[0];
    CHECK(x.kind == "used_after_loss");
    CHECK(x.threads == std::vector<std::string>{"c1.t0"});
    CHECK(x.from_us == 2001_ms);
    CHECK(x.to_us == 3100_ms);  // Until it stopped believing (it had left the resource).
    CHECK(Contains(x.events, deleted));
    CHECK(x.explanation.find("c1.t0's lease was deleted on n1 at 2.001 s") != std::string::npos);
  }
}

TEST_CASE("lease_safety: a lease lost while the acquire was in flight", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=100ms)", 100);
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Lease(1101_ms, "n1", "expired", "c1.t0");  // The reply is late: the lease ran out first.

  SECTION("starts the gap at the ok") {
    r.Ok(1300_ms, "c1.t0", "acquire");
    r.Invoke(1500_ms, "c1.t0", "release");
    r.Fail(1501_ms, "c1.t0", "release", "IllegalMonitorStateException");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    CHECK(lease.violations[0].from_us == 1300_ms);
    CHECK(lease.violations[0].to_us == 1500_ms);
    CHECK(lease.violations[0].explanation.find("while its acquire") != std::string::npos);
  }
  SECTION("unless the acquire created the key again afterwards") {
    r.Lease(1200_ms, "n1", "acquired", "c1.t0");  // A retry of the script ran later.
    r.Ok(1300_ms, "c1.t0", "acquire");
    r.Invoke(1350_ms, "c1.t0", "release");
    r.Lease(1351_ms, "n1", "released", "c1.t0");
    r.Ok(1352_ms, "c1.t0", "release", 1);
    CHECK_FALSE(Result(r.Check(), kLeaseSafety).violated);
  }
}

TEST_CASE("lease_safety: fields of a crashed incarnation are not the restarted client's",
          "[check]") {
  Recorder r;
  r.Client("c1");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=10000ms)", 10'000);
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Fault(2_s, "c1", "crash");
  r.Fault(3_s, "c1", "restart");
  r.Client("c1", 3_s, "uuid-c1-restarted");
  r.Invoke(4_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=10000ms)", 10'000);
  r.LeaseFields(4001_ms, "n2", "acquired", "uuid-c1-restarted:1");  // On another node.
  r.Ok(4002_ms, "c1.t0", "acquire");

  SECTION("the old incarnation's field expiring is not a loss for the new one") {
    r.LeaseFields(11_s, "n1", "expired", "uuid-c1:1");
    r.Invoke(12_s, "c1.t0", "release");
    r.Ok(12001_ms, "c1.t0", "release", 1);
    CHECK_FALSE(Result(r.Check(), kLeaseSafety).violated);
  }
  SECTION("the new incarnation's field expiring is") {
    r.LeaseFields(11_s, "n2", "expired", "uuid-c1-restarted:1");
    r.Invoke(12_s, "c1.t0", "release");
    r.Fail(12001_ms, "c1.t0", "release", "IllegalMonitorStateException");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    CHECK(lease.violations[0].from_us == 11_s);
  }
}

TEST_CASE("mutual_exclusion: forceUnlock ends the caller's belief, not other holders'",
          "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Client("c3");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Ok(1001_ms, "c1.t0", "acquire");

  SECTION("the holder's own forceUnlock") {
    r.Invoke(2_s, "c1.t0", "force_unlock");
    r.Lease(2001_ms, "n1", "released", "c1.t0");
    r.Ok(2002_ms, "c1.t0", "force_unlock", 1);
    r.Invoke(3_s, "c2.t0", "acquire");
    r.Ok(3001_ms, "c2.t0", "acquire");
    CHECK_FALSE(Result(r.Check(), kMutualExclusion).violated);
  }
  SECTION("another thread's forceUnlock") {
    r.Invoke(2_s, "c3.t0", "force_unlock");
    r.Lease(2001_ms, "n1", "released", "c1.t0");
    r.Ok(2002_ms, "c3.t0", "force_unlock", 1);
    r.Invoke(3_s, "c2.t0", "acquire");
    r.Ok(3001_ms, "c2.t0", "acquire");
    const PropertyResult& me = Result(r.Check(), kMutualExclusion);
    REQUIRE(me.violation_count == 1);
    CHECK(me.violations[0].threads == std::vector<std::string>{"c1.t0", "c2.t0"});
  }
}

TEST_CASE("liveness: a crashed holder's lock must be taken over", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=10000ms)", 10'000);
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  const uint64_t c1_ok = r.Ok(1002_ms, "c1.t0", "acquire");
  const uint64_t crash = r.Fault(5_s, "c1", "crash");

  SECTION("within the lease plus the bound holds") {
    r.Invoke(6_s, "c2.t0", "acquire", "lock()");
    r.Lease(14_s, "n1", "expired", "c1.t0");
    r.Lease(17_s, "n1", "acquired", "c2.t0");
    r.Ok(17_s, "c2.t0", "acquire");  // 5 s + 10 s lease + 5 s bound = 20 s.
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("not at all is a violation") {
    // The node never expires the key (say its script set no TTL).
    const uint64_t trying = r.Invoke(6_s, "c2.t0", "acquire", "lock()");
    const Verdict v = r.Check();
    const PropertyResult& live = Result(v, kLiveness);
    // The key outlives its lease, so it is an orphaned lock too (rule d); the crash rule comes
    // first.
    REQUIRE(live.violation_count == 2);
    CHECK(live.violations[1].kind == "orphaned_lock");
    const Violation& x = live.violations[0];
    CHECK(x.kind == "no_takeover_after_crash");
    CHECK(x.threads == std::vector<std::string>{"c1.t0", "c2.t0"});
    CHECK(x.from_us == 5_s);
    CHECK(x.to_us == 60_s);
    CHECK(x.events == std::vector<uint64_t>{c1_ok, crash, trying});
    CHECK(x.explanation.find("should have been free by 15.000 s") != std::string::npos);
    CHECK(x.explanation.find("later than 20.000 s") != std::string::npos);
  }
  SECTION("nobody trying is not a takeover violation") {
    // Only the orphaned key is reported: it is held by nobody, whether or not anyone waits.
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    CHECK(live.violations[0].kind == "orphaned_lock");
  }
  SECTION("nobody trying, and the key expires with its lease: no violation") {
    r.Lease(14_s, "n1", "expired", "c1.t0");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("someone starting to try late gets the bound from then") {
    r.Invoke(30_s, "c2.t0", "acquire", "lock()");
    r.Lease(33_s, "n1", "acquired", "c2.t0");  // By 30 s + 5 s.
    r.Ok(33_s, "c2.t0", "acquire");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
}

TEST_CASE("liveness: the watchdog's default lease applies without an explicit one", "[check]") {
  Recorder r(/*end_us=*/100_s, /*lease_default_us=*/30_s);
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire", "lock()");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Fault(5_s, "c1", "crash");
  r.Invoke(6_s, "c2.t0", "acquire", "lock()");
  r.Lease(35_s, "n1", "expired", "c1.t0");

  SECTION("taken over by crash + 30 s + B") {
    r.Lease(38_s, "n1", "acquired", "c2.t0");
    r.Ok(38_s, "c2.t0", "acquire");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("taken over later") {
    r.Lease(41_s, "n1", "acquired", "c2.t0");
    r.Ok(41_s, "c2.t0", "acquire");
    const Verdict v = r.Check(/*bound_us=*/5_s);
    const PropertyResult& live = Result(v, kLiveness);
    REQUIRE(live.violation_count == 2);  // No takeover in time, and waiting while free.
    CHECK(live.violations[0].kind == "no_takeover_after_crash");
    CHECK(live.violations[0].to_us == 41_s);
    CHECK(live.violations[0].explanation.find("the watchdog's") != std::string::npos);
    CHECK(live.violations[1].kind == "waited_while_free");
    CHECK(live.violations[1].from_us == 35_s);
    CHECK(live.violations[1].to_us == 41_s);
  }
}

TEST_CASE("liveness: no acquire waits longer than the bound while the lock is free", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  const uint64_t waiting = r.Invoke(1500_ms, "c2.t0", "acquire", "lock()");
  r.Exec(1501_ms, "n1", "c2.t0", "acquire", "28500");
  r.Invoke(2_s, "c1.t0", "release");
  const uint64_t released = r.Lease(2001_ms, "n1", "released", "c1.t0");
  r.Ok(2002_ms, "c1.t0", "release", 1);

  SECTION("a lost wake-up leaves the waiter waiting") {
    r.Exec(10_s, "n1", "c2.t0", "acquire", "nil");
    r.Lease(10_s, "n1", "acquired", "c2.t0");
    const uint64_t ok = r.Ok(10001_ms, "c2.t0", "acquire");
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    const Violation& v = live.violations[0];
    CHECK(v.kind == "waited_while_free");
    CHECK(v.threads == std::vector<std::string>{"c2.t0"});
    CHECK(v.from_us == 2001_ms);
    CHECK(v.to_us == 10_s);
    CHECK(v.events == std::vector<uint64_t>{waiting, released, ok});
    CHECK(v.explanation.find("free on n1 from 2.001 s to 10.000 s") != std::string::npos);
  }
  SECTION("a stretch while the node was paused does not count") {
    r.Fault(3_s, "n1", "pause", "6000ms");
    r.Fault(9_s, "n1", "resume");
    r.Exec(10_s, "n1", "c2.t0", "acquire", "nil");
    r.Lease(10_s, "n1", "acquired", "c2.t0");
    r.Ok(10001_ms, "c2.t0", "acquire");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("a prompt wake-up holds") {
    r.Exec(2100_ms, "n1", "c2.t0", "acquire", "nil");
    r.Lease(2100_ms, "n1", "acquired", "c2.t0");
    r.Ok(2101_ms, "c2.t0", "acquire");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
}

TEST_CASE("liveness: operations must not stay stuck, except near the end of the run",
          "[check]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Client("c1");
  r.Client("c2");
  r.Client("c3");
  r.Client("c4");
  r.Client("c5");
  const uint64_t stuck_try = r.Invoke(40_s, "c1.t0", "acquire", "tryLock(wait=10000ms)");
  r.Invoke(50_s, "c2.t0", "acquire", "tryLock(wait=10000ms)");  // 50 + 10 + 5 > 60: exempt.
  r.Invoke(50_s, "c3.t0", "acquire", "lock()");                 // Waits forever: exempt.
  r.Invoke(50_s, "c4.t0", "release");
  r.Fault(51_s, "c4", "crash");                                 // Not a live process.
  const uint64_t stuck_release = r.Invoke(54_s, "c5.t0", "release");  // 54 + 5 < 60.
  r.Invoke(56_s, "c5.t1", "release");                                  // 56 + 5 > 60: exempt.
  const PropertyResult& live = Result(r.Check(), kLiveness);
  REQUIRE(live.violation_count == 2);
  CHECK(live.violations[0].kind == "stuck");
  CHECK(live.violations[0].threads == std::vector<std::string>{"c1.t0"});
  CHECK(live.violations[0].from_us == 40_s);
  CHECK(live.violations[0].to_us == 60_s);
  CHECK(live.violations[0].events == std::vector<uint64_t>{stuck_try});
  CHECK(live.violations[1].threads == std::vector<std::string>{"c5.t0"});
  CHECK(live.violations[1].events == std::vector<uint64_t>{stuck_release});
  CHECK(live.violations[1].explanation.find("never completed") != std::string::npos);
}

TEST_CASE("Judge compares a verdict with the scenario's expectations", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Ok(1001_ms, "c1.t0", "acquire");
  r.Invoke(2_s, "c2.t0", "acquire");
  r.Ok(2001_ms, "c2.t0", "acquire");
  r.Invoke(3_s, "c2.t0", "acquire");
  r.Ok(3001_ms, "c2.t0", "acquire");  // Reentry: still one overlap with c1.
  r.Invoke(4_s, "c2.t0", "release");
  r.Ok(4001_ms, "c2.t0", "release", 0);
  r.Invoke(4100_ms, "c2.t0", "release");
  r.Ok(4101_ms, "c2.t0", "release", 1);
  r.Invoke(5_s, "c2.t0", "acquire");
  r.Ok(5001_ms, "c2.t0", "acquire");  // A second overlap.
  const Verdict v = r.Check();
  REQUIRE(Result(v, kMutualExclusion).violation_count == 2);

  const Judgement fine = Judge(v, {{"mutual_exclusion", Expectation::kViolated},
                                   {"reentrancy", Expectation::kHold},
                                   {"lease_safety", Expectation::kAny}});
  CHECK(fine.matches);
  CHECK(fine.mismatches.empty());

  const Judgement bad = Judge(v, {{"mutual_exclusion", Expectation::kHold},
                                  {"reentrancy", Expectation::kViolated},
                                  {"fairnes", Expectation::kHold}});
  CHECK_FALSE(bad.matches);
  CHECK(bad.mismatches == std::vector<std::string>{
                              "fairnes: no such property",
                              "mutual_exclusion: expected to hold, violated (2 violations)",
                              "reentrancy: expected to be violated, held"});

  // The issue 4 properties are known names; one that does not apply to the protocol holds.
  const Judgement added = Judge(v, {{"fairness", Expectation::kHold},
                                    {"fencing", Expectation::kHold},
                                    {"rw_exclusion", Expectation::kHold},
                                    {"semaphore", Expectation::kViolated},
                                    {"latch", Expectation::kViolated}});
  CHECK(added.mismatches == std::vector<std::string>{
                                "latch: expected to be violated, held (it does not apply to "
                                "protocol kind '')",
                                "semaphore: expected to be violated, held (it does not apply to "
                                "protocol kind '')"});
}

TEST_CASE("checkers: malformed input becomes warnings, not crashes", "[check]") {
  Recorder r;
  r.Client("c1");
  r.Ok(1_s, "c1.t0", "acquire");  // No invoke.
  r.Exit(2_s, "c1.t0");           // No enter.
  const Verdict v = r.Check();
  CHECK(v.warning_count == 2);
  REQUIRE(v.warnings.size() == 2);
  CHECK(v.warnings[0].find("without an invoke") != std::string::npos);
  CHECK_FALSE(v.AnyViolated());
}

TEST_CASE("checkers: a history read back from JSON Lines gives the same verdict", "[check]") {
  const Recorder r = CleanTurns();
  History copy;
  std::string line, text, error;
  for (const history::Event& e : r.history().events()) {
    line.clear();
    history::AppendJsonLine(e, r.history().names(), &line);
    history::Event parsed;
    REQUIRE(history::ParseJsonLine(line, &copy.names(), &text, &parsed, &error));
    copy.Append(parsed);
  }
  REQUIRE(copy.Hash() == r.history().Hash());
  const Verdict a = r.Check();
  const Verdict b = CheckHistory(copy, CheckOptions{});
  for (size_t i = 0; i < kProperties.size(); ++i) {
    CHECK(a.results[i].violation_count == b.results[i].violation_count);
  }
}

// --- Issue 4: fairness, fencing, read-write locks, semaphores, RedLock ----------------------

// c1 holds a fair lock from 1 s to 2 s; c2 queues at 1.501 s, then c3 at 1.601 s.
Recorder FairQueue(const std::string& protocol, uint64_t* c2_queued, uint64_t* c3_queued) {
  Recorder r;
  r.Protocol(protocol);
  r.Client("c1");
  r.Client("c2");
  r.Client("c3");
  r.Invoke(1_s, "c1.t0", "acquire", "lock(no lease)");
  r.Exec(1001_ms, "n1", "c1.t0", "acquire", "(nil)");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Invoke(1500_ms, "c2.t0", "acquire", "lock(no lease)");
  *c2_queued = r.Exec(1501_ms, "n1", "c2.t0", "acquire", "29500");
  r.Invoke(1600_ms, "c3.t0", "acquire", "lock(no lease)");
  *c3_queued = r.Exec(1601_ms, "n1", "c3.t0", "acquire", "29400");
  r.Invoke(2000_ms, "c1.t0", "release", "unlock()");
  r.Exec(2001_ms, "n1", "c1.t0", "unlock", "1");
  r.Lease(2001_ms, "n1", "released", "c1.t0");
  r.Ok(2002_ms, "c1.t0", "release", 1);
  return r;
}

// Grants `first` then `second` (each holds for 100 ms); returns their acquire oks.
std::pair<uint64_t, uint64_t> GrantInTurn(Recorder* r, const std::string& first,
                                          const std::string& second) {
  r->Exec(2003_ms, "n1", first, "acquire", "(nil)");
  r->Lease(2003_ms, "n1", "acquired", first);
  const uint64_t first_ok = r->Ok(2004_ms, first, "acquire");
  r->Invoke(2100_ms, first, "release", "unlock()");
  r->Lease(2101_ms, "n1", "released", first);
  r->Ok(2102_ms, first, "release", 1);
  r->Exec(2103_ms, "n1", second, "acquire", "(nil)");
  r->Lease(2103_ms, "n1", "acquired", second);
  const uint64_t second_ok = r->Ok(2104_ms, second, "acquire");
  return {first_ok, second_ok};
}

TEST_CASE("fairness: grants follow the queue order", "[check][issue4]") {
  uint64_t c2_queued = 0, c3_queued = 0;
  const std::string fair = "kind=fairlock version=v3.13.6 fencing=off permits=1";

  SECTION("in queue order holds") {
    Recorder r = FairQueue(fair, &c2_queued, &c3_queued);
    GrantInTurn(&r, "c2.t0", "c3.t0");
    const Verdict v = r.Check();
    const PropertyResult& fairness = Result(v, kFairness);
    CHECK(fairness.applicable);
    CHECK_FALSE(fairness.violated);
    CHECK(fairness.observation_count == 0);
    CHECK(v.protocol_kind == "fairlock");
    CHECK_FALSE(v.AnyViolated());
    CHECK(v.warnings.empty());
  }
  SECTION("a later waiter granted first is out of order") {
    Recorder r = FairQueue(fair, &c2_queued, &c3_queued);
    const auto [c3_ok, c2_ok] = GrantInTurn(&r, "c3.t0", "c2.t0");
    const PropertyResult& fairness = Result(r.Check(), kFairness);
    REQUIRE(fairness.violation_count == 1);
    const Violation& x = fairness.violations[0];
    CHECK(x.property == "fairness");
    CHECK(x.kind == "out_of_order");
    CHECK(x.threads == std::vector<std::string>{"c2.t0", "c3.t0"});
    CHECK(x.from_us == 2004_ms);
    CHECK(x.to_us == 2104_ms);
    CHECK(x.events == std::vector<uint64_t>{c2_queued, c3_queued, c3_ok, c2_ok});
    CHECK(x.explanation.find("c3.t0 was granted \"lock\" at 2.004 s ahead of c2.t0") !=
          std::string::npos);
    CHECK(x.explanation.find("c2.t0 queued at 1.501 s (position 1), c3.t0 queued at 1.601 s "
                             "(position 2)") != std::string::npos);
    CHECK(x.explanation.find("granted only at 2.104 s") != std::string::npos);
  }
  SECTION("a tryLock() granted by try_acquire while others wait barges in") {
    Recorder r = FairQueue(fair, &c2_queued, &c3_queued);
    r.Client("c4", 2002_ms);
    r.Invoke(2002_ms, "c4.t0", "acquire", "tryLock()");
    const uint64_t barged = r.Exec(2003_ms, "n1", "c4.t0", "try_acquire", "(nil)");
    r.Ok(2004_ms, "c4.t0", "acquire");
    const PropertyResult& fairness = Result(r.Check(), kFairness);
    REQUIRE(fairness.violation_count == 1);
    CHECK(fairness.violations[0].kind == "barged");
    CHECK(fairness.violations[0].threads == std::vector<std::string>{"c2.t0", "c4.t0"});
    CHECK(fairness.violations[0].to_us == 60_s);  // c2 still waits when the run ends.
    CHECK(Contains(fairness.violations[0].events, barged));
    CHECK(fairness.violations[0].explanation.find("1 other waiter that queued before c4.t0 was "
                                                  "passed over too") != std::string::npos);
  }
  SECTION("the same history of a non-fair lock is not judged") {
    Recorder r = FairQueue("kind=rlock version=v3.13.6 fencing=off permits=1", &c2_queued,
                           &c3_queued);
    GrantInTurn(&r, "c3.t0", "c2.t0");
    const PropertyResult& fairness = Result(r.Check(), kFairness);
    CHECK_FALSE(fairness.applicable);
    CHECK_FALSE(fairness.violated);
  }
}

// c1 holds from 1 s to 8 s. c2 queues with a 2 s wait and times out, c3 queues and crashes,
// c4 queues with lock() and waits until 9 s; c5 arrives at 8.1 s and is granted at once.
Recorder FairExceptions(const std::string& protocol) {
  Recorder r;
  r.Protocol(protocol);
  for (const char* c : {"c1", "c2", "c3", "c4", "c5"}) r.Client(c);
  r.Invoke(1_s, "c1.t0", "acquire", "lock(no lease)");
  r.Exec(1001_ms, "n1", "c1.t0", "acquire", "(nil)");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Invoke(1500_ms, "c2.t0", "acquire", "tryLock(wait=2000ms, no lease)");
  r.Exec(1501_ms, "n1", "c2.t0", "acquire", "29500");
  r.Invoke(1600_ms, "c3.t0", "acquire", "lock(no lease)");
  r.Exec(1601_ms, "n1", "c3.t0", "acquire", "29400");
  r.Invoke(1700_ms, "c4.t0", "acquire", "lock(no lease)");
  r.Exec(1701_ms, "n1", "c4.t0", "acquire", "29300");
  r.Exec(3499_ms, "n1", "c2.t0", "acquire_failed", "(nil)");
  r.Fail(3500_ms, "c2.t0", "acquire", "wait time elapsed");
  r.Fault(4_s, "c3", "crash");
  r.Invoke(8_s, "c1.t0", "release", "unlock()");
  r.Lease(8001_ms, "n1", "released", "c1.t0");
  r.Ok(8002_ms, "c1.t0", "release", 1);
  r.Invoke(8100_ms, "c5.t0", "acquire", "tryLock(wait=10000ms, no lease)");
  r.Exec(8101_ms, "n1", "c5.t0", "acquire", "(nil)");
  r.Lease(8101_ms, "n1", "acquired", "c5.t0");
  r.Ok(8102_ms, "c5.t0", "acquire");
  r.Invoke(8500_ms, "c5.t0", "release", "unlock()");
  r.Lease(8501_ms, "n1", "released", "c5.t0");
  r.Ok(8502_ms, "c5.t0", "release", 1);
  r.Exec(9_s, "n1", "c4.t0", "acquire", "(nil)");
  r.Lease(9_s, "n1", "acquired", "c4.t0");
  r.Ok(9001_ms, "c4.t0", "acquire");
  return r;
}

TEST_CASE("fairness: timed-out, crashed and purged waiters are exempt and listed", "[check][issue4]") {
  SECTION("with a 5 s fair wait timeout c4 may have been purged, so c5 passing it is fine") {
    const Recorder r = FairExceptions(
        "kind=fairlock version=v3.13.6 fencing=off permits=1 fair_wait_timeout=5000ms");
    const PropertyResult& fairness = Result(r.Check(), kFairness);
    CHECK_FALSE(fairness.violated);
    REQUIRE(fairness.observation_count == 3);
    REQUIRE(fairness.observations.size() == 3);
    CHECK(fairness.observations[0].kind == "timed_out");
    CHECK(fairness.observations[0].threads == std::vector<std::string>{"c2.t0"});
    CHECK(fairness.observations[0].from_us == 1501_ms);
    CHECK(fairness.observations[0].to_us == 3500_ms);
    CHECK(fairness.observations[1].kind == "crashed");
    CHECK(fairness.observations[1].threads == std::vector<std::string>{"c3.t0"});
    CHECK(fairness.observations[2].kind == "purged");
    CHECK(fairness.observations[2].threads == std::vector<std::string>{"c4.t0"});
    CHECK(fairness.observations[2].explanation.find(
              "c4.t0 queued at 1.701 s (position 3) for \"lock\" and waited 7.300 s") !=
          std::string::npos);
    CHECK(fairness.observations[2].explanation.find("fair wait timeout of 5.000 s") !=
          std::string::npos);
  }
  SECTION("with the default 300 s c4 was owed its turn: c5 barged in") {
    const Recorder r = FairExceptions("kind=fairlock version=v3.13.6 fencing=off permits=1");
    const PropertyResult& fairness = Result(r.Check(), kFairness);
    CHECK(fairness.observation_count == 2);  // c2 and c3 only.
    REQUIRE(fairness.violation_count == 1);
    const Violation& x = fairness.violations[0];
    CHECK(x.kind == "barged");
    CHECK(x.threads == std::vector<std::string>{"c4.t0", "c5.t0"});
    CHECK(x.from_us == 8102_ms);
    CHECK(x.to_us == 9001_ms);
    CHECK(x.explanation.find("c5.t0 did not queue: its first attempt, at 8.101 s, was granted "
                             "at once") != std::string::npos);
  }
}

TEST_CASE("fairness: execs that cannot be told apart are not judged", "[check][issue4]") {
  Recorder r;
  r.Protocol("kind=fairlock version=v3.13.6 fencing=off permits=1");
  r.Client("c1");
  r.Client("c2");
  r.Client("c9");
  r.Invoke(1_s, "c9.t0", "acquire", "lock(no lease)");
  r.Exec(1001_ms, "n1", "c9.t0", "acquire", "(nil)");
  r.Ok(1002_ms, "c9.t0", "acquire");
  r.Invoke(1100_ms, "c1.t0", "acquire", "lock(no lease)");
  r.Invoke(1100_ms, "c1.t1", "acquire", "lock(no lease)");
  r.ExecNoThread(1101_ms, "n1", "c1", "acquire", "29000");  // t0's or t1's?
  r.ExecNoThread(1102_ms, "n1", "c1", "acquire", "29000");
  r.Invoke(1200_ms, "c2.t0", "acquire", "lock(no lease)");
  r.Exec(1201_ms, "n1", "c2.t0", "acquire", "28800");
  r.Invoke(2_s, "c9.t0", "release", "unlock()");
  r.Ok(2001_ms, "c9.t0", "release", 1);
  r.Exec(2002_ms, "n1", "c2.t0", "acquire", "(nil)");
  r.Ok(2003_ms, "c2.t0", "acquire");  // Ahead of c1's threads, which may have queued first.
  const PropertyResult& fairness = Result(r.Check(), kFairness);
  CHECK_FALSE(fairness.violated);
  REQUIRE(fairness.observation_count == 2);
  CHECK(fairness.observations[0].kind == "unattributed");
  CHECK(fairness.observations[0].threads == std::vector<std::string>{"c1.t0"});
  CHECK(fairness.observations[1].threads == std::vector<std::string>{"c1.t1"});
}

TEST_CASE("fencing: tokens strictly increase and the resource keeps stale writes out",
          "[check][issue4]") {
  Recorder r;
  r.Protocol("kind=fencedlock version=current fencing=on permits=1");
  r.Client("c1");
  r.Client("c2");
  r.Client("c3");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=2000ms)", 2000);
  const uint64_t c1_ok = r.Ok(1001_ms, "c1.t0", "acquire", 5);
  r.Enter(1002_ms, "c1.t0", 5);
  r.Fault(1100_ms, "c1", "pause", "5000ms");
  r.Lease(3001_ms, "n1", "expired", "c1.t0");
  r.Invoke(3100_ms, "c2.t0", "acquire", "tryLock(wait=0ms, lease=2000ms)", 2000);
  const uint64_t c2_ok = r.Ok(3101_ms, "c2.t0", "acquire", 6);
  r.Enter(3102_ms, "c2.t0", 6);
  const uint64_t accepted = r.Write(3200_ms, "c2.t0", 6, "accepted");
  r.Invoke(3300_ms, "c2.t0", "release", "unlock()");
  r.Ok(3301_ms, "c2.t0", "release", 1);
  r.Fault(6100_ms, "c1", "resume");
  const uint64_t stale = r.Write(6101_ms, "c1.t0", 5, "rejected: stale token 5 < 6");

  SECTION("a rejected stale write is reported, not a violation") {
    const Verdict v = r.Check();
    const PropertyResult& fencing = Result(v, kFencing);
    CHECK(fencing.applicable);
    CHECK_FALSE(fencing.violated);
    REQUIRE(fencing.observation_count == 1);
    const Observation& o = fencing.observations[0];
    CHECK(o.property == "fencing");
    CHECK(o.kind == "rejected_write");
    CHECK(o.threads == std::vector<std::string>{"c1.t0"});
    CHECK(o.from_us == 6101_ms);
    CHECK(o.events == std::vector<uint64_t>{accepted, stale});
    CHECK(o.explanation.find("rejected c1.t0's write at 6.101 s with token 5") !=
          std::string::npos);
    CHECK(o.explanation.find("accepted token 6 from c2.t0 at 3.200 s") != std::string::npos);
    CHECK(Result(v, kLeaseSafety).violated);  // The pause itself is still a lease problem.
  }
  SECTION("a failover that hands out a token again is a violation") {
    r.Fault(7_s, "n1", "crash");
    const uint64_t promote = r.Fault(8_s, "n2", "promote", "replica n2 promoted to master");
    r.Invoke(9_s, "c3.t0", "acquire", "tryLock(wait=0ms, lease=2000ms)", 2000);
    const uint64_t c3_ok = r.Ok(9001_ms, "c3.t0", "acquire", 6);  // n2 missed the last INCR.
    const PropertyResult& fencing = Result(r.Check(), kFencing);
    REQUIRE(fencing.violation_count == 1);
    const Violation& x = fencing.violations[0];
    CHECK(x.kind == "token_not_increasing");
    CHECK(x.threads == std::vector<std::string>{"c2.t0", "c3.t0"});
    CHECK(x.from_us == 3101_ms);
    CHECK(x.to_us == 9001_ms);
    CHECK(Contains(x.events, c2_ok));
    CHECK(Contains(x.events, c3_ok));
    CHECK(Contains(x.events, promote));
    CHECK_FALSE(Contains(x.events, c1_ok));
    CHECK(x.explanation.find("with token 6, not greater than token 6 that c2.t0 got at "
                             "3.101 s") != std::string::npos);
    CHECK(x.explanation.find("promote n2 at 8.000 s") != std::string::npos);
  }
  SECTION("an accepted write with a lower token is a violation") {
    r.Enter(6200_ms, "c3.t0", 4);
    const uint64_t bad = r.Write(6300_ms, "c3.t0", 4, "accepted");
    const PropertyResult& fencing = Result(r.Check(), kFencing);
    REQUIRE(fencing.violation_count == 1);
    const Violation& x = fencing.violations[0];
    CHECK(x.kind == "stale_write_accepted");
    CHECK(x.threads == std::vector<std::string>{"c2.t0", "c3.t0"});
    CHECK(x.from_us == 3200_ms);
    CHECK(x.to_us == 6300_ms);
    CHECK(x.events == std::vector<uint64_t>{accepted, bad});
    CHECK(fencing.observation_count == 1);  // c1's write is still only rejected.
  }
}

TEST_CASE("fencing: does not apply to a lock without tokens", "[check][issue4]") {
  const Verdict v = CleanTurns().Check();
  CHECK_FALSE(Result(v, kFencing).applicable);
  CHECK_FALSE(Result(v, kFairness).applicable);
  CHECK_FALSE(Result(v, kRwExclusion).applicable);
  CHECK_FALSE(Result(v, kSemaphore).applicable);
  CHECK(Result(v, kMutualExclusion).applicable);
}

// Two readers hold a read-write lock together from 1.5 s to 2.2 s.
Recorder TwoReaders() {
  Recorder r;
  r.Protocol("kind=rwlock version=v3.13.6 fencing=off permits=1");
  r.Client("c1");
  r.Client("c2");
  r.Client("c3");
  r.Client("c4");
  r.Invoke(1_s, "c1.t0", "acquire_read", "tryLock(wait=10000ms, no lease)");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire_read");
  r.EnterRead(1100_ms, "c1.t0");
  r.Invoke(1500_ms, "c2.t0", "acquire_read", "tryLock(wait=10000ms, no lease)");
  r.Lease(1501_ms, "n1", "owners", "c1.t0,c2.t0");
  r.Ok(1502_ms, "c2.t0", "acquire_read");
  r.EnterRead(1600_ms, "c2.t0");
  r.Exit(2000_ms, "c1.t0");
  r.Exit(2100_ms, "c2.t0");
  r.Invoke(2200_ms, "c1.t0", "release_read", "unlock()");
  r.Lease(2201_ms, "n1", "owners", "c2.t0");
  r.Ok(2202_ms, "c1.t0", "release_read", 0);  // c2 still holds: the hash stays.
  return r;
}

TEST_CASE("rw_exclusion: readers may overlap, a writer may not", "[check][issue4]") {
  Recorder r = TwoReaders();

  SECTION("reader-reader overlap is fine for every exclusion property") {
    r.Invoke(2300_ms, "c2.t0", "release_read", "unlock()");
    r.Lease(2301_ms, "n1", "released", "c2.t0");
    r.Ok(2302_ms, "c2.t0", "release_read", 1);
    const Verdict v = r.Check();
    CHECK(Result(v, kRwExclusion).applicable);
    CHECK_FALSE(Result(v, kRwExclusion).violated);
    CHECK_FALSE(Result(v, kMutualExclusion).violated);
    CHECK_FALSE(Result(v, kResourceExclusion).violated);
    CHECK_FALSE(Result(v, kReentrancy).violated);  // A reader's last release may return 0.
    CHECK_FALSE(Result(v, kLeaseSafety).violated);
    CHECK_FALSE(v.AnyViolated());
    CHECK(v.warnings.empty());  // "owners" lease events are understood.
  }
  SECTION("a writer while a reader still holds breaks it") {
    r.Invoke(2240_ms, "c3.t0", "acquire", "tryLock(wait=10000ms, no lease)");
    const uint64_t writer_ok = r.Ok(2250_ms, "c3.t0", "acquire");
    r.Invoke(2300_ms, "c2.t0", "release_read", "unlock()");
    r.Ok(2302_ms, "c2.t0", "release_read", 1);
    const Verdict v = r.Check();
    const PropertyResult& rw = Result(v, kRwExclusion);
    REQUIRE(rw.violation_count == 1);
    const Violation& x = rw.violations[0];
    CHECK(x.kind == "write_read");
    CHECK(x.threads == std::vector<std::string>{"c2.t0", "c3.t0"});
    CHECK(x.from_us == 2250_ms);
    CHECK(x.to_us == 2300_ms);
    CHECK(Contains(x.events, writer_ok));
    CHECK(x.explanation.find("c3.t0 acquired the write lock of \"lock\" at 2.250 s while c2.t0 "
                             "still believed it held the read lock") != std::string::npos);
    REQUIRE(Result(v, kMutualExclusion).violation_count == 1);
    CHECK(Result(v, kMutualExclusion).violations[0].threads ==
          std::vector<std::string>{"c2.t0", "c3.t0"});
  }
  SECTION("two writers break it too") {
    r.Invoke(2300_ms, "c2.t0", "release_read", "unlock()");
    r.Ok(2302_ms, "c2.t0", "release_read", 1);
    r.Invoke(3_s, "c3.t0", "acquire", "lock(no lease)");
    r.Ok(3001_ms, "c3.t0", "acquire");
    r.Invoke(3100_ms, "c4.t0", "acquire", "lock(no lease)");
    r.Ok(3101_ms, "c4.t0", "acquire");
    const PropertyResult& rw = Result(r.Check(), kRwExclusion);
    REQUIRE(rw.violation_count == 1);
    CHECK(rw.violations[0].kind == "write_write");
    CHECK(rw.violations[0].threads == std::vector<std::string>{"c3.t0", "c4.t0"});
  }
  SECTION("a reader's field dropped while it still holds is a lease loss") {
    const uint64_t dropped = r.Lease(2250_ms, "n1", "owners", "c3.t0");  // c2's field is gone.
    r.Invoke(2300_ms, "c2.t0", "release_read", "unlock()");
    r.Fail(2302_ms, "c2.t0", "release_read", "IllegalMonitorStateException");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    CHECK(lease.violations[0].threads == std::vector<std::string>{"c2.t0"});
    CHECK(lease.violations[0].from_us == 2250_ms);
    CHECK(lease.violations[0].to_us == 2300_ms);
    CHECK(Contains(lease.violations[0].events, dropped));
    CHECK(lease.violations[0].explanation.find("was removed from the key on n1") !=
          std::string::npos);
  }
}

TEST_CASE("semaphore: never more permits in use than the semaphore has", "[check][issue4]") {
  Recorder r;
  r.Protocol("kind=semaphore version=v3.13.6 fencing=off permits=2");
  for (const char* c : {"c1", "c2", "c3", "c4", "c9"}) r.Client(c);
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=10000ms, no lease)");
  const uint64_t c1_ok = r.Ok(1001_ms, "c1.t0", "acquire");
  r.Enter(1002_ms, "c1.t0");
  r.Invoke(1500_ms, "c2.t0", "acquire", "tryLock(wait=10000ms, no lease)");
  const uint64_t c2_ok = r.Ok(1501_ms, "c2.t0", "acquire");
  r.Enter(1502_ms, "c2.t0");
  // A waiter on a node where the key never showed up: free for a lock, not for a semaphore.
  r.Invoke(1600_ms, "c9.t0", "acquire", "lock(no lease)");
  r.Exec(1601_ms, "n1", "c9.t0", "acquire", "0");

  SECTION("two holders of two permits are fine") {
    r.Exit(1900_ms, "c1.t0");
    r.Invoke(2_s, "c1.t0", "release", "release()");
    r.Ok(2001_ms, "c1.t0", "release", 1);
    r.Invoke(2500_ms, "c3.t0", "acquire", "tryLock(wait=10000ms, no lease)");
    r.Ok(2501_ms, "c3.t0", "acquire");
    r.Enter(2502_ms, "c3.t0");
    const Verdict v = r.Check();
    CHECK(Result(v, kSemaphore).applicable);
    CHECK_FALSE(Result(v, kSemaphore).violated);
    CHECK_FALSE(Result(v, kMutualExclusion).violated);
    CHECK_FALSE(Result(v, kResourceExclusion).violated);
    CHECK_FALSE(Result(v, kReentrancy).applicable);
    CHECK_FALSE(Result(v, kLiveness).violated);  // c9's wait is not judged as "while free".
  }
  SECTION("a third holder is one too many") {
    r.Invoke(1800_ms, "c3.t0", "acquire", "tryLock(wait=10000ms, no lease)");
    const uint64_t c3_ok = r.Ok(1801_ms, "c3.t0", "acquire");
    r.Enter(1802_ms, "c3.t0");
    r.Exit(1900_ms, "c1.t0");
    r.Invoke(2_s, "c1.t0", "release", "release()");
    r.Ok(2001_ms, "c1.t0", "release", 1);
    const Verdict v = r.Check();
    const PropertyResult& sem = Result(v, kSemaphore);
    REQUIRE(sem.violation_count == 1);
    const Violation& x = sem.violations[0];
    CHECK(x.kind == "over_permits");
    CHECK(x.threads == std::vector<std::string>{"c1.t0", "c2.t0", "c3.t0"});
    CHECK(x.from_us == 1801_ms);
    CHECK(x.to_us == 2_s);
    CHECK(x.events == std::vector<uint64_t>{c1_ok, c2_ok, c3_ok});
    CHECK(x.explanation.find("putting 3 in use with only 2 permits") != std::string::npos);
    const PropertyResult& me = Result(v, kMutualExclusion);
    REQUIRE(me.violation_count == 1);
    CHECK(me.violations[0].kind == "over_permits");
    CHECK(me.violations[0].threads == std::vector<std::string>{"c1.t0", "c2.t0", "c3.t0"});
    CHECK(me.violations[0].to_us == 2_s);
    const PropertyResult& res = Result(v, kResourceExclusion);
    REQUIRE(res.violation_count == 1);
    CHECK(res.violations[0].from_us == 1802_ms);
    CHECK(res.violations[0].to_us == 1900_ms);
  }
  SECTION("a release without a permit makes room for one too many") {
    const uint64_t unowned = r.Invoke(1700_ms, "c4.t0", "release", "release()");
    r.Ok(1701_ms, "c4.t0", "release", 1);
    r.Invoke(1800_ms, "c3.t0", "acquire", "tryLock(wait=10000ms, no lease)");
    r.Ok(1801_ms, "c3.t0", "acquire");
    const PropertyResult& sem = Result(r.Check(), kSemaphore);
    REQUIRE(sem.violation_count == 1);
    CHECK(sem.violations[0].to_us == 60_s);  // Still over when the run ended.
    CHECK(Contains(sem.violations[0].events, unowned));
    CHECK(sem.violations[0].explanation.find("does not check ownership") != std::string::npos);
  }
  SECTION("permits are counted per acquisition") {
    r.Invoke(1800_ms, "c3.t0", "acquire", "tryAcquire(permits=2, wait=0ms)");
    r.Fail(1801_ms, "c3.t0", "acquire", "no permits");
    r.Invoke(1900_ms, "c1.t0", "acquire", "tryAcquire(permits=2, wait=0ms)");
    r.Ok(1901_ms, "c1.t0", "acquire");  // c1 now holds 3.
    const PropertyResult& sem = Result(r.Check(), kSemaphore);
    REQUIRE(sem.violation_count == 1);
    CHECK(sem.violations[0].threads == std::vector<std::string>{"c2.t0", "c1.t0"});
    CHECK(sem.violations[0].explanation.find("putting 4 in use") != std::string::npos);
  }
}

// c1 acquires a RedLock on n1, n2 and n3 with a 10 s lease and stays in the resource until 4 s.
Recorder RedLockHeld(const std::string& protocol) {
  Recorder r;
  r.Protocol(protocol);
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=0ms, lease=10000ms)", 10'000);
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Lease(1002_ms, "n2", "acquired", "c1.t0");
  r.Lease(1003_ms, "n3", "acquired", "c1.t0");
  r.Ok(1004_ms, "c1.t0", "acquire");
  r.Enter(1005_ms, "c1.t0");
  return r;
}

TEST_CASE("lease_safety: a RedLock holder keeps its lease while a majority does",
          "[check][issue4]") {
  SECTION("one node's expiry with the majority intact is not a loss") {
    Recorder r = RedLockHeld("kind=redlock version=v3.13.6 fencing=off permits=1");
    r.Lease(3_s, "n2", "expired", "c1.t0");  // Say n2's clock jumped.
    r.Exit(4_s, "c1.t0");
    r.Invoke(4100_ms, "c1.t0", "release", "unlock()");
    r.Lease(4101_ms, "n1", "released", "c1.t0");
    r.Lease(4102_ms, "n3", "released", "c1.t0");
    r.Ok(4103_ms, "c1.t0", "release", 2);  // Two members fully released.
    const Verdict v = r.Check();
    CHECK_FALSE(Result(v, kLeaseSafety).violated);
    CHECK_FALSE(Result(v, kReentrancy).violated);
  }
  SECTION("a majority's expiry is") {
    Recorder r = RedLockHeld("kind=redlock version=v3.13.6 fencing=off permits=1");
    const uint64_t first = r.Lease(3_s, "n2", "expired", "c1.t0");
    const uint64_t second = r.Lease(3500_ms, "n3", "expired", "c1.t0");
    r.Exit(4_s, "c1.t0");
    const uint64_t release = r.Invoke(4100_ms, "c1.t0", "release", "unlock()");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    const Violation& x = lease.violations[0];
    CHECK(x.kind == "used_after_loss");
    CHECK(x.threads == std::vector<std::string>{"c1.t0"});
    CHECK(x.from_us == 3500_ms);
    CHECK(x.to_us == 4100_ms);
    CHECK(Contains(x.events, first));
    CHECK(Contains(x.events, second));
    CHECK(Contains(x.events, release));
    CHECK(x.explanation.find("on 1 of the 3 nodes, fewer than the quorum of 2") !=
          std::string::npos);
  }
  SECTION("the lease is back once a majority holds the field again") {
    Recorder r = RedLockHeld("kind=redlock version=v3.13.6 fencing=off permits=1 nodes=3");
    r.Lease(3_s, "n2", "expired", "c1.t0");
    r.Lease(3500_ms, "n3", "expired", "c1.t0");
    r.Lease(3600_ms, "n2", "acquired", "c1.t0");  // A renewal re-created it (say).
    r.Exit(4_s, "c1.t0");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    CHECK(lease.violations[0].to_us == 3600_ms);
    CHECK(lease.violations[0].explanation.find("quorum of nodes again at 3.600 s") !=
          std::string::npos);
  }
  SECTION("a MultiLock needs every node") {
    Recorder r = RedLockHeld("kind=multilock version=v3.13.6 fencing=off permits=1 nodes=3");
    r.Lease(3_s, "n2", "expired", "c1.t0");
    r.Exit(4_s, "c1.t0");
    r.Invoke(4100_ms, "c1.t0", "release", "unlock()");
    const PropertyResult& lease = Result(r.Check(), kLeaseSafety);
    REQUIRE(lease.violation_count == 1);
    CHECK(lease.violations[0].from_us == 3_s);
    CHECK(lease.violations[0].explanation.find("quorum of 3") != std::string::npos);
  }
  SECTION("without a protocol note any single node's expiry counts, as for an RLock") {
    Recorder r = RedLockHeld("version=v3.13.6");
    r.Lease(3_s, "n2", "expired", "c1.t0");
    r.Exit(4_s, "c1.t0");
    r.Invoke(4100_ms, "c1.t0", "release", "unlock()");
    CHECK(Result(r.Check(), kLeaseSafety).violation_count == 1);
  }
}

TEST_CASE("liveness: a RedLock waiter waits for a quorum, not for one free node",
          "[check][issue4]") {
  Recorder r = RedLockHeld("kind=redlock version=v3.13.6 fencing=off permits=1 nodes=3");
  const uint64_t waiting = r.Invoke(2_s, "c2.t0", "acquire", "tryLock(wait=30000ms, no lease)");
  r.Exec(2001_ms, "n1", "c2.t0", "acquire", "8999");
  r.Lease(3_s, "n1", "expired", "c1.t0");  // n1 is free from 3 s; n2 and n3 are not.

  SECTION("one free node of three is not a free lock") {
    r.Exit(20_s, "c1.t0");
    r.Invoke(20100_ms, "c1.t0", "release", "unlock()");
    r.Lease(20101_ms, "n2", "released", "c1.t0");
    r.Lease(20102_ms, "n3", "released", "c1.t0");
    r.Ok(20103_ms, "c1.t0", "release", 2);
    r.Lease(20200_ms, "n1", "acquired", "c2.t0");
    r.Lease(20201_ms, "n2", "acquired", "c2.t0");
    r.Ok(20202_ms, "c2.t0", "acquire");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("two free nodes are, and waiting through them is a violation") {
    r.Lease(4_s, "n3", "expired", "c1.t0");
    r.Exit(20_s, "c1.t0");
    r.Invoke(20100_ms, "c1.t0", "release", "unlock()");
    r.Ok(20103_ms, "c1.t0", "release", 1);
    r.Lease(20200_ms, "n1", "acquired", "c2.t0");
    r.Lease(20201_ms, "n3", "acquired", "c2.t0");
    r.Ok(20202_ms, "c2.t0", "acquire");
    r.Lease(20300_ms, "n2", "released", "c1.t0");  // Late, but it goes (no orphaned key).
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    const Violation& x = live.violations[0];
    CHECK(x.kind == "waited_while_free");
    CHECK(x.threads == std::vector<std::string>{"c2.t0"});
    CHECK(x.from_us == 4_s);
    CHECK(x.to_us == 20200_ms);
    CHECK(Contains(x.events, waiting));
    CHECK(x.explanation.find("free on at least 2 of its 3 nodes (a quorum) from 4.000 s") !=
          std::string::npos);
  }
}

TEST_CASE("reentrancy: RedLock releases count members", "[check][issue4]") {
  Recorder r = RedLockHeld("kind=redlock version=v3.13.6 fencing=off permits=1");
  r.Exit(2_s, "c1.t0");
  SECTION("a non-holder's release that released nothing is fine (RedLock swallows errors)") {
    r.Invoke(2500_ms, "c2.t0", "release", "unlock()");
    r.Ok(2501_ms, "c2.t0", "release", 0);
    CHECK_FALSE(Result(r.Check(), kReentrancy).violated);
  }
  SECTION("one that released members is not") {
    r.Invoke(2500_ms, "c2.t0", "release", "unlock()");
    r.Ok(2501_ms, "c2.t0", "release", 3);
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    CHECK(re.violations[0].kind == "release_without_hold");
  }
  SECTION("a holder's last release that released no member leaks the lock") {
    r.Invoke(3_s, "c1.t0", "release", "unlock()");
    r.Ok(3001_ms, "c1.t0", "release", 0);
    const PropertyResult& re = Result(r.Check(), kReentrancy);
    REQUIRE(re.violation_count == 1);
    CHECK(re.violations[0].kind == "hold_leaked");
  }
}

TEST_CASE("liveness: read-side ops are acquisitions and releases", "[check][issue4]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Protocol("kind=rwlock version=v3.13.6 fencing=off permits=1");
  for (const char* c : {"c1", "c2", "c3", "c4", "c5"}) r.Client(c);
  const uint64_t waiting = r.Invoke(1_s, "c5.t0", "acquire_read", "lock(no lease)");
  r.Exec(1001_ms, "n1", "c5.t0", "acquire", "1000");  // Nothing holds it on n1, ever.
  r.Invoke(30_s, "c4.t0", "acquire_read", "lock(no lease)");  // Waits forever: not stuck.
  const uint64_t stuck_read =
      r.Invoke(40_s, "c2.t0", "acquire_read", "tryLock(wait=10000ms, no lease)");
  r.Invoke(50_s, "c1.t0", "acquire_read", "tryLock(wait=10000ms, no lease)");  // 50+10+5 > 60.
  const uint64_t stuck_release = r.Invoke(54_s, "c3.t0", "release_read", "unlock()");
  const PropertyResult& live = Result(r.Check(), kLiveness);
  REQUIRE(live.violation_count == 3);
  CHECK(live.violations[0].kind == "waited_while_free");
  CHECK(live.violations[0].threads == std::vector<std::string>{"c5.t0"});
  CHECK(live.violations[0].events.front() == waiting);
  CHECK(live.violations[1].kind == "stuck");
  CHECK(live.violations[1].events == std::vector<uint64_t>{stuck_read});
  CHECK(live.violations[2].kind == "stuck");
  CHECK(live.violations[2].events == std::vector<uint64_t>{stuck_release});
}

TEST_CASE("liveness: a key that outlives every belief in it is an orphaned lock", "[check][issue4]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Protocol("kind=setnx-expire version=v3.13.6 fencing=off permits=1 nodes=1");
  r.Client("c1");
  r.Client("c2");
  // The SETNX ran but its reply was lost: c2's acquire ends info, c2 never believes it holds
  // the key its field is in, and no EXPIRE followed.
  r.Invoke(1_s, "c2.t0", "acquire", "tryLock(wait=5000ms, lease=5000ms)", 5000);
  const uint64_t taken = r.Lease(1001_ms, "n1", "acquired", "c2.t0");
  const uint64_t lost = r.Info(4_s, "c2.t0", "acquire");

  SECTION("until the run ends: a violation once lease + B has passed") {
    r.Invoke(5_s, "c1.t0", "acquire", "tryLock(wait=5000ms, lease=5000ms)", 5000);
    r.Fail(10_s, "c1.t0", "acquire");
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    const Violation& x = live.violations[0];
    CHECK(x.kind == "orphaned_lock");
    CHECK(x.threads == std::vector<std::string>{"c2.t0", "c1.t0"});
    CHECK(x.from_us == 1001_ms);
    CHECK(x.to_us == 60_s);
    CHECK(Contains(x.events, taken));
    CHECK(Contains(x.events, lost));
    CHECK(x.explanation.find("was held by \"uuid-c2:1\" from 1.001 s until the run ended") !=
          std::string::npos);
    CHECK(x.explanation.find("ended with an unknown outcome at 4.000 s") != std::string::npos);
    CHECK(x.explanation.find("longest lease any acquisition asked for (5.000 s)") !=
          std::string::npos);
    CHECK(x.explanation.find("1 acquisition of it was refused") != std::string::npos);
  }
  SECTION("gone within lease + B: no violation") {
    r.Lease(11_s, "n1", "expired", "c2.t0");  // 9.999 s <= 5 s + 5 s.
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("gone a little later than lease + B: a violation") {
    r.Lease(11002_ms, "n1", "expired", "c2.t0");  // 10.001 s.
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    CHECK(live.violations[0].to_us == 11002_ms);
  }
  SECTION("time the node was paused does not count") {
    // History events come in time order: the pause starts after the info at 4 s.
    r.Fault(5_s, "n1", "pause");
    r.Fault(11_s, "n1", "resume");
    r.Lease(16_s, "n1", "expired", "c2.t0");  // 15 s, 6 s of them paused.
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("a field its thread believes in again is not orphaned") {
    r.Invoke(6_s, "c2.t0", "acquire", "tryLock(wait=5000ms, lease=5000ms)", 5000);
    r.Ok(6001_ms, "c2.t0", "acquire");  // Reentrant: its own field.
    r.Invoke(7_s, "c2.t0", "release", "unlock()");
    r.Lease(7001_ms, "n1", "released", "c2.t0");
    r.Ok(7002_ms, "c2.t0", "release", 1);
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
}

TEST_CASE("liveness: a promoted replica takes over the old master's lease view",
          "[check][issue4]") {
  Recorder r;
  r.Protocol("kind=rlock version=v3.13.6 fencing=off permits=1 nodes=1");
  r.Client("c1");
  r.Invoke(1_s, "c1.t0", "acquire", "lock(no lease)");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  r.Fault(2_s, "n1", "crash");
  r.Fault(7_s, "n2", "promote", "replica n2 promoted to master (sentinel)");
  r.Lease(7_s, "n2", "lost", "c1.t0");
  r.Fault(9_s, "n1", "restart");  // Back as a replica: its stale key is never judged again.
  r.Invoke(10_s, "c1.t0", "release", "unlock()");
  r.Fail(10001_ms, "c1.t0", "release", "IllegalMonitorStateException");
  const PropertyResult& live = Result(r.Check(), kLiveness);
  CHECK(live.violation_count == 0);
}

TEST_CASE("liveness: a semaphore permit no believer holds is leaked", "[check][issue4]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Protocol("kind=semaphore version=current fencing=off permits=1 nodes=1");
  r.Client("c1");
  r.Client("c2");
  r.LeaseFields(100_ms, "n1", "acquired", "1");  // trySetPermits(1).
  r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=5000ms, no lease, permits=1)");
  r.LeaseFields(1001_ms, "n1", "owners", "0");
  r.Ok(1002_ms, "c1.t0", "acquire", 1);

  SECTION("released: nothing leaks") {
    r.Invoke(2_s, "c1.t0", "release", "unlock()");
    r.LeaseFields(2001_ms, "n1", "owners", "1");
    r.Ok(2002_ms, "c1.t0", "release", 1);
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("its holder crashed: the permit never comes back") {
    const uint64_t crash = r.Fault(3_s, "c1", "crash");
    r.Invoke(4_s, "c2.t0", "acquire", "tryLock(wait=5000ms, no lease, permits=1)");
    r.Fail(9_s, "c2.t0", "acquire");
    const Verdict v = r.Check();
    CHECK_FALSE(Result(v, kSemaphore).violated);
    const PropertyResult& live = Result(v, kLiveness);
    REQUIRE(live.violation_count == 1);
    const Violation& x = live.violations[0];
    CHECK(x.kind == "leaked_permits");
    CHECK(x.threads == std::vector<std::string>{"c1.t0", "c2.t0"});
    CHECK(x.from_us == 3_s);
    CHECK(x.to_us == 60_s);
    CHECK(Contains(x.events, crash));
    CHECK(x.explanation.find("1 permit of \"lock\" (1 permit in all) was taken on n1") !=
          std::string::npos);
    CHECK(x.explanation.find("It began when c1 crashed at 3.000 s while c1.t0 held permits") !=
          std::string::npos);
  }
  SECTION("an acquire whose reply was lost took a permit nobody holds") {
    r.Invoke(2_s, "c1.t0", "release", "unlock()");
    r.LeaseFields(2001_ms, "n1", "owners", "1");
    r.Ok(2002_ms, "c1.t0", "release", 1);
    r.Invoke(3_s, "c2.t0", "acquire", "tryLock(wait=5000ms, no lease, permits=1)");
    const uint64_t taken = r.LeaseFields(3001_ms, "n1", "owners", "0");
    r.Info(6_s, "c2.t0", "acquire");
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    CHECK(live.violations[0].kind == "leaked_permits");
    CHECK(live.violations[0].from_us == 3001_ms);
    CHECK(Contains(live.violations[0].events, taken));
  }
}

TEST_CASE("liveness: a latch whose counter crashed after passing it never opens",
          "[check][issue4]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Protocol("kind=countdownlatch version=current fencing=off permits=1 nodes=1");
  r.Client("c1");
  r.Client("c2");
  r.LeaseFields(100_ms, "n1", "acquired", "1");  // trySetCount(1); nobody has passed yet.
  r.Invoke(1_s, "c2.t0", "acquire", "tryLock(wait=100000ms, no lease)");  // Awaits.

  SECTION("a count nobody has begun to count down is not judged") {
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("the thread that would count it down crashes") {
    // c1 passed a latch reading 0 earlier (say it was re-created after c1 passed); it owes
    // one count-down.
    r.Invoke(2_s, "c1.t0", "acquire", "tryLock(wait=1000ms, no lease)");
    r.Ok(2001_ms, "c1.t0", "acquire", 0);
    SECTION("and counts down: fine") {
      r.Invoke(3_s, "c1.t0", "release", "unlock()");
      r.LeaseFields(3001_ms, "n1", "released", "1");
      r.Ok(3002_ms, "c1.t0", "release");
      r.Ok(3003_ms, "c2.t0", "acquire", 0);
      CHECK_FALSE(Result(r.Check(), kLiveness).violated);
    }
    SECTION("or crashes first: orphaned") {
      const uint64_t crash = r.Fault(3_s, "c1", "crash");
      const PropertyResult& live = Result(r.Check(), kLiveness);
      REQUIRE(live.violation_count == 1);
      const Violation& x = live.violations[0];
      CHECK(x.kind == "orphaned_latch");
      CHECK(x.threads == std::vector<std::string>{"c1.t0"});
      CHECK(x.from_us == 3_s);
      CHECK(x.to_us == 60_s);
      CHECK(Contains(x.events, crash));
      CHECK(x.explanation.find("stayed at 1, above the 0 count-downs still owed") !=
            std::string::npos);
    }
  }
}

TEST_CASE("liveness: with client roles, a latch count no count_down client can count down is "
          "orphaned",
          "[check][role]") {
  Recorder r;  // Ends at 60 s; B = 5 s.
  r.Protocol("kind=countdownlatch version=current fencing=off permits=2 nodes=1");
  r.Client("w1");
  r.Role("w1", "await");
  r.Client("k1");
  r.Role("k1", "count_down");
  r.Client("k2");
  r.Role("k2", "count_down");
  r.Invoke(50_ms, "w1.t0", "acquire", "lock(no lease)");  // await(), no limit: never stuck.
  r.LeaseFields(100_ms, "n1", "acquired", "2");            // trySetCount(2).
  // k1 counts down once and stops.
  r.Invoke(1_s, "k1.t0", "release", "unlock()");
  r.LeaseFields(1001_ms, "n1", "owners", "1");
  r.Ok(1002_ms, "k1.t0", "release");
  r.Done(1002_ms, "k1.t0");

  SECTION("k2 counts down too: the latch opens, nothing is orphaned") {
    r.Invoke(2_s, "k2.t0", "release", "unlock()");
    r.LeaseFields(2001_ms, "n1", "released", "1");
    r.Ok(2002_ms, "k2.t0", "release");
    r.Done(2002_ms, "k2.t0");
    r.Ok(2003_ms, "w1.t0", "acquire", 0);
    const Verdict v = r.Check();
    CHECK_FALSE(Result(v, kLiveness).violated);
    CHECK_FALSE(Result(v, kLatch).violated);
  }
  SECTION("k2 crashes before counting down: orphaned from its crash") {
    const uint64_t crash = r.Fault(1500_ms, "k2", "crash");
    const Verdict v = r.Check();
    CHECK_FALSE(Result(v, kLatch).violated);  // Nobody passed early: they wait for ever.
    const PropertyResult& live = Result(v, kLiveness);
    REQUIRE(live.violation_count == 1);
    const Violation& x = live.violations[0];
    CHECK(x.kind == "orphaned_latch");
    CHECK(x.from_us == 1500_ms);
    CHECK(x.to_us == 60_s);
    CHECK(Contains(x.events, crash));
    CHECK(x.threads == std::vector<std::string>{"k2", "w1.t0"});  // Then the awaiter kept out.
    CHECK(x.explanation.find("stayed at 1 from 1.500 s until the run ended") != std::string::npos);
    CHECK(x.explanation.find("k2, the last count_down client still counting, crashed at 1.500 s") !=
          std::string::npos);
    CHECK(x.explanation.find("Its count_down clients: k1, k2.") != std::string::npos);
  }
  SECTION("k2 crashes and restarts within the bound: it can still count down") {
    r.Fault(1500_ms, "k2", "crash");
    r.Fault(4_s, "k2", "restart");
    r.Client("k2", 4_s, "uuid-k2-again");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
  SECTION("k2 stops without counting down: orphaned from its stop") {
    const uint64_t done = r.Done(1500_ms, "k2.t0");
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    const Violation& x = live.violations[0];
    CHECK(x.kind == "orphaned_latch");
    CHECK(x.from_us == 1500_ms);
    CHECK(Contains(x.events, done));
    CHECK(x.explanation.find("k2.t0, the last thread still counting down, stopped at 1.500 s") !=
          std::string::npos);
  }
  SECTION("an awaiter's crash takes no count-down away") {
    r.Fault(1500_ms, "w1", "crash");
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
}

TEST_CASE("liveness: with client roles but no count_down client, the count is orphaned at once",
          "[check][role]") {
  Recorder r;
  r.Protocol("kind=countdownlatch version=current fencing=off permits=1 nodes=1");
  r.Client("w1");
  r.Role("w1", "await");
  r.Invoke(50_ms, "w1.t0", "acquire", "lock(no lease)");
  const uint64_t set = r.LeaseFields(100_ms, "n1", "acquired", "1");
  const PropertyResult& live = Result(r.Check(), kLiveness);
  REQUIRE(live.violation_count == 1);
  const Violation& x = live.violations[0];
  CHECK(x.kind == "orphaned_latch");
  CHECK(x.from_us == 100_ms);
  CHECK(Contains(x.events, set));
  CHECK(x.explanation.find("The run has no count_down client.") != std::string::npos);
}

TEST_CASE("liveness: a lock nobody holds must be obtainable while a majority of nodes is up",
          "[check][issue4]") {
  Recorder r(/*end_us=*/100_s);  // B = 5 s; the watchdog's lease, 30 s, is the longest.
  uint64_t down = 0;
  uint64_t first = 0;
  // The history up to the end; `n2_down_too` adds a second crash at 3 s (events are appended
  // in time order, so each section builds its own).
  auto build = [&](bool n2_down_too) {
    r.Protocol("kind=multilock version=current fencing=off permits=1 nodes=3");
    r.Client("c1");
    r.Client("c2");
    r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=10000ms, no lease)");
    for (const char* node : {"n1", "n2", "n3"}) r.Lease(1001_ms, node, "acquired", "c1.t0");
    r.Ok(1002_ms, "c1.t0", "acquire");
    r.Invoke(2_s, "c1.t0", "release", "unlock()");
    for (const char* node : {"n1", "n2", "n3"}) r.Lease(2001_ms, node, "released", "c1.t0");
    r.Ok(2002_ms, "c1.t0", "release", 3);
    down = r.Fault(3_s, "n3", "crash");
    if (n2_down_too) r.Fault(3_s, "n2", "crash");
    // From 4 s on, c2 tries again and again and never gets all three members.
    for (int64_t t = 4_s; t < 85_s; t += 11_s) {
      const uint64_t seq = r.Invoke(t, "c2.t0", "acquire", "tryLock(wait=10000ms, no lease)");
      if (first == 0) first = seq;
      r.Fail(t + 10_s, "c2.t0", "acquire");
    }
  };

  SECTION("one node down of three") {
    build(false);
    const PropertyResult& live = Result(r.Check(), kLiveness);
    REQUIRE(live.violation_count == 1);
    const Violation& x = live.violations[0];
    CHECK(x.kind == "unobtainable");
    CHECK(x.threads == std::vector<std::string>{"c2.t0"});
    CHECK(x.from_us == 4_s);
    CHECK(x.to_us == 100_s);
    CHECK(Contains(x.events, first));
    CHECK(Contains(x.events, down));
    CHECK(x.explanation.find("No acquisition succeeded by 39.000 s") != std::string::npos);
    CHECK(x.explanation.find("multilock needs every one of its 3 nodes") != std::string::npos);
    CHECK(x.explanation.find("n3 down from 3.000 s to the end") != std::string::npos);
  }
  SECTION("two nodes down of three: a majority is down, nothing is owed") {
    build(true);
    CHECK_FALSE(Result(r.Check(), kLiveness).violated);
  }
}

TEST_CASE("latch: an await returns only once the count is counted down",
          "[check][issue4]") {
  Recorder r;
  r.Protocol("kind=countdownlatch version=current fencing=off permits=2 nodes=1");
  r.Client("c1");
  r.Client("c2");
  r.Client("c3");
  // c3's await read count 0 before the latch existed; its ok arrives after the latch is set.
  r.Invoke(50_ms, "c3.t0", "acquire", "tryLock(wait=1000ms, no lease)");
  const uint64_t set = r.LeaseFields(100_ms, "n1", "acquired", "2");
  r.Ok(101_ms, "c3.t0", "acquire", 0);
  const uint64_t awaits = r.Invoke(1_s, "c1.t0", "acquire", "tryLock(wait=10000ms, no lease)");

  SECTION("after two count-downs it may return") {
    r.Invoke(2_s, "c3.t0", "release", "unlock()");
    r.Ok(2001_ms, "c3.t0", "release");
    r.Invoke(3_s, "c2.t0", "release", "unlock()");
    r.LeaseFields(3001_ms, "n1", "released", "1");
    r.Ok(3002_ms, "c2.t0", "release");
    r.Ok(3003_ms, "c1.t0", "acquire", 0);
    const Verdict v = r.Check();
    CHECK(Result(v, kLatch).applicable);
    CHECK_FALSE(Result(v, kLatch).violated);
    CHECK_FALSE(Result(v, kSemaphore).applicable);  // The latch has a property of its own.
    CHECK_FALSE(Result(v, kMutualExclusion).applicable);  // An open latch lets everyone through.
    CHECK_FALSE(Result(v, kResourceExclusion).applicable);
  }
  SECTION("judged by the read that let it return, when the history has it") {
    r.Invoke(2_s, "c2.t0", "acquire", "tryLock(wait=10000ms, no lease)");
    r.ExecNoThread(2001_ms, "n1", "c2", "get_count", "\"2\"");
    r.LeaseFields(2500_ms, "n1", "lost", "2");  // The node restarted empty.
    r.ExecNoThread(2600_ms, "n1", "c2", "get_count", "(nil)");
    r.Ok(2601_ms, "c2.t0", "acquire", 0);
    const PropertyResult& sem = Result(r.Check(), kLatch);
    REQUIRE(sem.violation_count == 1);
    CHECK(sem.violations[0].threads == std::vector<std::string>{"c2.t0"});
    CHECK(sem.violations[0].explanation.find("The latch key was lost on n1 at 2.500 s") !=
          std::string::npos);
  }
  SECTION("the count expired: returning is opening early") {
    r.Invoke(2_s, "c3.t0", "release", "unlock()");
    r.Ok(2001_ms, "c3.t0", "release");
    const uint64_t expired = r.LeaseFields(2500_ms, "n1", "expired", "1");
    const uint64_t ok = r.Ok(2501_ms, "c1.t0", "acquire", 0);
    const PropertyResult& sem = Result(r.Check(), kLatch);
    REQUIRE(sem.violation_count == 1);
    const Violation& x = sem.violations[0];
    CHECK(x.kind == "opened_early");
    CHECK(x.threads == std::vector<std::string>{"c1.t0"});
    CHECK(x.from_us == 2501_ms);
    CHECK(x.events == std::vector<uint64_t>{set, awaits, expired, ok});
    CHECK(x.explanation.find("created on n1 at 0.100 s with count 2 and only 1 countDown") !=
          std::string::npos);
    CHECK(x.explanation.find("The latch key expired on n1 at 2.500 s") != std::string::npos);
  }
}

}  // namespace
}  // namespace lockstep::check
