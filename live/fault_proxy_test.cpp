// The fault proxy between a plain socket and a real redis-server 7.0.15 started by each test:
// it forwards requests and replies byte for byte, its partitions, lost replies, loss and latency
// act on whole messages as documented in live/fault_proxy.h, latency draws follow the link's
// distribution and repeat with the seed, a transaction's requests and replies share one fate,
// every dropped request or reply is reported with the request's index (and a dropped reply
// with its bytes) before a later reply reaches the client, a replica replicates through a
// replication link that a partition holds rather than breaks, and the proxy leaves no socket
// or thread behind.
//
// Method: each test speaks RESP by hand on a blocking socket, so what arrives is compared as
// bytes, and checks the server's side through a second, direct connection. Extra latency is
// checked against the monotonic clock as a lower bound only; drawn latency through the proxy's
// own accounting (its statistics), not by timing.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/random.h"
#include "live/fault_proxy.h"
#include "live/redis_process.h"
#include "live/resp_frame.h"

namespace lockstep {
std::ostream& operator<<(std::ostream& os, const ProxyDrop& d) {
  return os << "{link " << d.link << ", port " << d.client_port << ", request "
            << d.request_index << (d.direction == ProxyDirection::kToServer ? ", request}"
                                                                             : ", reply}");
}
}  // namespace lockstep

namespace {

using lockstep::FaultProxy;
using lockstep::FrameStatus;
using lockstep::ProxyDirection;
using lockstep::ProxyDrop;
using lockstep::ProxyLinkKind;
using lockstep::RedisProcess;
using lockstep::RespFrame;
using lockstep::RespGrammar;
using Clock = std::chrono::steady_clock;

constexpr ProxyDirection kToServer = ProxyDirection::kToServer;
constexpr ProxyDirection kToClient = ProxyDirection::kToClient;
// How long a test waits to be sure that nothing arrives: long against loopback round trips.
constexpr int kSilenceMs = 300;

std::string Command(std::initializer_list<std::string> argv) {
  std::string out = "*" + std::to_string(argv.size()) + "\r\n";
  for (const std::string& arg : argv) {
    out += "$" + std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
  }
  return out;
}

// A blocking client socket that reads whole RESP replies.
class Socket {
 public:
  explicit Socket(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      if (fd_ >= 0) ::close(fd_);
      throw std::runtime_error("cannot connect to port " + std::to_string(port));
    }
  }
  ~Socket() { ::close(fd_); }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  int local_port() const {
    sockaddr_in addr{};
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    return ntohs(addr.sin_port);
  }

  void Send(const std::string& bytes) {
    for (size_t sent = 0; sent < bytes.size();) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) throw std::runtime_error("send failed");
      sent += static_cast<size_t>(n);
    }
  }

  // One whole reply, or nothing if none arrives within timeout_ms (or the peer closed).
  std::optional<std::string> Read(int timeout_ms) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      RespFrame frame;
      std::string error;
      const FrameStatus status = NextRespFrame(buffer_, RespGrammar::kReply, &frame, &error);
      REQUIRE(status != FrameStatus::kMalformed);
      if (status == FrameStatus::kComplete) {
        std::string reply = buffer_.substr(0, frame.length);
        buffer_.erase(0, frame.length);
        return reply;
      }
      if (closed_) return std::nullopt;
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char chunk[65536];
      const ssize_t n = ::read(fd_, chunk, sizeof(chunk));
      if (n <= 0) {
        closed_ = true;
      } else {
        buffer_.append(chunk, static_cast<size_t>(n));
      }
    }
  }

  std::string ReadOrFail(int timeout_ms = 5000) {
    std::optional<std::string> reply = Read(timeout_ms);
    REQUIRE(reply.has_value());
    return *reply;
  }

  std::string Query(const std::string& request) {
    Send(request);
    return ReadOrFail();
  }

  // True when the peer closes the connection within timeout_ms.
  bool ClosedWithin(int timeout_ms) {
    while (!closed_) {
      if (!Read(timeout_ms).has_value()) break;
    }
    return closed_;
  }

 private:
  int fd_ = -1;
  std::string buffer_;
  bool closed_ = false;
};

// The payload of a bulk reply.
std::string Bulk(const std::string& reply) {
  RespFrame frame;
  std::string error;
  REQUIRE(NextRespFrame(reply, RespGrammar::kReply, &frame, &error) == FrameStatus::kComplete);
  REQUIRE(frame.type == '$');
  return std::string(frame.head[0]);
}

std::string BulkReply(const std::string& s) {
  return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n";
}

// Takes drops until there are at least `count` (or 5 s pass), waiting on drop_fd().
std::vector<ProxyDrop> WaitForDrops(FaultProxy& proxy, size_t count) {
  std::vector<ProxyDrop> drops;
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (drops.size() < count && Clock::now() < deadline) {
    pollfd p{proxy.drop_fd(), POLLIN, 0};
    ::poll(&p, 1, 100);
    for (const ProxyDrop& d : proxy.TakeDrops()) drops.push_back(d);
  }
  return drops;
}

// Polls `check` until it holds or timeout_ms pass.
template <typename Check>
bool Eventually(Check check, int timeout_ms = 10'000) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    if (check()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return check();
}

// A redis-server and a proxy with one link to it.
struct Rig {
  explicit Rig(ProxyLinkKind kind = ProxyLinkKind::kCommands, uint64_t seed = 1)
      : redis(RedisProcess::StartOrThrow()), proxy(seed) {
    std::string error;
    const FaultProxy::Endpoint endpoint =
        proxy.AddLink("c1->n1", "127.0.0.1", redis->port(), kind, &error);
    INFO(error);
    REQUIRE(endpoint.link == 0);
    link = endpoint.link;
    port = endpoint.port;
  }
  std::unique_ptr<RedisProcess> redis;
  FaultProxy proxy;
  int link = -1;
  int port = 0;
};

TEST_CASE("proxy - forwards requests and replies byte for byte", "[proxy]") {
  Rig rig;
  Socket via(rig.port);
  Socket direct(rig.redis->port());

  // A value larger than the proxy's queue limit, so the backpressure path runs too.
  lockstep::Prng rng(42);
  std::string big(5 * 1024 * 1024 + 17, '\0');
  for (char& ch : big) ch = static_cast<char>(rng.Next());
  CHECK(via.Query(Command({"SET", "big", big})) == "+OK\r\n");
  CHECK(Bulk(direct.Query(Command({"GET", "big"}))) == big);
  CHECK(via.Query(Command({"GET", "big"})) == BulkReply(big));

  const std::vector<std::string> requests = {
      Command({"EVAL", "return {1, {2, {3, 'x'}}, 'y', {}}", "0"}),
      Command({"RPUSH", "list", "a", "", "c"}),
      Command({"LRANGE", "list", "0", "-1"}),
      Command({"GET", "missing"}),
      Command({"HGETALL", "missing"}),
      Command({"INCR", "big"}),
      "PING\r\n",
      "*0\r\n",  // No reply: redis-server skips it, and the proxy must not invent one.
      Command({"ECHO", "after the empty request"}),
  };
  std::vector<std::string> expected;
  for (const std::string& request : requests) {
    if (request == "*0\r\n") continue;
    direct.Send(request);
    expected.push_back(direct.ReadOrFail());
  }
  CHECK(direct.Query(Command({"DEL", "list"})) == ":1\r\n");  // The proxy's run starts afresh.
  CHECK(expected[0] == "*4\r\n:1\r\n*2\r\n:2\r\n*2\r\n:3\r\n$1\r\nx\r\n$1\r\ny\r\n*0\r\n");
  // All at once through the proxy (pipelined): the same bytes back, in the same order.
  std::string pipeline;
  for (const std::string& request : requests) pipeline += request;
  via.Send(pipeline);
  for (const std::string& reply : expected) CHECK(via.ReadOrFail() == reply);
  CHECK(!via.Read(kSilenceMs).has_value());

  const lockstep::ProxyLinkStats stats = rig.proxy.Stats(rig.link);
  CHECK(stats.connections == 1);
  // SET and GET through the proxy (two each way), then the pipeline: "*0" is passed on too.
  CHECK(stats.forwarded == 4 + requests.size() + expected.size());
  CHECK(stats.dropped == 0);
  CHECK(stats.protocol_errors == 0);
  CHECK(rig.proxy.TakeDrops().empty());
}

TEST_CASE("proxy - a two-way partition drops both ways until it heals", "[proxy]") {
  Rig rig;
  Socket via(rig.port);
  Socket direct(rig.redis->port());
  CHECK(via.Query("PING\r\n") == "+PONG\r\n");  // Request 0.

  rig.proxy.SetBlocked(rig.link, kToServer, true);
  rig.proxy.SetBlocked(rig.link, kToClient, true);
  via.Send(Command({"SET", "p", "1"}));  // Request 1: never reaches the server.
  CHECK(!via.Read(kSilenceMs).has_value());
  CHECK(direct.Query(Command({"GET", "p"})) == "$-1\r\n");
  CHECK(WaitForDrops(rig.proxy, 1) ==
        std::vector<ProxyDrop>{{rig.link, via.local_port(), 1, kToServer, ""}});

  rig.proxy.SetBlocked(rig.link, kToServer, false);
  rig.proxy.SetBlocked(rig.link, kToClient, false);
  CHECK(via.Query(Command({"ECHO", "healed"})) == BulkReply("healed"));  // Request 2.
  CHECK(rig.proxy.TakeDrops().empty());
  CHECK(rig.proxy.Stats(rig.link).dropped == 1);
}

TEST_CASE("proxy - a one-way partition cuts one direction only", "[proxy]") {
  Rig rig;
  Socket via(rig.port);
  Socket direct(rig.redis->port());

  SECTION("client to server: the request is lost, the server never runs it") {
    rig.proxy.SetBlocked(rig.link, kToServer, true);
    via.Send(Command({"SET", "a", "1"}));
    CHECK(!via.Read(kSilenceMs).has_value());
    CHECK(direct.Query(Command({"GET", "a"})) == "$-1\r\n");
    CHECK(WaitForDrops(rig.proxy, 1) ==
          std::vector<ProxyDrop>{{rig.link, via.local_port(), 0, kToServer, ""}});
    rig.proxy.SetBlocked(rig.link, kToServer, false);
  }
  SECTION("server to client: the server runs the request, its reply is lost") {
    rig.proxy.SetBlocked(rig.link, kToClient, true);
    via.Send(Command({"SET", "a", "1"}));
    CHECK(!via.Read(kSilenceMs).has_value());
    CHECK(direct.Query(Command({"GET", "a"})) == BulkReply("1"));
    // A dropped reply on a commands link comes with its report.
    CHECK(WaitForDrops(rig.proxy, 1) ==
          std::vector<ProxyDrop>{{rig.link, via.local_port(), 0, kToClient, "+OK\r\n"}});
    rig.proxy.SetBlocked(rig.link, kToClient, false);
  }
  CHECK(via.Query("PING\r\n") == "+PONG\r\n");
}

TEST_CASE("proxy - a partition cuts a message still held for latency when it begins",
          "[proxy]") {
  Rig rig;
  Socket via(rig.port);
  Socket direct(rig.redis->port());
  rig.proxy.SetExtraLatency(rig.link, kToServer, 300'000);
  via.Send(Command({"SET", "cut", "1"}));
  REQUIRE(Eventually([&] { return rig.proxy.Stats(rig.link).delayed == 1; }, 2000));
  rig.proxy.SetBlocked(rig.link, kToServer, true);  // While the SET is held.
  CHECK(WaitForDrops(rig.proxy, 1) ==
        std::vector<ProxyDrop>{{rig.link, via.local_port(), 0, kToServer, ""}});
  CHECK(direct.Query(Command({"GET", "cut"})) == "$-1\r\n");
  rig.proxy.SetBlocked(rig.link, kToServer, false);
  rig.proxy.SetExtraLatency(rig.link, kToServer, 0);
  CHECK(via.Query("PING\r\n") == "+PONG\r\n");
  CHECK(rig.proxy.Stats(rig.link).forwarded == 2);
}

TEST_CASE("proxy - lost replies: the server runs every request, no reply comes back", "[proxy]") {
  Rig rig;
  Socket via(rig.port);
  Socket direct(rig.redis->port());
  rig.proxy.SetLoseReplies(rig.link, true);
  via.Send(Command({"INCR", "n"}) + Command({"INCR", "n"}) + Command({"INCR", "n"}));
  const std::vector<ProxyDrop> drops = WaitForDrops(rig.proxy, 3);
  CHECK(drops == std::vector<ProxyDrop>{{rig.link, via.local_port(), 0, kToClient, ":1\r\n"},
                                        {rig.link, via.local_port(), 1, kToClient, ":2\r\n"},
                                        {rig.link, via.local_port(), 2, kToClient, ":3\r\n"}});
  CHECK(!via.Read(kSilenceMs).has_value());
  CHECK(direct.Query(Command({"GET", "n"})) == BulkReply("3"));
  rig.proxy.SetLoseReplies(rig.link, false);
  CHECK(via.Query(Command({"INCR", "n"})) == ":4\r\n");
}

// Sends `count` pipelined ECHOs with loss both ways and returns the drops, after checking
// that the replies that came are exactly those of the requests not reported, in order.
std::vector<ProxyDrop> RunWithLoss(uint64_t seed, int count, double rate) {
  Rig rig(ProxyLinkKind::kCommands, seed);
  rig.proxy.SetLoss(rig.link, kToServer, rate);
  rig.proxy.SetLoss(rig.link, kToClient, rate);
  Socket via(rig.port);
  std::string pipeline;
  for (int i = 0; i < count; ++i) pipeline += Command({"ECHO", std::to_string(i)});
  via.Send(pipeline);
  std::vector<ProxyDrop> drops;
  std::vector<std::string> replies;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (drops.size() + replies.size() < static_cast<size_t>(count) && Clock::now() < deadline) {
    if (std::optional<std::string> reply = via.Read(50)) replies.push_back(*reply);
    for (const ProxyDrop& d : rig.proxy.TakeDrops()) drops.push_back(d);
  }
  REQUIRE(drops.size() + replies.size() == static_cast<size_t>(count));
  std::set<uint64_t> dropped;
  for (const ProxyDrop& d : drops) {
    CHECK(d.link == rig.link);
    CHECK(d.client_port == via.local_port());
    CHECK(dropped.insert(d.request_index).second);  // One report per request.
  }
  std::vector<std::string> expected;
  for (int i = 0; i < count; ++i) {
    if (dropped.contains(static_cast<uint64_t>(i))) continue;
    expected.push_back(BulkReply(std::to_string(i)));
  }
  CHECK(replies == expected);
  CHECK(rig.proxy.Stats(rig.link).dropped == drops.size());
  return drops;
}

TEST_CASE("proxy - loss with a fixed seed drops the same messages every run", "[proxy]") {
  const std::vector<ProxyDrop> first = RunWithLoss(7, 200, 0.3);
  const std::vector<ProxyDrop> second = RunWithLoss(7, 200, 0.3);
  const std::vector<ProxyDrop> other = RunWithLoss(8, 200, 0.3);
  // Ports differ between runs; the indices and directions must not.
  const auto shape = [](const std::vector<ProxyDrop>& drops) {
    std::vector<std::pair<uint64_t, ProxyDirection>> out;
    for (const ProxyDrop& d : drops) out.emplace_back(d.request_index, d.direction);
    return out;
  };
  CHECK(shape(first) == shape(second));
  CHECK(shape(first) != shape(other));
  // About half of 200 messages are lost one way or the other at 0.3 each way (1 - 0.7^2).
  CHECK(first.size() > 40);
  CHECK(first.size() < 160);
  size_t replies_lost = 0;
  for (const ProxyDrop& d : first) replies_lost += d.direction == kToClient ? 1 : 0;
  CHECK(replies_lost > 0);
  CHECK(replies_lost < first.size());
}

TEST_CASE("proxy - extra latency holds each message, and order is kept", "[proxy]") {
  Rig rig;
  Socket via(rig.port);
  using std::chrono::milliseconds;

  rig.proxy.SetExtraLatency(rig.link, kToClient, 200'000);
  auto start = Clock::now();
  CHECK(via.Query("PING\r\n") == "+PONG\r\n");
  CHECK(Clock::now() - start >= milliseconds(200));

  rig.proxy.SetExtraLatency(rig.link, kToClient, 0);
  rig.proxy.SetExtraLatency(rig.link, kToServer, 150'000);
  start = Clock::now();
  CHECK(via.Query("PING\r\n") == "+PONG\r\n");
  CHECK(Clock::now() - start >= milliseconds(150));

  // The spike ends while a request is held: the next request still arrives after it.
  rig.proxy.SetExtraLatency(rig.link, kToServer, 300'000);
  start = Clock::now();
  via.Send(Command({"INCR", "c"}));
  // Let the proxy take the first one under the spike.
  REQUIRE(Eventually([&] { return rig.proxy.Stats(rig.link).delayed == 3; }, 2000));
  rig.proxy.SetExtraLatency(rig.link, kToServer, 0);
  via.Send(Command({"INCR", "c"}));
  CHECK(via.ReadOrFail() == ":1\r\n");
  CHECK(via.ReadOrFail() == ":2\r\n");
  CHECK(Clock::now() - start >= milliseconds(300));
  const lockstep::ProxyLinkStats stats = rig.proxy.Stats(rig.link);
  CHECK(stats.delayed == 3);
  CHECK(stats.dropped == 0);
}

// Sends `count` pipelined PINGs through a link whose requests are held a latency drawn from
// `latency`, reads every reply, and returns the link's statistics.
lockstep::ProxyLinkStats RunWithLatency(uint64_t seed, const lockstep::Distribution& latency,
                                        int count) {
  Rig rig(ProxyLinkKind::kCommands, seed);
  rig.proxy.SetLatency(rig.link, kToServer, latency);
  Socket via(rig.port);
  std::string pipeline;
  for (int i = 0; i < count; ++i) pipeline += Command({"ECHO", std::to_string(i)});
  via.Send(pipeline);
  // In order: a short draw never lets a request overtake an earlier one.
  for (int i = 0; i < count; ++i) REQUIRE(Bulk(via.ReadOrFail()) == std::to_string(i));
  return rig.proxy.Stats(rig.link);
}

// The draws' mean and variance, read from the proxy's own accounting, must lie within five
// standard errors of the distribution's, for n draws: sigma/sqrt(n) for the mean and
// sqrt((mu4 - sigma^4)/n) for the variance (mu4: the fourth central moment).
void CheckDraws(const lockstep::ProxyLinkStats& stats, int n, double mean, double variance,
                double mu4) {
  REQUIRE(stats.latency_draws == static_cast<uint64_t>(n));
  const double drawn_mean = static_cast<double>(stats.latency_drawn_us) / n;
  const double drawn_variance = stats.latency_drawn_us_squares / n - drawn_mean * drawn_mean;
  const double mean_bound = 5 * std::sqrt(variance / n) + 1;  // +1: draws are whole µs.
  const double variance_bound = 5 * std::sqrt((mu4 - variance * variance) / n) + mean;
  INFO("mean " << drawn_mean << " (want " << mean << " +- " << mean_bound << "), variance "
               << drawn_variance << " (want " << variance << " +- " << variance_bound << ")");
  CHECK(std::abs(drawn_mean - mean) <= mean_bound);
  CHECK(std::abs(drawn_variance - variance) <= variance_bound);
}

TEST_CASE("proxy - latency is drawn per message from the link's distribution, in order",
          "[proxy]") {
  using lockstep::Distribution;
  constexpr int kCount = 3000;
  SECTION("uniform") {
    const double lo = 100, hi = 4100, width = hi - lo;
    const lockstep::ProxyLinkStats stats =
        RunWithLatency(5, Distribution{Distribution::Kind::kUniform, lo, hi, 0}, kCount);
    CheckDraws(stats, kCount, (lo + hi) / 2, width * width / 12, std::pow(width, 4) / 80);
    CHECK(stats.delayed == static_cast<uint64_t>(kCount));
    // A pipeline arrives nearly at once: most short draws wait behind a longer one.
    CHECK(stats.fifo_waits > 0);
    CHECK(stats.dropped == 0);
  }
  SECTION("exponential") {
    const double mean = 1500;
    const lockstep::ProxyLinkStats stats =
        RunWithLatency(6, Distribution{Distribution::Kind::kExponential, mean, 0, 0}, kCount);
    CheckDraws(stats, kCount, mean, mean * mean, 9 * std::pow(mean, 4));
  }
  SECTION("fixed: every message the same, nothing drawn from the generator") {
    const lockstep::ProxyLinkStats stats = RunWithLatency(5, Distribution::Fixed(700), 200);
    CHECK(stats.latency_draws == 200);
    CHECK(stats.latency_drawn_us == 200 * 700);
  }
}

TEST_CASE("proxy - latency draws with a fixed seed are the same every run", "[proxy]") {
  const lockstep::Distribution latency{lockstep::Distribution::Kind::kNormal, 2000, 800, 0};
  const lockstep::ProxyLinkStats first = RunWithLatency(21, latency, 500);
  const lockstep::ProxyLinkStats second = RunWithLatency(21, latency, 500);
  const lockstep::ProxyLinkStats other = RunWithLatency(22, latency, 500);
  CHECK(first.latency_draws == 500);
  CHECK(first.latency_drawn_us == second.latency_drawn_us);
  CHECK(first.latency_drawn_us_squares == second.latency_drawn_us_squares);
  CHECK(first.latency_drawn_us != other.latency_drawn_us);
}

TEST_CASE("proxy - a transaction's replies share one fate", "[proxy]") {
  Rig rig;
  Socket via(rig.port);
  Socket direct(rig.redis->port());
  const int port = via.local_port();

  SECTION("lost replies beginning after MULTI's reply drop none of the rest") {
    CHECK(via.Query(Command({"MULTI"})) == "+OK\r\n");                           // 0
    rig.proxy.SetLoseReplies(rig.link, true);
    via.Send(Command({"INCR", "n"}) + Command({"EXEC"}));                        // 1, 2
    CHECK(via.ReadOrFail() == "+QUEUED\r\n");
    CHECK(via.ReadOrFail() == "*1\r\n:1\r\n");
    CHECK(rig.proxy.TakeDrops().empty());
    via.Send(Command({"INCR", "n"}));                                            // 3: lost
    CHECK(WaitForDrops(rig.proxy, 1) == std::vector<ProxyDrop>{{rig.link, port, 3, kToClient, ":2\r\n"}});
  }
  SECTION("lost replies ending after MULTI's reply drop all of them; EXEC's comes with its drop") {
    rig.proxy.SetLoseReplies(rig.link, true);
    via.Send(Command({"MULTI"}));                                                // 0
    CHECK(WaitForDrops(rig.proxy, 1) == std::vector<ProxyDrop>{{rig.link, port, 0, kToClient, "+OK\r\n"}});
    rig.proxy.SetLoseReplies(rig.link, false);
    via.Send(Command({"INCR", "n"}) + Command({"EXEC"}));                        // 1, 2
    CHECK(WaitForDrops(rig.proxy, 2) ==
          std::vector<ProxyDrop>{{rig.link, port, 1, kToClient, "+QUEUED\r\n"},
                                 {rig.link, port, 2, kToClient, "*1\r\n:1\r\n"}});
    CHECK(!via.Read(kSilenceMs).has_value());
    CHECK(direct.Query(Command({"GET", "n"})) == BulkReply("1"));  // The server ran it.
    CHECK(via.Query(Command({"INCR", "n"})) == ":2\r\n");
  }
  SECTION("a partition beginning while the rest are held for latency cuts none of them") {
    CHECK(via.Query(Command({"MULTI"})) == "+OK\r\n");
    rig.proxy.SetExtraLatency(rig.link, kToClient, 300'000);
    via.Send(Command({"INCR", "n"}) + Command({"EXEC"}));
    REQUIRE(Eventually([&] { return rig.proxy.Stats(rig.link).delayed == 2; }, 2000));
    rig.proxy.SetBlocked(rig.link, kToClient, true);  // While both replies are held.
    CHECK(via.ReadOrFail() == "+QUEUED\r\n");
    CHECK(via.ReadOrFail() == "*1\r\n:1\r\n");
    CHECK(rig.proxy.TakeDrops().empty());
    CHECK(rig.proxy.Stats(rig.link).dropped == 0);
  }
  SECTION("a partition beginning while MULTI's reply is held cuts every reply") {
    rig.proxy.SetExtraLatency(rig.link, kToClient, 300'000);
    via.Send(Command({"MULTI"}) + Command({"INCR", "n"}));
    REQUIRE(Eventually([&] { return rig.proxy.Stats(rig.link).delayed == 2; }, 2000));
    rig.proxy.SetBlocked(rig.link, kToClient, true);
    CHECK(WaitForDrops(rig.proxy, 2).size() == 2);
    rig.proxy.SetBlocked(rig.link, kToClient, false);
    rig.proxy.SetExtraLatency(rig.link, kToClient, 0);
    via.Send(Command({"EXEC"}));  // Healed, yet it goes as the transaction's first reply went.
    CHECK(WaitForDrops(rig.proxy, 1) == std::vector<ProxyDrop>{{rig.link, port, 2, kToClient, "*1\r\n:1\r\n"}});
    CHECK(!via.Read(kSilenceMs).has_value());
    CHECK(via.Query("PING\r\n") == "+PONG\r\n");  // The next command is on its own again.
  }
  SECTION("a partition beginning while a transaction's later requests are held cuts none") {
    CHECK(via.Query(Command({"MULTI"})) == "+OK\r\n");
    rig.proxy.SetExtraLatency(rig.link, kToServer, 300'000);
    via.Send(Command({"INCR", "n"}) + Command({"EXEC"}));
    REQUIRE(Eventually([&] { return rig.proxy.Stats(rig.link).delayed == 2; }, 2000));
    rig.proxy.SetBlocked(rig.link, kToServer, true);
    CHECK(via.ReadOrFail() == "+QUEUED\r\n");
    CHECK(via.ReadOrFail() == "*1\r\n:1\r\n");
    CHECK(rig.proxy.TakeDrops().empty());
  }
}

TEST_CASE("proxy - drop reports name the request, and come before any later reply", "[proxy]") {
  Rig rig;
  Socket via(rig.port);
  Socket direct(rig.redis->port());

  SECTION("each kind of drop, one at a time") {
    CHECK(via.Query("PING\r\n") == "+PONG\r\n");                      // 0
    rig.proxy.SetBlocked(rig.link, kToServer, true);
    via.Send(Command({"ECHO", "a"}));                                 // 1: lost
    CHECK(!via.Read(kSilenceMs).has_value());
    rig.proxy.SetBlocked(rig.link, kToServer, false);
    via.Send("\r\n");                                                 // No request at all.
    CHECK(via.Query(Command({"ECHO", "b"})) == BulkReply("b"));      // 2
    rig.proxy.SetLoseReplies(rig.link, true);
    via.Send(Command({"ECHO", "c"}));                                 // 3: reply lost
    CHECK(!via.Read(kSilenceMs).has_value());
    rig.proxy.SetLoseReplies(rig.link, false);
    CHECK(via.Query(Command({"ECHO", "d"})) == BulkReply("d"));      // 4
    CHECK(rig.proxy.TakeDrops() ==
          std::vector<ProxyDrop>{{rig.link, via.local_port(), 1, kToServer, ""},
                                 {rig.link, via.local_port(), 3, kToClient, "$1\r\nc\r\n"}});
  }
  SECTION("under loss, a reply is read only after the drops in front of it are queued") {
    rig.proxy.SetLoss(rig.link, kToClient, 0.5);
    rig.proxy.SetLoss(rig.link, kToServer, 0.2);
    constexpr int kCount = 100;
    std::string pipeline;
    for (int i = 0; i < kCount; ++i) pipeline += Command({"ECHO", std::to_string(i)});
    via.Send(pipeline);
    std::set<uint64_t> accounted;  // Replied or reported.
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (accounted.size() < kCount && Clock::now() < deadline) {
      std::optional<std::string> reply = via.Read(50);
      // Read first, then take: the contract a driver follows.
      for (const ProxyDrop& d : rig.proxy.TakeDrops()) {
        CHECK(d.client_port == via.local_port());
        CHECK(accounted.insert(d.request_index).second);
      }
      if (!reply) continue;
      const uint64_t index = std::stoull(Bulk(*reply));
      for (uint64_t k = 0; k < index; ++k) {
        INFO("reply " << index << " arrived before request " << k << " was accounted for");
        CHECK(accounted.contains(k));
      }
      CHECK(accounted.insert(index).second);
    }
    CHECK(accounted.size() == kCount);
  }
}

TEST_CASE("proxy - pub/sub: confirmations are replies, pushed messages are not", "[proxy]") {
  Rig rig(ProxyLinkKind::kPubSub);
  Socket via(rig.port);
  Socket direct(rig.redis->port());
  const std::string confirm_a = "*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n";

  CHECK(via.Query(Command({"SUBSCRIBE", "a"})) == confirm_a);  // 0
  via.Send(Command({"SUBSCRIBE", "b", "c"}));                    // 1: two confirmations
  CHECK(via.ReadOrFail() == "*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n");
  CHECK(via.ReadOrFail() == "*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:3\r\n");
  CHECK(direct.Query(Command({"PUBLISH", "b", "hello"})) == ":1\r\n");
  CHECK(via.ReadOrFail() == "*3\r\n$7\r\nmessage\r\n$1\r\nb\r\n$5\r\nhello\r\n");

  rig.proxy.SetLoseReplies(rig.link, true);
  // A pushed message is lost without a report: it answers no request.
  CHECK(direct.Query(Command({"PUBLISH", "a", "lost"})) == ":1\r\n");
  // UNSUBSCRIBE without channels: three confirmations, all answering request 2.
  via.Send(Command({"UNSUBSCRIBE"}));
  const std::vector<ProxyDrop> drops = WaitForDrops(rig.proxy, 3);
  // Pub/sub confirmations come without their bytes: only a commands link's replies carry them.
  CHECK(drops == std::vector<ProxyDrop>(3, ProxyDrop{rig.link, via.local_port(), 2, kToClient, ""}));
  CHECK(!via.Read(kSilenceMs).has_value());
  CHECK(rig.proxy.Stats(rig.link).dropped == 4);
  rig.proxy.SetLoseReplies(rig.link, false);

  // The pairing is still right: request 3 gets its reply, and a lost request 4 is reported.
  CHECK(via.Query("PING\r\n") == "+PONG\r\n");  // 3: no subscription left, a plain PONG.
  rig.proxy.SetBlocked(rig.link, kToServer, true);
  via.Send(Command({"SUBSCRIBE", "d"}));  // 4
  CHECK(WaitForDrops(rig.proxy, 1) ==
        std::vector<ProxyDrop>{{rig.link, via.local_port(), 4, kToServer, ""}});
  rig.proxy.SetBlocked(rig.link, kToServer, false);
  CHECK(via.Query(Command({"SUBSCRIBE", "a"})) == confirm_a);  // 5
  CHECK(direct.Query(Command({"PUBLISH", "a", "back"})) == ":1\r\n");
  CHECK(via.ReadOrFail() == "*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$4\r\nback\r\n");
  CHECK(rig.proxy.TakeDrops().empty());
}

// Reads one field of INFO.
std::string InfoField(Socket& s, const std::string& section, const std::string& field) {
  const std::string info = Bulk(s.Query(Command({"INFO", section})));
  const size_t at = info.find("\r\n" + field + ":");
  if (at == std::string::npos) return {};
  const size_t start = at + field.size() + 3;
  return info.substr(start, info.find("\r\n", start) - start);
}

TEST_CASE("proxy - a replica replicates through a replication link, a partition holds it",
          "[proxy]") {
  // Redis 7.0 sends the RDB diskless by default, "$EOF:<mark>" framed; from disk, "$<length>".
  const bool diskless = GENERATE(true, false);
  INFO((diskless ? "diskless" : "disk-based") << " RDB transfer");
  RedisProcess::Options master_options;
  master_options.extra_args = {"--repl-diskless-sync", diskless ? "yes" : "no",
                               "--repl-diskless-sync-delay", "0"};
  const std::unique_ptr<RedisProcess> master = RedisProcess::StartOrThrow(master_options);
  Socket on_master(master->port());
  // Enough data that the RDB payload spans many reads.
  std::string preload;
  for (int i = 0; i < 2000; ++i) preload += Command({"SET", "pre:" + std::to_string(i), "v"});
  on_master.Send(preload);
  for (int i = 0; i < 2000; ++i) REQUIRE(on_master.ReadOrFail() == "+OK\r\n");
  CHECK(on_master.Query(Command({"SET", "blob", std::string(1 << 20, 'x')})) == "+OK\r\n");

  FaultProxy proxy(3);
  std::string error;
  const FaultProxy::Endpoint link =
      proxy.AddLink("n2->n1", "127.0.0.1", master->port(), ProxyLinkKind::kReplication, &error);
  REQUIRE(link.link == 0);
  RedisProcess::Options replica_options;
  replica_options.extra_args = {"--replicaof", "127.0.0.1", std::to_string(link.port)};
  const std::unique_ptr<RedisProcess> replica = RedisProcess::StartOrThrow(replica_options);
  Socket on_replica(replica->port());
  REQUIRE(Eventually([&] { return on_replica.Query(Command({"DBSIZE"})) == ":2001\r\n"; }));
  CHECK(Bulk(on_replica.Query(Command({"GET", "blob"}))) == std::string(1 << 20, 'x'));
  CHECK(on_master.Query(Command({"SET", "live", "1"})) == "+OK\r\n");
  CHECK(Eventually([&] { return on_replica.Query(Command({"GET", "live"})) == BulkReply("1"); }));

  // A partition both ways: the stream waits, the link stays up, nothing is lost.
  proxy.SetBlocked(link.link, kToServer, true);
  proxy.SetBlocked(link.link, kToClient, true);
  CHECK(on_master.Query(Command({"SET", "held", "1"})) == "+OK\r\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(on_replica.Query(Command({"GET", "held"})) == "$-1\r\n");
  CHECK(InfoField(on_replica, "replication", "master_link_status") == "up");
  proxy.SetBlocked(link.link, kToServer, false);
  proxy.SetBlocked(link.link, kToClient, false);
  CHECK(Eventually([&] { return on_replica.Query(Command({"GET", "held"})) == BulkReply("1"); }));

  // Closing the link's connections (what a crash does to them): the replica reconnects through
  // the proxy and continues with a partial resync, no second full one.
  CHECK(InfoField(on_master, "stats", "sync_full") == "1");
  proxy.CloseAll(link.link);
  CHECK(on_master.Query(Command({"SET", "after", "1"})) == "+OK\r\n");
  CHECK(Eventually([&] { return on_replica.Query(Command({"GET", "after"})) == BulkReply("1"); }));
  CHECK(InfoField(on_master, "stats", "sync_full") == "1");
  CHECK(InfoField(on_master, "stats", "sync_partial_ok") == "1");

  const lockstep::ProxyLinkStats stats = proxy.Stats(link.link);
  CHECK(stats.connections == 2);
  CHECK(stats.dropped == 0);
  CHECK(stats.protocol_errors == 0);
  CHECK(stats.forwarded > 10);
  CHECK(proxy.TakeDrops().empty());
}

TEST_CASE("proxy - CloseAll closes the link's connections, clients may connect again",
          "[proxy]") {
  Rig rig;
  Socket first(rig.port);
  CHECK(first.Query("PING\r\n") == "+PONG\r\n");
  rig.proxy.CloseAll(rig.link);
  CHECK(first.ClosedWithin(2000));
  Socket second(rig.port);
  CHECK(second.Query("PING\r\n") == "+PONG\r\n");
  CHECK(rig.proxy.Stats(rig.link).connections == 2);
}

TEST_CASE("proxy - a link to a server that is down closes the client's connection",
          "[proxy]") {
  int port = 0;
  {
    const std::unique_ptr<RedisProcess> gone = RedisProcess::StartOrThrow();
    port = gone->port();
  }
  FaultProxy proxy(1);
  std::string error;
  const FaultProxy::Endpoint link =
      proxy.AddLink("c1->n1", "127.0.0.1", port, ProxyLinkKind::kCommands, &error);
  REQUIRE(link.link == 0);
  Socket via(link.port);
  via.Send("PING\r\n");
  CHECK(via.ClosedWithin(2000));
  CHECK(proxy.AddLink("bad", "127.0.0.1", 0, ProxyLinkKind::kCommands, &error).link == -1);
  CHECK(!error.empty());
}

size_t CountEntries(const char* dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST_CASE("proxy - stopping closes every socket and ends the thread", "[proxy]") {
  const std::unique_ptr<RedisProcess> redis = RedisProcess::StartOrThrow();
  const size_t fds_before = CountEntries("/proc/self/fd");
  const size_t threads_before = CountEntries("/proc/self/task");
  {
    auto proxy = std::make_unique<FaultProxy>(5);
    std::string error;
    std::vector<FaultProxy::Endpoint> links;
    for (const ProxyLinkKind kind :
         {ProxyLinkKind::kCommands, ProxyLinkKind::kPubSub, ProxyLinkKind::kCommands}) {
      links.push_back(proxy->AddLink("link", "127.0.0.1", redis->port(), kind, &error));
      REQUIRE(links.back().link >= 0);
    }
    CHECK(CountEntries("/proc/self/task") == threads_before + 1);
    Socket a(links[0].port);
    Socket b(links[1].port);
    CHECK(a.Query("PING\r\n") == "+PONG\r\n");
    CHECK(b.Query(Command({"SUBSCRIBE", "x"})) == "*3\r\n$9\r\nsubscribe\r\n$1\r\nx\r\n:1\r\n");
    // A message still held for latency when the proxy stops.
    proxy->SetExtraLatency(links[0].link, kToServer, 10'000'000);
    a.Send("PING\r\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    proxy->Stop();
    proxy->Stop();  // Idempotent.
    proxy->CloseAll(links[0].link);  // After Stop: returns at once.
    CHECK(a.ClosedWithin(2000));
    CHECK(b.ClosedWithin(2000));
    proxy.reset();
  }
  CHECK(CountEntries("/proc/self/fd") == fds_before);
  // A joined thread can stay listed for a moment while the kernel reaps it.
  CHECK(Eventually([&] { return CountEntries("/proc/self/task") == threads_before; }, 2000));
}

}  // namespace
