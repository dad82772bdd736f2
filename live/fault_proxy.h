// The live harness's network faults: a TCP proxy on loopback that forwards whole RESP messages
// between clients and redis-server processes, and drops, delays or holds them when told to.
//
// Each link is one listening port on 127.0.0.1 that forwards every connection accepted there to
// one upstream server (one link per client->node connection, one per replica->master link).
// The proxy parses the RESP framing (live/resp_frame.h) so a fault acts on whole messages:
//
//   fault            commands / pub/sub link                   replication link
//   blocked (a dir)  messages in that direction are dropped    held until unblocked (in order)
//   latency          each message held a drawn time, in order  the same
//   extra latency    each message held extra_us more           the same
//   loss             each message dropped with probability     not applied
//   lose replies     server->client messages dropped           not applied
//
// Latency. A direction of a link has a latency distribution (SetLatency, the scenario's
// [network] latency or [replication] lag) and an extra latency (SetExtraLatency, a latency
// window). Each message that arrives (is read whole) at time t gets a draw d from the
// distribution and is released at
//     max(release of the message before it in this direction of this connection, t + d + extra)
// so a message never overtakes an earlier one on the same TCP connection: a short draw after a
// long one waits for it. (The simulator does the same unless [network] reorder is on; with
// reorder it lets the later message arrive first, which one TCP connection cannot do.) The
// draws come from the project PRNG: each connection forks a generator per direction from its
// link's when accepted (after the two loss generators), so a connection's draws depend only on
// the seed, the order links were added and connections accepted, and its own messages.
//
// Transactions. The requests of a MULTI .. EXEC (or DISCARD) on a connection share one fate:
// the MULTI's fate at arrival (dropped or not, one loss draw, one latency draw) applies to each
// of them, and so does its fate when it is due (a partition that began meanwhile cuts the whole
// transaction, or none of it). Their replies (+OK, +QUEUED or errors, then EXEC's array) share
// one fate the same way, led by MULTI's +OK: a lost reply or a partition never drops part of a
// transaction's replies. A transaction sent one command per reply (a client program's own,
// on its thread's session connection: live/driver.h) is one unit too: its later requests get
// the fate its MULTI met, also when they arrive after a partition began or ended. On a
// replication link the MULTI .. EXEC a master propagates a script's effects in shares one
// latency draw, as the simulator lags an effect batch as one.
//
// A replication stream (handshake, +FULLRESYNC, the RDB payload, then commands) cannot lose a
// message without corrupting the replica, so a partition there holds the bytes, as the
// simulator holds a replica's backlog until the link heals, and as TCP does during a short
// partition. The proxy stops reading a held direction once kMaxQueuedBytes wait, so the backlog
// then waits in the master's output buffer; a partition longer than redis's repl-timeout (60 s)
// ends the link from redis's side, as a real one would.
//
// Drop reports. On a commands or pub/sub link each request gets an index k, 0-based, in the
// order the client sent them on its connection (a multibulk of 0 elements and an empty inline
// line are no requests: redis-server skips them without a reply). When request k is dropped,
// or a reply to it is (for pub/sub: one of its (un)subscribe confirmations; a dropped pushed
// `message`/`pmessage` is not reported), the proxy queues a ProxyDrop{link, client port, k},
// where the client port is the peer port of the accepted connection, i.e. the client's local
// port. Ordering guarantee: the drop of request k is queued before any byte of a later reply is
// forwarded to that client. A dropped reply on a commands link carries its bytes
// (ProxyDrop::reply, while the queued drops hold less than kMaxDroppedReplyBytes of them), so a
// driver learns what the server did, e.g. a transaction's EXEC result, though its client never
// sees that reply. So a driver that reads a connection's bytes and then calls
// TakeDrops() before pairing what it read with its requests knows about every gap in front of
// those replies. drop_fd() becomes readable when drops are queued (it may also wake with
// nothing left to take).
//
// Threading: the proxy runs on its own thread from construction until Stop() or destruction.
// Every public method is thread-safe. A fault setting applies to messages that arrive (are read
// whole by the proxy) after the call returns; a partition also cuts a message that is still held
// for latency when it begins, as the simulator's partition cuts a message in flight.
//
// Limits: a commands link pairs one reply with each request, so CLIENT REPLY OFF/SKIP, MONITOR
// and SUBSCRIBE on a commands link break the pairing; a pub/sub link counts one confirmation per
// channel named by (P)SUBSCRIBE/(P)UNSUBSCRIBE and, for an UNSUBSCRIBE without channels, ends
// its confirmations when the connection has none left (tracked from the server's
// confirmations). Transactions are followed by their commands' names: a MULTI that the server
// refuses without opening one (on a subscribed RESP2 connection) would make the proxy group
// what follows until an EXEC or DISCARD. A message larger than kMaxMessageBytes closes the
// connection. Duplication is
// not offered: a duplicated request would desynchronize the client's FIFO pairing.
#ifndef LOCKSTEP_LIVE_FAULT_PROXY_H_
#define LOCKSTEP_LIVE_FAULT_PROXY_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/random.h"
#include "live/resp_frame.h"

namespace lockstep {

enum class ProxyLinkKind : uint8_t {
  kCommands,     // Request/reply, one reply per request, in order.
  kPubSub,       // Requests, their confirmations, and pushed messages.
  kReplication,  // A replica's connection to its master.
};

enum class ProxyDirection : uint8_t { kToServer, kToClient };

// "Request request_index on the connection from client_port will get no reply."
struct ProxyDrop {
  int link = -1;
  int client_port = 0;
  uint64_t request_index = 0;
  // kToServer: the request itself was dropped; kToClient: a reply to it was.
  ProxyDirection direction = ProxyDirection::kToServer;
  // kToClient on a commands link: the dropped reply, whole (empty when it did not fit the
  // budget of kMaxDroppedReplyBytes).
  std::string reply;

  bool operator==(const ProxyDrop&) const = default;
};

struct ProxyLinkStats {
  uint64_t connections = 0;      // Accepted.
  uint64_t forwarded = 0;        // Messages (an RDB payload counts as several chunks).
  uint64_t dropped = 0;          // Blocked, lost or lost replies.
  uint64_t delayed = 0;          // Held for latency (a draw or extra latency above 0).
  uint64_t protocol_errors = 0;  // Connections closed on malformed or oversized messages.
  // The latency distribution's draws (SetLatency; none while it is a fixed 0), in the proxy's
  // own accounting: how many, their sum and the sum of their squares (so a test reads their
  // mean and spread without timing anything). A transaction's messages count once.
  uint64_t latency_draws = 0;
  uint64_t latency_drawn_us = 0;
  double latency_drawn_us_squares = 0;
  // Messages released later than their arrival + draw + extra, behind an earlier message.
  uint64_t fifo_waits = 0;
};

class FaultProxy {
 public:
  static constexpr size_t kMaxMessageBytes = 64 * 1024 * 1024;
  // Per connection and direction: messages read but not yet written to the other side.
  static constexpr size_t kMaxQueuedBytes = 4 * 1024 * 1024;
  static constexpr size_t kMaxConnections = 1024;  // In all, across links.
  // Drops not yet taken; a connection whose drop would not fit is closed instead.
  static constexpr size_t kMaxQueuedDrops = 1'000'000;
  // Bytes of dropped replies the queued drops may carry (ProxyDrop::reply); past it a drop
  // report comes without its reply.
  static constexpr size_t kMaxDroppedReplyBytes = 16 * 1024 * 1024;

  // `seed` drives the loss and latency draws: each link forks a generator from it when added,
  // each connection of a link two per direction when accepted (loss, then latency), so the
  // draws of one connection depend only on the seed, the order links were added and
  // connections accepted, and the order of its own messages.
  explicit FaultProxy(uint64_t seed);
  ~FaultProxy();  // Stop().
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  struct Endpoint {
    int link = -1;  // The id the controls take; links are numbered 0, 1, ... in order added.
    int port = 0;   // Where clients connect: 127.0.0.1:port.
  };
  // Listens on a free loopback port and forwards each connection accepted there to
  // upstream_host:upstream_port (connected when a client connects; if that fails, the
  // client's connection is closed, as a node that is down refuses it). Returns link -1 and
  // the reason in *error when it cannot listen or resolve the host.
  Endpoint AddLink(const std::string& name, const std::string& upstream_host, int upstream_port,
                   ProxyLinkKind kind, std::string* error);

  // A partition of one direction (call for both for a two-way one).
  void SetBlocked(int link, ProxyDirection direction, bool blocked);
  // The link's own one-way latency in `direction`: each message is held a time drawn from
  // `latency_us` (Distribution::Fixed(0), the default: none).
  void SetLatency(int link, ProxyDirection direction, const Distribution& latency_us);
  // Extra one-way latency for messages in `direction`, on top of the drawn one (0 ends it).
  void SetExtraLatency(int link, ProxyDirection direction, int64_t extra_us);
  // Probability, in [0, 1], that a message in `direction` is dropped (0 ends it).
  void SetLoss(int link, ProxyDirection direction, double rate);
  // Drop every server->client message (replies, confirmations, pushed messages).
  void SetLoseReplies(int link, bool lose);
  // Closes every connection of the link (a node crash); returns once they are closed. Clients
  // may connect again at once; their connections go to the upstream as before.
  void CloseAll(int link);

  ProxyLinkStats Stats(int link) const;
  std::string LinkName(int link) const;

  int drop_fd() const { return drop_fd_; }
  std::vector<ProxyDrop> TakeDrops();

  // Stops the thread and closes every connection; idempotent. Controls do nothing afterwards.
  void Stop();

 private:
  struct Link;
  struct Connection;
  struct Flow;
  struct Message;
  struct PollSet;

  void Wake();
  void Run();
  void Turn();
  PollSet Watch() const;
  void HandleEvents(const PollSet& set);
  std::vector<std::pair<Link*, uint64_t>> Decide(int64_t now_us);
  void AcceptAll(int link_id, int listen_fd);
  void FinishConnect(Connection& c);
  bool CanRead(const Connection& c, ProxyDirection direction) const;
  bool ReadFlow(Connection& c, ProxyDirection direction);
  bool ParseFlow(Connection& c, ProxyDirection direction, Link& link, int64_t now_us);
  void NoteHandshake(Flow& f, const RespFrame& frame);
  FrameStatus NextRdbPiece(Flow& f, std::string_view rest, size_t* length, std::string* error);
  void ClassifyRequest(Connection& c, const Link& link, const RespFrame& frame, Message* m);
  void ClassifyReply(Connection& c, const Link& link, const RespFrame& frame, Message* m);
  void Admit(Connection& c, ProxyDirection direction, Link& link, Message m, int64_t now_us);
  void Release(Connection& c, ProxyDirection direction, Link& link, int64_t now_us);
  void Drop(Connection& c, Link& link, Message& m, ProxyDirection direction);
  bool WriteFlow(Connection& c, ProxyDirection direction);
  bool Drained(const Connection& c) const;
  int64_t NextReleaseUs() const;
  Link* FindLink(int link);
  const Link* FindLink(int link) const;

  // Guards links_ (their settings and counters), drops_ and stopped_.
  mutable std::mutex mu_;
  std::condition_variable closed_cv_;  // CloseAll waits on it.
  std::vector<std::unique_ptr<Link>> links_;
  std::vector<ProxyDrop> drops_;
  size_t drops_reply_bytes_ = 0;  // Of drops_' replies.
  bool drops_queued_ = false;  // Since the proxy thread last signalled drop_fd_.
  bool stopped_ = false;
  Prng rng_;  // Forked for each link; under mu_.

  // The proxy thread's own state.
  std::vector<std::unique_ptr<Connection>> connections_;

  int wake_fd_ = -1;  // An eventfd: controls wake the thread through it.
  int drop_fd_ = -1;  // An eventfd: readable when drops_ is not empty.
  std::atomic<bool> stop_{false};
  std::once_flag stop_once_;
  std::thread thread_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_LIVE_FAULT_PROXY_H_
