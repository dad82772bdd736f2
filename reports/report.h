// Reports for design reviews: one run (History + Verdict) as three files.
//
//   report.html  self-contained timeline (inline SVG, CSS and a small zoom/pan script; no
//                network): a lane per client thread (waiting, holding as the client believes,
//                critical section), a lane per Redis node (who the key belongs to, its TTL),
//                fault bands, the believed-holder count, every clock's offset from true time,
//                and the violation highlighted with the checker's explanation.
//   trace.json   Chrome Trace Event format for ui.perfetto.dev and chrome://tracing.
//   summary.md   short enough for a pull request: verdicts, the violation, key figures and a
//                Mermaid sequence diagram of the violation's key events.
//
// Flow: History -> checkers -> Verdict -> reports; reports read both and never reach back. The
// output is a pure function of (history, verdict, meta): no wall clock, no pointer or hash
// order, fixed number formats, so the same history gives byte-identical files.
//
// One pass, bounded memory. The reports are made after the checkers, from the history file read
// once more, event by event, through a facts pass (history/facts.h) with the timeline builder
// (reports/timeline.h) attached: the same facts the checkers judged, none derived twice. A run
// can be an hour of a hundred clients, tens of millions of events; the builder keeps detail only
// in windows and bins the rest, so memory and file sizes stay bounded whatever the length:
//
//   windows   around the start of the run, every violation the Verdict lists (it is known
//             before the pass) and every fault (as the pass meets it): the last quarter of a
//             window's budget before its anchor, the rest after it, everything overlapping it
//             kept with it; windows that touch merge. At most TimelineOptions::max_windows of
//             them (violations first: the lead one, the first of every other violated property,
//             then the rest; the start; faults while slots remain), and kTraceDetailEvents'
//             worth of detail in all (the lead window 3/8 of it).
//   bins      kBins fixed-width time bins over the whole run (inside windows too): time spent
//             holding and waiting per thread, owned per node, the most believed holders per
//             lock, operations started and their outcomes, every clock's offset range.
//
// What each file makes of it:
//   report.html  the zoomable panel: at most kHtmlDetailElements shapes, chosen inside the
//                window around the lead violation (else the first fault, else the start); the
//                overview draws the whole run from the bins, per pixel column, with every
//                window marked.
//   trace.json   every window's detail; outside them faults, violations and counters from the
//                bins (believed holders, operations, skewed clocks). Where a window's share of
//                the budget ran out it says so (an instant, and otherData.detail: the budget,
//                the shares, what was left out), and so does the console (TraceDetailNote).
//   summary.md   a few KB; its diagram's events are kept wherever they are.
//
// Size: every file has a stated bound, whatever the history's length; the limits below are
// those bounds, and each file says when it summarised.
#ifndef LOCKSTEP_REPORTS_REPORT_H_
#define LOCKSTEP_REPORTS_REPORT_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "check/compare.h"
#include "check/verdict.h"
#include "history/history.h"
#include "model/scenario.h"
#include "reports/timeline.h"

namespace lockstep::reports {

// Detail elements (bars, ticks, TTL points) in the HTML's zoomable panel. About 120 bytes
// each, so the detail costs at most ~1.5 MB; the overview adds at most ~1 MB.
inline constexpr size_t kHtmlDetailElements = 12'000;
// Trace events kept in full detail, over all the timeline's windows. About 150 bytes each:
// trace.json stays under ~60 MB, which Perfetto UI loads in a few seconds.
inline constexpr size_t kTraceDetailEvents = 400'000;
// Violations drawn / listed per property.
inline constexpr size_t kViolationsShown = 50;

// What the report says about the run beyond the history itself.
struct ReportMeta {
  std::string scenario_name;  // "gc-pause-explicit-lease"
  std::string description;
  std::string scenario_file;  // As given on the command line, or "" when unknown
  std::optional<uint64_t> seed;
  std::string version;                                          // lockstep's version
  std::vector<std::pair<std::string, std::string>> parameters;  // derived: scripts, clocks ...
  std::string reproduce;                                        // The command that replays the run
  // The scenario's [expect] section, when known (absent properties are not judged).
  std::optional<std::map<std::string, Expectation>> expect;
  TimelineOptions timeline;  // Scenario-derived layout hints and start_unix_ms
  // Where the detail panel is anchored (`lockstep report --detail-at`), instead of the lead
  // violation: the first detail window is kept there, with the lead's share of the budget.
  std::optional<int64_t> detail_at_us;
  // Client thread lanes to draw first (`lockstep report --lanes`): shell patterns over their
  // names ("c7.t0", "c1*"); then the violations' threads, then the rest, while room remains.
  std::vector<std::string> lane_patterns;
};

// Fills scenario-derived parts of `meta` (name, description, seed, expectations, layout).
void DescribeScenario(const Scenario& scenario, ReportMeta* meta);

// Where the timeline keeps detail for this Verdict: meta.timeline plus the violations' anchors
// (the lead one, the first of every other violated property, then the rest as shown), the lead
// violation's events (kept wherever they are), and kTraceDetailEvents as the budget.
TimelineOptions DetailPlan(const check::Verdict& verdict, const ReportMeta& meta);

// The timeline the reports draw, of a history in memory (tests, small tools).
Timeline BuildReportTimeline(const history::History& history, const check::Verdict& verdict,
                             const ReportMeta& meta);

std::string RenderHtml(const Timeline& timeline, const check::Verdict& verdict,
                       const ReportMeta& meta);
std::string RenderTrace(const Timeline& timeline, const check::Verdict& verdict,
                        const ReportMeta& meta);
// The same, written to `out` as it is made (a trace can be tens of MB).
void WriteTrace(const Timeline& timeline, const check::Verdict& verdict, const ReportMeta& meta,
                std::ostream& out);
std::string RenderSummary(const Timeline& timeline, const check::Verdict& verdict,
                          const ReportMeta& meta);

// Where trace.json's full detail stops and why, in a sentence for the console: "full detail
// only from 0.000 s to 83.808 s of 3600.000 s, elsewhere faults, violations and counters only;
// the window's share of the detail budget (150,000 of 400,000 trace events, kTraceDetailEvents)
// was spent; ...". The trace says the same in otherData.detail.note. "" when the trace has the
// whole run in detail.
std::string TraceDetailNote(const Timeline& timeline);

struct WrittenFile {
  std::string path;
  size_t bytes = 0;
  std::string note;  // What the file left out, when it did (trace.json: TraceDetailNote)
};

// How far the reading of a history file has come, for a progress line: a long run's reports
// read tens of millions of events again and take seconds. `report` is called once every
// `every` events (never per event: a std::function call for each would cost more than the
// line is worth), with the events read so far and the true time of the last one. It is told
// nothing else, and what it does changes nothing in the reports.
struct ReadProgress {
  std::function<void(uint64_t events_read, int64_t t_us)> report;  // Empty: no progress
  uint64_t every = 65'536;
};

// Reads the run's history file (plain or gzip) once more, event by event, through a facts pass
// and the timeline builder, and writes report.html, trace.json and summary.md into `dir` (which
// must exist). Returns false and sets *error when the file cannot be read or a report written.
bool WriteReportsFromFile(const std::string& history_path, const check::Verdict& verdict,
                          const ReportMeta& meta, const std::string& dir,
                          std::vector<WrittenFile>* written, std::string* error,
                          const ReadProgress& progress = {});
// The same for a history in memory.
bool WriteReports(const history::History& history, const check::Verdict& verdict,
                  const ReportMeta& meta, const std::string& dir, std::vector<WrittenFile>* written,
                  std::string* error);

// --- two runs in one report: a live replay, a fuzz failure beside its reference ---
//
// `lockstep replay` runs a scenario in the simulator and live, and compares the two
// (check/compare.h). Its report.html shows both runs: the comparison (both verdicts per property,
// the operations' agreement per thread, the first divergence), then both timelines one above
// the other on one time axis, live on top, drawn exactly as a run's report draws one, with the
// diverging operation marked in each at its own time; the overview and the tables have both
// runs too. Its summary.md is the live run's with the comparison added; trace.json is the live
// run's. The simulated run keeps its own reports in DIR/sim.
//
// `lockstep fuzz --reference` makes the same page of a shrunk failure (first, in the live run's
// place) and the same case on its reference (second), as comparison.html beside the failure's
// own reports. Whatever names a run on the page and in the summary comes from the comparison's
// labels (check::RunLabels).

// One run of a comparison, as its report draws it.
struct ComparedRun {
  const Timeline* timeline = nullptr;
  const check::Verdict* verdict = nullptr;
  const ReportMeta* meta = nullptr;
};

std::string RenderComparisonHtml(const ComparedRun& live, const ComparedRun& sim,
                                 const check::RunComparison& comparison);
std::string RenderComparisonSummary(const ComparedRun& live, const ComparedRun& sim,
                                    const check::RunComparison& comparison);

// Reads both runs' history files (as WriteReportsFromFile does) and writes the replay's
// report.html, trace.json (the live run's) and summary.md into `dir`.
bool WriteComparisonReportsFromFiles(const std::string& live_history_path,
                                     const check::Verdict& live_verdict,
                                     const ReportMeta& live_meta,
                                     const std::string& sim_history_path,
                                     const check::Verdict& sim_verdict, const ReportMeta& sim_meta,
                                     const check::RunComparison& comparison,
                                     const std::string& dir, std::vector<WrittenFile>* written,
                                     std::string* error);
// The same page alone, written to `path`: the comparison's first run's history, verdict and
// meta, then its second run's.
bool WriteComparisonHtmlFromFiles(const std::string& first_history_path,
                                  const check::Verdict& first_verdict, const ReportMeta& first_meta,
                                  const std::string& second_history_path,
                                  const check::Verdict& second_verdict,
                                  const ReportMeta& second_meta,
                                  const check::RunComparison& comparison, const std::string& path,
                                  std::string* error);

// Reads seed and scenario name from the history file's run note, and the protocol note, when
// the meta lacks them. False (and *error) if the file cannot be read.
bool DescribeFromHistoryFile(const std::string& history_path, ReportMeta* meta, std::string* error);

}  // namespace lockstep::reports

#endif  // LOCKSTEP_REPORTS_REPORT_H_
