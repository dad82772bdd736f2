#include "history/binary.h"

#include <cstring>
#include <limits>

#include "history/jsonl.h"
#include "history/notes.h"
#include "history/reader.h"

namespace lockstep::history {

namespace {

enum Presence : uint8_t {
  kHasProcess = 1 << 0,
  kHasThread = 1 << 1,
  kHasOp = 1 << 2,
  kHasLock = 1 << 3,
  kHasPeer = 1 << 4,
  kHasLocalMs = 1 << 5,
  kHasValue = 1 << 6,
  kHasDetail = 1 << 7,
};

void PutVarint(std::string* out, uint64_t v) {
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out->append(buf, n);
}

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

// The clock's offset an event's local_ms says: what it is past true time, in ms.
int64_t ClockOffset(int64_t local_ms, int64_t t_us) { return local_ms - t_us / 1000; }

// Reads from a record; every read says whether the bytes were there.
class Cursor {
 public:
  explicit Cursor(std::string_view data) : data_(data) {}
  // False at the end of the data; *bad set for a varint longer than 10 bytes.
  bool Varint(uint64_t* v, bool* bad) {
    uint64_t result = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (pos_ >= data_.size()) return false;
      const uint8_t b = static_cast<uint8_t>(data_[pos_++]);
      if (shift == 63 && b > 1) {
        *bad = true;
        return true;
      }
      result |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) {
        *v = result;
        return true;
      }
    }
    *bad = true;
    return true;
  }
  bool Byte(uint8_t* b) {
    if (pos_ >= data_.size()) return false;
    *b = static_cast<uint8_t>(data_[pos_++]);
    return true;
  }
  bool Bytes(size_t n, std::string_view* s) {
    if (data_.size() - pos_ < n) return false;
    *s = data_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  size_t pos() const { return pos_; }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

}  // namespace

uint64_t BinaryEncoder::FileId(Name name, std::string* out) {
  // Grown by the name's id, not names_->size(): the table may grow on another thread meanwhile
  // (history/handoff.h), as the JSON formatter's cache is.
  if (name >= file_ids_.size()) file_ids_.resize(std::max<size_t>(size_t{name} + 1, 2 * file_ids_.size()));
  uint32_t& id = file_ids_[name];
  if (id == 0) {
    const std::string_view s = names_->Str(name);
    out->push_back(static_cast<char>(kRecordName));
    PutVarint(out, s.size());
    out->append(s);
    id = next_file_id_++;
  }
  return id;
}

void BinaryEncoder::Append(const Event& e, std::string_view detail, std::string* out) {
  uint64_t process = 0, op = 0, lock = 0, peer = 0;
  if (e.process != names::kNone) process = FileId(e.process, out);
  if (e.op != names::kNone) op = FileId(e.op, out);
  if (e.lock != names::kNone) lock = FileId(e.lock, out);
  if (e.peer != names::kNone) peer = FileId(e.peer, out);
  uint8_t presence = 0;
  if (process != 0) presence |= kHasProcess;
  if (e.thread >= 0) presence |= kHasThread;
  if (op != 0) presence |= kHasOp;
  if (lock != 0) presence |= kHasLock;
  if (peer != 0) presence |= kHasPeer;
  if (e.local_ms != 0) presence |= kHasLocalMs;
  if (e.has_value) presence |= kHasValue;
  if (!detail.empty()) presence |= kHasDetail;
  out->push_back(static_cast<char>(e.type));
  out->push_back(static_cast<char>(presence));
  PutVarint(out, static_cast<uint64_t>(e.t_us - last_t_us_));
  last_t_us_ = e.t_us;
  if (process != 0) PutVarint(out, process);
  if (e.thread >= 0) PutVarint(out, static_cast<uint64_t>(e.thread));
  if (op != 0) PutVarint(out, op);
  if (lock != 0) PutVarint(out, lock);
  if (peer != 0) PutVarint(out, peer);
  if (e.local_ms != 0) {
    if (process >= clock_offsets_.size()) clock_offsets_.resize(process + 1, 0);
    const int64_t offset = ClockOffset(e.local_ms, e.t_us);
    PutVarint(out, ZigZag(offset - clock_offsets_[process]));
    clock_offsets_[process] = offset;
  }
  if (e.has_value) PutVarint(out, ZigZag(e.value));
  if (!detail.empty()) {
    if (detail.size() <= kDictTextMax) {
      const auto it = dict_.find(detail);
      if (it != dict_.end()) {
        PutVarint(out, uint64_t{it->second} * 2);
        return;
      }
      if (dict_.size() < kDictEntries) {
        dict_.emplace(std::string(detail), static_cast<uint32_t>(dict_.size()));
      }
    }
    PutVarint(out, detail.size() * 2 + 1);
    out->append(detail);
  }
}

void BinaryEncoder::AppendCheckpoint(uint64_t events, uint64_t hash, std::string* out) {
  out->push_back(static_cast<char>(kRecordCheckpoint));
  PutVarint(out, events);
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((hash >> (8 * i)) & 0xff));
}

DecodeStatus BinaryDecoder::Next(std::string_view data, NameTable* names, size_t* used,
                                 RecordKind* kind, Event* e, uint64_t* checkpoint_events,
                                 uint64_t* checkpoint_hash, std::string* error) {
  Cursor in(data);
  bool bad = false;
  uint8_t first = 0;
  if (!in.Byte(&first)) return DecodeStatus::kNeedMore;
  // Each field read: the record may continue past the data (kNeedMore), or be malformed.
  const auto varint = [&](uint64_t* v, const char* what) -> DecodeStatus {
    if (!in.Varint(v, &bad)) return DecodeStatus::kNeedMore;
    if (bad) {
      *error = std::string("a malformed number (") + what + ")";
      return DecodeStatus::kError;
    }
    return DecodeStatus::kOk;
  };
#define LOCKSTEP_READ(v, what)                                   \
  do {                                                           \
    const DecodeStatus status_ = varint(v, what);                \
    if (status_ != DecodeStatus::kOk) return status_;            \
  } while (0)

  if (first == kRecordName) {
    uint64_t length = 0;
    LOCKSTEP_READ(&length, "a name's length");
    if (length > kMaxHistoryLineBytes) {
      *error = "a name of " + std::to_string(length) + " bytes (at most " +
               std::to_string(kMaxHistoryLineBytes) + ")";
      return DecodeStatus::kError;
    }
    std::string_view s;
    if (!in.Bytes(static_cast<size_t>(length), &s)) return DecodeStatus::kNeedMore;
    if (names_.size() > kMaxBinaryNames) {
      *error = "more than " + std::to_string(kMaxBinaryNames) + " names";
      return DecodeStatus::kError;
    }
    names_.push_back(names->Intern(s));
    *kind = RecordKind::kName;
    *used = in.pos();
    return DecodeStatus::kOk;
  }
  if (first == kRecordCheckpoint) {
    uint64_t events = 0;
    LOCKSTEP_READ(&events, "a checkpoint's event count");
    std::string_view h;
    if (!in.Bytes(8, &h)) return DecodeStatus::kNeedMore;
    uint64_t hash = 0;
    for (int i = 7; i >= 0; --i) hash = (hash << 8) | static_cast<uint8_t>(h[static_cast<size_t>(i)]);
    *checkpoint_events = events;
    *checkpoint_hash = hash;
    *kind = RecordKind::kCheckpoint;
    *used = in.pos();
    return DecodeStatus::kOk;
  }
  if (first > static_cast<uint8_t>(EventType::kReplicated)) {
    *error = "unknown record kind " + std::to_string(first);
    return DecodeStatus::kError;
  }
  uint8_t presence = 0;
  if (!in.Byte(&presence)) return DecodeStatus::kNeedMore;
  // Decoded in place: on kNeedMore or kError the caller ignores *e.
  Event& ev = *e;
  ev = Event{};
  ev.type = static_cast<EventType>(first);
  uint64_t dt = 0;
  LOCKSTEP_READ(&dt, "the time");
  if (dt > static_cast<uint64_t>(kMaxEventTimeUs - last_t_us_)) {
    *error = "the time passes " + std::to_string(kMaxEventTimeUs) + " us";
    return DecodeStatus::kError;
  }
  ev.t_us = last_t_us_ + static_cast<int64_t>(dt);
  // A name field: its file id (*id) and the reader's name for it (*out).
  const auto name = [&](Name* out, uint64_t* id, const char* what) -> DecodeStatus {
    if (const DecodeStatus s = varint(id, what); s != DecodeStatus::kOk) return s;
    if (*id == 0 || *id >= names_.size()) {
      *error = std::string("the ") + what + " is name " + std::to_string(*id) + ", not defined before it";
      return DecodeStatus::kError;
    }
    *out = names_[static_cast<size_t>(*id)];
    return DecodeStatus::kOk;
  };
  uint64_t process_id = 0, other_id = 0;
  if (presence & kHasProcess) {
    if (const DecodeStatus s = name(&ev.process, &process_id, "process"); s != DecodeStatus::kOk) return s;
  }
  if (presence & kHasThread) {
    uint64_t thread = 0;
    LOCKSTEP_READ(&thread, "thread");
    if (thread > static_cast<uint64_t>(kMaxThreadIndex)) {
      *error = "\"thread\" is " + std::to_string(thread) + ", outside -1.." + std::to_string(kMaxThreadIndex);
      return DecodeStatus::kError;
    }
    ev.thread = static_cast<int>(thread);
  }
  if (presence & kHasOp) {
    if (const DecodeStatus s = name(&ev.op, &other_id, "op"); s != DecodeStatus::kOk) return s;
  }
  if (presence & kHasLock) {
    if (const DecodeStatus s = name(&ev.lock, &other_id, "lock"); s != DecodeStatus::kOk) return s;
  }
  if (presence & kHasPeer) {
    if (const DecodeStatus s = name(&ev.peer, &other_id, "peer"); s != DecodeStatus::kOk) return s;
  }
  int64_t new_offset = 0;
  if (presence & kHasLocalMs) {
    uint64_t z = 0;
    LOCKSTEP_READ(&z, "local_ms");
    const int64_t change = UnZigZag(z);
    const int64_t before = process_id < clock_offsets_.size() ? clock_offsets_[process_id] : 0;
    // Both within 2^54: no overflow below.
    if (change > 2 * kMaxEventTimeUs || change < -2 * kMaxEventTimeUs) {
      *error = "\"local_ms\" out of range";
      return DecodeStatus::kError;
    }
    new_offset = before + change;
    const int64_t local_ms = new_offset + ev.t_us / 1000;
    if (local_ms == 0) {
      *error = "\"local_ms\" given as 0 (a writer leaves a 0 out)";
      return DecodeStatus::kError;
    }
    if (local_ms > kMaxEventTimeUs || local_ms < -kMaxEventTimeUs) {
      *error = "\"local_ms\" is " + std::to_string(local_ms) + ", outside " +
               std::to_string(-kMaxEventTimeUs) + ".." + std::to_string(kMaxEventTimeUs);
      return DecodeStatus::kError;
    }
    ev.local_ms = local_ms;
  }
  if (presence & kHasValue) {
    uint64_t z = 0;
    LOCKSTEP_READ(&z, "value");
    ev.has_value = true;
    ev.value = UnZigZag(z);
  }
  std::string_view detail;
  bool new_text = false;
  if (presence & kHasDetail) {
    uint64_t x = 0;
    LOCKSTEP_READ(&x, "detail");
    if (x % 2 == 0) {
      if (x / 2 >= dict_.size()) {
        *error = "the detail is text " + std::to_string(x / 2) + " of " +
                 std::to_string(dict_.size()) + " known";
        return DecodeStatus::kError;
      }
      detail = dict_[static_cast<size_t>(x / 2)];
    } else {
      const uint64_t length = x / 2;
      if (length == 0 || length > kMaxHistoryLineBytes) {
        *error = "a detail of " + std::to_string(length) + " bytes (1 to " +
                 std::to_string(kMaxHistoryLineBytes) + ")";
        return DecodeStatus::kError;
      }
      if (!in.Bytes(static_cast<size_t>(length), &detail)) return DecodeStatus::kNeedMore;
      new_text = true;
    }
  }
#undef LOCKSTEP_READ
  // The whole record is here: commit what it changes.
  last_t_us_ = ev.t_us;
  if (presence & kHasLocalMs) {
    if (process_id >= clock_offsets_.size()) clock_offsets_.resize(process_id + 1, 0);
    clock_offsets_[process_id] = new_offset;
  }
  if (new_text) {
    text_.assign(detail);
    if (detail.size() <= kDictTextMax && dict_.size() < kDictEntries) dict_.emplace_back(detail);
    detail = text_;
  }
  if (!detail.empty()) {
    ev.source = detail;
    ev.detail = DecodeDetail(ev.type, ev.op, detail);
  }
  *kind = RecordKind::kEvent;
  *used = in.pos();
  return DecodeStatus::kOk;
}

}  // namespace lockstep::history
