// Establishes, without a server, what `--redis` sends: every key and channel of a command under
// the run's prefix (the command table's key positions, EVAL's KEYS, pub/sub channels), no
// command that names no key (FLUSHALL, FLUSHDB, CONFIG, DEBUG, SHUTDOWN, SCRIPT, KEYS ...), and
// channels (and the key a pop names in its reply) back to the protocol's names; and how the
// addresses map to the scenario's nodes.
#include "live/user_servers.h"

#include <catch2/catch.hpp>

#include "model/scenario_toml.h"

namespace lockstep::live {
namespace {

const RunKeyspace kSpace("lockstep:7:0123456789abcdef:");
const std::string kP = "lockstep:7:0123456789abcdef:";

Argv Mapped(const Argv& argv) {
  std::string why;
  std::optional<Argv> out = kSpace.ToServer(argv, &why);
  INFO(why);
  REQUIRE(out.has_value());
  return *out;
}

std::string Refused(const Argv& argv) {
  std::string why;
  const std::optional<Argv> out = kSpace.ToServer(argv, &why);
  CHECK_FALSE(out.has_value());
  CHECK_FALSE(why.empty());
  return why;
}

Scenario Load(const std::string& text) {
  ScenarioError error;
  auto s = LoadScenarioString(text, "u.toml", &error);
  INFO(error.ToString());
  REQUIRE(s);
  return *s;
}

}  // namespace

TEST_CASE("every key a lock protocol sends goes under the run's prefix", "[live][user_servers]") {
  CHECK(Mapped({"SET", "lock", "v", "NX", "PX", "100"}) ==
        Argv{"SET", kP + "lock", "v", "NX", "PX", "100"});
  CHECK(Mapped({"GET", "lock"}) == Argv{"GET", kP + "lock"});
  CHECK(Mapped({"DEL", "a", "{lock}:b"}) == Argv{"DEL", kP + "a", kP + "{lock}:b"});
  // EVAL: the numkeys keys, never the body or ARGV.
  CHECK(Mapped({"EVAL", "return 1", "2", "lock", "redisson_lock__channel:{lock}", "30000", "u:1"}) ==
        Argv{"EVAL", "return 1", "2", kP + "lock", kP + "redisson_lock__channel:{lock}", "30000",
             "u:1"});
  CHECK(Mapped({"SUBSCRIBE", "redisson_lock__channel:{lock}"}) ==
        Argv{"SUBSCRIBE", kP + "redisson_lock__channel:{lock}"});
  CHECK(Mapped({"unsubscribe", "c1", "c2"}) == Argv{"unsubscribe", kP + "c1", kP + "c2"});
  CHECK(Mapped({"PUBLISH", "c", "0"}) == Argv{"PUBLISH", kP + "c", "0"});
  // Commands that touch no data pass as they are.
  CHECK(Mapped({"WAIT", "1", "100"}) == Argv{"WAIT", "1", "100"});
  CHECK(Mapped({"PING"}) == Argv{"PING"});
}

TEST_CASE("a command that names no key, or reaches past its keys, is never sent",
          "[live][user_servers]") {
  CHECK(Refused({"FLUSHALL"}).find("FLUSHALL") != std::string::npos);
  Refused({"FLUSHDB", "ASYNC"});
  Refused({"CONFIG", "SET", "notify-keyspace-events", "Ex"});
  Refused({"CONFIG", "GET", "notify-keyspace-events"});
  Refused({"DEBUG", "SLEEP", "0"});
  Refused({"SHUTDOWN", "NOSAVE"});
  Refused({"SCRIPT", "FLUSH"});
  Refused({"KEYS", "*"});
  Refused({"SCAN", "0"});
  Refused({"SWAPDB", "0", "1"});
  Refused({"SELECT", "1"});
  Refused({"MOVE", "lock", "1"});
  Refused({"COPY", "a", "b", "DB", "1"});
  Refused({"EVAL", "redis.call('flushall')", "0"});  // A script given no key.
  Refused({"PSUBSCRIBE", "*"});
  Refused({"NOSUCHCOMMAND", "x"});
  Refused({});
}

TEST_CASE("channels and confirmations come back with the protocol's names", "[live][user_servers]") {
  CHECK(kSpace.FromServer(kP + "redisson_lock__channel:{lock}") == "redisson_lock__channel:{lock}");
  CHECK(kSpace.FromServer("other") == "other");
  const Reply confirmation = Reply::Array(
      {Reply::Bulk("subscribe"), Reply::Bulk(kP + "c"), Reply::Integer(1)});
  CHECK(kSpace.ConfirmationFromServer(confirmation) ==
        Reply::Array({Reply::Bulk("subscribe"), Reply::Bulk("c"), Reply::Integer(1)}));
  CHECK(kSpace.ConfirmationFromServer(Reply::Integer(3)) == Reply::Integer(3));
}

TEST_CASE("a transaction's and a blocking pop's keys go under the prefix and come back without it",
          "[live][user_servers]") {
  CHECK(Mapped({"WATCH", "lock", "q"}) == Argv{"WATCH", kP + "lock", kP + "q"});
  CHECK(Mapped({"UNWATCH"}) == Argv{"UNWATCH"});  // It touches no data.
  CHECK(Mapped({"MULTI"}) == Argv{"MULTI"});
  CHECK(Mapped({"DISCARD"}) == Argv{"DISCARD"});
  CHECK(Mapped({"BLPOP", "a", "b", "1"}) == Argv{"BLPOP", kP + "a", kP + "b", "1"});
  // The pop's reply names the list it took from.
  const Reply popped = Reply::Array({Reply::Bulk(kP + "b"), Reply::Bulk("1")});
  CHECK(kSpace.ReplyFromServer({"BLPOP", kP + "a", kP + "b", "1"}, popped) ==
        Reply::Array({Reply::Bulk("b"), Reply::Bulk("1")}));
  CHECK(kSpace.ReplyFromServer({"brpop", kP + "b", "0"}, popped) ==
        Reply::Array({Reply::Bulk("b"), Reply::Bulk("1")}));
  CHECK(kSpace.ReplyFromServer({"BLPOP", kP + "a", "1"}, Reply::NullArray()) == Reply::NullArray());
  // Another command's array is the data it read: left as it is.
  const Reply values = Reply::Array({Reply::Bulk(kP + "b"), Reply::Bulk("1")});
  CHECK(kSpace.ReplyFromServer({"LRANGE", kP + "l", "0", "-1"}, values) == values);
}

TEST_CASE("a run's prefix holds its seed and a random id, without glob characters or braces",
          "[live][user_servers]") {
  const RunKeyspace a = RunKeyspace::ForRun(42);
  const RunKeyspace b = RunKeyspace::ForRun(42);
  CHECK(a.prefix().rfind("lockstep:42:", 0) == 0);
  CHECK(a.prefix().size() == std::string("lockstep:42:").size() + 16 + 1);
  CHECK(a.prefix().back() == ':');
  CHECK(a.prefix() != b.prefix());  // Two runs of one seed on one server keep apart.
  CHECK(a.prefix().find_first_of("*?[]\\{}") == std::string::npos);
}

TEST_CASE("redis option addresses map to the nodes in order, one server each", "[live][user_servers]") {
  const Scenario three = Load(R"(
name = "three"
[[nodes]]
name = "a"
[[nodes]]
name = "b"
[[nodes]]
name = "c"
[[clients]]
count = 1
)");
  std::string error;
  auto mapped = MapUserServers(three, "127.0.0.1:7001,127.0.0.1:7002,localhost:7003", &error);
  REQUIRE(mapped);
  CHECK((*mapped)[0].node == "a");
  CHECK((*mapped)[2].node == "c");
  CHECK((*mapped)[2].host == "localhost");
  CHECK((*mapped)[2].port == 7003);

  CHECK_FALSE(MapUserServers(three, "127.0.0.1:7001,127.0.0.1:7002", &error));
  CHECK(error.find("gives 2 addresses but the scenario has 3 nodes (a, b, c)") != std::string::npos);
  CHECK_FALSE(MapUserServers(three, "127.0.0.1:7001,127.0.0.1:7001,127.0.0.1:7003", &error));
  CHECK(error.find("for both a and b") != std::string::npos);
  CHECK_FALSE(MapUserServers(three, "127.0.0.1:7001,127.0.0.1,127.0.0.1:7003", &error));
  CHECK(error.find("is not HOST:PORT") != std::string::npos);
  CHECK_FALSE(MapUserServers(three, "127.0.0.1:7001,127.0.0.1:99999,127.0.0.1:7003", &error));
  CHECK(error.find("1 to 65535") != std::string::npos);
}

}  // namespace lockstep::live
