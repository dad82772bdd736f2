// report.html's overview: the whole run, binned per pixel column, with every detail window
// marked; clicking it moves the detail view there.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "reports/html_writer.h"

namespace lockstep::reports::html {

namespace {

// Runs of equal shade, so a lane costs at most one rect per column and usually far fewer.
void DensityRects(std::string* o, const std::vector<float>& cols, double y, double h,
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

}  // namespace

// --- the overview: the whole run, binned per pixel column ---

// A binned quantity (microseconds per bin, Timeline::bin_us wide) as the share of each pixel
// column it covers: each bin's time is spread evenly over the part of the run the bin spans.
std::vector<float> HtmlWriter::Shares(const std::vector<uint32_t>& bins_us) const {
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
    const int last =
        std::clamp(static_cast<int>(std::ceil(hi / col_us)) - 1, first, kPlotWidth - 1);
    for (int c = first; c <= last; ++c) {
      const double overlap =
          std::min<double>(hi, (c + 1) * col_us) - std::max<double>(lo, c * col_us);
      if (overlap > 0) cols[c] += per_us * overlap;
    }
  }
  std::vector<float> out(kPlotWidth);
  for (int c = 0; c < kPlotWidth; ++c) out[c] = static_cast<float>(cols[c] / col_us);
  return out;
}

// Binned counts as marks: the column of each non-empty bin's middle.
std::vector<float> HtmlWriter::Marks(const std::vector<uint16_t>& counts) const {
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

// A time's x in pixels on the overview's and the charts' axis (the whole run).
double HtmlWriter::OverviewPx(int64_t t_us) const {
  return kPlotX + static_cast<double>(t_us) * kPlotWidth / std::max<int64_t>(axis_end_us_, 1);
}

void HtmlWriter::Overview(std::string* out) {
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
void HtmlWriter::OverviewOpen(std::string* out, int h) const {
  std::string& o = *out;
  o += "<svg id=\"overview\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + IntText(kSvgWidth) +
       "\" height=\"" + IntText(h) + "\" data-end-us=\"" + IntText(axis_end_us_) + "\">\n";
  TimeTicks(&o, 12, 14, h - 20);
}

// The whole run's time axis (over axis_end_us_): a label at text_y and a grid line from y1
// to y2 per tick, for the overview and the charts.
void HtmlWriter::TimeTicks(std::string* out, int text_y, int y1, int y2) const {
  const int64_t step = TickStep(axis_end_us_, 10);
  for (int64_t t = 0; t <= axis_end_us_; t += step) {
    *out += "<text class=\"otick\" x=\"" + PixelText(OverviewPx(t)) + "\" y=\"" + IntText(text_y) +
            "\">" + TickLabel(t, step) + "</text>";
    *out += "<line class=\"ogrid\" x1=\"" + PixelText(OverviewPx(t)) + "\" x2=\"" +
            PixelText(OverviewPx(t)) + "\" y1=\"" + IntText(y1) + "\" y2=\"" + IntText(y2) + "\"/>";
  }
}

// The marker of the detail view, and the end of the overview.
void HtmlWriter::OverviewClose(std::string* out, int h) const {
  *out += "<rect id=\"overview-view\" x=\"" + PixelText(OverviewPx(view_from_)) +
          "\" y=\"14\" width=\"" +
          PixelText(std::max(2.0, OverviewPx(view_to_) - OverviewPx(view_from_))) + "\" height=\"" +
          IntText(h - 34) + "\"/>\n";
  *out += "</svg></section>\n";
}

// The height of this run's rows in the overview: faults, violations, a row per lane.
int HtmlWriter::OverviewRowsHeight() const {
  const int lanes = static_cast<int>(tl_.threads.size() - hidden_threads_ + tl_.nodes.size());
  return 22 + lanes * kOverviewLaneHeight;
}

// This run's rows of the overview from `top` down; its detail windows are marked from mark_y
// over mark_h.
void HtmlWriter::OverviewRows(std::string* out, int top, int mark_y, int mark_h) const {
  std::string& o = *out;
  const int faults_y = top, viol_y = top + 10, lanes_y = top + 22;
  o += "\n<text class=\"lsub\" x=\"8\" y=\"" + IntText(faults_y + 8) + "\">faults</text>";
  o += "<text class=\"lsub\" x=\"8\" y=\"" + IntText(viol_y + 8) + "\">violations</text>\n";
  // Faults as bands per kind, merged per pixel column: thousands of GC pauses cost no more
  // than one band each.
  std::map<std::string, std::vector<bool>> faults;
  for (const Fault& f : tl_.faults) {
    std::vector<bool>& cols = faults[std::string(FaultClass(f.kind))];
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
           PixelText(std::max(1.0, OverviewPx(w.to_us) - OverviewPx(w.from_us))) + "\" height=\"" +
           IntText(mark_h) + "\"><title>full detail in trace.json here</title></rect>";
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

}  // namespace lockstep::reports::html
