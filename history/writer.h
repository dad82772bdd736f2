// The History's file writer: a sink that writes each event's JSON line as it comes (plain or
// gzip-compressed), through a buffer, so that a run never holds its history in memory and an
// interrupted run leaves every event written so far as a readable prefix of whole lines.
//
// The hash (history/jsonl.h) is taken over the JSON Lines text as written before compression,
// so a run's hash is the same whichever of jsonl and jsonl.gz keeps it; the binary form's
// writer makes the same lines for the hash alone, and records it in the file's checkpoints.
//
// Hashing and writing a full buffer happen on a thread of the writer's own while the run fills
// the next buffer: FNV-1a goes a byte at a time, and on the run's thread it cost about a third
// of what the file adds to a run. The buffers reach the thread in order, so the file and the
// hash are the same as if the run's thread did it all.
#ifndef LOCKSTEP_HISTORY_WRITER_H_
#define LOCKSTEP_HISTORY_WRITER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "history/binary.h"
#include "history/event.h"
#include "history/jsonl.h"

namespace lockstep::history {

// What a run keeps of its history: nothing (fuzz cases, benchmarks), JSON Lines, JSON Lines
// compressed with zlib's gzip format, or the compact binary form (history/binary.h).
enum class HistoryFormat : uint8_t { kNone, kJsonl, kJsonlGz, kBinary };
// "none", "jsonl", "jsonl.gz", "binary"
std::optional<HistoryFormat> ParseHistoryFormat(std::string_view s);
const char* HistoryFormatName(HistoryFormat f);
// "history.jsonl", "history.jsonl.gz" or "history.bin" (kNone has no file).
const char* HistoryFileName(HistoryFormat f);

class HistoryWriter : public EventSink {
 public:
  // Opens (truncates) `path`. Null, with *error set, when it cannot be opened. kNone is not a
  // format a writer takes.
  static std::unique_ptr<HistoryWriter> Open(const std::string& path, HistoryFormat format,
                                             const NameTable* names, std::string* error);
  ~HistoryWriter() override;

  // Formats the event's line into the buffer; writes the buffer out when it is full. After a
  // write error, events are only counted (error() says what went wrong).
  void OnEvent(const Event& e) override;

  // Writes out everything buffered (whole lines; a gzip stream is flushed to a point where a
  // reader can decompress all of it). False on an I/O error.
  bool Flush();
  // Flushes and closes the file. False on an I/O error (or an earlier one).
  bool Close();

  // Closes the file and removes it: what a run does after a write error, so that no half-written
  // history is left behind. False if it could not be removed.
  bool Discard();

  const std::string& path() const { return path_; }
  // Read it after Flush() or Close() (the writing thread sets it).
  const std::string& error() const { return error_; }
  // Whether a write has failed (the disk is full, a file-size limit was reached): safe to ask
  // at any time, so that a run can stop at once instead of simulating on for nothing.
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  uint64_t events() const { return events_; }
  // The hash of everything written: read it after Close().
  uint64_t hash() const { return hash_; }
  uint64_t bytes() const { return bytes_; }  // JSON Lines bytes, before compression.

 private:
  struct File;
  HistoryWriter(std::string path, HistoryFormat format, const NameTable* names,
                std::unique_ptr<File> file);
  // Hands the buffer to the writing thread (after the one before it is done) and takes an
  // empty one back.
  void HandOver();
  // Waits until the writing thread has hashed and written everything handed over.
  void WaitWritten();
  // The writing thread: hashes and writes each handed-over buffer.
  void WriteLoop();
  // Hashes and writes `bytes`; sets error_ on the first write error.
  void Write(const std::string& bytes);

  std::string path_;
  HistoryFormat format_;
  JsonLineFormatter lines_;
  BinaryEncoder binary_;
  std::unique_ptr<File> file_;
  std::string buffer_;  // Being filled by OnEvent: the JSON lines.
  std::string binary_buffer_;  // The binary form's records of the same events.
  std::string detail_;  // The detail text of the event being written.
  std::string error_;   // Set by the writing thread only while it holds a buffer.
  std::atomic<bool> failed_{false};  // Set with error_, readable from any thread.
  uint64_t events_ = 0;
  uint64_t hash_;       // Advanced by the writing thread only while it holds a buffer.
  uint64_t bytes_ = 0;

  std::mutex mu_;
  std::condition_variable cv_;
  std::string handed_;   // Guarded by mu_: the buffer the writing thread hashes and writes.
  std::string handed_binary_;  // Guarded by mu_: the binary records of handed_'s events.
  uint64_t handed_events_ = 0;  // Guarded by mu_: events up to the end of handed_.
  bool pending_ = false;  // Guarded by mu_: handed_ holds a buffer not yet written.
  bool closing_ = false;  // Guarded by mu_: the thread is to end.
  std::thread thread_;
};

}  // namespace lockstep::history

#endif  // LOCKSTEP_HISTORY_WRITER_H_
