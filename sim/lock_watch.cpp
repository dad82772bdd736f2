#include "sim/lock_watch.h"

#include <cassert>

#include "history/lease_owners.h"
#include "sim/verify.h"
#include "sim/world.h"

namespace lockstep::sim {

namespace names = history::names;

void LockWatch::RecordLease(const Node& n, history::Name op, const std::string& owners,
                            int64_t local_ms) {
  history::Event ev = history::LeaseEvent(n.id, w_.lock_id, op, owners, local_ms);
  w_.Record(ev);
}

history::FactsPass* LockWatch::StartVerifying(const history::NameTable* names) {
  verify_facts_ = std::make_unique<history::FactsPass>(names, history::FactsOptions{});
  return verify_facts_.get();
}

void LockWatch::Verify(const Node& n, const std::function<std::string()>& after) {
  if (n.master >= 0 || !n.up || !verify_failure_.empty()) return;
  const Look look = LookAt(n);
  const std::string difference =
      CompareKeyView(*verify_facts_, n.id, w_.lock_id, look.live, look.now_ms);
  if (difference.empty()) return;
  verify_failure_ = "verification failed at " + history::FormatMs(w_.engine.now()) +
                    " of true time on " + n.name + ", after " + after() +
                    " (the history's last event is seq " +
                    std::to_string(w_.recorder.count() - 1) + "): " + difference;
  w_.engine.Stop();
}

LockWatch::Look LockWatch::LookAt(const Node& n) const {
  Look look;
  look.now_ms = n.clock->WallMs(w_.engine.now());
  const Entry* e = n.server->keyspace().Find(w_.scenario.protocol.lock_name);
  if (e != nullptr && !Keyspace::IsExpired(*e, look.now_ms)) {
    look.live = e;
    look.expire_ms = e->expire_at_ms;
  }
  look.same = look.live ? history::OwnersAre(*look.live, n.lock_owners) : n.lock_owners.empty();
  assert(look.same ==
         ((look.live ? history::OwnersOf(*look.live) : std::string()) == n.lock_owners));
  return look;
}

void LockWatch::Track(Node& n, history::Name gone_as) {
  if (n.master >= 0) return;  // Replicas echo their master; only masters are judged.
  const Look look = LookAt(n);
  const int64_t now_ms = look.now_ms;
  const int64_t expire_ms = look.expire_ms;
  // Only a change of owners makes an event, and builds the new owners' text.
  if (!look.same) {
    std::string owners = look.live ? history::OwnersOf(*look.live) : std::string();
    const bool timed_out = n.lock_expire_ms != kNoExpiry && now_ms > n.lock_expire_ms;
    RecordLease(n, history::LeaseOpOf(n.lock_owners, owners, timed_out, gone_as),
                owners.empty() ? n.lock_owners : owners, now_ms);
    n.lock_owners = std::move(owners);
  }
  const bool held = !n.lock_owners.empty();  // What `owners` is now, changed or not.
  if (held && expire_ms != kNoExpiry && expire_ms != n.lock_expire_ms) {
    // Schedule the moment this node's clock passes the expiry: now_ms > expire_ms.
    const TrueTime at =
        n.clock->FirstTrueTimeWallExceeds((expire_ms + 1) * 1000 - 1, w_.engine.now());
    if (at != kNever) {
      Node* np = &n;
      w_.engine.At(at, [this, np, expire_ms] { ExpireCheck(*np, expire_ms); });
    }
  }
  n.lock_expire_ms = held ? expire_ms : kNoExpiry;
  n.lock_seen = {n.server.get(), n.server->write_commands_run(), now_ms};
}

bool LockWatch::Unchanged(const Node& n, int64_t now_ms) const {
  if (n.master >= 0 || n.lock_seen.server != n.server.get()) return false;
  if (n.server->write_commands_run() != n.lock_seen.writes) return false;
  if (now_ms < n.lock_seen.at_ms) return false;
  return n.lock_owners.empty() || n.lock_expire_ms == kNoExpiry || now_ms < n.lock_expire_ms;
}

bool LockWatch::AsSeen(const Node& n) const {
  const Look look = LookAt(n);
  return look.same && (n.lock_owners.empty() || look.expire_ms == n.lock_expire_ms);
}

void LockWatch::Promoted(Node& r, const std::string& old_owners) {
  // The history has said nothing of r's key so far (a replica's lease events are not
  // recorded): from here on its events describe its own key.
  const Look look = LookAt(r);
  const std::string gone =
      history::OwnersGone(old_owners, look.live ? history::OwnersOf(*look.live) : std::string());
  if (!gone.empty()) RecordLease(r, names::kLost, gone, look.now_ms);
  r.lock_owners.clear();
  r.lock_expire_ms = kNoExpiry;
  Track(r, names::kLost);
  if (verifying()) Verify(r, [] { return "its promotion"; });
}

void LockWatch::ExpireCheck(Node& n, int64_t expire_ms) {
  if (!n.up || n.master >= 0) return;
  Deliver(n.mailbox, [this, &n, expire_ms] {
    if (!n.up || n.master >= 0) return;
    const std::string& key = w_.scenario.protocol.lock_name;
    Entry* e = n.server->keyspace().Find(key);
    const int64_t now_ms = n.clock->WallMs(w_.engine.now());
    if (e == nullptr || e->expire_at_ms != expire_ms || !Keyspace::IsExpired(*e, now_ms)) return;
    // Redis's active expiry: delete, tell the key's watchers (signalModifiedKey), replicate the
    // DEL.
    n.server->keyspace().Erase(key);
    if (n.server->has_watched_keys()) n.server->TouchWatchedKey(key);
    Effects fx;
    fx.commands.push_back({"DEL", key});
    ++n.offset;
    w_.servers.Replicate(n, fx);
    Track(n, names::kExpired);
    if (verifying()) Verify(n, [] { return "the key's expiry"; });
  }, Mailbox::kOwnWork);
}

}  // namespace lockstep::sim
