#include "history/writer.h"

#include <zlib.h>

#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "history/jsonl.h"
#include "history/notes.h"

namespace lockstep::history {

namespace {
constexpr size_t kBufferBytes = 1 << 20;

// zlib's message for the stream's last error; for a failed write that is the system's (errno
// set by the write zlib made), e.g. "No space left on device".
std::string GzError(gzFile gz) {
  int code = 0;
  const char* what = gzerror(gz, &code);
  if (code == Z_ERRNO) return std::strerror(errno);
  return what;
}
}  // namespace

std::optional<HistoryFormat> ParseHistoryFormat(std::string_view s) {
  if (s == "none") return HistoryFormat::kNone;
  if (s == "jsonl") return HistoryFormat::kJsonl;
  if (s == "jsonl.gz") return HistoryFormat::kJsonlGz;
  if (s == "binary") return HistoryFormat::kBinary;
  return std::nullopt;
}

const char* HistoryFormatName(HistoryFormat f) {
  switch (f) {
    case HistoryFormat::kNone: return "none";
    case HistoryFormat::kJsonl: return "jsonl";
    case HistoryFormat::kJsonlGz: return "jsonl.gz";
    case HistoryFormat::kBinary: return "binary";
  }
  return "?";
}

const char* HistoryFileName(HistoryFormat f) {
  if (f == HistoryFormat::kBinary) return "history.bin";
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
  if (format == HistoryFormat::kJsonl || format == HistoryFormat::kBinary) {
    file->plain = std::fopen(path.c_str(), "wb");
    if (file->plain != nullptr && format == HistoryFormat::kBinary &&
        std::fwrite(kBinaryMagic.data(), 1, kBinaryMagic.size(), file->plain) != kBinaryMagic.size()) {
      *error = "cannot write " + path + ": " + std::strerror(errno);
      std::fclose(file->plain);
      return nullptr;
    }
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
    : path_(std::move(path)), format_(format), lines_(names), binary_(names), file_(std::move(file)),
      hash_(kFnvOffset) {
  buffer_.reserve(kBufferBytes + 4096);
  handed_.reserve(kBufferBytes + 4096);
  thread_ = std::thread([this] { WriteLoop(); });
}

HistoryWriter::~HistoryWriter() { Close(); }

void HistoryWriter::OnEvent(const Event& e) {
  ++events_;
  const size_t start = buffer_.size();
  if (format_ == HistoryFormat::kBinary) {
    // The detail's text once for both: the record, and the line the hash is taken over.
    detail_.clear();
    AppendDetailText(e, &detail_);
    lines_.Append(e, detail_, &buffer_);
    binary_.Append(e, detail_, &binary_buffer_);
  } else {
    lines_.Append(e, &buffer_);
  }
  buffer_.push_back('\n');
  bytes_ += buffer_.size() - start;
  if (buffer_.size() >= kBufferBytes) HandOver();
}

void HistoryWriter::HandOver() {
  assert(thread_.joinable());
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !pending_; });
  assert(handed_.empty());
  handed_.swap(buffer_);
  handed_binary_.swap(binary_buffer_);
  handed_events_ = events_;
  pending_ = true;
  cv_.notify_all();
}

void HistoryWriter::WaitWritten() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !pending_; });
}

void HistoryWriter::WriteLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return pending_ || closing_; });
    if (!pending_) return;  // Closing, and everything handed over is written.
    // While pending_ is set, handed_, hash_ and error_ are this thread's alone.
    lock.unlock();
    Write(handed_);
    handed_.clear();
    handed_binary_.clear();
    lock.lock();
    pending_ = false;
    cv_.notify_all();
  }
}

void HistoryWriter::Write(const std::string& bytes) {
  // The hash covers every line, written or not, as the events are counted after an error.
  hash_ = FnvAppend(hash_, bytes);
  if (!error_.empty() || file_ == nullptr) return;
  if (format_ == HistoryFormat::kBinary) {
    // The lines are only hashed; the records go to the file, with the hash so far after them.
    BinaryEncoder::AppendCheckpoint(handed_events_, hash_, &handed_binary_);
    if (std::fwrite(handed_binary_.data(), 1, handed_binary_.size(), file_->plain) !=
        handed_binary_.size()) {
      error_ = "write to " + path_ + " failed: " + std::strerror(errno);
      failed_.store(true, std::memory_order_relaxed);
    }
  } else if (file_->plain != nullptr) {
    if (std::fwrite(bytes.data(), 1, bytes.size(), file_->plain) != bytes.size()) {
      error_ = "write to " + path_ + " failed: " + std::strerror(errno);
      failed_.store(true, std::memory_order_relaxed);
    }
  } else if (file_->gz != nullptr) {
    if (gzwrite(file_->gz, bytes.data(), static_cast<unsigned>(bytes.size())) !=
        static_cast<int>(bytes.size())) {
      error_ = "write to " + path_ + " failed: " + GzError(file_->gz);
      failed_.store(true, std::memory_order_relaxed);
    }
  }
}

bool HistoryWriter::Flush() {
  if (!thread_.joinable()) return error_.empty();  // Closed.
  if (!buffer_.empty()) HandOver();
  WaitWritten();
  if (!error_.empty() || file_ == nullptr) return error_.empty();
  if (file_->plain != nullptr && std::fflush(file_->plain) != 0) {
    error_ = "write to " + path_ + " failed: " + std::strerror(errno);
  } else if (file_->gz != nullptr && gzflush(file_->gz, Z_SYNC_FLUSH) != Z_OK) {
    error_ = "write to " + path_ + " failed: " + GzError(file_->gz);
  }
  if (!error_.empty()) failed_.store(true, std::memory_order_relaxed);
  return error_.empty();
}

bool HistoryWriter::Close() {
  if (!thread_.joinable()) return error_.empty();
  if (!buffer_.empty()) HandOver();
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
    cv_.notify_all();
  }
  thread_.join();  // It writes what was handed over before it ends.
  if (file_->plain != nullptr) {
    if (std::fclose(file_->plain) != 0 && error_.empty()) {
      error_ = "closing " + path_ + " failed: " + std::strerror(errno);
    }
  } else if (file_->gz != nullptr) {
    // gzclose writes what zlib still holds; errno says why that failed.
    errno = 0;
    if (gzclose(file_->gz) != Z_OK && error_.empty()) {
      error_ = "closing " + path_ + " failed" + (errno != 0 ? std::string(": ") + std::strerror(errno) : "");
    }
  }
  file_.reset();
  if (!error_.empty()) failed_.store(true, std::memory_order_relaxed);
  return error_.empty();
}

bool HistoryWriter::Discard() {
  Close();
  return std::remove(path_.c_str()) == 0 || errno == ENOENT;
}

}  // namespace lockstep::history
