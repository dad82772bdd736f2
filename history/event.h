// The History's unit: one thing that happened in a run, as typed data.
//
// A driver (the simulator, the live harness) fills an Event and appends it; every reader (the
// facts pass, the checkers, the reports, the file writer) receives the same Event, in time
// order, once. An Event owns nothing: its names are ids into the run's NameTable, and the text
// its detail refers to (a reply, a payload, a string read from a file) lives only until the
// append returns. A reader that keeps something copies what it keeps.
//
// Vocabulary (Jepsen's, where it fits):
//   invoke / ok / fail / info   a client operation started, succeeded, failed for sure, or ended
//                               with an unknown outcome (a timeout: it may have happened)
//   exec      a command or script ran on a node (process = node, peer = client, thread = the
//             client thread whose operation sent it, -1 for the process's own commands)
//   message   a pub/sub message reached a client (op = the channel)
//   fault     a fault started or ended (op = partition, heal, crash, restart, pause, resume,
//             clock_jump, failover, promote, lose_replies, latency, loss, duplicate ...)
//   resource  a thread entered or left the protected resource (op = enter/exit)
//   lease     a lock key's state changed on a node (op = acquired, released, expired, lost,
//             owners; the detail lists the key's owner fields, or its count)
//   note      what the run is (run, protocol, cluster, lease_default), who a client is
//             (client, role), and what happened outside the protocol (done, rediscover, end)
//
// The detail is typed by (type, op): an acquire's parameters, a reply, a fault's shape, a
// note's fields (history/notes.h has every kind, and the one encoder and decoder of their text
// in a history file). An event read from a file also keeps the detail's text as it was written,
// so that writing it again gives the same bytes.
#ifndef LOCKSTEP_HISTORY_EVENT_H_
#define LOCKSTEP_HISTORY_EVENT_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>

#include "history/names.h"

namespace lockstep {
struct Reply;
}  // namespace lockstep

namespace lockstep::history {

// kReplicated: a replica applied a write of its master's replication stream that changed the
// lock key's owners there (op "applied"), or took its master's data in a full resync (op
// "resynced", recorded for every one). The process is the replica, the peer its master, the
// value the lag in microseconds (the apply's true time minus the master's write's; 0 for a
// resync), the detail the owners on the replica afterwards (none: the key is gone there).
// Only the simulator records them; the checkers do not read them (replicas are not judged),
// the reports draw them on the replica's lane.
enum class EventType : uint8_t {
  kInvoke, kOk, kFail, kInfo, kExec, kMessage, kFault, kResource, kLease, kNote, kReplicated
};
const char* TypeName(EventType t);
std::optional<EventType> ParseType(std::string_view s);

// --- details ---------------------------------------------------------------------------------

// No detail at all (the key is absent from the file).
struct NoDetail {};

// Free text: a completion's outcome ("acquired on 3 of 5 nodes"), a message's payload, or a
// detail whose text matched none of the typed forms (kept as written).
struct Text {
  std::string_view text;
};

// The one text an op always carries: "unlock()" on a release invoke, "process killed" on a
// crash, "process restarted", "resumed".
struct StockText {};

// An acquisition's parameters as Redisson's API took them (invoke acquire / acquire_read):
// "lock(no lease)", "tryLock(wait=20000ms, lease=5000ms)", "tryLock(wait=0ms, no lease, permits=1)".
struct AcquireCall {
  enum class Mode : uint8_t { kLock, kTryLock };
  Mode mode = Mode::kTryLock;
  int64_t wait_us = 0;     // tryLock only.
  int64_t lease_us = -1;   // <= 0: none given (the watchdog renews).
  int64_t permits = -1;    // Semaphores: the permits asked for; -1: not written.
};

// A command's or script's reply (exec). The simulator hands the Reply itself, rendered only if
// somebody writes it; an event read from a file has only the rendered text.
struct ReplyDetail {
  const Reply* reply = nullptr;
};
// What a history keeps of a reply's text: its first this many bytes, then "... (cut at N
// bytes)" (Reply::AppendDebug). Lock scripts answer a few bytes; a script that answers
// megabytes, or a million elements, would otherwise write them into every exec event.
constexpr size_t kReplyTextMaxBytes = 4096;

// A lease event's detail: the key's owner fields ("<uuid>:<thread+1>", a read-write lock's
// "mode" ...) sorted and comma-separated, or a semaphore's or latch's count, as written.
struct Owners {
  std::string_view list;
};

// Resource enter: whether the access is a read (a read-write lock's read side).
struct Access {
  bool read = false;
};

// Resource exit with a fencing token: the resource took the write, or refused it as older
// than the newest token it had seen ("rejected: stale token 7 < 9").
struct Write {
  bool accepted = true;
  int64_t token = 0;   // Rejected only.
  int64_t newest = 0;  // Rejected only.
};

// Fault pause: "GC pause for 13337.215ms" (a [gc] pause) or "pause for 3000ms" (a scenario
// fault).
struct PauseFault {
  bool gc = false;
  int64_t duration_us = 0;
};

// Fault partition / heal: "c1,c2 | n1" (both ways) or "c1 -> n1" (one way): comma-separated
// names on each side.
struct PartitionFault {
  std::string_view side_a;
  std::string_view side_b;
  bool one_way = false;
};

// Fault clock_jump: "wall clock jumps by -40000ms".
struct ClockJumpFault {
  int64_t by_us = 0;
};

// Fault failover: "n1 down for 30000ms" (Sentinel) or "failover of n1 requested" (manual).
struct FailoverFault {
  std::string_view master;
  int64_t down_after_us = -1;  // -1: requested by the scenario.
};

// Fault promote: "replica n2 promoted to master (sentinel)".
struct PromoteFault {
  std::string_view replica;
  std::string_view why;
};

// Fault lose_replies / lose_replies_end: "replies from n1 are lost" / "... flow again".
struct LoseRepliesFault {
  std::string_view node;
};

// Fault latency / loss / duplicate and their _end (latency_end ...): a window of network
// trouble on every link with an end in `targets` (with peers: only the links between a target
// and a peer), recorded by "sim" when it opens and when it closes, with the same text:
// "extra=200ms targets=c1,c2 peers=n1" (latency), "rate=0.25 targets=n1" (loss, duplicate).
struct NetworkFault {
  int64_t extra_us = 0;      // latency: the delay added to each message.
  double rate = 0;           // loss, duplicate: the probability per message, 0 to 1.
  std::string_view targets;  // Comma-separated names.
  std::string_view peers;    // Comma-separated names; empty: every link of the targets.
};

// Note run: "end_us=60000000 seed=1 scenario=contention-10".
struct RunNote {
  int64_t end_us = 0;
  uint64_t seed = 0;
  std::string_view scenario;
};

// Note protocol: "kind=rlock version=v3.13.6 fencing=off permits=1 nodes=1
// fair_wait_timeout=300000ms".
struct ProtocolNote {
  std::string_view kind;
  std::string_view version;
  bool fencing = false;
  int64_t permits = 1;
  int nodes = -1;                     // -1: not written.
  int64_t fair_wait_timeout_us = -1;  // -1: not written.
  // A client program's declarations (the client kind; "": not written): how its key names a
  // holder ("string-token", "hash-fields") and what its unlock answers ("compare-and-delete",
  // "redisson").
  std::string_view layout;
  std::string_view unlock;
  // "majority" or "all": the lock is the key on every master, held with a majority of them
  // (Redlock) or all; "": one lock.
  std::string_view quorum;
  // "process": a holder's value or field is its process's uuid, one for all its threads;
  // "": its thread's "<uuid>:<thread + 1>".
  std::string_view owner;
};

// Note cluster: "n1=0-5460 n2=5461-10922 n3=10923-16383 lock_slot=3300".
struct ClusterNote {
  std::string_view slots;  // "n1=0-5460 n2=5461-10922 ..."
  int64_t lock_slot = 0;
};

// Note client: "uuid=<uuid>": a client process (re)started with this Redisson id.
struct ClientNote {
  std::string_view uuid;
};

// Note role: "role=await threads=3". A semaphore's clients may run one of its permit-changing
// operations instead of acquiring ("role=add_permits threads=1").
struct RoleNote {
  enum class Role : uint8_t {
    kWorker, kAwait, kCountDown, kAddPermits, kReducePermits, kTrySetPermits, kDrainPermits
  };
  Role role = Role::kWorker;
  int threads = 1;
};

// Note done: "ops_per_thread=5": a counting-down thread finished its operations.
struct DoneNote {
  int64_t ops_per_thread = 0;
};

// Note rediscover: "clients now send to n2".
struct RediscoverNote {
  std::string_view node;
};

// Note holder_value: "value=<v>": the value the note's thread writes as its holder from now on.
struct HolderNote {
  std::string_view value;
};

using Detail = std::variant<NoDetail, Text, StockText, AcquireCall, ReplyDetail, Owners, Access,
                            Write, PauseFault, PartitionFault, ClockJumpFault, FailoverFault,
                            PromoteFault, LoseRepliesFault, NetworkFault, RunNote, ProtocolNote,
                            ClusterNote, ClientNote, RoleNote, DoneNote, RediscoverNote,
                            HolderNote>;

// --- the event -------------------------------------------------------------------------------

struct Event {
  uint64_t seq = 0;           // 0, 1, 2 ... in append order (the recorder assigns it).
  int64_t t_us = 0;           // True time.
  EventType type = EventType::kNote;
  int thread = -1;            // Client thread index (of peer, for exec), or -1.
  Name process = names::kNone;  // "c1", "n2", "sim"
  Name op = names::kNone;       // See the vocabulary above.
  Name lock = names::kNone;     // The lock (key) concerned, if any.
  Name peer = names::kNone;     // The other end: the node of an op, the client of an exec.
  int64_t local_ms = 0;       // The process's own wall clock (ms) at the event.
  bool has_value = false;
  int64_t value = 0;          // A number: fencing token, PTTL, hold count, request id ...
  Detail detail;
  // The detail's text as a file had it (empty for a driver's own events): written back as is.
  std::string_view source;
};

// A reader of events: the facts pass, a checker, the file writer, the in-memory history.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void OnEvent(const Event& e) = 0;
};

}  // namespace lockstep::history

#endif  // LOCKSTEP_HISTORY_EVENT_H_
