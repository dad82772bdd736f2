// report.html's detail panel: its toolbar, legend, grid and axis, the fault bands and the
// violation marks over the lanes, and the text labels, placed in pixel space for the initial
// view (the script places them again for every view). The lanes are html_lanes.cpp.
#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "reports/html_writer.h"

namespace lockstep::reports::html {

std::string HtmlWriter::PlotUnits(int64_t us) const {
  if (unit_us_ == 1) return IntText(us);
  std::string s = Format("%.2f", static_cast<double>(us) / unit_us_);
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

void HtmlWriter::Rect(std::string* o, const char* cls, int64_t from_us, int64_t to_us, double y,
                      double h, const std::string& title, const std::string& extra) {
  *o += "<rect class=\"" + std::string(cls) + "\" x=\"" + TimeX(from_us) + "\" y=\"" +
        PixelText(y) + "\" width=\"" + SpanWidth(from_us, to_us) + "\" height=\"" + PixelText(h) +
        "\"" + extra + ">" + Title(title) + "</rect>\n";
}

// A label that the script keeps inside its interval (or hides when it does not fit).
// Labels are collected here and written last (PlaceLabels), on top of every shape. A label
// with an interval shows only when it fits inside it; one with from == to marks an instant.
// In rows > 0 (the faults row, loss marks) a label also gives way to the earlier label of its
// row that it would overlap.
void HtmlWriter::Label(const char* cls, const std::string& text, int64_t from_us, int64_t to_us,
                       double y, int row) {
  const double w = text.size() * kCharWidth + 6;
  labels_.push_back({from_us, to_us, y, w, row, false, cls, text});
}

void HtmlWriter::InstantLabel(const char* cls, const std::string& text, int64_t at_us, double y,
                              int row) {
  const double w = text.size() * kCharWidth + 6;
  labels_.push_back({at_us, at_us, y, w, row, true, cls, text});
}

void HtmlWriter::Detail(std::string* out) {
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
       "\" data-view-to-us=\"" + IntText(std::max(window_.to_us, window_.from_us + 1000)) + "\">" +
       (window_.whole_run ? "whole run" : "whole detail window") + "</button></span>" +
       LaneFilter() + "<span class=\"view\" id=\"view-text\">" + ViewText() + "</span></div>\n";
  Legend(&o);
  if (!window_.whole_run) {
    o += "<p class=\"note\" id=\"summarised\">This run is long: the timeline holds full detail "
         "from " +
         Seconds(window_.from_us) + " to " + Seconds(window_.to_us) +
         Format(" (at most %zu elements, around ", kHtmlDetailElements) +
         (meta_.detail_at_us        ? Seconds(*meta_.detail_at_us) + ", as asked"
          : LeadViolation(verdict_) ? std::string("the first violation")
          : tl_.faults.empty()      ? std::string("the start")
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
       "\" data-min-span-us=\"" + IntText(min_span_us_) + "\" data-unit-us=\"" + IntText(unit_us_) +
       "\" data-plot-x=\"" + IntText(kPlotX) + "\" data-plot-width=\"" + IntText(kPlotWidth) +
       "\" data-end-us=\"" + IntText(tl_.end_us) + "\">\n";
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
std::string HtmlWriter::LaneFilter() {
  return "<label class=\"lanefilter\" title=\"names or patterns, comma-separated: c1*, "
         "c2.t0, c?.t1\">lanes <input id=\"lane-filter\" type=\"text\" size=\"14\" "
         "placeholder=\"all\" spellcheck=\"false\"> <span id=\"lane-count\"></span></label>";
}

std::string HtmlWriter::ViewBox() const {
  return TimeX(view_from_) + " 0 " + SpanWidth(view_from_, view_to_) + " " + IntText(height_);
}

std::string HtmlWriter::ViewText() const {
  return "view " + Seconds(view_from_) + " &ndash; " + Seconds(view_to_) + " (" +
         Duration(view_to_ - view_from_) + ")";
}

void HtmlWriter::Legend(std::string* o) {
  const char* read = any_read_ ? "<span><i class=\"sw hold read\"></i>holding to read</span>" : "";
  const char* network =
      any_network_ ? "<span><i class=\"sw f-net\"></i>slow, lossy or duplicating links</span>" : "";
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
        network +
        "<span><i class=\"sw viol\"></i>violation</span>"
        "</div>\n";
}

// --- grid and axis (pixel space; the script redraws them for each view) ---

std::string HtmlWriter::Grid() const {
  std::string o;
  const int64_t step = TickStep(view_to_ - view_from_, 10);
  for (int64_t t = (view_from_ + step - 1) / step * step; t <= view_to_; t += step) {
    const std::string x = PixelText(ViewPx(t));
    o += "<line x1=\"" + x + "\" x2=\"" + x + "\" y1=\"" + IntText(kAxisHeight) + "\" y2=\"" +
         IntText(height_ - kAxisHeight) + "\"/>";
  }
  return o;
}

std::string HtmlWriter::Axis() const {
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

std::vector<std::pair<int, int>> HtmlWriter::LanesOfProcess(const std::string& process) const {
  std::vector<std::pair<int, int>> out;  // y, height
  for (int lane : tl_.ThreadsOf(process)) {
    if (thread_y_[lane] != kNone) out.push_back({thread_y_[lane], kThreadLaneHeight});
  }
  if (const int n = tl_.NodeIndex(process); n != kNone)
    out.push_back({node_y_[n], kNodeLaneHeight});
  return out;
}

std::string_view HtmlWriter::FaultClass(const std::string& kind) {
  if (const history::FaultKindInfo* k = history::FindFaultKind(kind)) return k->report_class;
  if (kind == "rediscover") return "f-note";
  return "f-failover";  // What a failover brings about ("promote").
}

void HtmlWriter::FaultBands(std::string* o) {
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
    const std::string_view cls = FaultClass(f.kind);
    *o += "<g class=\"fault " + std::string(cls) + "\" id=\"" + id_prefix_ + "fault-" +
          IntText(static_cast<int64_t>(i)) + "\" data-kind=\"" + HtmlEscape(f.kind) +
          "\" data-from-us=\"" + IntText(f.from_us) + "\" data-to-us=\"" + IntText(f.to_us) +
          "\">" + Title(tip);
    if (f.instant) {
      *o += "<line x1=\"" + TimeX(f.from_us) + "\" x2=\"" + TimeX(f.from_us) + "\" y1=\"" +
            IntText(faults_y_ + 2) + "\" y2=\"" + IntText(faults_y_ + kFaultRowHeight - 2) + "\"/>";
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
    const history::FaultKindInfo* kind = history::FindFaultKind(f.kind);
    std::string text =
        kind != nullptr && kind->labelled_by_process ? f.kind + " " + f.process : f.label;
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    if (f.instant) {
      InstantLabel("flabel instant", text, f.from_us, faults_y_ + 16, 1);
    } else {
      Label("flabel", text, f.from_us, f.to_us, faults_y_ + 16, 1);
    }
  }
  *o += "</g>\n";
}

// --- violations ---

void HtmlWriter::ViolationMarks(std::string* out) {
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
         Title(v.property + " (" + v.kind + "), " + Seconds(v.from_us) + " - " + Seconds(v.to_us) +
               ": " + v.explanation);
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

void HtmlWriter::PlaceLabels(std::string* out) {
  PlaceTextLabels(out);
  ClockScaleLabels(out);
}

void HtmlWriter::PlaceTextLabels(std::string* out) {
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
void HtmlWriter::ClockScaleLabels(std::string* out) {
  std::string& o = *out;
  if (clock_h_ != kClockLaneHeight) return;
  o += "<text class=\"cscale\" x=\"" + IntText(kPlotX + kPlotWidth - 4) + "\" y=\"" +
       IntText(clock_y_ + 14) + "\">" + clock_scale_text_ + "</text>\n";
  o += "<text class=\"cscale\" x=\"" + IntText(kPlotX + kPlotWidth - 4) + "\" y=\"" +
       IntText(clock_y_ + clock_h_ - 4) + "\">" + clock_scale_low_text_ + "</text>\n";
}

}  // namespace lockstep::reports::html
