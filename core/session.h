// One client connection to an emulated Server: what redis-server keeps on its `client`
// struct for MULTI/EXEC, WATCH and the blocking list pops (multi.c, blocked.c). The caller
// owns one Session per connection (the simulator: one per simulated client connection to a
// node; `lockstep emu`: one for its stdin) and passes it to Server::Execute(Session&, ...).
//
// The Server keeps registries that name sessions (the watchers of each key, the sessions
// blocked on each key, the sessions woken since the last TakeWoken), so a Session is bound to
// the first Server it runs a command on: it must not be moved, and it leaves the Server's
// registries when it is destroyed (as a closed connection does) or when the Server is
// destroyed first (it is then a fresh connection again, bound to no server).
//
// Blocking: a BLPOP/BRPOP whose keys are all empty blocks the session. Execute then returns
// no reply (std::nullopt) and blocked() is true. The session stays blocked until one of:
//   - a command on any session (or a script, or the replication stream) makes one of its keys
//     a non-empty list: the Server pops the element for it and queues its reply, which the
//     caller collects with Server::TakeWoken() after each command;
//   - the caller sees its deadline pass on the node's clock (TimedOut(now_ms)) and calls
//     Server::TimeOut(session), which returns the null reply Redis sends on a timeout;
//   - the caller closes the connection (Server::Disconnect, or destroying the Session).
// The Server never reads a clock of its own for this: deadlines are on the clock the caller
// passes to Execute, and checking them is the caller's job (Redis checks them in its cron and
// before each event loop sleep; a driver checks them when its clock moves).
#ifndef LOCKSTEP_CORE_SESSION_H_
#define LOCKSTEP_CORE_SESSION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/argv.h"

namespace lockstep {

class Server;
struct CommandSpec;

// Whether redis-server 7.0 keeps state for the connection a command comes on (a transaction,
// watched keys) or may block that connection: MULTI, EXEC, DISCARD, WATCH, UNWATCH and the
// blocking pops and moves. A driver gives such a command's connection a session (the simulator
// a Session, the live driver a connection of the thread's own). Not every one of them is
// emulated: one that is not answers its unknown-command error on the session.
bool NeedsSession(std::string_view command);

class Session {
 public:
  // The deadline of a BLPOP with timeout 0, which waits for ever. Redis stores 0 for it; here
  // 0 can be a real deadline on a simulated clock that starts at 0, so the marker is a time
  // no clock reaches.
  static constexpr int64_t kNoDeadline = INT64_MAX;
  // lockstep's limits on what one connection may pile up (Redis bounds them only by its
  // client output and query buffer limits): commands queued in one MULTI, keys watched.
  static constexpr size_t kQueuedCommandsMax = 100'000;
  static constexpr size_t kWatchedKeysMax = 100'000;

  Session() = default;
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // --- MULTI/EXEC ---
  // Between MULTI and EXEC or DISCARD.
  bool in_multi() const { return in_multi_; }
  // Commands queued since MULTI (a refused command is not queued, and once the transaction
  // is doomed nothing more is).
  size_t queued_count() const { return queued_.size(); }
  // A command was refused while queueing (CLIENT_DIRTY_EXEC): EXEC answers EXECABORT.
  bool exec_doomed() const { return dirty_exec_; }

  // --- WATCH ---
  // A watched key was touched (CLIENT_DIRTY_CAS): EXEC answers a null array.
  bool watch_touched() const { return dirty_cas_; }
  size_t watched_key_count() const { return watched_.size(); }

  // --- blocking ---
  bool blocked() const { return blocked_; }
  // While blocked: the keys waited on, in the order the command named them (duplicates
  // dropped), and the deadline on the node's clock in ms, or kNoDeadline.
  const std::vector<std::string>& blocked_keys() const { return blocked_keys_; }
  int64_t block_deadline_ms() const { return deadline_ms_; }
  // True when the session is blocked and its deadline has passed at now_ms (Redis times a
  // client out once its timeout is strictly in the past).
  bool TimedOut(int64_t now_ms) const { return blocked_ && now_ms > deadline_ms_; }

 private:
  friend class Server;

  struct Queued {
    Argv argv;
    const CommandSpec* spec;
    int cluster_slot;  // Cluster mode: the slot the command's keys hash to, or -1.
  };
  struct WatchedKey {
    std::string key;
    // The key existed, already expired, when it was watched (watchedKey.expired): deleting
    // it later is no change, and only a write that brings it back counts.
    bool expired;
  };

  // Clears the MULTI state (discardTransaction, without the unwatch).
  void ResetMulti() {
    in_multi_ = false;
    dirty_exec_ = false;
    dirty_cas_ = false;
    queued_denyoom_ = false;
    queued_.clear();
  }

  Server* server_ = nullptr;  // The server whose registries may name this session.

  bool in_multi_ = false;
  bool dirty_exec_ = false;
  bool dirty_cas_ = false;
  bool queued_denyoom_ = false;  // A queued command is flagged denyoom (mstate.cmd_flags).
  bool deny_blocking_ = false;   // Inside EXEC: a blocking pop answers as if timed out.
  std::vector<Queued> queued_;
  std::vector<WatchedKey> watched_;  // In WATCH order.

  bool blocked_ = false;
  bool block_from_head_ = true;  // BLPOP; false for BRPOP.
  std::vector<std::string> blocked_keys_;
  int64_t deadline_ms_ = kNoDeadline;
  bool woken_pending_ = false;  // May be named in the Server's woken queue.
};

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_SESSION_H_
