// What a paused process will do when it resumes. A process (a node or a client) that is
// paused (a GC pause, SIGSTOP) does nothing; what arrives for it waits in its mailbox and runs,
// in redis-server's order, when it resumes.
#ifndef LOCKSTEP_SIM_MAILBOX_H_
#define LOCKSTEP_SIM_MAILBOX_H_

#include <algorithm>
#include <cstddef>
#include <deque>
#include <map>
#include <utility>

#include "sim/callback.h"

namespace lockstep::sim {

// Each piece of held work names where it came from: a client process has one source (its work
// runs in arrival order); a node has one per connection and its own (see Resume).
struct Mailbox {
  // A node's own work (active expiry), which redis-server does after its connections' input.
  static constexpr int kOwnWork = -1;
  // A replica's stream from its master (one connection).
  static constexpr int kReplicationSource = -2;
  struct Held {
    int source = 0;
    Callback work;
  };
  bool paused = false;
  std::deque<Held> held;
};

// Runs `work` now, or holds it until the process resumes; `source` is where it came from.
template <typename Work>
void Deliver(Mailbox& box, Work work, int source = 0) {
  if (box.paused) {
    box.held.push_back(Mailbox::Held{source, Callback(std::move(work))});
    return;
  }
  work();
}

// Runs what was held, source by source: each source's work in arrival order, the sources in
// the order their first work arrived, the process's own work (kOwnWork) last. That is how a
// redis-server resumes after SIGSTOP: epoll reports its connections in the order they became
// readable, it runs every command buffered on one connection before it reads the next
// (processInputBuffer), and its timers (active expiry) come after the file events. A client
// process has one source, so its work runs in arrival order.
inline void Resume(Mailbox& box) {
  box.paused = false;
  std::map<int, size_t> rank;  // Source -> the order its first work arrived.
  for (const Mailbox::Held& h : box.held) {
    rank.emplace(h.source, h.source == Mailbox::kOwnWork ? SIZE_MAX : rank.size());
  }
  std::stable_sort(box.held.begin(), box.held.end(),
                   [&rank](const Mailbox::Held& a, const Mailbox::Held& b) {
                     return rank.at(a.source) < rank.at(b.source);
                   });
  // Work delivered while resuming may pause again (a new GC pause): stop there.
  while (!box.held.empty() && !box.paused) {
    Callback work = std::move(box.held.front().work);
    box.held.pop_front();
    work();
  }
}

}  // namespace lockstep::sim

#endif  // LOCKSTEP_SIM_MAILBOX_H_
