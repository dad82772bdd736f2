#include "core/strings.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace lockstep {

std::optional<int64_t> ParseInt64(std::string_view s) {
  // Redis rejects anything of 21 characters or more before looking at it (LONG_STR_SIZE).
  if (s.empty() || s.size() >= 21) return std::nullopt;
  size_t i = 0;
  bool negative = false;
  if (s[0] == '-') {
    negative = true;
    i = 1;
    if (s.size() == 1) return std::nullopt;
  }
  if (s[i] == '0') {
    // Only a lone "0" may start with a zero: "-0", "00" and "01" are errors in Redis.
    if (s.size() == 1) return 0;
    return std::nullopt;
  }
  uint64_t v = 0;
  if (s.size() - i <= 19) {
    // At most 19 digits stay below 10^19 < UINT64_MAX: no overflow check per digit.
    for (; i < s.size(); ++i) {
      const unsigned digit = static_cast<unsigned char>(s[i]) - unsigned{'0'};
      if (digit > 9) return std::nullopt;
      v = v * 10 + digit;
    }
  } else {
    for (; i < s.size(); ++i) {
      const char c = s[i];
      if (c < '0' || c > '9') return std::nullopt;
      const uint64_t digit = static_cast<uint64_t>(c - '0');
      if (v > (UINT64_MAX - digit) / 10) return std::nullopt;
      v = v * 10 + digit;
    }
  }
  if (negative) {
    if (v > static_cast<uint64_t>(INT64_MAX) + 1) return std::nullopt;
    // Negate in unsigned arithmetic so INT64_MIN does not overflow.
    return static_cast<int64_t>(0 - v);
  }
  if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(v);
}

std::optional<double> ParseDouble(std::string_view s) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  const std::string buf(s);  // strtod needs a terminator; an embedded NUL fails the length test.
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(buf.c_str(), &end);
  if (static_cast<size_t>(end - buf.c_str()) != buf.size()) return std::nullopt;
  if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || std::fpclassify(v) == FP_ZERO)) {
    return std::nullopt;
  }
  if (std::isnan(v)) return std::nullopt;
  return v;
}

std::optional<double> ParseScoreBound(std::string_view s) {
  const std::string buf(s);
  char* end = nullptr;
  const double v = std::strtod(buf.c_str(), &end);
  if (*end != '\0' || std::isnan(v)) return std::nullopt;
  return v;
}

std::string FormatInt64(int64_t v) { return std::to_string(v); }

std::string FormatDouble17g(double d) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", d);
  return std::string(buf, static_cast<size_t>(n));
}

std::string FormatScore(double d) {
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  return FormatDouble17g(d);
}

}  // namespace lockstep
