// The History on disk, compact: lockstep's binary form, the default of `lockstep run`.
//
// A long run writes millions of events; as JSON Lines each costs ~150 bytes (an hour of
// contention-10: 435 MB), most of it the same keys, names and replies again and again. This
// form keeps what changes: an event is ~11 bytes, and reading it back costs a fraction of
// parsing its JSON line. `lockstep history dump` prints the JSON Lines, byte for byte what the
// jsonl form would have held.
//
// Layout: the 8-byte magic, then records, each starting with its kind byte:
//   0x00..0x0a  an event of that EventType:
//                 presence byte  bit 0 process, 1 thread, 2 op, 3 lock, 4 peer, 5 local_ms,
//                                6 value, 7 detail
//                 t              varint: microseconds since the event before (0 for the first:
//                                its own t)
//                 process        varint name id           (if present)
//                 thread         varint, 0..kMaxThreadIndex
//                 op, lock, peer varint name ids
//                 local_ms       zigzag varint: the change of (local_ms - t_us / 1000) since the
//                                process's last event that had one (its clock's offset: 0 while
//                                the clock runs true)
//                 value          zigzag varint
//                 detail         varint x: even, the text of dictionary entry x/2; odd, a new
//                                text of (x-1)/2 bytes that follows (entered into the dictionary
//                                when at most kDictTextMax bytes long and the dictionary has
//                                fewer than kDictEntries)
//   0x40        a name: varint length, bytes. Names get ids 1, 2, ... in the order they are
//               defined, each before the first event that uses it (0 is no name).
//   0x41        a checkpoint: varint events so far, then the history's hash over them (8 bytes,
//               little-endian). The writer appends one each time it writes a buffer out.
// The seq of an event is its index: no bytes.
//
// The hash (history/jsonl.h) stays FNV-1a over the JSON Lines text of the events, whatever the
// form: the writer hashes the lines it would have written and records the hash in every
// checkpoint; a reader takes the last checkpoint's and hashes only the events after it (a run
// cut short, or a read that stops early) from their JSON lines, decoding the file once more up
// to that checkpoint. `lockstep history dump`
// recomputes it over every line and refuses a file whose checkpoints disagree.
//
// Records are not length-prefixed: a file that ends inside a record (a run killed while
// writing) is a readable prefix of whole events, as a JSON Lines file cut inside a line is.
#ifndef LOCKSTEP_HISTORY_BINARY_H_
#define LOCKSTEP_HISTORY_BINARY_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "history/event.h"

namespace lockstep::history {

inline constexpr std::string_view kBinaryMagic = {"LKSTPHB\x01", 8};

inline constexpr uint8_t kRecordName = 0x40;
inline constexpr uint8_t kRecordCheckpoint = 0x41;
// The detail dictionary's bounds: texts up to this long are kept, this many at most.
inline constexpr size_t kDictTextMax = 64;
inline constexpr size_t kDictEntries = 1 << 16;
// Names a binary history may define.
inline constexpr size_t kMaxBinaryNames = 1 << 20;

// Encodes events of one NameTable (the writer's), in order.
class BinaryEncoder {
 public:
  explicit BinaryEncoder(const NameTable* names) : names_(names) {}

  // Appends the event's record, after a name record for each name it is the first to use.
  // `detail` is the event's detail text (AppendDetailText), empty for none.
  void Append(const Event& e, std::string_view detail, std::string* out);
  static void AppendCheckpoint(uint64_t events, uint64_t hash, std::string* out);

 private:
  uint64_t FileId(Name name, std::string* out);

  const NameTable* names_;
  std::vector<uint32_t> file_ids_;  // By name; 0: not yet defined in the file.
  uint32_t next_file_id_ = 1;
  int64_t last_t_us_ = 0;
  std::vector<int64_t> clock_offsets_;  // By file id of the process (0: none).
  // Looked up by the detail's view: no string is made for a text the dictionary has.
  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, uint32_t, TextHash, std::equal_to<>> dict_;
};

// One record read from a binary history.
enum class RecordKind : uint8_t { kEvent, kName, kCheckpoint };
enum class DecodeStatus : uint8_t { kOk, kNeedMore, kError };

class BinaryDecoder {
 public:
  // Decodes the record at the start of `data`. kOk: *used bytes were one record; an event is in
  // *e (its detail text in the decoder, valid until the next call), a checkpoint in
  // *checkpoint_events and *checkpoint_hash, a name interned into *names. kNeedMore: `data`
  // ends inside the record (nothing changed). kError: *error says what is wrong.
  DecodeStatus Next(std::string_view data, NameTable* names, size_t* used, RecordKind* kind,
                    Event* e, uint64_t* checkpoint_events, uint64_t* checkpoint_hash,
                    std::string* error);

  uint64_t names_defined() const { return names_.size() - 1; }

 private:
  std::vector<Name> names_{names::kNone};  // By file id.
  std::vector<std::string> dict_;
  int64_t last_t_us_ = 0;
  std::vector<int64_t> clock_offsets_;     // By file id of the process.
  std::string text_;
};

}  // namespace lockstep::history

#endif  // LOCKSTEP_HISTORY_BINARY_H_
