// The live RESP connection against a real redis-server: replies pair with requests in order,
// NoReplyFor takes a request without a reply out of the pairing (made real with CLIENT REPLY
// SKIP, which answers neither itself nor the next command), pub/sub confirmations pair and
// messages go to the message callback, and a killed connection reports itself and reconnects.
#include "live/resp_connection.h"

#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <vector>

#include "live/redis_client.h"
#include "live/redis_process.h"

namespace lockstep::live {
namespace {

RespConnection::Options To(const RedisProcess& server, bool pubsub = false) {
  RespConnection::Options o;
  o.port = server.port();
  o.pubsub = pubsub;
  o.reconnect_delay_us = 200'000;
  return o;
}

// Runs the loop until `done` or timeout_us has passed.
void RunUntil(EventLoop& loop, const std::function<bool()>& done, int64_t timeout_us = 2'000'000) {
  const int64_t deadline = EventLoop::NowUs() + timeout_us;
  loop.SetIterationHook([&] {
    if (done()) loop.Stop();
  });
  loop.Run(deadline);
  loop.SetIterationHook(nullptr);
}

TEST_CASE("RespConnection: pipelined replies pair with their requests in order") {
  auto server = RedisProcess::StartOrThrow();
  EventLoop loop;
  RespConnection conn(loop, To(*server), {});
  std::vector<std::string> got;
  CHECK(conn.Send({"SET", "k", "v1"}, [&](const Reply& r) { got.push_back("1:" + r.Debug()); }) == 0);
  CHECK(conn.Send({"GET", "k"}, [&](const Reply& r) { got.push_back("2:" + r.Debug()); }) == 1);
  CHECK(conn.Send({"INCR", "k"}, [&](const Reply& r) { got.push_back("3:" + r.Debug()); }) == 2);
  CHECK(conn.Send({"PING"}, [&](const Reply& r) { got.push_back("4:" + r.Debug()); }) == 3);
  RunUntil(loop, [&] { return got.size() == 4; });
  REQUIRE(got.size() == 4);
  CHECK(got[0] == "1:" + Reply::Ok().Debug());
  CHECK(got[1] == "2:" + Reply::Bulk("v1").Debug());
  CHECK(got[2].rfind("3:", 0) == 0);
  CHECK(got[2].find("not an integer") != std::string::npos);
  CHECK(got[3] == "4:" + Reply::Status("PONG").Debug());
  CHECK(conn.pending() == 0);
}

TEST_CASE("RespConnection: NoReplyFor skips requests that get no reply") {
  auto server = RedisProcess::StartOrThrow();
  EventLoop loop;
  RespConnection conn(loop, To(*server), {});
  std::vector<std::string> got;
  auto keep = [&](const char* tag) {
    return [&got, tag](const Reply& r) { got.push_back(std::string(tag) + r.Debug()); };
  };
  // CLIENT REPLY SKIP answers neither itself nor the SET after it: as if a proxy dropped both
  // replies. Without NoReplyFor the GET's reply would pair with CLIENT REPLY SKIP.
  const int64_t skip = conn.Send({"CLIENT", "REPLY", "SKIP"}, keep("skip:"));
  const int64_t set = conn.Send({"SET", "k", "v"}, keep("set:"));
  conn.Send({"GET", "k"}, keep("get:"));
  conn.NoReplyFor(set);  // Reported out of order: the pairing waits for the front one too.
  conn.NoReplyFor(skip);
  RunUntil(loop, [&] { return !got.empty(); });
  CHECK(got == std::vector<std::string>{"get:" + Reply::Bulk("v").Debug()});
  CHECK(conn.pending() == 0);
}

TEST_CASE("RespConnection: NoReplyFor with a dropped reply's bytes hands it to on_lost only") {
  auto server = RedisProcess::StartOrThrow();
  EventLoop loop;
  RespConnection conn(loop, To(*server), {});
  std::vector<std::string> got;
  auto keep = [&](const char* tag) {
    return [&got, tag](const Reply& r) { got.push_back(std::string(tag) + r.Debug()); };
  };
  // As before, CLIENT REPLY SKIP makes the server answer neither request; the bytes handed
  // over stand for what a proxy dropped on the way.
  const int64_t skip = conn.Send({"CLIENT", "REPLY", "SKIP"}, keep("skip:"), keep("lost skip:"));
  const int64_t set = conn.Send({"SET", "k", "v"}, keep("set:"), keep("lost set:"));
  conn.Send({"GET", "k"}, keep("get:"), keep("lost get:"));
  conn.NoReplyFor(set, "*2\r\n+OK\r\n:7\r\n");
  conn.NoReplyFor(skip, "+OK\r\n+OK\r\n");  // Two replies, not one whole: ignored.
  RunUntil(loop, [&] { return got.size() == 2; });
  CHECK(got == std::vector<std::string>{
                   "lost set:" + Reply::Array({Reply::Ok(), Reply::Integer(7)}).Debug(),
                   "get:" + Reply::Bulk("v").Debug()});
  CHECK(conn.pending() == 0);
}

TEST_CASE("RespConnection: local_port is the port the server sees") {
  auto server = RedisProcess::StartOrThrow();
  EventLoop loop;
  RespConnection conn(loop, To(*server), {});
  std::optional<Reply> info;
  conn.Send({"CLIENT", "INFO"}, [&](const Reply& r) { info = r; });
  RunUntil(loop, [&] { return info.has_value(); });
  REQUIRE(info.has_value());
  REQUIRE(conn.local_port() > 0);
  CHECK(info->str.find("addr=127.0.0.1:" + std::to_string(conn.local_port()) + " ") !=
        std::string::npos);
}

TEST_CASE("RespConnection: pub/sub confirmations pair, messages go to on_message") {
  auto server = RedisProcess::StartOrThrow();
  EventLoop loop;
  std::vector<std::string> messages;
  RespConnection::Handlers h;
  h.on_message = [&](const std::string& channel, const std::string& payload) {
    messages.push_back(channel + "=" + payload);
  };
  RespConnection sub(loop, To(*server, true), h);
  RespConnection pub(loop, To(*server), {});
  std::vector<Reply> confirmations;
  sub.Send({"SUBSCRIBE", "ch"}, [&](const Reply& r) { confirmations.push_back(r); });
  sub.Send({"SUBSCRIBE", "other"}, [&](const Reply& r) { confirmations.push_back(r); });
  RunUntil(loop, [&] { return confirmations.size() == 2; });
  REQUIRE(confirmations.size() == 2);
  CHECK(confirmations[0] ==
        Reply::Array({Reply::Bulk("subscribe"), Reply::Bulk("ch"), Reply::Integer(1)}));
  CHECK(confirmations[1] ==
        Reply::Array({Reply::Bulk("subscribe"), Reply::Bulk("other"), Reply::Integer(2)}));
  std::vector<Reply> published;
  pub.Send({"PUBLISH", "ch", "hello"}, [&](const Reply& r) { published.push_back(r); });
  pub.Send({"PUBLISH", "other", "world"}, [&](const Reply& r) { published.push_back(r); });
  RunUntil(loop, [&] { return messages.size() == 2; });
  CHECK(published == std::vector<Reply>{Reply::Integer(1), Reply::Integer(1)});
  CHECK(messages == std::vector<std::string>{"ch=hello", "other=world"});
  // Messages between the requests and their confirmations do not disturb the pairing.
  sub.Send({"UNSUBSCRIBE", "ch"}, [&](const Reply& r) { confirmations.push_back(r); });
  pub.Send({"PUBLISH", "other", "again"}, nullptr);
  sub.Send({"UNSUBSCRIBE", "other"}, [&](const Reply& r) { confirmations.push_back(r); });
  RunUntil(loop, [&] { return confirmations.size() == 4; });
  REQUIRE(confirmations.size() == 4);
  CHECK(confirmations[2] ==
        Reply::Array({Reply::Bulk("unsubscribe"), Reply::Bulk("ch"), Reply::Integer(1)}));
  CHECK(confirmations[3] ==
        Reply::Array({Reply::Bulk("unsubscribe"), Reply::Bulk("other"), Reply::Integer(0)}));
  // "again" reached the subscriber unless the UNSUBSCRIBE overtook it on the server.
  CHECK(messages.size() <= 3);
}

TEST_CASE("RespConnection: a killed connection drops its requests, reports, and reconnects") {
  auto server = RedisProcess::StartOrThrow();
  RedisClient admin("127.0.0.1", server->port());
  EventLoop loop;
  std::vector<std::string> downs;
  RespConnection::Handlers h;
  h.on_down = [&](const std::string& why) { downs.push_back(why); };
  RespConnection conn(loop, To(*server), h);
  std::optional<Reply> first;
  conn.Send({"PING"}, [&](const Reply& r) { first = r; });
  RunUntil(loop, [&] { return first.has_value(); });
  const int port = conn.local_port();
  REQUIRE(port > 0);
  // A blocking command that will never be answered, then the server kills the connection.
  bool answered = false;
  conn.Send({"BLPOP", "nothing", "0"}, [&](const Reply&) { answered = true; });
  RunUntil(loop, [] { return false; }, 50'000);  // Let it reach the server.
  CHECK(admin.Command({"CLIENT", "KILL", "127.0.0.1:" + std::to_string(port)}) == Reply::Ok());
  RunUntil(loop, [&] { return !downs.empty(); });
  REQUIRE(downs.size() == 1);
  CHECK_FALSE(answered);
  CHECK_FALSE(conn.open());
  CHECK(conn.pending() == 0);
  // Within the reconnect delay a request is lost at once; after it, a new connection.
  CHECK(conn.Send({"PING"}, nullptr) == -1);
  std::optional<Reply> again;
  loop.After(250'000, [&] { CHECK(conn.Send({"PING"}, [&](const Reply& r) { again = r; }) == 0); });
  RunUntil(loop, [&] { return again.has_value(); });
  REQUIRE(again.has_value());
  CHECK(*again == Reply::Status("PONG"));
  CHECK(conn.local_port() != port);
}

}  // namespace
}  // namespace lockstep::live
