// Establishes that the three reports say what the history and the Verdict say, in formats their
// readers accept: trace.json parses as JSON with balanced async slices, nesting X slices, fault
// and violation instants and a holder counter that reaches 2 on a split brain; report.html has
// a lane per thread and node and marks the violation at the Verdict's interval; summary.md has
// the verdict table; all three are byte-identical when rendered twice; and a long history stays
// within the stated size bounds.
#include "reports/report.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "check/check.h"
#include "check/legacy.h"
#include "model/history.h"
#include "model/scenario_toml.h"
#include "reports/text.h"
#include "reports/timeline.h"
#include "sim/simulation.h"

namespace lockstep::reports {
namespace {

// --- a small JSON reader: enough to hold the reports to the grammar -------------------------

struct Json {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<Json> array;
  std::vector<std::pair<std::string, Json>> object;

  const Json* Get(const std::string& key) const {
    for (const auto& [k, v] : object) {
      if (k == key) return &v;
    }
    return nullptr;
  }
  std::string Str(const std::string& key) const {
    const Json* v = Get(key);
    return v != nullptr && v->kind == Kind::kString ? v->string : "";
  }
  double Num(const std::string& key) const {
    const Json* v = Get(key);
    return v != nullptr && v->kind == Kind::kNumber ? v->number : -1;
  }
};

class JsonReader {
 public:
  explicit JsonReader(const std::string& s) : s_(s) {}
  // Throws std::runtime_error with the offset on anything JSON does not allow.
  Json ReadDocument() {
    Json v = Value();
    Space();
    if (pos_ != s_.size()) Fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void Fail(const std::string& what) {
    throw std::runtime_error(what + " at offset " + std::to_string(pos_));
  }
  void Space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r'))
      ++pos_;
  }
  bool Eat(char c) {
    Space();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void Expect(char c) {
    if (!Eat(c)) Fail(std::string("expected '") + c + "'");
  }
  Json Value() {
    Space();
    if (pos_ >= s_.size()) Fail("unexpected end");
    Json v;
    const char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      v.kind = Json::Kind::kObject;
      if (Eat('}')) return v;
      do {
        Space();
        std::string key = String();
        Expect(':');
        v.object.emplace_back(std::move(key), Value());
      } while (Eat(','));
      Expect('}');
    } else if (c == '[') {
      ++pos_;
      v.kind = Json::Kind::kArray;
      if (Eat(']')) return v;
      do {
        v.array.push_back(Value());
      } while (Eat(','));
      Expect(']');
    } else if (c == '"') {
      v.kind = Json::Kind::kString;
      v.string = String();
    } else if (s_.compare(pos_, 4, "true") == 0 || s_.compare(pos_, 5, "false") == 0) {
      v.kind = Json::Kind::kBool;
      v.boolean = s_[pos_] == 't';
      pos_ += v.boolean ? 4 : 5;
    } else if (s_.compare(pos_, 4, "null") == 0) {
      pos_ += 4;
    } else {
      v.kind = Json::Kind::kNumber;
      const size_t start = pos_;
      if (s_[pos_] == '-') ++pos_;
      if (pos_ >= s_.size() || !isdigit(static_cast<unsigned char>(s_[pos_]))) Fail("bad value");
      while (pos_ < s_.size() &&
             (isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.' || s_[pos_] == 'e' ||
              s_[pos_] == 'E' || s_[pos_] == '+' || s_[pos_] == '-')) {
        ++pos_;
      }
      v.number = std::strtod(s_.substr(start, pos_ - start).c_str(), nullptr);
    }
    return v;
  }
  std::string String() {
    if (pos_ >= s_.size() || s_[pos_] != '"') Fail("expected a string");
    ++pos_;
    std::string out;
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) Fail("control character in a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) Fail("bad escape");
      const char e = s_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out.push_back(e);
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'u':
          if (pos_ + 4 > s_.size()) Fail("bad \\u escape");
          out.push_back(static_cast<char>(std::strtol(s_.substr(pos_, 4).c_str(), nullptr, 16)));
          pos_ += 4;
          break;
        default:
          Fail("bad escape");
      }
    }
    Fail("unterminated string");
  }

  const std::string& s_;
  size_t pos_ = 0;
};

// --- histories ------------------------------------------------------------------------------

constexpr int64_t kStartMs = 1'767'225'600'000;

struct Recorder {
  History h;
  void Add(int64_t t_us, Event::Type type, const std::string& process, int thread,
           const std::string& op, const std::string& detail = "", const std::string& peer = "",
           std::optional<int64_t> value = std::nullopt, int64_t skew_ms = 0) {
    Event e;
    e.t_us = t_us;
    e.type = type;
    e.process = process;
    e.thread = thread;
    e.op = op;
    if (type != Event::Type::kNote && type != Event::Type::kFault &&
        type != Event::Type::kMessage) {
      e.lock = "lock";
    }
    e.peer = peer;
    if (type != Event::Type::kNote && type != Event::Type::kFault) {
      e.local_ms = kStartMs + t_us / 1000 + skew_ms;
    }
    if (value) {
      e.has_value = true;
      e.value = *value;
    }
    e.detail = detail;
    h.Append(std::move(e));
  }
};

using T = Event::Type;

// Two clients; c1 takes a 1 s lease, pauses for 3 s inside its critical section, its key
// expires, c2 takes the lock: both believe they hold it from 1.101 s to 1.5 s.
History SplitBrainHistory() {
  Recorder r;
  r.Add(0, T::kNote, "sim", -1, "run", "end_us=10000000 seed=7 scenario=hand-made");
  r.Add(0, T::kNote, "sim", -1, "lease_default", "", "", 30'000'000);
  r.Add(0, T::kNote, "c1", -1, "client", "uuid=u1");
  r.Add(0, T::kNote, "c2", -1, "client", "uuid=u2");
  r.Add(100, T::kInvoke, "c1", 0, "acquire", "tryLock(wait=5000ms, lease=1000ms)", "", 1000);
  r.Add(600, T::kExec, "n1", -1, "acquire", "(nil)", "c1", 1, 5);
  r.Add(600, T::kLease, "n1", -1, "acquired", "u1:1", "", std::nullopt, 5);
  r.Add(1100, T::kOk, "c1", 0, "acquire", "acquired");
  r.Add(1100, T::kResource, "c1", 0, "enter");
  r.Add(200'000, T::kFault, "c1", -1, "pause", "GC pause for 3000.000ms", "", 3000);
  r.Add(1'000'600, T::kLease, "n1", -1, "expired", "u1:1", "", std::nullopt, 5);
  r.Add(1'100'000, T::kInvoke, "c2", 0, "acquire", "tryLock(wait=5000ms, lease=1000ms)", "", 1000);
  r.Add(1'100'500, T::kExec, "n1", -1, "acquire", "(nil)", "c2", 1, 5);
  r.Add(1'100'500, T::kLease, "n1", -1, "acquired", "u2:1", "", std::nullopt, 5);
  r.Add(1'101'000, T::kOk, "c2", 0, "acquire", "acquired");
  r.Add(1'101'000, T::kResource, "c2", 0, "enter");
  r.Add(1'500'000, T::kResource, "c2", 0, "exit");
  r.Add(1'500'000, T::kInvoke, "c2", 0, "release", "unlock()");
  r.Add(1'500'500, T::kExec, "n1", -1, "unlock", "1", "c2", 2, 5);
  r.Add(1'500'500, T::kLease, "n1", -1, "released", "u2:1", "", std::nullopt, 5);
  r.Add(1'501'000, T::kOk, "c2", 0, "release", "released", "", 1);
  r.Add(3'200'000, T::kFault, "c1", -1, "resume", "resumed");
  r.Add(3'200'000, T::kResource, "c1", 0, "exit");
  r.Add(3'200'000, T::kInvoke, "c1", 0, "release", "unlock()");
  r.Add(3'200'500, T::kExec, "n1", -1, "unlock", "(nil)", "c1", 2, 5);
  r.Add(3'201'000, T::kFail, "c1", 0, "release", "IllegalMonitorStateException");
  r.Add(10'000'000, T::kNote, "sim", -1, "end");
  return std::move(r.h);
}

ReportMeta HandMeta() {
  ReportMeta meta;
  meta.scenario_name = "hand-made";
  meta.seed = 7;
  meta.version = "test";
  meta.reproduce = "lockstep run hand-made.toml --seed 7";
  meta.expect = std::map<std::string, Expectation>{{"mutual_exclusion", Expectation::kViolated}};
  return meta;
}

struct Rendered {
  Timeline timeline;
  check::Verdict verdict;
  std::string html, trace, summary;
};

// The text events as the typed History the checkers read.
history::History Typed(const History& h) {
  history::History typed;
  for (const Event& e : h.events()) {
    history::TextEvent t;
    t.t_us = e.t_us;
    t.type = static_cast<history::EventType>(e.type);
    t.process = e.process;
    t.thread = e.thread;
    t.op = e.op;
    t.lock = e.lock;
    t.peer = e.peer;
    t.local_ms = e.local_ms;
    t.has_value = e.has_value;
    t.value = e.value;
    t.detail = e.detail;
    typed.Append(t);
  }
  return typed;
}

Rendered RenderAll(const History& h, const ReportMeta& meta) {
  Rendered r;
  r.verdict = check::CheckHistory(Typed(h), check::CheckOptions{});
  r.timeline = BuildTimeline(h, meta.timeline);
  r.html = RenderHtml(r.timeline, r.verdict, meta);
  r.trace = RenderTrace(r.timeline, r.verdict, meta);
  r.summary = RenderSummary(r.timeline, r.verdict, meta);
  return r;
}

std::vector<const Json*> Events(const Json& doc) {
  std::vector<const Json*> out;
  const Json* list = doc.Get("traceEvents");
  REQUIRE(list != nullptr);
  REQUIRE(list->kind == Json::Kind::kArray);
  for (const Json& e : list->array) out.push_back(&e);
  return out;
}

// --- trace.json -------------------------------------------------------------------------

void CheckTraceGrammar(const std::string& trace) {
  const Json doc = JsonReader(trace).ReadDocument();
  REQUIRE(doc.kind == Json::Kind::kObject);
  const auto events = Events(doc);
  REQUIRE(!events.empty());

  std::map<std::pair<int, int>, std::string> named_threads;
  std::set<int> named_processes;
  std::map<std::string, int> async_balance;  // cat/id -> open count
  std::map<double, int> flow_ends;           // id -> s minus f
  std::map<std::pair<int, int>, std::vector<std::pair<double, double>>> x_by_track;
  for (const Json* e : events) {
    const std::string ph = e->Str("ph");
    REQUIRE(!ph.empty());
    REQUIRE(!e->Str("name").empty());
    const int pid = static_cast<int>(e->Num("pid"));
    const int tid = static_cast<int>(e->Num("tid"));
    if (ph == "M") {
      if (e->Str("name") == "process_name") named_processes.insert(pid);
      if (e->Str("name") == "thread_name") named_threads[{pid, tid}] = "named";
      continue;
    }
    REQUIRE(e->Num("ts") >= 0);
    CHECK(named_processes.count(pid) == 1);
    if (ph == "X") {
      REQUIRE(e->Num("dur") >= 0);
      CHECK(named_threads.count({pid, tid}) == 1);
      x_by_track[{pid, tid}].push_back({e->Num("ts"), e->Num("ts") + e->Num("dur")});
    } else if (ph == "b" || ph == "e") {
      const Json* id = e->Get("id");
      REQUIRE(id != nullptr);
      const std::string key =
          e->Str("cat") + "/" + std::to_string(static_cast<long long>(id->number));
      async_balance[key] += ph == "b" ? 1 : -1;
      CHECK(async_balance[key] >= 0);  // every e after its b
    } else if (ph == "s" || ph == "f") {
      REQUIRE(e->Get("id") != nullptr);
      flow_ends[e->Num("id")] += ph == "s" ? 1 : -1;
      if (ph == "f") CHECK(e->Str("bp") == "e");
    } else if (ph == "i") {
      const std::string scope = e->Str("s");
      CHECK((scope == "g" || scope == "p" || scope == "t"));
    } else {
      CHECK(ph == "C");
    }
  }
  for (const auto& [key, open] : async_balance) {
    INFO(key);
    CHECK(open == 0);
  }
  for (const auto& [id, open] : flow_ends) CHECK(open == 0);
  // X slices on one track nest: each one ends inside every slice open when it starts.
  for (auto& [track, slices] : x_by_track) {
    std::sort(slices.begin(), slices.end(), [](auto a, auto b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<double> open;
    for (const auto& [from, to] : slices) {
      while (!open.empty() && open.back() <= from) open.pop_back();
      INFO("pid " << track.first << " tid " << track.second << " slice " << from << ".." << to);
      if (!open.empty()) REQUIRE(to <= open.back());
      open.push_back(to);
    }
  }
}

int MaxCounter(const std::string& trace, const std::string& name) {
  const Json doc = JsonReader(trace).ReadDocument();
  int max = -1;
  for (const Json* e : Events(doc)) {
    if (e->Str("ph") != "C" || e->Str("name") != name) continue;
    const Json* args = e->Get("args");
    REQUIRE(args != nullptr);
    max = std::max(max, static_cast<int>(args->Num("holders")));
  }
  return max;
}

size_t CountInstants(const std::string& trace, const std::string& cat) {
  const Json doc = JsonReader(trace).ReadDocument();
  size_t n = 0;
  for (const Json* e : Events(doc)) n += e->Str("ph") == "i" && e->Str("cat") == cat;
  return n;
}

TEST_CASE("hand-made split brain: the checkers see it (the premise of the report tests)",
          "[reports]") {
  const Rendered r = RenderAll(SplitBrainHistory(), HandMeta());
  const check::Violation* v = LeadViolation(r.verdict);
  REQUIRE(v != nullptr);
  CHECK(v->property == "mutual_exclusion");
  CHECK(v->from_us == 1'101'000);
  CHECK(v->to_us == 1'500'000);
}

TEST_CASE("trace.json: valid JSON, balanced async slices, nesting X slices, matched flows",
          "[reports][trace]") {
  const Rendered r = RenderAll(SplitBrainHistory(), HandMeta());
  CheckTraceGrammar(r.trace);
}

TEST_CASE("trace.json: fault and violation instants, and the holder counter reaches 2",
          "[reports][trace]") {
  const Rendered r = RenderAll(SplitBrainHistory(), HandMeta());
  CHECK(CountInstants(r.trace, "fault") >= 2);  // the pause and its end
  CHECK(CountInstants(r.trace, "violation") >= 1);
  CHECK(MaxCounter(r.trace, "holders(lock)") == 2);
  // The violation instant sits at the Verdict's start, and says its interval.
  const Json doc = JsonReader(r.trace).ReadDocument();
  bool found = false;
  for (const Json* e : Events(doc)) {
    if (e->Str("ph") != "i" || e->Str("cat") != "violation") continue;
    const Json* args = e->Get("args");
    REQUIRE(args != nullptr);
    if (args->Str("property") != "mutual_exclusion") continue;
    CHECK(e->Num("ts") == 1'101'000);
    CHECK(args->Num("from_us") == 1'101'000);
    CHECK(args->Num("to_us") == 1'500'000);
    found = true;
  }
  CHECK(found);
}

TEST_CASE("trace.json: flows run from the client thread to the node's command",
          "[reports][trace]") {
  const Rendered r = RenderAll(SplitBrainHistory(), HandMeta());
  const Json doc = JsonReader(r.trace).ReadDocument();
  std::map<double, const Json*> starts;
  int ends = 0;
  for (const Json* e : Events(doc)) {
    if (e->Str("ph") == "s") starts[e->Num("id")] = e;
  }
  for (const Json* e : Events(doc)) {
    if (e->Str("ph") != "f") continue;
    ++ends;
    REQUIRE(starts.count(e->Num("id")) == 1);
    CHECK(starts[e->Num("id")]->Num("ts") <= e->Num("ts"));
    CHECK(starts[e->Num("id")]->Num("pid") != e->Num("pid"));
  }
  CHECK(ends == 4);  // one per exec event
}

TEST_CASE("trace.json: a healthy history never counts two holders", "[reports][trace]") {
  Recorder rec;
  rec.Add(0, T::kNote, "sim", -1, "run", "end_us=1000000 seed=1 scenario=calm");
  rec.Add(0, T::kNote, "c1", -1, "client", "uuid=u1");
  for (int i = 0; i < 5; ++i) {
    const int64_t t = 1000 + i * 100'000;
    rec.Add(t, T::kInvoke, "c1", 0, "acquire", "tryLock(wait=5000ms, no lease)");
    rec.Add(t + 500, T::kExec, "n1", -1, "acquire", "(nil)", "c1", 1);
    rec.Add(t + 500, T::kLease, "n1", -1, "acquired", "u1:1");
    rec.Add(t + 1000, T::kOk, "c1", 0, "acquire", "acquired");
    rec.Add(t + 50'000, T::kInvoke, "c1", 0, "release", "unlock()");
    rec.Add(t + 50'500, T::kExec, "n1", -1, "unlock", "1", "c1", 2);
    rec.Add(t + 50'500, T::kLease, "n1", -1, "released", "u1:1");
    rec.Add(t + 51'000, T::kOk, "c1", 0, "release", "released", "", 1);
  }
  const Rendered r = RenderAll(rec.h, HandMeta());
  CheckTraceGrammar(r.trace);
  CHECK(MaxCounter(r.trace, "holders(lock)") == 1);
  CHECK(CountInstants(r.trace, "violation") == 0);
}

// --- report.html and summary.md --------------------------------------------------------------

TEST_CASE("report.html: a lane per thread and node, the violation at the Verdict's interval",
          "[reports][html]") {
  const Rendered r = RenderAll(SplitBrainHistory(), HandMeta());
  for (const char* lane : {"c1.t0", "c2.t0"}) {
    CHECK(r.html.find(std::string("data-lane=\"") + lane + "\" data-kind=\"thread\"") !=
          std::string::npos);
  }
  CHECK(r.html.find("data-lane=\"n1\" data-kind=\"node\"") != std::string::npos);
  const size_t at = r.html.find("id=\"violation-0\"");
  REQUIRE(at != std::string::npos);
  const std::string tag = r.html.substr(at, r.html.find('>', at) - at);
  CHECK(tag.find("data-property=\"mutual_exclusion\"") != std::string::npos);
  CHECK(tag.find("data-from-us=\"1101000\"") != std::string::npos);
  CHECK(tag.find("data-to-us=\"1500000\"") != std::string::npos);
  // The explanation is there, and the page needs nothing from the network.
  CHECK(r.html.find(HtmlEscape(LeadViolation(r.verdict)->explanation)) != std::string::npos);
  CHECK(r.html.find("<link") == std::string::npos);
  CHECK(r.html.find("src=") == std::string::npos);
  CHECK(r.html.find("https://") == std::string::npos);
}

TEST_CASE("report.html: the clock lane shows a skewed node's offset", "[reports][html]") {
  const Rendered r = RenderAll(SplitBrainHistory(), HandMeta());
  // n1 runs 5 ms ahead; c1 and c2 agree with true time, so the estimated start is theirs.
  bool found = false;
  for (const ClockSeries& c : r.timeline.clocks) {
    if (c.process != "n1") continue;
    found = true;
    CHECK(c.min_offset_us == 5000);
    CHECK(c.max_offset_us == 5000);
  }
  CHECK(found);
  CHECK(r.html.find("n1 +5..+5 ms") != std::string::npos);
}

TEST_CASE("summary.md: verdict table, the violation, figures and a Mermaid diagram",
          "[reports][markdown]") {
  const Rendered r = RenderAll(SplitBrainHistory(), HandMeta());
  CHECK(r.summary.find("| mutual_exclusion | **violated** | violated | 1 |") != std::string::npos);
  CHECK(r.summary.find(LeadViolation(r.verdict)->explanation) != std::string::npos);
  CHECK(r.summary.find("`" + SplitBrainHistory().HashHex() + "`") != std::string::npos);
  CHECK(r.summary.find("`lockstep run hand-made.toml --seed 7`") != std::string::npos);
  CHECK(r.summary.find("```mermaid\nsequenceDiagram\n") != std::string::npos);
  CHECK(r.summary.find("Note over n1: key of c1.t0 expired (1.001 s)") != std::string::npos);
}

TEST_CASE("reports are byte-identical when rendered twice", "[reports]") {
  const Rendered a = RenderAll(SplitBrainHistory(), HandMeta());
  const Rendered b = RenderAll(SplitBrainHistory(), HandMeta());
  CHECK(a.html == b.html);
  CHECK(a.trace == b.trace);
  CHECK(a.summary == b.summary);
}

// --- the simulator's own violating scenario ----------------------------------------------------

TEST_CASE("gc-pause-explicit-lease: the reports of a simulated split brain", "[reports][sim]") {
  ScenarioError error;
  auto scenario =
      LoadScenarioFile(LOCKSTEP_SOURCE_DIR "/scenarios/gc-pause-explicit-lease.toml", &error);
  REQUIRE(scenario);
  std::string why;
  auto sim = sim::Simulation::Create(*scenario, LOCKSTEP_SOURCE_DIR "/lua", &why);
  REQUIRE(sim);
  check::LegacyHistorySink kept(&sim->recorder().names());
  sim->recorder().AddSink(&kept);
  sim->Run();
  ReportMeta meta;
  DescribeScenario(*scenario, &meta);
  meta.parameters = sim->derived();
  const Rendered r = RenderAll(kept.history(), meta);
  REQUIRE(LeadViolation(r.verdict) != nullptr);
  CheckTraceGrammar(r.trace);
  CHECK(MaxCounter(r.trace, "holders(lock)") >= 2);
  CHECK(CountInstants(r.trace, "fault") > 0);
  CHECK(CountInstants(r.trace, "violation") > 0);
  const check::Violation& v = *LeadViolation(r.verdict);
  CHECK(r.html.find("id=\"violation-0\" data-property=\"" + v.property + "\" data-kind=\"" +
                    v.kind + "\" data-from-us=\"" + std::to_string(v.from_us) + "\" data-to-us=\"" +
                    std::to_string(v.to_us) + "\"") != std::string::npos);
}

TEST_CASE("report.html: past kMaxThreadLanes threads, the violation's threads keep their lanes",
          "[reports][html]") {
  Recorder rec;
  rec.Add(0, T::kNote, "sim", -1, "run", "end_us=100000000 seed=1 scenario=many");
  for (int c = 1; c <= 60; ++c) {
    rec.Add(0, T::kNote, "c" + std::to_string(c), -1, "client", "uuid=u" + std::to_string(c));
  }
  int64_t t = 1000;
  for (int c = 1; c <= 58; ++c, t += 100'000) {
    const std::string name = "c" + std::to_string(c);
    rec.Add(t, T::kInvoke, name, 0, "acquire", "tryLock(wait=5000ms, no lease)");
    rec.Add(t + 1000, T::kOk, name, 0, "acquire", "acquired");
    rec.Add(t + 50'000, T::kInvoke, name, 0, "release", "unlock()");
    rec.Add(t + 51'000, T::kOk, name, 0, "release", "released", "", 1);
  }
  // c59 and c60 both believe they hold the lock.
  rec.Add(t, T::kInvoke, "c59", 0, "acquire", "tryLock(wait=5000ms, no lease)");
  rec.Add(t + 1000, T::kOk, "c59", 0, "acquire", "acquired");
  rec.Add(t + 2000, T::kInvoke, "c60", 0, "acquire", "tryLock(wait=5000ms, no lease)");
  rec.Add(t + 3000, T::kOk, "c60", 0, "acquire", "acquired");
  rec.Add(t + 50'000, T::kInvoke, "c59", 0, "release", "unlock()");
  rec.Add(t + 50'000, T::kInvoke, "c60", 0, "release", "unlock()");
  const Rendered r = RenderAll(rec.h, HandMeta());
  REQUIRE(LeadViolation(r.verdict) != nullptr);
  CHECK(r.html.find("data-lane=\"c59.t0\" data-kind=\"thread\"") != std::string::npos);
  CHECK(r.html.find("data-lane=\"c60.t0\" data-kind=\"thread\"") != std::string::npos);
  CHECK(r.html.find("(12 more threads not drawn") != std::string::npos);
  size_t lanes = 0;
  for (size_t at = 0; (at = r.html.find("data-kind=\"thread\"", at)) != std::string::npos; ++at) {
    ++lanes;
  }
  CHECK(lanes == 48);
  CheckTraceGrammar(r.trace);
}

TEST_CASE("timeline: readers may share a read-write lock, a writer with a reader may not",
          "[reports][timeline]") {
  Recorder rec;
  rec.Add(0, T::kNote, "sim", -1, "run", "end_us=1000000 seed=1 scenario=rw");
  rec.Add(0, T::kNote, "sim", -1, "protocol", "kind=rwlock version=current fencing=off permits=1");
  for (int c = 1; c <= 3; ++c) {
    rec.Add(0, T::kNote, "c" + std::to_string(c), -1, "client", "uuid=u" + std::to_string(c));
  }
  rec.Add(1000, T::kInvoke, "c1", 0, "acquire_read", "tryLock(wait=5000ms, no lease)");
  rec.Add(2000, T::kOk, "c1", 0, "acquire_read", "acquired");
  rec.Add(3000, T::kInvoke, "c2", 0, "acquire_read", "tryLock(wait=5000ms, no lease)");
  rec.Add(4000, T::kOk, "c2", 0, "acquire_read", "acquired");  // two readers: fine
  rec.Add(5000, T::kInvoke, "c3", 0, "acquire", "tryLock(wait=5000ms, no lease)");
  rec.Add(6000, T::kOk, "c3", 0, "acquire", "acquired");  // a writer with readers: not fine
  rec.Add(7000, T::kInvoke, "c3", 0, "release", "unlock()");
  rec.Add(8000, T::kInvoke, "c1", 0, "release_read", "unlock()");
  rec.Add(9000, T::kInvoke, "c2", 0, "release_read", "unlock()");
  const Timeline tl = BuildTimeline(rec.h, TimelineOptions{});
  CHECK(tl.protocol_kind == "rwlock");
  std::vector<std::pair<int, bool>> counts;
  for (const HolderCount& h : tl.holders) counts.push_back({h.count, h.conflict});
  const std::vector<std::pair<int, bool>> want = {{1, false}, {2, false}, {3, true},
                                                  {2, false}, {1, false}, {0, false}};
  CHECK(counts == want);
  REQUIRE(tl.threads.size() == 3);
  REQUIRE(tl.threads[0].holds.size() == 1);
  CHECK(tl.threads[0].holds[0].read);
  CHECK(tl.threads[0].holds[0].to_us == 8000);
  CHECK_FALSE(tl.threads[2].holds[0].read);
}

// --- a long history stays within the stated bounds ----------------------------------------

TEST_CASE("a long history is summarised within the stated bounds", "[reports][size]") {
  // 8 threads taking turns for 300k events: past both detail budgets.
  Recorder rec;
  rec.Add(0, T::kNote, "sim", -1, "run", "end_us=3600000000 seed=1 scenario=long");
  for (int c = 1; c <= 8; ++c) {
    rec.Add(0, T::kNote, "c" + std::to_string(c), -1, "client", "uuid=u" + std::to_string(c));
  }
  int64_t t = 1000;
  int i = 0;
  while (rec.h.size() < 300'000) {
    const std::string c = "c" + std::to_string(i % 8 + 1);
    const std::string field = "u" + std::to_string(i % 8 + 1) + ":1";
    rec.Add(t, T::kInvoke, c, 0, "acquire", "tryLock(wait=5000ms, no lease)");
    rec.Add(t + 500, T::kExec, "n1", -1, "acquire", "(nil)", c, 1);
    rec.Add(t + 500, T::kLease, "n1", -1, "acquired", field);
    rec.Add(t + 1000, T::kOk, c, 0, "acquire", "acquired");
    rec.Add(t + 1000, T::kResource, c, 0, "enter");
    rec.Add(t + 20'000, T::kResource, c, 0, "exit");
    rec.Add(t + 20'000, T::kInvoke, c, 0, "release", "unlock()");
    rec.Add(t + 20'500, T::kExec, "n1", -1, "unlock", "1", c, 2);
    rec.Add(t + 20'500, T::kLease, "n1", -1, "released", field);
    rec.Add(t + 21'000, T::kOk, c, 0, "release", "released", "", 1);
    t += 40'000;
    ++i;
  }
  rec.Add(3'600'000'000, T::kNote, "sim", -1, "end");
  const Rendered r = RenderAll(rec.h, HandMeta());
  CHECK(r.html.size() < 4u << 20);
  CHECK(r.html.find("id=\"summarised\"") != std::string::npos);
  const Json doc = JsonReader(r.trace).ReadDocument();
  CHECK(Events(doc).size() <= kTraceDetailEvents + 10'000);
  CHECK(r.trace.size() < 80u << 20);
  const Json* other = doc.Get("otherData");
  REQUIRE(other != nullptr);
  REQUIRE(other->Get("summarised") != nullptr);
  CHECK(other->Get("summarised")->boolean);
  CHECK(r.summary.size() < 4096);
}

}  // namespace
}  // namespace lockstep::reports
