// A blocking hiredis (0.14, RESP2) connection that speaks lockstep's Reply type, so replies from
// a live redis-server and from the emulator can be compared directly. hiredis 0.14 reads both
// "$-1" and "*-1" as nil, so a live reply never has type kNullArray: compare through
// Reply::AsSeenByResp2Client(). hiredis 0.14 also reads at most 8 levels of nested arrays
// (checked: a script returning a table nested 9 deep throws "No support for nested multi bulk
// replies with depth > 7"), where redis-cli 7.0's own hiredis reads deeper.
#ifndef LOCKSTEP_LIVE_REDIS_CLIENT_H_
#define LOCKSTEP_LIVE_REDIS_CLIENT_H_

#include <string>
#include <vector>

#include "core/reply.h"
#include "core/server.h"

struct redisContext;
struct redisReply;

namespace lockstep {

// A hiredis reply as lockstep's Reply (RESP2 types only). Throws std::runtime_error on a type
// hiredis 0.14 should never produce.
Reply ReplyFromHiredis(const redisReply* r);

class RedisClient {
 public:
  // The longest reply lockstep reads from a server, unparsed: every reply it asks for (INFO,
  // SCAN pages, script replies) is far shorter.
  static constexpr size_t kMaxReplyBytes = 4u << 20;
  // Connects to host:port (throws std::runtime_error with hiredis's message on failure).
  // timeout_ms limits the connect and also every later read and write, so a hung server fails
  // a test instead of hanging it (and a blocking command that waits longer than that throws).
  // Every I/O error throws std::runtime_error; the connection is unusable afterwards. The
  // first client also sets SIGPIPE to "ignore" when it is at its default (see the .cpp).
  RedisClient(const std::string& host, int port, int timeout_ms = 5000);
  ~RedisClient();
  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;

  // Sends one command and waits for its reply (binary safe).
  Reply Command(const Argv& argv);

  // Pipelining: Append queues a command; ReadReply returns the replies in order.
  void Append(const Argv& argv);
  Reply ReadReply();
  // Sends what Append queued without waiting for a reply (a blocking command whose reply
  // comes later; ReadReply reads it then).
  void Flush();

 private:
  redisContext* ctx_ = nullptr;
};

}  // namespace lockstep

#endif  // LOCKSTEP_LIVE_REDIS_CLIENT_H_
