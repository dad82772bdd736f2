// Transactions (Redis multi.c): MULTI, EXEC, DISCARD, WATCH, UNWATCH, and the registry of
// watched keys that every write touches. Replies and errors are redis-server 7.0.15's; the
// cases are in core/testdata/conformance/transactions.txt, run against a live server too.
#include <algorithm>
#include <cassert>
#include <string>
#include <utility>
#include <vector>

#include "base/ascii.h"
#include "core/cluster.h"
#include "core/commands.h"
#include "core/session.h"

namespace lockstep {

bool NeedsSession(std::string_view command) {
  // Every command a simulated client sends asks this: its first letter settles most.
  if (command.empty()) return false;
  const auto is = [command](std::string_view name) { return EqualsIgnoreCase(command, name); };
  switch (command[0] | 0x20) {
    case 'm': return is("multi");
    case 'e': return is("exec");
    case 'd': return is("discard");
    case 'w': return is("watch");
    case 'u': return is("unwatch");
    case 'b':
      return is("blpop") || is("brpop") || is("blmove") || is("brpoplpush") || is("bzpopmin") ||
             is("bzpopmax") || is("blmpop") || is("bzmpop");
    default: return false;
  }
}

namespace {

// Server::Execute without a session has no connection to keep a transaction on.
Reply NeedsConnection(const Argv& argv) {
  return Reply::Error("ERR '" + AsciiLowered(argv[0]) +
                      "' needs a client connection: the lockstep emulator runs it only through "
                      "Server::Execute with a Session");
}

}  // namespace

namespace cmd {

Reply Multi(Ctx& ctx, const Argv& argv) {
  if (ctx.session == nullptr) return NeedsConnection(argv);
  return ctx.server.MultiCommand(*ctx.session);
}

Reply Exec(Ctx& ctx, const Argv& argv) {
  if (ctx.session == nullptr) return NeedsConnection(argv);
  return ctx.server.ExecCommand(*ctx.session, ctx.now_ms, ctx.effects);
}

Reply Discard(Ctx& ctx, const Argv& argv) {
  if (ctx.session == nullptr) return NeedsConnection(argv);
  return ctx.server.DiscardCommand(*ctx.session);
}

Reply Watch(Ctx& ctx, const Argv& argv) {
  if (ctx.session == nullptr) return NeedsConnection(argv);
  return ctx.server.WatchCommand(*ctx.session, argv, ctx.now_ms);
}

Reply Unwatch(Ctx& ctx, const Argv& argv) {
  if (ctx.session == nullptr) return NeedsConnection(argv);
  return ctx.server.UnwatchCommand(*ctx.session);
}

}  // namespace cmd

// --- MULTI/EXEC -------------------------------------------------------------------------------

Reply Server::MultiCommand(Session& session) {
  // Not flagTransaction: a nested MULTI leaves the transaction able to run.
  if (session.in_multi_) return Reply::Error("ERR MULTI calls can not be nested");
  session.in_multi_ = true;
  return Reply::Ok();
}

Reply Server::DiscardCommand(Session& session) {
  if (!session.in_multi_) return Reply::Error("ERR DISCARD without MULTI");
  DiscardTransaction(session);
  return Reply::Ok();
}

void Server::DiscardTransaction(Session& session) {
  session.ResetMulti();
  UnwatchAll(session);
}

Reply Server::ExecCommand(Session& session, int64_t now_ms, Effects* effects) {
  if (!session.in_multi_) return Reply::Error("ERR EXEC without MULTI");
  // 7.0's isWatchedKeyExpired: a key that was alive when watched and has expired since
  // counts as touched, even though nothing deleted it yet.
  for (const Session::WatchedKey& watched : session.watched_) {
    if (watched.expired) continue;
    const Entry* e = db_.Find(watched.key);
    if (e != nullptr && Keyspace::IsExpired(*e, now_ms)) {
      session.dirty_cas_ = true;
      break;
    }
  }
  // A refused command wins over a touched key: EXECABORT rather than the null array.
  if (session.dirty_exec_ || session.dirty_cas_) {
    Reply reply = session.dirty_exec_
                      ? Reply::Error("EXECABORT Transaction discarded because of previous errors.")
                      : Reply::NullArray();
    DiscardTransaction(session);
    return reply;
  }
  UnwatchAll(session);  // execCommand unwatches before running anything.
  std::vector<Session::Queued> queued = std::move(session.queued_);
  session.queued_.clear();
  // CLIENT_DENY_BLOCKING: a BLPOP inside EXEC answers as if it timed out.
  session.deny_blocking_ = true;
  std::vector<Reply> replies;
  replies.reserve(queued.size());
  for (const Session::Queued& q : queued) {
    // Every command sees the time EXEC started (Redis caches it for the whole call), and
    // none is checked again for memory, cluster slots or READONLY: call() runs them as is.
    if (q.spec->handler == cmd::Eval) [[unlikely]] {
      // A script still learns the memory state as it starts (scriptPrepareForRun).
      Reply refusal;
      if (OomRefuses(*q.spec, q.argv, /*deny_any=*/false, &refusal)) {
        replies.push_back(Reply::Error("OOM allow-oom flag is not set on the script, can not run "
                                       "it when used memory > 'maxmemory'"));
        continue;
      }
    }
    Ctx ctx(*this, now_ms, 2, /*from_script=*/false, effects);
    ctx.session = &session;
    ctx.cluster_checked = cluster_enabled();
    ctx.cluster_slot = q.cluster_slot;
    replies.push_back(Run(*q.spec, ctx, q.argv));
  }
  session.deny_blocking_ = false;
  DiscardTransaction(session);
  return Reply::Array(std::move(replies));
}

bool Server::TransactionClusterAdmits(const Session& session, Reply* refusal) const {
  // Each queued command passed the node's checks as it was queued; together they must
  // still name a single slot.
  int slot = -1;
  for (const Session::Queued& q : session.queued_) {
    const KeyPositions keys = CommandKeyPositions(*q.spec, q.argv);
    if (keys.empty()) continue;
    for (size_t i = keys.first; i <= keys.last; i += keys.step) {
      const int key_slot = KeyHashSlot(q.argv[i]);
      if (slot == -1) {
        slot = key_slot;
      } else if (key_slot != slot) {
        *refusal = Reply::Error(std::string(cluster_err::kCrossSlot));
        return false;
      }
    }
  }
  return true;
}

// --- WATCH ------------------------------------------------------------------------------------

Reply Server::WatchCommand(Session& session, const Argv& argv, int64_t now_ms) {
  // Not flagTransaction either.
  if (session.in_multi_) return Reply::Error("ERR WATCH inside MULTI is not allowed");
  // No point in watching once a watched key was touched.
  if (session.dirty_cas_) return Reply::Ok();
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& key = argv[i];
    const bool already = std::any_of(session.watched_.begin(), session.watched_.end(),
                                     [&](const Session::WatchedKey& w) { return w.key == key; });
    if (already) continue;
    if (session.watched_.size() >= Session::kWatchedKeysMax) {
      return Reply::Error("ERR lockstep's limit of " + std::to_string(Session::kWatchedKeysMax) +
                          " watched keys per connection was reached (see docs/fidelity.md)");
    }
    // keyIsExpired, without deleting the key: WATCH does not look it up.
    const Entry* e = db_.Find(key);
    const bool expired = e != nullptr && Keyspace::IsExpired(*e, now_ms);
    session.watched_.push_back({key, expired});
    watchers_[key].push_back(&session);
  }
  return Reply::Ok();
}

Reply Server::UnwatchCommand(Session& session) {
  UnwatchAll(session);
  session.dirty_cas_ = false;
  return Reply::Ok();
}

void Server::UnwatchAll(Session& session) {
  for (const Session::WatchedKey& watched : session.watched_) {
    const auto it = watchers_.find(watched.key);
    assert(it != watchers_.end());
    std::vector<Session*>& sessions = it->second;
    const auto at = std::find(sessions.begin(), sessions.end(), &session);
    assert(at != sessions.end());
    sessions.erase(at);
    if (sessions.empty()) watchers_.erase(it);
  }
  session.watched_.clear();
}

void Server::TouchKeysOf(const Argv& propagated) {
  const CommandSpec* spec = Lookup(propagated);
  assert(spec != nullptr);
  // Only writes name keys they change (SPUBLISH's "key" is a channel).
  if (spec == nullptr || !(spec->flags & kCmdWrite)) return;
  const KeyPositions keys = CommandKeyPositions(*spec, propagated);
  if (keys.empty()) return;
  for (size_t i = keys.first; i <= keys.last && !watchers_.empty(); i += keys.step) {
    TouchWatchedKey(propagated[i]);
  }
}

void Server::TouchWatchedKey(std::string_view key) {
  const auto it = watchers_.find(key);
  if (it == watchers_.end()) return;
  // A copy: a touched session unwatches all its keys, which edits this list.
  const std::vector<Session*> sessions = it->second;
  for (Session* session : sessions) {
    const auto watched =
        std::find_if(session->watched_.begin(), session->watched_.end(),
                     [&](const Session::WatchedKey& w) { return w.key == key; });
    assert(watched != session->watched_.end());
    if (watched->expired) {
      // Watched already expired: deleting it is no change, so the flag just clears.
      if (db_.Find(key) == nullptr) {
        watched->expired = false;
        continue;
      }
      // 7.0.15's touchWatchedKey leaves its loop here ("break", not "continue"): neither
      // this session nor any that watched the key after it is marked. Kept as Redis has it.
      break;
    }
    session->dirty_cas_ = true;
    UnwatchAll(*session);
  }
}

void Server::TouchAllWatchedKeys() {
  // touchAllWatchedKeysInDb(db, NULL), called before the keys go: a watched key that exists
  // marks its watchers, except those that watched it already expired. The watchers keep
  // watching (Redis does not unwatch them here).
  for (auto& [key, sessions] : watchers_) {
    if (db_.Find(key) == nullptr) continue;
    for (Session* session : sessions) {
      const auto watched =
          std::find_if(session->watched_.begin(), session->watched_.end(),
                       [&](const Session::WatchedKey& w) { return w.key == key; });
      assert(watched != session->watched_.end());
      if (watched->expired) {
        watched->expired = false;
        continue;
      }
      session->dirty_cas_ = true;
    }
  }
}

}  // namespace lockstep
