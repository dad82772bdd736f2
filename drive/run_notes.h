// The notes every driver records when its run begins, before any other event, so that a reader
// of the history knows what the run is: the run (its end, seed and scenario), the protocol
// (kind, version, fencing, permits, the nodes it addresses, the fair lock's wait), the slot map
// of a [cluster], and the lease a lock gets without an explicit one (the watchdog timeout).
#ifndef LOCKSTEP_DRIVE_RUN_NOTES_H_
#define LOCKSTEP_DRIVE_RUN_NOTES_H_

#include <cstdint>
#include <functional>
#include <string>

#include "history/event.h"
#include "locks/client/client_program.h"
#include "model/scenario.h"

namespace lockstep::drive {

// Records the opening notes through `record` (which stamps the time and appends).
// protocol_nodes: how many nodes the protocol addresses. cluster_slots: "n1=0-5460 n2=..." for
// a [cluster] (empty: no cluster note), with lock_slot the lock key's hash slot.
// `declarations`: a client program's (the client kind), written into the protocol note.
void RecordRunNotes(const Scenario& scenario, int protocol_nodes, const std::string& cluster_slots,
                    int64_t lock_slot, const std::function<void(history::Event&)>& record,
                    const locks::ClientDeclarations* declarations = nullptr);

}  // namespace lockstep::drive

#endif  // LOCKSTEP_DRIVE_RUN_NOTES_H_
