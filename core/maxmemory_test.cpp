// Establishes the emulated node's memory limit: the keyspace's used-memory estimate follows
// writes, deletes and expiry; beyond maxmemory a master refuses denyoom commands with Redis
// 7.0.15's OOM text while reads and deletes still run; inside a script Redis's rule applies
// (checked only before the first write of a script that started out of memory), and lockstep's
// own cap ends a script that would otherwise write without bound.
#include <catch2/catch.hpp>

#include <string>

#include "core/keyspace.h"
#include "core/server.h"

namespace {

using lockstep::Argv;
using lockstep::Keyspace;
using lockstep::Reply;
using lockstep::Server;
using lockstep::ServerOptions;

constexpr std::string_view kOom = "-OOM command not allowed when used memory > 'maxmemory'.";

std::string Run(Server& s, const Argv& argv, int64_t now_ms = 1000) {
  return s.Execute(argv, now_ms).Debug();
}

// A server whose maxmemory is small enough that a test fills it in a few hundred writes.
Server SmallServer(size_t maxmemory_bytes = 64 * 1024) {
  ServerOptions options;
  options.maxmemory_bytes = maxmemory_bytes;
  return Server(options);
}

// Fills the server with 1000-byte strings until it is just over maxmemory.
void FillPastLimit(Server& s) {
  const std::string value(1000, 'x');
  for (int i = 0; !s.OutOfMemory(); ++i) {
    REQUIRE(Run(s, {"SET", "fill:" + std::to_string(i), value}) == "+OK");
  }
}

}  // namespace

TEST_CASE("used memory follows every type's writes and deletes", "[keyspace][maxmemory]") {
  Server s;
  const Keyspace& db = s.keyspace();
  CHECK(db.used_bytes() == 0);

  Run(s, {"SET", "str", std::string(100, 'a')});
  const size_t str_bytes = Keyspace::kKeyOverheadBytes + 3 + 100;
  CHECK(db.used_bytes() == str_bytes);
  Run(s, {"SET", "str", "b"});  // Replacing a value charges the new one only.
  CHECK(db.used_bytes() == Keyspace::kKeyOverheadBytes + 3 + 1);
  Run(s, {"INCR", "str"});  // "b" is not an integer: nothing changes.
  CHECK(db.used_bytes() == Keyspace::kKeyOverheadBytes + 3 + 1);
  Run(s, {"DEL", "str"});
  CHECK(db.used_bytes() == 0);

  Run(s, {"RPUSH", "list", "aaaa", "bb"});
  const size_t list_bytes = Keyspace::kKeyOverheadBytes + 4 + 6 + 2 * Keyspace::kElementOverheadBytes;
  CHECK(db.used_bytes() == list_bytes);
  Run(s, {"LPOP", "list"});
  CHECK(db.used_bytes() == list_bytes - 4 - Keyspace::kElementOverheadBytes);
  Run(s, {"RPUSH", "list", "bb", "cc"});
  Run(s, {"LREM", "list", "0", "bb"});
  CHECK(db.used_bytes() == Keyspace::kKeyOverheadBytes + 4 + 2 + Keyspace::kElementOverheadBytes);
  Run(s, {"RPOP", "list"});  // Empties the list, which deletes the key.
  CHECK(db.used_bytes() == 0);

  Run(s, {"HSET", "h", "f", "123", "g", "4"});
  const size_t h_bytes = Keyspace::kKeyOverheadBytes + 1 + 6 + 2 * Keyspace::kElementOverheadBytes;
  CHECK(db.used_bytes() == h_bytes);
  Run(s, {"HINCRBY", "h", "f", "877"});  // "123" -> "1000": one byte longer.
  CHECK(db.used_bytes() == h_bytes + 1);
  Run(s, {"HDEL", "h", "g"});
  CHECK(db.used_bytes() == h_bytes + 1 - 2 - Keyspace::kElementOverheadBytes);
  Run(s, {"HDEL", "h", "f"});
  CHECK(db.used_bytes() == 0);

  Run(s, {"ZADD", "z", "1", "m1", "2", "m22"});
  const size_t z_bytes =
      Keyspace::kKeyOverheadBytes + 1 + 5 + 2 * Keyspace::kZSetElementOverheadBytes;
  CHECK(db.used_bytes() == z_bytes);
  Run(s, {"ZINCRBY", "z", "5", "m1"});  // A new score, the same member: no change.
  CHECK(db.used_bytes() == z_bytes);
  Run(s, {"ZREM", "z", "m1", "m22"});
  CHECK(db.used_bytes() == 0);

  Run(s, {"SADD", "set", "12", "abc"});
  const size_t set_bytes =
      Keyspace::kKeyOverheadBytes + 3 + 5 + 2 * Keyspace::kElementOverheadBytes;
  CHECK(db.used_bytes() == set_bytes);
  Run(s, {"SREM", "set", "12"});
  CHECK(db.used_bytes() == set_bytes - 2 - Keyspace::kElementOverheadBytes);
  Run(s, {"SREM", "set", "abc"});  // Empties the set, which deletes the key.
  CHECK(db.used_bytes() == 0);

  Run(s, {"MSET", "m1", "aa", "m22", "b"});  // Each key of a multi-key write is charged.
  CHECK(db.used_bytes() == 2 * Keyspace::kKeyOverheadBytes + 2 + 2 + 3 + 1);
  Run(s, {"GETDEL", "m1"});
  CHECK(db.used_bytes() == Keyspace::kKeyOverheadBytes + 3 + 1);
  Run(s, {"DEL", "m22"});
  CHECK(db.used_bytes() == 0);

  // A script's writes are charged too, and FLUSHALL clears the total.
  Run(s, {"EVAL", "redis.call('hset', KEYS[1], 'a', 'b') redis.call('set', KEYS[2], 'xy')", "2",
          "h2", "s2"});
  CHECK(db.used_bytes() == 2 * Keyspace::kKeyOverheadBytes + 2 + 2 +
                               Keyspace::kElementOverheadBytes + 2 + 2);
  Run(s, {"FLUSHALL"});
  CHECK(db.used_bytes() == 0);
}

TEST_CASE("used memory goes down when keys expire, lazily or actively", "[keyspace][maxmemory]") {
  Server s;
  Run(s, {"SET", "a", "1", "PX", "100"}, 1000);
  Run(s, {"SET", "b", "1", "PX", "100"}, 1000);
  Run(s, {"SET", "c", "1"}, 1000);
  const size_t one = Keyspace::kKeyOverheadBytes + 1 + 1;
  CHECK(s.keyspace().used_bytes() == 3 * one);
  CHECK(Run(s, {"GET", "a"}, 1101) == "(nil)");  // Lazy expiry deletes it.
  CHECK(s.keyspace().used_bytes() == 2 * one);
  CHECK(s.keyspace().ExpireAll(1101) == std::vector<std::string>{"b"});
  CHECK(s.keyspace().used_bytes() == one);

  // A snapshot copy carries the total with it.
  const Keyspace copy = s.keyspace();
  CHECK(copy.used_bytes() == one);
}

TEST_CASE("over maxmemory: denyoom commands get Redis's OOM error, reads and deletes still work",
          "[maxmemory]") {
  Server s = SmallServer();
  FillPastLimit(s);
  const size_t used = s.keyspace().used_bytes();
  CHECK(used > s.options().maxmemory_bytes);

  CHECK(Run(s, {"SET", "new", "v"}) == kOom);
  CHECK(Run(s, {"SET", "fill:0", "v"}) == kOom);  // Even a write that would shrink a key.
  CHECK(Run(s, {"RPUSH", "l", "v"}) == kOom);
  CHECK(Run(s, {"HSET", "h", "f", "v"}) == kOom);
  CHECK(Run(s, {"ZADD", "z", "1", "m"}) == kOom);
  CHECK(Run(s, {"INCR", "n"}) == kOom);
  CHECK(Run(s, {"SETNX", "n", "1"}) == kOom);
  CHECK(s.keyspace().used_bytes() == used);

  // The arity check comes first, as in processCommand.
  CHECK(Run(s, {"SET", "x"}) == "-ERR wrong number of arguments for 'set' command");
  // Reads and commands that are not denyoom run.
  CHECK(Run(s, {"GET", "fill:0"}) == "\"" + std::string(1000, 'x') + "\"");
  CHECK(Run(s, {"EXISTS", "fill:0"}) == "1");
  CHECK(Run(s, {"PEXPIRE", "fill:1", "50"}) == "1");
  CHECK(Run(s, {"DEL", "fill:0"}) == "1");
  CHECK(s.keyspace().used_bytes() < used);
  // Back under the limit, writes run again.
  while (s.OutOfMemory()) {
    REQUIRE(Run(s, {"DEL", s.keyspace().SortedKeys().back()}) == "1");
  }
  CHECK(Run(s, {"SET", "new", "v"}) == "+OK");
}

TEST_CASE("a replica ignores maxmemory, as with replica-ignore-maxmemory yes", "[maxmemory]") {
  ServerOptions options;
  options.maxmemory_bytes = 1024;
  options.replica = true;
  Server s(options);
  for (int i = 0; i < 50; ++i) {
    CHECK(s.ExecuteReplicated({"SET", "k" + std::to_string(i), std::string(100, 'x')}, 1000)
              .Debug() == "+OK");
  }
  CHECK(s.keyspace().used_bytes() > 1024);
  CHECK_FALSE(s.OutOfMemory());
}

TEST_CASE("scripts: Redis checks OOM only before the first write of a script started out of "
          "memory", "[maxmemory][script]") {
  Server s = SmallServer();
  FillPastLimit(s);
  const std::string set = "return redis.call('set', KEYS[1], 'v')";

  // A compat script (no shebang) starts; its first denyoom write is refused.
  const Reply first = s.Execute({"EVAL", set, "1", "k"}, 1000);
  REQUIRE(first.is_error());
  CHECK(first.str.rfind(std::string(kOom.substr(1)) + " script: ", 0) == 0);
  CHECK(s.keyspace().Find("k") == nullptr);
  // redis.pcall sees the same error as a value.
  CHECK(Run(s, {"EVAL", "return redis.pcall('rpush', KEYS[1], 'v')", "1", "l"}) == kOom);
  // Reads run; a script that deletes first (a write) may then write.
  CHECK(Run(s, {"EVAL", "return redis.call('exists', KEYS[1])", "1", "fill:0"}) == "1");
  CHECK(Run(s, {"EVAL",
                "redis.call('del', KEYS[1]) return redis.call('set', KEYS[2], 'v')", "2",
                "nokey", "k"}) == "+OK");

  // A shebang script that may write is itself denyoom: refused before it runs.
  CHECK(Run(s, {"EVAL", "#!lua\nreturn 1", "0"}) == kOom);
  CHECK(Run(s, {"EVAL", "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", "1", "k"}) ==
        "\"v\"");
  // allow-oom: the script runs and may write.
  CHECK(Run(s, {"EVAL", "#!lua flags=allow-oom\nreturn redis.call('set', KEYS[1], 'w')", "1",
                "k"}) == "+OK");
}

TEST_CASE("scripts: a write loop that started under maxmemory stops at lockstep's cap",
          "[maxmemory][script]") {
  Server s = SmallServer();
  const size_t cap = s.script_write_cap_bytes();
  CHECK(cap == Server::kScriptWriteCapFactor * s.options().maxmemory_bytes);
  const std::string loop =
      "while true do redis.call('RPUSH', KEYS[1], string.rep('x', 1000)) end";
  const Reply r = s.Execute({"EVAL", loop, "1", "big"}, 1000);
  REQUIRE(r.is_error());
  CHECK(r.str.rfind("OOM lockstep refused a write inside the script: used memory ", 0) == 0);
  CHECK(r.str.find("> lockstep's cap of " + std::to_string(cap) + " bytes (2 x maxmemory)") !=
        std::string::npos);
  CHECK(r.str.find(" script: ") != std::string::npos);
  // It went past maxmemory (Redis would not have stopped it) and stopped just past the cap.
  const size_t used = s.keyspace().used_bytes();
  CHECK(used > cap);
  CHECK(used <= cap + 1000 + Keyspace::kElementOverheadBytes);

  // The same for loops of SET and HSET of new keys, and ZADD of new members.
  for (const std::string& body :
       {std::string("local i = 0 while true do i = i + 1 "
                    "redis.call('SET', 'k' .. i, string.rep('x', 100)) end"),
        std::string("local i = 0 while true do i = i + 1 "
                    "redis.call('HSET', 'h' .. i, 'f', string.rep('x', 100)) end"),
        std::string("local i = 0 while true do i = i + 1 "
                    "redis.call('ZADD', KEYS[1], i, string.rep('m', 50) .. i) end")}) {
    Server t = SmallServer();
    const Reply e = t.Execute({"EVAL", body, "1", "z"}, 1000);
    REQUIRE(e.is_error());
    CHECK(e.str.rfind("OOM lockstep refused a write inside the script", 0) == 0);
    CHECK(t.keyspace().used_bytes() <= t.script_write_cap_bytes() + 400);
  }

  // Outside scripts the cap does not apply: a plain command is refused at maxmemory already.
  CHECK(Run(s, {"RPUSH", "big", "x"}) == kOom);
  CHECK(Run(s, {"DEL", "big"}) == "1");
  CHECK(s.keyspace().used_bytes() == 0);
}
