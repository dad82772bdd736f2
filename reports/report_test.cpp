// Establishes that the three reports say what the history and the Verdict say, in formats their
// readers accept: trace.json parses as JSON with balanced async slices, nesting X slices, fault
// and violation instants and a holder counter that reaches 2 on a split brain; report.html has
// a lane per thread and node and marks the violation at the Verdict's interval; summary.md has
// the verdict table; all three are byte-identical when rendered twice; a long history stays
// within the stated size bounds, with full detail around a late violation and an overview and
// counters that still reach the end of the run; and the timeline builder keeps a bounded amount
// of detail however many events pass through it.
#include "reports/report.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "base/read_file.h"
#include "check/check.h"
#include "history/facts.h"
#include "history/history.h"
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

// Hand-written histories, event by event as a person writes them (history::TextEvent).
struct Recorder {
  history::History h;
  void Add(int64_t t_us, history::EventType type, const std::string& process, int thread,
           const std::string& op, const std::string& detail = "", const std::string& peer = "",
           std::optional<int64_t> value = std::nullopt, int64_t skew_ms = 0) {
    history::TextEvent e;
    e.t_us = t_us;
    e.type = type;
    e.process = process;
    e.thread = thread;
    e.op = op;
    if (type != history::EventType::kNote && type != history::EventType::kFault &&
        type != history::EventType::kMessage) {
      e.lock = "lock";
    }
    e.peer = peer;
    if (type != history::EventType::kNote && type != history::EventType::kFault) {
      e.local_ms = kStartMs + t_us / 1000 + skew_ms;
    }
    if (value) {
      e.has_value = true;
      e.value = *value;
    }
    e.detail = detail;
    h.Append(e);
  }
};

using T = history::EventType;

// Two clients; c1 takes a 1 s lease, pauses for 3 s inside its critical section, its key
// expires, c2 takes the lock: both believe they hold it from 1.101 s to 1.5 s.
history::History SplitBrainHistory() {
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

Rendered RenderAll(const history::History& h, const ReportMeta& meta) {
  Rendered r;
  r.verdict = check::CheckHistory(h, check::CheckOptions{});
  r.timeline = BuildReportTimeline(h, r.verdict, meta);
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

TEST_CASE("thread colours stay distinct past ten threads", "[reports][html]") {
  std::set<std::string> seen;
  for (size_t i = 0; i < 900; ++i) {
    INFO(i);
    CHECK(seen.insert(ThreadColour(i)).second);
  }
  CHECK(ThreadColour(0) == "#4e79a7");
  CHECK(ThreadColour(10) == "hsl(0,55%,42%)");
  CHECK(ThreadColour(11) == "hsl(137,65%,58%)");
}

// A hold of no length (acquired and released at one microsecond, as a fast run records them)
// and a fault of no length: each async slice's end still follows its begin.
TEST_CASE("trace.json: a zero-length hold or fault writes its e after its b", "[reports][trace]") {
  Recorder r;
  r.Add(0, T::kNote, "sim", -1, "run", "end_us=1000000 seed=7 scenario=hand-made");
  r.Add(0, T::kNote, "c1", -1, "client", "uuid=u1");
  r.Add(100, T::kInvoke, "c1", 0, "acquire", "tryLock(wait=5000ms, lease=1000ms)", "", 1000);
  r.Add(500, T::kExec, "n1", -1, "acquire", "(nil)", "c1", 1, 5);
  r.Add(500, T::kLease, "n1", -1, "acquired", "u1:1", "", std::nullopt, 5);
  r.Add(700, T::kOk, "c1", 0, "acquire", "acquired");
  r.Add(700, T::kInvoke, "c1", 0, "release", "unlock()");
  r.Add(700, T::kFault, "c1", -1, "pause", "pause for 0ms", "", 0);
  r.Add(700, T::kFault, "c1", -1, "resume", "resumed");
  r.Add(900, T::kExec, "n1", -1, "unlock", "1", "c1", 2, 5);
  r.Add(900, T::kLease, "n1", -1, "released", "u1:1", "", std::nullopt, 5);
  r.Add(1000, T::kOk, "c1", 0, "release", "released", "", 1);
  r.Add(1'000'000, T::kNote, "sim", -1, "end");
  const Rendered rendered = RenderAll(r.h, HandMeta());
  CheckTraceGrammar(rendered.trace);  // Every e after its b.
  CHECK(rendered.trace.find("\"holds lock\",\"cat\":\"hold\",\"ph\":\"b\",\"ts\":700") !=
        std::string::npos);
  CHECK(rendered.trace.find("\"holds lock\",\"cat\":\"hold\",\"ph\":\"e\",\"ts\":700") !=
        std::string::npos);
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

TEST_CASE("timeline: a clock's bins keep one offset until it moves, then each bin's own",
          "[reports][timeline]") {
  // n1 reads 5 ms ahead for its first two commands, then 20 ms ahead; n2 stays 5 ms ahead.
  Recorder r;
  r.Add(0, T::kNote, "sim", -1, "run", "end_us=10000000 seed=7 scenario=hand-made");
  r.Add(0, T::kNote, "c1", -1, "client", "uuid=u1");
  r.Add(1'000'000, T::kExec, "n1", -1, "get", "(nil)", "c1", std::nullopt, 5);
  r.Add(2'000'000, T::kExec, "n2", -1, "get", "(nil)", "c1", std::nullopt, 5);
  r.Add(3'000'000, T::kExec, "n1", -1, "get", "(nil)", "c1", std::nullopt, 5);
  r.Add(8'000'000, T::kExec, "n1", -1, "get", "(nil)", "c1", std::nullopt, 20);
  r.Add(9'000'000, T::kExec, "n2", -1, "get", "(nil)", "c1", std::nullopt, 5);
  r.Add(10'000'000, T::kNote, "sim", -1, "end");
  TimelineOptions options;
  options.start_unix_ms = kStartMs;
  const Timeline tl = BuildTimeline(r.h, options);
  const auto bin = [&](int64_t t_us) { return static_cast<size_t>(t_us / tl.bin_us); };
  const ClockSeries* n1 = nullptr;
  const ClockSeries* n2 = nullptr;
  for (const ClockSeries& c : tl.clocks) {
    if (c.process == "n1") n1 = &c;
    if (c.process == "n2") n2 = &c;
  }
  REQUIRE(n1 != nullptr);
  REQUIRE(n2 != nullptr);
  // n2 never moved: no bins of its own, each seen bin read as its one offset.
  REQUIRE(n2->seen.size() == kBins);
  CHECK(n2->bin_min_us.empty());
  CHECK(n2->seen[bin(2'000'000)]);
  CHECK(n2->seen[bin(9'000'000)]);
  CHECK_FALSE(n2->seen[bin(5'000'000)]);
  CHECK(n2->BinMinUs(bin(9'000'000)) == 5000);
  CHECK(n2->BinMaxUs(bin(9'000'000)) == 5000);
  // n1 moved at 8 s: the bins seen before read the first offset, the last one the new one.
  REQUIRE(n1->bin_min_us.size() == kBins);
  CHECK(n1->min_offset_us == 5000);
  CHECK(n1->max_offset_us == 20000);
  CHECK(n1->BinMinUs(bin(1'000'000)) == 5000);
  CHECK(n1->BinMaxUs(bin(3'000'000)) == 5000);
  CHECK(n1->BinMinUs(bin(8'000'000)) == 20000);
  CHECK(n1->BinMaxUs(bin(8'000'000)) == 20000);
  CHECK(n1->BinMinUs(bin(5'000'000)) == 0);  // Not seen there.
  CHECK_FALSE(n1->seen[bin(5'000'000)]);
}

TEST_CASE("report.html: a server on the machine's real clock is measured from its clock_base",
          "[reports][html]") {
  // A live replay: the clients' clocks start at the scenario's date, the server's at today's
  // (months later), 5 ms ahead of the base its clock_base note gives.
  constexpr int64_t kMonthsMs = 28'651'389'905;
  Recorder r;
  r.Add(0, T::kNote, "sim", -1, "run", "end_us=2000000 seed=7 scenario=live-clock");
  r.Add(0, T::kNote, "c1", -1, "client", "uuid=u1");
  r.Add(0, T::kNote, "n1", -1, "clock_base", "", "", kStartMs + kMonthsMs);
  r.Add(100, T::kInvoke, "c1", 0, "acquire", "tryLock(wait=5000ms, lease=1000ms)", "", 1000);
  r.Add(600, T::kExec, "n1", -1, "acquire", "(nil)", "c1", 1, kMonthsMs + 5);
  r.Add(600, T::kLease, "n1", -1, "acquired", "u1:1", "", std::nullopt, kMonthsMs + 5);
  r.Add(1100, T::kOk, "c1", 0, "acquire", "acquired");
  r.Add(2'000'000, T::kNote, "sim", -1, "end");
  ReportMeta meta = HandMeta();
  meta.timeline.start_unix_ms = kStartMs;
  const Rendered rendered = RenderAll(r.h, meta);
  bool found = false;
  for (const ClockSeries& c : rendered.timeline.clocks) {
    if (c.process == "n1") {
      found = true;
      CHECK(c.min_offset_us == 5000);
      CHECK(c.max_offset_us == 5000);
    } else {
      CHECK(c.min_offset_us == 0);
    }
  }
  CHECK(found);
  CHECK(rendered.timeline.clock_baseline_note.find("the live servers' from the machine's clock") !=
        std::string::npos);
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

// The reports of a library scenario's simulated run (with its derived parameters).
Rendered RenderLibraryRun(const std::string& file) {
  ScenarioError error;
  auto scenario = LoadScenarioFile(LOCKSTEP_SOURCE_DIR "/scenarios/" + file, &error);
  INFO(error.ToString());
  REQUIRE(scenario.has_value());
  std::string why;
  auto sim = sim::Simulation::Create(*scenario, LOCKSTEP_SOURCE_DIR "/lua", &why);
  INFO(why);
  REQUIRE(sim != nullptr);
  history::History kept(sim->recorder().shared_names());
  sim->recorder().AddSink(&kept);
  sim->Run();
  ReportMeta meta;
  DescribeScenario(*scenario, &meta);
  meta.parameters = sim->derived();
  return RenderAll(kept, meta);
}

TEST_CASE("report.html: violations that share a cause make one row, the others folded in it",
          "[reports][html]") {
  // gc-pause-explicit-lease: c1.t0 acquires again and again while paused c2.t0 still believes
  // it holds the lock: 8 overlaps of the same two threads, one row with 7 folded beneath.
  const Rendered r = RenderLibraryRun("gc-pause-explicit-lease.toml");
  const check::PropertyResult* me = r.verdict.Find("mutual_exclusion");
  REQUIRE(me != nullptr);
  REQUIRE(me->violations.size() == 8);
  const size_t table = r.html.find("id=\"violations\"");
  REQUIRE(table != std::string::npos);
  const std::string rows = r.html.substr(table, r.html.find("</section>", table) - table);
  size_t top_rows = 0;
  for (size_t at = rows.find("\n<tr"); at != std::string::npos; at = rows.find("\n<tr", at + 1)) {
    ++top_rows;
  }
  // mutual_exclusion, resource_exclusion (8 each, one cause) and lease_safety: three rows.
  CHECK(top_rows == 3);
  CHECK(rows.find("and 7 more like it (the same rule and threads)") != std::string::npos);
  // Every violation is still on the page, its explanation with it.
  for (const check::Violation& v : me->violations) {
    CHECK(rows.find(HtmlEscape(v.explanation)) != std::string::npos);
  }
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
  const Rendered r = RenderLibraryRun("gc-pause-explicit-lease.toml");
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

TEST_CASE("report.html: a replica's lane shows its copy of the key, with its lag",
          "[reports][sim]") {
  const Rendered r = RenderLibraryRun("failover-unreplicated.toml");
  // n1 comes back as n2's replica and gets c2.t0's key 2 s (the scenario's lag) after n2
  // wrote it; the legend explains the copies.
  CHECK(r.html.find("class=\"lease copy\"") != std::string::npos);
  CHECK(r.html.find("data-lag-us=\"2000000\"") != std::string::npos);
  CHECK(r.html.find("a replica's copy of the key") != std::string::npos);
  CHECK(r.html.find("(copy, +2.000 s)") != std::string::npos);
  // The roles as they changed: n2 promoted at 6 s, n1 back at 21 s as n2's replica.
  CHECK(r.html.find("data-role=\"master\"") != std::string::npos);
  CHECK(r.html.find("data-role=\"replica of n2\"") != std::string::npos);
  CHECK(r.html.find("master at first") != std::string::npos);
  CHECK(r.trace.find("\"cat\":\"replica\"") != std::string::npos);
  CheckTraceGrammar(r.trace);
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
  // Lane groups, not the page script's selector.
  for (size_t at = 0; (at = r.html.find("data-kind=\"thread\" data-y=", at)) != std::string::npos; ++at) {
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

// Eight clients taking turns on the lock, one cycle of 10 events every 40 ms from *t_us, until
// the history has `events` events.
void TakeTurns(Recorder* rec, size_t events, int64_t* t_us) {
  int i = 0;
  int64_t& t = *t_us;
  while (rec->h.size() < events) {
    const std::string c = "c" + std::to_string(i % 8 + 1);
    const std::string field = "u" + std::to_string(i % 8 + 1) + ":1";
    rec->Add(t, T::kInvoke, c, 0, "acquire", "tryLock(wait=5000ms, no lease)");
    rec->Add(t + 500, T::kExec, "n1", -1, "acquire", "(nil)", c, 1);
    rec->Add(t + 500, T::kLease, "n1", -1, "acquired", field);
    rec->Add(t + 1000, T::kOk, c, 0, "acquire", "acquired");
    rec->Add(t + 1000, T::kResource, c, 0, "enter");
    rec->Add(t + 20'000, T::kResource, c, 0, "exit");
    rec->Add(t + 20'000, T::kInvoke, c, 0, "release", "unlock()");
    rec->Add(t + 20'500, T::kExec, "n1", -1, "unlock", "1", c, 2);
    rec->Add(t + 20'500, T::kLease, "n1", -1, "released", field);
    rec->Add(t + 21'000, T::kOk, c, 0, "release", "released", "", 1);
    t += 40'000;
    ++i;
  }
}

void LongRunNotes(Recorder* rec, int64_t end_us) {
  rec->Add(0, T::kNote, "sim", -1, "run",
           "end_us=" + std::to_string(end_us) + " seed=1 scenario=long");
  for (int c = 1; c <= 8; ++c) {
    rec->Add(0, T::kNote, "c" + std::to_string(c), -1, "client", "uuid=u" + std::to_string(c));
  }
}

// The number of trace events, without building the document (a trace has up to 400k).
size_t CountTraceEvents(const std::string& trace) {
  size_t n = 0;
  for (size_t at = 0; (at = trace.find("\"ph\":\"", at)) != std::string::npos; ++at) ++n;
  return n;
}

// The right edge (x + width) of the rightmost rect of the class in the HTML.
double RightmostRect(const std::string& html, const std::string& cls) {
  double right = 0;
  const std::string key = "<rect class=\"" + cls + "\" x=\"";
  for (size_t at = 0; (at = html.find(key, at)) != std::string::npos; ++at) {
    const double x = std::strtod(html.c_str() + at + key.size(), nullptr);
    const size_t w = html.find("width=\"", at);
    right = std::max(right, x + std::strtod(html.c_str() + w + 7, nullptr));
  }
  return right;
}

TEST_CASE("a long history is summarised within the stated bounds", "[reports][size]") {
  // 8 threads taking turns for 300k events: past both detail budgets.
  Recorder rec;
  LongRunNotes(&rec, 3'600'000'000);
  int64_t t = 1000;
  TakeTurns(&rec, 300'000, &t);
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
  // The detail stops where the start's window spent its share: a marker there, and the note
  // the command line prints with the file.
  REQUIRE(r.timeline.windows.size() == 1);
  CHECK(r.timeline.windows[0].spent);
  CHECK(r.timeline.windows[0].budget == kTraceDetailEvents * 3 / 8);
  CHECK(CountInstants(r.trace, "detail") == 1);
  const std::string note = TraceDetailNote(r.timeline);
  CHECK(note.find("(150,000 of 400,000 trace events, kTraceDetailEvents) was spent") !=
        std::string::npos);
  REQUIRE(other->Get("detail") != nullptr);
  CHECK(other->Get("detail")->Str("note") == note);
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "lockstep-report-test-long";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::vector<WrittenFile> written;
  std::string error;
  REQUIRE(WriteReports(rec.h, r.verdict, HandMeta(), dir.string(), &written, &error));
  for (const WrittenFile& f : written) {
    INFO(f.path);
    CHECK(f.note == (fs::path(f.path).filename() == "trace.json" ? note : ""));
  }
  fs::remove_all(dir);
}

TEST_CASE("reading a history file back, the reports say how far they got, now and then",
          "[reports][progress]") {
  // 20,000 events of turn-taking, told every 1,000: 20 calls, the counts rising by 1,000, the
  // times never going back; and the files are those written without a progress callback.
  Recorder rec;
  LongRunNotes(&rec, 100'000'000);
  int64_t t = 1000;
  TakeTurns(&rec, 20'000, &t);
  rec.Add(100'000'000, T::kNote, "sim", -1, "end");
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "lockstep-report-test-progress";
  fs::remove_all(dir);
  fs::create_directories(dir / "quiet");
  const std::string path = (dir / "history.jsonl").string();
  std::string error;
  REQUIRE(rec.h.WriteFile(path, &error));
  const check::Verdict verdict = check::CheckHistory(rec.h, check::CheckOptions{});

  std::vector<std::pair<uint64_t, int64_t>> calls;
  ReadProgress progress;
  progress.every = 1000;
  progress.report = [&calls](uint64_t events, int64_t t_us) { calls.emplace_back(events, t_us); };
  std::vector<WrittenFile> written, quiet;
  const bool ok = WriteReportsFromFile(path, verdict, HandMeta(), dir.string(), &written, &error,
                                       progress);
  INFO(error);
  REQUIRE(ok);
  REQUIRE(calls.size() == rec.h.size() / 1000);
  for (size_t i = 0; i < calls.size(); ++i) {
    CHECK(calls[i].first == (i + 1) * 1000);
    CHECK(calls[i].second == rec.h.events()[calls[i].first - 1].t_us);
    if (i > 0) CHECK(calls[i].second >= calls[i - 1].second);
  }
  REQUIRE(
      WriteReportsFromFile(path, verdict, HandMeta(), (dir / "quiet").string(), &quiet, &error));
  REQUIRE(written.size() == quiet.size());
  for (size_t i = 0; i < written.size(); ++i) {
    CHECK(written[i].note.empty());  // Within every budget: nothing to say
    std::string a, b;
    REQUIRE(ReadRegularFile(written[i].path, 64u << 20, &a, &error));
    REQUIRE(ReadRegularFile(quiet[i].path, 64u << 20, &b, &error));
    CHECK(a == b);
  }
  fs::remove_all(dir);
}

TEST_CASE("trace.json: a trace past its detail budget marks where the detail ends, and why",
          "[reports][trace][size]") {
  // 20,000 events of turn-taking against a budget of 2,000 trace events: the start's window
  // (3/8 of it, as there is no violation or fault) is spent early, the rest left out.
  Recorder rec;
  LongRunNotes(&rec, 100'000'000);
  int64_t t = 1000;
  TakeTurns(&rec, 20'000, &t);
  rec.Add(100'000'000, T::kNote, "sim", -1, "end");
  TimelineOptions options;
  options.detail_budget = 2'000;
  const Timeline tl = BuildTimeline(rec.h, options);
  REQUIRE_FALSE(tl.whole_run);
  REQUIRE(tl.windows.size() == 1);
  const DetailWindow& w = tl.windows.front();
  CHECK(w.from_us == 0);
  CHECK(w.spent);
  CHECK(w.budget == 750);
  CHECK(w.to_us < 10'000'000);
  CHECK(tl.left_out.Total() == tl.summarised);

  check::Verdict verdict;
  ReportMeta meta = HandMeta();
  meta.expect.reset();
  const std::string trace = RenderTrace(tl, verdict, meta);
  CheckTraceGrammar(trace);
  const Json doc = JsonReader(trace).ReadDocument();

  // The marker: one instant, where the window ends, on a track of its own.
  std::vector<const Json*> marks;
  size_t ops = 0, holds = 0, sections = 0;
  bool track_named = false;
  for (const Json* e : Events(doc)) {
    if (e->Str("cat") == "detail") marks.push_back(e);
    if (e->Str("ph") == "M" && e->Get("args") != nullptr &&
        e->Get("args")->Str("name") == "trace detail") {
      track_named = true;
    }
    ops += e->Str("cat") == "op" && e->Str("ph") == "X";
    holds += e->Str("cat") == "hold" && e->Str("ph") == "b";
    sections += e->Str("cat") == "resource" && e->Str("ph") == "X";
  }
  CHECK(track_named);
  REQUIRE(marks.size() == 1);
  CHECK(marks[0]->Str("ph") == "i");
  CHECK(marks[0]->Str("s") == "g");
  CHECK(marks[0]->Num("ts") == static_cast<double>(w.to_us));
  CHECK(marks[0]->Str("name") ==
        "trace detail ends here: the window's share of the detail budget is spent (750 of "
        "2,000 trace events); only faults, violations and counters until the run's end, "
        "100.000 s");

  // otherData.detail says the same, with the console's sentence.
  const Json* other = doc.Get("otherData");
  REQUIRE(other != nullptr);
  const Json* detail = other->Get("detail");
  REQUIRE(detail != nullptr);
  CHECK(detail->Num("budget_trace_events") == 2000);
  CHECK(detail->Num("budget_unused_trace_events") == 1250);
  const Json* windows = detail->Get("windows");
  REQUIRE(windows != nullptr);
  REQUIRE(windows->array.size() == 1);
  CHECK(windows->array[0].Num("to_us") == static_cast<double>(w.to_us));
  CHECK(windows->array[0].Str("ended") == "its budget spent");
  const std::string note = TraceDetailNote(tl);
  CHECK(detail->Str("note") == note);
  CHECK(note == "full detail only from 0.000 s to " + Seconds(w.to_us) +
                    " of 100.000 s, elsewhere faults, violations and counters only; the "
                    "window's share of the detail budget (750 of 2,000 trace events) was spent; " +
                    Grouped(tl.left_out.InTrace()) +
                    " operations, holds, commands ... left out");

  // What it says it left out is exactly what the trace lacks: every operation, hold and
  // critical section of the history is in the trace or counted as left out.
  size_t invokes = 0, acquired = 0, entered = 0;
  for (const history::Event& e : rec.h.events()) {
    invokes += e.type == T::kInvoke;
    acquired += e.type == T::kOk && rec.h.Str(e.op) == "acquire";
    entered += e.type == T::kResource && rec.h.Str(e.op) == "enter";
  }
  const Json* left = detail->Get("left_out");
  REQUIRE(left != nullptr);
  CHECK(left->Num("operations") > 0);
  CHECK(ops + static_cast<size_t>(left->Num("operations")) == invokes);
  CHECK(holds + static_cast<size_t>(left->Num("holds")) == acquired);
  CHECK(sections + static_cast<size_t>(left->Num("critical_sections")) == entered);
  CHECK(left->Num("total") == static_cast<double>(tl.summarised));
}

TEST_CASE("trace.json: the faults past the window limit are counted where they lie, outside",
          "[reports][trace][size]") {
  // Six short pauses among 20,000 events, at most three windows: the start and the first two
  // pauses get one each, the last four none. The note's count is the trace's own: the fault
  // instants it draws outside every window it lists.
  Recorder rec;
  LongRunNotes(&rec, 100'000'000);
  int64_t t = 1000;
  for (size_t k = 1; k <= 6; ++k) {
    TakeTurns(&rec, 3'000 * k, &t);
    rec.Add(t, T::kFault, "c1", -1, "pause", "GC pause for 0.010ms", "", 0);
    rec.Add(t + 10, T::kFault, "c1", -1, "resume", "resumed");
    t += 1000;
  }
  TakeTurns(&rec, 20'000, &t);
  rec.Add(100'000'000, T::kNote, "sim", -1, "end");
  TimelineOptions options;
  options.detail_budget = 2'000;
  options.max_windows = 3;
  const Timeline tl = BuildTimeline(rec.h, options);
  REQUIRE(tl.fault_count == 6);
  REQUIRE(tl.windows.size() == 3);
  check::Verdict verdict;
  ReportMeta meta = HandMeta();
  meta.expect.reset();
  const std::string trace = RenderTrace(tl, verdict, meta);
  const Json doc = JsonReader(trace).ReadDocument();
  size_t outside = 0;
  for (const Json* e : Events(doc)) {
    if (e->Str("cat") != "fault" || e->Str("ph") != "i" || e->Str("name").rfind("end of", 0) == 0) {
      continue;
    }
    const Json* windows = doc.Get("otherData")->Get("detail")->Get("windows");
    REQUIRE(windows != nullptr);
    outside += std::none_of(windows->array.begin(), windows->array.end(), [&](const Json& w) {
      return w.Num("from_us") <= e->Num("ts") && e->Num("ts") <= w.Num("to_us");
    });
  }
  CHECK(outside == 4);
  CHECK(doc.Get("otherData")->Get("detail")->Num("faults_outside_windows") == 4);
  CHECK(TraceDetailNote(tl).find("; 4 of the 6 faults in the trace lie outside the windows (3 at "
                                 "most)") != std::string::npos);
  // Where the detail resumes, the trace says so too: once for each window after the first.
  size_t resumes = 0;
  for (const Json* e : Events(doc)) {
    resumes += e->Str("cat") == "detail" &&
               e->Str("name").rfind("trace detail resumes here", 0) == 0;
  }
  CHECK(resumes == 2);
}

TEST_CASE("trace.json: a trace within its detail budget has no marker and no note",
          "[reports][trace]") {
  const Rendered r = RenderAll(SplitBrainHistory(), HandMeta());
  REQUIRE(r.timeline.whole_run);
  CHECK(TraceDetailNote(r.timeline).empty());
  CHECK(r.trace.find("trace detail") == std::string::npos);
  CHECK(r.trace.find("\"cat\":\"detail\"") == std::string::npos);
  const Json doc = JsonReader(r.trace).ReadDocument();
  const Json* other = doc.Get("otherData");
  REQUIRE(other != nullptr);
  CHECK(other->Get("detail") == nullptr);
}

TEST_CASE("latency buckets are half octaves", "[reports][timeline]") {
  CHECK(LatencyBucket(0) == 0);
  CHECK(LatencyBucket(1) == 0);
  CHECK(LatencyBucket(2) == 2);
  CHECK(LatencyBucket(1023) == 19);
  CHECK(LatencyBucket(1024) == 20);
  CHECK(LatencyBucket(int64_t{1} << 40) == kLatencyBuckets - 1);
  CHECK(LatencyBucketHighUs(19) == Approx(1024.0));
  for (int64_t us : {3, 100, 999, 1000, 45'000, 2'000'000}) {
    const size_t b = LatencyBucket(us);
    CHECK(static_cast<double>(us) < LatencyBucketHighUs(b));
    CHECK((b == 0 || static_cast<double>(us) >= LatencyBucketHighUs(b - 1)));
  }
}

TEST_CASE("report.html: the charts count every acquisition of a long run and read its latency",
          "[reports][html]") {
  // 10,000 acquisitions over an hour, each 1 ms from invoke to acquired, and one that waited
  // 2 s: far more than the page's detail keeps, all of them in the charts.
  Recorder rec;
  LongRunNotes(&rec, 3'600'000'000);
  int64_t t = 1000;
  TakeTurns(&rec, 100'000, &t);
  rec.Add(t, T::kInvoke, "c1", 0, "acquire", "tryLock(wait=5000ms, no lease)");
  rec.Add(t + 2'000'000, T::kExec, "n1", -1, "acquire", "(nil)", "c1", 1);
  rec.Add(t + 2'000'000, T::kLease, "n1", -1, "acquired", "u1:1");
  rec.Add(t + 2'000'000, T::kOk, "c1", 0, "acquire", "acquired");
  rec.Add(3'600'000'000, T::kNote, "sim", -1, "end");
  const Rendered r = RenderAll(rec.h, HandMeta());
  CHECK(r.html.find("id=\"summarised\"") != std::string::npos);
  CHECK(r.html.find("id=\"charts\" data-acquired=\"10001\" data-not-acquired=\"0\"") !=
        std::string::npos);
  // p50 and p99 are the 1 ms acquisitions' bucket (up to 1.024 ms), the max the 2 s one's.
  CHECK(r.html.find("p50 1.02 ms, p99 1.02 ms, max 2.097 s") != std::string::npos);
  for (const char* id : {"chart-throughput", "chart-latency", "chart-holders"}) {
    CHECK(r.html.find(std::string("id=\"") + id + "\"") != std::string::npos);
  }
  // The throughput chart's bars end where the turns do, at 400 s of the hour: x = 150 +
  // 400 / 3600 * 1164 = 279, within a column (6 px).
  CHECK(RightmostRect(r.html, "cok") == Approx(279).margin(7));
}

TEST_CASE("a violation late in a long run gets full detail in the HTML and the trace",
          "[reports][size]") {
  // 280k events of turn-taking (about 19 minutes), then c1 and c2 both believe they hold the
  // lock, then turn-taking again; the detail budgets are spent long before the violation.
  Recorder rec;
  LongRunNotes(&rec, 1'400'000'000);
  int64_t t = 1000;
  TakeTurns(&rec, 280'000, &t);
  const int64_t split = t;
  rec.Add(split, T::kInvoke, "c1", 0, "acquire", "tryLock(wait=5000ms, no lease)");
  rec.Add(split + 1000, T::kOk, "c1", 0, "acquire", "acquired");
  rec.Add(split + 2000, T::kInvoke, "c2", 0, "acquire", "tryLock(wait=5000ms, no lease)");
  rec.Add(split + 3000, T::kOk, "c2", 0, "acquire", "acquired");
  rec.Add(split + 50'000, T::kInvoke, "c1", 0, "release", "unlock()");
  rec.Add(split + 51'000, T::kOk, "c1", 0, "release", "released", "", 1);
  rec.Add(split + 52'000, T::kInvoke, "c2", 0, "release", "unlock()");
  rec.Add(split + 53'000, T::kOk, "c2", 0, "release", "released", "", 1);
  t = split + 100'000;
  TakeTurns(&rec, 300'000, &t);
  rec.Add(1'400'000'000, T::kNote, "sim", -1, "end");
  const Rendered r = RenderAll(rec.h, HandMeta());
  const check::Violation* v = LeadViolation(r.verdict);
  REQUIRE(v != nullptr);
  CHECK(v->from_us == split + 3000);
  CHECK(v->to_us == split + 50'000);
  REQUIRE_FALSE(r.timeline.whole_run);

  // The timeline: a window around the violation, with both holds in it.
  const int w = r.timeline.WindowNear(v->from_us);
  REQUIRE(w != kNone);
  CHECK(r.timeline.windows[w].from_us <= v->from_us);
  CHECK(r.timeline.windows[w].to_us >= v->to_us);
  for (const char* name : {"c1.t0", "c2.t0"}) {
    const int lane = r.timeline.ThreadIndex(name);
    REQUIRE(lane != kNone);
    const auto& holds = r.timeline.threads[lane].holds;
    CHECK(std::any_of(holds.begin(), holds.end(), [&](const Span& h) {
      return h.from_us <= v->from_us && h.to_us >= v->to_us;
    }));
  }

  // report.html: the panel's data is around the violation, not at the start, and draws it.
  CHECK(r.html.find("id=\"summarised\"") != std::string::npos);
  const size_t svg = r.html.find("<svg id=\"timeline\"");
  REQUIRE(svg != std::string::npos);
  const std::string tag = r.html.substr(svg, r.html.find('>', svg) - svg);
  auto attribute = [&](const std::string& name) {
    const size_t at = tag.find(" " + name + "=\"");
    REQUIRE(at != std::string::npos);
    return std::strtoll(tag.c_str() + at + name.size() + 3, nullptr, 10);
  };
  CHECK(attribute("data-data-from-us") > split / 2);
  CHECK(attribute("data-data-from-us") <= v->from_us);
  CHECK(attribute("data-data-to-us") >= v->to_us);
  CHECK(attribute("data-view-from-us") <= v->from_us);
  CHECK(attribute("data-view-to-us") >= v->to_us);
  CHECK(r.html.find("id=\"violation-0\" data-property=\"mutual_exclusion\" data-kind=\"overlap\" "
                    "data-from-us=\"" +
                    std::to_string(v->from_us) + "\"") != std::string::npos);
  size_t bad = 0;
  for (size_t at = 0; (at = r.html.find("class=\"hold bad\"", at)) != std::string::npos; ++at) ++bad;
  CHECK(bad == 2);
  // Operations right before the violation are drawn too (the window reaches back).
  CHECK(r.html.find(Seconds(split - 40'000) + " - " + Seconds(split - 39'000)) != std::string::npos);

  // trace.json: both holds, begun before the violation, and a detail window around it.
  const Json doc = JsonReader(r.trace).ReadDocument();
  std::set<std::string> holding;
  for (const Json* e : Events(doc)) {
    if (e->Str("ph") != "b" || e->Str("cat") != "hold") continue;
    if (e->Num("ts") < split - 1000 || e->Num("ts") > v->from_us) continue;
    const Json* args = e->Get("args");
    REQUIRE(args != nullptr);
    holding.insert(args->Str("thread"));
  }
  CHECK(holding == std::set<std::string>{"c1.t0", "c2.t0"});
  const Json* other = doc.Get("otherData");
  REQUIRE(other != nullptr);
  const Json* windows = other->Get("detail_windows");
  REQUIRE(windows != nullptr);
  bool covered = false;
  for (const Json& wj : windows->array) {
    covered = covered || (wj.array.size() == 2 && wj.array[0].number <= v->from_us &&
                          wj.array[1].number >= v->to_us);
  }
  CHECK(covered);
  CheckTraceGrammar(r.trace);
  // The summary's diagram names both acquisitions.
  CHECK(r.summary.find("c1_t0: acquire ok") != std::string::npos);
  CHECK(r.summary.find("c2_t0: acquire ok") != std::string::npos);
}

// Feeds the builder millions of events as a driver would, one at a time: nothing keeps the
// history, so this measures what the builder itself keeps.
class SyntheticRun {
  using Name = history::Name;

 public:
  explicit SyntheticRun(int64_t end_us) : pass_(&names_, history::FactsOptions{}), end_us_(end_us) {
    for (int c = 1; c <= kClients; ++c) {
      clients_.push_back(names_.Intern("c" + std::to_string(c)));
      uuids_.push_back("uuid-" + std::to_string(c));
      fields_.push_back(uuids_.back() + ":1");
    }
    node_ = names_.Intern("n1");
    lock_ = names_.Intern("lock");
    unlock_ = names_.Intern("unlock");
  }

  history::FactsPass& pass() { return pass_; }
  uint64_t events() const { return seq_; }

  void Run(uint64_t events) {
    history::Event run = Note(0, history::names::kSim, history::names::kRun);
    run.detail = history::RunNote{end_us_, 1, "synthetic"};
    Emit(run);
    for (int c = 0; c < kClients; ++c) {
      history::Event note = Note(0, clients_[c], history::names::kClient);
      note.detail = history::ClientNote{uuids_[c]};
      Emit(note);
    }
    const int64_t cycle_us = end_us_ / static_cast<int64_t>(events / 10 + 1);
    int64_t t = 1000;
    int64_t next_fault = 300'000'000;
    for (int i = 0; seq_ + 10 < events && t + cycle_us < end_us_; ++i, t += cycle_us) {
      const int c = i % kClients;
      const Name client = clients_[c];
      if (t >= next_fault) {
        // A pause every five minutes: each gets a window while there are slots.
        history::Event pause = Note(t, client, history::names::kPause);
        pause.type = history::EventType::kFault;
        pause.detail = history::PauseFault{false, 1000};
        Emit(pause);
        history::Event resume = pause;
        resume.t_us = t + 1;
        resume.op = history::names::kResume;
        resume.detail = history::StockText{};
        Emit(resume);
        next_fault += 300'000'000;
      }
      Client(t, history::EventType::kInvoke, client, history::names::kAcquire,
             history::AcquireCall{history::AcquireCall::Mode::kTryLock, 5'000'000, -1, -1});
      Exec(t + cycle_us / 8, client, history::names::kAcquire, "(nil)");
      Lease(t + cycle_us / 8, history::names::kAcquired, fields_[c]);
      Client(t + cycle_us / 4, history::EventType::kOk, client, history::names::kAcquire,
             history::Text{"acquired"});
      Client(t + cycle_us / 4, history::EventType::kResource, client, history::names::kEnter,
             history::NoDetail{});
      Client(t + cycle_us / 2, history::EventType::kResource, client, history::names::kExit,
             history::NoDetail{});
      Client(t + cycle_us / 2, history::EventType::kInvoke, client, history::names::kRelease,
             history::StockText{});
      Exec(t + cycle_us * 5 / 8, client, unlock_, "1");
      Lease(t + cycle_us * 5 / 8, history::names::kReleased, fields_[c]);
      Client(t + cycle_us * 3 / 4, history::EventType::kOk, client, history::names::kRelease,
             history::Text{"released"});
    }
    history::Event end = Note(end_us_, history::names::kSim, history::names::kEnd);
    Emit(end);
    pass_.Finish();
  }

 private:
  static constexpr int kClients = 8;

  history::Event Note(int64_t t_us, Name process, Name op) {
    history::Event e;
    e.t_us = t_us;
    e.type = history::EventType::kNote;
    e.process = process;
    e.op = op;
    return e;
  }
  void Emit(history::Event& e) {
    e.seq = seq_++;
    pass_.OnEvent(e);
  }
  void Client(int64_t t_us, history::EventType type, Name client, Name op, history::Detail detail) {
    history::Event e;
    e.t_us = t_us;
    e.type = type;
    e.process = client;
    e.thread = 0;
    e.op = op;
    e.lock = lock_;
    e.local_ms = kStartMs + t_us / 1000;
    e.detail = detail;
    Emit(e);
  }
  void Exec(int64_t t_us, Name client, Name op, std::string_view reply) {
    history::Event e;
    e.t_us = t_us;
    e.type = history::EventType::kExec;
    e.process = node_;
    e.peer = client;
    e.op = op;
    e.lock = lock_;
    e.local_ms = kStartMs + t_us / 1000;
    e.detail = history::ReplyDetail{};
    e.source = reply;  // As a history read from a file has it.
    Emit(e);
  }
  void Lease(int64_t t_us, Name op, std::string_view owners) {
    history::Event e;
    e.t_us = t_us;
    e.type = history::EventType::kLease;
    e.process = node_;
    e.op = op;
    e.lock = lock_;
    e.local_ms = kStartMs + t_us / 1000;
    e.detail = history::Owners{owners};
    Emit(e);
  }

  history::NameTable names_;
  history::FactsPass pass_;
  int64_t end_us_;
  uint64_t seq_ = 0;
  std::vector<Name> clients_;
  std::vector<std::string> uuids_, fields_;
  Name node_ = 0, lock_ = 0, unlock_ = 0;
};

size_t DetailCost(const Timeline& tl) {
  size_t cost = tl.holders.size() + tl.messages.size();
  for (const ThreadLane& l : tl.threads) cost += l.ops.size() + 2 * l.holds.size() + l.sections.size();
  for (const NodeLane& n : tl.nodes) {
    cost += n.leases.size() + 3 * n.execs.size() + n.losses.size() + n.pttl.size();
  }
  for (const ClockSeries& c : tl.clocks) cost += c.samples.size();
  return cost;
}

TEST_CASE("the timeline keeps bounded detail however many events pass through it",
          "[reports][size]") {
  // Three million events over a simulated hour, straight into the builder. Under the
  // sanitizers, where the test is about memory safety and each event costs about 30 times as
  // much, 800,000 (still twice the detail budget).
#ifdef LOCKSTEP_SANITIZED
  constexpr uint64_t kEvents = 800'000;
#else
  constexpr uint64_t kEvents = 3'000'000;
#endif
  constexpr int64_t kHourUs = 3'600'000'000;
  SyntheticRun run(kHourUs);
  TimelineOptions options;
  options.detail_budget = kTraceDetailEvents;
  TimelineBuilder builder(options);
  run.pass().AddObserver(&builder);
  run.Run(kEvents);
  REQUIRE(run.events() > kEvents - kEvents / 30);
  Timeline tl = builder.Take();

  // Detail: within the budget (plus what overlapped a window's end), in a bounded number of
  // windows; the rest summarised.
  CHECK_FALSE(tl.whole_run);
  CHECK(tl.summarised > kEvents / 3);
  CHECK(DetailCost(tl) <= kTraceDetailEvents + 1000);
  CHECK(tl.windows.size() >= 2);  // The start and the first pause at least
  CHECK(tl.windows.size() <= options.max_windows);
  CHECK(tl.fault_count == 11);    // A pause every five minutes

  // The bins cover the whole hour: every thread held the lock in the last minute.
  CHECK(tl.bin_us * static_cast<int64_t>(kBins) >= kHourUs);
  const size_t last_minute = static_cast<size_t>((kHourUs - 60'000'000) / tl.bin_us);
  REQUIRE(tl.threads.size() == 8);
  for (const ThreadLane& l : tl.threads) {
    REQUIRE(l.bins.hold_us.size() == kBins);
    uint64_t held = 0;
    for (size_t b = last_minute; b < kBins; ++b) held += l.bins.hold_us[b];
    CHECK(held > 0);
  }

  // The reports: within their bounds, and the overview and the counters reach the end.
  check::Verdict verdict;
  ReportMeta meta = HandMeta();
  meta.expect.reset();
  const std::string html = RenderHtml(tl, verdict, meta);
  const std::string trace = RenderTrace(tl, verdict, meta);
  const std::string summary = RenderSummary(tl, verdict, meta);
  CHECK(html.size() < 4u << 20);
  CHECK(trace.size() < 80u << 20);
  CHECK(summary.size() < 4096);
  CHECK(CountTraceEvents(trace) <= kTraceDetailEvents + 10'000);
  CHECK(RightmostRect(html, "ohold") > 1300);  // The plot ends at 150 + 1164 px
  CHECK(RightmostRect(html, "oowned") > 1300);
  CHECK(trace.find("{\"name\":\"operations per") != std::string::npos);
  // A marker where each window's budget ran out before the run's end, and where each window
  // after the first begins.
  size_t ends = 0, resumes = 0;
  for (const DetailWindow& w : tl.windows) {
    ends += w.spent && w.to_us < tl.end_us;
    resumes += w.from_us > 0;
  }
  CHECK(ends > 0);
  CHECK(resumes + 1 == tl.windows.size());
  CHECK(CountInstants(trace, "detail") == ends + resumes);
  CHECK(TraceDetailNote(tl).find(Format("only in %zu windows", tl.windows.size())) !=
        std::string::npos);
  // The holder counter goes on after the last window, from the bins.
  const size_t last = trace.rfind("{\"name\":\"holders(lock)\"");
  REQUIRE(last != std::string::npos);
  const size_t ts = trace.find("\"ts\":", last);
  CHECK(std::strtoll(trace.c_str() + ts + 5, nullptr, 10) > tl.windows.back().to_us);
}

}  // namespace
}  // namespace lockstep::reports
