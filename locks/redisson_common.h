// The client machinery Redisson's lock kinds share, as RedissonLock has it for its subclasses
// (RedissonFairLock extends RedissonLock and overrides only the scripts, the subscription and
// acquireFailed): one state machine, RedissonLockClient, parameterised by a RedissonLockKind
// that says what to send.
//
// The shared machine (redisson_common.cpp) has, bottom up:
//  1. the command executor: one response timeout per attempt, resends on timeout (3.13.6:
//     every script; current: renew, forceUnlock, acquireFailed and the pub/sub commands, but
//     not acquire and unlock, which are "NoRetry" once written);
//  2. the subscription entries (PublishSubscribe / RedissonLockEntry), one per channel the kind
//     names: a reference count of the threads that need it and a semaphore that messages
//     release ("0" one permit, "1" one per waiting thread);
//  3. the per-thread operations: tryLock / lock / tryLock() / unlock / forceUnlock, with the
//     wait budget decremented after every step exactly where RedissonLock.tryLock does it, and
//     acquireFailed where tryLock calls it;
//  4. the watchdog: 3.13.6's per-lock timer chain, or current's per-process LockTask.
//
// A kind supplies the scripts' argument lists (RLock: rlock.cpp; FairLock: fairlock.cpp).
#ifndef LOCKSTEP_LOCKS_REDISSON_COMMON_H_
#define LOCKSTEP_LOCKS_REDISSON_COMMON_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "locks/protocol.h"

namespace lockstep::locks {

using RedissonVersion = history::ProtocolVersion;  // The versions this client models.

// Most threads one protocol object serves.
inline constexpr int kRedissonThreadsMax = 1 << 16;

// Redisson's name mangling (facts 1.1): prefix:{name}, or prefix:name when the name already
// has a '{' (a hash tag of its own).
std::string PrefixName(const std::string& prefix, const std::string& name);

// The channel the unlock scripts publish on: redisson_lock__channel:{name}.
std::string RLockChannel(const std::string& lock_name);

// The unlock latch of one unlock() call ("current"): redisson_unlock_latch:{name}:<requestId>.
std::string RLockUnlockLatch(const std::string& lock_name, const std::string& request_id);

// The hash field of one thread: <uuid>:<thread + 1>.
std::string RLockField(const std::string& uuid, int thread);

// The unlock message payloads (LockPubSub.UNLOCK_MESSAGE, READ_UNLOCK_MESSAGE).
inline constexpr const char* kUnlockMessage = "0";
inline constexpr const char* kReadUnlockMessage = "1";

// EVAL <body of scripts[name]> <numkeys> keys... args... The script must be in the set.
Argv EvalArgv(const ScriptSet& scripts, const std::string& name, std::vector<std::string> keys,
              std::vector<std::string> args);

// The unlock latch TTL (current): (timeout + retryInterval) * retryAttempts ms, at least 1.
int64_t RedissonLatchTtlMs(const ClientConfig& config);

// The detail of an operation whose command got no reply after its last attempt, worded like
// Redisson's RedisTimeoutException. Shared by every client that has Redisson's command layer.
std::string ResponseTimeoutDetail(const ClientConfig& config, int attempt, bool retry,
                                  const std::string& label);

// The checks every Redisson kind makes on its config (version, threads, timeouts, retries).
// `kind` prefixes the message ("rlock: ...").
bool CheckRedissonConfig(const std::string& kind, const ClientConfig& config,
                         std::string* error);

// The watchdog's entry for a lock in one process (3.13.6 ExpirationEntry, current LockEntry):
// the threads in the order they were added, each with its count of watchdog acquisitions not
// yet matched by an unlock. The first one is the thread the watchdog renews for. Shared by
// every client with Redisson's watchdog (the reentrant family here, the spin lock).
struct RenewalEntry {
  std::vector<std::pair<int, int>> threads;
  TimerId timer = 0;  // 3.13.6: the last timer armed for this entry.

  // One more acquisition of `thread` (a new thread goes last).
  void Add(int thread);
  // One fewer (nothing if it has none); a thread with none left leaves. Whether no thread is
  // left.
  bool Remove(int thread);
  bool empty() const { return threads.empty(); }
  int renewed_thread() const { return threads.front().first; }
};

// current's LockTask reading a renew reply (the batched renew script's array): whether it
// cancels one acquisition of the renewed thread (its first element is not 1). An error or a
// timeout (no array) cancels nothing: the task logs it and re-arms.
bool RenewCancels(const Reply* reply);

// What one Redisson lock kind sends. Every method is called from inside a protocol entry point,
// with the Outbox of that call (for the wall clock a script may need as "now").
class RedissonLockKind {
 public:
  struct Script {
    SharedArgv argv;    // Shared: every attempt of a command sends the same copy.
    std::string label;  // The name in the history: "acquire", "try_acquire", ...
  };

  RedissonLockKind(const ClientConfig& config, const ScriptSet& scripts);
  virtual ~RedissonLockKind() = default;

  const ClientConfig& config() const { return config_; }
  RedissonVersion version() const { return version_; }
  // RLockField(uuid, thread), made once per thread.
  const std::string& Field(int thread) const;

  // One acquire attempt of `thread` (tryAcquireAsync / tryAcquireOnceAsync): nil = acquired,
  // an integer = not acquired (a ttl in ms to wait, except for kTryLockNoWait where it only
  // means false). lease_ms is what goes to the script as the lease.
  virtual Script Attempt(Outbox& out, int thread, const AcquireArgs& args, int64_t lease_ms) = 0;

  // The detail of a kTryLockNoWait that got `reply` (an integer) back.
  virtual std::string NotAcquired(int64_t reply) const = 0;

  // The channel `thread` subscribes to while it waits. Threads that name the same channel share
  // one subscription entry (RLock: one per process; FairLock: one per thread).
  virtual std::string Channel(int thread) const = 0;

  // The unlock script of `thread`; `latch` is this unlock's latch key ("current"), empty for
  // 3.13.6. Its reply: nil not held, 0 still held, 1 released.
  virtual Argv Unlock(Outbox& out, int thread, int64_t lease_ms, const std::string& latch) = 0;

  // The forceUnlock script; reply 1 deleted, 0 no lock.
  virtual Argv ForceUnlock(Outbox& out) = 0;

  // What tryLock sends when it gives up (acquireFailedAsync), or nothing (RLock's no-op). The
  // operation ends when its reply is in, as Redisson's synchronous acquireFailed() returns then.
  virtual std::optional<Argv> AcquireFailed(Outbox& out, int thread, const AcquireArgs& args);

  // The watchdog's renew script for `thread` with `lease_ms` (reply: 3.13.6 1/0; current an
  // array with one 1/0). Default: script "renew" on the lock hash, as RLock has it.
  virtual Argv Renew(int thread, int64_t lease_ms) const;

 protected:
  Argv Eval(const std::string& name, std::vector<std::string> keys,
            std::vector<std::string> args) const {
    return EvalArgv(scripts_, name, std::move(keys), std::move(args));
  }

  // The attempts of a kind whose acquire command depends only on the thread and the lease
  // (RLock's; each mode of RReadWriteLock's): a waiting thread sends one on every wake-up, so
  // the command is made once per (thread, lease) and the same copy sent each time.
  class SameAttempts {
   public:
    template <typename Make>
    SharedArgv Get(int thread, int64_t lease_ms, Make&& make) {
      const auto index = static_cast<size_t>(thread);
      if (entries_.size() <= index) entries_.resize(index + 1);
      Entry& entry = entries_[index];
      if (!entry.argv || entry.lease_ms != lease_ms) {
        entry.argv = ShareArgv(make());
        entry.lease_ms = lease_ms;
      }
      return entry.argv;
    }

   private:
    struct Entry {
      int64_t lease_ms = 0;
      SharedArgv argv;
    };
    std::vector<Entry> entries_;
  };

 private:
  const ClientConfig config_;
  const ScriptSet scripts_;
  const RedissonVersion version_;
  mutable std::vector<std::string> fields_;  // By thread; empty until first asked.
};

// The shared state machine for `kind`. config must pass CheckRedissonConfig.
std::unique_ptr<LockProtocol> MakeRedissonLockClient(std::unique_ptr<RedissonLockKind> kind);

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_REDISSON_COMMON_H_
