// A non-blocking TCP connection to a Redis server speaking RESP2, driven by the EventLoop.
//
// Requests are encoded with hiredis's redisFormatCommandArgv and replies parsed with its
// redisReader, then converted to lockstep's Reply. Redis answers the requests of one
// connection in order, so each reply belongs to the oldest request still waiting for one
// (FIFO). Two things break that pairing, and the owner tells the connection about both:
//  - a fault proxy between us and the server dropped a request or its reply: NoReplyFor(k),
//    with k the 0-based index of the request on this TCP connection (the order in which it
//    was sent), takes request k out of the pairing, so the next reply goes to the request
//    after it. The report must reach the connection before the reply that follows k does
//    (the proxy and the driver run in the same loop, or the proxy holds that reply back).
//    When the proxy dropped the reply itself and hands over its bytes, the request's on_lost
//    (if it has one) gets that reply: the owner learns what the server did, its on_reply is
//    never called.
//  - the connection failed (connect refused, reset, closed by the server): every request
//    still waiting is dropped without a reply (the lock protocol sees timeouts, as Redisson
//    sees a dead connection), the owner's on_down is told, and the next Send after
//    reconnect_delay_us opens a new connection (whose request indexes start at 0 again).
//
// A pub/sub connection (Options::pubsub) pairs the confirmations of SUBSCRIBE and UNSUBSCRIBE
// with those requests, one channel per request, and hands every pushed ["message", channel,
// payload] to on_message instead.
#ifndef LOCKSTEP_LIVE_RESP_CONNECTION_H_
#define LOCKSTEP_LIVE_RESP_CONNECTION_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>

#include "base/argv.h"
#include "core/reply.h"
#include "live/event_loop.h"

struct redisReader;

namespace lockstep::live {

class RespConnection {
 public:
  using OnReply = std::function<void(const Reply&)>;
  // The longest reply it reads, unparsed, before it fails the connection (see ReadAll).
  static constexpr size_t kMaxReplyBytes = 4u << 20;

  struct Options {
    std::string host = "127.0.0.1";
    int port = 0;
    bool pubsub = false;
    int64_t reconnect_delay_us = 100'000;
    // Bytes not yet written plus requests waiting for replies: a server that stopped reading
    // (SIGSTOP) must not make us queue without end. Past either limit Send drops the request.
    size_t unsent_bytes_max = 64 << 20;
    size_t pending_max = 1 << 16;
  };
  struct Handlers {
    std::function<void(const std::string& channel, const std::string& payload)> on_message;
    // The connection failed; `why` says how. Requests that were waiting got no reply.
    std::function<void(const std::string& why)> on_down;
    // Called after bytes were read and before any reply in them is paired: where a driver
    // takes a fault proxy's drop reports (FaultProxy::TakeDrops) and calls NoReplyFor, which
    // the proxy queues before it forwards any later reply.
    std::function<void()> before_pairing;
  };

  RespConnection(EventLoop& loop, Options options, Handlers handlers);
  ~RespConnection();
  RespConnection(const RespConnection&) = delete;
  RespConnection& operator=(const RespConnection&) = delete;

  // Queues a request; `on_reply` gets its reply, unless the request is dropped (connection
  // down, NoReplyFor, Close). Opens the connection first if there is none (and the reconnect
  // delay has passed). Returns the request's index on the current connection, or -1 if it was
  // dropped at once. `on_lost`, if given, gets the reply a proxy dropped (NoReplyFor with the
  // reply's bytes) instead.
  int64_t Send(const Argv& argv, OnReply on_reply, OnReply on_lost = nullptr);

  // Request `index` of the current connection will get no reply. `lost_reply`, when not
  // empty, is the RESP reply a proxy dropped on its way to us: the request's on_lost gets it
  // (after the request left the pairing; a reply that does not parse whole is ignored).
  void NoReplyFor(int64_t index, std::string_view lost_reply = {});

  // Drops the connection and every waiting request (no callbacks). A later Send reconnects
  // without waiting for the reconnect delay.
  void Close();

  bool connected() const { return state_ == State::kConnected; }
  bool open() const { return fd_ >= 0; }
  // The local TCP port of the current connection (what a proxy sees as the client's port),
  // 0 when there is none.
  int local_port() const { return local_port_; }
  size_t pending() const { return pending_.size(); }
  int64_t sent_on_connection() const { return next_index_; }
  const Options& options() const { return options_; }

 private:
  enum class State : uint8_t { kClosed, kConnecting, kConnected };
  struct Pending {
    int64_t index = 0;
    bool no_reply = false;
    OnReply on_reply;
    OnReply on_lost;
  };

  bool Open();
  void Fail(const std::string& why);
  void Drop();
  void OnReady(short revents);
  void Flush();
  void ReadAll(const bool& alive);
  void Deliver(const Reply& reply);
  void UpdateInterest();

  EventLoop& loop_;
  Options options_;
  Handlers handlers_;
  State state_ = State::kClosed;
  int fd_ = -1;
  int local_port_ = 0;
  int64_t reconnect_at_us_ = 0;
  redisReader* reader_ = nullptr;
  std::string out_;          // Encoded requests not yet written.
  size_t out_written_ = 0;   // Of out_.
  std::deque<Pending> pending_;
  int64_t next_index_ = 0;
  uint64_t generation_ = 0;  // Counts connections, so a callback's Close is noticed.
  // Set while the connection's own callbacks run, so that a Fail inside one does not free what
  // the caller still uses.
  bool* alive_ = nullptr;
};

}  // namespace lockstep::live

#endif  // LOCKSTEP_LIVE_RESP_CONNECTION_H_
