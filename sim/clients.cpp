#include "sim/clients.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <memory>
#include <string>

#include "drive/client.h"
#include "history/lease_owners.h"
#include "locks/factory.h"
#include "sim/world.h"

namespace lockstep::sim {

// What the client's protocol gets from the simulator: its process's clocks and PRNG, its
// timers as engine events, and its commands sent over the network.
class ClientHosting::SimOutbox : public locks::Outbox {
 public:
  SimOutbox(World& w, Client& c) : w_(w), c_(c) {}
  int64_t MonoUs() override { return c_.clock->MonoUs(w_.engine.now()); }
  int64_t WallMs() override { return c_.clock->WallMs(w_.engine.now()); }
  Prng& Rng() override { return *c_.rng; }
  int NodeCount() override { return w_.NodeCountOf(c_); }
  void ArmTimer(locks::TimerId timer, int64_t delay_us) override {
    Client* cp = &c_;
    World* w = &w_;
    const Engine::EventId id = w_.hosting.Timer(c_, delay_us, [cp, w, timer] {
      cp->timers.Take(timer);
      cp->protocol->OnTimer(*cp->outbox, timer);
      w->CheckProgram(*cp);
    });
    c_.timers.Set(timer, id);
  }
  void CancelTimer(locks::TimerId timer) override {
    if (const auto id = c_.timers.Take(timer)) w_.engine.Cancel(*id);
  }
  void Complete(int thread, const locks::OpResult& result) override {
    c_.workload->OnComplete(thread, result);
    w_.CheckProgram(c_);
  }
  void HolderValue(int thread, std::string_view value) override {
    history::Event e = history::HolderValueNote(c_.id, thread, value, WallMs());
    w_.Record(e);
  }

 private:
  void DoSend(int slot, locks::RequestId request, SharedArgv argv, const std::string& label,
              int thread) override {
    assert(slot >= 0 && slot < NodeCount());
    // A cluster is one Redis to the protocol; the cluster client routes by slot.
    const int node_index = w_.cluster != nullptr ? w_.ClusterRoute(*argv)
                                                 : c_.slots[static_cast<size_t>(slot)];
    assert(node_index >= 0 && static_cast<size_t>(node_index) < w_.nodes.size());
    Node& n = *w_.nodes[static_cast<size_t>(node_index)];
    const uint64_t incarnation = c_.incarnation;
    Client* cp = &c_;
    const history::Name label_id = LabelId(label);
    // The delivery refers to the world, not to this outbox: a restart replaces the outbox
    // while the old process's commands are still on the wire.
    World* w = &w_;
    // The command itself is shared with the protocol, which keeps it to resend.
    auto deliver = [w, &n, cp, incarnation, request, argv = std::move(argv), label_id,
                    thread]() mutable {
      w->servers.Receive(n, *cp, incarnation, request, std::move(argv), label_id, thread);
    };
    w_.network.Send(c_.endpoint, n.endpoint, std::move(deliver));
  }

  // A protocol sends under a handful of labels ("acquire", "unlock", "subscribe" ...), each
  // thousands of times: the last few it used are kept here with their ids, which a comparison
  // or two finds sooner than the name table's hash lookup.
  history::Name LabelId(const std::string& label) {
    for (size_t i = 0; i < labels_used_; ++i) {
      if (labels_[i].first == label) return labels_[i].second;
    }
    const history::Name id = w_.Intern(label);
    // Fill the entries first, then replace them in turn.
    labels_[labels_used_ < labels_.size() ? labels_used_++ : next_label_++ % labels_.size()] =
        {label, id};
    return id;
  }

  World& w_;
  Client& c_;
  std::array<std::pair<std::string, history::Name>, 4> labels_{};
  size_t labels_used_ = 0;  // Entries that hold a label,
  size_t next_label_ = 0;   // and, once all do, which one the next new label replaces.
};

// What a client process's workload (drive/workload.h) gets from the simulator: the true time
// and the recorder, the process's clock and PRNG, and its timers as engine events that a
// crash drops and a pause holds.
class ClientHosting::SimClientHost : public drive::ClientHost {
 public:
  SimClientHost(World& w, Client& c) : w_(w), c_(c) {}
  void Record(history::Event& e) override { w_.Record(e); }
  history::Name Intern(std::string_view s) override { return w_.Intern(s); }
  int64_t WallMs() override { return c_.clock->WallMs(w_.engine.now()); }
  Prng& Rng() override { return *c_.rng; }
  void After(int64_t delay_us, std::function<void()> work) override {
    w_.hosting.Timer(c_, delay_us, std::move(work));
  }

 private:
  World& w_;
  Client& c_;
};

void ClientHosting::Host(Client& c) {
  c.host = std::make_unique<SimClientHost>(w_, c);
  c.workload = std::make_unique<drive::ClientWorkload>(w_.scenario, c.index, c.id, *w_.resource,
                                                       *c.host);
}

void ClientHosting::Start(Client& c, bool restart) {
  if (restart || c.uuid.empty()) c.uuid = drive::NewClientUuid(*c.rng);
  std::string error;
  c.protocol = locks::MakeProtocol(w_.scenario.protocol.kind_name(),
                                   drive::ClientConfigFor(w_.scenario, c.index, c.uuid),
                                   w_.scripts, &error);
  assert(c.protocol != nullptr);  // Create() made the same call successfully.
  c.outbox = std::make_unique<SimOutbox>(w_, c);
  c.workload->Start(*c.protocol, *c.outbox, c.uuid, restart);
}

void ClientHosting::Crash(Client& c) {
  if (!c.up) return;
  c.up = false;
  ++c.incarnation;
  c.protocol->OnCrash();
  c.workload->Crash();
  for (const auto& [timer, id] : c.timers.TakeAll()) w_.engine.Cancel(id);
  c.mailbox = Mailbox{};
  for (auto& n : w_.nodes) {
    for (auto& [channel, subs] : n->subscribers) {
      subs.erase(std::remove(subs.begin(), subs.end(), c.index), subs.end());
    }
  }
  w_.servers.ClientGone(c);
}

void ClientHosting::ScheduleGc(Client& c) {
  const int64_t every = w_.scenario.gc.every_us.Sample(*c.rng);
  Client* cp = &c;
  w_.engine.After(every, [this, cp] {
    const int64_t pause = w_.scenario.gc.pause_us.Sample(*cp->rng);
    if (cp->up && pause > 0) drive::PauseFor(w_.faults, cp->name, pause, /*gc=*/true);
    ScheduleGc(*cp);
  });
}

}  // namespace lockstep::sim
