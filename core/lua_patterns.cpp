// Lua 5.1 pattern matching for the script host (see lua_patterns.h for what differs from 5.4).
//
// The matcher is a backtracking recursive descent over the pattern, as the Lua 5.1 reference
// manual (section 5.4.1) describes it: single-character classes, the repetitions '*', '+', '-'
// and '?', captures (including position captures "()"), back-references %1-%9, %bxy, the
// frontier %f[set], and the anchors '^' (only at the start of find/match/gsub patterns) and '$'
// (only at the end). A pattern is read as a C string, as 5.1 reads it: it ends at its first
// zero byte. Character classes use the C locale, which is what redis-server runs its Lua in.
#include "core/lua_patterns.h"

#include <cassert>
#include <cstddef>
#include <cstring>

namespace lockstep::luapattern {

namespace {

constexpr char kEscape = '%';
// Capture lengths that are not lengths.
constexpr ptrdiff_t kCaptureOpen = -1;
constexpr ptrdiff_t kCapturePosition = -2;

// --- C-locale character classes (ctype's answers in the "C" locale, for bytes 0..255) ---

bool IsDigit(int c) { return c >= '0' && c <= '9'; }
bool IsLower(int c) { return c >= 'a' && c <= 'z'; }
bool IsUpper(int c) { return c >= 'A' && c <= 'Z'; }
bool IsAlpha(int c) { return IsLower(c) || IsUpper(c); }
bool IsAlnum(int c) { return IsAlpha(c) || IsDigit(c); }
bool IsSpace(int c) { return c == ' ' || (c >= '\t' && c <= '\r'); }
bool IsCntrl(int c) { return (c >= 0 && c < 32) || c == 127; }
bool IsPunct(int c) { return c > 32 && c < 127 && !IsAlnum(c); }
bool IsXdigit(int c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int ToLower(int c) { return IsUpper(c) ? c - 'A' + 'a' : c; }

// Does byte c belong to the class named by the letter after '%'? An upper-case letter is the
// complement of its lower-case class; any other character stands for itself (so "%g", which
// Lua 5.1 does not know, is a literal 'g').
bool InClass(int c, int letter) {
  bool in = false;
  switch (ToLower(letter)) {
    case 'a': in = IsAlpha(c); break;
    case 'c': in = IsCntrl(c); break;
    case 'd': in = IsDigit(c); break;
    case 'l': in = IsLower(c); break;
    case 'p': in = IsPunct(c); break;
    case 's': in = IsSpace(c); break;
    case 'u': in = IsUpper(c); break;
    case 'w': in = IsAlnum(c); break;
    case 'x': in = IsXdigit(c); break;
    case 'z': in = c == 0; break;
    default: return letter == c;
  }
  return IsUpper(letter) ? !in : in;
}

// Lua 5.1's lua_Integer argument conversion (luaL_checkinteger): a number or a numeric string,
// truncated toward zero; what C's cast gives on x86-64 (INT64_MIN) for NaN and out-of-range
// values.
int64_t ToInteger51(double d) {
  constexpr double kTwo63 = 9223372036854775808.0;
  if (!(d >= -kTwo63 && d < kTwo63)) return INT64_MIN;
  return static_cast<int64_t>(d);
}

int64_t OptInteger51(lua_State* L, int arg, int64_t def) {
  if (lua_isnoneornil(L, arg)) return def;
  return ToInteger51(luaL_checknumber(L, arg));
}

// luaL_optint: the lua_Integer cut to a C int.
int OptInt51(lua_State* L, int arg, int def) {
  if (lua_isnoneornil(L, arg)) return def;
  return static_cast<int>(static_cast<uint32_t>(static_cast<uint64_t>(OptInteger51(L, arg, 0))));
}

// 5.1's posrelat for find and match: a negative position counts from the end; the result is
// never negative.
int64_t RelativePosition(int64_t pos, size_t len) {
  if (pos < 0) pos += static_cast<int64_t>(len) + 1;
  return pos >= 0 ? pos : 0;
}

struct Capture {
  const char* init = nullptr;
  ptrdiff_t len = 0;
};

// One match attempt's state, shared by all calls of one find/match/gmatch step/gsub.
class Matcher {
 public:
  Matcher(lua_State* L, const MatchMeter* meter, const char* subject, size_t subject_len)
      : L_(L), meter_(meter), begin_(subject), end_(subject + subject_len) {}
  Matcher(const Matcher&) = delete;
  Matcher& operator=(const Matcher&) = delete;

  // Tries the pattern p (a C string) at subject position s; returns the end of the match or
  // null. Clears the captures first.
  const char* MatchAt(const char* s, const char* p) {
    level_ = 0;
    depth_ = 0;
    return Match(s, p);
  }

  // Charges the steps not charged yet. Call when the work is done (it may raise).
  void Settle() {
    if (pending_ > 0) {
      const uint64_t steps = pending_;
      pending_ = 0;
      if (meter_ != nullptr && meter_->charge != nullptr) meter_->charge(L_, steps);
    }
  }

  void Step(uint64_t n = 1) {
    pending_ += n;
    if (pending_ >= kChargeBatchSteps) Settle();
  }

  int level() const { return level_; }
  const char* begin() const { return begin_; }
  const char* end() const { return end_; }

  // Pushes capture i of the match [s, e); with no captures, i == 0 stands for the whole match.
  void PushCapture(int i, const char* s, const char* e) {
    if (i >= level_) {
      if (i != 0) luaL_error(L_, "invalid capture index");
      lua_pushlstring(L_, s, static_cast<size_t>(e - s));
      return;
    }
    const Capture& c = capture_[i];
    if (c.len == kCaptureOpen) luaL_error(L_, "unfinished capture");
    if (c.len == kCapturePosition) {
      lua_pushinteger(L_, static_cast<lua_Integer>(c.init - begin_ + 1));
    } else {
      lua_pushlstring(L_, c.init, static_cast<size_t>(c.len));
    }
  }

  // Pushes all captures (or the whole match when there are none and s is not null); returns
  // how many.
  int PushCaptures(const char* s, const char* e) {
    const int n = (level_ == 0 && s != nullptr) ? 1 : level_;
    luaL_checkstack(L_, n, "too many captures");
    for (int i = 0; i < n; ++i) PushCapture(i, s, e);
    return n;
  }

 private:
  // The byte at s, or the zero that ends every Lua string when s is the end.
  int ByteAt(const char* s) const {
    return s < end_ ? static_cast<unsigned char>(*s) : 0;
  }

  // The end of the single-character item starting at p ("x", ".", "%a", "[set]").
  const char* ItemEnd(const char* p) const {
    const char c = *p++;
    if (c == kEscape) {
      if (*p == '\0') luaL_error(L_, "malformed pattern (ends with '%%')");
      return p + 1;
    }
    if (c == '[') {
      if (*p == '^') ++p;
      // The first character of a set is a member even when it is ']'.
      do {
        if (*p == '\0') luaL_error(L_, "malformed pattern (missing ']')");
        const char member = *p++;
        if (member == kEscape && *p != '\0') ++p;
      } while (*p != ']');
      return p + 1;
    }
    return p;
  }

  // Does byte c belong to the set [p, close), p at '[' and close at its ']'?
  static bool InSet(int c, const char* p, const char* close) {
    bool negated = false;
    if (p[1] == '^') {
      negated = true;
      ++p;
    }
    for (++p; p < close; ++p) {
      if (*p == kEscape) {
        ++p;
        if (InClass(c, static_cast<unsigned char>(*p))) return !negated;
      } else if (p[1] == '-' && p + 2 < close) {
        const int lo = static_cast<unsigned char>(p[0]);
        const int hi = static_cast<unsigned char>(p[2]);
        p += 2;
        if (lo <= c && c <= hi) return !negated;
      } else if (static_cast<unsigned char>(*p) == c) {
        return !negated;
      }
    }
    return negated;
  }

  // Does byte c match the single-character item [p, item_end)?
  static bool ItemMatches(int c, const char* p, const char* item_end) {
    switch (*p) {
      case '.': return true;
      case kEscape: return InClass(c, static_cast<unsigned char>(p[1]));
      case '[': return InSet(c, p, item_end - 1);
      default: return static_cast<unsigned char>(*p) == c;
    }
  }

  // Does the item match the subject character at s (there being one)?
  bool ItemMatchesAt(const char* s, const char* p, const char* item_end) const {
    return s < end_ && ItemMatches(static_cast<unsigned char>(*s), p, item_end);
  }

  struct DepthGuard {
    explicit DepthGuard(Matcher& m) : m_(m) {
      if (++m_.depth_ > kMatchDepthMax) luaL_error(m_.L_, "pattern too complex");
    }
    ~DepthGuard() { --m_.depth_; }
    Matcher& m_;
  };

  const char* Match(const char* s, const char* p) {
    DepthGuard guard(*this);
    for (;;) {
      Step();
      switch (*p) {
        case '\0':
          return s;  // the pattern is used up: a match
        case '(':
          if (p[1] == ')') return OpenCapture(s, p + 2, kCapturePosition);
          return OpenCapture(s, p + 1, kCaptureOpen);
        case ')':
          return CloseCapture(s, p + 1);
        case '$':
          if (p[1] == '\0') return s == end_ ? s : nullptr;
          break;  // a '$' elsewhere is an ordinary character
        case kEscape:
          if (p[1] == 'b') {
            s = Balanced(s, p + 2);
            if (s == nullptr) return nullptr;
            p += 4;
            continue;
          }
          if (p[1] == 'f') {
            p += 2;
            if (*p != '[') luaL_error(L_, "missing '[' after '%%f' in pattern");
            const char* next = ItemEnd(p);
            const int before = s == begin_ ? 0 : static_cast<unsigned char>(s[-1]);
            if (InSet(before, p, next - 1) || !InSet(ByteAt(s), p, next - 1)) return nullptr;
            p = next;
            continue;
          }
          if (IsDigit(static_cast<unsigned char>(p[1]))) {
            s = BackReference(s, p[1]);
            if (s == nullptr) return nullptr;
            p += 2;
            continue;
          }
          break;  // a class such as %a: a single-character item
        default:
          break;
      }
      // A single-character item, possibly followed by a repetition suffix.
      const char* item_end = ItemEnd(p);
      const bool here = ItemMatchesAt(s, p, item_end);
      switch (*item_end) {
        case '?': {
          if (here) {
            const char* res = Match(s + 1, item_end + 1);
            if (res != nullptr) return res;
          }
          p = item_end + 1;
          continue;
        }
        case '*':
          return Greedy(s, p, item_end);
        case '+':
          return here ? Greedy(s + 1, p, item_end) : nullptr;
        case '-':
          return Lazy(s, p, item_end);
        default:
          if (!here) return nullptr;
          ++s;
          p = item_end;
          continue;
      }
    }
  }

  // item* : take as many as possible, then give back one at a time.
  const char* Greedy(const char* s, const char* p, const char* item_end) {
    ptrdiff_t count = 0;
    while (ItemMatchesAt(s + count, p, item_end)) {
      Step();
      ++count;
    }
    for (; count >= 0; --count) {
      const char* res = Match(s + count, item_end + 1);
      if (res != nullptr) return res;
    }
    return nullptr;
  }

  // item- : take as few as possible, one more at a time.
  const char* Lazy(const char* s, const char* p, const char* item_end) {
    for (;;) {
      const char* res = Match(s, item_end + 1);
      if (res != nullptr) return res;
      if (!ItemMatchesAt(s, p, item_end)) return nullptr;
      ++s;
    }
  }

  const char* OpenCapture(const char* s, const char* p, ptrdiff_t kind) {
    if (level_ >= kCapturesMax) luaL_error(L_, "too many captures");
    capture_[level_] = {s, kind};
    ++level_;
    const char* res = Match(s, p);
    if (res == nullptr) --level_;
    return res;
  }

  const char* CloseCapture(const char* s, const char* p) {
    int open = level_ - 1;
    while (open >= 0 && capture_[open].len != kCaptureOpen) --open;
    if (open < 0) luaL_error(L_, "invalid pattern capture");
    capture_[open].len = s - capture_[open].init;
    const char* res = Match(s, p);
    if (res == nullptr) capture_[open].len = kCaptureOpen;
    return res;
  }

  // %bxy at s: a balanced run from x to its matching y.
  const char* Balanced(const char* s, const char* p) {
    if (p[0] == '\0' || p[1] == '\0') luaL_error(L_, "unbalanced pattern");
    if (ByteAt(s) != static_cast<unsigned char>(p[0])) return nullptr;
    const char open = p[0];
    const char close = p[1];
    int depth = 1;
    for (++s; s < end_; ++s) {
      Step();
      if (*s == close) {
        if (--depth == 0) return s + 1;
      } else if (*s == open) {
        ++depth;
      }
    }
    return nullptr;
  }

  // %1-%9 at s: the text of a closed capture again.
  const char* BackReference(const char* s, char digit) {
    const int i = digit - '1';
    if (i < 0 || i >= level_ || capture_[i].len == kCaptureOpen) {
      luaL_error(L_, "invalid capture index");
    }
    const ptrdiff_t len = capture_[i].len;
    // A position capture has no text: it never matches (5.1 compares its length as unsigned).
    if (len < 0 || end_ - s < len) return nullptr;
    Step(1 + static_cast<uint64_t>(len) / 16);
    return std::memcmp(capture_[i].init, s, static_cast<size_t>(len)) == 0 ? s + len : nullptr;
  }

  lua_State* const L_;
  const MatchMeter* const meter_;
  const char* const begin_;
  const char* const end_;
  int level_ = 0;
  int depth_ = 0;
  uint64_t pending_ = 0;
  Capture capture_[kCapturesMax];
};

const MatchMeter* MeterOf(lua_State* L) {
  return static_cast<const MatchMeter*>(lua_touserdata(L, lua_upvalueindex(1)));
}

// 5.1's find decides "plain" by looking for these characters up to the pattern's first zero
// byte (strpbrk).
bool HasSpecials(const char* p) { return std::strpbrk(p, "^$*+?.([%-") != nullptr; }

// find and match (Lua 5.1 str_find_aux).
int FindOrMatch(lua_State* L, bool find) {
  size_t len = 0;
  size_t plen = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  const char* p = luaL_checklstring(L, 2, &plen);
  int64_t init = RelativePosition(OptInteger51(L, 3, 1), len) - 1;
  if (init < 0) init = 0;
  if (static_cast<uint64_t>(init) > len) init = static_cast<int64_t>(len);
  Matcher m(L, MeterOf(L), s, len);
  if (find && (lua_toboolean(L, 4) || !HasSpecials(p))) {
    // Plain search for all plen bytes (zero bytes included).
    const char* hit = nullptr;
    if (plen == 0) {
      hit = s + init;
    } else if (plen <= len - static_cast<size_t>(init)) {
      const char* last = s + len - plen;
      for (const char* at = s + init; at <= last; ++at) {
        at = static_cast<const char*>(std::memchr(at, p[0], static_cast<size_t>(last - at) + 1));
        if (at == nullptr) break;
        m.Step(1 + plen / 16);
        if (std::memcmp(at, p, plen) == 0) {
          hit = at;
          break;
        }
      }
    }
    m.Settle();
    if (hit == nullptr) {
      lua_pushnil(L);
      return 1;
    }
    lua_pushinteger(L, static_cast<lua_Integer>(hit - s + 1));
    lua_pushinteger(L, static_cast<lua_Integer>(hit - s + plen));
    return 2;
  }
  const bool anchored = *p == '^';
  if (anchored) ++p;
  const char* at = s + init;
  for (;;) {
    const char* e = m.MatchAt(at, p);
    if (e != nullptr) {
      m.Settle();
      if (find) {
        lua_pushinteger(L, static_cast<lua_Integer>(at - s + 1));
        lua_pushinteger(L, static_cast<lua_Integer>(e - s));
        return m.PushCaptures(nullptr, nullptr) + 2;
      }
      return m.PushCaptures(at, e);
    }
    if (anchored || at >= m.end()) break;
    ++at;
  }
  m.Settle();
  lua_pushnil(L);
  return 1;
}

int Find(lua_State* L) { return FindOrMatch(L, true); }
int MatchFn(lua_State* L) { return FindOrMatch(L, false); }

// The iterator gmatch returns. Upvalues: 1 the meter, 2 the subject, 3 the pattern, 4 where the
// next search starts (0-based). Lua 5.1's gmatch knows no anchor: a leading '^' is an ordinary
// character.
int GmatchStep(lua_State* L) {
  size_t len = 0;
  const char* s = lua_tolstring(L, lua_upvalueindex(2), &len);
  const char* p = lua_tostring(L, lua_upvalueindex(3));
  const lua_Integer start = lua_tointeger(L, lua_upvalueindex(4));
  Matcher m(L, MeterOf(L), s, len);
  for (const char* at = s + start; at <= m.end(); ++at) {
    const char* e = m.MatchAt(at, p);
    if (e != nullptr) {
      // After an empty match the next search starts one character later.
      lua_Integer next = e - s;
      if (e == at) ++next;
      lua_pushinteger(L, next);
      lua_replace(L, lua_upvalueindex(4));
      m.Settle();
      return m.PushCaptures(at, e);
    }
  }
  m.Settle();
  return 0;
}

int Gmatch(lua_State* L) {
  luaL_checkstring(L, 1);
  luaL_checkstring(L, 2);
  lua_settop(L, 2);  // 5.1's gmatch has no init argument
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_pushinteger(L, 0);
  lua_pushcclosure(L, GmatchStep, 4);
  return 1;
}

// Appends the replacement string (argument 3) for the match [s, e): "%0" is the whole match,
// "%1".."%9" the captures, '%' before any other character stands for that character, and a
// '%' at the very end stands for the zero byte that ends the string (as 5.1 reads it).
void AppendReplacementString(lua_State* L, Matcher& m, luaL_Buffer* b, const char* s,
                             const char* e) {
  size_t len = 0;
  const char* r = lua_tolstring(L, 3, &len);
  m.Step(1 + len / 16);
  for (size_t i = 0; i < len; ++i) {
    if (r[i] != kEscape) {
      luaL_addchar(b, r[i]);
      continue;
    }
    ++i;
    const char c = i < len ? r[i] : '\0';
    if (!IsDigit(static_cast<unsigned char>(c))) {
      luaL_addchar(b, c);
    } else if (c == '0') {
      luaL_addlstring(b, s, static_cast<size_t>(e - s));
    } else {
      m.PushCapture(c - '1', s, e);
      luaL_addvalue(b);
    }
  }
}

// Appends what replaces the match [s, e) (Lua 5.1 add_value).
void AppendReplacement(lua_State* L, Matcher& m, luaL_Buffer* b, const char* s, const char* e) {
  switch (lua_type(L, 3)) {
    case LUA_TNUMBER:
    case LUA_TSTRING:
      AppendReplacementString(L, m, b, s, e);
      return;
    case LUA_TFUNCTION: {
      lua_pushvalue(L, 3);
      const int n = m.PushCaptures(s, e);
      lua_call(L, n, 1);
      break;
    }
    case LUA_TTABLE:
      m.PushCapture(0, s, e);
      lua_gettable(L, 3);
      break;
    default:
      assert(false && "gsub checked the replacement's type");
  }
  if (!lua_toboolean(L, -1)) {  // nil or false: keep the matched text
    lua_pop(L, 1);
    lua_pushlstring(L, s, static_cast<size_t>(e - s));
  } else if (!lua_isstring(L, -1)) {
    luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
  }
  luaL_addvalue(b);
}

int Gsub(lua_State* L) {
  size_t len = 0;
  const char* src = luaL_checklstring(L, 1, &len);
  const char* p = luaL_checkstring(L, 2);
  const int repl_type = lua_type(L, 3);
  const int max_n = OptInt51(L, 4, static_cast<int>(len + 1));
  luaL_argcheck(L,
                repl_type == LUA_TNUMBER || repl_type == LUA_TSTRING ||
                    repl_type == LUA_TFUNCTION || repl_type == LUA_TTABLE,
                3, "string/function/table expected");
  const bool anchored = *p == '^';
  if (anchored) ++p;
  Matcher m(L, MeterOf(L), src, len);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  int n = 0;
  while (n < max_n) {
    const char* e = m.MatchAt(src, p);
    if (e != nullptr) {
      ++n;
      AppendReplacement(L, m, &b, src, e);
    }
    if (e != nullptr && e > src) {
      src = e;  // continue after a non-empty match
    } else if (src < m.end()) {
      luaL_addchar(&b, *src++);
    } else {
      break;
    }
    if (anchored) break;
  }
  luaL_addlstring(&b, src, static_cast<size_t>(m.end() - src));
  m.Settle();
  luaL_pushresult(&b);
  lua_pushinteger(L, n);
  return 2;
}

}  // namespace

void SetPatternFunctions(lua_State* L, int table_idx, const MatchMeter* meter) {
  table_idx = lua_absindex(L, table_idx);
  const struct {
    const char* name;
    lua_CFunction fn;
  } kFunctions[] = {
      {"find", Find}, {"match", MatchFn}, {"gmatch", Gmatch}, {"gsub", Gsub},
  };
  for (const auto& f : kFunctions) {
    lua_pushlightuserdata(L, const_cast<MatchMeter*>(meter));
    lua_pushcclosure(L, f.fn, 1);
    lua_setfield(L, table_idx, f.name);
  }
  lua_getfield(L, table_idx, "gmatch");
  lua_setfield(L, table_idx, "gfind");
}

}  // namespace lockstep::luapattern
