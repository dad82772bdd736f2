#include "live/redis_client.h"

#include <hiredis/hiredis.h>
#include <signal.h>

#include <cassert>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace lockstep {
namespace {

// hiredis 0.14 writes with write(2), so a server that closed the connection would kill the
// whole test binary with SIGPIPE; ignored, the write fails with EPIPE and we throw instead.
// Only a default disposition is replaced: a program that installed its own handler keeps it.
void IgnoreSigpipeOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      ::signal(SIGPIPE, SIG_IGN);
    }
  });
}

}  // namespace

// hiredis 0.14 only knows RESP2 replies (no RESP3 types, "*-1" reads as NIL).
Reply ReplyFromHiredis(const redisReply* r) {
  assert(r != nullptr);
  switch (r->type) {
    case REDIS_REPLY_STATUS: return Reply::Status(std::string(r->str, r->len));
    case REDIS_REPLY_ERROR: return Reply::Error(std::string(r->str, r->len));  // No '-'.
    case REDIS_REPLY_INTEGER: return Reply::Integer(r->integer);
    case REDIS_REPLY_STRING: return Reply::Bulk(std::string(r->str, r->len));
    case REDIS_REPLY_NIL: return Reply::Null();
    case REDIS_REPLY_ARRAY: {
      std::vector<Reply> elements;
      elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i) elements.push_back(ReplyFromHiredis(r->element[i]));
      return Reply::Array(std::move(elements));
    }
    default:
      throw std::runtime_error("hiredis returned an unknown reply type " + std::to_string(r->type));
  }
}

namespace {

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

}  // namespace

RedisClient::RedisClient(const std::string& host, int port, int timeout_ms) {
  IgnoreSigpipeOnce();
  const timeval timeout{timeout_ms / 1000, (timeout_ms % 1000) * 1000};
  ctx_ = redisConnectWithTimeout(host.c_str(), port, timeout);
  if (ctx_ == nullptr) {
    throw std::runtime_error("redis " + host + ":" + std::to_string(port) +
                             ": cannot allocate a hiredis context");
  }
  if (ctx_->err != 0) {
    const std::string message = ctx_->errstr;
    redisFree(ctx_);
    ctx_ = nullptr;
    throw std::runtime_error("redis " + host + ":" + std::to_string(port) + ": " + message);
  }
  // The same limit for every read and write, so a hung server fails the test instead of
  // hanging it.
  if (redisSetTimeout(ctx_, timeout) != REDIS_OK) {
    const std::string message = ctx_->errstr;
    redisFree(ctx_);
    ctx_ = nullptr;
    throw std::runtime_error("redis " + host + ":" + std::to_string(port) + ": " + message);
  }
}

RedisClient::~RedisClient() {
  if (ctx_ != nullptr) redisFree(ctx_);
}

void RedisClient::Append(const Argv& argv) {
  assert(ctx_ != nullptr);
  if (argv.empty()) throw std::invalid_argument("RedisClient: empty command");
  std::vector<const char*> args;
  std::vector<size_t> lengths;
  args.reserve(argv.size());
  lengths.reserve(argv.size());
  for (const std::string& a : argv) {
    args.push_back(a.data());
    lengths.push_back(a.size());
  }
  if (redisAppendCommandArgv(ctx_, static_cast<int>(argv.size()), args.data(), lengths.data()) !=
      REDIS_OK) {
    throw std::runtime_error(std::string("redis: cannot queue command: ") + ctx_->errstr);
  }
}

void RedisClient::Flush() {
  assert(ctx_ != nullptr);
  int written = 0;
  do {
    if (redisBufferWrite(ctx_, &written) != REDIS_OK) {
      throw std::runtime_error(std::string("redis: I/O error: ") + ctx_->errstr);
    }
  } while (!written);
}

Reply RedisClient::ReadReply() {
  assert(ctx_ != nullptr);
  void* raw = nullptr;
  const auto io_error = [this] {
    // After an I/O error hiredis keeps ctx_->err set and fails every later call the same way.
    return std::runtime_error(std::string("redis: I/O error: ") + ctx_->errstr);
  };
  // redisGetReply's loop, with a bound: hiredis looks for a line's end from the line's start
  // each time more bytes arrive, so a reply that is one endless line (a 50 MB status reply
  // from a server the user names) costs the square of its length; past kMaxReplyBytes unparsed
  // the reply is refused.
  if (redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) throw io_error();
  if (raw == nullptr) {
    int written = 0;
    do {
      if (redisBufferWrite(ctx_, &written) != REDIS_OK) throw io_error();
    } while (!written);
    while (raw == nullptr) {
      if (redisBufferRead(ctx_) != REDIS_OK) throw io_error();
      if (redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) throw io_error();
      if (raw == nullptr && ctx_->reader->len - ctx_->reader->pos > kMaxReplyBytes) {
        throw std::runtime_error("redis: a reply longer than " + std::to_string(kMaxReplyBytes) +
                                 " bytes, more than lockstep reads from a server");
      }
    }
  }
  ReplyPtr reply(static_cast<redisReply*>(raw));
  return ReplyFromHiredis(reply.get());
}

Reply RedisClient::Command(const Argv& argv) {
  Append(argv);
  return ReadReply();
}

}  // namespace lockstep
