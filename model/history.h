// The History: everything that happened in one run, as a flat list of events in the order
// they happened. Drivers append to it; checkers and reports only read it (so they work the
// same on a history recorded against live Redis, or on one loaded from a file).
//
// On disk it is JSON Lines, one event per line, keys in a fixed order and defaults omitted, so
// the same run always gives the same bytes; HistoryHash() is a stable FNV-1a 64 over those
// bytes.
//
// Vocabulary (Jepsen's, where it fits):
//   invoke / ok / fail / info   a client operation started, succeeded, failed for sure, or ended
//                               with an unknown outcome (a timeout: it may have happened)
//   exec      a command or script ran on a node (process = node, peer = client, thread = the
//             client thread whose operation sent it, -1 for the process's own commands)
//   message   a pub/sub message reached a client
//   fault     a fault started or ended (op = partition, heal, crash, restart, pause, resume,
//             clock_jump, failover, promote, lose_replies ...)
//   resource  a thread entered or left the protected resource (op = enter/exit)
//   lease     a lock key's state changed on a node (op = expired when its TTL ran out, detail
//             = owner fields)
#ifndef LOCKSTEP_MODEL_HISTORY_H_
#define LOCKSTEP_MODEL_HISTORY_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep {

struct Event {
  enum class Type : uint8_t {
    kInvoke, kOk, kFail, kInfo, kExec, kMessage, kFault, kResource, kLease, kNote
  };
  uint64_t seq = 0;          // 0, 1, 2 ... in append order.
  int64_t t_us = 0;          // True time.
  Type type = Type::kNote;
  std::string process;       // "c1", "n2", "sim"
  int thread = -1;           // Client thread index (of peer, for exec), or -1.
  std::string op;            // See the vocabulary above.
  std::string lock;          // The lock (key) concerned, if any.
  std::string peer;          // The other end: the node of an op, the client of an exec.
  int64_t local_ms = 0;      // The process's own wall clock (ms) at the event.
  bool has_value = false;
  int64_t value = 0;         // A number: fencing token, PTTL, hold count, request id ...
  std::string detail;        // Text: reply, error, argv, fault description.
};

const char* TypeName(Event::Type t);
std::optional<Event::Type> ParseType(std::string_view s);

// One JSON line (without the newline) for an event.
std::string ToJsonLine(const Event& e);
// Parses a line written by ToJsonLine. On failure returns nullopt and sets *error.
std::optional<Event> ParseJsonLine(std::string_view line, std::string* error);

class History {
 public:
  // Appends an event, assigning its seq. Events must be appended in non-decreasing t_us.
  const Event& Append(Event e);
  const std::vector<Event>& events() const { return events_; }
  size_t size() const { return events_.size(); }

  // FNV-1a 64 over every event's JSON line plus '\n', i.e. over the file's bytes.
  uint64_t Hash() const { return hash_; }
  std::string HashHex() const;

  // Writes the history as JSON Lines. Returns false (and sets *error) on I/O failure.
  bool WriteFile(const std::string& path, std::string* error) const;
  // Reads a JSON Lines history; errors name the line.
  static std::optional<History> ReadFile(const std::string& path, std::string* error);

 private:
  std::vector<Event> events_;
  uint64_t hash_ = 0xcbf29ce484222325ull;
};

}  // namespace lockstep

#endif  // LOCKSTEP_MODEL_HISTORY_H_
