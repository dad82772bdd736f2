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

}  // namespace

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
  Census census;
  bool saw_protocol = false, saw_non_note = false;
  size_t first_non_note_line = 0;
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
    if (stats->events > 0 && e.t_us < stats->last_t_us) {
      *error = at_line(line_no) + "time goes backwards";
      return false;
    }
    if (const std::string over = census.Add(e); !over.empty()) {
      *error = at_line(line_no) + over + ", more than a history may name";
      return false;
    }
    // The protocol note says how every later event reads (which checkers apply, what a reply
    // means): once, before anything that is not a note, as every driver writes it.
    if (e.type == EventType::kNote && e.op == names::kProtocol) {
      if (saw_protocol) {
        *error = at_line(line_no) + "a second protocol note (a history has one, at its start)";
        return false;
      }
      if (saw_non_note) {
        *error = at_line(line_no) +
                 "a protocol note after the run's first event that is not a note (line " +
                 std::to_string(first_non_note_line) + "); it must come before them";
        return false;
      }
      saw_protocol = true;
    } else if (e.type != EventType::kNote && !saw_non_note) {
      saw_non_note = true;
      first_non_note_line = line_no;
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

}  // namespace lockstep::history
