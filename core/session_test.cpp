// Client sessions on one emulated server: blocked BLPOP/BRPOP sessions are served in Redis
// 7.0.15's order (keys in the order they became lists, the sessions of a key first blocked
// first served), time out and disconnect cleanly, and WATCH sees every write to a watched key,
// whoever makes it. The replies themselves are checked against redis-server in
// core/testdata/conformance/transactions.txt and blocking.txt.
#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/server.h"
#include "core/session.h"

namespace {

using lockstep::Argv;
using lockstep::Effects;
using lockstep::Reply;
using lockstep::Server;
using lockstep::Session;

constexpr int64_t kNow = 1'000'000;

Reply Popped(const std::string& key, const std::string& value) {
  return Reply::Array({Reply::Bulk(key), Reply::Bulk(value)});
}

// Runs a command that must answer at once.
Reply Run(Server& server, Session& session, const Argv& argv, int64_t now_ms = kNow) {
  const std::optional<Reply> reply = server.Execute(session, argv, now_ms);
  REQUIRE(reply.has_value());
  return *reply;
}

// Runs a command that must block.
void Block(Server& server, Session& session, const Argv& argv, int64_t now_ms = kNow) {
  REQUIRE_FALSE(server.Execute(session, argv, now_ms).has_value());
  REQUIRE(session.blocked());
}

}  // namespace

TEST_CASE("sessions blocked on one key are served first blocked, first served, one element each",
          "[session][blocking]") {
  Server server;
  Session a, b, c, pusher;
  Block(server, a, {"BLPOP", "q", "0"});
  Block(server, b, {"BRPOP", "q", "0"});
  Block(server, c, {"BLPOP", "q", "0"});
  CHECK(server.blocked_session_count() == 3);

  // Two elements: the first two sessions get one each, the third still waits.
  Effects effects;
  REQUIRE(server.Execute(pusher, {"RPUSH", "q", "x", "y"}, kNow, &effects) ==
          Reply::Integer(2));
  std::vector<Server::Woken> woken = server.TakeWoken();
  REQUIRE(woken.size() == 2);
  CHECK(woken[0].session == &a);
  CHECK(woken[0].reply == Popped("q", "x"));  // BLPOP takes the head ...
  CHECK(woken[1].session == &b);
  CHECK(woken[1].reply == Popped("q", "y"));  // ... BRPOP the tail of what is left.
  CHECK_FALSE(a.blocked());
  CHECK_FALSE(b.blocked());
  CHECK(c.blocked());
  CHECK(server.blocked_session_count() == 1);
  CHECK(server.TakeWoken().empty());
  // The push, then the served pops as Redis propagates them; the list is gone.
  REQUIRE(effects.commands.size() == 3);
  CHECK(effects.commands[0] == Argv{"RPUSH", "q", "x", "y"});
  CHECK(effects.commands[1] == Argv{"LPOP", "q"});
  CHECK(effects.commands[2] == Argv{"RPOP", "q"});
  CHECK(server.keyspace().Find("q") == nullptr);

  // The next push serves the third.
  REQUIRE(Run(server, pusher, {"LPUSH", "q", "z"}) == Reply::Integer(1));
  woken = server.TakeWoken();
  REQUIRE(woken.size() == 1);
  CHECK(woken[0].session == &c);
  CHECK(woken[0].reply == Popped("q", "z"));
  CHECK(server.blocked_session_count() == 0);
}

TEST_CASE("a session blocked on several keys is served once, by the first key that gets a list",
          "[session][blocking]") {
  Server server;
  Session multi_key, on_k1, pusher;
  Block(server, multi_key, {"BLPOP", "k1", "k2", "k1", "0"});
  CHECK(multi_key.blocked_keys() == std::vector<std::string>{"k1", "k2"});  // Once each.
  Block(server, on_k1, {"BLPOP", "k1", "0"});

  REQUIRE(Run(server, pusher, {"RPUSH", "k2", "a"}) == Reply::Integer(1));
  std::vector<Server::Woken> woken = server.TakeWoken();
  REQUIRE(woken.size() == 1);
  CHECK(woken[0].session == &multi_key);
  CHECK(woken[0].reply == Popped("k2", "a"));

  // It left k1's queue too: k1's element goes to the session that blocked after it.
  REQUIRE(Run(server, pusher, {"RPUSH", "k1", "b", "c"}) == Reply::Integer(2));
  woken = server.TakeWoken();
  REQUIRE(woken.size() == 1);
  CHECK(woken[0].session == &on_k1);
  CHECK(woken[0].reply == Popped("k1", "b"));
  CHECK(Run(server, pusher, {"LRANGE", "k1", "0", "-1"}) == Reply::Array({Reply::Bulk("c")}));
}

TEST_CASE("keys are served in the order they became lists, after the whole command",
          "[session][blocking]") {
  Server server;
  Session on_a, on_b, on_both, pusher;
  Block(server, on_a, {"BLPOP", "a", "0"});
  Block(server, on_both, {"BLPOP", "a", "b", "0"});
  Block(server, on_b, {"BLPOP", "b", "0"});

  // b becomes a list before a inside one transaction: b's sessions first (on_both, which
  // blocked on b before on_b), then a's (on_a; on_both is already served).
  REQUIRE(Run(server, pusher, {"MULTI"}) == Reply::Ok());
  REQUIRE(Run(server, pusher, {"RPUSH", "b", "1", "2"}) == Reply::Status("QUEUED"));
  REQUIRE(Run(server, pusher, {"RPUSH", "a", "3"}) == Reply::Status("QUEUED"));
  REQUIRE(Run(server, pusher, {"EXEC"}) ==
          Reply::Array({Reply::Integer(2), Reply::Integer(1)}));
  const std::vector<Server::Woken> woken = server.TakeWoken();
  REQUIRE(woken.size() == 3);
  CHECK(woken[0].session == &on_both);
  CHECK(woken[0].reply == Popped("b", "1"));
  CHECK(woken[1].session == &on_b);
  CHECK(woken[1].reply == Popped("b", "2"));
  CHECK(woken[2].session == &on_a);
  CHECK(woken[2].reply == Popped("a", "3"));

  // A script that pushes and pops again leaves nothing to serve.
  Session waiting;
  Block(server, waiting, {"BRPOP", "c", "0"});
  REQUIRE(Run(server, pusher, {"EVAL", "redis.call('rpush', 'c', 'x') return redis.call('lpop', 'c')",
                               "0"}) == Reply::Bulk("x"));
  CHECK(server.TakeWoken().empty());
  CHECK(waiting.blocked());
}

TEST_CASE("a blocked session times out on the caller's clock, and is served no more",
          "[session][blocking]") {
  Server server;
  Session timed, forever, pusher;
  Block(server, timed, {"BLPOP", "q", "1.5"}, kNow);
  CHECK(timed.block_deadline_ms() == kNow + 1500);
  Block(server, forever, {"BLPOP", "q", "0"}, kNow);
  CHECK(forever.block_deadline_ms() == Session::kNoDeadline);

  // Redis times a client out once its deadline is strictly in the past.
  CHECK_FALSE(timed.TimedOut(kNow + 1500));
  CHECK(timed.TimedOut(kNow + 1501));
  CHECK_FALSE(forever.TimedOut(INT64_MAX));
  CHECK(server.TimeOut(timed) == Reply::NullArray());
  CHECK_FALSE(timed.blocked());
  CHECK(server.blocked_session_count() == 1);

  // A sub-millisecond timeout rounds up to a whole millisecond.
  Session brief;
  Block(server, brief, {"BRPOP", "r", "0.0001"}, kNow);
  CHECK(brief.block_deadline_ms() == kNow + 1);
  CHECK(server.TimeOut(brief) == Reply::NullArray());

  REQUIRE(Run(server, pusher, {"RPUSH", "q", "x"}) == Reply::Integer(1));
  const std::vector<Server::Woken> woken = server.TakeWoken();
  REQUIRE(woken.size() == 1);
  CHECK(woken[0].session == &forever);

  // After its timeout the session runs commands again.
  CHECK(Run(server, timed, {"PING"}) == Reply::Status("PONG"));
}

TEST_CASE("closing a connection unblocks it, drops its wake-up and its transaction",
          "[session][blocking][multi]") {
  Server server;
  Session pusher;
  {
    Session gone;
    Block(server, gone, {"BLPOP", "q", "0"});
    CHECK(server.blocked_session_count() == 1);
  }  // Destroyed while blocked.
  CHECK(server.blocked_session_count() == 0);
  REQUIRE(Run(server, pusher, {"RPUSH", "q", "x"}) == Reply::Integer(1));
  CHECK(server.TakeWoken().empty());

  Session closed;
  Block(server, closed, {"BLPOP", "q2", "0"});
  server.Disconnect(closed);
  CHECK_FALSE(closed.blocked());
  Session woken_then_closed;
  Block(server, woken_then_closed, {"BLPOP", "q2", "0"});
  REQUIRE(Run(server, pusher, {"RPUSH", "q2", "y"}) == Reply::Integer(1));
  server.Disconnect(woken_then_closed);  // Before the driver collected the reply.
  CHECK(server.TakeWoken().empty());

  // Reused after Disconnect: a new connection, with no MULTI and no watched keys.
  Session conn;
  REQUIRE(Run(server, conn, {"WATCH", "k"}) == Reply::Ok());
  REQUIRE(Run(server, conn, {"MULTI"}) == Reply::Ok());
  server.Disconnect(conn);
  CHECK_FALSE(conn.in_multi());
  CHECK(conn.watched_key_count() == 0);
  CHECK_FALSE(server.has_watched_keys());
  CHECK(Run(server, conn, {"EXEC"}) == Reply::Error("ERR EXEC without MULTI"));
}

TEST_CASE("a session outlives its server as a fresh connection", "[session]") {
  Session session;
  {
    Server first;
    Block(first, session, {"BLPOP", "q", "0"});
  }
  CHECK_FALSE(session.blocked());
  Server second;
  CHECK(Run(second, session, {"PING"}) == Reply::Status("PONG"));
}

TEST_CASE("without a session nothing blocks and transactions are refused", "[session]") {
  Server server;
  CHECK(server.Execute({"BLPOP", "q", "0"}, kNow) == Reply::NullArray());
  REQUIRE(server.Execute({"RPUSH", "q", "x"}, kNow) == Reply::Integer(1));
  CHECK(server.Execute({"BRPOP", "q", "0"}, kNow) == Popped("q", "x"));
  for (const char* name : {"MULTI", "EXEC", "DISCARD", "UNWATCH"}) {
    const Reply reply = server.Execute({name}, kNow);
    CHECK(reply.is_error());
    CHECK(reply.str.find("needs a client connection") != std::string::npos);
  }
}

TEST_CASE("a watched key is touched by any session, script, replicated write or direct edit",
          "[session][watch]") {
  Server server;
  Session watcher, other;
  const auto exec_after = [&](const std::function<void()>& write) {
    REQUIRE(Run(server, watcher, {"WATCH", "k"}) == Reply::Ok());
    write();
    REQUIRE(Run(server, watcher, {"MULTI"}) == Reply::Ok());
    REQUIRE(Run(server, watcher, {"PING"}) == Reply::Status("QUEUED"));
    return Run(server, watcher, {"EXEC"});
  };
  const Reply ran = Reply::Array({Reply::Status("PONG")});
  const Reply aborted = Reply::NullArray();

  CHECK(exec_after([] {}) == ran);
  CHECK(exec_after([&] { Run(server, other, {"SET", "k", "1"}); }) == aborted);
  CHECK(exec_after([&] { server.Execute({"INCR", "k"}, kNow); }) == aborted);
  CHECK(exec_after([&] { server.ExecuteReplicated({"DEL", "k"}, kNow); }) == aborted);
  CHECK(exec_after([&] {
          Run(server, other, {"EVAL", "redis.call('set', KEYS[1], 'v')", "1", "k"});
        }) == aborted);
  // A script with replication turned off still touches.
  CHECK(exec_after([&] {
          Run(server, other,
              {"EVAL", "redis.set_repl(redis.REPL_NONE) redis.call('del', KEYS[1])", "1", "k"});
        }) == aborted);
  CHECK(exec_after([&] { server.TouchWatchedKey("k"); }) == aborted);
  CHECK(exec_after([&] { Run(server, other, {"SET", "k", "2"}); server.TouchAllWatchedKeys(); }) ==
        aborted);
  // Writes that change nothing, or change other keys, do not.
  CHECK(exec_after([&] { Run(server, other, {"SET", "k", "3", "NX"}); }) == ran);
  CHECK(exec_after([&] { Run(server, other, {"SET", "other", "1"}); }) == ran);
  CHECK(exec_after([&] { Run(server, other, {"GET", "k"}); }) == ran);
  CHECK_FALSE(server.has_watched_keys());  // EXEC unwatched every time.
}

TEST_CASE("watched keys and expiry, as 7.0.15 has it", "[session][watch]") {
  Server server;
  Session watcher, other;
  const auto exec = [&](int64_t now_ms) {
    REQUIRE(Run(server, watcher, {"MULTI"}, now_ms) == Reply::Ok());
    REQUIRE(Run(server, watcher, {"PING"}, now_ms) == Reply::Status("QUEUED"));
    return Run(server, watcher, {"EXEC"}, now_ms);
  };
  const Reply ran = Reply::Array({Reply::Status("PONG")});
  const Reply aborted = Reply::NullArray();

  // Alive when watched, expired by EXEC: aborted, though nothing deleted it.
  REQUIRE(Run(server, other, {"SET", "k", "v", "PX", "100"}, kNow) == Reply::Ok());
  REQUIRE(Run(server, watcher, {"WATCH", "k"}, kNow) == Reply::Ok());
  CHECK(exec(kNow + 100) == ran);  // Alive at its expiry millisecond.
  REQUIRE(Run(server, watcher, {"WATCH", "k"}, kNow) == Reply::Ok());
  CHECK(exec(kNow + 101) == aborted);

  // Already expired when watched (and not yet deleted): its lazy deletion is no change ...
  REQUIRE(server.keyspace().Find("k") != nullptr);
  REQUIRE(Run(server, watcher, {"WATCH", "k"}, kNow + 200) == Reply::Ok());
  REQUIRE(Run(server, other, {"GET", "k"}, kNow + 200) == Reply::Null());  // Deletes it.
  REQUIRE(server.keyspace().Find("k") == nullptr);
  CHECK(exec(kNow + 200) == ran);
  // ... but a write that brings it back is.
  REQUIRE(Run(server, other, {"SET", "k", "v", "PX", "100"}, kNow) == Reply::Ok());
  REQUIRE(Run(server, watcher, {"WATCH", "k"}, kNow + 200) == Reply::Ok());
  REQUIRE(Run(server, other, {"SET", "k", "w"}, kNow + 200) == Reply::Ok());
  CHECK(exec(kNow + 200) == aborted);

  // FLUSHALL: a key watched already expired counts as deleted, not touched.
  REQUIRE(Run(server, other, {"SET", "k", "v", "PX", "100"}, kNow) == Reply::Ok());
  REQUIRE(Run(server, watcher, {"WATCH", "k"}, kNow + 200) == Reply::Ok());
  REQUIRE(Run(server, other, {"FLUSHALL"}, kNow + 200) == Reply::Ok());
  CHECK(exec(kNow + 200) == ran);
}

TEST_CASE("a transaction's effects are its commands' effects, in order", "[session][multi]") {
  Server server;
  Session s;
  REQUIRE(Run(server, s, {"MULTI"}) == Reply::Ok());
  REQUIRE(Run(server, s, {"SET", "a", "1", "PX", "1000"}) == Reply::Status("QUEUED"));
  REQUIRE(Run(server, s, {"RPUSH", "l", "x"}) == Reply::Status("QUEUED"));
  REQUIRE(Run(server, s, {"BLPOP", "l", "0"}) == Reply::Status("QUEUED"));
  REQUIRE(Run(server, s, {"BLPOP", "l", "0"}) == Reply::Status("QUEUED"));
  Effects effects;
  const std::optional<Reply> reply = server.Execute(s, {"EXEC"}, kNow, &effects);
  REQUIRE(reply.has_value());
  CHECK(*reply == Reply::Array({Reply::Ok(), Reply::Integer(1), Popped("l", "x"),
                                Reply::NullArray()}));
  REQUIRE(effects.commands.size() == 3);
  CHECK(effects.commands[0] == Argv{"SET", "a", "1", "PXAT", std::to_string(kNow + 1000)});
  CHECK(effects.commands[1] == Argv{"RPUSH", "l", "x"});
  CHECK(effects.commands[2] == Argv{"LPOP", "l"});
  CHECK_FALSE(s.in_multi());
}

TEST_CASE("inside MULTI, memory and a replica's READONLY refuse commands as Redis does",
          "[session][multi]") {
  lockstep::ServerOptions options;
  options.maxmemory_bytes = 400;
  Server server(options);
  Session s, other;
  const std::string big(500, 'x');

  // Queued while there was room; out of memory by EXEC: EXEC is refused and aborts.
  REQUIRE(Run(server, s, {"MULTI"}) == Reply::Ok());
  REQUIRE(Run(server, s, {"SET", "a", "1"}) == Reply::Status("QUEUED"));
  REQUIRE(Run(server, other, {"SET", "big", big}) == Reply::Ok());
  REQUIRE(server.OutOfMemory());
  CHECK(Run(server, s, {"EXEC"}) ==
        Reply::Error("EXECABORT Transaction discarded because of: OOM command not allowed when "
                     "used memory > 'maxmemory'."));
  CHECK_FALSE(s.in_multi());

  // Out of memory, every command but EXEC and DISCARD is refused inside MULTI, reads too.
  REQUIRE(Run(server, s, {"MULTI"}) == Reply::Ok());
  CHECK(Run(server, s, {"GET", "a"}) ==
        Reply::Error("OOM command not allowed when used memory > 'maxmemory'."));
  CHECK(s.exec_doomed());
  CHECK(Run(server, s, {"DISCARD"}) == Reply::Ok());
  // A transaction of reads still runs.
  REQUIRE(Run(server, s, {"MULTI"}) == Reply::Ok());
  CHECK(Run(server, s, {"EXEC"}) == Reply::Array());

  lockstep::ServerOptions replica_options;
  replica_options.replica = true;
  Server replica(replica_options);
  Session r;
  REQUIRE(Run(replica, r, {"MULTI"}) == Reply::Ok());
  CHECK(Run(replica, r, {"SET", "a", "1"}) ==
        Reply::Error("READONLY You can't write against a read only replica."));
  CHECK(Run(replica, r, {"GET", "a"}) == Reply::Status("QUEUED"));
  CHECK(Run(replica, r, {"EXEC"}) ==
        Reply::Error("EXECABORT Transaction discarded because of previous errors."));
}

TEST_CASE("touchWatchedKey stops at a watcher that watched the key already expired",
          "[session][watch]") {
  // 7.0.15's loop has "break" where "continue" was probably meant: when the key still exists,
  // neither that watcher nor any later one is marked. Reached here through a direct touch of
  // a key that is expired but not yet deleted (a command would delete it first).
  Server server;
  Session alive_watcher, expired_watcher, later_watcher, other;
  REQUIRE(Run(server, other, {"SET", "k", "v", "PX", "100"}, kNow) == Reply::Ok());
  REQUIRE(Run(server, alive_watcher, {"WATCH", "k"}, kNow) == Reply::Ok());
  REQUIRE(Run(server, expired_watcher, {"WATCH", "k"}, kNow + 200) == Reply::Ok());
  REQUIRE(Run(server, later_watcher, {"WATCH", "k"}, kNow + 200) == Reply::Ok());
  server.TouchWatchedKey("k");
  CHECK(alive_watcher.watch_touched());
  CHECK(alive_watcher.watched_key_count() == 0);  // Unwatched once touched.
  CHECK_FALSE(expired_watcher.watch_touched());
  CHECK_FALSE(later_watcher.watch_touched());
  CHECK(later_watcher.watched_key_count() == 1);
}
