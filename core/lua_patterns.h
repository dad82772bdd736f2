// Lua 5.1's string pattern functions (string.find, string.match, string.gmatch, string.gsub),
// written for the Lua 5.4 host with the semantics of the Lua 5.1 that Redis 7.0 embeds.
//
// Lua 5.4's own matcher differs from 5.1 in ways a script can see, among them:
//  - 5.1 reads a pattern as a C string: it ends at the first "\0" ("%z" matches a zero byte);
//    5.4 reads all of it and knows no "%z" (there "%z" is a literal 'z');
//  - 5.4 knows the class "%g"; in 5.1 "%g" is a literal 'g';
//  - gsub and gmatch: 5.1 also takes an empty match right after a non-empty one
//    (gsub('hello world', '%w*', 'X') is "XX XX", 4 in 5.1 and "X X", 2 in 5.4);
//  - a '%' before a non-digit in a gsub replacement stands for that character in 5.1 (an error
//    in 5.4), and a '%' at its very end inserts a zero byte;
//  - find and match with an init beyond the subject's end search from its end in 5.1 (5.4
//    returns nil); gmatch has no init argument;
//  - error texts: "unbalanced pattern" (5.4: "malformed pattern (missing arguments to '%b')"),
//    "invalid capture index" without the index;
//  - find takes the plain path when the pattern has no special character before its first
//    zero byte.
//
// Work is bounded: the matcher counts its steps (one step is one pattern item tried at one
// subject position, one character scanned by a repetition, a balance or a back-reference) and
// reports them to a meter it is handed, which stops the script when its budget is spent. The
// matcher's recursion (one level per pattern item, as in 5.1) is limited to kMatchDepthMax
// levels, where Lua 5.1 has no limit and would exhaust the C stack.
#ifndef LOCKSTEP_CORE_LUA_PATTERNS_H_
#define LOCKSTEP_CORE_LUA_PATTERNS_H_

#include <cstdint>

#include <lua.hpp>

namespace lockstep::luapattern {

// Where the matcher's work is charged. charge(L, steps) is called with the steps done since the
// previous call, at least every kChargeBatchSteps steps and once when a call ends; it raises a
// Lua error (it does not return) when the script may not go on. The meter must outlive the
// functions that hold it.
struct MatchMeter {
  void (*charge)(lua_State* L, uint64_t steps) = nullptr;
};

inline constexpr uint32_t kChargeBatchSteps = 1024;

// Lua 5.1's LUA_MAXCAPTURES.
inline constexpr int kCapturesMax = 32;

// Nesting of the recursive matcher (pattern items waiting for the rest of the pattern). Lua 5.1
// has no such limit; past it a match fails with "pattern too complex" (Lua 5.4's text).
inline constexpr int kMatchDepthMax = 5000;

// Sets find, match, gmatch, gfind (an alias of gmatch, as Lua 5.1 has it) and gsub in the
// table at table_idx.
void SetPatternFunctions(lua_State* L, int table_idx, const MatchMeter* meter);

}  // namespace lockstep::luapattern

#endif  // LOCKSTEP_CORE_LUA_PATTERNS_H_
