// Establishes that the string, hash, list, sorted-set and set commands give redis-server
// 7.0.15's exact replies, error texts and replication effects. Every step below is a transcript
// of the same command sent to a live Debian redis-server 7.0.15 (reply as the client saw it, and
// what `redis-cli --replica` received), in the same order, starting from a server holding only the
// string key "s" = "x".
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/commands.h"
#include "core/keyspace.h"
#include "core/server.h"

namespace {

using lockstep::Argv;
using lockstep::Ctx;
using lockstep::Effects;
using lockstep::Reply;
using lockstep::Server;

constexpr int64_t kNowMs = 1'000'000;

// Splits on spaces; a double-quoted word may hold spaces or be empty ("" and " 1").
Argv Split(const std::string& line) {
  Argv argv;
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ') {
      ++i;
    } else if (line[i] == '"') {
      const size_t close = line.find('"', i + 1);
      REQUIRE(close != std::string::npos);
      argv.push_back(line.substr(i + 1, close - i - 1));
      i = close + 1;
    } else {
      const size_t end = std::min(line.find(' ', i), line.size());
      argv.push_back(line.substr(i, end - i));
      i = end;
    }
  }
  return argv;
}

// What a replica receives, one command per " | ", quoting empty words and words with spaces.
std::string Render(const Effects& fx) {
  std::string out;
  for (const Argv& argv : fx.commands) {
    if (!out.empty()) out += " | ";
    for (size_t i = 0; i < argv.size(); ++i) {
      if (i > 0) out += ' ';
      const bool quote = argv[i].empty() || argv[i].find(' ') != std::string::npos;
      out += quote ? "\"" + argv[i] + "\"" : argv[i];
    }
  }
  return out;
}

std::string Run(Server& s, const std::string& line, Effects* fx = nullptr) {
  return s.Execute(Split(line), kNowMs, fx).Debug();
}

// Runs a command the way a script does after redis.setresp(3).
std::string RunResp3(Server& s, const std::string& line, Effects* fx = nullptr) {
  const Argv argv = Split(line);
  Ctx ctx(s, kNowMs, /*resp=*/3, /*from_script=*/true, fx);
  return s.CallFromScript(ctx, argv, /*read_only_script=*/false).Debug();
}

struct Step {
  std::string command;  // "?k" asks whether key k is present, without going through EXISTS.
  std::string reply;    // Reply::Debug() of the reply.
  std::string effects = {};  // Render() of what replicates; empty when nothing does.
};

// A server holding only the string "s" = "x", as each live transcript started.
void AddStringKey(Server& s) {
  lockstep::Entry e;
  e.value = std::string("x");
  s.keyspace().Put("s", std::move(e));
}

void RunSteps(const std::vector<Step>& steps) {
  Server s;
  AddStringKey(s);
  for (const Step& step : steps) {
    INFO(step.command);
    if (step.command[0] == '?') {
      const bool present = s.keyspace().Find(step.command.substr(1)) != nullptr;
      CHECK((present ? "1" : "0") == step.reply);
      continue;
    }
    Effects fx;
    CHECK(Run(s, step.command, &fx) == step.reply);
    CHECK(Render(fx) == step.effects);
  }
}

}  // namespace

// Every command Redis has and the emulator does not gets one error, inside a script
// or outside; a name Redis does not know either gets Redis's own answer.
TEST_CASE("a Redis command the emulator lacks is 'not provided', an unknown one unknown",
          "[commands]") {
  Server s;
  for (const char* line :
       {"INFO", "OBJECT ENCODING k", "CLIENT LIST", "DEBUG SLEEP 0", "GETEX k"}) {
    INFO(line);
    std::string name = Split(line)[0];
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const std::string want =
        "-ERR '" + name + "' is not provided by the lockstep emulator (see docs/fidelity.md)";
    CHECK(Run(s, line) == want);
    // CLIENT and DEBUG are refused in a script as Redis refuses them (no-script commands).
    if (name != "client" && name != "debug") CHECK(RunResp3(s, line) == want);
  }
  CHECK(Run(s, "NOSUCH a") == "-ERR unknown command 'NOSUCH', with args beginning with: 'a' ");
  CHECK(RunResp3(s, "NOSUCH a") == "-ERR Unknown Redis command called from script");
  CHECK(RunResp3(s, "SCRIPT NOSUCH") == "-ERR Unknown Redis command called from script");
}

// --- hashes ---------------------------------------------------------------------------------

TEST_CASE("HSET/HMSET: new-field counts, odd arity before the type check, always replicated",
          "[commands][hash]") {
  // Even a HSET that changes nothing replicates: Redis counts every pair as dirty.
  RunSteps({
      {"hset h f", "-ERR wrong number of arguments for 'hset' command"},
      {"hset h f v g", "-ERR wrong number of arguments for 'hset' command"},
      {"HSET h f v g", "-ERR wrong number of arguments for 'hset' command"},
      {"hmset h f", "-ERR wrong number of arguments for 'hmset' command"},
      {"HMSET h f v g", "-ERR wrong number of arguments for 'hmset' command"},
      {"hset h", "-ERR wrong number of arguments for 'hset' command"},
      {"hset s f v", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"hset s f", "-ERR wrong number of arguments for 'hset' command"},
      {"hset h f v", "1", "hset h f v"},
      {"hset h f v", "0", "hset h f v"},
      {"hset h f v2 g w", "1", "hset h f v2 g w"},
      {"hmset h f v3 x y", "+OK", "hmset h f v3 x y"},
      {"HMSet h x y2", "+OK", "HMSet h x y2"},
      {"hgetall h", "[\"f\", \"v3\", \"g\", \"w\", \"x\", \"y2\"]"},
      {"hsetnx h f zz", "0"},
      {"hsetnx h n nv", "1", "hsetnx h n nv"},
      {"hsetnx new a b", "1", "hsetnx new a b"},
      {"hsetnx s a b", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"hgetall h", "[\"f\", \"v3\", \"g\", \"w\", \"x\", \"y2\", \"n\", \"nv\"]"},
  });
}

TEST_CASE("HGET, HMGET, HEXISTS, HLEN on hits, misses and wrong types", "[commands][hash]") {
  RunSteps({
      {"hset h f v g w", "2", "hset h f v g w"},
      {"hget h f", "\"v\""},
      {"hget h nope", "(nil)"},
      {"hget nokey f", "(nil)"},
      {"hget s f", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"hmget h f nope g", "[\"v\", (nil), \"w\"]"},
      {"hmget nokey a b", "[(nil), (nil)]"},
      {"hmget s a", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"hexists h f", "1"},
      {"hexists h nope", "0"},
      {"hexists nokey f", "0"},
      {"hexists s f", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"hlen h", "2"},
      {"hlen nokey", "0"},
      {"hlen s", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"hget h", "-ERR wrong number of arguments for 'hget' command"},
      {"hmget h", "-ERR wrong number of arguments for 'hmget' command"},
      {"hexists h f g", "-ERR wrong number of arguments for 'hexists' command"},
  });
}

TEST_CASE("HGETALL, HKEYS, HVALS keep insertion order, a re-added field goes last",
          "[commands][hash]") {
  RunSteps({
      {"hset h4 a 1 b 2 c 3", "3", "hset h4 a 1 b 2 c 3"},
      {"hgetall h4", "[\"a\", \"1\", \"b\", \"2\", \"c\", \"3\"]"},
      {"hkeys h4", "[\"a\", \"b\", \"c\"]"},
      {"hvals h4", "[\"1\", \"2\", \"3\"]"},
      {"hset h4 a 9", "0", "hset h4 a 9"},
      {"hgetall h4", "[\"a\", \"9\", \"b\", \"2\", \"c\", \"3\"]"},
      {"hdel h4 b", "1", "hdel h4 b"},
      {"hset h4 b 9", "1", "hset h4 b 9"},
      {"hgetall h4", "[\"a\", \"9\", \"c\", \"3\", \"b\", \"9\"]"},
      {"HKEYS h4", "[\"a\", \"c\", \"b\"]"},
      {"HVals h4", "[\"9\", \"3\", \"9\"]"},
      {"hgetall nokey", "[]"},
      {"hkeys nokey", "[]"},
      {"hvals nokey", "[]"},
      {"hgetall s", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"hkeys s", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"hvals s", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"hset e a \"\"", "1", "hset e a \"\""},
      {"hgetall e", "[\"a\", \"\"]"},
  });
}

TEST_CASE("HDEL counts duplicates once, deletes an emptied hash, replicates only removals",
          "[commands][hash]") {
  RunSteps({
      {"hset h f 1 g 2 n 3", "3", "hset h f 1 g 2 n 3"},
      {"hdel h f f nope", "1", "hdel h f f nope"},
      {"hdel h nope", "0"},
      {"hdel nokey f", "0"},
      {"hdel s f", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"hgetall h", "[\"g\", \"2\", \"n\", \"3\"]"},
      {"hset h2 a 1 b 2", "2", "hset h2 a 1 b 2"},
      {"hdel h2 a b c", "2", "hdel h2 a b c"},
      {"?h2", "0"},
      {"hset h2 a 1 b 2", "2", "hset h2 a 1 b 2"},
      {"hdel h2 a a b", "2", "hdel h2 a a b"},
      {"?h2", "0"},
      {"hset h3 a 1", "1", "hset h3 a 1"},
      {"hdel h3 a h3 x", "1", "hdel h3 a h3 x"},
      {"?h3", "0"},
      {"hdel h", "-ERR wrong number of arguments for 'hdel' command"},
  });
}

TEST_CASE("HINCRBY parses the increment first, needs string2ll values, detects overflow",
          "[commands][hash]") {
  RunSteps({
      {"hincrby h f 1", "1", "hincrby h f 1"},
      {"hincrby h f -3", "-2", "hincrby h f -3"},
      {"hincrby h f 0", "-2", "hincrby h f 0"},
      {"hincrby h f abc", "-ERR value is not an integer or out of range"},
      {"hincrby h f +1", "-ERR value is not an integer or out of range"},
      {"hincrby h f 01", "-ERR value is not an integer or out of range"},
      {"hincrby h f 1.0", "-ERR value is not an integer or out of range"},
      {"hincrby h f \" 1\"", "-ERR value is not an integer or out of range"},
      {"hincrby h f \"\"", "-ERR value is not an integer or out of range"},
      {"hincrby h f -0", "-ERR value is not an integer or out of range"},
      {"hincrby h f 9223372036854775808", "-ERR value is not an integer or out of range"},
      {"hincrby h f 99999999999999999999", "-ERR value is not an integer or out of range"},
      {"hincrby s f abc", "-ERR value is not an integer or out of range"},
      {"hincrby s f 1", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"hincrby nokey f abc", "-ERR value is not an integer or out of range"},
      {"?nokey", "0"},
      {"hset h sp \" 1\" fl 1.0 pl +1 lz 01 mz -0 ab abc em \"\" big 9223372036854775807 small -9223372036854775808 bigger 9223372036854775808", "10", "hset h sp \" 1\" fl 1.0 pl +1 lz 01 mz -0 ab abc em \"\" big 9223372036854775807 small -9223372036854775808 bigger 9223372036854775808"},
      {"hincrby h sp 1", "-ERR hash value is not an integer"},
      {"hincrby h fl 1", "-ERR hash value is not an integer"},
      {"hincrby h pl 1", "-ERR hash value is not an integer"},
      {"hincrby h lz 1", "-ERR hash value is not an integer"},
      {"hincrby h mz 1", "-ERR hash value is not an integer"},
      {"hincrby h ab 1", "-ERR hash value is not an integer"},
      {"hincrby h em 1", "-ERR hash value is not an integer"},
      {"hincrby h bigger 1", "-ERR hash value is not an integer"},
      {"hincrby h big 1", "-ERR increment or decrement would overflow"},
      {"hincrby h big 0", "9223372036854775807", "hincrby h big 0"},
      {"hincrby h big -1", "9223372036854775806", "hincrby h big -1"},
      {"hincrby h small -1", "-ERR increment or decrement would overflow"},
      {"hincrby h small 1", "-9223372036854775807", "hincrby h small 1"},
      {"hincrby h new 9223372036854775807", "9223372036854775807", "hincrby h new 9223372036854775807"},
      {"hincrby h new2 -9223372036854775808", "-9223372036854775808", "hincrby h new2 -9223372036854775808"},
      {"hincrby h new2 -1", "-ERR increment or decrement would overflow"},
      {"hincrby h new2 9223372036854775807", "-1", "hincrby h new2 9223372036854775807"},
      {"hget h small", "\"-9223372036854775807\""},
      {"hget h new2", "\"-1\""},
      {"hincrby h f 1 2", "-ERR wrong number of arguments for 'hincrby' command"},
      {"hincrby h f", "-ERR wrong number of arguments for 'hincrby' command"},
  });
}

// --- lists ----------------------------------------------------------------------------------

TEST_CASE("LPUSH/RPUSH order, LLEN, and LRANGE clamping with indices parsed first",
          "[commands][list]") {
  RunSteps({
      {"lpush l a b c", "3", "lpush l a b c"},
      {"rpush l d e", "5", "rpush l d e"},
      {"lrange l 0 -1", "[\"c\", \"b\", \"a\", \"d\", \"e\"]"},
      {"LPUSH l z", "6", "LPUSH l z"},
      {"RPush l y", "7", "RPush l y"},
      {"lrange l 0 -1", "[\"z\", \"c\", \"b\", \"a\", \"d\", \"e\", \"y\"]"},
      {"lpush s a", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"rpush s a", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"lpush l", "-ERR wrong number of arguments for 'lpush' command"},
      {"llen l", "7"},
      {"llen nokey", "0"},
      {"llen s", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"lrange l 1 2", "[\"c\", \"b\"]"},
      {"lrange l -2 -1", "[\"e\", \"y\"]"},
      {"lrange l -100 100", "[\"z\", \"c\", \"b\", \"a\", \"d\", \"e\", \"y\"]"},
      {"lrange l 3 1", "[]"},
      {"lrange l 7 10", "[]"},
      {"lrange l -1 -2", "[]"},
      {"lrange l 0 -8", "[]"},
      {"lrange l 0 -7", "[\"z\"]"},
      {"lrange l -9223372036854775808 9223372036854775807", "[\"z\", \"c\", \"b\", \"a\", \"d\", \"e\", \"y\"]"},
      {"lrange l a 1", "-ERR value is not an integer or out of range"},
      {"lrange l 0 b", "-ERR value is not an integer or out of range"},
      {"lrange l +1 2", "-ERR value is not an integer or out of range"},
      {"lrange nokey a 1", "-ERR value is not an integer or out of range"},
      {"lrange s a 1", "-ERR value is not an integer or out of range"},
      {"lrange s 0 1", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"lrange nokey 0 1", "[]"},
      {"lrange l 1", "-ERR wrong number of arguments for 'lrange' command"},
  });
}

TEST_CASE("LINDEX looks the key up before it parses the index", "[commands][list]") {
  RunSteps({
      {"rpush l a b c d e", "5", "rpush l a b c d e"},
      {"lindex l 0", "\"a\""},
      {"lindex l -1", "\"e\""},
      {"lindex l 4", "\"e\""},
      {"lindex l 5", "(nil)"},
      {"lindex l -5", "\"a\""},
      {"lindex l -6", "(nil)"},
      {"lindex l abc", "-ERR value is not an integer or out of range"},
      {"lindex l +1", "-ERR value is not an integer or out of range"},
      {"lindex l 01", "-ERR value is not an integer or out of range"},
      {"lindex l 99999999999999999999", "-ERR value is not an integer or out of range"},
      {"lindex l 9223372036854775807", "(nil)"},
      {"lindex l -9223372036854775808", "(nil)"},
      {"lindex nokey abc", "(nil)"},
      {"lindex s abc", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"lindex s 0", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
  });
}

TEST_CASE("LPOP/RPOP: nil vs null array vs empty array, count errors, replication as is",
          "[commands][list]") {
  RunSteps({
      {"rpush l a b c d e", "5", "rpush l a b c d e"},
      {"lpop l", "\"a\"", "lpop l"},
      {"rpop l", "\"e\"", "rpop l"},
      {"lpop l 0", "[]"},
      {"lpop l 2", "[\"b\", \"c\"]", "lpop l 2"},
      {"rpop l 5", "[\"d\"]", "rpop l 5"},
      {"?l", "0"},
      {"lpop nokey", "(nil)"},
      {"lpop nokey 2", "(nil array)"},
      {"lpop nokey 0", "(nil array)"},
      {"lpop nokey -1", "-ERR value is out of range, must be positive"},
      {"lpop nokey abc", "-ERR value is out of range, must be positive"},
      {"rpop nokey 2", "(nil array)"},
      {"lpop s", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"lpop s 1", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"lpop s abc", "-ERR value is out of range, must be positive"},
      {"lpop s 0", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"rpush l a b c", "3", "rpush l a b c"},
      {"lpop l -1", "-ERR value is out of range, must be positive"},
      {"lpop l abc", "-ERR value is out of range, must be positive"},
      {"lpop l +1", "-ERR value is out of range, must be positive"},
      {"lpop l 01", "-ERR value is out of range, must be positive"},
      {"lpop l 1.5", "-ERR value is out of range, must be positive"},
      {"lpop l \"\"", "-ERR value is out of range, must be positive"},
      {"lpop l 99999999999999999999", "-ERR value is out of range, must be positive"},
      {"rpop l 2", "[\"c\", \"b\"]", "rpop l 2"},
      {"LPOP l 9223372036854775807", "[\"a\"]", "LPOP l 9223372036854775807"},
      {"?l", "0"},
      {"rpush l a b c", "3", "rpush l a b c"},
      {"lpop l 1 2", "-ERR wrong number of arguments for 'lpop' command"},
      {"lpop", "-ERR wrong number of arguments for 'lpop' command"},
      {"rpop l 0", "[]"},
      {"rpop l 1", "[\"c\"]", "rpop l 1"},
      {"RPOP l", "\"b\"", "RPOP l"},
      {"lrange l 0 -1", "[\"a\"]"},
  });
}

TEST_CASE("LREM: count sign picks the end, 0 removes all, an emptied list is deleted",
          "[commands][list]") {
  RunSteps({
      {"rpush r a b a c a b a", "7", "rpush r a b a c a b a"},
      {"lrem r 2 a", "2", "lrem r 2 a"},
      {"lrange r 0 -1", "[\"b\", \"c\", \"a\", \"b\", \"a\"]"},
      {"lrem r -1 a", "1", "lrem r -1 a"},
      {"lrange r 0 -1", "[\"b\", \"c\", \"a\", \"b\"]"},
      {"lrem r 0 b", "2", "lrem r 0 b"},
      {"lrange r 0 -1", "[\"c\", \"a\"]"},
      {"lrem r 0 zz", "0"},
      {"lrem r 5 c", "1", "lrem r 5 c"},
      {"lrem r x a", "-ERR value is not an integer or out of range"},
      {"lrem r +1 a", "-ERR value is not an integer or out of range"},
      {"lrem nokey x a", "-ERR value is not an integer or out of range"},
      {"lrem s x a", "-ERR value is not an integer or out of range"},
      {"lrem s 1 a", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"lrem nokey 1 a", "0"},
      {"lrem r -9223372036854775808 a", "1", "lrem r -9223372036854775808 a"},
      {"?r", "0"},
      {"rpush r a a b a", "4", "rpush r a a b a"},
      {"lrem r -2 a", "2", "lrem r -2 a"},
      {"lrange r 0 -1", "[\"a\", \"b\"]"},
      {"rpush q x", "1", "rpush q x"},
      {"lrem q 0 x", "1", "lrem q 0 x"},
      {"?q", "0"},
  });
}

// --- sorted sets ----------------------------------------------------------------------------

TEST_CASE("ZADD option and score errors, in Redis's order, before the key is touched",
          "[commands][zset]") {
  RunSteps({
      {"zadd z 1", "-ERR wrong number of arguments for 'zadd' command"},
      {"zadd z nx 1", "-ERR syntax error"},
      {"zadd z 1 a 2", "-ERR syntax error"},
      {"zadd z nx xx 1 a", "-ERR XX and NX options at the same time are not compatible"},
      {"zadd z NX XX 1 a", "-ERR XX and NX options at the same time are not compatible"},
      {"zadd z gt lt 1 a", "-ERR GT, LT, and/or NX options at the same time are not compatible"},
      {"zadd z nx gt 1 a", "-ERR GT, LT, and/or NX options at the same time are not compatible"},
      {"zadd z nx lt 1 a", "-ERR GT, LT, and/or NX options at the same time are not compatible"},
      {"zadd z nx xx gt 1 a", "-ERR XX and NX options at the same time are not compatible"},
      {"zadd z incr 1 a 2 b", "-ERR INCR option supports a single increment-element pair"},
      {"zadd z incr nx xx 1 a", "-ERR XX and NX options at the same time are not compatible"},
      {"zadd z abc a", "-ERR value is not a valid float"},
      {"zadd z 1 a abc b", "-ERR value is not a valid float"},
      {"zadd z nan a", "-ERR value is not a valid float"},
      {"zadd z \"\" a", "-ERR value is not a valid float"},
      {"zadd z \" 1\" a", "-ERR value is not a valid float"},
      {"zadd z \"1 \" a", "-ERR value is not a valid float"},
      {"zadd z 1e400 a", "-ERR value is not a valid float"},
      {"zadd z 1e-400 a", "-ERR value is not a valid float"},
      {"zadd z 1 a nan b", "-ERR value is not a valid float"},
      {"zadd s 1 a", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"zadd s abc a", "-ERR value is not a valid float"},
      {"zadd s nx xx 1 a", "-ERR XX and NX options at the same time are not compatible"},
      {"zadd s xx 1 a", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"zadd z foo 1 a", "-ERR syntax error"},
      {"zadd z 1 a ch 2 b", "-ERR syntax error"},
      {"?z", "0"},
  });
}

TEST_CASE("ZADD NX/XX/GT/LT/CH/INCR outcomes, only real changes replicate",
          "[commands][zset]") {
  RunSteps({
      {"zadd z 1 a 2 b 3 c", "3", "zadd z 1 a 2 b 3 c"},
      {"zadd z 1 a", "0"},
      {"zadd z 5 a", "0", "zadd z 5 a"},
      {"zadd z ch 5 a 6 b 7 d", "2", "zadd z ch 5 a 6 b 7 d"},
      {"zadd z NX CH 9 a 9 e", "1", "zadd z NX CH 9 a 9 e"},
      {"zadd z nx 1 a", "0"},
      {"zadd z xx 1 zz", "0"},
      {"zadd nokey xx 1 a", "0"},
      {"?nokey", "0"},
      {"zadd nokey xx incr 1 a", "(nil)"},
      {"zadd nokey gt 5 a", "1", "zadd nokey gt 5 a"},
      {"zadd z gt 1 a", "0"},
      {"zadd z gt 10 a", "0", "zadd z gt 10 a"},
      {"zadd z lt 11 a", "0"},
      {"zadd z lt 2 a", "0", "zadd z lt 2 a"},
      {"zadd z xx gt 3 a", "0", "zadd z xx gt 3 a"},
      {"zadd z gt ch 3 a 100 newgt", "1", "zadd z gt ch 3 a 100 newgt"},
      {"zadd z lt ch 100 newlt 50 newgt", "2", "zadd z lt ch 100 newlt 50 newgt"},
      {"zadd z incr 1 a", "\"4\"", "zadd z incr 1 a"},
      {"zadd z incr nx 1 a", "(nil)"},
      {"zadd z incr xx 1 nomem", "(nil)"},
      {"zadd z incr gt -1 a", "(nil)"},
      {"zadd z incr lt -1 a", "\"3\"", "zadd z incr lt -1 a"},
      {"zadd z incr 0 a", "\"3\""},
      {"zadd z incr xx 0 a", "\"3\""},
      {"zadd z ch incr 1 a", "\"4\"", "zadd z ch incr 1 a"},
      {"zadd z xx xx 1 a", "0", "zadd z xx xx 1 a"},
      {"zadd z incr nx 7 fresh", "\"7\"", "zadd z incr nx 7 fresh"},
      {"zrange z 0 -1 withscores", "[\"a\", \"1\", \"c\", \"3\", \"b\", \"6\", \"d\", \"7\", \"fresh\", \"7\", \"e\", \"9\", \"newgt\", \"50\", \"newlt\", \"100\"]"},
  });
}

TEST_CASE("scores print as %.17g with inf/-inf, -0 reads back as 0 from a small set",
          "[commands][zset]") {
  RunSteps({
      {"zadd z 0x10 hex inf i +inf pi -inf ni Infinity inf2 1e3 e3 -0 mz 0.1 p1", "8", "zadd z 0x10 hex inf i +inf pi -inf ni Infinity inf2 1e3 e3 -0 mz 0.1 p1"},
      {"zrange z 0 -1 withscores", "[\"ni\", \"-inf\", \"mz\", \"0\", \"p1\", \"0.10000000000000001\", \"hex\", \"16\", \"e3\", \"1000\", \"i\", \"inf\", \"inf2\", \"inf\", \"pi\", \"inf\"]"},
      {"zscore z mz", "\"0\""},
      {"zscore z hex", "\"16\""},
      {"zscore z i", "\"inf\""},
      {"zscore z ni", "\"-inf\""},
      {"zscore z p1", "\"0.10000000000000001\""},
      {"zscore z nomem", "(nil)"},
      {"zscore nokey a", "(nil)"},
      {"zscore s a", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"zadd fz 1e-5 a 123456789.123 b 9007199254740993 c 1.1 d 1.5 e 3 f 1e20 g -2.5e-3 h", "8", "zadd fz 1e-5 a 123456789.123 b 9007199254740993 c 1.1 d 1.5 e 3 f 1e20 g -2.5e-3 h"},
      {"zrange fz 0 -1 withscores", "[\"h\", \"-0.0025000000000000001\", \"a\", \"1.0000000000000001e-05\", \"d\", \"1.1000000000000001\", \"e\", \"1.5\", \"f\", \"3\", \"b\", \"123456789.123\", \"c\", \"9007199254740992\", \"g\", \"1e+20\"]"},
      {"zincrby nz -0 m", "\"-0\"", "zincrby nz -0 m"},
      {"zscore nz m", "\"0\""},
      {"zincrby nz 1.5 m", "\"1.5\"", "zincrby nz 1.5 m"},
      {"zincrby nz 1e20 m", "\"1e+20\"", "zincrby nz 1e20 m"},
      {"zincrby nz -1e20 m", "\"0\"", "zincrby nz -1e20 m"},
      {"zadd nz -0 m", "0"},
      {"zscore nz m", "\"0\""},
      {"zadd nz ch -0 m", "0"},
      {"zincrby nz 0.1 p", "\"0.10000000000000001\"", "zincrby nz 0.1 p"},
      {"zincrby nz 0.2 p", "\"0.30000000000000004\"", "zincrby nz 0.2 p"},
  });
}

TEST_CASE("ZINCRBY: NaN error, options parsed from its arguments, no-op increments",
          "[commands][zset]") {
  RunSteps({
      {"zincrby z 1 a", "\"1\"", "zincrby z 1 a"},
      {"zincrby z 2.5 a", "\"3.5\"", "zincrby z 2.5 a"},
      {"zincrby z 0 a", "\"3.5\""},
      {"zincrby z inf a", "\"inf\"", "zincrby z inf a"},
      {"zincrby z 1 a", "\"inf\""},
      {"zincrby z -inf a", "-ERR resulting score is not a number (NaN)"},
      {"zscore z a", "\"inf\""},
      {"zincrby z abc a", "-ERR value is not a valid float"},
      {"zincrby z nan a", "-ERR value is not a valid float"},
      {"zincrby z \"\" a", "-ERR value is not a valid float"},
      {"zincrby s 1 a", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"zincrby s abc a", "-ERR value is not a valid float"},
      {"zincrby z nx 5", "-ERR syntax error"},
      {"zincrby z incr 5", "-ERR syntax error"},
      {"zincrby z ch ch", "-ERR syntax error"},
      {"zincrby z 1 nx", "\"1\"", "zincrby z 1 nx"},
      {"zincrby z 1", "-ERR wrong number of arguments for 'zincrby' command"},
      {"zincrby z 1 a b", "-ERR wrong number of arguments for 'zincrby' command"},
      {"zrange z 0 -1 withscores", "[\"nx\", \"1\", \"a\", \"inf\"]"},
  });
}

TEST_CASE("ZRANGE by rank: clamping, REV, WITHSCORES, option errors", "[commands][zset]") {
  RunSteps({
      {"zadd z 1 a 2 b 3 c 4 d 5 e 3 c2", "6", "zadd z 1 a 2 b 3 c 4 d 5 e 3 c2"},
      {"zrange z 0 -1", "[\"a\", \"b\", \"c\", \"c2\", \"d\", \"e\"]"},
      {"zrange z 0 -1 withscores", "[\"a\", \"1\", \"b\", \"2\", \"c\", \"3\", \"c2\", \"3\", \"d\", \"4\", \"e\", \"5\"]"},
      {"zrange z 0 -1 WITHSCORES withscores", "[\"a\", \"1\", \"b\", \"2\", \"c\", \"3\", \"c2\", \"3\", \"d\", \"4\", \"e\", \"5\"]"},
      {"zrange z 1 2 rev", "[\"d\", \"c2\"]"},
      {"zrange z 0 0 REV withscores", "[\"e\", \"5\"]"},
      {"zrange z -2 -1", "[\"d\", \"e\"]"},
      {"zrange z -2 -1 rev", "[\"b\", \"a\"]"},
      {"zrange z 4 2", "[]"},
      {"zrange z 10 20", "[]"},
      {"zrange z -100 100", "[\"a\", \"b\", \"c\", \"c2\", \"d\", \"e\"]"},
      {"zrange z -9223372036854775808 9223372036854775807", "[\"a\", \"b\", \"c\", \"c2\", \"d\", \"e\"]"},
      {"zrange z a 1", "-ERR value is not an integer or out of range"},
      {"zrange z 1.5 2", "-ERR value is not an integer or out of range"},
      {"zrange nokey a 1", "-ERR value is not an integer or out of range"},
      {"zrange s a 1", "-ERR value is not an integer or out of range"},
      {"zrange s 0 1", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"zrange nokey 0 1", "[]"},
      {"zrange z 0 -1 limit 0 1", "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"},
      {"zrange z 0 -1 limit 0 -1", "[\"a\", \"b\", \"c\", \"c2\", \"d\", \"e\"]"},
      {"zrange z 0 -1 limit 5 -1", "[\"a\", \"b\", \"c\", \"c2\", \"d\", \"e\"]"},
      {"zrange z 0 -1 limit 0 -2", "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"},
      {"zrange z 0 -1 limit 0", "-ERR syntax error"},
      {"zrange z 0 -1 limit a b", "-ERR value is not an integer or out of range"},
      {"zrange z 0 -1 limit a", "-ERR syntax error"},
      {"zrange z 0 -1 withscores limit 0 1", "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"},
      {"zrange nokey 0 -1 limit 0 1", "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"},
      {"zrange z 0 -1 rev rev", "-ERR syntax error"},
      {"zrange z 0 -1 foo", "-ERR syntax error"},
      {"zrange z 0 -1 byscore bylex", "-ERR syntax error"},
      {"zrange z 0 -1 byscore byscore", "-ERR syntax error"},
      {"zrange z 0", "-ERR wrong number of arguments for 'zrange' command"},
  });
}

TEST_CASE("ZRANGE BYSCORE: exclusive bounds, infinities, REV bound order, LIMIT",
          "[commands][zset]") {
  RunSteps({
      {"zadd z 1 a 2 b 3 c 4 d 5 e 3 c2", "6", "zadd z 1 a 2 b 3 c 4 d 5 e 3 c2"},
      {"zrange z 0 -1 limit 0 1 byscore", "[]"},
      {"zrange z 1 3 byscore", "[\"a\", \"b\", \"c\", \"c2\"]"},
      {"zrange z 1 3 byscore withscores", "[\"a\", \"1\", \"b\", \"2\", \"c\", \"3\", \"c2\", \"3\"]"},
      {"zrange z (1 3 byscore", "[\"b\", \"c\", \"c2\"]"},
      {"zrange z 1 (3 byscore", "[\"a\", \"b\"]"},
      {"zrange z (1 (3 byscore", "[\"b\"]"},
      {"zrange z 3 1 byscore rev", "[\"c2\", \"c\", \"b\", \"a\"]"},
      {"zrange z 1 3 byscore rev", "[]"},
      {"zrange z 3 1 byscore rev limit 1 2 withscores", "[\"c\", \"3\", \"b\", \"2\"]"},
      {"zrange z -inf +inf byscore limit 2 2", "[\"c\", \"c2\"]"},
      {"zrange z -inf +inf byscore limit 2 -1", "[\"c\", \"c2\", \"d\", \"e\"]"},
      {"zrange z -inf +inf byscore limit -1 2", "[]"},
      {"zrange z -inf +inf byscore limit 0 0", "[]"},
      {"zrange z -inf +inf byscore limit 10 2", "[]"},
      {"zrange z -inf +inf byscore limit 5 1", "[\"e\"]"},
      {"zrange z -inf +inf byscore limit 6 1", "[]"},
      {"zrange z -inf +inf rev byscore limit 1 2", "[]"},
      {"zrange z abc 1 byscore", "-ERR min or max is not a float"},
      {"zrange z 1 [3 byscore", "-ERR min or max is not a float"},
      {"zrange z \"\" \"\" byscore", "[]"},
      {"zrange z \" 1\" 3 byscore", "[\"a\", \"b\", \"c\", \"c2\"]"},
      {"zrange z \" 1\" \"3 \" byscore", "-ERR min or max is not a float"},
      {"zrange z ( 3 byscore", "[\"a\", \"b\", \"c\", \"c2\"]"},
      {"zrange z 0x1 0x3 byscore", "[\"a\", \"b\", \"c\", \"c2\"]"},
      {"zrange z 1e0 nan byscore", "-ERR min or max is not a float"},
      {"zrange z -inf inf byscore", "[\"a\", \"b\", \"c\", \"c2\", \"d\", \"e\"]"},
      {"zrange z -Infinity +Infinity byscore", "[\"a\", \"b\", \"c\", \"c2\", \"d\", \"e\"]"},
      {"zrange z 1e999 -1e999 byscore rev", "[\"e\", \"d\", \"c2\", \"c\", \"b\", \"a\"]"},
      {"zrange z 3 3 byscore", "[\"c\", \"c2\"]"},
      {"zrange z (3 3 byscore", "[]"},
      {"zrange z 3 (3 byscore", "[]"},
      {"zrange z 5 1 byscore", "[]"},
      {"zrange nokey x y byscore", "-ERR min or max is not a float"},
      {"zrange s 0 1 byscore", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"zrange s x y byscore", "-ERR min or max is not a float"},
      {"zrange z 1 3 byscore limit 0 1 limit 1 1", "[\"b\"]"},
      {"zrange z 1 3 byscore limit 0 x", "-ERR value is not an integer or out of range"},
  });
}

TEST_CASE("ZRANGE BYLEX: bounds, REV, LIMIT, and the walk over mixed scores",
          "[commands][zset]") {
  RunSteps({
      {"zadd z 0 a 0 b 0 c 0 d 0 e", "5", "zadd z 0 a 0 b 0 c 0 d 0 e"},
      {"zrange z [a [c bylex", "[\"a\", \"b\", \"c\"]"},
      {"zrange z - + bylex", "[\"a\", \"b\", \"c\", \"d\", \"e\"]"},
      {"zrange z (a [c bylex", "[\"b\", \"c\"]"},
      {"zrange z (a (c bylex", "[\"b\"]"},
      {"zrange z [c (a bylex rev", "[\"c\", \"b\"]"},
      {"zrange z + - bylex rev", "[\"e\", \"d\", \"c\", \"b\", \"a\"]"},
      {"zrange z - + bylex limit 1 2", "[\"b\", \"c\"]"},
      {"zrange z + - bylex rev limit 1 2", "[\"d\", \"c\"]"},
      {"zrange z [b [b bylex", "[\"b\"]"},
      {"zrange z (b [b bylex", "[]"},
      {"zrange z [c [a bylex", "[]"},
      {"zrange z + + bylex", "[]"},
      {"zrange z - - bylex", "[]"},
      {"zrange z [ + bylex", "[\"a\", \"b\", \"c\", \"d\", \"e\"]"},
      {"zrange z a c bylex", "-ERR min or max not valid string range item"},
      {"zrange z - \"\" bylex", "-ERR min or max not valid string range item"},
      {"zrange z -a + bylex", "-ERR min or max not valid string range item"},
      {"zrange z - + bylex withscores", "-ERR syntax error, WITHSCORES not supported in combination with BYLEX"},
      {"zrange nokey 0 -1 bylex", "-ERR min or max not valid string range item"},
      {"zrange nokey - + bylex", "[]"},
      {"zrange s - + bylex", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"zadd m 1 b 2 a 3 d 4 c", "4", "zadd m 1 b 2 a 3 d 4 c"},
      {"zrange m - + bylex", "[\"b\", \"a\", \"d\", \"c\"]"},
      {"zrange m [a [c bylex", "[\"b\", \"a\"]"},
      {"zrange m [b [c bylex", "[\"b\", \"a\"]"},
      {"zrange m [a [b bylex", "[\"b\", \"a\"]"},
      {"zrange m (a + bylex", "[\"b\", \"a\", \"d\", \"c\"]"},
      {"zrange m [c [a bylex rev", "[\"c\", \"d\", \"a\", \"b\"]"},
      {"zrange m + [b bylex rev", "[\"c\", \"d\"]"},
  });
}

TEST_CASE("ZRANGEBYSCORE: bounds, WITHSCORES and LIMIT in any order, fixed type/direction",
          "[commands][zset]") {
  RunSteps({
      {"zadd z 1 a 2 b 3 c 4 d 5 e", "5", "zadd z 1 a 2 b 3 c 4 d 5 e"},
      {"zrangebyscore z -inf +inf", "[\"a\", \"b\", \"c\", \"d\", \"e\"]"},
      {"zrangebyscore z \" 1\" 3", "[\"a\", \"b\", \"c\"]"},
      {"zrangebyscore z (1 (4 withscores", "[\"b\", \"2\", \"c\", \"3\"]"},
      {"zrangebyscore z 2 +inf limit 1 2", "[\"c\", \"d\"]"},
      {"zrangebyscore z 2 +inf withscores limit 1 2", "[\"c\", \"3\", \"d\", \"4\"]"},
      {"zrangebyscore z 2 +inf LIMIT 1 2 WITHSCORES", "[\"c\", \"3\", \"d\", \"4\"]"},
      {"zrangebyscore z 2 +inf limit 1 -1", "[\"c\", \"d\", \"e\"]"},
      {"zrangebyscore z 2 +inf limit 1", "-ERR syntax error"},
      {"zrangebyscore z 5 1", "[]"},
      {"zrangebyscore z 3 3", "[\"c\"]"},
      {"zrangebyscore z (3 3", "[]"},
      {"zrangebyscore z [1 3", "-ERR min or max is not a float"},
      {"zrangebyscore z abc 3", "-ERR min or max is not a float"},
      {"zrangebyscore z 1 abc", "-ERR min or max is not a float"},
      {"zrangebyscore nokey abc 3", "-ERR min or max is not a float"},
      {"zrangebyscore s abc 3", "-ERR min or max is not a float"},
      {"zrangebyscore s 1 3", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"zrangebyscore nokey 1 3", "[]"},
      {"zrangebyscore z 1 3 rev", "-ERR syntax error"},
      {"zrangebyscore z 1 3 byscore", "-ERR syntax error"},
      {"zrangebyscore z 1 3 bylex", "-ERR syntax error"},
      {"zrangebyscore z 1 3 limit x 1", "-ERR value is not an integer or out of range"},
      {"zrangebyscore z 1 3 limit 0 x", "-ERR value is not an integer or out of range"},
      {"zrangebyscore z 1 3 foo", "-ERR syntax error"},
      {"zrangebyscore z 1", "-ERR wrong number of arguments for 'zrangebyscore' command"},
      {"zrangebyscore z 1 3 limit 9223372036854775807 1", "[]"},
      {"zrangebyscore z 1 3 limit -9223372036854775808 1", "[]"},
      {"zrangebyscore z 1 3 limit 0 -9223372036854775808", "[\"a\", \"b\", \"c\"]"},
  });
}

TEST_CASE("ZREM, ZCARD, ZRANK", "[commands][zset]") {
  RunSteps({
      {"zadd z 1 a 2 b 3 c 4 d 5 e", "5", "zadd z 1 a 2 b 3 c 4 d 5 e"},
      {"zrem z a zz a", "1", "zrem z a zz a"},
      {"zrem z zz", "0"},
      {"zrem nokey a", "0"},
      {"zrem s a", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"zrem z b c d e f", "4", "zrem z b c d e f"},
      {"?z", "0"},
      {"zadd z 1 a 2 b", "2", "zadd z 1 a 2 b"},
      {"zrem z a b a", "2", "zrem z a b a"},
      {"?z", "0"},
      {"zadd z 1 a 2 b 2 c", "3", "zadd z 1 a 2 b 2 c"},
      {"zcard z", "3"},
      {"zcard nokey", "0"},
      {"zcard s", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"zrank z a", "0"},
      {"zrank z c", "2"},
      {"zrank z zz", "(nil)"},
      {"zrank nokey a", "(nil)"},
      {"zrank s a", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"zrank z a withscore", "-ERR wrong number of arguments for 'zrank' command"},
      {"zrem z", "-ERR wrong number of arguments for 'zrem' command"},
  });
}

TEST_CASE("a sorted set past 128 members or with a member over 64 bytes keeps -0 scores",
          "[commands][zset]") {
  // Redis's listpack stores integral scores as integers (so -0 becomes 0); the skiplist it
  // converts to keeps the double. The conversion is one-way.
  Server s;
  std::string zadd = "zadd big";
  for (int i = 1; i <= 128; ++i) zadd += " " + std::to_string(i) + " m" + std::to_string(i);
  CHECK(Run(s, zadd) == "128");
  CHECK(Run(s, "zadd big -0 m1") == "0");  // An update: still a listpack, so it stores 0.
  CHECK(Run(s, "zscore big m1") == "\"0\"");
  CHECK(Run(s, "zadd big -0 z128") == "1");  // The 129th member converts the set first.
  CHECK(Run(s, "zscore big z128") == "\"-0\"");
  CHECK(Run(s, "zscore big m1") == "\"0\"");
  CHECK(Run(s, "zadd big -0 z129") == "1");
  CHECK(Run(s, "zincrby big -0 z130") == "\"-0\"");
  CHECK(Run(s, "zscore big z130") == "\"-0\"");
  CHECK(Run(s, "zrange big 0 4 withscores") ==
        "[\"m1\", \"0\", \"z128\", \"-0\", \"z129\", \"-0\", \"z130\", \"-0\", \"m2\", \"2\"]");
  std::string zrem = "zrem big";
  for (int i = 2; i <= 128; ++i) zrem += " m" + std::to_string(i);
  CHECK(Run(s, zrem) == "127");
  CHECK(Run(s, "zcard big") == "4");
  CHECK(Run(s, "zadd big -0 again") == "1");  // Still a skiplist after shrinking.
  CHECK(Run(s, "zscore big again") == "\"-0\"");

  const std::string m64(64, 'm');
  const std::string m65(65, 'm');
  CHECK(Run(s, "zadd long -0 " + m64) == "1");
  CHECK(Run(s, "zrange long 0 -1 withscores") == "[\"" + m64 + "\", \"0\"]");
  CHECK(Run(s, "zadd long2 -0 " + m65) == "1");
  CHECK(Run(s, "zrange long2 0 -1 withscores") == "[\"" + m65 + "\", \"-0\"]");
  // a is stored while the set is still a listpack; the long member then converts it.
  CHECK(Run(s, "zadd long3 -0 a 1 " + m65) == "2");
  CHECK(Run(s, "zadd long3 -0 b") == "1");
  CHECK(Run(s, "zrange long3 0 -1 withscores") ==
        "[\"a\", \"0\", \"b\", \"-0\", \"" + m65 + "\", \"1\"]");
}

// --- RESP3 (scripts after redis.setresp(3)) -------------------------------------------------

TEST_CASE("RESP3: HGETALL is a map, scores are doubles, WITHSCORES pairs are nested arrays",
          "[commands][resp3]") {
  // Checked live with HELLO 3: ZRANGE WITHSCORES gives *3 *2 $1 a ,1.5 ...; ZSCORE gives
  // ,1.5; a missing HGETALL gives %0; LPOP nokey 2 gives _.
  Server s;
  CHECK(Run(s, "zadd z 1.5 a 2 b inf c") == "3");
  CHECK(RunResp3(s, "zrange z 0 -1 withscores") ==
        "[[\"a\", (double) 1.5], [\"b\", (double) 2], [\"c\", (double) inf]]");
  CHECK(RunResp3(s, "zrange z 0 -1") == "[\"a\", \"b\", \"c\"]");
  CHECK(RunResp3(s, "zrange z 5 6 withscores") == "[]");
  CHECK(RunResp3(s, "zrange nokey 0 -1 withscores") == "[]");
  CHECK(RunResp3(s, "zrangebyscore z -inf +inf withscores limit 1 5") ==
        "[[\"b\", (double) 2], [\"c\", (double) inf]]");
  CHECK(RunResp3(s, "zscore z a") == "(double) 1.5");
  CHECK(RunResp3(s, "zscore z c") == "(double) inf");
  CHECK(RunResp3(s, "zscore z nomem") == "(nil)");
  Effects fx;
  CHECK(RunResp3(s, "zincrby z 1 a", &fx) == "(double) 2.5");
  CHECK(Render(fx) == "zincrby z 1 a");
  CHECK(RunResp3(s, "zadd z incr 1 a") == "(double) 3.5");
  CHECK(RunResp3(s, "zadd z incr nx 1 a") == "(nil)");
  CHECK(RunResp3(s, "hset h f v g w") == "2");
  CHECK(RunResp3(s, "hgetall h") == "%{\"f\", \"v\", \"g\", \"w\"}");
  CHECK(RunResp3(s, "hgetall nokey") == "%{}");
  CHECK(RunResp3(s, "hkeys h") == "[\"f\", \"g\"]");
  CHECK(RunResp3(s, "hmget h f x") == "[\"v\", (nil)]");
  CHECK(RunResp3(s, "lpop nokey 2") == "(nil array)");
  CHECK(RunResp3(s, "lpop nokey") == "(nil)");
  // The RESP2 views of the same replies.
  CHECK(Run(s, "zscore z a") == "\"3.5\"");
  CHECK(Run(s, "hgetall h") == "[\"f\", \"v\", \"g\", \"w\"]");
}

// --- strings --------------------------------------------------------------------------------

TEST_CASE("MSET/MSETNX: arity checked by the command, any type overwritten, NX sets all or none",
          "[commands][strings]") {
  RunSteps({
      {"mset a 1 b 2", "+OK", "mset a 1 b 2"},
      {"mset a", "-ERR wrong number of arguments for 'mset' command"},
      {"mset a 1 b", "-ERR wrong number of arguments for 'mset' command"},
      {"msetnx a 1 b", "-ERR wrong number of arguments for 'msetnx' command"},
      {"msetnx a 1 c 3", "0"},
      {"?c", "0"},
      {"msetnx c 3 d 4", "1", "msetnx c 3 d 4"},
      {"hset h f v", "1", "hset h f v"},
      {"mset h x", "+OK", "mset h x"},
      {"get h", "\"x\""},
      {"mset k 1 k 2", "+OK", "mset k 1 k 2"},
      {"get k", "\"2\""},
  });
}

TEST_CASE("MSET/MSETNX look every key up: an expired one replicates its DEL first",
          "[commands][strings][expiry]") {
  // Live: MSET e 1 f 2 on an expired e sent MULTI / DEL e / mset e 1 f 2 / EXEC.
  Server s;
  CHECK(Run(s, "set e v") == "+OK");
  CHECK(Run(s, "set g v") == "+OK");
  s.keyspace().Find("e")->expire_at_ms = kNowMs - 1;
  s.keyspace().Find("g")->expire_at_ms = kNowMs - 1;
  Effects fx;
  CHECK(Run(s, "mset e 1 f 2", &fx) == "+OK");
  CHECK(Render(fx) == "DEL e | mset e 1 f 2");
  Effects nx;
  CHECK(Run(s, "msetnx g 1 h 2", &nx) == "1");
  CHECK(Render(nx) == "DEL g | msetnx g 1 h 2");
  CHECK(s.keyspace().Find("e")->expire_at_ms == lockstep::kNoExpiry);
}

TEST_CASE("SETEX/PSETEX replicate as SET PXAT, GETDEL as DEL, GETRANGE never",
          "[commands][strings]") {
  RunSteps({
      {"setex k 10 v", "+OK", "SET k v PXAT 1010000"},
      {"psetex k 500 v", "+OK", "SET k v PXAT 1000500"},
      {"setex k 0 v", "-ERR invalid expire time in 'setex' command"},
      {"PSETEX k -1 v", "-ERR invalid expire time in 'psetex' command"},
      {"setex k x v", "-ERR value is not an integer or out of range"},
      {"getdel k", "\"v\"", "DEL k"},
      {"getdel k", "(nil)"},
      {"?k", "0"},
      {"getrange s 0 -1", "\"x\""},
      {"getrange s -1 -2", "\"\""},
      {"getrange nokey 0 -1", "\"\""},
      {"getrange s a 0", "-ERR value is not an integer or out of range"},
      {"substr s 0 0", "\"x\""},
      {"getdel s", "\"x\"", "DEL s"},
      {"set kk v", "+OK", "set kk v"},
      {"set kk w exat 1 get", "\"v\"", "SET kk w PXAT 1000"},
  });
}

// --- sets -----------------------------------------------------------------------------------

TEST_CASE("SADD/SREM: counts, only changes replicate, an emptied set is deleted",
          "[commands][set]") {
  RunSteps({
      {"sadd t 3 1 2 1", "3", "sadd t 3 1 2 1"},
      {"sadd t 1", "0"},
      {"smembers t", "[\"1\", \"2\", \"3\"]"},
      {"scard t", "3"},
      {"sismember t 2", "1"},
      {"sismember t 02", "0"},
      {"srem t 9", "0"},
      {"srem t 1 2 3 4", "3", "srem t 1 2 3 4"},
      {"?t", "0"},
      {"srem t 1", "0"},
      {"smembers t", "[]"},
      {"sadd s a", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"srem s a", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"smembers s", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"sadd u b a", "2", "sadd u b a"},
      {"type u", "+set"},
      {"get u", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
  });
}

// Not a transcript: the intset's numeric order is Redis's, but a hash table's byte order is the
// emulator's own (Redis's depends on its hash seed; docs/fidelity.md, "Sets"). This pins it.
TEST_CASE("SMEMBERS: an intset in numeric order, a hash table (kept once made) in byte order",
          "[commands][set]") {
  Server s;
  CHECK(Run(s, "sadd s 10 9 -1 1") == "4");
  CHECK(Run(s, "smembers s") == "[\"-1\", \"1\", \"9\", \"10\"]");
  CHECK(Run(s, "sadd s a") == "1");
  CHECK(Run(s, "smembers s") == "[\"-1\", \"1\", \"10\", \"9\", \"a\"]");
  CHECK(Run(s, "srem s a") == "1");
  // Redis never turns a hash table back into an intset.
  CHECK(Run(s, "smembers s") == "[\"-1\", \"1\", \"10\", \"9\"]");
  CHECK(Run(s, "sadd t 01") == "1");  // Not string2ll's form: a hash table from the start.
  CHECK(Run(s, "sadd t 2 10") == "2");
  CHECK(Run(s, "smembers t") == "[\"01\", \"10\", \"2\"]");
  // RESP3 (a script after redis.setresp(3)): a set, empty for a missing key.
  CHECK(RunResp3(s, "smembers s") == "~{\"-1\", \"1\", \"10\", \"9\"}");
  CHECK(RunResp3(s, "smembers nokey") == "~{}");
}

// --- sorted-set ranges ------------------------------------------------------------------------

TEST_CASE("ZCOUNT, ZREVRANGE, ZREMRANGEBYSCORE: ranges parsed first, only removals replicate",
          "[commands][zset]") {
  RunSteps({
      {"zadd z 1 a 2 b 3 c", "3", "zadd z 1 a 2 b 3 c"},
      {"zcount z (1 3", "2"},
      {"zcount z 3 (3", "0"},
      {"zcount nokey 0 1", "0"},
      {"zcount s a 1", "-ERR min or max is not a float"},
      {"zcount s 0 1", "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"zrevrange z 0 1 withscores", "[\"c\", \"3\", \"b\", \"2\"]"},
      {"zrevrange z -1 -1", "[\"a\"]"},
      {"zrevrange z 0 -1 limit 0 1",
       "-ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX"},
      {"zrevrange z 0 -1 rev", "-ERR syntax error"},
      {"zremrangebyscore z 5 6", "0"},
      {"zremrangebyscore z (1 +inf", "2", "zremrangebyscore z (1 +inf"},
      {"zremrangebyscore z x 1", "-ERR min or max is not a float"},
      {"zremrangebyscore s 0 1",
       "-WRONGTYPE Operation against a key holding the wrong kind of value"},
      {"zremrangebyscore z -inf +inf", "1", "zremrangebyscore z -inf +inf"},
      {"?z", "0"},
      {"zremrangebyscore z -inf +inf", "0"},
  });
}

// --- expiry interplay -----------------------------------------------------------------------

TEST_CASE("a write to a lazily expired key replicates DEL first, then the command",
          "[commands][expiry]") {
  // Live: HSET h g w on an expired h sent MULTI / DEL h / hset h g w / EXEC to the replica.
  Server s;
  CHECK(Run(s, "hset h f v") == "1");
  CHECK(Run(s, "rpush l a") == "1");
  s.keyspace().Find("h")->expire_at_ms = kNowMs - 1;
  s.keyspace().Find("l")->expire_at_ms = kNowMs - 1;
  Effects fx;
  CHECK(Run(s, "hset h g w", &fx) == "1");
  CHECK(Render(fx) == "DEL h | hset h g w");
  CHECK(Run(s, "hgetall h") == "[\"g\", \"w\"]");
  Effects pop;
  CHECK(Run(s, "lpop l", &pop) == "(nil)");
  CHECK(Render(pop) == "DEL l");
}

// --- KEYS/SCAN globs, SCAN arguments, SELECT (replies recorded from redis-server 7.0.15; the
// same cases run live in core/testdata/conformance/keys-limits.txt) -------------------------

TEST_CASE("KEYS and SCAN match globs as stringmatchlen does, hostile ones included",
          "[commands][keys]") {
  Server s;
  const std::string as(60, 'a');
  std::string pathological;
  for (int i = 0; i < 25; ++i) pathological += "*a";
  pathological += "*b";
  Run(s, "set " + as + " 1");
  // Without stringmatchlen's early exit this takes about C(60, 25) steps.
  CHECK(Run(s, "keys " + pathological) == "[]");
  CHECK(Run(s, "scan 0 match " + pathological + " count 100") == "[\"0\", []]");
  Run(s, "set " + as + "b 1");
  CHECK(Run(s, "keys " + pathological) == "[\"" + as + "b\"]");

  // A '*' nested more than 1000 deep fails (Debian's CVE-2024-31228 backport).
  Server deep;
  Run(deep, "set " + std::string(1001, 'a') + " 1");
  std::string stars_1001;
  for (int i = 0; i < 1001; ++i) stars_1001 += "*a";
  CHECK(Run(deep, "keys " + stars_1001) == "[]");
  CHECK(Run(deep, "keys " + stars_1001.substr(0, 1990)) ==
        "[\"" + std::string(1001, 'a') + "\"]");

  // An empty string matches no non-empty pattern; KEYS * lists everything anyway.
  Server empty;
  CHECK(empty.Execute({"set", "", "1"}, kNowMs, nullptr).Debug() == "+OK");
  CHECK(Run(empty, "keys *") == "[\"\"]");
  CHECK(Run(empty, "keys **") == "[]");

  // Sets: "[^]" is any one character, an unterminated set ends with the pattern.
  Server sets;
  for (const char* k : {"a", "^", "]", "ab"}) Run(sets, std::string("set ") + k + " 1");
  CHECK(Run(sets, "keys [^]") == "[\"]\", \"^\", \"a\"]");
  CHECK(Run(sets, "keys [^]]") == "[]");
  CHECK(Run(sets, "keys [a") == "[\"a\"]");
  CHECK(Run(sets, "keys a[") == "[]");
}

TEST_CASE("SCAN parses its cursor with strtoul and Redis's extra checks", "[commands][keys]") {
  Server s;
  CHECK(s.Execute({"scan", ""}, kNowMs, nullptr).Debug() == "[\"0\", []]");
  CHECK(Run(s, "scan -1") == "[\"0\", []]");
  CHECK(Run(s, "scan 18446744073709551615") == "[\"0\", []]");
  CHECK(Run(s, "scan 18446744073709551616") == "-ERR invalid cursor");
  CHECK(s.Execute({"scan", " 0"}, kNowMs, nullptr).Debug() == "-ERR invalid cursor");
  CHECK(s.Execute({"scan", "0 "}, kNowMs, nullptr).Debug() == "-ERR invalid cursor");
  CHECK(Run(s, "scan 0x0") == "-ERR invalid cursor");
  Run(s, "set k 1");
  CHECK(Run(s, "scan 0 count 9223372036854775807") == "[\"0\", [\"k\"]]");
  CHECK(Run(s, "scan 0 count 9223372036854775808") ==
        "-ERR value is not an integer or out of range");
}

TEST_CASE("SELECT: database 0, and Redis's errors for the others", "[commands][keys]") {
  Server s;
  CHECK(Run(s, "select 0") == "+OK");
  CHECK(Run(s, "select 16") == "-ERR DB index is out of range");
  CHECK(Run(s, "select -1") == "-ERR DB index is out of range");
  CHECK(Run(s, "select 2147483647") == "-ERR DB index is out of range");
  CHECK(Run(s, "select 2147483648") ==
        "-ERR value is out of range, value must between -2147483648 and 2147483647");
  CHECK(Run(s, "select abc") == "-ERR value is not an integer or out of range");
  CHECK(Run(s, "select 01") == "-ERR value is not an integer or out of range");
  // The emulator keeps one database: Redis answers OK here.
  CHECK(Run(s, "select 1").rfind("-ERR 'select' of a database other than 0 is not provided", 0) ==
        0);
  CHECK(Run(s, "eval \"return redis.pcall('select', 16)\" 0") ==
        "-ERR DB index is out of range");
}
