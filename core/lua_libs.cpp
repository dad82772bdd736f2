// cjson and bit for the emulated Redis 7.0 Lua environment, written for Lua 5.4.
//
// The behaviour (accepted input, output bytes, error texts) follows Redis 7.0.15's bundled
// lua-cjson 2.1.0 and LuaBitOp 1.0.2; see lua_libs.h for the two deliberate differences.
#include "core/lua_libs.h"

#include <bit>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "core/script_budget.h"

namespace lockstep::lualib {

namespace {

// The address of this variable is the registry key of the proxy -> real table map.
const char kProxyRegistryKey = 0;

// Runs a lua_CFunction body and turns a C++ exception into a Lua error. A Lua error raised
// inside the body is a C++ exception too (the C++ build of Lua), but not a std::exception, so it
// passes through untouched.
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
  // Outside the catch block: the C++ exception object is gone before Lua unwinds again.
  return luaL_error(L, "lockstep internal error: %s", what);
}

}  // namespace

// --- shared helpers -----------------------------------------------------------------------

void RegisterProxy(lua_State* L, int proxy_idx, int real_idx) {
  proxy_idx = lua_absindex(L, proxy_idx);
  real_idx = lua_absindex(L, real_idx);
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &kProxyRegistryKey) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &kProxyRegistryKey);
  }
  lua_pushvalue(L, proxy_idx);
  lua_pushvalue(L, real_idx);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

void PushUnproxied(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE || lua_getmetatable(L, idx) == 0) {
    lua_pushvalue(L, idx);
    return;
  }
  lua_pop(L, 1);  // Only tables with a metatable can be proxies.
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &kProxyRegistryKey) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_pushvalue(L, idx);
    return;
  }
  lua_pushvalue(L, idx);
  if (lua_rawget(L, -2) == LUA_TNIL) {
    lua_pop(L, 2);
    lua_pushvalue(L, idx);
    return;
  }
  lua_remove(L, -2);
}

bool IsProxy(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  if (lua_type(L, idx) != LUA_TTABLE) return false;
  PushUnproxied(L, idx);
  const bool proxy = !lua_rawequal(L, -1, idx);
  lua_pop(L, 1);
  return proxy;
}

size_t FormatNumberLua51(lua_Number n, char buf[32]) {
  const int len = std::snprintf(buf, 32, "%.14g", static_cast<double>(n));
  return static_cast<size_t>(len);
}

void PushNumberLua51(lua_State* L, double d) {
  constexpr double kTwo53 = 9007199254740992.0;
  if (std::floor(d) == d && std::fabs(d) <= kTwo53 && !(d == 0 && std::signbit(d))) {
    lua_pushinteger(L, static_cast<lua_Integer>(d));
  } else {
    lua_pushnumber(L, d);
  }
}

namespace {

struct KeyRef {
  int cls;         // 0 number, 1 string, 2 boolean, 3 anything else
  bool is_int;     // number subtype
  lua_Integer i;
  double d;
  const char* s;
  size_t len;
  int pos;         // index in the temporary key array
};

bool KeyLess(const KeyRef& a, const KeyRef& b) {
  if (a.cls != b.cls) return a.cls < b.cls;
  switch (a.cls) {
    case 0:
      if (a.is_int && b.is_int) return a.i < b.i;
      if (a.d != b.d) return a.d < b.d;
      return a.is_int && !b.is_int;  // Only possible beyond 2^53; any fixed rule will do.
    case 1: {
      const int c = std::memcmp(a.s, b.s, std::min(a.len, b.len));
      return c != 0 ? c < 0 : a.len < b.len;
    }
    case 2:
      return a.i < b.i;
    default:
      return false;  // Reference types keep traversal order (stable sort).
  }
}

int PushKeysImpl(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  PushUnproxied(L, idx);
  const int t = lua_gettop(L);

  lua_Integer n = 0;
  while (lua_rawgeti(L, t, n + 1) != LUA_TNIL) {
    lua_pop(L, 1);
    ++n;
  }
  lua_pop(L, 1);

  lua_newtable(L);  // The other keys, kept alive (and addressable) while we sort.
  const int scratch = lua_gettop(L);
  std::vector<KeyRef> others;
  lua_pushnil(L);
  while (lua_next(L, t) != 0) {
    lua_pop(L, 1);  // the value
    KeyRef k{};
    switch (lua_type(L, -1)) {
      case LUA_TNUMBER:
        k.cls = 0;
        k.is_int = lua_isinteger(L, -1);
        if (k.is_int) {
          k.i = lua_tointeger(L, -1);
          if (k.i >= 1 && k.i <= n) continue;  // Part of the array prefix.
          k.d = static_cast<double>(k.i);
        } else {
          k.d = lua_tonumber(L, -1);
        }
        break;
      case LUA_TSTRING:
        k.cls = 1;
        k.s = lua_tolstring(L, -1, &k.len);
        break;
      case LUA_TBOOLEAN:
        k.cls = 2;
        k.i = lua_toboolean(L, -1);
        break;
      default:
        k.cls = 3;
        break;
    }
    k.pos = static_cast<int>(others.size()) + 1;
    others.push_back(k);
    lua_pushvalue(L, -1);
    lua_rawseti(L, scratch, k.pos);
  }
  // The work (core/script_budget.h): a fixed cost for the tables built, one element per key of
  // the array prefix, and a comparison sort of the other keys. A script that calls pairs or
  // next on a large table in a loop pays for it.
  const uint64_t sorted = others.size();
  const uint64_t elements =
      2 * static_cast<uint64_t>(n) + sorted * (4 + 2 * std::bit_width(sorted));
  ScriptBudget::Charge(L, ScriptBudget::kKeyOrderUnits + elements * ScriptBudget::kElementUnits);
  std::stable_sort(others.begin(), others.end(), KeyLess);

  const lua_Integer total = n + static_cast<lua_Integer>(others.size());
  lua_createtable(L, static_cast<int>(std::min<lua_Integer>(total, INT_MAX)), 0);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_pushinteger(L, i);
    lua_rawseti(L, -2, i);
  }
  for (size_t j = 0; j < others.size(); ++j) {
    lua_rawgeti(L, scratch, others[j].pos);
    lua_rawseti(L, -2, n + 1 + static_cast<lua_Integer>(j));
  }
  lua_replace(L, t);  // Result where the unproxied table was; drop the scratch array.
  lua_settop(L, t);
  return static_cast<int>(total);
}

}  // namespace

int PushKeysInFixedOrder(lua_State* L, int idx) { return PushKeysImpl(L, idx); }

// --- cjson --------------------------------------------------------------------------------

namespace {

struct JsonConfig {
  int encode_sparse_convert = 0;
  int encode_sparse_ratio = 2;
  int encode_sparse_safe = 10;
  int encode_max_depth = 1000;
  int encode_invalid_numbers = 0;  // 0 off (error), 1 on ("inf"/"nan"), 2 "null"
  int encode_number_precision = 14;
  int encode_keep_buffer = 1;      // Accepted and reported; buffering is an internal matter.
  int decode_invalid_numbers = 1;
  int decode_max_depth = 1000;
};

JsonConfig* FetchConfig(lua_State* L) {
  auto* cfg = static_cast<JsonConfig*>(lua_touserdata(L, lua_upvalueindex(1)));
  if (cfg == nullptr) luaL_error(L, "BUG: Unable to fetch CJSON configuration");
  return cfg;
}

JsonConfig* ArgInit(lua_State* L, int args) {
  luaL_argcheck(L, lua_gettop(L) <= args, args + 1, "found too many arguments");
  while (lua_gettop(L) < args) lua_pushnil(L);
  return FetchConfig(L);
}

// Lua 5.1's luaL_checkinteger truncates a float argument; 5.4's would reject 2.5.
lua_Integer CheckIntegerLua51(lua_State* L, int arg) {
  const lua_Number n = luaL_checknumber(L, arg);
  if (!(n >= -9223372036854775808.0 && n < 9223372036854775808.0)) return LUA_MININTEGER;
  return static_cast<lua_Integer>(n);
}

int IntegerOption(lua_State* L, int optindex, int* setting, int min, int max) {
  if (!lua_isnil(L, optindex)) {
    const lua_Integer value = CheckIntegerLua51(L, optindex);
    char errmsg[64];
    std::snprintf(errmsg, sizeof(errmsg), "expected integer between %d and %d", min, max);
    // lua-cjson always blames argument 1 here; so do we.
    luaL_argcheck(L, min <= value && value <= max, 1, errmsg);
    *setting = static_cast<int>(value);
  }
  lua_pushinteger(L, *setting);
  return 1;
}

int EnumOption(lua_State* L, int optindex, int* setting, const char* const* options,
               int bool_true) {
  static const char* const kBoolOptions[] = {"off", "on", nullptr};
  if (options == nullptr) {
    options = kBoolOptions;
    bool_true = 1;
  }
  if (!lua_isnil(L, optindex)) {
    if (bool_true && lua_isboolean(L, optindex)) {
      *setting = lua_toboolean(L, optindex) * bool_true;
    } else {
      *setting = luaL_checkoption(L, optindex, nullptr, options);
    }
  }
  if (bool_true && (*setting == 0 || *setting == bool_true)) {
    lua_pushboolean(L, *setting);
  } else {
    lua_pushstring(L, options[*setting]);
  }
  return 1;
}

int CfgEncodeSparseArray(lua_State* L) {
  JsonConfig* cfg = ArgInit(L, 3);
  EnumOption(L, 1, &cfg->encode_sparse_convert, nullptr, 1);
  IntegerOption(L, 2, &cfg->encode_sparse_ratio, 0, INT_MAX);
  IntegerOption(L, 3, &cfg->encode_sparse_safe, 0, INT_MAX);
  return 3;
}

int CfgEncodeMaxDepth(lua_State* L) {
  JsonConfig* cfg = ArgInit(L, 1);
  return IntegerOption(L, 1, &cfg->encode_max_depth, 1, INT_MAX);
}

int CfgDecodeMaxDepth(lua_State* L) {
  JsonConfig* cfg = ArgInit(L, 1);
  return IntegerOption(L, 1, &cfg->decode_max_depth, 1, INT_MAX);
}

int CfgEncodeNumberPrecision(lua_State* L) {
  JsonConfig* cfg = ArgInit(L, 1);
  return IntegerOption(L, 1, &cfg->encode_number_precision, 1, 14);
}

int CfgEncodeKeepBuffer(lua_State* L) {
  JsonConfig* cfg = ArgInit(L, 1);
  return EnumOption(L, 1, &cfg->encode_keep_buffer, nullptr, 1);
}

int CfgEncodeInvalidNumbers(lua_State* L) {
  static const char* const kOptions[] = {"off", "on", "null", nullptr};
  JsonConfig* cfg = ArgInit(L, 1);
  return EnumOption(L, 1, &cfg->encode_invalid_numbers, kOptions, 1);
}

int CfgDecodeInvalidNumbers(lua_State* L) {
  JsonConfig* cfg = ArgInit(L, 1);
  return EnumOption(L, 1, &cfg->decode_invalid_numbers, nullptr, 1);
}

// --- encoding ---

// Redis's cjson runs on Lua 5.1, whose lua_checkstack refuses to grow a C function's stack frame
// beyond LUAI_MAXCSTACK (8000) slots. That is what ends a deep nesting when the configured
// maximum depth is higher (cjson.encode_max_depth(1e9)): the encoder holds one slot per nested
// array (the element) and two per nested object (key and value), the decoder one per array
// (the table) and two per object (table and key), plus the argument. Both directions count
// those slots as Redis's cjson holds them, whatever this implementation itself pushes, so the
// "excessive nesting (N)" and "too many nested data structures (N)" errors come at Redis's
// depths: 7998 nested arrays and 4000 nested objects to encode, 7999 and 4000 to decode.
constexpr int kLua51StackSlotsMax = 8000;

struct Encoder {
  lua_State* L;
  const JsonConfig& cfg;
  std::string out;
  ScriptWorkMeter work;
};

[[noreturn]] void EncodeException(lua_State* L, int lindex, const char* reason) {
  luaL_error(L, "Cannot serialise %s: %s", luaL_typename(L, lindex), reason);
  std::abort();  // luaL_error does not return.
}

void AppendString(Encoder& e, int lindex) {
  lua_State* L = e.L;
  std::string& out = e.out;
  size_t len = 0;
  const char* s = lua_tolstring(L, lindex, &len);
  e.work.AddChars(len);  // escaped one by one
  out.push_back('"');
  for (size_t i = 0; i < len; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '/': out += "\\/"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char esc[8];
          std::snprintf(esc, sizeof(esc), "\\u%04x", c);
          out += esc;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
}

void AppendNumber(Encoder& e, int lindex) {
  lua_State* L = e.L;
  const JsonConfig& cfg = e.cfg;
  std::string& out = e.out;
  const double num = lua_tonumber(L, lindex);
  if (cfg.encode_invalid_numbers == 0) {
    if (std::isinf(num) || std::isnan(num)) EncodeException(L, lindex, "must not be NaN or Inf");
  } else if (cfg.encode_invalid_numbers == 1) {
    if (std::isnan(num)) {
      out += "nan";
      return;
    }
  } else if (std::isinf(num) || std::isnan(num)) {
    out += "null";
    return;
  }
  e.work.AddUnits(ScriptBudget::kNumberTextUnits);
  char buf[64];
  const int len = std::snprintf(buf, sizeof(buf), "%.*g", cfg.encode_number_precision, num);
  out.append(buf, static_cast<size_t>(len));
}

// lua-cjson's lua_array_length: the table is an array when every key is a positive integer;
// returns the largest key, or -1 for "encode as an object". The table is on top of the stack.
int ArrayLength(Encoder& e) {
  lua_State* L = e.L;
  const JsonConfig& cfg = e.cfg;
  double max = 0;
  int items = 0;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    e.work.AddUnits(ScriptBudget::kElementUnits);  // lua_array_length's traversal
    if (lua_type(L, -2) == LUA_TNUMBER) {
      const double k = lua_tonumber(L, -2);
      if (k != 0 && std::floor(k) == k && k >= 1) {
        if (k > max) max = k;
        ++items;
        lua_pop(L, 1);
        continue;
      }
    }
    lua_pop(L, 2);
    return -1;
  }
  if (cfg.encode_sparse_ratio > 0 && max > static_cast<double>(items) * cfg.encode_sparse_ratio &&
      max > cfg.encode_sparse_safe) {
    if (!cfg.encode_sparse_convert) EncodeException(L, -1, "excessively sparse array");
    return -1;
  }
  return max > INT_MAX ? INT_MAX : static_cast<int>(max);
}

// slots51: the height of Redis's Lua 5.1 stack frame at this point (see kLua51StackSlotsMax).
void AppendData(Encoder& e, int depth, int slots51);

void AppendTable(Encoder& e, int depth, int slots51) {
  lua_State* L = e.L;
  std::string& out = e.out;
  ++depth;
  // Redis's check: lua_checkstack(l, 3) on Lua 5.1's stack; the 5.4 stack needs its own slots.
  if (depth > e.cfg.encode_max_depth || slots51 + 3 > kLua51StackSlotsMax ||
      !lua_checkstack(L, 6)) {
    luaL_error(L, "Cannot serialise, excessive nesting (%d)", depth);
  }
  e.work.AddUnits(ScriptBudget::kJsonTableUnits);
  // Look through a read-only proxy: cjson.encode(redis) sees the real table, as in Redis.
  PushUnproxied(L, -1);
  const int len = ArrayLength(e);
  if (len > 0) {
    out.push_back('[');
    for (int i = 1; i <= len; ++i) {
      if (i > 1) out.push_back(',');
      lua_rawgeti(L, -1, i);
      AppendData(e, depth, slots51 + 1);  // Redis holds the element
      lua_pop(L, 1);
    }
    out.push_back(']');
  } else {
    out.push_back('{');
    const int nkeys = PushKeysInFixedOrder(L, -1);
    for (int j = 1; j <= nkeys; ++j) {
      if (j > 1) out.push_back(',');
      lua_rawgeti(L, -1, j);  // key
      const int keytype = lua_type(L, -1);
      if (keytype == LUA_TNUMBER) {
        out.push_back('"');
        AppendNumber(e, -1);
        out += "\":";
      } else if (keytype == LUA_TSTRING) {
        AppendString(e, -1);
        out.push_back(':');
      } else {
        EncodeException(L, -1, "table key must be a number or string");
      }
      lua_rawget(L, -3);  // value
      AppendData(e, depth, slots51 + 2);  // Redis holds the key and the value
      lua_pop(L, 1);
    }
    lua_pop(L, 1);  // key array
    out.push_back('}');
  }
  lua_pop(L, 1);  // unproxied table
}

void AppendData(Encoder& e, int depth, int slots51) {
  lua_State* L = e.L;
  std::string& out = e.out;
  e.work.AddUnits(ScriptBudget::kJsonValueUnits);
  switch (lua_type(L, -1)) {
    case LUA_TSTRING:
      AppendString(e, -1);
      return;
    case LUA_TNUMBER:
      AppendNumber(e, -1);
      return;
    case LUA_TBOOLEAN:
      out += lua_toboolean(L, -1) ? "true" : "false";
      return;
    case LUA_TTABLE:
      AppendTable(e, depth, slots51);
      return;
    case LUA_TNIL:
      out += "null";
      return;
    case LUA_TLIGHTUSERDATA:
      if (lua_touserdata(L, -1) == nullptr) {
        out += "null";
        return;
      }
      [[fallthrough]];
    default:
      EncodeException(L, -1, "type not supported");
  }
}

int JsonEncode(lua_State* L) {
  const JsonConfig* cfg = FetchConfig(L);
  luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
  Encoder e{L, *cfg, {}, ScriptWorkMeter(L)};
  AppendData(e, 0, 1);  // Redis's frame holds the argument
  e.work.AddBytes(e.out.size());  // the text built, and its copy into a Lua string
  e.work.Flush();
  lua_pushlstring(L, e.out.data(), e.out.size());
  return 1;
}

// --- decoding ---

enum class Tok {
  kObjBegin, kObjEnd, kArrBegin, kArrEnd, kString, kNumber, kBoolean, kNull, kColon, kComma,
  kEnd, kWhitespace, kError, kUnknown
};

const char* const kTokNames[] = {"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END",
                                 "T_STRING",    "T_NUMBER",  "T_BOOLEAN",   "T_NULL",
                                 "T_COLON",     "T_COMMA",   "T_END",       "T_WHITESPACE",
                                 "T_ERROR",     "T_UNKNOWN"};

struct Token {
  Tok type = Tok::kError;
  size_t index = 0;
  const char* error = nullptr;  // for kError
  double number = 0;
  bool boolean = false;
};

struct Parser {
  lua_State* L;
  const JsonConfig* cfg;
  const char* data;  // NUL-terminated, as Lua strings are: the parser stops at the first NUL.
  const char* ptr;
  std::string tmp;   // the decoded text of the last string token
  int depth = 0;
  ScriptWorkMeter* work;
};

Tok CharToken(const Parser& p, unsigned char c) {
  switch (c) {
    case '{': return Tok::kObjBegin;
    case '}': return Tok::kObjEnd;
    case '[': return Tok::kArrBegin;
    case ']': return Tok::kArrEnd;
    case ',': return Tok::kComma;
    case ':': return Tok::kColon;
    case '\0': return Tok::kEnd;
    case ' ': case '\t': case '\n': case '\r': return Tok::kWhitespace;
    case 'f': case 'i': case 'I': case 'n': case 'N': case 't': case '"': case '+': case '-':
      return Tok::kUnknown;
    default:
      if (c >= '0' && c <= '9') return Tok::kUnknown;
      (void)p;
      return Tok::kError;
  }
}

void SetTokenError(Token& tok, const Parser& p, const char* what) {
  tok.type = Tok::kError;
  tok.index = static_cast<size_t>(p.ptr - p.data);
  tok.error = what;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(c | 0x20);
  if (c >= 'a' && c <= 'f') return 10 + c - 'a';
  return -1;
}

int DecodeHex4(const char* hex) {
  int v = 0;
  for (int i = 0; i < 4; ++i) {
    const int d = HexDigit(hex[i]);  // A NUL is not a hex digit, so this stops at the end.
    if (d < 0) return -1;
    v = (v << 4) | d;
  }
  return v;
}

// Appends the UTF-8 form of \uXXXX (or a surrogate pair) at p.ptr; returns false when invalid.
bool AppendUnicodeEscape(Parser& p) {
  int escape_len = 6;
  int codepoint = DecodeHex4(p.ptr + 2);
  if (codepoint < 0) return false;
  if ((codepoint & 0xF800) == 0xD800) {
    if (codepoint & 0x400) return false;  // A low surrogate first.
    if (p.ptr[escape_len] != '\\' || p.ptr[escape_len + 1] != 'u') return false;
    const int low = DecodeHex4(p.ptr + 2 + escape_len);
    if (low < 0 || (low & 0xFC00) != 0xDC00) return false;
    codepoint = (((codepoint & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
    escape_len = 12;
  }
  if (codepoint <= 0x7F) {
    p.tmp.push_back(static_cast<char>(codepoint));
  } else if (codepoint <= 0x7FF) {
    p.tmp.push_back(static_cast<char>((codepoint >> 6) | 0xC0));
    p.tmp.push_back(static_cast<char>((codepoint & 0x3F) | 0x80));
  } else if (codepoint <= 0xFFFF) {
    p.tmp.push_back(static_cast<char>((codepoint >> 12) | 0xE0));
    p.tmp.push_back(static_cast<char>(((codepoint >> 6) & 0x3F) | 0x80));
    p.tmp.push_back(static_cast<char>((codepoint & 0x3F) | 0x80));
  } else {
    p.tmp.push_back(static_cast<char>((codepoint >> 18) | 0xF0));
    p.tmp.push_back(static_cast<char>(((codepoint >> 12) & 0x3F) | 0x80));
    p.tmp.push_back(static_cast<char>(((codepoint >> 6) & 0x3F) | 0x80));
    p.tmp.push_back(static_cast<char>((codepoint & 0x3F) | 0x80));
  }
  p.ptr += escape_len;
  return true;
}

void NextStringToken(Parser& p, Token& tok) {
  ++p.ptr;  // opening quote
  p.tmp.clear();
  char ch;
  while ((ch = *p.ptr) != '"') {
    if (ch == '\0') {
      SetTokenError(tok, p, "unexpected end of string");
      return;
    }
    if (ch == '\\') {
      const char esc = p.ptr[1];
      char out = 0;
      switch (esc) {
        case '"': out = '"'; break;
        case '\\': out = '\\'; break;
        case '/': out = '/'; break;
        case 'b': out = '\b'; break;
        case 't': out = '\t'; break;
        case 'n': out = '\n'; break;
        case 'f': out = '\f'; break;
        case 'r': out = '\r'; break;
        case 'u':
          if (AppendUnicodeEscape(p)) continue;
          SetTokenError(tok, p, "invalid unicode escape code");
          return;
        default:
          SetTokenError(tok, p, "invalid escape code");
          return;
      }
      ++p.ptr;
      ch = out;
    }
    p.tmp.push_back(ch);
    ++p.ptr;
  }
  ++p.ptr;  // closing quote
  tok.type = Tok::kString;
}

bool IsInvalidNumber(const char* p) {
  if (*p == '+') return true;
  if (*p == '-') ++p;
  if (*p == '0') {
    const int ch2 = p[1];
    return (ch2 | 0x20) == 'x' || (ch2 >= '0' && ch2 <= '9');
  }
  if (*p <= '9') return false;
  return strncasecmp(p, "inf", 3) == 0 || strncasecmp(p, "nan", 3) == 0;
}

void NextNumberToken(Parser& p, Token& tok) {
  char* end = nullptr;
  tok.type = Tok::kNumber;
  tok.number = std::strtod(p.ptr, &end);
  if (end == p.ptr) {
    SetTokenError(tok, p, "invalid number");
  } else {
    p.ptr = end;
  }
}

void NextToken(Parser& p, Token& tok) {
  unsigned char ch;
  for (;;) {
    ch = static_cast<unsigned char>(*p.ptr);
    tok.type = CharToken(p, ch);
    if (tok.type != Tok::kWhitespace) break;
    ++p.ptr;
  }
  tok.index = static_cast<size_t>(p.ptr - p.data);
  if (tok.type == Tok::kError) {
    SetTokenError(tok, p, "invalid token");
    return;
  }
  if (tok.type == Tok::kEnd) return;
  if (tok.type != Tok::kUnknown) {
    ++p.ptr;
    return;
  }
  if (ch == '"') {
    NextStringToken(p, tok);
  } else if (ch == '-' || (ch >= '0' && ch <= '9')) {
    if (!p.cfg->decode_invalid_numbers && IsInvalidNumber(p.ptr)) {
      SetTokenError(tok, p, "invalid number");
      return;
    }
    NextNumberToken(p, tok);
  } else if (std::strncmp(p.ptr, "true", 4) == 0) {
    tok.type = Tok::kBoolean;
    tok.boolean = true;
    p.ptr += 4;
  } else if (std::strncmp(p.ptr, "false", 5) == 0) {
    tok.type = Tok::kBoolean;
    tok.boolean = false;
    p.ptr += 5;
  } else if (std::strncmp(p.ptr, "null", 4) == 0) {
    tok.type = Tok::kNull;
    p.ptr += 4;
  } else if (p.cfg->decode_invalid_numbers && IsInvalidNumber(p.ptr)) {
    NextNumberToken(p, tok);
  } else {
    SetTokenError(tok, p, "invalid token");
  }
}

[[noreturn]] void ThrowParseError(Parser& p, const char* expected, const Token& tok) {
  const char* found = tok.type == Tok::kError ? tok.error : kTokNames[static_cast<int>(tok.type)];
  luaL_error(p.L, "Expected %s but found %s at character %d", expected, found,
             static_cast<int>(tok.index + 1));
  std::abort();
}

void Descend(Parser& p, int slots) {
  ++p.depth;
  // Redis's check is lua_checkstack(l, slots) on Lua 5.1, whose frame here holds what this
  // frame holds: the argument, and a table (and a key) per level (see kLua51StackSlotsMax).
  if (p.depth <= p.cfg->decode_max_depth &&
      lua_gettop(p.L) + slots <= kLua51StackSlotsMax && lua_checkstack(p.L, slots)) {
    return;
  }
  luaL_error(p.L, "Found too many nested data structures (%d) at character %d", p.depth,
             static_cast<int>(p.ptr - p.data));
}

void ProcessValue(Parser& p, Token& tok);

void ParseObject(Parser& p) {
  Token tok;
  Descend(p, 3);
  p.work->AddUnits(ScriptBudget::kJsonTableUnits);
  lua_newtable(p.L);
  NextToken(p, tok);
  if (tok.type == Tok::kObjEnd) {
    --p.depth;
    return;
  }
  for (;;) {
    if (tok.type != Tok::kString) ThrowParseError(p, "object key string", tok);
    lua_pushlstring(p.L, p.tmp.data(), p.tmp.size());
    NextToken(p, tok);
    if (tok.type != Tok::kColon) ThrowParseError(p, "colon", tok);
    NextToken(p, tok);
    ProcessValue(p, tok);
    lua_rawset(p.L, -3);
    NextToken(p, tok);
    if (tok.type == Tok::kObjEnd) {
      --p.depth;
      return;
    }
    if (tok.type != Tok::kComma) ThrowParseError(p, "comma or object end", tok);
    NextToken(p, tok);
  }
}

void ParseArray(Parser& p) {
  Token tok;
  Descend(p, 2);
  p.work->AddUnits(ScriptBudget::kJsonTableUnits);
  lua_newtable(p.L);
  NextToken(p, tok);
  if (tok.type == Tok::kArrEnd) {
    --p.depth;
    return;
  }
  for (lua_Integer i = 1;; ++i) {
    ProcessValue(p, tok);
    lua_rawseti(p.L, -2, i);
    NextToken(p, tok);
    if (tok.type == Tok::kArrEnd) {
      --p.depth;
      return;
    }
    if (tok.type != Tok::kComma) ThrowParseError(p, "comma or array end", tok);
    NextToken(p, tok);
  }
}

void ProcessValue(Parser& p, Token& tok) {
  p.work->AddUnits(ScriptBudget::kJsonValueUnits);
  switch (tok.type) {
    case Tok::kString:
      lua_pushlstring(p.L, p.tmp.data(), p.tmp.size());
      return;
    case Tok::kNumber:
      // Integral numbers become Lua integers so that 'id_'..v prints "id_101", as in 5.1.
      PushNumberLua51(p.L, tok.number);
      return;
    case Tok::kBoolean:
      lua_pushboolean(p.L, tok.boolean);
      return;
    case Tok::kObjBegin:
      ParseObject(p);
      return;
    case Tok::kArrBegin:
      ParseArray(p);
      return;
    case Tok::kNull:
      lua_pushlightuserdata(p.L, nullptr);  // cjson.null
      return;
    default:
      ThrowParseError(p, "value", tok);
  }
}

int JsonDecode(lua_State* L) {
  luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
  const JsonConfig* cfg = FetchConfig(L);
  size_t len = 0;
  const char* data = luaL_checklstring(L, 1, &len);
  if (len >= 2 && (data[0] == '\0' || data[1] == '\0')) {
    luaL_error(L, "JSON parser does not support UTF-16 or UTF-32");
  }
  // The scan reads each character of the text once: charged up front, before the work.
  ScriptBudget::ChargeChars(L, len);
  ScriptWorkMeter work(L);
  Parser p{L, cfg, data, data, {}, 0, &work};
  p.tmp.reserve(len);
  Token tok;
  NextToken(p, tok);
  ProcessValue(p, tok);
  NextToken(p, tok);
  if (tok.type != Tok::kEnd) ThrowParseError(p, "the end", tok);
  work.Flush();
  return 1;
}

int CjsonNew(lua_State* L);

void PushCjsonModule(lua_State* L) {
  static const luaL_Reg kFuncs[] = {
      {"encode", Guarded<JsonEncode>},
      {"decode", Guarded<JsonDecode>},
      {"encode_sparse_array", Guarded<CfgEncodeSparseArray>},
      {"encode_max_depth", Guarded<CfgEncodeMaxDepth>},
      {"decode_max_depth", Guarded<CfgDecodeMaxDepth>},
      {"encode_number_precision", Guarded<CfgEncodeNumberPrecision>},
      {"encode_keep_buffer", Guarded<CfgEncodeKeepBuffer>},
      {"encode_invalid_numbers", Guarded<CfgEncodeInvalidNumbers>},
      {"decode_invalid_numbers", Guarded<CfgDecodeInvalidNumbers>},
      {"new", Guarded<CjsonNew>},
      {nullptr, nullptr},
  };
  lua_newtable(L);
  // The configuration is a plain userdata (JsonConfig is trivially destructible, so no __gc).
  void* mem = lua_newuserdatauv(L, sizeof(JsonConfig), 0);
  new (mem) JsonConfig();
  luaL_setfuncs(L, kFuncs, 1);
  lua_pushlightuserdata(L, nullptr);
  lua_setfield(L, -2, "null");
  lua_pushliteral(L, "cjson");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, "2.1.0");
  lua_setfield(L, -2, "_VERSION");
}

int CjsonNew(lua_State* L) {
  PushCjsonModule(L);
  return 1;
}

// --- bit ------------------------------------------------------------------------------------

using UBits = uint32_t;
using SBits = int32_t;

// LuaBitOp's conversion: add 2^52+2^51 and take the low 32 bits of the double's mantissa. This
// rounds a fraction to nearest-even and wraps any number modulo 2^32.
UBits BitArg(lua_State* L, int idx) {
  const lua_Number n = lua_tonumber(L, idx);  // 5.1 semantics: numeric strings are accepted.
  const double biased = static_cast<double>(n) + 6755399441055744.0;
  uint64_t raw;
  static_assert(sizeof(raw) == sizeof(biased));
  std::memcpy(&raw, &biased, sizeof(raw));
  const auto b = static_cast<UBits>(raw);
  if (b == 0 && !lua_isnumber(L, idx)) luaL_typeerror(L, idx, "number");
  return b;
}

int BitReturn(lua_State* L, UBits b) {
  lua_pushinteger(L, static_cast<SBits>(b));
  return 1;
}

int BitTobit(lua_State* L) { return BitReturn(L, BitArg(L, 1)); }
int BitBnot(lua_State* L) { return BitReturn(L, ~BitArg(L, 1)); }

int BitBand(lua_State* L) {
  UBits b = BitArg(L, 1);
  for (int i = lua_gettop(L); i > 1; --i) b &= BitArg(L, i);
  return BitReturn(L, b);
}
int BitBor(lua_State* L) {
  UBits b = BitArg(L, 1);
  for (int i = lua_gettop(L); i > 1; --i) b |= BitArg(L, i);
  return BitReturn(L, b);
}
int BitBxor(lua_State* L) {
  UBits b = BitArg(L, 1);
  for (int i = lua_gettop(L); i > 1; --i) b ^= BitArg(L, i);
  return BitReturn(L, b);
}

int BitLshift(lua_State* L) {
  const UBits b = BitArg(L, 1), n = BitArg(L, 2) & 31;
  return BitReturn(L, b << n);
}
int BitRshift(lua_State* L) {
  const UBits b = BitArg(L, 1), n = BitArg(L, 2) & 31;
  return BitReturn(L, b >> n);
}
int BitArshift(lua_State* L) {
  const UBits b = BitArg(L, 1), n = BitArg(L, 2) & 31;
  return BitReturn(L, static_cast<UBits>(static_cast<SBits>(b) >> n));
}
int BitRol(lua_State* L) {
  const UBits b = BitArg(L, 1), n = BitArg(L, 2) & 31;
  return BitReturn(L, n == 0 ? b : (b << n) | (b >> (32 - n)));
}
int BitRor(lua_State* L) {
  const UBits b = BitArg(L, 1), n = BitArg(L, 2) & 31;
  return BitReturn(L, n == 0 ? b : (b << (32 - n)) | (b >> n));
}
int BitBswap(lua_State* L) {
  const UBits b = BitArg(L, 1);
  return BitReturn(L, (b >> 24) | ((b >> 8) & 0xff00) | ((b & 0xff00) << 8) | (b << 24));
}

int BitTohex(lua_State* L) {
  UBits b = BitArg(L, 1);
  SBits n = lua_isnone(L, 2) ? 8 : static_cast<SBits>(BitArg(L, 2));
  const char* digits = "0123456789abcdef";
  if (n < 0) {
    n = n == INT32_MIN ? 8 : -n;  // LuaBitOp negates in int; INT32_MIN stays negative there
    digits = "0123456789ABCDEF";  // and then clamps to 8 below, as this does.
  }
  if (n > 8) n = 8;
  char buf[8];
  for (int i = n; --i >= 0;) {
    buf[i] = digits[b & 15];
    b >>= 4;
  }
  lua_pushlstring(L, buf, static_cast<size_t>(n));
  return 1;
}

}  // namespace

int OpenCjson(lua_State* L) {
  PushCjsonModule(L);
  return 1;
}

int OpenBit(lua_State* L) {
  static const luaL_Reg kFuncs[] = {
      {"tobit", BitTobit},   {"bnot", BitBnot},     {"band", BitBand},
      {"bor", BitBor},       {"bxor", BitBxor},     {"lshift", BitLshift},
      {"rshift", BitRshift}, {"arshift", BitArshift}, {"rol", BitRol},
      {"ror", BitRor},       {"bswap", BitBswap},   {"tohex", BitTohex},
      {nullptr, nullptr},
  };
  luaL_newlib(L, kFuncs);
  return 1;
}

}  // namespace lockstep::lualib
