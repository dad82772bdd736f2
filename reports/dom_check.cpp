// report_dom_check HISTORY SCENARIO DOM: the browser test's judge (reports/browser_test.sh).
//
// DOM is what Chromium's --dump-dom printed for report.html after its script ran. This program
// works the expected facts out on its own, from the history and the scenario (running the
// checkers, not the report code), and checks the DOM shows them: a lane for every client thread
// and node, the lead violation's marker at the Verdict's interval with its threads, the
// explanation, and the script's "ok" marker. Exit status 0 when all hold, 1 otherwise.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "check/check.h"
#include "model/scenario_toml.h"

namespace {

int failures = 0;

void Check(bool ok, const std::string& what) {
  std::printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) ++failures;
}

// The opening tag of the element whose attributes include `needle`.
std::string TagWith(const std::string& dom, const std::string& needle) {
  const size_t at = dom.find(needle);
  if (at == std::string::npos) return "";
  const size_t open = dom.rfind('<', at);
  const size_t close = dom.find('>', at);
  return dom.substr(open, close - open + 1);
}

std::string Attribute(const std::string& tag, const std::string& name) {
  const std::string key = " " + name + "=\"";
  const size_t at = tag.find(key);
  if (at == std::string::npos) return "";
  const size_t from = at + key.size();
  return tag.substr(from, tag.find('"', from) - from);
}

// Text as Chromium serialises a text node: only &, < and > are escaped.
std::string TextEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace lockstep;
  if (argc != 4) {
    std::fprintf(stderr, "usage: report_dom_check HISTORY SCENARIO DOM\n");
    return 2;
  }
  std::string error;
  const std::string history_path = argv[1];
  ScenarioError scenario_error;
  auto scenario = LoadScenarioFile(argv[2], &scenario_error);
  if (!scenario) {
    std::fprintf(stderr, "%s\n", scenario_error.ToString().c_str());
    return 2;
  }
  std::ifstream in(argv[3], std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string dom = buffer.str();
  Check(dom.size() > 1000, "the DOM dump is not empty (" + std::to_string(dom.size()) + " bytes)");

  for (const ClientSpec& c : scenario->clients) {
    for (int t = 0; t < c.threads; ++t) {
      const std::string lane = c.name + ".t" + std::to_string(t);
      Check(dom.find("data-lane=\"" + lane + "\" data-kind=\"thread\"") != std::string::npos,
            "a lane for client thread " + lane);
    }
  }
  for (const NodeSpec& n : scenario->nodes) {
    Check(dom.find("data-lane=\"" + n.name + "\" data-kind=\"node\"") != std::string::npos,
          "a lane for node " + n.name);
  }

  check::CheckOptions options;
  options.liveness_bound_us = scenario->liveness_bound_us;
  options.lease_default_us = scenario->protocol.watchdog_timeout_us;
  const std::optional<check::Verdict> checked = check::CheckHistoryFile(history_path, options, &error);
  if (!checked) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 2;
  }
  const check::Verdict& verdict = *checked;
  const check::Violation* lead = nullptr;
  for (const check::PropertyResult& r : verdict.results) {
    if (r.violated && !r.violations.empty()) {
      lead = &r.violations.front();
      break;
    }
  }
  Check(lead != nullptr, "the scenario's history has a violation to show");
  if (lead != nullptr) {
    const std::string tag = TagWith(dom, "id=\"violation-0\"");
    Check(!tag.empty(), "a violation marker #violation-0");
    Check(Attribute(tag, "data-property") == lead->property,
          "its property is " + lead->property + " (got '" + Attribute(tag, "data-property") + "')");
    Check(Attribute(tag, "data-from-us") == std::to_string(lead->from_us),
          "it starts at the Verdict's " + std::to_string(lead->from_us) + " us (got " +
              Attribute(tag, "data-from-us") + ")");
    Check(Attribute(tag, "data-to-us") == std::to_string(lead->to_us),
          "it ends at the Verdict's " + std::to_string(lead->to_us) + " us (got " +
              Attribute(tag, "data-to-us") + ")");
    std::string threads;
    for (const std::string& t : lead->threads) threads += (threads.empty() ? "" : " ") + t;
    Check(Attribute(tag, "data-threads") == threads, "it names the threads " + threads);
    Check(dom.find(TextEscape(lead->explanation)) != std::string::npos,
          "the page carries the Verdict's explanation");
    // The marker must be inside the detail panel's data and its initial view.
    const std::string svg = TagWith(dom, "id=\"timeline\"");
    const long long view_from = std::atoll(Attribute(svg, "data-view-from-us").c_str());
    const long long view_to = std::atoll(Attribute(svg, "data-view-to-us").c_str());
    Check(view_from <= lead->from_us && lead->from_us <= view_to,
          "the initial view (" + std::to_string(view_from) + ".." + std::to_string(view_to) +
              " us) shows the violation");
  }
  const std::string status = TagWith(dom, "id=\"script-status\"");
  Check(Attribute(status, "data-status") == "ok",
        "the page's script ran without exceptions (status '" + Attribute(status, "data-status") +
            "')");
  Check(dom.find("id=\"plot\"") != std::string::npos &&
            Attribute(TagWith(dom, "id=\"plot\""), "viewBox").size() > 0,
        "the timeline plot has a viewBox");

  std::printf("%s: %d failure(s)\n", failures == 0 ? "PASS" : "FAIL", failures);
  return failures == 0 ? 0 : 1;
}
