// The lease events: after anything that may have changed the lock key on a master (a command,
// its expiry on the node's clock, a restart, a promotion), the key is compared with what was
// last recorded of it, and a change of owners is recorded as acquired, released, expired or
// lost. Only masters are judged; a replica's key is followed by its replicated events.
//
// In the verification mode (sim/verify.h) the watch also holds what a facts pass of the run's
// own events believes of the key against the key, and stops the run at the first difference.
#ifndef LOCKSTEP_SIM_LOCK_WATCH_H_
#define LOCKSTEP_SIM_LOCK_WATCH_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "core/keyspace.h"
#include "history/facts.h"
#include "history/names.h"

namespace lockstep::sim {

struct World;
struct Node;

class LockWatch {
 public:
  explicit LockWatch(World& w) : w_(w) {}

  // Compares the lock key on master n with what was last recorded and records a change of
  // owners (`gone_as`: the op for owners that went without an expiry or a loss to explain
  // them); schedules the check of a held key's expiry on n's clock.
  void Track(Node& n, history::Name gone_as);
  // True when Track would find nothing new on master n at now_ms: the same server has run no
  // write command since Track last looked, the node's clock has not gone back (which could
  // bring an expired key back to life), and a held key has not reached its expiry (a read of
  // it may have deleted it lazily). Most commands of a contended lock are acquire attempts
  // that find it held and write nothing.
  bool Unchanged(const Node& n, int64_t now_ms) const;
  // What Track would find on master n now is what it last recorded (the debug build checks
  // every Unchanged with it).
  bool AsSeen(const Node& n) const;
  // A master that was a replica until now: the old master's owners that it lacks are lost
  // (their holders lost the lock in the failover), and what it holds is acquired.
  void Promoted(Node& r, const std::string& old_owners);
  // A lease event on node n: `op` with the owners it names (none: no detail).
  void RecordLease(const Node& n, history::Name op, const std::string& owners, int64_t local_ms);

  // The verification mode: a facts pass of its own, which the caller feeds the run's events.
  history::FactsPass* StartVerifying(const history::NameTable* names);
  bool verifying() const { return verify_facts_ != nullptr; }
  // What the facts pass believes of the lock key on master n against the key. The first
  // difference stops the run, with both views and `after()`, what came last (called only for
  // a difference).
  void Verify(const Node& n, const std::function<std::string()>& after);
  const std::string& verify_failure() const { return verify_failure_; }

 private:
  // The lock key on node n now, against the owners Track last recorded.
  struct Look {
    const Entry* live = nullptr;  // The key, when it exists and has not expired.
    int64_t now_ms = 0;           // The node's wall clock.
    int64_t expire_ms = kNoExpiry;
    bool same = false;  // Its owners are n.lock_owners (none when it is not live).
  };
  Look LookAt(const Node& n) const;
  // Redis's active expiry of the lock key, at the true time n's clock passes `expire_ms`.
  void ExpireCheck(Node& n, int64_t expire_ms);

  World& w_;
  std::unique_ptr<history::FactsPass> verify_facts_;
  std::string verify_failure_;
};

}  // namespace lockstep::sim

#endif  // LOCKSTEP_SIM_LOCK_WATCH_H_
