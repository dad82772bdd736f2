#include "history/jsonl.h"

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <span>

#include "history/notes.h"

namespace lockstep::history {

namespace {

// True for the bytes written as they are: printable ASCII but '"' and '\\'.
constexpr bool Plain(unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; }

}  // namespace

void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  size_t run = 0;  // Start of the current run of plain bytes.
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (Plain(c)) continue;
    out->append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\r': out->append("\\r"); break;
      case '\t': out->append("\\t"); break;
      default: {
        // Binary-safe and ASCII-only: one byte, not a code point.
        static constexpr char kHex[] = "0123456789abcdef";
        const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        out->append(esc, 6);
      }
    }
  }
  out->append(s.data() + run, s.size() - run);
  out->push_back('"');
}

namespace {

// Appends a literal, its length known at compile time: `,"key":` in one step.
template <size_t N>
void AppendLiteral(std::string* out, const char (&s)[N]) {
  out->append(s, N - 1);
}

// A reader for the flat objects AppendJsonLine writes: string and integer values only.
class FlatJsonReader {
 public:
  FlatJsonReader(std::string_view s, NameTable* names, std::string* text)
      : s_(s), names_(names), text_(text) {}

  bool Parse(Event* e, std::string* error) {
    Skip();
    if (!Eat('{')) return Fail(error, "expected '{'");
    Skip();
    std::string_view detail;
    bool has_detail = false;
    seen_ = 0;
    if (!Eat('}')) {
      while (true) {
        Skip();
        std::string_view key;
        if (!ReadKey(&key)) return Fail(error, "expected a key");
        Skip();
        if (!Eat(':')) return Fail(error, "expected ':' after \"" + std::string(key) + "\"");
        if (!FirstTime(key)) return Fail(error, "\"" + std::string(key) + "\" given twice");
        Skip();
        if (Peek() == '"') {
          if (!ReadString(&scratch_)) return Fail(error, "bad string for \"" + std::string(key) + "\"");
          if (key == "detail") {
            // The detail's unescaped text goes to *text_, which outlives this reader.
            *text_ = scratch_;
            detail = *text_;
            has_detail = true;
          } else if (!AssignString(e, key, error)) {
            return false;
          }
        } else {
          int64_t number = 0;
          if (!ReadInt(&number)) return Fail(error, "bad number for \"" + std::string(key) + "\"");
          if (!AssignNumber(e, key, number, error)) return false;
        }
        Skip();
        if (Eat('}')) break;
        if (!Eat(',')) return Fail(error, "expected ',' or '}'");
      }
    }
    Skip();
    if (pos_ != s_.size()) return Fail(error, "trailing characters");
    // Every line the writer makes starts with these three.
    for (const char* key : {"seq", "t", "type"}) {
      if ((seen_ & Bit(key)) == 0) {
        *error = std::string("no \"") + key + "\": every event has \"seq\", \"t\" and \"type\"";
        return false;
      }
    }
    if (has_detail && !detail.empty()) {
      e->source = detail;
      e->detail = DecodeDetail(e->type, e->op, detail);
    } else {
      e->source = {};
      e->detail = NoDetail{};
    }
    return true;
  }

 private:
  bool AssignString(Event* e, std::string_view key, std::string* error) {
    if (key == "type") {
      auto t = ParseType(scratch_);
      if (!t) {
        *error = "unknown event type \"" + scratch_ + "\"";
        return false;
      }
      e->type = *t;
    } else if (key == "process") {
      e->process = names_->Intern(scratch_);
    } else if (key == "op") {
      e->op = names_->Intern(scratch_);
    } else if (key == "lock") {
      e->lock = names_->Intern(scratch_);
    } else if (key == "peer") {
      e->peer = names_->Intern(scratch_);
    } else {
      return Unknown(key, true, error);
    }
    return true;
  }

  bool AssignNumber(Event* e, std::string_view key, int64_t number, std::string* error) {
    // Bounded here, so that no reader of a history sizes anything by a number a file made up.
    const auto out_of_range = [&](int64_t lo, int64_t hi) {
      if (number >= lo && number <= hi) return false;
      *error = "\"" + std::string(key) + "\" is " + std::to_string(number) + ", outside " +
               std::to_string(lo) + ".." + std::to_string(hi);
      return true;
    };
    if (key == "seq") {
      if (out_of_range(0, std::numeric_limits<int64_t>::max())) return false;
      e->seq = static_cast<uint64_t>(number);
    } else if (key == "t") {
      if (out_of_range(0, kMaxEventTimeUs)) return false;
      e->t_us = number;
    } else if (key == "thread") {
      if (out_of_range(-1, kMaxThreadIndex)) return false;
      e->thread = static_cast<int>(number);
    } else if (key == "local_ms") {
      if (out_of_range(-kMaxEventTimeUs, kMaxEventTimeUs)) return false;
      e->local_ms = number;
    } else if (key == "value") {
      e->has_value = true;
      e->value = number;
    } else {
      return Unknown(key, false, error);
    }
    return true;
  }

  static bool Unknown(std::string_view key, bool is_string, std::string* error) {
    static constexpr std::string_view kStrings[] = {"type", "process", "op", "lock", "peer", "detail"};
    static constexpr std::string_view kNumbers[] = {"seq", "t", "thread", "local_ms", "value"};
    for (std::string_view k : is_string ? std::span<const std::string_view>(kNumbers)
                                        : std::span<const std::string_view>(kStrings)) {
      if (k == key) {
        *error = "\"" + std::string(key) + "\" must be a " + (is_string ? "number" : "string");
        return false;
      }
    }
    *error = "unknown key \"" + std::string(key) + "\"";
    return false;
  }

  bool Fail(std::string* error, const std::string& what) {
    *error = what + " at column " + std::to_string(pos_ + 1);
    return false;
  }
  char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool Eat(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  void Skip() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  // Keys never need escapes; a key with one is read the slow way.
  bool ReadKey(std::string_view* key) {
    if (Peek() != '"') return false;
    const size_t start = pos_ + 1;
    const size_t end = s_.find_first_of("\"\\", start);
    if (end != std::string_view::npos && s_[end] == '"') {
      *key = s_.substr(start, end - start);
      pos_ = end + 1;
      return true;
    }
    if (!ReadString(&key_scratch_)) return false;
    *key = key_scratch_;
    return true;
  }
  bool ReadInt(int64_t* v) {
    const size_t start = pos_;
    if (Peek() == '-') ++pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    if (pos_ == start) return false;
    const auto [end, ec] = std::from_chars(s_.data() + start, s_.data() + pos_, *v);
    return ec == std::errc() && end == s_.data() + pos_;
  }
  bool ReadString(std::string* out) {
    out->clear();
    if (!Eat('"')) return false;
    while (pos_ < s_.size()) {
      // Copy the run up to the next quote or escape at once.
      const size_t stop = s_.find_first_of("\"\\", pos_);
      if (stop == std::string_view::npos) return false;
      // JSON strings hold no raw control bytes (the writer escapes them); one here is a
      // damaged line, and would reach a terminal as it is.
      for (size_t i = pos_; i < stop; ++i) {
        if (static_cast<unsigned char>(s_[i]) < 0x20) {
          raw_control_ = true;
          return false;
        }
      }
      out->append(s_.data() + pos_, stop - pos_);
      pos_ = stop + 1;
      if (s_[stop] == '"') return true;
      if (pos_ >= s_.size()) return false;
      const char esc = s_[pos_++];
      switch (esc) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u': {
          if (pos_ + 4 > s_.size()) return false;
          unsigned code = 0;
          const auto [end, ec] = std::from_chars(s_.data() + pos_, s_.data() + pos_ + 4, code, 16);
          if (ec != std::errc() || end != s_.data() + pos_ + 4) return false;
          pos_ += 4;
          if (code > 0xff) return false;  // We only ever write bytes.
          out->push_back(static_cast<char>(code));
          break;
        }
        default: return false;
      }
    }
    return false;
  }

  // One bit per known key, for "given twice" and the keys every line has.
  static uint32_t Bit(std::string_view key) {
    static constexpr std::string_view kKeys[] = {"seq",  "t",        "type",  "process", "thread",
                                                 "op",   "lock",     "peer",  "local_ms", "value",
                                                 "detail"};
    for (size_t i = 0; i < std::size(kKeys); ++i) {
      if (kKeys[i] == key) return 1u << i;
    }
    return 0;  // Unknown keys are refused where their value is assigned.
  }
  bool FirstTime(std::string_view key) {
    const uint32_t bit = Bit(key);
    if ((seen_ & bit) != 0) return false;
    seen_ |= bit;
    return true;
  }

  std::string_view s_;
  NameTable* names_;
  std::string* text_;
  uint32_t seen_ = 0;
  size_t pos_ = 0;
  std::string scratch_;
 public:
  bool raw_control_ = false;  // A string held a raw control byte.
 private:
  std::string key_scratch_;
};

}  // namespace

namespace {

// The fields of a line before its detail, gathered on the stack and appended to the line in
// one step: appending each number and name to the std::string on its own cost about as much
// again as formatting them (a capacity check and a copy call per piece).
class LineHead {
 public:
  explicit LineHead(std::string* out) : out_(out) {}
  LineHead(const LineHead&) = delete;
  LineHead& operator=(const LineHead&) = delete;
  ~LineHead() { Flush(); }

  template <size_t N>
  void Literal(const char (&s)[N]) {
    Bytes(s, N - 1);
  }
  void Bytes(const char* s, size_t n) {
    if (n > kBytes - used_) {
      Flush();
      if (n > kBytes) {
        out_->append(s, n);
        return;
      }
    }
    std::memcpy(buf_ + used_, s, n);
    used_ += n;
  }
  void Number(int64_t v) {
    if (kBytes - used_ < kNumberBytesMax) Flush();
    const auto [end, ec] = std::to_chars(buf_ + used_, buf_ + kBytes, v);
    assert(ec == std::errc());
    used_ = static_cast<size_t>(end - buf_);
  }
  // A name as a JSON string, from the cache when there is one (its quoted form made once).
  void QuotedName(Name name, const NameTable& names, std::vector<std::string>* quoted) {
    if (quoted == nullptr) {
      Flush();
      AppendJsonString(out_, names.Str(name));
      return;
    }
    // Grown by the name's id, not by names.size(): the table may be growing on another
    // thread meanwhile (history/handoff.h).
    if (name >= quoted->size()) {
      quoted->resize(std::max<size_t>(size_t{name} + 1, 2 * quoted->size()));
    }
    std::string& q = (*quoted)[name];
    if (q.empty()) AppendJsonString(&q, names.Str(name));
    Bytes(q.data(), q.size());
  }
  void Flush() {
    out_->append(buf_, used_);
    used_ = 0;
  }

 private:
  static constexpr size_t kBytes = 512;
  static constexpr size_t kNumberBytesMax = 20;  // "-9223372036854775808"
  std::string* out_;
  size_t used_ = 0;
  char buf_[kBytes];
};

// `detail`: the detail's text when the caller has it already, else null (made here).
void AppendLine(const Event& e, const NameTable& names, std::vector<std::string>* quoted,
                const std::string_view* detail, std::string* out) {
  {
    LineHead head(out);
    head.Literal("{\"seq\":");
    head.Number(static_cast<int64_t>(e.seq));
    head.Literal(",\"t\":");
    head.Number(e.t_us);
    head.Literal(",\"type\":\"");
    const std::string_view type = TypeName(e.type);
    head.Bytes(type.data(), type.size());
    head.Literal("\"");
    if (e.process != names::kNone) {
      head.Literal(",\"process\":");
      head.QuotedName(e.process, names, quoted);
    }
    if (e.thread >= 0) {
      head.Literal(",\"thread\":");
      head.Number(e.thread);
    }
    if (e.op != names::kNone) {
      head.Literal(",\"op\":");
      head.QuotedName(e.op, names, quoted);
    }
    if (e.lock != names::kNone) {
      head.Literal(",\"lock\":");
      head.QuotedName(e.lock, names, quoted);
    }
    if (e.peer != names::kNone) {
      head.Literal(",\"peer\":");
      head.QuotedName(e.peer, names, quoted);
    }
    if (e.local_ms != 0) {
      head.Literal(",\"local_ms\":");
      head.Number(e.local_ms);
    }
    if (e.has_value) {
      head.Literal(",\"value\":");
      head.Number(e.value);
    }
  }  // The head is in *out.
  const size_t before = out->size();
  AppendLiteral(out, ",\"detail\":\"");
  const size_t text_at = out->size();
  if (detail != nullptr) {
    out->append(*detail);
  } else {
    AppendDetailText(e, out);
  }
  if (out->size() == text_at) {
    out->resize(before);  // No detail: the key is left out.
  } else {
    // The detail was appended raw after its opening quote; escape it in place if it needs it
    // (it rarely does).
    bool plain = true;
    for (size_t i = text_at; i < out->size() && plain; ++i) {
      plain = Plain(static_cast<unsigned char>((*out)[i]));
    }
    if (plain) {
      out->push_back('"');
    } else {
      const std::string raw = out->substr(text_at);
      out->resize(text_at - 1);
      AppendJsonString(out, raw);
    }
  }
  out->push_back('}');
}

}  // namespace

void AppendJsonLine(const Event& e, const NameTable& names, std::string* out) {
  AppendLine(e, names, nullptr, nullptr, out);
}

void JsonLineFormatter::Append(const Event& e, std::string* out) {
  AppendLine(e, *names_, &quoted_, nullptr, out);
}

void JsonLineFormatter::Append(const Event& e, std::string_view detail, std::string* out) {
  AppendLine(e, *names_, &quoted_, &detail, out);
}

bool ParseJsonLine(std::string_view line, NameTable* names, std::string* text, Event* e,
                   std::string* error) {
  *e = Event{};
  FlatJsonReader reader(line, names, text);
  if (reader.Parse(e, error)) return true;
  if (reader.raw_control_) {
    *error = "a raw control byte inside a string (JSON escapes them, as lockstep writes them)";
  }
  return false;
}

std::string HashHex(uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, hash);
  return buf;
}

const char* TypeName(EventType t) {
  static constexpr const char* kTypeNames[] = {"invoke",  "ok",    "fail",     "info",
                                               "exec",    "message", "fault",  "resource",
                                               "lease",   "note",    "replicated"};
  static_assert(std::size(kTypeNames) == static_cast<size_t>(EventType::kReplicated) + 1);
  return kTypeNames[static_cast<int>(t)];
}

std::optional<EventType> ParseType(std::string_view s) {
  for (int i = 0; i <= static_cast<int>(EventType::kReplicated); ++i) {
    if (s == TypeName(static_cast<EventType>(i))) return static_cast<EventType>(i);
  }
  return std::nullopt;
}

}  // namespace lockstep::history
