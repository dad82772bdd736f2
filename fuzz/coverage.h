// Coverage of a lock run: the distinct transitions of an abstract state that the history
// already carries, so that a search can say how much ground its cases covered and when it
// last found new ground, instead of only how many cases it ran.
//
// The abstract state, after every event that can change it:
//  - per node (in the order the run names them): the lock key's owners, bucketed: none, one,
//    several (a reentrant count or a TTL is not in the history's lease events);
//  - the client threads' protocol phases, as how many threads are in each (bucketed 0, 1, 2+):
//    thinking, waiting (an acquire invoked), holding (acquired), releasing (a release invoked),
//    unsure (an operation that timed out: info), lost (holding, but a renewal of its hold was
//    refused by the node);
//  - which fault kinds are open (history/fault_kinds.h), as a set.
// A case's coverage is the set of (state before, state after) pairs it went through, each as a
// 64-bit hash; a search's is the union.
#ifndef LOCKSTEP_FUZZ_COVERAGE_H_
#define LOCKSTEP_FUZZ_COVERAGE_H_

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "history/event.h"

namespace lockstep::fuzz {

class CoverageSink : public history::EventSink {
 public:
  void OnEvent(const history::Event& e) override;
  // The transitions seen, sorted, each once.
  std::vector<uint64_t> Transitions() const;

 private:
  enum Phase : uint8_t { kThinking, kWaiting, kHolding, kReleasing, kUnsure, kLost, kPhases };
  uint64_t StateHash() const;

  std::map<std::pair<history::Name, int>, Phase> threads_;  // By (process, thread).
  std::map<history::Name, uint8_t> nodes_;                  // Owner bucket, by node.
  std::vector<int> open_faults_;                            // By fault kind: how many open.
  uint64_t state_ = 0;
  std::vector<uint64_t> transitions_;
};

}  // namespace lockstep::fuzz

#endif  // LOCKSTEP_FUZZ_COVERAGE_H_
