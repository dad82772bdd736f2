// Establishes that the emulated node's replies beyond maxmemory are redis-server 7.0.15's: the
// same commands sent to a live server whose maxmemory is below what it holds (CONFIG SET
// maxmemory 1) and to an emulated node in the same state give the same replies, OOM texts and
// script error suffixes included.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/server.h"
#include "live/redis_client.h"
#include "live/redis_process.h"

TEST_CASE("maxmemory: the OOM replies agree with redis-server 7.0.15", "[live][maxmemory]") {
  auto redis = lockstep::RedisProcess::StartOrThrow();
  lockstep::RedisClient live("127.0.0.1", redis->port());
  // The emulated node's limit is just under what its one key costs, and far enough from
  // zero that lockstep's own script cap (2 x maxmemory) stays out of the way.
  lockstep::ServerOptions options;
  options.maxmemory_bytes = 1000;
  lockstep::Server emu(options);

  // Both hold one key, then sit above their limit.
  const lockstep::Argv pad = {"SET", "pad", std::string(1000, 'x')};
  REQUIRE(live.Command(pad).Debug() == "+OK");
  REQUIRE(emu.Execute(pad, 1000).Debug() == "+OK");
  REQUIRE(live.Command({"CONFIG", "SET", "maxmemory", "1"}).Debug() == "+OK");
  REQUIRE(emu.OutOfMemory());

  const std::vector<lockstep::Argv> commands = {
      {"SET", "k", "v"},
      {"SET", "pad", "y"},
      {"RPUSH", "l", "a"},
      {"HSET", "h", "f", "v"},
      {"ZADD", "z", "1", "m"},
      {"INCR", "n"},
      {"SADD", "s", "m"},
      {"MSET", "k", "v"},
      {"MSETNX", "k", "v"},
      {"SETEX", "k", "10", "v"},
      {"PSETEX", "k", "10000", "v"},
      {"SREM", "nokey", "m"},
      {"ZREMRANGEBYSCORE", "nokey", "0", "1"},
      {"GETDEL", "nokey"},
      {"GETRANGE", "pad", "0", "1"},
      {"SMEMBERS", "nokey"},
      {"SCARD", "nokey"},
      {"ZCOUNT", "nokey", "0", "1"},
      {"EVAL", "return redis.pcall('sadd', KEYS[1], 'm')", "1", "s"},
      {"GET", "pad"},
      {"EXISTS", "pad", "k"},
      {"PEXPIRE", "pad", "100000"},
      {"PERSIST", "pad"},
      {"EVAL", "return redis.call('set', KEYS[1], 'v')", "1", "k"},
      {"EVAL", "return redis.pcall('rpush', KEYS[1], 'v')", "1", "l"},
      {"EVAL", "return redis.call('get', KEYS[1])", "1", "pad"},
      {"EVAL", "#!lua\nreturn 1", "0"},
      {"EVAL", "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", "1", "pad"},
      {"EVAL", "#!lua flags=allow-oom\nreturn redis.call('set', KEYS[1], 'w')", "1", "k2"},
      {"EVAL", "redis.call('del', 'nokey') return redis.call('set', KEYS[1], 'v')", "1", "k3"},
      {"DEL", "pad", "k2", "k3"},
      {"SET", "k", "v"},  // Still over: redis-server's own memory alone exceeds 1 byte.
  };
  for (size_t i = 0; i < commands.size(); ++i) {
    const lockstep::Argv& argv = commands[i];
    const std::string want = live.Command(argv).Debug();
    const std::string got = emu.Execute(argv, 1000).Debug();
    if (i + 1 == commands.size()) {
      // The emulator counts keys only: with the keyspace empty it is under its limit again.
      CHECK(want == "-OOM command not allowed when used memory > 'maxmemory'.");
      CHECK(got == "+OK");
      continue;
    }
    INFO(argv[0] << " " << (argv.size() > 1 ? argv[1] : ""));
    CHECK(got == want);
  }
}
