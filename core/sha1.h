// SHA-1 (FIPS 180-4), for script identifiers: EVALSHA, SCRIPT LOAD and redis.sha1hex all name a
// script body by the 40 lowercase hex digits of its SHA-1, exactly as Redis does.
#ifndef LOCKSTEP_CORE_SHA1_H_
#define LOCKSTEP_CORE_SHA1_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace lockstep {

using Sha1Digest = std::array<uint8_t, 20>;

Sha1Digest Sha1(std::string_view data);

// Writes the 40 lowercase hex digits of the digest of data to out (no terminator).
void Sha1HexTo(std::string_view data, char out[40]);

// The 40 lowercase hex digits of the digest of data.
std::string Sha1Hex(std::string_view data);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_SHA1_H_
