// The verification mode (`lockstep run --verify`, `lockstep fuzz --verify`): a facts pass of its
// own reads the run's events as they are recorded, and after every script execution on a
// master the simulator holds what that facts pass believes of the lock key on the node against
// the node's actual key. The first difference stops the run with both views and the event that
// came last. Every reader of a history (the checkers, the reports) relies on the facts pass's
// view of each node's key; this is what keeps it honest, the way a state checker holds every
// replica's state against a reference after every commit.
//
// Compared: what the key holds as the lease events write it (history/lease_owners.h: a hash's
// owner fields, a string lock's value, a semaphore's count), which is what every reader's view
// of the node (its owners, a semaphore's permits) is made from, and whether the key exists on
// the node's clock. Not compared: the TTL's value and the reentrant counts in a hash's fields,
// of which no reader holds a belief (the pass's counts are the clients'; a node that counts
// otherwise is the reentrancy checker's finding, not the pass's fault: docs/history.md, "The
// verification mode").
#ifndef LOCKSTEP_SIM_VERIFY_H_
#define LOCKSTEP_SIM_VERIFY_H_

#include <cstdint>
#include <string>

#include "core/keyspace.h"
#include "history/facts.h"

namespace lockstep::sim {

// What `facts` believes of `lock` on `node` against the node's key `live` (null: there is none,
// or it has expired on the node's clock, `now_ms`): empty when they agree, else the two views
// in words.
std::string CompareKeyView(const history::FactsPass& facts, history::Name node, history::Name lock,
                           const Entry* live, int64_t now_ms);

}  // namespace lockstep::sim

#endif  // LOCKSTEP_SIM_VERIFY_H_
