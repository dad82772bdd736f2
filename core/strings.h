// Redis's number <-> string rules. They are strict and observable (a client sending "+5" or
// "05" as an integer gets an error), so they live in one place and every command uses them.
#ifndef LOCKSTEP_CORE_STRINGS_H_
#define LOCKSTEP_CORE_STRINGS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lockstep {

// Redis util.c string2ll: optional '-', then digits with no leading zero ("0" alone is fine),
// at most 20 characters, no spaces, no '+', no "-0", and the value must fit in int64.
std::optional<int64_t> ParseInt64(std::string_view s);

// Redis getDoubleFromObject: strtod over the whole string; rejects the empty string, leading
// space, trailing garbage, NaN, and overflow/underflow reported by strtod. Accepts "inf",
// "+inf", "-inf", "Infinity", "1e3", "0x10".
std::optional<double> ParseDouble(std::string_view s);

// Redis zslParseRange-style bound: strtod that must consume up to the end of the string (so
// leading space and "" are accepted, as in Redis) and must not be NaN.
std::optional<double> ParseScoreBound(std::string_view s);

// Decimal text of an int64 (Redis ll2string).
std::string FormatInt64(int64_t v);

// "%.17g", the text Redis 7.0 uses for score replies (addReplyDouble) and for Lua numbers
// passed as command arguments. Infinity is "inf"/"-inf" as Redis writes it explicitly.
std::string FormatDouble17g(double d);

// The text of a double the way Redis's addReplyDouble sends it in RESP2 ("inf", "-inf", or
// "%.17g").
std::string FormatScore(double d);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_STRINGS_H_
