// Redis 7.0's Lua scripting environment, hosted in Lua 5.4 (Debian's C++ build).
//
// What a script sees is Redis 7.0's environment, not Lua 5.4's: redis.call/pcall/error_reply/
// status_reply/sha1hex/log/setresp/set_repl/replicate_commands and the constants, the 5.1
// functions scripts rely on (unpack, loadstring, table.getn, math.mod, ...), cjson and bit,
// read-only globals with Redis's error texts, Redis's rand48 math.random, and Redis's
// conversion rules in both directions. The differences that remain are listed in
// docs/fidelity.md.
//
// Determinism: Lua 5.4 seeds its string hash from the time and from addresses, so the order
// of pairs()/next() over string keys would change from run to run. The sandbox's pairs, next and
// cjson.encode iterate keys in a fixed order instead (lua_libs.h, PushKeysInFixedOrder), and
// math.random is rand48 with state owned by the host.
//
// Limits: every script runs under a step budget and a memory cap. The budget counts Lua VM
// instructions and the work of library functions, in every coroutine of the script (the cost
// model, and how library code charges it, are in core/script_budget.h). A script that exceeds
// the budget is stopped with a BUSY error (where redis-server would keep running it and answer
// everyone else BUSY); one that exceeds the memory cap fails with an out-of-memory error.
// Neither can be caught by pcall inside the script.
#ifndef LOCKSTEP_CORE_SCRIPT_HOST_H_
#define LOCKSTEP_CORE_SCRIPT_HOST_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "core/script_budget.h"
#include "core/server.h"

namespace lockstep {

class ScriptHost {
 public:
  ScriptHost(Server& server, uint64_t step_budget, size_t memory_bytes_max);
  ~ScriptHost();
  ScriptHost(const ScriptHost&) = delete;
  ScriptHost& operator=(const ScriptHost&) = delete;

  // EVAL / EVALSHA / EVAL_RO / EVALSHA_RO; argv[0] is the command name as sent.
  Reply Eval(Ctx& ctx, const Argv& argv);

  // SCRIPT LOAD / EXISTS / FLUSH / KILL; argv[0] is "script".
  Reply Script(Ctx& ctx, const Argv& argv);

  // The SHA1 of a script body as 40 lowercase hex characters.
  static std::string Sha1Hex(std::string_view body);

  // Compiles `body` as redis-server compiles a script for SCRIPT LOAD, without running it:
  // Redis's error text ("ERR Error compiling script (new function): user_script:1: ...") if it
  // does not compile, else "". Bodies that compiled are remembered by their SHA1 for the
  // process (a fuzz search loads the same scripts for every case), behind a lock: callers may
  // be on several threads.
  static std::string CompileError(const std::string& body);

  // How much of its budget the last script spent, in ScriptBudget units (for tests, benchmarks
  // and budget tuning): its VM instructions, counted by the step hook in whole blocks of its
  // interval (1000 instructions), plus the charges of library functions. A short script that
  // calls no costly library function reports 0.
  uint64_t last_script_steps() const;
  // Whether the last EVAL (or EVALSHA) was stopped by its step budget: its caller got the
  // budget's BUSY error. False after any other EVAL, however it ended.
  bool last_script_ran_out() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_SCRIPT_HOST_H_
