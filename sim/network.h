// The simulated network: every process is an endpoint, every ordered pair of endpoints a link
// with its latency distribution; a message is lost, duplicated, delayed or cut off by a
// partition as the scenario's [network] and its network faults say. FIFO per link unless
// reordering is on (TCP never lets a message overtake an earlier one on a connection).
#ifndef LOCKSTEP_SIM_NETWORK_H_
#define LOCKSTEP_SIM_NETWORK_H_

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/random.h"
#include "model/scenario.h"
#include "sim/engine.h"

namespace lockstep::sim {

class Network {
 public:
  // Messages are timed on `engine` and drawn from `rng`, as `spec` says.
  Network(const NetworkSpec& spec, Engine& engine, Prng& rng)
      : spec_(spec), engine_(engine), rng_(rng) {}

  // Gives `name` its endpoint (the next number; a name added again keeps its first). A
  // message's link is then an index into the network's tables, never a lookup by name.
  int AddEndpoint(const std::string& name);
  // After the last AddEndpoint: gives every link its latency distribution.
  void Connect();

  // Whether a partition cuts what `from` sends to `to` now.
  bool Blocked(int from, int to) const;

  // Delivers `deliver` at endpoint `to` after the link's latency, unless the message is lost
  // or a partition cuts the link when it is sent or when it arrives. `deliver` is a closure
  // that owns the message; a duplicated message is delivered by a copy of it.
  //
  // A network window open when the message is sent adds its latency, or drops or duplicates
  // it with its rate. Windows draw from the PRNG only for the messages they apply to, so that
  // a scenario without them draws exactly what it drew before they existed.
  template <typename Deliver>
  void Send(int from, int to, Deliver deliver);

  // A partition (targets: side A, peers: side B, one way or both) and a latency, loss or
  // duplicate window on the targets' links, open until closed by the handle returned.
  uint64_t OpenPartition(const FaultSpec& f);
  void ClosePartition(uint64_t handle);
  uint64_t OpenWindow(const FaultSpec& f);
  void CloseWindow(uint64_t handle);

 private:
  struct Partition {
    std::vector<bool> a, b;  // By endpoint: which side each process is on, if any.
    bool one_way = false;
    bool active = false;
  };
  // While a window is active it applies to every message sent on a link with one end in `a`
  // and, unless `every_peer`, the other end in `b`.
  struct Window {
    FaultSpec::Kind kind = FaultSpec::Kind::kLatency;
    std::vector<bool> a, b;  // By endpoint: the targets, the peers.
    bool every_peer = true;  // No peers given: every link of a target.
    int64_t extra_us = 0;    // kLatency
    double rate = 0;         // kLoss, kDuplicate
    bool active = false;
  };

  size_t Link(int from, int to) const {
    return static_cast<size_t>(from) * endpoints_.size() + static_cast<size_t>(to);
  }
  // The endpoints of the names listed, as a side. A name that is no endpoint can never be the
  // end of a message, so it is left out.
  std::vector<bool> Side(const std::vector<std::string>& names) const;
  bool Applies(const Window& w, int from, int to) const;
  int64_t Latency(int from, int to);
  template <typename Deliver>
  void Arrive(TrueTime at, int from, int to, Deliver deliver);

  const NetworkSpec& spec_;
  Engine& engine_;
  Prng& rng_;
  std::map<std::string, int, std::less<>> endpoints_;
  std::vector<const Distribution*> link_latency_;  // By Link(): an override or the default.
  std::vector<TrueTime> last_arrival_;             // By Link(): FIFO per link.
  std::vector<Partition> partitions_;
  std::vector<Window> windows_;
  int windows_active_ = 0;  // Send looks at the windows only while one is active.
};

template <typename Deliver>
void Network::Send(int from, int to, Deliver deliver) {
  if (Blocked(from, to)) return;
  if (rng_.Bernoulli(spec_.loss)) return;
  bool duplicated = rng_.Bernoulli(spec_.duplicate);
  int64_t extra_us = 0;
  if (windows_active_ > 0) {
    for (const Window& w : windows_) {
      if (!Applies(w, from, to)) continue;
      switch (w.kind) {
        case FaultSpec::Kind::kLatency: extra_us += w.extra_us; break;
        case FaultSpec::Kind::kLoss:
          if (rng_.Bernoulli(w.rate)) return;
          break;
        case FaultSpec::Kind::kDuplicate:
          if (rng_.Bernoulli(w.rate)) duplicated = true;
          break;
        default: assert(false && "only network faults make windows");
      }
    }
  }
  assert(extra_us >= 0);
  const int copies = duplicated ? 2 : 1;
  for (int i = 0; i < copies; ++i) {
    TrueTime at = engine_.now() + Latency(from, to) + extra_us;
    if (!spec_.reorder) {
      // TCP: a connection delivers in order, so a message never overtakes an earlier one.
      TrueTime& last = last_arrival_[Link(from, to)];
      at = std::max(at, last);
      last = at;
    }
    if (i + 1 < copies) {
      Arrive(at, from, to, Deliver(deliver));
    } else {
      Arrive(at, from, to, std::move(deliver));
    }
  }
}

template <typename Deliver>
void Network::Arrive(TrueTime at, int from, int to, Deliver deliver) {
  engine_.At(at, [this, from, to, deliver = std::move(deliver)]() mutable {
    if (Blocked(from, to)) return;
    deliver();
  });
}

}  // namespace lockstep::sim

#endif  // LOCKSTEP_SIM_NETWORK_H_
