// A live node's wall clock: the harness side of the time shim (live/timeshim/).
//
// Redis expires keys, answers TIME and PTTL on its own wall clock, so a scenario's node clock
// faults (offset, drift, jumps; base/clock_spec.h) must move the real server's clock. A
// ServerClock owns a small control file; a redis-server started with Env() in its environment
// preloads lockstep_timeshim, maps the file and reads its CLOCK_REALTIME, gettimeofday and
// time() through it, while its monotonic clocks stay real. The clock can be changed while the
// server runs, without a restart, and the change is seen by every thread of the server at once.
//
// What the file holds is a schedule over real time (CLOCK_REALTIME of this machine): segments,
// each an offset from real time at its start plus a drift from there on (live/timeshim/
// control.h). Apply() writes a whole ClockSpec as such a schedule, so the shim itself makes the
// scheduled jumps at their instants, with no thread of the harness waiting for them. SetOffset,
// Jump and SetDriftPpm change the clock from now on and replace what was left of a schedule.
//
// NTP slewing (ClockSpec::ntp) is made as the simulator's Clock makes it: after the initial
// offset and after each jump, the wall clock runs slew_ppm slower or faster than its drift
// until it is back on the drift-only line.
// Thread-safe; one ServerClock per node, and one node (or one node's successive processes, as
// after a crash and restart) per ServerClock.
#ifndef LOCKSTEP_LIVE_SERVER_CLOCK_H_
#define LOCKSTEP_LIVE_SERVER_CLOCK_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/clock_spec.h"

struct lockstep_timeshim_control;

namespace lockstep {

class ServerClock {
 public:
  // The shim as installed next to this binary (<prefix>/lib/lockstep), else as built with this
  // harness (the lockstep_timeshim target).
  static std::string DefaultShimPath();

  // Creates `dir`/timeshim.control reading plain real time. On failure returns null and puts
  // the reason in *error.
  static std::unique_ptr<ServerClock> Create(const std::string& dir, std::string* error,
                                             const std::string& shim_path = DefaultShimPath());
  ~ServerClock();  // Unmaps and removes the control file; a running server keeps its mapping.
  ServerClock(const ServerClock&) = delete;
  ServerClock& operator=(const ServerClock&) = delete;

  // The variables to set in the server's environment (RedisProcess::Options::env): LD_PRELOAD
  // (the shim first, then any LD_PRELOAD this process has) and the control file's path.
  std::vector<std::pair<std::string, std::string>> Env() const;

  // Empty when Apply can make `spec` real, otherwise why not (for a message before the run).
  static std::string Check(const ClockSpec& spec);
  // Replaces the schedule with `spec`, its true time 0 being real time `zero_real_us` (this
  // machine's CLOCK_REALTIME, microseconds): the node's wall clock reads real time plus
  // spec.offset_us then, runs drift_ppm fast, steps by each jump at zero_real_us + at_us, and
  // with spec.ntp slews back toward the drift-only line. Jumps at or before true time 0 count as
  // part of the initial offset. Returns false with *error set (and the schedule unchanged)
  // when Check(spec) is not empty.
  bool Apply(const ClockSpec& spec, int64_t zero_real_us, std::string* error);

  // From now on: the wall clock is real time + offset_us (keeping the current drift) ...
  void SetOffset(int64_t offset_us);
  // ... steps by by_us (positive: forward) ...
  void Jump(int64_t by_us);
  // ... or runs at 1 + drift_ppm / 1e6 times real time (drift_ppm > -1e6), continuing from
  // what it reads now.
  void SetDriftPpm(double drift_ppm);

  // The node's wall clock at real time real_us, as the shim computes it (microseconds).
  int64_t WallUsAt(int64_t real_us) const;
  // The node's wall clock minus real time, now.
  int64_t OffsetUsNow() const;
  // How many processes have mapped the control file so far (a started server that preloads
  // the shim counts 1 as soon as it first reads its wall clock, before it answers PING).
  uint64_t attached_processes() const;

  const std::string& control_path() const { return path_; }
  const std::string& shim_path() const { return shim_path_; }

  // This machine's CLOCK_REALTIME in microseconds (real time as the shim sees it).
  static int64_t RealNowUs();

 private:
  struct Segment {
    int64_t start_real_ns;
    int64_t offset_ns;
    int64_t drift_ppb;
  };
  ServerClock() = default;
  // Writes segments_ to the file under the sequence lock. Caller holds mu_.
  void Publish();
  // Replaces the schedule with one segment from now on. Caller holds mu_.
  void Restart(int64_t offset_ns, int64_t drift_ppb);
  const Segment& SegmentAt(int64_t real_ns) const;  // Caller holds mu_.
  int64_t WallNsAt(int64_t real_ns) const;           // Caller holds mu_.

  mutable std::mutex mu_;
  std::string path_;
  std::string shim_path_;
  lockstep_timeshim_control* control_ = nullptr;  // The shared mapping.
  std::vector<Segment> segments_;                 // What the file holds; sorted by start.
};

}  // namespace lockstep

#endif  // LOCKSTEP_LIVE_SERVER_CLOCK_H_
