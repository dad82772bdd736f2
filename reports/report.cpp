#include "reports/report.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>

#include "base/write_file.h"
#include "history/facts.h"
#include "history/handoff.h"
#include "history/jsonl.h"
#include "history/notes.h"
#include "history/reader.h"
#include "reports/text.h"

namespace lockstep::reports {

namespace {

struct NamedWriter {
  const char* name;
  std::function<void(std::ostream&)> write;
  std::string note;  // WrittenFile::note
};

bool WriteFiles(const std::vector<NamedWriter>& files, const std::string& dir,
                std::vector<WrittenFile>* written, std::string* error) {
  for (const auto& [name, write, note] : files) {
    const std::string path = dir + "/" + name;
    size_t bytes = 0;
    if (!WriteFileAtomically(path, write, error, &bytes)) return false;
    if (written) written->push_back({path, bytes, note});
  }
  return true;
}

bool WriteAll(const Timeline& timeline, const check::Verdict& verdict, const ReportMeta& meta,
              const std::string& dir, std::vector<WrittenFile>* written, std::string* error) {
  return WriteFiles(
      {
          {"report.html",
           [&](std::ostream& out) { out << RenderHtml(timeline, verdict, meta); }, ""},
          {"trace.json", [&](std::ostream& out) { WriteTrace(timeline, verdict, meta, out); },
           TraceDetailNote(timeline)},
          {"summary.md",
           [&](std::ostream& out) { out << RenderSummary(timeline, verdict, meta); }, ""},
      },
      dir, written, error);
}

// Hands every event on to `next` and tells `progress` how far it got, every progress.every
// events: a count and a comparison per event, the call itself only that often.
class ProgressSink : public history::EventSink {
 public:
  ProgressSink(history::EventSink* next, const ReadProgress& progress)
      : next_(next), progress_(progress), due_(progress.every) {
    assert(progress_.report && progress_.every > 0);
  }
  void OnEvent(const history::Event& e) override {
    next_->OnEvent(e);
    if (++events_ < due_) return;
    progress_.report(events_, e.t_us);
    due_ += progress_.every;
  }

 private:
  history::EventSink* next_;
  const ReadProgress& progress_;
  uint64_t events_ = 0;
  uint64_t due_;
};

// The timeline of a history file, read once more through a facts pass.
bool TimelineFromFile(const std::string& history_path, const check::Verdict& verdict,
                      const ReportMeta& meta, Timeline* timeline, std::string* error,
                      const ReadProgress& progress = {}) {
  history::NameTable names;
  history::FactsPass pass(&names, history::FactsOptions{});
  TimelineBuilder builder(DetailPlan(verdict, meta));
  pass.AddObserver(&builder);
  history::ReadStats stats;
  // The file is decoded on this thread while the facts pass and the timeline read the events on
  // a thread of their own (history/handoff.h): on a long run the decoding was a sixth of the
  // reports' time, now taken off their path. The progress is counted here, as events are read.
  history::Handoff handoff({&pass});
  std::optional<ProgressSink> counted;
  history::EventSink* sink = &handoff;
  if (progress.report && progress.every > 0) sink = &counted.emplace(&handoff, progress);
  const bool read = history::ReadHistoryFile(history_path, &names, sink, &stats, error);
  handoff.Finish();
  if (!read) return false;
  pass.Finish();
  *timeline = builder.Take();
  timeline->history_hash = history::HashHex(stats.hash);
  return true;
}

// What the notes at the head of a history say about the run, for a report without a scenario.
class HeadNotes : public history::EventSink {
 public:
  explicit HeadNotes(ReportMeta* meta) : meta_(meta) {}

  void OnEvent(const history::Event& e) override {
    // The notes come first in a history; a protocol note says what ran when the scenario's
    // derived parameters are not at hand.
    if (e.type != history::EventType::kNote || e.t_us > 0) head_ = false;
    if (head_ && e.op == history::names::kProtocol) {
      const std::string text = history::DetailText(e);
      const bool known = std::any_of(meta_->parameters.begin(), meta_->parameters.end(),
                                     [](const auto& p) { return p.first == "protocol"; });
      if (!text.empty() && !known) meta_->parameters.emplace_back("protocol", text);
    }
    if (run_seen_) return;
    if (const auto run = history::AsRunNote(e)) {
      run_seen_ = true;
      if (meta_->scenario_name.empty()) meta_->scenario_name = std::string(run->scenario);
      if (!meta_->seed) meta_->seed = run->seed;
    }
  }

 private:
  ReportMeta* meta_;
  bool head_ = true;
  bool run_seen_ = false;
};

}  // namespace

void DescribeScenario(const Scenario& scenario, ReportMeta* meta) {
  meta->scenario_name = scenario.name;
  meta->description = scenario.description;
  meta->seed = scenario.seed;
  meta->expect = scenario.expect;
  TimelineOptions& t = meta->timeline;
  t.node_names.clear();
  t.node_roles.clear();
  t.client_threads.clear();
  for (const NodeSpec& n : scenario.nodes) {
    t.node_names.push_back(n.name);
    t.node_roles.push_back(n.replica_of.empty() ? "master" : "replica of " + n.replica_of);
  }
  for (const ClientSpec& c : scenario.clients) t.client_threads.emplace_back(c.name, c.threads);
  t.start_unix_ms = scenario.start_unix_ms;
}

TimelineOptions DetailPlan(const check::Verdict& verdict, const ReportMeta& meta) {
  TimelineOptions options = meta.timeline;
  options.violation_anchors_us.clear();
  options.pinned_seqs.clear();
  options.detail_budget = kTraceDetailEvents;
  if (meta.detail_at_us) options.violation_anchors_us.push_back(*meta.detail_at_us);
  const check::Violation* lead = LeadViolation(verdict);
  if (lead != nullptr) {
    options.violation_anchors_us.push_back(lead->from_us);
    options.pinned_seqs = lead->events;
  }
  for (const check::PropertyResult& r : verdict.results) {
    if (r.violated && !r.violations.empty() && &r.violations.front() != lead) {
      options.violation_anchors_us.push_back(r.violations.front().from_us);
    }
  }
  for (const ShownViolation& s : ShownViolations(verdict, kViolationsShown)) {
    options.violation_anchors_us.push_back(s.violation->from_us);
  }
  return options;
}

Timeline BuildReportTimeline(const history::History& history, const check::Verdict& verdict,
                             const ReportMeta& meta) {
  return BuildTimeline(history, DetailPlan(verdict, meta));
}

bool WriteReportsFromFile(const std::string& history_path, const check::Verdict& verdict,
                          const ReportMeta& meta, const std::string& dir,
                          std::vector<WrittenFile>* written, std::string* error,
                          const ReadProgress& progress) {
  Timeline timeline;
  if (!TimelineFromFile(history_path, verdict, meta, &timeline, error, progress)) return false;
  return WriteAll(timeline, verdict, meta, dir, written, error);
}

bool WriteComparisonReportsFromFiles(const std::string& live_history_path,
                                     const check::Verdict& live_verdict,
                                     const ReportMeta& live_meta,
                                     const std::string& sim_history_path,
                                     const check::Verdict& sim_verdict, const ReportMeta& sim_meta,
                                     const check::RunComparison& comparison,
                                     const std::string& dir, std::vector<WrittenFile>* written,
                                     std::string* error) {
  Timeline live, sim;
  if (!TimelineFromFile(live_history_path, live_verdict, live_meta, &live, error)) return false;
  if (!TimelineFromFile(sim_history_path, sim_verdict, sim_meta, &sim, error)) return false;
  const ComparedRun live_run{&live, &live_verdict, &live_meta};
  const ComparedRun sim_run{&sim, &sim_verdict, &sim_meta};
  return WriteFiles(
      {
          {"report.html",
           [&](std::ostream& out) { out << RenderComparisonHtml(live_run, sim_run, comparison); },
           ""},
          {"trace.json",
           [&](std::ostream& out) { WriteTrace(live, live_verdict, live_meta, out); },
           TraceDetailNote(live)},
          {"summary.md",
           [&](std::ostream& out) {
             out << RenderComparisonSummary(live_run, sim_run, comparison);
           },
           ""},
      },
      dir, written, error);
}

bool WriteComparisonHtmlFromFiles(const std::string& first_history_path,
                                  const check::Verdict& first_verdict, const ReportMeta& first_meta,
                                  const std::string& second_history_path,
                                  const check::Verdict& second_verdict,
                                  const ReportMeta& second_meta,
                                  const check::RunComparison& comparison, const std::string& path,
                                  std::string* error) {
  Timeline first, second;
  if (!TimelineFromFile(first_history_path, first_verdict, first_meta, &first, error)) {
    return false;
  }
  if (!TimelineFromFile(second_history_path, second_verdict, second_meta, &second, error)) {
    return false;
  }
  const ComparedRun first_run{&first, &first_verdict, &first_meta};
  const ComparedRun second_run{&second, &second_verdict, &second_meta};
  return WriteFileAtomically(
      path,
      [&](std::ostream& out) { out << RenderComparisonHtml(first_run, second_run, comparison); },
      error);
}

bool WriteReports(const history::History& history, const check::Verdict& verdict,
                  const ReportMeta& meta, const std::string& dir, std::vector<WrittenFile>* written,
                  std::string* error) {
  return WriteAll(BuildReportTimeline(history, verdict, meta), verdict, meta, dir, written, error);
}

bool DescribeFromHistoryFile(const std::string& history_path, ReportMeta* meta, std::string* error) {
  history::NameTable names;
  HeadNotes notes(meta);
  history::ReadStats stats;
  history::ReadOptions first;
  first.max_events = 64;
  return history::ReadHistoryFile(history_path, &names, &notes, &stats, error, first);
}

}  // namespace lockstep::reports
