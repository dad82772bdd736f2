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
// Size: every file has a stated bound, whatever the history's length (a one-hour, 10-client
// run has about 3 million events). Where detail would exceed it, the report keeps full detail
// in a window around the first violation (or the first fault, or the start of the run) and
// summarises the rest: the HTML overview bins the whole run into pixel columns, trace.json keeps
// only faults, violations and a binned holder count outside the window. The limits below are
// those bounds; each file says when it summarised.
#ifndef LOCKSTEP_REPORTS_REPORT_H_
#define LOCKSTEP_REPORTS_REPORT_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "check/verdict.h"
#include "history/history.h"
#include "model/history.h"
#include "model/scenario.h"
#include "reports/timeline.h"

namespace lockstep::reports {

// Detail elements (bars, ticks, TTL points) in the HTML's zoomable panel. About 120 bytes
// each, so the detail costs at most ~1.5 MB; the overview adds at most ~1 MB.
inline constexpr size_t kHtmlDetailElements = 12'000;
// Trace events kept in full detail. About 150 bytes each: trace.json stays under ~60 MB,
// which Perfetto UI loads in a few seconds.
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
};

// Fills scenario-derived parts of `meta` (name, description, seed, expectations, layout).
void DescribeScenario(const Scenario& scenario, ReportMeta* meta);

// Reads seed and scenario name from the history's "run" note when the meta lacks them.
void DescribeFromHistory(const History& history, ReportMeta* meta);

std::string RenderHtml(const Timeline& timeline, const check::Verdict& verdict,
                       const ReportMeta& meta);
std::string RenderTrace(const Timeline& timeline, const check::Verdict& verdict,
                        const ReportMeta& meta);
std::string RenderSummary(const Timeline& timeline, const check::Verdict& verdict,
                          const ReportMeta& meta);

struct WrittenFile {
  std::string path;
  size_t bytes = 0;
};

// Builds the timeline once and writes report.html, trace.json and summary.md into `dir`
// (which must exist). Returns false and sets *error on an I/O failure.
bool WriteReports(const History& history, const check::Verdict& verdict, const ReportMeta& meta,
                  const std::string& dir, std::vector<WrittenFile>* written, std::string* error);

// The same, reading the run's history file (plain or gzip) once more, event by event: the
// reports are made after the checkers, so they know the verdict (and where to show detail).
bool WriteReportsFromFile(const std::string& history_path, const check::Verdict& verdict,
                          const ReportMeta& meta, const std::string& dir,
                          std::vector<WrittenFile>* written, std::string* error);
// The same for a history in memory.
bool WriteReports(const history::History& history, const check::Verdict& verdict,
                  const ReportMeta& meta, const std::string& dir, std::vector<WrittenFile>* written,
                  std::string* error);

// Reads seed and scenario name from the history file's run note, and the protocol note, when
// the meta lacks them. False (and *error) if the file cannot be read.
bool DescribeFromHistoryFile(const std::string& history_path, ReportMeta* meta, std::string* error);

}  // namespace lockstep::reports

#endif  // LOCKSTEP_REPORTS_REPORT_H_
