// Internal to reports/: the writer of report.html, shared by the files that draw its parts.
//
// One file, no network: inline CSS, inline SVG, and a small inline script for zoom and pan (the
// stylesheets and the script are reports/assets/*, embedded at build time). Without the script
// the page shows the same picture (every position is computed here); the script only moves the
// view. It records that it ran by setting data-status="ok" on #script-status, which the browser
// test checks.
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
//
// One HtmlWriter draws one run; its parts are written by what they draw:
//   html.cpp             the page: which threads get a lane, what the detail panel covers,
//                        the layout, the header and the lead violation's callout
//   html_detail.cpp      the detail panel's frame: toolbar, legend, grid and axis, fault bands,
//                        violation marks, and the text labels placed over them
//   html_lanes.cpp       the lanes inside it: client threads, nodes, believed holders, clocks
//   html_overview.cpp    the overview: the whole run binned per pixel column
//   html_charts.cpp      throughput, acquire latency and holders over the whole run
//   html_tables.cpp      violations, faults, run parameters
//   html_comparison.cpp  a page with two runs: two HtmlWriters (a replay's live and simulated
//                        runs, a fuzz failure and its reference's) in one frame
#ifndef LOCKSTEP_REPORTS_HTML_WRITER_H_
#define LOCKSTEP_REPORTS_HTML_WRITER_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "check/verdict.h"
#include "history/fault_kinds.h"
#include "reports/report.h"
#include "reports/text.h"
#include "reports/timeline.h"

namespace lockstep::reports::html {

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
constexpr int kChartColumns = 194;            // 6 px each
constexpr int64_t kMaxPlotUnits = 4'000'000;  // see HtmlWriter::TimeX
// Thread lanes drawn at most (the violation's threads first); trace.json has every thread.
constexpr size_t kMaxThreadLanes = 48;
constexpr double kCharWidth = 6.3;  // DejaVu Sans at 11px, for label fitting (same in script)

// An integer as an attribute value: "42".
std::string IntText(int64_t v);
// A pixel coordinate or length, to a tenth of a pixel, without a trailing ".0": "12", "12.5".
std::string PixelText(double v);
// "1 s", "200 ms" ... for axis ticks.
std::string TickLabel(int64_t us, int64_t step_us);
// The tick step for ~`target` ticks over `span_us`: 1, 2 or 5 times a power of ten.
int64_t TickStep(int64_t span_us, int target);

class ComparisonWriter;

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

  // The whole page of one run.
  std::string Render();

 private:
  friend class ComparisonWriter;

  struct PendingLabel {
    int64_t from_us, to_us;
    double y, width;
    int row;
    bool instant;
    std::string cls, text;
  };
  struct ClockScale {
    int64_t lo_us = -5000, hi_us = 5000;
  };
  struct ChartColumn;  // html_charts.cpp

  bool InWindow(int64_t from_us, int64_t to_us) const {
    return to_us >= window_.from_us && from_us <= window_.to_us;
  }
  bool Skewed(const ClockSeries& c) const { return c.min_offset_us != 0 || c.max_offset_us != 0; }

  // Plot coordinates: time since origin_ in units of unit_us_, so that no coordinate exceeds
  // kMaxPlotUnits. Chromium lays SVG out in fixed point that saturates near 2^25, and a shape
  // beyond that is drawn clamped (a 60 s hold in microseconds would end at 33.5 s).
  std::string TimeX(int64_t t_us) const { return PlotUnits(t_us - origin_); }
  std::string SpanWidth(int64_t from_us, int64_t to_us) const {
    return PlotUnits(std::max<int64_t>(0, to_us - from_us));
  }
  // A time's x in pixels in the detail panel's current view (for text, which is not scaled).
  double ViewPx(int64_t t_us) const {
    return kPlotX + static_cast<double>(t_us - view_from_) * kPlotWidth /
                        static_cast<double>(view_to_ - view_from_);
  }

  static std::string Title(const std::string& text) {
    return "<title>" + HtmlEscape(text) + "</title>";
  }

  // --- html.cpp: the page, its lanes, its detail window, its layout, its header ---
  static std::string Foot();
  void ChooseLanes();
  void ChooseDetail();
  void Layout();
  int LayoutFrom(int top);
  std::string ExpectationOf(const std::string& property) const;
  void Header(std::string* out);
  void Callout(std::string* out, const std::string& run);

  // --- html_detail.cpp: the detail panel's frame, fault bands, violation marks, labels ---
  std::string PlotUnits(int64_t us) const;
  void Rect(std::string* o, const char* cls, int64_t from_us, int64_t to_us, double y, double h,
            const std::string& title, const std::string& extra = "");
  void Label(const char* cls, const std::string& text, int64_t from_us, int64_t to_us, double y,
             int row = 0);
  void InstantLabel(const char* cls, const std::string& text, int64_t at_us, double y, int row);
  void Detail(std::string* out);
  static std::string LaneFilter();
  std::string ViewBox() const;
  std::string ViewText() const;
  void Legend(std::string* o);
  std::string Grid() const;
  std::string Axis() const;
  std::vector<std::pair<int, int>> LanesOfProcess(const std::string& process) const;
  static std::string_view FaultClass(const std::string& kind);
  void FaultBands(std::string* o);
  void ViolationMarks(std::string* out);
  void PlaceLabels(std::string* out);
  void PlaceTextLabels(std::string* out);
  void ClockScaleLabels(std::string* out);

  // --- html_lanes.cpp: thread, node, holder and clock lanes ---
  void LaneBackgrounds(std::string* out);
  bool InLeadViolation(const std::string& thread, const Span& h) const;
  void Threads(std::string* out);
  std::string OwnerColour(int thread) const;
  void Nodes(std::string* out);
  void Holders(std::string* out);
  ClockScale Scale() const;
  double ClockY(int64_t offset_us) const;
  std::string ClockLegend() const;
  void Clocks(std::string* out);

  // --- html_overview.cpp: the whole run per pixel column ---
  std::vector<float> Shares(const std::vector<uint32_t>& bins_us) const;
  std::vector<float> Marks(const std::vector<uint16_t>& counts) const;
  double OverviewPx(int64_t t_us) const;
  void Overview(std::string* out);
  void OverviewOpen(std::string* out, int h) const;
  void TimeTicks(std::string* out, int text_y, int y1, int y2) const;
  void OverviewClose(std::string* out, int h) const;
  int OverviewRowsHeight() const;
  void OverviewRows(std::string* out, int top, int mark_y, int mark_h) const;

  // --- html_charts.cpp: throughput, latency, holders ---
  std::vector<ChartColumn> ChartColumns() const;
  void ChartOpen(std::string* out, const char* id, const std::string& title, int h) const;
  double ColumnX(int c) const;
  void HitRect(std::string* out, int c, int top, int bottom, const std::string& tip) const;
  void Charts(std::string* out);
  int permits_limit() const;

  // --- html_tables.cpp: violations, faults, parameters ---
  std::string ShowButton(const check::Violation& v) const;
  void Tables(std::string* out);

  const Timeline& tl_;
  const check::Verdict& verdict_;
  const ReportMeta& meta_;
  std::vector<ShownViolation> shown_;
  Window window_;
  int64_t origin_ = 0, view_from_ = 0, view_to_ = 1, min_span_us_ = 1000, unit_us_ = 1;
  std::vector<int> thread_y_, node_y_;  // kNone: not drawn
  std::vector<bool> drawn_;
  bool any_read_ = false;          // some hold is a read hold (the legend then explains them)
  bool any_replica_copy_ = false;  // some node lane shows a replica's copy of the key
  bool any_network_ = false;       // some fault is a latency, loss or duplicate window (the same)
  size_t hidden_threads_ = 0;
  int clients_header_y_ = 0, nodes_header_y_ = 0, holders_y_ = 0, clock_y_ = 0, height_ = 0;
  int clock_h_ = kClockLaneHeight;
  std::vector<PendingLabel> labels_;
  std::string clock_scale_text_, clock_scale_low_text_;
  // Where this run's parts go on a page that may show two runs (HtmlWriter alone: one).
  std::string id_prefix_;       // before element ids: "" or "live-", "sim-"
  std::string run_title_;       // after table headings: "" or " (live run)"
  int64_t axis_end_us_;         // the end of the overview's axis: the run's end, or the later run's
  int faults_y_ = kAxisHeight;  // top of this run's fault row
  int band_top_ = 0, band_h_ = 0;          // this run's rows, which the lead violation band covers
  int64_t focus_from_ = 0, focus_to_ = 1;  // the lead violation's view (ChooseDetail)
};

}  // namespace lockstep::reports::html

#endif  // LOCKSTEP_REPORTS_HTML_WRITER_H_
