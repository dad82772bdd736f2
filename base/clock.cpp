#include "base/clock.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace lockstep {

Clock::Clock(const ClockSpec& spec, int64_t start_unix_ms)
    : start_unix_us_(start_unix_ms * 1000),
      mono_rate_(1.0 + spec.drift_ppm * 1e-6),
      jumps_(spec.jumps) {
  assert(mono_rate_ > 0);
  std::stable_sort(jumps_.begin(), jumps_.end(),
                   [](const ClockSpec::Jump& a, const ClockSpec::Jump& b) { return a.at_us < b.at_us; });
  const double drift_rate = mono_rate_;
  const double slew = spec.slew_ppm * 1e-6;
  assert(!spec.ntp || slew > 0);

  // "Excess" is how far the wall clock is from where drift alone would have put it. Each
  // step of the walk below emits segments up to the next jump: a slewing segment while the
  // excess is being corrected, then a drift-only segment.
  double excess = static_cast<double>(spec.offset_us);
  TrueTime t = 0;
  auto drift_line = [&](TrueTime at) {
    return static_cast<double>(start_unix_us_) + static_cast<double>(at) * drift_rate;
  };
  size_t next_jump = 0;
  while (true) {
    const TrueTime until = next_jump < jumps_.size() ? jumps_[next_jump].at_us : kNever;
    if (spec.ntp && excess != 0) {
      const double slew_duration = std::abs(excess) / slew;
      const double rate = drift_rate + (excess > 0 ? -slew : slew);
      segments_.push_back({t, drift_line(t) + excess, rate});
      const double end = static_cast<double>(t) + slew_duration;
      if (end < static_cast<double>(until)) {
        const auto end_t = static_cast<TrueTime>(std::ceil(end));
        excess = 0;
        segments_.push_back({end_t, drift_line(end_t), drift_rate});
      } else {
        excess -= (excess > 0 ? 1 : -1) * slew * static_cast<double>(until - t);
      }
    } else {
      segments_.push_back({t, drift_line(t) + excess, drift_rate});
    }
    if (until == kNever) break;
    t = until;
    // Every jump scheduled at this instant applies at once.
    while (next_jump < jumps_.size() && jumps_[next_jump].at_us == t) {
      excess += static_cast<double>(jumps_[next_jump].by_us);
      ++next_jump;
    }
  }
  // Segments that start at the same instant: keep the last (it includes the jump).
  std::vector<Segment> merged;
  for (const Segment& s : segments_) {
    if (!merged.empty() && merged.back().start == s.start) {
      merged.back() = s;
    } else {
      merged.push_back(s);
    }
  }
  segments_ = std::move(merged);
  assert(!segments_.empty() && segments_.front().start == 0);
}

const Clock::Segment& Clock::SegmentAt(TrueTime t) const {
  if (segments_.size() == 1) return segments_[0];  // No jump, no slew: most clocks.
  auto it = std::upper_bound(segments_.begin(), segments_.end(), t,
                             [](TrueTime v, const Segment& s) { return v < s.start; });
  assert(it != segments_.begin());
  return *(it - 1);
}

int64_t Clock::WallUs(TrueTime t) const {
  const Segment& s = SegmentAt(t);
  return static_cast<int64_t>(std::floor(s.wall_us + static_cast<double>(t - s.start) * s.rate));
}

int64_t Clock::MonoUs(TrueTime t) const {
  return static_cast<int64_t>(std::floor(static_cast<double>(t) * mono_rate_));
}

TrueTime Clock::AfterMono(TrueTime now, int64_t mono_delay_us) const {
  assert(mono_delay_us >= 0);
  // A clock without drift, most of them: the division below would give the delay itself
  // (exactly, below 2^53), at the cost of a division on every timer armed.
  if (mono_rate_ == 1.0 && mono_delay_us < (int64_t{1} << 53)) {
    return mono_delay_us >= kNever - now ? kNever : now + mono_delay_us;
  }
  const double d = std::ceil(static_cast<double>(mono_delay_us) / mono_rate_);
  if (d >= static_cast<double>(kNever - now)) return kNever;
  return now + static_cast<TrueTime>(d);
}

TrueTime Clock::FirstTrueTimeWallExceeds(int64_t wall_us, TrueTime from) const {
  if (WallUs(from) > wall_us) return from;
  auto it = std::upper_bound(segments_.begin(), segments_.end(), from,
                             [](TrueTime v, const Segment& s) { return v < s.start; });
  --it;
  for (; it != segments_.end(); ++it) {
    const TrueTime seg_start = std::max(it->start, from);
    const TrueTime seg_end = (it + 1) == segments_.end() ? kNever : (it + 1)->start;
    if (WallUs(seg_start) > wall_us) return seg_start;
    if (it->rate <= 0) continue;
    // Solve wall_us(seg) + (x - start) * rate > wall_us for the smallest integer x, in closed
    // form; past the segment's end the answer is not in this segment.
    const double need = (static_cast<double>(wall_us) + 1 - it->wall_us) / it->rate;
    TrueTime x = seg_end;
    if (need < static_cast<double>(seg_end - it->start)) {
      x = std::max(seg_start, it->start + static_cast<TrueTime>(std::ceil(need)));
    }
    // Floating point leaves x near the exact first microsecond, not on it. Within a segment
    // WallUs never decreases, so the exact one is found by bisection around x, in a number of
    // readings that grows with the log of the error, never one microsecond at a time (a slow
    // segment, a small rate, makes the error large). `lo` reads at most wall_us, `hi` more
    // (seg_end stands for "not in this segment" and is never read).
    if (x >= seg_end) {
      // Not in this segment, unless rounding put the answer just before its end.
      if (seg_end == kNever || WallUs(seg_end - 1) <= wall_us) continue;
      x = seg_end - 1;
    }
    TrueTime lo = seg_start;  // WallUs(seg_start) <= wall_us, checked above.
    TrueTime hi = seg_end;
    if (x > seg_start) {
      // Gallop from x towards the side the answer is on, doubling the step.
      const bool above = WallUs(x) > wall_us;
      TrueTime bound = x;
      for (TrueTime step = 1;; step = step > kNever / 4 ? step : step * 2) {
        if (above) {
          hi = bound;
          if (bound - seg_start <= step) break;
          bound -= step;
          if (WallUs(bound) <= wall_us) {
            lo = bound;
            break;
          }
        } else {
          lo = bound;
          if (seg_end - bound <= step) break;
          bound += step;
          if (WallUs(bound) > wall_us) {
            hi = bound;
            break;
          }
        }
      }
    }
    while (hi - lo > 1) {
      const TrueTime mid = lo + (hi - lo) / 2;
      if (WallUs(mid) > wall_us) {
        hi = mid;
      } else {
        lo = mid;
      }
    }
    if (hi < seg_end) return hi;
  }
  return kNever;
}

}  // namespace lockstep
