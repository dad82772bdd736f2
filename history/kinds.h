// The protocol kinds lockstep implements, in one table: what each is called, how the checkers
// judge it, which Lua scripts it runs (and may have replaced), where its default scripts live
// and what a scenario may ask of it. The scenario loader (model/), the lock factory
// (locks/factory.cpp), the simulator, the facts pass and the reports all read this table;
// none of them spells a kind's name.
//
// A new kind is a folder of its own under locks/ (its client) and lua/ (its scripts), one row
// here, and one row in locks/factory.cpp that names its client's factory.
#ifndef LOCKSTEP_HISTORY_KINDS_H_
#define LOCKSTEP_HISTORY_KINDS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace lockstep::history {

// How the checkers judge a kind (history/facts.h ProtocolInfo).
enum class KindClass : uint8_t {
  kPlain,      // One exclusive lock with owners: RLock, spin lock, the SET NX locks.
  kFair,       // Exclusive, granted in queue order (fairness).
  kQuorum,     // The same key on several masters (RedLock: a majority; MultiLock: all).
  kRw,         // Readers share, a writer is alone (rw_exclusion).
  kFenced,     // Exclusive, with fencing tokens (fencing).
  kSemaphore,  // Permits without owners (semaphore).
  kLatch,      // A count-down latch (latch).
};

// Where a kind's default scripts are read from, in order, when they are not (all) in
// lua/<kind>/<version>/: a folder under lua/, a version folder in it ("": the requested
// version, ".": no version level) and the script names taken from it (none: every .lua file).
// A later source never replaces a script an earlier one gave.
struct ScriptSource {
  std::string_view folder;
  std::string_view version;
  std::array<std::string_view, 4> names = {};
};

struct ProtocolKind {
  std::string_view name;
  KindClass cls = KindClass::kPlain;
  // The scripts it cannot run without, which are also those protocol.scripts may replace;
  // empty slots end the list.
  std::array<std::string_view, 8> scripts = {};
  // Set for kinds newer than 3.13.6: the Redisson version that added them. They have only the
  // "current" scripts and client, and "current" is their default version.
  std::string_view added_in = {};
  // Empty: lua/<name>/<version>/ holds every script.
  std::array<ScriptSource, 2> sources = {};
  // The roles its clients may take beyond worker (empty slots end the list).
  std::array<std::string_view, 4> roles = {};
  bool shows_permits = false;  // Its acquire invokes write "permits=<n>" (semaphores).
  bool majority = false;       // kQuorum: a majority of the masters suffices (RedLock).
  bool ttl_lease = false;      // The lease is the key's TTL (SET PX, EXPIRE): it must be > 0.
  // Its client is a Lua program the scenario names (protocol.client; locks/client/), whose
  // folder holds its scripts.
  bool client_program = false;
};

inline constexpr ProtocolKind kProtocolKinds[] = {
    {.name = "rlock", .scripts = {"acquire", "unlock", "renew", "force_unlock"}},
    {.name = "fairlock",
     .cls = KindClass::kFair,
     .scripts = {"acquire", "try_acquire", "unlock", "force_unlock", "acquire_failed", "renew"},
     .sources = {{{"fairlock", ""}, {"rlock", "", {"renew"}}}}},
    {.name = "redlock",
     .cls = KindClass::kQuorum,
     .scripts = {"acquire", "unlock", "renew", "force_unlock"},
     .sources = {{{"rlock", ""}}},
     .majority = true},
    {.name = "multilock",
     .cls = KindClass::kQuorum,
     .scripts = {"acquire", "unlock", "renew", "force_unlock"},
     .sources = {{{"rlock", ""}}}},
    {.name = "fencedlock",
     .cls = KindClass::kFenced,
     .scripts = {"acquire_with_token", "unlock", "renew", "force_unlock"},
     .added_in = "3.19.0",
     .sources = {{{"fencedlock", ""}, {"rlock", "", {"unlock", "renew", "force_unlock"}}}}},
    {.name = "spinlock",
     .scripts = {"acquire", "unlock", "renew", "force_unlock"},
     .added_in = "3.15.0",
     .sources = {{{"spinlock", ""}, {"rlock", "", {"renew"}}}}},
    {.name = "setnx-px",
     .scripts = {"unlock_compare_and_delete"},
     .sources = {{{"plain", "."}}},
     .ttl_lease = true},
    {.name = "setnx-expire",
     .scripts = {"unlock_compare_and_delete"},
     .sources = {{{"plain", "."}}},
     .ttl_lease = true},
    {.name = "get-del", .sources = {{{"plain", "."}}}, .ttl_lease = true},
    // The write side's watchdog is RLock's renew with the field "<uuid>:<tid>:write".
    {.name = "rwlock",
     .cls = KindClass::kRw,
     .scripts = {"read_acquire", "write_acquire", "read_unlock", "write_unlock", "read_renew", "renew",
                 "force_unlock_read", "force_unlock_write"},
     .sources = {{{"rwlock", ""}, {"rlock", "", {"renew"}}}}},
    // The current scripts serve both versions (3.13.6 differs in the literal PUBLISH, and the
    // client passes "publish" as the publish command), except where lua/semaphore/<version>/
    // has its own: 3.13.6's add_permits, which publishes nothing.
    {.name = "semaphore",
     .cls = KindClass::kSemaphore,
     .scripts = {"try_acquire", "release", "try_set_permits", "add_permits", "drain_permits"},
     .sources = {{{"semaphore", ""}, {"semaphore", "current"}}},
     .roles = {"add_permits", "reduce_permits", "try_set_permits", "drain_permits"},
     .shows_permits = true},
    {.name = "countdownlatch",
     .cls = KindClass::kLatch,
     .scripts = {"try_set_count", "count_down", "delete"},
     .sources = {{{"countdownlatch", "current"}}},
     .roles = {"await", "count_down"}},
    // A client written as a Lua program (locks/client/client_program.h): one exclusive lock
    // whose key holds its holder's token, a string value "<uuid>:<thread + 1>".
    {.name = "client", .client_program = true},
};

// The Redisson versions lockstep models: 3.13.6, the release the project started from, and
// today's ("current"). Their names are kProtocolVersions, in this order.
enum class ProtocolVersion : uint8_t { k3136, kCurrent };
inline constexpr std::string_view kProtocolVersions[] = {"v3.13.6", "current"};

constexpr std::string_view VersionName(ProtocolVersion version) {
  return kProtocolVersions[static_cast<size_t>(version)];
}
// The version named so, or nothing.
constexpr std::optional<ProtocolVersion> FindProtocolVersion(std::string_view name) {
  for (size_t i = 0; i < std::size(kProtocolVersions); ++i) {
    if (kProtocolVersions[i] == name) return static_cast<ProtocolVersion>(i);
  }
  return std::nullopt;
}

// The kind named so, or null.
const ProtocolKind* FindProtocolKind(std::string_view name);

// Whether clients of `kind` may take `role` ("worker": every kind).
bool TakesRole(const ProtocolKind& kind, std::string_view role);

}  // namespace lockstep::history

#endif  // LOCKSTEP_HISTORY_KINDS_H_
