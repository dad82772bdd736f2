// Redisson's RSemaphore (RedissonSemaphore) as a sans-IO state machine, in two versions chosen
// by ClientConfig::version ("v3.13.6" or "current"); scripts: lua/semaphore/current/ for both
// (3.13.6 differs only in its literal PUBLISH; the client passes "publish").
//
// One protocol object is one client process (one RedissonClient) using one semaphore, named
// ClientConfig::lock_name, from ClientConfig::threads threads:
//  - Acquire = tryAcquire(args.permits, wait) for kTryLock, acquire(args.permits) for kLock
//    (waits without limit), tryAcquire(args.permits) for kTryLockNoWait. Ok with value = the
//    permits acquired. permits 0 succeeds without a command; a negative count fails at once
//    (IllegalArgumentException).
//  - Release = release(n), n being the permits of the thread's most recent acquisition not yet
//    released (else those of its last Acquire, else 1). There is no ownership check: a release
//    without an acquire creates permits, as in Redisson. Ok with value n.
//  - Before its first acquire or release, each process (again after a crash) runs
//    trySetPermits(ClientConfig::permits) once, which sets the semaphore only if it does not
//    exist. Operations arriving meanwhile wait for it; if it fails they fail.
//  - ForceUnlock fails at once: RSemaphore has none. There is no lease and no watchdog.
//  - Extra runs the permit-changing operations, after the same trySetPermits: addPermits(1)
//    and addPermits(-1) (script add_permits; RSemaphore.reducePermits(n), removed in 3.13.5,
//    was addPermits(-n)), ok without a value; trySetPermits(ClientConfig::permits), ok with
//    value 1 (set) or 0; drainPermits(), ok with the permits it took. In 3.13.6 add_permits
//    publishes nothing (lua/semaphore/v3.13.6/), so waiters are not woken by it.
//
// The client algorithm is RedissonSemaphore's synchronous one: one try_acquire; if it fails,
// subscribe to redisson_sc:{name}; then loop { try_acquire; wait on the entry's local
// semaphore }. Each release publishes the new count v, and every subscribed process adds
// min(threads subscribed, v) permits to its local semaphore ("current", 3.15.6+), or v permits
// (3.13.6, where a waiter also needs `permits` local permits at once rather than one). A wait
// for the subscription that runs out returns without unsubscribing, so the entry keeps that
// thread's reference (Redisson does the same).
//
// Commands: "try_set_permits" (resent on timeout), "try_acquire", "release", "add_permits" and
// "drain_permits" (resent in 3.13.6; "current" does not resend them once written: a timeout
// ends the operation as info), "subscribe" / "unsubscribe". All on node 0.
//
// The second half of this header is the machine RSemaphore shares with RCountDownLatch
// (countdownlatch.h): a "check, subscribe, check again on every wake-up" object with the
// command layer of redisson_common.h (response timeout, resends).
#ifndef LOCKSTEP_LOCKS_SEMAPHORE_SEMAPHORE_H_
#define LOCKSTEP_LOCKS_SEMAPHORE_SEMAPHORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "locks/protocol.h"
#include "locks/redisson_common.h"

namespace lockstep::locks {

// Needs the scripts RequiredScripts("semaphore") names, a config CheckRedissonConfig accepts
// and permits >= 0.
std::unique_ptr<LockProtocol> MakeSemaphore(const ClientConfig& config, const ScriptSet& scripts);

// True when MakeSemaphore accepts the arguments; otherwise false with the reason in *error.
bool CheckSemaphoreConfig(const ClientConfig& config, const ScriptSet& scripts,
                          std::string* error);

// The channel releases publish on: redisson_sc:{name}.
std::string SemaphoreChannel(const std::string& name);

// ---- The machine RSemaphore and RCountDownLatch share ---------------------------------------

// What one process keeps per subscription entry between messages: RedissonLockEntry's local
// semaphore (permits) for RSemaphore, the ReclosableLatch (open) for RCountDownLatch.
struct LocalLatch {
  int64_t permits = 0;
  bool open = false;
};

// What one kind of synchronizer sends and how it reads replies and messages.
class SynchronizerKind {
 public:
  struct Command {
    Argv argv;
    std::string label;
    bool retry = true;  // Resent on response timeout.
  };
  enum class Check : uint8_t {
    kPassed,  // The acquisition succeeded: *result is its outcome.
    kNotYet,  // Wait (or, for kTryLockNoWait, fail with result->detail).
    kFailed,  // The acquisition fails with *result (an unexpected reply).
  };

  SynchronizerKind(const ClientConfig& config, const ScriptSet& scripts);
  virtual ~SynchronizerKind() = default;

  const ClientConfig& config() const { return config_; }
  RedissonVersion version() const { return version_; }

  // An acquisition that ends at once, without any command.
  virtual std::optional<OpResult> Immediate(const AcquireArgs& args);
  // Sent once per process before its first acquire or release (trySetPermits, trySetCount).
  virtual Command Init() = 0;
  // The channel the process subscribes to while a thread waits.
  virtual std::string Channel() const = 0;
  // One check: tryAcquire(permits), getCount().
  virtual Command Attempt(int thread, const AcquireArgs& args) = 0;
  virtual Check ReadAttempt(const Reply& reply, const AcquireArgs& args, OpResult* result) = 0;
  // How an acquisition whose check got no reply (after its resends) ends.
  virtual OpResult::Status AttemptTimeoutStatus() const = 0;
  // tryLock: whether a wait that used up the time is still followed by one more check (the
  // latch's while (getCount() > 0) loop) or ends the acquisition at once (the semaphore).
  virtual bool CheckAfterLastWait() const = 0;
  // A message on Channel(); `refs` is the number of threads holding the entry.
  virtual void OnMessage(const std::string& payload, int refs, LocalLatch* latch) = 0;
  // Whether a thread that waits to acquire with `args` may go on now (taking what it needs).
  virtual bool TryPass(const AcquireArgs& args, LocalLatch* latch) = 0;
  // The acquisition of `thread` succeeded.
  virtual void OnAcquired(int thread, const AcquireArgs& args);
  // release(n), countDown(): a command, or nothing and *immediate for an operation that ends
  // at once. ReadRelease turns its (non-error) reply into the result.
  virtual std::optional<Command> Release(int thread, OpResult* immediate) = 0;
  virtual OpResult ReadRelease(int thread, const Reply& reply) = 0;
  // ForceUnlock: a command whose integer reply is the result's value, or *immediate.
  virtual std::optional<Command> ForceUnlock(OpResult* immediate) = 0;
  // An ExtraOp: a command whose (non-error) reply ReadExtra turns into the result, or nothing
  // and *immediate. By default the kind has none and fails it at once.
  virtual std::optional<Command> Extra(ExtraOp op, OpResult* immediate);
  virtual OpResult ReadExtra(ExtraOp op, const Reply& reply);
  // The process died: forget what the kind keeps per thread.
  virtual void OnCrash();

 protected:
  Argv Eval(const std::string& name, std::vector<std::string> keys,
            std::vector<std::string> args) const {
    return EvalArgv(scripts_, name, std::move(keys), std::move(args));
  }

 private:
  const ClientConfig config_;
  const ScriptSet scripts_;
  const RedissonVersion version_;
};

// The shared machine for `kind`. kind->config() must pass CheckRedissonConfig.
std::unique_ptr<LockProtocol> MakeSynchronizerClient(std::unique_ptr<SynchronizerKind> kind);

// Parses a whole decimal integer (a message payload, a GET reply); false if it is not one.
bool ParseInt64(const std::string& text, int64_t* value);

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_SEMAPHORE_SEMAPHORE_H_
