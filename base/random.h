// The project's one source of randomness: a seeded PRNG and the distributions built on it,
// all owned by the project so that the same seed gives the same run on every machine and every
// standard library (std::uniform_int_distribution and friends differ between libstdc++ and
// libc++, and std::random_device is not reproducible at all).
//
// The generator is xoshiro256** (Blackman and Vigna), seeded through splitmix64. Distributions
// take only what they need from it and document their exact formula, because a formula change
// changes every history.
#ifndef LOCKSTEP_BASE_RANDOM_H_
#define LOCKSTEP_BASE_RANDOM_H_

#include <cassert>
#include <cmath>
#include <cstdint>

namespace lockstep {

class Prng {
 public:
  explicit Prng(uint64_t seed) {
    for (uint64_t& word : s_) word = SplitMix64(&seed);
  }

  // A child generator for an independent stream (one per component), derived from this one,
  // so adding a draw in one component does not shift the draws of another.
  Prng Fork() { return Prng(Next()); }

  uint64_t Next() {
    const uint64_t result = Rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = Rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double Uniform01() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  // Uniform integer in [lo, hi], both inclusive, without modulo bias (Lemire's method with
  // rejection).
  int64_t UniformInt(int64_t lo, int64_t hi) {
    assert(lo <= hi);
    const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
    if (range == 0) return static_cast<int64_t>(Next());  // The whole 64-bit range.
    const uint64_t limit = (0 - range) % range;  // 2^64 mod range.
    uint64_t x;
    do {
      x = Next();
    } while (x < limit);
    return static_cast<int64_t>(static_cast<uint64_t>(lo) + x % range);
  }

  bool Bernoulli(double p) { return p > 0 && (p >= 1 || Uniform01() < p); }

  // Exponential with the given mean: -mean * ln(1 - u).
  double Exponential(double mean) { return -mean * std::log1p(-Uniform01()); }

  // Normal by Box-Muller (one value per call; the second is discarded to keep the stream
  // simple to reason about).
  double Normal(double mean, double stddev) {
    const double u1 = 1.0 - Uniform01();  // (0, 1], so the log is finite.
    const double u2 = Uniform01();
    return mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }

  // Pareto (heavy-tailed) with scale x_min and shape alpha: x_min / (1 - u)^(1/alpha).
  // Good for GC pauses: mostly short, occasionally very long.
  double Pareto(double x_min, double alpha) {
    assert(x_min > 0 && alpha > 0);
    return x_min / std::pow(1.0 - Uniform01(), 1.0 / alpha);
  }

 private:
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static uint64_t SplitMix64(uint64_t* state) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t s_[4];
};

// A duration distribution as a scenario declares it, in microseconds.
struct Distribution {
  enum class Kind : uint8_t { kFixed, kUniform, kExponential, kNormal, kPareto };
  Kind kind = Kind::kFixed;
  double a = 0;  // fixed: value; uniform: min; exponential: mean; normal: mean; pareto: x_min
  double b = 0;  // uniform: max; normal: stddev; pareto: alpha
  double cap = 0;  // > 0: samples are clamped to [0, cap]

  static Distribution Fixed(double v) { return {Kind::kFixed, v, 0, 0}; }

  bool operator==(const Distribution&) const = default;

  // Draws a non-negative duration in microseconds.
  int64_t Sample(Prng& rng) const {
    double v = 0;
    switch (kind) {
      case Kind::kFixed: v = a; break;
      case Kind::kUniform: v = a + (b - a) * rng.Uniform01(); break;
      case Kind::kExponential: v = rng.Exponential(a); break;
      case Kind::kNormal: v = rng.Normal(a, b); break;
      case Kind::kPareto: v = rng.Pareto(a, b); break;
    }
    if (v < 0) v = 0;
    if (cap > 0 && v > cap) v = cap;
    // Durations beyond ~292k years would overflow; nothing sane asks for them.
    if (v > 9.0e18) v = 9.0e18;
    return static_cast<int64_t>(v);
  }
};

}  // namespace lockstep

#endif  // LOCKSTEP_BASE_RANDOM_H_
