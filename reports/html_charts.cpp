// report.html's charts: throughput, acquire latency quantiles, and believed holders with
// waiting threads, per column of the whole run, on the overview's time axis.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "reports/html_writer.h"

namespace lockstep::reports::html {

namespace {

// The latency below which a share q of the column's acquires fall (the upper end of the
// bucket that reaches q); -1 when it has none.
double Quantile(const std::array<uint64_t, kLatencyBuckets>& h, double q) {
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

// A y-axis label at the plot's left.
void YLabel(std::string* out, double y, const std::string& text) {
  *out += "<text class=\"cylabel\" x=\"" + IntText(kPlotX - 6) + "\" y=\"" + PixelText(y + 3) +
          "\">" + text + "</text><line class=\"cyline\" x1=\"" + IntText(kPlotX) + "\" x2=\"" +
          IntText(kPlotX + kPlotWidth) + "\" y1=\"" + PixelText(y) + "\" y2=\"" + PixelText(y) +
          "\"/>";
}

std::string Points(const std::vector<std::pair<double, double>>& pts) {
  std::string p;
  for (const auto& [x, y] : pts) p += PixelText(x) + "," + PixelText(y) + " ";
  if (!p.empty()) p.pop_back();
  return p;
}

std::string ColumnRange(int c, double col_us) {
  return Seconds(std::llround(c * col_us)) + " \u2013 " + Seconds(std::llround((c + 1) * col_us));
}

// A power of ten of microseconds: "10 us", "100 ms", "10 s".
std::string DecadeLabel(int64_t us) {
  if (us < 1000) return IntText(us) + " us";
  if (us < 1'000'000) return IntText(us / 1000) + " ms";
  return IntText(us / 1'000'000) + " s";
}

// 1, 2 or 5 times a power of ten, at least v.
double NiceCeil(double v) {
  const double p = std::pow(10, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * p >= v * 0.999) return m * p;
  }
  return 10 * p;
}

}  // namespace

// --- charts: the acquires over the whole run, on the overview's axis ---

// What a column of the charts gathers from the bins whose middle falls in it.
struct HtmlWriter::ChartColumn {
  uint64_t ok = 0, not_ok = 0;
  std::array<uint64_t, kLatencyBuckets> latency{};
  double wait_us = 0;  // Summed over the threads
  int holders = 0;     // The most believed holders of any lock
  bool conflict = false;
  bool covered = false;  // Inside the run
};

std::vector<HtmlWriter::ChartColumn> HtmlWriter::ChartColumns() const {
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

// A chart's svg: its title row, the plot area's frame and the time axis of the overview.
void HtmlWriter::ChartOpen(std::string* out, const char* id, const std::string& title,
                           int h) const {
  std::string& o = *out;
  o += "<svg class=\"chart seek\" id=\"" + std::string(id) +
       "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + IntText(kSvgWidth) + "\" height=\"" +
       IntText(h) + "\" data-end-us=\"" + IntText(axis_end_us_) + "\">\n";
  o += "<text class=\"ctitle\" x=\"8\" y=\"14\">" + title + "</text>";
  TimeTicks(&o, h - 3, 20, h - 14);
  o += "\n";
}

double HtmlWriter::ColumnX(int c) const {
  return kPlotX + static_cast<double>(c) * kPlotWidth / kChartColumns;
}

// Column c's hover target between top and bottom, with its figures as the tooltip.
void HtmlWriter::HitRect(std::string* out, int c, int top, int bottom,
                         const std::string& tip) const {
  *out += "<rect class=\"chit\" x=\"" + PixelText(ColumnX(c)) + "\" y=\"" + IntText(top) +
          "\" width=\"" + PixelText(ColumnX(c + 1) - ColumnX(c)) + "\" height=\"" +
          IntText(bottom - top) + "\"><title>" + tip + "</title></rect>";
}

// Throughput, acquire latency quantiles, and holders with waiting threads, per column of
// the whole run (the bins: complete whatever the detail windows keep).
void HtmlWriter::Charts(std::string* out) {
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
  const auto q_text = [](double us) {
    return us < 0 ? std::string("-") : Duration(std::llround(us));
  };
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
        o += "<rect class=\"cok\" x=\"" + PixelText(ColumnX(c)) + "\" y=\"" + PixelText(yv(rate)) +
             "\" width=\"" + PixelText(std::max(1.0, col_w - 1)) + "\" height=\"" +
             PixelText(yv(0) - yv(rate)) + "\"/>";
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
                  " believed holder(s)" + (cols[c].conflict ? " (more than the lock allows)" : "") +
                  ", " + Format("%.2f", w) + " threads waiting on average");
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
int HtmlWriter::permits_limit() const { return std::max(1, tl_.permits); }

}  // namespace lockstep::reports::html
