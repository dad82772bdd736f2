#include "core/cluster.h"

#include <cassert>
#include <cctype>
#include <climits>
#include <cmath>
#include <utility>

#include "base/ascii.h"
#include "core/cli_format.h"
#include "core/commands.h"
#include "core/server.h"

namespace lockstep {

namespace {

constexpr uint16_t kCrc16Polynomial = 0x1021;

// The byte-at-a-time table of the XMODEM CRC, built at compile time from the polynomial.
constexpr std::array<uint16_t, 256> MakeCrc16Table() {
  std::array<uint16_t, 256> table{};
  for (int byte = 0; byte < 256; ++byte) {
    uint16_t crc = static_cast<uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc & 0x8000) != 0 ? static_cast<uint16_t>((crc << 1) ^ kCrc16Polynomial)
                                : static_cast<uint16_t>(crc << 1);
    }
    table[static_cast<size_t>(byte)] = crc;
  }
  return table;
}
constexpr std::array<uint16_t, 256> kCrc16Table = MakeCrc16Table();
static_assert(kCrc16Table[1] == 0x1021 && kCrc16Table[255] == 0x1ef0);

// C's atoi as glibc implements it (strtol, then the long cut to int): leading blanks, an
// optional sign, digits up to the first non-digit; a value beyond long's range saturates.
// Redis reads EVAL's numkeys this way when it looks for keys (db.c genericGetKeys).
int CAtoi(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r'))) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  // Accumulate the magnitude as unsigned; stop growing once it passes LONG_MAX + 1.
  constexpr unsigned long long kLimit = static_cast<unsigned long long>(LONG_MAX) + 1;
  unsigned long long magnitude = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (magnitude <= kLimit) magnitude = magnitude * 10 + static_cast<unsigned>(s[i] - '0');
  }
  long value = 0;
  if (negative) {
    value = magnitude >= kLimit ? LONG_MIN : -static_cast<long>(magnitude);
  } else {
    value = magnitude >= kLimit ? LONG_MAX : static_cast<long>(magnitude);
  }
  // (int)long keeps the low 32 bits (two's complement), as on every platform Redis runs on.
  return static_cast<int>(static_cast<uint32_t>(static_cast<unsigned long>(value)));
}

}  // namespace

uint16_t Crc16(std::string_view data) {
  uint16_t crc = 0;
  for (const char c : data) {
    const auto byte = static_cast<uint8_t>(c);
    crc = static_cast<uint16_t>((crc << 8) ^ kCrc16Table[((crc >> 8) ^ byte) & 0xff]);
  }
  return crc;
}

int KeyHashSlot(std::string_view key) {
  const size_t open = key.find('{');
  if (open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    // A tag needs a '}' after the '{' and at least one byte between them.
    if (close != std::string_view::npos && close > open + 1) {
      return Crc16(key.substr(open + 1, close - open - 1)) & (kClusterSlots - 1);
    }
  }
  return Crc16(key) & (kClusterSlots - 1);
}

std::vector<SlotRange> EvenSlotRanges(int masters) {
  assert(masters >= 1 && masters <= kClusterSlots);
  // redis-cli keeps the running position in a float; doing the same gives its exact bounds.
  const float per_node = static_cast<float>(kClusterSlots) / static_cast<float>(masters);
  std::vector<SlotRange> ranges;
  long first = 0;
  float cursor = 0.0f;
  for (int i = 0; i < masters; ++i) {
    long last = std::lround(cursor + per_node - 1);
    if (last > kClusterSlots || i == masters - 1) last = kClusterSlots - 1;
    if (last < first) last = first;
    ranges.push_back({static_cast<int>(first), static_cast<int>(last)});
    first = last + 1;
    cursor += per_node;
  }
  assert(ranges.back().last == kClusterSlots - 1);
  return ranges;
}

ClusterTopology::ClusterTopology(std::vector<std::string> endpoints)
    : endpoints_(std::move(endpoints)) {
  assert(!endpoints_.empty() && endpoints_.size() <= 1000);
  owner_.fill(kUnassigned);
}

void ClusterTopology::Assign(int node, SlotRange range) {
  assert(node >= 0 && node < node_count());
  assert(range.first >= 0 && range.first <= range.last && range.last < kClusterSlots);
  for (int slot = range.first; slot <= range.last; ++slot) {
    int16_t& owner = owner_[static_cast<size_t>(slot)];
    if (owner == kUnassigned) --unassigned_;
    owner = static_cast<int16_t>(node);
  }
}

ClusterTopology ClusterTopology::Even(std::vector<std::string> endpoints) {
  ClusterTopology topology(std::move(endpoints));
  const std::vector<SlotRange> ranges = EvenSlotRanges(topology.node_count());
  for (int node = 0; node < topology.node_count(); ++node) {
    topology.Assign(node, ranges[static_cast<size_t>(node)]);
  }
  assert(topology.all_slots_served());
  return topology;
}

std::vector<SlotRange> ClusterTopology::RangesOf(int node) const {
  std::vector<SlotRange> ranges;
  for (int slot = 0; slot < kClusterSlots; ++slot) {
    if (owner(slot) != node) continue;
    if (!ranges.empty() && ranges.back().last == slot - 1) {
      ranges.back().last = slot;
    } else {
      ranges.push_back({slot, slot});
    }
  }
  return ranges;
}

KeyPositions CommandKeyPositions(const CommandSpec& spec, const Argv& argv) {
  const size_t argc = argv.size();
  if (spec.handler == cmd::Eval) {
    // evalGetKeys: genericGetKeys(0, 2, 3, 1, ...).
    if (argc < 3) return {};
    const int numkeys = CAtoi(argv[2]);
    if (numkeys < 1 || static_cast<size_t>(numkeys) > argc - 3) return {};
    return {3, 2 + static_cast<size_t>(numkeys), 1};
  }
  if (spec.first_key <= 0) return {};
  // getKeysUsingLegacyRangeSpec. The table's last_key is a position, or counts from the end
  // when negative.
  const auto first = static_cast<int64_t>(spec.first_key);
  const int64_t last =
      spec.last_key >= 0 ? spec.last_key : static_cast<int64_t>(argc) + spec.last_key;
  if (last < first) return {};
  // A variadic command called with too few arguments names no keys; it then fails its own
  // syntax check. (Fixed-arity commands passed their arity check before getting here.)
  if (last >= static_cast<int64_t>(argc)) return {};
  assert(spec.key_step >= 1);
  return {static_cast<size_t>(first), static_cast<size_t>(last),
          static_cast<size_t>(spec.key_step)};
}

SlotQuery QuerySlot(const CommandSpec& spec, const Argv& argv) {
  const KeyPositions keys = CommandKeyPositions(spec, argv);
  if (keys.empty()) return {};
  SlotQuery query;
  query.kind = SlotQuery::Kind::kOneSlot;
  query.slot = KeyHashSlot(argv[keys.first]);
  for (size_t i = keys.first + keys.step; i <= keys.last; i += keys.step) {
    // Redis skips a key equal to the first one without hashing it; the result is the same.
    if (KeyHashSlot(argv[i]) != query.slot) {
      query.kind = SlotQuery::Kind::kCrossSlot;
      return query;
    }
  }
  return query;
}

ScriptClusterFlags ReadScriptClusterFlags(std::string_view body) {
  ScriptClusterFlags flags;
  if (body.substr(0, 2) != "#!") return flags;  // No shebang: compat mode.
  flags.compat = false;
  const size_t newline = body.find('\n');
  if (newline == std::string_view::npos) {
    flags.valid = false;
    return flags;
  }
  // evalExtractShebangFlags: the line is split like a redis-cli line; the first word is the
  // engine, every other one "flags=a,b,...".
  const std::optional<Argv> parts = SplitArgs(body.substr(0, newline));
  if (!parts || parts->empty() || (*parts)[0] != "#!lua") {
    flags.valid = false;
    return flags;
  }
  for (size_t j = 1; j < parts->size(); ++j) {
    const std::string& part = (*parts)[j];
    if (part.compare(0, 6, "flags=") != 0) {
      flags.valid = false;
      return flags;
    }
    std::string_view list = std::string_view(part).substr(6);
    while (!list.empty()) {
      const size_t comma = list.find(',');
      const std::string_view flag = list.substr(0, comma);
      if (flag == "no-cluster") {
        flags.no_cluster = true;
      } else if (flag == "allow-cross-slot-keys") {
        flags.allow_cross_slot = true;
      } else if (flag == "no-writes") {
        flags.no_writes = true;
      } else if (flag == "allow-oom") {
        flags.allow_oom = true;
      } else if (flag != "allow-stale") {
        flags.valid = false;
        return flags;
      }
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
      // "a," ends with an empty flag, which Redis rejects as unknown.
      if (list.empty()) {
        flags.valid = false;
        return flags;
      }
    }
  }
  return flags;
}

namespace {


}  // namespace

int ClientRouteSlot(const Argv& argv) {
  if (argv.size() >= 2 && (EqualsIgnoreCase(argv[0], "subscribe") || EqualsIgnoreCase(argv[0], "unsubscribe") ||
                           EqualsIgnoreCase(argv[0], "publish"))) {
    return KeyHashSlot(argv[1]);
  }
  if (const CommandSpec* spec = Server::Lookup(argv)) {
    const KeyPositions keys = CommandKeyPositions(*spec, argv);
    if (!keys.empty()) return KeyHashSlot(argv[keys.first]);
  }
  return -1;
}

std::string SlotRangesText(const ClusterTopology& topology, int node) {
  std::string out;
  for (const SlotRange& r : topology.RangesOf(node)) {
    out += (out.empty() ? "" : ",") + std::to_string(r.first);
    if (r.last != r.first) out += "-" + std::to_string(r.last);
  }
  return out;
}

}  // namespace lockstep
