// Servers lockstep did not start: `lockstep replay --redis HOST:PORT[,...]`.
//
// A replay against the user's own servers runs the scenario's workload and its network faults
// (through the fault proxy) but nothing that needs the server processes or their
// configuration (live/support.h refuses those). Three promises hold on such a server:
//  - lockstep touches only keys and channels under a run prefix of its own,
//    "lockstep:<seed>:<16 random hex digits>:" (RunKeyspace): every key and channel a lock
//    protocol names, the driver's probe of the lock key and its sequence key. A command that
//    would name anything else, or that names no key at all (FLUSHALL, FLUSHDB, CONFIG,
//    DEBUG, SHUTDOWN, SCRIPT, KEYS ...), is never sent: RunKeyspace::ToServer refuses it.
//  - before the run, lockstep only reads (PING, INFO); it never asks for CONFIG, so a server
//    whose CONFIG is renamed away is fine. Lease expiry is observed without keyspace
//    notifications (live/driver.h: probe_at_expiry).
//  - at the end (also after an error or SIGINT), RemoveRunKeys deletes what is left under the
//    prefix (SCAN MATCH <prefix>* and UNLINK), and nothing else.
//
// The prefix has no '{' or '}', so a key's hash tag stays the key's own; the whole-key slot of
// an untagged key (the lock name itself) changes, which would matter only in a cluster, and
// a server in cluster mode is refused.
#ifndef LOCKSTEP_LIVE_USER_SERVERS_H_
#define LOCKSTEP_LIVE_USER_SERVERS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/argv.h"
#include "core/reply.h"
#include "model/scenario.h"

namespace lockstep::live {

// One of the user's servers, standing for one of the scenario's nodes.
struct UserServer {
  std::string node;
  std::string host;
  int port = 0;
  // From INFO, for the run's parameters (and to tell two addresses of one server apart).
  std::string redis_version;
  std::string run_id;

  std::string address() const { return host + ":" + std::to_string(port); }
};

// "HOST:PORT[,HOST:PORT...]" given to the scenario's nodes in their declaration order. Null
// with *error (a sentence for the user) when an address is malformed, or when the count is not
// the scenario's number of nodes.
std::optional<std::vector<UserServer>> MapUserServers(const Scenario& scenario,
                                                      const std::string& addresses,
                                                      std::string* error);

// Connects to each server and checks, by reading only (PING, INFO), that the run can use it:
// it answers without a password, it is a master (a replica refuses writes), it is not in
// cluster mode, and no two addresses reach the same server (INFO's run_id). Fills
// redis_version and run_id. False with *error naming the node and the address.
bool CheckUserServers(std::vector<UserServer>* servers, std::string* error);

// The run's part of a server's keyspace.
class RunKeyspace {
 public:
  // prefix: letters, digits, ':' and '-' only (no glob character for SCAN MATCH, no brace).
  explicit RunKeyspace(std::string prefix);
  // "lockstep:<seed>:<16 hex digits from the kernel's random source>:".
  static RunKeyspace ForRun(uint64_t seed);

  const std::string& prefix() const { return prefix_; }
  std::string Key(std::string_view key) const { return prefix_ + std::string(key); }

  // The command as it goes to the server: every key (the command table's key positions, EVAL's
  // KEYS) and every channel (SUBSCRIBE, UNSUBSCRIBE, PUBLISH) under the prefix. Null with *why
  // for a command that names no key (but PING, WAIT, MULTI, EXEC, DISCARD, UNWATCH, which
  // touch no data), a command lockstep's emulator does not know (it cannot tell where its keys
  // are), or one that reaches past its keys (another database, a pattern).
  std::optional<Argv> ToServer(const Argv& argv, std::string* why) const;

  // A channel as the server names it (a pushed message, a SUBSCRIBE confirmation), back to the
  // protocol's name; a name not under the prefix is returned as it is.
  std::string FromServer(std::string_view channel) const;
  // A SUBSCRIBE or UNSUBSCRIBE confirmation (["subscribe", channel, count]) with the channel
  // back to the protocol's name; any other reply as it is.
  Reply ConfirmationFromServer(const Reply& reply) const;
  // The reply of a pop that names the key it popped from (BLPOP, BRPOP, BZPOPMIN, BZPOPMAX:
  // [key, ...]; BLMPOP, BZMPOP, LMPOP, ZMPOP: [key, [...]]) to `server_argv` (the command as
  // ToServer made it), with that key back to the protocol's name; any other reply as it is.
  Reply ReplyFromServer(const Argv& server_argv, const Reply& reply) const;

 private:
  std::string prefix_;
};

// Whether each server runs a Lua script: an EVAL of "return 1" naming one key under the run's
// prefix (which it does not touch). A server whose ACL forbids scripting, or a
// Redis-compatible server without it, answers every lock script with an error; no operation
// of the run could succeed there, so it is refused before the run (false, *error says which
// and what it answered).
bool CheckUserServersRunScripts(const std::vector<UserServer>& servers, const RunKeyspace& keyspace,
                                std::string* error);

// Deletes every key under the prefix on `server` (SCAN MATCH <prefix>* COUNT 1000, then UNLINK
// of what it found, each key checked again to start with the prefix). Returns how many keys it
// deleted, or nullopt with *error.
std::optional<int64_t> RemoveRunKeys(const UserServer& server, const RunKeyspace& keyspace,
                                     std::string* error);

}  // namespace lockstep::live

#endif  // LOCKSTEP_LIVE_USER_SERVERS_H_
