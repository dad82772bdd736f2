// A lock client written in Lua: the `client` protocol kind.
//
// Most Redis locks are a short script or two and a client algorithm around them: how a vote is
// counted, when a lease is extended, what a waiter sleeps on, what a timeout means. A client
// program is that algorithm as a Lua 5.4 file, hosted as a sans-IO protocol (locks/protocol.h)
// so that the simulator and the live replay run it unchanged, with the same determinism.
//
// The program is a chunk that returns a table of operations:
//
//   local lock = {}
//   function lock.acquire(op) ... return "ok" end     -- required
//   function lock.release(op) ... return "ok" end     -- required
//   function lock.force_unlock(op) ... end            -- optional
//   lock.layout = "string-token"                      -- required: how the key names a holder
//   lock.unlock_reply = "compare-and-delete"          -- optional: what its unlock answers
//   lock.quorum = "majority"                          -- optional: a lock on every master
//   return lock
//
// The lock key is the lock name (lockstep.config.lock_name); its holder is named by op.token,
// "<uuid>:<thread + 1>", as the key's value ("string-token") or as a hash field
// ("hash-fields"). The checkers follow that key and the commands labelled "unlock" and "renew".
//
// Each operation runs as a coroutine of its own; `op` is {thread, token, mode ("lock", "try",
// "try-no-wait"), wait_us, lease_us}, and it ends by returning "ok" | "fail" | "unknown", an
// optional detail text and an optional integer value (a fencing token, an unlock's count).
// What a program can do is the global `lockstep` table (docs/clients.md has the reference):
//
//   lockstep.call(node, argv [, opts])        one command, waits: its reply, or nil, "timeout"
//   lockstep.eval(node, name, keys, args [, opts])     a script of the program's folder (EVAL)
//   lockstep.evalsha(node, name, keys, args [, opts])  the same by EVALSHA, EVAL on NOSCRIPT
//   lockstep.call_all(calls [, opts])         several at once (parallel votes), waits for all:
//                                             an array of replies, lockstep.timeout for none
//   lockstep.sleep(us)                        on the process's monotonic clock
//   lockstep.now_us(), lockstep.wall_ms()     the process's monotonic and wall clocks
//   lockstep.random(n), random_hex(bytes)     the process's PRNG
//   lockstep.spawn(fn, ...), cancel(task)     background tasks (watchdogs, auto-extension)
//   lockstep.config, lockstep.node_count()    the client's settings, how many nodes
//
// Replies reach Lua as Redis converts them for scripts: an integer, a string, false for a nil
// reply, {ok = "..."} for a status, {err = "..."} for an error, a table for an array.
//
// Determinism: the program sees no clock, PRNG or I/O but the Outbox's; pairs and next iterate
// in a fixed key order (core/lua_libs.h); tostring shows no address. Limits: every process's Lua
// state has a memory cap, and each stretch of work between two waits a step budget; a program
// that passes either, or raises an error, ends the operation as unknown with the reason, and the
// protocol reports it (ProgramError) so the run stops with that message.
#ifndef LOCKSTEP_LOCKS_CLIENT_CLIENT_PROGRAM_H_
#define LOCKSTEP_LOCKS_CLIENT_CLIENT_PROGRAM_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "locks/protocol.h"

namespace lockstep::locks {

struct ClientProgramLimits {
  // Lua VM instructions a program may run between two waits (a call, a sleep).
  uint64_t steps_per_slice = 20'000'000;
  // Bytes of Lua heap per client process.
  size_t memory_bytes = size_t{64} << 20;
};

// What a program declares for the checkers (its table's fields `layout` and `unlock_reply`).
struct ClientDeclarations {
  std::string layout;        // "string-token" or "hash-fields".
  // "compare-and-delete" (1: deleted, 0: not the caller's), "zero-released" (0: deleted, 1: not
  // the caller's) or "redisson" (nil: not held, 0: still held, 1: released).
  std::string unlock_reply;
  // "majority" or "all": the lock is its key on every master (lockstep.node_count() of them),
  // held with a majority of them (Redlock) or all; "": one lock, on node 0.
  std::string quorum;
  // "thread" (the default): a holder's value or field is its op.token, "<uuid>:<thread + 1>";
  // "process": it is the process's uuid (lockstep.config.uuid), one for all its threads.
  std::string owner;
};

// The declarations of the script set's program; false with *error when it does not load.
bool ReadClientDeclarations(const ClientConfig& config, const ScriptSet& scripts,
                            ClientDeclarations* out, std::string* error);

// True when the script set carries a program that loads: it compiles as Lua 5.4, its chunk runs
// within the limits and returns a table with the functions acquire and release. Otherwise
// false, with the program's file and the reason in *error.
bool CheckClientProgramConfig(const std::string& kind, const ClientConfig& config,
                              const ScriptSet& scripts, std::string* error);

// Asserts CheckClientProgramConfig.
std::unique_ptr<LockProtocol> MakeClientProgram(const std::string& kind, const ClientConfig& config,
                                                const ScriptSet& scripts);
std::unique_ptr<LockProtocol> MakeClientProgram(const ClientConfig& config,
                                                const ScriptSet& scripts,
                                                const ClientProgramLimits& limits);

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_CLIENT_CLIENT_PROGRAM_H_
