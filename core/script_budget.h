// The work budget of a script run, and how library code charges it.
//
// Every EVAL has one budget (ServerOptions::script_step_budget units), shared by the script and
// every coroutine it creates. A unit is about the CPU time of one simple Lua VM instruction
// (about 6 ns on the machine the constants were measured on; the default budget of 50 million
// units is then well under a second of work of any kind). The cost model:
//
//   work                                                        units
//   a Lua VM instruction, in any coroutine                      1 (see below)
//   bytes copied or compared in bulk: '..' building a long      1 per kBytesPerUnit bytes
//     string, '==' '<' '<=' of long strings, indexing a table
//     with a long string key (these three through
//     core/lua-patches/0002), rawequal of long strings,
//     cjson.encode's result
//   characters handled one at a time: string.upper/lower/       1 per kCharsPerUnit chars
//     reverse/sub/char/format results, string.rep (n copies:
//     its bytes, plus n for its loop), cjson text scanned,
//     escaped or decoded, tonumber and redis.sha1hex of a
//     string, table.concat's pieces (its text is built outside
//     the Lua heap: this also bounds its size)
//   source text compiled (load, loadstring)                     1 per byte
//   an element visited: a table entry read or moved (maxn,      kElementUnits
//     insert, remove, concat), a sort comparison, a
//     string.byte result, a key put in pairs/next's fixed
//     order (2 per key of the array part, 4 + 2 log2 n per
//     other key: they are sorted)
//   redis.call / redis.pcall: the string arguments copied       bulk bytes
//     into the command, the bulk strings of its reply; each
//     element of an array reply                                 3 * kElementUnits
//   a hop of an __index/__newindex chain after the first        1 (lua-patches/0003)
//   the return value converted into the reply (script_host.cpp,  kElementUnits an element,
//     ReturnValueToReply): elements, their strings' bytes,       bulk bytes, kKeyOrderUnits
//     a map's or set's key order                                  a key order
//   a JSON value encoded or decoded                             kJsonValueUnits
//   a number formatted as text by cjson.encode                  kNumberTextUnits (more)
//   a JSON table (object or array) encoded or decoded           kJsonTableUnits
//   a key order built (pairs, next, table.foreach, cjson)       kKeyOrderUnits
//   a coroutine created                                         kCoroutineUnits
//   a coroutine.yield (and the resume it returns to)            kYieldUnits
//   a call of a load reader function                            kReaderCallUnits
//   a collectgarbage("collect") or ("step")                     the heap, as bytes scanned
//
// Instructions are counted by a count hook in blocks of 1000 per coroutine; the few hundred
// instructions a short-lived coroutine runs without completing a block are covered by
// kCoroutineUnits. A script whose bytecode shows it cannot loop runs without the hook (its
// instructions are not counted; its library calls are).
//
// Nothing here reads a clock: the same script stops after the same number of units, at the same
// point, on every machine. When a charge exhausts the budget the script ends with the BUSY error
// of the step budget (script_host.cpp, ErrorToReply), which pcall, xpcall and coroutines
// cannot catch.
//
// Using it from a library function (a lua_CFunction, or code called from one, running inside a
// script): call Charge with the work about to be done, before doing it when its size is known
// (string.rep), or as the work goes when it is not (a parser, a pattern matcher: a
// ScriptWorkMeter gathers small amounts and charges them in batches). Charge raises the stop as
// a Lua error, so call it only where raising a Lua error is safe (not inside a __gc, an
// allocator, or between the halves of a table update). Outside a script run (host code that
// builds the sandbox or the reply, a lua_State the host did not create) it does nothing.
#ifndef LOCKSTEP_CORE_SCRIPT_BUDGET_H_
#define LOCKSTEP_CORE_SCRIPT_BUDGET_H_

#include <cstddef>
#include <cstdint>

#include <lua.hpp>

namespace lockstep {

class ScriptBudget {
 public:
  static constexpr uint64_t kBytesPerUnit = 16;
  static constexpr uint64_t kCharsPerUnit = 2;
  static constexpr uint64_t kElementUnits = 4;
  static constexpr uint64_t kJsonValueUnits = 8;
  static constexpr uint64_t kJsonTableUnits = 32;
  static constexpr uint64_t kNumberTextUnits = 16;
  static constexpr uint64_t kKeyOrderUnits = 128;
  static constexpr uint64_t kCoroutineUnits = 1000;
  static constexpr uint64_t kYieldUnits = 500;
  static constexpr uint64_t kReaderCallUnits = 20;
  // A command run by redis.call or redis.pcall, besides its arguments and its reply: the lookup,
  // the context, the keyspace work of a small command (about a microsecond).
  static constexpr uint64_t kCommandUnits = 200;
  // An error raised and caught by pcall or xpcall: the message, the unwinding (about half a
  // microsecond), which a loop of pcall(error) would otherwise get nearly for free.
  static constexpr uint64_t kCaughtErrorUnits = 100;

  // Adds `units` to the budget spent by the script running on L (any of its coroutines). When
  // the total exceeds the budget, raises the script's stop and does not return.
  static void Charge(lua_State* L, uint64_t units);

  // Another host of lua_States of its own (lockstep's client programs, locks/client/) whose
  // budget the same charges should reach: the VM's charges for long strings, and any library
  // function that charges through here. Its states are the ones whose allocator is `alloc`;
  // `charge` gets the allocator's ud. Register once, before such a state runs; the VM's charge
  // hook is installed with it.
  using ForeignCharge = void (*)(lua_State* L, void* ud, uint64_t units);
  static void RegisterForeignHost(lua_Alloc alloc, ForeignCharge charge);

  // Charge for bulk bytes, or for characters handled one at a time. Rounded down per call, so
  // charge a large piece of work once (or through a ScriptWorkMeter) rather than piece by piece.
  static void ChargeBytes(lua_State* L, uint64_t bytes) { Charge(L, bytes / kBytesPerUnit); }
  static void ChargeChars(lua_State* L, uint64_t chars) { Charge(L, chars / kCharsPerUnit); }
};

// Work counted as it is done, for a loop whose total is not known in advance (an encoder, a
// parser, a matcher): the meter charges the budget whenever kFlushUnits units have gathered, and
// at Flush(), which the owner calls when the work is done (the destructor does not charge: it
// must not raise). Bytes and characters are summed before they are converted, so many small
// pieces cost what one large piece costs.
class ScriptWorkMeter {
 public:
  static constexpr uint64_t kFlushUnits = 4096;

  explicit ScriptWorkMeter(lua_State* L) : L_(L) {}
  ScriptWorkMeter(const ScriptWorkMeter&) = delete;
  ScriptWorkMeter& operator=(const ScriptWorkMeter&) = delete;

  void AddUnits(uint64_t units) {
    units_ += units;
    if (units_ >= kFlushUnits) Flush();
  }
  void AddBytes(uint64_t bytes) {
    bytes_ += bytes;
    if (bytes_ >= kFlushUnits * ScriptBudget::kBytesPerUnit) Flush();
  }
  void AddChars(uint64_t chars) {
    chars_ += chars;
    if (chars_ >= kFlushUnits * ScriptBudget::kCharsPerUnit) Flush();
  }
  // Charges what has gathered (rounded down; the remainders are kept for the next flush).
  void Flush() {
    const uint64_t units = units_ + bytes_ / ScriptBudget::kBytesPerUnit +
                           chars_ / ScriptBudget::kCharsPerUnit;
    bytes_ %= ScriptBudget::kBytesPerUnit;
    chars_ %= ScriptBudget::kCharsPerUnit;
    units_ = 0;
    ScriptBudget::Charge(L_, units);
  }

 private:
  lua_State* L_;
  uint64_t units_ = 0;
  uint64_t bytes_ = 0;
  uint64_t chars_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_SCRIPT_BUDGET_H_
