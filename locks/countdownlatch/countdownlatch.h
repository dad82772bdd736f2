// Redisson's RCountDownLatch (RedissonCountDownLatch) as a sans-IO state machine, in two
// versions chosen by ClientConfig::version ("v3.13.6" or "current"); scripts:
// lua/countdownlatch/current/ for both (3.13.6 differs only in its literal PUBLISH).
//
// One protocol object is one client process using one latch, named ClientConfig::lock_name,
// from ClientConfig::threads threads. It runs on the synchronizer machine RSemaphore uses
// (semaphore.h) and maps the lock operations onto the latch:
//  - Acquire = await: kTryLock is await(wait) (fails when the wait elapses), kLock is await()
//    (no limit), kTryLockNoWait one getCount() == 0 check. Ok once GET finds the count at 0 or
//    the key missing, with value = the count read (0).
//  - Release = countDown(). The script returns nothing, so the result has no value. 3.13.6
//    resends it after a response timeout (a second decrement, #3850); current does not (info).
//  - ForceUnlock = delete(): value 1 deleted (NEW_COUNT 1 published), 0 no latch.
//  - Before its first await or countDown each process (again after a crash) runs
//    trySetCount(ClientConfig::permits), which creates the latch only if it does not exist.
//
// await's loop is Redisson's: GET; if the count is above 0, subscribe to
// redisson_countdownlatch__channel__{name}; then while (GET > 0) wait on the entry's
// ReclosableLatch, which message 0 (ZERO_COUNT, published when countDown reaches 0) opens and
// message 1 (NEW_COUNT, from trySetCount and delete) closes. An open latch does not block, so a
// process that saw the latch open keeps re-reading the count until a close arrives.
//
// Commands (node 0): "try_set_count", "get_count" (GET, resent on timeout), "count_down",
// "delete", "subscribe" / "unsubscribe".
#ifndef LOCKSTEP_LOCKS_COUNTDOWNLATCH_COUNTDOWNLATCH_H_
#define LOCKSTEP_LOCKS_COUNTDOWNLATCH_COUNTDOWNLATCH_H_

#include <memory>
#include <string>

#include "locks/protocol.h"

namespace lockstep::locks {

// Needs the scripts RequiredScripts("countdownlatch") names, a config CheckRedissonConfig
// accepts and permits (the count) >= 0.
std::unique_ptr<LockProtocol> MakeCountDownLatch(const ClientConfig& config,
                                                 const ScriptSet& scripts);

// True when MakeCountDownLatch accepts the arguments; otherwise false with the reason.
bool CheckCountDownLatchConfig(const ClientConfig& config, const ScriptSet& scripts,
                               std::string* error);

// redisson_countdownlatch__channel__{name} (the braces are always added).
std::string CountDownLatchChannel(const std::string& name);

// CountDownLatchPubSub's messages.
inline constexpr const char* kZeroCountMessage = "0";
inline constexpr const char* kNewCountMessage = "1";

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_COUNTDOWNLATCH_COUNTDOWNLATCH_H_
