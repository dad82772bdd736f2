// Time as lockstep speaks of it, and how a process's clock is declared.
//
// True time is microseconds since the run started, the same for every process and seen only by
// the driver and the checkers. A process's own clock relates to it as a ClockSpec says (an
// offset, a drift, scheduled jumps, optional NTP slewing); Clock (base/clock.h) turns a spec
// into readings. The spec is plain data so that the scenario (model/) can hold it
// without knowing the simulator.
#ifndef LOCKSTEP_BASE_CLOCK_SPEC_H_
#define LOCKSTEP_BASE_CLOCK_SPEC_H_

#include <cstdint>
#include <limits>
#include <vector>

namespace lockstep {

using TrueTime = int64_t;  // Microseconds since the start of the run.
inline constexpr TrueTime kNever = std::numeric_limits<int64_t>::max();

struct ClockSpec {
  struct Jump {
    TrueTime at_us = 0;
    int64_t by_us = 0;  // Positive: forward; negative: back.

    bool operator==(const Jump&) const = default;
  };
  int64_t offset_us = 0;    // Wall clock minus true wall time at the start.
  double drift_ppm = 0;     // The clock runs (1 + drift_ppm / 1e6) times as fast as true time.
  std::vector<Jump> jumps;  // In any order; applied in time order.
  bool ntp = false;         // Slew offsets (initial and jumps) back toward the drift line.
  double slew_ppm = 500;    // Linux's maximum slew rate.

  bool operator==(const ClockSpec&) const = default;
};

}  // namespace lockstep

#endif  // LOCKSTEP_BASE_CLOCK_SPEC_H_
