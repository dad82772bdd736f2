// report_dom_check HISTORY SCENARIO DOM: the browser test's judge (reports/browser_test.sh).
//
// DOM is what Chromium's --dump-dom printed for report.html after its script ran. This program
// works the expected facts out on its own, from the history and the scenario (running the
// checkers, not the report code), and checks the DOM shows them: a lane for every client thread
// and node, the lead violation's marker at the Verdict's interval with its threads, the
// explanation, and the script's "ok" marker. Also: the charts count every acquisition the
// history has; the thread lanes drawn have colours of their own; a crowded run draws at most
// 48 thread lanes (the violation's among them) and says how many it left out. With --seek-s S
// the DOM is of report.html#t=S: the view is centred on S, and where the page keeps no detail
// it says so and how to get it. Exit status 0 when all hold, 1 otherwise.
#include <fnmatch.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "check/check.h"
#include "history/reader.h"
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
  double seek_s = -1;
  std::string lanes_filter;
  bool filtered = false;
  for (int i = 4; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (i + 1 < argc && flag == "--seek-s") {
      seek_s = std::atof(argv[i + 1]);
    } else if (i + 1 < argc && flag == "--lanes") {
      lanes_filter = argv[i + 1];
      filtered = true;
    } else {
      std::fprintf(stderr,
                   "usage: report_dom_check HISTORY SCENARIO DOM [--seek-s SECONDS] [--lanes P,Q]\n");
      return 2;
    }
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

  // Thread lanes: every one, or (past 48) 48 of them and a note with the number left out.
  constexpr size_t kMaxThreadLanes = 48;
  std::vector<std::string> threads;
  for (const ClientSpec& c : scenario->clients) {
    for (int t = 0; t < c.threads; ++t) threads.push_back(c.name + ".t" + std::to_string(t));
  }
  std::set<std::string> colours;
  size_t drawn = 0;
  for (const std::string& lane : threads) {
    const std::string tag = "data-lane=\"" + lane + "\" data-kind=\"thread\"";
    const size_t at = dom.find(tag);
    if (threads.size() <= kMaxThreadLanes) Check(at != std::string::npos, "a lane for client thread " + lane);
    if (at == std::string::npos) continue;
    ++drawn;
    // The lane's swatch: the first fill after its tag.
    const size_t fill = dom.find("fill=\"", at);
    if (fill != std::string::npos) colours.insert(dom.substr(fill + 6, 7));
  }
  Check(colours.size() == drawn, std::to_string(drawn) + " thread lanes drawn with " +
                                     std::to_string(colours.size()) + " distinct colours");
  if (threads.size() > kMaxThreadLanes) {
    Check(drawn == kMaxThreadLanes, "a crowded run draws " + std::to_string(kMaxThreadLanes) +
                                        " thread lanes (got " + std::to_string(drawn) + ")");
    const std::string note = "(" + std::to_string(threads.size() - drawn) + " more threads not drawn";
    Check(dom.find(note) != std::string::npos, "the page says " + note + ")");
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
    for (const std::string& t : lead->threads) {
      Check(dom.find("data-lane=\"" + t + "\" data-kind=\"thread\"") != std::string::npos,
            "the violation's thread " + t + " has a lane");
    }
    // The marker must be inside the detail panel's data and its initial view.
    const std::string svg = TagWith(dom, "id=\"timeline\"");
    const long long view_from = std::atoll(Attribute(svg, "data-view-from-us").c_str());
    const long long view_to = std::atoll(Attribute(svg, "data-view-to-us").c_str());
    Check(view_from <= lead->from_us && lead->from_us <= view_to,
          "the initial view (" + std::to_string(view_from) + ".." + std::to_string(view_to) +
              " us) shows the violation");
  }

  // The charts: every acquisition of the run, counted from the history itself (any form).
  {
    struct CountAcquired : history::EventSink {
      long long n = 0;
      void OnEvent(const history::Event& e) override {
        if (e.type == history::EventType::kOk && e.op == history::names::kAcquire) ++n;
      }
    } count;
    history::NameTable names;
    history::ReadStats stats;
    std::string read_error;
    Check(history::ReadHistoryFile(history_path, &names, &count, &stats, &read_error),
          "the history reads back (" + read_error + ")");
    const long long acquired = count.n;
    const std::string charts = TagWith(dom, "id=\"charts\"");
    Check(Attribute(charts, "data-acquired") == std::to_string(acquired),
          "the charts count the history's " + std::to_string(acquired) + " acquisitions (got '" +
              Attribute(charts, "data-acquired") + "')");
    for (const char* id : {"chart-throughput", "chart-latency", "chart-holders"}) {
      Check(dom.find(std::string("id=\"") + id + "\"") != std::string::npos,
            std::string("a chart #") + id);
    }
  }

  if (filtered) {
    // The page was opened with #lanes=...: thread lanes that match none of the patterns are
    // out, and every lane left (threads and nodes) moved up by the heights of those above it.
    std::vector<std::string> patterns;
    for (size_t from = 0; from <= lanes_filter.size();) {
      size_t comma = lanes_filter.find(',', from);
      if (comma == std::string::npos) comma = lanes_filter.size();
      std::string p = lanes_filter.substr(from, comma - from);
      p.erase(0, p.find_first_not_of(' '));
      p.erase(p.find_last_not_of(' ') + 1);
      if (!p.empty()) patterns.push_back(p);
      from = comma + 1;
    }
    struct Lane {
      std::string name, kind, filtered;
      long y0 = 0, y = 0;
    };
    std::vector<Lane> lanes;
    for (size_t at = 0; (at = dom.find("<g class=\"lane\" id=", at)) != std::string::npos; ++at) {
      const std::string tag = dom.substr(at, dom.find('>', at) - at + 1);
      Lane l;
      l.name = Attribute(tag, "data-lane");
      l.kind = Attribute(tag, "data-kind");
      l.filtered = Attribute(tag, "data-filtered");
      l.y0 = std::atol(Attribute(tag, "data-y").c_str());
      const size_t bg = dom.find("<rect class=\"lanebg", at);
      l.y = std::atol(Attribute(dom.substr(bg, dom.find('>', bg) - bg + 1), "y").c_str());
      if (l.kind == "thread" || l.kind == "node") lanes.push_back(l);
    }
    size_t in = 0, out = 0;
    for (const Lane& l : lanes) {
      if (l.kind != "thread") continue;
      bool match = patterns.empty();
      for (const std::string& p : patterns) match = match || fnmatch(p.c_str(), l.name.c_str(), 0) == 0;
      Check(l.filtered == (match ? "in" : "out"),
            "lane " + l.name + " is filtered " + (match ? "in" : "out") + " (got '" + l.filtered + "')");
      (match ? in : out) += 1;
    }
    Check(in > 0 && out > 0, "the filter keeps " + std::to_string(in) + " thread lanes and hides " +
                                 std::to_string(out));
    constexpr long kThreadLaneHeight = 40;
    for (const Lane& l : lanes) {
      if (l.filtered == "out") continue;
      long above = 0;
      for (const Lane& h : lanes) above += h.filtered == "out" && h.y0 < l.y0 ? 1 : 0;
      Check(l.y == l.y0 - above * kThreadLaneHeight,
            "lane " + l.name + " moved from y " + std::to_string(l.y0) + " to " +
                std::to_string(l.y0 - above * kThreadLaneHeight) + " (got " + std::to_string(l.y) + ")");
    }
  }

  if (seek_s >= 0) {
    // The script moved the view: its text and the plot's viewBox are centred on seek_s.
    const std::string svg = TagWith(dom, "id=\"timeline\"");
    const double data_from = std::atof(Attribute(svg, "data-data-from-us").c_str()) / 1e6;
    const double data_to = std::atof(Attribute(svg, "data-data-to-us").c_str()) / 1e6;
    const std::string view = TagWith(dom, "id=\"view-text\"");
    const size_t text_at = dom.find(view) + view.size();
    const std::string text = dom.substr(text_at, dom.find('<', text_at) - text_at);
    double a = -1, b = -1;
    std::sscanf(text.c_str(), "view %lf s \xe2\x80\x93 %lf s", &a, &b);
    const bool outside = seek_s < data_from || seek_s > data_to;
    if (!outside) {
      Check(a <= seek_s && seek_s <= b, "the view (" + text + ") shows " + std::to_string(seek_s) + " s");
    }
    const std::string far = TagWith(dom, "id=\"no-detail\"");
    char at_text[64], how[64];
    std::snprintf(at_text, sizeof(at_text), "No detail kept at %.1f s", seek_s);
    std::snprintf(how, sizeof(how), "--detail-at %.1f", seek_s);
    if (outside) {
      Check(Attribute(far, "style").find("block") != std::string::npos &&
                dom.find(at_text) != std::string::npos && dom.find(how) != std::string::npos,
            std::string("outside the page's detail (") + std::to_string(data_from) + " to " +
                std::to_string(data_to) + " s) it says: " + at_text + " ... --detail-at");
    } else {
      Check(far.empty() || Attribute(far, "style").find("none") != std::string::npos,
            "inside the page's detail there is no 'no detail' note");
    }
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
