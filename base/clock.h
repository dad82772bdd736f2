// Per-process clocks: the model of a process's clock that a driver reads.
//
// True time is the driver's own: microseconds since the run started, the same for everyone
// and visible only to the driver and the checkers. Every node and every client process has
// a clock of its own that relates to true time by a piecewise-linear function, fixed before the
// run from the scenario: an initial offset, a drift (rate error in ppm), scheduled jumps, and
// optional NTP-style slewing that pulls an offset back toward the drift-only line at a bounded
// rate. Because the whole function is known up front, a driver can ask both "what does
// this clock read at true time t" and "when (in true time) will it first read w".
//
// Two readings per clock, as real systems have them:
//  - wall: what gettimeofday()/System.currentTimeMillis() return; jumps and slewing apply.
//    Redis uses it for key expiry and PTTL; the fair lock sends it as "now".
//  - monotonic: what System.nanoTime()/CLOCK_MONOTONIC return; only the drift applies. Client
//    timeouts, waits and the watchdog period run on it.
#ifndef LOCKSTEP_BASE_CLOCK_H_
#define LOCKSTEP_BASE_CLOCK_H_

#include <cstdint>
#include <vector>

#include "base/clock_spec.h"

namespace lockstep {

class Clock {
 public:
  // start_unix_ms: the true wall time at true time 0 (the same for every clock of a run).
  Clock(const ClockSpec& spec, int64_t start_unix_ms);

  // Wall clock reading in microseconds (Unix epoch) at true time t.
  int64_t WallUs(TrueTime t) const;
  int64_t WallMs(TrueTime t) const { return FloorDiv(WallUs(t), 1000); }

  // Monotonic clock reading in microseconds at true time t (0 at true time 0).
  int64_t MonoUs(TrueTime t) const;
  // The true time at which `mono_delay_us` of this clock's monotonic time has elapsed after
  // true time `now` (rounded up, so a timer never fires early by its own clock).
  TrueTime AfterMono(TrueTime now, int64_t mono_delay_us) const;

  // The first true time >= from at which the wall clock reads more than wall_us (Redis deems
  // a key expired when now > when). kNever if that never happens.
  TrueTime FirstTrueTimeWallExceeds(int64_t wall_us, TrueTime from) const;

  // Offset of the wall clock from true wall time at t (for reports and the history).
  int64_t OffsetUs(TrueTime t) const { return WallUs(t) - start_unix_us_ - t; }

  // The times at which the wall clock jumps (for reports).
  const std::vector<ClockSpec::Jump>& jumps() const { return jumps_; }

 private:
  struct Segment {
    TrueTime start;   // True time where the segment starts.
    double wall_us;   // Wall reading at `start`, after any jump at `start`.
    double rate;      // Wall microseconds per true microsecond.
  };
  static int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
  const Segment& SegmentAt(TrueTime t) const;

  int64_t start_unix_us_;
  double mono_rate_;
  std::vector<Segment> segments_;  // Sorted by start; segments_[0].start == 0.
  std::vector<ClockSpec::Jump> jumps_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_BASE_CLOCK_H_
