// Differential property test: rapidcheck generates sequences of commands and small Lua scripts
// over a tiny key space (so that type clashes, reentry and contention happen all the time),
// runs each sequence on a fresh emulated Server and on a live redis-server 7.0.15 started by
// this test, and requires identical replies, then identical final keyspaces.
//
// Time: the emulator's clock is the wall clock read just before each command, so expiries set
// with PX/EX land within a few milliseconds of the real server's. Values that depend on elapsed
// time (PTTL, and scripts returning PTTL, like Redisson's acquire on a held lock) are compared
// with a tolerance of kPttlToleranceMs; everything else must match exactly. Expiry times are
// either long (100 s) or in the past, so no key expires while a sequence runs.
//
// SMEMBERS replies are compared as sets (UnorderedReply): Redis lists a hash-table set in its
// hash seed's order. Left out on purpose: math.random (the live server's rand48 state carries
// over between sequences and shrinking runs), KEYS/SCAN with several results (Redis answers in
// hash order), and error({}) (it crashes Debian's redis-server 7.0.15).
#include <catch2/catch.hpp>
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <ostream>

#include "core/server.h"
#include "live/redis_client.h"
#include "live/redis_process.h"

namespace {

using lockstep::Argv;
using lockstep::Reply;

constexpr int64_t kPttlToleranceMs = 250;

struct Op {
  Argv argv;
  bool time_dependent = false;
};

std::ostream& operator<<(std::ostream& os, const Op& op) {
  for (size_t i = 0; i < op.argv.size(); ++i) {
    os << (i ? " " : "") << '"';
    for (char c : op.argv[i]) {
      if (c == '"' || c == '\\') os << '\\';
      if (c == '\n') {
        os << "\\n";
        continue;
      }
      os << c;
    }
    os << '"';
  }
  return os;
}

int64_t WallMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// --- generators -------------------------------------------------------------------------

const std::vector<std::string> kKeys = {"a", "b", "c", "h", "l", "z", "lock"};
const std::vector<std::string> kFields = {"f", "g", "owner-1:1", "owner-2:1"};
const std::vector<std::string> kValues = {"0",  "1",   "-1", "10", "x", "",  "1.5",
                                          "05", "+1", " 1", "9223372036854775807", "abc"};
const std::vector<std::string> kInts = {"0", "1", "-1", "2", "100", "-100", "9223372036854775807",
                                        "1.5", "abc", "05"};
const std::vector<std::string> kScores = {"0", "1", "1.5", "-2", "0.1", "inf", "-inf", "1e3",
                                          "abc", "2"};
// Score range bounds: exclusive ones too, and one that is not a float.
const std::vector<std::string> kBounds = {"-inf", "+inf", "0", "1", "(1", "2", "(2", "1.5", "x"};
// Set members: integers that keep a set an intset, and others that make it a hash table.
const std::vector<std::string> kMembers = {"1", "2", "10", "-1", "a", "b", "01", "owner-1:1"};

rc::Gen<std::string> Pick(const std::vector<std::string>& pool) { return rc::gen::elementOf(pool); }

// Redisson 3.13.6 acquire/unlock (see lua/rlock/v3.13.6/); kept inline so this test states
// exactly what it sends.
const char* kAcquire =
    "if (redis.call('exists', KEYS[1]) == 0) then "
    "redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); "
    "return nil; end; "
    "if (redis.call('hexists', KEYS[1], ARGV[2]) == 1) then "
    "redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); "
    "return nil; end; "
    "return redis.call('pttl', KEYS[1]);";
const char* kUnlock =
    "if (redis.call('hexists', KEYS[1], ARGV[3]) == 0) then return nil; end; "
    "local counter = redis.call('hincrby', KEYS[1], ARGV[3], -1); "
    "if (counter > 0) then redis.call('pexpire', KEYS[1], ARGV[2]); return 0; "
    "else redis.call('del', KEYS[1]); redis.call('publish', KEYS[2], ARGV[1]); return 1; end; "
    "return nil;";

// Lua expressions whose conversion to a Redis reply is the point of the test.
const std::vector<std::string> kLuaValues = {
    "3.99", "-3.99", "100.5", "1e20", "0/0", "1/0", "-1/0", "2^53", "2^63", "9007199254740993",
    "true", "false", "nil", "'str'", "''", "{1,2,nil,4}", "{ok='fine'}", "{err='MYERR bad'}",
    "{err=5}", "{ok=5}", "{1,{2,'x'},false,{ok='s'}}", "{a=1, 2}", "{double=0.1}",
    "tonumber(ARGV[1])", "ARGV[1]", "#ARGV", "redis.status_reply('ST')",
    "redis.error_reply('oops')", "redis.error_reply('CODE msg')", "redis.sha1hex(ARGV[1])",
    "type(redis.call('type', KEYS[1]))", "redis.call('type', KEYS[1]).ok",
    "math.floor(7.9)", "math.max(3, 9.5)", "string.rep('ab', 3)", "table.getn({1,2,3})",
    "unpack({5,6})", "tostring(nil)", "string.format('%s-%s', 'a', 'b')"};

// Lua number expressions passed as command arguments (formatted %.17g by both).
const std::vector<std::string> kLuaNumbers = {"0.1", "3.0", "1e17", "2^53+1", "123456789012345678",
                                              "-5", "7/2", "1e16", "-0.5", "100"};

rc::Gen<Argv> GenCommand() {
  
  using rc::gen::just;
  using rc::gen::oneOf;
  const auto key = Pick(kKeys);
  const auto field = Pick(kFields);
  const auto value = Pick(kValues);
  const auto integer = Pick(kInts);
  const auto score = Pick(kScores);
  auto cmd = [](std::initializer_list<std::string> fixed) { return Argv(fixed); };
  return oneOf(
      rc::gen::apply([=](std::string k) { return cmd({"GET", k}); }, key),
      rc::gen::apply([=](std::string k, std::string v, std::string opt) {
              Argv a = {"SET", k, v};
              if (opt == "EX" ) { a.push_back("EX"); a.push_back("100"); }
              else if (opt == "PX") { a.push_back("PX"); a.push_back("100000"); }
              else if (!opt.empty()) a.push_back(opt);
              return a;
            },
            key, value, rc::gen::elementOf(std::vector<std::string>{"", "NX", "XX", "GET", "EX", "PX", "KEEPTTL"})),
      rc::gen::apply([=](std::string k, std::string v) { return cmd({"SETNX", k, v}); }, key, value),
      rc::gen::apply([=](std::string k, std::string v) { return cmd({"GETSET", k, v}); }, key, value),
      rc::gen::apply([=](std::string k) { return cmd({"INCR", k}); }, key),
      rc::gen::apply([=](std::string k, std::string n) { return cmd({"INCRBY", k, n}); }, key, integer),
      rc::gen::apply([=](std::string k, std::string n) { return cmd({"DECRBY", k, n}); }, key, integer),
      rc::gen::apply([=](std::string k, std::string j) { return cmd({"EXISTS", k, j}); }, key, key),
      rc::gen::apply([=](std::string k) { return cmd({"DEL", k}); }, key),
      rc::gen::apply([=](std::string k) { return cmd({"TYPE", k}); }, key),
      rc::gen::apply([=](std::string k, std::string opt) {
              Argv a = {"EXPIRE", k, "100"};
              if (!opt.empty()) a.push_back(opt);
              return a;
            },
            key, rc::gen::elementOf(std::vector<std::string>{"", "NX", "XX", "GT", "LT", "BAD"})),
      rc::gen::apply([=](std::string k, std::string t) { return cmd({"PEXPIRE", k, t}); }, key,
            rc::gen::elementOf(std::vector<std::string>{"0", "-5", "200000", "1.5"})),
      rc::gen::apply([=](std::string k) { return cmd({"PERSIST", k}); }, key),
      rc::gen::apply([=](std::string k) { return cmd({"TTL", k}); }, key),
      rc::gen::apply([=](std::string k, std::string f, std::string v) { return cmd({"HSET", k, f, v}); }, key, field, value),
      rc::gen::apply([=](std::string k, std::string f) { return cmd({"HGET", k, f}); }, key, field),
      rc::gen::apply([=](std::string k, std::string f) { return cmd({"HEXISTS", k, f}); }, key, field),
      rc::gen::apply([=](std::string k, std::string f, std::string n) { return cmd({"HINCRBY", k, f, n}); }, key, field, integer),
      rc::gen::apply([=](std::string k, std::string f) { return cmd({"HDEL", k, f}); }, key, field),
      rc::gen::apply([=](std::string k) { return cmd({"HLEN", k}); }, key),
      rc::gen::apply([=](std::string k) { return cmd({"HGETALL", k}); }, key),
      rc::gen::apply([=](std::string k, std::string v, std::string w) { return cmd({"RPUSH", k, v, w}); }, key, value, value),
      rc::gen::apply([=](std::string k, std::string v) { return cmd({"LPUSH", k, v}); }, key, value),
      rc::gen::apply([=](std::string k) { return cmd({"LPOP", k}); }, key),
      rc::gen::apply([=](std::string k, std::string n) { return cmd({"RPOP", k, n}); }, key, integer),
      rc::gen::apply([=](std::string k, std::string i) { return cmd({"LINDEX", k, i}); }, key, integer),
      rc::gen::apply([=](std::string k, std::string i, std::string j) { return cmd({"LRANGE", k, i, j}); }, key, integer, integer),
      rc::gen::apply([=](std::string k, std::string n, std::string v) { return cmd({"LREM", k, n, v}); }, key, integer, value),
      rc::gen::apply([=](std::string k) { return cmd({"LLEN", k}); }, key),
      rc::gen::apply([=](std::string k, std::string opt, std::string s, std::string m) {
              Argv a = {"ZADD", k};
              if (!opt.empty()) a.push_back(opt);
              a.push_back(s);
              a.push_back(m);
              return a;
            },
            key, rc::gen::elementOf(std::vector<std::string>{"", "NX", "XX", "GT", "LT", "CH", "INCR"}), score, field),
      rc::gen::apply([=](std::string k, std::string m) { return cmd({"ZSCORE", k, m}); }, key, field),
      rc::gen::apply([=](std::string k, std::string s, std::string m) { return cmd({"ZINCRBY", k, s, m}); }, key, score, field),
      rc::gen::apply([=](std::string k, std::string m) { return cmd({"ZREM", k, m}); }, key, field),
      rc::gen::apply([=](std::string k) { return cmd({"ZCARD", k}); }, key),
      rc::gen::apply([=](std::string k, std::string m) { return cmd({"ZRANK", k, m}); }, key, field),
      rc::gen::apply([=](std::string k) { return cmd({"ZRANGE", k, "0", "-1", "WITHSCORES"}); }, key),
      rc::gen::apply([=](std::string k, std::string lo, std::string hi) { return cmd({"ZRANGEBYSCORE", k, lo, hi}); }, key, score, score),
      rc::gen::apply([=](std::string k, std::string lo, std::string hi, std::string o, std::string n) {
              return cmd({"ZRANGEBYSCORE", k, lo, hi, "WITHSCORES", "LIMIT", o, n});
            }, key, Pick(kBounds), Pick(kBounds), integer, integer),
      rc::gen::apply([=](std::string k, std::string lo, std::string hi) { return cmd({"ZCOUNT", k, lo, hi}); }, key, Pick(kBounds), Pick(kBounds)),
      rc::gen::apply([=](std::string k, std::string lo, std::string hi) { return cmd({"ZREMRANGEBYSCORE", k, lo, hi}); }, key, Pick(kBounds), Pick(kBounds)),
      rc::gen::apply([=](std::string k, std::string i, std::string j, bool ws) {
              Argv a = {"ZREVRANGE", k, i, j};
              if (ws) a.push_back("WITHSCORES");
              return a;
            }, key, integer, integer, rc::gen::arbitrary<bool>()),
      // Strings: the multi-key and expiry forms.
      rc::gen::apply([=](std::string k, std::string v, std::string j, std::string w) { return cmd({"MSET", k, v, j, w}); }, key, value, key, value),
      rc::gen::apply([=](std::string k, std::string v, std::string j, std::string w) { return cmd({"MSETNX", k, v, j, w}); }, key, value, key, value),
      rc::gen::apply([=](std::string k, std::string v) { return cmd({"MSET", k, v, k}); }, key, value),
      rc::gen::apply([=](std::string k, std::string t, std::string v) { return cmd({"SETEX", k, t, v}); }, key,
            rc::gen::elementOf(std::vector<std::string>{"100", "0", "-1", "1.5", "x"}), value),
      rc::gen::apply([=](std::string k, std::string v) { return cmd({"PSETEX", k, "100000", v}); }, key, value),
      rc::gen::apply([=](std::string k) { return cmd({"GETDEL", k}); }, key),
      rc::gen::apply([=](std::string k, std::string i, std::string j) { return cmd({"GETRANGE", k, i, j}); }, key, integer, integer),
      rc::gen::apply([=](std::string k, std::string v, std::string opt) {
              Argv a = {"SET", k, v};
              if (opt == "EXAT") { a.push_back("EXAT"); a.push_back("1"); }
              else if (opt == "PXAT") { a.push_back("PXAT"); a.push_back("1000"); }
              else { a.push_back("KEEPTTL"); a.push_back("GET"); }
              return a;
            },
            key, value, rc::gen::elementOf(std::vector<std::string>{"EXAT", "PXAT", "KEEPTTL"})),
      // Sets.
      rc::gen::apply([=](std::string k, std::string m, std::string n) { return cmd({"SADD", k, m, n}); }, key, Pick(kMembers), Pick(kMembers)),
      rc::gen::apply([=](std::string k, std::string m) { return cmd({"SREM", k, m}); }, key, Pick(kMembers)),
      rc::gen::apply([=](std::string k) { return cmd({"SCARD", k}); }, key),
      rc::gen::apply([=](std::string k, std::string m) { return cmd({"SISMEMBER", k, m}); }, key, Pick(kMembers)),
      rc::gen::apply([=](std::string k) { return cmd({"SMEMBERS", k}); }, key),
      just(cmd({"PUBLISH", "ch", "hello"})),
      just(cmd({"PING"})));
}

rc::Gen<Op> GenScript() {
  
  using rc::gen::oneOf;
  const auto key = Pick(kKeys);
  const auto owner = rc::gen::elementOf(std::vector<std::string>{"owner-1:1", "owner-2:1"});
  return oneOf(
      // Redisson's lock, acquired and released by two owners on every key type.
      rc::gen::apply([=](std::string k, std::string who) {
              return Op{{"EVAL", kAcquire, "1", k, "30000", who}, true};
            }, key, owner),
      rc::gen::apply([=](std::string k, std::string who) {
              return Op{{"EVAL", kUnlock, "2", k, "redisson_lock__channel:{" + k + "}", "0", "30000", who}, false};
            }, key, owner),
      // Any command through redis.call and redis.pcall: every reply type goes Redis -> Lua ->
      // Redis, and every error gets the script suffix (call) or none (pcall).
      rc::gen::apply([](Argv c, bool pcall) {
              Argv a = {"EVAL", pcall ? "return redis.pcall(unpack(ARGV))" : "return redis.call(unpack(ARGV))", "0"};
              a.insert(a.end(), c.begin(), c.end());
              return Op{a, false};
            }, GenCommand(), rc::gen::arbitrary<bool>()),
      // Lua -> Redis conversion of a value.
      rc::gen::apply([](std::string expr, std::string arg) {
              return Op{{"EVAL", "return " + expr, "0", arg}, false};
            }, Pick(kLuaValues), Pick(kValues)),
      // Lua numbers as command arguments.
      rc::gen::apply([](std::string k, std::string num) {
              return Op{{"EVAL", "redis.call('set', KEYS[1], " + num + ") return redis.call('get', KEYS[1])", "1", k}, false};
            }, key, Pick(kLuaNumbers)),
      // Integer replies are Lua integers (5.4 would print 2.0 otherwise).
      rc::gen::apply([](std::string k) {
              return Op{{"EVAL", "local n = redis.call('hincrby', KEYS[1], 'n', 1) return KEYS[1] .. ':' .. n", "1", k}, false};
            }, key),
      // Errors raised by redis.call, with the script suffix and line number.
      rc::gen::apply([](std::string k) {
              return Op{{"EVAL", "local x = 1\nreturn redis.call('incr', KEYS[1])", "1", k}, false};
            }, key));
}

rc::Gen<Op> GenOp() {
  return rc::gen::weightedOneOf<Op>({
      {3, rc::gen::map(GenCommand(), [](Argv a) { return Op{a, false}; })},
      {1, rc::gen::just(Op{{"PTTL", "lock"}, true})},
      {2, GenScript()},
  });
}

// --- comparison ---------------------------------------------------------------------------

// SMEMBERS, alone or as the command a script calls: redis-server lists a hash-table set in the
// order of its random hash seed, lockstep in byte order (docs/fidelity.md, "Sets"), so its
// replies are compared as sets.
bool UnorderedReply(const Argv& argv) {
  if (!argv.empty() && argv[0] == "SMEMBERS") return true;
  return argv.size() > 3 && argv[0] == "EVAL" && argv[3] == "SMEMBERS";
}

Reply Sorted(Reply r) {
  if (r.type == Reply::Type::kArray) {
    std::sort(r.elements.begin(), r.elements.end(),
              [](const Reply& a, const Reply& b) { return a.str < b.str; });
  }
  return r;
}

bool SameReply(const Reply& emu, const Reply& live, bool time_dependent, bool unordered) {
  if (emu == live) return true;
  if (unordered) return Sorted(emu) == Sorted(live);
  if (!time_dependent) return false;
  if (emu.type == Reply::Type::kInteger && live.type == Reply::Type::kInteger &&
      emu.integer >= 0 && live.integer >= 0) {
    return std::llabs(emu.integer - live.integer) <= kPttlToleranceMs;
  }
  return false;
}

// The observable state of every key: type, value, TTL in seconds.
std::vector<Argv> StateProbe() {
  std::vector<Argv> probe;
  for (const std::string& k : kKeys) {
    probe.push_back({"TYPE", k});
    probe.push_back({"TTL", k});
    probe.push_back({"EVAL",
                     "local t = redis.call('type', KEYS[1]).ok "
                     "if t == 'string' then return redis.call('get', KEYS[1]) end "
                     "if t == 'hash' then return redis.call('hgetall', KEYS[1]) end "
                     "if t == 'list' then return redis.call('lrange', KEYS[1], 0, -1) end "
                     "if t == 'zset' then return redis.call('zrange', KEYS[1], 0, -1, 'WITHSCORES') end "
                     "if t == 'set' then local m = redis.call('smembers', KEYS[1]) table.sort(m) return m end "
                     "return t",
                     "1", k});
  }
  return probe;
}

struct Live {
  std::unique_ptr<lockstep::RedisProcess> process;
  std::unique_ptr<lockstep::RedisClient> client;
};

Live& LiveServer() {
  static Live live = [] {
    Live l;
    l.process = lockstep::RedisProcess::StartOrThrow();
    l.client = std::make_unique<lockstep::RedisClient>("127.0.0.1", l.process->port());
    return l;
  }();
  return live;
}

int64_t g_operations = 0;

}  // namespace

TEST_CASE("differential: emulator replies equal redis-server 7.0.15 replies",
          "[live][property]") {
  Live& live = LiveServer();
  const bool ok = rc::check("random command and script sequences", [&] {
    const auto length = *rc::gen::inRange(45, 91);
    const auto ops = *rc::gen::container<std::vector<Op>>(static_cast<size_t>(length), GenOp());
    RC_ASSERT(live.client->Command({"FLUSHALL"}) == Reply::Ok());
    lockstep::Server emu;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Op& op = ops[i];
      const Reply from_emu = emu.Execute(op.argv, WallMs()).AsSeenByResp2Client();
      const Reply from_live = live.client->Command(op.argv);
      ++g_operations;
      RC_LOG() << "#" << i << " " << op << "\n  emu:  " << from_emu.Debug()
               << "\n  live: " << from_live.Debug() << "\n";
      RC_ASSERT(SameReply(from_emu, from_live, op.time_dependent, UnorderedReply(op.argv)));
    }
    for (const Argv& probe : StateProbe()) {
      const Reply from_emu = emu.Execute(probe, WallMs()).AsSeenByResp2Client();
      const Reply from_live = live.client->Command(probe);
      RC_LOG() << "state " << probe[0] << " " << probe.back() << "\n  emu:  " << from_emu.Debug()
               << "\n  live: " << from_live.Debug() << "\n";
      RC_ASSERT(from_emu == from_live);
    }
  });
  CHECK(ok);
  WARN("differential: " << g_operations << " operations compared against redis-server");
  CHECK(g_operations >= 5000);
}
