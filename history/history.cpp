#include "history/history.h"

#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "base/write_file.h"
#include "history/jsonl.h"
#include "history/notes.h"
#include "history/reader.h"

namespace lockstep::history {

Recorder::Recorder(std::shared_ptr<NameTable> names) : names_(std::move(names)) {}

void Recorder::Append(Event& e) {
  assert(e.t_us >= last_t_us_);
  e.seq = next_seq_++;
  last_t_us_ = e.t_us;
  for (EventSink* sink : sinks_) sink->OnEvent(e);
}

History::History(std::shared_ptr<NameTable> names)
    : names_(std::move(names)), hash_(kFnvOffset) {}

std::string_view History::Keep(std::string_view s) {
  if (s.empty()) return {};
  return texts_.emplace_back(s);
}

const Event& History::Append(const Event& e) {
  assert(events_.empty() || e.t_us >= events_.back().t_us);
  Event copy = e;
  copy.seq = events_.size();
  // The detail's text is rendered once and kept; the typed detail is decoded from the kept
  // text, so that nothing in the copy refers to memory the caller owns.
  line_.clear();
  AppendDetailText(e, &line_);
  copy.source = Keep(line_);
  copy.detail = DecodeDetail(copy.type, copy.op, copy.source);
  line_.clear();
  AppendJsonLine(copy, *names_, &line_);
  line_.push_back('\n');
  hash_ = FnvAppend(hash_, line_);
  events_.push_back(copy);
  return events_.back();
}

const Event& History::Append(const TextEvent& t) {
  Event e;
  e.t_us = t.t_us;
  e.type = t.type;
  e.process = names_->Intern(t.process);
  e.thread = t.thread;
  e.op = names_->Intern(t.op);
  e.lock = names_->Intern(t.lock);
  e.peer = names_->Intern(t.peer);
  e.local_ms = t.local_ms;
  e.has_value = t.has_value;
  e.value = t.value;
  e.source = t.detail;
  e.detail = DecodeDetail(e.type, e.op, t.detail);
  return Append(e);
}

std::string History::HashHex() const { return history::HashHex(hash_); }

std::string History::DetailOf(const Event& e) const { return DetailText(e); }

bool History::WriteFile(const std::string& path, std::string* error) const {
  // A failure never leaves half a history behind under the real name.
  return WriteFileAtomically(
      path,
      [&](std::ostream& out) {
        std::string line;
        for (const Event& e : events_) {
          line.clear();
          AppendJsonLine(e, *names_, &line);
          line.push_back('\n');
          out.write(line.data(), static_cast<std::streamsize>(line.size()));
        }
      },
      error);
}

std::optional<History> History::ReadFile(const std::string& path, std::string* error) {
  History h;
  ReadStats stats;
  if (!ReadHistoryFile(path, &h.names(), &h, &stats, error)) return std::nullopt;
  return h;
}

}  // namespace lockstep::history
