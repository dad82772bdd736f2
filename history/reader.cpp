#include "history/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "base/read_file.h"
#include "history/binary.h"
#include "history/jsonl.h"

namespace lockstep::history {

namespace {

// Counts what the events name, against the bounds in reader.h.
class Census {
 public:
  // Empty when the event stays inside the bounds, else what is exceeded.
  std::string Add(const Event& e) {
    if (e.process != names::kNone && Mark(&process_seen_, e.process)) {
      if (++processes_ > kMaxHistoryProcesses) {
        return "more than " + std::to_string(kMaxHistoryProcesses) + " processes";
      }
    }
    bool grew = false;
    if (e.lock != names::kNone && Mark(&lock_seen_, e.lock)) {
      if (++locks_ > kMaxHistoryLocks) {
        return "more than " + std::to_string(kMaxHistoryLocks) + " locks";
      }
      grew = true;
    }
    // Client threads, as the facts pass keeps them: of the client's own events (an exec's
    // thread is its client's, on a node).
    const bool client_event = e.type == EventType::kInvoke || e.type == EventType::kOk ||
                              e.type == EventType::kFail || e.type == EventType::kInfo ||
                              e.type == EventType::kResource;
    if (client_event && e.thread >= 0) {
      if (threads_seen_.size() <= e.process) threads_seen_.resize(e.process + 1);
      std::vector<bool>& seen = threads_seen_[e.process];
      if (seen.size() <= static_cast<size_t>(e.thread)) seen.resize(e.thread + 1);
      if (!seen[e.thread]) {
        seen[e.thread] = true;
        ++threads_;
        grew = true;
      }
    }
    if (grew && threads_ * std::max<uint64_t>(locks_, 1) > kMaxHistoryThreadLocks) {
      return std::to_string(threads_) + " threads and " + std::to_string(locks_) +
             " locks: more than " + std::to_string(kMaxHistoryThreadLocks) +
             " (thread, lock) pairs";
    }
    return {};
  }

 private:
  static bool Mark(std::vector<bool>* seen, Name name) {
    if (seen->size() <= name) seen->resize(name + 1);
    if ((*seen)[name]) return false;
    (*seen)[name] = true;
    return true;
  }

  std::vector<bool> process_seen_;  // By name.
  std::vector<bool> lock_seen_;     // By name.
  std::vector<std::vector<bool>> threads_seen_;  // By process name, then thread index.
  uint64_t processes_ = 0;
  uint64_t locks_ = 0;
  uint64_t threads_ = 0;  // (process, thread) pairs.
};

// What every event read must satisfy besides its own fields, in either form: time never goes
// back, the names stay inside the bounds, one protocol note before any event that is not a note.
class Rules {
 public:
  // Empty when `e` (the next event, at `unit` `index`: line 12, event 11) may follow the events
  // before it, else why not.
  std::string Check(const Event& e, uint64_t events_before, int64_t last_t_us, const char* unit,
                    uint64_t index) {
    if (events_before > 0 && e.t_us < last_t_us) return "time goes backwards";
    if (const std::string over = census_.Add(e); !over.empty()) {
      return over + ", more than a history may name";
    }
    // The protocol note says how every later event reads (which checkers apply, what a reply
    // means): once, before anything that is not a note, as every driver writes it.
    if (e.type == EventType::kNote && e.op == names::kProtocol) {
      if (saw_protocol_) return "a second protocol note (a history has one, at its start)";
      if (!first_non_note_.empty()) {
        return "a protocol note after the run's first event that is not a note (" +
               first_non_note_ + "); it must come before them";
      }
      saw_protocol_ = true;
    } else if (e.type != EventType::kNote && first_non_note_.empty()) {
      first_non_note_ = std::string(unit) + " " + std::to_string(index);
    }
    return {};
  }

 private:
  Census census_;
  bool saw_protocol_ = false;
  std::string first_non_note_;  // Where the first event that is not a note was.
};

// Reads a binary history (history/binary.h) from `fd`, positioned after its magic.
bool ReadBinaryHistory(int fd, const std::string& path, NameTable* names, EventSink* sink,
                       ReadStats* stats, std::string* error, const ReadOptions& options);

}  // namespace

namespace {
// The form of the history open as `fd`, by its first bytes.
const char* FormOf(int fd) {
  char head[kBinaryMagic.size()] = {};
  const ssize_t n = pread(fd, head, sizeof(head), 0);
  if (n == static_cast<ssize_t>(sizeof(head)) && std::string_view(head, sizeof(head)) == kBinaryMagic) {
    return "binary";
  }
  if (n >= 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b) {
    return "jsonl.gz";
  }
  return "jsonl";
}
}  // namespace

const char* HistoryFileForm(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "jsonl";
  const char* form = FormOf(fd);
  close(fd);
  return form;
}

bool ReadHistoryFile(const std::string& path, NameTable* names, EventSink* sink, ReadStats* stats,
                     std::string* error, const ReadOptions& options) {
  *stats = ReadStats{};
  stats->hash = kFnvOffset;
  // Regular files only: a directory, a device (/dev/zero) or a pipe is no history.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *error = "cannot read " + path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *error = "cannot read " + path + ": " +
             (S_ISREG(st.st_mode) ? std::string(std::strerror(errno)) : std::string(FileKindOf(st.st_mode)) +
                                                                            ", not a history file");
    close(fd);
    return false;
  }
  if (st.st_size == 0) {
    *error = path + ": empty file, not a history (a run's history has at least its notes)";
    close(fd);
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxHistoryBytes) {
    *error = path + ": " + std::to_string(st.st_size) + " bytes, more than a history may have (" +
             std::to_string(kMaxHistoryBytes) + ")";
    close(fd);
    return false;
  }
  // The binary form says so in its first bytes; anything else is JSON Lines, plain or gzip.
  if (std::string_view(FormOf(fd)) == "binary") {
    const bool read = ReadBinaryHistory(fd, path, names, sink, stats, error, options);
    close(fd);
    return read;
  }
  // gzread reads a plain file as it is, so one path serves both formats.
  gzFile in = gzdopen(fd, "rb");
  if (in == nullptr) {
    *error = "cannot read " + path + ": " + std::strerror(errno ? errno : ENOMEM);
    close(fd);
    return false;
  }
  std::unique_ptr<gzFile_s, int (*)(gzFile)> closer(in, gzclose);
  gzbuffer(in, 1 << 18);
  std::string pending;  // Bytes of a line not yet complete.
  std::string chunk(1 << 20, '\0');
  std::string text;
  size_t line_no = 0;
  uint64_t bytes = 0;  // Read so far, uncompressed.
  Rules rules;
  bool ok = true;
  bool done = false;  // Read as many events as the options allow.
  const auto at_line = [&](size_t line) { return path + ":" + std::to_string(line) + ": "; };
  auto handle = [&](std::string_view line) {
    ++line_no;
    if (line.empty()) return true;
    Event e;
    std::string why;
    if (!ParseJsonLine(line, names, &text, &e, &why)) {
      *error = at_line(line_no) + why;
      return false;
    }
    if (e.seq != stats->events) {
      *error = at_line(line_no) + "\"seq\" is " + std::to_string(e.seq) + " where " +
               std::to_string(stats->events) +
               " comes next (events are numbered from 0, in order, without gaps)";
      return false;
    }
    if (const std::string why_not =
            rules.Check(e, stats->events, stats->last_t_us, "line", line_no);
        !why_not.empty()) {
      *error = at_line(line_no) + why_not;
      return false;
    }
    stats->events++;
    stats->last_t_us = e.t_us;
    stats->hash = FnvAppend(stats->hash, line);
    stats->hash = FnvAppend(stats->hash, "\n");
    sink->OnEvent(e);
    if (options.max_events > 0 && stats->events >= options.max_events) done = true;
    return true;
  };
  const auto too_long = [&] {
    *error = at_line(line_no + 1) + "line longer than " + std::to_string(kMaxHistoryLineBytes) +
             " bytes, not a history line";
    return false;
  };
  while (ok && !done) {
    const int n = gzread(in, chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) {
      int code = 0;
      const char* what = gzerror(in, &code);
      // A gzip stream cut short (a run killed while writing) ends the readable prefix.
      if (code == Z_BUF_ERROR || code == Z_DATA_ERROR) {
        stats->truncated = true;
        break;
      }
      *error = "cannot read " + path + ": " + what;
      return false;
    }
    if (n == 0) break;
    bytes += static_cast<uint64_t>(n);
    if (bytes > kMaxHistoryBytes) {
      *error = path + ": more than " + std::to_string(kMaxHistoryBytes) +
               " bytes uncompressed, more than a history may have";
      return false;
    }
    std::string_view data(chunk.data(), static_cast<size_t>(n));
    while (ok && !done && !data.empty()) {
      const size_t nl = data.find('\n');
      const size_t line_bytes = pending.size() + (nl == std::string_view::npos ? data.size() : nl);
      if (line_bytes > kMaxHistoryLineBytes) return too_long();
      if (nl == std::string_view::npos) {
        pending.append(data);
        break;
      }
      if (pending.empty()) {
        ok = handle(data.substr(0, nl));
      } else {
        pending.append(data.substr(0, nl));
        ok = handle(pending);
        pending.clear();
      }
      data.remove_prefix(nl + 1);
    }
  }
  if (!ok) return false;
  if (!done && !pending.empty()) {
    // A last line without its newline: a whole event if it parses, else a cut-off write.
    std::string saved_error = *error;
    if (!handle(pending)) {
      *error = saved_error;
      stats->truncated = true;
    }
  }
  if (stats->events == 0) {
    *error = path + ": no events, not a history (a run's history has at least its notes)";
    return false;
  }
  return true;
}

namespace {

// Reads `fd` from `offset` on in chunks, keeping the bytes of a record that continues past a
// chunk: a record is at most a name's or a detail's bytes and a few varints.
class ChunkReader {
 public:
  ChunkReader(int fd, off_t offset) : fd_(fd), offset_(offset) {}
  std::string_view data() const { return std::string_view(buf_).substr(pos_); }
  void Consume(size_t n) { pos_ += n; }
  bool eof() const { return eof_; }
  // Reads more after what is left. False with *error on a read error; at the end sets eof().
  bool More(std::string* error) {
    buf_.erase(0, pos_);
    pos_ = 0;
    const size_t have = buf_.size();
    const size_t want = std::max<size_t>(kChunk, have);  // A long record doubles the buffer.
    buf_.resize(have + want);
    ssize_t n;
    do {
      n = pread(fd_, buf_.data() + have, want, offset_);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      *error = std::strerror(errno);
      buf_.resize(have);
      return false;
    }
    buf_.resize(have + static_cast<size_t>(n));
    offset_ += n;
    if (n == 0) eof_ = true;
    return true;
  }

 private:
  static constexpr size_t kChunk = 1 << 20;
  int fd_;
  off_t offset_;
  std::string buf_;
  size_t pos_ = 0;
  bool eof_ = false;
};

// A binary history's records, one after another, from the start of the file.
class RecordReader {
 public:
  explicit RecordReader(int fd) : in_(fd, static_cast<off_t>(kBinaryMagic.size())) {}

  // kOk: the next record (as BinaryDecoder::Next gives it). kNeedMore: the file has ended;
  // *cut says whether inside a record. kError: *why says what is wrong, and io_error() whether
  // reading the file failed rather than its bytes.
  DecodeStatus Next(NameTable* names, RecordKind* kind, Event* e, uint64_t* cp_events,
                    uint64_t* cp_hash, bool* cut, std::string* why) {
    while (true) {
      size_t used = 0;
      const DecodeStatus status =
          decoder_.Next(in_.data(), names, &used, kind, e, cp_events, cp_hash, why);
      if (status == DecodeStatus::kOk) {
        in_.Consume(used);
        offset_ += used;
      }
      if (status != DecodeStatus::kNeedMore) return status;
      if (in_.eof()) {
        *cut = !in_.data().empty();
        return status;
      }
      if (in_.data().size() > kMaxHistoryLineBytes + 64) {
        *why = "a record longer than " + std::to_string(kMaxHistoryLineBytes) + " bytes";
        return DecodeStatus::kError;
      }
      if (!in_.More(why)) {
        io_error_ = true;
        return DecodeStatus::kError;
      }
    }
  }
  uint64_t offset() const { return offset_; }  // Of the next record.
  bool io_error() const { return io_error_; }

 private:
  ChunkReader in_;
  BinaryDecoder decoder_;
  uint64_t offset_ = kBinaryMagic.size();
  bool io_error_ = false;
};

bool ReadBinaryHistory(int fd, const std::string& path, NameTable* names, EventSink* sink,
                       ReadStats* stats, std::string* error, const ReadOptions& options) {
  RecordReader records(fd);
  Rules rules;
  uint64_t checkpoint_events = 0, checkpoint_hash = kFnvOffset;  // The last checkpoint's.
  uint64_t offset = records.offset();  // Of the record being read, for messages.
  const auto at = [&] {
    return path + ": event " + std::to_string(stats->events) + " (byte " + std::to_string(offset) + "): ";
  };
  bool done = false;
  uint64_t hash = kFnvOffset;  // With options.verify_hash: over the lines of the events read.
  std::string line;
  const auto hash_line = [&](const Event& e, uint64_t* h) {
    line.clear();
    AppendJsonLine(e, *names, &line);
    line.push_back('\n');
    *h = FnvAppend(*h, line);
  };
  while (!done) {
    RecordKind kind{};
    Event e;
    uint64_t cp_events = 0, cp_hash = 0;
    bool cut = false;
    std::string why;
    offset = records.offset();
    const DecodeStatus status = records.Next(names, &kind, &e, &cp_events, &cp_hash, &cut, &why);
    if (status == DecodeStatus::kError) {
      *error = records.io_error() ? "cannot read " + path + ": " + why : at() + why;
      return false;
    }
    if (status == DecodeStatus::kNeedMore) {
      // Ends inside a record: a run killed while writing left a prefix of whole events.
      stats->truncated = cut;
      break;
    }
    if (kind == RecordKind::kCheckpoint) {
      if (cp_events != stats->events) {
        *error = at() + "a checkpoint after " + std::to_string(cp_events) + " events where " +
                 std::to_string(stats->events) + " were read (the file was altered)";
        return false;
      }
      if (options.verify_hash && cp_hash != hash) {
        *error = at() + "the checkpoint's hash " + HashHex(cp_hash) + " is not the events' " +
                 HashHex(hash) + " (the file was altered)";
        return false;
      }
      checkpoint_events = cp_events;
      checkpoint_hash = cp_hash;
      continue;
    }
    if (kind != RecordKind::kEvent) continue;
    e.seq = stats->events;
    if (const std::string why_not = rules.Check(e, stats->events, stats->last_t_us, "event", e.seq);
        !why_not.empty()) {
      *error = at() + why_not;
      return false;
    }
    stats->events++;
    stats->last_t_us = e.t_us;
    if (options.verify_hash) hash_line(e, &hash);
    sink->OnEvent(e);
    if (options.max_events > 0 && stats->events >= options.max_events) done = true;
  }
  if (stats->events == 0) {
    *error = path + ": no events, not a history (a run's history has at least its notes)";
    return false;
  }
  stats->hash = checkpoint_hash;
  if (options.verify_hash) {
    stats->hash = hash;
  } else if (checkpoint_events < stats->events) {
    // Events past the last checkpoint (a run cut short, a read stopped early): their lines'
    // hash, from the checkpoint's on. The file is decoded once more up to them.
    RecordReader again(fd);
    for (uint64_t seq = 0; seq < stats->events;) {
      RecordKind kind{};
      Event e;
      uint64_t cp_events = 0, cp_hash = 0;
      bool cut = false;
      std::string why;
      if (again.Next(names, &kind, &e, &cp_events, &cp_hash, &cut, &why) != DecodeStatus::kOk) {
        *error = "cannot read " + path + " again" +
                 (again.io_error() ? ": " + why : std::string(": it changed while it was read"));
        return false;
      }
      if (kind != RecordKind::kEvent) continue;
      e.seq = seq++;
      if (e.seq >= checkpoint_events) hash_line(e, &stats->hash);
    }
  }
  return true;
}

}  // namespace

}  // namespace lockstep::history
