// Coverage of a lock run: the distinct transitions of an abstract state that the history
// already carries, so that a search can say how much ground its cases covered and when it
// last found new ground, and steer toward cases that reach new ground (fuzz/search.h).
//
// The abstract state, after every event that changes it:
//  - the client threads' protocol phases, as how many threads are in each (bucketed 0, 1, 2+):
//    thinking, waiting (an acquire invoked), holding (acquired), releasing (a release
//    invoked), unsure (an operation that timed out: info), lost (holding, but a renewal of its
//    hold was refused by the node);
//  - per node that holds the lock's key (in the order the run's lease events name them), each
//    bucketed 0, 1, 2+: the key's owners; the stale believers, threads that believe they hold
//    the lock but have no field on that node (a hold that expired under its holder, or was
//    taken away); and the unbelieved owners, threads with a field there that do not believe
//    they hold (a grant whose reply is still on its way or was lost, a release that did not
//    take effect);
//  - which fault kinds are open (history/fault_kinds.h), as a set.
// The stale and unbelieved counts are what distinguishes a run that came near a broken lock
// from one that did not: a bug in a release or a renewal shows only after one of them.
//
// A case's coverage is the set of (state before, state after) pairs it went through, each as a
// 64-bit hash; a search's is the union. It is computed from the facts pass's facts, beside
// the checkers (PipelineOptions::facts_observers).
#ifndef LOCKSTEP_FUZZ_COVERAGE_H_
#define LOCKSTEP_FUZZ_COVERAGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "history/facts.h"

namespace lockstep::fuzz {

class Coverage : public history::FactsObserver {
 public:
  // `keep_states`: also keep each distinct state in words (StatesText), for tests.
  explicit Coverage(bool keep_states = false) : keep_states_(keep_states) {}

  bool WantsEvents() const override { return true; }
  void OnOpInvoked(const history::FactsPass& f, const history::Op& op) override;
  void OnOpEnded(const history::FactsPass& f, const history::Op& op) override;
  void OnSpanStarted(const history::FactsPass& f, const history::Span& s) override;
  void OnSpanEnded(const history::FactsPass& f, const history::Span& s) override;
  void OnLease(const history::FactsPass& f, const history::LeaseFact& l) override;
  void OnEventDone(const history::FactsPass& f, const history::Event& e) override;

  // The transitions seen, sorted, each once.
  std::vector<uint64_t> Transitions() const;
  // With keep_states: every distinct state reached, in words, in the order first reached.
  const std::vector<std::string>& StatesText() const { return states_text_; }

 private:
  enum Phase : uint8_t { kThinking, kWaiting, kHolding, kReleasing, kUnsure, kLost, kPhases };
  struct ThreadState {
    Phase phase = kThinking;
    int beliefs = 0;  // Open beliefs (per lock and side).
  };
  struct NodeState {
    int node = history::kNone;
    std::vector<int> owners;  // Threads with a field in the key, sorted.
    int foreign = 0;          // Fields of no known thread (a dead incarnation's, say).
  };

  ThreadState& Thread(int t);
  NodeState& Node(int node);
  uint64_t StateHash(std::string* text) const;

  bool keep_states_;
  std::vector<ThreadState> threads_;  // By the facts pass's thread id.
  std::vector<NodeState> nodes_;      // In the order first named.
  std::vector<int> open_faults_;      // By fault kind: how many open.
  bool dirty_ = false;
  uint64_t state_ = 0;
  std::vector<uint64_t> transitions_;
  std::vector<uint64_t> states_seen_;
  std::vector<std::string> states_text_;
};

}  // namespace lockstep::fuzz

#endif  // LOCKSTEP_FUZZ_COVERAGE_H_
