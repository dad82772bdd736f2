#include "live/user_servers.h"

#include <sys/random.h>

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cstdio>
#include <exception>
#include <memory>

#include "base/ascii.h"
#include "core/cluster.h"
#include "core/server.h"
#include "live/redis_client.h"

namespace lockstep::live {

namespace {

// "field:value" lines of an INFO reply.
std::string InfoField(const std::string& info, const std::string& field) {
  const std::string key = field + ":";
  size_t at = 0;
  while (at < info.size()) {
    const size_t end = std::min(info.find('\n', at), info.size());
    std::string_view line(info.data() + at, end - at);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.substr(0, key.size()) == key) return std::string(line.substr(key.size()));
    at = end + 1;
  }
  return "";
}

// How long the checks and the clean-up wait for a server before they give up on it.
constexpr int kTimeoutMs = 5000;
// SCAN rounds before the clean-up gives up: with COUNT 1000, a keyspace of 100 million keys.
constexpr int kScanRoundsMax = 100'000;

}  // namespace

std::optional<std::vector<UserServer>> MapUserServers(const Scenario& scenario,
                                                      const std::string& addresses,
                                                      std::string* error) {
  std::vector<UserServer> out;
  size_t at = 0;
  while (at <= addresses.size()) {
    const size_t comma = std::min(addresses.find(',', at), addresses.size());
    const std::string item = addresses.substr(at, comma - at);
    at = comma + 1;
    const size_t colon = item.rfind(':');
    if (item.empty() || colon == std::string::npos || colon == 0 || colon + 1 == item.size()) {
      *error = "--redis: \"" + item + "\" is not HOST:PORT (e.g. 127.0.0.1:6379)";
      return std::nullopt;
    }
    UserServer s;
    s.host = item.substr(0, colon);
    const std::string port = item.substr(colon + 1);
    if (!std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        port.size() > 5 || std::stoi(port) < 1 || std::stoi(port) > 65535) {
      *error = "--redis: \"" + item + "\": the port must be a number from 1 to 65535";
      return std::nullopt;
    }
    s.port = std::stoi(port);
    out.push_back(std::move(s));
  }
  std::string nodes;
  for (const NodeSpec& n : scenario.nodes) nodes += (nodes.empty() ? "" : ", ") + n.name;
  if (out.size() != scenario.nodes.size()) {
    *error = "--redis gives " + std::to_string(out.size()) + " address" +
             (out.size() == 1 ? "" : "es") + " but the scenario has " +
             std::to_string(scenario.nodes.size()) + " node" +
             (scenario.nodes.size() == 1 ? "" : "s") + " (" + nodes +
             "): give one independent master per node, in the order of [[nodes]]";
    return std::nullopt;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    out[i].node = scenario.nodes[i].name;
    for (size_t j = 0; j < i; ++j) {
      if (out[j].host == out[i].host && out[j].port == out[i].port) {
        *error = "--redis gives " + out[i].address() + " for both " + out[j].node + " and " +
                 out[i].node + ": each node needs a server of its own";
        return std::nullopt;
      }
    }
  }
  return out;
}

bool CheckUserServers(std::vector<UserServer>* servers, std::string* error) {
  for (UserServer& s : *servers) {
    const std::string who = "node " + s.node + " (--redis " + s.address() + ")";
    try {
      RedisClient client(s.host, s.port, kTimeoutMs);
      const Reply pong = client.Command({"PING"});
      if (pong.is_error()) {
        *error = who + " answers PING with \"" + pong.str + "\"" +
                 (pong.str.find("NOAUTH") != std::string::npos
                      ? ": it wants a password, and --redis does not authenticate"
                      : "");
        return false;
      }
      const Reply info = client.Command({"INFO"});
      if (info.type != Reply::Type::kBulk) {
        *error = who + " does not answer INFO (" + info.Quoted() +
                 "): lockstep reads it to check the server's role and mode";
        return false;
      }
      if (InfoField(info.str, "cluster_enabled") == "1") {
        *error = who + " runs in cluster mode: --redis takes standalone masters (a [cluster] "
                       "scenario is replayed on servers lockstep starts)";
        return false;
      }
      if (const std::string role = InfoField(info.str, "role"); role != "master") {
        *error = who + " is not a master (role:" + role +
                 "): it would refuse the lock's writes; give a master's address";
        return false;
      }
      s.redis_version = InfoField(info.str, "redis_version");
      s.run_id = InfoField(info.str, "run_id");
    } catch (const std::exception& e) {
      *error = "cannot reach " + who + ": " + e.what();
      return false;
    }
  }
  for (size_t i = 0; i < servers->size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      const UserServer& a = (*servers)[j];
      const UserServer& b = (*servers)[i];
      if (!a.run_id.empty() && a.run_id == b.run_id) {
        *error = "--redis " + a.address() + " (node " + a.node + ") and " + b.address() +
                 " (node " + b.node + ") are the same server (run_id " + a.run_id +
                 "): each node needs a server of its own";
        return false;
      }
    }
  }
  return true;
}

bool CheckUserServersRunScripts(const std::vector<UserServer>& servers, const RunKeyspace& keyspace,
                                std::string* error) {
  for (const UserServer& s : servers) {
    const std::string who = "node " + s.node + " (--redis " + s.address() + ")";
    try {
      RedisClient client(s.host, s.port, kTimeoutMs);
      const Reply r = client.Command({"EVAL", "return 1", "1", keyspace.prefix() + "script-check"});
      if (r.type != Reply::Type::kInteger || r.integer != 1) {
        *error = who + " does not run Lua scripts (EVAL \"return 1\" answered " + r.Quoted() +
                 "): every lock script would fail there; allow EVAL, EVALSHA and SCRIPT for "
                 "lockstep's connection, or give another server";
        return false;
      }
    } catch (const std::exception& e) {
      *error = "cannot reach " + who + ": " + e.what();
      return false;
    }
  }
  return true;
}

RunKeyspace::RunKeyspace(std::string prefix) : prefix_(std::move(prefix)) {
  assert(!prefix_.empty());
  // SCAN MATCH reads the prefix as a glob, and a brace would become a key's hash tag.
  assert(std::all_of(prefix_.begin(), prefix_.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == ':' || c == '-';
  }));
}

RunKeyspace RunKeyspace::ForRun(uint64_t seed) {
  uint64_t id = 0;
  // The run's id tells this run's keys apart from another run of the same seed on the same
  // server (it is not part of the simulation, which never sees it).
  ssize_t got = ::getrandom(&id, sizeof(id), 0);
  assert(got == static_cast<ssize_t>(sizeof(id)));
  (void)got;
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(id));
  return RunKeyspace("lockstep:" + std::to_string(seed) + ":" + hex + ":");
}

std::optional<Argv> RunKeyspace::ToServer(const Argv& argv, std::string* why) const {
  if (argv.empty()) {
    *why = "an empty command";
    return std::nullopt;
  }
  const std::string name = AsciiLowered(argv[0]);
  Argv out = argv;
  if (name == "subscribe" || name == "unsubscribe") {
    for (size_t i = 1; i < out.size(); ++i) out[i] = Key(argv[i]);
    return out;
  }
  if (name == "publish") {
    if (out.size() != 3) {
      *why = "PUBLISH with " + std::to_string(out.size() - 1) + " arguments";
      return std::nullopt;
    }
    out[1] = Key(argv[1]);
    return out;
  }
  if (name == "ping" || name == "wait" || name == "multi" || name == "exec" || name == "discard" ||
      name == "unwatch") {
    return out;  // They touch no data.
  }
  // Keyed commands that reach further than their keys: another database, or keys named by a
  // pattern or a later option.
  static const char* const kBeyondKeys[] = {"move", "copy", "migrate", "sort", "sort_ro",
                                           "georadius", "georadiusbymember", "object"};
  for (const char* b : kBeyondKeys) {
    if (name == b) {
      *why = argv[0] + " can reach beyond the keys it names";
      return std::nullopt;
    }
  }
  const CommandSpec* spec = Server::Lookup(argv);
  if (spec == nullptr) {
    *why = argv[0] + " is not a command lockstep knows the keys of";
    return std::nullopt;
  }
  const KeyPositions keys = CommandKeyPositions(*spec, argv);
  if (keys.empty()) {
    *why = argv[0] + " names no key under the run's prefix";
    return std::nullopt;
  }
  for (size_t i = keys.first; i <= keys.last; i += keys.step) out[i] = Key(argv[i]);
  return out;
}

Reply RunKeyspace::ReplyFromServer(const Argv& server_argv, const Reply& reply) const {
  static constexpr std::string_view kPopsNamingTheirKey[] = {
      "blpop", "brpop", "bzpopmin", "bzpopmax", "blmpop", "bzmpop", "lmpop", "zmpop"};
  if (server_argv.empty() || reply.type != Reply::Type::kArray || reply.elements.empty() ||
      reply.elements[0].type != Reply::Type::kBulk) {
    return reply;
  }
  const bool pop =
      std::any_of(std::begin(kPopsNamingTheirKey), std::end(kPopsNamingTheirKey),
                  [&](std::string_view name) { return EqualsIgnoreCase(server_argv[0], name); });
  if (!pop) return reply;
  Reply out = reply;
  out.elements[0].str = FromServer(reply.elements[0].str);
  return out;
}

std::string RunKeyspace::FromServer(std::string_view channel) const {
  if (channel.substr(0, prefix_.size()) == prefix_) channel.remove_prefix(prefix_.size());
  return std::string(channel);
}

Reply RunKeyspace::ConfirmationFromServer(const Reply& reply) const {
  if (reply.type != Reply::Type::kArray || reply.elements.size() != 3 ||
      reply.elements[1].type != Reply::Type::kBulk) {
    return reply;
  }
  Reply out = reply;
  out.elements[1].str = FromServer(reply.elements[1].str);
  return out;
}

std::optional<int64_t> RemoveRunKeys(const UserServer& server, const RunKeyspace& keyspace,
                                     std::string* error) {
  int64_t removed = 0;
  try {
    RedisClient client(server.host, server.port, kTimeoutMs);
    std::string cursor = "0";
    for (int round = 0; round < kScanRoundsMax; ++round) {
      const Reply scan =
          client.Command({"SCAN", cursor, "MATCH", keyspace.prefix() + "*", "COUNT", "1000"});
      if (scan.type != Reply::Type::kArray || scan.elements.size() != 2 ||
          scan.elements[1].type != Reply::Type::kArray) {
        *error = "SCAN answered " + scan.Quoted();
        return std::nullopt;
      }
      Argv unlink{"UNLINK"};
      for (const Reply& key : scan.elements[1].elements) {
        // MATCH is the server's filter; this is ours: nothing outside the prefix goes.
        if (key.str.compare(0, keyspace.prefix().size(), keyspace.prefix()) == 0) {
          unlink.push_back(key.str);
        }
      }
      if (unlink.size() > 1) {
        const Reply r = client.Command(unlink);
        if (r.type != Reply::Type::kInteger) {
          *error = "UNLINK answered " + r.Quoted();
          return std::nullopt;
        }
        removed += r.integer;
      }
      cursor = scan.elements[0].str;
      if (cursor == "0") return removed;
    }
    *error = "SCAN did not finish in " + std::to_string(kScanRoundsMax) + " rounds";
  } catch (const std::exception& e) {
    *error = e.what();
  }
  return std::nullopt;
}

}  // namespace lockstep::live
