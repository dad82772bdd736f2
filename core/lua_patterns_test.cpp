// Tests of lockstep's Lua 5.1 pattern matcher (core/lua_patterns.cpp): that string.find,
// string.match, string.gmatch and string.gsub give Lua 5.1's answers (as redis-server 7.0.15
// gives them, not Lua 5.4's), and that the matcher's work is counted and bounded.
//
// The golden cases were sent to a live redis-server 7.0.15 (Debian bookworm) as EVAL of
// kShowHarness around the expression, and its reply recorded: every value the expression
// yields, strings as <...> with bytes outside ' '..'~' (and '\') written as \<decimal>. The
// same cases run against a live server in core/testdata/conformance/lua-patterns.txt.
#include "core/lua_patterns.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/script_host.h"
#include "core/server.h"

namespace lockstep {
namespace {

constexpr int64_t kNow = 1700000000000;

// Shows every value of the expression in place of %s.
constexpr const char* kShowHarness =
"local function q(v) if type(v) ~= 'string' then return tostring(v) end "
           "local o = {} for i = 1, #v do local b = string.byte(v, i) "
           "if b < 32 or b > 126 or b == 92 then o[#o + 1] = '\\\\' .. b else o[#o + 1] = string.char(b) end end "
           "return '<' .. table.concat(o) .. '>' end "
           "local function show(...) local t = {} for i = 1, select('#', ...) do t[i] = q((select(i, ...))) end "
           "return table.concat(t, ' ') end "
           "return show(%s)";

struct PatternCase {
  const char* name;
  const char* expression;
  const char* expected;
};

const PatternCase kPatternCases[] = {
    {"find plain",
     "string.find('hello world', 'o w')",
     "5 7"},
    {"find pattern",
     "string.find('hello world', 'o%s*w')",
     "5 7"},
    {"find init",
     "string.find('abcabc', 'b', 3)",
     "5 5"},
    {"find negative init",
     "string.find('abcabc', 'b', -2)",
     "5 5"},
    {"find init very negative",
     "string.find('abcabc', 'a', -100)",
     "1 1"},
    {"find init past end",
     "string.find('abc', '', 10)",
     "4 3"},
    {"find init past end pattern",
     "string.find('abc', '.?', 10)",
     "4 3"},
    {"find init float truncates",
     "string.find('abcabc', 'b', 2.9)",
     "2 2"},
    {"find init numeric string",
     "string.find('abcabc', 'b', '3')",
     "5 5"},
    {"find plain flag",
     "string.find('a.b', '.', 1, true)",
     "2 2"},
    {"find plain flag false",
     "string.find('a.b', '.', 1, false)",
     "1 1"},
    {"find empty pattern",
     "string.find('abc', '')",
     "1 0"},
    {"find empty subject",
     "string.find('', '')",
     "1 0"},
    {"find not found",
     "string.find('abc', 'x')",
     "nil"},
    {"find with captures",
     "string.find('key:123:x', '(%a+):(%d+)')",
     "1 7 <key> <123>"},
    {"find position captures",
     "string.find('hello', '()ll()')",
     "3 4 3 5"},
    {"find number subject",
     "string.find(12345, '34')",
     "3 4"},
    {"find zero byte plain",
     "string.find('a\\0b', '\\0')",
     "2 2"},
    {"find zero byte ends pattern",
     "string.find('a\\0.b', '\\0.')",
     "2 3"},
    {"find pattern cut at zero byte",
     "string.find('xa.b', 'a.\\0zz')",
     "2 3"},
    {"find close paren is not special",
     "string.find('a)b', 'a)')",
     "1 2"},
    {"match captures",
     "string.match('key=value', '(%w+)=(%w+)')",
     "<key> <value>"},
    {"match whole",
     "string.match('  trim  ', '^%s*(.-)%s*$')",
     "<trim>"},
    {"match no capture",
     "string.match('abc123', '%d+')",
     "<123>"},
    {"match anchored fails",
     "string.match('abc', '^b')",
     "nil"},
    {"match dollar",
     "string.match('abc', 'c$')",
     "<c>"},
    {"match dollar not at end",
     "string.match('a$b', 'a$b')",
     "<a$b>"},
    {"match caret not at start",
     "string.match('a^b', 'a^b')",
     "<a^b>"},
    {"match init",
     "string.match('abcabc', 'a.', 2)",
     "<ab>"},
    {"match init past end",
     "string.match('abc', '()', 10)",
     "4"},
    {"match position capture only",
     "string.match('abc', '()')",
     "1"},
    {"match nested captures",
     "string.match('2024-01-15', '((%d+)-(%d+))-(%d+)')",
     "<2024-01> <2024> <01> <15>"},
    {"match empty capture",
     "string.match('abc', '()(x*)()')",
     "1 <> 1"},
    {"star greedy",
     "string.match('aaab', 'a*')",
     "<aaa>"},
    {"plus",
     "string.match('baaa', 'a+')",
     "<aaa>"},
    {"minus lazy",
     "string.match('<a><b>', '<(.-)>')",
     "<a>"},
    {"question",
     "string.match('color colour', 'colou?r', 7)",
     "<colour>"},
    {"star backtracks",
     "string.match('aaa', '(a*)a')",
     "<aa>"},
    {"minus backtracks",
     "string.match('xaaay', 'x(a-)y')",
     "<aaa>"},
    {"repetition of set",
     "string.match('abc123def', '[%a]+', 4)",
     "<def>"},
    {"class a",
     "string.match('12ab34', '%a+')",
     "<ab>"},
    {"class A",
     "string.match('ab12cd', '%A+')",
     "<12>"},
    {"class d D",
     "string.match('ab12cd', '%D+(%d+)')",
     "<12>"},
    {"class l u",
     "string.match('abCDef', '%l+(%u+)')",
     "<CD>"},
    {"class s S",
     "string.match('a \\t\\n\\v\\f\\rb', '%s+')",
     "< \\9\\10\\11\\12\\13>"},
    {"class w W",
     "string.match('ab_12!', '%w+')",
     "<ab>"},
    {"class x",
     "string.match('0x1fZ', '0x(%x+)')",
     "<1f>"},
    {"class p",
     "string.match('ab.,;!cd', '%p+')",
     "<.,;!>"},
    {"class c",
     "string.match('a\\1\\31\\127b', '%c+')",
     "<\\1\\31\\127>"},
    {"class z matches zero byte",
     "string.find('ab\\0c', '%z')",
     "3 3"},
    {"class Z",
     "string.match('\\0\\0ab', '%Z+')",
     "<ab>"},
    {"class g is a literal g",
     "string.find('abg', '%g')",
     "3 3"},
    {"class G is a literal G",
     "string.find('aGb', '%G')",
     "2 2"},
    {"escaped magic",
     "string.match('a.b%c', '%.b%%')",
     "<.b%>"},
    {"high bytes are no letters",
     "string.find('\\200\\233a', '%a')",
     "3 3"},
    {"dot matches zero byte",
     "string.find('\\0', '.')",
     "1 1"},
    {"set",
     "string.match('hello', '[aeiou]+', 2)",
     "<e>"},
    {"set complement",
     "string.match('hello', '[^aeiou]+')",
     "<h>"},
    {"set range",
     "string.match('xyz123', '[0-9]+')",
     "<123>"},
    {"set with class",
     "string.match('ab12', '[%d]+')",
     "<12>"},
    {"set close bracket first",
     "string.match('a]b', '[]]')",
     "<]>"},
    {"set caret close bracket",
     "string.match(']]ab', '[^]]+')",
     "<ab>"},
    {"set escaped close",
     "string.match('a]b', '[%]]')",
     "<]>"},
    {"set dash at end",
     "string.match('a-b', '[b-]+')",
     "<-b>"},
    {"set dash first",
     "string.match('a-b', '[-a]+')",
     "<a->"},
    {"set reversed range",
     "string.find('m', '[z-a]')",
     "nil"},
    {"set high range",
     "string.find('\\200', '[\\128-\\255]')",
     "1 1"},
    {"set with zero byte class",
     "string.find('a\\0', '[%z]')",
     "2 2"},
    {"balance",
     "string.match('f(a(b)c)d', '%b()')",
     "<(a(b)c)>"},
    {"balance unmatched",
     "string.match('f(a(b', '%b()')",
     "nil"},
    {"balance same chars",
     "string.match('\"a\"b\"', '%b\"\"')",
     "<\"a\">"},
    {"frontier word",
     "string.find('THE (quick) fox', '%f[%a]%a+', 5)",
     "6 10"},
    {"frontier all words",
     "string.gsub('THE (quick) fox', '%f[%a]%a+', 'W')",
     "<W (W) W> 3"},
    {"frontier at end",
     "string.find('abc', '%f[%z]')",
     "4 3"},
    {"frontier at start",
     "string.find('abc', '%f[%a]')",
     "1 0"},
    {"frontier complement",
     "string.find('ab  cd', '%f[^%a]')",
     "3 2"},
    {"back reference",
     "string.match('say \"hi\" now', '([\"\\'])(.-)%1')",
     "<\"> <hi>"},
    {"back reference repeated",
     "string.find('abcabc', '(abc)%1')",
     "1 6 <abc>"},
    {"back reference to position capture",
     "string.find('aa', '()%1')",
     "nil"},
    {"gsub string",
     "string.gsub('hello world', 'o', '0')",
     "<hell0 w0rld> 2"},
    {"gsub max",
     "string.gsub('hello world', 'o', '0', 1)",
     "<hell0 world> 1"},
    {"gsub max zero",
     "string.gsub('hello', 'l', 'L', 0)",
     "<hello> 0"},
    {"gsub max negative",
     "string.gsub('hello', 'l', 'L', -1)",
     "<hello> 0"},
    {"gsub max float",
     "string.gsub('hello', 'l', 'L', 1.9)",
     "<heLlo> 1"},
    {"gsub captures",
     "string.gsub('hello world', '(%w+)', '<%1>')",
     "<<hello> <world>> 2"},
    {"gsub %0",
     "string.gsub('abc', '%w', '%0%0')",
     "<aabbcc> 3"},
    {"gsub swap",
     "string.gsub('k=v, a=b', '(%w+)=(%w+)', '%2=%1')",
     "<v=k, b=a> 2"},
    {"gsub position capture",
     "string.gsub('abc', '()', '%1')",
     "<1a2b3c4> 4"},
    {"gsub %% in replacement",
     "string.gsub('abc', 'b', '%%')",
     "<a%c> 1"},
    {"gsub % before a letter",
     "string.gsub('abc', 'b', '%x')",
     "<axc> 1"},
    {"gsub % at end of replacement",
     "string.gsub('abc', 'b', 'y%')",
     "<ay\\0c> 1"},
    {"gsub %1 without captures",
     "string.gsub('abc', 'b', '[%1]')",
     "<a[b]c> 1"},
    {"gsub number replacement",
     "string.gsub('abc', 'b', 2.5)",
     "<a2.5c> 1"},
    {"gsub table",
     "string.gsub('$a $b $c', '%$(%w+)', {a='1', b=true and 2})",
     "<1 2 $c> 3"},
    {"gsub table false keeps",
     "string.gsub('a b', '%w', {a=false})",
     "<a b> 2"},
    {"gsub table whole match",
     "string.gsub('a b', '%w', {a='A'})",
     "<A b> 2"},
    {"gsub function",
     "string.gsub('a b c', '%w', function(c) return c:upper() .. '!' end)",
     "<A! B! C!> 3"},
    {"gsub function captures",
     "string.gsub('k=v', '(%w)=(%w)', function(a, b) return b .. a end)",
     "<vk> 1"},
    {"gsub function nil keeps",
     "string.gsub('abc', '%w', function(c) if c == 'b' then return 'B' end end)",
     "<aBc> 3"},
    {"gsub function number",
     "string.gsub('abc', 'b', function() return 10/4 end)",
     "<a2.5c> 1"},
    {"gsub empty matches",
     "string.gsub('hello world', '%w*', 'X')",
     "<XX XX> 4"},
    {"gsub empty pattern",
     "string.gsub('abc', '', '-')",
     "<-a-b-c-> 4"},
    {"gsub anchored",
     "string.gsub('aaa', '^a', 'b')",
     "<baa> 1"},
    {"gsub anchored empty",
     "string.gsub('abc', '^', '>')",
     "<>abc> 1"},
    {"gsub star",
     "string.gsub('abc', 'x*', '-')",
     "<-a-b-c-> 4"},
    {"gsub pattern cut at zero byte",
     "string.gsub('abc', 'b\\0c', 'X')",
     "<aXc> 1"},
    {"gsub number subject",
     "string.gsub(1234, '2', 'x')",
     "<1x34> 1"},
    {"gsub on zero bytes",
     "string.gsub('a\\0b\\0', '%z', '0')",
     "<a0b0> 2"},
    {"gmatch words",
     "(function() local t = {} for w in string.gmatch('one two  three', '%a+') do t[#t+1] = w end return table.concat(t, '|') end)()",
     "<one|two|three>"},
    {"gmatch pairs",
     "(function() local t = {} for k, v in string.gmatch('a=1, b=2', '(%w+)=(%w+)') do t[#t+1] = k .. v end return table.concat(t, '|') end)()",
     "<a1|b2>"},
    {"gmatch empty matches",
     "(function() local t = {} for w in string.gmatch('hello world', '%w*') do t[#t+1] = '<' .. w .. '>' end return table.concat(t) end)()",
     "<<hello><><world><>>"},
    {"gmatch caret is literal",
     "(function() local t = {} for w in string.gmatch('^a^a b', '^a') do t[#t+1] = w end return table.concat(t, '|') end)()",
     "<^a|^a>"},
    {"gmatch position captures",
     "(function() local t = {} for p in string.gmatch('abc', '()') do t[#t+1] = p end return table.concat(t, '|') end)()",
     "<1|2|3|4>"},
    {"gmatch ignores init",
     "(function() local t = {} for w in string.gmatch('ab', '.', 2) do t[#t+1] = w end return table.concat(t, '|') end)()",
     "<a|b>"},
    {"gfind is gmatch",
     "(function() local t = {} for w in string.gfind('a1b2', '%d') do t[#t+1] = w end return table.concat(t, '|') end)()",
     "<1|2>"},
    {"gmatch method call",
     "(function() local t = {} for w in ('x y'):gmatch('%a') do t[#t+1] = w end return table.concat(t, '|') end)()",
     "<x|y>"},
    {"method find",
     "('hello'):find('l+')",
     "3 4"},
    {"method gsub",
     "('hello'):gsub('l', 'L')",
     "<heLLo> 2"},
    {"error ends with %",
     "pcall(string.find, 'abc', '%')",
     "false <malformed pattern (ends with '%')>"},
    {"error ends with % in script",
     "pcall(function() return string.find('abc', 'a%') end)",
     "false <user_script:1: malformed pattern (ends with '%')>"},
    {"error missing ]",
     "pcall(function() return string.find('abc', '[a') end)",
     "false <user_script:1: malformed pattern (missing ']')>"},
    {"error missing ] after %",
     "pcall(function() return string.find('abc', '[a%') end)",
     "false <user_script:1: malformed pattern (missing ']')>"},
    {"error missing ] caret",
     "pcall(function() return string.match('abc', '[^') end)",
     "false <user_script:1: malformed pattern (missing ']')>"},
    {"error unbalanced",
     "pcall(function() return string.find('abc', '%b') end)",
     "false <user_script:1: unbalanced pattern>"},
    {"error unbalanced one char",
     "pcall(function() return string.find('abc', '%b(') end)",
     "false <user_script:1: unbalanced pattern>"},
    {"error frontier without set",
     "pcall(function() return string.find('abc', '%fa') end)",
     "false <user_script:1: missing '[' after '%f' in pattern>"},
    {"error invalid capture index",
     "pcall(function() return string.find('abc', '%1') end)",
     "false <user_script:1: invalid capture index>"},
    {"error %0 in pattern",
     "pcall(function() return string.find('abc', '(a)%0') end)",
     "false <user_script:1: invalid capture index>"},
    {"error back reference to open capture",
     "pcall(function() return string.find('abc', '(a%1)') end)",
     "false <user_script:1: invalid capture index>"},
    {"error unfinished capture",
     "pcall(function() return string.find('abc', '(a') end)",
     "false <user_script:1: unfinished capture>"},
    {"error unfinished capture match",
     "pcall(function() return string.match('abc', '(a') end)",
     "false <user_script:1: unfinished capture>"},
    {"error invalid pattern capture",
     "pcall(function() return string.find('abc', 'a)') end)",
     "true nil"},
    {"error invalid pattern capture match",
     "pcall(function() return string.match('abc', 'a)') end)",
     "false <user_script:1: invalid pattern capture>"},
    {"error too many captures",
     "pcall(function() return string.match('a', string.rep('()', 33)) end)",
     "false <user_script:1: too many captures>"},
    {"32 captures are fine",
     "select('#', string.match('a', string.rep('()', 32)))",
     "32"},
    {"error gsub invalid capture index",
     "pcall(function() return string.gsub('abc', 'b', '%2') end)",
     "false <user_script:1: invalid capture index>"},
    {"error gsub invalid capture index with capture",
     "pcall(function() return string.gsub('abc', '(b)', '%2') end)",
     "false <user_script:1: invalid capture index>"},
    {"error gsub bad replacement type",
     "pcall(function() return string.gsub('abc', 'b', true) end)",
     "false <user_script:1: bad argument #3 to 'gsub' (string/function/table expected)>"},
    {"error gsub nil replacement",
     "pcall(function() return string.gsub('abc', 'b') end)",
     "false <user_script:1: bad argument #3 to 'gsub' (string/function/table expected)>"},
    {"error gsub invalid replacement value",
     "pcall(function() return string.gsub('abc', 'b', function() return {} end) end)",
     "false <user_script:1: invalid replacement value (a table)>"},
    {"error gsub table invalid value",
     "pcall(function() return string.gsub('abc', 'b', {b = true}) end)",
     "false <user_script:1: invalid replacement value (a boolean)>"},
    {"error find no subject",
     "pcall(function() return string.find() end)",
     "false <user_script:1: bad argument #1 to 'find' (string expected, got no value)>"},
    {"error find table pattern",
     "pcall(function() return string.find('a', {}) end)",
     "false <user_script:1: bad argument #2 to 'find' (string expected, got table)>"},
    {"error find bad init",
     "pcall(function() return string.find('a', 'a', 'x') end)",
     "false <user_script:1: bad argument #3 to 'find' (number expected, got string)>"},
    {"error method on bad self",
     "pcall(function() local t = setmetatable({}, {__index = string}) return t:find('a') end)",
     "false <user_script:1: calling 'find' on bad self (string expected, got table)>"},
    {"error gmatch no pattern",
     "pcall(function() return string.gmatch('a') end)",
     "false <user_script:1: bad argument #2 to 'gmatch' (string expected, got no value)>"},
    {"error gmatch bad pattern on first step",
     "pcall(function() for w in string.gmatch('abc', '[a') do end end)",
     "false <user_script:1: malformed pattern (missing ']')>"},
    {"error gsub bad max",
     "pcall(function() return string.gsub('a', 'a', 'b', 'x') end)",
     "false <user_script:1: bad argument #4 to 'gsub' (number expected, got string)>"},
};

std::string ScriptFor(const char* expression) {
  std::string script = kShowHarness;
  const size_t at = script.find("%s");
  REQUIRE(at != std::string::npos);
  return script.replace(at, 2, expression);
}

Reply Eval(Server& server, const std::string& script) {
  return server.Execute({"EVAL", script, "0"}, kNow).AsSeenByResp2Client();
}

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// A bare Lua 5.4 state with only the matcher's functions in a global table "string", and a
// meter that counts what it is charged and raises once a limit is passed.
struct BareVm {
  explicit BareVm(uint64_t limit) : limit_(limit) {
    L = luaL_newstate();
    REQUIRE(L != nullptr);
    luaL_openlibs(L);
    current = this;
    lua_newtable(L);
    luapattern::SetPatternFunctions(L, -1, &meter);
    lua_setglobal(L, "pat");
  }
  ~BareVm() {
    lua_close(L);
    current = nullptr;
  }
  BareVm(const BareVm&) = delete;
  BareVm& operator=(const BareVm&) = delete;

  // Runs the chunk; returns its error message or "" on success.
  std::string Run(const std::string& chunk) {
    if (luaL_dostring(L, chunk.c_str()) == LUA_OK) return "";
    std::string msg = lua_tostring(L, -1);
    lua_pop(L, 1);
    return msg;
  }

  static void Charge(lua_State* L, uint64_t steps) {
    BareVm* vm = current;
    vm->charged += steps;
    ++vm->charges;
    if (vm->charged > vm->limit_) luaL_error(L, "over budget after %d steps", int(vm->charged));
  }

  static inline BareVm* current = nullptr;
  lua_State* L = nullptr;
  luapattern::MatchMeter meter{&BareVm::Charge};
  uint64_t charged = 0;
  uint64_t charges = 0;
  uint64_t limit_;
};

}  // namespace

TEST_CASE("golden: Lua 5.1 patterns", "[script][golden][patterns]") {
  Server server;
  for (const PatternCase& c : kPatternCases) {
    INFO(c.name << ": " << c.expression);
    const Reply r = Eval(server, ScriptFor(c.expression));
    CHECK(r.type == Reply::Type::kBulk);
    CHECK(r.str == c.expected);
  }
}

// Errors raised outside pcall reach the caller as Redis words them, with the script's line.
TEST_CASE("pattern errors as EVAL replies", "[script][patterns]") {
  Server server;
  const Reply r = Eval(server, "local x = 1\nreturn string.find('abc', '%')");
  REQUIRE(r.is_error());
  CHECK(StartsWith(r.str, "ERR user_script:2: malformed pattern (ends with '%') script: "));
  CHECK(r.str.find(", on @user_script:2.") != std::string::npos);
  const Reply g = Eval(server, "return string.gsub('abc', '(b)', '%9')");
  REQUIRE(g.is_error());
  CHECK(StartsWith(g.str, "ERR user_script:1: invalid capture index script: "));
}

// A pattern that backtracks for ever (Lua 5.1 and Redis would run it for hours) ends with the
// step budget's BUSY error, and the VM is usable afterwards.
TEST_CASE("a pathological pattern ends at the step budget", "[script][patterns][limits]") {
  Server server;  // the default budget
  const std::vector<std::string> scripts = {
      "return string.find(string.rep('a', 50000), string.rep('.-', 10) .. 'b')",
      "return string.match(string.rep('a', 50000), string.rep('a*', 10) .. 'b')",
      "return string.gsub(string.rep('a', 50000), string.rep('.-', 10) .. 'b', 'x')",
      "for w in string.gmatch(string.rep('a', 50000), string.rep('.-', 10) .. 'b') do end",
      // Caught by pcall: the budget still ends the script.
      "pcall(string.find, string.rep('a', 50000), string.rep('.-', 10) .. 'b') return 1",
      // Plain search with many near-hits.
      "local s = string.rep('a', 100000) local p = string.rep('a', 5000) .. 'b'"
      " while true do string.find(s, p, 1, true) end",
  };
  for (const std::string& script : scripts) {
    INFO(script);
    const Reply r = Eval(server, script);
    REQUIRE(r.is_error());
    CHECK(StartsWith(r.str, "BUSY lockstep stopped the script after "));
    CHECK(server.scripts().last_script_steps() > kDefaultScriptStepBudget);
    CHECK(Eval(server, "return {string.find('xab', 'a(b)')}").Debug() == "[2, 3, \"b\"]");
  }
}

// The meter sees every step, in batches, and the same work is charged the same on every run.
TEST_CASE("the matcher charges its steps to the meter", "[patterns][limits]") {
  uint64_t first = 0;
  for (int run = 0; run < 2; ++run) {
    BareVm vm(UINT64_MAX);
    CHECK(vm.Run("assert(pat.find(string.rep('a', 3000), '.-b') == nil)") == "");
    CHECK(vm.charges >= 2);  // a batch during the match, the rest at its end
    // At least one step per start position and pattern item tried.
    CHECK(vm.charged > 3000);
    if (run == 0) first = vm.charged;
    CHECK(vm.charged == first);
  }
  // An empty search costs little.
  BareVm small(UINT64_MAX);
  CHECK(small.Run("assert(pat.find('abc', 'c') == 3)") == "");
  CHECK(small.charged > 0);
  CHECK(small.charged < 20);
}

TEST_CASE("the meter stops a match in the middle", "[patterns][limits]") {
  BareVm vm(100'000);
  const std::string err =
      vm.Run("return pat.find(string.rep('a', 50000), string.rep('.-', 10) .. 'b')");
  CHECK(err.find("over budget after ") != std::string::npos);
  CHECK(vm.charged <= 100'000 + luapattern::kChargeBatchSteps);
  // gsub's replacement function and gmatch's iterator steps are charged too.
  BareVm g(10'000);
  CHECK(g.Run("for w in pat.gmatch(string.rep('a', 100000), 'a') do end")
            .find("over budget after ") != std::string::npos);
}

// Each pattern item waiting for the rest of the pattern is one level of recursion; Lua 5.1 has
// no limit there (a long enough pattern exhausts the C stack), lockstep stops at
// kMatchDepthMax.
TEST_CASE("the matcher's recursion is bounded", "[patterns][limits]") {
  BareVm vm(UINT64_MAX);
  const int items = luapattern::kMatchDepthMax + 10;
  CHECK(vm.Run("assert(pat.find(string.rep('a', 100), string.rep('a?', 90)) == 1)") == "");
  const std::string err = vm.Run("return pat.find(string.rep('a', " + std::to_string(items) +
                                 "), string.rep('a?', " + std::to_string(items) + "))");
  CHECK(err.find("pattern too complex") != std::string::npos);
  // Items matched one after the other without a choice need no recursion.
  CHECK(vm.Run("assert(pat.find(string.rep('a', 20000), string.rep('.', 20000)) == 1)") == "");
  CHECK(vm.Run("assert(pat.match(string.rep('a', 20000), string.rep('(a)', 20)) == 'a')") == "");
}

}  // namespace lockstep
