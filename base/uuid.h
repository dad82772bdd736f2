// A Redisson client id (ServiceManager.getId(), a random UUID) drawn from the project's PRNG, so
// that a seed names the same client ids in every run: the simulator's and the live driver's.
#ifndef LOCKSTEP_BASE_UUID_H_
#define LOCKSTEP_BASE_UUID_H_

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <string>

#include "base/random.h"

namespace lockstep {

// A version-4 UUID's text from two draws.
inline std::string UuidFrom(Prng& rng) {
  const uint64_t hi = rng.Next();
  const uint64_t lo = rng.Next();
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%08" PRIx64 "-%04" PRIx64 "-4%03" PRIx64 "-%04" PRIx64 "-%012" PRIx64,
                hi >> 32, (hi >> 16) & 0xffff, hi & 0xfff, ((lo >> 48) & 0x3fffu) | uint64_t{0x8000},
                lo & uint64_t{0xffffffffffff});
  return buf;
}

}  // namespace lockstep

#endif  // LOCKSTEP_BASE_UUID_H_
