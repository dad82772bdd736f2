#include "model/history.h"

#include <cassert>
#include <cinttypes>
#include <cstring>
#include <fstream>

namespace lockstep {

namespace {

constexpr const char* kTypeNames[] = {"invoke", "ok",       "fail",  "info", "exec",
                                      "message", "fault", "resource", "lease", "note"};

void AppendJsonString(std::string* out, std::string_view s) {
  out->push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          // Binary-safe and ASCII-only: bytes outside printable ASCII are written as \u00XX,
          // each standing for one byte (not a code point), and read back the same way.
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          *out += buf;
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

void AppendKey(std::string* out, const char* key) {
  if (out->size() > 1) out->push_back(',');
  out->push_back('"');
  *out += key;
  *out += "\":";
}

// A minimal reader for the flat objects ToJsonLine writes: string and integer values only.
class FlatJsonReader {
 public:
  explicit FlatJsonReader(std::string_view s) : s_(s) {}

  bool Parse(Event* e, std::string* error) {
    Skip();
    if (!Eat('{')) return Fail(error, "expected '{'");
    Skip();
    if (Eat('}')) return true;
    while (true) {
      std::string key, text;
      int64_t number = 0;
      bool is_string = false;
      Skip();
      if (!ReadString(&key)) return Fail(error, "expected a key");
      Skip();
      if (!Eat(':')) return Fail(error, "expected ':' after \"" + key + "\"");
      Skip();
      if (Peek() == '"') {
        if (!ReadString(&text)) return Fail(error, "bad string for \"" + key + "\"");
        is_string = true;
      } else if (!ReadInt(&number)) {
        return Fail(error, "bad number for \"" + key + "\"");
      }
      if (!Assign(e, key, is_string, text, number, error)) return false;
      Skip();
      if (Eat('}')) break;
      if (!Eat(',')) return Fail(error, "expected ',' or '}'");
    }
    Skip();
    if (pos_ != s_.size()) return Fail(error, "trailing characters");
    return true;
  }

 private:
  static bool Assign(Event* e, const std::string& key, bool is_string, const std::string& text,
                     int64_t number, std::string* error) {
    auto want = [&](bool string_wanted) {
      if (is_string != string_wanted) {
        *error = "\"" + key + "\" must be a " + (string_wanted ? "string" : "number");
        return false;
      }
      return true;
    };
    if (key == "seq") {
      if (!want(false)) return false;
      e->seq = static_cast<uint64_t>(number);
    } else if (key == "t") {
      if (!want(false)) return false;
      e->t_us = number;
    } else if (key == "type") {
      if (!want(true)) return false;
      auto t = ParseType(text);
      if (!t) {
        *error = "unknown event type \"" + text + "\"";
        return false;
      }
      e->type = *t;
    } else if (key == "process") {
      if (!want(true)) return false;
      e->process = text;
    } else if (key == "thread") {
      if (!want(false)) return false;
      e->thread = static_cast<int>(number);
    } else if (key == "op") {
      if (!want(true)) return false;
      e->op = text;
    } else if (key == "lock") {
      if (!want(true)) return false;
      e->lock = text;
    } else if (key == "peer") {
      if (!want(true)) return false;
      e->peer = text;
    } else if (key == "local_ms") {
      if (!want(false)) return false;
      e->local_ms = number;
    } else if (key == "value") {
      if (!want(false)) return false;
      e->has_value = true;
      e->value = number;
    } else if (key == "detail") {
      if (!want(true)) return false;
      e->detail = text;
    } else {
      *error = "unknown key \"" + key + "\"";
      return false;
    }
    return true;
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
  bool ReadInt(int64_t* v) {
    const size_t start = pos_;
    if (Peek() == '-') ++pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    if (pos_ == start) return false;
    const std::string digits(s_.substr(start, pos_ - start));
    char* end = nullptr;
    errno = 0;
    *v = std::strtoll(digits.c_str(), &end, 10);
    return errno == 0 && *end == '\0';
  }
  bool ReadString(std::string* out) {
    if (!Eat('"')) return false;
    while (pos_ < s_.size()) {
      const char c = s_[pos_++];
      if (c == '"') return true;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
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
          const std::string hex(s_.substr(pos_, 4));
          pos_ += 4;
          char* end = nullptr;
          const long code = std::strtol(hex.c_str(), &end, 16);
          if (*end != '\0' || code > 0xff) return false;  // We only ever write bytes.
          out->push_back(static_cast<char>(code));
          break;
        }
        default: return false;
      }
    }
    return false;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

const char* TypeName(Event::Type t) { return kTypeNames[static_cast<int>(t)]; }

std::optional<Event::Type> ParseType(std::string_view s) {
  for (size_t i = 0; i < std::size(kTypeNames); ++i) {
    if (s == kTypeNames[i]) return static_cast<Event::Type>(i);
  }
  return std::nullopt;
}

std::string ToJsonLine(const Event& e) {
  std::string out = "{";
  AppendKey(&out, "seq");
  out += std::to_string(e.seq);
  AppendKey(&out, "t");
  out += std::to_string(e.t_us);
  AppendKey(&out, "type");
  AppendJsonString(&out, TypeName(e.type));
  if (!e.process.empty()) {
    AppendKey(&out, "process");
    AppendJsonString(&out, e.process);
  }
  if (e.thread >= 0) {
    AppendKey(&out, "thread");
    out += std::to_string(e.thread);
  }
  if (!e.op.empty()) {
    AppendKey(&out, "op");
    AppendJsonString(&out, e.op);
  }
  if (!e.lock.empty()) {
    AppendKey(&out, "lock");
    AppendJsonString(&out, e.lock);
  }
  if (!e.peer.empty()) {
    AppendKey(&out, "peer");
    AppendJsonString(&out, e.peer);
  }
  if (e.local_ms != 0) {
    AppendKey(&out, "local_ms");
    out += std::to_string(e.local_ms);
  }
  if (e.has_value) {
    AppendKey(&out, "value");
    out += std::to_string(e.value);
  }
  if (!e.detail.empty()) {
    AppendKey(&out, "detail");
    AppendJsonString(&out, e.detail);
  }
  out += "}";
  return out;
}

std::optional<Event> ParseJsonLine(std::string_view line, std::string* error) {
  Event e;
  FlatJsonReader reader(line);
  if (!reader.Parse(&e, error)) return std::nullopt;
  return e;
}

const Event& History::Append(Event e) {
  assert(events_.empty() || e.t_us >= events_.back().t_us);
  e.seq = events_.size();
  const std::string line = ToJsonLine(e);
  for (unsigned char c : line) {
    hash_ ^= c;
    hash_ *= 0x100000001b3ull;
  }
  hash_ ^= static_cast<unsigned char>('\n');
  hash_ *= 0x100000001b3ull;
  events_.push_back(std::move(e));
  return events_.back();
}

std::string History::HashHex() const {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016" PRIx64, hash_);
  return buf;
}

bool History::WriteFile(const std::string& path, std::string* error) const {
  // Write to a temporary name and rename, so a failure never leaves half a history behind
  // under the real name.
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      *error = "cannot write " + tmp + ": " + std::strerror(errno);
      return false;
    }
    for (const Event& e : events_) out << ToJsonLine(e) << '\n';
    out.flush();
    if (!out) {
      *error = "write to " + tmp + " failed: " + std::strerror(errno);
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

std::optional<History> History::ReadFile(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read " + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  History h;
  std::string line;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    std::string why;
    auto e = ParseJsonLine(line, &why);
    if (!e) {
      *error = path + ":" + std::to_string(line_no) + ": " + why;
      return std::nullopt;
    }
    if (!h.events_.empty() && e->t_us < h.events_.back().t_us) {
      *error = path + ":" + std::to_string(line_no) + ": time goes backwards";
      return std::nullopt;
    }
    h.Append(std::move(*e));
  }
  return h;
}

}  // namespace lockstep
