// Establishes the data-type layer's invariants and the generic key and string commands'
// replies, error texts and replication effects, as checked against redis-server 7.0.15.
#include <catch2/catch.hpp>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "core/keyspace.h"
#include "core/server.h"

namespace {

using lockstep::Argv;
using lockstep::Effects;
using lockstep::Reply;
using lockstep::Server;

Argv Split(const std::string& line) {
  std::istringstream in(line);
  Argv argv;
  for (std::string w; in >> w;) argv.push_back(w);
  return argv;
}

// Runs one space-separated command at the given time and renders the reply.
std::string Run(Server& s, const std::string& line, int64_t now_ms = 1000,
                Effects* fx = nullptr) {
  return s.Execute(Split(line), now_ms, fx).Debug();
}

std::string Render(const Effects& fx) {
  std::string out;
  for (const Argv& a : fx.commands) {
    if (!out.empty()) out += " | ";
    for (size_t i = 0; i < a.size(); ++i) out += (i ? " " : "") + a[i];
  }
  return out;
}

}  // namespace

TEST_CASE("hash keeps insertion order, re-adding moves a field to the end", "[keyspace]") {
  lockstep::Hash h;
  CHECK(h.Set("a", "1"));
  CHECK(h.Set("b", "2"));
  CHECK_FALSE(h.Set("a", "3"));
  REQUIRE(h.fields().front().first == "a");
  CHECK(h.Erase("a"));
  CHECK(h.Set("a", "4"));
  CHECK(h.fields().back().first == "a");
  CHECK_FALSE(h.Erase("zz"));
}

TEST_CASE("zset orders by score then member bytes", "[keyspace]") {
  lockstep::ZSet z;
  CHECK(z.Set("b", 1));
  CHECK(z.Set("a", 1));
  CHECK(z.Set("c", 0.5));
  CHECK_FALSE(z.Set("c", 2));
  CHECK(z.Rank("c") == 2);
  CHECK(z.Rank("a") == 0);
  CHECK(z.Rank("x") == -1);
  CHECK(*z.Score("c") == 2);
}

TEST_CASE("a set is an intset of canonical integers up to 512 members, then a hash table",
          "[keyspace]") {
  lockstep::MemberSet m;
  CHECK(m.is_intset());
  for (int i = 512; i >= 1; --i) CHECK(m.Add(std::to_string(i)));
  CHECK_FALSE(m.Add("7"));
  CHECK(m.is_intset());
  CHECK(m.size() == 512);
  CHECK(m.Members().front() == "1");
  CHECK(m.Members().back() == "512");
  CHECK(m.Contains("12"));
  CHECK_FALSE(m.Contains("012"));
  CHECK_FALSE(m.Erase("012"));
  CHECK(m.Add("513"));  // The 513th integer converts it.
  CHECK_FALSE(m.is_intset());
  CHECK(m.Members().front() == "1");
  CHECK(m.Members()[1] == "10");  // Byte order from now on.
  CHECK(m.Contains("513"));
  CHECK(m.Erase("513"));
  CHECK_FALSE(m.is_intset());  // Never converted back.

  lockstep::MemberSet n;
  for (const char* s : {"-0", "+1", " 1", "01", "1.0", "9223372036854775808"}) {
    lockstep::MemberSet one;
    CHECK(one.Add(s));
    CHECK_FALSE(one.is_intset());
  }
  CHECK(n.Add("-9223372036854775808"));
  CHECK(n.Add("9223372036854775807"));
  CHECK(n.is_intset());
  CHECK(n.bytes() == 20 + 19);
  CHECK(n.Erase("9223372036854775807"));
  CHECK(n.bytes() == 20);
  CHECK(n.Add("x"));
  CHECK(n.bytes() == 21);
  CHECK(n.Members() == std::vector<std::string>{"-9223372036854775808", "x"});
}

TEST_CASE("a key is alive at its expiry millisecond and gone one after", "[keyspace][expiry]") {
  Server s;
  CHECK(Run(s, "SET k v PX 100", 1000) == "+OK");
  CHECK(Run(s, "PTTL k", 1100) == "0");
  CHECK(Run(s, "GET k", 1100) == "\"v\"");
  Effects fx;
  CHECK(Run(s, "GET k", 1101, &fx) == "(nil)");
  CHECK(Render(fx) == "DEL k");  // The lazy expiry is a write a replica must see.
  CHECK(Run(s, "EXISTS k", 1101) == "0");
}

TEST_CASE("a replica hides expired keys but keeps them", "[keyspace][expiry]") {
  lockstep::ServerOptions options;
  options.replica = true;
  Server s(options);
  lockstep::Entry e;
  e.value = std::string("v");
  e.expire_at_ms = 500;
  s.keyspace().Put("k", e);
  Effects fx;
  CHECK(Run(s, "GET k", 1000, &fx) == "(nil)");
  CHECK(fx.commands.empty());
  CHECK(s.keyspace().size() == 1);
  CHECK(Run(s, "SET k v", 1000) == "-READONLY You can't write against a read only replica.");
}

TEST_CASE("EXISTS counts duplicates, DEL counts removals", "[keys]") {
  Server s;
  Run(s, "SET a 1");
  CHECK(Run(s, "EXISTS a a b") == "2");
  Effects fx;
  CHECK(Run(s, "DEL a a b", 1000, &fx) == "1");
  CHECK(Render(fx) == "DEL a a b");
  Effects none;
  CHECK(Run(s, "DEL a", 1000, &none) == "0");
  CHECK(none.commands.empty());
  CHECK(Run(s, "TYPE a") == "+none");
}

TEST_CASE("EXPIRE family: options, errors, rewriting to PEXPIREAT", "[keys][expiry]") {
  Server s;
  Run(s, "SET k v");
  Effects fx;
  CHECK(Run(s, "PEXPIRE k 5000", 1000, &fx) == "1");
  CHECK(Render(fx) == "PEXPIREAT k 6000");
  CHECK(Run(s, "PTTL k", 1000) == "5000");
  CHECK(Run(s, "TTL k", 2500) == "4");   // 3500 ms rounds to 4 s: (ms + 500) / 1000.
  CHECK(Run(s, "TTL k", 3000) == "3");
  CHECK(Run(s, "EXPIRE k 10 NX") == "0");
  CHECK(Run(s, "EXPIRE k 10 XX") == "1");
  CHECK(Run(s, "EXPIRE k 5 GT") == "0");
  CHECK(Run(s, "EXPIRE k 5 LT") == "1");
  CHECK(Run(s, "EXPIRE k 5 NX XX") ==
        "-ERR NX and XX, GT or LT options at the same time are not compatible");
  CHECK(Run(s, "EXPIRE k 5 GT LT") ==
        "-ERR GT and LT options at the same time are not compatible");
  CHECK(Run(s, "EXPIRE k 5 foo") == "-ERR Unsupported option foo");
  CHECK(Run(s, "PEXPIRE k 1.5") == "-ERR value is not an integer or out of range");
  CHECK(Run(s, "EXPIRE k 9223372036854775807") ==
        "-ERR invalid expire time in 'expire' command");
  CHECK(Run(s, "PEXPIRE missing 100") == "0");
  CHECK(Run(s, "PERSIST k") == "1");
  CHECK(Run(s, "PERSIST k") == "0");
  CHECK(Run(s, "TTL k") == "-1");
  CHECK(Run(s, "EXPIRE k 5 GT") == "0");  // GT never succeeds on a key without a TTL.
  CHECK(Run(s, "EXPIRE k 5 LT") == "1");  // ... and LT always does.
  Effects del;
  CHECK(Run(s, "PEXPIRE k 0", 1000, &del) == "1");
  CHECK(Render(del) == "DEL k");
  CHECK(Run(s, "TTL k") == "-2");
  Run(s, "SET j v");
  CHECK(Run(s, "EXPIREAT j 1", 5000) == "1");  // In the past: deleted at once.
  CHECK(Run(s, "EXISTS j") == "0");
}

TEST_CASE("SET options follow Redis's parser condition by condition", "[strings]") {
  Server s;
  CHECK(Run(s, "SET k v NX") == "+OK");
  CHECK(Run(s, "SET k w NX") == "(nil)");
  CHECK(Run(s, "SET k w XX GET") == "\"v\"");
  CHECK(Run(s, "SET k x NX GET") == "\"w\"");  // NX+GET is allowed in 7.0.
  CHECK(Run(s, "GET k") == "\"w\"");
  CHECK(Run(s, "SET k v NX XX") == "-ERR syntax error");
  CHECK(Run(s, "SET k v EX 10 PX 10") == "-ERR syntax error");
  CHECK(Run(s, "SET k v KEEPTTL PX 10") == "-ERR syntax error");
  CHECK(Run(s, "SET k v PX") == "-ERR syntax error");
  CHECK(Run(s, "SET k v PX 0") == "-ERR invalid expire time in 'set' command");
  CHECK(Run(s, "SET k v PX -5") == "-ERR invalid expire time in 'set' command");
  CHECK(Run(s, "SET k v PX abc") == "-ERR value is not an integer or out of range");
  CHECK(Run(s, "SET k v PX 100 PX 200", 1000) == "+OK");  // A repeated PX: the last wins.
  CHECK(Run(s, "PTTL k", 1000) == "200");
  Effects fx;
  CHECK(Run(s, "SET k v EX 3", 1000, &fx) == "+OK");
  CHECK(Render(fx) == "SET k v PXAT 4000");
  CHECK(Run(s, "SET k v2 KEEPTTL", 1000) == "+OK");
  CHECK(Run(s, "PTTL k", 1000) == "3000");
  CHECK(Run(s, "SET k v3", 1000) == "+OK");  // Without KEEPTTL the TTL is cleared.
  CHECK(Run(s, "PTTL k", 1000) == "-1");
  Effects get_fx;
  CHECK(Run(s, "SET k v4 GET", 1000, &get_fx) == "\"v3\"");
  CHECK(Render(get_fx) == "SET k v4");
  Run(s, "HSET h f v");
  CHECK(Run(s, "SET h v GET") ==
        "-WRONGTYPE Operation against a key holding the wrong kind of value");
  CHECK(Run(s, "SET h v NX") == "(nil)");
  CHECK(Run(s, "SETNX h v") == "0");
  CHECK(Run(s, "SET h v") == "+OK");  // Plain SET overwrites any type.
  CHECK(Run(s, "TYPE h") == "+string");
}

TEST_CASE("counters parse strictly and detect overflow", "[strings]") {
  Server s;
  CHECK(Run(s, "INCR n") == "1");
  CHECK(Run(s, "INCRBY n 41") == "42");
  CHECK(Run(s, "DECR n") == "41");
  CHECK(Run(s, "DECRBY n 40") == "1");
  CHECK(Run(s, "INCRBY n +5") == "-ERR value is not an integer or out of range");
  CHECK(Run(s, "DECRBY n -9223372036854775808") == "-ERR decrement would overflow");
  Run(s, "SET n 9223372036854775807");
  CHECK(Run(s, "INCR n") == "-ERR increment or decrement would overflow");
  for (const char* bad : {"1.0", "010", "-0", "+5", "abc"}) {
    Run(s, std::string("SET n ") + bad);
    CHECK(Run(s, "INCR n") == "-ERR value is not an integer or out of range");
  }
  Run(s, "SET t 5 PX 1000", 0);
  CHECK(Run(s, "INCR t", 0) == "6");
  CHECK(Run(s, "PTTL t", 0) == "1000");  // INCR keeps the TTL.
  CHECK(Run(s, "GETSET t 1", 0) == "\"6\"");
  CHECK(Run(s, "PTTL t", 0) == "-1");  // GETSET does not.
}

TEST_CASE("unknown commands, subcommands and arity errors", "[server]") {
  Server s;
  CHECK(Run(s, "FOO a b") == "-ERR unknown command 'FOO', with args beginning with: 'a' 'b' ");
  CHECK(Run(s, "GET") == "-ERR wrong number of arguments for 'get' command");
  CHECK(Run(s, "SCRIPT") == "-ERR wrong number of arguments for 'script' command");
  CHECK(Run(s, "SCRIPT nope") == "-ERR unknown subcommand 'nope'. Try SCRIPT HELP.");
  CHECK(Run(s, "script exists") == "-ERR wrong number of arguments for 'script|exists' command");
  CHECK(Run(s, "PING") == "+PONG");
  CHECK(Run(s, "PING a b") == "-ERR wrong number of arguments for 'ping' command");
}

TEST_CASE("KEYS gives byte order and skips expired keys, SCAN expires what it meets", "[keys]") {
  Server s;
  Run(s, "SET b 1");
  Run(s, "SET a 1");
  Run(s, "SET c 1 PX 10", 1000);
  CHECK(Run(s, "KEYS *", 2000) == "[\"a\", \"b\"]");
  CHECK(Run(s, "KEYS [ab]", 2000) == "[\"a\", \"b\"]");
  CHECK(Run(s, "KEYS ?", 1000) == "[\"a\", \"b\", \"c\"]");
  CHECK(Run(s, "DBSIZE", 2000) == "3");
  CHECK(Run(s, "SCAN 0 COUNT 100", 2000) == "[\"0\", [\"a\", \"b\"]]");  // Hash order (here also byte order).
  CHECK(Run(s, "DBSIZE", 2000) == "2");  // SCAN expired c on its way.
  CHECK(Run(s, "SCAN x") == "-ERR invalid cursor");
  CHECK(Run(s, "FLUSHALL") == "+OK");
  CHECK(Run(s, "DBSIZE") == "0");
}

namespace lockstep {

// Redis's promise: a full iteration returns every key present from its start to its end, and
// none twice unless it was added meanwhile. The cursor is a key hash, so deleting or adding keys
// between calls moves nothing; with COUNT 1 every call returns one key.
TEST_CASE("SCAN returns every key present for the whole iteration, once", "[keys]") {
  Server s;
  for (int i = 0; i < 200; ++i) Run(s, "SET k" + std::to_string(i) + " 1");
  std::map<std::string, int> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    const Reply r = s.Execute({"SCAN", cursor, "COUNT", "3"}, 1000, nullptr);
    REQUIRE(r.elements.size() == 2);
    cursor = r.elements[0].str;
    CHECK(r.elements[1].elements.size() <= 4);  // 3, or more only when hashes tie.
    for (const Reply& k : r.elements[1].elements) ++seen[k.str];
    // Between calls: delete a key not yet seen with an odd number, add a new one.
    const std::string gone = "k" + std::to_string(2 * calls + 1);
    if (seen.count(gone) == 0 && calls < 60) Run(s, "DEL " + gone);
    Run(s, "SET new" + std::to_string(calls) + " 1");
    ++calls;
  } while (cursor != "0" && calls < 10'000);
  CHECK(cursor == "0");
  // Every key never deleted (the even ones, and odd ones past 120) came back exactly once.
  for (int i = 0; i < 200; ++i) {
    const std::string key = "k" + std::to_string(i);
    if (i % 2 == 1 && i < 120) continue;
    INFO(key);
    CHECK(seen[key] == 1);
  }
  for (const auto& [key, times] : seen) {
    INFO(key);
    CHECK(times == 1);
  }
  // The same keyspace gives the same order on every run.
  CHECK(Keyspace::ScanHash("k1") == Keyspace::ScanHash("k1"));
  CHECK(Keyspace::ScanHash("") != 0);
}

}  // namespace lockstep
