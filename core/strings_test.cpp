// Establishes that lockstep parses and prints numbers exactly as Redis 7.0 does; every case
// here was checked against redis-server 7.0.15 (INCRBY / ZADD / ZSCORE replies).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "core/strings.h"

using lockstep::FormatDouble17g;
using lockstep::FormatScore;
using lockstep::ParseDouble;
using lockstep::ParseInt64;
using lockstep::ParseScoreBound;

TEST_CASE("string2ll accepts canonical integers only", "[strings]") {
  CHECK(ParseInt64("0") == 0);
  CHECK(ParseInt64("-1") == -1);
  CHECK(ParseInt64("9223372036854775807") == INT64_MAX);
  CHECK(ParseInt64("-9223372036854775808") == INT64_MIN);
  for (const char* bad : {"", "+5", "05", " 5", "5 ", "5.0", "1e3", "-0", "-", "00",
                          "9223372036854775808", "-9223372036854775809", "abc",
                          "123456789012345678901"}) {
    INFO("input: '" << bad << "'");
    CHECK_FALSE(ParseInt64(bad).has_value());
  }
}

TEST_CASE("float arguments follow getDoubleFromObject", "[strings]") {
  CHECK(ParseDouble("1.5") == 1.5);
  CHECK(ParseDouble("1e3") == 1000);
  CHECK(ParseDouble("0x10") == 16);
  CHECK(ParseDouble("inf") == std::numeric_limits<double>::infinity());
  CHECK(ParseDouble("+inf") == std::numeric_limits<double>::infinity());
  CHECK(ParseDouble("-Infinity") == -std::numeric_limits<double>::infinity());
  for (const char* bad : {"", " 1", "1 ", "nan", "abc", "1e999", "1e-999"}) {
    INFO("input: '" << bad << "'");
    CHECK_FALSE(ParseDouble(bad).has_value());
  }
  CHECK_FALSE(ParseDouble(std::string("1\0", 2)).has_value());
}

TEST_CASE("score range bounds follow zslParseRange", "[strings]") {
  CHECK(ParseScoreBound("") == 0);  // strtod consumes nothing and stops at the terminator.
  CHECK(ParseScoreBound(" 5") == 5);
  CHECK_FALSE(ParseScoreBound("5 ").has_value());
  CHECK_FALSE(ParseScoreBound("nan").has_value());
  CHECK_FALSE(ParseScoreBound("[1").has_value());
}

TEST_CASE("scores print as %.17g, infinities as inf", "[strings]") {
  CHECK(FormatScore(1.5) == "1.5");
  CHECK(FormatScore(3) == "3");
  CHECK(FormatScore(0.1) == "0.10000000000000001");
  CHECK(FormatScore(1.1) == "1.1000000000000001");
  CHECK(FormatScore(1e20) == "1e+20");
  CHECK(FormatScore(1e-5) == "1.0000000000000001e-05");
  CHECK(FormatScore(123456789.123) == "123456789.123");
  CHECK(FormatScore(9007199254740993.0) == "9007199254740992");
  CHECK(FormatScore(0.1 + 0.2) == "0.30000000000000004");
  CHECK(FormatScore(-0.0) == "-0");
  CHECK(FormatScore(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(FormatScore(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(FormatDouble17g(1e17) == "1e+17");
}
