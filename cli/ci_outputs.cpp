#include "cli/ci_outputs.h"

#include <cstdio>
#include <sstream>

#include "cli/common.h"
#include "reports/text.h"

namespace lockstep::cli {

namespace {

Expectation ExpectationOf(const Scenario& s, const std::string& property) {
  return ::lockstep::ExpectationOf(s.expect, property);
}

const char* ExpectationWord(Expectation e) {
  switch (e) {
    case Expectation::kHold: return "hold";
    case Expectation::kViolated: return "violated";
    case Expectation::kAny: return "any";
  }
  return "any";
}

bool Matches(Expectation want, const check::PropertyResult& r) {
  return want == Expectation::kAny || (want == Expectation::kHold) != r.violated;
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

// "mutual_exclusion: expected to hold, violated (2 violations)".
std::string MismatchText(const check::PropertyResult& r, Expectation want) {
  std::string text = r.property + ": expected " +
                     (want == Expectation::kHold ? "to hold" : "to be violated") + ", ";
  if (!r.violated) return text + "holds";
  return text + "violated (" + std::to_string(r.violation_count) + " violation" +
         (r.violation_count == 1 ? "" : "s") + ")";
}

}  // namespace

std::string RunResultWord(const RunRecord& r) {
  if (r.interrupted) return "interrupted";
  return r.judgement->matches ? "pass" : "fail";
}

std::string XmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default:
        out += static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' ? ' ' : c;
    }
  }
  return out;
}

std::string RunJson(const RunRecord& r) {
  using reports::JsonString;
  const Scenario& s = *r.scenario;
  std::ostringstream j;
  j << "{\n  \"schema\": \"lockstep-run/1\",\n  \"lockstep\": " << JsonString(LOCKSTEP_VERSION)
    << ",\n  \"result\": " << JsonString(RunResultWord(r))
    << ",\n  \"scenario\": {\"name\": " << JsonString(s.name) << ", \"file\": " << JsonString(r.file)
    << ", \"seed\": " << s.seed << ", \"duration_us\": " << s.duration_us << "},\n"
    << "  \"end_us\": " << r.end_us << ",\n  \"interrupted\": " << (r.interrupted ? "true" : "false")
    << ",\n  \"properties\": [";
  bool first = true;
  for (const check::PropertyResult& p : r.verdict->results) {
    const Expectation want = ExpectationOf(s, p.property);
    j << (first ? "\n" : ",\n") << "    {\"name\": " << JsonString(p.property)
      << ", \"applicable\": " << (p.applicable ? "true" : "false")
      << ", \"expected\": " << JsonString(ExpectationWord(want))
      << ", \"violated\": " << (p.violated ? "true" : "false")
      << ", \"matches\": " << (Matches(want, p) ? "true" : "false")
      << ", \"violation_count\": " << p.violation_count << ", \"violations\": [";
    first = false;
    bool first_v = true;
    for (const check::Violation& v : p.violations) {
      j << (first_v ? "\n" : ",\n") << "      {\"kind\": " << JsonString(v.kind) << ", \"threads\": [";
      for (size_t i = 0; i < v.threads.size(); ++i) j << (i ? ", " : "") << JsonString(v.threads[i]);
      j << "], \"from_us\": " << v.from_us << ", \"to_us\": " << v.to_us << ", \"events\": [";
      for (size_t i = 0; i < v.events.size(); ++i) j << (i ? ", " : "") << v.events[i];
      j << "], \"explanation\": " << JsonString(v.explanation) << "}";
      first_v = false;
    }
    j << (first_v ? "" : "\n    ") << "]}";
  }
  j << "\n  ],\n  \"mismatches\": [";
  for (size_t i = 0; i < r.judgement->mismatches.size(); ++i) {
    j << (i ? ", " : "") << JsonString(r.judgement->mismatches[i]);
  }
  j << "],\n  \"warnings\": " << r.verdict->warning_count
    << ",\n  \"history\": {\"format\": " << JsonString(r.history_format) << ", \"file\": "
    << (r.history_path.empty() ? "null" : JsonString(r.history_path)) << ", \"events\": "
    << r.history_events << ", \"hash\": "
    << (r.history_hash.empty() ? "null" : JsonString(r.history_hash)) << "},\n  \"reports\": [";
  for (size_t i = 0; i < r.reports.size(); ++i) {
    j << (i ? ", " : "") << "{\"file\": " << JsonString(r.reports[i].path)
      << ", \"bytes\": " << r.reports[i].bytes;
    // What the file left out, as the console says it (trace.json past its detail budget).
    if (!r.reports[i].note.empty()) j << ", \"note\": " << JsonString(r.reports[i].note);
    j << "}";
  }
  j << "],\n  \"timings\": {\"simulated_s\": " << Fixed(static_cast<double>(r.end_us) / 1e6, 6)
    << ", \"wall_s\": " << Fixed(r.wall_s, 3) << ", \"reports_s\": " << Fixed(r.reports_s, 3)
    << ", \"peak_rss_kib\": " << r.peak_rss_kib << "},\n  \"reproduce\": " << JsonString(r.reproduce)
    << "\n}\n";
  return j.str();
}

std::string RunJunit(const RunRecord& r) {
  const Scenario& s = *r.scenario;
  int failures = 0, skipped = 0, errors = 0;
  for (const check::PropertyResult& p : r.verdict->results) {
    const Expectation want = ExpectationOf(s, p.property);
    if (want == Expectation::kAny) {
      ++skipped;
    } else if (r.interrupted) {
      ++errors;
    } else if (!Matches(want, p)) {
      ++failures;
    }
  }
  const std::string time = Fixed(r.wall_s, 3);
  const std::string suite = "lockstep run " + s.name;
  const std::string classname = "lockstep.run." + s.name;
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<testsuites name=\"lockstep run\" tests=\"" << r.verdict->results.size() << "\" failures=\""
    << failures << "\" errors=\"" << errors << "\" skipped=\"" << skipped << "\" time=\"" << time
    << "\">\n"
    << "  <testsuite name=\"" << XmlEscape(suite) << "\" tests=\"" << r.verdict->results.size()
    << "\" failures=\"" << failures << "\" errors=\"" << errors << "\" skipped=\"" << skipped
    << "\" time=\"" << time << "\">\n    <properties>\n";
  const auto property = [&x](const std::string& name, const std::string& value) {
    x << "      <property name=\"" << XmlEscape(name) << "\" value=\"" << XmlEscape(value) << "\"/>\n";
  };
  property("scenario_file", r.file);
  property("seed", std::to_string(s.seed));
  property("history_hash", r.history_hash);
  property("reproduce", r.reproduce);
  x << "    </properties>\n";
  for (const check::PropertyResult& p : r.verdict->results) {
    const Expectation want = ExpectationOf(s, p.property);
    x << "    <testcase classname=\"" << XmlEscape(classname) << "\" name=\"" << XmlEscape(p.property)
      << "\" time=\"" << time << "\">";
    if (want == Expectation::kAny) {
      x << "\n      <skipped message=\"not judged: the scenario's [expect] does not name it ("
        << (p.violated ? "violated" : "holds") << ")\"/>\n    ";
    } else if (r.interrupted) {
      x << "\n      <error message=\""
        << XmlEscape("interrupted at " + Seconds(r.end_us) + " of " + Seconds(s.duration_us) +
                     " simulated")
        << "\" type=\"interrupted\"/>\n    ";
    } else if (!Matches(want, p)) {
      const std::string type = p.violations.empty() ? "holds" : p.violations.front().kind;
      x << "\n      <failure message=\"" << XmlEscape(MismatchText(p, want)) << "\" type=\""
        << XmlEscape(type) << "\">";
      if (!p.violations.empty()) x << XmlEscape("first: " + p.violations.front().explanation) << "\n";
      x << XmlEscape("reproduce: " + r.reproduce) << "</failure>\n    ";
    }
    x << "</testcase>\n";
  }
  x << "  </testsuite>\n</testsuites>\n";
  return x.str();
}

}  // namespace lockstep::cli
