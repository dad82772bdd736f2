// The fault schedule both drivers share: when each fault of a scenario starts and ends, and the
// history events it records, written once against a small interface that each driver
// implements on its own processes and links (the simulator on virtual ones, the live replay
// on redis-server processes and its fault proxy).
//
// The schedule decides and records; the target acts. A target's primitives record nothing of
// the fault itself (a promotion that a failover causes is the driver's own event, as it is
// when Sentinel fails over by itself), so that one fault makes the same events, in the same
// order, whichever driver runs it.
//
// A new fault kind is its row in history/fault_kinds.h and its effect in each driver. A kind
// that is a state of its targets for a while (`switched` in its row) needs nothing here: the
// schedule switches it on and off, and the driver's code reads it where it acts. Any other
// kind is its case in ApplyFault (faults.cpp), with the primitive it needs here.
#ifndef LOCKSTEP_DRIVE_FAULTS_H_
#define LOCKSTEP_DRIVE_FAULTS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "history/event.h"
#include "history/fault_kinds.h"
#include "model/scenario.h"

namespace lockstep::drive {

class FaultTarget {
 public:
  virtual ~FaultTarget() = default;

  // --- the driver's time and history ---

  // Runs `work` after delay_us of true time.
  virtual void After(int64_t delay_us, std::function<void()> work) = 0;
  // Appends a fault event at the current true time.
  virtual void Record(history::Event& e) = 0;
  virtual history::Name Intern(std::string_view name) = 0;

  // --- processes, by the scenario's names ---

  virtual bool IsNode(const std::string& name) const = 0;
  // A node or client process that is crashed now (false for any other name).
  virtual bool Down(const std::string& name) const = 0;
  // Kills a process that is up / starts it again as a new process (a client with a new UUID;
  // a node with what its persistence kept).
  virtual void Crash(const std::string& name) = 0;
  virtual void Restart(const std::string& name) = 0;
  // Stops a process that is up and not paused (SIGSTOP, or a GC pause of a client): it does
  // nothing, and what arrives for it waits, until Resume. False when it cannot be paused now.
  virtual bool Pause(const std::string& name) = 0;
  virtual void Resume(const std::string& name) = 0;
  // Promotes a replica of master `name` (Sentinel's choice), now or when the driver's Sentinel
  // has done it; the driver records the promotion.
  virtual void Failover(const std::string& name) = 0;

  // --- links ---

  // A partition (targets: side A, peers: side B) or a network window (latency, loss,
  // duplicate on the targets' links): opened now, closed by the handle Open returned.
  virtual uint64_t OpenPartition(const FaultSpec& f) = 0;
  virtual void ClosePartition(uint64_t handle) = 0;
  virtual uint64_t OpenNetworkWindow(const FaultSpec& f) = 0;
  virtual void CloseNetworkWindow(uint64_t handle) = 0;
  // Switches the state of a switched kind (history/fault_kinds.h) on process `name`: while it
  // is on, the driver's code that the kind concerns acts on it (lose_replies: the node runs
  // what it is sent, but its replies never leave it).
  virtual void Switch(history::FaultKind kind, const std::string& name, bool on) = 0;

  // The schedule's own bookkeeping, kept with the target it acts on (a driver leaves it
  // alone): the pause each paused process is in, by the number PauseFor gave it. A crash ends
  // a pause, so a pause's end resumes only the pause it began.
  struct Pauses {
    std::map<std::string, uint64_t, std::less<>> current;
    uint64_t last = 0;
  } pauses;
};

// Records a fault event of `process` through `target`; a fault with a duration carries it, in
// ms, as its value. The schedule's events, and those a driver records of its own (a promotion,
// Sentinel's own failover), are made here.
void RecordFault(FaultTarget& target, history::Name process, history::Name op,
                 const history::Detail& detail, std::optional<int64_t> value_ms = std::nullopt);

// Starts fault `f` now on `target` and schedules its end.
void ApplyFault(const FaultSpec& f, FaultTarget& target);

// Pauses process `name` for duration_us (a pause fault, or one of [gc]'s pauses when `gc`),
// recording the pause and its resume; nothing when it cannot be paused now.
void PauseFor(FaultTarget& target, const std::string& name, int64_t duration_us, bool gc);

}  // namespace lockstep::drive

#endif  // LOCKSTEP_DRIVE_FAULTS_H_
