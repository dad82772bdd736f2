// The workload of one client process: what its threads do, the same under every driver.
//
// A scenario's client process runs `threads` threads, each looping by the client's role
// (model/scenario.h ClientSpec::Role):
//   worker       think -> acquire (reentry times) -> enter the resource -> critical section ->
//                leave the resource -> release (as many times) -> think -> ...
//   await        await the latch (an acquire) -> think -> ...
//   count_down   think -> countDown (a release) -> ...
//   add_permits, reduce_permits, try_set_permits, drain_permits
//                think -> the semaphore operation -> ...
// and stops after ops_per_thread iterations when the workload sets it. ClientWorkload is that
// loop, written once: it calls the lock protocol (locks/protocol.h), records the operations'
// invoke / ok / fail / info events and the resource's enter / exit events (drive/resource.h),
// and waits for its think times and critical sections on the process's own clock. It never
// touches a socket, a clock or an event queue: everything outside it goes through ClientHost,
// which the driver implements (the simulator, the live harness).
//
// Who does what:
//  - the driver owns the process: its clock, its PRNG, its protocol object and Outbox, its
//    crash, restart and pause; it forwards the Outbox's Complete(thread, result) to
//    OnComplete, and calls Start when the process starts or restarts and Crash when it dies;
//  - the workload owns the threads' loop and their state (holds, the side a read-write
//    iteration takes, the fencing token, iterations done).
//
// A driver's part, in order (the simulator's Simulation::Impl is one such driver):
//   setup     intern the process's and the lock's names in its fixed order; make one Resource
//             for the run and, per client, a ClientHost and a ClientWorkload; draw the first
//             UUID (drive/client.h NewClientUuid)
//   start     make the protocol (locks::MakeProtocol with drive::ClientConfigFor) and the
//             Outbox, then Start(protocol, outbox, uuid, /*restart=*/false)
//   run       deliver replies, messages and timers to the protocol; Outbox::Complete ->
//             OnComplete; run the work given to After when it is due
//   crash     protocol.OnCrash(), Crash(), drop the work the host holds for the process
//   restart   a new UUID, a new protocol and Outbox, Start(..., /*restart=*/true)
//   end       stop running the host's work; the workload needs no call
//
// What the workload records (through ClientHost::Record): the client note (uuid=...) at every
// start, the role note once for a client that is not a worker, every operation's invoke and
// its ok / fail / info, the resource's enter and exit, and a counting-down thread's done note.
// Everything else (the run's notes, execs, messages, leases, faults) is the driver's.
//
// Determinism: the workload draws from the process's PRNG (ClientHost::Rng, the stream the
// protocol also draws from) in a fixed order: a read-write iteration's side when it starts
// (only when the side is drawn and read_ratio > 0), a critical section's length when the
// thread enters the resource, a think time when it starts thinking. A driver that keeps its own draws in its own order
// gets the same run from the same seed. A change to that order changes every history.
//
// Threading: a workload is not thread-safe. The host calls Start, Crash, OnComplete and the
// work it was given by After one at a time, as the process's own event loop would.
#ifndef LOCKSTEP_DRIVE_WORKLOAD_H_
#define LOCKSTEP_DRIVE_WORKLOAD_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "base/random.h"
#include "drive/resource.h"
#include "history/event.h"
#include "locks/protocol.h"
#include "model/scenario.h"

namespace lockstep::drive {

// What a driver gives one client process's workload.
class ClientHost {
 public:
  virtual ~ClientHost() = default;

  // Stamps e with the true time now (e.t_us) and appends it to the run's history. The
  // workload fills everything else: type, process, thread, op, lock, local_ms, value, detail.
  // The detail's text lives only until Record returns (history/event.h): copy what is kept.
  virtual void Record(history::Event& e) = 0;

  // The id of `s` in the run's name table, interned now if it is new (the op of a semaphore's
  // permit-changing operation is named after the client's role, which the fixed vocabulary
  // lacks). Interning order decides the ids, so the workload interns when the simulator always
  // has: at the operation's first invoke.
  virtual history::Name Intern(std::string_view s) = 0;

  // The process's wall clock now, in milliseconds since the Unix epoch: what events carry as
  // local_ms (System.currentTimeMillis() in the modelled client).
  virtual int64_t WallMs() = 0;

  // The process's PRNG: the same stream the protocol reads through Outbox::Rng.
  virtual Prng& Rng() = 0;

  // Runs `work` after delay_us (>= 0) of the process's monotonic time, as the process's own
  // work: never inside the caller's stack (a delay of 0 runs it as its own event, after what
  // is already due now), dropped if the process crashes before it runs (it belongs to that
  // incarnation only), held while the process is paused and run when it resumes, in order.
  virtual void After(int64_t delay_us, std::function<void()> work) = 0;
};

class ClientWorkload {
 public:
  // Client `client` (an index into scenario.clients; its stagger is client * stagger_ms) of
  // `scenario`, known in the run's name table as `process` (interned by the driver at setup).
  // `resource` is the run's one protected resource (it also names the lock in the events).
  // Keeps copies of what it reads from the scenario; `resource` and `host` must outlive the
  // workload. Records nothing and asks nothing of the host until Start.
  ClientWorkload(const Scenario& scenario, int client, history::Name process, Resource& resource,
                 ClientHost& host);
  ClientWorkload(const ClientWorkload&) = delete;
  ClientWorkload& operator=(const ClientWorkload&) = delete;

  // The process starts (restart = false: once, at the start of the run) or restarts (after a
  // crash, as a new RedissonClient with a new UUID). `protocol` and `outbox` are the driver's,
  // made for this incarnation with `uuid` (drive/client.h); the workload uses them until the
  // next Crash, so they must live until then. Records a client note with the UUID and, on the first start of a client that
  // is not a worker, a role note; then starts every thread afresh: a worker thinks first
  // (after its stagger, if any), an awaiting thread awaits at once (after its stagger), as
  // work given to the host. A restart has no stagger.
  void Start(locks::LockProtocol& protocol, locks::Outbox& outbox, std::string_view uuid,
             bool restart);

  // The process died. The workload forgets the protocol and outbox (the driver calls the
  // protocol's OnCrash and drops them); what the host holds for it is dropped by the host.
  // Operations in flight never complete: the checkers read an invoke without its end as
  // unknown. REQUIRES: started and not crashed since.
  void Crash();

  // The protocol ended `thread`'s operation (the driver's Outbox::Complete forwards here).
  // Records the ok / fail / info event now and takes the thread's next step as work given to
  // the host with no delay, never inside the protocol's call stack.
  void OnComplete(int thread, const locks::OpResult& result);

  bool running() const { return protocol_ != nullptr; }
  int threads() const { return static_cast<int>(threads_.size()); }
  // Iterations `thread` has finished: a worker's release after it acquired, a passed await,
  // a countDown or a permit change whatever its outcome.
  int64_t iterations(int thread) const { return At(thread).iterations; }

 private:
  struct ThreadState {
    int holds = 0;           // Acquisitions held now (reentry nests them).
    bool shared = false;     // This iteration takes the read side of a read-write lock.
    std::optional<int64_t> token;  // The fencing token of the current stay in the resource.
    int64_t iterations = 0;
    bool busy = false;       // An operation is in flight.
    history::Name op = history::names::kNone;  // The operation in flight, or the last one.
    locks::OpResult::Status status = locks::OpResult::Status::kOk;  // How the last one ended.
  };

  ThreadState& At(int thread);
  const ThreadState& At(int thread) const;

  void Invoke(int thread, history::Name op, const history::Detail& detail, bool has_value = false,
              int64_t value = 0);
  void StartThread(int thread);
  void StartAcquire(int thread);
  void StartRelease(int thread);
  void StartPermitChange(int thread);
  void Next(int thread);
  void EnterResource(int thread);
  void ExitResource(int thread);
  void Think(int thread);

  // What the workload reads from the scenario.
  WorkloadSpec workload_;  // [workload] with the client's group's own fields applied.
  ClientSpec::Role role_;
  int thread_count_;
  int64_t stagger_us_;     // This client's: its index times the workload's stagger.
  int64_t permits_;        // trySetPermits' argument.
  bool lease_rule_before_3_17_1_;
  bool shows_permits_;     // Acquire invokes note one permit (history/kinds.h).

  history::Name process_;
  Resource& resource_;
  ClientHost& host_;

  // This incarnation's protocol and outbox; null while the process is down.
  locks::LockProtocol* protocol_ = nullptr;
  locks::Outbox* outbox_ = nullptr;
  bool started_ = false;   // Started once: a later Start is a restart.
  std::vector<ThreadState> threads_;
};

}  // namespace lockstep::drive

#endif  // LOCKSTEP_DRIVE_WORKLOAD_H_
