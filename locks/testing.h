// A small deterministic driver for lock protocols in unit tests: emulated Redis nodes
// (lockstep::Server), a manual clock shared by everyone, and one event queue ordered by
// (time, sequence number). It is the simulator in miniature, without faults beyond "lose the
// next reply(s) of this label" and "this process crashed", and without per-process clocks.
//
// A command sent at time t executes on its node at t + latency and its reply arrives at
// t + 2 * latency (latency defaults to 0). SUBSCRIBE / UNSUBSCRIBE are handled here, not by
// the Server: they update this world's pub/sub registry and are answered as Redis answers a
// RESP2 client, ["subscribe", channel, count]. A PUBLISH (from a command or a script) queues
// the message to every subscribed process at execution time + latency.
//
// Usage:
//   World world;
//   const int a = world.AddClient(MakeRLock(config, scripts));
//   world.Acquire(a, 0, {AcquireArgs::Mode::kLock});
//   world.RunFor(35'000'000);
//   CHECK(world.CountSent(a, "renew") == 3);
#ifndef LOCKSTEP_LOCKS_TESTING_H_
#define LOCKSTEP_LOCKS_TESTING_H_

#include <cassert>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/reply.h"
#include "core/server.h"
#include "locks/protocol.h"
#include "base/random.h"

namespace lockstep::locks::testing {

// The version named so ("v3.13.6", "current"); a test that names another fails.
inline history::ProtocolVersion VersionOf(std::string_view name) {
  return history::FindProtocolVersion(name).value();
}

struct SentCommand {
  int64_t at_us = 0;
  int client = 0;
  int node = 0;
  std::string label;
  Argv argv;
  SharedArgv copy;  // The protocol's copy of the command, kept so that copies compare by address.
};

struct Completion {
  int64_t at_us = 0;
  int client = 0;
  int thread = 0;
  OpResult result;
};

class World {
 public:
  static constexpr int64_t kStartUnixMs = 1'700'000'000'000;
  static constexpr uint64_t kEventsMax = 1'000'000;  // Per Run call: a livelock guard.

  explicit World(int nodes = 1) {
    assert(nodes >= 1);
    for (int node = 0; node < nodes; ++node) {
      nodes_.push_back(std::make_unique<Node>(this, node));
      nodes_.back()->server.set_pubsub(&nodes_.back()->pubsub);
    }
  }
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // ---- Set-up -------------------------------------------------------------------------------

  int AddClient(std::unique_ptr<LockProtocol> protocol, uint64_t seed = 1) {
    const int client = static_cast<int>(clients_.size());
    clients_.push_back(std::make_unique<Client>(this, client, std::move(protocol), seed));
    return client;
  }

  void set_latency_us(int64_t latency_us) {
    assert(latency_us >= 0);
    latency_us_ = latency_us;
  }

  // The next `count` replies to commands labelled `label` from `client` are lost: the command
  // still executes on the node, the client just never hears back.
  void DropReplies(int client, const std::string& label, int count = 1) {
    drops_[{client, label}] += count;
  }

  // ---- Operations ---------------------------------------------------------------------------

  void Acquire(int client, int thread, const AcquireArgs& args) {
    Client& c = At(client);
    Begin(c, thread);
    c.protocol->Acquire(c.outbox, thread, args);
  }
  void Release(int client, int thread) {
    Client& c = At(client);
    Begin(c, thread);
    c.protocol->Release(c.outbox, thread);
  }
  void ForceUnlock(int client, int thread) {
    Client& c = At(client);
    Begin(c, thread);
    c.protocol->ForceUnlock(c.outbox, thread);
  }
  void Extra(int client, int thread, ExtraOp op) {
    Client& c = At(client);
    Begin(c, thread);
    c.protocol->Extra(c.outbox, thread, op);
  }

  // The process dies: its protocol drops its state, its pub/sub connection goes, every reply,
  // message and timer meant for it is lost, and its operations in progress end as info. The
  // same protocol object can be used again afterwards (a restarted process).
  void Crash(int client) {
    Client& c = At(client);
    c.protocol->OnCrash();
    c.epoch += 1;
    for (auto& node : nodes_) {
      for (auto& [channel, clients] : node->pubsub.subscribers) clients.erase(client);
    }
    for (auto& [thread, busy] : c.busy) {
      if (!busy) continue;
      busy = false;
      OpResult result;
      result.status = OpResult::Status::kInfo;
      result.detail = "process crashed";
      completions_.push_back(Completion{now_us_, client, thread, result});
    }
  }

  // ---- Time ---------------------------------------------------------------------------------

  int64_t now_us() const { return now_us_; }
  int64_t now_ms() const { return now_us_ / 1000; }

  // Processes every event due at or before t_us, in (time, sequence) order; the clock ends at
  // t_us (or later if it already was).
  void RunUntil(int64_t t_us) {
    uint64_t processed = 0;
    while (!events_.empty() && events_.begin()->first.first <= t_us) {
      if (++processed > kEventsMax) throw std::runtime_error("World: event limit (livelock?)");
      auto node = events_.extract(events_.begin());
      now_us_ = node.key().first;
      Dispatch(node.mapped());
    }
    if (t_us > now_us_) now_us_ = t_us;
  }
  void RunFor(int64_t duration_us) { RunUntil(now_us_ + duration_us); }

  // ---- Inspection ---------------------------------------------------------------------------

  Server& server(int node = 0) { return nodes_.at(static_cast<size_t>(node))->server; }

  // Runs a command on a node now, as an observer outside the clients (HGET, PTTL, PUBLISH...).
  Reply Exec(const Argv& argv, int node = 0) { return server(node).Execute(argv, now_ms()); }

  const std::vector<SentCommand>& sent() const { return sent_; }
  int CountSent(int client, const std::string& label) const {
    int count = 0;
    for (const SentCommand& command : sent_) {
      if (command.client == client && command.label == label) ++count;
    }
    return count;
  }
  std::vector<SentCommand> Sent(int client, const std::string& label) const {
    std::vector<SentCommand> found;
    for (const SentCommand& command : sent_) {
      if (command.client == client && command.label == label) found.push_back(command);
    }
    return found;
  }

  const std::vector<Completion>& completions() const { return completions_; }
  // The last completion of an operation of this thread, if any.
  std::optional<Completion> Last(int client, int thread) const {
    for (auto it = completions_.rbegin(); it != completions_.rend(); ++it) {
      if (it->client == client && it->thread == thread) return *it;
    }
    return std::nullopt;
  }
  bool Busy(int client, int thread) const {
    const auto& busy = clients_.at(static_cast<size_t>(client))->busy;
    const auto it = busy.find(thread);
    return it != busy.end() && it->second;
  }
  int Subscribers(const std::string& channel, int node = 0) const {
    const auto& subscribers = nodes_.at(static_cast<size_t>(node))->pubsub.subscribers;
    const auto it = subscribers.find(channel);
    return it == subscribers.end() ? 0 : static_cast<int>(it->second.size());
  }

 private:
  struct Event {
    enum class Kind : uint8_t { kExecute, kReply, kMessage, kTimer };
    Kind kind = Kind::kExecute;
    int client = 0;
    uint64_t epoch = 0;  // The client's epoch when the event was made.
    int node = 0;
    RequestId request = 0;
    Argv argv;
    bool drop_reply = false;
    Reply reply;
    std::string channel;
    std::string payload;
    TimerId timer = 0;
  };

  class PubSub final : public PubSubRegistry {
   public:
    PubSub(World* world, int node) : world_(world), node_(node) {}
    int64_t Publish(std::string_view channel, std::string_view message) override {
      const auto it = subscribers.find(std::string(channel));
      if (it == subscribers.end()) return 0;
      for (const int client : it->second) {
        Event event;
        event.kind = Event::Kind::kMessage;
        event.client = client;
        event.epoch = world_->At(client).epoch;
        event.node = node_;
        event.channel = std::string(channel);
        event.payload = std::string(message);
        world_->Queue(world_->now_us_ + world_->latency_us_, std::move(event));
      }
      return static_cast<int64_t>(it->second.size());
    }
    std::map<std::string, std::set<int>> subscribers;

   private:
    World* world_;
    int node_;
  };

  struct Node {
    Node(World* world, int node) : pubsub(world, node) {}
    Server server;
    PubSub pubsub;
  };

  class ClientOutbox final : public Outbox {
   public:
    ClientOutbox(World* world, int client, uint64_t seed)
        : world_(world), client_(client), rng_(seed) {}
    int64_t MonoUs() override { return world_->now_us_; }
    int64_t WallMs() override { return kStartUnixMs + world_->now_us_ / 1000; }
    Prng& Rng() override { return rng_; }
    int NodeCount() override { return static_cast<int>(world_->nodes_.size()); }
    void DoSend(int node, RequestId request, SharedArgv argv, const std::string& label,
                int thread) override {
      (void)thread;  // The test world keys commands by request id.
      world_->OnSend(client_, node, request, std::move(argv), label);
    }
    void ArmTimer(TimerId timer, int64_t delay_us) override {
      assert(delay_us >= 0);
      Event event;
      event.kind = Event::Kind::kTimer;
      event.client = client_;
      event.epoch = world_->At(client_).epoch;
      event.timer = timer;
      world_->Queue(world_->now_us_ + delay_us, std::move(event));
    }
    void CancelTimer(TimerId timer) override {
      world_->cancelled_timers_.insert({client_, timer});
    }
    void Complete(int thread, const OpResult& result) override {
      Client& c = world_->At(client_);
      assert(c.busy[thread] && "Complete() without an operation in progress");
      c.busy[thread] = false;
      world_->completions_.push_back(Completion{world_->now_us_, client_, thread, result});
    }

   private:
    World* world_;
    int client_;
    Prng rng_;
  };

  struct Client {
    Client(World* world, int index, std::unique_ptr<LockProtocol> p, uint64_t seed)
        : protocol(std::move(p)), outbox(world, index, seed) {}
    std::unique_ptr<LockProtocol> protocol;
    ClientOutbox outbox;
    uint64_t epoch = 0;
    std::map<int, bool> busy;
  };

  Client& At(int client) { return *clients_.at(static_cast<size_t>(client)); }

  void Begin(Client& c, int thread) {
    assert(!c.busy[thread] && "one operation at a time per thread");
    c.busy[thread] = true;
  }

  void Queue(int64_t at_us, Event event) {
    events_.emplace(std::make_pair(at_us, ++sequence_), std::move(event));
  }

  void OnSend(int client, int node, RequestId request, SharedArgv copy, const std::string& label) {
    assert(node >= 0 && node < static_cast<int>(nodes_.size()));
    const Argv& argv = *copy;
    sent_.push_back(SentCommand{now_us_, client, node, label, argv, std::move(copy)});
    Event event;
    event.kind = Event::Kind::kExecute;
    event.client = client;
    event.epoch = At(client).epoch;
    event.node = node;
    event.request = request;
    event.argv = argv;
    auto drop = drops_.find({client, label});
    if (drop != drops_.end() && drop->second > 0) {
      drop->second -= 1;
      event.drop_reply = true;
    }
    Queue(now_us_ + latency_us_, std::move(event));
  }

  static std::string Lower(std::string s) {
    for (char& ch : s) ch = static_cast<char>(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
    return s;
  }

  Reply ExecutePubSub(const Event& event, const std::string& name) {
    // The connection of a crashed process is gone; its in-flight (UN)SUBSCRIBE does nothing.
    const bool alive = event.epoch == At(event.client).epoch;
    auto& subscribers = nodes_[static_cast<size_t>(event.node)]->pubsub.subscribers;
    std::vector<Reply> replies;
    int64_t count = 0;
    for (size_t i = 1; i < event.argv.size(); ++i) {
      const std::string& channel = event.argv[i];
      if (alive && name == "subscribe") subscribers[channel].insert(event.client);
      if (alive && name == "unsubscribe") {
        subscribers[channel].erase(event.client);
        if (subscribers[channel].empty()) subscribers.erase(channel);
      }
      count = 0;
      for (const auto& [ch, clients] : subscribers) count += clients.count(event.client);
      replies = {Reply::Bulk(name), Reply::Bulk(channel), Reply::Integer(count)};
    }
    return Reply::Array(std::move(replies));
  }

  void Dispatch(Event& event) {
    switch (event.kind) {
      case Event::Kind::kExecute: {
        // A request on the wire executes even if its sender has died since.
        const std::string name = event.argv.empty() ? "" : Lower(event.argv[0]);
        Reply reply = name == "subscribe" || name == "unsubscribe"
                          ? ExecutePubSub(event, name)
                          : server(event.node).Execute(event.argv, now_ms());
        if (event.drop_reply) return;
        Event answer;
        answer.kind = Event::Kind::kReply;
        answer.client = event.client;
        answer.epoch = event.epoch;
        answer.node = event.node;
        answer.request = event.request;
        answer.reply = std::move(reply);
        Queue(now_us_ + latency_us_, std::move(answer));
        return;
      }
      case Event::Kind::kReply: {
        Client& c = At(event.client);
        if (event.epoch != c.epoch) return;
        c.protocol->OnReply(c.outbox, event.request, event.reply);
        return;
      }
      case Event::Kind::kMessage: {
        Client& c = At(event.client);
        if (event.epoch != c.epoch) return;
        c.protocol->OnMessage(c.outbox, event.node, event.channel, event.payload);
        return;
      }
      case Event::Kind::kTimer: {
        Client& c = At(event.client);
        if (event.epoch != c.epoch) return;
        if (cancelled_timers_.erase({event.client, event.timer}) > 0) return;
        c.protocol->OnTimer(c.outbox, event.timer);
        return;
      }
    }
  }

  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Client>> clients_;
  std::map<std::pair<int64_t, uint64_t>, Event> events_;
  uint64_t sequence_ = 0;
  int64_t now_us_ = 0;
  int64_t latency_us_ = 0;
  std::map<std::pair<int, std::string>, int> drops_;
  std::set<std::pair<int, TimerId>> cancelled_timers_;
  std::vector<SentCommand> sent_;
  std::vector<Completion> completions_;
};

// A bystander that subscribes to one channel (its Acquire) and records what is published.
class Listener final : public LockProtocol {
 public:
  explicit Listener(std::string channel) : channel_(std::move(channel)) {}
  void Acquire(Outbox& out, int thread, const AcquireArgs& args) override {
    (void)args;
    thread_ = thread;
    request_ = out.NewRequestId();
    out.Send(0, request_, {"SUBSCRIBE", channel_}, "subscribe", -1);
  }
  void Release(Outbox& out, int thread) override { out.Complete(thread, OpResult{}); }
  void ForceUnlock(Outbox& out, int thread) override { out.Complete(thread, OpResult{}); }
  void OnReply(Outbox& out, RequestId request, const Reply& reply) override {
    (void)reply;
    if (request == request_) out.Complete(thread_, OpResult{});
  }
  void OnMessage(Outbox& out, int node, const std::string& channel,
                 const std::string& payload) override {
    (void)out;
    (void)node;
    if (channel == channel_) messages.push_back(payload);
  }
  void OnTimer(Outbox& out, TimerId timer) override {
    (void)out;
    (void)timer;
  }
  void OnCrash() override {}

  std::vector<std::string> messages;

 private:
  std::string channel_;
  int thread_ = 0;
  RequestId request_ = 0;
};

}  // namespace lockstep::locks::testing

#endif  // LOCKSTEP_LOCKS_TESTING_H_
