// The History: everything that happened in one run, as a stream of typed events in the order
// they happened (history/event.h). It is the one contract between the drivers, which append
// to it, and the readers (the facts pass, the checkers, the reports, the file writer), which
// only receive it.
//
// A run's events go through a Recorder: it gives each event its seq, checks that time never
// goes backwards, and hands the event to every sink, once, before the driver goes on. Nothing
// in that path keeps the whole run; a sink keeps what it needs. The in-memory History below is
// one such sink, for tests and small tools that want every event at hand.
#ifndef LOCKSTEP_HISTORY_HISTORY_H_
#define LOCKSTEP_HISTORY_HISTORY_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "history/event.h"
#include "history/names.h"

namespace lockstep::history {

class Recorder {
 public:
  explicit Recorder(std::shared_ptr<NameTable> names = std::make_shared<NameTable>());

  NameTable& names() { return *names_; }
  const std::shared_ptr<NameTable>& shared_names() const { return names_; }

  // Sinks receive events in the order they were added. They must outlive the recorder's use.
  void AddSink(EventSink* sink) { sinks_.push_back(sink); }

  // Gives the event the next seq and hands it to every sink. REQUIRES: e.t_us is not before
  // the previous event's.
  void Append(Event& e);

  uint64_t count() const { return next_seq_; }
  int64_t last_t_us() const { return last_t_us_; }

 private:
  std::shared_ptr<NameTable> names_;
  std::vector<EventSink*> sinks_;
  uint64_t next_seq_ = 0;
  int64_t last_t_us_ = 0;
};

// An event written with its names and detail as text, as a person (or a test) writes one.
struct TextEvent {
  int64_t t_us = 0;
  EventType type = EventType::kNote;
  std::string process;
  int thread = -1;
  std::string op;
  std::string lock;
  std::string peer;
  int64_t local_ms = 0;
  bool has_value = false;
  int64_t value = 0;
  std::string detail;
};

// Every event of a run in memory, each with its texts copied into storage the history owns.
// For tests and small tools: a long run streams through the Recorder instead.
class History : public EventSink {
 public:
  explicit History(std::shared_ptr<NameTable> names = std::make_shared<NameTable>());
  History(History&&) = default;
  History& operator=(History&&) = default;

  const NameTable& names() const { return *names_; }
  NameTable& names() { return *names_; }
  const std::shared_ptr<NameTable>& shared_names() const { return names_; }

  // Appends a copy of the event with the next seq. REQUIRES: e's names are ids of names(), and
  // e.t_us is not before the previous event's.
  const Event& Append(const Event& e);
  // Appends an event written as text: its names are interned and its detail decoded.
  const Event& Append(const TextEvent& e);
  // EventSink: keeps a copy (the seq is the history's own, as with Append).
  void OnEvent(const Event& e) override { Append(e); }

  const std::vector<Event>& events() const { return events_; }
  size_t size() const { return events_.size(); }

  // FNV-1a 64 over the events' JSON lines, i.e. over the bytes WriteFile writes.
  uint64_t Hash() const { return hash_; }
  std::string HashHex() const;

  // Writes the history as JSON Lines. Returns false (and sets *error) on I/O failure.
  bool WriteFile(const std::string& path, std::string* error) const;
  // Reads a JSON Lines history (plain or gzip); errors name the line.
  static std::optional<History> ReadFile(const std::string& path, std::string* error);

  // The event's fields as text, for messages and tests.
  std::string Str(Name name) const { return std::string(names_->Str(name)); }
  std::string DetailOf(const Event& e) const;

 private:
  std::string_view Keep(std::string_view s);

  std::shared_ptr<NameTable> names_;
  std::vector<Event> events_;
  std::deque<std::string> texts_;  // Detail texts; a deque never moves them.
  uint64_t hash_;
  std::string line_;
};

}  // namespace lockstep::history

#endif  // LOCKSTEP_HISTORY_HISTORY_H_
