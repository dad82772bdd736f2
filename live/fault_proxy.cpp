#include "live/fault_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "base/ascii.h"
#include "live/resp_frame.h"

namespace lockstep {
namespace {

constexpr size_t kReadChunkBytes = 64 * 1024;
// Per connection and direction and loop turn, so one busy connection cannot starve the others.
constexpr size_t kReadTurnBytes = 256 * 1024;
constexpr int kListenBacklog = 128;

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

size_t Index(ProxyDirection direction) { return static_cast<size_t>(direction); }

std::string ErrnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }


void EraseName(std::set<std::string, std::less<>>* names, std::string_view name) {
  if (auto it = names->find(name); it != names->end()) names->erase(it);
}

void CloseFd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

// Sets TCP_NODELAY: the proxy writes whole messages and must not add Nagle's delay to them.
void NoDelay(int fd) {
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Where a message stands in a MULTI .. EXEC: the messages after the first share its fate.
enum class Group : uint8_t { kNone, kFirst, kInside, kLast };

bool FollowsGroup(Group g) { return g == Group::kInside || g == Group::kLast; }

// The group of a command named `name` on a stream that is (*in_transaction) inside a MULTI;
// updates *in_transaction as redis-server's MULTI, EXEC and DISCARD move its client. A MULTI
// inside one is an error that leaves the transaction open, an EXEC outside one an error.
Group GroupOf(std::string_view name, bool* in_transaction) {
  if (!*in_transaction) {
    if (!EqualsIgnoreCase(name, "multi")) return Group::kNone;
    *in_transaction = true;
    return Group::kFirst;
  }
  if (EqualsIgnoreCase(name, "exec") || EqualsIgnoreCase(name, "discard")) {
    *in_transaction = false;
    return Group::kLast;
  }
  return Group::kInside;
}

}  // namespace

// How a forwarded request's replies end: after a number of them, or (an UNSUBSCRIBE or
// PUNSUBSCRIBE naming nothing) with the confirmation after which the connection has no channel
// (pattern) left.
struct Expect {
  enum class Until : uint8_t { kCount, kNoChannels, kNoPatterns };
  uint64_t index = 0;
  int64_t replies_left = 1;
  Until until = Until::kCount;
  Group group = Group::kNone;  // The request's; its last reply's group in the reply stream.
};

struct FaultProxy::Message {
  std::string bytes;
  int64_t release_us = 0;
  // A request: its index, and how its replies end. A reply: the index of its request.
  bool has_index = false;
  uint64_t index = 0;
  bool is_request = false;
  Expect expect;
  Group group = Group::kNone;
};

// Where a master->replica stream is: handshake replies, the RDB transfer, then commands.
enum class ReplicationPhase : uint8_t { kHandshake, kRdbHeader, kRdbSized, kRdbEof, kStream };

// One direction of a connection.
struct FaultProxy::Flow {
  std::string in;               // Read, not yet a whole message.
  std::deque<Message> queued;   // Whole messages waiting for their release time.
  size_t queued_bytes = 0;
  std::string out;              // Released, not yet written to the other side.
  size_t out_pos = 0;
  int64_t last_release_us = 0;  // Releases never go back in time: order is kept.
  bool held = false;            // A due message waits for a partition of a replication link.
  bool eof = false;             // The sending side closed.
  Prng rng{0};                  // Loss draws.
  Prng latency_rng{0};          // Latency draws.
  ReplicationPhase phase = ReplicationPhase::kHandshake;
  int64_t rdb_left = 0;         // kRdbSized.
  std::string eof_mark;         // kRdbEof.
  // A transaction's messages share the fate of its first (Group): whether it was dropped when
  // it arrived, its latency draw, and whether it was cut when it was due. So a fault never
  // lets the server run half of a transaction, nor a client get half of its replies.
  bool group_dropped_on_arrival = false;
  int64_t group_delay_us = 0;
  bool group_cut_when_due = false;
  bool stream_in_transaction = false;  // A replication stream's MULTI .. EXEC.

  size_t Pending() const { return queued_bytes + (out.size() - out_pos); }
};

struct FaultProxy::Connection {
  int link = -1;
  int client_fd = -1;
  int server_fd = -1;
  int client_port = 0;
  bool connecting = false;
  bool dead = false;
  uint64_t close_epoch = 0;  // Link::close_requested when accepted.
  std::array<Flow, 2> flows;
  uint64_t next_request = 0;
  bool requests_in_transaction = false;  // As the requests read so far leave the client.
  std::deque<Expect> awaiting;  // Forwarded requests whose replies are due, oldest first.
  // What the server has confirmed (pub/sub links): ends an UNSUBSCRIBE that names nothing.
  std::set<std::string, std::less<>> channels;
  std::set<std::string, std::less<>> patterns;

  ~Connection() {
    CloseFd(&client_fd);
    CloseFd(&server_fd);
  }
  Flow& flow(ProxyDirection direction) { return flows[Index(direction)]; }
};

struct FaultProxy::Link {
  struct Faults {
    bool blocked = false;
    Distribution latency_us = Distribution::Fixed(0);
    int64_t extra_us = 0;
    double loss = 0;
  };
  std::string name;
  ProxyLinkKind kind = ProxyLinkKind::kCommands;
  sockaddr_storage upstream{};
  socklen_t upstream_len = 0;
  int listen_fd = -1;
  int port = 0;
  std::array<Faults, 2> faults;
  bool lose_replies = false;
  uint64_t close_requested = 0;  // CloseAll calls so far.
  uint64_t close_done = 0;       // How many of them the proxy thread has carried out.
  ProxyLinkStats stats;
  Prng rng{0};
};

// --- controls (any thread) --------------------------------------------------------------------

FaultProxy::FaultProxy(uint64_t seed) : rng_(seed) {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  drop_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0 || drop_fd_ < 0) {
    const std::string error = ErrnoText("eventfd");
    CloseFd(&wake_fd_);
    CloseFd(&drop_fd_);
    throw std::runtime_error(error);
  }
  thread_ = std::thread([this] { Run(); });
}

FaultProxy::~FaultProxy() {
  Stop();
  for (auto& link : links_) CloseFd(&link->listen_fd);
  CloseFd(&wake_fd_);
  CloseFd(&drop_fd_);
}

void FaultProxy::Stop() {
  std::call_once(stop_once_, [this] {
    stop_.store(true);
    Wake();
    thread_.join();
  });
}

void FaultProxy::Wake() {
  const uint64_t one = 1;
  // Fails only when the counter is about to overflow, and then the thread is awake anyway.
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

FaultProxy::Endpoint FaultProxy::AddLink(const std::string& name,
                                         const std::string& upstream_host, int upstream_port,
                                         ProxyLinkKind kind, std::string* error) {
  if (upstream_port <= 0 || upstream_port > 65535) {
    *error = "link " + name + ": upstream port " + std::to_string(upstream_port) +
             " is not in 1..65535";
    return {};
  }
  auto link = std::make_unique<Link>();
  link->name = name;
  link->kind = kind;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(upstream_port);
  const int rc = ::getaddrinfo(upstream_host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0 || found == nullptr) {
    *error = "link " + name + ": cannot resolve " + upstream_host + ": " + ::gai_strerror(rc);
    return {};
  }
  std::memcpy(&link->upstream, found->ai_addr, found->ai_addrlen);
  link->upstream_len = found->ai_addrlen;
  ::freeaddrinfo(found);

  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(fd, kListenBacklog) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    *error = "link " + name + ": " + ErrnoText("listen on 127.0.0.1:0");
    CloseFd(&fd);
    return {};
  }
  link->listen_fd = fd;
  link->port = ntohs(addr.sin_port);
  Endpoint endpoint;
  endpoint.port = link->port;
  {
    std::lock_guard lock(mu_);
    link->rng = rng_.Fork();
    endpoint.link = static_cast<int>(links_.size());
    links_.push_back(std::move(link));
  }
  Wake();  // The thread listens on the new port from its next turn on.
  assert(endpoint.link >= 0 && endpoint.port > 0);
  return endpoint;
}

FaultProxy::Link* FaultProxy::FindLink(int link) {
  assert(link >= 0 && static_cast<size_t>(link) < links_.size());
  if (link < 0 || static_cast<size_t>(link) >= links_.size()) return nullptr;
  return links_[static_cast<size_t>(link)].get();
}

const FaultProxy::Link* FaultProxy::FindLink(int link) const {
  return const_cast<FaultProxy*>(this)->FindLink(link);
}

void FaultProxy::SetBlocked(int link, ProxyDirection direction, bool blocked) {
  {
    std::lock_guard lock(mu_);
    if (Link* l = FindLink(link)) l->faults[Index(direction)].blocked = blocked;
  }
  Wake();  // A replication link releases what it held.
}

void FaultProxy::SetLatency(int link, ProxyDirection direction, const Distribution& latency_us) {
  std::lock_guard lock(mu_);
  if (Link* l = FindLink(link)) l->faults[Index(direction)].latency_us = latency_us;
}

void FaultProxy::SetExtraLatency(int link, ProxyDirection direction, int64_t extra_us) {
  assert(extra_us >= 0);
  std::lock_guard lock(mu_);
  if (Link* l = FindLink(link)) {
    l->faults[Index(direction)].extra_us = std::max<int64_t>(0, extra_us);
  }
}

void FaultProxy::SetLoss(int link, ProxyDirection direction, double rate) {
  assert(rate >= 0 && rate <= 1);
  std::lock_guard lock(mu_);
  if (Link* l = FindLink(link)) l->faults[Index(direction)].loss = std::clamp(rate, 0.0, 1.0);
}

void FaultProxy::SetLoseReplies(int link, bool lose) {
  std::lock_guard lock(mu_);
  if (Link* l = FindLink(link)) l->lose_replies = lose;
}

void FaultProxy::CloseAll(int link) {
  std::unique_lock lock(mu_);
  Link* l = FindLink(link);
  if (l == nullptr) return;
  const uint64_t target = ++l->close_requested;
  Wake();
  closed_cv_.wait(lock, [&] { return stopped_ || l->close_done >= target; });
}

ProxyLinkStats FaultProxy::Stats(int link) const {
  std::lock_guard lock(mu_);
  const Link* l = FindLink(link);
  return l != nullptr ? l->stats : ProxyLinkStats{};
}

std::string FaultProxy::LinkName(int link) const {
  std::lock_guard lock(mu_);
  const Link* l = FindLink(link);
  return l != nullptr ? l->name : std::string();
}

std::vector<ProxyDrop> FaultProxy::TakeDrops() {
  std::lock_guard lock(mu_);
  uint64_t count = 0;
  [[maybe_unused]] const ssize_t n = ::read(drop_fd_, &count, sizeof(count));  // Re-arms it.
  std::vector<ProxyDrop> taken;
  taken.swap(drops_);
  drops_reply_bytes_ = 0;
  return taken;
}

// --- the proxy thread -------------------------------------------------------------------------

void FaultProxy::Run() {
  ::pthread_setname_np(::pthread_self(), "fault-proxy");
  while (!stop_.load()) Turn();
  connections_.clear();  // Closes every socket.
  {
    std::lock_guard lock(mu_);
    stopped_ = true;
  }
  closed_cv_.notify_all();
}

// The sockets one turn waits on: the wake eventfd, each link's listener, then the client's and
// the server's socket of each connection that existed when the turn began.
struct FaultProxy::PollSet {
  std::vector<pollfd> fds;
  std::vector<int> listener_links;  // fds[1 + i] listens for link listener_links[i].
  size_t connections = 0;           // connections_[0, connections) are in fds, two each.

  size_t FirstConnection() const { return 1 + listener_links.size(); }
};

// One turn of the loop: wait for sockets or the next release time, read, decide under the lock,
// write, then close what is finished.
void FaultProxy::Turn() {
  PollSet set = Watch();
  const int64_t next_us = NextReleaseUs();
  timespec timeout{};
  if (next_us >= 0) {
    const int64_t wait_us = std::max<int64_t>(0, next_us - NowUs());
    timeout.tv_sec = static_cast<time_t>(wait_us / 1'000'000);
    timeout.tv_nsec = static_cast<long>(wait_us % 1'000'000) * 1000;
  }
  // ppoll, not poll: latency is in microseconds, and poll would round it to milliseconds.
  if (::ppoll(set.fds.data(), set.fds.size(), next_us >= 0 ? &timeout : nullptr, nullptr) < 0) {
    if (errno == EINTR) return;
    throw std::runtime_error(ErrnoText("fault proxy: ppoll"));
  }
  HandleEvents(set);
  const std::vector<std::pair<Link*, uint64_t>> closing = Decide(NowUs());
  for (auto& c : connections_) {
    if (c->dead) continue;
    c->dead = !WriteFlow(*c, ProxyDirection::kToServer) ||
              !WriteFlow(*c, ProxyDirection::kToClient) || Drained(*c);
  }
  std::erase_if(connections_, [](const auto& c) { return c->dead; });  // Closes their sockets.
  if (!closing.empty()) {
    {
      std::lock_guard lock(mu_);
      for (auto& [link, epoch] : closing) link->close_done = std::max(link->close_done, epoch);
    }
    closed_cv_.notify_all();
  }
}

FaultProxy::PollSet FaultProxy::Watch() const {
  PollSet set;
  set.fds.push_back({wake_fd_, POLLIN, 0});
  {
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < links_.size(); ++i) {
      set.fds.push_back({links_[i]->listen_fd, POLLIN, 0});
      set.listener_links.push_back(static_cast<int>(i));
    }
  }
  set.connections = connections_.size();
  for (const auto& c : connections_) {
    const auto events = [&](ProxyDirection read, ProxyDirection write) {
      const Flow& out = c->flow(write);
      return static_cast<short>((CanRead(*c, read) ? POLLIN : 0) |
                                (out.out_pos < out.out.size() ? POLLOUT : 0));
    };
    const short client = events(ProxyDirection::kToServer, ProxyDirection::kToClient);
    set.fds.push_back({c->client_fd, client, 0});
    // While connecting, writable means connected (or refused).
    const short server = c->connecting
                             ? short{POLLOUT}
                             : events(ProxyDirection::kToClient, ProxyDirection::kToServer);
    set.fds.push_back({c->server_fd, server, 0});
  }
  assert(set.fds.size() == set.FirstConnection() + 2 * set.connections);
  return set;
}

void FaultProxy::HandleEvents(const PollSet& set) {
  if (set.fds[0].revents & POLLIN) {
    uint64_t count = 0;
    [[maybe_unused]] const ssize_t n = ::read(wake_fd_, &count, sizeof(count));
  }
  for (size_t i = 0; i < set.listener_links.size(); ++i) {
    if (set.fds[1 + i].revents & POLLIN) AcceptAll(set.listener_links[i], set.fds[1 + i].fd);
  }
  assert(connections_.size() >= set.connections);  // Accepting only appends.
  for (size_t i = 0; i < set.connections; ++i) {
    Connection& c = *connections_[i];
    const short client = set.fds[set.FirstConnection() + 2 * i].revents;
    const short server = set.fds[set.FirstConnection() + 2 * i + 1].revents;
    // An error or a hang-up (a refused connect, a reset) ends the pair: nothing more can pass.
    if ((client | server) & (POLLERR | POLLHUP | POLLNVAL)) {
      c.dead = true;
      continue;
    }
    if (c.connecting && (server & POLLOUT)) FinishConnect(c);
    if (!c.dead && (client & POLLIN)) c.dead = !ReadFlow(c, ProxyDirection::kToServer);
    if (!c.dead && (server & POLLIN)) c.dead = !ReadFlow(c, ProxyDirection::kToClient);
  }
}

// Under the lock: carries out CloseAll requests, frames what was read and applies the faults to
// each whole message, releases what is due. Signals drop_fd_ before anything is written, so a
// drop is always queued before a later reply reaches its client. Returns the CloseAll requests
// carried out, to be acknowledged once the sockets are closed.
std::vector<std::pair<FaultProxy::Link*, uint64_t>> FaultProxy::Decide(int64_t now_us) {
  std::vector<std::pair<Link*, uint64_t>> closing;
  bool signal = false;
  {
    std::lock_guard lock(mu_);
    for (auto& link : links_) {
      if (link->close_requested > link->close_done) {
        closing.emplace_back(link.get(), link->close_requested);
      }
    }
    for (auto& c : connections_) {
      Link& link = *links_[static_cast<size_t>(c->link)];
      if (!c->dead && c->close_epoch < link.close_requested) c->dead = true;
      if (c->dead) continue;
      for (ProxyDirection d : {ProxyDirection::kToServer, ProxyDirection::kToClient}) {
        if (!ParseFlow(*c, d, link, now_us)) {
          ++link.stats.protocol_errors;
          c->dead = true;
          break;
        }
        Release(*c, d, link, now_us);
      }
    }
    signal = !drops_.empty() && drops_queued_;
    drops_queued_ = false;
  }
  if (signal) {
    const uint64_t one = 1;
    [[maybe_unused]] const ssize_t n = ::write(drop_fd_, &one, sizeof(one));
  }
  return closing;
}

void FaultProxy::AcceptAll(int link_id, int listen_fd) {
  for (;;) {
    sockaddr_in peer{};
    socklen_t len = sizeof(peer);
    const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&peer), &len,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: all taken; anything else: the client is gone already.
    if (connections_.size() >= kMaxConnections) {
      ::close(fd);  // The client sees its connection closed, as by a server at maxclients.
      continue;
    }
    NoDelay(fd);
    auto c = std::make_unique<Connection>();
    c->link = link_id;
    c->client_fd = fd;
    c->client_port = ntohs(peer.sin_port);
    sockaddr_storage upstream{};
    socklen_t upstream_len = 0;
    {
      std::lock_guard lock(mu_);
      Link& link = *links_[static_cast<size_t>(link_id)];
      ++link.stats.connections;
      c->close_epoch = link.close_requested;
      c->flow(ProxyDirection::kToServer).rng = link.rng.Fork();
      c->flow(ProxyDirection::kToClient).rng = link.rng.Fork();
      c->flow(ProxyDirection::kToServer).latency_rng = link.rng.Fork();
      c->flow(ProxyDirection::kToClient).latency_rng = link.rng.Fork();
      upstream = link.upstream;
      upstream_len = link.upstream_len;
    }
    c->server_fd = ::socket(upstream.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->server_fd < 0) continue;  // Closes the client's connection.
    NoDelay(c->server_fd);
    if (::connect(c->server_fd, reinterpret_cast<sockaddr*>(&upstream), upstream_len) != 0) {
      if (errno != EINPROGRESS) continue;  // Refused at once: the node is down.
      c->connecting = true;
    }
    connections_.push_back(std::move(c));
  }
}

void FaultProxy::FinishConnect(Connection& c) {
  int error = 0;
  socklen_t len = sizeof(error);
  if (::getsockopt(c.server_fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0 || error != 0) {
    c.dead = true;
    return;
  }
  c.connecting = false;
}

bool FaultProxy::CanRead(const Connection& c, ProxyDirection direction) const {
  const Flow& f = c.flows[Index(direction)];
  if (f.eof) return false;
  if (direction == ProxyDirection::kToClient && c.connecting) return false;
  // Backpressure: what waits here stays in the sender's buffers instead.
  return f.Pending() < kMaxQueuedBytes && f.in.size() <= kMaxMessageBytes;
}

// Reads what the sending side has, up to a turn's share. False on a socket error.
bool FaultProxy::ReadFlow(Connection& c, ProxyDirection direction) {
  Flow& f = c.flow(direction);
  const int fd = direction == ProxyDirection::kToServer ? c.client_fd : c.server_fd;
  char buffer[kReadChunkBytes];
  for (size_t total = 0; total < kReadTurnBytes;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      f.in.append(buffer, static_cast<size_t>(n));
      total += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) {
      f.eof = true;
      return true;
    }
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
  return true;
}

// Frames the bytes read into whole messages and admits each. False on a protocol error.
bool FaultProxy::ParseFlow(Connection& c, ProxyDirection direction, Link& link, int64_t now_us) {
  Flow& f = c.flow(direction);
  const bool replication = link.kind == ProxyLinkKind::kReplication;
  size_t used = 0;
  std::string error;
  bool ok = true;
  while (used < f.in.size()) {
    const std::string_view rest = std::string_view(f.in).substr(used);
    Message m;
    size_t length = 0;
    if (replication && direction == ProxyDirection::kToClient &&
        f.phase != ReplicationPhase::kHandshake && f.phase != ReplicationPhase::kStream) {
      const FrameStatus status = NextRdbPiece(f, rest, &length, &error);
      if (status == FrameStatus::kMalformed) ok = false;
      if (status != FrameStatus::kComplete) break;
    } else {
      // The master's stream after the RDB is commands, framed as redis-server frames them.
      const bool request = direction == ProxyDirection::kToServer ||
                           (replication && f.phase == ReplicationPhase::kStream);
      RespFrame frame;
      const FrameStatus status = NextRespFrame(
          rest, request ? RespGrammar::kRequest : RespGrammar::kReply, &frame, &error);
      if (status == FrameStatus::kMalformed) ok = false;
      if (status != FrameStatus::kComplete) break;
      length = frame.length;
      if (replication) {
        if (direction == ProxyDirection::kToClient) NoteHandshake(f, frame);
        if (request && frame.count > 0 && frame.head_size >= 1) {
          // The master propagates a script's effects as MULTI .. EXEC: one latency draw.
          m.group = GroupOf(frame.head[0], &f.stream_in_transaction);
        }
      } else if (direction == ProxyDirection::kToServer) {
        ClassifyRequest(c, link, frame, &m);
      } else {
        ClassifyReply(c, link, frame, &m);
      }
    }
    assert(length > 0 && length <= rest.size());
    m.bytes.assign(rest.substr(0, length));
    used += length;
    Admit(c, direction, link, std::move(m), now_us);
  }
  f.in.erase(0, used);
  if (ok && f.in.size() > kMaxMessageBytes) ok = false;  // No message may be this large.
  if (f.eof) f.in.clear();  // Half a message whose sender closed never completes.
  return ok;
}

// A master's reply during the handshake: +FULLRESYNC announces the RDB transfer, +CONTINUE (a
// partial resync) the command stream at once.
void FaultProxy::NoteHandshake(Flow& f, const RespFrame& frame) {
  if (f.phase != ReplicationPhase::kHandshake || frame.type != '+') return;
  assert(frame.head_size == 1);
  if (frame.head[0].starts_with("FULLRESYNC")) f.phase = ReplicationPhase::kRdbHeader;
  if (frame.head[0].starts_with("CONTINUE")) f.phase = ReplicationPhase::kStream;
}

// The next piece of an RDB transfer: a keepalive newline or the "$..." header, then the payload
// in chunks as they arrive. A replication link never drops, so a chunk need not be a message:
// it only keeps its place in the order. The last 39 bytes of an EOF-delimited payload wait
// until it is clear they do not begin the end mark.
FrameStatus FaultProxy::NextRdbPiece(Flow& f, std::string_view rest, size_t* length,
                                     std::string* error) {
  assert(!rest.empty());
  switch (f.phase) {
    case ReplicationPhase::kRdbHeader: {
      if (rest.front() == '\n') {  // The master is still preparing the RDB.
        *length = 1;
        return FrameStatus::kComplete;
      }
      RdbHeader header;
      const FrameStatus status = ParseRdbHeader(rest, &header, error);
      if (status != FrameStatus::kComplete) return status;
      if (header.payload_bytes >= 0) {
        f.rdb_left = header.payload_bytes;
        f.phase = f.rdb_left > 0 ? ReplicationPhase::kRdbSized : ReplicationPhase::kStream;
      } else {
        f.eof_mark.assign(header.eof_mark);
        f.phase = ReplicationPhase::kRdbEof;
      }
      *length = header.length;
      return FrameStatus::kComplete;
    }
    case ReplicationPhase::kRdbSized:
      assert(f.rdb_left > 0);
      *length = std::min(rest.size(), static_cast<size_t>(f.rdb_left));
      f.rdb_left -= static_cast<int64_t>(*length);
      if (f.rdb_left == 0) f.phase = ReplicationPhase::kStream;
      return FrameStatus::kComplete;
    case ReplicationPhase::kRdbEof: {
      assert(f.eof_mark.size() == RdbHeader::kEofMarkBytes);
      const size_t mark = rest.find(f.eof_mark);
      if (mark != std::string_view::npos) {
        *length = mark + f.eof_mark.size();
        f.phase = ReplicationPhase::kStream;
        return FrameStatus::kComplete;
      }
      const size_t keep = f.eof_mark.size() - 1;
      if (rest.size() <= keep) return FrameStatus::kIncomplete;
      *length = rest.size() - keep;
      return FrameStatus::kComplete;
    }
    default:
      assert(false && "not in an RDB transfer");
      *error = "RDB transfer: internal phase error";
      return FrameStatus::kMalformed;
  }
}

// A client's request gets the next index, and a note of how many replies it will have.
void FaultProxy::ClassifyRequest(Connection& c, const Link& link, const RespFrame& frame,
                                 Message* m) {
  // "*0", "*-1" and an empty line: redis-server skips them without a reply (inside a
  // transaction they go with it, as any other byte of it).
  if (frame.count <= 0) {
    m->group = c.requests_in_transaction ? Group::kInside : Group::kNone;
    return;
  }
  assert(frame.head_size >= 1);
  m->is_request = true;
  m->has_index = true;
  m->index = c.next_request++;
  const std::string_view name = frame.head[0];
  m->group = GroupOf(name, &c.requests_in_transaction);
  m->expect = Expect{m->index, 1, Expect::Until::kCount, m->group};
  if (link.kind != ProxyLinkKind::kPubSub) return;
  const int64_t channels = frame.count - 1;
  if (EqualsIgnoreCase(name, "subscribe") || EqualsIgnoreCase(name, "psubscribe")) {
    m->expect.replies_left = std::max<int64_t>(channels, 1);  // None named: one error.
  } else if (EqualsIgnoreCase(name, "unsubscribe") || EqualsIgnoreCase(name, "punsubscribe")) {
    if (channels > 0) {
      m->expect.replies_left = channels;
    } else {
      m->expect.until = EqualsIgnoreCase(name, "unsubscribe") ? Expect::Until::kNoChannels
                                                              : Expect::Until::kNoPatterns;
    }
  }
}

// A server's message: a reply to the oldest forwarded request that still awaits one, or (pub/sub
// links) a pushed message that answers nothing.
void FaultProxy::ClassifyReply(Connection& c, const Link& link, const RespFrame& frame,
                               Message* m) {
  if (frame.type == RespFrame::kInline) return;  // A newline: no reply.
  if (link.kind == ProxyLinkKind::kPubSub) {
    const std::string_view kind = frame.head_size >= 1 ? frame.head[0] : std::string_view();
    if (frame.type == '*' && (kind == "message" || kind == "pmessage")) return;
    if (frame.type == '*' && frame.head_size >= 2) {
      const std::string_view name = frame.head[1];
      if (kind == "subscribe") c.channels.emplace(name);
      if (kind == "psubscribe") c.patterns.emplace(name);
      if (kind == "unsubscribe") EraseName(&c.channels, name);
      if (kind == "punsubscribe") EraseName(&c.patterns, name);
    }
    if (frame.type == '+' && kind == "RESET") {
      c.channels.clear();
      c.patterns.clear();
    }
  }
  // Nothing awaits a reply: a server's last word before it closes the connection (an error at
  // maxclients, say). It answers no request, so dropping it is not reported.
  if (c.awaiting.empty()) return;
  Expect& e = c.awaiting.front();
  m->has_index = true;
  m->index = e.index;
  bool last = false;
  switch (e.until) {
    case Expect::Until::kCount: last = --e.replies_left <= 0; break;
    case Expect::Until::kNoChannels: last = c.channels.empty(); break;
    case Expect::Until::kNoPatterns: last = c.patterns.empty(); break;
  }
  // A transaction's replies go as its requests went: led by MULTI's +OK, ended by EXEC's.
  m->group = e.group;
  if (m->group == Group::kLast && !last) m->group = Group::kInside;
  if (last) c.awaiting.pop_front();
}

// Applies the faults in force when a whole message arrives: drop it, or queue it until its
// release time. A message that follows a transaction's first goes as the first went.
void FaultProxy::Admit(Connection& c, ProxyDirection direction, Link& link, Message m,
                       int64_t now_us) {
  Flow& f = c.flow(direction);
  const Link::Faults& faults = link.faults[Index(direction)];
  const bool follows = FollowsGroup(m.group);
  if (link.kind != ProxyLinkKind::kReplication) {
    bool drop = f.group_dropped_on_arrival;
    if (!follows) {
      drop = faults.blocked || (direction == ProxyDirection::kToClient && link.lose_replies);
      // Draw only when loss is on, so a run without loss draws nothing.
      if (!drop && faults.loss > 0) drop = f.rng.Bernoulli(faults.loss);
      if (m.group == Group::kFirst) f.group_dropped_on_arrival = drop;
    }
    if (drop) {
      Drop(c, link, m, direction);
      return;
    }
  }
  int64_t delay_us = f.group_delay_us;
  if (!follows) {
    delay_us = 0;
    // A fixed 0 draws nothing (and counts nothing), so a link without latency stays as it was.
    if (faults.latency_us != Distribution::Fixed(0)) {
      delay_us = faults.latency_us.Sample(f.latency_rng);
      ++link.stats.latency_draws;
      link.stats.latency_drawn_us += static_cast<uint64_t>(delay_us);
      link.stats.latency_drawn_us_squares += static_cast<double>(delay_us) * static_cast<double>(delay_us);
    }
    if (m.group == Group::kFirst) f.group_delay_us = delay_us;
  }
  assert(delay_us >= 0 && faults.extra_us >= 0);
  if (delay_us + faults.extra_us > 0) ++link.stats.delayed;
  const int64_t due_us = now_us + delay_us + faults.extra_us;
  // TCP: a message never overtakes an earlier one on its connection.
  m.release_us = std::max(due_us, f.last_release_us);
  if (m.release_us > due_us) ++link.stats.fifo_waits;
  f.last_release_us = m.release_us;
  f.queued_bytes += m.bytes.size();
  f.queued.push_back(std::move(m));
}

// Moves the messages that are due to the output, unless a partition began meanwhile: then a
// commands or pub/sub link drops them (a transaction's messages as its first message went), a
// replication link holds them.
void FaultProxy::Release(Connection& c, ProxyDirection direction, Link& link, int64_t now_us) {
  Flow& f = c.flow(direction);
  f.held = false;
  while (!f.queued.empty() && f.queued.front().release_us <= now_us) {
    Message& m = f.queued.front();
    const size_t size = m.bytes.size();  // Drop takes the bytes.
    const bool blocked = link.faults[Index(direction)].blocked;
    if (blocked && link.kind == ProxyLinkKind::kReplication) {
      f.held = true;
      return;
    }
    bool cut = blocked;
    if (FollowsGroup(m.group)) {
      cut = f.group_cut_when_due;
    } else if (m.group == Group::kFirst) {
      f.group_cut_when_due = cut;
    }
    if (cut) {
      Drop(c, link, m, direction);
    } else {
      f.out.append(m.bytes);
      ++link.stats.forwarded;
      if (m.is_request) c.awaiting.push_back(m.expect);
    }
    assert(f.queued_bytes >= size);
    f.queued_bytes -= size;
    f.queued.pop_front();
  }
}

// Counts a dropped message and reports it, with its bytes when it is a reply on a commands link.
// `m` is spent.
void FaultProxy::Drop(Connection& c, Link& link, Message& m, ProxyDirection direction) {
  assert(link.kind != ProxyLinkKind::kReplication);
  ++link.stats.dropped;
  if (!m.has_index) return;  // A pushed message, or a reply to nothing.
  if (drops_.size() >= kMaxQueuedDrops) {
    // Nobody takes the drops: this connection's pairing can no longer be trusted, so it ends,
    // and its client fails what it still awaits instead of pairing replies wrongly.
    c.dead = true;
    return;
  }
  ProxyDrop drop{c.link, c.client_port, m.index, direction, {}};
  if (direction == ProxyDirection::kToClient && link.kind == ProxyLinkKind::kCommands &&
      drops_reply_bytes_ + m.bytes.size() <= kMaxDroppedReplyBytes) {
    drops_reply_bytes_ += m.bytes.size();
    drop.reply = std::move(m.bytes);
    m.bytes.clear();
  }
  drops_.push_back(std::move(drop));
  drops_queued_ = true;
}

// Writes what is released. False on a socket error.
bool FaultProxy::WriteFlow(Connection& c, ProxyDirection direction) {
  Flow& f = c.flow(direction);
  if (direction == ProxyDirection::kToServer && c.connecting) return true;
  const int fd = direction == ProxyDirection::kToServer ? c.server_fd : c.client_fd;
  while (f.out_pos < f.out.size()) {
    const ssize_t n = ::send(fd, f.out.data() + f.out_pos, f.out.size() - f.out_pos,
                             MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      f.out_pos += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    return false;
  }
  if (f.out_pos == f.out.size()) {
    f.out.clear();
    f.out_pos = 0;
  } else if (f.out_pos > f.out.size() / 2) {
    f.out.erase(0, f.out_pos);
    f.out_pos = 0;
  }
  return true;
}

// A side closed and everything it sent is delivered (or dropped): the pair closes, as the
// other side of a TCP connection sees the close after the last bytes.
bool FaultProxy::Drained(const Connection& c) const {
  for (const Flow& f : c.flows) {
    if (f.eof && f.queued.empty() && f.out_pos == f.out.size()) return true;
  }
  return false;
}

// The earliest release time of a queued message, or -1 when nothing waits on time.
int64_t FaultProxy::NextReleaseUs() const {
  int64_t next = -1;
  for (const auto& c : connections_) {
    if (c->dead) continue;
    for (const Flow& f : c->flows) {
      if (f.queued.empty() || f.held) continue;  // Held: the heal wakes the thread.
      const int64_t at = f.queued.front().release_us;
      if (next < 0 || at < next) next = at;
    }
  }
  return next;
}

}  // namespace lockstep
