// report.html of one run: the page, which threads get a lane, what the detail panel covers,
// the layout of its rows, and the header (what ran, what the checkers said, how to get it
// again). html_writer.h says how the page is drawn and which file draws which part.
#include <fnmatch.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "reports/assets/assets.h"
#include "reports/html_writer.h"
#include "reports/report.h"
#include "reports/text.h"

namespace lockstep::reports::html {

std::string IntText(int64_t v) { return std::to_string(v); }

std::string PixelText(double v) {
  std::string s = Format("%.1f", v);
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

std::string TickLabel(int64_t us, int64_t step_us) {
  if (step_us >= 1'000'000) return Format("%.*f s", step_us % 1'000'000 == 0 ? 0 : 1, us / 1e6);
  if (step_us >= 1000) {
    const double s = us / 1e6;
    const int decimals = step_us >= 100'000 ? 1 : step_us >= 10'000 ? 2 : 3;
    return Format("%.*f s", decimals, s);
  }
  return Format("%.4f s", us / 1e6);
}

int64_t TickStep(int64_t span_us, int target) {
  const double raw = static_cast<double>(std::max<int64_t>(span_us, 1)) / target;
  int64_t step = 1;
  while (step * 10 <= raw) step *= 10;
  if (step * 5 <= raw) return step * 5;
  if (step * 2 <= raw) return step * 2;
  return step;
}

std::string HtmlWriter::Render() {
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

// The script status line and the script, the end of every page. The script (assets/report.js)
// zooms and pans: every shape is in the nested #plot's microsecond space, so a view change sets
// its viewBox, re-places the text labels (the same rule as PlaceLabels) and redraws the axis.
std::string HtmlWriter::Foot() {
  std::string out =
      "<p id=\"script-status\" data-status=\"not run\" class=\"foot\">Zoom and pan need "
      "JavaScript; the picture above is complete without it.</p>\n";
  out += "<script>\n\n";
  out += assets::kReportJs;
  out += "</script>\n</body>\n</html>\n";
  return out;
}

// --- which threads get a lane ---

void HtmlWriter::ChooseLanes() {
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

void HtmlWriter::ChooseDetail() {
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

void HtmlWriter::Layout() { height_ = LayoutFrom(kAxisHeight) + kAxisHeight; }

// Places this run's rows from `top` down (faults, threads, nodes, holders, clocks); returns
// the y below them.
int HtmlWriter::LayoutFrom(int top) {
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

std::string HtmlWriter::ExpectationOf(const std::string& property) const {
  if (!meta_.expect) return "";
  const Expectation want = ::lockstep::ExpectationOf(*meta_.expect, property);
  if (want == Expectation::kAny) return "not judged";
  return want == Expectation::kHold ? "expected to hold" : "expected to be violated";
}

void HtmlWriter::Header(std::string* out) {
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
  row("script SHA-1s", scripts.empty() ? "not recorded in the history (pass --scenario)" : scripts,
      !scripts.empty());
  o += "<dt>reproduce</dt><dd><code class=\"repro\" id=\"reproduce\">" +
       HtmlEscape(meta_.reproduce) + "</code></dd>\n";
  o += "</dl>\n";

  Callout(&o, "");
  o += "</header>\n";
}

// The lead violation with its explanation, or that none was found. `run` names the run on a
// page with two ("live run: ").
void HtmlWriter::Callout(std::string* out, const std::string& run) {
  std::string& o = *out;
  if (const check::Violation* v = LeadViolation(verdict_)) {
    o += "<section class=\"callout\" id=\"" + id_prefix_ + "lead-violation\"><h2>" +
         HtmlEscape(run + v->property) + " violated <small>(" + HtmlEscape(v->kind) +
         ")</small></h2>\n<p class=\"when\">";
    for (size_t i = 0; i < v->threads.size(); ++i) {
      o += (i ? " &amp; " : "") + std::string("<b>") + HtmlEscape(v->threads[i]) + "</b>";
    }
    o += (v->threads.empty() ? "" : ", ") + Seconds(v->from_us) + " &ndash; " + Seconds(v->to_us) +
         " (" + Duration(v->to_us - v->from_us) + ")</p>\n<p>" + HtmlEscape(v->explanation) +
         "</p>\n<button type=\"button\" data-view-from-us=\"" + IntText(focus_from_) +
         "\" data-view-to-us=\"" + IntText(focus_to_) +
         "\">show in the timeline</button></section>\n";
  } else {
    o += "<section class=\"callout ok\" id=\"" + id_prefix_ + "no-violation\"><h2>" +
         HtmlEscape(run) +
         "No property violated</h2>"
         "<p>Every checker accepted the history.</p></section>\n";
  }
}

}  // namespace lockstep::reports::html

namespace lockstep::reports {

std::string RenderHtml(const Timeline& timeline, const check::Verdict& verdict,
                       const ReportMeta& meta) {
  return html::HtmlWriter(timeline, verdict, meta).Render();
}

}  // namespace lockstep::reports
