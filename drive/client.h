// A client process as every driver sets it up from the scenario: its UUID, its Redisson
// configuration, and the words the derived parameters use for its workload.
//
// A driver starts a client process (and each restart of it) like this:
//   uuid = NewClientUuid(rng)                 (once at setup; again on every restart)
//   protocol = locks::MakeProtocol(kind, ClientConfigFor(scenario, client, uuid), scripts, &error)
//   outbox = the driver's own locks::Outbox for this process
//   workload.Start(*protocol, *outbox, uuid, restart)   (drive/workload.h)
#ifndef LOCKSTEP_DRIVE_CLIENT_H_
#define LOCKSTEP_DRIVE_CLIENT_H_

#include <cstdint>
#include <string>

#include "base/random.h"
#include "locks/protocol.h"
#include "model/scenario.h"

namespace lockstep::drive {

// A random (version 4) UUID drawn from the client process's PRNG, as Redisson's
// ServiceManager.getId() makes one per RedissonClient: a restarted process is a new client
// with a new UUID. Draws two numbers.
std::string NewClientUuid(Prng& rng);

// The Redisson configuration of client `client` (an index into scenario.clients) with `uuid`.
locks::ClientConfig ClientConfigFor(const Scenario& scenario, int client, const std::string& uuid);

// Whether the scenario's Redisson version takes any lease but -1 as given (before 3.17.1;
// locks::ApiValueGiven).
bool LeaseRuleBefore3_17_1(const ProtocolSpec& protocol);

// The derived parameters' words for a lease as the client takes it: "none (watchdog 30000ms)",
// "5000ms", or "1500.5ms (the scripts get toMillis: 1500 ms)".
std::string LeaseText(const ProtocolSpec& protocol, int64_t lease_us);

// ", own workload: side read, lease 500ms" for a client whose group sets its own workload
// fields; empty when it sets none.
std::string OwnWorkloadText(const ProtocolSpec& protocol, const WorkloadOverride& own);

}  // namespace lockstep::drive

#endif  // LOCKSTEP_DRIVE_CLIENT_H_
