// The checkers as one sink: a History streams through the facts pass into every property's
// checker, event by event, and the Verdict comes out at the end. The simulator's recorder, the
// live driver's, a history file being read, and an in-memory History all feed the same code, so
// a run, a replay's live run and `lockstep report` are judged alike. Memory stays bounded by the
// run's processes, threads, locks and faults, whatever its length.
//
// The properties and their exact rules: each check/<property>.cpp, and docs/history.md.
#ifndef LOCKSTEP_CHECK_CHECK_H_
#define LOCKSTEP_CHECK_CHECK_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "check/property.h"
#include "check/verdict.h"
#include "history/facts.h"
#include "history/history.h"
#include "history/reader.h"

namespace lockstep::check {

class Checker : public history::EventSink {
 public:
  // `names` names the events the checker will receive. options.nodes_hint is for histories
  // whose protocol note lacks nodes= (see history::NodeCountScan).
  Checker(const history::NameTable* names, const CheckOptions& options, int nodes_hint = 0);
  ~Checker() override;

  void OnEvent(const history::Event& e) override { facts_.OnEvent(e); }

  // Ends the run (see FactsPass::Finish) and writes the verdict. Call once.
  Verdict Finish();

  const history::FactsPass& facts() const { return facts_; }
  // Another reader of the same facts, beside the properties (a fuzz search's coverage). Before
  // the first event.
  void AddObserver(history::FactsObserver* observer) { facts_.AddObserver(observer); }

 private:
  CheckOptions options_;
  history::FactsPass facts_;
  std::vector<std::unique_ptr<PropertyChecker>> properties_;
};

// The verdict on an in-memory history.
Verdict CheckHistory(const history::History& history, const CheckOptions& options);

// The verdict on a history file (plain or gzip), read in one streaming pass (two for a
// RedLock/MultiLock history whose protocol note lacks nodes=). nullopt and *error on a read
// error.
// *stats, when given, tells what the last pass read (events, hash, a cut-off last line).
std::optional<Verdict> CheckHistoryFile(const std::string& path, const CheckOptions& options,
                                        std::string* error, history::ReadStats* stats = nullptr);

}  // namespace lockstep::check

#endif  // LOCKSTEP_CHECK_CHECK_H_
