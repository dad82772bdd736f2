// Sorted-set commands (Redis t_zset.c). Every reply, error text and argument-vs-lookup order
// below was checked against redis-server 7.0.15; the cases are in commands_test.cpp.
//
// Range queries walk the set the way Redis walks a listpack-encoded one (the encoding of every
// set of up to 128 short members, which is what lock scripts use): find the first member inside
// the range's entry bound, then skip `offset` members without looking at them, then take
// members while they stay inside the far bound.
#include <cassert>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <strings.h>

#include "core/commands.h"
#include "core/strings.h"

namespace lockstep::cmd {

namespace {

using Member = ZSet::Ordered::value_type;  // (score, member)

Reply WrongType() { return Reply::Error(std::string(err::kWrongType)); }
Reply NotInteger() { return Reply::Error(std::string(err::kNotInteger)); }
Reply SyntaxError() { return Reply::Error(std::string(err::kSyntax)); }


// --- ZADD / ZINCRBY ---------------------------------------------------------------------------

struct ZaddOptions {
  bool nx = false;
  bool xx = false;
  bool gt = false;
  bool lt = false;
  bool ch = false;
  bool incr = false;
};

enum class ZaddOutcome { kAdded, kUpdated, kUnchanged, kSkipped, kNaN };

// Redis zsetAdd for one score-member pair. *new_score is the resulting score (before the
// listpack turns a -0 into 0, which is why ZINCRBY can reply "-0"); set unless kSkipped/kNaN.
ZaddOutcome AddOne(ZSet& zs, const ZaddOptions& opt, double score, const std::string& member,
                   double* new_score) {
  assert(!std::isnan(score));
  if (const double* current = zs.Score(member)) {
    if (opt.nx) return ZaddOutcome::kSkipped;
    const double old_score = *current;
    if (opt.incr) {
      score += old_score;
      if (std::isnan(score)) return ZaddOutcome::kNaN;  // inf + -inf
    }
    if ((opt.lt && score >= old_score) || (opt.gt && score <= old_score)) {
      return ZaddOutcome::kSkipped;
    }
    *new_score = score;
    if (score == old_score) return ZaddOutcome::kUnchanged;  // -0 == 0: unchanged too.
    zs.Set(member, score);
    return ZaddOutcome::kUpdated;
  }
  if (opt.xx) return ZaddOutcome::kSkipped;
  *new_score = score;
  zs.Set(member, score);
  return ZaddOutcome::kAdded;
}

// Whether an option word is `option`, as Redis compares them (strcasecmp on the argument as a C
// string): up to its first NUL, so "NX\0junk" is NX.
bool OptionIs(const std::string& word, const char* option) {
  return strcasecmp(word.c_str(), option) == 0;
}

// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...], and ZINCRBY key
// increment member, which Redis runs through the same parser with INCR preset (so
// "ZINCRBY z nx 5" is a syntax error: "nx" is taken as an option).
Reply ZaddGeneric(Ctx& ctx, const Argv& argv, ZaddOptions opt) {
  size_t score_index = 2;
  for (; score_index < argv.size(); ++score_index) {
    const std::string& word = argv[score_index];
    if (OptionIs(word, "nx")) {
      opt.nx = true;
    } else if (OptionIs(word, "xx")) {
      opt.xx = true;
    } else if (OptionIs(word, "ch")) {
      opt.ch = true;
    } else if (OptionIs(word, "incr")) {
      opt.incr = true;
    } else if (OptionIs(word, "gt")) {
      opt.gt = true;
    } else if (OptionIs(word, "lt")) {
      opt.lt = true;
    } else {
      break;
    }
  }
  const size_t args_left = argv.size() - score_index;
  if (args_left == 0 || args_left % 2 != 0) return SyntaxError();
  const size_t pairs = args_left / 2;
  if (opt.nx && opt.xx) {
    return Reply::Error("ERR XX and NX options at the same time are not compatible");
  }
  if ((opt.gt && opt.nx) || (opt.lt && opt.nx) || (opt.gt && opt.lt)) {
    return Reply::Error("ERR GT, LT, and/or NX options at the same time are not compatible");
  }
  if (opt.incr && pairs > 1) {
    return Reply::Error("ERR INCR option supports a single increment-element pair");
  }
  // Every score is parsed before anything changes: the command runs fully or not at all.
  std::vector<double> scores;
  scores.reserve(pairs);
  for (size_t i = 0; i < pairs; ++i) {
    const std::optional<double> score = ParseDouble(argv[score_index + 2 * i]);
    if (!score) return Reply::Error(std::string(err::kNotFloat));
    scores.push_back(*score);
  }

  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kZSet, &wrong_type);
  if (wrong_type) return WrongType();
  int64_t added = 0;
  int64_t updated = 0;
  bool processed = false;  // Some pair was not skipped by NX/XX/GT/LT.
  double last_score = 0;
  if (e == nullptr && !opt.xx) {
    Entry fresh;
    fresh.value = ZSet{};
    e = &ctx.db.Put(argv[1], std::move(fresh));
  }
  if (e != nullptr) {
    ZSet& zs = e->zset();
    for (size_t i = 0; i < pairs; ++i) {
      double new_score = 0;
      switch (AddOne(zs, opt, scores[i], argv[score_index + 2 * i + 1], &new_score)) {
        case ZaddOutcome::kAdded: ++added; break;
        case ZaddOutcome::kUpdated: ++updated; break;
        case ZaddOutcome::kUnchanged: break;
        case ZaddOutcome::kSkipped: continue;
        case ZaddOutcome::kNaN:
          // Only INCR can get here, and only on an existing member: nothing has changed.
          assert(opt.incr && added + updated == 0 && !zs.empty());
          return Reply::Error("ERR resulting score is not a number (NaN)");
      }
      processed = true;
      last_score = new_score;
    }
    // A new key always takes its first member: no pair of a fresh set can be skipped.
    assert(!zs.empty());
  }
  // Only a change replicates: re-adding equal scores, or ZINCRBY by 0, sends nothing.
  if (added + updated > 0) ctx.PropagateAsIs(argv);
  if (opt.incr) return processed ? ctx.Double(last_score) : Reply::Null();
  return Reply::Integer(opt.ch ? added + updated : added);
}

// --- range arguments --------------------------------------------------------------------------

// Redis zslParseRange: "(" makes a bound exclusive; the rest is strtod to the end of the string
// (so "", " 1" and "0x10" parse, "[1" and "1 " do not), never NaN.
struct ScoreRange {
  double min = 0;
  double max = 0;
  bool min_exclusive = false;
  bool max_exclusive = false;

  bool GteMin(double v) const { return min_exclusive ? v > min : v >= min; }
  bool LteMax(double v) const { return max_exclusive ? v < max : v <= max; }
  bool Empty() const { return min > max || (min == max && (min_exclusive || max_exclusive)); }
};

bool ParseScoreBoundArg(std::string_view arg, double* value, bool* exclusive) {
  *exclusive = !arg.empty() && arg[0] == '(';
  const std::optional<double> v = ParseScoreBound(*exclusive ? arg.substr(1) : arg);
  if (!v) return false;
  *value = *v;
  return true;
}

std::optional<ScoreRange> ParseScoreRange(std::string_view min, std::string_view max) {
  ScoreRange r;
  if (!ParseScoreBoundArg(min, &r.min, &r.min_exclusive) ||
      !ParseScoreBoundArg(max, &r.max, &r.max_exclusive)) {
    return std::nullopt;
  }
  return r;
}

// Redis zslParseLexRange: "-" and "+" are the smallest and largest strings, "(x" excludes x,
// "[x" includes it; anything else (including "") is invalid. Bytes compare as memcmp.
struct LexBound {
  enum class Kind { kMinusInf, kPlusInf, kValue };
  Kind kind = Kind::kValue;
  std::string value;
  bool exclusive = false;
};

std::optional<LexBound> ParseLexBound(std::string_view arg) {
  if (arg.empty()) return std::nullopt;
  LexBound b;
  switch (arg[0]) {
    case '-':
    case '+':
      if (arg.size() != 1) return std::nullopt;
      b.kind = arg[0] == '-' ? LexBound::Kind::kMinusInf : LexBound::Kind::kPlusInf;
      b.exclusive = true;
      return b;
    case '(':
    case '[':
      b.value = std::string(arg.substr(1));
      b.exclusive = arg[0] == '(';
      return b;
    default:
      return std::nullopt;
  }
}

// Redis sdscmplex for a bound against a bound.
int CompareBounds(const LexBound& a, const LexBound& b) {
  using K = LexBound::Kind;
  if (a.kind == b.kind && a.kind != K::kValue) return 0;
  if (a.kind == K::kMinusInf || b.kind == K::kPlusInf) return -1;
  if (a.kind == K::kPlusInf || b.kind == K::kMinusInf) return 1;
  return a.value.compare(b.value);
}

// A member against a bound.
int CompareToBound(const std::string& member, const LexBound& b) {
  if (b.kind == LexBound::Kind::kMinusInf) return 1;
  if (b.kind == LexBound::Kind::kPlusInf) return -1;
  return member.compare(b.value);
}

struct LexRange {
  LexBound min;
  LexBound max;

  bool GteMin(const std::string& m) const {
    const int c = CompareToBound(m, min);
    return min.exclusive ? c > 0 : c >= 0;
  }
  bool LteMax(const std::string& m) const {
    const int c = CompareToBound(m, max);
    return max.exclusive ? c < 0 : c <= 0;
  }
  bool Empty() const {
    const int c = CompareBounds(min, max);
    return c > 0 || (c == 0 && (min.exclusive || max.exclusive));
  }
};

// --- range walks ------------------------------------------------------------------------------

// Appends one member (and its score) the way Redis's zrange result handler does: flat
// member, score pairs in RESP2, a [member, score] array per member in RESP3.
void Emit(const Ctx& ctx, const Member& m, bool with_scores, std::vector<Reply>* out) {
  if (!with_scores) {
    out->push_back(Reply::Bulk(m.second));
  } else if (ctx.resp == 2) {
    out->push_back(Reply::Bulk(m.second));
    out->push_back(ctx.Double(m.first));
  } else {
    out->push_back(Reply::Array({Reply::Bulk(m.second), ctx.Double(m.first)}));
  }
}

// The walk described at the top of the file, over [first, last) in walking order. `enter` is
// the bound met first, `stay` the far one. A negative offset walks off the end (Redis counts it
// down to zero); a negative limit means no limit.
template <typename It, typename Enter, typename Stay>
void WalkRange(It first, It last, Enter enter, Stay stay, int64_t offset, int64_t limit,
               const Ctx& ctx, bool with_scores, std::vector<Reply>* out) {
  It it = first;
  while (it != last && !enter(*it)) ++it;
  if (it == last || !stay(*it)) return;
  if (offset < 0) return;
  for (int64_t skipped = 0; skipped < offset && it != last; ++skipped) ++it;
  uint64_t remaining = limit < 0 ? std::numeric_limits<uint64_t>::max()
                                 : static_cast<uint64_t>(limit);
  for (; it != last && remaining > 0 && stay(*it); ++it, --remaining) {
    Emit(ctx, *it, with_scores, out);
  }
}

// Walks a range given by GteMin/LteMax predicates, forwards or in reverse, after Redis's
// zzlIsIn(Lex)Range shortcut: the last member must reach the min, the first must not pass max.
template <typename Range, typename Key>
void CollectRange(const ZSet& zs, const Range& range, Key key, bool reverse, int64_t offset,
                  int64_t limit, const Ctx& ctx, bool with_scores, std::vector<Reply>* out) {
  const ZSet::Ordered& ordered = zs.ordered();
  assert(!ordered.empty());
  if (range.Empty() || !range.GteMin(key(*ordered.rbegin())) ||
      !range.LteMax(key(*ordered.begin()))) {
    return;
  }
  auto gte_min = [&](const Member& m) { return range.GteMin(key(m)); };
  auto lte_max = [&](const Member& m) { return range.LteMax(key(m)); };
  if (reverse) {
    WalkRange(ordered.rbegin(), ordered.rend(), lte_max, gte_min, offset, limit, ctx,
              with_scores, out);
  } else {
    WalkRange(ordered.begin(), ordered.end(), gte_min, lte_max, offset, limit, ctx, with_scores,
              out);
  }
}

// Redis genericZrangebyrankCommand: list-style index clamping; REV counts from the top.
void CollectRank(const ZSet& zs, int64_t start, int64_t end, bool reverse, const Ctx& ctx,
                 bool with_scores, std::vector<Reply>* out) {
  const auto len = static_cast<int64_t>(zs.size());
  if (start < 0) start += len;  // len is small and positive, so these cannot overflow.
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (start > end || start >= len) return;
  if (end >= len) end = len - 1;
  auto take = [&](auto it) {
    std::advance(it, start);
    for (int64_t i = start; i <= end; ++i, ++it) Emit(ctx, *it, with_scores, out);
  };
  if (reverse) {
    take(zs.ordered().rbegin());
  } else {
    take(zs.ordered().begin());
  }
}

enum class RangeType { kAuto, kRank, kScore, kLex };

// Redis zrangeGenericCommand for ZRANGE (type and direction from the options), and for
// ZRANGEBYSCORE and ZREVRANGE (type and direction fixed, so REV/BYSCORE/BYLEX are syntax
// errors; `reverse` is then the fixed direction). Order of checks: options (LIMIT's numbers
// included), option conflicts, the range, then the key.
Reply RangeGeneric(Ctx& ctx, const Argv& argv, RangeType type, bool direction_fixed,
                   bool reverse = false) {
  bool with_scores = false;
  int64_t offset = 0;
  int64_t limit = -1;
  for (size_t j = 4; j < argv.size(); ++j) {
    const std::string& word = argv[j];
    const size_t args_left = argv.size() - j - 1;
    if (OptionIs(word, "withscores")) {
      with_scores = true;
    } else if (OptionIs(word, "limit") && args_left >= 2) {
      const std::optional<int64_t> o = ParseInt64(argv[j + 1]);
      if (!o) return NotInteger();
      const std::optional<int64_t> c = ParseInt64(argv[j + 2]);
      if (!c) return NotInteger();
      offset = *o;
      limit = *c;
      j += 2;
    } else if (!direction_fixed && !reverse && OptionIs(word, "rev")) {
      reverse = true;
    } else if (type == RangeType::kAuto && OptionIs(word, "bylex")) {
      type = RangeType::kLex;
    } else if (type == RangeType::kAuto && OptionIs(word, "byscore")) {
      type = RangeType::kScore;
    } else {
      return SyntaxError();
    }
  }
  if (type == RangeType::kAuto) type = RangeType::kRank;
  // Redis tests "limit != -1", so "LIMIT 0 -1" (or "LIMIT 5 -1") passes by rank, ignored.
  if (limit != -1 && type == RangeType::kRank) {
    return Reply::Error(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX");
  }
  if (with_scores && type == RangeType::kLex) {
    return Reply::Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  }
  // With REV, BYSCORE and BYLEX take the bounds as max, min.
  const bool swap = reverse && type != RangeType::kRank;
  const std::string& min_arg = swap ? argv[3] : argv[2];
  const std::string& max_arg = swap ? argv[2] : argv[3];

  std::optional<int64_t> start, end;
  std::optional<ScoreRange> score_range;
  std::optional<LexBound> lex_min, lex_max;
  switch (type) {
    case RangeType::kAuto:
    case RangeType::kRank:
      start = ParseInt64(min_arg);
      end = ParseInt64(max_arg);
      if (!start || !end) return NotInteger();
      break;
    case RangeType::kScore:
      score_range = ParseScoreRange(min_arg, max_arg);
      if (!score_range) return Reply::Error("ERR min or max is not a float");
      break;
    case RangeType::kLex:
      lex_min = ParseLexBound(min_arg);
      lex_max = ParseLexBound(max_arg);
      if (!lex_min || !lex_max) return Reply::Error("ERR min or max not valid string range item");
      break;
  }

  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kZSet, &wrong_type);
  if (wrong_type) return WrongType();
  std::vector<Reply> out;
  if (e == nullptr) return Reply::Array();
  const ZSet& zs = e->zset();
  switch (type) {
    case RangeType::kAuto:
    case RangeType::kRank:
      CollectRank(zs, *start, *end, reverse, ctx, with_scores, &out);
      break;
    case RangeType::kScore:
      CollectRange(zs, *score_range, [](const Member& m) { return m.first; }, reverse, offset,
                   limit, ctx, with_scores, &out);
      break;
    case RangeType::kLex:
      CollectRange(zs, LexRange{*lex_min, *lex_max},
                   [](const Member& m) -> const std::string& { return m.second; }, reverse,
                   offset, limit, ctx, /*with_scores=*/false, &out);
      break;
  }
  return Reply::Array(std::move(out));
}

}  // namespace

Reply Zadd(Ctx& ctx, const Argv& argv) { return ZaddGeneric(ctx, argv, ZaddOptions{}); }

Reply Zincrby(Ctx& ctx, const Argv& argv) {
  ZaddOptions opt;
  opt.incr = true;
  return ZaddGeneric(ctx, argv, opt);
}

Reply Zscore(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kZSet, &wrong_type);
  if (wrong_type) return WrongType();
  const double* score = e == nullptr ? nullptr : e->zset().Score(argv[2]);
  return score == nullptr ? Reply::Null() : ctx.Double(*score);
}

// ZREM key member [member ...] -> number removed; emptying the set deletes the key (and stops
// looking at the remaining members, as Redis does).
Reply Zrem(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kZSet, &wrong_type);
  if (wrong_type) return WrongType();
  if (e == nullptr) return Reply::Integer(0);
  ZSet& zs = e->zset();
  int64_t deleted = 0;
  for (size_t i = 2; i < argv.size(); ++i) {
    if (zs.Erase(argv[i])) ++deleted;
    if (zs.empty()) {
      ctx.db.Erase(argv[1]);
      break;
    }
  }
  // The ZREM itself replicates (not a DEL), and only when it removed something.
  if (deleted > 0) ctx.PropagateAsIs(argv);
  return Reply::Integer(deleted);
}

Reply Zcard(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kZSet, &wrong_type);
  if (wrong_type) return WrongType();
  return Reply::Integer(e == nullptr ? 0 : static_cast<int64_t>(e->zset().size()));
}

Reply Zrank(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kZSet, &wrong_type);
  if (wrong_type) return WrongType();
  const int64_t rank = e == nullptr ? -1 : e->zset().Rank(argv[2]);
  return rank < 0 ? Reply::Null() : Reply::Integer(rank);
}

// ZRANGE key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]
Reply Zrange(Ctx& ctx, const Argv& argv) {
  return RangeGeneric(ctx, argv, RangeType::kAuto, /*direction_fixed=*/false);
}

// ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]
Reply Zrangebyscore(Ctx& ctx, const Argv& argv) {
  return RangeGeneric(ctx, argv, RangeType::kScore, /*direction_fixed=*/true);
}

// ZREVRANGE key start stop [WITHSCORES]: ZRANGE by rank from the top. LIMIT is parsed, and
// then refused as with any range by rank.
Reply Zrevrange(Ctx& ctx, const Argv& argv) {
  return RangeGeneric(ctx, argv, RangeType::kRank, /*direction_fixed=*/true, /*reverse=*/true);
}

// ZCOUNT key min max: the range is parsed before the lookup; a missing key counts 0.
Reply Zcount(Ctx& ctx, const Argv& argv) {
  const std::optional<ScoreRange> range = ParseScoreRange(argv[2], argv[3]);
  if (!range) return Reply::Error("ERR min or max is not a float");
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kZSet, &wrong_type);
  if (wrong_type) return WrongType();
  if (e == nullptr || range->Empty()) return Reply::Integer(0);
  int64_t count = 0;
  for (const Member& m : e->zset().ordered()) {
    if (!range->LteMax(m.first)) break;
    if (range->GteMin(m.first)) ++count;
  }
  return Reply::Integer(count);
}

// ZREMRANGEBYSCORE key min max -> the number removed. The range is parsed before the lookup;
// emptying the set deletes the key; the command replicates as it came, when it removed any.
Reply Zremrangebyscore(Ctx& ctx, const Argv& argv) {
  const std::optional<ScoreRange> range = ParseScoreRange(argv[2], argv[3]);
  if (!range) return Reply::Error("ERR min or max is not a float");
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kZSet, &wrong_type);
  if (wrong_type) return WrongType();
  if (e == nullptr || range->Empty()) return Reply::Integer(0);
  ZSet& zs = e->zset();
  std::vector<std::string> doomed;
  for (const Member& m : zs.ordered()) {
    if (!range->LteMax(m.first)) break;
    if (range->GteMin(m.first)) doomed.push_back(m.second);
  }
  for (const std::string& member : doomed) zs.Erase(member);
  if (zs.empty()) ctx.db.Erase(argv[1]);
  if (!doomed.empty()) ctx.PropagateAsIs(argv);
  return Reply::Integer(static_cast<int64_t>(doomed.size()));
}

}  // namespace lockstep::cmd
