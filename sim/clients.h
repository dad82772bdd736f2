// The client processes' hosting: each runs its lock protocol (locks/, sans-IO) and its
// workload (drive/workload.h) on its own clock and PRNG; its commands go out over the network
// to the node its protocol addresses (in a [cluster], the node serving the key's slot), its
// timers are engine events, and a crash or a pause holds or drops what arrives for it.
#ifndef LOCKSTEP_SIM_CLIENTS_H_
#define LOCKSTEP_SIM_CLIENTS_H_

#include <cstdint>
#include <utility>

#include "sim/engine.h"

namespace lockstep::sim {

struct World;
struct Client;

class ClientHosting {
 public:
  explicit ClientHosting(World& w) : w_(w) {}

  // Makes the process's host (what its workload gets from the simulator).
  void Host(Client& c);
  // Starts (or restarts) a client process. A restarted process is a new RedissonClient with a
  // new UUID, as a real restart would be.
  void Start(Client& c, bool restart);
  void Crash(Client& c);
  // [gc]: pauses drawn from the client's PRNG, one after another.
  void ScheduleGc(Client& c);

  // Work for client c's process as it was at `incarnation`: dropped if the process crashed
  // since, held if it is paused.
  template <typename Work>
  void Receive(Client& c, uint64_t incarnation, Work work);
  // A timer on the client's monotonic clock; dropped if the process crashes meanwhile.
  template <typename Work>
  Engine::EventId Timer(Client& c, int64_t delay_us, Work work);

 private:
  class SimOutbox;
  class SimClientHost;
  World& w_;
};

}  // namespace lockstep::sim

#endif  // LOCKSTEP_SIM_CLIENTS_H_
