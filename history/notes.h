// The one encoder and the one decoder of event details.
//
// A history file writes each event's detail as text ("tryLock(wait=20000ms, no lease)",
// "GC pause for 13337.215ms", "kind=rlock version=v3.13.6 ..."). This file is the only code
// that turns a typed detail (history/event.h) into that text, and the only code that reads such
// text back; everything else asks it typed questions (how long may this acquire wait? is this
// reply nil?). A text that matches no typed form is kept as Text, and answered as the checkers
// have always read free text, so hand-written histories keep their meaning.
#ifndef LOCKSTEP_HISTORY_NOTES_H_
#define LOCKSTEP_HISTORY_NOTES_H_

#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "history/event.h"

namespace lockstep::history {

inline constexpr int64_t kForeverUs = std::numeric_limits<int64_t>::max();

// "500ms", "13337.215ms", "-40000ms": a duration as the history writes it.
void AppendMs(std::string* out, int64_t us);
std::string FormatMs(int64_t us);

// Appends the detail's text as a history file has it: the source text for an event read from
// a file, else the typed detail encoded. Nothing for NoDetail.
void AppendDetailText(const Event& e, std::string* out);
// The same as a string.
std::string DetailText(const Event& e);

// Decodes a detail text for an event of this type and op. The typed fields refer into `text`.
Detail DecodeDetail(EventType type, Name op, std::string_view text);

// --- questions the readers ask ----------------------------------------------------------------

// Acquire invokes: how long the operation may wait. tryLock(wait=...) waits that long (a
// negative wait is Redisson's "forever"), lock() waits forever, anything else does not wait.
int64_t AcquireWaitUs(const Event& invoke);

// Semaphore acquire and release invokes: the permits taken or given back ("permits=<n>" in the
// detail, else the event's value, else 1).
int64_t PermitsOf(const Event& invoke);

// A RedLock/MultiLock acquire ok's "acquired on k of n nodes": n, or 0.
int NodesInCompletion(const Event& ok);

// Exec replies, as the history writes them: "(nil)", "1", "[0, 1]", "\"3\"", "-ERR ...".
// `scratch` holds the text when it has to be rendered.
std::string_view ReplyText(const Event& exec, std::string* scratch);
bool IsNilReply(std::string_view text);                     // "(nil)", also "nil"
std::optional<int64_t> IntegerReply(std::string_view text);  // "12" (spaces trimmed)
// A count as getCount returns it: an integer, or a bulk string holding one ("\"3\"").
std::optional<int64_t> CountReply(std::string_view text);

// Lease events: calls f(field) for each comma-separated owner field (trimmed of spaces).
template <class F>
void ForEachOwnerField(std::string_view list, F f);
// A semaphore's or latch's count written as a lease detail ("3"), if it is one.
std::optional<int64_t> CountOf(std::string_view list);
// One owner field as a lock hash names its holder: "<uuid>:<thread+1>", perhaps with a suffix
// (a read-write lock's "<uuid>:<thread+1>:write"). nullopt for a field without a ':' (a hash's
// other fields, such as a read-write lock's "mode"). `thread_number` is nullopt when the part
// after the uuid is not an integer.
struct OwnerField {
  std::string_view uuid;
  std::optional<int64_t> thread_number;  // Redisson counts threads from 1.
  std::string_view suffix;               // ":write", or empty.
};
std::optional<OwnerField> AsOwnerField(std::string_view field);

// Resource exits: whether the resource judged the write by its token ("accepted ...",
// "rejected ..."), and whether it took it.
bool IsJudgedWrite(const Event& exit);
bool IsAcceptedWrite(const Event& exit);
// Resource enters: a read access.
bool IsReadAccess(const Event& enter);

// Notes, decoded whatever their source. Absent fields keep their defaults.
std::optional<RunNote> AsRunNote(const Event& note);
std::optional<ProtocolNote> AsProtocolNote(const Event& note);
std::optional<ClientNote> AsClientNote(const Event& note);
// A role note whose role is not one of worker, await, count_down, add_permits, reduce_permits,
// try_set_permits, drain_permits yields nullopt.
std::optional<RoleNote> AsRoleNote(const Event& note);
std::optional<HolderNote> AsHolderNote(const Event& note);
// A role as the role note writes it: "worker", "await", "add_permits" ...
const char* RoleName(RoleNote::Role role);

// Partition faults: calls f(name) for each process named on either side, in order, once each.
template <class F>
void ForEachPartitionName(const PartitionFault& p, F f);
// Network windows (latency, loss, duplicate): the same for the targets, then the peers.
template <class F>
void ForEachNetworkFaultName(const NetworkFault& n, F f);

// "-12", "0", "42" as an int64 (no sign other than '-', no spaces); nullopt on anything else
// or on overflow.
std::optional<int64_t> ParseInt(std::string_view s);
std::string_view Trim(std::string_view s);

// --- template definitions ---------------------------------------------------------------------

template <class F>
void ForEachOwnerField(std::string_view list, F f) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    f(Trim(list.substr(0, comma)));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
}

namespace internal {
// Calls f(name) for each name in the comma-separated lists, in order, once each.
template <class F>
void ForEachListedName(std::initializer_list<std::string_view> lists, F f) {
  std::string_view seen[64];
  size_t n_seen = 0;
  for (std::string_view side : lists) {
    while (!side.empty()) {
      const size_t comma = side.find(',');
      const std::string_view name = Trim(side.substr(0, comma));
      side = comma == std::string_view::npos ? std::string_view() : side.substr(comma + 1);
      if (name.empty()) continue;
      bool dup = false;
      for (size_t i = 0; i < n_seen; ++i) dup = dup || seen[i] == name;
      if (dup) continue;
      if (n_seen < std::size(seen)) seen[n_seen++] = name;
      f(name);
    }
  }
}
}  // namespace internal

template <class F>
void ForEachPartitionName(const PartitionFault& p, F f) {
  internal::ForEachListedName({p.side_a, p.side_b}, f);
}

template <class F>
void ForEachNetworkFaultName(const NetworkFault& n, F f) {
  internal::ForEachListedName({n.targets, n.peers}, f);
}

}  // namespace lockstep::history

#endif  // LOCKSTEP_HISTORY_NOTES_H_
