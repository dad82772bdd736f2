// Lock protocols as sans-IO state machines.
//
// A protocol object is the client side of one lock algorithm for one client process (all its
// threads): Redisson's RLock with its pub/sub wake-ups, watchdog and retries, and later the
// fair, read-write, fenced, spin and RedLock variants. It never touches a socket, a clock or a
// thread. It is driven by three kinds of input, "an operation was requested", "a reply / a
// message arrived", "a timer fired", and it answers only through its Outbox: "send this command
// to that node", "arm a timer", "this operation finished". The simulator and the live harness
// are two implementations of Outbox driving the same protocol code (LevelDB's Env is the model).
//
// Rules every protocol follows:
//  - One operation at a time per thread; Complete() ends it exactly once.
//  - Requests and timers carry ids from the Outbox; a reply or timer for an id the protocol no
//    longer waits for is ignored (late replies after a timeout are normal).
//  - Time is read only through the Outbox: MonoUs() for timeouts and waits (System.nanoTime),
//    WallMs() where the real client sends its wall clock (the fair lock's "now").
#ifndef LOCKSTEP_LOCKS_PROTOCOL_H_
#define LOCKSTEP_LOCKS_PROTOCOL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/argv.h"
#include "base/random.h"
#include "core/reply.h"
#include "history/kinds.h"

namespace lockstep::locks {

using RequestId = uint64_t;
using TimerId = uint64_t;

// How an operation ended, in Jepsen's terms.
struct OpResult {
  enum class Status : uint8_t {
    kOk,    // Done: acquired, released.
    kFail,  // Definitely not done: wait timed out, not the owner, lock held by another.
    kInfo,  // Unknown: the request timed out after its retries and may have been executed.
  };
  Status status = Status::kOk;
  bool has_value = false;
  int64_t value = 0;    // A fencing token, or what the unlock script returned.
  std::string detail;   // "acquired", "IllegalMonitorStateException ...", "RedisTimeoutException ..."

  static OpResult Of(Status status, std::string detail) {
    OpResult result;
    result.status = status;
    result.detail = std::move(detail);
    return result;
  }
  static OpResult Ok(std::string detail) { return Of(Status::kOk, std::move(detail)); }
  static OpResult OkValue(int64_t value, std::string detail) {
    OpResult result = Ok(std::move(detail));
    result.has_value = true;
    result.value = value;
    return result;
  }
  static OpResult Fail(std::string detail) { return Of(Status::kFail, std::move(detail)); }
  static OpResult Info(std::string detail) { return Of(Status::kInfo, std::move(detail)); }
};

// Everything a protocol can do to the world.
class Outbox {
 public:
  virtual ~Outbox() = default;

  virtual int64_t MonoUs() = 0;  // This process's monotonic clock.
  virtual int64_t WallMs() = 0;  // This process's wall clock.
  virtual Prng& Rng() = 0;  // For the algorithm's own randomness (backoff jitter).

  // How many independent nodes the protocol can address (slots 0 .. NodeCount()-1): 1 for a
  // single master with or without replicas, N for RedLock/MultiLock over N masters.
  virtual int NodeCount() = 0;

  RequestId NewRequestId() { return ++last_request_; }
  TimerId NewTimerId() { return ++last_timer_; }

  // Sends a command to node `node` (0-based slot, < NodeCount(); the driver maps it to the
  // process the client currently believes is that node, e.g. the current master).
  // Its reply arrives as OnReply(request, reply). SUBSCRIBE/UNSUBSCRIBE travel on the
  // process's pub/sub connection; their confirmation is the reply and the channel's messages
  // arrive as OnMessage. `label` names the script or command in the history ("acquire");
  // `thread` is the thread whose operation sends it (the renewed thread for a watchdog renew),
  // or -1 for the process's own commands (SUBSCRIBE, UNSUBSCRIBE, initialisation), so that
  // the history can tie each command on a node to one thread.
  void Send(int node, RequestId request, Argv argv, const std::string& label, int thread) {
    DoSend(node, request, ShareArgv(std::move(argv)), label, thread);
  }
  // The same for a command the protocol keeps to resend: every attempt shares the one copy.
  void Send(int node, RequestId request, SharedArgv argv, const std::string& label, int thread) {
    DoSend(node, request, std::move(argv), label, thread);
  }

  // Fires OnTimer(timer) once after delay_us of this process's monotonic time.
  virtual void ArmTimer(TimerId timer, int64_t delay_us) = 0;
  virtual void CancelTimer(TimerId timer) = 0;

  // Ends the current operation of `thread`.
  virtual void Complete(int thread, const OpResult& result) = 0;

  // From now on `thread`'s acquisitions write `value` as their holder (a client program that
  // draws a value per acquisition, as most lock libraries do): the driver records it, so that
  // the checkers know whose a lock key holding it is. Built-in clients write their token.
  virtual void HolderValue(int thread, std::string_view value) {
    (void)thread;
    (void)value;
  }

 protected:
  // What Send does; a driver or an adapter supplies it.
  virtual void DoSend(int node, RequestId request, SharedArgv argv, const std::string& label,
                      int thread) = 0;

 private:
  RequestId last_request_ = 0;
  TimerId last_timer_ = 0;
};

// A scenario's times are microseconds; the modelled caller passes a whole number of
// milliseconds as (n, MILLISECONDS) and any other value as (n, MICROSECONDS). So -1 ms and -1 us
// are both the API's -1, "none given", which lock() and tryLock(wait) pass for the lease.
inline bool IsApiMinusOne(int64_t us) { return us == -1 || us == -1000; }
// unit.toMillis(value): Java's long division, which truncates toward zero as C++'s does.
inline int64_t ToMillis(int64_t us) { return us / 1000; }
// Whether Redisson takes a leaseTime (or waitTime) as given: until 3.17.1 the test was
// `!= -1`, so 0, negative and sub-millisecond values reach the scripts as toMillis(value)
// (PEXPIRE with 0 or less deletes the lock at once); since 3.17.1 it is `> 0`, and anything
// else means none (the watchdog; no wait).
inline bool ApiValueGiven(bool before_3_17_1, int64_t us) {
  return before_3_17_1 ? !IsApiMinusOne(us) : us > 0;
}

// Arguments of an acquisition, as Redisson's API takes them.
struct AcquireArgs {
  enum class Mode : uint8_t {
    kLock,            // lock() / lock(lease): waits forever.
    kTryLock,         // tryLock(wait, lease).
    kTryLockNoWait,   // tryLock(): one attempt, no subscription.
  };
  Mode mode = Mode::kTryLock;
  int64_t wait_us = 0;    // Any value the API takes; see ApiValueGiven.
  int64_t lease_us = -1;  // -1: none given (watchdog); any other value the API takes.
  bool shared = false;    // The read side of a read-write lock.
  int64_t permits = 1;    // Semaphores: how many permits.
};

// Operations some kinds have besides acquire and release: RSemaphore's permit changes
// (addPermits(1), addPermits(-1) as reducePermits was, trySetPermits(ClientConfig::permits),
// drainPermits()). A scenario gives them to clients by role.
enum class ExtraOp : uint8_t { kAddPermits, kReducePermits, kTrySetPermits, kDrainPermits };

class LockProtocol {
 public:
  virtual ~LockProtocol() = default;

  virtual void Acquire(Outbox& out, int thread, const AcquireArgs& args) = 0;
  virtual void Release(Outbox& out, int thread) = 0;
  virtual void ForceUnlock(Outbox& out, int thread) = 0;
  // An ExtraOp. Kinds without it fail it at once (the scenario loader lets no such run start).
  virtual void Extra(Outbox& out, int thread, ExtraOp op) {
    (void)op;
    out.Complete(thread,
                 OpResult::Fail("UnsupportedOperationException: this lock has no such operation"));
  }

  virtual void OnReply(Outbox& out, RequestId request, const Reply& reply) = 0;
  virtual void OnMessage(Outbox& out, int node, const std::string& channel,
                         const std::string& payload) = 0;
  virtual void OnTimer(Outbox& out, TimerId timer) = 0;

  // The process died: drop all state. No operation completes; the driver records them as info.
  virtual void OnCrash() = 0;

  // The fencing token the thread got with its current hold, if the protocol has tokens.
  virtual bool Token(int thread, int64_t* token) const {
    (void)thread;
    (void)token;
    return false;
  }

  // A client written as a program (the client kind): the first error it raised or the limit it
  // passed, with its file, which ends the run; "" while it has none. Built-in clients never fail.
  virtual std::string ProgramError() const { return {}; }
};

// The scripts a protocol runs, by name ("acquire", "unlock", "renew", "force_unlock"), with
// their bodies. Defaults come from lua/<kind>/<version>/<name>.lua; a scenario may replace any.
struct ScriptSet {
  std::map<std::string, std::string> bodies;
  std::map<std::string, std::string> files;  // Where each came from (for reports).
  // The client kind: the client program (Lua 5.4, run by the client, never by Redis) and its
  // file; its folder's other .lua files are the scripts it sends.
  std::string program;
  std::string program_file;
};

// Client settings shared by every protocol (Redisson's Config).
struct ClientConfig {
  std::string uuid;                    // ServiceManager.getId(): one per client process.
  int threads = 1;
  std::string lock_name = "lock";
  history::ProtocolVersion version = history::ProtocolVersion::k3136;
  int64_t watchdog_timeout_us = 30'000'000;
  int64_t timeout_us = 3'000'000;
  int retry_attempts = 3;
  int64_t retry_interval_us = 1'500'000;
  // The fair lock's threadWaitTime: how long a queued waiter stays ahead of those behind it
  // (Config.fairLockWaitTimeout; 300000 ms since 3.13.3, 5000 ms before).
  int64_t fair_wait_timeout_us = 300'000'000;
  // Semaphores: the permits trySetPermits sets (only if the semaphore does not exist yet).
  // CountDownLatch: the count trySetCount sets (only if the latch does not exist yet).
  int64_t permits = 1;
};

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_PROTOCOL_H_
