// Establishes that lockstep hashes keys to slots exactly as Redis Cluster does (CRC16 XMODEM,
// hash tags), splits slots as redis-cli does, and that an emulated node in cluster mode refuses
// what redis-server 7.0.15 refuses with the same texts. Every expected value here was read from
// a live cluster-enabled redis-server 7.0.15 (CLUSTER KEYSLOT, and a two-node cluster whose
// first node serves 0-8191); the live conformance suite (core/testdata/conformance/cluster/)
// checks the server-side cases against such a cluster on every run.
#include <catch2/catch.hpp>

#include <memory>

#include "core/cluster.h"
#include "core/script_host.h"
#include "core/server.h"

namespace lockstep {
namespace {

TEST_CASE("Crc16 is the XMODEM CRC Redis Cluster uses") {
  CHECK(Crc16("123456789") == 0x31C3);  // The check value of CRC-16/XMODEM.
  CHECK(Crc16("") == 0);
  CHECK(Crc16(std::string_view("\0", 1)) == 0);
  CHECK(Crc16("A") == 0x58E5);
}

TEST_CASE("KeyHashSlot: known slots and hash tags") {
  // From CLUSTER KEYSLOT on redis-server 7.0.15.
  CHECK(KeyHashSlot("foo") == 12182);
  CHECK(KeyHashSlot("bar") == 5061);
  CHECK(KeyHashSlot("123456789") == 12739);
  CHECK(KeyHashSlot("") == 0);
  CHECK(KeyHashSlot("a") == 15495);
  CHECK(KeyHashSlot("b") == 3300);
  CHECK(KeyHashSlot("mylock") == 1711);
  // A tag: only the part between the first '{' and the first '}' after it.
  CHECK(KeyHashSlot("{user1000}.following") == 3443);
  CHECK(KeyHashSlot("{user1000}.followers") == 3443);
  CHECK(KeyHashSlot("foo{bar}{zap}") == KeyHashSlot("bar"));
  CHECK(KeyHashSlot("{a}1") == KeyHashSlot("a"));
  CHECK(KeyHashSlot("redisson_lock__channel:{mylock}") == KeyHashSlot("mylock"));
  // An empty tag hashes the whole key; so does a '{' without a '}' after it.
  CHECK(KeyHashSlot("foo{}{bar}") == 8363);
  CHECK(KeyHashSlot("foo{}{bar}") == static_cast<int>(Crc16("foo{}{bar}") & 16383));
  CHECK(KeyHashSlot("{bar") == 4015);
  CHECK(KeyHashSlot("}bar{") == static_cast<int>(Crc16("}bar{") & 16383));
  // The tag of "foo{{bar}}zap" is "{bar".
  CHECK(KeyHashSlot("foo{{bar}}zap") == 4015);
  CHECK(KeyHashSlot("foo{{bar}}zap") == KeyHashSlot("{bar"));
}

TEST_CASE("EvenSlotRanges splits slots as redis-cli --cluster create does") {
  const std::vector<SlotRange> three = EvenSlotRanges(3);
  REQUIRE(three.size() == 3);
  CHECK((three[0].first == 0 && three[0].last == 5460));
  CHECK((three[1].first == 5461 && three[1].last == 10922));
  CHECK((three[2].first == 10923 && three[2].last == 16383));
  const std::vector<SlotRange> one = EvenSlotRanges(1);
  CHECK((one.size() == 1 && one[0].first == 0 && one[0].last == 16383));
  for (int masters : {2, 4, 5, 6, 7, 64, 1000}) {
    const std::vector<SlotRange> r = EvenSlotRanges(masters);
    REQUIRE(static_cast<int>(r.size()) == masters);
    int next = 0;
    for (const SlotRange& range : r) {
      CHECK(range.first == next);  // Contiguous, in order, nothing left out.
      CHECK(range.last >= range.first);
      next = range.last + 1;
    }
    CHECK(next == kClusterSlots);
  }
  const ClusterTopology t = ClusterTopology::Even({"n1:6379", "n2:6379", "n3:6379"});
  CHECK(t.all_slots_served());
  CHECK(t.owner(0) == 0);
  CHECK(t.owner(5460) == 0);
  CHECK(t.owner(5461) == 1);
  CHECK(t.owner(16383) == 2);
  REQUIRE(t.RangesOf(1).size() == 1);
  CHECK(t.RangesOf(1)[0].last == 10922);
}

TEST_CASE("ReadScriptClusterFlags reads the shebang as Redis does") {
  CHECK(ReadScriptClusterFlags("return 1").compat);
  const ScriptClusterFlags plain = ReadScriptClusterFlags("#!lua\nreturn 1");
  CHECK((plain.valid && !plain.compat && !plain.no_cluster && !plain.allow_cross_slot));
  const ScriptClusterFlags both =
      ReadScriptClusterFlags("#!lua flags=no-writes,no-cluster,allow-cross-slot-keys\nreturn 1");
  CHECK((both.valid && both.no_cluster && both.allow_cross_slot));
  CHECK(ReadScriptClusterFlags("#!lua \"flags=no-cluster\"\nreturn 1").no_cluster);
  CHECK(ReadScriptClusterFlags("#!lua flags=\nreturn 1").valid);
  CHECK_FALSE(ReadScriptClusterFlags("#!lua flags=bad\nreturn 1").valid);
  CHECK_FALSE(ReadScriptClusterFlags("#!lua flags=no-cluster,\nreturn 1").valid);
  CHECK_FALSE(ReadScriptClusterFlags("#!lua").valid);  // No newline after the shebang.
  CHECK_FALSE(ReadScriptClusterFlags("#!python\nreturn 1").valid);
  CHECK_FALSE(ReadScriptClusterFlags("#!lua cross\nreturn 1").valid);
}

TEST_CASE("QuerySlot finds the keys as getKeysFromCommand does") {
  auto query = [](const Argv& argv) {
    const CommandSpec* spec = Server::Lookup(argv);
    REQUIRE(spec != nullptr);
    return QuerySlot(*spec, argv);
  };
  using K = SlotQuery::Kind;
  CHECK(query({"PING"}).kind == K::kNoKeys);
  CHECK(query({"PUBLISH", "foo", "m"}).kind == K::kNoKeys);  // A channel is not a key.
  CHECK(query({"GET", "foo"}).slot == 12182);
  CHECK(query({"DEL", "bar", "b"}).kind == K::kCrossSlot);
  CHECK(query({"DEL", "{a}1", "{a}2", "a"}).kind == K::kOneSlot);
  CHECK(query({"MGET", "bar", "bar"}).kind == K::kOneSlot);
  CHECK(query({"HSET", "foo", "bar", "v"}).slot == 12182);  // Only argument 1 is a key.
  CHECK(query({"EVAL", "return 1", "0", "bar", "b"}).kind == K::kNoKeys);
  CHECK(query({"EVAL", "return 1", "2", "bar", "b"}).kind == K::kCrossSlot);
  CHECK(query({"EVAL", "return 1", "1", "bar", "b"}).slot == 5061);
  CHECK(query({"evalsha_ro", "x", "1", "foo"}).slot == 12182);
  // numkeys is read with atoi: "2abc" is 2, out of range or negative means no keys.
  CHECK(query({"EVAL", "return 1", "2abc", "bar", "b"}).kind == K::kCrossSlot);
  CHECK(query({"EVAL", "return 1", " +1", "bar", "b"}).slot == 5061);
  CHECK(query({"EVAL", "return 1", "3", "bar", "b"}).kind == K::kNoKeys);
  CHECK(query({"EVAL", "return 1", "-1", "bar", "b"}).kind == K::kNoKeys);
  CHECK(query({"EVAL", "return 1", "99999999999999999999", "bar"}).kind == K::kNoKeys);
  CHECK(query({"EVAL", "return 1", "abc", "bar"}).kind == K::kNoKeys);
  CHECK(query({"BLPOP", "bar", "b", "0"}).kind == K::kCrossSlot);  // All but the last.
  CHECK(query({"BLPOP", "bar", "{bar}x", "0"}).kind == K::kOneSlot);
}

// A node of a two-node cluster, like the live one the conformance suite builds: this node
// serves 0-8191, the other one (127.0.0.1:7712) 8192-16383. "bar" (5061) and "b" (3300) are
// here, in different slots; "foo" (12182) is on the other node.
std::unique_ptr<Server> NodeOfTwo() {
  auto topology = std::make_shared<ClusterTopology>(
      std::vector<std::string>{"127.0.0.1:7711", "127.0.0.1:7712"});
  topology->Assign(0, {0, 8191});
  topology->Assign(1, {8192, 16383});
  ServerOptions options;
  options.cluster = topology;
  options.cluster_node = 0;
  return std::make_unique<Server>(options);
}

std::string Run(Server& s, const Argv& argv) { return s.Execute(argv, 1000).Debug(); }

std::string Sha(std::string_view body) { return ScriptHost::Sha1Hex(body); }

TEST_CASE("cluster node: CROSSSLOT and MOVED for commands") {
  auto node = NodeOfTwo();
  Server& s = *node;
  CHECK(Run(s, {"DEL", "bar", "b"}) == "-CROSSSLOT Keys in request don't hash to the same slot");
  CHECK(Run(s, {"EXISTS", "bar", "b"}) == "-CROSSSLOT Keys in request don't hash to the same slot");
  CHECK(Run(s, {"DEL", "foo"}) == "-MOVED 12182 127.0.0.1:7712");
  CHECK(Run(s, {"GET", "foo"}) == "-MOVED 12182 127.0.0.1:7712");
  CHECK(Run(s, {"MGET", "bar", "bar"}) == "[(nil), (nil)]");
  CHECK(Run(s, {"MGET", "bar", "foo"}) == "-CROSSSLOT Keys in request don't hash to the same slot");
  CHECK(Run(s, {"SET", "bar", "1"}) == "+OK");
  CHECK(Run(s, {"GET", "bar"}) == "\"1\"");
  CHECK(Run(s, {"PUBLISH", "foo", "m"}) == "0");
  CHECK(Run(s, {"SPUBLISH", "foo", "m"}) == "-MOVED 12182 127.0.0.1:7712");
  CHECK(Run(s, {"WATCH", "foo"}) == "-MOVED 12182 127.0.0.1:7712");
  // The arity check comes first.
  CHECK(Run(s, {"GET", "foo", "x"}) == "-ERR wrong number of arguments for 'get' command");
  CHECK(Run(s, {"CLUSTER", "KEYSLOT", "foo"}) == "12182");
}

TEST_CASE("cluster node: EVAL's declared keys and the keys its script touches") {
  auto node = NodeOfTwo();
  Server& s = *node;
  const std::string crossslot = "-CROSSSLOT Keys in request don't hash to the same slot";
  CHECK(Run(s, {"EVAL", "return 1", "2", "bar", "b"}) == crossslot);
  CHECK(Run(s, {"EVAL", "return 1", "2abc", "bar", "foo"}) == crossslot);
  CHECK(Run(s, {"EVALSHA", std::string(40, '0'), "2", "bar", "b"}) == crossslot);
  CHECK(Run(s, {"EVAL", "return 1", "1", "foo"}) == "-MOVED 12182 127.0.0.1:7712");
  CHECK(Run(s, {"EVAL", "return 1", "0"}) == "1");
  CHECK(Run(s, {"EVAL", "return 1", "abc", "bar"}) ==
        "-ERR value is not an integer or out of range");

  // Without a shebang a script may touch any key this node serves, in any slot.
  const std::string get_foo = "return redis.call('get','foo')";
  CHECK(Run(s, {"EVAL", get_foo, "0"}) ==
        "-ERR Script attempted to access a non local key in a cluster node script: " +
            Sha(get_foo) + ", on @user_script:1.");
  const std::string two_slots = "redis.call('get','bar'); return redis.call('get','b')";
  CHECK(Run(s, {"EVAL", two_slots, "0"}) == "(nil)");
  CHECK(Run(s, {"EVAL", "return redis.call('get','b')", "1", "bar"}) == "(nil)");
  // A command naming keys of two slots is "non local", even if both are served here.
  const std::string del_two = "return redis.call('del','bar','b')";
  CHECK(Run(s, {"EVAL", del_two, "0"}) ==
        "-ERR Script attempted to access a non local key in a cluster node script: " +
            Sha(del_two) + ", on @user_script:1.");
  CHECK(Run(s, {"EVAL", "return redis.pcall('get','foo')", "0"}) ==
        "-ERR Script attempted to access a non local key in a cluster node");

  // With a shebang, the keys must stay in one slot unless allow-cross-slot-keys says so.
  const std::string strict = "#!lua\nredis.call('get','bar'); return redis.call('get','b')";
  CHECK(Run(s, {"EVAL", strict, "0"}) ==
        "-ERR Script attempted to access keys that do not hash to the same slot script: " +
            Sha(strict) + ", on @user_script:2.");
  const std::string strict_declared = "#!lua\nreturn redis.call('get','b')";
  CHECK(Run(s, {"EVAL", strict_declared, "1", "bar"}) ==
        "-ERR Script attempted to access keys that do not hash to the same slot script: " +
            Sha(strict_declared) + ", on @user_script:2.");
  CHECK(Run(s, {"EVALSHA", Sha(strict_declared), "1", "bar"}) ==
        "-ERR Script attempted to access keys that do not hash to the same slot script: " +
            Sha(strict_declared) + ", on @user_script:2.");
  const std::string relaxed = "#!lua flags=allow-cross-slot-keys\nreturn redis.call('get','b')";
  CHECK(Run(s, {"EVAL", relaxed, "1", "bar"}) == "(nil)");
  CHECK(Run(s, {"EVAL", relaxed, "2", "bar", "b"}) == crossslot);  // Declared keys still may not.

  // no-cluster: refused after numkeys and compilation.
  const std::string no_cluster = "#!lua flags=no-cluster\nreturn 1";
  CHECK(Run(s, {"EVAL", no_cluster, "0"}) ==
        "-ERR Can not run script on cluster, 'no-cluster' flag is set.");
  CHECK(Run(s, {"EVAL", no_cluster, "x"}) == "-ERR value is not an integer or out of range");
  CHECK(Run(s, {"EVAL", "#!lua flags=no-cluster\nreturn +", "0"}) ==
        "-ERR Error compiling script (new function): user_script:2: unexpected symbol near '+'");
  CHECK(Run(s, {"EVAL", no_cluster, "1", "foo"}) == "-MOVED 12182 127.0.0.1:7712");
  CHECK(Run(s, {"EVAL_RO", no_cluster, "0"}) ==
        "-ERR Can not run script on cluster, 'no-cluster' flag is set.");
  CHECK(Run(s, {"SCRIPT", "FLUSH"}) == "+OK");
  CHECK(Run(s, {"EVALSHA", Sha(no_cluster), "0"}) == "-NOSCRIPT No matching script. Please use EVAL.");
  CHECK(Run(s, {"SCRIPT", "LOAD", no_cluster}) == "\"" + Sha(no_cluster) + "\"");
  CHECK(Run(s, {"EVALSHA", Sha(no_cluster), "0"}) ==
        "-ERR Can not run script on cluster, 'no-cluster' flag is set.");

  // The state of one script does not leak into the next.
  CHECK(Run(s, {"EVAL", "return redis.call('get','b')", "1", "bar"}) == "(nil)");
  CHECK(Run(s, {"EVAL", "return redis.call('get','bar')", "0"}) == "(nil)");
}

TEST_CASE("cluster node: CLUSTER subcommands, and CLUSTER on a standalone server") {
  auto node = NodeOfTwo();
  CHECK(Run(*node, {"cluster", "keyslot", "{user1000}.following"}) == "3443");
  CHECK(Run(*node, {"CLUSTER", "KEYSLOT"}) ==
        "-ERR wrong number of arguments for 'cluster|keyslot' command");
  CHECK(Run(*node, {"CLUSTER", "FOO"}) == "-ERR unknown subcommand 'FOO'. Try CLUSTER HELP.");
  CHECK(Run(*node, {"CLUSTER"}) == "-ERR wrong number of arguments for 'cluster' command");
  CHECK(Run(*node, {"EVAL", "return redis.call('cluster','keyslot','foo')", "0"}) == "12182");
  const std::string reset = "return redis.call('cluster','reset')";
  CHECK(Run(*node, {"EVAL", reset, "0"}) ==
        "-ERR This Redis command is not allowed from script script: " + Sha(reset) +
            ", on @user_script:1.");
  Server standalone;
  CHECK(Run(standalone, {"CLUSTER", "KEYSLOT", "foo"}) ==
        "-ERR This instance has cluster support disabled");
  CHECK(Run(standalone, {"DEL", "bar", "b"}) == "0");  // No slots without cluster mode.
  CHECK(Run(standalone, {"EVAL", "return redis.call('get','foo')", "0"}) == "(nil)");
}

TEST_CASE("cluster node: a cluster with an unserved slot is down") {
  auto topology = std::make_shared<ClusterTopology>(std::vector<std::string>{"n1:6379"});
  topology->Assign(0, {0, 8191});
  ServerOptions options;
  options.cluster = topology;
  options.cluster_node = 0;
  Server s(options);
  CHECK(Run(s, {"GET", "foo"}) == "-CLUSTERDOWN Hash slot not served");
  CHECK(Run(s, {"GET", "bar"}) == "-CLUSTERDOWN The cluster is down");
  CHECK(Run(s, {"PING"}) == "+PONG");
  CHECK(Run(s, {"EVAL", "return redis.pcall('get','bar')", "0"}) ==
        "-ERR Script attempted to execute a command while the cluster is down");
}

}  // namespace
}  // namespace lockstep
