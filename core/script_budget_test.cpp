// Establishes that one work budget per script run bounds the work done inside library functions
// and VM operations as well as Lua instructions, in every coroutine: each reproducer of a hang
// ends with the step budget's BUSY error, at the same point on every run; and that cjson's
// nesting limits are Redis's (measured on redis-server 7.0.15), so deep nesting is an error
// reply, not a crash.
//
// The budgets here are small (ServerOptions::script_step_budget), so that every case ends after
// little work, under the sanitizers too.
#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <vector>

#include <lua.hpp>

#include "core/script_budget.h"
#include "core/script_host.h"
#include "core/server.h"

namespace lockstep {
namespace {

constexpr int64_t kNow = 1700000000000;
constexpr uint64_t kSmallBudget = 1'000'000;

std::string Eval(Server& server, const std::string& script) {
  return server.Execute({"EVAL", script, "0"}, kNow).AsSeenByResp2Client().Debug();
}

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

ServerOptions SmallBudget() {
  ServerOptions options;
  options.script_step_budget = kSmallBudget;
  return options;
}

// Scripts that hung (or ran for minutes) while the budget counted only Lua instructions: their
// work is inside C functions, VM operations on long strings, or coroutine switches.
const std::vector<std::string> kRunaways = {
    // string building
    "while true do local s = string.rep('x', 1e6) end",
    "while true do local s = string.rep('', 1e9) end",
    "local s = string.rep('x', 1e5) while true do local t = s .. s end",
    "local s = string.rep('x', 1e5) while true do local t = string.format('%s%s', s, s) end",
    "local s = string.rep('x', 1e5) while true do local t = string.format('%q', s) end",
    "local s = string.rep('x', 1e4) local t = {} for i = 1, 100 do t[i] = s end"
    " while true do local u = table.concat(t) end",
    "local t = {} for i = 1, 1000 do t[i] = 'x' end"
    " while true do local u = table.concat(t, string.rep(',', 1e4)) end",
    // string functions on huge strings
    "local s = string.rep('x', 1e5) while true do local u = string.upper(s) end",
    "local s = string.rep('X', 1e5) while true do local u = string.lower(s) end",
    "local s = string.rep('x', 1e5) while true do local u = string.reverse(s) end",
    "local s = string.rep('x', 1e5) while true do local u = string.sub(s, 2) end",
    "local s = string.rep('x', 5000) while true do local u = {string.byte(s, 1, -1)} end",
    "local t = {} for i = 1, 5000 do t[i] = 65 end"
    " while true do local u = string.char(unpack(t)) end",
    // comparisons of long strings
    "local a, b = string.rep('x', 1e5), string.rep('x', 1e5) while true do local e = a == b end",
    "local a, b = string.rep('x', 1e5), string.rep('x', 1e5) while true do local e = a < b end",
    "local a, b = string.rep('x', 1e5), string.rep('x', 1e5)"
    " while true do local e = rawequal(a, b) end",
    "local a, b = string.rep('x', 1e5), string.rep('x', 1e5) local t = {[a] = 1}"
    " while true do local v = t[b] end",
    "local a, b = string.rep('x', 1e5), string.rep('x', 1e5) local t = {[a] = 1}"
    " while true do t[b] = 2 end",
    "local s = string.rep('1', 1e5) while true do local n = tonumber(s) end",
    "local s = string.rep('x', 1e5) while true do local h = redis.sha1hex(s) end",
    // redis.call with large arguments and replies
    "local s = string.rep('x', 1e5) while true do redis.call('set', 'big', s) end",
    "redis.call('set', 'big', string.rep('x', 1e5)) while true do redis.call('get', 'big') end",
    "redis.call('del', 'list') for i = 1, 1000 do redis.call('rpush', 'list', i) end"
    " while true do redis.call('lrange', 'list', 0, -1) end",
    // coroutines
    "while true do coroutine.create(function() end) end",
    "while true do coroutine.wrap(function() end) end",
    "local f = coroutine.wrap(function() while true do coroutine.yield() end end)"
    " while true do f() end",
    "local co = coroutine.create(function() while true do coroutine.yield() end end)"
    " while true do coroutine.resume(co) end",
    "coroutine.wrap(function() local f = coroutine.wrap(function()"
    " while true do coroutine.yield() end end) while true do f() end end)()",
    "coroutine.wrap(function() while true do coroutine.wrap(function() coroutine.yield() end)()"
    " end end)()",
    "coroutine.wrap(function() while true do end end)()",
    "while true do coroutine.wrap(function() for i = 1, 300 do end end)() end",
    // load readers that never end
    "load(function() return 'x' end)",
    "load(function() return ' ' end)",
    "local s = string.rep(' ', 1e4) load(function() return s end)",
    // cjson on large values
    "local t = {} for i = 1, 1e4 do t[i] = {a = i, b = 'xyz'} end"
    " while true do local s = cjson.encode(t) end",
    "local t = {} for i = 1, 1e4 do t[i] = i end while true do local s = cjson.encode(t) end",
    "local t = {} for i = 1, 1e4 do t[i] = {a = i} end local s = cjson.encode(t)"
    " while true do local u = cjson.decode(s) end",
    "local s = string.rep(' ', 1e5) .. '1' while true do local u = cjson.decode(s) end",
    // table functions over large tables
    "local t = {} for i = 1, 1e4 do t[i] = i end while true do table.sort(t) end",
    "local t = {} for i = 1, 1e4 do t[i] = i end while true do table.maxn(t) end",
    "local t = {} for i = 1, 1e4 do t[i] = i end"
    " while true do table.insert(t, 1, 0) table.remove(t, 1) end",
    "local t = {} for i = 1, 1e4 do t['k' .. i] = i end"
    " while true do for k in pairs(t) do break end end",
    "local t = {} for i = 1, 1e4 do t[i] = {} end while true do collectgarbage() end",
};

TEST_CASE("the budget stops scripts whose work is inside library functions",
          "[script][limits][budget]") {
  Server server(SmallBudget());
  for (const std::string& script : kRunaways) {
    INFO(script);
    const std::string reply = Eval(server, script);
    CHECK(StartsWith(reply, "-BUSY lockstep stopped the script after "));
    CHECK(reply.find(" steps of Lua instructions and library work (script_step_budget 1000000);"
                     " redis-server would keep running it") != std::string::npos);
    CHECK(server.scripts().last_script_steps() > kSmallBudget);
    // The VM is fine afterwards, and the next script has a fresh budget.
    CHECK(Eval(server, "local n = 0 for i = 1, 100 do n = n + i end return n") == "5050");
    CHECK(Eval(server, "return #string.rep('y', 1000)") == "1000");
  }
}

// The stopping point is a function of the script and the node's history only: two nodes that
// ran the same commands stop the same script after the same number of steps (the reply names
// it). For every script but one it does not even depend on the history: a second run on the
// same node stops at the same point. collectgarbage is the exception, as it is charged for the
// heap it traverses, which holds whatever garbage earlier scripts left (as the memory cap counts
// it too).
TEST_CASE("a script stops after the same number of steps on every run",
          "[script][limits][budget]") {
  Server first(SmallBudget());
  Server second(SmallBudget());
  for (const std::string& script : kRunaways) {
    INFO(script);
    const std::string reply = Eval(first, script);
    const uint64_t steps = first.scripts().last_script_steps();
    CHECK(Eval(second, script) == reply);
    CHECK(second.scripts().last_script_steps() == steps);
    if (script.find("collectgarbage") == std::string::npos) {
      CHECK(Eval(first, script) == reply);
      CHECK(first.scripts().last_script_steps() == steps);
      CHECK(Eval(second, script) == reply);
    }
  }
}

TEST_CASE("the budget cannot be caught by pcall, xpcall or a coroutine",
          "[script][limits][budget]") {
  Server server(SmallBudget());
  const std::vector<std::string> catchers = {
      "local ok = pcall(string.rep, '', 1e9) return 'caught'",
      "while true do pcall(string.rep, 'x', 1e5) end",
      "xpcall(function() while true do local s = string.rep('x', 1e5) end end,"
      " function() return 'handled' end) return 'caught'",
      "local co = coroutine.create(function() while true do local s = string.rep('x', 1e5) end"
      " end) local ok = coroutine.resume(co) return 'caught'",
  };
  for (const std::string& script : catchers) {
    INFO(script);
    CHECK(StartsWith(Eval(server, script), "-BUSY lockstep stopped the script after "));
  }
}

// The charges follow the cost model in core/script_budget.h; a script without loops runs
// without the instruction hook, so its count is exactly its library work.
TEST_CASE("library work is charged by the documented cost model", "[script][limits][budget]") {
  Server server;
  using B = ScriptBudget;
  // string.rep: n * len bulk bytes and n loop steps (characters).
  CHECK(Eval(server, "return #string.rep('x', 100000)") == "100000");
  CHECK(server.scripts().last_script_steps() ==
        100000 / B::kBytesPerUnit + 100000 / B::kCharsPerUnit);
  // '..' building a long string: its bytes (the two reps as above).
  CHECK(Eval(server, "return #(string.rep('ab', 1000) .. string.rep('c', 3000))") == "5000");
  const uint64_t reps = (2000 / B::kBytesPerUnit + 1000 / B::kCharsPerUnit) +
                        (3000 / B::kBytesPerUnit + 3000 / B::kCharsPerUnit);
  CHECK(server.scripts().last_script_steps() == reps + 5000 / B::kBytesPerUnit);
  // string.upper: the characters of its result, on top of the rep.
  CHECK(Eval(server, "return #string.upper(string.rep('x', 1000))") == "1000");
  CHECK(server.scripts().last_script_steps() ==
        (1000 / B::kBytesPerUnit + 1000 / B::kCharsPerUnit) + 1000 / B::kCharsPerUnit);
  // A coroutine.
  CHECK(Eval(server, "return coroutine.resume(coroutine.create(function() end))") == "1");
  CHECK(server.scripts().last_script_steps() == B::kCoroutineUnits);
  // A command called from the script: its fixed cost (its small reply adds nothing).
  CHECK(Eval(server, "return redis.call('ping')") == "+PONG");
  CHECK(server.scripts().last_script_steps() == B::kCommandUnits);
  // An error caught by pcall.
  CHECK(Eval(server, "return pcall(error, 'x')") == "(nil)");
  CHECK(server.scripts().last_script_steps() == B::kCaughtErrorUnits);
}

TEST_CASE("charging a lua_State outside a script run does nothing", "[script][limits][budget]") {
  lua_State* L = luaL_newstate();
  REQUIRE(L != nullptr);
  ScriptBudget::Charge(L, UINT64_MAX);  // not a script host's state: no error is raised
  ScriptBudget::ChargeBytes(L, UINT64_MAX);
  CHECK(lua_gettop(L) == 0);
  lua_close(L);
}

// Redis's cjson stops at its configured depth, and before that at the depth where Lua 5.1's
// C stack limit (8000 slots) is reached; the texts and numbers are redis-server 7.0.15's.
TEST_CASE("cjson nesting limits are Redis's, also with a huge max depth",
          "[script][limits][budget][cjson]") {
  Server server;
  const auto nested = [](const char* link) {
    return std::string("local t = {} local c = t for i = 1, 100000 do local n = {} ") + link +
           " c = n end ";
  };
  CHECK(StartsWith(Eval(server, "cjson.encode_max_depth(1e9) " + nested("c[1] = n") +
                                    "return cjson.encode(t)"),
                   "-ERR user_script:1: Cannot serialise, excessive nesting (7998) script: "));
  CHECK(StartsWith(Eval(server, "cjson.encode_max_depth(1e9) " + nested("c.a = n") +
                                    "return cjson.encode(t)"),
                   "-ERR user_script:1: Cannot serialise, excessive nesting (4000) script: "));
  CHECK(StartsWith(Eval(server, "cjson.encode_max_depth(1e9) " + nested("c.a = n c.b = 1") +
                                    "return cjson.encode(t)"),
                   "-ERR user_script:1: Cannot serialise, excessive nesting (4000) script: "));
  CHECK(StartsWith(
      Eval(server, "cjson.decode_max_depth(1e9) return cjson.decode(string.rep('[', 100000))"),
      "-ERR user_script:1: Found too many nested data structures (7999) at character 7999 "
      "script: "));
  CHECK(StartsWith(Eval(server, "cjson.decode_max_depth(1e9)"
                                " return cjson.decode(string.rep('{\"a\":', 100000))"),
                   "-ERR user_script:1: Found too many nested data structures (4000) at character "
                   "19996 script: "));
  // Below the limit the nesting works both ways.
  CHECK(Eval(server, "cjson.encode_max_depth(1e9) cjson.decode_max_depth(1e9) " +
                         nested("c[1] = n") +
                         "local d = t for i = 1, 100000 - 7990 do d = d[1] end"
                         " local s = cjson.encode(d) return {#s, #cjson.decode(s)}") ==
        "[15982, 1]");  // 7990 arrays around an empty table, which encodes as {}
  // The configured depths still apply first (Redis's defaults are 1000).
  CHECK(Eval(server, "cjson.encode_max_depth(1000) cjson.decode_max_depth(1000) return 1") ==
        "1");
  CHECK(StartsWith(Eval(server, nested("c[1] = n") + "return cjson.encode(t)"),
                   "-ERR user_script:1: Cannot serialise, excessive nesting (1001) script: "));
}

}  // namespace
}  // namespace lockstep
