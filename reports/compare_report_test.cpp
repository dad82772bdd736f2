// Establishes that a replay's report.html shows both runs: both runs' timelines stacked on one
// axis (every lane of each, with each run's own operations), both verdict columns with each
// run's verdict per property, the per-thread agreement, and the first divergence, marked on both
// timelines at each run's own time; that its ids are unique; that summary.md carries the same
// comparison; and that another pair of runs gets both in its labels' words. The two runs are
// hand-written histories (no simulator, no servers).
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <regex>
#include <string>

#include "check/compare.h"
#include "check/testing.h"
#include "reports/report.h"
#include "reports/text.h"

namespace lockstep::reports {
namespace {

using namespace check::testing;

check::OperationLog LogOf(const Recorder& r) {
  check::OperationLog log(&r.history().names());
  for (const history::Event& e : r.history().events()) log.OnEvent(e);
  return log;
}

// c1 then c2 take the lock on n1. Live, c2 acquires at 2.2 s while c1 holds until 2.5 s (a
// mutual exclusion violation only the live run has), and c2's second acquire fails at 5.2 s
// where the simulated one succeeded: the first divergence.
Recorder Run(bool live) {
  Recorder r(7_s);
  r.Client("c1");
  r.Client("c2");
  r.Invoke(1_s, "c1.t0", "acquire");
  r.Exec(1001_ms, "n1", "c1.t0", "acquire", "(nil)");
  r.Lease(1001_ms, "n1", "acquired", "c1.t0");
  r.Ok(1002_ms, "c1.t0", "acquire");
  const int64_t c1_release = live ? 2500_ms : 2_s;
  if (live) {
    r.Invoke(2200_ms, "c2.t0", "acquire");
    r.Ok(2201_ms, "c2.t0", "acquire");
  }
  r.Invoke(c1_release, "c1.t0", "release");
  r.Exec(c1_release + 1_ms, "n1", "c1.t0", "unlock", "1");
  r.Lease(c1_release + 1_ms, "n1", "released", "c1.t0");
  r.Ok(c1_release + 2_ms, "c1.t0", "release", 1);
  if (!live) {
    r.Invoke(3_s, "c2.t0", "acquire");
    r.Exec(3001_ms, "n1", "c2.t0", "acquire", "(nil)");
    r.Lease(3001_ms, "n1", "acquired", "c2.t0");
    r.Ok(3002_ms, "c2.t0", "acquire");
  }
  r.Invoke(4_s, "c2.t0", "release");
  if (!live) {
    r.Exec(4001_ms, "n1", "c2.t0", "unlock", "1");
    r.Lease(4001_ms, "n1", "released", "c2.t0");
  }
  r.Ok(4002_ms, "c2.t0", "release", 1);
  r.Invoke(live ? 5100_ms : 5_s, "c2.t0", "acquire");
  if (live) {
    r.Fail(5200_ms, "c2.t0", "acquire", "wait timed out");  // Its command got no reply.
  } else {
    r.Exec(5001_ms, "n1", "c2.t0", "acquire", "(nil)");
    r.Lease(5001_ms, "n1", "acquired", "c2.t0");
    r.Ok(5002_ms, "c2.t0", "acquire");
    r.Invoke(6_s, "c2.t0", "release");  // Only the simulated run gets this far.
    r.Exec(6001_ms, "n1", "c2.t0", "unlock", "1");
    r.Lease(6001_ms, "n1", "released", "c2.t0");
    r.Ok(6002_ms, "c2.t0", "release", 1);
  }
  return r;
}

// The opening tag of the element with this id ("" when there is none).
std::string TagWithId(const std::string& html, const std::string& id) {
  const size_t at = html.find("id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  const size_t start = html.rfind('<', at);
  return html.substr(start, html.find('>', at) - start + 1);
}

std::string Attr(const std::string& tag, const std::string& name) {
  const size_t at = tag.find(" " + name + "=\"");
  if (at == std::string::npos) return "";
  const size_t from = at + name.size() + 3;
  return tag.substr(from, tag.find('"', from) - from);
}

struct Compared {
  Recorder sim_history = Run(false);
  Recorder live_history = Run(true);
  check::Verdict sim = sim_history.Check();
  check::Verdict live = live_history.Check();
  check::RunComparison comparison =
      check::CompareRuns(sim, LogOf(sim_history), live, LogOf(live_history));
  ReportMeta meta;
  Timeline sim_timeline, live_timeline;
  std::string html, summary;

  Compared() {
    meta.scenario_name = "hand-made-replay";
    meta.seed = 7;
    meta.reproduce = "lockstep replay hand-made-replay.toml --seed 7";
    sim_timeline = BuildReportTimeline(sim_history.history(), sim, meta);
    live_timeline = BuildReportTimeline(live_history.history(), live, meta);
    const ComparedRun live_run{&live_timeline, &live, &meta};
    const ComparedRun sim_run{&sim_timeline, &sim, &meta};
    html = RenderComparisonHtml(live_run, sim_run, comparison);
    summary = RenderComparisonSummary(live_run, sim_run, comparison);
  }
};

TEST_CASE("comparison report.html: both timelines, both verdict columns, the divergence",
          "[reports][compare]") {
  const Compared c;
  const std::string& html = c.html;
  // The premise: the runs differ in one verdict and in c2's third operation.
  REQUIRE(c.comparison.verdicts_differ);
  REQUIRE(c.comparison.divergence);

  SECTION("both runs' timelines, live above the simulated one, in one svg") {
    const std::string live_title = TagWithId(html, "live-title");
    const std::string sim_title = TagWithId(html, "sim-title");
    REQUIRE_FALSE(live_title.empty());
    REQUIRE_FALSE(sim_title.empty());
    const int live_top = std::stoi(Attr(live_title, "data-top"));
    const int live_bottom = live_top + std::stoi(Attr(live_title, "data-height"));
    const int sim_top = std::stoi(Attr(sim_title, "data-top"));
    CHECK(live_bottom <= sim_top);
    CHECK(html.find("<svg id=\"timeline\"") == html.rfind("<svg id=\"timeline\""));
    for (const char* lane : {"c1.t0", "c2.t0", "n1"}) {
      CHECK_FALSE(TagWithId(html, std::string("live-lane-") + lane).empty());
      CHECK_FALSE(TagWithId(html, std::string("sim-lane-") + lane).empty());
    }
    // Each run's own operations: the failed acquire only live, the last release only simulated.
    CHECK(html.find("c2.t0 acquire fail: 5.100 s - 5.200 s") != std::string::npos);
    CHECK(html.find("c2.t0 acquire ok: 5.000 s - 5.002 s") != std::string::npos);
    CHECK(html.find("c2.t0 release ok: 6.000 s - 6.002 s") != std::string::npos);
    CHECK(html.find("c2.t0 acquire ok: 2.200 s - 2.201 s") != std::string::npos);
    // The live violation is drawn on the live rows only.
    const std::string band = html.substr(html.find("id=\"live-violation-0\""));
    const std::string vband = band.substr(band.find("<rect class=\"vband\""));
    CHECK(std::stoi(Attr(vband, "y")) == live_top);
    CHECK(TagWithId(html, "sim-violation-0").empty());
    CHECK_FALSE(TagWithId(html, "live-lead-violation").empty());
    CHECK_FALSE(TagWithId(html, "sim-no-violation").empty());
  }

  SECTION("both verdict columns, each with its run's verdict") {
    for (const check::PropertyComparison& p : c.comparison.properties) {
      INFO(p.property);
      const size_t at = html.find("<tr data-property=\"" + p.property + "\"");
      REQUIRE(at != std::string::npos);
      const std::string row = html.substr(at, html.find('>', at) - at + 1);
      const check::PropertyResult* s = c.sim.Find(p.property);
      const check::PropertyResult* l = c.live.Find(p.property);
      REQUIRE(s != nullptr);
      REQUIRE(l != nullptr);
      const bool applicable = s->applicable && l->applicable;
      CHECK(Attr(row, "data-sim") ==
            (!applicable ? "n/a" : s->violated ? "violated" : "holds"));
      CHECK(Attr(row, "data-live") ==
            (!applicable ? "n/a" : l->violated ? "violated" : "holds"));
      CHECK((Attr(row, "class") == "differs") == (applicable && s->violated != l->violated));
    }
    const size_t at = html.find("<tr data-property=\"mutual_exclusion\"");
    const std::string row = html.substr(at, html.find("</tr>", at) - at);
    CHECK(row.find("data-sim=\"holds\" data-live=\"violated\" class=\"differs\"") !=
          std::string::npos);
    CHECK(row.find("<td class=\"v holds\">holds</td><td class=\"v violated\">VIOLATED &times;1") !=
          std::string::npos);
    CHECK(row.find("DIFFERENT") != std::string::npos);
    CHECK(Attr(TagWithId(html, "verdict-agreement"), "data-agree") == "false");
  }

  SECTION("the operations' agreement per thread") {
    const std::string ops = TagWithId(html, "operation-agreement");
    CHECK(Attr(ops, "data-compared") == "5");
    CHECK(Attr(ops, "data-agree") == "4");
    CHECK(Attr(ops, "data-sim-only") == "1");
    CHECK(Attr(ops, "data-live-only") == "0");
    CHECK(html.find("<tr data-thread=\"c1.t0\"><td>c1.t0</td><td>2</td><td>2</td><td>0</td>"
                    "<td>0</td><td>0</td></tr>") != std::string::npos);
    CHECK(html.find("<tr data-thread=\"c2.t0\" class=\"diverges\"><td>c2.t0</td><td>3</td>"
                    "<td>2</td><td>1</td><td>1</td><td>0</td></tr>") != std::string::npos);
  }

  SECTION("the first divergence, told and marked on both timelines at each run's time") {
    const std::string told = TagWithId(html, "first-divergence");
    CHECK(Attr(told, "data-thread") == "c2.t0");
    CHECK(Attr(told, "data-position") == "3");
    CHECK(Attr(told, "data-sim-from-us") == "5000000");
    CHECK(Attr(told, "data-live-from-us") == "5100000");
    CHECK(html.find(HtmlEscape(c.comparison.divergence->live_side)) != std::string::npos);
    CHECK(html.find("fail (wait timed out) at 5.200 s, no reply to any of its commands") !=
          std::string::npos);
    const std::string live_mark = TagWithId(html, "live-divergence");
    const std::string sim_mark = TagWithId(html, "sim-divergence");
    CHECK(Attr(live_mark, "data-from-us") == "5100000");
    CHECK(Attr(live_mark, "data-to-us") == "5200000");
    CHECK(Attr(sim_mark, "data-from-us") == "5000000");
    CHECK(Attr(sim_mark, "data-to-us") == "5002000");
    // Each band covers its own run's rows.
    const std::string live_title = TagWithId(html, "live-title");
    const std::string sim_title = TagWithId(html, "sim-title");
    auto band_y = [&](const std::string& id) {
      const size_t at = html.find("id=\"" + id + "\"");
      const size_t rect = html.find("<rect class=\"dband\"", at);
      return Attr(html.substr(rect, html.find('>', rect) - rect), "y");
    };
    CHECK(band_y("live-divergence") == Attr(live_title, "data-top"));
    CHECK(band_y("sim-divergence") == Attr(sim_title, "data-top"));
    size_t labels = 0;
    for (size_t at = html.find(">DIVERGENCE: c2.t0 #3<"); at != std::string::npos;
         at = html.find(">DIVERGENCE: c2.t0 #3<", at + 1)) {
      ++labels;
    }
    CHECK(labels == 2);
  }

  SECTION("every id is unique, and one script drives both timelines") {
    std::map<std::string, int> ids;
    const std::regex id_re(" id=\"([^\"]*)\"");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), id_re);
         it != std::sregex_iterator(); ++it) {
      ++ids[(*it)[1].str()];
    }
    for (const auto& [id, n] : ids) {
      INFO(id);
      CHECK(n == 1);
    }
    CHECK(ids.count("plot") == 1);
    CHECK(ids.count("overview") == 1);
    CHECK(ids.count("script-status") == 1);
  }
}

TEST_CASE("comparison summary.md: the live run's summary, then the comparison",
          "[reports][compare]") {
  const Compared c;
  CHECK(c.summary.rfind("## lockstep: hand-made-replay (seed 7)", 0) == 0);
  CHECK(c.summary.find("### Simulated vs live") != std::string::npos);
  CHECK(c.summary.find("| mutual_exclusion | holds | **violated** (1) | **different** |") !=
        std::string::npos);
  CHECK(c.summary.find("The verdicts differ: that is a finding") != std::string::npos);
  CHECK(c.summary.find("5 compared position by position, 4 with the same outcome; 1 only "
                       "simulated, 0 only live") != std::string::npos);
  CHECK(c.summary.find("| c2.t0 | 3 | 2 | 1 | 0 |") != std::string::npos);
  CHECK(c.summary.find("**First divergence:** c2.t0's operation #3 (acquire), invoked at "
                       "5.000 s simulated and 5.100 s live") != std::string::npos);
}

// Another pair than a replay's: a shrunk failure (first) and the same case on a reference
// (second).
check::RunLabels OtherLabels() {
  check::RunLabels l;
  l.first = {.name = "shrunk case",
             .where = "in the shrunk case",
             .run = "shrunk run",
             .tag = "shrunk",
             .op_where = "in the shrunk case",
             .row = "shrunk case",
             .time = "simulated time",
             .title = "SHRUNK CASE: the failing case, shrunk"};
  l.second = {.name = "reference",
              .where = "in the reference",
              .run = "reference run",
              .tag = "reference",
              .op_where = "in the reference",
              .row = "reference",
              .time = "simulated time",
              .title = "REFERENCE: the same case on the stock scripts"};
  l.second_dir = "reference";
  l.page = "comparison.html";
  l.tool = "lockstep fuzz";
  l.pair = "a shrunk failure and its reference";
  l.agree = "Both agree.";
  l.differ = "They differ on the same case.";
  return l;
}

TEST_CASE("a comparison's page and summary name its runs by its labels", "[reports][compare]") {
  const Compared c;
  const check::RunComparison other = check::CompareRuns(
      c.sim, LogOf(c.sim_history), c.live, LogOf(c.live_history), OtherLabels());
  const ComparedRun first{&c.live_timeline, &c.live, &c.meta};
  const ComparedRun second{&c.sim_timeline, &c.sim, &c.meta};
  const std::string html = RenderComparisonHtml(first, second, other);
  const std::string summary = RenderComparisonSummary(first, second, other);

  SECTION("the page") {
    CHECK(html.find("<title>lockstep fuzz: hand-made-replay seed 7, shrunk case and "
                    "reference</title>") != std::string::npos);
    CHECK(html.find("<span class=\"seed\">a shrunk failure and its reference</span>") !=
          std::string::npos);
    CHECK(html.find("<h2>Reference vs shrunk case</h2>") != std::string::npos);
    CHECK(html.find("<th>property</th><th>reference</th><th>shrunk case</th>") !=
          std::string::npos);
    CHECK(html.find("They differ on the same case.") != std::string::npos);
    CHECK(html.find("1 only in the reference, 0 only in the shrunk case.") != std::string::npos);
    CHECK(html.find("invoked at 5.000 s in the reference run and 5.100 s in the shrunk run") !=
          std::string::npos);
    CHECK(html.find("<a href=\"reference/report.html\">reference/report.html</a>") !=
          std::string::npos);
    CHECK(html.find(">SHRUNK CASE: the failing case, shrunk (7.000 s)<") != std::string::npos);
    CHECK(html.find(">REFERENCE: the same case on the stock scripts (7.000 s)<") !=
          std::string::npos);
    CHECK(html.find("shrunk run: mutual_exclusion violated") != std::string::npos);
    CHECK(html.find("reference run: No property violated") != std::string::npos);
    CHECK(html.find("reference/history.jsonl") != std::string::npos);
    // None of the replay's words for its runs is left on the page; its ids stay (live-title,
    // sim-title).
    for (const char* replay : {"Simulated vs live", "simulated run", "live run", "sim/",
                               "real time", "only simulated", "in the simulator", "LIVE:",
                               "live replay and its simulation", "Sentinel"}) {
      INFO(replay);
      CHECK(html.find(replay) == std::string::npos);
    }
    CHECK_FALSE(TagWithId(html, "live-title").empty());
    CHECK_FALSE(TagWithId(html, "sim-title").empty());
  }

  SECTION("each run's protocol where they differ, one row where they agree") {
    ReportMeta first_meta = c.meta, second_meta = c.meta;
    first_meta.parameters = {{"protocol", "rlock current"}, {"lease", "30000ms"}};
    second_meta.parameters = {{"protocol", "rlock v3.13.6"}, {"lease", "30000ms"}};
    const std::string page =
        RenderComparisonHtml({&c.live_timeline, &c.live, &first_meta},
                             {&c.sim_timeline, &c.sim, &second_meta}, other);
    CHECK(page.find("<dt>protocol (shrunk run)</dt><dd>rlock current</dd>\n"
                    "<dt>protocol (reference run)</dt><dd>rlock v3.13.6</dd>\n"
                    "<dt>lease</dt><dd>30000ms</dd>") != std::string::npos);
  }

  SECTION("the summary") {
    CHECK(summary.find("### Reference vs shrunk case\n\nThe summary above is the shrunk run's; "
                       "the reference run's is in `reference/summary.md`. `comparison.html` "
                       "shows both runs' timelines.") != std::string::npos);
    CHECK(summary.find("| property | reference | shrunk case | |") != std::string::npos);
    CHECK(summary.find("| thread | compared | same outcome | only in the reference | only in the "
                       "shrunk case |") != std::string::npos);
    CHECK(summary.find("invoked at 5.000 s in the reference and 5.100 s in the shrunk case:\n\n"
                       "- reference: ") != std::string::npos);
    CHECK(summary.find("Simulated vs live") == std::string::npos);
    CHECK(summary.find("only simulated") == std::string::npos);
  }
}

TEST_CASE("comparison report.html is byte-identical when rendered twice", "[reports][compare]") {
  const Compared a, b;
  CHECK(a.html == b.html);
  CHECK(a.summary == b.summary);
}

}  // namespace
}  // namespace lockstep::reports
