// Sentinel: a master that is down, paused or cut off from the sentinel for down_after is
// replaced by its most up-to-date replica; the clients learn of it client_rediscover later;
// the old master comes back as a replica and loses what it had. A scenario's failover fault
// promotes the same way, at once.
#ifndef LOCKSTEP_SIM_SENTINEL_H_
#define LOCKSTEP_SIM_SENTINEL_H_

#include <map>
#include <string>

#include "base/clock_spec.h"

namespace lockstep::sim {

struct World;
struct Node;

class Sentinel {
 public:
  explicit Sentinel(World& w) : w_(w) {}

  // The sentinel's place on the network (its links to the masters can be cut).
  void set_endpoint(int endpoint) { endpoint_ = endpoint; }
  // From now on, looks at every master every period.
  void Start();
  // The replica Sentinel would pick: up, most replicated data, then lowest index.
  Node* BestReplica(Node& m);
  // Makes replica r the master of its master's group (`why`: who asked), recording it.
  void Promote(Node& r, const std::string& why);

 private:
  void Tick();

  World& w_;
  int endpoint_ = -1;
  std::map<int, TrueTime> down_since_;  // When each master was first seen down.
};

}  // namespace lockstep::sim

#endif  // LOCKSTEP_SIM_SENTINEL_H_
