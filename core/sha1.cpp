// A straightforward one-shot SHA-1 (FIPS 180-4, section 6.1). Scripts are hashed once when they
// are first seen, so clarity beats speed here.
#include "core/sha1.h"

#include <cassert>
#include <cstring>

namespace lockstep {

namespace {

inline uint32_t Rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

// Processes one 64-byte block into the five-word state h.
void Compress(uint32_t h[5], const uint8_t block[64]) {
  uint32_t w[80];
  for (int t = 0; t < 16; ++t) {
    w[t] = (uint32_t{block[4 * t]} << 24) | (uint32_t{block[4 * t + 1]} << 16) |
           (uint32_t{block[4 * t + 2]} << 8) | uint32_t{block[4 * t + 3]};
  }
  for (int t = 16; t < 80; ++t) w[t] = Rotl(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);

  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int t = 0; t < 80; ++t) {
    uint32_t f, k;
    if (t < 20) {
      f = (b & c) | (~b & d);
      k = 0x5A827999u;
    } else if (t < 40) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1u;
    } else if (t < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDCu;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6u;
    }
    const uint32_t temp = Rotl(a, 5) + f + e + k + w[t];
    e = d;
    d = c;
    c = Rotl(b, 30);
    b = a;
    a = temp;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

}  // namespace

Sha1Digest Sha1(std::string_view data) {
  uint32_t h[5] = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u};
  const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
  const size_t n = data.size();
  size_t off = 0;
  for (; off + 64 <= n; off += 64) Compress(h, bytes + off);

  // Padding: a 1 bit, zeros, then the message length in bits as a big-endian 64-bit number.
  uint8_t tail[128] = {};
  const size_t rest = n - off;
  assert(rest < 64);
  if (rest > 0) std::memcpy(tail, bytes + off, rest);
  tail[rest] = 0x80;
  const size_t tail_len = rest + 1 + 8 <= 64 ? 64 : 128;
  const uint64_t bits = static_cast<uint64_t>(n) * 8;
  for (int i = 0; i < 8; ++i) tail[tail_len - 1 - i] = static_cast<uint8_t>(bits >> (8 * i));
  Compress(h, tail);
  if (tail_len == 128) Compress(h, tail + 64);

  Sha1Digest digest;
  for (int i = 0; i < 5; ++i) {
    digest[4 * i] = static_cast<uint8_t>(h[i] >> 24);
    digest[4 * i + 1] = static_cast<uint8_t>(h[i] >> 16);
    digest[4 * i + 2] = static_cast<uint8_t>(h[i] >> 8);
    digest[4 * i + 3] = static_cast<uint8_t>(h[i]);
  }
  return digest;
}

void Sha1HexTo(std::string_view data, char out[40]) {
  static constexpr char kHex[] = "0123456789abcdef";
  const Sha1Digest d = Sha1(data);
  for (size_t i = 0; i < d.size(); ++i) {
    out[2 * i] = kHex[d[i] >> 4];
    out[2 * i + 1] = kHex[d[i] & 15];
  }
}

std::string Sha1Hex(std::string_view data) {
  std::string out(40, '0');
  Sha1HexTo(data, out.data());
  return out;
}

}  // namespace lockstep
