// Reads a history file back, event by event, into any sink: the same path the events of a run
// take, so `lockstep report` and every reader of a recorded history (the facts pass, the
// checkers, the reports) work on a file exactly as on a live run, in bounded memory.
#ifndef LOCKSTEP_HISTORY_READER_H_
#define LOCKSTEP_HISTORY_READER_H_

#include <cstdint>
#include <string>

#include "history/event.h"

namespace lockstep::history {

struct ReadStats {
  uint64_t events = 0;
  uint64_t hash = 0;        // Over the lines read (history/jsonl.h).
  int64_t last_t_us = 0;
  // The file ended inside a line (a run killed while writing): that line was left out.
  bool truncated = false;
};

struct ReadOptions {
  uint64_t max_events = 0;  // Stop after this many events (0: read them all).
};

// Streams a JSON Lines history (gzip-compressed or not: the gzip magic decides) into `sink`,
// interning names into *names. Each event's seq is its index in the file. Returns false with
// *error naming the file and line on a malformed line or time going backwards; the sink has
// then received every event before that line.
bool ReadHistoryFile(const std::string& path, NameTable* names, EventSink* sink, ReadStats* stats,
                     std::string* error, const ReadOptions& options = {});

}  // namespace lockstep::history

#endif  // LOCKSTEP_HISTORY_READER_H_
