#include "history/writer.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "history/jsonl.h"

namespace lockstep::history {

namespace {
constexpr size_t kBufferBytes = 1 << 20;
}  // namespace

std::optional<HistoryFormat> ParseHistoryFormat(std::string_view s) {
  if (s == "none") return HistoryFormat::kNone;
  if (s == "jsonl") return HistoryFormat::kJsonl;
  if (s == "jsonl.gz") return HistoryFormat::kJsonlGz;
  return std::nullopt;
}

const char* HistoryFormatName(HistoryFormat f) {
  switch (f) {
    case HistoryFormat::kNone: return "none";
    case HistoryFormat::kJsonl: return "jsonl";
    case HistoryFormat::kJsonlGz: return "jsonl.gz";
  }
  return "?";
}

const char* HistoryFileName(HistoryFormat f) {
  return f == HistoryFormat::kJsonlGz ? "history.jsonl.gz" : "history.jsonl";
}

// One of the two: a plain FILE, or a gzip stream.
struct HistoryWriter::File {
  std::FILE* plain = nullptr;
  gzFile gz = nullptr;
};

std::unique_ptr<HistoryWriter> HistoryWriter::Open(const std::string& path, HistoryFormat format,
                                                   const NameTable* names, std::string* error) {
  auto file = std::make_unique<File>();
  if (format == HistoryFormat::kJsonl) {
    file->plain = std::fopen(path.c_str(), "wb");
  } else if (format == HistoryFormat::kJsonlGz) {
    // Level 1: a history compresses about 10:1 even so, and the run does not wait on zlib.
    file->gz = gzopen(path.c_str(), "wb1");
  } else {
    *error = "no file to write for --history none";
    return nullptr;
  }
  if (file->plain == nullptr && file->gz == nullptr) {
    *error = "cannot write " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  return std::unique_ptr<HistoryWriter>(new HistoryWriter(path, format, names, std::move(file)));
}

HistoryWriter::HistoryWriter(std::string path, HistoryFormat format, const NameTable* names,
                             std::unique_ptr<File> file)
    : path_(std::move(path)), format_(format), lines_(names), file_(std::move(file)),
      hash_(kFnvOffset) {
  buffer_.reserve(kBufferBytes + 4096);
}

HistoryWriter::~HistoryWriter() { Close(); }

void HistoryWriter::OnEvent(const Event& e) {
  ++events_;
  const size_t start = buffer_.size();
  lines_.Append(e, &buffer_);
  buffer_.push_back('\n');
  hash_ = FnvAppend(hash_, std::string_view(buffer_).substr(start));
  bytes_ += buffer_.size() - start;
  if (buffer_.size() >= kBufferBytes) WriteBuffer();
}

bool HistoryWriter::WriteBuffer() {
  if (buffer_.empty()) return error_.empty();
  if (!error_.empty() || file_ == nullptr) {
    buffer_.clear();
    return false;
  }
  bool ok = true;
  if (file_->plain != nullptr) {
    ok = std::fwrite(buffer_.data(), 1, buffer_.size(), file_->plain) == buffer_.size();
    if (!ok) error_ = "write to " + path_ + " failed: " + std::strerror(errno);
  } else if (file_->gz != nullptr) {
    ok = gzwrite(file_->gz, buffer_.data(), static_cast<unsigned>(buffer_.size())) ==
         static_cast<int>(buffer_.size());
    if (!ok) {
      int code = 0;
      error_ = "write to " + path_ + " failed: " + gzerror(file_->gz, &code);
    }
  }
  buffer_.clear();
  return ok;
}

bool HistoryWriter::Flush() {
  if (!WriteBuffer() && !error_.empty()) return false;
  if (file_ == nullptr) return error_.empty();
  if (file_->plain != nullptr && std::fflush(file_->plain) != 0) {
    error_ = "write to " + path_ + " failed: " + std::strerror(errno);
  } else if (file_->gz != nullptr && gzflush(file_->gz, Z_SYNC_FLUSH) != Z_OK) {
    int code = 0;
    error_ = "write to " + path_ + " failed: " + gzerror(file_->gz, &code);
  }
  return error_.empty();
}

bool HistoryWriter::Close() {
  if (file_ == nullptr) return error_.empty();
  WriteBuffer();
  if (file_->plain != nullptr) {
    if (std::fclose(file_->plain) != 0 && error_.empty()) {
      error_ = "closing " + path_ + " failed: " + std::strerror(errno);
    }
  } else if (file_->gz != nullptr) {
    if (gzclose(file_->gz) != Z_OK && error_.empty()) error_ = "closing " + path_ + " failed";
  }
  file_.reset();
  return error_.empty();
}

}  // namespace lockstep::history
