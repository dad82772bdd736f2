// A live replay's report.html (RenderComparisonHtml): the live run and its simulation on one
// page (the class comment below says how). `lockstep fuzz --reference` draws a shrunk failure
// and its reference's run on the same page, in the words of the comparison's labels.
#include <algorithm>
#include <cassert>
#include <string>
#include <vector>

#include "check/compare.h"
#include "reports/assets/assets.h"
#include "reports/html_writer.h"
#include "reports/report.h"
#include "reports/text.h"

namespace lockstep::reports::html {

// A live replay's report.html: both runs one above the other on one time axis (time since each
// run's start), live on top, under the comparison: both verdicts per property, the operations'
// agreement per thread, and the first divergence, which is marked on both timelines. Each run
// is drawn by its own HtmlWriter (the same lanes, shapes and labels as a run's report); this
// class gives them one frame (origin, scale, view), stacks their rows in one svg, so the zoom
// and pan script moves both at once, and adds what only a comparison has. The members keep the
// replay's names: live_ is the labels' first run, sim_ the second.
class ComparisonWriter {
 public:
  ComparisonWriter(const ComparedRun& live, const ComparedRun& sim, const check::RunComparison& c)
      : live_(*live.timeline, *live.verdict, *live.meta, "live-", " (" + c.labels.first.run + ")"),
        sim_(*sim.timeline, *sim.verdict, *sim.meta, "sim-", " (" + c.labels.second.run + ")"),
        c_(c),
        first_(c.labels.first),
        second_(c.labels.second) {}

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
        c_.labels.tool + ": " + meta.scenario_name +
        (meta.seed ? Format(" seed %llu", static_cast<unsigned long long>(*meta.seed)) : "") +
        ", " + first_.name + " and " + second_.name);
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
    o += "<header>\n<h1>" +
         HtmlEscape(meta.scenario_name.empty() ? c_.labels.tool : meta.scenario_name);
    if (meta.seed) {
      o += Format(" <span class=\"seed\">seed %llu</span>",
                  static_cast<unsigned long long>(*meta.seed));
    }
    o += " <span class=\"seed\">" + HtmlEscape(c_.labels.pair) + "</span></h1>\n";
    if (!meta.description.empty())
      o += "<p class=\"desc\">" + HtmlEscape(meta.description) + "</p>\n";
    Comparison(&o);
    Meta(&o);
    live_.Callout(&o, first_.run + ": ");
    sim_.Callout(&o, second_.run + ": ");
    o += "</header>\n";
  }

  void Comparison(std::string* out) {
    std::string& o = *out;
    o += "<section class=\"panel compare\" id=\"comparison\"><h2>" +
         HtmlEscape(Capitalised(second_.name) + " vs " + first_.name) + "</h2>\n";
    o += "<table id=\"verdict-comparison\"><tr><th>property</th><th>" + HtmlEscape(second_.name) +
         "</th><th>" + HtmlEscape(first_.name) + "</th><th>expected</th><th></th></tr>\n";
    for (const check::PropertyComparison& p : c_.properties) {
      const check::PropertyResult* s = sim_.verdict_.Find(p.property);
      const check::PropertyResult* l = live_.verdict_.Find(p.property);
      const std::string expect = live_.ExpectationOf(p.property);
      o += "<tr data-property=\"" + HtmlEscape(p.property) + "\" data-sim=\"" +
           VerdictData(s, p.applicable) + "\" data-live=\"" + VerdictData(l, p.applicable) + "\"" +
           (p.differs() ? " class=\"differs\"" : "") + "><td>" + HtmlEscape(p.property) +
           "</td><td class=\"v " + VerdictClass(s, p.applicable) + "\">" +
           VerdictText(s, p.applicable) + "</td><td class=\"v " + VerdictClass(l, p.applicable) +
           "\">" + VerdictText(l, p.applicable) + "</td><td>" + expect + "</td><td>" +
           (p.differs() ? "<b>DIFFERENT</b>" : "") + "</td></tr>\n";
    }
    o += "</table>\n";
    o += std::string("<p class=\"") + (c_.verdicts_differ ? "differ" : "agree") +
         "\" id=\"verdict-agreement\" data-agree=\"" + (c_.verdicts_differ ? "false" : "true") +
         "\">" + HtmlEscape(check::VerdictAgreement(c_)) + "</p>\n";

    o += Format(
        "<p id=\"operation-agreement\" data-compared=\"%zu\" data-agree=\"%zu\" "
        "data-sim-only=\"%zu\" data-live-only=\"%zu\">Operations, each thread's taken in "
        "order: <b>%zu compared</b> position by position, <b>%zu with the same "
        "outcome</b>; %zu only %s, %zu only %s.</p>\n",
        c_.operations_compared, c_.operations_agree, c_.sim_only, c_.live_only,
        c_.operations_compared, c_.operations_agree, c_.sim_only,
        HtmlEscape(second_.where).c_str(), c_.live_only, HtmlEscape(first_.where).c_str());
    std::vector<const check::ThreadComparison*> threads;
    for (const check::ThreadComparison& t : c_.threads) threads.push_back(&t);
    std::stable_sort(threads.begin(), threads.end(), [](const auto* a, const auto* b) {
      return NaturalLess(a->thread, b->thread);
    });
    o += "<table id=\"thread-agreement\"><tr><th>thread</th><th>compared</th><th>same "
         "outcome</th><th>different</th><th>only " +
         HtmlEscape(second_.where) + "</th><th>only " + HtmlEscape(first_.where) + "</th></tr>\n";
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
                                              : d->sim_op + " " + second_.where + ", " +
                                                    d->live_op + " " + first_.where) +
           ")</h2>\n<p class=\"when\">invoked at " + Seconds(d->sim_invoke_us) +
           HtmlEscape(" in the " + second_.run + " and ") + Seconds(d->live_invoke_us) +
           HtmlEscape(" in the " + first_.run) + "</p>\n<table><tr><th>" +
           HtmlEscape(second_.name) + "</th><td>" + HtmlEscape(d->sim_side) +
           "</td></tr>\n<tr><th>" + HtmlEscape(first_.name) + "</th><td>" +
           HtmlEscape(d->live_side) +
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
    const std::string own = HtmlEscape(c_.labels.second_dir + "/report.html");
    o += "<p class=\"hint\">The " + HtmlEscape(second_.run) + " on its own: <a href=\"" + own +
         "\">" + own + "</a>; the comparison as text: comparison.txt.</p>\n</section>\n";
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
    row(first_.run, Seconds(live_.tl_.end_us) + " of " + first_.time +
                        Format(", %zu events, history.jsonl", live_.tl_.event_count));
    row(first_.name + " history hash", live_.tl_.history_hash, true);
    row(second_.run, Seconds(sim_.tl_.end_us) + " of " + second_.time +
                         Format(", %zu events, ", sim_.tl_.event_count) + c_.labels.second_dir +
                         "/history.jsonl");
    row(second_.name + " history hash", sim_.tl_.history_hash, true);
    if (!meta.version.empty()) row("lockstep", meta.version);
    // The protocol and the lease, as the second run derived them (a replay's simulator; its live
    // run lists its processes); where the first run's differ (a reference on another version),
    // each run's.
    for (const auto& parameter : sim_.meta_.parameters) {
      const std::string& name = parameter.first;
      if (name != "protocol" && name != "lease") continue;
      const auto own = std::find_if(live_.meta_.parameters.begin(), live_.meta_.parameters.end(),
                                    [&](const auto& p) { return p.first == name; });
      if (own == live_.meta_.parameters.end() || own->second == parameter.second) {
        row(name, parameter.second);
      } else {
        row(name + " (" + first_.run + ")", own->second);
        row(name + " (" + second_.run + ")", parameter.second);
      }
    }
    o += "<dt>reproduce</dt><dd><code class=\"repro\" id=\"reproduce\">" +
         HtmlEscape(meta.reproduce) + "</code></dd>\n";
    o += "</dl>\n";
  }

  // --- the timelines ---

  void Detail(std::string* out) {
    std::string& o = *out;
    o += "<section class=\"panel\">\n<div class=\"toolbar\"><b>Timelines</b> <span "
         "class=\"hint\">" + HtmlEscape(first_.name + " above, " + second_.name + " below") +
         ", on one axis: time since each run's start; wheel to zoom, drag to pan</span><span "
         "class=\"buttons\"><button type=\"button\" data-zoom=\"in\">+</button><button "
         "type=\"button\" data-zoom=\"out\">&minus;</button>";
    if (c_.divergence) {
      o += "<button type=\"button\" data-view-from-us=\"" + IntText(divergence_from_) +
           "\" data-view-to-us=\"" + IntText(divergence_to_) + "\">divergence</button>";
    }
    for (const HtmlWriter* w : {&live_, &sim_}) {
      if (LeadViolation(w->verdict_) == nullptr) continue;
      o += "<button type=\"button\" data-view-from-us=\"" +
           IntText(std::max(from_us_, w->focus_from_)) + "\" data-view-to-us=\"" +
           IntText(std::min(to_us_, w->focus_to_)) + "\">" +
           HtmlEscape(w == &live_ ? first_.name : second_.name) + " violation</button>";
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
           Seconds(live_.window_.from_us) + " to " + Seconds(live_.window_.to_us) + " (" +
           HtmlEscape(first_.name) + ") and from " + Seconds(sim_.window_.from_us) + " to " +
           Seconds(sim_.window_.to_us) + " (" + HtmlEscape(second_.name) +
           "). The overview below covers both runs whole.</p>\n";
    }
    o += "<svg id=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + IntText(kSvgWidth) +
         "\" height=\"" + IntText(height_) + "\" data-origin-us=\"" + IntText(from_us_) +
         "\" data-data-from-us=\"" + IntText(from_us_) + "\" data-data-to-us=\"" + IntText(to_us_) +
         "\" data-view-from-us=\"" + IntText(from_us_) + "\" data-view-to-us=\"" + IntText(to_us_) +
         "\" data-min-span-us=\"" + IntText(live_.min_span_us_) + "\" data-unit-us=\"" +
         IntText(live_.unit_us_) + "\" data-plot-x=\"" + IntText(kPlotX) + "\" data-plot-width=\"" +
         IntText(kPlotWidth) + "\" data-end-us=\"" + IntText(live_.axis_end_us_) + "\">\n";
    RunTitle(&o, live_, live_title_y_, "live",
             first_.title + " (" + Seconds(live_.tl_.end_us) + ")");
    live_.LaneBackgrounds(&o);
    RunTitle(&o, sim_, sim_title_y_, "sim", second_.title + " (" + Seconds(sim_.tl_.end_us) + ")");
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
    mark(live_, d.live_invoke_us, d.live_end_us, first_.name + ": " + d.live_side);
    mark(sim_, d.sim_invoke_us, d.sim_end_us, second_.name + ": " + d.sim_side);
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
    o +=
        "<section class=\"panel\"><div class=\"toolbar\"><b>Overview</b> <span class=\"hint\">both "
        "runs whole (" + HtmlEscape(first_.name) + " " + Seconds(live_.tl_.end_us) + ", " +
        HtmlEscape(second_.name) + " " + Seconds(sim_.tl_.end_us) +
        "); shade = share of each pixel column spent holding (blue) or waiting for the lock "
        "(grey); orange/pink ticks: failed/unknown operations; click to move the view</span>"
        "</div>\n";
    live_.OverviewOpen(&o, h);
    OverviewRun(&o, live_, top, live_rows, first_.run,
                c_.divergence ? c_.divergence->live_invoke_us : -1);
    OverviewRun(&o, sim_, sim_title, sim_rows, second_.run,
                c_.divergence ? c_.divergence->sim_invoke_us : -1);
    live_.OverviewClose(&o, h);
  }

  static void OverviewRun(std::string* out, const HtmlWriter& w, int title_y, int rows_y,
                          const std::string& title, int64_t divergence_us) {
    *out += "\n<text class=\"otitle\" x=\"8\" y=\"" + IntText(title_y + 10) + "\">" +
            HtmlEscape(title) + "</text>";
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
  const check::RunLabel& first_;
  const check::RunLabel& second_;
  int64_t from_us_ = 0, to_us_ = 1;
  int64_t divergence_from_ = 0, divergence_to_ = 1;
  int live_title_y_ = 0, sim_title_y_ = 0, height_ = 0;
};

}  // namespace lockstep::reports::html

namespace lockstep::reports {

std::string RenderComparisonHtml(const ComparedRun& live, const ComparedRun& sim,
                                 const check::RunComparison& comparison) {
  assert(live.timeline && live.verdict && live.meta && sim.timeline && sim.verdict && sim.meta);
  return html::ComparisonWriter(live, sim, comparison).Render();
}

}  // namespace lockstep::reports
