/* The control file shared by the harness (live/server_clock.cpp, the only writer) and the time
 * shim preloaded into a redis-server (live/timeshim/timeshim.c, a reader): a schedule of
 * segments that turns the host's real CLOCK_REALTIME into the node's wall clock.
 *
 * For a real time r (nanoseconds since the Unix epoch), the segment in force is the last one
 * whose start_real_ns <= r (the first segment also covers every r before its start), and
 *
 *     wall(r) = r + offset_ns + (r - start_real_ns) * drift_ppb / 1e9
 *
 * so a segment is an offset at its start and a rate error (drift) from there on; a jump is a
 * new segment whose offset differs from where the previous one had got to.
 *
 * The writer updates the segments under a sequence lock: `seq` is odd while an update is under
 * way, and a reader whose copy straddled an update (seq changed or odd) reads again. Every field
 * is a naturally aligned 64-bit integer accessed atomically (lock-free, hence usable across
 * processes through a shared mapping). The file is written whole and renamed into place, so a
 * reader never maps a half-made one. C, so that the shim needs no C++ runtime. */
#ifndef LOCKSTEP_LIVE_TIMESHIM_CONTROL_H_
#define LOCKSTEP_LIVE_TIMESHIM_CONTROL_H_

#include <stdint.h>

#define LOCKSTEP_TIMESHIM_ENV "LOCKSTEP_TIMESHIM_CONTROL" /* The control file's path. */
#define LOCKSTEP_TIMESHIM_MAGIC UINT64_C(0x31534b434f4c5453)  /* "STLOCKS1" little-endian. */
#define LOCKSTEP_TIMESHIM_MAX_SEGMENTS 64

struct lockstep_timeshim_segment {
  int64_t start_real_ns;
  int64_t offset_ns;
  int64_t drift_ppb; /* Parts per billion; > -1e9, so the wall clock never runs backwards. */
};

struct lockstep_timeshim_control {
  uint64_t magic;          /* LOCKSTEP_TIMESHIM_MAGIC; checked before anything else is read. */
  uint64_t size;           /* sizeof(struct lockstep_timeshim_control), as a version check. */
  uint64_t seq;            /* The sequence lock: even when stable. */
  uint64_t attached;       /* Incremented by every process that maps the file (diagnostics). */
  uint64_t segment_count;  /* 1..LOCKSTEP_TIMESHIM_MAX_SEGMENTS. */
  struct lockstep_timeshim_segment segments[LOCKSTEP_TIMESHIM_MAX_SEGMENTS]; /* By start. */
};

#endif /* LOCKSTEP_LIVE_TIMESHIM_CONTROL_H_ */
