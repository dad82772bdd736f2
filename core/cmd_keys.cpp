// Generic key commands (Redis db.c, expire.c).
#include <cassert>
#include <cinttypes>
#include <climits>
#include <cstdlib>
#include <strings.h>

#include "core/commands.h"
#include "core/strings.h"

namespace lockstep::cmd {

namespace {

bool EqualsNoCase(const std::string& a, const char* b) { return strcasecmp(a.c_str(), b) == 0; }

// Redis stringmatchlen: glob-style matching with *, ?, [set], [^set], [a-z] and \ escapes.
bool GlobMatch(std::string_view p, std::string_view s) {
  size_t pi = 0, si = 0;
  while (pi < p.size()) {
    const char c = p[pi];
    if (c == '*') {
      while (pi + 1 < p.size() && p[pi + 1] == '*') ++pi;
      if (pi + 1 == p.size()) return true;
      for (size_t k = si; k <= s.size(); ++k) {
        if (GlobMatch(p.substr(pi + 1), s.substr(k))) return true;
      }
      return false;
    }
    if (si >= s.size()) return false;
    if (c == '?') {
      ++si;
    } else if (c == '[') {
      ++pi;
      const bool negate = pi < p.size() && p[pi] == '^';
      if (negate) ++pi;
      bool match = false;
      while (pi < p.size() && p[pi] != ']') {
        if (p[pi] == '\\' && pi + 1 < p.size()) {
          ++pi;
          if (p[pi] == s[si]) match = true;
        } else if (pi + 2 < p.size() && p[pi + 1] == '-') {
          char lo = p[pi], hi = p[pi + 2];
          if (lo > hi) std::swap(lo, hi);
          if (s[si] >= lo && s[si] <= hi) match = true;
          pi += 2;
        } else if (p[pi] == s[si]) {
          match = true;
        }
        ++pi;
      }
      if (pi == p.size()) --pi;  // Unterminated set: Redis treats the end as the close.
      if (negate) match = !match;
      if (!match) return false;
      ++si;
    } else if (c == '\\' && pi + 1 < p.size()) {
      ++pi;
      if (p[pi] != s[si]) return false;
      ++si;
    } else {
      if (c != s[si]) return false;
      ++si;
    }
    ++pi;
  }
  return si == s.size();
}

Reply ExpireTimeError(const Argv& argv) {
  std::string name = argv[0];
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
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
    if (ctx.effects != nullptr) ctx.Propagate({"DEL", argv[1]});
    return Reply::Integer(1);
  }
  e->expire_at_ms = when;
  if (ctx.effects != nullptr) {  // Build the rewritten command only when somebody records it.
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
  const bool ms = EqualsNoCase(argv[0], "pttl");
  const Entry* e = ctx.Lookup(argv[1]);
  if (e == nullptr) return Reply::Integer(-2);
  if (e->expire_at_ms == kNoExpiry) return Reply::Integer(-1);
  int64_t ttl = e->expire_at_ms - ctx.now_ms;
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
  // The cursor is a position in byte order (Redis's is a reverse-binary hash-table cursor;
  // both are opaque to clients and both end at 0).
  char* end = nullptr;
  errno = 0;
  const unsigned long long cursor = std::strtoull(argv[1].c_str(), &end, 10);
  // strtoul semantics, as parseScanCursorOrReply: "-1" is accepted (and wraps).
  if (argv[1].empty() || *end != '\0' || errno == ERANGE) {
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
  const std::vector<std::string> keys = ctx.db.SortedKeys();
  std::vector<Reply> found;
  size_t pos = static_cast<size_t>(cursor);
  int64_t visited = 0;
  for (; pos < keys.size() && visited < count; ++pos, ++visited) {
    const std::string& key = keys[pos];
    const Entry* e = ctx.Lookup(key);  // Redis's SCAN expires what it meets.
    if (e == nullptr) continue;
    if (use_pattern && !GlobMatch(pattern, key)) continue;
    if (!type_filter.empty() && strcasecmp(type_filter.c_str(), TypeName(e->type())) != 0) {
      continue;
    }
    found.push_back(Reply::Bulk(key));
  }
  const std::string next = pos >= keys.size() ? "0" : std::to_string(pos);
  return Reply::Array({Reply::Bulk(next), Reply::Array(std::move(found))});
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
  ctx.db.Clear();
  ctx.PropagateAsIs(argv);
  return Reply::Ok();
}

}  // namespace lockstep::cmd
