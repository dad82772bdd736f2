// The simulator's side of the fault schedule both drivers share (drive/faults.h): its
// primitives on the simulated processes and network.
#ifndef LOCKSTEP_SIM_FAULT_TARGET_H_
#define LOCKSTEP_SIM_FAULT_TARGET_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "drive/faults.h"

namespace lockstep::sim {

struct World;
struct Mailbox;

class SimFaultTarget : public drive::FaultTarget {
 public:
  explicit SimFaultTarget(World& w) : w_(w) {}
  void After(int64_t delay_us, std::function<void()> work) override;
  void Record(history::Event& e) override;
  history::Name Intern(std::string_view name) override;
  bool IsNode(const std::string& name) const override;
  bool Down(const std::string& name) const override;
  void Crash(const std::string& name) override;
  void Restart(const std::string& name) override;
  bool Pause(const std::string& name) override;
  void Resume(const std::string& name) override;
  void Failover(const std::string& name) override;
  uint64_t OpenPartition(const FaultSpec& f) override;
  void ClosePartition(uint64_t handle) override;
  uint64_t OpenNetworkWindow(const FaultSpec& f) override;
  void CloseNetworkWindow(uint64_t handle) override;
  void Switch(history::FaultKind kind, const std::string& name, bool on) override;

 private:
  // A process's mailbox: a node's, else a client's; null for any other name.
  Mailbox* MailboxOf(const std::string& name) const;
  World& w_;
};

}  // namespace lockstep::sim

#endif  // LOCKSTEP_SIM_FAULT_TARGET_H_
