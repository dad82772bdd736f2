#include "live/resp_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

#include "live/redis_client.h"

namespace lockstep::live {

namespace {

std::string Errno(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

// One whole RESP reply in `bytes`, nothing after it; nullopt otherwise.
std::optional<Reply> ParseWholeReply(std::string_view bytes) {
  redisReader* reader = redisReaderCreate();
  std::optional<Reply> out;
  void* raw = nullptr;
  if (redisReaderFeed(reader, bytes.data(), bytes.size()) == REDIS_OK &&
      redisReaderGetReply(reader, &raw) == REDIS_OK && raw != nullptr) {
    // Nothing may follow: the proxy hands over exactly one reply.
    void* more = nullptr;
    if (redisReaderGetReply(reader, &more) == REDIS_OK && more == nullptr) {
      out = ReplyFromHiredis(static_cast<redisReply*>(raw));
    }
    if (more != nullptr) freeReplyObject(more);
    freeReplyObject(raw);
  }
  redisReaderFree(reader);
  return out;
}

bool IsPush(const Reply& r, std::string_view kind) {
  return r.type == Reply::Type::kArray && !r.elements.empty() &&
         r.elements[0].type == Reply::Type::kBulk && r.elements[0].str == kind;
}

}  // namespace

RespConnection::RespConnection(EventLoop& loop, Options options, Handlers handlers)
    : loop_(loop), options_(std::move(options)), handlers_(std::move(handlers)) {}

RespConnection::~RespConnection() {
  if (alive_ != nullptr) *alive_ = false;
  Drop();
}

void RespConnection::Drop() {
  if (fd_ >= 0) {
    loop_.Unwatch(fd_);
    ::close(fd_);
  }
  fd_ = -1;
  local_port_ = 0;
  state_ = State::kClosed;
  if (reader_ != nullptr) redisReaderFree(reader_);
  reader_ = nullptr;
  ++generation_;
  out_.clear();
  out_written_ = 0;
  pending_.clear();
  next_index_ = 0;
}

void RespConnection::Close() {
  Drop();
  reconnect_at_us_ = 0;
}

void RespConnection::Fail(const std::string& why) {
  Drop();
  reconnect_at_us_ = EventLoop::NowUs() + options_.reconnect_delay_us;
  if (handlers_.on_down) handlers_.on_down(why);
}

bool RespConnection::Open() {
  assert(fd_ < 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(options_.port));
  if (::inet_pton(AF_INET, options_.host.c_str(), &addr.sin_addr) != 1) {
    // A name: resolve it (once per connect; the harness uses loopback addresses).
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (::getaddrinfo(options_.host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) {
      Fail("cannot resolve " + options_.host);
      return false;
    }
    addr.sin_addr = reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr;
    ::freeaddrinfo(found);
  }
  fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    Fail(Errno("socket"));
    return false;
  }
  const int one = 1;
  ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  reader_ = redisReaderCreate();
  if (::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0) {
    state_ = State::kConnected;
  } else if (errno == EINPROGRESS) {
    state_ = State::kConnecting;
  } else {
    Fail(Errno("connect"));
    return false;
  }
  sockaddr_in local{};
  socklen_t len = sizeof(local);
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
    local_port_ = ntohs(local.sin_port);
  }
  loop_.Watch(fd_, true, true, [this](short revents) { OnReady(revents); });
  return true;
}

int64_t RespConnection::Send(const Argv& argv, OnReply on_reply, OnReply on_lost) {
  assert(!argv.empty());
  if (fd_ < 0) {
    if (EventLoop::NowUs() < reconnect_at_us_) return -1;  // Still down: the request is lost.
    if (!Open()) return -1;
  }
  if (out_.size() - out_written_ > options_.unsent_bytes_max ||
      pending_.size() >= options_.pending_max) {
    return -1;  // The server is not reading: as lost as a request a dead link swallowed.
  }
  std::vector<const char*> args;
  std::vector<size_t> lengths;
  args.reserve(argv.size());
  lengths.reserve(argv.size());
  for (const std::string& a : argv) {
    args.push_back(a.data());
    lengths.push_back(a.size());
  }
  char* encoded = nullptr;
  const int n = redisFormatCommandArgv(&encoded, static_cast<int>(argv.size()), args.data(),
                                       lengths.data());
  assert(n > 0 && encoded != nullptr);
  if (out_written_ == out_.size()) {
    out_.clear();
    out_written_ = 0;
  }
  out_.append(encoded, static_cast<size_t>(n));
  redisFreeCommand(encoded);
  const int64_t index = next_index_++;
  pending_.push_back(Pending{index, false, std::move(on_reply), std::move(on_lost)});
  if (state_ == State::kConnected) Flush();
  return fd_ >= 0 ? index : -1;
}

void RespConnection::NoReplyFor(int64_t index, std::string_view lost_reply) {
  OnReply on_lost;
  for (Pending& p : pending_) {
    if (p.index == index) {
      p.no_reply = true;
      p.on_reply = nullptr;
      on_lost = std::move(p.on_lost);
      p.on_lost = nullptr;
      break;
    }
  }
  while (!pending_.empty() && pending_.front().no_reply) pending_.pop_front();
  // Last: the callback may send, or close this connection.
  if (on_lost && !lost_reply.empty()) {
    if (std::optional<Reply> reply = ParseWholeReply(lost_reply)) on_lost(*reply);
  }
}

void RespConnection::UpdateInterest() {
  if (fd_ < 0) return;
  const bool want_write = state_ == State::kConnecting || out_written_ < out_.size();
  loop_.SetInterest(fd_, true, want_write);
}

void RespConnection::Flush() {
  while (out_written_ < out_.size()) {
    const ssize_t n = ::send(fd_, out_.data() + out_written_, out_.size() - out_written_,
                             MSG_NOSIGNAL);
    if (n > 0) {
      out_written_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0 && errno == EINTR) continue;
    Fail(Errno("send"));
    return;
  }
  if (out_written_ == out_.size()) {
    out_.clear();
    out_written_ = 0;
  }
  UpdateInterest();
}

void RespConnection::OnReady(short revents) {
  bool alive = true;
  alive_ = &alive;
  const uint64_t generation = generation_;
  if (state_ == State::kConnecting) {
    int error = 0;
    socklen_t len = sizeof(error);
    ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &error, &len);
    if (error != 0) {
      alive_ = nullptr;
      errno = error;
      Fail(Errno("connect"));
      return;
    }
    if ((revents & (POLLOUT | POLLIN | POLLHUP | POLLERR)) != 0) state_ = State::kConnected;
  }
  if (state_ == State::kConnected && (revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
    ReadAll(alive);
  }
  // A callback may have closed, failed or destroyed the connection.
  if (!alive) return;
  alive_ = nullptr;
  if (generation_ == generation && state_ == State::kConnected) Flush();
}

void RespConnection::ReadAll(const bool& alive) {
  const uint64_t generation = generation_;
  char buf[16384];
  for (;;) {
    const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
    if (n == 0) {
      Fail("connection closed by the server");
      return;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      Fail(Errno("recv"));
      return;
    }
    if (handlers_.before_pairing) {
      handlers_.before_pairing();
      if (!alive || generation_ != generation) return;
    }
    if (redisReaderFeed(reader_, buf, static_cast<size_t>(n)) != REDIS_OK) {
      Fail("bad reply: " + std::string(reader_->errstr));
      return;
    }
    for (;;) {
      void* raw = nullptr;
      if (redisReaderGetReply(reader_, &raw) != REDIS_OK) {
        Fail("bad reply: " + std::string(reader_->errstr));
        return;
      }
      if (raw == nullptr) {
        // A reply that never ends its line costs hiredis the square of its length (it looks
        // for the line's end from the line's start at every read): bounded.
        if (reader_->len - reader_->pos > kMaxReplyBytes) {
          Fail("a reply longer than " + std::to_string(kMaxReplyBytes) +
               " bytes, more than lockstep reads from a server");
          return;
        }
        break;
      }
      Reply reply = ReplyFromHiredis(static_cast<redisReply*>(raw));
      freeReplyObject(raw);
      Deliver(reply);
      // The callback may have dropped this connection (or opened a new one on the same fd
      // number, with a new reader): nothing more of the old stream is ours.
      if (!alive || generation_ != generation) return;
    }
  }
}

void RespConnection::Deliver(const Reply& reply) {
  if (options_.pubsub && IsPush(reply, "message") && reply.elements.size() == 3) {
    if (handlers_.on_message) handlers_.on_message(reply.elements[1].str, reply.elements[2].str);
    return;
  }
  while (!pending_.empty() && pending_.front().no_reply) pending_.pop_front();
  if (pending_.empty()) return;  // A reply to nothing we wait for (a proxy made it up?): ignored.
  OnReply on_reply = std::move(pending_.front().on_reply);
  pending_.pop_front();
  if (on_reply) on_reply(reply);
}

}  // namespace lockstep::live
