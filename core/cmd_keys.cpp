// Generic key commands (Redis db.c, expire.c).
#include <cassert>
#include <cinttypes>
#include <climits>
#include <cstdlib>
#include <utility>

#include <strings.h>

#include "base/ascii.h"
#include "core/commands.h"
#include "core/strings.h"

namespace lockstep::cmd {

namespace {

// Options compare as Redis's strcasecmp compares them: as C strings, up to the first NUL.
bool EqualsNoCase(const std::string& a, const char* b) { return strcasecmp(a.c_str(), b) == 0; }

// Redis 7.0.15's stringmatchlen (util.c) as Debian ships it: glob matching with *, ?, [set],
// [^set], [a-z] and \ escapes, byte by byte (bytes compare as signed chars, as C's char does
// there). Two guards keep a hostile pattern from taking exponential time: once the rest of the
// pattern after a '*' has failed at every later position, no earlier '*' tries a longer match
// (skip_longer); and a '*' nested more than 1000 deep fails the match (the CVE-2024-31228
// backport). Like Redis, an empty string matches only the empty pattern.
class GlobMatcher {
 public:
  static bool Matches(std::string_view pattern, std::string_view s) {
    bool skip_longer = false;
    return Match(pattern.data(), static_cast<int64_t>(pattern.size()), s.data(),
                 static_cast<int64_t>(s.size()), &skip_longer, 0);
  }

 private:
  static constexpr int kNestingMax = 1000;

  static bool Match(const char* p, int64_t plen, const char* s, int64_t slen, bool* skip_longer,
                    int nesting) {
    if (nesting > kNestingMax) return false;
    // The byte at p[i], or 0 past the end (Redis reads the pattern's terminating zero there).
    const char* const p_end = p + plen;
    auto at = [p_end](const char* q) { return q < p_end ? *q : '\0'; };
    while (plen > 0 && slen > 0) {
      switch (p[0]) {
        case '*': {
          while (plen > 1 && p[1] == '*') {
            ++p;
            --plen;
          }
          if (plen == 1) return true;
          for (; slen > 0; ++s, --slen) {
            if (Match(p + 1, plen - 1, s, slen, skip_longer, nesting + 1)) return true;
            if (*skip_longer) return false;
          }
          // The rest failed from every position: a longer match for an earlier '*' would only
          // start the rest later, so it cannot succeed either.
          *skip_longer = true;
          return false;
        }
        case '?':
          ++s;
          --slen;
          break;
        case '[': {
          ++p;
          --plen;
          const bool negate = at(p) == '^';
          if (negate) {
            ++p;
            --plen;
          }
          bool match = false;
          for (;;) {
            if (at(p) == '\\' && plen >= 2) {
              ++p;
              --plen;
              if (p[0] == s[0]) match = true;
            } else if (at(p) == ']') {
              break;
            } else if (plen == 0) {
              // An unterminated set ends with the pattern.
              --p;
              ++plen;
              break;
            } else if (plen >= 3 && p[1] == '-') {
              int lo = p[0];
              int hi = p[2];
              if (lo > hi) std::swap(lo, hi);
              p += 2;
              plen -= 2;
              if (s[0] >= lo && s[0] <= hi) match = true;
            } else if (p[0] == s[0]) {
              match = true;
            }
            ++p;
            --plen;
          }
          if (negate) match = !match;
          if (!match) return false;
          ++s;
          --slen;
          break;
        }
        case '\\':
          if (plen >= 2) {
            ++p;
            --plen;
          }
          [[fallthrough]];
        default:
          if (p[0] != s[0]) return false;
          ++s;
          --slen;
          break;
      }
      ++p;
      --plen;
      if (slen == 0) {
        while (at(p) == '*') {
          ++p;
          --plen;
        }
        break;
      }
    }
    return plen == 0 && slen == 0;
  }
};

bool GlobMatch(std::string_view p, std::string_view s) { return GlobMatcher::Matches(p, s); }

Reply ExpireTimeError(const Argv& argv) {
  const std::string name = AsciiLowered(argv[0]);
  return Reply::Error("ERR invalid expire time in '" + name + "' command");
}

}  // namespace

Reply Exists(Ctx& ctx, const Argv& argv) {
  int64_t count = 0;
  for (size_t i = 1; i < argv.size(); ++i) {
    if (ctx.Lookup(argv[i]) != nullptr) ++count;
  }
  return Reply::Integer(count);
}

Reply Del(Ctx& ctx, const Argv& argv) {
  int64_t deleted = 0;
  for (size_t i = 1; i < argv.size(); ++i) {
    // An expired key is removed (and its DEL propagated) by the lookup, and does not count.
    if (ctx.Lookup(argv[i]) != nullptr && ctx.db.Erase(argv[i])) ++deleted;
  }
  if (deleted > 0) ctx.PropagateAsIs(argv);
  return Reply::Integer(deleted);
}

Reply Type(Ctx& ctx, const Argv& argv) {
  const Entry* e = ctx.Lookup(argv[1]);
  return Reply::Status(e == nullptr ? "none" : TypeName(e->type()));
}

Reply Expire(Ctx& ctx, const Argv& argv) {
  // The table routes only EXPIRE (6), PEXPIRE (7), EXPIREAT (8) and PEXPIREAT (9) here, in
  // any letter case: the name's length says which.
  const size_t name_len = argv[0].size();
  assert(name_len >= 6 && name_len <= 9);
  const bool seconds = name_len == 6 || name_len == 8;
  const bool relative = name_len == 6 || name_len == 7;

  // Options are parsed before the time, as expireGenericCommand does.
  bool nx = false, xx = false, gt = false, lt = false;
  for (size_t j = 3; j < argv.size(); ++j) {
    if (EqualsNoCase(argv[j], "nx")) {
      nx = true;
    } else if (EqualsNoCase(argv[j], "xx")) {
      xx = true;
    } else if (EqualsNoCase(argv[j], "gt")) {
      gt = true;
    } else if (EqualsNoCase(argv[j], "lt")) {
      lt = true;
    } else {
      return Reply::Error("ERR Unsupported option " + std::string(argv[j].c_str()));
    }
  }
  if (nx && (xx || gt || lt)) {
    return Reply::Error("ERR NX and XX, GT or LT options at the same time are not compatible");
  }
  if (gt && lt) return Reply::Error("ERR GT and LT options at the same time are not compatible");

  const auto parsed = ParseInt64(argv[2]);
  if (!parsed) return Reply::Error(std::string(err::kNotInteger));
  int64_t when = *parsed;
  if (seconds) {
    if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) return ExpireTimeError(argv);
    when *= 1000;
  }
  const int64_t base = relative ? ctx.now_ms : 0;
  if (when > LLONG_MAX - base) return ExpireTimeError(argv);
  when += base;

  Entry* e = ctx.Lookup(argv[1]);
  if (e == nullptr) return Reply::Integer(0);

  const int64_t current = e->expire_at_ms;
  if (nx && current != kNoExpiry) return Reply::Integer(0);
  if (xx && current == kNoExpiry) return Reply::Integer(0);
  // GT treats "no expiry" as infinite, so it always fails on a persistent key; LT succeeds.
  if (gt && (current == kNoExpiry || when <= current)) return Reply::Integer(0);
  if (lt && current != kNoExpiry && when >= current) return Reply::Integer(0);

  // checkAlreadyExpired: a time in the past deletes the key at once, except on a replica,
  // which waits for its master's DEL.
  if (when <= ctx.now_ms && !ctx.server.is_replica()) {
    ctx.db.Erase(argv[1]);
    if (ctx.wants_effects()) ctx.Propagate({"DEL", argv[1]});
    return Reply::Integer(1);
  }
  e->expire_at_ms = when;
  if (ctx.wants_effects()) {  // Build the rewritten command only when somebody records it.
    Argv propagated = argv;
    propagated[0] = "PEXPIREAT";
    propagated[2] = FormatInt64(when);
    ctx.Propagate(std::move(propagated));
  }
  return Reply::Integer(1);
}

Reply Persist(Ctx& ctx, const Argv& argv) {
  Entry* e = ctx.Lookup(argv[1]);
  if (e == nullptr || e->expire_at_ms == kNoExpiry) return Reply::Integer(0);
  e->expire_at_ms = kNoExpiry;
  ctx.PropagateAsIs(argv);
  return Reply::Integer(1);
}

Reply Ttl(Ctx& ctx, const Argv& argv) {
  // TTL and PTTL count from now; EXPIRETIME and PEXPIRETIME give the expiry itself.
  const bool ms = EqualsNoCase(argv[0], "pttl") || EqualsNoCase(argv[0], "pexpiretime");
  const bool absolute = EqualsNoCase(argv[0], "expiretime") || EqualsNoCase(argv[0], "pexpiretime");
  const Entry* e = ctx.Lookup(argv[1]);
  if (e == nullptr) return Reply::Integer(-2);
  if (e->expire_at_ms == kNoExpiry) return Reply::Integer(-1);
  int64_t ttl = absolute ? e->expire_at_ms : e->expire_at_ms - ctx.now_ms;
  if (ttl < 0) ttl = 0;
  return Reply::Integer(ms ? ttl : (ttl + 500) / 1000);
}

Reply Keys(Ctx& ctx, const Argv& argv) {
  // Redis answers in hash-table order; lockstep answers in byte order so output is stable
  // (docs/fidelity.md). Expired keys are skipped but not deleted, as keysCommand does.
  std::vector<Reply> out;
  const bool all = argv[1] == "*";
  for (const std::string& key : ctx.db.SortedKeys()) {
    const Entry* e = ctx.db.Find(key);
    if (Keyspace::IsExpired(*e, ctx.now_ms)) continue;
    if (all || GlobMatch(argv[1], key)) out.push_back(Reply::Bulk(key));
  }
  return Reply::Array(std::move(out));
}

Reply Scan(Ctx& ctx, const Argv& argv) {
  // The cursor is a key hash (Keyspace::ScanBatch; Redis's is a reverse-binary hash-table
  // cursor; both are opaque to clients, both end at 0, and both return every key present for
  // the whole iteration).
  // parseScanCursorOrReply: strtoul, so "-1" is accepted (and wraps), "" is cursor 0; a
  // leading space (which strtoul would skip) is refused.
  char* end = nullptr;
  errno = 0;
  const char* text = argv[1].c_str();
  const unsigned long long cursor = std::strtoull(text, &end, 10);
  const bool leading_space = *text == ' ' || (*text >= '\t' && *text <= '\r');
  if (leading_space || *end != '\0' || errno == ERANGE) {
    return Reply::Error("ERR invalid cursor");
  }
  std::string pattern;
  bool use_pattern = false;
  std::string type_filter;
  int64_t count = 10;
  for (size_t j = 2; j < argv.size(); j += 2) {
    if (j + 1 >= argv.size()) return Reply::Error(std::string(err::kSyntax));
    if (EqualsNoCase(argv[j], "match")) {
      pattern = argv[j + 1];
      use_pattern = pattern != "*";
    } else if (EqualsNoCase(argv[j], "count")) {
      const auto n = ParseInt64(argv[j + 1]);
      if (!n) return Reply::Error(std::string(err::kNotInteger));
      if (*n < 1) return Reply::Error(std::string(err::kSyntax));
      count = *n;
    } else if (EqualsNoCase(argv[j], "type")) {
      type_filter = argv[j + 1];
    } else {
      return Reply::Error(std::string(err::kSyntax));
    }
  }
  uint64_t next = 0;
  const std::vector<std::string> keys =
      ctx.db.ScanBatch(cursor, static_cast<uint64_t>(count), &next);
  std::vector<Reply> found;
  for (const std::string& key : keys) {
    const Entry* e = ctx.Lookup(key);  // Redis's SCAN expires what it meets.
    if (e == nullptr) continue;
    if (use_pattern && !GlobMatch(pattern, key)) continue;
    if (!type_filter.empty() && strcasecmp(type_filter.c_str(), TypeName(e->type())) != 0) {
      continue;
    }
    found.push_back(Reply::Bulk(key));
  }
  return Reply::Array({Reply::Bulk(std::to_string(next)), Reply::Array(std::move(found))});
}

Reply Dbsize(Ctx& ctx, const Argv&) {
  // Like Redis, expired keys that nobody has touched yet still count.
  return Reply::Integer(static_cast<int64_t>(ctx.db.size()));
}

Reply Flush(Ctx& ctx, const Argv& argv) {
  if (argv.size() > 2 ||
      (argv.size() == 2 && !EqualsNoCase(argv[1], "sync") && !EqualsNoCase(argv[1], "async"))) {
    return Reply::Error(std::string(err::kSyntax));
  }
  // signalFlushedDb comes before the keys go: it tells the watchers of keys that exist.
  ctx.server.TouchAllWatchedKeys();
  ctx.db.Clear();
  ctx.PropagateAsIs(argv);
  return Reply::Ok();
}

}  // namespace lockstep::cmd
