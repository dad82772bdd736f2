#include "history/reader.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "history/jsonl.h"

namespace lockstep::history {

bool ReadHistoryFile(const std::string& path, NameTable* names, EventSink* sink, ReadStats* stats,
                     std::string* error, const ReadOptions& options) {
  *stats = ReadStats{};
  stats->hash = kFnvOffset;
  // gzread reads a plain file as it is, so one path serves both formats.
  gzFile in = gzopen(path.c_str(), "rb");
  if (in == nullptr) {
    *error = "cannot read " + path + ": " + std::strerror(errno ? errno : ENOENT);
    return false;
  }
  std::unique_ptr<gzFile_s, int (*)(gzFile)> closer(in, gzclose);
  gzbuffer(in, 1 << 18);
  std::string pending;  // Bytes of a line not yet complete.
  std::string chunk(1 << 20, '\0');
  std::string text;
  size_t line_no = 0;
  bool ok = true;
  bool done = false;  // Read as many events as the options allow.
  auto handle = [&](std::string_view line) {
    ++line_no;
    if (line.empty()) return true;
    Event e;
    std::string why;
    if (!ParseJsonLine(line, names, &text, &e, &why)) {
      *error = path + ":" + std::to_string(line_no) + ": " + why;
      return false;
    }
    if (stats->events > 0 && e.t_us < stats->last_t_us) {
      *error = path + ":" + std::to_string(line_no) + ": time goes backwards";
      return false;
    }
    e.seq = stats->events++;
    stats->last_t_us = e.t_us;
    stats->hash = FnvAppend(stats->hash, line);
    stats->hash = FnvAppend(stats->hash, "\n");
    sink->OnEvent(e);
    if (options.max_events > 0 && stats->events >= options.max_events) done = true;
    return true;
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
    std::string_view data(chunk.data(), static_cast<size_t>(n));
    while (ok && !done && !data.empty()) {
      const size_t nl = data.find('\n');
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
  return true;
}

}  // namespace lockstep::history
