// The History on disk: JSON Lines, one event per line.
//
// Keys come in a fixed order and defaults are omitted, so the same run always gives the same
// bytes:
//   {"seq":12,"t":1203000,"type":"ok","process":"c2","thread":0,"op":"acquire","lock":"lock",
//    "local_ms":1767225601203,"value":7,"detail":"acquired (token 7)"}
// Strings are ASCII: bytes outside printable ASCII are written as \u00XX, each standing for one
// byte (not a code point), and read back the same way, so binary-safe values survive.
//
// The history's hash is FNV-1a 64 over these bytes (every line plus its '\n'): the hash of the
// file a run writes, whether it is kept plain or gzip-compressed.
#ifndef LOCKSTEP_HISTORY_JSONL_H_
#define LOCKSTEP_HISTORY_JSONL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "history/event.h"

namespace lockstep::history {

// Appends `s` as a JSON string, quotes included. Histories are byte strings: every byte outside
// printable ASCII is written as \u00XX (one byte, not a code point), so the JSON stays ASCII and
// valid whatever they hold; '"', '\\', newline, return and tab get their short escapes.
void AppendJsonString(std::string* out, std::string_view s);

// Appends the event's line, without the newline.
void AppendJsonLine(const Event& e, const NameTable& names, std::string* out);

// The same for a stream of events of one NameTable: each name's quoted form is made once.
class JsonLineFormatter {
 public:
  explicit JsonLineFormatter(const NameTable* names) : names_(names) {}
  void Append(const Event& e, std::string* out);
  // The same with the detail's text made already (AppendDetailText), as the binary form's
  // writer has it.
  void Append(const Event& e, std::string_view detail, std::string* out);

 private:
  const NameTable* names_;
  std::vector<std::string> quoted_;  // By name; empty until the name is first written.
};

// What a line may say, bounded so that a made-up file cannot make a reader size anything by it
// (a thread index is an index into per-process tables). The model's limits are far inside
// these (at most 256 threads per client, runs of at most 10^15 us).
inline constexpr int kMaxThreadIndex = 1023;
inline constexpr int64_t kMaxEventTimeUs = int64_t{1} << 53;  // Also the bound on |local_ms|.

// Parses one line as AppendJsonLine writes it: "seq", "t" and "type" must be there, no key
// twice, numbers within the bounds above. Names are interned into *names; the detail's
// text is unescaped into *text, which the event's `source` and detail refer to (so *text must
// outlive the event's use). On failure returns false and sets *error (without a position
// prefix: the caller names the line).
bool ParseJsonLine(std::string_view line, NameTable* names, std::string* text, Event* e,
                   std::string* error);

// FNV-1a 64, as the history's hash uses it.
inline constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
inline uint64_t FnvAppend(uint64_t hash, std::string_view bytes) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}
std::string HashHex(uint64_t hash);

}  // namespace lockstep::history

#endif  // LOCKSTEP_HISTORY_JSONL_H_
