// Redis 7.0's scripting environment (src/eval.c, src/script_lua.c, src/script.c of 7.0.15),
// hosted in Debian's Lua 5.4 (C++ build).
//
// Layout of this file:
//   1. small helpers: 5.1 number rules, rand48, error tables
//   2. HostState: the Lua VM, the script cache, the allocator and the step hook
//   3. the sandbox: read-only proxies, 5.4 -> 5.1 error texts, the Lua 5.1 library functions
//   4. the redis.* API (conversions Redis <-> Lua, redis.call and friends), then the
//      construction of the sandbox from all of the above
//   5. EVAL / EVALSHA / SCRIPT: shebang, compilation (and the choice of a script's global
//      access, see "Direct global access"), KEYS/ARGV, running, converting the result
//
// How the sandbox is protected. Redis 7.0 patches Lua 5.1 with read-only tables and marks _G and
// every table reachable from it read-only. Lua 5.4 has no such flag, so each protected table is
// replaced by an empty proxy whose metatable forwards reads (__index = the real table) and
// refuses writes (__newindex raises "Attempt to modify a readonly table"). rawset, setmetatable,
// getmetatable, rawget, next and pairs are replaced by versions that know the proxies. Globals
// live in a real table that scripts never see; the registry's global table (_ENV of every chunk)
// is the proxy. KEYS and ARGV are stored in the real table by the host before each call.
// Most scripts never write a global, and their compiled code proves it; they get a copy of the
// real table as _ENV and skip the proxy's extra lookups (see "Direct global access").
//
// Determinism. Everything a script can observe must be the same in every run and in every
// process: pairs/next iterate in a fixed order (lua_libs.h, PushKeysInFixedOrder), math.random
// is Redis's rand48 with state owned by this host, table.sort is Lua 5.1's algorithm (5.4's
// picks a pivot from the clock on unbalanced input), and GC finalizers (__gc on tables, which
// Lua 5.1 ignores) are not installed.
//
// C++ exceptions never cross a lua_CFunction boundary: every function handed to Lua is wrapped
// in Guarded<>, which turns a std::exception into a Lua error. Lua errors themselves are C++
// exceptions in this build of Lua, so C++ objects on the stack of a C function are destroyed
// when a Lua error unwinds through it.
#include "core/script_host.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <iterator>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <strings.h>

#include <lua.hpp>

#include "base/ascii.h"
#include "core/lua_libs.h"
#include "core/lua_patterns.h"
#include "core/sha1.h"
#include "core/strings.h"

namespace lockstep {

namespace {

using lualib::FormatNumberLua51;
using lualib::IsProxy;
using lualib::PushKeysInFixedOrder;
using lualib::PushNumberLua51;
using lualib::PushUnproxied;

// ---------------------------------------------------------------------------------------------
// 1. Small helpers
// ---------------------------------------------------------------------------------------------

constexpr char kRedisVersion[] = "7.0.15";
constexpr lua_Integer kRedisVersionNum = 0x07000f;  // 458767

// Replication flags (Redis PROPAGATE_AOF / PROPAGATE_REPL).
constexpr int kReplAof = 1;
constexpr int kReplReplica = 2;
constexpr int kReplAll = kReplAof | kReplReplica;

// Shebang flags (script.c scripts_flags_def).
constexpr uint32_t kFlagNoWrites = 1u << 0;
constexpr uint32_t kFlagAllowOom = 1u << 1;
constexpr uint32_t kFlagAllowStale = 1u << 2;
constexpr uint32_t kFlagNoCluster = 1u << 3;
constexpr uint32_t kFlagAllowCrossSlot = 1u << 4;

// The step hook runs every kHookInterval VM instructions: rarely enough to cost nothing
// measurable, often enough that a runaway script is caught within microseconds of its budget.
constexpr int kHookInterval = 1000;

// Redis 7.0 stops converting a nested script return value when the Lua 5.1 C stack limit
// (LUAI_MAXCSTACK, 8000 slots) is reached: measured live, a self-referencing table gives 7995
// nested one-element arrays and then "-ERR reached lua stack limit".
constexpr int kReplyDepthMax = 7995;

// Lua 5.1's lua_checkstack fails when the stack would exceed LUAI_MAXCSTACK (8000) slots; unpack
// hits it at about 8000 results ("Script check unpack with massive arguments" uses 7999).
constexpr lua_Integer kLua51StackMax = 8000;

constexpr double kTwo53 = 9007199254740992.0;
constexpr double kTwo63 = 9223372036854775808.0;

// C's (long long)d on x86-64: truncation toward zero, and INT64_MIN (the "integer indefinite"
// value of cvttsd2si) for NaN, infinities and anything out of range. Written out because the
// bare cast is undefined behaviour.
int64_t TruncateLikeX86(double d) {
  if (!(d >= -kTwo63 && d < kTwo63)) return INT64_MIN;
  return static_cast<int64_t>(d);
}

// Lua 5.1's luaL_checkint: (int)(ptrdiff_t)lua_tonumber(arg), numeric strings accepted. Lua
// 5.4's luaL_checkinteger would reject 2.5; 5.1 truncates it.
int CheckInt51(lua_State* L, int arg) {
  const lua_Number n = luaL_checknumber(L, arg);
  return static_cast<int>(static_cast<uint32_t>(static_cast<uint64_t>(TruncateLikeX86(n))));
}

int OptInt51(lua_State* L, int arg, int def) {
  return lua_isnoneornil(L, arg) ? def : CheckInt51(L, arg);
}

// lua_tonumber truncated to int, for the redis.* functions that do `int x = lua_tonumber(...)`.
int ToInt51(lua_State* L, int idx) {
  return static_cast<int>(static_cast<uint32_t>(
      static_cast<uint64_t>(TruncateLikeX86(lua_tonumber(L, idx)))));
}

// The text Lua 5.1 would use for a string-or-number value (lua_tolstring): numbers as "%.14g".
// Returns false for other types. Never converts the stack slot in place.
bool ToStringLua51(lua_State* L, int idx, std::string* out) {
  switch (lua_type(L, idx)) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, idx, &len);
      out->assign(s, len);
      return true;
    }
    case LUA_TNUMBER: {
      char buf[32];
      out->assign(buf, FormatNumberLua51(lua_tonumber(L, idx), buf));
      return true;
    }
    default:
      return false;
  }
}

// Pushes the Lua 5.1 string form of a number at idx (or the string itself).
void PushStringLua51(lua_State* L, int idx) {
  if (lua_type(L, idx) == LUA_TNUMBER) {
    char buf[32];
    lua_pushlstring(L, buf, FormatNumberLua51(lua_tonumber(L, idx), buf));
  } else {
    lua_pushvalue(L, idx);
  }
}

// Redis 7.0's luaArgsToRedisArgv: a number argument is sent as snprintf("%.17g", (double)n),
// whichever Lua 5.4 subtype it has. The integral fast path prints the same digits.
void FormatArgNumber(lua_State* L, int idx, std::string* out) {
  double d;
  if (lua_isinteger(L, idx)) {
    const lua_Integer i = lua_tointeger(L, idx);
    if (i >= -static_cast<lua_Integer>(kTwo53) && i <= static_cast<lua_Integer>(kTwo53)) {
      char buf[24];
      const auto r = std::to_chars(buf, buf + sizeof(buf), i);
      out->assign(buf, static_cast<size_t>(r.ptr - buf));
      return;
    }
    d = static_cast<double>(i);
  } else {
    d = lua_tonumber(L, idx);
  }
  if (std::floor(d) == d && std::fabs(d) < 1e17 && !(d == 0 && std::signbit(d))) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof(buf), static_cast<int64_t>(d));
    out->assign(buf, static_cast<size_t>(r.ptr - buf));
    return;
  }
  char buf[64];
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", d);
  out->assign(buf, static_cast<size_t>(n));
}

// Redis strips CR and LF from error and status replies (Debian's CVE-2025-67733 backport does it
// for every error reply); a bare newline would end the reply early on the wire.
std::string MapCrLf(std::string s) {
  for (char& c : s) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return s;
}

// sdscatfmt("%s") stops at the first NUL; so do the C string APIs Redis uses on these paths.
std::string_view UpToNul(std::string_view s) {
  const size_t nul = s.find('\0');
  return nul == std::string_view::npos ? s : s.substr(0, nul);
}

// Pushes Redis's error table {err="CODE message"} (script_lua.c luaPushErrorBuff). buf is
// either "-CODE message" (a Redis error reply) or a bare message, which gets the code "ERR".
void PushErrorTable(lua_State* L, std::string_view buf, bool ignore_stats) {
  std::string_view code = "ERR";
  std::string_view msg = buf;
  if (!buf.empty() && buf[0] == '-') {
    const size_t space = buf.find(' ');
    if (space == std::string_view::npos) {
      msg = buf.substr(1);
    } else {
      code = buf.substr(1, space - 1);
      msg = buf.substr(space + 1);
    }
  }
  // sdstrim(msg, "\r\n"): both ends.
  while (!msg.empty() && (msg.front() == '\r' || msg.front() == '\n')) msg.remove_prefix(1);
  while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n')) msg.remove_suffix(1);
  lua_createtable(L, 0, ignore_stats ? 2 : 1);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addlstring(&b, code.data(), code.size());
  luaL_addchar(&b, ' ');
  luaL_addlstring(&b, msg.data(), msg.size());
  luaL_pushresult(&b);
  lua_setfield(L, -2, "err");
  if (ignore_stats) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "ignore_error_stats_update");
  }
}

// Raises Redis's error table (luaPushError + luaError).
[[noreturn]] void RaiseErrorTable(lua_State* L, std::string_view msg) {
  PushErrorTable(L, msg, false);
  lua_error(L);
  std::abort();
}

// Raises a plain string without position information, as an error raised inside a C API call
// of Redis's Lua (luaG_runerror with a C function running) has none.
[[noreturn]] void RaiseBare(lua_State* L, const char* msg) {
  lua_pushstring(L, msg);
  lua_error(L);
  std::abort();
}

// Lua 5.4's variable attributes (local x <const>, local y <close>) are a syntax error in Lua 5.1:
// Redis answers "unexpected symbol near '<'". They also matter beyond the text: a <close>
// handler runs while an error unwinds, with hooks off, where the step budget could not stop
// it. This small lexer finds the first attribute and returns the line of its '<' (0: none).
int FindAttributeLine(std::string_view src) {
  size_t i = 0;
  int line = 1;
  auto newline = [&]() {  // at src[i] == '\n' or '\r'; "\r\n" and "\n\r" count once
    const char c = src[i++];
    if (i < src.size() && (src[i] == '\n' || src[i] == '\r') && src[i] != c) ++i;
    ++line;
  };
  // Skips a long bracket [==[ ... ]==] starting at src[i] == '['; false if it is not one.
  auto long_bracket = [&]() {
    size_t j = i + 1, level = 0;
    while (j < src.size() && src[j] == '=') ++j, ++level;
    if (j >= src.size() || src[j] != '[') return false;
    i = j + 1;
    while (i < src.size()) {
      if (src[i] == ']') {
        size_t k = i + 1, l = 0;
        while (k < src.size() && src[k] == '=') ++k, ++l;
        if (l == level && k < src.size() && src[k] == ']') {
          i = k + 1;
          return true;
        }
        ++i;
      } else if (src[i] == '\n' || src[i] == '\r') {
        newline();
      } else {
        ++i;
      }
    }
    return true;
  };
  enum class Tok { kLocal, kName, kComma, kLess, kOther };
  struct Token {
    Tok kind;
    int line;
  };
  auto next = [&]() -> Token {
    while (i < src.size()) {
      const char c = src[i];
      if (c == '\n' || c == '\r') {
        newline();
      } else if (c == ' ' || c == '\t' || c == '\f' || c == '\v') {
        ++i;
      } else if (c == '-' && i + 1 < src.size() && src[i + 1] == '-') {
        i += 2;
        if (i < src.size() && src[i] == '[' && long_bracket()) continue;
        while (i < src.size() && src[i] != '\n' && src[i] != '\r') ++i;
      } else if (c == '[' && i + 1 < src.size() && (src[i + 1] == '[' || src[i + 1] == '=')) {
        const int at = line;
        if (long_bracket()) return {Tok::kOther, at};
        ++i;
        return {Tok::kOther, at};
      } else if (c == '"' || c == '\'') {
        const int at = line;
        ++i;
        while (i < src.size() && src[i] != c) {
          if (src[i] == '\\' && i + 1 < src.size()) {
            ++i;
            if (src[i] == '\n' || src[i] == '\r') {
              newline();
              continue;
            }
          } else if (src[i] == '\n' || src[i] == '\r') {
            break;  // unfinished string: the compiler reports it
          }
          ++i;
        }
        ++i;
        return {Tok::kOther, at};
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        const size_t start = i;
        while (i < src.size() &&
               (std::isalnum(static_cast<unsigned char>(src[i])) || src[i] == '_')) {
          ++i;
        }
        return {src.substr(start, i - start) == "local" ? Tok::kLocal : Tok::kName, line};
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        while (i < src.size() && (std::isalnum(static_cast<unsigned char>(src[i])) ||
                                  src[i] == '.' ||
                                  ((src[i] == '+' || src[i] == '-') &&
                                   (src[i - 1] == 'e' || src[i - 1] == 'E' ||
                                    src[i - 1] == 'p' || src[i - 1] == 'P')))) {
          ++i;
        }
        return {Tok::kOther, line};
      } else {
        ++i;
        if (c == ',') return {Tok::kComma, line};
        if (c == '<') return {Tok::kLess, line};
        return {Tok::kOther, line};
      }
    }
    return {Tok::kOther, 0};
  };
  for (Token t = next(); t.line != 0; t = next()) {
    if (t.kind != Tok::kLocal) continue;
    for (;;) {
      if (next().kind != Tok::kName) break;  // "local function" is a name too: then not '<'
      const Token after = next();
      if (after.kind == Tok::kLess) return after.line;
      if (after.kind != Tok::kComma) break;
    }
  }
  return 0;
}

// Compiles like luaL_loadbufferx in text mode, and rejects Lua 5.4's variable attributes the
// way Lua 5.1's parser does: the message comes from compiling a lone '<' at the same line,
// so the chunk name is formatted by Lua itself.
int LoadText(lua_State* L, std::string_view code, const char* chunkname) {
  if (const int line = FindAttributeLine(code); line > 0) {
    const std::string probe = std::string(static_cast<size_t>(line - 1), '\n') + "<";
    const int status = luaL_loadbufferx(L, probe.data(), probe.size(), chunkname, "t");
    assert(status != LUA_OK);
    return status;
  }
  return luaL_loadbufferx(L, code.data(), code.size(), chunkname, "t");
}

// Lua 5.4 words some runtime and syntax errors differently from Lua 5.1, and these texts reach
// clients inside "-ERR user_script:N: ..." replies. This rewrites the known 5.4 forms into 5.1's:
//   attempt to index a nil value (local 'x')  ->  attempt to index local 'x' (a nil value)
//   unexpected symbol near <eof>              ->  unexpected symbol near '<eof>'
//   index is nil                              ->  table index is nil
// Small parsing helpers for Lua51ErrorText: a lower-case word [a-z]+ at pos (its end, or npos).
size_t WordEnd(const std::string& s, size_t pos) {
  size_t i = pos;
  while (i < s.size() && s[i] >= 'a' && s[i] <= 'z') ++i;
  return i == pos ? std::string::npos : i;
}

bool IsOneOf(std::string_view word, std::initializer_list<std::string_view> words) {
  for (std::string_view w : words) {
    if (word == w) return true;
  }
  return false;
}

// "attempt to <verb> a[n] <type> value (<kind> '<name>')" -> 5.1's
// "attempt to <verb> <kind> '<name>' (a <type> value)"; a constant is not named in 5.1.
bool RewriteVariableInfo(std::string* msg) {
  for (size_t p = msg->find("attempt to "); p != std::string::npos;
       p = msg->find("attempt to ", p + 1)) {
    const size_t open = msg->find(" value (", p);
    if (open == std::string::npos) return false;
    const size_t type_start = msg->rfind(' ', open - 1) + 1;
    if (type_start <= p + 11 || WordEnd(*msg, type_start) != open) continue;
    const size_t article_end = type_start - 1;
    const size_t article_start = msg->rfind(' ', article_end - 1) + 1;
    const std::string_view article(msg->data() + article_start, article_end - article_start);
    if (article != "a" && article != "an") continue;
    if (article_start < p + 12) continue;  // no verb
    const std::string verb = msg->substr(p + 11, article_start - 1 - (p + 11));
    if (verb.find_first_not_of("abcdefghijklmnopqrstuvwxyz ") != std::string::npos) continue;
    const size_t kind_start = open + 8;
    const size_t kind_end = WordEnd(*msg, kind_start);
    if (kind_end == std::string::npos || msg->compare(kind_end, 2, " '") != 0) continue;
    const std::string kind = msg->substr(kind_start, kind_end - kind_start);
    if (!IsOneOf(kind, {"global", "local", "method", "field", "upvalue", "constant"})) continue;
    const size_t name_start = kind_end + 2;
    const size_t close = msg->find("')", name_start);
    if (close == std::string::npos) continue;
    const std::string name = msg->substr(name_start, close - name_start);
    const std::string type = msg->substr(type_start, open - type_start);
    const std::string fixed = kind == "constant"
                                  ? "attempt to " + verb + " a " + type + " value"
                                  : "attempt to " + verb + " " + kind + " '" + name + "' (a " +
                                        type + " value)";
    msg->replace(p, close + 2 - p, fixed);
    return true;
  }
  return false;
}

// String arithmetic fails in 5.4's string metamethods with their own wording:
// "attempt to add a 'string' with a 'number'". Lua 5.1 names the operand that is not a number
// (a string that does not convert, or another type).
void RewriteStringArithmetic(std::string* msg) {
  const size_t p = msg->find("attempt to ");
  if (p == std::string::npos) return;
  const size_t op_end = WordEnd(*msg, p + 11);
  if (op_end == std::string::npos || msg->compare(op_end, 4, " a '") != 0) return;
  const std::string_view op(msg->data() + p + 11, op_end - p - 11);
  if (!IsOneOf(op, {"add", "sub", "mul", "mod", "pow", "div", "idiv", "unm"})) return;
  const size_t a_start = op_end + 4;
  const size_t a_end = WordEnd(*msg, a_start);
  if (a_end == std::string::npos || msg->compare(a_end, 10, "' with a '") != 0) return;
  const size_t b_start = a_end + 10;
  const size_t b_end = WordEnd(*msg, b_start);
  if (b_end == std::string::npos || b_end >= msg->size() || (*msg)[b_end] != '\'') return;
  const std::string a = msg->substr(a_start, a_end - a_start);
  const std::string b = msg->substr(b_start, b_end - b_start);
  const std::string culprit =
      a != "number" && a != "string" ? a : (b != "number" && b != "string" ? b : "string");
  msg->replace(p, b_end + 1 - p, "attempt to perform arithmetic on a " + culprit + " value");
}

// Replaces "<prefix>(<words>)" (words: lower case and spaces) by `replacement`.
void RewriteParenthesized(std::string* msg, std::string_view prefix, std::string_view replacement) {
  const size_t p = msg->find(prefix);
  if (p == std::string::npos) return;
  const size_t close = msg->find(')', p + prefix.size());
  if (close == std::string::npos) return;
  const std::string_view words(msg->data() + p + prefix.size(), close - p - prefix.size());
  if (words.find_first_not_of("abcdefghijklmnopqrstuvwxyz ") != std::string_view::npos) return;
  msg->replace(p, close + 1 - p, replacement);
}

std::string Lua51ErrorText(std::string msg) {
  RewriteVariableInfo(&msg);
  RewriteStringArithmetic(&msg);
  for (std::string_view what : {"initial value", "limit", "step"}) {
    // "bad 'for' limit (number expected, got string)" -> "'for' limit must be a number"
    const std::string bad = "bad 'for' " + std::string(what) + " (number expected, got ";
    const size_t p = msg.find(bad);
    if (p == std::string::npos) continue;
    const size_t close = msg.find(')', p + bad.size());
    if (close != std::string::npos) {
      msg.replace(p, close + 1 - p, "'for' " + std::string(what) + " must be a number");
    }
  }
  RewriteParenthesized(&msg, "(thread expected, got ", "(coroutine expected)");
  static const std::pair<std::string_view, std::string_view> kPlain[] = {
      {"field 'integer index'", "field '?'"},
      {"attempt to yield from outside a coroutine",
       "attempt to yield across metamethod/C-call boundary"},
      {" near <eof>", " near '<eof>'"},
  };
  for (const auto& [from, to] : kPlain) {
    if (const size_t p = msg.find(from); p != std::string::npos) msg.replace(p, from.size(), to);
  }
  for (std::string_view what : {"index is nil", "index is NaN"}) {
    const size_t p = msg.find(what);
    if (p != std::string::npos && (p < 6 || msg.compare(p - 6, 6, "table ") != 0)) {
      msg.insert(p, "table ");
    }
  }
  return msg;
}

// Replaces a string error object at idx by its Lua 5.1 wording.
void FixErrorValue(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TSTRING) return;
  size_t len = 0;
  const char* s = lua_tolstring(L, idx, &len);
  const std::string_view text(s, len);
  bool candidate = false;
  for (std::string_view needle : {"attempt to ", " near <eof>", "index is N", "bad 'for' ",
                                  "field 'integer index'", "(thread expected"}) {
    candidate = candidate || text.find(needle) != std::string_view::npos;
  }
  if (!candidate) return;  // the common case: nothing to rewrite
  const std::string fixed = Lua51ErrorText(std::string(s, len));
  lua_pushlstring(L, fixed.data(), fixed.size());
  lua_replace(L, idx);
}

template <int (*F)(lua_State*)>
int Guarded(lua_State* L) {
  const char* what = nullptr;
  try {
    return F(L);
  } catch (const std::bad_alloc&) {
    what = "not enough memory";
  } catch (const std::exception& e) {
    what = e.what();
  }
  return luaL_error(L, "lockstep internal error: %s", what);
}

// Redis's rand48 (src/rand.c): the drand48 recurrence over 48 bits with its own state, so the
// sequence is the same on every platform and in every process.
class Rand48 {
 public:
  int32_t Next() {
    x_ = (kA * x_ + kC) & kMask;
    return static_cast<int32_t>(x_ >> 17);
  }
  void Seed(int32_t seed) { x_ = (uint64_t{static_cast<uint32_t>(seed)} << 16) | 0x330E; }

 private:
  static constexpr uint64_t kA = 0x5DEECE66Dull;
  static constexpr uint64_t kC = 0xB;
  static constexpr uint64_t kMask = (uint64_t{1} << 48) - 1;
  uint64_t x_ = 0x1234ABCD330Eull;
};

// ---------------------------------------------------------------------------------------------
// 2. HostState
// ---------------------------------------------------------------------------------------------

// KEYS or ARGV of one script. A script sees fresh tables holding exactly its arguments; when
// the previous run of the same script left its table as it found it (no metatable, exactly the
// keys 1..len) the table is refilled instead of replaced, and an entry that already holds the
// argument is left alone. That saves two tables of garbage and most string hashing per call.
// No reference to the table can outlive a run: globals are read-only and __gc is never
// installed, so reuse is not observable.
struct ArgTable {
  int ref = LUA_NOREF;
  size_t len = 0;
  bool in_env = false;  // stored in the script's own global table (ScriptEntry::env_ref)
};

// How a script's code reaches the globals (see "Direct global access" below).
enum class GlobalAccess { kProxy, kDirect, kDirectLibraries };

struct ScriptEntry {
  std::string sha;  // 40 lowercase hex digits
  std::string body;
  int fn_ref = LUA_NOREF;
  bool compat = true;  // No shebang: Redis's backward-compatible EVAL mode.
  uint32_t flags = 0;
  GlobalAccess access = GlobalAccess::kProxy;
  // A kDirect* script's own global table (its _ENV): a copy of the real one that holds this
  // script's KEYS and ARGV for good, so running it needs no global assignment.
  int env_ref = LUA_NOREF;
  // The script reads _G, load or loadstring, through which it reaches the real global table;
  // that table's KEYS and ARGV must then be this script's too.
  bool reaches_real_globals = true;
  // False for a straight-line script (see ChunkFacts), which ends on its own.
  bool needs_step_hook = true;
  mutable ArgTable keys;
  mutable ArgTable args;
};

enum class StopReason { kNone, kBudget, kMemory };

struct RunState {
  Ctx* caller = nullptr;
  const ScriptEntry* script = nullptr;
  int resp = 2;  // The script's protocol: RESP2 on every run until redis.setresp(3).
  int repl = kReplAll;
  bool read_only = false;
  StopReason stop = StopReason::kNone;
};

bool TableLayoutMatches(lua_State* L);

// EVAL finds a known script by its body, a few kilobytes sent with every call. Hashing all of
// it costs more than the script's own run, so the hash reads the length, the first and last 64
// bytes and 32 words spread between them; equal hashes are told apart by comparing the bodies.
struct BodyHash {
  size_t operator()(std::string_view s) const {
    constexpr size_t kEdge = 64;
    constexpr size_t kSamples = 32;
    if (s.size() <= 2 * kEdge + kSamples * 8) return std::hash<std::string_view>{}(s);
    uint64_t h = s.size() * 0x9E3779B97F4A7C15ull;
    const auto mix = [&h](const char* p) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      h = (h ^ w) * 0xFF51AFD7ED558CCDull;
      h ^= h >> 32;
    };
    for (size_t i = 0; i < kEdge; i += 8) mix(s.data() + i);
    for (size_t i = s.size() - kEdge; i < s.size(); i += 8) mix(s.data() + i);
    const size_t step = (s.size() - 2 * kEdge) / kSamples;
    for (size_t i = 0; i < kSamples; ++i) mix(s.data() + kEdge + i * step);
    return static_cast<size_t>(h);
  }
};

// Script digests are 40 hex digits of a cryptographic hash: their first 16 bytes are already
// well mixed, so they need no further hashing.
struct ShaHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const {
    if (s.size() < 16) return std::hash<std::string_view>{}(s);
    uint64_t a, b;
    std::memcpy(&a, s.data(), 8);
    std::memcpy(&b, s.data() + 8, 8);
    return static_cast<size_t>(a * 0x9E3779B97F4A7C15ull ^ b);
  }
};

class HostState {
 public:
  HostState(Server& server, uint64_t step_budget, size_t memory_bytes_max)
      : server_(server),
        step_budget_(step_budget),
        memory_bytes_max_(memory_bytes_max),
        mem_limit_(memory_bytes_max) {
    assert(step_budget > 0);
    assert(memory_bytes_max > 0);
    CreateVm();
  }
  ~HostState() { DestroyVm(); }
  HostState(const HostState&) = delete;
  HostState& operator=(const HostState&) = delete;

  Reply Eval(Ctx& ctx, const Argv& argv);
  Reply Script(Ctx& ctx, const Argv& argv);
  uint64_t last_script_steps() const { return last_steps_; }
  bool last_script_ran_out() const { return last_ran_out_; }

  static HostState* Of(lua_State* L) { return *static_cast<HostState**>(lua_getextraspace(L)); }
  // The host of L, or null when L belongs to a lua_State a HostState did not create.
  static HostState* OfAnyState(lua_State* L) {
    void* ud = nullptr;
    return lua_getallocf(L, &ud) == &HostState::Alloc ? static_cast<HostState*>(ud) : nullptr;
  }

  // ScriptBudget::Charge for this host's running script (see core/script_budget.h).
  void Charge(lua_State* L, uint64_t units);

  // --- used by the Lua C functions ---
  Server& server_;
  RunState* run_ = nullptr;
  Rand48 rand48_;
  // The argv of redis.call, one vector per argument count so that the strings keep their
  // buffers from call to call; argv_ points at the one in use.
  std::vector<Argv> argv_by_count_;
  const Argv* argv_ = nullptr;
  const char* arg0_ = nullptr;  // the Lua string of argv_[0] (null when it was a number)
  // Command lookups by the address of the script's command-name string (interned by Lua, so
  // 'hincrby' on line 3 is the same string every call), checked against the name itself in
  // case Lua reused the address for another string.
  struct CommandCacheEntry {
    const char* lua_name = nullptr;
    std::string name;
    const CommandSpec* spec = nullptr;
  };
  CommandCacheEntry command_cache_[32];
  const CommandSpec* LookupCommand();
  bool next_cache_used_ = false;
  bool gc_stopped_ = false;  // a script called collectgarbage("stop")

  // Raises the error that ends a stopped script; from here on the step hook fires (and raises
  // again) on every instruction, so pcall cannot keep the script alive.
  [[noreturn]] void RaiseStop(lua_State* L);

  // Converts the Lua arguments 1..top into argv_ (Redis luaArgsToRedisArgv). On failure
  // returns false with the error message in *err.
  bool BuildArgv(lua_State* L, const char** err);

 private:
  static void* Alloc(void* ud, void* ptr, size_t osize, size_t nsize);
  static void CountHook(lua_State* L, lua_Debug* ar);

  void CreateVm();
  void DestroyVm();
  void BuildSandbox();

  const ScriptEntry* FindBySha(std::string_view sha) const;
  const ScriptEntry* FindByBody(std::string_view body) const;
  // Compiles and caches a script; on failure returns null and sets *error.
  const ScriptEntry* CreateFunction(std::string_view body, Reply* error);
  Reply Run(Ctx& ctx, const ScriptEntry& script, const Argv& argv, size_t numkeys, bool ro);
  Reply ReturnValueToReply(RunState& run);

  // Fills the script's KEYS or ARGV table (see ArgTable) and makes it the global `name`
  // (which: 0 KEYS, 1 ARGV) the script sees: in its own global table, and in the real one when
  // it can reach that.
  void SetArgTable(ArgTable* table, const ScriptEntry& script, int which, const char* name,
                   const Argv& argv, size_t first, size_t count);
  // The registry references of the tables the real global table holds as KEYS and ARGV.
  int current_arg_tables_[2] = {LUA_NOREF, LUA_NOREF};
  bool table_layout_known_ = false;
  Reply ErrorToReply(RunState& run, int status);

  const uint64_t step_budget_;
  const size_t memory_bytes_max_;

  lua_State* L_ = nullptr;
  int globals_ref_ = LUA_NOREF;       // The real global table (never seen by scripts).

  // Allocator state. The cap is enforced only while a script runs, so host code outside a
  // protected call never sees an allocation failure.
  size_t mem_used_ = 0;
  size_t mem_limit_;
  bool mem_enforce_ = false;

  // The budget spent by the running script (ScriptBudget units: instructions counted by the
  // hook, plus the charges of library functions and VM operations). Charges count only while
  // budget_live_, that is inside the script's protected call: the host's own work before and
  // after it (building the reply) must never raise the stop.
  uint64_t steps_ = 0;
  uint64_t last_steps_ = 0;
  bool last_ran_out_ = false;  // The last EVAL was stopped by the step budget.
  bool budget_live_ = false;
  int hook_count_ = kHookInterval;

  std::unordered_map<std::string, ScriptEntry, ShaHash, std::equal_to<>> scripts_;
  std::unordered_map<std::string_view, const ScriptEntry*, BodyHash> by_body_;
};

void* HostState::Alloc(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto* host = static_cast<HostState*>(ud);
  const size_t old = ptr == nullptr ? 0 : osize;
  if (nsize == 0) {
    host->mem_used_ -= old;
    std::free(ptr);
    return nullptr;
  }
  if (nsize > old && host->mem_enforce_ && host->mem_used_ - old + nsize > host->mem_limit_) {
    // The script's heap (live data and not yet collected garbage, whose amount the GC's
    // deterministic pacing decides) reached the cap: the script is stopped, whether or not the
    // failing call could have been caught (string.rep reports "not enough memory" as an
    // ordinary error). A little room is left to unwind and build the error.
    if (host->run_ != nullptr && host->run_->stop == StopReason::kNone) {
      host->run_->stop = StopReason::kMemory;
      host->mem_limit_ = host->memory_bytes_max_ + std::max<size_t>(host->memory_bytes_max_ / 8,
                                                                    size_t{1} << 20);
    }
    return nullptr;
  }
  void* p = std::realloc(ptr, nsize);
  if (p == nullptr) return nullptr;
  host->mem_used_ = host->mem_used_ - old + nsize;
  return p;
}

void HostState::CountHook(lua_State* L, lua_Debug*) {
  HostState* host = Of(L);
  RunState* run = host->run_;
  if (run == nullptr) return;
  if (run->stop != StopReason::kNone) host->RaiseStop(L);
  host->steps_ += static_cast<uint64_t>(host->hook_count_);
  if (host->steps_ > host->step_budget_) {
    run->stop = StopReason::kBudget;
    host->RaiseStop(L);
  }
}

void HostState::Charge(lua_State* L, uint64_t units) {
  RunState* run = run_;
  if (run == nullptr || !budget_live_) return;
  if (run->stop != StopReason::kNone) RaiseStop(L);
  steps_ = units > UINT64_MAX - steps_ ? UINT64_MAX : steps_ + units;
  if (steps_ > step_budget_) {
    run->stop = StopReason::kBudget;
    RaiseStop(L);
  }
}

// The VM's charges for work no instruction count shows (core/lua-patches/0002): '..' building a
// long string, '==' and '<' of long strings, indexing a table with a long string key.
void ChargeVmBytes(lua_State* L, size_t bytes) { ScriptBudget::ChargeBytes(L, bytes); }

void HostState::RaiseStop(lua_State* L) {
  // Like Redis after SCRIPT KILL: the hook now fires on every instruction, so a pcall that
  // catches this error cannot keep the script alive.
  lua_sethook(L, CountHook, LUA_MASKCOUNT, 1);
  RaiseErrorTable(L, run_ != nullptr && run_->stop == StopReason::kMemory
                         ? "-ERR lockstep: script memory cap exceeded"
                         : "-BUSY lockstep: script step budget exceeded");
}

// The pattern matcher's meter. A matcher step (one pattern item tried at one position) takes
// about twice as long as a VM instruction, so it costs two units of the script budget: a
// pathological pattern then stops after about as much CPU time as a runaway loop.
constexpr uint64_t kUnitsPerMatcherStep = 2;
void ChargePatternSteps(lua_State* L, uint64_t steps) {
  ScriptBudget::Charge(L, steps * kUnitsPerMatcherStep);
}
constexpr luapattern::MatchMeter kPatternMeter{&ChargePatternSteps};

void HostState::DestroyVm() {
  if (L_ != nullptr) lua_close(L_);
  L_ = nullptr;
  globals_ref_ = LUA_NOREF;
  current_arg_tables_[0] = current_arg_tables_[1] = LUA_NOREF;
  scripts_.clear();
  by_body_.clear();
  assert(mem_used_ == 0);
}

int LuaPanic(lua_State* L) {
  const char* msg = lua_tostring(L, -1);
  std::fprintf(stderr, "lockstep: unprotected Lua error: %s\n", msg != nullptr ? msg : "?");
  std::abort();
}

// The VM's charges go to ChargeVmBytes: one pointer for the whole process (the patch's hook is
// a global), set once, thread-safely, by whichever host comes first.
void InstallVmCharge() {
  static const bool installed = [] {
    lockstep_lua_charge = &ChargeVmBytes;
    return true;
  }();
  (void)installed;
}

void HostState::CreateVm() {
  assert(L_ == nullptr);
  L_ = lua_newstate(&HostState::Alloc, this);
  if (L_ == nullptr) throw std::bad_alloc();
  *static_cast<HostState**>(lua_getextraspace(L_)) = this;
  lua_atpanic(L_, LuaPanic);
  InstallVmCharge();
  hook_count_ = static_cast<int>(std::min<uint64_t>(kHookInterval, step_budget_));
  BuildSandbox();
  table_layout_known_ = TableLayoutMatches(L_);
  assert(lua_gettop(L_) == 0);
}

// EVAL's lookup. While few scripts are cached (a lock protocol has a handful, of different
// lengths), comparing lengths and then the one body of the same length costs less than hashing
// the body; with more, the hash table.
const ScriptEntry* HostState::FindByBody(std::string_view body) const {
  constexpr size_t kScanMax = 8;
  if (by_body_.size() <= kScanMax) {
    for (const auto& [known, entry] : by_body_) {
      if (known.size() == body.size() && known == body) return entry;
    }
    return nullptr;
  }
  const auto it = by_body_.find(body);
  return it == by_body_.end() ? nullptr : it->second;
}

const ScriptEntry* HostState::FindBySha(std::string_view sha) const {
  if (sha.size() != 40) return nullptr;
  char lower[40];
  for (size_t i = 0; i < 40; ++i) {
    const char c = sha[i];
    lower[i] = c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  }
  auto it = scripts_.find(std::string_view(lower, 40));
  return it == scripts_.end() ? nullptr : &it->second;
}

// ---------------------------------------------------------------------------------------------
// 3. The sandbox
// ---------------------------------------------------------------------------------------------

int CallInner(lua_State* L, int nresults);

// The registry keys of the sandbox's private tables.
const char kApparentMetatableKey = 0;  // proxy -> what getmetatable(proxy) returns
const char kShownMetatableKey = 0;     // real metatable -> its read-only proxy (string's)
const char kNextCacheKey = 0;          // table -> traversal snapshot for next()

// next()'s snapshots: a table with weak keys, replaced after every script that used it.
void NewNextCache(lua_State* L) {
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kNextCacheKey);
}

int ReadonlyNewindex(lua_State* L) { return luaL_error(L, "Attempt to modify a readonly table"); }

// luaProtectedTableError: the __index of the global table.
int MissingGlobal(lua_State* L) {
  if (lua_gettop(L) != 2) {
    return luaL_error(L, "Wrong number of arguments to luaProtectedTableError");
  }
  std::string name;
  if (!ToStringLua51(L, 2, &name)) {
    return luaL_error(L, "Second argument to luaProtectedTableError must be a string or number");
  }
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                    name.c_str());
}

// Replaces the table at idx by a read-only proxy of it (the proxy is left at idx).
void MakeProxy(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  lua_newtable(L);                 // proxy
  lua_createtable(L, 0, 2);        // its metatable
  lua_pushvalue(L, idx);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, Guarded<ReadonlyNewindex>);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, -2);
  lualib::RegisterProxy(L, -1, idx);
  lua_replace(L, idx);
}

// --- base library, Lua 5.1 flavour ---

int Lua51Assert(lua_State* L) {
  luaL_checkany(L, 1);
  if (lua_toboolean(L, 1)) return lua_gettop(L);
  if (lua_isnoneornil(L, 2)) return luaL_error(L, "%s", "assertion failed!");
  std::string msg;
  if (!ToStringLua51(L, 2, &msg)) luaL_typeerror(L, 2, "string");
  return luaL_error(L, "%s", msg.c_str());
}

int Lua51Error(lua_State* L) {
  const int level = OptInt51(L, 2, 1);
  lua_settop(L, 1);
  const int t = lua_type(L, 1);
  if ((t == LUA_TSTRING || t == LUA_TNUMBER) && level > 0) {
    // Lua 5.1 adds the position to numbers too: error(5) gives "user_script:1: 5".
    luaL_where(L, level);
    PushStringLua51(L, 1);
    lua_concat(L, 2);
  }
  return lua_error(L);
}

int Lua51Tostring(lua_State* L) {
  luaL_checkany(L, 1);
  if (lua_type(L, 1) == LUA_TNUMBER) {
    PushStringLua51(L, 1);
    return 1;
  }
  luaL_tolstring(L, 1, nullptr);
  return 1;
}

// Lua 5.1's string -> number conversion (luaO_str2d): strtod over the C string (so "inf",
// "nan" and hex floats are numbers), then only trailing spaces may follow.
bool Str2dLua51(const char* s, double* out) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  if (end == s) return false;
  if (*end == 'x' || *end == 'X') v = static_cast<double>(std::strtoul(s, &end, 16));
  while (*end != '\0' && std::isspace(static_cast<unsigned char>(*end))) ++end;
  if (*end != '\0') return false;
  *out = v;
  return true;
}

int Lua51Tonumber(lua_State* L) {
  const int base = OptInt51(L, 2, 10);
  if (lua_type(L, 1) == LUA_TSTRING) ScriptBudget::ChargeChars(L, lua_rawlen(L, 1));
  if (base == 10) {
    luaL_checkany(L, 1);
    if (lua_type(L, 1) == LUA_TNUMBER) {
      lua_settop(L, 1);
      return 1;
    }
    double d;
    if (lua_type(L, 1) == LUA_TSTRING && Str2dLua51(lua_tostring(L, 1), &d)) {
      PushNumberLua51(L, d);
      return 1;
    }
  } else {
    std::string s;
    if (!ToStringLua51(L, 1, &s)) luaL_typeerror(L, 1, "string");
    luaL_argcheck(L, 2 <= base && base <= 36, 2, "base out of range");
    char* end = nullptr;
    const unsigned long n = std::strtoul(s.c_str(), &end, base);
    if (end != s.c_str()) {
      while (std::isspace(static_cast<unsigned char>(*end))) ++end;
      if (*end == '\0') {
        PushNumberLua51(L, static_cast<double>(n));
        return 1;
      }
    }
  }
  lua_pushnil(L);
  return 1;
}

int Lua51Gcinfo(lua_State* L) {
  lua_pushinteger(L, lua_gc(L, LUA_GCCOUNT, 0));
  return 1;
}

// collectgarbage with Lua 5.1's options only; the work is done by 5.4's (upvalue 1).
int Lua51Collectgarbage(lua_State* L) {
  static const char* const kOptions[] = {"stop",  "restart",  "collect",    "count",
                                         "step",  "setpause", "setstepmul", nullptr};
  const int option = luaL_checkoption(L, 1, "collect", kOptions);
  if (option == 0) HostState::Of(L)->gc_stopped_ = true;
  // A collection ("collect", or "step", which may finish a cycle) traverses the whole heap:
  // charged as scanning it.
  if (option == 2 || option == 4) {
    ScriptBudget::ChargeBytes(L, static_cast<uint64_t>(lua_gc(L, LUA_GCCOUNT)) * 1024);
  }
  return CallInner(L, LUA_MULTRET);
}

int Lua51Unpack(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PushUnproxied(L, 1);
  lua_replace(L, 1);
  const lua_Integer i = OptInt51(L, 2, 1);
  const lua_Integer e =
      lua_isnoneornil(L, 3) ? static_cast<lua_Integer>(lua_rawlen(L, 1)) : CheckInt51(L, 3);
  if (i > e) return 0;
  const lua_Integer n = e - i + 1;
  if (n <= 0 || lua_gettop(L) + n > kLua51StackMax || !lua_checkstack(L, static_cast<int>(n))) {
    return luaL_error(L, "too many results to unpack");
  }
  for (lua_Integer k = i; k <= e; ++k) lua_rawgeti(L, 1, k);
  return static_cast<int>(n);
}

int Lua51IpairsAux(lua_State* L) {
  const lua_Integer i = CheckInt51(L, 2) + static_cast<lua_Integer>(1);
  lua_pushinteger(L, i);
  if (lua_rawgeti(L, 1, i) == LUA_TNIL) return 0;
  return 2;
}

int Lua51Ipairs(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushcfunction(L, Guarded<Lua51IpairsAux>);
  PushUnproxied(L, 1);
  lua_pushinteger(L, 0);
  return 3;
}

// rawequal, as Lua 5.4's (upvalue 1), charged for comparing two long strings of equal length
// (the VM's own '==' is charged by core/lua-patches/0002; raw equality is not).
int Lua51Rawequal(lua_State* L) {
  if (lua_type(L, 1) == LUA_TSTRING && lua_type(L, 2) == LUA_TSTRING &&
      lua_rawlen(L, 1) == lua_rawlen(L, 2)) {
    ScriptBudget::ChargeBytes(L, lua_rawlen(L, 1));
  }
  return CallInner(L, LUA_MULTRET);
}

int Lua51Rawget(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  lua_settop(L, 2);
  PushUnproxied(L, 1);
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  return 1;
}

int Lua51Rawset(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  luaL_checkany(L, 3);
  if (IsProxy(L, 1)) RaiseBare(L, "Attempt to modify a readonly table");
  lua_settop(L, 3);
  lua_rawset(L, 1);
  return 1;
}

int Lua51Getmetatable(lua_State* L) {
  luaL_checkany(L, 1);
  if (IsProxy(L, 1)) {
    lua_rawgetp(L, LUA_REGISTRYINDEX, &kApparentMetatableKey);
    lua_pushvalue(L, 1);
    lua_rawget(L, -2);
    return 1;
  }
  if (!lua_getmetatable(L, 1)) {
    lua_pushnil(L);
    return 1;
  }
  // A protected metatable (the string metatable) is shown as its read-only proxy.
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kShownMetatableKey);
  lua_pushvalue(L, -2);
  if (lua_rawget(L, -2) != LUA_TNIL) return 1;
  lua_pop(L, 2);
  if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL) return 1;
  return 1;  // the metatable itself
}

int Lua51Setmetatable(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  const int t = lua_type(L, 2);
  luaL_argcheck(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table expected");
  if (IsProxy(L, 1)) RaiseBare(L, "Attempt to modify a readonly table");
  if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL) {
    return luaL_error(L, "cannot change a protected metatable");
  }
  lua_settop(L, 2);
  // Lua 5.1 ignores __gc on tables; Lua 5.4 would run it at a GC cycle of some later script.
  // A table is marked for finalization only if __gc is present when setmetatable runs, so the
  // field is hidden for the duration of the call (the script's metatable is left unchanged).
  bool had_gc = false;
  if (t == LUA_TTABLE) {
    if (IsProxy(L, 2)) RaiseBare(L, "Attempt to modify a readonly table");
    lua_pushliteral(L, "__gc");
    had_gc = lua_rawget(L, 2) != LUA_TNIL;
    if (had_gc) {
      lua_pushliteral(L, "__gc");
      lua_pushnil(L);
      lua_rawset(L, 2);
    }
  }
  lua_pushvalue(L, 2);
  lua_setmetatable(L, 1);
  if (had_gc) {
    lua_pushliteral(L, "__gc");
    lua_pushvalue(L, 3);
    lua_rawset(L, 2);
  }
  lua_settop(L, 1);
  return 1;
}

// pairs: Lua 5.1 iterates the array part and then the hash part in node order, which in Lua
// 5.4 depends on a per-process random seed. Here the keys are snapshotted in lockstep's fixed
// order when the loop starts; keys deleted during the loop are skipped, as Lua allows.
// Upvalues: 1 table, 2 key array, 3 position, 4 count.
int PairsIter(lua_State* L) {
  lua_Integer pos = lua_tointeger(L, lua_upvalueindex(3));
  const lua_Integer n = lua_tointeger(L, lua_upvalueindex(4));
  while (pos < n) {
    ++pos;
    lua_rawgeti(L, lua_upvalueindex(2), pos);  // key
    lua_pushvalue(L, -1);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) {
      lua_pushinteger(L, pos);
      lua_replace(L, lua_upvalueindex(3));
      return 2;
    }
    lua_pop(L, 2);
  }
  lua_pushinteger(L, pos);
  lua_replace(L, lua_upvalueindex(3));
  lua_pushnil(L);
  return 1;
}

int Lua51Pairs(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  PushUnproxied(L, 1);                       // upvalue 1
  const int n = PushKeysInFixedOrder(L, -1);  // upvalue 2
  lua_pushinteger(L, 0);                     // upvalue 3
  lua_pushinteger(L, n);                     // upvalue 4
  lua_pushcclosure(L, Guarded<PairsIter>, 4);
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

// next(t, k) in the same fixed order. A snapshot per table (in a weak-keyed registry table,
// cleared after every script) makes a whole traversal O(n log n); a key that is not where the
// snapshot expects it is looked up, and a key that is not in the table is an error, as in Lua.
int Lua51Next(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  PushUnproxied(L, 1);
  lua_replace(L, 1);
  HostState::Of(L)->next_cache_used_ = true;
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kNextCacheKey);  // 3: cache
  lua_pushvalue(L, 1);
  lua_rawget(L, 3);                                   // 4: snapshot {keys, pos, n} or nil
  lua_Integer pos = 0;
  lua_Integer n = 0;
  bool found = false;
  if (!lua_isnil(L, 2) && lua_istable(L, 4)) {
    lua_rawgeti(L, 4, 2);
    pos = lua_tointeger(L, -1);
    lua_rawgeti(L, 4, 3);
    n = lua_tointeger(L, -1);
    lua_pop(L, 2);
    lua_rawgeti(L, 4, 1);  // 5: keys
    if (pos >= 1 && pos <= n) {
      lua_rawgeti(L, 5, pos);
      found = lua_rawequal(L, -1, 2);
      lua_pop(L, 1);
    }
  }
  if (!found) {
    lua_settop(L, 3);
    lua_createtable(L, 3, 0);  // 4: new snapshot
    n = PushKeysInFixedOrder(L, 1);
    lua_pushvalue(L, -1);
    lua_rawseti(L, 4, 1);      // 5: keys
    lua_pushinteger(L, n);
    lua_rawseti(L, 4, 3);
    lua_pushvalue(L, 1);
    lua_pushvalue(L, 4);
    lua_rawset(L, 3);
    pos = 0;
    if (!lua_isnil(L, 2)) {
      for (lua_Integer i = 1; i <= n && pos == 0; ++i) {
        lua_rawgeti(L, 5, i);
        if (lua_rawequal(L, -1, 2)) pos = i;
        lua_pop(L, 1);
      }
      if (pos == 0) RaiseBare(L, "invalid key to 'next'");
    }
  }
  while (pos < n) {
    ++pos;
    lua_rawgeti(L, 5, pos);
    lua_pushvalue(L, -1);
    if (lua_rawget(L, 1) != LUA_TNIL) {
      lua_pushinteger(L, pos);
      lua_rawseti(L, 4, 2);
      return 2;
    }
    lua_pop(L, 2);
  }
  lua_pushinteger(L, pos);
  lua_rawseti(L, 4, 2);
  lua_pushnil(L);
  return 1;
}

// load(func [, chunkname]): Lua 5.1's load takes only a reader function. Chunks are text only
// and get the sandbox's global proxy as _ENV (the registry's global table).
const char* LoadReader(lua_State* L, void*, size_t* size) {
  luaL_checkstack(L, 2, "too many nested functions");
  lua_pushvalue(L, 1);
  lua_call(L, 0, 1);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    *size = 0;
    return nullptr;
  }
  if (lua_type(L, -1) != LUA_TSTRING && lua_type(L, -1) != LUA_TNUMBER) {
    luaL_error(L, "reader function must return a string");
  }
  PushStringLua51(L, -1);
  lua_replace(L, 3);
  lua_pop(L, 1);
  const char* piece = lua_tolstring(L, 3, size);
  // A reader that never returns nil must still end: each call, and each byte of source it
  // hands over (compiled later, at one unit per byte, and kept outside the Lua heap until then),
  // is charged now.
  ScriptBudget::Charge(L, ScriptBudget::kReaderCallUnits + *size);
  return piece;
}

int LoadResult(lua_State* L, int status) {
  if (status == LUA_OK) return 1;
  FixErrorValue(L, -1);
  lua_pushnil(L);
  lua_insert(L, -2);
  return 2;
}

int Lua51Load(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  std::string name = "=(load)";
  if (!lua_isnoneornil(L, 2) && !ToStringLua51(L, 2, &name)) luaL_typeerror(L, 2, "string");
  lua_settop(L, 3);
  // The pieces are collected first so that the whole text can be checked (LoadText).
  std::string chunk;
  size_t size = 0;
  while (const char* piece = LoadReader(L, nullptr, &size)) {
    if (size == 0) break;
    chunk.append(piece, size);
  }
  return LoadResult(L, LoadText(L, chunk, name.c_str()));
}

int Lua51Loadstring(lua_State* L) {
  std::string chunk;
  if (!ToStringLua51(L, 1, &chunk)) luaL_typeerror(L, 1, "string");
  std::string name = chunk;
  if (!lua_isnoneornil(L, 2) && !ToStringLua51(L, 2, &name)) luaL_typeerror(L, 2, "string");
  ScriptBudget::Charge(L, chunk.size());  // compiling: one unit per byte of source
  return LoadResult(L, LoadText(L, chunk, name.c_str()));
}

// Redis's pcall (luaRedisPcall): an error table raised by redis.call is returned as its err
// string. A script stopped by the step budget or the memory cap cannot be caught.
int RedisPcall(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc == 0) {
    // Redis calls its own placeholder boolean in this case.
    lua_pushboolean(L, 0);
    lua_pushliteral(L, "attempt to call a boolean value");
    return 2;
  }
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != LUA_OK) {
    HostState* host = HostState::Of(L);
    if (host->run_ != nullptr && host->run_->stop != StopReason::kNone) host->RaiseStop(L);
    ScriptBudget::Charge(L, ScriptBudget::kCaughtErrorUnits);
    lua_remove(L, 1);
    FixErrorValue(L, -1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) lua_replace(L, -2);  // else the nil stays, as in Redis
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

// xpcall (Lua 5.1: no arguments for f). The message handler is wrapped: a script stopped by
// the step budget or the memory cap skips it. That matters because Lua disables hooks while
// the handler of an error raised by a hook runs, so a handler that loops would never be
// stopped.
int XpcallHandler(lua_State* L) {
  HostState* host = HostState::Of(L);
  if (host->run_ != nullptr && host->run_->stop != StopReason::kNone) return 1;
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

int Lua51Xpcall(lua_State* L) {
  luaL_checkany(L, 2);
  lua_settop(L, 2);
  lua_pushcclosure(L, Guarded<XpcallHandler>, 1);  // [f, handler]
  lua_insert(L, 1);                                 // [handler, f]
  const int status = lua_pcall(L, 0, LUA_MULTRET, 1);
  HostState* host = HostState::Of(L);
  if (status != LUA_OK && host->run_ != nullptr && host->run_->stop != StopReason::kNone) {
    host->RaiseStop(L);
  }
  if (status != LUA_OK) ScriptBudget::Charge(L, ScriptBudget::kCaughtErrorUnits);
  lua_pushboolean(L, status == LUA_OK);
  lua_replace(L, 1);
  return lua_gettop(L);
}

// coroutine.create and coroutine.wrap: Lua 5.1 refuses a C function; 5.4 would run it.
// Each new coroutine is charged kCoroutineUnits (core/script_budget.h).
int Lua51CoroutineCreate(lua_State* L) {
  luaL_argcheck(L, lua_isfunction(L, 1) && !lua_iscfunction(L, 1), 1, "Lua function expected");
  ScriptBudget::Charge(L, ScriptBudget::kCoroutineUnits);
  return CallInner(L, 1);
}

// coroutine.yield as Lua 5.4's (luaB_yield), charged kYieldUnits: a yield and the resume it
// returns to cost far more than an instruction (in this C++ build of Lua the yield unwinds the
// C function as an exception), and a coroutine that yields forever to a loop that resumes it
// forever must still exhaust the budget quickly.
int CoroutineYield(lua_State* L) {
  ScriptBudget::Charge(L, ScriptBudget::kYieldUnits);
  return lua_yield(L, lua_gettop(L));
}

int Lua51CoroutineRunning(lua_State* L) {
  if (lua_pushthread(L)) {
    lua_pushnil(L);  // Lua 5.1 returns nil in the main thread.
  }
  return 1;
}

// select with Lua 5.1's luaL_checkint: the index is cut to a C int, so select(2^31, ...) is
// select(-2^31, ...) and fails with "index out of range" (Lua 5.4 returns nothing), and
// select(2.5, ...) truncates (5.4: "number has no integer representation").
int Lua51Select(lua_State* L) {
  const int n = lua_gettop(L);
  if (lua_type(L, 1) == LUA_TSTRING && *lua_tostring(L, 1) == '#') {
    lua_pushinteger(L, n - 1);
    return 1;
  }
  int64_t i = CheckInt51(L, 1);
  if (i < 0) {
    i += n;
  } else if (i > n) {
    i = n;
  }
  luaL_argcheck(L, 1 <= i, 1, "index out of range");
  return n - static_cast<int>(i);
}

// --- calling Lua 5.4's own C functions from a wrapper ---

// A wrapper that fixes arguments and then calls 5.4's function (upvalue 1) would make that
// function's own errors look wrong: called from C, "bad argument #1 to 'len'" becomes
// "bad argument #1 to 'string.len'" without the script position. The wrappers therefore call it
// in protected mode with this message handler (upvalue 1: the same function), which marks
// errors raised by that function itself, and re-raise them in the form Lua 5.1 gives.
const char kInnerErrorMarker = 0;

int InnerErrorHandler(lua_State* L) {
  lua_Debug ar;
  if (lua_type(L, 1) == LUA_TSTRING && lua_getstack(L, 1, &ar) != 0 &&
      lua_getinfo(L, "f", &ar) != 0) {
    const bool from_inner = lua_rawequal(L, -1, lua_upvalueindex(1));
    lua_pop(L, 1);
    if (from_inner) {
      lua_createtable(L, 2, 0);
      lua_pushvalue(L, 1);
      lua_rawseti(L, -2, 1);
      lua_pushlightuserdata(L, const_cast<char*>(&kInnerErrorMarker));
      lua_rawseti(L, -2, 2);
      return 1;
    }
  }
  lua_settop(L, 1);
  return 1;
}

// Rewrites "bad argument #N to 'string.f' (...)" as Lua 5.1 words it for a call of f from a
// script: the short name, and for a method call (s:f()) the argument count without self.
std::string FixArgumentError(lua_State* L, std::string msg) {
  constexpr std::string_view kPrefix = "bad argument #";
  if (msg.compare(0, kPrefix.size(), kPrefix) != 0) return msg;
  size_t p = kPrefix.size();
  int n = 0;
  while (p < msg.size() && std::isdigit(static_cast<unsigned char>(msg[p]))) {
    n = n * 10 + (msg[p++] - '0');
  }
  const size_t name_start = msg.find(" to '", p);
  if (name_start == std::string::npos) return msg;
  const size_t name_end = msg.find('\'', name_start + 5);
  if (name_end == std::string::npos) return msg;
  std::string name = msg.substr(name_start + 5, name_end - name_start - 5);
  const size_t dot = name.rfind('.');
  if (dot != std::string::npos) name = name.substr(dot + 1);
  std::string rest = msg.substr(name_end + 1);  // " (reason)"
  if (name == "char" && rest == " (value out of range)") rest = " (invalid value)";
  lua_Debug ar;
  const bool named = lua_getstack(L, 0, &ar) != 0 && lua_getinfo(L, "n", &ar) != 0;
  if (!named || ar.name == nullptr) name = "?";  // called from C (pcall(string.len)): no name
  if (named && ar.namewhat != nullptr && std::strcmp(ar.namewhat, "method") == 0) {
    --n;
    if (n == 0) {
      const size_t open = rest.find('(');
      const std::string reason =
          open == std::string::npos ? rest : rest.substr(open + 1, rest.size() - open - 2);
      return "calling '" + name + "' on bad self (" + reason + ")";
    }
  }
  return "bad argument #" + std::to_string(n) + " to '" + name + "'" + rest;
}

// Calls upvalue 1 with everything on the stack as arguments, upvalue 2 being its
// InnerErrorHandler; returns the number of results, which are left on the stack.
int CallInner(lua_State* L, int nresults) {
  const int top = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_rotate(L, 1, 2);
  if (lua_pcall(L, top, nresults, 1) == LUA_OK) {
    lua_remove(L, 1);
    return lua_gettop(L);
  }
  HostState* host = HostState::Of(L);
  if (host->run_ != nullptr && host->run_->stop != StopReason::kNone) host->RaiseStop(L);
  if (lua_type(L, -1) == LUA_TTABLE) {
    lua_rawgeti(L, -1, 2);
    const bool marked = lua_touserdata(L, -1) == &kInnerErrorMarker;
    lua_pop(L, 1);
    if (marked) {
      lua_rawgeti(L, -1, 1);
      const std::string msg = FixArgumentError(L, lua_tostring(L, -1));
      luaL_where(L, 1);
      lua_pushlstring(L, msg.data(), msg.size());
      lua_concat(L, 2);
    }
  }
  return lua_error(L);
}

// Pushes a closure of wrapper over field `name` of table src, with the upvalues CallInner needs
// and, when extra >= 0, the integer extra as upvalue 3.
void PushInnerWrapper(lua_State* L, int src, const char* name, lua_CFunction wrapper,
                      lua_Integer extra = -1) {
  src = lua_absindex(L, src);
  lua_getfield(L, src, name);
  assert(lua_isfunction(L, -1));
  lua_pushvalue(L, -1);
  lua_pushcclosure(L, Guarded<InnerErrorHandler>, 1);
  int n = 2;
  if (extra >= 0) {
    lua_pushinteger(L, extra);
    ++n;
  }
  lua_pushcclosure(L, wrapper, n);
}

// --- string, Lua 5.1 flavour ---

// Lua 5.1's string functions read numeric arguments with luaL_checkint (a float is truncated);
// Lua 5.4's reject 2.5 as an index. This wrapper truncates those arguments the 5.1 way and calls
// 5.4's function (upvalue 1); upvalue 3 is the bit mask of numeric argument positions (bit i
// for argument i; bit 31 also stands for every later one). A number given as a string argument
// needs nothing: lockstep's Lua converts it with "%.14g" as 5.1 does.
//
// Bit 0 of the mask (kChargeResults; no argument has position 0) asks for the work to be
// charged to the script's budget after the call, by the size of the results: the characters of
// the strings it returns and one element per other result (string.byte returns one number per
// byte).
constexpr uint32_t kChargeResults = 1u;

int Lua51StringCall(lua_State* L) {
  const auto numeric = static_cast<uint32_t>(lua_tointeger(L, lua_upvalueindex(3)));
  const int top = lua_gettop(L);
  for (int i = 1; i <= top; ++i) {
    const bool numeric_arg = ((numeric >> std::min(i, 31)) & 1u) != 0;
    if (numeric_arg && lua_type(L, i) == LUA_TNUMBER && !lua_isinteger(L, i)) {
      lua_pushinteger(L, static_cast<int>(static_cast<uint32_t>(
                             static_cast<uint64_t>(TruncateLikeX86(lua_tonumber(L, i))))));
      lua_replace(L, i);
    }
  }
  const int nresults = CallInner(L, LUA_MULTRET);
  if ((numeric & kChargeResults) != 0) {
    uint64_t chars = 0;
    uint64_t elements = 0;
    for (int i = lua_gettop(L) - nresults + 1; i <= lua_gettop(L); ++i) {
      if (lua_type(L, i) == LUA_TSTRING) {
        chars += lua_rawlen(L, i);
      } else {
        ++elements;
      }
    }
    ScriptBudget::Charge(L, chars / ScriptBudget::kCharsPerUnit +
                                elements * ScriptBudget::kElementUnits);
  }
  return nresults;
}

int Lua51StringRep(lua_State* L) {
  if (lua_gettop(L) > 2) lua_settop(L, 2);  // Lua 5.1 has no separator argument.
  // The work: n copies of the string (bulk bytes) and n steps of the copy loop (characters).
  // An empty string costs only the loop, charged before it runs, since no memory bounds it; any
  // other string is charged after the copy, whose result had to fit in the memory cap first
  // (so a result too large for the heap ends with the memory error, as before). A number
  // becomes at most 24 characters of text.
  uint64_t count = 0;
  uint64_t len = 0;
  if (lua_isnumber(L, 2) && (lua_type(L, 1) == LUA_TSTRING || lua_type(L, 1) == LUA_TNUMBER)) {
    const int n = static_cast<int>(
        static_cast<uint32_t>(static_cast<uint64_t>(TruncateLikeX86(lua_tonumber(L, 2)))));
    count = n > 0 ? static_cast<uint64_t>(n) : 0;
    len = lua_type(L, 1) == LUA_TSTRING ? lua_rawlen(L, 1) : 24;
  }
  if (len == 0) ScriptBudget::ChargeChars(L, count);
  const int nresults = Lua51StringCall(L);
  if (len > 0) {
    ScriptBudget::Charge(L, count * len / ScriptBudget::kBytesPerUnit +
                                count / ScriptBudget::kCharsPerUnit);
  }
  return nresults;
}

// Lua 5.1's %q (lstrlib.c addquoted): a double quote, a backslash and a newline get a
// backslash before them, CR is written as backslash-r, a zero byte as backslash-000; every other
// byte is copied (5.4 writes control characters as decimal escapes).
std::string QuoteLua51(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': case '\\': case '\n': out += '\\'; out += c; break;
      case '\r': out += "\\r"; break;
      case '\0': out += "\\000"; break;
      default: out += c;
    }
  }
  out += '"';
  return out;
}

// string.format with Lua 5.1's rules (lstrlib.c str_format): the same validation and messages,
// %d and friends truncate a float, %s and %q print numbers as 5.1 does and refuse other types.
// The formatting itself is 5.4's (upvalue 1), which gives the same text for these inputs.
int Lua51StringFormat(lua_State* L) {
  size_t len = 0;
  const char* fmt = luaL_checklstring(L, 1, &len);
  const int top = lua_gettop(L);
  int arg = 1;
  // The format handed to 5.4: each %q becomes a plain %s of the argument quoted the 5.1 way
  // (5.1 ignores %q's flags and width; 5.4 refuses them).
  std::string fmt54;
  size_t copied = 0;  // fmt[0, copied) is in fmt54
  for (size_t i = 0; i < len; ++i) {
    if (fmt[i] != '%') continue;
    const size_t spec_start = i;
    if (++i < len && fmt[i] == '%') continue;
    if (++arg > top) luaL_argerror(L, arg, "no value");
    const size_t flags_start = i;
    while (i < len && std::strchr("-+ #0", fmt[i]) != nullptr && fmt[i] != '\0') ++i;
    if (i - flags_start >= 6) luaL_error(L, "invalid format (repeated flags)");
    auto digit = [&](size_t k) {
      return k < len && std::isdigit(static_cast<unsigned char>(fmt[k]));
    };
    if (digit(i)) ++i;
    if (digit(i)) ++i;
    if (i < len && fmt[i] == '.') {
      ++i;
      if (digit(i)) ++i;
      if (digit(i)) ++i;
    }
    if (digit(i)) luaL_error(L, "invalid format (width or precision too long)");
    const char conv = i < len ? fmt[i] : '\0';
    switch (conv) {
      case 'd': case 'i': case 'c': case 'o': case 'u': case 'x': case 'X': {
        const lua_Number n = luaL_checknumber(L, arg);
        lua_pushinteger(L, TruncateLikeX86(n));
        lua_replace(L, arg);
        break;
      }
      case 'e': case 'E': case 'f': case 'g': case 'G':
        luaL_checknumber(L, arg);
        break;
      case 's': case 'q': {
        const int t = lua_type(L, arg);
        if (t == LUA_TNUMBER) {
          PushStringLua51(L, arg);
          lua_replace(L, arg);
        } else if (t != LUA_TSTRING) {
          luaL_typeerror(L, arg, "string");
        }
        size_t slen = 0;
        const char* s = lua_tolstring(L, arg, &slen);
        if (conv == 'q') {
          const std::string quoted = QuoteLua51(std::string_view(s, slen));
          lua_pushlstring(L, quoted.data(), quoted.size());
          lua_replace(L, arg);
          fmt54.append(fmt + copied, spec_start - copied);
          fmt54 += "%s";
          copied = i + 1;
          break;
        }
        // 5.1 copies a string of 100 bytes or more whole when there is no precision, flags
        // and width ignored (5.4 refuses one with a zero byte there); any other string goes
        // to sprintf, which stops at its first zero byte.
        const bool has_precision = std::memchr(fmt + flags_start, '.', i - flags_start) != nullptr;
        const void* zero = std::memchr(s, '\0', slen);
        if (!has_precision && slen >= 100) {
          fmt54.append(fmt + copied, spec_start - copied);
          fmt54 += "%s";
          copied = i + 1;
        } else if (zero != nullptr) {
          lua_pushlstring(L, s, static_cast<size_t>(static_cast<const char*>(zero) - s));
          lua_replace(L, arg);
        }
        break;
      }
      default:
        return luaL_error(L, "invalid option '%%%c' to 'format'", conv);
    }
  }
  if (copied > 0) {
    fmt54.append(fmt + copied, len - copied);
    lua_pushlstring(L, fmt54.data(), fmt54.size());
    lua_replace(L, 1);
  }
  CallInner(L, 1);
  // The text produced (each directive is at most a few hundred characters, or a string
  // argument, escaped by %q) and the format scanned.
  ScriptBudget::ChargeChars(L, lua_rawlen(L, -1) + len);
  return 1;
}

// --- table, Lua 5.1 flavour (raw access, 5.1 bounds rules) ---

// Returns the raw length of the table argument, checking it is a table; *writable is false for
// a read-only proxy, whose real table replaces it at index 1.
lua_Integer TableArg(lua_State* L, bool* writable) {
  luaL_checktype(L, 1, LUA_TTABLE);
  *writable = !IsProxy(L, 1);
  if (!*writable) {
    PushUnproxied(L, 1);
    lua_replace(L, 1);
  }
  return static_cast<lua_Integer>(lua_rawlen(L, 1));
}

void CheckWritable(lua_State* L, bool writable) {
  if (!writable) RaiseBare(L, "Attempt to modify a readonly table");
}

int Lua51TableInsert(lua_State* L) {
  bool writable;
  lua_Integer e = TableArg(L, &writable) + 1;
  lua_Integer pos;
  switch (lua_gettop(L)) {
    case 2:
      pos = e;
      break;
    case 3:
      pos = CheckInt51(L, 2);
      CheckWritable(L, writable);
      if (pos > e) e = pos;
      if (e > pos) {  // the elements moved
        ScriptBudget::Charge(L, static_cast<uint64_t>(e - pos) * ScriptBudget::kElementUnits);
      }
      for (lua_Integer i = e; i > pos; --i) {
        lua_rawgeti(L, 1, i - 1);
        lua_rawseti(L, 1, i);
      }
      break;
    default:
      return luaL_error(L, "wrong number of arguments to 'insert'");
  }
  CheckWritable(L, writable);
  lua_rawseti(L, 1, pos);
  return 0;
}

int Lua51TableRemove(lua_State* L) {
  bool writable;
  const lua_Integer e = TableArg(L, &writable);
  lua_Integer pos = lua_isnoneornil(L, 2) ? e : CheckInt51(L, 2);
  if (!(1 <= pos && pos <= e)) return 0;
  CheckWritable(L, writable);
  if (e > pos) {  // the elements moved
    ScriptBudget::Charge(L, static_cast<uint64_t>(e - pos) * ScriptBudget::kElementUnits);
  }
  lua_rawgeti(L, 1, pos);
  for (; pos < e; ++pos) {
    lua_rawgeti(L, 1, pos + 1);
    lua_rawseti(L, 1, pos);
  }
  lua_pushnil(L);
  lua_rawseti(L, 1, e);
  return 1;
}

int Lua51TableConcat(lua_State* L) {
  std::string sep;
  if (!lua_isnoneornil(L, 2) && !ToStringLua51(L, 2, &sep)) luaL_typeerror(L, 2, "string");
  bool writable;
  const lua_Integer n = TableArg(L, &writable);
  lua_Integer i = OptInt51(L, 3, 1);
  const lua_Integer last = lua_isnoneornil(L, 4) ? n : CheckInt51(L, 4);
  std::string out;
  std::string piece;
  // The result is built outside the Lua heap, so the work is charged as it goes, and per
  // character rather than as bulk bytes: the budget then also bounds the size of that text
  // (50 million units: 100 MB), which the memory cap does not see.
  ScriptWorkMeter work(L);
  for (; i <= last; ++i) {
    lua_rawgeti(L, 1, i);
    if (!ToStringLua51(L, -1, &piece)) {
      return luaL_error(L, "invalid value (%s) at index %d in table for 'concat'",
                        luaL_typename(L, -1), static_cast<int>(i));
    }
    lua_pop(L, 1);
    work.AddUnits(ScriptBudget::kElementUnits);
    work.AddChars(piece.size() + (i != last ? sep.size() : 0));
    out += piece;
    if (i != last) out += sep;
  }
  work.AddBytes(out.size());  // the copy into a Lua string
  work.Flush();
  lua_pushlstring(L, out.data(), out.size());
  return 1;
}

int Lua51TableGetn(lua_State* L) {
  bool writable;
  lua_pushinteger(L, TableArg(L, &writable));
  return 1;
}

int Lua51TableSetn(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  return luaL_error(L, "'setn' is obsolete");
}

int Lua51TableMaxn(lua_State* L) {
  bool writable;
  TableArg(L, &writable);
  double max = 0;
  ScriptWorkMeter work(L);
  lua_pushnil(L);
  while (lua_next(L, 1) != 0) {
    lua_pop(L, 1);
    work.AddUnits(ScriptBudget::kElementUnits);
    if (lua_type(L, -1) == LUA_TNUMBER) {
      max = std::max(max, static_cast<double>(lua_tonumber(L, -1)));
    }
  }
  work.Flush();
  PushNumberLua51(L, max);
  return 1;
}

int Lua51TableForeach(lua_State* L) {
  bool writable;
  TableArg(L, &writable);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  const int n = PushKeysInFixedOrder(L, 1);  // 3
  for (int j = 1; j <= n; ++j) {
    lua_pushvalue(L, 2);
    lua_rawgeti(L, 3, j);
    lua_pushvalue(L, -1);
    if (lua_rawget(L, 1) == LUA_TNIL) {
      lua_pop(L, 3);
      continue;
    }
    lua_call(L, 2, 1);
    if (!lua_isnil(L, -1)) return 1;
    lua_pop(L, 1);
  }
  return 0;
}

int Lua51TableForeachi(lua_State* L) {
  bool writable;
  const lua_Integer n = TableArg(L, &writable);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_pushvalue(L, 2);
    lua_pushinteger(L, i);
    lua_rawgeti(L, 1, i);
    lua_call(L, 2, 1);
    if (!lua_isnil(L, -1)) return 1;
    lua_pop(L, 1);
  }
  return 0;
}

// table.sort with Lua 5.1's quicksort. The algorithm decides where equal elements end up (the
// sort is not stable), so matching Redis needs the same comparisons in the same order: median
// of three, pivot parked at u-1, then the classic two-index partition, recursing into the
// smaller half. Stack slot 1 is the table, slot 2 the comparator or nil.
class Sorter {
 public:
  explicit Sorter(lua_State* L) : L_(L), work_(L) {}

  // Charges the comparisons not charged yet (each one is an element of work).
  void ChargeWork() { work_.Flush(); }

  void Sort(lua_Integer lo, lua_Integer hi) {
    while (lo < hi) {
      Get(lo);
      Get(hi);
      if (Less(-1, -2)) {
        Set2(lo, hi);
      } else {
        lua_pop(L_, 2);
      }
      if (hi - lo == 1) return;
      lua_Integer i = (lo + hi) / 2;
      Get(i);
      Get(lo);
      if (Less(-2, -1)) {
        Set2(i, lo);
      } else {
        lua_pop(L_, 1);
        Get(hi);
        if (Less(-1, -2)) {
          Set2(i, hi);
        } else {
          lua_pop(L_, 2);
        }
      }
      if (hi - lo == 2) return;
      Get(i);  // the pivot P
      lua_pushvalue(L_, -1);
      Get(hi - 1);
      Set2(i, hi - 1);  // a[i] = a[hi-1], a[hi-1] = P; a copy of P stays on the stack
      i = lo;
      lua_Integer j = hi - 1;
      for (;;) {
        while (Get(++i), Less(-1, -2)) {
          if (i > hi) luaL_error(L_, "invalid order function for sorting");
          lua_pop(L_, 1);
        }
        while (Get(--j), Less(-3, -1)) {
          if (j < lo) luaL_error(L_, "invalid order function for sorting");
          lua_pop(L_, 1);
        }
        if (j < i) {
          lua_pop(L_, 3);
          break;
        }
        Set2(i, j);
      }
      Get(hi - 1);
      Get(i);
      Set2(hi - 1, i);
      // Recurse into the smaller part, loop on the larger one.
      if (i - lo < hi - i) {
        j = lo;
        i = i - 1;
        lo = i + 2;
      } else {
        j = i + 1;
        i = hi;
        hi = j - 2;
      }
      Sort(j, i);
    }
  }

 private:
  void Get(lua_Integer i) { lua_rawgeti(L_, 1, i); }
  // Pops two values: the top goes to a[i], the one below to a[j].
  void Set2(lua_Integer i, lua_Integer j) {
    lua_rawseti(L_, 1, i);
    lua_rawseti(L_, 1, j);
  }
  bool Less(int a, int b) {
    work_.AddUnits(ScriptBudget::kElementUnits);
    if (!lua_isnil(L_, 2)) {
      lua_pushvalue(L_, 2);
      lua_pushvalue(L_, a - 1);
      lua_pushvalue(L_, b - 2);
      lua_call(L_, 2, 1);
      const bool r = lua_toboolean(L_, -1);
      lua_pop(L_, 1);
      return r;
    }
    return lua_compare(L_, a, b, LUA_OPLT) != 0;
  }

  lua_State* L_;
  ScriptWorkMeter work_;
};

int Lua51TableSort(lua_State* L) {
  bool writable;
  const lua_Integer n = TableArg(L, &writable);
  luaL_checkstack(L, 40, "");
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TFUNCTION);
  lua_settop(L, 2);
  if (n > 1) CheckWritable(L, writable);
  Sorter sorter(L);
  sorter.Sort(1, n);
  sorter.ChargeWork();
  return 0;
}

// --- math, Lua 5.1 flavour: results that are integral come back as integers ---

template <double (*F)(double)>
int MathUnary(lua_State* L) {
  PushNumberLua51(L, F(luaL_checknumber(L, 1)));
  return 1;
}

// Lua 5.1's own formulas (lmathlib.c), to the last bit.
constexpr double kRadiansPerDegree = 3.14159265358979323846 / 180.0;
double Deg(double x) { return x / kRadiansPerDegree; }
double Rad(double x) { return x * kRadiansPerDegree; }
double Sin(double x) { return std::sin(x); }
double Cos(double x) { return std::cos(x); }
double Tan(double x) { return std::tan(x); }
double Asin(double x) { return std::asin(x); }
double Acos(double x) { return std::acos(x); }
double Atan(double x) { return std::atan(x); }
double Sinh(double x) { return std::sinh(x); }
double Cosh(double x) { return std::cosh(x); }
double Tanh(double x) { return std::tanh(x); }
double Sqrt(double x) { return std::sqrt(x); }
double Exp(double x) { return std::exp(x); }
double Log10(double x) { return std::log10(x); }

int MathLog(lua_State* L) {
  const double x = luaL_checknumber(L, 1);
  PushNumberLua51(L, std::log(x));  // Lua 5.1's math.log has no base argument.
  return 1;
}

int MathAtan2(lua_State* L) {
  PushNumberLua51(L, std::atan2(luaL_checknumber(L, 1), luaL_checknumber(L, 2)));
  return 1;
}

int MathPow(lua_State* L) {
  PushNumberLua51(L, std::pow(luaL_checknumber(L, 1), luaL_checknumber(L, 2)));
  return 1;
}

int MathMax(lua_State* L) {
  const int n = lua_gettop(L);
  double m = luaL_checknumber(L, 1);
  for (int i = 2; i <= n; ++i) m = std::max(m, static_cast<double>(luaL_checknumber(L, i)));
  PushNumberLua51(L, m);
  return 1;
}

int MathMin(lua_State* L) {
  const int n = lua_gettop(L);
  double m = luaL_checknumber(L, 1);
  for (int i = 2; i <= n; ++i) m = std::min(m, static_cast<double>(luaL_checknumber(L, i)));
  PushNumberLua51(L, m);
  return 1;
}

int MathFmod(lua_State* L) {
  PushNumberLua51(L, std::fmod(luaL_checknumber(L, 1), luaL_checknumber(L, 2)));
  return 1;
}

int MathModf(lua_State* L) {
  double ip;
  const double fp = std::modf(luaL_checknumber(L, 1), &ip);
  PushNumberLua51(L, ip);
  PushNumberLua51(L, fp);
  return 2;
}

int MathFrexp(lua_State* L) {
  int e;
  PushNumberLua51(L, std::frexp(luaL_checknumber(L, 1), &e));
  lua_pushinteger(L, e);
  return 2;
}

int MathLdexp(lua_State* L) {
  PushNumberLua51(L, std::ldexp(luaL_checknumber(L, 1), CheckInt51(L, 2)));
  return 1;
}

// math.random over Redis's rand48 (script_lua.c redis_math_random).
int MathRandom(lua_State* L) {
  HostState* host = HostState::Of(L);
  if (host->run_ == nullptr) {
    return luaL_error(L, "math.random can only be called inside a script invocation");
  }
  constexpr int32_t kRandMax = 0x7fffffff;
  const double r = static_cast<double>(host->rand48_.Next() % kRandMax) / kRandMax;
  switch (lua_gettop(L)) {
    case 0:
      PushNumberLua51(L, r);
      return 1;
    case 1: {
      const int u = CheckInt51(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      PushNumberLua51(L, std::floor(r * u) + 1);
      return 1;
    }
    case 2: {
      const int l = CheckInt51(L, 1);
      const int u = CheckInt51(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      PushNumberLua51(L, std::floor(r * (static_cast<double>(u) - l + 1)) + l);
      return 1;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
}

int MathRandomseed(lua_State* L) {
  HostState* host = HostState::Of(L);
  if (host->run_ == nullptr) {
    return luaL_error(L, "math.randomseed can only be called inside a script invocation");
  }
  host->rand48_.Seed(CheckInt51(L, 1));
  return 0;
}

// The error handler (eval.c __redis__err__handler): turns any error into a table {err=...}
// and records where it happened, blaming the calling Lua line when a C function raised it.
int ErrHandler(lua_State* L) {
  lua_settop(L, 1);
  lua_Debug ar;
  bool have = lua_getstack(L, 1, &ar) != 0 && lua_getinfo(L, "nSl", &ar) != 0;
  if (have && std::strcmp(ar.what, "C") == 0) {
    have = lua_getstack(L, 2, &ar) != 0 && lua_getinfo(L, "nSl", &ar) != 0;
  }
  if (lua_type(L, 1) != LUA_TTABLE) {
    FixErrorValue(L, 1);
    lua_createtable(L, 0, 3);
    lua_pushliteral(L, "ERR ");
    if (lua_type(L, 1) == LUA_TNUMBER) {
      PushStringLua51(L, 1);
    } else {
      luaL_tolstring(L, 1, nullptr);
    }
    lua_concat(L, 2);
    lua_setfield(L, -2, "err");
    lua_replace(L, 1);
  }
  if (have) {
    lua_pushstring(L, ar.source);
    lua_setfield(L, 1, "source");
    lua_pushinteger(L, ar.currentline);
    lua_setfield(L, 1, "line");
  }
  return 1;
}

// ---------------------------------------------------------------------------------------------
// 4. The redis.* API
// ---------------------------------------------------------------------------------------------

// The work of a command's reply (core/script_budget.h): three elements per array element (the
// command builds it, the host converts it into a Lua value and stores it in a table) and the
// bulk bytes copied. A reply is a few levels deep at most.
uint64_t ReplyWorkUnits(const Reply& r) {
  uint64_t units = r.str.size() / ScriptBudget::kBytesPerUnit +
                   r.elements.size() * 3 * ScriptBudget::kElementUnits;
  for (const Reply& e : r.elements) units += ReplyWorkUnits(e);
  return units;
}

// Pushes a command's reply as Redis 7.0 hands it to Lua (script_lua.c redisProtocolToLuaType).
void PushReply(lua_State* L, const Reply& r, int resp) {
  switch (r.type) {
    case Reply::Type::kStatus:
      lua_createtable(L, 0, 1);
      lua_pushlstring(L, r.str.data(), r.str.size());
      lua_setfield(L, -2, "ok");
      return;
    case Reply::Type::kError: {
      std::string buf;
      buf.reserve(r.str.size() + 1);
      buf += '-';
      buf += r.str;
      PushErrorTable(L, buf, true);
      return;
    }
    case Reply::Type::kInteger:
      // Lua integers, not Redis's lua_pushnumber doubles, as for every integral number the
      // host creates (docs/fidelity.md, "Integers stay integers"). Either subtype prints as
      // Redis prints the double (lockstep's Lua prints every number with "%.14g"). Beyond
      // 2^53 a double keeps Lua 5.1's rounding.
      if (r.integer >= -static_cast<int64_t>(kTwo53) && r.integer <= static_cast<int64_t>(kTwo53)) {
        lua_pushinteger(L, r.integer);
      } else {
        lua_pushnumber(L, static_cast<double>(r.integer));
      }
      return;
    case Reply::Type::kBulk:
      lua_pushlstring(L, r.str.data(), r.str.size());
      return;
    case Reply::Type::kNull:
    case Reply::Type::kNullArray:
      // RESP2 $-1 and *-1 are false; RESP3's null is nil.
      if (resp == 2) {
        lua_pushboolean(L, 0);
      } else {
        lua_pushnil(L);
      }
      return;
    case Reply::Type::kArray: {
      luaL_checkstack(L, 4, "reply too deep");
      lua_createtable(L, static_cast<int>(r.elements.size()), 0);
      lua_Integer i = 0;
      for (const Reply& e : r.elements) {
        PushReply(L, e, resp);
        lua_rawseti(L, -2, ++i);
      }
      return;
    }
    case Reply::Type::kDouble:
      lua_createtable(L, 0, 1);
      PushNumberLua51(L, r.number);
      lua_setfield(L, -2, "double");
      return;
    case Reply::Type::kMap: {
      luaL_checkstack(L, 4, "reply too deep");
      lua_createtable(L, 0, 1);
      lua_createtable(L, 0, static_cast<int>(r.elements.size() / 2));
      for (size_t i = 0; i + 1 < r.elements.size(); i += 2) {
        PushReply(L, r.elements[i], resp);
        PushReply(L, r.elements[i + 1], resp);
        if (lua_isnil(L, -2)) {
          lua_pop(L, 2);
        } else {
          lua_rawset(L, -3);
        }
      }
      lua_setfield(L, -2, "map");
      return;
    }
    case Reply::Type::kSet: {
      luaL_checkstack(L, 4, "reply too deep");
      lua_createtable(L, 0, 1);
      lua_createtable(L, 0, static_cast<int>(r.elements.size()));
      for (const Reply& e : r.elements) {
        PushReply(L, e, resp);
        if (lua_isnil(L, -1)) {
          lua_pop(L, 1);
          continue;
        }
        lua_pushboolean(L, 1);
        lua_rawset(L, -3);
      }
      lua_setfield(L, -2, "set");
      return;
    }
    case Reply::Type::kBool:
      lua_pushboolean(L, r.integer != 0);
      return;
  }
  lua_pushnil(L);
}

bool HostState::BuildArgv(lua_State* L, const char** err) {
  const int argc = lua_gettop(L);
  if (argc == 0) {
    *err = "Please specify at least one argument for this redis lib call";
    return false;
  }
  const auto want = static_cast<size_t>(argc);
  if (argv_by_count_.size() <= want) argv_by_count_.resize(want + 1);
  Argv& argv = argv_by_count_[want];
  if (argv.size() != want) argv.resize(want);
  argv_ = &argv;
  arg0_ = nullptr;
  for (int j = 1; j <= argc; ++j) {
    std::string& a = argv[static_cast<size_t>(j - 1)];
    const int t = lua_type(L, j);
    if (t == LUA_TSTRING) {
      size_t len = 0;
      const char* s = lua_tolstring(L, j, &len);
      if (j == 1) arg0_ = s;
      // The common case is the same argument as last time (same key names): no reallocation,
      // just the bytes.
      if (a.size() != len) a.resize(len);
      std::memcpy(a.data(), s, len);
    } else if (t == LUA_TNUMBER) {
      FormatArgNumber(L, j, &a);
    } else {
      *err = "Lua redis lib command arguments must be strings or integers";
      return false;
    }
  }
  return true;
}

const CommandSpec* HostState::LookupCommand() {
  const Argv& argv = *argv_;
  // Only commands looked up with an argument are cached: a container command (SCRIPT) alone
  // resolves to the container, with an argument to a subcommand, which is never cached.
  if (arg0_ == nullptr || argv.size() < 2) return Server::Lookup(argv);
  CommandCacheEntry& e =
      command_cache_[(reinterpret_cast<uintptr_t>(arg0_) >> 4) % std::size(command_cache_)];
  if (e.lua_name == arg0_ && e.name == argv[0]) return e.spec;
  const CommandSpec* spec = Server::Lookup(argv);
  if (spec != nullptr && std::strchr(spec->name, '|') == nullptr) {
    e.lua_name = arg0_;
    e.name = argv[0];
    e.spec = spec;
  }
  return spec;
}

// redis.call (raise = true) and redis.pcall (luaRedisGenericCommand).
int RedisGenericCommand(lua_State* L, bool raise) {
  HostState* host = HostState::Of(L);
  RunState* run = host->run_;
  if (run == nullptr) {
    RaiseErrorTable(L, "redis.call/pcall can only be called inside a script invocation");
  }
  // A script stopped by the memory cap (a script without step hook notices only here) runs
  // no further command.
  if (run->stop != StopReason::kNone) host->RaiseStop(L);
  // The arguments are copied into the command's argv, and usually again into the keyspace.
  uint64_t arg_bytes = 0;
  for (int j = lua_gettop(L); j >= 1; --j) {
    if (lua_type(L, j) == LUA_TSTRING) arg_bytes += lua_rawlen(L, j);
  }
  ScriptBudget::ChargeBytes(L, arg_bytes);
  const char* err = nullptr;
  if (!host->BuildArgv(L, &err)) {
    PushErrorTable(L, err, false);
    if (raise) return lua_error(L);
    return 1;
  }
  lua_settop(L, 0);
  // The commands run on the caller's clock and record their writes into the caller's Effects
  // (unless redis.set_repl turned replication off), so a script's effects are the EVAL's
  // effects. A script that fails half-way keeps what it did (no rollback).
  Ctx& caller = *run->caller;
  Ctx ctx(host->server_, caller.now_ms, run->resp, /*from_script=*/true,
          (run->repl & kReplReplica) != 0 ? caller.effects : nullptr);
  // Initialised in place from the command's return value: no default Reply to overwrite.
  const Reply reply =
      host->server_.CallFromScript(ctx, *host->argv_, run->read_only, host->LookupCommand());
  PushReply(L, reply, run->resp);
  ScriptBudget::Charge(L, ScriptBudget::kCommandUnits + ReplyWorkUnits(reply));
  if (raise && reply.is_error()) return lua_error(L);
  return 1;
}

int RedisCall(lua_State* L) { return RedisGenericCommand(L, true); }
int RedisPCallCmd(lua_State* L) { return RedisGenericCommand(L, false); }

int RedisSha1hex(lua_State* L) {
  if (lua_gettop(L) != 1) RaiseErrorTable(L, "wrong number of arguments");
  std::string s;
  ToStringLua51(L, 1, &s);  // Anything else hashes as the empty string, as in Redis.
  ScriptBudget::ChargeChars(L, s.size());
  char hex[40];
  Sha1HexTo(s, hex);
  lua_pushlstring(L, hex, 40);
  return 1;
}

int RedisErrorReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments", false);
    return 1;
  }
  const std::string_view s = UpToNul(lua_tostring(L, -1));
  if (!s.empty() && s[0] == '-') {
    PushErrorTable(L, s, false);
  } else {
    std::string buf = "-";
    buf += s;
    PushErrorTable(L, buf, false);
  }
  return 1;
}

int RedisStatusReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments", false);
    return 1;
  }
  lua_createtable(L, 0, 1);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "ok");
  return 1;
}

int RedisLog(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc < 2) RaiseErrorTable(L, "redis.log() requires two arguments or more.");
  if (!lua_isnumber(L, 1)) RaiseErrorTable(L, "First argument must be a number (log level).");
  const int level = ToInt51(L, 1);
  if (level < 0 || level > 3) RaiseErrorTable(L, "Invalid debug level.");
  // The emulator has no server log; the message is accepted and dropped.
  return 0;
}

int RedisSetresp(lua_State* L) {
  HostState* host = HostState::Of(L);
  if (host->run_ == nullptr) {
    RaiseErrorTable(L, "redis.setresp can only be called inside a script invocation");
  }
  if (lua_gettop(L) != 1) RaiseErrorTable(L, "redis.setresp() requires one argument.");
  const int resp = ToInt51(L, 1);
  if (resp != 2 && resp != 3) RaiseErrorTable(L, "RESP version must be 2 or 3.");
  host->run_->resp = resp;
  return 0;
}

int RedisSetRepl(lua_State* L) {
  HostState* host = HostState::Of(L);
  if (host->run_ == nullptr) {
    RaiseErrorTable(L, "redis.set_repl can only be called inside a script invocation");
  }
  if (lua_gettop(L) != 1) RaiseErrorTable(L, "redis.set_repl() requires two arguments.");
  const int flags = ToInt51(L, 1);
  if ((flags & ~kReplAll) != 0) {
    RaiseErrorTable(L,
                    "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or "
                    "REPL_NONE.");
  }
  host->run_->repl = flags;
  return 0;
}

int RedisReplicateCommands(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

int RedisBreakpoint(lua_State* L) {
  lua_pushboolean(L, 0);  // No debugging session is ever active.
  return 1;
}

int RedisDebug(lua_State*) { return 0; }

int RedisAclCheckCmd(lua_State* L) {
  HostState* host = HostState::Of(L);
  if (host->run_ == nullptr) {
    RaiseErrorTable(L, "redis.acl_check_cmd can only be called inside a script invocation");
  }
  const char* err = nullptr;
  if (!host->BuildArgv(L, &err)) RaiseErrorTable(L, err);
  if (Server::Lookup(*host->argv_) == nullptr) {
    RaiseErrorTable(L, "Invalid command passed to redis.acl_check_cmd()");
  }
  lua_pushboolean(L, 1);  // The emulator's only user may run everything.
  return 1;
}

// ---------------------------------------------------------------------------------------------
// Sandbox construction
// ---------------------------------------------------------------------------------------------

struct NamedFunction {
  const char* name;
  lua_CFunction fn;
};

void SetFunctions(lua_State* L, std::initializer_list<NamedFunction> fns) {
  for (const NamedFunction& f : fns) {
    lua_pushcfunction(L, f.fn);
    lua_setfield(L, -2, f.name);
  }
}

// Copies the named fields of the table at src into the table on top of the stack.
void CopyFields(lua_State* L, int src, std::initializer_list<const char*> names) {
  src = lua_absindex(L, src);
  for (const char* name : names) {
    lua_getfield(L, src, name);
    assert(!lua_isnil(L, -1));
    lua_setfield(L, -2, name);
  }
}

void HostState::BuildSandbox() {
  lua_State* L = L_;

  // Lua 5.4's own libraries, loaded into its (soon replaced) global table.
  assert(lua_gettop(L) == 0);
  luaL_requiref(L, LUA_GNAME, luaopen_base, 1);          // 1: 5.4's globals (base functions)
  luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 0);   // 2 (also sets the string metatable)
  luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 0);    // 3
  luaL_requiref(L, LUA_COLIBNAME, luaopen_coroutine, 0); // 4
  const int base54 = 1;
  const int string54 = 2;
  const int math54 = 3;
  const int co54 = 4;

  // The registry tables used by the proxies.
  lua_newtable(L);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kApparentMetatableKey);
  lua_newtable(L);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kShownMetatableKey);

  // The real global table: the 146 names of Debian's redis-server 7.0.15 (see
  // notes/redis-7.0-lua-globals.txt), minus struct and cmsgpack (not provided, see
  // docs/fidelity.md), minus KEYS/ARGV which each call sets.
  lua_newtable(L);
  const int g = lua_gettop(L);
  SetFunctions(L, {
      {"assert", Guarded<Lua51Assert>},
      {"error", Guarded<Lua51Error>},
      {"gcinfo", Guarded<Lua51Gcinfo>},
      {"getmetatable", Guarded<Lua51Getmetatable>},
      {"ipairs", Guarded<Lua51Ipairs>},
      {"load", Guarded<Lua51Load>},
      {"loadstring", Guarded<Lua51Loadstring>},
      {"next", Guarded<Lua51Next>},
      {"pairs", Guarded<Lua51Pairs>},
      {"pcall", Guarded<RedisPcall>},
      {"rawget", Guarded<Lua51Rawget>},
      {"rawset", Guarded<Lua51Rawset>},
      {"setmetatable", Guarded<Lua51Setmetatable>},
      {"tonumber", Guarded<Lua51Tonumber>},
      {"tostring", Guarded<Lua51Tostring>},
      {"unpack", Guarded<Lua51Unpack>},
      {"__redis__err__handler", Guarded<ErrHandler>},
  });
  CopyFields(L, base54, {"type"});
  PushInnerWrapper(L, base54, "rawequal", Guarded<Lua51Rawequal>);
  lua_setfield(L, -2, "rawequal");
  lua_pushcfunction(L, Guarded<Lua51Select>);
  lua_setfield(L, -2, "select");
  lua_pushcfunction(L, Guarded<Lua51Xpcall>);
  lua_setfield(L, -2, "xpcall");
  PushInnerWrapper(L, base54, "collectgarbage", Guarded<Lua51Collectgarbage>);
  lua_setfield(L, -2, "collectgarbage");
  lua_pushliteral(L, "Lua 5.1");
  lua_setfield(L, g, "_VERSION");

  // string
  lua_newtable(L);
  CopyFields(L, string54, {"dump"});
  // Which arguments are numbers (bit i = argument i, bit 31 = arguments 31 and later); the
  // others are strings.
  constexpr uint32_t kAll = ~1u;
  const std::pair<const char*, uint32_t> kStringFunctions[] = {
      {"byte", 1u << 2 | 1u << 3}, {"char", kAll},   {"len", 0},
      {"lower", 0},                {"reverse", 0},   {"sub", 1u << 2 | 1u << 3},
      {"upper", 0},
  };
  // These charge the script's budget for the size of their results (kChargeResults).
  const std::string_view kChargedByResults[] = {"byte", "char", "lower", "reverse", "sub", "upper"};
  for (const auto& [fname, numeric] : kStringFunctions) {
    const bool charged = std::find(std::begin(kChargedByResults), std::end(kChargedByResults),
                                   fname) != std::end(kChargedByResults);
    PushInnerWrapper(L, string54, fname, Guarded<Lua51StringCall>,
                     numeric | (charged ? kChargeResults : 0));
    lua_setfield(L, -2, fname);
  }
  // find, match, gmatch (and gfind), gsub: lockstep's own Lua 5.1 matcher, whose work counts
  // against the script's budget (lua_patterns.h).
  luapattern::SetPatternFunctions(L, -1, &kPatternMeter);
  PushInnerWrapper(L, string54, "rep", Guarded<Lua51StringRep>, 1u << 2);
  lua_setfield(L, -2, "rep");
  PushInnerWrapper(L, string54, "format", Guarded<Lua51StringFormat>);
  lua_setfield(L, -2, "format");
  MakeProxy(L, -1);
  // Method calls on strings ("x"):rep(3) go through the string metatable; its __index must be
  // the proxy, and getmetatable("") must show a read-only view of the metatable.
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);
  lua_remove(L, -2);
  lua_pushvalue(L, -2);
  lua_setfield(L, -2, "__index");
  lua_pushvalue(L, -1);
  MakeProxy(L, -1);  // stack: string proxy, string mt, mt proxy
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kShownMetatableKey);
  lua_pushvalue(L, -3);
  lua_pushvalue(L, -3);
  lua_rawset(L, -3);
  lua_pop(L, 3);
  lua_setfield(L, g, "string");

  // table: all Lua 5.1 functions, written here (raw access, 5.1 bounds, 5.1 sort)
  lua_newtable(L);
  SetFunctions(L, {
      {"concat", Guarded<Lua51TableConcat>},
      {"foreach", Guarded<Lua51TableForeach>},
      {"foreachi", Guarded<Lua51TableForeachi>},
      {"getn", Guarded<Lua51TableGetn>},
      {"insert", Guarded<Lua51TableInsert>},
      {"maxn", Guarded<Lua51TableMaxn>},
      {"remove", Guarded<Lua51TableRemove>},
      {"setn", Guarded<Lua51TableSetn>},
      {"sort", Guarded<Lua51TableSort>},
  });
  MakeProxy(L, -1);
  lua_setfield(L, g, "table");

  // math
  lua_newtable(L);
  CopyFields(L, math54, {"abs", "ceil", "floor", "huge", "pi"});
  SetFunctions(L, {
      {"acos", Guarded<MathUnary<Acos>>},   {"asin", Guarded<MathUnary<Asin>>},
      {"atan", Guarded<MathUnary<Atan>>},   {"atan2", Guarded<MathAtan2>},
      {"cos", Guarded<MathUnary<Cos>>},     {"cosh", Guarded<MathUnary<Cosh>>},
      {"deg", Guarded<MathUnary<Deg>>},     {"exp", Guarded<MathUnary<Exp>>},
      {"fmod", Guarded<MathFmod>},          {"frexp", Guarded<MathFrexp>},
      {"ldexp", Guarded<MathLdexp>},        {"log", Guarded<MathLog>},
      {"log10", Guarded<MathUnary<Log10>>}, {"mod", Guarded<MathFmod>},
      {"max", Guarded<MathMax>},            {"min", Guarded<MathMin>},
      {"modf", Guarded<MathModf>},          {"pow", Guarded<MathPow>},
      {"rad", Guarded<MathUnary<Rad>>},     {"random", Guarded<MathRandom>},
      {"randomseed", Guarded<MathRandomseed>}, {"sin", Guarded<MathUnary<Sin>>},
      {"sinh", Guarded<MathUnary<Sinh>>},   {"sqrt", Guarded<MathUnary<Sqrt>>},
      {"tan", Guarded<MathUnary<Tan>>},     {"tanh", Guarded<MathUnary<Tanh>>},
  });
  MakeProxy(L, -1);
  lua_setfield(L, g, "math");

  // coroutine
  lua_newtable(L);
  CopyFields(L, co54, {"resume", "status"});
  SetFunctions(L, {{"yield", Guarded<CoroutineYield>}});
  PushInnerWrapper(L, co54, "create", Guarded<Lua51CoroutineCreate>);
  lua_setfield(L, -2, "create");
  PushInnerWrapper(L, co54, "wrap", Guarded<Lua51CoroutineCreate>);
  lua_setfield(L, -2, "wrap");
  SetFunctions(L, {{"running", Guarded<Lua51CoroutineRunning>}});
  MakeProxy(L, -1);
  lua_setfield(L, g, "coroutine");

  // cjson, bit
  lualib::OpenCjson(L);
  MakeProxy(L, -1);
  lua_setfield(L, g, "cjson");
  lualib::OpenBit(L);
  MakeProxy(L, -1);
  lua_setfield(L, g, "bit");

  // redis
  lua_newtable(L);
  SetFunctions(L, {
      {"call", Guarded<RedisCall>},
      {"pcall", Guarded<RedisPCallCmd>},
      {"log", Guarded<RedisLog>},
      {"setresp", Guarded<RedisSetresp>},
      {"sha1hex", Guarded<RedisSha1hex>},
      {"error_reply", Guarded<RedisErrorReply>},
      {"status_reply", Guarded<RedisStatusReply>},
      {"set_repl", Guarded<RedisSetRepl>},
      {"acl_check_cmd", Guarded<RedisAclCheckCmd>},
      {"breakpoint", Guarded<RedisBreakpoint>},
      {"debug", Guarded<RedisDebug>},
      {"replicate_commands", Guarded<RedisReplicateCommands>},
  });
  // Constants are integers: Lua 5.4 would print Redis's lua_pushnumber values as "3.0".
  const std::pair<const char*, lua_Integer> kConstants[] = {
      {"LOG_DEBUG", 0},  {"LOG_VERBOSE", 1},         {"LOG_NOTICE", 2},
      {"LOG_WARNING", 3}, {"REPL_NONE", 0},           {"REPL_AOF", kReplAof},
      {"REPL_SLAVE", kReplReplica}, {"REPL_REPLICA", kReplReplica}, {"REPL_ALL", kReplAll},
      {"REDIS_VERSION_NUM", kRedisVersionNum},
  };
  for (const auto& [name, value] : kConstants) {
    lua_pushinteger(L, value);
    lua_setfield(L, -2, name);
  }
  lua_pushstring(L, kRedisVersion);
  lua_setfield(L, -2, "REDIS_VERSION");
  MakeProxy(L, -1);
  lua_setfield(L, g, "redis");

  // Reading a missing global raises; the global table itself is reached only through _G's proxy.
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, Guarded<MissingGlobal>);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, g);

  lua_pushvalue(L, g);
  MakeProxy(L, -1);  // stack: ..., g, _G proxy
  lua_pushvalue(L, -1);
  lua_setfield(L, g, "_G");
  // getmetatable(_G) shows Redis's {__index = <function>}, read-only.
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kApparentMetatableKey);
  lua_pushvalue(L, -2);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, Guarded<MissingGlobal>);
  lua_setfield(L, -2, "__index");
  MakeProxy(L, -1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  // Every chunk (scripts, loadstring) gets the proxy as _ENV.
  lua_rawseti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  globals_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);  // pops g


  NewNextCache(L);

  lua_settop(L, 0);  // drops 5.4's globals and library tables
  // 5.4's modules stay reachable from package.loaded in the registry; scripts cannot get there.
  lua_gc(L, LUA_GCCOLLECT, 0);
}

// ---------------------------------------------------------------------------------------------
// 5. EVAL / EVALSHA / SCRIPT
// ---------------------------------------------------------------------------------------------

// Redis's sdssplitargs, enough for a shebang line: space-separated words with "..." (escapes)
// and '...' quoting. Returns false on unbalanced quotes.
bool SplitArgs(std::string_view line, std::vector<std::string>* out) {
  size_t i = 0;
  out->clear();
  for (;;) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i >= line.size()) return true;
    std::string cur;
    bool inq = false, insq = false, done = false;
    while (!done) {
      if (inq) {
        if (i >= line.size()) return false;
        const char c = line[i];
        if (c == '\\' && i + 3 < line.size() && line[i + 1] == 'x' &&
            std::isxdigit(static_cast<unsigned char>(line[i + 2])) &&
            std::isxdigit(static_cast<unsigned char>(line[i + 3]))) {
          const std::string hex(line.substr(i + 2, 2));
          cur.push_back(static_cast<char>(std::stoi(hex, nullptr, 16)));
          i += 3;
        } else if (c == '\\' && i + 1 < line.size()) {
          ++i;
          switch (line[i]) {
            case 'n': cur.push_back('\n'); break;
            case 'r': cur.push_back('\r'); break;
            case 't': cur.push_back('\t'); break;
            case 'b': cur.push_back('\b'); break;
            case 'a': cur.push_back('\a'); break;
            default: cur.push_back(line[i]); break;
          }
        } else if (c == '"') {
          // A closing quote must be followed by a space or the end.
          if (i + 1 < line.size() && !std::isspace(static_cast<unsigned char>(line[i + 1]))) {
            return false;
          }
          done = true;
        } else {
          cur.push_back(c);
        }
      } else if (insq) {
        if (i >= line.size()) return false;
        const char c = line[i];
        if (c == '\\' && i + 1 < line.size() && line[i + 1] == '\'') {
          ++i;
          cur.push_back('\'');
        } else if (c == '\'') {
          if (i + 1 < line.size() && !std::isspace(static_cast<unsigned char>(line[i + 1]))) {
            return false;
          }
          done = true;
        } else {
          cur.push_back(c);
        }
      } else {
        if (i >= line.size()) {
          done = true;
          break;
        }
        const char c = line[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\0') {
          done = true;
        } else if (c == '"') {
          inq = true;
        } else if (c == '\'') {
          insq = true;
        } else {
          cur.push_back(c);
        }
      }
      if (i < line.size()) ++i;
    }
    out->push_back(std::move(cur));
  }
}

// evalExtractShebangFlags: parses an optional "#!lua flags=a,b" first line. Returns false with
// Redis's error text; *shebang_len is the length of the line without its newline (the newline
// is kept in the compiled body so line numbers do not move).
bool ParseShebang(std::string_view body, bool* compat, uint32_t* flags, size_t* shebang_len,
                  std::string* err) {
  *compat = true;
  *flags = 0;
  *shebang_len = 0;
  if (body.substr(0, 2) != "#!") return true;
  const size_t nl = body.find('\n');
  if (nl == std::string_view::npos) {
    *err = "Invalid script shebang";
    return false;
  }
  std::vector<std::string> parts;
  if (!SplitArgs(body.substr(0, nl), &parts) || parts.empty()) {
    *err = "Invalid engine in script shebang";
    return false;
  }
  if (parts[0] != "#!lua") {
    *err = "Unexpected engine in script shebang: " + parts[0];
    return false;
  }
  *compat = false;
  static const std::pair<const char*, uint32_t> kFlags[] = {
      {"no-writes", kFlagNoWrites},
      {"allow-oom", kFlagAllowOom},
      {"allow-stale", kFlagAllowStale},
      {"no-cluster", kFlagNoCluster},
      {"allow-cross-slot-keys", kFlagAllowCrossSlot},
  };
  for (size_t j = 1; j < parts.size(); ++j) {
    const std::string& p = parts[j];
    if (p.compare(0, 6, "flags=") != 0) {
      *err = "Unknown lua shebang option: " + p;
      return false;
    }
    const std::string list = p.substr(6);
    if (list.empty()) continue;  // sdssplitlen of "" gives no elements
    size_t start = 0;
    for (;;) {
      const size_t comma = list.find(',', start);
      const std::string flag =
          list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      uint32_t bit = 0;
      for (const auto& [name, value] : kFlags) {
        if (flag == name) bit = value;
      }
      if (bit == 0) {
        *err = "Unexpected flag in script shebang: " + flag;
        return false;
      }
      *flags |= bit;
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  *shebang_len = nl;
  return true;
}

// --- Direct global access for scripts that cannot write globals ---
//
// Globals reached through the _G proxy cost two extra table lookups each (a miss on the empty
// proxy, then its metatable's __index), and so does every field of a library proxy;
// `redis.call` and `KEYS[1]` are on every line of a lock script. The compiled code of most
// scripts shows that they cannot tell the difference, so they get a faster environment:
//  - kDirect: the code never writes a global and never uses _ENV as a value. Its _ENV is the
//    real global table (whose values are still the library proxies). Reading a missing global
//    still raises (the table's metatable) and _G is still the proxy.
//  - kDirectLibraries: additionally, every read of a library global (redis, string, ...) is
//    immediately replaced in its register by a field read (`redis.call`, `string.format`), so
//    the library table itself never reaches anything that could write to it. Its _ENV holds the
//    real library tables.
// The check reads the chunk's bytecode (lua_dump, Lua 5.4.4 format); anything unexpected keeps
// the proxy, which is always correct. Chunks made by load/loadstring always get the proxy.
class BytecodeReader {
 public:
  explicit BytecodeReader(std::string_view data) : data_(data) {}
  bool ok() const { return ok_; }
  uint8_t Byte() {
    if (pos_ >= data_.size()) {
      ok_ = false;
      return 0;
    }
    return static_cast<uint8_t>(data_[pos_++]);
  }
  void Skip(size_t n) {
    if (n > data_.size() - std::min(pos_, data_.size())) {
      ok_ = false;
      pos_ = data_.size();
      return;
    }
    pos_ += n;
  }
  size_t Varint() {  // lundump.c loadUnsigned: big-endian 7-bit groups, last byte has 0x80
    size_t x = 0;
    for (int i = 0; i < 10 && ok_; ++i) {
      const uint8_t b = Byte();
      x = (x << 7) | (b & 0x7f);
      if (b & 0x80) return x;
    }
    ok_ = false;
    return 0;
  }
  std::string_view String() {
    const size_t n = Varint();
    if (n == 0) return {};
    const size_t start = pos_;
    Skip(n - 1);
    return ok_ ? data_.substr(start, n - 1) : std::string_view();
  }
  uint32_t Instruction() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{Byte()} << (8 * i);  // little-endian host
    return v;
  }

 private:
  std::string_view data_;
  size_t pos_ = 0;
  bool ok_ = true;
};

bool IsLibraryName(std::string_view name) {
  for (std::string_view lib : {"redis", "string", "table", "math", "coroutine", "cjson", "bit"}) {
    if (name == lib) return true;
  }
  return false;
}

// What the bytecode of a chunk shows (ClassifyChunk).
struct ChunkFacts {
  GlobalAccess access = GlobalAccess::kDirectLibraries;
  // Reads _G, load or loadstring (ScriptEntry::reaches_real_globals).
  bool reaches_real_globals = false;
  // No loop, no backward jump, no function definition and no way to load code: every
  // instruction runs at most once, so the script ends within `instructions` VM steps and needs
  // no step hook (a count hook slows every instruction of Lua 5.4 down, not just every N-th).
  bool straight_line = true;
  size_t instructions = 0;
};

// Scans one function prototype and its children, lowering the facts as it finds reasons.
// env_of_parent: which upvalues of the enclosing function hold the chunk's _ENV.
void ScanProto(BytecodeReader& r, const std::vector<bool>& env_of_parent, bool is_main,
               ChunkFacts* facts) {
  constexpr uint32_t kGetUpval = 9, kSetUpval = 10, kGetTabUp = 11, kGetField = 14,
                     kSetTabUp = 15, kJmp = 56, kForLoop = 73, kTForLoop = 77, kClosure = 79;
  GlobalAccess* access = &facts->access;
  r.String();   // source
  r.Varint();   // linedefined
  r.Varint();   // lastlinedefined
  r.Skip(3);    // numparams, is_vararg, maxstacksize
  std::vector<uint32_t> code(r.Varint());
  for (uint32_t& ins : code) ins = r.Instruction();
  std::vector<std::string_view> strings(r.Varint());  // string constants; others stay empty
  for (size_t i = 0; i < strings.size() && r.ok(); ++i) {
    switch (r.Byte()) {
      case 0: case 1: case 17: break;                // nil, false, true
      case 3: case 19: r.Skip(8); break;             // integer, float
      case 4: case 20: strings[i] = r.String(); break;
      default: *access = GlobalAccess::kProxy; return;
    }
  }
  const size_t nup = r.Varint();
  std::vector<bool> env(nup, false);
  for (size_t i = 0; i < nup && r.ok(); ++i) {
    const uint8_t instack = r.Byte();
    const uint8_t idx = r.Byte();
    r.Byte();  // kind
    env[i] = is_main ? i == 0  // the main chunk's first upvalue is _ENV
                     : instack == 0 && idx < env_of_parent.size() && env_of_parent[idx];
  }
  if (!r.ok()) {
    *access = GlobalAccess::kProxy;
    return;
  }
  facts->instructions += code.size();
  for (size_t pc = 0; pc < code.size(); ++pc) {
    const uint32_t ins = code[pc];
    const uint32_t op = ins & 0x7f;
    const uint32_t a = (ins >> 7) & 0xff;
    const uint32_t b = (ins >> 16) & 0xff;
    const uint32_t c = (ins >> 24) & 0xff;
    const bool backward_jump =
        op == kJmp && static_cast<int64_t>(ins >> 7) - ((int64_t{1} << 24) - 1) < 0;
    if (op == kForLoop || op == kTForLoop || op == kClosure || backward_jump) {
      facts->straight_line = false;
    }
    if ((op == kSetTabUp && a < nup && env[a]) ||
        ((op == kGetUpval || op == kSetUpval) && b < nup && env[b])) {
      *access = GlobalAccess::kProxy;
      return;
    }
    if (op != kGetTabUp) continue;
    if (b >= nup || c >= strings.size()) {  // not the format we know
      *access = GlobalAccess::kProxy;
      return;
    }
    if (env[b] && (strings[c] == "_G" || strings[c] == "load" || strings[c] == "loadstring")) {
      facts->reaches_real_globals = true;
    }
    if (env[b] && IsLibraryName(strings[c])) {
      const uint32_t next = pc + 1 < code.size() ? code[pc + 1] : 0;
      const bool consumed = (next & 0x7f) == kGetField && ((next >> 7) & 0xff) == a &&
                            ((next >> 16) & 0xff) == a;
      if (!consumed && *access == GlobalAccess::kDirectLibraries) {
        *access = GlobalAccess::kDirect;
      }
    }
  }
  const size_t nprotos = r.Varint();
  for (size_t i = 0; i < nprotos && *access != GlobalAccess::kProxy; ++i) {
    ScanProto(r, env, false, facts);
  }
  if (*access == GlobalAccess::kProxy) return;
  // Debug information (a stripped dump still carries the counts).
  r.Skip(r.Varint());                                                     // lineinfo
  for (size_t n = r.Varint(), i = 0; i < n && r.ok(); ++i) r.Varint(), r.Varint();
  for (size_t n = r.Varint(), i = 0; i < n && r.ok(); ++i) r.String(), r.Varint(), r.Varint();
  for (size_t n = r.Varint(), i = 0; i < n && r.ok(); ++i) r.String();
  if (!r.ok()) *access = GlobalAccess::kProxy;
}

int DumpWriter(lua_State*, const void* p, size_t size, void* ud) {
  static_cast<std::string*>(ud)->append(static_cast<const char*>(p), size);
  return 0;
}

// Classifies the Lua function on top of the stack (a freshly compiled chunk). Anything
// unexpected gives the safe answer: the proxy, the real globals reached, a step hook.
ChunkFacts ClassifyChunk(lua_State* L) {
  ChunkFacts safe;
  safe.access = GlobalAccess::kProxy;
  safe.reaches_real_globals = true;
  safe.straight_line = false;
  std::string dump;
  if (lua_dump(L, DumpWriter, &dump, /*strip=*/1) != 0) return safe;
  static constexpr char kHeader[] = "\x1bLua\x54\x00\x19\x93\r\n\x1a\n\x04\x08\x08";
  constexpr size_t kHeaderLen = sizeof(kHeader) - 1;
  if (dump.size() < kHeaderLen + 16 + 1 ||
      dump.compare(0, kHeaderLen, kHeader, kHeaderLen) != 0) {
    return safe;
  }
  BytecodeReader r(std::string_view(dump).substr(kHeaderLen + 16));  // + LUAC_INT, LUAC_NUM
  r.Byte();  // number of upvalues of the main closure
  ChunkFacts facts;
  ScanProto(r, {}, true, &facts);
  if (facts.access == GlobalAccess::kProxy) return safe;
  // load and loadstring run code this scan has not seen.
  if (facts.reaches_real_globals) facts.straight_line = false;
  return facts;
}

const ScriptEntry* HostState::CreateFunction(std::string_view body, Reply* error) {
  char sha[40];
  Sha1HexTo(body, sha);
  if (const ScriptEntry* found = FindBySha(std::string_view(sha, 40))) return found;

  ScriptEntry entry;
  size_t shebang_len = 0;
  std::string err;
  if (!ParseShebang(body, &entry.compat, &entry.flags, &shebang_len, &err)) {
    *error = Reply::Error("ERR " + err);
    return nullptr;
  }
  const std::string_view code = body.substr(shebang_len);
  if (LoadText(L_, code, "@user_script") != LUA_OK) {
    std::string msg = lua_tostring(L_, -1) != nullptr ? lua_tostring(L_, -1) : "?";
    lua_pop(L_, 1);
    msg = Lua51ErrorText(std::move(msg));
    *error = Reply::Error(MapCrLf("ERR Error compiling script (new function): " + msg));
    return nullptr;
  }
  const ChunkFacts facts = ClassifyChunk(L_);
  entry.access = facts.access;
  entry.reaches_real_globals = facts.reaches_real_globals;
  entry.needs_step_hook = !facts.straight_line || facts.instructions >= step_budget_;
  if (entry.access != GlobalAccess::kProxy) {
    // The script's own global table: the same names as the real one (with the real library
    // tables for kDirectLibraries; _G stays the proxy) and the same metatable.
    lua_rawgeti(L_, LUA_REGISTRYINDEX, globals_ref_);
    lua_newtable(L_);
    lua_pushnil(L_);
    while (lua_next(L_, -3) != 0) {
      const bool is_g =
          lua_type(L_, -2) == LUA_TSTRING && std::strcmp(lua_tostring(L_, -2), "_G") == 0;
      if (entry.access == GlobalAccess::kDirectLibraries && !is_g) {
        PushUnproxied(L_, -1);
        lua_replace(L_, -2);
      }
      lua_pushvalue(L_, -2);
      lua_insert(L_, -2);
      lua_rawset(L_, -4);
    }
    lua_getmetatable(L_, -2);
    lua_setmetatable(L_, -2);
    lua_remove(L_, -2);
    lua_pushvalue(L_, -1);
    entry.env_ref = luaL_ref(L_, LUA_REGISTRYINDEX);
    lua_setupvalue(L_, -2, 1);
  }
  entry.fn_ref = luaL_ref(L_, LUA_REGISTRYINDEX);
  entry.sha.assign(sha, 40);
  entry.body.assign(body);
  auto [it, inserted] = scripts_.emplace(entry.sha, std::move(entry));
  assert(inserted);
  by_body_.emplace(std::string_view(it->second.body), &it->second);
  return &it->second;
}

Reply HostState::Eval(Ctx& ctx, const Argv& argv) {
  last_ran_out_ = false;
  assert(argv.size() >= 3);
  const std::string& name = argv[0];
  const bool evalsha = name.size() >= 7 && (name[4] == 's' || name[4] == 'S');
  const bool ro = name.size() > 3 && (name.back() == 'o' || name.back() == 'O');

  if (evalsha && argv[1].size() != 40) {
    return Reply::Error("NOSCRIPT No matching script. Please use EVAL.");
  }
  if (run_ != nullptr) {
    // Only possible if a command run from a script called back into this server.
    return Reply::Error("ERR lockstep: EVAL re-entered while a script is running");
  }

  // The script, if known: EVAL looks its body up, EVALSHA its digest.
  const ScriptEntry* script = nullptr;
  if (evalsha) {
    script = FindBySha(argv[1]);
  } else {
    script = FindByBody(argv[1]);
  }

  // processCommand's replica check uses the script's flags: a shebang script that may write is
  // a write command.
  if (server_.is_replica()) {
    bool compat = true;
    uint32_t flags = 0;
    if (script != nullptr) {
      compat = script->compat;
      flags = script->flags;
    } else if (!evalsha) {
      size_t len;
      std::string err;
      if (!ParseShebang(argv[1], &compat, &flags, &len, &err)) compat = true;
    }
    if (!compat && !(flags & kFlagNoWrites)) {
      return Reply::Error("READONLY You can't write against a read only replica.");
    }
  }

  const std::optional<int64_t> numkeys = ParseInt64(argv[2]);
  if (!numkeys) return Reply::Error(std::string(err::kNotInteger));
  if (*numkeys > static_cast<int64_t>(argv.size()) - 3) {
    return Reply::Error("ERR Number of keys can't be greater than number of args");
  }
  if (*numkeys < 0) return Reply::Error("ERR Number of keys can't be negative");

  if (script == nullptr) {
    if (evalsha) return Reply::Error("NOSCRIPT No matching script. Please use EVAL.");
    Reply error;
    script = CreateFunction(argv[1], &error);
    if (script == nullptr) return error;
  }

  // scriptPrepareForRun.
  bool read_only = ro;
  if (!script->compat) {
    if (!(script->flags & kFlagNoWrites)) {
      if (ro) {
        return Reply::Error("ERR Can not execute a script with write flag using *_ro command.");
      }
    } else {
      read_only = true;
    }
  }
  return Run(ctx, *script, argv, static_cast<size_t>(*numkeys), read_only);
}

// The leading fields of Lua 5.4.4's Table (lobject.h). Reading them lets SetArgTable see, in a
// few loads, whether a script changed the shape of KEYS/ARGV. HostState checks this layout
// against the library at start-up (TableLayoutMatches) and falls back to a full traversal when
// it does not match, so a different Lua build costs speed, never correctness.
struct TableLayout54 {
  void* next;
  uint8_t tt;
  uint8_t marked;
  uint8_t flags;
  uint8_t lsizenode;
  unsigned int alimit;
  void* array;
  void* node;
  void* lastfree;  // null while the hash part is Lua's shared empty "dummy" node
  void* metatable;
  void* gclist;
};

size_t RealArraySize(const TableLayout54* t) {
  constexpr uint8_t kBitRas = 1u << 7;  // BITRAS: alimit is not the real size
  unsigned int size = t->alimit;
  if ((t->flags & kBitRas) == 0 || (size & (size - 1)) == 0) return size;
  size |= size >> 1;
  size |= size >> 2;
  size |= size >> 4;
  size |= size >> 8;
  size |= size >> 16;
  return size + 1;
}

bool TableLayoutMatches(lua_State* L) {
  lua_createtable(L, 3, 0);
  const auto* t = static_cast<const TableLayout54*>(lua_topointer(L, -1));
  bool ok = t->tt == LUA_TTABLE && t->lastfree == nullptr &&
            t->metatable == nullptr && RealArraySize(t) == 3 && t->array != nullptr;
  lua_pushliteral(L, "x");
  lua_setfield(L, -2, "x");
  ok = ok && t->lastfree != nullptr && t->lsizenode == 0;
  lua_createtable(L, 0, 0);
  lua_setmetatable(L, -2);
  ok = ok && t->metatable != nullptr;
  lua_pop(L, 1);
  return ok;
}

void HostState::SetArgTable(ArgTable* table, const ScriptEntry& script, int which,
                            const char* name, const Argv& argv, size_t first, size_t count) {
  lua_State* L = L_;
  bool reuse = false;
  if (table->ref != LUA_NOREF) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, table->ref);
    const int t = lua_gettop(L);
    // The table can be reused when it holds no key outside 1..len and has no metatable. With
    // the layout known, that is: no metatable, no hash part, nothing stored past len in the
    // array part. Otherwise a traversal decides.
    const auto* layout = static_cast<const TableLayout54*>(lua_topointer(L, t));
    if (table_layout_known_ && layout->metatable == nullptr && layout->lastfree == nullptr) {
      const size_t asize = RealArraySize(layout);
      reuse = asize >= count;
      for (size_t i = table->len + 1; reuse && i <= asize; ++i) {
        reuse = lua_rawgeti(L, t, static_cast<lua_Integer>(i)) == LUA_TNIL;
        lua_pop(L, 1);
      }
    } else if (lua_getmetatable(L, t) != 0) {
      lua_pop(L, 1);
    } else {
      reuse = true;
      size_t entries = 0;
      lua_pushnil(L);
      while (lua_next(L, t) != 0) {
        const bool integer_key = lua_isinteger(L, -2);
        const lua_Integer k = integer_key ? lua_tointeger(L, -2) : 0;
        if (!integer_key || k < 1 || static_cast<size_t>(k) > table->len ||
            ++entries > table->len) {
          reuse = false;
          break;
        }
        lua_pop(L, 1);
      }
      lua_settop(L, t);
    }
    if (!reuse) {
      lua_pop(L, 1);
      luaL_unref(L, LUA_REGISTRYINDEX, table->ref);
    }
  }
  if (!reuse) {
    lua_createtable(L, static_cast<int>(count), 0);
    lua_pushvalue(L, -1);
    table->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    // luaL_ref may hand out the number of a released table again: forget what is installed.
    current_arg_tables_[which] = LUA_NOREF;
    table->len = 0;
    table->in_env = false;
  }
  if (script.env_ref != LUA_NOREF && !table->in_env) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, script.env_ref);
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
    table->in_env = true;
  }
  if (script.reaches_real_globals && current_arg_tables_[which] != table->ref) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, globals_ref_);
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
    current_arg_tables_[which] = table->ref;
  }
  // Entries that already hold this call's argument (the same key names as last time) are left
  // alone: comparing bytes is cheaper than hashing a new Lua string.
  for (size_t i = 0; i < count; ++i) {
    const std::string& a = argv[first + i];
    const auto k = static_cast<lua_Integer>(i + 1);
    if (i < table->len && lua_rawgeti(L, -1, k) == LUA_TSTRING) {
      size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      const bool same = len == a.size() && std::memcmp(s, a.data(), len) == 0;
      lua_pop(L, 1);
      if (same) continue;
    } else if (i < table->len) {
      lua_pop(L, 1);
    }
    lua_pushlstring(L, a.data(), a.size());
    lua_rawseti(L, -2, k);
  }
  for (size_t i = count; i < table->len; ++i) {
    lua_pushnil(L);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  table->len = count;
  lua_pop(L, 1);
}

Reply HostState::Run(Ctx& ctx, const ScriptEntry& script, const Argv& argv, size_t numkeys,
                     bool ro) {
  lua_State* L = L_;
  assert(lua_gettop(L) == 0);
  lua_pushcfunction(L, Guarded<ErrHandler>);    // 1
  lua_rawgeti(L, LUA_REGISTRYINDEX, script.fn_ref);  // 2
  assert(lua_isfunction(L, 2));

  SetArgTable(&script.keys, script, 0, "KEYS", argv, 3, numkeys);
  SetArgTable(&script.args, script, 1, "ARGV", argv, 3 + numkeys, argv.size() - 3 - numkeys);

  RunState run;
  run.caller = &ctx;
  run.script = &script;
  run.read_only = ro;
  run_ = &run;
  steps_ = 0;
  if (script.needs_step_hook) lua_sethook(L, &HostState::CountHook, LUA_MASKCOUNT, hook_count_);
  mem_enforce_ = true;
  budget_live_ = true;
  const int status = lua_pcall(L, 0, 1, 1);
  budget_live_ = false;
  mem_enforce_ = false;
  lua_sethook(L, nullptr, 0, 0);  // also the one RaiseStop installs in a hook-free script
  last_steps_ = steps_;
  last_ran_out_ = run.stop == StopReason::kBudget;

  Reply reply = status == LUA_OK && run.stop == StopReason::kNone ? ReturnValueToReply(run)
                                                                    : ErrorToReply(run, status);
  run_ = nullptr;

  // Forget next()'s snapshots (they hold the key arrays of this script's tables).
  if (next_cache_used_) {
    NewNextCache(L);
    next_cache_used_ = false;
  }
  lua_settop(L, 0);

  if (run.stop != StopReason::kNone) {
    lua_gc(L, LUA_GCCOLLECT, 0);
    mem_limit_ = memory_bytes_max_;
  }
  // collectgarbage("stop") in one script must not starve every later one of memory.
  if (gc_stopped_) {
    lua_gc(L, LUA_GCRESTART, 0);
    gc_stopped_ = false;
  }
  return reply;
}

// Builds the client's reply from the script's return value (luaReplyToRedisReply), iteratively
// so that a 7995-deep nesting does not need 7995 C++ frames.
Reply HostState::ReturnValueToReply(RunState& run) {
  lua_State* L = L_;
  // The usual results of lock scripts, without the general machinery below.
  if (lua_type(L, -1) == LUA_TNIL) return Reply::Null();
  if (lua_isinteger(L, -1)) {
    const lua_Integer i = lua_tointeger(L, -1);
    if (i >= -static_cast<lua_Integer>(kTwo53) && i <= static_cast<lua_Integer>(kTwo53)) {
      return Reply::Integer(i);
    }
  }
  const Ctx& caller = *run.caller;
  struct Frame {
    Reply* out;
    int table;          // Lua stack index of the sequence being converted
    lua_Integer next;   // next index to read
    lua_Integer count;  // -1: until the first nil (arrays)
  };
  std::vector<Frame> frames;
  Reply root;

  // The conversion is the script's work too, charged to the same budget (ScriptBudget's units:
  // an element visited, the bytes of a string copied, a key order built), and the reply it
  // builds is bounded by the script's memory cap. A table that holds itself a hundred times
  // over would otherwise expand without end (redis-server converts it until it runs out of
  // memory or time). The first charge past either bound stops the conversion.
  size_t reply_bytes = 0;
  bool over = false;
  auto charge = [&](uint64_t units, size_t bytes) {
    steps_ += units;
    reply_bytes += bytes;
    if (steps_ > step_budget_ || reply_bytes > memory_bytes_max_) over = true;
    return !over;
  };

  // Converts the value on top of the stack into *out; a table to iterate stays on the stack
  // and gets a frame, anything else is popped.
  auto convert_top = [&](Reply* out, size_t depth) {
    if (!charge(ScriptBudget::kElementUnits, sizeof(Reply))) {
      lua_pop(L, 1);
      return;
    }
    if (depth > static_cast<size_t>(kReplyDepthMax) || !lua_checkstack(L, 8)) {
      *out = Reply::Error("ERR reached lua stack limit");
      lua_pop(L, 1);
      return;
    }
    switch (lua_type(L, -1)) {
      case LUA_TSTRING: {
        size_t len = 0;
        const char* s = lua_tolstring(L, -1, &len);
        if (!charge(len / ScriptBudget::kBytesPerUnit, len)) {
          lua_pop(L, 1);
          return;
        }
        *out = Reply::Bulk(std::string(s, len));
        lua_pop(L, 1);
        return;
      }
      case LUA_TBOOLEAN: {
        const bool b = lua_toboolean(L, -1);
        lua_pop(L, 1);
        if (run.resp == 2) {
          *out = b ? Reply::Integer(1) : Reply::Null();
        } else {
          *out = caller.resp == 2 ? Reply::Integer(b ? 1 : 0) : Reply::Bool(b);
        }
        return;
      }
      case LUA_TNUMBER: {
        double d;
        if (lua_isinteger(L, -1)) {
          const lua_Integer i = lua_tointeger(L, -1);
          if (i >= -static_cast<lua_Integer>(kTwo53) && i <= static_cast<lua_Integer>(kTwo53)) {
            *out = Reply::Integer(i);
            lua_pop(L, 1);
            return;
          }
          d = static_cast<double>(i);  // Lua 5.1 could only hold the rounded double.
        } else {
          d = lua_tonumber(L, -1);
        }
        *out = Reply::Integer(TruncateLikeX86(d));
        lua_pop(L, 1);
        return;
      }
      case LUA_TTABLE:
        break;
      default:
        *out = Reply::Null();
        lua_pop(L, 1);
        return;
    }
    const int t = lua_gettop(L);
    auto field = [&](const char* name) {
      lua_pushstring(L, name);
      return lua_rawget(L, t);
    };
    if (field("err") == LUA_TSTRING) {
      std::string_view e = UpToNul(lua_tostring(L, -1));
      while (!e.empty() && (e.back() == '\r' || e.back() == '\n')) e.remove_suffix(1);
      *out = Reply::Error(MapCrLf(std::string(e)));
      lua_settop(L, t - 1);
      return;
    }
    lua_pop(L, 1);
    if (field("ok") == LUA_TSTRING) {
      *out = Reply::Status(MapCrLf(std::string(UpToNul(lua_tostring(L, -1)))));
      lua_settop(L, t - 1);
      return;
    }
    lua_pop(L, 1);
    if (field("double") == LUA_TNUMBER) {
      *out = caller.Double(lua_tonumber(L, -1));
      lua_settop(L, t - 1);
      return;
    }
    lua_pop(L, 1);
    if (field("big_number") == LUA_TSTRING) {
      // A RESP2 client receives a big number as a bulk string.
      size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      *out = Reply::Bulk(MapCrLf(std::string(s, len)));
      lua_settop(L, t - 1);
      return;
    }
    lua_pop(L, 1);
    if (field("verbatim_string") == LUA_TTABLE) {
      const int v = lua_gettop(L);
      lua_pushliteral(L, "format");
      if (lua_rawget(L, v) == LUA_TSTRING) {
        lua_pushliteral(L, "string");
        if (lua_rawget(L, v) == LUA_TSTRING) {
          size_t len = 0;
          const char* s = lua_tolstring(L, -1, &len);
          *out = Reply::Bulk(std::string(s, len));  // RESP2: the text only
          lua_settop(L, t - 1);
          return;
        }
      }
      lua_settop(L, v);
    }
    lua_pop(L, 1);
    for (const char* kind : {"map", "set"}) {
      if (field(kind) == LUA_TTABLE) {
        const bool is_map = kind[0] == 'm';
        const int src = lua_gettop(L);
        const int nkeys = PushKeysInFixedOrder(L, src);
        if (!charge(ScriptBudget::kKeyOrderUnits +
                        2 * ScriptBudget::kElementUnits * static_cast<uint64_t>(nkeys),
                    0)) {
          lua_settop(L, t - 1);
          return;
        }
        const int keys = lua_gettop(L);
        // The sequence to convert: k1, v1, k2, v2, ... for a map; k1, k2, ... for a set.
        lua_createtable(L, is_map ? 2 * nkeys : nkeys, 0);
        lua_Integer n = 0;
        for (int j = 1; j <= nkeys; ++j) {
          lua_rawgeti(L, keys, j);
          if (is_map) {
            lua_pushvalue(L, -1);
            lua_rawget(L, src);
            lua_rawseti(L, -3, n + 2);
          }
          lua_rawseti(L, -2, n + 1);
          n += is_map ? 2 : 1;
        }
        lua_replace(L, t);
        lua_settop(L, t);
        *out = Reply::Array();
        if (caller.resp == 3) out->type = is_map ? Reply::Type::kMap : Reply::Type::kSet;
        out->elements.reserve(static_cast<size_t>(n));
        frames.push_back(Frame{out, t, 1, n});
        return;
      }
      lua_pop(L, 1);
    }
    *out = Reply::Array();
    frames.push_back(Frame{out, t, 1, -1});
  };

  // The usual results (a number, nil, a string, a status) need no frames.
  if (lua_type(L, -1) != LUA_TTABLE) {
    convert_top(&root, 1);
    return root;
  }
  convert_top(&root, 1);
  while (!frames.empty()) {
    Frame& f = frames.back();
    if (f.count >= 0 && f.next > f.count) {
      lua_settop(L, f.table - 1);
      frames.pop_back();
      continue;
    }
    const int type = lua_rawgeti(L, f.table, f.next++);
    if (f.count < 0 && type == LUA_TNIL) {
      lua_settop(L, f.table - 1);
      frames.pop_back();
      continue;
    }
    f.out->elements.emplace_back();
    Reply* slot = &f.out->elements.back();
    convert_top(slot, frames.size() + 1);
    if (over) break;
  }
  if (over) {
    lua_settop(L, 0);
    if (steps_ > step_budget_) {
      return Reply::Error(
          "BUSY lockstep stopped converting the script's return value into a reply after " +
          std::to_string(steps_) + " steps of work in all (script_step_budget " +
          std::to_string(step_budget_) + "): a table nested in itself, or too large a reply. "
          "script: " + run.script->sha);
    }
    return Reply::Error("ERR lockstep stopped converting the script's return value into a "
                        "reply: it exceeded " + std::to_string(memory_bytes_max_) +
                        " bytes (script_memory_bytes_max), a table nested in itself or too "
                        "large a reply. script: " + run.script->sha);
  }
  return root;
}

Reply HostState::ErrorToReply(RunState& run, int status) {
  lua_State* L = L_;
  const std::string& sha = run.script->sha;
  if (run.stop == StopReason::kBudget) {
    return Reply::Error(
        "BUSY lockstep stopped the script after " + std::to_string(steps_) +
        " steps of Lua instructions and library work (script_step_budget " +
        std::to_string(step_budget_) +
        "); redis-server would keep running it and answer every other client \"BUSY Redis is "
        "busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\" script: " +
        sha);
  }
  if (run.stop == StopReason::kMemory) {
    return Reply::Error("ERR lockstep stopped the script: its Lua memory exceeded " +
                        std::to_string(memory_bytes_max_) +
                        " bytes (script_memory_bytes_max); redis-server has no such cap "
                        "script: " + sha);
  }
  (void)status;
  if (lua_type(L, -1) != LUA_TTABLE) {
    // Not through the handler: out of memory, or an error inside the error handler.
    std::string msg = "execution failure";
    ToStringLua51(L, -1, &msg);
    if (msg.size() > 100) msg.resize(100);
    std::string text = "ERR Error running script " + sha + ", " + msg;
    while (!text.empty() && (text.back() == '\r' || text.back() == '\n')) text.pop_back();
    return Reply::Error(MapCrLf(std::move(text)));
  }
  const int t = lua_gettop(L);
  std::string err, source, line;
  bool have_err = false, have_source = false, have_line = false;
  lua_pushliteral(L, "err");
  lua_rawget(L, t);
  have_err = ToStringLua51(L, -1, &err);
  lua_pushliteral(L, "source");
  lua_rawget(L, t);
  have_source = ToStringLua51(L, -1, &source);
  lua_pushliteral(L, "line");
  lua_rawget(L, t);
  have_line = ToStringLua51(L, -1, &line);
  lua_settop(L, t);
  // A table without an err string (error({})) crashes Debian's redis-server 7.0.15; the
  // emulator answers instead (docs/fidelity.md).
  std::string text = have_err ? std::string(UpToNul(err)) : std::string("ERR unknown error");
  if (have_source && have_line) {
    text += " script: " + sha + ", on " + std::string(UpToNul(source)) + ":" + line + ".";
  }
  while (!text.empty() && (text.back() == '\r' || text.back() == '\n')) text.pop_back();
  return Reply::Error(MapCrLf(std::move(text)));
}

Reply HostState::Script(Ctx&, const Argv& argv) {
  assert(argv.size() >= 2);
  const std::string sub = AsciiLowered(argv[1]);
  if (sub == "load" && argv.size() == 3) {
    Reply error;
    const ScriptEntry* script = CreateFunction(argv[2], &error);
    if (script == nullptr) return error;
    return Reply::Bulk(script->sha);
  }
  if (sub == "exists" && argv.size() >= 3) {
    std::vector<Reply> out;
    out.reserve(argv.size() - 2);
    for (size_t i = 2; i < argv.size(); ++i) {
      out.push_back(Reply::Integer(FindBySha(argv[i]) != nullptr ? 1 : 0));
    }
    return Reply::Array(std::move(out));
  }
  if (sub == "flush") {
    // NOSCRIPT keeps scripts from calling SCRIPT FLUSH; destroying the VM under a running
    // script would be fatal, so check it anyway.
    if (run_ != nullptr) return Reply::Error("ERR This Redis command is not allowed from script");
    if (argv.size() > 3 ||
        (argv.size() == 3 && strcasecmp(argv[2].c_str(), "sync") != 0 &&
         strcasecmp(argv[2].c_str(), "async") != 0)) {
      return Reply::Error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
    }
    // scriptingReset: a new VM; the rand48 state lives in the host and carries on.
    DestroyVm();
    CreateVm();
    return Reply::Ok();
  }
  if (sub == "kill" && argv.size() == 2) {
    // Scripts run to completion inside one call, so no script is ever running when another
    // command arrives.
    return Reply::Error("NOTBUSY No scripts in execution right now.");
  }
  if (sub == "help" && argv.size() == 2) {
    static const char* const kHelp[] = {
        "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
        "HELP",
        "    Prints this help.",
    };
    std::vector<Reply> out;
    for (const char* line : kHelp) out.push_back(Reply::Status(line));
    return Reply::Array(std::move(out));
  }
  std::string upper = argv[0];
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return Reply::Error("ERR unknown subcommand '" + argv[1].substr(0, 128) + "'. Try " + upper +
                      " HELP.");
}

}  // namespace

namespace {
std::atomic<lua_Alloc> foreign_alloc{nullptr};
std::atomic<ScriptBudget::ForeignCharge> foreign_charge{nullptr};
}  // namespace

void ScriptBudget::Charge(lua_State* L, uint64_t units) {
  HostState* host = HostState::OfAnyState(L);
  if (host != nullptr) {
    host->Charge(L, units);
    return;
  }
  void* ud = nullptr;
  const lua_Alloc alloc = lua_getallocf(L, &ud);
  if (alloc != nullptr && alloc == foreign_alloc.load(std::memory_order_acquire)) {
    foreign_charge.load(std::memory_order_acquire)(L, ud, units);
  }
}

void ScriptBudget::RegisterForeignHost(lua_Alloc alloc, ForeignCharge charge) {
  foreign_charge.store(charge, std::memory_order_release);
  foreign_alloc.store(alloc, std::memory_order_release);
  InstallVmCharge();
}

// ---------------------------------------------------------------------------------------------
// ScriptHost
// ---------------------------------------------------------------------------------------------

struct ScriptHost::Impl : HostState {
  using HostState::HostState;
};

ScriptHost::ScriptHost(Server& server, uint64_t step_budget, size_t memory_bytes_max)
    : impl_(std::make_unique<Impl>(server, step_budget, memory_bytes_max)) {}

ScriptHost::~ScriptHost() = default;

Reply ScriptHost::Eval(Ctx& ctx, const Argv& argv) { return impl_->Eval(ctx, argv); }

Reply ScriptHost::Script(Ctx& ctx, const Argv& argv) { return impl_->Script(ctx, argv); }

std::string ScriptHost::Sha1Hex(std::string_view body) { return lockstep::Sha1Hex(body); }

std::string ScriptHost::CompileError(const std::string& body) {
  static std::mutex mutex;
  static std::set<std::string> compiled;  // SHA1s of bodies that compiled.
  const std::string sha = lockstep::Sha1Hex(body);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (compiled.count(sha) > 0) return "";
  }
  Server server;
  const Reply reply = server.Execute({"SCRIPT", "LOAD", body}, 0);
  if (reply.is_error()) return reply.str;
  std::lock_guard<std::mutex> lock(mutex);
  compiled.insert(sha);
  return "";
}

uint64_t ScriptHost::last_script_steps() const { return impl_->last_script_steps(); }
bool ScriptHost::last_script_ran_out() const { return impl_->last_script_ran_out(); }

}  // namespace lockstep
