#include "sim/network.h"

namespace lockstep::sim {

int Network::AddEndpoint(const std::string& name) {
  return endpoints_.emplace(name, static_cast<int>(endpoints_.size())).first->second;
}

void Network::Connect() {
  const size_t count = endpoints_.size();
  link_latency_.assign(count * count, &spec_.latency_us);
  last_arrival_.assign(count * count, 0);
  for (const auto& [from, from_endpoint] : endpoints_) {
    for (const auto& [to, to_endpoint] : endpoints_) {
      const auto it = spec_.link_latency_us.find(from + "->" + to);
      if (it != spec_.link_latency_us.end()) {
        link_latency_[Link(from_endpoint, to_endpoint)] = &it->second;
      }
    }
  }
}

std::vector<bool> Network::Side(const std::vector<std::string>& names) const {
  std::vector<bool> side(endpoints_.size(), false);
  for (const std::string& name : names) {
    if (auto it = endpoints_.find(name); it != endpoints_.end()) {
      side[static_cast<size_t>(it->second)] = true;
    }
  }
  return side;
}

bool Network::Blocked(int from, int to) const {
  const auto f = static_cast<size_t>(from), t = static_cast<size_t>(to);
  for (const Partition& p : partitions_) {
    if (!p.active) continue;
    if (p.a[f] && p.b[t]) return true;
    if (!p.one_way && p.b[f] && p.a[t]) return true;
  }
  return false;
}

bool Network::Applies(const Window& w, int from, int to) const {
  const auto f = static_cast<size_t>(from), t = static_cast<size_t>(to);
  if (!w.active) return false;
  if (w.every_peer) return w.a[f] || w.a[t];
  return (w.a[f] && w.b[t]) || (w.b[f] && w.a[t]);
}

int64_t Network::Latency(int from, int to) {
  // At least a microsecond: a reply never arrives at the instant it was asked for, or a
  // client that retries "at once" (PTTL 0) would spin without time moving.
  return std::max<int64_t>(1, link_latency_[Link(from, to)]->Sample(rng_));
}

uint64_t Network::OpenPartition(const FaultSpec& f) {
  Partition p;
  p.a = Side(f.targets);
  p.b = Side(f.peers);
  p.one_way = f.one_way;
  p.active = true;
  partitions_.push_back(std::move(p));
  return partitions_.size() - 1;
}

void Network::ClosePartition(uint64_t handle) { partitions_[handle].active = false; }

uint64_t Network::OpenWindow(const FaultSpec& f) {
  using K = FaultSpec::Kind;
  assert(f.kind == K::kLatency || f.kind == K::kLoss || f.kind == K::kDuplicate);
  Window w;
  w.kind = f.kind;
  w.a = Side(f.targets);
  w.b = Side(f.peers);
  w.every_peer = f.peers.empty();
  w.extra_us = f.kind == K::kLatency ? f.extra_us : 0;
  w.rate = f.kind == K::kLatency ? 0 : f.rate;
  assert(w.extra_us >= 0 && w.rate >= 0 && w.rate <= 1);
  w.active = true;
  windows_.push_back(std::move(w));
  ++windows_active_;
  return windows_.size() - 1;
}

void Network::CloseWindow(uint64_t handle) {
  assert(windows_[handle].active && windows_active_ > 0);
  windows_[handle].active = false;
  --windows_active_;
}

}  // namespace lockstep::sim
