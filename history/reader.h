// Reads a history file back, event by event, into any sink: the same path the events of a run
// take, so `lockstep report` and every reader of a recorded history (the facts pass, the
// checkers, the reports) work on a file exactly as on a live run, in bounded memory.
#ifndef LOCKSTEP_HISTORY_READER_H_
#define LOCKSTEP_HISTORY_READER_H_

#include <cstddef>
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
  // The binary form (history/binary.h): hash every event's JSON line as it is read and hold
  // each checkpoint to it, refusing a file whose recorded hash is not its events' (without it,
  // the hash is taken from the checkpoints). JSON Lines are always hashed as they are read.
  bool verify_hash = false;
};

// What a history file may hold. A reader trusts no file: these bound the bytes it reads and
// what the readers downstream (the facts pass keeps tables per process, per client thread and
// per lock) build from it. Runs stay far inside them: the library's lines are under 400 bytes,
// its histories name 2 locks and a dozen processes.
inline constexpr size_t kMaxHistoryLineBytes = 1 << 20;
inline constexpr uint64_t kMaxHistoryBytes = uint64_t{64} << 30;  // Uncompressed.
inline constexpr size_t kMaxHistoryProcesses = 4096;
inline constexpr size_t kMaxHistoryLocks = 64;
// Distinct client threads ((process, thread) pairs of invoke, ok, fail, info and resource
// events) times distinct locks: the facts pass keeps a hold state for each.
inline constexpr uint64_t kMaxHistoryThreadLocks = uint64_t{1} << 18;

// Streams a history, in any of its forms (binary, JSON Lines gzip-compressed or not: the file's
// first bytes decide), into `sink`,
// interning names into *names. Returns false with *error naming the file (and the line, when
// a line is at fault) when the file is not a regular file, is empty, is too large, or has a
// malformed line: a line too long, a key missing or given twice, a number out of range
// (history/jsonl.h), "seq" not the event's index in the file (numbered from 0, no gaps), time
// going backwards, more processes, locks or threads than the bounds above. The sink has then
// received every event before that line.
bool ReadHistoryFile(const std::string& path, NameTable* names, EventSink* sink, ReadStats* stats,
                     std::string* error, const ReadOptions& options = {});

// The form of the history file at `path` by its first bytes: "binary", "jsonl.gz" or "jsonl"
// (also for a file that cannot be read: the reader says why).
const char* HistoryFileForm(const std::string& path);

}  // namespace lockstep::history

#endif  // LOCKSTEP_HISTORY_READER_H_
