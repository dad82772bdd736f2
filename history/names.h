// The History's vocabulary and its name table.
//
// Every name an event carries (its process, op, lock and peer) is interned once per run into a
// NameTable and travels as a small id, so that appending an event copies no string. The words
// lockstep itself speaks (the client ops, lease ops, fault kinds, note kinds, the exec labels
// the checkers know) have fixed ids in every table, so code compares `e.op == names::kAcquire`
// rather than strings. Names a run brings (processes "c1", "n2", locks, channels, protocol
// labels) get the next ids in the order they are first interned, which is deterministic for a
// deterministic driver.
//
// The properties the checkers judge are listed here too: the one list that the scenario loader,
// the checkers, the reports and the CLI all read.
#ifndef LOCKSTEP_HISTORY_NAMES_H_
#define LOCKSTEP_HISTORY_NAMES_H_

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lockstep::history {

using Name = uint32_t;

namespace names {
// The fixed vocabulary. kNone is the empty string: an event without a lock, peer or op.
enum : Name {
  kNone = 0,
  // Processes the driver speaks as.
  kSim,
  kSentinel,
  // Client operations (invoke / ok / fail / info). "acquire" is also the exec label of the
  // scripts that acquire.
  kAcquire,
  kAcquireRead,
  kRelease,
  kReleaseRead,
  kForceUnlock,
  // The protected resource.
  kEnter,
  kExit,
  // What happened to a lock key on a node.
  kAcquired,
  kReleased,
  kExpired,
  kLost,
  kOwners,
  // Faults, as the driver records them.
  kPartition,
  kHeal,
  kCrash,
  kRestart,
  kPause,
  kResume,
  kClockJump,
  kFailover,
  kPromote,
  kLoseReplies,
  kLoseRepliesEnd,
  kLatency,
  kLatencyEnd,
  kLoss,
  kLossEnd,
  kDuplicate,
  kDuplicateEnd,
  kFsyncStall,
  kFsyncStallEnd,
  // Notes.
  kRun,
  kProtocol,
  kCluster,
  kLeaseDefault,
  kClient,
  kRole,
  kDone,
  kRediscover,
  kEnd,
  // Exec labels the checkers and the timeline look for.
  kTryAcquire,
  kGetCount,
  kRenew,
  // Replication events (EventType::kReplicated).
  kApplied,
  kResynced,
  // Note clock_base (value: Unix ms): what this process's clock read at true time 0 before any
  // offset the scenario asked for, when that is not the scenario's start_unix_ms (a live
  // replay's servers run on the machine's real clock).
  kClockBase,
  // Note holder_value (thread: the writer): "value=<v>": from now on this thread's acquisitions
  // write <v> as their holder value (a client program that draws a value per acquisition).
  kHolderValue,
  kVocabularySize
};

// The text of every fixed id, indexed by it: a new word is its id above and its text here.
inline constexpr std::array<std::string_view, kVocabularySize> kVocabulary = {
    "",
    "sim",
    "sentinel",
    "acquire",
    "acquire_read",
    "release",
    "release_read",
    "force_unlock",
    "enter",
    "exit",
    "acquired",
    "released",
    "expired",
    "lost",
    "owners",
    "partition",
    "heal",
    "crash",
    "restart",
    "pause",
    "resume",
    "clock_jump",
    "failover",
    "promote",
    "lose_replies",
    "lose_replies_end",
    "latency",
    "latency_end",
    "loss",
    "loss_end",
    "duplicate",
    "duplicate_end",
    "fsync_stall",
    "fsync_stall_end",
    "run",
    "protocol",
    "cluster",
    "lease_default",
    "client",
    "role",
    "done",
    "rediscover",
    "end",
    "try_acquire",
    "get_count",
    "renew",
    "applied",
    "resynced",
    "clock_base",
    "holder_value",
};
// Every id has its own text (a word left out above would leave the last ids empty).
constexpr bool VocabularyComplete() {
  for (size_t i = 1; i < kVocabulary.size(); ++i) {
    if (kVocabulary[i].empty()) return false;
    for (size_t j = 0; j < i; ++j) {
      if (kVocabulary[j] == kVocabulary[i]) return false;
    }
  }
  return true;
}
static_assert(VocabularyComplete(), "each names:: id needs its own text in kVocabulary");
}  // namespace names

// Interns strings as small ids. Ids are dense (0, 1, 2 ...), the vocabulary first; a name keeps
// its id for the table's life, and Str() stays valid as long as the table does.
class NameTable {
 public:
  NameTable();
  NameTable(const NameTable&) = delete;
  NameTable& operator=(const NameTable&) = delete;

  Name Intern(std::string_view s);
  // The id of `s` if it was interned, else names::kNone (for s != "").
  Name Find(std::string_view s) const;
  // Safe to call from another thread for any name that thread learnt of (an event handed over
  // through a lock): interning more names never moves the views already made.
  std::string_view Str(Name name) const {
    const uint64_t j = uint64_t{name} + kFirstSegment;
    const int segment = std::bit_width(j) - kFirstSegmentBits - 1;
    return segments_[static_cast<size_t>(segment)][j - (kFirstSegment << segment)];
  }
  size_t size() const { return size_; }  // The interning thread's: not for other threads.

 private:
  // The simulator interns a command's label and a message's channel as it sends them: names
  // of a few bytes, for which std::hash's out-of-line Murmur costs more than the lookup. This
  // one mixes 8 bytes at a time, inline. (The map is only looked up, never iterated, so its
  // hash can never reach the output.)
  struct ShortNameHash {
    size_t operator()(std::string_view s) const {
      uint64_t h = s.size() * 0x9E3779B97F4A7C15ull;
      size_t i = 0;
      for (; i + 8 <= s.size(); i += 8) {
        uint64_t w;
        std::memcpy(&w, s.data() + i, 8);
        h = (h ^ w) * 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
      }
      uint64_t tail = 0;
      std::memcpy(&tail, s.data() + i, s.size() - i);
      h = (h ^ tail) * 0xC4CEB9FE1A85EC53ull;
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };

  // The views by name, in segments of 1024, 2048, 4096 ... views that are never moved once
  // made (a vector's would move as it grew, under a reader on another thread). 23 segments
  // hold every Name a uint32_t can be.
  static constexpr int kFirstSegmentBits = 10;
  static constexpr uint64_t kFirstSegment = uint64_t{1} << kFirstSegmentBits;
  std::array<std::unique_ptr<std::string_view[]>, 23> segments_;
  size_t size_ = 0;
  std::deque<std::string> storage_;  // A deque never moves its elements: the views stay valid.
  std::unordered_map<std::string_view, Name, ShortNameHash> ids_;
};

// The properties, in the order a Verdict lists them.
inline constexpr std::string_view kMutualExclusion = "mutual_exclusion";
inline constexpr std::string_view kResourceExclusion = "resource_exclusion";
inline constexpr std::string_view kReentrancy = "reentrancy";
inline constexpr std::string_view kLeaseSafety = "lease_safety";
inline constexpr std::string_view kLiveness = "liveness";
inline constexpr std::string_view kFairness = "fairness";
inline constexpr std::string_view kFencing = "fencing";
inline constexpr std::string_view kRwExclusion = "rw_exclusion";
inline constexpr std::string_view kSemaphore = "semaphore";
inline constexpr std::string_view kLatch = "latch";
inline constexpr std::string_view kScriptErrors = "script_errors";
inline constexpr std::array<std::string_view, 11> kProperties = {
    kMutualExclusion, kResourceExclusion, kReentrancy, kLeaseSafety, kLiveness,    kFairness,
    kFencing,         kRwExclusion,       kSemaphore,  kLatch,       kScriptErrors};
// Properties judged in every run: a scenario's [expect] that does not name one expects it to
// hold (model/scenario.h, ExpectationOf). A lock script that answers with an error is a finding
// unless the scenario says it breaks its script on purpose.
inline constexpr std::array<std::string_view, 1> kJudgedInEveryRun = {kScriptErrors};

}  // namespace lockstep::history

#endif  // LOCKSTEP_HISTORY_NAMES_H_
