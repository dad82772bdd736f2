#include "sim/sentinel.h"

#include <vector>

#include "sim/world.h"

namespace lockstep::sim {

namespace names = history::names;

namespace {
constexpr int64_t kSentinelPeriodUs = 100'000;
}  // namespace

void Sentinel::Start() {
  w_.engine.After(kSentinelPeriodUs, [this] { Tick(); });
}

Node* Sentinel::BestReplica(Node& m) {
  Node* best = nullptr;
  for (int x : m.replicas) {
    Node& r = *w_.nodes[static_cast<size_t>(x)];
    if (!r.up) continue;
    if (best == nullptr || r.offset > best->offset) best = &r;
  }
  return best;
}

void Sentinel::Tick() {
  for (auto& np : w_.nodes) {
    Node& m = *np;
    if (m.master >= 0 || m.replicas.empty()) continue;
    const bool down = !m.up || m.mailbox.paused || w_.network.Blocked(endpoint_, m.endpoint) ||
                      w_.network.Blocked(m.endpoint, endpoint_);
    if (!down) {
      down_since_.erase(m.index);
      continue;
    }
    auto [it, fresh] = down_since_.emplace(m.index, w_.engine.now());
    if (!fresh && w_.engine.now() - it->second >= w_.scenario.sentinel.down_after_us) {
      down_since_.erase(it);
      if (Node* r = BestReplica(m)) {
        drive::RecordFault(w_.faults, names::kSentinel, names::kFailover,
                           history::FailoverFault{m.name, w_.scenario.sentinel.down_after_us});
        Promote(*r, "sentinel");
      }
    }
  }
  w_.engine.After(kSentinelPeriodUs, [this] { Tick(); });
}

void Sentinel::Promote(Node& r, const std::string& why) {
  if (r.master < 0) return;
  Node& old = *w_.nodes[static_cast<size_t>(r.master)];
  drive::RecordFault(w_.faults, r.id, names::kPromote, history::PromoteFault{r.name, why});
  const std::string old_owners = old.lock_owners;
  // r becomes the master of everyone who followed the old master, and of the old master.
  r.master = -1;
  r.server->set_replica(false);
  r.replica_owners.clear();
  std::vector<int> followers;
  for (int x : old.replicas) {
    if (x != r.index) followers.push_back(x);
  }
  followers.push_back(old.index);
  old.replicas.clear();
  old.streams.clear();
  for (int x : followers) {
    Node& f = *w_.nodes[static_cast<size_t>(x)];
    f.master = r.index;
    f.server->set_replica(true);
    w_.servers.Demoted(f);
    f.lock_owners.clear();
    f.lock_expire_ms = kNoExpiry;
    r.replicas.push_back(x);
    if (f.up) w_.servers.FullSync(r, f);  // The old master loses what it had.
  }
  w_.locks.Promoted(r, old_owners);
  // Clients find out later.
  const int new_master = r.index;
  const int old_master = old.index;
  w_.engine.After(w_.scenario.sentinel.client_rediscover_us, [this, new_master, old_master] {
    for (auto& c : w_.clients) {
      for (int& slot : c->slots) {
        if (slot == old_master) slot = new_master;
      }
    }
    history::Event e;
    e.type = history::EventType::kNote;
    e.process = names::kSim;
    e.op = names::kRediscover;
    e.detail = history::RediscoverNote{w_.nodes[static_cast<size_t>(new_master)]->name};
    w_.Record(e);
  });
}

}  // namespace lockstep::sim
