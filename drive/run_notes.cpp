#include "drive/run_notes.h"

#include "history/names.h"

namespace lockstep::drive {

namespace names = history::names;
using history::EventType;

void RecordRunNotes(const Scenario& scenario, int protocol_nodes, const std::string& cluster_slots,
                    int64_t lock_slot, const std::function<void(history::Event&)>& record,
                    const locks::ClientDeclarations* declarations) {
  history::Event run;
  run.type = EventType::kNote;
  run.process = names::kSim;
  run.op = names::kRun;
  run.detail = history::RunNote{scenario.duration_us, scenario.seed, scenario.name};
  record(run);

  history::Event protocol;
  protocol.type = EventType::kNote;
  protocol.process = names::kSim;
  protocol.op = names::kProtocol;
  history::ProtocolNote note;
  note.kind = scenario.protocol.kind->name;
  note.version = history::VersionName(scenario.protocol.version);
  note.fencing = scenario.resource.fencing;
  note.permits = scenario.protocol.permits;
  note.nodes = protocol_nodes;
  note.fair_wait_timeout_us = scenario.protocol.fair_wait_timeout_us;
  if (declarations != nullptr) {
    note.layout = declarations->layout;
    note.unlock = declarations->unlock_reply;
    note.quorum = declarations->quorum;
    note.owner = declarations->owner;
  }
  protocol.detail = note;
  record(protocol);

  if (!cluster_slots.empty()) {
    // The slot map, so that a reader of the history knows which node holds which key.
    history::Event cluster;
    cluster.type = EventType::kNote;
    cluster.process = names::kSim;
    cluster.op = names::kCluster;
    cluster.detail = history::ClusterNote{cluster_slots, lock_slot};
    record(cluster);
  }

  history::Event lease;
  lease.type = EventType::kNote;
  lease.process = names::kSim;
  lease.op = names::kLeaseDefault;
  lease.has_value = true;
  lease.value = scenario.protocol.watchdog_timeout_us;
  record(lease);
}

}  // namespace lockstep::drive
