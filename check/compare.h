// Two runs of one scenario side by side: the simulator's and a live replay's.
//
// The live run has real timing, so its events never line up with the simulated ones to the
// microsecond, and neither do its operations' counts: a thread that thinks 100 ms in both runs
// starts its fifth operation at slightly different times, and a retry that the simulator's
// network never needed may happen live. That jitter is expected. What is a finding is a verdict
// that differs: a property that holds in one run and is violated in the other means that the
// emulator, the simulated faults or the live harness do not behave like the other side.
//
// The comparison therefore has three parts: per property, both verdicts; per thread, its
// operations taken in order and their outcomes (ok, fail, info) compared position by
// position; and the first point where they diverge, told with the operation, its times in both
// runs and the last script reply each run's operation got.
//
// The same comparison serves any two runs of one case: `lockstep fuzz --reference` sets a shrunk
// failure beside the same case on its reference. What a comparison calls its runs is in its
// RunLabels; the data keeps the replay's names, `live` for the first run (the one whose folder
// holds the comparison, drawn on top) and `sim` for the second (whose own reports are in a
// folder beside it).
#ifndef LOCKSTEP_CHECK_COMPARE_H_
#define LOCKSTEP_CHECK_COMPARE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "check/verdict.h"
#include "history/event.h"
#include "history/names.h"

namespace lockstep::check {

// The client operations of one run, per thread, in the order each thread ran them. A sink: it
// keeps every operation it sees, so it is meant for the short runs a live replay makes (a few
// thousand operations), not for an hour of simulation.
class OperationLog : public history::EventSink {
 public:
  struct Operation {
    std::string op;              // "acquire", "release", "acquire_read" ...
    int64_t invoke_us = 0;
    int64_t end_us = -1;         // -1: still in flight when the run ended.
    // kOk, kFail, kInfo; kInvoke while it never completed (the process crashed, the run ended).
    history::EventType outcome = history::EventType::kInvoke;
    std::string detail;          // The completion's text ("acquired", "RedisTimeoutException ...").
    std::string last_reply;      // The reply to the last command the operation sent, if any.
    std::string last_reply_node; // Where that command ran.
  };

  explicit OperationLog(const history::NameTable* names) : names_(names) {}
  void OnEvent(const history::Event& e) override;

  // "c1.t0" -> that thread's operations. A restarted process's threads go on in the same list.
  const std::map<std::string, std::vector<Operation>>& threads() const { return threads_; }
  size_t operation_count() const { return count_; }
  // Every promotion of a replica (a failover's outcome), in time order: the node and when.
  const std::vector<std::pair<std::string, int64_t>>& promotions() const { return promotions_; }

 private:
  const history::NameTable* names_;
  std::map<std::string, std::vector<Operation>> threads_;
  size_t count_ = 0;
  std::vector<std::pair<std::string, int64_t>> promotions_;
};

// What a comparison calls one of its runs, in each form its texts use (the replay's live run's
// and simulated run's in parentheses).
struct RunLabel {
  std::string name;      // A column's head, a side of "simulated vs live" ("live", "simulated").
  std::string where;     // After a time, a count or an operation ("5.100 s live", "1 only
                         // simulated").
  std::string run;       // The run as a noun ("live run", "simulated run").
  std::string tag;       // Before its verdict on a row of the text ("live", "sim").
  std::string op_where;  // After an operation in the text's first divergence ("live", "in the
                         // simulator").
  std::string row;       // Its line of the text's first divergence ("live", "simulator").
  std::string time;      // What its length is counted in ("real time", "simulated time").
  std::string title;     // Above its timeline, before its length ("LIVE: real redis-server
                         // processes, real time").
};

// Both runs' labels and what is said of the pair. The page's ids, classes and data attributes
// keep the replay's names whatever the labels (live-, sim-, data-live): they are for scripts and
// tests, not for readers.
struct RunLabels {
  RunLabel first;          // The run whose folder holds the comparison: the replay's live run.
  RunLabel second;         // The other run: the replay's simulated one.
  std::string second_dir;  // Where the second run's own reports are, beside the page ("sim").
  std::string page;        // The page with both runs ("report.html").
  std::string tool;        // The command that made them, in the page's title ("lockstep replay").
  std::string pair;        // The two runs together, after the scenario's name in the page's
                           // heading ("live replay and its simulation").
  std::string agree;       // The sentence for verdicts that agree,
  std::string differ;      // and for verdicts that differ.
  // A live replay's: differing verdicts that come with a failover at another moment are told as
  // Sentinel's timing, not as a finding (RunComparison::harness_timing).
  bool sentinel_timing = false;
};

// The replay's labels: its live run first, its simulated run in sim/.
const RunLabels& ReplayLabels();

struct PropertyComparison {
  std::string property;
  bool applicable = true;
  bool sim_violated = false;
  bool live_violated = false;
  bool differs() const { return applicable && sim_violated != live_violated; }
};

// One thread's operations compared position by position.
struct ThreadComparison {
  std::string thread;  // "c1.t0"
  size_t compared = 0;
  size_t agree = 0;
  size_t sim_only = 0;
  size_t live_only = 0;
};

// The first divergence as data, for a report that marks it on both runs' timelines.
struct Divergence {
  std::string thread;   // "c2.t0"
  size_t position = 0;  // 1-based: the thread's operation #position
  std::string sim_op, live_op;
  int64_t sim_invoke_us = 0, sim_end_us = -1;  // end -1: never completed
  int64_t live_invoke_us = 0, live_end_us = -1;
  std::string sim_side, live_side;  // "ok at 5.002 s, last reply from n1: (nil)"
};

// The n-th promotion of both runs side by side. A live failover that Sentinel makes comes
// later than the simulator's, by a part of Sentinel's timing that no setting scales.
struct PromotionTiming {
  std::string sim_node, live_node;      // Empty: that run has no n-th promotion.
  int64_t sim_us = -1, live_us = -1;
};

struct RunComparison {
  RunLabels labels;  // What its texts, page and summary call the runs.
  std::vector<PropertyComparison> properties;  // kProperties order.
  std::vector<ThreadComparison> threads;       // Every thread either run has, by name.
  bool verdicts_differ = false;
  // Operations compared position by position over the threads both runs have.
  size_t operations_compared = 0;
  size_t operations_agree = 0;
  // Operations only one run got to (its threads ran more iterations, or a thread is missing).
  size_t sim_only = 0;
  size_t live_only = 0;
  // The first position (earliest in either run's time) where the outcomes differ, explained.
  std::optional<std::string> first_divergence;
  std::optional<Divergence> divergence;  // The same, as data.
  std::vector<PromotionTiming> promotions;
  // Set, for labels with sentinel_timing, when the verdicts differ and a failover landed
  // elsewhere in time, or on another node, in the live run than in the simulated one (beyond
  // kPromotionSlackUs): the difference may be the live harness's own timing (Sentinel's), so it
  // is not called a finding. The text names the failover and both times.
  std::optional<std::string> harness_timing;
};

// A live promotion this much later or earlier than the simulated one is its own timing, not
// real-time jitter (a live run's timers are a few ms late at most).
constexpr int64_t kPromotionSlackUs = 100'000;

// `sim` is the second run and `live` the first, as `labels` calls them (by default a replay's).
RunComparison CompareRuns(const Verdict& sim, const OperationLog& sim_ops, const Verdict& live,
                          const OperationLog& live_ops,
                          const RunLabels& labels = ReplayLabels());

// The comparison as the lines `lockstep replay` prints and keeps in its summary, in its labels'
// words (as every text below).
std::string FormatComparison(const RunComparison& c);

// The one sentence on whether the verdicts agree and what a difference means, for the console
// and both reports.
std::string VerdictAgreement(const RunComparison& c);

}  // namespace lockstep::check

#endif  // LOCKSTEP_CHECK_COMPARE_H_
