// For tests of every layer that reads histories: hand-written histories, event by event, in
// time order, with the conventions the simulator follows (client notes with uuids, a run note,
// lease events listing owner fields "<uuid>:<thread+1>").
#ifndef LOCKSTEP_HISTORY_TESTING_H_
#define LOCKSTEP_HISTORY_TESTING_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "history/history.h"

namespace lockstep::history::testing {

inline constexpr int64_t operator""_ms(unsigned long long v) { return static_cast<int64_t>(v) * 1000; }
inline constexpr int64_t operator""_s(unsigned long long v) { return static_cast<int64_t>(v) * 1'000'000; }

// Appends events the way the simulator writes them. Threads are named "c1.t0".
class Recorder {
 public:
  explicit Recorder(int64_t end_us = 60_s, int64_t lease_default_us = 30_s) {
    Note("sim", "run", "end_us=" + std::to_string(end_us));
    TextEvent e;
    e.type = EventType::kNote;
    e.process = "sim";
    e.op = "lease_default";
    e.has_value = true;
    e.value = lease_default_us;
    history_.Append(e);
  }

  // A client note; a restarted client announces a new uuid later in the run.
  void Client(const std::string& process, int64_t t = 0, const std::string& uuid = "") {
    Note(process, "client", "uuid=" + (uuid.empty() ? Uuid(process) : uuid), t);
  }

  uint64_t Invoke(int64_t t, const std::string& thread, const std::string& op,
                  const std::string& detail = "", std::optional<int64_t> value = std::nullopt) {
    return Op(t, EventType::kInvoke, thread, op, detail, value);
  }
  uint64_t Ok(int64_t t, const std::string& thread, const std::string& op,
              std::optional<int64_t> value = std::nullopt) {
    return Op(t, EventType::kOk, thread, op, "", value);
  }
  uint64_t Fail(int64_t t, const std::string& thread, const std::string& op,
                const std::string& detail = "") {
    return Op(t, EventType::kFail, thread, op, detail, std::nullopt);
  }
  uint64_t Info(int64_t t, const std::string& thread, const std::string& op) {
    return Op(t, EventType::kInfo, thread, op, "RedisTimeoutException", std::nullopt);
  }

  uint64_t Enter(int64_t t, const std::string& thread, std::optional<int64_t> token = std::nullopt) {
    return Op(t, EventType::kResource, thread, "enter", "", token);
  }
  uint64_t Exit(int64_t t, const std::string& thread) {
    return Op(t, EventType::kResource, thread, "exit", "", std::nullopt);
  }

  // owners: threads ("c1.t0,c2.t0"), written as their owner fields.
  uint64_t Lease(int64_t t, const std::string& node, const std::string& op,
                 const std::string& owners) {
    TextEvent e = At(t, EventType::kLease, node, op);
    e.lock = "lock";
    std::string fields;
    size_t start = 0;
    while (start < owners.size()) {
      const size_t comma = std::min(owners.find(',', start), owners.size());
      fields += (fields.empty() ? "" : ",") + Owner(owners.substr(start, comma - start));
      start = comma + 1;
    }
    e.detail = fields;
    return history_.Append(e).seq;
  }

  // A lease event with owner fields written out ("uuid-c1:1").
  uint64_t LeaseFields(int64_t t, const std::string& node, const std::string& op,
                       const std::string& fields) {
    TextEvent e = At(t, EventType::kLease, node, op);
    e.lock = "lock";
    e.detail = fields;
    return history_.Append(e).seq;
  }

  uint64_t Fault(int64_t t, const std::string& target, const std::string& op,
                 const std::string& detail = "") {
    TextEvent e = At(t, EventType::kFault, target, op);
    e.detail = detail;
    return history_.Append(e).seq;
  }

  // A command or script that ran on a node for a client thread; `request` is the request id
  // the simulator writes as the exec's value (the same id twice: a duplicated delivery).
  uint64_t Exec(int64_t t, const std::string& node, const std::string& thread,
                const std::string& label, const std::string& reply,
                std::optional<int64_t> request = std::nullopt) {
    TextEvent e = At(t, EventType::kExec, node, label);
    e.peer = thread.substr(0, thread.find('.'));
    e.thread = std::stoi(thread.substr(thread.find(".t") + 2));
    e.lock = "lock";
    e.detail = reply;
    if (request) {
      e.has_value = true;
      e.value = *request;
    }
    return history_.Append(e).seq;
  }

  // The protocol note the simulator writes at the start ("kind=fairlock ...").
  void Protocol(const std::string& detail) { Note("sim", "protocol", detail); }

  // A read access (the read side of a read-write lock).
  uint64_t EnterRead(int64_t t, const std::string& thread) {
    return Op(t, EventType::kResource, thread, "enter", "read", std::nullopt);
  }
  // The write at the end of a fenced critical section: detail "accepted" or "rejected: ...".
  uint64_t Write(int64_t t, const std::string& thread, int64_t token, const std::string& detail) {
    return Op(t, EventType::kResource, thread, "exit", detail, token);
  }
  // An exec that names its client but not the thread (as the simulator writes them).
  uint64_t ExecNoThread(int64_t t, const std::string& node, const std::string& client,
                        const std::string& label, const std::string& reply) {
    TextEvent e = At(t, EventType::kExec, node, label);
    e.peer = client;
    e.lock = "lock";
    e.detail = reply;
    return history_.Append(e).seq;
  }

  // A client's role note, at t = 0 as the simulator writes it ("role=count_down threads=1").
  void Role(const std::string& process, const std::string& role, int threads = 1) {
    Note(process, "role", "role=" + role + " threads=" + std::to_string(threads));
  }
  // A client program's thread announcing the value its acquisitions write from now on.
  uint64_t HolderValue(int64_t t, const std::string& thread, const std::string& value) {
    return Op(t, EventType::kNote, thread, "holder_value", "value=" + value, std::nullopt);
  }
  // A counting-down thread that did its ops_per_thread.
  uint64_t Done(int64_t t, const std::string& thread) {
    return Op(t, EventType::kNote, thread, "done", "ops_per_thread=1", std::nullopt);
  }

  const History& history() const { return history_; }

  static std::string Uuid(const std::string& process) { return "uuid-" + process; }
  static std::string Owner(const std::string& thread) {
    const size_t dot = thread.find(".t");
    return Uuid(thread.substr(0, dot)) + ":" + std::to_string(std::stoi(thread.substr(dot + 2)) + 1);
  }

 private:
  TextEvent At(int64_t t, EventType type, const std::string& process, const std::string& op) {
    TextEvent e;
    e.t_us = t;
    e.type = type;
    e.process = process;
    e.op = op;
    return e;
  }
  void Note(const std::string& process, const std::string& op, const std::string& detail,
            int64_t t = 0) {
    TextEvent e = At(t, EventType::kNote, process, op);
    e.detail = detail;
    history_.Append(e);
  }
  uint64_t Op(int64_t t, EventType type, const std::string& thread, const std::string& op,
              const std::string& detail, std::optional<int64_t> value) {
    const size_t dot = thread.find(".t");
    TextEvent e = At(t, type, thread.substr(0, dot), op);
    e.thread = std::stoi(thread.substr(dot + 2));
    e.lock = "lock";
    e.detail = detail;
    if (value) {
      e.has_value = true;
      e.value = *value;
    }
    return history_.Append(e).seq;
  }

  History history_;
};

}  // namespace lockstep::history::testing

#endif  // LOCKSTEP_HISTORY_TESTING_H_
