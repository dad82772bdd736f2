// How a lock key's state on a node becomes lease events, shared by every driver: the owners
// text a lease event's detail carries, and which op a change of owners is. The simulator reads
// the key from its emulated keyspace; the live harness reads it with a probe script on the real
// server. Both must write the same history for the same key, so both call these.
#ifndef LOCKSTEP_HISTORY_LEASE_OWNERS_H_
#define LOCKSTEP_HISTORY_LEASE_OWNERS_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/keyspace.h"
#include "history/event.h"
#include "history/names.h"

namespace lockstep::history {

// A hash lock's owners: its field names (Redisson's "<uuid>:<threadId>", and "mode" for the
// read-write lock), sorted and comma-separated.
std::string JoinOwners(std::vector<std::string> fields);

// The owners of a lock key as the history names them: the hash's fields (JoinOwners), a string
// lock's value, or the name of any other type ("list", "zset").
std::string OwnersOf(const Entry& e);

// Whether OwnersOf(e) == owners, without building OwnersOf(e): a driver looks at the lock key
// after every command, and its owners rarely change.
bool OwnersAre(const Entry& e, std::string_view owners);

// The owner fields of `before` that `after` lacks, both as OwnersOf writes them (comma-separated
// fields), joined alike: "" when `after` has every one.
std::string OwnersGone(std::string_view before, std::string_view after);

// The op of the lease event for a change of a key's owners from `before` to `after` (which
// differ; "" is no key): acquired (from none), owners (another set), or, when the key is gone,
// expired if its time ran out (`timed_out`) and `gone_as` otherwise (released, lost). The
// detail is `after`, or `before` when the key is gone.
Name LeaseOpOf(std::string_view before, std::string_view after, bool timed_out, Name gone_as);

// The lease event a driver records for `node`'s key of `lock`: `op` with the owners it names
// (none: no detail). The detail refers to `owners`, which must outlive the recording.
Event LeaseEvent(Name node, Name lock, Name op, std::string_view owners, int64_t local_ms);

// The holder_value note a driver records when a client program's thread announces the value its
// acquisitions write from now on (Outbox::HolderValue), so that owners holding it name that
// thread. The detail refers to `value`, which must outlive the recording.
Event HolderValueNote(Name client, int thread, std::string_view value, int64_t local_ms);

}  // namespace lockstep::history

#endif  // LOCKSTEP_HISTORY_LEASE_OWNERS_H_
