#include "live/resp_frame.h"

#include <cassert>
#include <charconv>
#include <climits>
#include <vector>

namespace lockstep {
namespace {

constexpr size_t kMaxLineBytes = 64 * 1024;             // redis-server's PROTO_INLINE_MAX_SIZE.
constexpr int64_t kMaxBulkBytes = 512LL * 1024 * 1024;  // Its proto-max-bulk-len default.

// A whole decimal int64, as redis-server's string2ll reads it: an optional '-', digits, nothing
// else.
bool ParseInt(std::string_view text, int64_t* value) {
  if (text.empty() || text.front() == '+') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

// One element of a RESP message: its type byte, its line (the payload of '+', '-', ':' and the
// number of '$' and '*') and, for a non-nil bulk, its bytes.
struct Element {
  char type = 0;
  std::string_view line;
  int64_t number = 0;       // '$', '*', ':'.
  std::string_view bulk;    // '$' with number >= 0.
};

// Reads the element that starts at *pos and moves *pos past it (past the header only for '*').
FrameStatus ReadElement(std::string_view data, RespGrammar grammar, size_t* pos, Element* e,
                        std::string* error) {
  assert(*pos < data.size());
  const size_t start = *pos;
  e->type = data[start];
  const size_t crlf = data.find("\r\n", start + 1);
  if (crlf == std::string_view::npos) {
    if (e->type != '+' && e->type != '-' && data.size() - start > kMaxLineBytes) {
      *error = "Protocol error: too big count string";
      return FrameStatus::kMalformed;
    }
    return FrameStatus::kIncomplete;
  }
  e->line = data.substr(start + 1, crlf - start - 1);
  size_t next = crlf + 2;
  switch (e->type) {
    case '+':
    case '-':
      break;
    case ':':
      if (!ParseInt(e->line, &e->number)) {
        *error = "Protocol error: invalid integer";
        return FrameStatus::kMalformed;
      }
      break;
    case '$': {
      const int64_t nil = grammar == RespGrammar::kReply ? -1 : 0;
      if (!ParseInt(e->line, &e->number) || e->number < nil || e->number > kMaxBulkBytes) {
        *error = "Protocol error: invalid bulk length";
        return FrameStatus::kMalformed;
      }
      if (e->number < 0) break;
      const auto bytes = static_cast<size_t>(e->number);
      if (data.size() - next < bytes + 2) return FrameStatus::kIncomplete;
      if (data.substr(next + bytes, 2) != "\r\n") {
        *error = "Protocol error: bulk string not followed by CRLF";
        return FrameStatus::kMalformed;
      }
      e->bulk = data.substr(next, bytes);
      next += bytes + 2;
      break;
    }
    case '*':
      if (!ParseInt(e->line, &e->number) || e->number < -1 || e->number > INT32_MAX) {
        *error = "Protocol error: invalid multibulk length";
        return FrameStatus::kMalformed;
      }
      break;
    default:
      *error = std::string("Protocol error: unexpected type byte '") + e->type + "'";
      return FrameStatus::kMalformed;
  }
  *pos = next;
  return FrameStatus::kComplete;
}

// An inline command: one line up to '\n' (a '\r' before it is dropped), split on blanks.
// redis-server also honours quotes (sdssplitargs); a word count is all the proxy needs, and
// quoted blanks in an inline command are the one case where it would count differently.
FrameStatus ReadInline(std::string_view data, RespFrame* frame, std::string* error) {
  const size_t newline = data.find('\n');
  if (newline == std::string_view::npos) {
    if (data.size() > kMaxLineBytes) {
      *error = "Protocol error: too big inline request";
      return FrameStatus::kMalformed;
    }
    return FrameStatus::kIncomplete;
  }
  frame->type = RespFrame::kInline;
  frame->length = newline + 1;
  std::string_view line = data.substr(0, newline);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    if (i == line.size()) break;
    const size_t word = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (frame->head_size < RespFrame::kHeadItems) {
      frame->head[frame->head_size++] = line.substr(word, i - word);
    }
    ++frame->count;
  }
  return FrameStatus::kComplete;
}

bool IsString(const Element& e) {
  return e.type == '+' || e.type == '-' || e.type == ':' || (e.type == '$' && e.number >= 0);
}
std::string_view Payload(const Element& e) { return e.type == '$' ? e.bulk : e.line; }

}  // namespace

FrameStatus NextRespFrame(std::string_view data, RespGrammar grammar, RespFrame* frame,
                          std::string* error) {
  *frame = RespFrame{};
  if (data.empty()) return FrameStatus::kIncomplete;
  if (grammar == RespGrammar::kRequest && data.front() != '*') {
    return ReadInline(data, frame, error);
  }
  if (grammar == RespGrammar::kReply && (data.front() == '\n' || data.front() == '\r')) {
    // A keepalive newline between replies; as an inline line, it has no words.
    return ReadInline(data, frame, error);
  }
  // Elements still to read in each array that is open, innermost last.
  std::vector<int64_t> open;
  bool head_open = true;  // The top-level elements read so far were all strings.
  size_t pos = 0;
  for (;;) {
    if (pos == data.size()) return FrameStatus::kIncomplete;
    const size_t depth = open.size();
    if (grammar == RespGrammar::kRequest && depth > 0 && data[pos] != '$') {
      *error = std::string("Protocol error: expected '$', got '") + data[pos] + "'";
      return FrameStatus::kMalformed;
    }
    Element e;
    const FrameStatus status = ReadElement(data, grammar, &pos, &e, error);
    if (status != FrameStatus::kComplete) return status;
    if (depth == 0) {
      frame->type = e.type;
      frame->count = e.type == '*' || e.type == '$' ? e.number : 0;
      if (IsString(e)) frame->head[frame->head_size++] = Payload(e);
    } else if (depth == 1 && head_open) {
      if (IsString(e) && frame->head_size < RespFrame::kHeadItems) {
        frame->head[frame->head_size++] = Payload(e);
      } else {
        head_open = false;
      }
    }
    if (e.type == '*' && e.number > 0) {
      if (open.size() == kMaxRespNesting) {
        *error = "Protocol error: arrays nested too deep";
        return FrameStatus::kMalformed;
      }
      open.push_back(e.number);
    } else {
      // The element is whole, and so is every array it completes.
      while (!open.empty()) {
        assert(open.back() > 0);
        if (--open.back() > 0) break;
        open.pop_back();
      }
    }
    if (open.empty()) {
      frame->length = pos;
      assert(frame->length <= data.size());
      return FrameStatus::kComplete;
    }
  }
}

FrameStatus ParseRdbHeader(std::string_view data, RdbHeader* header, std::string* error) {
  *header = RdbHeader{};
  if (data.empty()) return FrameStatus::kIncomplete;
  if (data.front() != '$') {
    *error = std::string("RDB transfer: expected '$', got '") + data.front() + "'";
    return FrameStatus::kMalformed;
  }
  const size_t crlf = data.find("\r\n");
  if (crlf == std::string_view::npos) {
    if (data.size() > kMaxLineBytes) {
      *error = "RDB transfer: header line too long";
      return FrameStatus::kMalformed;
    }
    return FrameStatus::kIncomplete;
  }
  const std::string_view line = data.substr(1, crlf - 1);
  header->length = crlf + 2;
  constexpr std::string_view kEof = "EOF:";
  if (line.starts_with(kEof)) {
    if (line.size() != kEof.size() + RdbHeader::kEofMarkBytes) {
      *error = "RDB transfer: EOF mark is not 40 bytes";
      return FrameStatus::kMalformed;
    }
    header->eof_mark = line.substr(kEof.size());
    return FrameStatus::kComplete;
  }
  if (!ParseInt(line, &header->payload_bytes) || header->payload_bytes < 0) {
    *error = "RDB transfer: invalid length";
    return FrameStatus::kMalformed;
  }
  return FrameStatus::kComplete;
}

}  // namespace lockstep
