#include "check/check.h"

#include "history/reader.h"

namespace lockstep::check {

namespace {

history::FactsOptions FactsOptionsOf(const CheckOptions& options, int nodes_hint) {
  history::FactsOptions f;
  f.lease_default_us = options.lease_default_us;
  f.fair_wait_timeout_us = options.fair_wait_timeout_us;
  f.max_warnings = options.max_warnings;
  f.nodes_hint = nodes_hint;
  return f;
}

// Whether the history's protocol note leaves a RedLock/MultiLock's node count to be inferred.
class NodeCountNeeded : public history::EventSink {
 public:
  void OnEvent(const history::Event& e) override {
    if (const auto note = history::AsProtocolNote(e)) {
      const history::ProtocolKind* kind = history::FindProtocolKind(note->kind);
      needed_ = kind != nullptr && kind->cls == history::KindClass::kQuorum && note->nodes <= 0;
    }
  }
  bool needed() const { return needed_; }

 private:
  bool needed_ = false;
};

}  // namespace

std::vector<std::unique_ptr<PropertyChecker>> MakePropertyCheckers(const CheckOptions& options) {
  std::vector<std::unique_ptr<PropertyChecker>> all;
  all.push_back(MakeMutualExclusion(options));
  all.push_back(MakeResourceExclusion(options));
  all.push_back(MakeReentrancy(options));
  all.push_back(MakeLeaseSafety(options));
  all.push_back(MakeLiveness(options));
  all.push_back(MakeFairness(options));
  all.push_back(MakeFencing(options));
  all.push_back(MakeRwExclusion(options));
  all.push_back(MakeSemaphore(options));
  all.push_back(MakeLatch(options));
  all.push_back(MakeScriptErrors(options));
  return all;
}

Checker::Checker(const history::NameTable* names, const CheckOptions& options, int nodes_hint)
    : options_(options), facts_(names, FactsOptionsOf(options, nodes_hint)),
      properties_(MakePropertyCheckers(options)) {
  for (auto& p : properties_) facts_.AddObserver(p.get());
}

Checker::~Checker() = default;

Verdict Checker::Finish() {
  facts_.Finish();
  const Narrator narrator(facts_);
  Verdict verdict;
  verdict.run_end_us = facts_.run_end_us();
  verdict.protocol_kind = facts_.protocol().kind;
  verdict.warnings = facts_.warnings();
  verdict.warning_count = facts_.warning_count();
  for (auto& p : properties_) verdict.results.push_back(p->Result(narrator));
  assert(verdict.results.size() == kProperties.size());
  for (size_t i = 0; i < kProperties.size(); ++i) {
    assert(verdict.results[i].property == kProperties[i]);
  }
  return verdict;
}

Verdict CheckHistory(const history::History& history, const CheckOptions& options) {
  history::NodeCountScan scan(&history.names());
  for (const history::Event& e : history.events()) scan.OnEvent(e);
  Checker checker(&history.names(), options, scan.count());
  for (const history::Event& e : history.events()) checker.OnEvent(e);
  return checker.Finish();
}

std::optional<Verdict> CheckHistoryFile(const std::string& path, const CheckOptions& options,
                                        std::string* error, history::ReadStats* read_stats) {
  history::NameTable names;
  history::ReadStats stats;
  // The protocol note comes first: read the notes at the start to learn whether the node count
  // must come from a scan of the whole file.
  NodeCountNeeded peek;
  history::ReadOptions first;
  first.max_events = 64;
  if (!history::ReadHistoryFile(path, &names, &peek, &stats, error, first)) return std::nullopt;
  int nodes_hint = 0;
  if (peek.needed()) {
    history::NodeCountScan scan(&names);
    if (!history::ReadHistoryFile(path, &names, &scan, &stats, error)) return std::nullopt;
    nodes_hint = scan.count();
  }
  Checker checker(&names, options, nodes_hint);
  if (!history::ReadHistoryFile(path, &names, &checker, &stats, error)) return std::nullopt;
  if (read_stats != nullptr) *read_stats = stats;
  return checker.Finish();
}

}  // namespace lockstep::check
