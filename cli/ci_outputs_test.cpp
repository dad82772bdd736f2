// Establishes that `run --json` and `--junit` write what a machine can read: the JSON parses
// (a strict parser below, RFC 8259) and has every field docs/ci.md promises with its type; the
// JUnit XML is well formed and has the elements and attributes its schema requires (testsuite
// name and tests, testcase name and classname), with counts that agree with its testcases. Runs
// real scenarios: one whose violations are expected (pass), the same judged the other way
// (fail), an interrupted one, and texts full of characters that need escaping.
#include <catch2/catch.hpp>

#include <cctype>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cli/ci_outputs.h"
#include "cli/common.h"
#include "model/scenario_toml.h"
#include "pipeline/pipeline.h"

namespace lockstep::cli {
namespace {

// --- a strict JSON parser ---------------------------------------------------------------------

struct Json;
using JsonObject = std::map<std::string, Json>;
using JsonArray = std::vector<Json>;
struct Json {
  std::variant<std::nullptr_t, bool, double, std::string, JsonArray, JsonObject> v;
  bool is_null() const { return std::holds_alternative<std::nullptr_t>(v); }
  bool is_bool() const { return std::holds_alternative<bool>(v); }
  bool is_number() const { return std::holds_alternative<double>(v); }
  bool is_string() const { return std::holds_alternative<std::string>(v); }
  const JsonArray& array() const { return std::get<JsonArray>(v); }
  const JsonObject& object() const { return std::get<JsonObject>(v); }
  const std::string& str() const { return std::get<std::string>(v); }
  double number() const { return std::get<double>(v); }
  const Json& at(const std::string& k) const { return object().at(k); }
  bool has(const std::string& k) const { return object().count(k) != 0; }
};

class JsonParser {
 public:
  explicit JsonParser(const std::string& s) : s_(s) {}
  // The document, or nullopt if it is not exactly one JSON value.
  std::optional<Json> Parse() {
    std::optional<Json> v = Value();
    Space();
    if (!v || i_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void Space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
  }
  bool Eat(char c) {
    Space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  bool Word(const char* w) {
    const std::string word(w);
    if (s_.compare(i_, word.size(), word) != 0) return false;
    i_ += word.size();
    return true;
  }
  std::optional<std::string> String() {
    if (!Eat('"')) return std::nullopt;
    std::string out;
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) return std::nullopt;  // Must be escaped.
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) return std::nullopt;
      const char e = s_[i_++];
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (i_ + 4 > s_.size()) return std::nullopt;
          for (int k = 0; k < 4; ++k) {
            if (!std::isxdigit(static_cast<unsigned char>(s_[i_ + k]))) return std::nullopt;
          }
          const unsigned code = static_cast<unsigned>(std::stoul(s_.substr(i_, 4), nullptr, 16));
          out += code < 0x80 ? static_cast<char>(code) : '?';  // ASCII is all that is written.
          i_ += 4;
          break;
        }
        default: return std::nullopt;
      }
    }
    return std::nullopt;
  }
  std::optional<Json> Value() {
    Space();
    if (i_ >= s_.size()) return std::nullopt;
    const char c = s_[i_];
    if (c == '{') {
      ++i_;
      JsonObject o;
      if (Eat('}')) return Json{o};
      do {
        std::optional<std::string> k = String();
        if (!k || !Eat(':')) return std::nullopt;
        std::optional<Json> v = Value();
        if (!v || o.count(*k)) return std::nullopt;  // No duplicate keys.
        o.emplace(*k, std::move(*v));
      } while (Eat(','));
      if (!Eat('}')) return std::nullopt;
      return Json{o};
    }
    if (c == '[') {
      ++i_;
      JsonArray a;
      if (Eat(']')) return Json{a};
      do {
        std::optional<Json> v = Value();
        if (!v) return std::nullopt;
        a.push_back(std::move(*v));
      } while (Eat(','));
      if (!Eat(']')) return std::nullopt;
      return Json{a};
    }
    if (c == '"') {
      std::optional<std::string> str = String();
      if (!str) return std::nullopt;
      return Json{*str};
    }
    if (Word("true")) return Json{true};
    if (Word("false")) return Json{false};
    if (Word("null")) return Json{nullptr};
    // -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
    const size_t start = i_;
    if (s_[i_] == '-') ++i_;
    if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return std::nullopt;
    if (s_[i_] == '0') {
      ++i_;
    } else {
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return std::nullopt;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) return std::nullopt;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    return Json{std::stod(s_.substr(start, i_ - start))};
  }

  const std::string& s_;
  size_t i_ = 0;
};

// --- a well-formedness check for the XML, with the elements found -----------------------------

struct Element {
  std::string name;
  std::map<std::string, std::string> attributes;  // Unescaped.
  std::vector<std::shared_ptr<Element>> children;
  std::string text;
};

// The root element of `s`, or null if `s` is not well-formed XML of the kind written here
// (declaration, elements, attributes in double quotes, the five predefined entities).
std::shared_ptr<Element> ParseXml(const std::string& s) {
  size_t i = 0;
  const std::string decl = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";
  if (s.compare(0, decl.size(), decl) != 0) return nullptr;
  i = decl.size();
  auto unescape = [](const std::string& t, std::string* out) {
    out->clear();
    for (size_t k = 0; k < t.size(); ++k) {
      if (t[k] == '<' || t[k] == '>' || t[k] == '"') return false;  // Must be escaped.
      if (t[k] != '&') {
        *out += t[k];
        continue;
      }
      const size_t semi = t.find(';', k);
      if (semi == std::string::npos) return false;
      const std::string entity = t.substr(k + 1, semi - k - 1);
      if (entity == "amp") *out += '&';
      else if (entity == "lt") *out += '<';
      else if (entity == "gt") *out += '>';
      else if (entity == "quot") *out += '"';
      else if (entity == "apos") *out += '\'';
      else return false;
      k = semi;
    }
    return true;
  };
  std::vector<std::shared_ptr<Element>> open;
  std::shared_ptr<Element> root;
  while (i < s.size()) {
    const size_t lt = s.find('<', i);
    std::string text = s.substr(i, lt == std::string::npos ? std::string::npos : lt - i), plain;
    if (!unescape(text, &plain)) return nullptr;
    if (!open.empty()) open.back()->text += plain;
    else if (plain.find_first_not_of(" \n\t\r") != std::string::npos) return nullptr;
    if (lt == std::string::npos) break;
    const size_t gt = s.find('>', lt);
    if (gt == std::string::npos) return nullptr;
    std::string tag = s.substr(lt + 1, gt - lt - 1);
    i = gt + 1;
    if (!tag.empty() && tag[0] == '/') {
      if (open.empty() || open.back()->name != tag.substr(1)) return nullptr;
      open.pop_back();
      continue;
    }
    const bool empty = !tag.empty() && tag.back() == '/';
    if (empty) tag.pop_back();
    auto e = std::make_shared<Element>();
    size_t k = 0;
    while (k < tag.size() && (std::isalnum(static_cast<unsigned char>(tag[k])) || tag[k] == '_')) ++k;
    e->name = tag.substr(0, k);
    if (e->name.empty()) return nullptr;
    while (k < tag.size()) {
      while (k < tag.size() && tag[k] == ' ') ++k;
      if (k >= tag.size()) break;
      const size_t eq = tag.find("=\"", k);
      if (eq == std::string::npos) return nullptr;
      const std::string name = tag.substr(k, eq - k);
      const size_t close = tag.find('"', eq + 2);
      if (close == std::string::npos || name.empty() || e->attributes.count(name)) return nullptr;
      std::string value;
      if (!unescape(tag.substr(eq + 2, close - eq - 2), &value)) return nullptr;
      e->attributes[name] = value;
      k = close + 1;
    }
    if (open.empty()) {
      if (root != nullptr) return nullptr;  // One root.
      root = e;
    } else {
      open.back()->children.push_back(e);
    }
    if (!empty) open.push_back(e);
  }
  return open.empty() ? root : nullptr;
}

std::vector<std::shared_ptr<Element>> Children(const Element& e, const std::string& name) {
  std::vector<std::shared_ptr<Element>> out;
  for (const auto& c : e.children) {
    if (c->name == name) out.push_back(c);
  }
  return out;
}

// --- the records -------------------------------------------------------------------------------

const std::string kSource = LOCKSTEP_SOURCE_DIR;

struct Ran {
  Scenario scenario;
  PipelineResult result;
  check::Judgement judgement;
};

Ran RunScenario(const std::string& name, const std::function<void(Scenario*)>& change = nullptr) {
  ScenarioError error;
  std::optional<Scenario> s = LoadScenarioFile(kSource + "/scenarios/" + name + ".toml", &error);
  REQUIRE(s.has_value());
  if (change) change(&*s);
  std::string e;
  auto sim = sim::Simulation::Create(*s, kSource + "/lua", &e);
  REQUIRE(sim != nullptr);
  PipelineOptions options;
  options.history = history::HistoryFormat::kNone;
  std::optional<PipelineResult> r = RunPipeline(*sim, *s, options, &e);
  REQUIRE(r.has_value());
  Ran ran{*s, *r, {}};
  ran.judgement = check::Judge(ran.result.verdict, ran.scenario.expect);
  return ran;
}

RunRecord RecordOf(const Ran& ran, const std::string& file) {
  RunRecord r;
  r.scenario = &ran.scenario;
  r.file = file;
  r.verdict = &ran.result.verdict;
  r.judgement = &ran.judgement;
  r.interrupted = ran.result.interrupted;
  r.end_us = ran.result.end_us;
  r.history_format = "jsonl";
  r.history_path = "out/history.jsonl";
  r.history_events = ran.result.history_events;
  r.history_hash = "0123456789abcdef";
  r.reports = {{"out/report.html", 1000, ""},
               {"out/trace.json", 2000, "trace.json: full detail only from 0.000 s to 1.000 s"}};
  r.reproduce = "lockstep run " + file + " --seed " + std::to_string(ran.scenario.seed);
  r.wall_s = ran.result.wall_s;
  r.reports_s = 0.5;
  r.peak_rss_kib = 12345;
  return r;
}

// Checks the JSON against docs/ci.md's schema; returns the document.
Json CheckJson(const RunRecord& r) {
  const std::string text = RunJson(r);
  INFO(text);
  std::optional<Json> doc = JsonParser(text).Parse();
  REQUIRE(doc.has_value());
  const Json& d = *doc;
  CHECK(d.at("schema").str() == "lockstep-run/1");
  CHECK(d.at("lockstep").is_string());
  CHECK(d.at("result").str() == RunResultWord(r));
  CHECK(d.at("scenario").at("name").str() == r.scenario->name);
  CHECK(d.at("scenario").at("file").str() == r.file);
  CHECK(d.at("scenario").at("seed").number() == static_cast<double>(r.scenario->seed));
  CHECK(d.at("scenario").at("duration_us").is_number());
  CHECK(d.at("end_us").number() == static_cast<double>(r.end_us));
  CHECK(d.at("interrupted").is_bool());
  const JsonArray& properties = d.at("properties").array();
  REQUIRE(properties.size() == r.verdict->results.size());
  for (size_t i = 0; i < properties.size(); ++i) {
    const Json& p = properties[i];
    const check::PropertyResult& want = r.verdict->results[i];
    CHECK(p.at("name").str() == want.property);
    CHECK(p.at("applicable").is_bool());
    const std::string expected = p.at("expected").str();
    CHECK((expected == "hold" || expected == "violated" || expected == "any"));
    CHECK(std::get<bool>(p.at("violated").v) == want.violated);
    CHECK(p.at("matches").is_bool());
    CHECK(p.at("violation_count").number() == static_cast<double>(want.violation_count));
    const JsonArray& violations = p.at("violations").array();
    REQUIRE(violations.size() == want.violations.size());
    for (size_t k = 0; k < violations.size(); ++k) {
      CHECK(violations[k].at("kind").str() == want.violations[k].kind);
      CHECK(violations[k].at("explanation").str() == want.violations[k].explanation);
      CHECK(violations[k].at("threads").array().size() == want.violations[k].threads.size());
      CHECK(violations[k].at("events").array().size() == want.violations[k].events.size());
      CHECK(violations[k].at("from_us").is_number());
      CHECK(violations[k].at("to_us").is_number());
    }
  }
  CHECK(d.at("mismatches").array().size() == r.judgement->mismatches.size());
  CHECK(d.at("warnings").is_number());
  CHECK(d.at("history").at("format").str() == r.history_format);
  CHECK(d.at("history").at("file").is_string());
  CHECK(d.at("history").at("events").number() == static_cast<double>(r.history_events));
  CHECK(d.at("history").at("hash").str() == r.history_hash);
  REQUIRE(d.at("reports").array().size() == r.reports.size());
  for (size_t i = 0; i < r.reports.size(); ++i) {
    const Json& file = d.at("reports").array()[i];
    CHECK(file.at("file").str() == r.reports[i].path);
    CHECK(file.at("bytes").number() == static_cast<double>(r.reports[i].bytes));
    // The note is there exactly when the file left something out.
    CHECK(file.has("note") == !r.reports[i].note.empty());
    if (file.has("note")) CHECK(file.at("note").str() == r.reports[i].note);
  }
  for (const char* key : {"simulated_s", "wall_s", "reports_s", "peak_rss_kib"}) {
    CHECK(d.at("timings").at(key).is_number());
  }
  CHECK(d.at("reproduce").str() == r.reproduce);
  return d;
}

// Checks the JUnit XML's required elements and its counts; returns the testsuite.
std::shared_ptr<Element> CheckJunit(const RunRecord& r) {
  const std::string text = RunJunit(r);
  INFO(text);
  std::shared_ptr<Element> root = ParseXml(text);
  REQUIRE(root != nullptr);
  CHECK(root->name == "testsuites");
  const auto suites = Children(*root, "testsuite");
  REQUIRE(suites.size() == 1);
  const Element& suite = *suites[0];
  REQUIRE(suite.attributes.count("name"));
  REQUIRE(suite.attributes.count("tests"));
  const auto cases = Children(suite, "testcase");
  CHECK(suite.attributes.at("tests") == std::to_string(cases.size()));
  CHECK(cases.size() == r.verdict->results.size());
  int failures = 0, errors = 0, skipped = 0;
  for (const auto& c : cases) {
    CHECK(c->attributes.count("name"));
    CHECK(c->attributes.count("classname"));
    CHECK(c->attributes.count("time"));
    for (const auto& f : Children(*c, "failure")) {
      ++failures;
      CHECK(f->attributes.count("message"));
      CHECK(f->text.find("reproduce: " + r.reproduce) != std::string::npos);
    }
    errors += static_cast<int>(Children(*c, "error").size());
    skipped += static_cast<int>(Children(*c, "skipped").size());
  }
  CHECK(suite.attributes.at("failures") == std::to_string(failures));
  CHECK(suite.attributes.at("errors") == std::to_string(errors));
  CHECK(suite.attributes.at("skipped") == std::to_string(skipped));
  CHECK(root->attributes.at("failures") == std::to_string(failures));
  return suites[0];
}

TEST_CASE("run --json and --junit: an expected violation passes, every field present") {
  const Ran ran = RunScenario("gc-pause-explicit-lease");
  const RunRecord r = RecordOf(ran, "scenarios/gc-pause-explicit-lease.toml");
  const Json d = CheckJson(r);
  CHECK(d.at("result").str() == "pass");
  const Json& me = d.at("properties").array()[0];
  CHECK(me.at("name").str() == "mutual_exclusion");
  CHECK(me.at("expected").str() == "violated");
  CHECK(std::get<bool>(me.at("matches").v));
  CHECK(!me.at("violations").array().empty());
  const auto suite = CheckJunit(r);
  CHECK(suite->attributes.at("failures") == "0");
  CHECK(std::stoi(suite->attributes.at("skipped")) > 0);  // Properties [expect] leaves out.
}

TEST_CASE("run --json and --junit: a verdict against [expect] fails, with the violation") {
  const Ran ran = RunScenario("gc-pause-explicit-lease", [](Scenario* s) {
    s->expect["mutual_exclusion"] = Expectation::kHold;
    s->expect["fairness"] = Expectation::kViolated;  // Never violated: a mismatch the other way.
    s->name = "gc \"pause\" <&> \x01 edge";             // Text that must be escaped.
  });
  const RunRecord r = RecordOf(ran, "dir with space/\"odd\".toml");
  const Json d = CheckJson(r);
  CHECK(d.at("result").str() == "fail");
  CHECK(d.at("mismatches").array().size() == 2);
  const auto suite = CheckJunit(r);
  CHECK(suite->attributes.at("failures") == "2");
  CHECK(suite->attributes.at("name") == "lockstep run gc \"pause\" <&>   edge");
  bool saw_overlap = false;
  for (const auto& c : Children(*suite, "testcase")) {
    for (const auto& f : Children(*c, "failure")) {
      if (c->attributes.at("name") == "mutual_exclusion") {
        CHECK(f->attributes.at("message").find("expected to hold, violated") != std::string::npos);
        CHECK(f->text.rfind("first: ", 0) == 0);
        saw_overlap = true;
      } else {
        CHECK(c->attributes.at("name") == "fairness");
        CHECK(f->attributes.at("message") == "fairness: expected to be violated, holds");
      }
    }
  }
  CHECK(saw_overlap);
}

TEST_CASE("run --json and --junit: an interrupted run is an error, not a pass") {
  Ran ran = RunScenario("contention-10", [](Scenario* s) { s->duration_us = 2'000'000; });
  ran.result.interrupted = true;
  const RunRecord r = RecordOf(ran, "scenarios/contention-10.toml");
  const Json d = CheckJson(r);
  CHECK(d.at("result").str() == "interrupted");
  CHECK(std::get<bool>(d.at("interrupted").v));
  const auto suite = CheckJunit(r);
  CHECK(std::stoi(suite->attributes.at("errors")) > 0);
  CHECK(suite->attributes.at("failures") == "0");
}

TEST_CASE("the strict parsers used here refuse what is not JSON or well-formed XML") {
  for (const std::string bad : {"{\"a\": 1,}", "{\"a\" 1}", "[1 2]", "\"tab\there\"", "01", "{\"a\":1}x",
                                "{\"a\":1, \"a\":2}", "nul", "1.", "-"}) {
    INFO(bad);
    CHECK(!JsonParser(bad).Parse().has_value());
  }
  CHECK(JsonParser("{\"a\": [1, -2.5e3, true, null, \"x\\u0041\\n\"]}").Parse().has_value());
  const std::string decl = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  CHECK(ParseXml(decl + "<a><b x=\"1\"/></a>") != nullptr);
  CHECK(ParseXml(decl + "<a><b></a></b>") == nullptr);
  CHECK(ParseXml(decl + "<a x=\"<\"/>") == nullptr);
  CHECK(ParseXml(decl + "<a>&bogus;</a>") == nullptr);
  CHECK(ParseXml(decl + "<a/><b/>") == nullptr);
  CHECK(ParseXml(decl + "<a x=\"1\" x=\"2\"/>") == nullptr);
}

}  // namespace
}  // namespace lockstep::cli

// Text a history carries (a reply, a detail) reaches the terminal with its control
// bytes written out, so an ESC sequence in a mutated history cannot drive the user's terminal.
namespace lockstep::cli {
namespace {

TEST_CASE("a verdict printed for the terminal writes control bytes out") {
  check::Verdict verdict;
  check::PropertyResult r;
  r.property = "mutual_exclusion";
  r.violated = true;
  r.violation_count = 1;
  check::Violation v;
  v.explanation = "c1 answered \x1b[2J\x1b]0;owned\x07 then";
  r.violations.push_back(v);
  verdict.results.push_back(r);
  const std::string text = FormatVerdict(verdict, {});
  CHECK(text.find('\x1b') == std::string::npos);
  CHECK(text.find('\x07') == std::string::npos);
  CHECK(text.find("c1 answered \\x1b[2J\\x1b]0;owned\\x07 then") != std::string::npos);
  CHECK(Printable("plain text, unchanged") == "plain text, unchanged");
}

}  // namespace
}  // namespace lockstep::cli
