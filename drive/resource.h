// The protected resource: what every critical section of a run writes to.
//
// One Resource per run, shared by all the clients' workloads (drive/workload.h). A thread that
// holds the lock enters it, stays for its critical section, and leaves it with a write. The
// resource records nothing itself: it fills the `resource` events (op enter / exit) that the
// workload records through its host, so that the checkers see every stay in the history
// (resource exclusion: two stays that overlap in true time; fencing: a write the resource
// took although an older token came after a newer one).
//
// With fencing on (the scenario's [resource] fencing), the resource remembers the newest
// fencing token it has taken and refuses a write whose token is older: that is the promise a
// fenced lock makes, and what the exit event's detail says ("accepted", or "rejected: stale
// token 7 < 9"). Without a token (every kind but the fenced lock) a write is always taken and
// the exit event has no detail.
//
// Not thread-safe: a driver calls it from one thread at a time, in the order in which it
// records the events (the simulator: in event order; a live driver: under the lock that
// serialises its recorder), so that the token the history shows is the one the decision saw.
#ifndef LOCKSTEP_DRIVE_RESOURCE_H_
#define LOCKSTEP_DRIVE_RESOURCE_H_

#include <cstdint>
#include <optional>

#include "history/event.h"

namespace lockstep::drive {

class Resource {
 public:
  // `lock`: the run's lock name as the run's name table knows it (every event names it).
  // `fencing`: refuse writes with stale tokens (Scenario::resource.fencing).
  Resource(history::Name lock, bool fencing) : lock_(lock), fencing_(fencing) {}

  // The event of `thread` of `process` entering the resource at its wall clock `local_ms`:
  // with the thread's fencing token as the value when it has one, and the read side noted
  // for a read-write lock's readers. Changes nothing: entering is not a write.
  history::Event Enter(history::Name process, int thread, int64_t local_ms, bool read,
                       std::optional<int64_t> token) const;

  // The write at the end of the critical section, and the event of leaving the resource.
  // With fencing, a token older than the newest taken is refused (the detail says so) and a
  // newer or equal one becomes the newest; without fencing, or without a token, the write is
  // taken and the event has no detail.
  history::Event Exit(history::Name process, int thread, int64_t local_ms,
                      std::optional<int64_t> token);

  history::Name lock() const { return lock_; }
  bool fencing() const { return fencing_; }
  // The newest fencing token taken so far (0 before the first).
  int64_t token_max() const { return token_max_; }

 private:
  history::Name lock_;
  bool fencing_;
  int64_t token_max_ = 0;
};

}  // namespace lockstep::drive

#endif  // LOCKSTEP_DRIVE_RESOURCE_H_
