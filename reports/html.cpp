// report.html: the run as swimlanes on a true-time axis, for a design review.
//
// One file, no network: inline CSS, inline SVG, and a small inline script for zoom and pan (the
// stylesheets and the script are reports/assets/*, embedded at build time).
// Without the script the page shows the same picture (every position is computed here); the
// script only moves the view. It records that it ran by setting data-status="ok" on
// #script-status, which the browser test checks.
//
// Two panels share the lanes:
//   detail    the zoomable timeline. Its shapes live in a nested <svg> whose viewBox is in
//             microseconds since `origin` with preserveAspectRatio="none", so zooming is one
//             attribute change; strokes use vector-effect:non-scaling-stroke so that short
//             intervals stay at least a pixel wide. Text (axis, labels) lives outside it and
//             is placed by position. When the run has more than kHtmlDetailElements elements,
//             the detail covers a window around the lead violation (report.h explains).
//   overview  the whole run binned into pixel columns: for each lane the share of each column
//             spent holding or waiting (as opacity), faults and violations. Clicking it moves
//             the detail view there.
//
// Colours: Jepsen's for operation outcomes (ok #6DB6FE, fail #FFAA26, info #FEB5DA, invoke
// #eeeeee); one colour per client thread for key owners on the node lanes, shown next to the
// thread's name.
#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "reports/assets/assets.h"
#include "reports/report.h"
#include "reports/text.h"

namespace lockstep::reports {

namespace {

constexpr int kSvgWidth = 1330;
constexpr int kPlotX = 150;
constexpr int kPlotWidth = 1164;
constexpr int kAxisHeight = 26;
constexpr int kFaultRowHeight = 24;
constexpr int kSectionHeight = 20;
constexpr int kThreadLaneHeight = 40;
constexpr int kNodeLaneHeight = 44;
constexpr int kHoldersLaneHeight = 40;
constexpr int kClockLaneHeight = 84;  // 36 when no clock is skewed
constexpr int kOverviewLaneHeight = 8;
constexpr int kChartColumns = 194;  // 6 px each
constexpr int64_t kMaxPlotUnits = 4'000'000;  // see HtmlWriter::TimeX
// Thread lanes drawn at most (the violation's threads first); trace.json has every thread.
constexpr size_t kMaxThreadLanes = 48;
constexpr double kCharWidth = 6.3;  // DejaVu Sans at 11px, for label fitting (same in script)

constexpr const char* kClockColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                         "#8c564b", "#e377c2", "#17becf", "#bcbd22"};

// An integer as an attribute value: "42".
std::string IntText(int64_t v) { return std::to_string(v); }

// A pixel coordinate or length, to a tenth of a pixel, without a trailing ".0": "12", "12.5".
std::string PixelText(double v) {
  std::string s = Format("%.1f", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

// "1 s", "200 ms" ... for axis ticks.
std::string TickLabel(int64_t us, int64_t step_us) {
  if (step_us >= 1'000'000) return Format("%.*f s", step_us % 1'000'000 == 0 ? 0 : 1, us / 1e6);
  if (step_us >= 1000) {
    const double s = us / 1e6;
    const int decimals = step_us >= 100'000 ? 1 : step_us >= 10'000 ? 2 : 3;
    return Format("%.*f s", decimals, s);
  }
  return Format("%.4f s", us / 1e6);
}

// The tick step for ~`target` ticks over `span_us`: 1, 2 or 5 times a power of ten.
int64_t TickStep(int64_t span_us, int target) {
  const double raw = static_cast<double>(std::max<int64_t>(span_us, 1)) / target;
  int64_t step = 1;
  while (step * 10 <= raw) step *= 10;
  if (step * 5 <= raw) return step * 5;
  if (step * 2 <= raw) return step * 2;
  return step;
}

class HtmlWriter {
 public:
  // `id_prefix` goes before every element id this run's parts carry ("live-" on a page with
  // two runs); `run_title` after the headings of its tables (" (live run)").
  HtmlWriter(const Timeline& tl, const check::Verdict& verdict, const ReportMeta& meta,
             std::string id_prefix = "", std::string run_title = "")
      : tl_(tl),
        verdict_(verdict),
        meta_(meta),
        shown_(ShownViolations(verdict, kViolationsShown)),
        id_prefix_(std::move(id_prefix)),
        run_title_(std::move(run_title)),
        axis_end_us_(tl.end_us) {}

  std::string Render() {
    ChooseLanes();
    ChooseDetail();
    Layout();
    std::string out;
    out.reserve(1 << 20);
    out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>";
    out += HtmlEscape(
        "lockstep: " + meta_.scenario_name +
        (meta_.seed ? Format(" seed %llu", static_cast<unsigned long long>(*meta_.seed)) : ""));
    out += "</title>\n<style>\n";
    // A blank line opens the stylesheet, and the script (Foot): the page keeps the bytes it had
    // before its assets moved to files of their own.
    out += '\n';
    out += assets::kReportCss;
    out += "</style>\n</head>\n<body>\n";
    Header(&out);
    Detail(&out);
    Overview(&out);
    Charts(&out);
    Tables(&out);
    out += Foot();
    return out;
  }

 private:
  friend class ComparisonWriter;

  // The script status line and the script, the end of every page. The script (assets/report.js)
  // zooms and pans: every shape is in the nested #plot's microsecond space, so a view change
  // sets its viewBox, re-places the text labels (the same rule as PlaceLabels) and redraws the
  // axis.
  static std::string Foot() {
    std::string out =
        "<p id=\"script-status\" data-status=\"not run\" class=\"foot\">Zoom and pan need "
        "JavaScript; the picture above is complete without it.</p>\n";
    out += "<script>\n\n";
    out += assets::kReportJs;
    out += "</script>\n</body>\n</html>\n";
    return out;
  }

  // --- which threads get a lane ---

  void ChooseLanes() {
    for (const ThreadLane& l : tl_.threads) {
      for (const Span& h : l.holds) any_read_ = any_read_ || h.read;
    }
    for (const Fault& f : tl_.faults) {
      any_network_ = any_network_ || std::string_view(FaultClass(f.kind)) == "f-net";
    }
    for (const NodeLane& n : tl_.nodes) {
      for (const Lease& l : n.leases) any_replica_copy_ = any_replica_copy_ || l.replica;
    }
    drawn_.assign(tl_.threads.size(), false);
    size_t n = 0;
    auto draw = [&](int lane) {
      if (lane == kNone || drawn_[lane] || n >= kMaxThreadLanes) return;
      drawn_[lane] = true;
      ++n;
    };
    for (size_t i = 0; i < tl_.threads.size(); ++i) {
      for (const std::string& pattern : meta_.lane_patterns) {
        if (fnmatch(pattern.c_str(), tl_.threads[i].name.c_str(), 0) == 0) {
          draw(static_cast<int>(i));
        }
      }
    }
    for (const ShownViolation& v : shown_) {
      for (const std::string& t : v.violation->threads) draw(tl_.ThreadIndex(t));
    }
    for (size_t i = 0; i < tl_.threads.size(); ++i) draw(static_cast<int>(i));
    hidden_threads_ = tl_.threads.size() - n;
  }

  // --- what the detail panel covers ---

  void ChooseDetail() {
    // The panel shows part of the timeline window around the anchor (the lead violation, else
    // the first fault, else the start): that window's detail is complete.
    const int64_t anchor = meta_.detail_at_us ? *meta_.detail_at_us : AnchorUs(tl_, verdict_);
    const int near = tl_.WindowNear(anchor);
    const DetailWindow bounds = near == kNone ? DetailWindow{0, tl_.end_us} : tl_.windows[near];
    std::vector<int64_t> starts;
    auto add = [&](int64_t from_us, int64_t to_us) {
      if (to_us >= bounds.from_us && from_us <= bounds.to_us) {
        starts.push_back(std::max(from_us, bounds.from_us));
      }
    };
    for (size_t i = 0; i < tl_.threads.size(); ++i) {
      if (!drawn_[i]) continue;
      const ThreadLane& l = tl_.threads[i];
      for (const Op& op : l.ops) add(op.from_us, op.to_us);
      for (const Span& s : l.holds) add(s.from_us, s.to_us);
      for (const Span& s : l.sections) add(s.from_us, s.to_us);
    }
    for (const NodeLane& n : tl_.nodes) {
      for (const Lease& l : n.leases) {
        add(l.from_us, l.to_us);
        for (const TtlPoint& p : l.ttl) add(p.t_us, p.t_us);
      }
      for (const Exec& x : n.execs) add(x.t_us, x.t_us);
      for (const TtlPoint& p : n.pttl) add(p.t_us, p.t_us);
      for (const LeaseLoss& l : n.losses) add(l.t_us, l.t_us);
    }
    for (const HolderCount& h : tl_.holders) add(h.t_us, h.t_us);
    std::sort(starts.begin(), starts.end());
    window_ = ChooseWindow(starts, std::clamp(anchor, bounds.from_us, bounds.to_us),
                           kHtmlDetailElements, bounds.from_us, bounds.to_us);
    window_.whole_run = tl_.whole_run && window_.from_us <= 0 && window_.to_us >= tl_.end_us;
    origin_ = window_.from_us;
    // The initial view: the lead violation with its holders' spans and its events, padded.
    view_from_ = window_.from_us;
    view_to_ = std::max(window_.to_us, window_.from_us + 1000);
    if (const check::Violation* v = LeadViolation(verdict_)) {
      int64_t lo = v->from_us, hi = std::max(v->to_us, v->from_us + 1);
      const std::set<uint64_t> seqs(v->events.begin(), v->events.end());
      for (const std::string& name : v->threads) {
        const int lane = tl_.ThreadIndex(name);
        if (lane == kNone) continue;
        const ThreadLane& l = tl_.threads[lane];
        for (const Span& h : l.holds) {
          if (h.to_us < v->from_us || h.from_us > v->to_us) continue;
          lo = std::min(lo, h.from_us);
          hi = std::max(hi, h.to_us);
          // And the acquire that began it: retries and lost replies happen there.
          for (const Op& op : l.ops) {
            if (op.end_seq == h.from_seq) lo = std::min(lo, op.from_us);
          }
        }
        for (const Op& op : l.ops) {
          if (seqs.count(op.invoke_seq) || seqs.count(op.end_seq)) {
            lo = std::min(lo, op.from_us);
            hi = std::max(hi, op.to_us);
          }
        }
      }
      for (const Fault& f : tl_.faults) {
        if (seqs.count(f.seq)) {
          lo = std::min(lo, f.from_us);
          hi = std::max(hi, f.instant ? f.from_us : f.to_us);
        }
      }
      const int64_t pad = std::max<int64_t>((hi - lo) / 12, 1000);
      lo = std::max(window_.from_us, lo - pad);
      hi = std::min(window_.to_us, hi + pad);
      if (hi > lo) {
        view_from_ = lo;
        view_to_ = hi;
      }
    }
    focus_from_ = view_from_;
    focus_to_ = view_to_;
    min_span_us_ = std::max<int64_t>(200, (window_.to_us - window_.from_us) / 5000);
    unit_us_ = std::max<int64_t>(1, (window_.to_us - window_.from_us) / kMaxPlotUnits + 1);
  }

  bool InWindow(int64_t from_us, int64_t to_us) const {
    return to_us >= window_.from_us && from_us <= window_.to_us;
  }

  void Layout() { height_ = LayoutFrom(kAxisHeight) + kAxisHeight; }

  // Places this run's rows from `top` down (faults, threads, nodes, holders, clocks); returns
  // the y below them.
  int LayoutFrom(int top) {
    int y = top;
    faults_y_ = y;
    y += kFaultRowHeight;
    clients_header_y_ = y;
    y += kSectionHeight;
    for (size_t i = 0; i < tl_.threads.size(); ++i) {
      thread_y_.push_back(drawn_[i] ? y : kNone);
      if (drawn_[i]) y += kThreadLaneHeight;
    }
    nodes_header_y_ = y;
    y += kSectionHeight;
    for (size_t i = 0; i < tl_.nodes.size(); ++i) {
      node_y_.push_back(y);
      y += kNodeLaneHeight;
    }
    holders_y_ = y + 6;
    y = holders_y_ + kHoldersLaneHeight;
    clock_y_ = y + 6;
    clock_h_ = kClockLaneHeight;
    if (std::none_of(tl_.clocks.begin(), tl_.clocks.end(),
                     [&](const ClockSeries& c) { return Skewed(c); })) {
      clock_h_ = 36;
    }
    y = clock_y_ + clock_h_;
    band_top_ = top;
    band_h_ = y - top;
    return y;
  }

  // --- header: what ran, what the checkers said, how to get it again ---

  std::string ExpectationOf(const std::string& property) const {
    if (!meta_.expect) return "";
    const Expectation want = ::lockstep::ExpectationOf(*meta_.expect, property);
    if (want == Expectation::kAny) return "not judged";
    return want == Expectation::kHold ? "expected to hold" : "expected to be violated";
  }

  void Header(std::string* out) {
    std::string& o = *out;
    o += "<header>\n<h1>" +
         HtmlEscape(meta_.scenario_name.empty() ? "lockstep run" : meta_.scenario_name);
    if (meta_.seed)
      o += Format(" <span class=\"seed\">seed %llu</span>",
                  static_cast<unsigned long long>(*meta_.seed));
    o += "</h1>\n";
    if (!meta_.description.empty())
      o += "<p class=\"desc\">" + HtmlEscape(meta_.description) + "</p>\n";

    o += "<div class=\"verdicts\" id=\"verdicts\">\n";
    for (const check::PropertyResult& r : verdict_.results) {
      const std::string expect = ExpectationOf(r.property);
      bool mismatch = false;
      if (meta_.expect) {
        const Expectation want = ::lockstep::ExpectationOf(*meta_.expect, r.property);
        if (want != Expectation::kAny) mismatch = (want == Expectation::kViolated) != r.violated;
      }
      o += "<div class=\"verdict " + std::string(r.violated ? "violated" : "holds") +
           (mismatch ? " mismatch" : "") + "\" data-property=\"" + r.property +
           "\" data-violated=\"" + (r.violated ? "true" : "false") + "\"><b>" +
           HtmlEscape(r.property) + "</b><span>" + (r.violated ? "VIOLATED" : "holds");
      if (r.violated) o += Format(" &times;%zu", r.violation_count);
      o += "</span>";
      if (!expect.empty()) o += "<i>" + expect + (mismatch ? " &mdash; MISMATCH" : "") + "</i>";
      o += "</div>\n";
    }
    o += "</div>\n";

    o += "<dl class=\"meta\">\n";
    auto row = [&](const std::string& k, const std::string& v, bool code = false) {
      o += "<dt>" + HtmlEscape(k) + "</dt><dd>" + (code ? "<code>" : "") + HtmlEscape(v) +
           (code ? "</code>" : "") + "</dd>\n";
    };
    if (!meta_.scenario_file.empty()) row("scenario file", meta_.scenario_file);
    row("simulated", Seconds(tl_.end_us) + Format(" of true time, %zu events", tl_.event_count));
    row("history hash", tl_.history_hash, true);
    if (!meta_.version.empty()) row("lockstep", meta_.version);
    for (const auto& [name, value] : meta_.parameters) {
      if (name == "protocol" || name == "lease") row(name, value);
    }
    std::string scripts;
    for (const auto& [name, value] : meta_.parameters) {
      if (name.rfind("script ", 0) != 0) continue;
      const std::string sha = value.substr(0, value.find(' '));
      scripts += (scripts.empty() ? "" : ", ") + name.substr(7) + " " + sha.substr(0, 12);
    }
    row("script SHA-1s",
        scripts.empty() ? "not recorded in the history (pass --scenario)" : scripts,
        !scripts.empty());
    o += "<dt>reproduce</dt><dd><code class=\"repro\" id=\"reproduce\">" +
         HtmlEscape(meta_.reproduce) + "</code></dd>\n";
    o += "</dl>\n";

    Callout(&o, "");
    o += "</header>\n";
  }

  // The lead violation with its explanation, or that none was found. `run` names the run on a
  // page with two ("live run: ").
  void Callout(std::string* out, const std::string& run) {
    std::string& o = *out;
    if (const check::Violation* v = LeadViolation(verdict_)) {
      o += "<section class=\"callout\" id=\"" + id_prefix_ + "lead-violation\"><h2>" +
           HtmlEscape(run + v->property) + " violated <small>(" + HtmlEscape(v->kind) +
           ")</small></h2>\n<p class=\"when\">";
      for (size_t i = 0; i < v->threads.size(); ++i) {
        o += (i ? " &amp; " : "") + std::string("<b>") + HtmlEscape(v->threads[i]) + "</b>";
      }
      o += (v->threads.empty() ? "" : ", ") + Seconds(v->from_us) + " &ndash; " +
           Seconds(v->to_us) + " (" + Duration(v->to_us - v->from_us) + ")</p>\n<p>" +
           HtmlEscape(v->explanation) + "</p>\n<button type=\"button\" data-view-from-us=\"" +
           IntText(focus_from_) + "\" data-view-to-us=\"" + IntText(focus_to_) +
           "\">show in the timeline</button></section>\n";
    } else {
      o += "<section class=\"callout ok\" id=\"" + id_prefix_ + "no-violation\"><h2>" +
           HtmlEscape(run) + "No property violated</h2>"
           "<p>Every checker accepted the history.</p></section>\n";
    }
  }

  // --- the detail panel ---

  // Plot coordinates: time since origin_ in units of unit_us_, so that no coordinate exceeds
  // kMaxPlotUnits. Chromium lays SVG out in fixed point that saturates near 2^25, and a shape
  // beyond that is drawn clamped (a 60 s hold in microseconds would end at 33.5 s).
  std::string TimeX(int64_t t_us) const { return PlotUnits(t_us - origin_); }
  std::string SpanWidth(int64_t from_us, int64_t to_us) const {
    return PlotUnits(std::max<int64_t>(0, to_us - from_us));
  }
  std::string PlotUnits(int64_t us) const {
    if (unit_us_ == 1) return IntText(us);
    std::string s = Format("%.2f", static_cast<double>(us) / unit_us_);
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
  }
  // A time's x in pixels in the detail panel's current view (for text, which is not scaled).
  double ViewPx(int64_t t_us) const {
    return kPlotX + static_cast<double>(t_us - view_from_) * kPlotWidth /
                        static_cast<double>(view_to_ - view_from_);
  }

  static std::string Title(const std::string& text) {
    return "<title>" + HtmlEscape(text) + "</title>";
  }

  void Rect(std::string* o, const char* cls, int64_t from_us, int64_t to_us, double y, double h,
            const std::string& title, const std::string& extra = "") {
    *o += "<rect class=\"" + std::string(cls) + "\" x=\"" + TimeX(from_us) + "\" y=\"" +
          PixelText(y) + "\" width=\"" + SpanWidth(from_us, to_us) + "\" height=\"" + PixelText(h) +
          "\"" + extra + ">" + Title(title) + "</rect>\n";
  }

  // A label that the script keeps inside its interval (or hides when it does not fit).
  // Labels are collected here and written last (PlaceLabels), on top of every shape. A label
  // with an interval shows only when it fits inside it; one with from == to marks an instant.
  // In rows > 0 (the faults row, loss marks) a label also gives way to the earlier label of its
  // row that it would overlap.
  void Label(const char* cls, const std::string& text, int64_t from_us, int64_t to_us, double y,
             int row = 0) {
    const double w = text.size() * kCharWidth + 6;
    labels_.push_back({from_us, to_us, y, w, row, false, cls, text});
  }
  void InstantLabel(const char* cls, const std::string& text, int64_t at_us, double y, int row) {
    const double w = text.size() * kCharWidth + 6;
    labels_.push_back({at_us, at_us, y, w, row, true, cls, text});
  }

  struct PendingLabel {
    int64_t from_us, to_us;
    double y, width;
    int row;
    bool instant;
    std::string cls, text;
  };

  void Detail(std::string* out) {
    std::string& o = *out;
    o += "<section class=\"panel\">\n<div class=\"toolbar\"><b>Timeline</b> <span class=\"hint\">"
         "true time; wheel to zoom, drag to pan, click the overview to jump</span>"
         "<span class=\"buttons\"><button type=\"button\" data-zoom=\"in\">+</button>"
         "<button type=\"button\" data-zoom=\"out\">&minus;</button>";
    if (LeadViolation(verdict_)) {
      o += "<button type=\"button\" data-view-from-us=\"" + IntText(view_from_) +
           "\" data-view-to-us=\"" + IntText(view_to_) + "\">violation</button>";
    }
    o += "<button type=\"button\" data-view-from-us=\"" + IntText(window_.from_us) +
         "\" data-view-to-us=\"" + IntText(std::max(window_.to_us, window_.from_us + 1000)) +
         "\">" + (window_.whole_run ? "whole run" : "whole detail window") + "</button></span>" +
         LaneFilter() + "<span class=\"view\" id=\"view-text\">" + ViewText() + "</span></div>\n";
    Legend(&o);
    if (!window_.whole_run) {
      o += "<p class=\"note\" id=\"summarised\">This run is long: the timeline holds full detail "
           "from " +
           Seconds(window_.from_us) + " to " + Seconds(window_.to_us) +
           Format(" (at most %zu elements, around ", kHtmlDetailElements) +
           (meta_.detail_at_us    ? Seconds(*meta_.detail_at_us) + ", as asked"
            : LeadViolation(verdict_) ? std::string("the first violation")
            : tl_.faults.empty()    ? std::string("the start")
                                    : std::string("the first fault")) +
           "). The overview below covers the whole run, binned per pixel column" +
           (tl_.whole_run ? std::string(".")
                          : Format("; trace.json has full detail in %zu window%s (the start, "
                                   "every violation and fault, as far as its budget goes).",
                                   tl_.windows.size(), tl_.windows.size() == 1 ? "" : "s")) +
           " <code>lockstep report HISTORY --detail-at SECONDS</code> anchors it elsewhere.</p>\n"
           "<p class=\"note\" id=\"no-detail\" style=\"display:none\"></p>\n";
    }
    o += "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + IntText(kSvgWidth) +
         "\" height=\"" + IntText(height_) + "\" data-origin-us=\"" + IntText(origin_) +
         "\" data-data-from-us=\"" + IntText(window_.from_us) + "\" data-data-to-us=\"" +
         IntText(std::max(window_.to_us, window_.from_us + 1000)) + "\" data-view-from-us=\"" +
         IntText(view_from_) + "\" data-view-to-us=\"" + IntText(view_to_) +
         "\" data-min-span-us=\"" + IntText(min_span_us_) + "\" data-unit-us=\"" +
         IntText(unit_us_) + "\" data-plot-x=\"" + IntText(kPlotX) + "\" data-plot-width=\"" +
         IntText(kPlotWidth) + "\" data-end-us=\"" + IntText(tl_.end_us) + "\">\n";
    LaneBackgrounds(&o);
    o += "<g id=\"grid\">" + Grid() + "</g>\n";
    o += "<svg id=\"plot\" x=\"" + IntText(kPlotX) + "\" y=\"0\" width=\"" + IntText(kPlotWidth) +
         "\" height=\"" + IntText(height_) + "\" viewBox=\"" + ViewBox() +
         "\" preserveAspectRatio=\"none\">\n";
    FaultBands(&o);
    Threads(&o);
    Nodes(&o);
    Holders(&o);
    Clocks(&o);
    ViolationMarks(&o);
    o += "</svg>\n";
    o += "<g id=\"axis\">" + Axis() + "</g>\n";
    o += "<g id=\"labels\">\n";
    PlaceLabels(&o);
    o += "</g>\n</svg>\n</section>\n";
  }

  // The lane filter's field: thread lanes whose names match none of its patterns are hidden
  // and the rows below move up (the script; without it the field does nothing).
  static std::string LaneFilter() {
    return "<label class=\"lanefilter\" title=\"names or patterns, comma-separated: c1*, "
           "c2.t0, c?.t1\">lanes <input id=\"lane-filter\" type=\"text\" size=\"14\" "
           "placeholder=\"all\" spellcheck=\"false\"> <span id=\"lane-count\"></span></label>";
  }

  std::string ViewBox() const {
    return TimeX(view_from_) + " 0 " + SpanWidth(view_from_, view_to_) + " " + IntText(height_);
  }
  std::string ViewText() const {
    return "view " + Seconds(view_from_) + " &ndash; " + Seconds(view_to_) + " (" +
           Duration(view_to_ - view_from_) + ")";
  }

  void Legend(std::string* o) {
    const char* read =
        any_read_ ? "<span><i class=\"sw hold read\"></i>holding to read</span>" : "";
    const char* network =
        any_network_ ? "<span><i class=\"sw f-net\"></i>slow, lossy or duplicating links</span>"
                     : "";
    *o += std::string(
              "<div class=\"legend\">"
              "<span><i class=\"sw op-ok\"></i>acquire/release ok</span>"
              "<span><i class=\"sw op-fail\"></i>fail</span>"
              "<span><i class=\"sw op-info\"></i>unknown (info, crashed)</span>"
              "<span><i class=\"sw op-pending\"></i>still waiting at the end</span>"
              "<span><i class=\"sw hold\"></i>holding, as the client believes</span>") +
          read +
          "<span><i class=\"sw cs\"></i>critical section</span>"
          "<span><i class=\"sw lease\"></i>key owner on the node, TTL as height</span>" +
          (any_replica_copy_ ? "<span><i class=\"sw copy\"></i>a replica's copy of the key</span>"
                             : "") +
          "<span><i class=\"sw f-pause\"></i>pause</span>"
          "<span><i class=\"sw f-crash\"></i>crashed</span>"
          "<span><i class=\"sw f-partition\"></i>partitioned</span>"
          "<span><i class=\"sw f-lose\"></i>replies lost</span>" +
          network + "<span><i class=\"sw viol\"></i>violation</span>"
          "</div>\n";
  }

  void LaneBackgrounds(std::string* out) {
    std::string& o = *out;
    o += "<g id=\"" + id_prefix_ + "lanes\">\n";
    o += "<text class=\"section\" x=\"6\" y=\"" + IntText(clients_header_y_ + 14) +
         "\">clients: what each thread believes</text>\n";
    o += "<text class=\"section\" x=\"6\" y=\"" + IntText(nodes_header_y_ + 14) +
         "\">redis nodes: who the key belongs to</text>\n";
    o += "<g class=\"lane\" data-lane=\"faults\" data-kind=\"faults\"><text class=\"lname\" "
         "x=\"6\" y=\"" +
         IntText(faults_y_ + 16) + "\">faults</text></g>\n";
    if (hidden_threads_ > 0) {
      o += "<text class=\"section\" x=\"260\" y=\"" + IntText(clients_header_y_ + 14) + "\">" +
           Format(
               "(%zu more threads not drawn; trace.json has them all; lockstep report "
               "--lanes 'c7*' draws the ones you name)",
               hidden_threads_) +
           "</text>\n";
    }
    for (size_t i = 0; i < tl_.threads.size(); ++i) {
      const ThreadLane& l = tl_.threads[i];
      const int y = thread_y_[i];
      if (y == kNone) continue;
      std::string tip = l.name;
      if (!tl_.client_uuids[l.client].empty()) tip += " (uuid " + tl_.client_uuids[l.client] + ")";
      o += "<g class=\"lane\" id=\"" + id_prefix_ + "lane-" + HtmlEscape(l.name) +
           "\" data-lane=\"" + HtmlEscape(l.name) + "\" data-kind=\"thread\" data-y=\"" +
           IntText(y) + "\">" + Title(tip) + "<rect class=\"lanebg" + (i % 2 ? " alt" : "") +
           "\" x=\"0\" y=\"" + IntText(y) + "\" width=\"" + IntText(kSvgWidth) + "\" height=\"" +
           IntText(kThreadLaneHeight) + "\"/><rect x=\"8\" y=\"" + IntText(y + 14) +
           "\" width=\"10\" height=\"10\" rx=\"2\" fill=\"" + ThreadColour(i) +
           "\"/><text class=\"lname\" x=\"24\" y=\"" + IntText(y + 23) + "\">" +
           HtmlEscape(l.name) + "</text></g>\n";
    }
    for (size_t i = 0; i < tl_.nodes.size(); ++i) {
      const NodeLane& n = tl_.nodes[i];
      const int y = node_y_[i];
      o += "<g class=\"lane\" id=\"" + id_prefix_ + "lane-" + HtmlEscape(n.name) +
           "\" data-lane=\"" + HtmlEscape(n.name) + "\" data-kind=\"node\" data-y=\"" + IntText(y) +
           "\"><rect class=\"lanebg node" + (i % 2 ? " alt" : "") + "\" x=\"0\" y=\"" + IntText(y) +
           "\" width=\"" + IntText(kSvgWidth) + "\" height=\"" + IntText(kNodeLaneHeight) +
           "\"/><text class=\"lname\" x=\"8\" y=\"" + IntText(y + 19) + "\">" + HtmlEscape(n.name) +
           "</text>";
      if (!n.role.empty()) {
        o += "<text class=\"lsub\" x=\"8\" y=\"" + IntText(y + 33) + "\">" + HtmlEscape(n.role) +
             (n.role_changes.empty() ? "" : " at first") + "</text>";
      }
      o += "</g>\n";
    }
    o += "<g class=\"lane\" data-lane=\"holders\" data-kind=\"holders\"><rect class=\"lanebg\" "
         "x=\"0\" y=\"" +
         IntText(holders_y_) + "\" width=\"" + IntText(kSvgWidth) + "\" height=\"" +
         IntText(kHoldersLaneHeight) + "\"/><text class=\"lname\" x=\"8\" y=\"" +
         IntText(holders_y_ + 16) + "\">believed holders</text><text class=\"lsub\" x=\"8\" y=\"" +
         IntText(holders_y_ + 30) + "\">" +
         HtmlEscape(tl_.locks.empty() ? "no holds"
                                      : "of \"" + tl_.locks.front() + "\"" +
                                            (tl_.locks.size() > 1 ? " (and others)" : "")) +
         "</text></g>\n";
    o += "<g class=\"lane\" data-lane=\"clocks\" data-kind=\"clock\"><rect class=\"lanebg\" "
         "x=\"0\" y=\"" +
         IntText(clock_y_) + "\" width=\"" + IntText(kSvgWidth) + "\" height=\"" +
         IntText(clock_h_) + "\"/><text class=\"lname\" x=\"8\" y=\"" + IntText(clock_y_ + 15) +
         "\">clock offsets</text>" + Title(tl_.clock_baseline_note) + ClockLegend() + "</g>\n";
    o += "</g>\n";
  }

  // --- grid and axis (pixel space; the script redraws them for each view) ---

  std::string Grid() const {
    std::string o;
    const int64_t step = TickStep(view_to_ - view_from_, 10);
    for (int64_t t = (view_from_ + step - 1) / step * step; t <= view_to_; t += step) {
      const std::string x = PixelText(ViewPx(t));
      o += "<line x1=\"" + x + "\" x2=\"" + x + "\" y1=\"" + IntText(kAxisHeight) + "\" y2=\"" +
           IntText(height_ - kAxisHeight) + "\"/>";
    }
    return o;
  }

  std::string Axis() const {
    std::string o;
    const int64_t step = TickStep(view_to_ - view_from_, 10);
    for (int64_t t = (view_from_ + step - 1) / step * step; t <= view_to_; t += step) {
      const std::string x = PixelText(ViewPx(t));
      const std::string label = TickLabel(t, step);
      o += "<text x=\"" + x + "\" y=\"17\">" + label + "</text><text x=\"" + x + "\" y=\"" +
           IntText(height_ - 8) + "\">" + label + "</text>";
    }
    return o;
  }

  // --- faults: bands across the lanes they affect ---

  std::vector<std::pair<int, int>> LanesOfProcess(const std::string& process) const {
    std::vector<std::pair<int, int>> out;  // y, height
    for (int lane : tl_.ThreadsOf(process)) {
      if (thread_y_[lane] != kNone) out.push_back({thread_y_[lane], kThreadLaneHeight});
    }
    if (const int n = tl_.NodeIndex(process); n != kNone)
      out.push_back({node_y_[n], kNodeLaneHeight});
    return out;
  }

  static const char* FaultClass(const std::string& kind) {
    if (kind == "pause") return "f-pause";
    if (kind == "crash") return "f-crash";
    if (kind == "partition") return "f-partition";
    if (kind == "lose_replies") return "f-lose";
    if (kind == "latency" || kind == "loss" || kind == "duplicate") return "f-net";
    if (kind == "clock_jump") return "f-jump";
    if (kind == "rediscover") return "f-note";
    return "f-failover";
  }

  void FaultBands(std::string* o) {
    *o += "<g id=\"" + id_prefix_ + "faults\">\n";
    for (size_t i = 0; i < tl_.faults.size(); ++i) {
      const Fault& f = tl_.faults[i];
      if (!InWindow(f.from_us, f.to_us)) continue;
      std::vector<std::pair<int, int>> boxes;
      if (f.affects.empty()) {
        for (int y : node_y_) boxes.push_back({y, kNodeLaneHeight});
      } else {
        for (const std::string& p : f.affects) {
          for (auto b : LanesOfProcess(p)) boxes.push_back(b);
        }
      }
      const std::string tip =
          f.label + ": " + Seconds(f.from_us) +
          (f.instant ? ""
                     : " - " + Seconds(f.to_us) + (f.open ? " (until the end)" : "") + " (" +
                           Duration(f.to_us - f.from_us) + ")");
      const char* cls = FaultClass(f.kind);
      *o += "<g class=\"fault " + std::string(cls) + "\" id=\"" + id_prefix_ + "fault-" +
            IntText(static_cast<int64_t>(i)) + "\" data-kind=\"" + HtmlEscape(f.kind) +
            "\" data-from-us=\"" + IntText(f.from_us) + "\" data-to-us=\"" + IntText(f.to_us) +
            "\">" + Title(tip);
      if (f.instant) {
        *o += "<line x1=\"" + TimeX(f.from_us) + "\" x2=\"" + TimeX(f.from_us) + "\" y1=\"" +
              IntText(faults_y_ + 2) + "\" y2=\"" + IntText(faults_y_ + kFaultRowHeight - 2) +
              "\"/>";
        for (auto [y, h] : boxes) {
          *o += "<line x1=\"" + TimeX(f.from_us) + "\" x2=\"" + TimeX(f.from_us) + "\" y1=\"" +
                IntText(y) + "\" y2=\"" + IntText(y + h) + "\"/>";
        }
        if (f.kind == "clock_jump") {
          *o += "<line x1=\"" + TimeX(f.from_us) + "\" x2=\"" + TimeX(f.from_us) + "\" y1=\"" +
                IntText(clock_y_) + "\" y2=\"" + IntText(clock_y_ + clock_h_) + "\"/>";
        }
      } else {
        *o += "<rect class=\"band\" x=\"" + TimeX(f.from_us) + "\" y=\"" + IntText(faults_y_ + 4) +
              "\" width=\"" + SpanWidth(f.from_us, f.to_us) + "\" height=\"" +
              IntText(kFaultRowHeight - 8) + "\"/>";
        for (auto [y, h] : boxes) {
          *o += "<rect x=\"" + TimeX(f.from_us) + "\" y=\"" + IntText(y) + "\" width=\"" +
                SpanWidth(f.from_us, f.to_us) + "\" height=\"" + IntText(h) + "\"/>";
        }
      }
      *o += "</g>\n";
      std::string text = f.kind == "pause" || f.kind == "crash" || f.kind == "lose_replies"
                             ? f.kind + " " + f.process
                             : f.label;
      if (text.size() > 60) text = text.substr(0, 57) + "...";
      if (f.instant) {
        InstantLabel("flabel instant", text, f.from_us, faults_y_ + 16, 1);
      } else {
        Label("flabel", text, f.from_us, f.to_us, faults_y_ + 16, 1);
      }
    }
    *o += "</g>\n";
  }

  // --- client threads ---

  static const char* OpClass(Outcome o) {
    switch (o) {
      case Outcome::kOk:
        return "op op-ok";
      case Outcome::kFail:
        return "op op-fail";
      case Outcome::kInfo:
        return "op op-info";
      case Outcome::kCrashed:
        return "op op-info";
      case Outcome::kPending:
        return "op op-pending";
    }
    return "op";
  }

  bool InLeadViolation(const std::string& thread, const Span& h) const {
    for (const ShownViolation& s : shown_) {
      const check::Violation& v = *s.violation;
      if (v.property != "mutual_exclusion" && v.property != "lease_safety") continue;
      if (std::find(v.threads.begin(), v.threads.end(), thread) == v.threads.end()) continue;
      if (h.to_us >= v.from_us && h.from_us <= v.to_us) return true;
    }
    return false;
  }

  void Threads(std::string* out) {
    std::string& o = *out;
    for (size_t i = 0; i < tl_.threads.size(); ++i) {
      const ThreadLane& l = tl_.threads[i];
      const int y = thread_y_[i];
      if (y == kNone) continue;
      o += "<g class=\"tl\" data-lane=\"" + HtmlEscape(l.name) + "\">\n";
      for (const Span& h : l.holds) {
        if (!InWindow(h.from_us, h.to_us)) continue;
        const bool bad = InLeadViolation(l.name, h);
        const char* cls =
            bad ? (h.read ? "hold read bad" : "hold bad") : (h.read ? "hold read" : "hold");
        Rect(&o, cls, h.from_us, h.to_us, y + 14, 23,
             l.name + " holds \"" + h.lock + "\"" + (h.read ? " to read" : "") +
                 " (as it believes): " + Seconds(h.from_us) + " - " + Seconds(h.to_us) + " (" +
                 Duration(h.to_us - h.from_us) + "), ended by " + h.ended_by,
             Format(" data-from-us=\"%lld\" data-to-us=\"%lld\"", static_cast<long long>(h.from_us),
                    static_cast<long long>(h.to_us)));
        const std::string what = h.read ? "reading" : "holding";
        Label(bad ? "blabel bad" : "blabel", bad ? what + " (violation)" : what, h.from_us, h.to_us,
              y + 25);
      }
      for (const Span& s : l.sections) {
        if (!InWindow(s.from_us, s.to_us)) continue;
        Rect(&o, "cs", s.from_us, s.to_us, y + 29, 8,
             l.name + " in the critical section: " + Seconds(s.from_us) + " - " + Seconds(s.to_us) +
                 " (" + Duration(s.to_us - s.from_us) + ")" +
                 (s.open ? ", still inside at the end" : ""));
      }
      for (const Op& op : l.ops) {
        if (!InWindow(op.from_us, op.to_us)) continue;
        Rect(&o, OpClass(op.outcome), op.from_us, op.to_us, y + 3, 9,
             l.name + " " + op.op + " " + OutcomeName(op.outcome) + ": " + Seconds(op.from_us) +
                 " - " + Seconds(op.to_us) + " (" + Duration(op.to_us - op.from_us) + ") " +
                 op.detail + (op.node != kNone ? " [" + tl_.nodes[op.node].name + "]" : ""));
      }
      o += "</g>\n";
    }
  }

  // --- nodes: key owner, TTL, commands ---

  std::string OwnerColour(int thread) const {
    return thread == kNone ? "#999999" : ThreadColour(static_cast<size_t>(thread));
  }

  void Nodes(std::string* out) {
    std::string& o = *out;
    int64_t max_ttl = 1;
    for (const NodeLane& n : tl_.nodes) {
      for (const Lease& l : n.leases) {
        for (const TtlPoint& p : l.ttl) max_ttl = std::max(max_ttl, p.ttl_us);
      }
    }
    for (size_t i = 0; i < tl_.nodes.size(); ++i) {
      const NodeLane& n = tl_.nodes[i];
      const int y = node_y_[i];
      const double top = y + 5, bottom = y + 31;
      o += "<g class=\"nl\" data-lane=\"" + HtmlEscape(n.name) + "\">\n";
      for (const Lease& l : n.leases) {
        if (!InWindow(l.from_us, l.to_us)) continue;
        const std::string colour = OwnerColour(l.owner_thread);
        if (l.replica) {
          // A replica's copy: no TTL (the replica waits for its master's DEL), lighter.
          Rect(&o, "lease copy", l.from_us, l.to_us, top + 6, bottom - top - 6,
               n.name + ": the replica's copy of \"" + l.lock + "\" names " + l.owners +
                   " (applied " + Duration(l.lag_us) + " after its master's write), " +
                   Seconds(l.from_us) + " - " + Seconds(l.to_us) + " (" +
                   Duration(l.to_us - l.from_us) + "), then " + l.ended_by,
               " style=\"fill:" + colour + ";stroke:" + colour + "\" data-lag-us=\"" +
                   IntText(l.lag_us) + "\"");
          Label("llabel", l.owners + " (copy, +" + Duration(l.lag_us) + ")", l.from_us, l.to_us,
                y + 24);
          continue;
        }
        Rect(&o, "lease", l.from_us, l.to_us, top, bottom - top,
             n.name + ": \"" + l.lock + "\" owned by " + l.owners + ", " + Seconds(l.from_us) +
                 " - " + Seconds(l.to_us) + " (" + Duration(l.to_us - l.from_us) + "), then " +
                 l.ended_by +
                 (l.ttl.empty() || !l.ttl.front().reset
                      ? ""
                      : ", TTL set to " + Duration(l.ttl.front().ttl_us)),
             " style=\"fill:" + colour + ";stroke:" + colour + "\"");
        // The TTL as a sawtooth: reset to its lease, falling at one second per second.
        if (!l.ttl.empty()) {
          std::string pts;
          auto point = [&](int64_t t, int64_t ttl) {
            const double h =
                (bottom - top) * std::clamp<double>(static_cast<double>(ttl) / max_ttl, 0, 1);
            pts += TimeX(t) + "," + PixelText(bottom - h) + " ";
          };
          pts += TimeX(l.ttl.front().t_us) + "," + PixelText(bottom) + " ";
          for (size_t k = 0; k < l.ttl.size(); ++k) {
            const TtlPoint& p = l.ttl[k];
            if (!p.reset && k > 0) continue;
            point(p.t_us, p.ttl_us);
            // It falls until the next reset (PTTL observations only confirm the line).
            size_t r = k + 1;
            while (r < l.ttl.size() && !l.ttl[r].reset) ++r;
            const int64_t end = std::min(r < l.ttl.size() ? l.ttl[r].t_us : l.to_us, l.to_us);
            point(end, p.ttl_us - (end - p.t_us));
          }
          pts += TimeX(l.to_us) + "," + PixelText(bottom);
          o += "<polygon class=\"ttl\" points=\"" + pts + "\" style=\"fill:" + colour + "\"/>\n";
        }
        Label("llabel", l.owners, l.from_us, l.to_us, y + 22);
      }
      for (const LeaseLoss& loss : n.losses) {
        if (!InWindow(loss.t_us, loss.t_us)) continue;
        o += "<line class=\"loss\" x1=\"" + TimeX(loss.t_us) + "\" x2=\"" + TimeX(loss.t_us) +
             "\" y1=\"" + IntText(y + 2) + "\" y2=\"" + IntText(y + 34) + "\" data-op=\"" +
             loss.op + "\">" +
             Title(Seconds(loss.t_us) + " " + n.name + ": the key of " + loss.owners + " " +
                   loss.op +
                   (loss.op == "expired" ? " (its TTL ran out on " + n.name + "'s clock)"
                                         : " (a failover promoted a node that never had it)")) +
             "</line>\n";
        InstantLabel("losslabel", loss.op + ": " + loss.owners, loss.t_us, y + 12, 2);
      }
      for (const RoleChange& c : n.role_changes) {
        if (!InWindow(c.t_us, c.t_us)) continue;
        o += "<line class=\"rolechange\" x1=\"" + TimeX(c.t_us) + "\" x2=\"" + TimeX(c.t_us) +
             "\" y1=\"" + IntText(y + 2) + "\" y2=\"" + IntText(y + 34) + "\" data-role=\"" +
             HtmlEscape(c.role) + "\">" +
             Title(Seconds(c.t_us) + " " + n.name + " is now " + c.role) + "</line>\n";
        InstantLabel("rolelabel", "now " + c.role, c.t_us, y + 42, 3);
      }
      // Refused acquires report the key's remaining TTL (PTTL): dots on the sawtooth. (No
      // tooltip: the command's tick below says the same, and there can be thousands.)
      for (const TtlPoint& p : n.pttl) {
        if (!InWindow(p.t_us, p.t_us)) continue;
        const double h =
            (bottom - top) * std::clamp<double>(static_cast<double>(p.ttl_us) / max_ttl, 0, 1);
        o += "<line class=\"pttl\" x1=\"" + TimeX(p.t_us) + "\" x2=\"" + TimeX(p.t_us) +
             "\" y1=\"" + PixelText(bottom - h - 1.5) + "\" y2=\"" + PixelText(bottom - h + 1.5) +
             "\"/>\n";
      }
      for (const Exec& x : n.execs) {
        if (!InWindow(x.t_us, x.t_us)) continue;
        const char* cls = x.kind == ExecKind::kAcquired  ? "x x-acq"
                          : x.kind == ExecKind::kRefused ? "x x-refused"
                          : x.kind == ExecKind::kUnlock  ? "x x-unlock"
                          : x.kind == ExecKind::kRenewed ? "x x-renew"
                                                         : "x x-other";
        const std::string who = x.thread != kNone ? tl_.threads[x.thread].name : x.peer;
        o += "<line class=\"" + std::string(cls) + "\" x1=\"" + TimeX(x.t_us) + "\" x2=\"" +
             TimeX(x.t_us) + "\" y1=\"" + IntText(y + 33) + "\" y2=\"" + IntText(y + 41) + "\">" +
             Title(Seconds(x.t_us) + " " + n.name + " ran " + x.op + " from " + who + " -> " +
                   x.reply + Format(" (seq %llu)", static_cast<unsigned long long>(x.seq))) +
             "</line>\n";
      }
      o += "</g>\n";
    }
  }

  // --- believed holders: a step line; two or more is the split brain ---

  void Holders(std::string* out) {
    std::string& o = *out;
    if (tl_.locks.empty()) return;
    const std::string& lock = tl_.locks.front();
    const int top = std::max(2, tl_.max_holders);
    const double y0 = holders_y_ + kHoldersLaneHeight - 6, span = kHoldersLaneHeight - 12;
    auto yof = [&](int n) { return y0 - span * n / top; };
    for (int n = 1; n <= top; ++n) {
      o += "<line class=\"hgrid\" x1=\"" + TimeX(window_.from_us) + "\" x2=\"" +
           TimeX(window_.to_us) + "\" y1=\"" + PixelText(yof(n)) + "\" y2=\"" + PixelText(yof(n)) +
           "\"/>\n";
    }
    std::string pts = TimeX(window_.from_us) + "," + PixelText(yof(0));
    int current = 0;
    int64_t over_from = -1;
    for (const HolderCount& h : tl_.holders) {
      if (h.lock != lock) continue;
      if (h.t_us < window_.from_us) {
        current = h.count;
        pts = TimeX(window_.from_us) + "," + PixelText(yof(current));
        if (h.conflict && over_from < 0) over_from = window_.from_us;
        if (!h.conflict) over_from = -1;
        continue;
      }
      if (h.t_us > window_.to_us) break;
      pts += " " + TimeX(h.t_us) + "," + PixelText(yof(current)) + " " + TimeX(h.t_us) + "," +
             PixelText(yof(h.count));
      if (h.conflict && over_from < 0) over_from = h.t_us;
      if (!h.conflict && over_from >= 0) {
        Rect(&o, "split", over_from, h.t_us, holders_y_ + 2, kHoldersLaneHeight - 4,
             "more threads believe they hold \"" + lock +
                 "\" than it allows: " + Seconds(over_from) + " - " + Seconds(h.t_us));
        over_from = -1;
      }
      current = h.count;
    }
    if (over_from >= 0) {
      Rect(&o, "split", over_from, window_.to_us, holders_y_ + 2, kHoldersLaneHeight - 4,
           "more threads believe they hold \"" + lock + "\" than it allows, from " +
               Seconds(over_from));
    }
    pts += " " + TimeX(window_.to_us) + "," + PixelText(yof(current));
    // Filled down to zero, so a dense square wave reads as a share rather than a black bar.
    o += "<polygon class=\"holders-area\" points=\"" + TimeX(window_.from_us) + "," +
         PixelText(yof(0)) + " " + pts + " " + TimeX(window_.to_us) + "," + PixelText(yof(0)) +
         "\"/>\n<polyline class=\"holders\" points=\"" + pts + "\"/>\n";
  }

  // --- clocks: offset from true time per process ---

  struct ClockScale {
    int64_t lo_us = -5000, hi_us = 5000;
  };
  ClockScale Scale() const {
    ClockScale s;
    for (const ClockSeries& c : tl_.clocks) {
      s.lo_us = std::min(s.lo_us, c.min_offset_us);
      s.hi_us = std::max(s.hi_us, c.max_offset_us);
    }
    const int64_t pad = (s.hi_us - s.lo_us) / 10;
    s.lo_us -= pad;
    s.hi_us += pad;
    return s;
  }
  double ClockY(int64_t offset_us) const {
    const ClockScale s = Scale();
    const double top = clock_y_ + 6, bottom = clock_y_ + clock_h_ - 6;
    return bottom - (bottom - top) * static_cast<double>(offset_us - s.lo_us) / (s.hi_us - s.lo_us);
  }
  bool Skewed(const ClockSeries& c) const { return c.min_offset_us != 0 || c.max_offset_us != 0; }

  std::string ClockLegend() const {
    std::string o;
    int row = 0, colour = 0;
    size_t unskewed = 0;
    for (const ClockSeries& c : tl_.clocks) {
      if (!Skewed(c)) {
        ++unskewed;
        continue;
      }
      if (row < 4) {
        o += "<text class=\"lsub\" x=\"8\" y=\"" + IntText(clock_y_ + 30 + 12 * row) +
             "\" fill=\"" + kClockColours[colour % std::size(kClockColours)] + "\">" +
             HtmlEscape(c.process) + " " +
             Format("%+.0f..%+.0f ms", c.min_offset_us / 1e3, c.max_offset_us / 1e3) + "</text>";
      }
      ++row;
      ++colour;
    }
    if (unskewed > 0 && row < 4) {
      o += "<text class=\"lsub\" x=\"8\" y=\"" + IntText(clock_y_ + 28 + 12 * row) + "\">" +
           (row == 0 ? Format("all %zu read true time (0 ms)", unskewed)
                     : Format("%zu more at 0 ms", unskewed)) +
           "</text>";
    }
    return o;
  }

  void Clocks(std::string* out) {
    std::string& o = *out;
    const ClockScale s = Scale();
    // The zero line, and the extremes for reading values off.
    o += "<line class=\"czero\" x1=\"" + TimeX(window_.from_us) + "\" x2=\"" +
         TimeX(window_.to_us) + "\" y1=\"" + PixelText(ClockY(0)) + "\" y2=\"" +
         PixelText(ClockY(0)) + "\"/>\n";
    int colour = 0;
    for (const ClockSeries& c : tl_.clocks) {
      const bool skewed = Skewed(c);
      // The offset the window starts with: the last sample before it (each timeline window
      // starts with the one it carried in), else the first inside it.
      std::string pts;
      bool known = false;
      int64_t last = 0;
      for (const ClockSample& p : c.samples) {
        if (p.t_us < window_.from_us) {
          last = p.offset_us;
          known = true;
          continue;
        }
        if (p.t_us > window_.to_us) break;
        if (pts.empty()) {
          pts = TimeX(window_.from_us) + "," +
                PixelText(ClockY(known && p.t_us > window_.from_us ? last : p.offset_us));
        }
        pts += " " + TimeX(p.t_us) + "," + PixelText(ClockY(known ? last : p.offset_us)) + " " +
               TimeX(p.t_us) + "," + PixelText(ClockY(p.offset_us));
        last = p.offset_us;
        known = true;
      }
      if (!known) continue;  // Nothing recorded of this clock by the window's end.
      if (pts.empty()) pts = TimeX(window_.from_us) + "," + PixelText(ClockY(last));
      pts += " " + TimeX(std::min(window_.to_us, tl_.end_us)) + "," + PixelText(ClockY(last));
      const std::string stroke =
          skewed ? kClockColours[colour++ % std::size(kClockColours)] : "#b0b0b0";
      o += "<polyline class=\"clock\" data-process=\"" + HtmlEscape(c.process) + "\" points=\"" +
           pts + "\" style=\"stroke:" + stroke + "\">" +
           Title(c.process + " clock offset from true time: " +
                 Format("%+.3f to %+.3f ms", c.min_offset_us / 1e3, c.max_offset_us / 1e3)) +
           "</polyline>\n";
    }
    // Scale labels are text, so they go with the labels (pixel space).
    clock_scale_text_ = Format("%+.0f ms", s.hi_us / 1e3);
    clock_scale_low_text_ = Format("%+.0f ms", s.lo_us / 1e3);
  }

  // --- violations ---

  void ViolationMarks(std::string* out) {
    std::string& o = *out;
    for (const ShownViolation& s : shown_) {
      const check::Violation& v = *s.violation;
      if (!InWindow(v.from_us, v.to_us)) continue;
      std::string threads;
      for (const std::string& t : v.threads) threads += (threads.empty() ? "" : " ") + t;
      const bool lead = s.index == 0;
      o += "<g class=\"violation" + std::string(lead ? " lead" : "") + "\" id=\"" + id_prefix_ +
           "violation-" + IntText(static_cast<int64_t>(s.index)) + "\" data-property=\"" +
           HtmlEscape(v.property) + "\" data-kind=\"" + HtmlEscape(v.kind) + "\" data-from-us=\"" +
           IntText(v.from_us) + "\" data-to-us=\"" + IntText(v.to_us) + "\" data-threads=\"" +
           HtmlEscape(threads) + "\">" +
           Title(v.property + " (" + v.kind + "), " + Seconds(v.from_us) + " - " +
                 Seconds(v.to_us) + ": " + v.explanation);
      const int64_t to = std::max(v.to_us, v.from_us);
      if (lead) {
        // The interval across every lane, so it reads against nodes and clocks too.
        o += "<rect class=\"vband\" x=\"" + TimeX(v.from_us) + "\" y=\"" + IntText(band_top_) +
             "\" width=\"" + SpanWidth(v.from_us, to) + "\" height=\"" + IntText(band_h_) + "\"/>";
      }
      for (const std::string& t : v.threads) {
        const int lane = tl_.ThreadIndex(t);
        if (lane == kNone || thread_y_[lane] == kNone) continue;
        o += "<rect class=\"vlane\" x=\"" + TimeX(v.from_us) + "\" y=\"" +
             IntText(thread_y_[lane] + 1) + "\" width=\"" + SpanWidth(v.from_us, to) +
             "\" height=\"" + IntText(kThreadLaneHeight - 2) + "\"/>";
      }
      o += "</g>\n";
      if (lead) {
        InstantLabel("vlabel", "VIOLATION: " + v.property, v.from_us, faults_y_ + 16, 1);
      }
    }
  }

  // --- labels: placed in pixel space for the initial view (the script does the same) ---

  void PlaceLabels(std::string* out) {
    PlaceTextLabels(out);
    ClockScaleLabels(out);
  }

  void PlaceTextLabels(std::string* out) {
    std::string& o = *out;
    // Instants first, in time order, so a later label yields to an earlier one in its row.
    std::stable_sort(labels_.begin(), labels_.end(),
                     [](const PendingLabel& a, const PendingLabel& b) {
                       if (a.row != b.row) return a.row > b.row;
                       return a.from_us < b.from_us;
                     });
    std::map<std::pair<int, int>, double> row_end;  // (row, y) -> right edge of last shown
    for (const PendingLabel& l : labels_) {
      double x0 = ViewPx(l.from_us), x1 = ViewPx(l.to_us);
      const bool instant = l.instant;
      bool show;
      double x;
      if (instant) {
        x = x0 + 3;
        show = x0 >= kPlotX && x0 <= kPlotX + kPlotWidth - l.width;
      } else {
        x = std::max(x0, static_cast<double>(kPlotX)) + 3;
        show = std::min(x1, static_cast<double>(kPlotX + kPlotWidth)) - x >= l.width - 3;
      }
      const auto key = std::make_pair(l.row, static_cast<int>(l.y));
      if (show && l.row > 0 && row_end.count(key) && row_end[key] > x) show = false;
      if (show && l.row > 0) row_end[key] = x + l.width;
      o += "<text class=\"" + l.cls + "\" x=\"" + PixelText(x) + "\" y=\"" + PixelText(l.y) +
           "\" data-from-us=\"" + IntText(l.from_us) + "\" data-to-us=\"" + IntText(l.to_us) +
           "\" data-w=\"" + PixelText(l.width) + "\" data-row=\"" + IntText(l.row) + "\"" +
           (l.instant ? " data-instant=\"1\"" : "") + (show ? "" : " display=\"none\"") + ">" +
           HtmlEscape(l.text) + "</text>\n";
    }
  }

  // The clock lane's scale, when its offsets are drawn to one.
  void ClockScaleLabels(std::string* out) {
    std::string& o = *out;
    if (clock_h_ != kClockLaneHeight) return;
    o += "<text class=\"cscale\" x=\"" + IntText(kPlotX + kPlotWidth - 4) + "\" y=\"" +
         IntText(clock_y_ + 14) + "\">" + clock_scale_text_ + "</text>\n";
    o += "<text class=\"cscale\" x=\"" + IntText(kPlotX + kPlotWidth - 4) + "\" y=\"" +
         IntText(clock_y_ + clock_h_ - 4) + "\">" + clock_scale_low_text_ + "</text>\n";
  }

  // --- the overview: the whole run, binned per pixel column ---

  // A binned quantity (microseconds per bin, Timeline::bin_us wide) as the share of each pixel
  // column it covers: each bin's time is spread evenly over the part of the run the bin spans.
  std::vector<float> Shares(const std::vector<uint32_t>& bins_us) const {
    std::vector<double> cols(kPlotWidth, 0);
    const int64_t end = std::max<int64_t>(tl_.end_us, 1);
    const double col_us = static_cast<double>(std::max<int64_t>(axis_end_us_, 1)) / kPlotWidth;
    for (size_t b = 0; b < bins_us.size(); ++b) {
      if (bins_us[b] == 0) continue;
      const int64_t lo = static_cast<int64_t>(b) * tl_.bin_us;
      const int64_t hi = std::min<int64_t>(lo + tl_.bin_us, end);
      if (hi <= lo) break;
      const double per_us = bins_us[b] / static_cast<double>(hi - lo);
      const int first = std::clamp(static_cast<int>(lo / col_us), 0, kPlotWidth - 1);
      const int last = std::clamp(static_cast<int>(std::ceil(hi / col_us)) - 1, first, kPlotWidth - 1);
      for (int c = first; c <= last; ++c) {
        const double overlap = std::min<double>(hi, (c + 1) * col_us) - std::max<double>(lo, c * col_us);
        if (overlap > 0) cols[c] += per_us * overlap;
      }
    }
    std::vector<float> out(kPlotWidth);
    for (int c = 0; c < kPlotWidth; ++c) out[c] = static_cast<float>(cols[c] / col_us);
    return out;
  }

  // Binned counts as marks: the column of each non-empty bin's middle.
  std::vector<float> Marks(const std::vector<uint16_t>& counts) const {
    std::vector<float> out(kPlotWidth, 0);
    const int64_t end = std::max<int64_t>(tl_.end_us, 1);
    for (size_t b = 0; b < counts.size(); ++b) {
      if (counts[b] == 0) continue;
      const int64_t lo = static_cast<int64_t>(b) * tl_.bin_us;
      const int64_t mid = std::min<int64_t>(lo + tl_.bin_us / 2, end);
      out[std::clamp(static_cast<int>(static_cast<double>(mid) * kPlotWidth /
                                      std::max<int64_t>(axis_end_us_, 1)),
                     0, kPlotWidth - 1)] = 1;
    }
    return out;
  }

  // Runs of equal shade, so a lane costs at most one rect per column and usually far fewer.
  static void DensityRects(std::string* o, const std::vector<float>& cols, double y, double h,
                           const char* cls) {
    size_t c = 0;
    auto level = [&](size_t i) {
      const float f = std::min(cols[i], 1.0f);
      return f <= 0 ? 0 : std::max(1, static_cast<int>(std::ceil(f * 4)));
    };
    while (c < cols.size()) {
      const int lv = level(c);
      size_t d = c + 1;
      while (d < cols.size() && level(d) == lv) ++d;
      if (lv > 0) {
        *o += "<rect class=\"" + std::string(cls) + "\" x=\"" +
              IntText(kPlotX + static_cast<int64_t>(c)) + "\" y=\"" + PixelText(y) + "\" width=\"" +
              IntText(static_cast<int64_t>(d - c)) + "\" height=\"" + PixelText(h) +
              "\" fill-opacity=\"" + Format("%.2f", lv / 4.0) + "\"/>";
      }
      c = d;
    }
    *o += "\n";
  }

  // A time's x in pixels on the overview's and the charts' axis (the whole run).
  double OverviewPx(int64_t t_us) const {
    return kPlotX + static_cast<double>(t_us) * kPlotWidth / std::max<int64_t>(axis_end_us_, 1);
  }

  void Overview(std::string* out) {
    std::string& o = *out;
    const int top = 20;
    const int h = top + OverviewRowsHeight() + 22;
    o += "<section class=\"panel\"><div class=\"toolbar\"><b>Overview</b> <span class=\"hint\">the "
         "whole run (" +
         Seconds(tl_.end_us) +
         "); shade = share of each pixel column spent "
         "holding (blue) or waiting for the lock (grey); orange/pink ticks: failed/unknown "
         "operations; click to move the view</span></div>\n";
    OverviewOpen(&o, h);
    OverviewRows(&o, top, 14, h - 34);
    OverviewClose(&o, h);
  }

  // The overview's svg and its axis (over axis_end_us_).
  void OverviewOpen(std::string* out, int h) const {
    std::string& o = *out;
    o += "<svg id=\"overview\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + IntText(kSvgWidth) +
         "\" height=\"" + IntText(h) + "\" data-end-us=\"" + IntText(axis_end_us_) + "\">\n";
    TimeTicks(&o, 12, 14, h - 20);
  }

  // The whole run's time axis (over axis_end_us_): a label at text_y and a grid line from y1
  // to y2 per tick, for the overview and the charts.
  void TimeTicks(std::string* out, int text_y, int y1, int y2) const {
    const int64_t step = TickStep(axis_end_us_, 10);
    for (int64_t t = 0; t <= axis_end_us_; t += step) {
      *out += "<text class=\"otick\" x=\"" + PixelText(OverviewPx(t)) + "\" y=\"" +
              IntText(text_y) + "\">" + TickLabel(t, step) + "</text>";
      *out += "<line class=\"ogrid\" x1=\"" + PixelText(OverviewPx(t)) + "\" x2=\"" +
              PixelText(OverviewPx(t)) + "\" y1=\"" + IntText(y1) + "\" y2=\"" + IntText(y2) +
              "\"/>";
    }
  }

  // The marker of the detail view, and the end of the overview.
  void OverviewClose(std::string* out, int h) const {
    *out += "<rect id=\"overview-view\" x=\"" + PixelText(OverviewPx(view_from_)) +
            "\" y=\"14\" width=\"" +
            PixelText(std::max(2.0, OverviewPx(view_to_) - OverviewPx(view_from_))) +
            "\" height=\"" + IntText(h - 34) + "\"/>\n";
    *out += "</svg></section>\n";
  }

  // The height of this run's rows in the overview: faults, violations, a row per lane.
  int OverviewRowsHeight() const {
    const int lanes = static_cast<int>(tl_.threads.size() - hidden_threads_ + tl_.nodes.size());
    return 22 + lanes * kOverviewLaneHeight;
  }

  // This run's rows of the overview from `top` down; its detail windows are marked from mark_y
  // over mark_h.
  void OverviewRows(std::string* out, int top, int mark_y, int mark_h) const {
    std::string& o = *out;
    const int faults_y = top, viol_y = top + 10, lanes_y = top + 22;
    o += "\n<text class=\"lsub\" x=\"8\" y=\"" + IntText(faults_y + 8) + "\">faults</text>";
    o += "<text class=\"lsub\" x=\"8\" y=\"" + IntText(viol_y + 8) + "\">violations</text>\n";
    // Faults as bands per kind, merged per pixel column: thousands of GC pauses cost no more
    // than one band each.
    std::map<std::string, std::vector<bool>> faults;
    for (const Fault& f : tl_.faults) {
      std::vector<bool>& cols = faults[FaultClass(f.kind)];
      cols.resize(kPlotWidth, false);
      const double x0 = OverviewPx(f.from_us) - kPlotX,
                   x1 = std::max(OverviewPx(f.to_us) - kPlotX, x0 + 1.5);
      const int first = std::clamp(static_cast<int>(x0), 0, kPlotWidth - 1);
      const int last = std::clamp(static_cast<int>(std::ceil(x1)) - 1, first, kPlotWidth - 1);
      for (int c = first; c <= last; ++c) cols[c] = true;
    }
    for (const auto& [cls, cols] : faults) {
      for (int c = 0; c < kPlotWidth;) {
        if (!cols[c]) {
          ++c;
          continue;
        }
        int d = c;
        while (d < kPlotWidth && cols[d]) ++d;
        o += "<rect class=\"ofault " + cls + "\" x=\"" + IntText(kPlotX + c) + "\" y=\"" +
             IntText(faults_y) + "\" width=\"" + IntText(d - c) + "\" height=\"8\"/>";
        c = d;
      }
    }
    o += "\n";
    for (const check::PropertyResult& r : verdict_.results) {
      for (const check::Violation& v : r.violations) {
        const double x0 = OverviewPx(v.from_us), x1 = std::max(OverviewPx(v.to_us), x0 + 2);
        o += "<rect class=\"oviol\" x=\"" + PixelText(x0) + "\" y=\"" + IntText(viol_y) +
             "\" width=\"" + PixelText(x1 - x0) + "\" height=\"8\"/>";
      }
    }
    o += "\n";
    int y = lanes_y;
    for (size_t i = 0; i < tl_.threads.size(); ++i) {
      if (!drawn_[i]) continue;
      const ThreadLane& l = tl_.threads[i];
      o += "<text class=\"olabel\" x=\"8\" y=\"" + IntText(y + 7) + "\">" + HtmlEscape(l.name) +
           "</text>";
      if (!l.bins.hold_us.empty()) {
        DensityRects(&o, Shares(l.bins.hold_us), y, 4, "ohold");
        DensityRects(&o, Shares(l.bins.wait_us), y + 4, 2, "owait");
        // Failed and unknown outcomes show wherever they happen, however short.
        DensityRects(&o, Marks(l.bins.failed), y + 6, 2, "ofail");
        DensityRects(&o, Marks(l.bins.unknown), y + 6, 2, "oinfo");
      }
      y += kOverviewLaneHeight;
    }
    for (const NodeLane& n : tl_.nodes) {
      o += "<text class=\"olabel\" x=\"8\" y=\"" + IntText(y + 7) + "\">" + HtmlEscape(n.name) +
           "</text>";
      if (!n.owned_us.empty()) DensityRects(&o, Shares(n.owned_us), y + 1, 6, "oowned");
      y += kOverviewLaneHeight;
    }
    if (!tl_.whole_run) {
      for (const DetailWindow& w : tl_.windows) {
        o += "<rect class=\"otrace\" x=\"" + PixelText(OverviewPx(w.from_us)) + "\" y=\"" +
             IntText(mark_y) + "\" width=\"" +
             PixelText(std::max(1.0, OverviewPx(w.to_us) - OverviewPx(w.from_us))) +
             "\" height=\"" + IntText(mark_h) +
             "\"><title>full detail in trace.json here</title></rect>";
      }
    }
    if (!window_.whole_run) {
      o += "<rect class=\"owindow\" x=\"" + PixelText(OverviewPx(window_.from_us)) + "\" y=\"" +
           IntText(mark_y) + "\" width=\"" +
           PixelText(std::max(1.0, OverviewPx(window_.to_us) - OverviewPx(window_.from_us))) +
           "\" height=\"" + IntText(mark_h) +
           "\"><title>full detail is available here</title></rect>";
    }
  }

  // --- charts: the acquires over the whole run, on the overview's axis ---

  // What a column of the charts gathers from the bins whose middle falls in it.
  struct ChartColumn {
    uint64_t ok = 0, not_ok = 0;
    std::array<uint64_t, kLatencyBuckets> latency{};
    double wait_us = 0;   // Summed over the threads
    int holders = 0;      // The most believed holders of any lock
    bool conflict = false;
    bool covered = false;  // Inside the run
  };

  std::vector<ChartColumn> ChartColumns() const {
    std::vector<ChartColumn> cols(kChartColumns);
    const int64_t end = std::max<int64_t>(tl_.end_us, 1);
    const double col_us = static_cast<double>(std::max<int64_t>(axis_end_us_, 1)) / kChartColumns;
    for (int c = 0; c < kChartColumns; ++c) cols[c].covered = c * col_us < static_cast<double>(end);
    const auto column_of = [&](size_t bin) -> int {
      const int64_t lo = static_cast<int64_t>(bin) * tl_.bin_us;
      if (lo >= end) return -1;
      const int64_t mid = std::min<int64_t>(lo + tl_.bin_us / 2, end - 1);
      return std::clamp(static_cast<int>(static_cast<double>(mid) / col_us), 0, kChartColumns - 1);
    };
    const AcquireBins& a = tl_.acquire_bins;
    for (size_t b = 0; b < a.ok.size(); ++b) {
      const int c = column_of(b);
      if (c < 0) break;
      cols[c].ok += a.ok[b];
      cols[c].not_ok += a.not_ok[b];
      for (size_t k = 0; k < kLatencyBuckets && (b + 1) * kLatencyBuckets <= a.latency.size(); ++k) {
        cols[c].latency[k] += a.latency[b * kLatencyBuckets + k];
      }
    }
    for (const ThreadLane& l : tl_.threads) {
      for (size_t b = 0; b < l.bins.wait_us.size(); ++b) {
        const int c = column_of(b);
        if (c < 0) break;
        cols[c].wait_us += l.bins.wait_us[b];
      }
    }
    for (const HolderBins& h : tl_.holder_bins) {
      for (size_t b = 0; b < h.max.size(); ++b) {
        const int c = column_of(b);
        if (c < 0) break;
        cols[c].holders = std::max<int>(cols[c].holders, h.max[b]);
        if (b < h.conflict.size() && h.conflict[b] != 0) cols[c].conflict = true;
      }
    }
    return cols;
  }

  // The latency below which a share q of the column's acquires fall (the upper end of the
  // bucket that reaches q); -1 when it has none.
  static double Quantile(const std::array<uint64_t, kLatencyBuckets>& h, double q) {
    uint64_t total = 0;
    for (uint64_t n : h) total += n;
    if (total == 0) return -1;
    const double want = std::max(1.0, std::ceil(q * static_cast<double>(total)));
    uint64_t seen = 0;
    for (size_t b = 0; b < kLatencyBuckets; ++b) {
      seen += h[b];
      if (static_cast<double>(seen) >= want) return LatencyBucketHighUs(b);
    }
    return LatencyBucketHighUs(kLatencyBuckets - 1);
  }

  // A chart's svg: its title row, the plot area's frame and the time axis of the overview.
  void ChartOpen(std::string* out, const char* id, const std::string& title, int h) const {
    std::string& o = *out;
    o += "<svg class=\"chart seek\" id=\"" + std::string(id) +
         "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + IntText(kSvgWidth) + "\" height=\"" +
         IntText(h) + "\" data-end-us=\"" + IntText(axis_end_us_) + "\">\n";
    o += "<text class=\"ctitle\" x=\"8\" y=\"14\">" + title + "</text>";
    TimeTicks(&o, h - 3, 20, h - 14);
    o += "\n";
  }

  double ColumnX(int c) const {
    return kPlotX + static_cast<double>(c) * kPlotWidth / kChartColumns;
  }

  // A y-axis label at the plot's left.
  static void YLabel(std::string* out, double y, const std::string& text) {
    *out += "<text class=\"cylabel\" x=\"" + IntText(kPlotX - 6) + "\" y=\"" + PixelText(y + 3) +
            "\">" + text + "</text><line class=\"cyline\" x1=\"" + IntText(kPlotX) + "\" x2=\"" +
            IntText(kPlotX + kPlotWidth) + "\" y1=\"" + PixelText(y) + "\" y2=\"" + PixelText(y) +
            "\"/>";
  }

  // Column c's hover target between top and bottom, with its figures as the tooltip.
  void HitRect(std::string* out, int c, int top, int bottom, const std::string& tip) const {
    *out += "<rect class=\"chit\" x=\"" + PixelText(ColumnX(c)) + "\" y=\"" + IntText(top) +
            "\" width=\"" + PixelText(ColumnX(c + 1) - ColumnX(c)) + "\" height=\"" +
            IntText(bottom - top) + "\"><title>" + tip + "</title></rect>";
  }

  static std::string Points(const std::vector<std::pair<double, double>>& pts) {
    std::string p;
    for (const auto& [x, y] : pts) p += PixelText(x) + "," + PixelText(y) + " ";
    if (!p.empty()) p.pop_back();
    return p;
  }

  // Throughput, acquire latency quantiles, and holders with waiting threads, per column of
  // the whole run (the bins: complete whatever the detail windows keep).
  void Charts(std::string* out) {
    std::string& o = *out;
    const std::vector<ChartColumn> cols = ChartColumns();
    uint64_t ok = 0, not_ok = 0;
    std::array<uint64_t, kLatencyBuckets> all{};
    for (const ChartColumn& c : cols) {
      ok += c.ok;
      not_ok += c.not_ok;
      for (size_t k = 0; k < kLatencyBuckets; ++k) all[k] += c.latency[k];
    }
    if (ok + not_ok == 0) return;  // No acquire to chart (a latch-only run, say).
    const double col_us = static_cast<double>(std::max<int64_t>(axis_end_us_, 1)) / kChartColumns;
    const double col_w = ColumnX(1) - ColumnX(0);
    const auto q_text = [](double us) { return us < 0 ? std::string("-") : Duration(std::llround(us)); };
    o += "<section class=\"panel\" id=\"charts\" data-acquired=\"" +
         IntText(static_cast<int64_t>(ok)) + "\" data-not-acquired=\"" +
         IntText(static_cast<int64_t>(not_ok)) +
         "\"><div class=\"toolbar\"><b>Charts</b> <span class=\"hint\">the whole run in " +
         IntText(kChartColumns) + " columns of " + Duration(std::llround(col_us)) + ": " +
         IntText(static_cast<int64_t>(ok)) + " acquisitions, " +
         IntText(static_cast<int64_t>(not_ok)) +
         " acquires that did not take the lock; latency of the acquisitions p50 " +
         q_text(Quantile(all, 0.5)) + ", p99 " + q_text(Quantile(all, 0.99)) + ", max " +
         q_text(Quantile(all, 1.0)) +
         " (to half an octave); hover a column for its figures, click to move the view</span>"
         "</div>\n";

    // 1. Throughput.
    {
      const int h = 110, top = 22, bottom = h - 16;
      double peak = 0;
      for (const ChartColumn& c : cols) {
        peak = std::max(peak, static_cast<double>(std::max(c.ok, c.not_ok)) / (col_us / 1e6));
      }
      const double ymax = NiceCeil(std::max(peak, 1.0));
      const auto yv = [&](double v) { return bottom - v / ymax * (bottom - top); };
      ChartOpen(&o, "chart-throughput", "acquisitions / s", h);
      YLabel(&o, yv(0), "0");
      YLabel(&o, yv(ymax), Format("%g", ymax));
      std::vector<std::pair<double, double>> failed;
      for (int c = 0; c < kChartColumns; ++c) {
        if (!cols[c].covered) continue;
        const double rate = static_cast<double>(cols[c].ok) / (col_us / 1e6);
        const double fail_rate = static_cast<double>(cols[c].not_ok) / (col_us / 1e6);
        if (cols[c].ok > 0) {
          o += "<rect class=\"cok\" x=\"" + PixelText(ColumnX(c)) + "\" y=\"" +
               PixelText(yv(rate)) + "\" width=\"" + PixelText(std::max(1.0, col_w - 1)) +
               "\" height=\"" + PixelText(yv(0) - yv(rate)) + "\"/>";
        }
        failed.emplace_back(ColumnX(c) + col_w / 2, yv(fail_rate));
        HitRect(&o, c, top, bottom,
                ColumnRange(c, col_us) + ": " + IntText(static_cast<int64_t>(cols[c].ok)) +
                    " acquisitions (" + Format("%.1f", rate) + "/s), " +
                    IntText(static_cast<int64_t>(cols[c].not_ok)) + " not acquired");
      }
      o += "\n<polyline class=\"cfail\" points=\"" + Points(failed) + "\"/>\n";
      o += "<text class=\"clegend\" x=\"" + IntText(kPlotX + kPlotWidth - 300) +
           "\" y=\"14\"><tspan class=\"cok-t\">\u25A0 acquired</tspan>  <tspan class=\"cfail-t\">"
           "\u2014 tried and did not acquire</tspan></text>";
      o += "</svg>\n";
    }

    // 2. Acquire latency quantiles, on a log scale.
    {
      const int h = 130, top = 22, bottom = h - 16;
      double lo = std::numeric_limits<double>::max(), hi = 0;
      for (const ChartColumn& c : cols) {
        const double a = Quantile(c.latency, 0.5), b = Quantile(c.latency, 1.0);
        if (a > 0) lo = std::min(lo, a);
        hi = std::max(hi, b);
      }
      ChartOpen(&o, "chart-latency", "acquire latency", h);
      if (hi > 0) {
        double decade_lo = std::pow(10, std::floor(std::log10(std::max(lo / 2, 1.0))));
        double decade_hi = std::pow(10, std::ceil(std::log10(std::max(hi, decade_lo * 10))));
        const double l0 = std::log10(decade_lo), l1 = std::log10(decade_hi);
        const auto yv = [&](double us) {
          return bottom - (std::log10(std::max(us, decade_lo)) - l0) / (l1 - l0) * (bottom - top);
        };
        // Every decade up to five, every other one past that.
        const int step = l1 - l0 > 5.5 ? 2 : 1;
        int k = 0;
        for (double d = decade_lo; d <= decade_hi * 1.001; d *= 10, ++k) {
          if (k % step == 0) YLabel(&o, yv(d), DecadeLabel(std::llround(d)));
        }
        std::vector<std::pair<double, double>> p50, p99, pmax;
        for (int c = 0; c < kChartColumns; ++c) {
          const double a = Quantile(cols[c].latency, 0.5);
          if (a < 0) continue;
          const double b = Quantile(cols[c].latency, 0.99), m = Quantile(cols[c].latency, 1.0);
          const double x = ColumnX(c) + col_w / 2;
          p50.emplace_back(x, yv(a));
          p99.emplace_back(x, yv(b));
          pmax.emplace_back(x, yv(m));
          HitRect(&o, c, top, bottom,
                  ColumnRange(c, col_us) + ": " + IntText(static_cast<int64_t>(cols[c].ok)) +
                      " acquisitions, latency p50 " + q_text(a) + ", p99 " + q_text(b) + ", max " +
                      q_text(m));
        }
        o += "\n<polyline class=\"cmax\" points=\"" + Points(pmax) + "\"/>";
        o += "<polyline class=\"cp99\" points=\"" + Points(p99) + "\"/>";
        o += "<polyline class=\"cp50\" points=\"" + Points(p50) + "\"/>\n";
        o += "<text class=\"clegend\" x=\"" + IntText(kPlotX + kPlotWidth - 300) +
             "\" y=\"14\"><tspan class=\"cp50-t\">\u2014 p50</tspan>  <tspan class=\"cp99-t\">"
             "\u2014 p99</tspan>  <tspan class=\"cmax-t\">\u2014 max</tspan> (invoke to acquired)"
             "</text>";
      }
      o += "</svg>\n";
    }

    // 3. Believed holders (the most at any moment of a column) and threads waiting (on average).
    {
      const int h = 110, top = 22, bottom = h - 16;
      int peak = permits_limit();
      double wait_peak = 0;
      for (const ChartColumn& c : cols) {
        peak = std::max(peak, c.holders);
        wait_peak = std::max(wait_peak, c.wait_us / col_us);
      }
      const double ymax = NiceCeil(std::max<double>({static_cast<double>(peak), wait_peak, 1.0}));
      const auto yv = [&](double v) { return bottom - v / ymax * (bottom - top); };
      ChartOpen(&o, "chart-holders", "holders, waiting", h);
      YLabel(&o, yv(0), "0");
      YLabel(&o, yv(ymax), Format("%g", ymax));
      std::vector<std::pair<double, double>> holders, waiting;
      for (int c = 0; c < kChartColumns; ++c) {
        if (!cols[c].covered) continue;
        const double x0 = ColumnX(c), x1 = ColumnX(c + 1), w = cols[c].wait_us / col_us;
        holders.emplace_back(x0, yv(cols[c].holders));
        holders.emplace_back(x1, yv(cols[c].holders));
        waiting.emplace_back(x0 + col_w / 2, yv(w));
        if (cols[c].conflict) {
          o += "<rect class=\"cconflict\" x=\"" + PixelText(x0) + "\" y=\"" + IntText(top) +
               "\" width=\"" + PixelText(col_w) + "\" height=\"" + IntText(bottom - top) + "\"/>";
        }
        HitRect(&o, c, top, bottom,
                ColumnRange(c, col_us) + ": at most " + IntText(cols[c].holders) +
                    " believed holder(s)" +
                    (cols[c].conflict ? " (more than the lock allows)" : "") + ", " +
                    Format("%.2f", w) + " threads waiting on average");
      }
      o += "\n<line class=\"climit\" x1=\"" + IntText(kPlotX) + "\" x2=\"" +
           IntText(kPlotX + kPlotWidth) + "\" y1=\"" + PixelText(yv(permits_limit())) + "\" y2=\"" +
           PixelText(yv(permits_limit())) + "\"/>";
      o += "<polyline class=\"cwait\" points=\"" + Points(waiting) + "\"/>";
      o += "<polyline class=\"cholders\" points=\"" + Points(holders) + "\"/>\n";
      o += "<text class=\"clegend\" x=\"" + IntText(kPlotX + kPlotWidth - 420) +
           "\" y=\"14\"><tspan class=\"cholders-t\">\u2014 most believed holders</tspan>  "
           "<tspan class=\"climit-t\">- - the lock allows " +
           IntText(permits_limit()) +
           "</tspan>  <tspan class=\"cwait-t\">\u2014 threads waiting</tspan></text>";
      o += "</svg>\n";
    }
    o += "</section>\n";
  }

  // How many holders the lock allows at once (a semaphore's permits; 1 otherwise).
  int permits_limit() const { return std::max(1, tl_.permits); }

  static std::string ColumnRange(int c, double col_us) {
    return Seconds(std::llround(c * col_us)) + " \u2013 " + Seconds(std::llround((c + 1) * col_us));
  }

  // A power of ten of microseconds: "10 us", "100 ms", "10 s".
  static std::string DecadeLabel(int64_t us) {
    if (us < 1000) return IntText(us) + " us";
    if (us < 1'000'000) return IntText(us / 1000) + " ms";
    return IntText(us / 1'000'000) + " s";
  }

  // 1, 2 or 5 times a power of ten, at least v.
  static double NiceCeil(double v) {
    const double p = std::pow(10, std::floor(std::log10(v)));
    for (double m : {1.0, 2.0, 5.0, 10.0}) {
      if (m * p >= v * 0.999) return m * p;
    }
    return 10 * p;
  }

  // --- tables: violations, faults, parameters ---

  // A button that moves the view to violation v, when its interval has detail; else nothing.
  std::string ShowButton(const check::Violation& v) const {
    if (!InWindow(v.from_us, v.to_us)) return "";
    const int64_t pad = std::max<int64_t>((v.to_us - v.from_us) / 4, 50'000);
    return "<button type=\"button\" data-view-from-us=\"" +
           IntText(std::max(window_.from_us, v.from_us - pad)) + "\" data-view-to-us=\"" +
           IntText(std::min(std::max(window_.to_us, window_.from_us + 1000), v.to_us + pad)) +
           "\">show</button>";
  }

  void Tables(std::string* out) {
    std::string& o = *out;
    if (!shown_.empty()) {
      o += "<section class=\"panel\"><h2>Violations" + HtmlEscape(run_title_) +
           "</h2><table id=\"" + id_prefix_ + "violations\"><tr><th>#</th>"
           "<th>property</th><th>kind</th><th>threads</th><th>from</th><th>to</th><th>what "
           "happened</th>"
           "<th></th></tr>\n";
      // Violations that share a cause (the same property, rule and threads: the acquisitions
      // of one thread during another's pause, say) make one row, the first of them, with the
      // others folded beneath it.
      std::vector<std::vector<const ShownViolation*>> groups;
      std::map<std::string, size_t> group_of;
      for (const ShownViolation& s : shown_) {
        const check::Violation& v = *s.violation;
        std::vector<std::string> threads = v.threads;
        std::sort(threads.begin(), threads.end());
        std::string key = v.property + "\n" + v.kind;
        for (const std::string& t : threads) key += "\n" + t;
        const auto [it, added] = group_of.emplace(key, groups.size());
        if (added) groups.emplace_back();
        groups[it->second].push_back(&s);
      }
      for (const std::vector<const ShownViolation*>& group : groups) {
        const check::Violation& v = *group.front()->violation;
        std::string threads;
        for (const std::string& t : v.threads) threads += (threads.empty() ? "" : ", ") + t;
        o += "<tr" + std::string(group.front()->index == 0 ? " class=\"lead\"" : "") + "><td>" +
             IntText(static_cast<int64_t>(group.front()->index)) + "</td><td>" +
             HtmlEscape(v.property) + "</td><td>" + HtmlEscape(v.kind) + "</td><td>" +
             HtmlEscape(threads) + "</td><td>" + Seconds(v.from_us) + "</td><td>" +
             Seconds(v.to_us) + "</td><td class=\"expl\">" + HtmlEscape(v.explanation);
        if (group.size() > 1) {
          const int64_t last_to = group.back()->violation->to_us;
          o += Format("<details class=\"alike\"><summary>and %zu more like it (the same rule and "
                      "threads), up to ",
                      group.size() - 1) +
               Seconds(last_to) + "</summary><table>";
          for (size_t k = 1; k < group.size(); ++k) {
            const check::Violation& w = *group[k]->violation;
            o += "<tr><td>" + IntText(static_cast<int64_t>(group[k]->index)) + "</td><td>" +
                 Seconds(w.from_us) + "</td><td>" + Seconds(w.to_us) + "</td><td>" +
                 HtmlEscape(w.explanation) + "</td><td>" + ShowButton(w) + "</td></tr>";
          }
          o += "</table></details>";
        }
        o += "</td><td>" + ShowButton(v) + "</td></tr>\n";
      }
      o += "</table>";
      size_t total = 0;
      for (const check::PropertyResult& r : verdict_.results) total += r.violation_count;
      if (total > shown_.size()) {
        o += Format(
            "<p class=\"note\">%zu violations in all; the first %zu of each property are "
            "listed.</p>",
            total, kViolationsShown);
      }
      o += "</section>\n";
    }
    o += "<section class=\"panel\"><h2>Faults" + HtmlEscape(run_title_) + "</h2>";
    if (tl_.faults.empty()) {
      o += "<p>None injected.</p>";
    } else {
      o += "<table "
           "id=\"" + id_prefix_ + "fault-table\"><tr><th>from</th><th>to</th><th>where</th><th>what</th></tr>\n";
      size_t rows = 0;
      for (const Fault& f : tl_.faults) {
        if (++rows > 200) break;
        o += "<tr><td>" + Seconds(f.from_us) + "</td><td>" +
             (f.instant ? std::string("")
              : f.open  ? "(run end)"
                        : Seconds(f.to_us)) +
             "</td><td>" + HtmlEscape(f.process) + "</td><td>" + HtmlEscape(f.label) +
             "</td></tr>\n";
      }
      o += "</table>";
      if (tl_.fault_count > 200)
        o += Format("<p class=\"note\">%zu faults; the first 200 are listed.</p>",
                    tl_.fault_count);
    }
    o += "</section>\n";
    o += "<section class=\"panel\"><details><summary>Run parameters and how to read this "
         "page" + HtmlEscape(run_title_) + "</summary>\n<dl class=\"meta\">";
    for (const auto& [name, value] : meta_.parameters) {
      o += "<dt>" + HtmlEscape(name) + "</dt><dd>" + HtmlEscape(value) + "</dd>\n";
    }
    o += "<dt>clocks</dt><dd>" + HtmlEscape(tl_.clock_baseline_note) +
         Format("; true time 0 = Unix %lld ms", static_cast<long long>(tl_.start_unix_ms)) +
         "</dd>\n";
    o +=
        "</dl>\n<ul class=\"howto\">"
        "<li>The time axis is true time (the simulator's), not any process's clock; the clock lane "
        "shows how far each process's own clock is from it.</li>"
        "<li>A thread lane's upper bar is the operation in flight (invoke to completion) in "
        "Jepsen's colours; the wide bar is the time the thread <em>believes</em> it holds the lock "
        "(acquire ok to the start of its release); the dark bar inside is its critical "
        "section.</li>"
        "<li>A node lane shows which thread's field the lock key holds on that node; the filled "
        "height is the key's remaining TTL, falling one second per second and reset by "
        "reentries and watchdog renewals. Ticks below are commands: green acquired, grey refused, "
        "blue unlock, purple renew.</li>"
        "<li>Red marks a violation: the band is its interval, and holds drawn with a red edge are "
        "the ones the checker named.</li></ul>\n";
    if (verdict_.warning_count > 0) {
      o += Format("<p class=\"note\">The checkers could not make sense of %zu event(s):</p><ul>",
                  verdict_.warning_count);
      for (const std::string& w : verdict_.warnings) o += "<li>" + HtmlEscape(w) + "</li>";
      o += "</ul>";
    }
    o += "</details></section>\n";
  }

  const Timeline& tl_;
  const check::Verdict& verdict_;
  const ReportMeta& meta_;
  std::vector<ShownViolation> shown_;
  Window window_;
  int64_t origin_ = 0, view_from_ = 0, view_to_ = 1, min_span_us_ = 1000, unit_us_ = 1;
  std::vector<int> thread_y_, node_y_;  // kNone: not drawn
  std::vector<bool> drawn_;
  bool any_read_ = false;  // some hold is a read hold (the legend then explains them)
  bool any_replica_copy_ = false;  // some node lane shows a replica's copy of the key
  bool any_network_ = false;  // some fault is a latency, loss or duplicate window (the same)
  size_t hidden_threads_ = 0;
  int clients_header_y_ = 0, nodes_header_y_ = 0, holders_y_ = 0, clock_y_ = 0, height_ = 0;
  int clock_h_ = kClockLaneHeight;
  std::vector<PendingLabel> labels_;
  std::string clock_scale_text_, clock_scale_low_text_;
  // Where this run's parts go on a page that may show two runs (HtmlWriter alone: one).
  std::string id_prefix_;   // before element ids: "" or "live-", "sim-"
  std::string run_title_;   // after table headings: "" or " (live run)"
  int64_t axis_end_us_;     // the end of the overview's axis: the run's end, or the later run's
  int faults_y_ = kAxisHeight;       // top of this run's fault row
  int band_top_ = 0, band_h_ = 0;    // this run's rows, which the lead violation band covers
  int64_t focus_from_ = 0, focus_to_ = 1;  // the lead violation's view (ChooseDetail)
};

// A live replay's report.html: both runs one above the other on one time axis (time since each
// run's start), live on top, under the comparison: both verdicts per property, the operations'
// agreement per thread, and the first divergence, which is marked on both timelines. Each run
// is drawn by its own HtmlWriter (the same lanes, shapes and labels as a run's report); this
// class gives them one frame (origin, scale, view), stacks their rows in one svg, so the zoom
// and pan script moves both at once, and adds what only a comparison has.
class ComparisonWriter {
 public:
  ComparisonWriter(const ComparedRun& live, const ComparedRun& sim, const check::RunComparison& c)
      : live_(*live.timeline, *live.verdict, *live.meta, "live-", " (live run)"),
        sim_(*sim.timeline, *sim.verdict, *sim.meta, "sim-", " (simulated run)"),
        c_(c) {}

  std::string Render() {
    for (HtmlWriter* w : {&live_, &sim_}) {
      w->ChooseLanes();
      w->ChooseDetail();
    }
    Frame();
    Layout();
    const ReportMeta& meta = live_.meta_;
    std::string out;
    out.reserve(1 << 20);
    out += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>";
    out += HtmlEscape(
        "lockstep replay: " + meta.scenario_name +
        (meta.seed ? Format(" seed %llu", static_cast<unsigned long long>(*meta.seed)) : "") +
        ", live and simulated");
    out += "</title>\n<style>\n";
    // As on a run's page (HtmlWriter::Render), and the comparison's rules after a newline.
    out += '\n';
    out += assets::kReportCss;
    out += '\n';
    out += assets::kComparisonCss;
    out += "</style>\n</head>\n<body>\n";
    Header(&out);
    Detail(&out);
    Overview(&out);
    live_.Tables(&out);
    sim_.Tables(&out);
    out += HtmlWriter::Foot();
    return out;
  }

 private:
  static constexpr int kRunTitleHeight = 24;
  static constexpr int kRunGap = 10;
  static constexpr int kOverviewTitleHeight = 13;

  // One origin, scale and view for both runs: the union of their detail windows, all of it
  // in view at first.
  void Frame() {
    from_us_ = std::min(live_.window_.from_us, sim_.window_.from_us);
    to_us_ = std::max({live_.window_.to_us, sim_.window_.to_us, from_us_ + 1000});
    const bool any_read = live_.any_read_ || sim_.any_read_;
    const bool any_network = live_.any_network_ || sim_.any_network_;
    const bool any_replica_copy = live_.any_replica_copy_ || sim_.any_replica_copy_;
    for (HtmlWriter* w : {&live_, &sim_}) {
      w->origin_ = from_us_;
      w->unit_us_ = std::max<int64_t>(1, (to_us_ - from_us_) / kMaxPlotUnits + 1);
      w->min_span_us_ = std::max<int64_t>(200, (to_us_ - from_us_) / 5000);
      w->view_from_ = from_us_;
      w->view_to_ = to_us_;
      w->axis_end_us_ = std::max(live_.tl_.end_us, sim_.tl_.end_us);
      w->any_read_ = any_read;
      w->any_network_ = any_network;
      w->any_replica_copy_ = any_replica_copy;
    }
    // The divergence's view: both runs' operations, padded by their length (at least 100 ms).
    if (const auto& d = c_.divergence) {
      const int64_t lo = std::min(d->sim_invoke_us, d->live_invoke_us);
      const int64_t hi = std::max({EndOf(live_, d->live_invoke_us, d->live_end_us),
                                   EndOf(sim_, d->sim_invoke_us, d->sim_end_us), lo + 1});
      const int64_t pad = std::max<int64_t>(hi - lo, 100'000);
      divergence_from_ = std::max(from_us_, lo - pad);
      divergence_to_ = std::min(to_us_, hi + pad);
    }
  }

  // An operation's end on the timeline: its completion, else the end of its run.
  static int64_t EndOf(const HtmlWriter& w, int64_t invoke_us, int64_t end_us) {
    return std::max(invoke_us, end_us < 0 ? w.tl_.end_us : end_us);
  }

  void Layout() {
    int y = kAxisHeight;
    live_title_y_ = y;
    y = live_.LayoutFrom(y + kRunTitleHeight);
    sim_title_y_ = y + kRunGap;
    y = sim_.LayoutFrom(sim_title_y_ + kRunTitleHeight);
    height_ = y + kAxisHeight;
    live_.height_ = height_;
    sim_.height_ = height_;
  }

  // --- header: the comparison first, then what ran ---

  static std::string VerdictText(const check::PropertyResult* r, bool applicable) {
    if (r == nullptr || !applicable) return "-";
    return r->violated ? Format("VIOLATED &times;%zu", r->violation_count) : "holds";
  }
  static const char* VerdictData(const check::PropertyResult* r, bool applicable) {
    if (r == nullptr || !applicable) return "n/a";
    return r->violated ? "violated" : "holds";
  }
  static const char* VerdictClass(const check::PropertyResult* r, bool applicable) {
    if (r == nullptr || !applicable) return "na";
    return r->violated ? "violated" : "holds";
  }

  void Header(std::string* out) {
    std::string& o = *out;
    const ReportMeta& meta = live_.meta_;
    o += "<header>\n<h1>" + HtmlEscape(meta.scenario_name.empty() ? "lockstep replay"
                                                                  : meta.scenario_name);
    if (meta.seed) {
      o += Format(" <span class=\"seed\">seed %llu</span>",
                  static_cast<unsigned long long>(*meta.seed));
    }
    o += " <span class=\"seed\">live replay and its simulation</span></h1>\n";
    if (!meta.description.empty()) o += "<p class=\"desc\">" + HtmlEscape(meta.description) + "</p>\n";
    Comparison(&o);
    Meta(&o);
    live_.Callout(&o, "live run: ");
    sim_.Callout(&o, "simulated run: ");
    o += "</header>\n";
  }

  void Comparison(std::string* out) {
    std::string& o = *out;
    o += "<section class=\"panel compare\" id=\"comparison\"><h2>Simulated vs live</h2>\n";
    o += "<table id=\"verdict-comparison\"><tr><th>property</th><th>simulated</th><th>live</th>"
         "<th>expected</th><th></th></tr>\n";
    for (const check::PropertyComparison& p : c_.properties) {
      const check::PropertyResult* s = sim_.verdict_.Find(p.property);
      const check::PropertyResult* l = live_.verdict_.Find(p.property);
      const std::string expect = live_.ExpectationOf(p.property);
      o += "<tr data-property=\"" + HtmlEscape(p.property) + "\" data-sim=\"" +
           VerdictData(s, p.applicable) + "\" data-live=\"" + VerdictData(l, p.applicable) +
           "\"" + (p.differs() ? " class=\"differs\"" : "") + "><td>" + HtmlEscape(p.property) +
           "</td><td class=\"v " + VerdictClass(s, p.applicable) + "\">" +
           VerdictText(s, p.applicable) + "</td><td class=\"v " + VerdictClass(l, p.applicable) +
           "\">" + VerdictText(l, p.applicable) + "</td><td>" + expect + "</td><td>" +
           (p.differs() ? "<b>DIFFERENT</b>" : "") + "</td></tr>\n";
    }
    o += "</table>\n";
    o += std::string("<p class=\"") + (c_.verdicts_differ ? "differ" : "agree") +
         "\" id=\"verdict-agreement\" data-agree=\"" + (c_.verdicts_differ ? "false" : "true") +
         "\">" + HtmlEscape(check::VerdictAgreement(c_)) + "</p>\n";

    o += Format("<p id=\"operation-agreement\" data-compared=\"%zu\" data-agree=\"%zu\" "
                "data-sim-only=\"%zu\" data-live-only=\"%zu\">Operations, each thread's taken in "
                "order: <b>%zu compared</b> position by position, <b>%zu with the same "
                "outcome</b>; %zu only simulated, %zu only live.</p>\n",
                c_.operations_compared, c_.operations_agree, c_.sim_only, c_.live_only,
                c_.operations_compared, c_.operations_agree, c_.sim_only, c_.live_only);
    std::vector<const check::ThreadComparison*> threads;
    for (const check::ThreadComparison& t : c_.threads) threads.push_back(&t);
    std::stable_sort(threads.begin(), threads.end(), [](const auto* a, const auto* b) {
      return NaturalLess(a->thread, b->thread);
    });
    o += "<table id=\"thread-agreement\"><tr><th>thread</th><th>compared</th><th>same "
         "outcome</th><th>different</th><th>only simulated</th><th>only live</th></tr>\n";
    for (const check::ThreadComparison* t : threads) {
      const bool diverges = c_.divergence && c_.divergence->thread == t->thread;
      o += "<tr data-thread=\"" + HtmlEscape(t->thread) + "\"" +
           (diverges ? " class=\"diverges\"" : "") + "><td>" + HtmlEscape(t->thread) + "</td>" +
           Format("<td>%zu</td><td>%zu</td><td>%zu</td><td>%zu</td><td>%zu</td></tr>\n",
                  t->compared, t->agree, t->compared - t->agree, t->sim_only, t->live_only);
    }
    o += "</table>\n";

    if (const auto& d = c_.divergence) {
      o += "<div class=\"callout diverge\" id=\"first-divergence\" data-thread=\"" +
           HtmlEscape(d->thread) + "\" data-position=\"" +
           IntText(static_cast<int64_t>(d->position)) + "\" data-sim-from-us=\"" +
           IntText(d->sim_invoke_us) + "\" data-sim-to-us=\"" +
           IntText(EndOf(sim_, d->sim_invoke_us, d->sim_end_us)) + "\" data-live-from-us=\"" +
           IntText(d->live_invoke_us) + "\" data-live-to-us=\"" +
           IntText(EndOf(live_, d->live_invoke_us, d->live_end_us)) +
           "\"><h2>First divergence: " + HtmlEscape(d->thread) + "'s operation #" +
           IntText(static_cast<int64_t>(d->position)) + " (" +
           HtmlEscape(d->sim_op == d->live_op ? d->sim_op
                                              : d->sim_op + " simulated, " + d->live_op + " live") +
           ")</h2>\n<p class=\"when\">invoked at " + Seconds(d->sim_invoke_us) +
           " in the simulated run and " + Seconds(d->live_invoke_us) +
           " in the live run</p>\n<table><tr><th>simulated</th><td>" + HtmlEscape(d->sim_side) +
           "</td></tr>\n<tr><th>live</th><td>" + HtmlEscape(d->live_side) +
           "</td></tr></table>\n<button type=\"button\" data-view-from-us=\"" +
           IntText(divergence_from_) + "\" data-view-to-us=\"" + IntText(divergence_to_) +
           "\">show in the timelines</button></div>\n";
    } else if (c_.operations_compared > 0) {
      o += "<p id=\"no-divergence\">No divergence: every operation both runs made ended the same "
           "way.</p>\n";
    } else {
      o += "<p id=\"no-divergence\">No operation to compare: the runs have no thread in "
           "common.</p>\n";
    }
    o += "<p class=\"hint\">The simulated run on its own: <a href=\"sim/report.html\">"
         "sim/report.html</a>; the comparison as text: comparison.txt.</p>\n</section>\n";
  }

  void Meta(std::string* out) {
    std::string& o = *out;
    const ReportMeta& meta = live_.meta_;
    o += "<dl class=\"meta\">\n";
    auto row = [&](const std::string& k, const std::string& v, bool code = false) {
      o += "<dt>" + HtmlEscape(k) + "</dt><dd>" + (code ? "<code>" : "") + HtmlEscape(v) +
           (code ? "</code>" : "") + "</dd>\n";
    };
    if (!meta.scenario_file.empty()) row("scenario file", meta.scenario_file);
    row("live run", Seconds(live_.tl_.end_us) +
                        Format(" of real time, %zu events, history.jsonl", live_.tl_.event_count));
    row("live history hash", live_.tl_.history_hash, true);
    row("simulated run", Seconds(sim_.tl_.end_us) + Format(" of simulated time, %zu events, "
                                                           "sim/history.jsonl",
                                                           sim_.tl_.event_count));
    row("simulated history hash", sim_.tl_.history_hash, true);
    if (!meta.version.empty()) row("lockstep", meta.version);
    // The simulator derives the protocol's parameters; the live run lists its processes.
    for (const auto& [name, value] : sim_.meta_.parameters) {
      if (name == "protocol" || name == "lease") row(name, value);
    }
    o += "<dt>reproduce</dt><dd><code class=\"repro\" id=\"reproduce\">" +
         HtmlEscape(meta.reproduce) + "</code></dd>\n";
    o += "</dl>\n";
  }

  // --- the timelines ---

  void Detail(std::string* out) {
    std::string& o = *out;
    o += "<section class=\"panel\">\n<div class=\"toolbar\"><b>Timelines</b> <span class=\"hint\">"
         "live above, simulated below, on one axis: time since each run's start; wheel to zoom, "
         "drag to pan</span><span class=\"buttons\"><button type=\"button\" "
         "data-zoom=\"in\">+</button><button type=\"button\" data-zoom=\"out\">&minus;</button>";
    if (c_.divergence) {
      o += "<button type=\"button\" data-view-from-us=\"" + IntText(divergence_from_) +
           "\" data-view-to-us=\"" + IntText(divergence_to_) + "\">divergence</button>";
    }
    for (const HtmlWriter* w : {&live_, &sim_}) {
      if (LeadViolation(w->verdict_) == nullptr) continue;
      o += "<button type=\"button\" data-view-from-us=\"" +
           IntText(std::max(from_us_, w->focus_from_)) + "\" data-view-to-us=\"" +
           IntText(std::min(to_us_, w->focus_to_)) + "\">" + (w == &live_ ? "live" : "simulated") +
           " violation</button>";
    }
    o += "<button type=\"button\" data-view-from-us=\"" + IntText(from_us_) +
         "\" data-view-to-us=\"" + IntText(to_us_) + "\">whole runs</button></span>" +
         HtmlWriter::LaneFilter() + "<span class=\"view\" id=\"view-text\">" + live_.ViewText() +
         "</span></div>\n";
    live_.Legend(&o);
    if (c_.divergence) {
      o += "<div class=\"legend\"><span><i class=\"sw diverge\"></i>first divergence: the "
           "operation whose outcome differs, in each run at its own time</span></div>\n";
    }
    if (!live_.window_.whole_run || !sim_.window_.whole_run) {
      o += "<p class=\"note\" id=\"summarised\">These runs are long: the timelines hold full "
           "detail from " +
           Seconds(live_.window_.from_us) + " to " + Seconds(live_.window_.to_us) +
           " (live) and from " + Seconds(sim_.window_.from_us) + " to " +
           Seconds(sim_.window_.to_us) +
           " (simulated). The overview below covers both runs whole.</p>\n";
    }
    o += "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + IntText(kSvgWidth) +
         "\" height=\"" + IntText(height_) + "\" data-origin-us=\"" + IntText(from_us_) +
         "\" data-data-from-us=\"" + IntText(from_us_) + "\" data-data-to-us=\"" + IntText(to_us_) +
         "\" data-view-from-us=\"" + IntText(from_us_) + "\" data-view-to-us=\"" + IntText(to_us_) +
         "\" data-min-span-us=\"" + IntText(live_.min_span_us_) + "\" data-unit-us=\"" +
         IntText(live_.unit_us_) + "\" data-plot-x=\"" + IntText(kPlotX) + "\" data-plot-width=\"" +
         IntText(kPlotWidth) + "\" data-end-us=\"" + IntText(live_.axis_end_us_) + "\">\n";
    RunTitle(&o, live_, live_title_y_, "live",
             "LIVE: real redis-server processes, real time (" + Seconds(live_.tl_.end_us) + ")");
    live_.LaneBackgrounds(&o);
    RunTitle(&o, sim_, sim_title_y_, "sim",
             "SIMULATED: the same scenario and seed in the simulator (" +
                 Seconds(sim_.tl_.end_us) + ")");
    sim_.LaneBackgrounds(&o);
    o += "<g id=\"grid\">" + live_.Grid() + "</g>\n";
    o += "<svg id=\"plot\" x=\"" + IntText(kPlotX) + "\" y=\"0\" width=\"" + IntText(kPlotWidth) +
         "\" height=\"" + IntText(height_) + "\" viewBox=\"" + live_.ViewBox() +
         "\" preserveAspectRatio=\"none\">\n";
    for (HtmlWriter* w : {&live_, &sim_}) {
      w->FaultBands(&o);
      w->Threads(&o);
      w->Nodes(&o);
      w->Holders(&o);
      w->Clocks(&o);
      w->ViolationMarks(&o);
    }
    DivergenceMarks(&o);
    o += "</svg>\n";
    o += "<g id=\"axis\">" + live_.Axis() + "</g>\n";
    o += "<g id=\"labels\">\n";
    // One set of labels, placed together (the script places them all again on every view).
    live_.labels_.insert(live_.labels_.end(), sim_.labels_.begin(), sim_.labels_.end());
    sim_.labels_.clear();
    live_.PlaceTextLabels(&o);
    live_.ClockScaleLabels(&o);
    sim_.ClockScaleLabels(&o);
    o += "</g>\n</svg>\n</section>\n";
  }

  static void RunTitle(std::string* out, const HtmlWriter& w, int y, const char* run,
                       const std::string& text) {
    *out += "<g class=\"runtitle " + std::string(run) + "\" id=\"" + w.id_prefix_ +
            "title\" data-run=\"" + run + "\" data-top=\"" + IntText(w.band_top_) +
            "\" data-height=\"" + IntText(w.band_h_) + "\"><rect x=\"0\" y=\"" + IntText(y) +
            "\" width=\"" + IntText(kSvgWidth) + "\" height=\"" + IntText(kRunTitleHeight) +
            "\"/><text x=\"6\" y=\"" + IntText(y + 16) + "\">" + HtmlEscape(text) + "</text></g>\n";
  }

  // The diverging operation in each run, at its own time: a band over the run's rows, the
  // thread's lane marked, and a line joining the two.
  void DivergenceMarks(std::string* out) {
    if (!c_.divergence) return;
    const check::Divergence& d = *c_.divergence;
    const std::string label = "DIVERGENCE: " + d.thread + " #" + std::to_string(d.position);
    auto mark = [&](HtmlWriter& w, int64_t from, int64_t to_or_end, const std::string& side) {
      const int64_t to = EndOf(w, from, to_or_end);
      std::string& o = *out;
      o += "<g class=\"divergence\" id=\"" + w.id_prefix_ + "divergence\" data-thread=\"" +
           HtmlEscape(d.thread) + "\" data-position=\"" +
           IntText(static_cast<int64_t>(d.position)) + "\" data-from-us=\"" + IntText(from) +
           "\" data-to-us=\"" + IntText(to) + "\">" + HtmlWriter::Title(label + ": " + side) +
           "<rect class=\"dband\" x=\"" + w.TimeX(from) + "\" y=\"" + IntText(w.band_top_) +
           "\" width=\"" + w.SpanWidth(from, to) + "\" height=\"" + IntText(w.band_h_) + "\"/>";
      const int lane = w.tl_.ThreadIndex(d.thread);
      if (lane != kNone && w.thread_y_[lane] != kNone) {
        o += "<rect class=\"dlane\" x=\"" + w.TimeX(from) + "\" y=\"" +
             IntText(w.thread_y_[lane] + 1) + "\" width=\"" + w.SpanWidth(from, to) +
             "\" height=\"" + IntText(kThreadLaneHeight - 2) + "\"/>";
      }
      o += "</g>\n";
      w.InstantLabel("dlabel", label, from, w.faults_y_ + 16, 3);
    };
    mark(live_, d.live_invoke_us, d.live_end_us, "live: " + d.live_side);
    mark(sim_, d.sim_invoke_us, d.sim_end_us, "simulated: " + d.sim_side);
    *out += "<line class=\"dlink\" x1=\"" + live_.TimeX(d.live_invoke_us) + "\" x2=\"" +
            sim_.TimeX(d.sim_invoke_us) + "\" y1=\"" + IntText(live_.band_top_ + live_.band_h_) +
            "\" y2=\"" + IntText(sim_.band_top_) + "\"/>\n";
  }

  // --- the overview: both runs whole ---

  void Overview(std::string* out) {
    std::string& o = *out;
    const int top = 20;
    const int live_rows = top + kOverviewTitleHeight;
    const int sim_title = live_rows + live_.OverviewRowsHeight() + 4;
    const int sim_rows = sim_title + kOverviewTitleHeight;
    const int h = sim_rows + sim_.OverviewRowsHeight() + 22;
    o += "<section class=\"panel\"><div class=\"toolbar\"><b>Overview</b> <span class=\"hint\">both "
         "runs whole (live " +
         Seconds(live_.tl_.end_us) + ", simulated " + Seconds(sim_.tl_.end_us) +
         "); shade = share of each pixel column spent holding (blue) or waiting for the lock "
         "(grey); orange/pink ticks: failed/unknown operations; click to move the view</span>"
         "</div>\n";
    live_.OverviewOpen(&o, h);
    OverviewRun(&o, live_, top, live_rows, "live run", c_.divergence ? c_.divergence->live_invoke_us : -1);
    OverviewRun(&o, sim_, sim_title, sim_rows, "simulated run",
                c_.divergence ? c_.divergence->sim_invoke_us : -1);
    live_.OverviewClose(&o, h);
  }

  static void OverviewRun(std::string* out, const HtmlWriter& w, int title_y, int rows_y,
                          const char* title, int64_t divergence_us) {
    *out +=
        "\n<text class=\"otitle\" x=\"8\" y=\"" + IntText(title_y + 10) + "\">" + title + "</text>";
    const int rows_h = w.OverviewRowsHeight();
    w.OverviewRows(out, rows_y, rows_y, rows_h);
    if (divergence_us >= 0) {
      *out += "<rect class=\"odiv\" x=\"" + PixelText(w.OverviewPx(divergence_us)) + "\" y=\"" +
              IntText(rows_y) + "\" width=\"2\" height=\"" + IntText(rows_h) +
              "\"><title>first divergence</title></rect>\n";
    }
  }

  HtmlWriter live_;
  HtmlWriter sim_;
  const check::RunComparison& c_;
  int64_t from_us_ = 0, to_us_ = 1;
  int64_t divergence_from_ = 0, divergence_to_ = 1;
  int live_title_y_ = 0, sim_title_y_ = 0, height_ = 0;
};

}  // namespace

std::string RenderHtml(const Timeline& timeline, const check::Verdict& verdict,
                       const ReportMeta& meta) {
  return HtmlWriter(timeline, verdict, meta).Render();
}

std::string RenderComparisonHtml(const ComparedRun& live, const ComparedRun& sim,
                                 const check::RunComparison& comparison) {
  assert(live.timeline && live.verdict && live.meta && sim.timeline && sim.verdict && sim.meta);
  return ComparisonWriter(live, sim, comparison).Render();
}

}  // namespace lockstep::reports
