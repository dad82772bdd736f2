#include "sim/fault_target.h"

#include <utility>

#include "sim/world.h"

namespace lockstep::sim {

void SimFaultTarget::After(int64_t delay_us, std::function<void()> work) {
  w_.engine.After(delay_us, std::move(work));
}
void SimFaultTarget::Record(history::Event& e) { w_.Record(e); }
history::Name SimFaultTarget::Intern(std::string_view name) { return w_.Intern(name); }
bool SimFaultTarget::IsNode(const std::string& name) const { return w_.FindNode(name) != nullptr; }

bool SimFaultTarget::Down(const std::string& name) const {
  if (const Node* n = w_.FindNode(name)) return !n->up;
  if (const Client* c = w_.FindClient(name)) return !c->up;
  return false;
}

void SimFaultTarget::Crash(const std::string& name) {
  if (Node* n = w_.FindNode(name)) w_.servers.Crash(*n);
  if (Client* c = w_.FindClient(name)) w_.hosting.Crash(*c);
}

void SimFaultTarget::Restart(const std::string& name) {
  if (Node* n = w_.FindNode(name)) w_.servers.Restart(*n);
  if (Client* c = w_.FindClient(name)) {
    c->up = true;
    w_.hosting.Start(*c, /*restart=*/true);
  }
}

Mailbox* SimFaultTarget::MailboxOf(const std::string& name) const {
  if (Node* n = w_.FindNode(name)) return &n->mailbox;
  if (Client* c = w_.FindClient(name)) return &c->mailbox;
  return nullptr;
}

bool SimFaultTarget::Pause(const std::string& name) {
  Mailbox* box = MailboxOf(name);
  if (box == nullptr || box->paused || Down(name)) return false;
  box->paused = true;
  return true;
}

void SimFaultTarget::Resume(const std::string& name) {
  if (Mailbox* box = MailboxOf(name)) sim::Resume(*box);
}

void SimFaultTarget::Failover(const std::string& name) {
  if (Node* m = w_.FindNode(name)) {
    if (Node* r = w_.sentinel.BestReplica(*m)) w_.sentinel.Promote(*r, "manual failover");
  }
}

uint64_t SimFaultTarget::OpenPartition(const FaultSpec& f) { return w_.network.OpenPartition(f); }
void SimFaultTarget::ClosePartition(uint64_t handle) { w_.network.ClosePartition(handle); }
uint64_t SimFaultTarget::OpenNetworkWindow(const FaultSpec& f) { return w_.network.OpenWindow(f); }
void SimFaultTarget::CloseNetworkWindow(uint64_t handle) { w_.network.CloseWindow(handle); }

void SimFaultTarget::Switch(history::FaultKind kind, const std::string& name, bool on) {
  // Every switched kind so far troubles nodes (a kind for clients would keep its state in
  // Client, where its effect is).
  if (Node* n = w_.FindNode(name)) w_.servers.Switched(*n, kind, on);
}

}  // namespace lockstep::sim
