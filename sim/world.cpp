#include "sim/world.h"

#include <algorithm>
#include <cassert>

#include "drive/named.h"
#include "model/limits.h"

namespace lockstep::sim {

Node* World::FindNode(const std::string& name) const { return drive::FindNamed(nodes, name); }
Client* World::FindClient(const std::string& name) const {
  return drive::FindNamed(clients, name);
}

int World::ClusterRoute(const Argv& argv) const {
  assert(cluster != nullptr);
  const int slot = ClientRouteSlot(argv);
  if (slot < 0) return cluster_nodes.front();
  const int owner = cluster->owner(slot);
  assert(owner >= 0);  // The simulated cluster serves every slot.
  return cluster_nodes[static_cast<size_t>(owner)];
}

int World::SlotOf(const Client& c, int node_index) const {
  if (cluster != nullptr) return 0;  // The cluster is one node to the protocol.
  for (size_t i = 0; i < c.slots.size(); ++i) {
    if (c.slots[i] == node_index) return static_cast<int>(i);
  }
  return 0;
}

std::string World::SlotsOf(const Node& n) const {
  return SlotRangesText(*cluster, n.cluster_node);
}

bool World::Looping() {
  if (engine.events_at_now() <= kMaxEventsPerInstant / 2) return false;
  if (loop_tally_at != engine.now()) {
    loop_tally.clear();
    loop_tally_at = engine.now();
  }
  return true;
}

std::string World::LoopingProcesses() {
  std::vector<std::pair<uint64_t, std::pair<history::Name, int>>> busiest;
  for (const auto& [who, count] : loop_tally) busiest.push_back({count, who});
  std::sort(busiest.begin(), busiest.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::string out;
  for (size_t i = 0; i < busiest.size() && i < 6; ++i) {
    const auto& [count, who] = busiest[i];
    out += (out.empty() ? "" : ", ") + std::string(recorder.names().Str(who.first));
    if (who.second >= 0) out += " thread " + std::to_string(who.second);
    out += " (" + std::to_string(count) + (i == 0 ? " events)" : ")");
  }
  if (busiest.size() > 6) out += ", and " + std::to_string(busiest.size() - 6) + " more";
  return out.empty() ? "no process recorded anything (timers only)" : out;
}

}  // namespace lockstep::sim
