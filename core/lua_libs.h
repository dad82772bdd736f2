// The libraries Redis 7.0 adds to its Lua environment, written for Lua 5.4 (cjson and bit), and
// the helpers they share with the script host.
//
// Both libraries behave as Redis's bundled versions (lua-cjson 2.1.0 and LuaBitOp 1.0.2, as
// patched in Redis 7.0.15) with two deliberate changes, both listed in docs/fidelity.md:
//  - cjson.encode writes object members in lockstep's fixed key order (PushKeysInFixedOrder)
//    instead of Lua 5.1's hash order, so output never depends on Lua 5.4's per-process hash
//    seed;
//  - numbers these libraries create that are integral (and at most 2^53) are Lua 5.4 integers,
//    like every integral number the script host creates (docs/fidelity.md, "Integers stay
//    integers"); both subtypes print as Lua 5.1 prints the double.
//
// Every function here is a lua_CFunction or is called from one; none lets a C++ exception escape.
#ifndef LOCKSTEP_CORE_LUA_LIBS_H_
#define LOCKSTEP_CORE_LUA_LIBS_H_

#include <cstddef>

#include <lua.hpp>

namespace lockstep::lualib {

// Opens the library and leaves its module table on the stack (it sets no global).
int OpenCjson(lua_State* L);
int OpenBit(lua_State* L);

// Pushes a new array holding the keys of the table at idx, in lockstep's fixed order: first the
// integer keys 1..n of the array prefix (t[1]..t[n] all non-nil), then the other numbers in
// ascending order, then strings in byte order, then false before true, then every other key
// (tables, functions, ...) in Lua's own traversal order, which is not reproducible. Returns the
// number of keys. The table is read raw (no metamethods). A read-only proxy (see
// RegisterProxy) is looked through: the keys are those of the table it protects.
int PushKeysInFixedOrder(lua_State* L, int idx);

// Read-only proxies. The sandbox protects library tables by handing scripts an empty proxy
// whose metatable forwards reads to the real table and refuses writes. RegisterProxy records
// the pair (in the registry) so that raw access (rawget, next, pairs, cjson.encode) can look
// through the proxy.
void RegisterProxy(lua_State* L, int proxy_idx, int real_idx);
// Pushes the table a proxy protects, or the value at idx itself when it is not a proxy.
void PushUnproxied(lua_State* L, int idx);
// True when the value at idx is a read-only proxy.
bool IsProxy(lua_State* L, int idx);

// Formats a number the way Lua 5.1's tostring and .. do ("%.14g" of the double value: 3.0 is
// "3", 1e15 is "1e+15"). Returns the length written to buf (at most 31 characters).
size_t FormatNumberLua51(lua_Number n, char buf[32]);

// Pushes a double as a Lua 5.4 integer when it is integral, not -0 and |d| <= 2^53, otherwise as
// a float. Lua 5.1 has only doubles; the host's numbers are integers where that is exact, so
// that arithmetic on them is Lua 5.4's integer arithmetic, as on the script's own literals.
void PushNumberLua51(lua_State* L, double d);

}  // namespace lockstep::lualib

#endif  // LOCKSTEP_CORE_LUA_LIBS_H_
