// Where one RESP2 message ends in a byte stream, so that the fault proxy (live/fault_proxy.h)
// drops, delays or forwards whole messages, never half of one.
//
// Requests are framed as redis-server 7.0 frames them (networking.c, processInputBuffer): a
// buffer starting with '*' is a multibulk array of bulk strings, anything else is an inline
// command line ending at '\n'. Replies are framed as RESP2 replies: simple strings, errors,
// integers, bulk strings (nil included) and arrays of any of these, nested. A bare newline is
// framed too, as an empty message: a master sends "\n" to a replica that waits for its RDB, a
// replica sends it to its master while it loads one, and redis-server skips an empty inline
// line without a reply.
//
// Nothing is copied: a frame points into the buffer it was found in.
#ifndef LOCKSTEP_LIVE_RESP_FRAME_H_
#define LOCKSTEP_LIVE_RESP_FRAME_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lockstep {

enum class RespGrammar : uint8_t { kRequest, kReply };

// How deep reply arrays may nest (hiredis 0.14 reads 7 levels; a Lua script can return more).
inline constexpr size_t kMaxRespNesting = 1024;

enum class FrameStatus : uint8_t { kComplete, kIncomplete, kMalformed };

struct RespFrame {
  // A frame's type for an inline command line (or a bare newline); the others are the RESP
  // type bytes '+', '-', ':', '$', '*'.
  static constexpr char kInline = 'i';
  static constexpr size_t kHeadItems = 2;

  size_t length = 0;  // Bytes of the whole message, terminators included.
  char type = 0;
  // '*': the number of elements (-1 for a nil array); '$': the length (-1 for nil); inline:
  // the number of words (0 for an empty line, which redis-server skips without a reply).
  int64_t count = 0;
  // Enough to tell what a message is without a second parse: the first elements of a
  // top-level array while they are strings or integers (a command's name, a pub/sub
  // message's kind and channel), the first words of an inline line, or the payload of a
  // top-level string or integer. Views into the parsed buffer.
  std::array<std::string_view, kHeadItems> head{};
  size_t head_size = 0;
};

// Looks for one whole message at the start of `data`. kComplete fills *frame; kIncomplete means
// more bytes are needed; kMalformed puts the reason in *error (redis-server would answer a
// protocol error and close the connection; the proxy closes it).
//
// Limits, as redis-server 7.0 sets them for requests: an inline line or a length line of at
// most 64 KiB, a bulk of at most 512 MiB, at most INT32_MAX elements; arrays nest at most
// kMaxRespNesting deep (a reply only: request elements must be bulk strings).
FrameStatus NextRespFrame(std::string_view data, RespGrammar grammar, RespFrame* frame,
                          std::string* error);

// The header of the RDB payload a master sends after +FULLRESYNC: "$<length>\r\n", then exactly
// that many bytes and no CRLF after them; or, for a diskless transfer to a replica that
// announced "capa eof" (redis-server 7.0's default), "$EOF:<40 bytes>\r\n", then bytes that end
// with the same 40 bytes.
struct RdbHeader {
  static constexpr size_t kEofMarkBytes = 40;
  size_t length = 0;           // Bytes of the header line, CRLF included.
  int64_t payload_bytes = -1;  // -1: delimited by eof_mark instead.
  std::string_view eof_mark;   // View into the parsed buffer.
};

FrameStatus ParseRdbHeader(std::string_view data, RdbHeader* header, std::string* error);

}  // namespace lockstep

#endif  // LOCKSTEP_LIVE_RESP_FRAME_H_
