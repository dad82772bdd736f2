// Hostile inputs for lockstep: scenario files mutated from the library's (types, ranges,
// nesting, encodings, sizes), Lua scripts that try to loop, recurse, allocate or crash the
// host, and emulator command lines. Every input is a pure function of its seed and index, so a
// failing case is found again by the same test run.
#ifndef LOCKSTEP_PROPERTY_TESTS_HOSTILE_INPUTS_H_
#define LOCKSTEP_PROPERTY_TESTS_HOSTILE_INPUTS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace lockstep::hostile {

struct Named {
  std::string name;
  std::string text;
};

// A mutation of `base` (a scenario file's text): one or more changes drawn from `seed`, named
// by what they did ("value workload.think_ms := -1e300", "text: truncated at 812", ...). The
// result may still be a valid scenario; most are not.
Named MutateScenario(const std::string& base, uint64_t seed);

// Scenario files that reproduce the defects the hostile-input issue found (segfaults, hangs,
// silent acceptance), as whole files; names ending in "(refuse)" must be refused with exit 2.
// `not_lua_script` is a file that exists but is not Lua, for a script override.
std::vector<Named> KnownBadScenarios(const std::string& not_lua_script);

// Lua scripts, each run by EVAL on a fresh emulator: endless loops of every shape, work done
// inside C functions, pathological patterns and globs, unbounded allocation, deep nesting in
// cjson, cmsgpack and replies, odd error objects, sandbox escapes. At least 200.
std::vector<Named> HostileScripts();

// Client programs (kind = "client", locks/client/client_program.h), whole files: endless loops
// in an operation, a task and the chunk, recursion, unbounded allocation, huge sends, sends to a
// node that does not exist, operations that never complete, odd results, misuse of the API, a
// table whose metamethods loop. At least 30.
std::vector<Named> HostileClientPrograms();

// Input for `lockstep emu`: command lines with hostile arguments (globs, cursors, counts,
// sizes, scripts, quoting). At least 30.
std::vector<Named> HostileEmuInputs();

// A mutation of `base` (a history file's JSON Lines, as `lockstep run` writes it), drawn from
// `seed` and named by what it did: structural ones keep the seq numbers whole and time in order
// so that they reach the readers behind the parser (a second protocol note, one after an exec,
// a protocol kind swapped for another, a resource event before the protocol note, an event
// dropped or repeated); others put control bytes into a text or flip a byte anywhere.
Named MutateHistory(const std::string& base, uint64_t seed);

}  // namespace lockstep::hostile

#endif  // LOCKSTEP_PROPERTY_TESTS_HOSTILE_INPUTS_H_
