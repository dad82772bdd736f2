// Establishes that per-process clocks read what the scenario says they read: offsets, drift,
// jumps forward and back, NTP slewing, and the inverse queries a driver schedules with; and
// that the PRNG is a pure function of its seed.
#include <catch2/catch.hpp>

#include "base/clock.h"
#include "base/random.h"

#include <algorithm>

using lockstep::Clock;
using lockstep::ClockSpec;
using lockstep::kNever;
using lockstep::TrueTime;

constexpr int64_t kStartMs = 1'767'225'600'000;  // 2026-01-01T00:00:00Z
constexpr int64_t kStartUs = kStartMs * 1000;

TEST_CASE("a perfect clock reads true time", "[clock]") {
  Clock c(ClockSpec{}, kStartMs);
  CHECK(c.WallUs(0) == kStartUs);
  CHECK(c.WallMs(1'500'000) == kStartMs + 1500);
  CHECK(c.MonoUs(42) == 42);
  CHECK(c.AfterMono(100, 1000) == 1100);
  CHECK(c.FirstTrueTimeWallExceeds(kStartUs + 5000, 0) == 5001);
}

TEST_CASE("offset and drift", "[clock]") {
  ClockSpec spec;
  spec.offset_us = 250'000;
  spec.drift_ppm = 100;  // 100 us fast per second.
  Clock c(spec, kStartMs);
  CHECK(c.WallUs(0) == kStartUs + 250'000);
  CHECK(c.WallUs(10'000'000) == kStartUs + 250'000 + 10'000'000 + 1000);
  CHECK(c.OffsetUs(10'000'000) == 251'000);
  CHECK(c.MonoUs(1'000'000) == 1'000'100);
  // 1 s of this clock's monotonic time passes in slightly less true time.
  CHECK(c.AfterMono(0, 1'000'100) == 1'000'000);
}

TEST_CASE("jumps move the wall clock, not the monotonic clock", "[clock]") {
  ClockSpec spec;
  spec.jumps = {{5'000'000, 2'000'000}, {8'000'000, -10'000'000}};
  Clock c(spec, kStartMs);
  CHECK(c.WallUs(4'999'999) == kStartUs + 4'999'999);
  CHECK(c.WallUs(5'000'000) == kStartUs + 7'000'000);
  CHECK(c.WallUs(8'000'000) == kStartUs);
  CHECK(c.MonoUs(8'000'000) == 8'000'000);
  // A key expiring at wall start+6 s: passed by the forward jump at true 5 s.
  CHECK(c.FirstTrueTimeWallExceeds(kStartUs + 6'000'000, 0) == 5'000'000);
  // After the backward jump at 8 s the clock reads start+0 and needs 6 s more to get there.
  CHECK(c.FirstTrueTimeWallExceeds(kStartUs + 6'000'000, 8'000'000) == 14'000'001);
}

TEST_CASE("NTP slews an offset away at a bounded rate", "[clock]") {
  ClockSpec spec;
  spec.offset_us = 1000;
  spec.ntp = true;
  spec.slew_ppm = 500;  // 1 ms takes 2 s to slew away.
  Clock c(spec, kStartMs);
  CHECK(c.OffsetUs(0) == 1000);
  CHECK(c.OffsetUs(1'000'000) == 500);
  CHECK(c.OffsetUs(2'000'000) == 0);
  CHECK(c.OffsetUs(9'000'000) == 0);
}

TEST_CASE("the PRNG is a pure function of its seed", "[random]") {
  lockstep::Prng a(7), b(7), c(8);
  for (int i = 0; i < 100; ++i) REQUIRE(a.Next() == b.Next());
  CHECK(a.Next() != c.Next());
  lockstep::Prng r(1);
  for (int i = 0; i < 10000; ++i) {
    const int64_t v = r.UniformInt(-3, 3);
    REQUIRE(v >= -3);
    REQUIRE(v <= 3);
    const double u = r.Uniform01();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
  }
  // Golden values: if these change, every recorded history changes with them.
  lockstep::Prng g(20261122);
  CHECK(g.Next() == 14859609121720106174ull);
  CHECK(g.Next() == 5257153198722403324ull);
  CHECK(g.Next() == 12807820957400501558ull);
  CHECK(g.Uniform01() == Approx(0.44560461740104129).epsilon(0));
  CHECK(g.UniformInt(1, 6) == 4);
  CHECK(g.Exponential(1000) == Approx(1048.6899179570473).epsilon(1e-15));
  CHECK(g.Normal(0, 1) == Approx(0.68749356846696297).epsilon(1e-15));
  CHECK(g.Pareto(1, 2) == Approx(1.0421371787727747).epsilon(1e-15));
}

// The inverse query is computed, not stepped: after jumps of +-1000 s and +-10^15 us, on slow
// and fast clocks, with and without slewing, every answer is the first microsecond whose
// reading is past the wall time asked for, as a one-microsecond walk would find it (checked
// near the answer; the walk itself would take minutes).
TEST_CASE("the first true time past a wall time, across huge jumps", "[clock]") {
  for (const int64_t by : {int64_t{1'000'000'000}, int64_t{1'000'000'000'000'000}}) {
    for (const double drift : {0.0, 100.0, -499'999.0, 499'999.0}) {
      for (const bool ntp : {false, true}) {
        ClockSpec spec;
        spec.drift_ppm = drift;
        spec.ntp = ntp;
        spec.slew_ppm = 500'000;
        spec.jumps = {{1'000'000, -by}, {2'000'000, by}, {3'000'000, -by / 2}};
        Clock c(spec, kStartMs);
        for (const TrueTime from : {TrueTime{0}, TrueTime{1'500'000}, TrueTime{2'500'000}}) {
          for (const int64_t ahead : {int64_t{1}, int64_t{30'000'000}, by / 3, by}) {
            const int64_t target = c.WallUs(from) + ahead;
            const TrueTime at = c.FirstTrueTimeWallExceeds(target, from);
            INFO("by " << by << " drift " << drift << " ntp " << ntp << " from " << from
                       << " ahead " << ahead << " -> " << at);
            if (at == kNever) continue;
            CHECK(at >= from);
            CHECK(c.WallUs(at) > target);
            // Every earlier microsecond (near the answer, and at `from`) reads at most target.
            if (at > from) {
              CHECK(c.WallUs(at - 1) <= target);
              CHECK(c.WallUs(from) <= target);
              for (TrueTime t = std::max(from, at - 1000); t < at; ++t) CHECK(c.WallUs(t) <= target);
            }
          }
        }
      }
    }
  }
}
