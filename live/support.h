// What a live replay can make real, and what it refuses before it starts.
//
// The simulator can do things no real network or server can be made to do on demand; a live
// replay refuses a scenario that asks for one of them, with a message per item that says what
// it is and what to change, instead of silently running something else:
//  - duplicated messages (network.duplicate, duplicate faults): TCP delivers each byte once, and
//    a command sent twice on a connection would desynchronise the client's replies;
//  - reordering (network.reorder): one TCP connection delivers in order;
//  - a fault naming "sentinel": the sentinels reach the servers directly, not through the proxy;
//  - a Sentinel scenario at a --time-scale so small that the part of a Sentinel failover that
//    no setting scales (kSentinelFixedDelayMs) is more than half its down_after_ms;
// and, against servers the user runs (`--redis`), everything that needs control of the server
// processes: node crashes, pauses, clock jumps, clock offsets and drift, failovers, replicas,
// Sentinel, cluster mode and persistence settings; and replaced scripts ([protocol.scripts]),
// which could touch keys outside the run's prefix (live/user_servers.h).
#ifndef LOCKSTEP_LIVE_SUPPORT_H_
#define LOCKSTEP_LIVE_SUPPORT_H_

#include <string>
#include <vector>

#include "model/scenario.h"

namespace lockstep::live {

// One message per thing `scenario` asks for that a live replay cannot make real; empty when it
// can run. `own_servers`: lockstep starts the servers (false: the user's, via --redis).
// `time_scale`: the --time-scale `scenario` was scaled by; a Sentinel scenario scaled so far
// that Sentinel's unscalable delay outgrows it is refused, with the smallest scale that works.
std::vector<std::string> LiveRefusals(const Scenario& scenario, bool own_servers,
                                      double time_scale = 1);

}  // namespace lockstep::live

#endif  // LOCKSTEP_LIVE_SUPPORT_H_
