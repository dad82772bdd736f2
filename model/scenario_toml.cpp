// The scenario loader. It reads in two phases:
//
//  1. Every table on its own: allowed keys, types, ranges, required keys, and names declared
//     twice. Each problem is recorded with its position and the loader carries on, so that the
//     problem reported is the first one in the file, not the first one in this code's order.
//  2. Only when phase 1 found nothing: references between tables (names in targets, peers,
//     links, gc.clients and replica_of; times against duration_ms; "sentinel" in a partition
//     against [sentinel]). Running these after a clean phase 1 keeps one mistake from being
//     reported as another: a node whose name has the wrong type would otherwise show up as "unknown
//     name" wherever it is used.
//
// Positions come from toml++'s source regions: a value's position for a bad value, a key's
// position for an unknown key, a table's header for a missing key.
#include "model/scenario_toml.h"

#include <toml++/toml.h>

#include "base/ascii.h"
#include "base/read_file.h"
#include "core/script_host.h"
#include "model/scenario_names.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <span>
#include <utility>
#include <vector>

namespace lockstep {

std::string ScenarioError::ToString() const {
  std::string out = file;
  if (line > 0) out += ":" + std::to_string(line) + ":" + std::to_string(column);
  out += ": ";
  if (!key.empty()) out += "key '" + key + "': ";
  out += message;
  return out;
}

namespace {

using KeyList = std::span<const std::string_view>;

// The keys each table takes. docs/scenario-format.md lists the same keys in the same order.
constexpr std::string_view kRootKeys[] = {"name",          "description", "seed",     "duration_ms",
                                          "start_unix_ms", "nodes",       "clients",  "network",
                                          "replication",   "sentinel",    "protocol", "workload",
                                          "faults",        "gc",          "checks",   "expect",
                                          "resource",      "cluster",     "fuzz"};
constexpr std::string_view kNodeKeys[] = {"name", "persistence", "replica_of", "clock",
                                          "maxmemory_mb"};
constexpr std::string_view kClientKeys[] = {
    "name",     "count",   "name_prefix", "threads",     "role",         "clock",
    "mode",     "wait_ms", "lease_ms",    "critical_ms", "think_ms",     "reentry",
    "ops_per_thread",      "stagger_ms",  "side"};
constexpr std::string_view kClockKeys[] = {"offset_ms", "drift_ppm", "ntp", "slew_ppm", "jumps"};
constexpr std::string_view kJumpKeys[] = {"at_ms", "by_ms"};
constexpr std::string_view kNetworkKeys[] = {"latency_ms", "loss", "duplicate", "reorder", "links"};
constexpr std::string_view kReplicationKeys[] = {"lag_ms"};
constexpr std::string_view kSentinelKeys[] = {"enabled", "down_after_ms", "client_rediscover_ms"};
constexpr std::string_view kClusterKeys[] = {"enabled"};
constexpr std::string_view kProtocolKeys[] = {
    "kind",       "version",        "lock_name",         "watchdog_timeout_ms",
    "timeout_ms", "retry_attempts", "retry_interval_ms", "scripts",
    "fair_wait_timeout_ms", "permits", "client"};
constexpr std::string_view kWorkloadKeys[] = {"mode",     "wait_ms", "lease_ms",      "critical_ms",
                                              "think_ms", "reentry", "ops_per_thread",
                                              "read_ratio", "stagger_ms"};
constexpr std::string_view kFaultKeys[] = {"kind",    "at_ms", "duration_ms", "targets", "peers",
                                           "one_way", "by_ms", "extra_ms",    "rate"};
constexpr std::string_view kGcKeys[] = {"enabled", "clients", "every_ms", "pause_ms"};
constexpr std::string_view kChecksKeys[] = {"liveness_bound_ms"};
constexpr std::string_view kResourceKeys[] = {"fencing"};
constexpr std::string_view kFuzzKeys[] = {
    "faults",   "fault_count", "fault_duration_ms", "clock_jump_ms", "drift_ppm",
    "latency_spike_ms", "loss_rate", "duplicate_rate", "clients", "threads",
    "lease_ms", "wait_ms", "critical_ms", "think_ms", "replication_lag_ms",
    "versions", "max_events", "max_case_s"};
constexpr std::string_view kRangeKeys[] = {"min", "max"};

// Where each key belongs, for "'lease_ms' belongs in [workload]" when a key lands under the
// wrong header (the commonest TOML mistake: a top-level key written after a [table]).
struct Section {
  std::string_view title;  // How the message names it.
  KeyList keys;
};
constexpr Section kSections[] = {
    {"at the top level, above the first [table] header", kRootKeys},
    {"in [workload]", kWorkloadKeys},
    {"in [protocol]", kProtocolKeys},
    {"in [network]", kNetworkKeys},
    {"in [sentinel]", kSentinelKeys},
    {"in [replication]", kReplicationKeys},
    {"in [gc]", kGcKeys},
    {"in [checks]", kChecksKeys},
    {"in [resource]", kResourceKeys},
    {"in [cluster]", kClusterKeys},
    {"in a [[nodes]] table", kNodeKeys},
    {"in a [[clients]] table", kClientKeys},
    {"in a [[faults]] table", kFaultKeys},
    {"in a clock table", kClockKeys},
    {"in [fuzz]", kFuzzKeys},
};

// The words for the enums' values (model/scenario_names.h), as lists to choose from.
constexpr auto kPersistenceNames = NamesOf(kPersistences);
constexpr auto kRoleNames = NamesOf(kRoles);
constexpr auto kSideNames = NamesOf(kSides);
constexpr auto kModeNames = NamesOf(kModes);
constexpr auto kExpectationNames = NamesOf(kExpectations);
constexpr auto kDistNames = NamesOf(kDistributions);


// Process names the history uses for itself. "sentinel" may also appear in a partition.
constexpr std::string_view kSentinelName = "sentinel";
constexpr std::string_view kReservedNames[] = {kSentinelName, "sim"};

// ---- Small text helpers ------------------------------------------------------------------

std::string_view TypeName(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "string";
    case toml::node_type::integer: return "integer";
    case toml::node_type::floating_point: return "float";
    case toml::node_type::boolean: return "boolean";
    case toml::node_type::table: return "table";
    case toml::node_type::array: return "array";
    case toml::node_type::date: return "date";
    case toml::node_type::time: return "time";
    case toml::node_type::date_time: return "date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

// Shortest text that reads back as the same double, without an exponent for the magnitudes a
// scenario uses ("100000", "0.5"; 1e+20 only for values beyond any limit).
std::string FormatNumber(double v) {
  char buf[400];  // Fixed notation of the largest double needs 309 digits.
  const auto format = std::abs(v) < 1e15 ? std::chars_format::fixed : std::chars_format::general;
  const auto result = std::to_chars(buf, buf + sizeof buf, v, format);
  assert(result.ec == std::errc());
  return std::string(buf, result.ptr);
}

std::string Join(KeyList items, size_t limit = std::numeric_limits<size_t>::max()) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i) {
    if (i > 0) out += ", ";
    out += items[i];
  }
  if (items.size() > limit) out += ", ... (" + std::to_string(items.size()) + " in all)";
  return out;
}

bool IsBareKey(std::string_view k) {
  return !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

// A key as TOML would need it written: bare, or quoted ("c1->n1").
std::string QuoteKey(std::string_view k) {
  if (IsBareKey(k)) return std::string(k);
  std::string out = "\"";
  for (char c : k) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string Child(const std::string& path, std::string_view key) {
  return path.empty() ? QuoteKey(key) : path + "." + QuoteKey(key);
}
std::string Element(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

// Optimal string alignment distance: Levenshtein plus adjacent transpositions, so that
// "laese_ms" is one edit from "lease_ms".
size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

// A key without its unit word, so that "lease", "lease_s" and "lease_seconds" all lead to
// "lease_ms": the unit is the part people get wrong most.
std::string_view Stem(std::string_view key) {
  constexpr std::string_view kUnits[] = {"ms",      "us",     "ns",   "s",   "sec",     "secs",
                                         "seconds", "millis", "msec", "min", "minutes", "ppm"};
  const size_t underscore = key.rfind('_');
  if (underscore == std::string_view::npos) return key;
  const std::string_view unit = key.substr(underscore + 1);
  for (std::string_view u : kUnits) {
    if (unit == u) return key.substr(0, underscore);
  }
  return key;
}

// The candidate a typo most likely meant, or "" when none is close enough to be a good guess.
std::string_view Closest(std::string_view word, KeyList candidates) {
  const std::string lower = AsciiLowered(word);
  for (std::string_view c : candidates) {
    if (Stem(lower) == Stem(c)) return c;
  }
  std::string_view best;
  size_t best_distance = std::numeric_limits<size_t>::max();
  for (std::string_view c : candidates) {
    const size_t d = EditDistance(lower, c);
    if (d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  const size_t threshold = std::max<size_t>(2, lower.size() / 3);
  return best_distance <= threshold ? best : std::string_view();
}

std::string DidYouMean(std::string_view word, KeyList candidates) {
  const std::string_view guess = Closest(word, candidates);
  return guess.empty() ? std::string() : "did you mean '" + std::string(guess) + "'? ";
}

// " (write 4 without the quotes)" for a number written as a string, else "".
std::string QuotedNumberHint(const toml::node& n) {
  const auto* s = n.as_string();
  if (s == nullptr || s->get().empty()) return "";
  const std::string& text = s->get();
  double v = 0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), v);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) return "";
  return " (write " + text + " without the quotes)";
}

bool IsValidName(std::string_view name) {
  return !name.empty() && name.size() <= static_cast<size_t>(kMaxNameLength) &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
         });
}

// Characters a name or a one-line text must not hold: controls (C0, DEL, C1), line and
// paragraph separators, and every code point Unicode 15 makes invisible: its format characters
// (general category Cf: zero-width spaces and joiners, direction marks and isolates, the byte
// order mark, the soft hyphen, Arabic and Mongolian marks, tags ...) and the other
// default-ignorable code points (variation selectors, fillers), which make two different strings
// look alike.
bool IsHiddenCodePoint(uint32_t cp) {
  struct Range {
    uint32_t first, last;
  };
  static constexpr Range kHidden[] = {
      {0x00ad, 0x00ad},   {0x034f, 0x034f},   {0x0600, 0x0605},   {0x061c, 0x061c},
      {0x06dd, 0x06dd},   {0x070f, 0x070f},   {0x0890, 0x0891},   {0x08e2, 0x08e2},
      {0x115f, 0x1160},   {0x17b4, 0x17b5},   {0x180b, 0x180f},   {0x200b, 0x200f},
      {0x2028, 0x202e},   {0x2060, 0x206f},   {0x3164, 0x3164},   {0xfe00, 0xfe0f},
      {0xfeff, 0xfeff},   {0xffa0, 0xffa0},   {0xfff0, 0xfffb},   {0x110bd, 0x110bd},
      {0x110cd, 0x110cd}, {0x13430, 0x1343f}, {0x1bca0, 0x1bca3}, {0x1d173, 0x1d17a},
      {0xe0000, 0xe0fff},
  };
  if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0)) return true;
  for (const Range& r : kHidden) {
    if (cp < r.first) return false;  // Sorted.
    if (cp <= r.last) return true;
  }
  return false;
}

// The code point of the UTF-8 sequence at s[i] and its length in bytes, or length 0 for a byte
// that does not start a whole sequence (a stray continuation byte, a sequence cut short).
std::pair<uint32_t, size_t> CodePointAt(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const size_t len =
      c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
  if (len == 0 || i + len > s.size()) return {c, 0};
  uint32_t cp = len == 1 ? c : c & (0x7fu >> len);
  for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3fu);
  return {cp, len};
}

// A string for a message: characters that would not show (controls, zero-width and direction
// marks, invalid bytes) written as \u{...} or \x.., and a long one cut short, so that a message
// stays one readable line whatever the file holds.
std::string Shown(std::string_view s) {
  constexpr size_t kShownMax = 80;
  std::string out;
  size_t i = 0;
  while (i < s.size() && out.size() < kShownMax) {
    const auto [cp, len] = CodePointAt(s, i);
    char buf[16];
    if (len == 0) {
      std::snprintf(buf, sizeof buf, "\\x%02x", cp);
      out += buf;
      ++i;
      continue;
    }
    if (IsHiddenCodePoint(cp)) {
      std::snprintf(buf, sizeof buf, "\\u{%04X}", cp);
      out += buf;
    } else {
      out.append(s.substr(i, len));
    }
    i += len;
  }
  if (i < s.size()) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

// The first character of `s` that a name or a one-line text must not hold, described
// ("U+200B, an invisible format character ..."), or "" when there is none: controls (NUL, tab,
// line breaks, C1), and the invisible format characters that make two different strings look
// the same (zero-width spaces and joiners, direction marks, the byte order mark, soft hyphen).
// toml++ has already refused invalid UTF-8.
std::string HiddenCharacter(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto [cp, len] = CodePointAt(s, i);
    if (len == 0) return "an invalid byte";
    if (IsHiddenCodePoint(cp)) {
      char code[16];
      std::snprintf(code, sizeof code, "U+%04X", cp);
      const bool control = cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0);
      const bool separator = cp == 0x2028 || cp == 0x2029;
      return std::string(code) +
             (control     ? ", a control character"
              : separator ? ", a line or paragraph separator"
                          : ", an invisible format character (zero-width, direction mark or "
                            "another character that does not show)");
    }
    i += len;
  }
  return "";
}

// ---- Nesting, before parsing --------------------------------------------------------------

// toml++ recurses once per nested table, array and dotted-key part, so a key 100,000 parts deep
// overflows the stack before any check of ours could run. This scans the text, without parsing
// it, for the deepest point: the brackets and braces open there plus the parts of the keys that
// lead to it. Strings and comments are skipped. It is a bound, not a parser: on text that is not
// TOML it may count oddly, but it always ends, in one pass, and what it lets through toml++
// parses without deep recursion. Returns the 1-based line and column where the depth first
// passes the limit.
std::optional<std::pair<int, int>> TooDeep(std::string_view text) {
  std::vector<int> open;  // Per open bracket: the levels it added (itself and its key's parts).
  int nested = 0;         // Sum of `open`.
  int key_parts = 0;      // Parts of the key just read (before '='), waiting for a bracket.
  int dots = 0;           // Dots in the key (or value) being read.
  int line = 1;
  size_t line_start = 0;
  auto at = [&](size_t i) {
    return std::pair<int, int>(line, static_cast<int>(i - line_start) + 1);
  };
  auto new_line = [&](size_t i) {
    ++line;
    line_start = i + 1;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
      case '\n':
        new_line(i);
        dots = 0;
        key_parts = 0;
        break;
      case '#':
        while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
        break;
      case '"':
      case '\'': {
        const std::string_view triple = c == '"' ? R"(""")" : "'''";
        const bool multi = text.substr(i, 3) == triple;
        i += multi ? 3 : 1;
        // Ends on the closing quote(s), or on the line break of an unterminated one-line string
        // (which the loop then counts; the parser will report the string).
        while (i < text.size()) {
          if (multi ? text.substr(i, 3) == triple : text[i] == c) {
            if (multi) i += 2;
            break;
          }
          if (text[i] == '\n') {
            if (!multi) {
              --i;
              break;
            }
            new_line(i);
          } else if (c == '"' && text[i] == '\\' && i + 1 < text.size() && text[i + 1] != '\n') {
            ++i;  // An escaped character, perhaps a quote.
          }
          ++i;
        }
        break;
      }
      case '.':
        ++dots;
        if (nested + key_parts + dots + 1 > kMaxTomlNesting) return at(i);
        break;
      case '=':
        key_parts = dots + 1;
        dots = 0;
        break;
      case ',':
        key_parts = 0;
        dots = 0;
        break;
      case '[':
      case '{':
        open.push_back(key_parts + 1);
        nested += key_parts + 1;
        key_parts = 0;
        dots = 0;
        if (nested > kMaxTomlNesting) return at(i);
        break;
      case ']':
      case '}':
        if (!open.empty()) {
          nested -= open.back();
          open.pop_back();
        }
        key_parts = 0;
        dots = 0;
        break;
      default: break;
    }
  }
  return std::nullopt;
}

// ---- Syntax errors -----------------------------------------------------------------------

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The table a header like "nodes.clock" names, written the way the loader writes keys, with
// the index of the current [[array]] element: "nodes[1].clock".
std::string IndexedTablePath(std::string_view header, bool array_header,
                             std::map<std::string, int>* array_counts) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = header.find('.', start);
    parts.emplace_back(Trim(header.substr(start, dot - start)));
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  std::string raw;
  for (const std::string& p : parts) raw += (raw.empty() ? "" : ".") + p;
  if (array_header) ++(*array_counts)[raw];
  std::string out;
  raw.clear();
  for (const std::string& p : parts) {
    raw += (raw.empty() ? "" : ".") + p;
    out += (out.empty() ? "" : ".") + p;
    const auto it = array_counts->find(raw);
    if (it != array_counts->end()) out += "[" + std::to_string(it->second - 1) + "]";
  }
  return out;
}

// toml++ reports a syntax error's position but not the key it was reading. This recovers the
// key from the text: the last table header above the line, and the key before '=' on the line.
// It is a best effort (a header-like line inside a multi-line string would fool it); when the
// error line holds no key, it names the enclosing table.
std::string SyntaxErrorKey(std::string_view text, uint32_t error_line) {
  std::string table;
  std::map<std::string, int> array_counts;
  uint32_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size() && line_no < error_line) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = Trim(text.substr(pos, end - pos));
    ++line_no;
    pos = end + 1;
    const bool array_header = line.starts_with("[[");
    if (line.starts_with("[")) {
      const size_t open = array_header ? 2 : 1;
      const size_t close = line.find(']', open);
      table = IndexedTablePath(
          line.substr(open,
                      close == std::string_view::npos ? std::string_view::npos : close - open),
          array_header, &array_counts);
      if (line_no == error_line) return table;
      continue;
    }
    if (line_no != error_line) continue;
    const size_t equals = line.find('=');
    if (equals == std::string_view::npos) return table;
    const std::string_view key = Trim(line.substr(0, equals));
    const bool key_like = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_-.\"' >", c) != nullptr;
    });
    if (!key_like) return table;
    return table.empty() ? std::string(key) : table + "." + std::string(key);
  }
  return table;
}

ScenarioError SyntaxError(const toml::parse_error& e, std::string_view text,
                          const std::string& file) {
  ScenarioError error;
  error.file = file;
  error.line = static_cast<int>(e.source().begin.line);
  error.column = static_cast<int>(e.source().begin.column);
  error.key = SyntaxErrorKey(text, e.source().begin.line);
  std::string_view description = e.description();
  constexpr std::string_view kPrefix = "Error while ";
  if (description.starts_with(kPrefix)) {
    description.remove_prefix(kPrefix.size());
    error.message = "TOML syntax error while " + std::string(description);
  } else {
    error.message = "TOML syntax error: " + std::string(description);
  }
  // "30000ms", "0.5s": a unit after a number is the mistake people make most with *_ms keys.
  const bool unit_key = error.key.ends_with("_ms") || error.key.ends_with("_ppm");
  if (unit_key && error.message.find("saw '") != std::string::npos) {
    const size_t saw = error.message.find("saw '") + 5;
    if (saw < error.message.size() &&
        std::isalpha(static_cast<unsigned char>(error.message[saw]))) {
      error.message += "; write the number alone, the unit is already in the key's name";
    }
  }
  return error;
}

// ---- The loader --------------------------------------------------------------------------

class Loader {
 public:
  Loader(std::string file, std::filesystem::path directory)
      : file_(std::move(file)), directory_(std::move(directory)) {}

  std::optional<Scenario> Load(const toml::table& root, ScenarioError* error);

 private:
  // Which kind of declared name a reference needs.
  // kPartitionSide: a node, a client, or the Sentinel (partitions can cut a master off from it).
  enum class Want : uint8_t { kProcess, kPartitionSide, kNode, kClient, kMasterWithReplica };
  struct Declared {
    bool is_node = false;
    size_t index = 0;  // Into Scenario::nodes or Scenario::clients.
    uint32_t line = 0;
  };
  struct NameUse {
    std::string name;
    toml::source_region where;
    std::string key;
    Want want = Want::kProcess;
    std::string rule;  // Says what the key takes, for the message: "lose_replies targets nodes".
  };
  struct ReplicaUse {
    size_t node_index = 0;
    std::string master;
    toml::source_region where;
    std::string key;
  };
  struct TimeUse {
    int64_t at_us = 0;
    toml::source_region where;
    std::string key;
  };
  // A client role other than "worker", checked against protocol.kind in phase 2.
  struct RoleUse {
    std::string role;
    toml::source_region where;
    std::string key;
  };
  // A workload key whose validity depends on protocol.kind (side, a lease of 0 or less),
  // checked in phase 2.
  struct WorkloadUse {
    int64_t lease_us = 0;
    toml::source_region where;
    std::string key;
  };
  enum class Sign : uint8_t { kAny, kNonNegative, kPositive, kNonZero };

  // What a recorded problem is, so that a missing key can give way to an unknown key in the
  // same table: for { at_ms = 1, by_sm = 2 } the useful report is "did you mean 'by_ms'?", not
  // "by_ms is missing" (which, positioned at the table's start, would otherwise come first).
  enum class Finding : uint8_t { kInvalid, kMissing, kUnknownKey };
  struct Recorded {
    ScenarioError error;
    Finding finding = Finding::kInvalid;
    const toml::table* table = nullptr;  // For kMissing and kUnknownKey.
  };

  void Record(const toml::source_region& where, std::string key, std::string message,
              Finding finding, const toml::table* table);
  void Problem(const toml::source_region& where, std::string key, std::string message) {
    Record(where, std::move(key), std::move(message), Finding::kInvalid, nullptr);
  }
  void Missing(const toml::table& t, std::string key, const std::string& why) {
    Record(t.source(), std::move(key), "missing; " + why, Finding::kMissing, &t);
  }

  // Readers. Each returns nullopt both when the key is absent and when its value is wrong (then
  // the problem is recorded); callers keep the default in both cases.
  bool CheckKeys(const toml::table& t, const std::string& path, KeyList allowed,
                 std::string_view owner);
  const toml::table* SubTable(const toml::table& parent, std::string_view key,
                              const std::string& path);
  const toml::array* TableArray(const toml::table& parent, std::string_view key,
                                const std::string& path, std::string_view example);
  void Require(const toml::table& t, std::string_view key, const std::string& path,
               std::string_view why);
  std::optional<std::string> String(const toml::table& t, std::string_view key,
                                    const std::string& path);
  std::optional<std::string> String(const toml::node& n, const std::string& key);
  std::optional<bool> Bool(const toml::table& t, std::string_view key, const std::string& path);
  // A one-line text (description, lock_name): at most kMaxTextBytes, no hidden characters.
  std::optional<std::string> Text(const toml::node& n, const std::string& key);
  // Whether a script file can stand in for a stock script: a regular file of at most
  // kMaxScriptBytes that reads and compiles as Redis 7.0 compiles it. Its problem, or nullopt.
  std::optional<std::string> CheckScript(const std::filesystem::path& path);
  std::optional<int64_t> Integer(const toml::table& t, std::string_view key,
                                 const std::string& path, int64_t min, int64_t max);
  std::optional<double> Number(const toml::node& n, const std::string& key);
  std::optional<double> NumberIn(const toml::table& t, std::string_view key,
                                 const std::string& path, double min, double max,
                                 std::string_view what);
  std::optional<double> Millis(const toml::node& n, const std::string& key, Sign sign,
                               std::string_view hint = {});
  std::optional<int64_t> DurationUs(const toml::table& t, std::string_view key,
                                    const std::string& path, Sign sign, std::string_view hint = {});
  std::optional<size_t> Choice(const toml::table& t, std::string_view key, const std::string& path,
                               KeyList choices, std::string_view noun);
  std::optional<Distribution> Dist(const toml::node& n, const std::string& key);
  std::optional<Distribution> Dist(const toml::table& t, std::string_view key,
                                   const std::string& path);
  std::vector<std::string> NameList(const toml::table& t, std::string_view key,
                                    const std::string& path, Want want, std::string rule);
  // [fuzz] ranges: a number (min = max) or { min = X, max = Y } with min <= max. Each bound is
  // read as the Range says: an integer or a number within [lo, hi], or milliseconds of the
  // given sign, converted to microseconds as DurationUs converts them.
  struct RangeRule {
    enum class Unit : uint8_t { kInteger, kNumber, kMillis } unit = Unit::kNumber;
    double lo = 0;
    double hi = 0;
    std::string_view what;  // "a probability", for kNumber
    Sign sign = Sign::kNonNegative;  // For kMillis.
  };
  std::optional<double> RangeBound(const toml::node& n, const std::string& key,
                                   const RangeRule& rule);
  std::optional<FuzzRange> Range(const toml::table& t, std::string_view key,
                                 const std::string& path, const RangeRule& rule);

  // Sections, in the order Scenario declares them.
  void ParseRoot(const toml::table& root, Scenario* s);
  void ParseNodes(const toml::table& root, Scenario* s);
  void ParseClients(const toml::table& root, Scenario* s);
  void ParseClock(const toml::table& owner, const std::string& path, ClockSpec* clock);
  void ParseNetwork(const toml::table& t, NetworkSpec* network);
  void ParseSentinel(const toml::table& t, SentinelSpec* sentinel);
  void ParseProtocol(const toml::table& t, ProtocolSpec* protocol);
  void ParseClient(const toml::table& t, const history::ProtocolKind* kind,
                   ProtocolSpec* protocol);
  void ParseWorkload(const toml::table& t, WorkloadSpec* workload);
  // The fields [workload] and a [[clients]] group both take.
  void ParseWorkloadFields(const toml::table& t, const std::string& path, WorkloadOverride* o);
  void ParseFaults(const toml::table& root, Scenario* s);
  void ParseFault(const toml::table& t, const std::string& path, FaultSpec* fault);
  void CheckPeers(const toml::table& t, const std::string& path,
                  const std::vector<std::string>& targets, std::string_view if_empty,
                  std::string_view if_in_targets);
  void ParseGc(const toml::table& t, GcSpec* gc);
  void ParseExpect(const toml::table& t, std::map<std::string, Expectation>* expect);
  void ParseFuzz(const toml::table& t, FuzzSpec* fuzz);
  void Declare(const std::string& name, const toml::source_region& where, const std::string& key,
               bool is_node, size_t index);

  void CheckReferences(const Scenario& s);
  void CheckCluster(const Scenario& s);
  ScenarioError FirstProblem() const;
  std::string DeclaredNames() const;

  const std::string file_;
  const std::filesystem::path directory_;
  std::vector<Recorded> problems_;
  std::map<std::string, Declared> declared_;
  std::vector<std::string> declared_order_;  // For messages: names in file order.
  std::vector<NameUse> name_uses_;
  std::vector<ReplicaUse> replica_uses_;
  std::vector<TimeUse> time_uses_;
  std::vector<RoleUse> role_uses_;
  std::vector<WorkloadUse> side_uses_;
  std::vector<WorkloadUse> lease_uses_;  // Leases of 0 or less (not -1: none given).
  // What a [cluster] cannot be combined with, found where it is written (checked in phase 2).
  std::optional<toml::source_region> cluster_where_;           // The [cluster] table.
  std::optional<toml::source_region> sentinel_enabled_where_;  // sentinel.enabled = true.
  std::optional<toml::source_region> protocol_kind_where_;     // protocol.kind.
  // fuzz.versions entries, checked against the protocol kind's versions in phase 2.
  struct VersionUse {
    std::string version;
    toml::source_region where;
    std::string key;
  };
  std::vector<VersionUse> fuzz_version_uses_;
};

void Loader::Record(const toml::source_region& where, std::string key, std::string message,
                    Finding finding, const toml::table* table) {
  assert((finding == Finding::kInvalid) == (table == nullptr));
  ScenarioError e;
  e.file = file_;
  // A region with no position would only come from a node toml++ did not parse; the root
  // starts at 1:1, so use that rather than print 0:0.
  e.line = where.begin.line > 0 ? static_cast<int>(where.begin.line) : 1;
  e.column = where.begin.column > 0 ? static_cast<int>(where.begin.column) : 1;
  e.key = std::move(key);
  e.message = std::move(message);
  problems_.push_back({std::move(e), finding, table});
}

bool Loader::CheckKeys(const toml::table& t, const std::string& path, KeyList allowed,
                       std::string_view owner) {
  bool ok = true;
  for (auto&& [k, v] : t) {
    const std::string_view key = k.str();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    ok = false;
    std::string hint;
    for (const Section& section : kSections) {
      if (section.keys.data() == allowed.data()) continue;
      if (std::find(section.keys.begin(), section.keys.end(), key) != section.keys.end()) {
        hint = "'" + std::string(key) + "' belongs " + std::string(section.title) + "; ";
        break;
      }
    }
    if (hint.empty()) hint = DidYouMean(key, allowed);
    Record(k.source(), Child(path, key),
           "unknown key; " + hint + std::string(owner) + " takes: " + Join(allowed),
           Finding::kUnknownKey, &t);
  }
  return ok;
}

const toml::table* Loader::SubTable(const toml::table& parent, std::string_view key,
                                    const std::string& path) {
  const toml::node* n = parent.get(key);
  if (n == nullptr) return nullptr;
  if (const toml::table* t = n->as_table()) return t;
  const std::string k = Child(path, key);
  Problem(n->source(), k,
          "must be a table, written [" + k + "] or " + std::string(key) + " = { ... }, got " +
              std::string(TypeName(*n)));
  return nullptr;
}

// `example` shows how to write it: "each written [[nodes]]".
const toml::array* Loader::TableArray(const toml::table& parent, std::string_view key,
                                      const std::string& path, std::string_view example) {
  const toml::node* n = parent.get(key);
  if (n == nullptr) return nullptr;
  const std::string k = Child(path, key);
  const toml::array* a = n->as_array();
  if (a == nullptr) {
    Problem(n->source(), k,
            "must be an array of tables, " + std::string(example) + ", got " +
                std::string(TypeName(*n)));
    return nullptr;
  }
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::node& element = *a->get(i);
    if (!element.is_table()) {
      Problem(element.source(), Element(k, i),
              "must be a table, got " + std::string(TypeName(element)));
    }
  }
  return a;
}

void Loader::Require(const toml::table& t, std::string_view key, const std::string& path,
                     std::string_view why) {
  if (t.contains(key)) return;
  Missing(t, Child(path, key), std::string(why));
}

std::optional<std::string> Loader::String(const toml::node& n, const std::string& key) {
  if (const auto* s = n.as_string()) {
    // No string a scenario takes is longer than a path; names and texts have tighter limits.
    if (s->get().size() > static_cast<size_t>(kMaxPathBytes)) {
      Problem(n.source(), key,
              "is " + std::to_string(s->get().size()) + " bytes long; a string here is at most " +
                  std::to_string(kMaxPathBytes) + " bytes");
      return std::nullopt;
    }
    return s->get();
  }
  Problem(n.source(), key, "must be a string, got " + std::string(TypeName(n)));
  return std::nullopt;
}

std::optional<std::string> Loader::String(const toml::table& t, std::string_view key,
                                          const std::string& path) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  return String(*n, Child(path, key));
}

std::optional<std::string> Loader::Text(const toml::node& n, const std::string& key) {
  std::optional<std::string> v = String(n, key);
  if (!v) return std::nullopt;
  if (v->size() > static_cast<size_t>(kMaxTextBytes)) {
    Problem(n.source(), key,
            "is " + std::to_string(v->size()) + " bytes long; at most " +
                std::to_string(kMaxTextBytes));
    return std::nullopt;
  }
  if (const std::string hidden = HiddenCharacter(*v); !hidden.empty()) {
    Problem(n.source(), key,
            "'" + Shown(*v) + "' holds " + hidden + "; write it with visible characters only");
    return std::nullopt;
  }
  return v;
}

std::optional<std::string> Loader::CheckScript(const std::filesystem::path& path) {
  const std::string shown = path.string();
  std::error_code ec;
  // Not a device, a FIFO or a folder: reading one could block, or never end.
  if (!std::filesystem::is_regular_file(path, ec)) {
    return shown + " is not a regular file; a script is a Lua file";
  }
  // Files under /proc say 0 bytes and may hold anything, or fail to read (/proc/self/mem).
  std::string body, why;
  if (!ReadRegularFile(shown, static_cast<size_t>(kMaxScriptBytes), &body, &why)) {
    if (why.find("more than ") != std::string::npos) {
      return shown + " is more than " + std::to_string(kMaxScriptBytes) +
             " bytes; a script is at most that";
    }
    if (why.rfind("cannot ", 0) == 0) {  // "cannot read: EIO" -> "cannot read FILE: EIO"
      const size_t colon = why.find(':');
      return why.substr(0, colon) + " " + shown + why.substr(colon);
    }
    return shown + " is " + why + "; a script is a Lua file";
  }
  // Compiled as redis-server compiles it for SCRIPT LOAD (without running it), so that a file
  // that is not Lua is refused here, not found out by every release failing with "Error
  // compiling script" while the run reports the rest.
  if (const std::string problem = ScriptHost::CompileError(body); !problem.empty()) {
    return shown + " does not compile: " + problem;
  }
  return std::nullopt;
}

std::optional<bool> Loader::Bool(const toml::table& t, std::string_view key,
                                 const std::string& path) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  if (const auto* b = n->as_boolean()) return b->get();
  Problem(n->source(), Child(path, key), "must be true or false, got " + std::string(TypeName(*n)));
  return std::nullopt;
}

std::optional<int64_t> Loader::Integer(const toml::table& t, std::string_view key,
                                       const std::string& path, int64_t min, int64_t max) {
  assert(min <= max);
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  const std::string k = Child(path, key);
  const auto* i = n->as_integer();
  if (i == nullptr) {
    std::string message =
        "must be an integer, got " + std::string(TypeName(*n)) + QuotedNumberHint(*n);
    if (const auto* f = n->as_floating_point(); f != nullptr && std::trunc(f->get()) == f->get()) {
      message += " (write " + FormatNumber(f->get()) + " without the '.0')";
    }
    Problem(n->source(), k, std::move(message));
    return std::nullopt;
  }
  const int64_t v = i->get();
  if (v < min || v > max) {
    std::string range = max == std::numeric_limits<int64_t>::max()
                            ? "at least " + std::to_string(min)
                            : "between " + std::to_string(min) + " and " + std::to_string(max);
    Problem(n->source(), k, "must be " + range + ", got " + std::to_string(v));
    return std::nullopt;
  }
  return v;
}

std::optional<double> Loader::Number(const toml::node& n, const std::string& key) {
  double v = 0;
  if (const auto* i = n.as_integer()) {
    v = static_cast<double>(i->get());
  } else if (const auto* f = n.as_floating_point()) {
    v = f->get();
  } else {
    Problem(n.source(), key,
            "must be a number, got " + std::string(TypeName(n)) + QuotedNumberHint(n));
    return std::nullopt;
  }
  if (!std::isfinite(v)) {
    Problem(n.source(), key, "must be a finite number, got " + FormatNumber(v));
    return std::nullopt;
  }
  return v;
}

std::optional<double> Loader::NumberIn(const toml::table& t, std::string_view key,
                                       const std::string& path, double min, double max,
                                       std::string_view what) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  const std::string k = Child(path, key);
  const std::optional<double> v = Number(*n, k);
  if (!v) return std::nullopt;
  if (*v < min || *v > max) {
    Problem(n->source(), k,
            "must be " + std::string(what) + " between " + FormatNumber(min) + " and " +
                FormatNumber(max) + ", got " + FormatNumber(*v));
    return std::nullopt;
  }
  return v;
}

// A number of milliseconds (integer or fractional) checked for sign and magnitude.
std::optional<double> Loader::Millis(const toml::node& n, const std::string& key, Sign sign,
                                     std::string_view hint) {
  const std::optional<double> ms = Number(n, key);
  if (!ms) return std::nullopt;
  const std::string got = ", got " + FormatNumber(*ms);
  const std::string suffix = hint.empty() ? std::string() : "; " + std::string(hint);
  if ((sign == Sign::kNonNegative || sign == Sign::kPositive) && *ms < 0) {
    Problem(n.source(), key, "must not be negative" + got + suffix);
    return std::nullopt;
  }
  if (sign == Sign::kPositive && *ms == 0) {
    Problem(n.source(), key, "must be greater than 0" + suffix);
    return std::nullopt;
  }
  if (sign == Sign::kNonZero && *ms == 0) {
    Problem(n.source(), key, "must not be 0" + suffix);
    return std::nullopt;
  }
  if (std::abs(*ms) > static_cast<double>(kMaxDurationMs)) {
    const std::string max = std::to_string(kMaxDurationMs);
    const bool signed_value = sign == Sign::kAny || sign == Sign::kNonZero;
    Problem(n.source(), key,
            (signed_value ? "must be between -" + max + " and " + max : "must be at most " + max) +
                " (about 31 years)" + got);
    return std::nullopt;
  }
  // The simulator counts whole microseconds: a value that must not be 0 must not round to 0.
  if ((sign == Sign::kPositive || sign == Sign::kNonZero) && std::llround(*ms * 1000) == 0) {
    Problem(n.source(), key,
            "rounds to 0 microseconds, and it must not be 0; the smallest duration is 0.001 (1 us)" +
                got + suffix);
    return std::nullopt;
  }
  return ms;
}

// Milliseconds in the file, microseconds in the Scenario. Fractions finer than a microsecond
// are rounded to the nearest one.
std::optional<int64_t> Loader::DurationUs(const toml::table& t, std::string_view key,
                                          const std::string& path, Sign sign,
                                          std::string_view hint) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  const std::optional<double> ms = Millis(*n, Child(path, key), sign, hint);
  if (!ms) return std::nullopt;
  return std::llround(*ms * 1000);
}

std::optional<size_t> Loader::Choice(const toml::table& t, std::string_view key,
                                     const std::string& path, KeyList choices,
                                     std::string_view noun) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  const std::string k = Child(path, key);
  const std::optional<std::string> v = String(*n, k);
  if (!v) return std::nullopt;
  for (size_t i = 0; i < choices.size(); ++i) {
    if (*v == choices[i]) return i;
  }
  Problem(n->source(), k,
          "unknown " + std::string(noun) + " '" + *v + "'; " + DidYouMean(*v, choices) + "known " +
              std::string(noun) + "s: " + Join(choices));
  return std::nullopt;
}

// A distribution: a plain number (fixed, in ms) or a table { dist = "...", ... }.
std::optional<Distribution> Loader::Dist(const toml::node& n, const std::string& key) {
  if (n.is_number()) {
    const std::optional<double> ms = Millis(n, key, Sign::kNonNegative);
    if (!ms) return std::nullopt;
    return Distribution::Fixed(*ms * 1000);
  }
  const toml::table* t = n.as_table();
  if (t == nullptr) {
    Problem(n.source(), key,
            "must be a number of milliseconds or a distribution table such as "
            "{ dist = \"uniform\", min = 1, max = 5 }, got " +
                std::string(TypeName(n)));
    return std::nullopt;
  }
  if (!t->contains("dist")) {
    Missing(*t, Child(key, "dist"),
            "a distribution table names its kind: dist = " + Join(kDistNames));
    return std::nullopt;
  }
  const std::optional<size_t> kind = Choice(*t, "dist", key, kDistNames, "distribution");
  if (!kind) return std::nullopt;

  // Parameters in ms except pareto's shape, which has no unit.
  struct Param {
    std::string_view name;
    Sign sign;
    bool is_ms;
  };
  struct Shape {
    Distribution::Kind kind;
    std::array<Param, 2> params;  // a, then b; empty name for none.
  };
  static constexpr Shape kShapes[] = {
      {Distribution::Kind::kFixed, {{{"value", Sign::kNonNegative, true}, {}}}},
      {Distribution::Kind::kUniform,
       {{{"min", Sign::kNonNegative, true}, {"max", Sign::kNonNegative, true}}}},
      {Distribution::Kind::kExponential, {{{"mean", Sign::kPositive, true}, {}}}},
      {Distribution::Kind::kNormal,
       {{{"mean", Sign::kNonNegative, true}, {"stddev", Sign::kNonNegative, true}}}},
      {Distribution::Kind::kPareto,
       {{{"scale", Sign::kPositive, true}, {"shape", Sign::kPositive, false}}}},
  };
  const Shape& shape = kShapes[*kind];
  assert(kDistributions[*kind].value == shape.kind);
  const std::string_view dist_name = kDistNames[*kind];
  std::vector<std::string_view> allowed = {"dist"};
  for (const Param& p : shape.params) {
    if (!p.name.empty()) allowed.push_back(p.name);
  }
  allowed.push_back("cap");
  const std::string owner = "a '" + std::string(dist_name) + "' distribution";
  bool ok = CheckKeys(*t, key, allowed, owner);

  Distribution d;
  d.kind = shape.kind;
  double* slots[] = {&d.a, &d.b};
  for (size_t i = 0; i < shape.params.size(); ++i) {
    const Param& p = shape.params[i];
    if (p.name.empty()) continue;
    const toml::node* v = t->get(p.name);
    if (v == nullptr) {
      std::vector<std::string_view> needed;
      for (const Param& q : shape.params) {
        if (!q.name.empty()) needed.push_back(q.name);
      }
      Missing(*t, Child(key, p.name), owner + " needs " + Join(needed));
      ok = false;
      continue;
    }
    // Pareto's shape has no unit: any finite number above 0 (a tiny shape makes most draws
    // huge, and Distribution::Sample clamps them; a huge one makes every draw the scale).
    const std::optional<double> x =
        p.is_ms ? Millis(*v, Child(key, p.name), p.sign) : Number(*v, Child(key, p.name));
    if (!x) {
      ok = false;
      continue;
    }
    if (!p.is_ms && !(*x > 0)) {
      Problem(v->source(), Child(key, p.name),
              "must be greater than 0 (it has no unit), got " + FormatNumber(*x));
      ok = false;
      continue;
    }
    *slots[i] = p.is_ms ? *x * 1000 : *x;
  }
  if (d.kind == Distribution::Kind::kUniform && ok && d.b < d.a) {
    Problem(t->get("max")->source(), Child(key, "max"),
            "must not be less than min (" + FormatNumber(d.a / 1000) + "), got " +
                FormatNumber(d.b / 1000));
    ok = false;
  }
  if (const toml::node* cap = t->get("cap")) {
    const std::optional<double> x =
        Millis(*cap, Child(key, "cap"), Sign::kPositive, "omit cap for no cap");
    if (x) {
      d.cap = *x * 1000;
    } else {
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return d;
}

std::optional<Distribution> Loader::Dist(const toml::table& t, std::string_view key,
                                         const std::string& path) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  return Dist(*n, Child(path, key));
}

// An array of names; each use is checked against the declared names in phase 2.
std::vector<std::string> Loader::NameList(const toml::table& t, std::string_view key,
                                          const std::string& path, Want want, std::string rule) {
  std::vector<std::string> names;
  const toml::node* n = t.get(key);
  if (n == nullptr) return names;
  const std::string k = Child(path, key);
  const toml::array* a = n->as_array();
  if (a == nullptr) {
    Problem(n->source(), k,
            "must be an array of names, e.g. [\"c1\", \"n1\"], got " + std::string(TypeName(*n)));
    return names;
  }
  for (size_t i = 0; i < a->size(); ++i) {
    const toml::node& element = *a->get(i);
    const std::string element_key = Element(k, i);
    std::optional<std::string> name = String(element, element_key);
    if (!name) continue;
    if (std::find(names.begin(), names.end(), *name) != names.end()) {
      Problem(element.source(), element_key, "'" + *name + "' is listed twice");
      continue;
    }
    name_uses_.push_back({*name, element.source(), element_key, want, rule});
    names.push_back(std::move(*name));
  }
  return names;
}

std::optional<double> Loader::RangeBound(const toml::node& n, const std::string& key,
                                         const RangeRule& rule) {
  using Unit = RangeRule::Unit;
  if (rule.unit == Unit::kMillis) {
    const std::optional<double> ms = Millis(n, key, rule.sign);
    if (!ms) return std::nullopt;
    return static_cast<double>(std::llround(*ms * 1000));
  }
  const std::string range = "between " + FormatNumber(rule.lo) + " and " + FormatNumber(rule.hi);
  if (rule.unit == Unit::kInteger) {
    const auto* i = n.as_integer();
    if (i == nullptr) {
      std::string message = "must be an integer " + range + ", got " + std::string(TypeName(n)) +
                            QuotedNumberHint(n);
      if (const auto* f = n.as_floating_point(); f != nullptr && std::trunc(f->get()) == f->get()) {
        message += " (write " + FormatNumber(f->get()) + " without the '.0')";
      }
      Problem(n.source(), key, std::move(message));
      return std::nullopt;
    }
    const double v = static_cast<double>(i->get());
    if (v < rule.lo || v > rule.hi) {
      Problem(n.source(), key, "must be " + range + ", got " + std::to_string(i->get()));
      return std::nullopt;
    }
    return v;
  }
  const std::optional<double> v = Number(n, key);
  if (!v) return std::nullopt;
  if (*v < rule.lo || *v > rule.hi) {
    Problem(n.source(), key,
            "must be " + std::string(rule.what) + " " + range + ", got " + FormatNumber(*v));
    return std::nullopt;
  }
  return v;
}

std::optional<FuzzRange> Loader::Range(const toml::table& t, std::string_view key,
                                       const std::string& path, const RangeRule& rule) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return std::nullopt;
  const std::string k = Child(path, key);
  if (n->is_number() || n->is_string()) {
    const std::optional<double> v = RangeBound(*n, k, rule);
    if (!v) return std::nullopt;
    return FuzzRange{*v, *v};
  }
  const toml::table* range = n->as_table();
  if (range == nullptr) {
    Problem(n->source(), k,
            "must be a number or a range such as { min = 1, max = 5 }, got " +
                std::string(TypeName(*n)));
    return std::nullopt;
  }
  bool ok = CheckKeys(*range, k, kRangeKeys, "a range");
  std::optional<double> bounds[2];
  for (size_t i = 0; i < 2; ++i) {
    const std::string_view bound = kRangeKeys[i];
    const toml::node* b = range->get(bound);
    if (b == nullptr) {
      Missing(*range, Child(k, bound),
              "a range is written { min = 1, max = 5 }, or as one number for a fixed value");
      ok = false;
      continue;
    }
    bounds[i] = RangeBound(*b, Child(k, bound), rule);
    ok = ok && bounds[i].has_value();
  }
  if (!ok) return std::nullopt;
  if (*bounds[1] < *bounds[0]) {
    // In the file's units: milliseconds for a duration.
    const double scale = rule.unit == RangeRule::Unit::kMillis ? 1000 : 1;
    Problem(range->get("max")->source(), Child(k, "max"),
            "must not be less than min (" + FormatNumber(*bounds[0] / scale) + "), got " +
                FormatNumber(*bounds[1] / scale));
    return std::nullopt;
  }
  return FuzzRange{*bounds[0], *bounds[1]};
}

void Loader::Declare(const std::string& name, const toml::source_region& where,
                     const std::string& key, bool is_node, size_t index) {
  for (std::string_view reserved : kReservedNames) {
    if (name == reserved) {
      Problem(where, key,
              "'" + name + "' is reserved (the history uses it for the " +
                  (reserved == kSentinelName ? "Sentinel" : "simulator") +
                  "); choose another name");
      return;
    }
  }
  const auto [it, inserted] =
      declared_.try_emplace(name, Declared{is_node, index, where.begin.line});
  if (!inserted) {
    Problem(where, key,
            "duplicate name '" + name + "', already declared at line " +
                std::to_string(it->second.line) + "; node and client names must all differ");
    return;
  }
  declared_order_.push_back(name);
}

// ---- Sections ----------------------------------------------------------------------------

void Loader::ParseRoot(const toml::table& root, Scenario* s) {
  CheckKeys(root, "", kRootKeys, "the top level");
  if (std::optional<std::string> name = String(root, "name", "")) {
    // The name makes the output folder's name (lockstep-out/<name>-seed<N>): nothing in it may
    // lead out of that folder or hide in a terminal.
    if (name->empty()) {
      Problem(root.get("name")->source(), "name",
              "must not be empty (omit it to use the file name)");
    } else if (!IsValidName(*name) || name->find_first_not_of('.') == std::string::npos) {
      Problem(root.get("name")->source(), "name",
              "'" + Shown(*name) + "' is not a valid scenario name; use 1 to " +
                  std::to_string(kMaxNameLength) +
                  " letters, digits, '_', '.' or '-' (not only dots): it names the output folder");
    } else {
      s->name = std::move(*name);
    }
  }
  if (const toml::node* n = root.get("description")) {
    if (std::optional<std::string> v = Text(*n, "description")) s->description = std::move(*v);
  }
  if (auto v = Integer(root, "seed", "", 0, std::numeric_limits<int64_t>::max())) {
    s->seed = static_cast<uint64_t>(*v);
  }
  if (auto v = DurationUs(root, "duration_ms", "", Sign::kPositive)) {
    if (*v > kMaxRunDurationMs * 1000) {
      Problem(root.get("duration_ms")->source(), "duration_ms",
              "must be at most " + std::to_string(kMaxRunDurationMs) +
                  " (one simulated day), got " + FormatNumber(static_cast<double>(*v) / 1000));
    } else {
      s->duration_us = *v;
    }
  }
  // 9999-12-31T23:59:59.999Z: the last instant a wall-clock date can show with four digits.
  if (auto v = Integer(root, "start_unix_ms", "", 0, 253'402'300'799'999)) s->start_unix_ms = *v;

  ParseNodes(root, s);
  ParseClients(root, s);
  if (const toml::table* t = SubTable(root, "network", "")) ParseNetwork(*t, &s->network);
  if (const toml::table* t = SubTable(root, "replication", "")) {
    CheckKeys(*t, "replication", kReplicationKeys, "[replication]");
    if (auto d = Dist(*t, "lag_ms", "replication")) s->replication.lag_us = *d;
  }
  if (const toml::table* t = SubTable(root, "cluster", "")) {
    CheckKeys(*t, "cluster", kClusterKeys, "[cluster]");
    // Like [gc], the table's presence turns it on.
    s->cluster.enabled = Bool(*t, "enabled", "cluster").value_or(true);
    cluster_where_ = t->contains("enabled") ? t->get("enabled")->source() : t->source();
  }
  if (const toml::table* t = SubTable(root, "sentinel", "")) ParseSentinel(*t, &s->sentinel);
  if (const toml::table* t = SubTable(root, "protocol", "")) ParseProtocol(*t, &s->protocol);
  if (const toml::table* t = SubTable(root, "workload", "")) ParseWorkload(*t, &s->workload);
  ParseFaults(root, s);
  if (const toml::table* t = SubTable(root, "gc", "")) ParseGc(*t, &s->gc);
  if (const toml::table* t = SubTable(root, "checks", "")) {
    CheckKeys(*t, "checks", kChecksKeys, "[checks]");
    if (auto v = DurationUs(*t, "liveness_bound_ms", "checks", Sign::kNonNegative)) {
      s->liveness_bound_us = *v;
    }
  }
  if (const toml::table* t = SubTable(root, "resource", "")) {
    CheckKeys(*t, "resource", kResourceKeys, "[resource]");
    if (auto v = Bool(*t, "fencing", "resource")) s->resource.fencing = *v;
  }
  if (const toml::table* t = SubTable(root, "expect", "")) ParseExpect(*t, &s->expect);
  if (const toml::table* t = SubTable(root, "fuzz", "")) ParseFuzz(*t, &s->fuzz);
}

void Loader::ParseNodes(const toml::table& root, Scenario* s) {
  const toml::array* nodes = TableArray(root, "nodes", "", "each written [[nodes]]");
  if (nodes == nullptr || nodes->empty()) {
    if (root.contains("nodes") && nodes == nullptr) return;  // Wrong type, already reported.
    const std::string why = "a scenario needs at least one Redis node: add a [[nodes]] table";
    if (nodes == nullptr) {
      Missing(root, "nodes", why);
    } else {
      Problem(nodes->source(), "nodes", "must not be empty; " + why);
    }
    return;
  }
  int unnamed = 0;
  for (size_t i = 0; i < nodes->size(); ++i) {
    const toml::table* t = nodes->get(i)->as_table();
    if (t == nullptr) continue;
    const std::string path = Element("nodes", i);
    if (i >= static_cast<size_t>(kMaxNodes)) {
      Problem(t->source(), path, "too many nodes; at most " + std::to_string(kMaxNodes));
      break;
    }
    CheckKeys(*t, path, kNodeKeys, "a [[nodes]] table");
    NodeSpec node;
    toml::source_region name_where = t->source();
    std::string name_key = path;
    if (std::optional<std::string> name = String(*t, "name", path)) {
      name_where = t->get("name")->source();
      name_key = Child(path, "name");
      if (!IsValidName(*name)) {
        Problem(name_where, name_key,
                "'" + Shown(*name) + "' is not a valid name; use 1 to " + std::to_string(kMaxNameLength) +
                    " letters, digits, '_', '.' or '-'");
      }
      node.name = std::move(*name);
    } else {
      node.name = "n" + std::to_string(++unnamed);
    }
    if (auto p = Choice(*t, "persistence", path, kPersistenceNames, "persistence mode")) {
      node.persistence = kPersistences[*p].value;
    }
    if (std::optional<std::string> master = String(*t, "replica_of", path)) {
      replica_uses_.push_back(
          {s->nodes.size(), *master, t->get("replica_of")->source(), Child(path, "replica_of")});
      node.replica_of = std::move(*master);
    }
    if (auto v = Integer(*t, "maxmemory_mb", path, 1, NodeSpec::kMaxMemoryMbMax)) {
      node.maxmemory_mb = *v;
    }
    ParseClock(*t, path, &node.clock);
    Declare(node.name, name_where, name_key, /*is_node=*/true, s->nodes.size());
    s->nodes.push_back(std::move(node));
  }
}

void Loader::ParseClients(const toml::table& root, Scenario* s) {
  const toml::array* clients = TableArray(root, "clients", "", "each written [[clients]]");
  if (clients == nullptr || clients->empty()) {
    if (root.contains("clients") && clients == nullptr) return;
    const std::string why = "a scenario needs at least one client process: add a [[clients]] table";
    if (clients == nullptr) {
      Missing(root, "clients", why);
    } else {
      Problem(clients->source(), "clients", "must not be empty; " + why);
    }
    return;
  }
  // Generated names number on per prefix: c1..c3 then c4.., and w1.. for another prefix.
  std::map<std::string, int> generated;
  for (size_t i = 0; i < clients->size(); ++i) {
    const toml::table* t = clients->get(i)->as_table();
    if (t == nullptr) continue;
    const std::string path = Element("clients", i);
    CheckKeys(*t, path, kClientKeys, "a [[clients]] table");
    ClientSpec client;
    if (auto v = Integer(*t, "threads", path, 1, kMaxThreadsPerClient)) {
      client.threads = static_cast<int>(*v);
    }
    if (auto r = Choice(*t, "role", path, kRoleNames, "client role")) {
      client.role = kRoles[*r].value;
      if (client.role != ClientSpec::Role::kWorker) {
        role_uses_.push_back({std::string(kRoleNames[*r]), t->get("role")->source(),
                              Child(path, "role")});
      }
    }
    ParseClock(*t, path, &client.clock);
    ParseWorkloadFields(*t, path, &client.workload);
    if (auto side = Choice(*t, "side", path, kSideNames, "side")) {
      client.workload.side = kSides[*side].value;
      side_uses_.push_back({0, t->get("side")->source(), Child(path, "side")});
    }

    const std::optional<std::string> name = String(*t, "name", path);
    if (name && t->contains("count")) {
      Problem(t->get("count")->source(), Child(path, "count"),
              "set either name (one client) or count (a group named <name_prefix>1, 2, ...), "
              "not both");
      continue;
    }
    if (name && t->contains("name_prefix")) {
      Problem(t->get("name_prefix")->source(), Child(path, "name_prefix"),
              "name_prefix names the clients of a count group; this client has a name");
      continue;
    }
    if (name) {
      const toml::source_region& where = t->get("name")->source();
      if (!IsValidName(*name)) {
        Problem(where, Child(path, "name"),
                "'" + Shown(*name) + "' is not a valid name; use 1 to " + std::to_string(kMaxNameLength) +
                    " letters, digits, '_', '.' or '-'");
      }
      if (s->clients.size() >= static_cast<size_t>(kMaxClients)) {
        Problem(t->source(), path, "too many clients; at most " + std::to_string(kMaxClients));
        return;
      }
      client.name = *name;
      Declare(client.name, where, Child(path, "name"), /*is_node=*/false, s->clients.size());
      s->clients.push_back(std::move(client));
      continue;
    }
    const int64_t count = Integer(*t, "count", path, 1, kMaxClients).value_or(1);
    std::string prefix = "c";
    if (std::optional<std::string> p = String(*t, "name_prefix", path)) {
      // The prefix must make valid names with up to four digits after it.
      if (!IsValidName(*p) || p->size() + 4 > static_cast<size_t>(kMaxNameLength)) {
        Problem(t->get("name_prefix")->source(), Child(path, "name_prefix"),
                "'" + Shown(*p) + "' is not a valid name prefix; use 1 to " +
                    std::to_string(kMaxNameLength - 4) + " letters, digits, '_', '.' or '-'");
      }
      prefix = std::move(*p);
    }
    const toml::node* anchor = t->get("count") != nullptr ? t->get("count") : t;
    const std::string anchor_key = t->contains("count") ? Child(path, "count") : path;
    if (s->clients.size() + static_cast<size_t>(count) > static_cast<size_t>(kMaxClients)) {
      Problem(anchor->source(), anchor_key,
              "too many clients; at most " + std::to_string(kMaxClients) + " in all");
      return;
    }
    for (int64_t k = 0; k < count; ++k) {
      ClientSpec member = client;
      member.name = prefix + std::to_string(++generated[prefix]);
      Declare(member.name, anchor->source(), anchor_key, /*is_node=*/false, s->clients.size());
      s->clients.push_back(std::move(member));
    }
  }
}

void Loader::ParseClock(const toml::table& owner, const std::string& owner_path, ClockSpec* clock) {
  const toml::table* t = SubTable(owner, "clock", owner_path);
  if (t == nullptr) return;
  const std::string path = Child(owner_path, "clock");
  CheckKeys(*t, path, kClockKeys, "a clock");
  if (auto v = DurationUs(*t, "offset_ms", path, Sign::kAny)) clock->offset_us = *v;
  if (auto v = NumberIn(*t, "drift_ppm", path, -kMaxDriftPpm, kMaxDriftPpm, "a drift in ppm")) {
    clock->drift_ppm = *v;
  }
  if (auto v = Bool(*t, "ntp", path)) clock->ntp = *v;
  if (const toml::node* n = t->get("slew_ppm")) {
    const std::string k = Child(path, "slew_ppm");
    if (std::optional<double> v = Number(*n, k)) {
      if (*v <= 0 || *v > kMaxDriftPpm) {
        Problem(n->source(), k,
                "must be greater than 0 and at most " + FormatNumber(kMaxDriftPpm) + ", got " +
                    FormatNumber(*v));
      } else {
        clock->slew_ppm = *v;
      }
    }
  }
  const toml::array* jumps = TableArray(*t, "jumps", path, "e.g. [{ at_ms = 1000, by_ms = 500 }]");
  if (jumps == nullptr) return;
  for (size_t i = 0; i < jumps->size(); ++i) {
    const toml::table* j = jumps->get(i)->as_table();
    if (j == nullptr) continue;
    const std::string jump_path = Element(Child(path, "jumps"), i);
    if (i >= static_cast<size_t>(kMaxClockJumps)) {
      Problem(j->source(), jump_path,
              "too many jumps; at most " + std::to_string(kMaxClockJumps) + " per clock");
      break;
    }
    CheckKeys(*j, jump_path, kJumpKeys, "a clock jump");
    Require(*j, "at_ms", jump_path, "a jump needs at_ms, when it happens (true time)");
    Require(*j, "by_ms", jump_path, "a jump needs by_ms, how far the wall clock moves");
    const std::optional<int64_t> at = DurationUs(*j, "at_ms", jump_path, Sign::kNonNegative);
    const std::optional<int64_t> by =
        DurationUs(*j, "by_ms", jump_path, Sign::kNonZero, "a jump of 0 ms does nothing");
    if (at && by) {
      clock->jumps.push_back({*at, *by});
      time_uses_.push_back({*at, j->get("at_ms")->source(), Child(jump_path, "at_ms")});
    }
  }
}

void Loader::ParseNetwork(const toml::table& t, NetworkSpec* network) {
  CheckKeys(t, "network", kNetworkKeys, "[network]");
  if (auto d = Dist(t, "latency_ms", "network")) network->latency_us = *d;
  if (auto v = NumberIn(t, "loss", "network", 0, 1, "a probability")) network->loss = *v;
  if (auto v = NumberIn(t, "duplicate", "network", 0, 1, "a probability")) {
    network->duplicate = *v;
  }
  if (auto v = Bool(t, "reorder", "network")) network->reorder = *v;
  const toml::table* links = SubTable(t, "links", "network");
  if (links == nullptr) return;
  for (auto&& [k, v] : *links) {
    const std::string link(k.str());
    const std::string key = Child("network.links", link);
    const size_t arrow = link.find("->");
    const std::string from = arrow == std::string::npos ? "" : link.substr(0, arrow);
    const std::string to = arrow == std::string::npos ? "" : link.substr(arrow + 2);
    if (from.empty() || to.empty()) {
      Problem(k.source(), key,
              "a link is written \"from->to\" with two declared names, e.g. \"c1->n1\"");
      continue;
    }
    if (from == to) {
      Problem(k.source(), key, "a link joins two different processes");
      continue;
    }
    const std::string rule = "links join declared nodes and clients";
    name_uses_.push_back({from, k.source(), key, Want::kProcess, rule});
    name_uses_.push_back({to, k.source(), key, Want::kProcess, rule});
    if (std::optional<Distribution> d = Dist(v, key)) network->link_latency_us[link] = *d;
  }
}

void Loader::ParseSentinel(const toml::table& t, SentinelSpec* sentinel) {
  CheckKeys(t, "sentinel", kSentinelKeys, "[sentinel]");
  if (auto v = Bool(t, "enabled", "sentinel")) {
    sentinel->enabled = *v;
    sentinel_enabled_where_ = t.get("enabled")->source();
  }
  if (auto v = DurationUs(t, "down_after_ms", "sentinel", Sign::kPositive)) {
    sentinel->down_after_us = *v;
  }
  if (auto v = DurationUs(t, "client_rediscover_ms", "sentinel", Sign::kNonNegative)) {
    sentinel->client_rediscover_us = *v;
  }
}

void Loader::ParseProtocol(const toml::table& t, ProtocolSpec* protocol) {
  CheckKeys(t, "protocol", kProtocolKeys, "[protocol]");
  std::vector<std::string_view> kind_names;
  for (const history::ProtocolKind& k : kProtocolKinds) kind_names.push_back(k.name);
  // The kind whose script names protocol.scripts may use; null when the kind is unknown.
  // The default, unless the file names another.
  const history::ProtocolKind* kind = protocol->kind;
  if (t.contains("kind")) {
    protocol_kind_where_ = t.get("kind")->source();
    const std::optional<size_t> k = Choice(t, "kind", "protocol", kind_names, "protocol kind");
    kind = k ? &kProtocolKinds[*k] : nullptr;
    if (k) protocol->kind = &kProtocolKinds[*k];
  }
  if (auto v = Choice(t, "version", "protocol", kProtocolVersions, "protocol version")) {
    protocol->version = static_cast<history::ProtocolVersion>(*v);
  }
  if (kind != nullptr && !kind->added_in.empty()) {
    if (!t.contains("version")) {
      protocol->version = history::ProtocolVersion::kCurrent;
    } else if (protocol->version != history::ProtocolVersion::kCurrent) {
      Problem(t.get("version")->source(), "protocol.version",
              "'" + std::string(kind->name) + "' exists only as \"current\" (Redisson added it in " +
                  std::string(kind->added_in) + "); write version = \"current\" or leave version out");
    }
  }
  if (const toml::node* n = t.get("lock_name")) {
    if (std::optional<std::string> v = Text(*n, "protocol.lock_name")) {
      if (v->empty()) {
        Problem(n->source(), "protocol.lock_name", "must not be empty");
      } else {
        protocol->lock_name = std::move(*v);
      }
    }
  }
  // Redisson's Config takes both in whole milliseconds and renews a watchdog lease every third
  // of its timeout; below these a client timer would have a period of 0.
  if (auto v = DurationUs(t, "watchdog_timeout_ms", "protocol", Sign::kPositive)) {
    if (*v < kMinWatchdogTimeoutMs * 1000) {
      Problem(t.get("watchdog_timeout_ms")->source(), "protocol.watchdog_timeout_ms",
              "must be at least " + std::to_string(kMinWatchdogTimeoutMs) +
                  " (the watchdog renews every third of it, in whole milliseconds), got " +
                  FormatNumber(static_cast<double>(*v) / 1000));
    } else {
      protocol->watchdog_timeout_us = *v;
    }
  }
  if (auto v = DurationUs(t, "timeout_ms", "protocol", Sign::kPositive)) {
    if (*v < kMinTimeoutMs * 1000) {
      Problem(t.get("timeout_ms")->source(), "protocol.timeout_ms",
              "must be at least " + std::to_string(kMinTimeoutMs) +
                  " (Redisson's timeout is whole milliseconds), got " +
                  FormatNumber(static_cast<double>(*v) / 1000));
    } else {
      protocol->timeout_us = *v;
    }
  }
  if (auto v = Integer(t, "retry_attempts", "protocol", 0, kMaxRetryAttempts)) {
    protocol->retry_attempts = static_cast<int>(*v);
  }
  if (auto v = DurationUs(t, "retry_interval_ms", "protocol", Sign::kNonNegative)) {
    protocol->retry_interval_us = *v;
  }
  if (auto v = DurationUs(t, "fair_wait_timeout_ms", "protocol", Sign::kPositive)) {
    protocol->fair_wait_timeout_us = *v;
  }
  if (auto v = Integer(t, "permits", "protocol", 0, 1'000'000)) protocol->permits = *v;
  ParseClient(t, kind, protocol);
  const toml::table* scripts = SubTable(t, "scripts", "protocol");
  if (scripts == nullptr) return;
  std::vector<std::string_view> script_names;
  if (kind != nullptr) {
    for (std::string_view s : kind->scripts) {
      if (!s.empty()) script_names.push_back(s);
    }
  }
  for (auto&& [k, v] : *scripts) {
    const std::string name(k.str());
    const std::string key = Child("protocol.scripts", name);
    // A client program's scripts are the files beside it: the loader checks the name then.
    if (kind != nullptr && !kind->client_program &&
        std::find(script_names.begin(), script_names.end(), name) == script_names.end()) {
      Problem(k.source(), key,
              "unknown script '" + name + "' for protocol kind '" + std::string(kind->name) +
                  "'; " + DidYouMean(name, script_names) +
                  "its scripts are: " + Join(script_names));
      continue;
    }
    std::optional<std::string> file = String(v, key);
    if (!file) continue;
    if (file->empty()) {
      Problem(v.source(), key, "must name a Lua file");
      continue;
    }
    if (const std::string hidden = HiddenCharacter(*file); !hidden.empty()) {
      Problem(v.source(), key, "'" + Shown(*file) + "' holds " + hidden + "; write the path plainly");
      continue;
    }
    const std::filesystem::path resolved = (directory_ / *file).lexically_normal();
    std::error_code ec;
    if (!std::filesystem::exists(resolved, ec)) {
      Problem(v.source(), key,
              "no such file: " + resolved.string() +
                  " (script paths are relative to the scenario file's directory)");
      continue;
    }
    if (std::optional<std::string> problem = CheckScript(resolved)) {
      Problem(v.source(), key, *problem);
      continue;
    }
    protocol->script_files[name] = resolved.string();
  }
}

// protocol.client: the client kind's program, a path relative to the scenario file (it has a
// '/' or ends in .lua) or a bundled client's name.
void Loader::ParseClient(const toml::table& t, const history::ProtocolKind* kind,
                         ProtocolSpec* protocol) {
  const toml::node* n = t.get("client");
  const bool wants = kind != nullptr && kind->client_program;
  if (n == nullptr) {
    if (wants && protocol_kind_where_) {
      Problem(*protocol_kind_where_, "protocol.client",
              "kind = \"client\" needs client = \"<file>.lua\" (a client program, relative to "
              "the scenario file) or the name of a bundled client");
    }
    return;
  }
  if (kind != nullptr && !wants) {
    Problem(n->source(), "protocol.client",
            "only kind = \"client\" takes a client program; '" + std::string(kind->name) +
                "' has its own client");
    return;
  }
  std::optional<std::string> v = String(*n, "protocol.client");
  if (!v) return;
  if (v->empty()) {
    Problem(n->source(), "protocol.client", "must name a client program");
    return;
  }
  if (const std::string hidden = HiddenCharacter(*v); !hidden.empty()) {
    Problem(n->source(), "protocol.client", "'" + Shown(*v) + "' holds " + hidden +
                                                "; write the path plainly");
    return;
  }
  const bool is_path = v->find('/') != std::string::npos ||
                       std::filesystem::path(*v).extension() == ".lua";
  if (!is_path) {
    protocol->client = std::move(*v);  // A bundled client: the lock loader finds it.
    return;
  }
  const std::filesystem::path resolved = (directory_ / *v).lexically_normal();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(resolved, ec)) {
    Problem(n->source(), "protocol.client",
            "no such file: " + resolved.string() +
                " (a client program's path is relative to the scenario file's directory)");
    return;
  }
  protocol->client = resolved.string();
}

void Loader::ParseWorkload(const toml::table& t, WorkloadSpec* workload) {
  CheckKeys(t, "workload", kWorkloadKeys, "[workload]");
  WorkloadOverride fields;
  ParseWorkloadFields(t, "workload", &fields);
  *workload = Apply(*workload, fields);
  if (auto v = NumberIn(t, "read_ratio", "workload", 0, 1, "a fraction")) {
    workload->read_ratio = *v;
  }
}

void Loader::ParseWorkloadFields(const toml::table& t, const std::string& path,
                                 WorkloadOverride* o) {
  if (auto m = Choice(t, "mode", path, kModeNames, "workload mode")) o->mode = kModes[*m].value;
  // Any wait and lease Redisson's API takes: 0, negative and sub-millisecond values reach the
  // client, which treats them as its version does (docs/protocols.md, "Leases and waits").
  if (auto v = DurationUs(t, "wait_ms", path, Sign::kAny)) o->wait_us = *v;
  if (auto v = DurationUs(t, "lease_ms", path, Sign::kAny)) {
    // -1 ms is what lock() and tryLock(wait) pass: no lease, as when the key is left out.
    o->lease_us = *v == -1000 ? -1 : *v;
    if (*o->lease_us <= 0 && *o->lease_us != -1) {
      lease_uses_.push_back({*o->lease_us, t.get("lease_ms")->source(), Child(path, "lease_ms")});
    }
  }
  if (auto d = Dist(t, "critical_ms", path)) o->critical_us = *d;
  if (auto d = Dist(t, "think_ms", path)) o->think_us = *d;
  if (auto v = Integer(t, "reentry", path, 1, kMaxReentry)) o->reentry = static_cast<int>(*v);
  if (auto v = DurationUs(t, "stagger_ms", path, Sign::kNonNegative)) o->stagger_us = *v;
  if (auto v = Integer(t, "ops_per_thread", path, 0, std::numeric_limits<int64_t>::max())) {
    o->ops_per_thread = *v;
  }
}

void Loader::ParseFaults(const toml::table& root, Scenario* s) {
  const toml::array* faults = TableArray(root, "faults", "", "each written [[faults]]");
  if (faults == nullptr) return;
  for (size_t i = 0; i < faults->size(); ++i) {
    const toml::table* t = faults->get(i)->as_table();
    if (t == nullptr) continue;
    const std::string path = Element("faults", i);
    if (i >= static_cast<size_t>(kMaxFaults)) {
      Problem(t->source(), path, "too many faults; at most " + std::to_string(kMaxFaults));
      return;
    }
    FaultSpec fault;
    ParseFault(*t, path, &fault);
    s->faults.push_back(std::move(fault));
  }
}

void Loader::ParseFault(const toml::table& t, const std::string& path, FaultSpec* fault) {
  fault->line = static_cast<int>(t.source().begin.line);
  std::vector<std::string_view> kind_names;
  for (const history::FaultKindInfo& k : history::kFaultKinds) kind_names.push_back(k.name);
  Require(t, "kind", path, "every fault needs a kind: " + Join(kind_names));
  Require(t, "at_ms", path, "every fault needs at_ms, when it starts (ms of true time)");
  const std::optional<size_t> kind_index = Choice(t, "kind", path, kind_names, "fault kind");
  if (!kind_index) {
    CheckKeys(t, path, kFaultKeys, "a [[faults]] table");  // Kind unknown: check the union.
    return;
  }
  const history::FaultKindInfo& kind = history::kFaultKinds[*kind_index];
  fault->kind = kind.kind;
  std::vector<std::string_view> allowed = {"kind", "at_ms"};
  for (std::string_view k : kind.keys) {
    if (!k.empty()) allowed.push_back(k);
  }
  const std::string owner = "a '" + std::string(kind.name) + "' fault";
  for (auto&& [k, v] : t) {
    const std::string_view key = k.str();
    const bool other_kind =
        std::find(std::begin(kFaultKeys), std::end(kFaultKeys), key) != std::end(kFaultKeys);
    if (other_kind && std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      Problem(k.source(), Child(path, key),
              "is not used by " + owner + "; " + owner + " takes: " + Join(allowed));
    }
  }
  CheckKeys(t, path, kFaultKeys, owner);

  if (auto v = DurationUs(t, "at_ms", path, Sign::kNonNegative)) {
    fault->at_us = *v;
    time_uses_.push_back({*v, t.get("at_ms")->source(), Child(path, "at_ms")});
  }
  // Each key the kind takes, as the kinds' table says (history/fault_kinds.h).
  const auto takes = [&kind](std::string_view key) { return history::Takes(kind, key); };
  if (takes("duration_ms") && kind.no_duration_means.empty()) {
    Require(t, "duration_ms", path, owner + " needs duration_ms, how long it lasts");
    if (auto v = DurationUs(t, "duration_ms", path, Sign::kPositive)) fault->duration_us = *v;
  } else if (takes("duration_ms")) {
    if (auto v = DurationUs(t, "duration_ms", path, Sign::kNonNegative,
                            std::string(kind.no_duration_means))) {
      fault->duration_us = *v;
    }
  }

  Want want = Want::kProcess;
  std::string rule = owner + " targets nodes and clients";
  switch (kind.targets) {
    case history::FaultTargets::kProcesses: break;
    case history::FaultTargets::kPartitionSides: want = Want::kPartitionSide; break;
    case history::FaultTargets::kNodes:
      want = Want::kNode;
      rule = owner + " targets nodes";
      break;
    case history::FaultTargets::kMastersWithReplica:
      want = Want::kMasterWithReplica;
      rule = owner + " targets master nodes that have a replica";
      break;
  }
  Require(t, "targets", path, owner + " needs targets, the names it applies to");
  fault->targets = NameList(t, "targets", path, want, rule);
  if (const toml::node* n = t.get("targets");
      n != nullptr && n->is_array() && n->as_array()->empty()) {
    Problem(n->source(), Child(path, "targets"), "must name at least one node or client");
  }
  if (kind.targets == history::FaultTargets::kPartitionSides) {
    Require(t, "peers", path, "a partition needs peers, the names on the other side");
    fault->peers = NameList(t, "peers", path, Want::kPartitionSide, "");
    CheckPeers(t, path, fault->targets, "must name at least one node or client",
               "is on both sides of the partition (also in targets)");
  } else if (takes("peers")) {
    // Peers are optional here: without them every link of a target is affected.
    fault->peers = NameList(t, "peers", path, Want::kProcess, owner + " takes nodes and clients");
    CheckPeers(t, path, fault->targets,
               "must name at least one node or client; leave peers out to affect every link of "
               "the targets",
               "is also in targets; peers are the other ends of the targets' links");
  }
  if (takes("one_way")) {
    if (auto v = Bool(t, "one_way", path)) fault->one_way = *v;
  }
  if (takes("extra_ms")) {
    Require(t, "extra_ms", path, "a latency fault needs extra_ms, the delay added to each message");
    if (auto v = DurationUs(t, "extra_ms", path, Sign::kPositive)) fault->extra_us = *v;
  }
  if (takes("rate")) {
    Require(t, "rate", path,
            owner + " needs rate, the probability that it strikes a message (0 to 1)");
    if (const toml::node* n = t.get("rate")) {
      const std::string key = Child(path, "rate");
      if (const std::optional<double> rate = Number(*n, key)) {
        if (*rate <= 0 || *rate > 1) {
          Problem(n->source(), key,
                  "must be a probability greater than 0 and at most 1, got " +
                      FormatNumber(*rate) +
                      (*rate == 0 ? "; a rate of 0 does nothing, remove the fault" : ""));
        } else {
          fault->rate = *rate;
        }
      }
    }
  }
  if (takes("by_ms")) {
    Require(t, "by_ms", path, "a clock_jump needs by_ms, how far the wall clocks move");
    if (auto v = DurationUs(t, "by_ms", path, Sign::kNonZero, "a jump of 0 ms does nothing")) {
      fault->by_us = *v;
    }
  }
}

// A fault's peers, when it has them as an array: not empty, and none of them in targets.
// `if_empty` and `if_in_targets` say what is wrong in this kind's words.
void Loader::CheckPeers(const toml::table& t, const std::string& path,
                        const std::vector<std::string>& targets, std::string_view if_empty,
                        std::string_view if_in_targets) {
  const toml::node* n = t.get("peers");
  if (n == nullptr || !n->is_array()) return;
  const toml::array& peers = *n->as_array();
  if (peers.empty()) Problem(n->source(), Child(path, "peers"), std::string(if_empty));
  for (size_t i = 0; i < peers.size(); ++i) {
    const auto* peer = peers.get(i)->as_string();
    if (peer != nullptr &&
        std::find(targets.begin(), targets.end(), peer->get()) != targets.end()) {
      Problem(peer->source(), Element(Child(path, "peers"), i),
              "'" + peer->get() + "' " + std::string(if_in_targets));
    }
  }
}

void Loader::ParseGc(const toml::table& t, GcSpec* gc) {
  CheckKeys(t, "gc", kGcKeys, "[gc]");
  gc->enabled = Bool(t, "enabled", "gc").value_or(true);
  gc->clients = NameList(t, "clients", "gc", Want::kClient, "gc.clients names clients");
  if (auto d = Dist(t, "every_ms", "gc")) {
    double mean = d->a;
    if (d->kind == Distribution::Kind::kUniform) mean = (d->a + d->b) / 2;
    if (mean <= 0) {
      Problem(t.get("every_ms")->source(), "gc.every_ms",
              "must have a mean greater than 0 (it is the time from one pause to the next)");
    } else {
      gc->every_us = *d;
    }
  }
  if (auto d = Dist(t, "pause_ms", "gc")) gc->pause_us = *d;
}

void Loader::ParseExpect(const toml::table& t, std::map<std::string, Expectation>* expect) {
  for (auto&& [k, v] : t) {
    const std::string property(k.str());
    const std::string key = Child("expect", property);
    if (std::find(std::begin(kProperties), std::end(kProperties), property) ==
        std::end(kProperties)) {
      Problem(k.source(), key,
              "unknown property; " + DidYouMean(property, kProperties) +
                  "known properties: " + Join(kProperties));
      continue;
    }
    const std::optional<std::string> value = String(v, key);
    if (!value) continue;
    const auto* found =
        std::find(std::begin(kExpectationNames), std::end(kExpectationNames), *value);
    if (found == std::end(kExpectationNames)) {
      Problem(v.source(), key,
              "unknown expectation '" + *value + "'; " + DidYouMean(*value, kExpectationNames) +
                  "write \"hold\", \"violated\" or \"any\"");
      continue;
    }
    (*expect)[property] = kExpectations[found - std::begin(kExpectationNames)].value;
  }
}

void Loader::ParseFuzz(const toml::table& t, FuzzSpec* fuzz) {
  using Unit = RangeRule::Unit;
  CheckKeys(t, "fuzz", kFuzzKeys, "[fuzz]");
  if (const toml::table* faults = SubTable(t, "faults", "fuzz")) {
    for (auto&& [k, v] : *faults) {
      const std::string kind(k.str());
      const std::string key = Child("fuzz.faults", kind);
      if (std::find(kFuzzFaultKinds.begin(), kFuzzFaultKinds.end(), kind) ==
          kFuzzFaultKinds.end()) {
        Problem(k.source(), key,
                "unknown fault kind; " + DidYouMean(kind, kFuzzFaultKinds) +
                    "[fuzz] faults takes: " + Join(kFuzzFaultKinds));
        continue;
      }
      const std::optional<double> weight = Number(v, key);
      if (!weight) continue;
      if (*weight < 0) {
        Problem(v.source(), key,
                "must not be negative, got " + FormatNumber(*weight) +
                    "; a weight of 0 keeps the kind out");
        continue;
      }
      fuzz->faults[kind] = *weight;
    }
  }
  if (auto r = Range(t, "fault_count", "fuzz", {Unit::kInteger, 0, kMaxFaults, "", {}})) {
    fuzz->fault_count = *r;
  }
  const RangeRule positive_ms{Unit::kMillis, 0, 0, "", Sign::kPositive};
  const RangeRule non_negative_ms{Unit::kMillis, 0, 0, "", Sign::kNonNegative};
  if (auto r = Range(t, "fault_duration_ms", "fuzz", positive_ms)) fuzz->fault_duration_us = *r;
  if (auto r = Range(t, "clock_jump_ms", "fuzz", positive_ms)) fuzz->clock_jump_us = *r;
  const RangeRule drift{Unit::kNumber, 0, kMaxDriftPpm, "a drift in ppm", {}};
  if (auto r = Range(t, "drift_ppm", "fuzz", drift)) fuzz->drift_ppm = *r;
  if (auto r = Range(t, "latency_spike_ms", "fuzz", positive_ms)) fuzz->latency_spike_us = *r;
  const RangeRule probability{Unit::kNumber, 0, 1, "a probability", {}};
  if (auto r = Range(t, "loss_rate", "fuzz", probability)) fuzz->loss_rate = *r;
  if (auto r = Range(t, "duplicate_rate", "fuzz", probability)) fuzz->duplicate_rate = *r;
  fuzz->clients = Range(t, "clients", "fuzz", {Unit::kInteger, 1, kMaxClients, "", {}});
  fuzz->threads = Range(t, "threads", "fuzz", {Unit::kInteger, 1, kMaxThreadsPerClient, "", {}});
  fuzz->lease_us = Range(t, "lease_ms", "fuzz", positive_ms);
  fuzz->wait_us = Range(t, "wait_ms", "fuzz", non_negative_ms);
  fuzz->critical_us = Range(t, "critical_ms", "fuzz", non_negative_ms);
  fuzz->think_us = Range(t, "think_ms", "fuzz", non_negative_ms);
  fuzz->replication_lag_us = Range(t, "replication_lag_ms", "fuzz", non_negative_ms);
  if (const toml::node* n = t.get("versions")) {
    const toml::array* versions = n->as_array();
    if (versions == nullptr) {
      Problem(n->source(), "fuzz.versions",
              "must be an array of protocol versions, e.g. [\"v3.13.6\", \"current\"], got " +
                  std::string(TypeName(*n)));
    } else if (versions->empty()) {
      Problem(n->source(), "fuzz.versions",
              "must name at least one version; leave versions out to keep the base's");
    }
    for (size_t i = 0; versions != nullptr && i < versions->size(); ++i) {
      const toml::node& element = *versions->get(i);
      const std::string key = Element("fuzz.versions", i);
      const std::optional<std::string> version = String(element, key);
      if (!version) continue;
      if (std::find(std::begin(kProtocolVersions), std::end(kProtocolVersions), *version) ==
          std::end(kProtocolVersions)) {
        Problem(element.source(), key,
                "unknown protocol version '" + *version + "'; " +
                    DidYouMean(*version, kProtocolVersions) +
                    "known protocol versions: " + Join(kProtocolVersions));
        continue;
      }
      if (std::find(fuzz->versions.begin(), fuzz->versions.end(), *version) !=
          fuzz->versions.end()) {
        Problem(element.source(), key, "'" + *version + "' is listed twice");
        continue;
      }
      fuzz_version_uses_.push_back({*version, element.source(), key});
      fuzz->versions.push_back(*version);
    }
  }
  if (auto v = Integer(t, "max_events", "fuzz", 1, std::numeric_limits<int64_t>::max())) {
    fuzz->max_events = *v;
  }
  if (const toml::node* n = t.get("max_case_s")) {
    if (const std::optional<double> v = Number(*n, "fuzz.max_case_s")) {
      // The same bound as any duration, in seconds: far past any case worth waiting for.
      const double max_s = static_cast<double>(kMaxDurationMs) / 1000;
      if (*v <= 0 || *v > max_s) {
        Problem(n->source(), "fuzz.max_case_s",
                "must be greater than 0 and at most " + FormatNumber(max_s) +
                    " (seconds of wall time per case), got " + FormatNumber(*v));
      } else {
        fuzz->max_case_s = *v;
      }
    }
  }
  // Weights that are all 0 leave nothing to draw a fault from; so does an empty table, which
  // is not the absence of the key (every kind at weight 1).
  if (const toml::node* n = t.get("faults"); n != nullptr && n->is_table() &&
                                             fuzz->fault_count.max > 0) {
    if (n->as_table()->empty()) {
      Problem(n->source(), "fuzz.faults",
              "names no kind, so no fault can be drawn; name a kind with a weight above 0, "
              "leave the key out for the default mix, or set fault_count = 0");
    } else if (!fuzz->faults.empty() &&
               std::all_of(fuzz->faults.begin(), fuzz->faults.end(),
                           [](const auto& kind) { return kind.second == 0; })) {
      Problem(n->source(), "fuzz.faults",
              "every weight is 0, so no fault can be drawn; give a kind a weight above 0, or "
              "set fault_count = 0");
    }
  }
}

// ---- Phase 2: references -----------------------------------------------------------------

std::string Loader::DeclaredNames() const {
  std::vector<std::string_view> names(declared_order_.begin(), declared_order_.end());
  return Join(names, 12);
}

void Loader::CheckReferences(const Scenario& s) {
  std::vector<std::string_view> all_names(declared_order_.begin(), declared_order_.end());
  for (const NameUse& use : name_uses_) {
    if (use.want == Want::kPartitionSide && use.name == kSentinelName) {
      if (!s.sentinel.enabled) {
        Problem(use.where, use.key,
                "'sentinel' stands for the Sentinel process, which is off; set enabled = true "
                "in [sentinel] or leave it out of the partition");
      }
      continue;
    }
    const auto it = declared_.find(use.name);
    if (it == declared_.end()) {
      Problem(use.where, use.key,
              "no node or client is named '" + use.name + "'; " + DidYouMean(use.name, all_names) +
                  "declared names: " + DeclaredNames());
      continue;
    }
    const Declared& d = it->second;
    switch (use.want) {
      case Want::kProcess:
      case Want::kPartitionSide: break;
      case Want::kNode:
        if (!d.is_node) Problem(use.where, use.key, "'" + use.name + "' is a client; " + use.rule);
        break;
      case Want::kClient:
        if (d.is_node) Problem(use.where, use.key, "'" + use.name + "' is a node; " + use.rule);
        break;
      case Want::kMasterWithReplica: {
        if (!d.is_node) {
          Problem(use.where, use.key, "'" + use.name + "' is a client; " + use.rule);
          break;
        }
        const NodeSpec& node = s.nodes[d.index];
        if (!node.replica_of.empty()) {
          Problem(use.where, use.key,
                  "'" + use.name + "' is a replica (of '" + node.replica_of + "'); " + use.rule);
          break;
        }
        const bool has_replica =
            std::any_of(s.nodes.begin(), s.nodes.end(),
                        [&](const NodeSpec& n) { return n.replica_of == use.name; });
        if (!has_replica) {
          Problem(use.where, use.key,
                  "'" + use.name +
                      "' has no replica to promote; add a [[nodes]] table with "
                      "replica_of = \"" +
                      use.name + "\"");
        }
        break;
      }
    }
  }
  for (const ReplicaUse& use : replica_uses_) {
    const auto it = declared_.find(use.master);
    const std::string rule = "replica_of must name a master node declared above this one";
    if (it == declared_.end()) {
      std::vector<std::string_view> node_names;
      for (const NodeSpec& n : s.nodes) node_names.push_back(n.name);
      Problem(
          use.where, use.key,
          "no node is named '" + use.master + "'; " + DidYouMean(use.master, node_names) + rule);
    } else if (!it->second.is_node) {
      Problem(use.where, use.key, "'" + use.master + "' is a client; " + rule);
    } else if (it->second.index >= use.node_index) {
      Problem(use.where, use.key,
              it->second.index == use.node_index
                  ? "a node cannot be a replica of itself; " + rule
                  : "'" + use.master + "' is declared below this node; " + rule);
    } else if (!s.nodes[it->second.index].replica_of.empty()) {
      Problem(use.where, use.key,
              "'" + use.master + "' is itself a replica (of '" +
                  s.nodes[it->second.index].replica_of + "'); " + rule);
    }
  }
  if (s.cluster.enabled) CheckCluster(s);
  // Roles split the latch's await and countDown between threads, and give the semaphore's
  // permit-changing operations threads of their own; the other kinds have one operation pair
  // that every thread runs, the worker loop.
  const history::ProtocolKind* kind = s.protocol.kind;
  for (const RoleUse& use : role_uses_) {
    if (kind != nullptr && history::TakesRole(*kind, use.role)) continue;
    std::string role_kinds;  // The kinds that take it, each with all its roles.
    for (const history::ProtocolKind& k : kProtocolKinds) {
      if (!history::TakesRole(k, use.role)) continue;
      std::string roles;
      for (std::string_view r : k.roles) {
        if (!r.empty()) roles += (roles.empty() ? "" : ", ") + std::string(r);
      }
      role_kinds += (role_kinds.empty() ? "" : ", ") + std::string(k.name) + " only (" + roles + ")";
    }
    Problem(use.where, use.key,
            "role '" + use.role + "' is taken by protocol kind " + role_kinds +
                ", and protocol.kind is '" + s.protocol.kind_name() + "'" +
                (protocol_kind_where_
                     ? " (line " + std::to_string(protocol_kind_where_->begin.line) + ")"
                     : std::string(" (the default)")) +
                "; every kind takes role = \"worker\", the default; remove the key");
  }
  // A fixed side is for read-write locks, the only kind with two.
  if (kind != nullptr && kind->cls != history::KindClass::kRw) {
    for (const WorkloadUse& use : side_uses_) {
      Problem(use.where, use.key,
              "side (read or write) is for protocol kind rwlock only, and protocol.kind is '" +
                  s.protocol.kind_name() + "'; remove the key");
    }
  }
  // The SET NX locks send the lease as the key's TTL, which must be positive.
  if (kind != nullptr && kind->ttl_lease) {
    for (const WorkloadUse& use : lease_uses_) {
      Problem(use.where, use.key,
              "'" + s.protocol.kind_name() + "' sends the lease as the key's TTL, which must be above 0 " +
                  "(SET ... PX refuses 0 or less with 'ERR invalid expire time in 'set' " +
                  "command'; EXPIRE with 0 or less deletes the key); give lease_ms above 0, or " +
                  "leave it out for the default TTL (protocol.watchdog_timeout_ms)");
    }
  }
  // fuzz.versions: a kind Redisson added after 3.13.6 exists only as "current".
  if (kind != nullptr && !kind->added_in.empty()) {
    for (const VersionUse& use : fuzz_version_uses_) {
      if (use.version == "current") continue;
      Problem(use.where, use.key,
              "'" + std::string(kind->name) +
                  "' exists only as \"current\" (Redisson added it in " +
                  std::string(kind->added_in) + "); list only \"current\", or leave versions out");
    }
  }
  for (const TimeUse& use : time_uses_) {
    if (use.at_us >= s.duration_us) {
      Problem(use.where, use.key,
              "is outside the run: must be less than duration_ms (" +
                  FormatNumber(static_cast<double>(s.duration_us) / 1000) + "), got " +
                  FormatNumber(static_cast<double>(use.at_us) / 1000));
    }
  }
}

// A [cluster] is masters only: lockstep does not simulate cluster replicas or the cluster's own
// failover, Sentinel does not watch clusters, and the multi-master locks address independent
// masters, not one cluster.
void Loader::CheckCluster(const Scenario& s) {
  assert(s.cluster.enabled && cluster_where_);
  for (const ReplicaUse& use : replica_uses_) {
    Problem(use.where, use.key,
            "a [cluster] (line " + std::to_string(cluster_where_->begin.line) +
                ") has masters only: lockstep does not simulate cluster replicas or their "
                "failover; remove replica_of, or the [cluster] table");
  }
  if (s.sentinel.enabled && sentinel_enabled_where_) {
    Problem(*sentinel_enabled_where_, "sentinel.enabled",
            "Sentinel does not watch a Redis Cluster (line " +
                std::to_string(cluster_where_->begin.line) +
                " declares one); set enabled = false, or remove the [cluster] table");
  }
  const history::ProtocolKind* kind = s.protocol.kind;
  if (kind != nullptr && kind->cls == history::KindClass::kQuorum && protocol_kind_where_) {
    Problem(*protocol_kind_where_, "protocol.kind",
            "'" + s.protocol.kind_name() +
                "' locks several independent masters, but the [cluster] (line " +
                std::to_string(cluster_where_->begin.line) +
                ") makes the nodes one Redis; remove the [cluster] table, or use a "
                "single-lock kind such as rlock");
  }
}

// The first problem in the file (ties keep the order the loader found them in), leaving out a
// missing key when the same table has an unknown one: that is most likely the same key, typed
// wrong.
ScenarioError Loader::FirstProblem() const {
  assert(!problems_.empty());
  const Recorded* first = nullptr;
  for (const Recorded& r : problems_) {
    if (r.finding == Finding::kMissing) {
      const bool typo_nearby = std::any_of(problems_.begin(), problems_.end(), [&](const auto& o) {
        return o.finding == Finding::kUnknownKey && o.table == r.table;
      });
      if (typo_nearby) continue;
    }
    if (first == nullptr || std::pair(r.error.line, r.error.column) <
                                std::pair(first->error.line, first->error.column)) {
      first = &r;
    }
  }
  assert(first != nullptr);  // An unknown key is never left out, so one remains.
  return first->error;
}

std::optional<Scenario> Loader::Load(const toml::table& root, ScenarioError* error) {
  assert(error != nullptr);
  Scenario s;
  s.file = file_;
  ParseRoot(root, &s);
  if (problems_.empty()) CheckReferences(s);
  if (!problems_.empty()) {
    *error = FirstProblem();
    return std::nullopt;
  }
  assert(!s.nodes.empty());
  assert(!s.clients.empty());
  return s;
}

}  // namespace

ClockSpec ClockOf(const Scenario& scenario, const std::string& name, const ClockSpec& own) {
  ClockSpec spec = own;
  for (const FaultSpec& f : scenario.faults) {
    if (f.kind != FaultSpec::Kind::kClockJump) continue;
    if (std::find(f.targets.begin(), f.targets.end(), name) == f.targets.end()) continue;
    spec.jumps.push_back({f.at_us, f.by_us});
  }
  return spec;
}

WorkloadSpec Apply(const WorkloadSpec& base, const WorkloadOverride& o) {
  WorkloadSpec w = base;
  if (o.mode) w.mode = *o.mode;
  if (o.wait_us) w.wait_us = *o.wait_us;
  if (o.lease_us) w.lease_us = *o.lease_us;
  if (o.critical_us) w.critical_us = *o.critical_us;
  if (o.think_us) w.think_us = *o.think_us;
  if (o.reentry) w.reentry = *o.reentry;
  if (o.side) w.side = *o.side;
  if (o.stagger_us) w.stagger_us = *o.stagger_us;
  if (o.ops_per_thread) w.ops_per_thread = *o.ops_per_thread;
  return w;
}

std::optional<Scenario> LoadScenarioString(std::string_view text, const std::string& source_name,
                                           ScenarioError* error) {
  assert(error != nullptr);
  const std::filesystem::path source(source_name);
  if (text.size() > static_cast<size_t>(kMaxScenarioFileBytes)) {
    *error = ScenarioError{};
    error->file = source_name;
    error->message = "is larger than " + std::to_string(kMaxScenarioFileBytes >> 20) +
                     " MiB; a scenario file is never that long";
    return std::nullopt;
  }
  if (const std::optional<std::pair<int, int>> deep = TooDeep(text)) {
    *error = ScenarioError{};
    error->file = source_name;
    error->line = deep->first;
    error->column = deep->second;
    error->message = "nested more than " + std::to_string(kMaxTomlNesting) +
                     " levels deep (tables, arrays and the parts of dotted keys, counted "
                     "together); a scenario needs fewer than 10";
    return std::nullopt;
  }
  toml::table root;
#if TOML_EXCEPTIONS
  try {
    root = toml::parse(text, std::string_view(source_name));
  } catch (const toml::parse_error& e) {
    *error = SyntaxError(e, text, source_name);
    return std::nullopt;
  }
#else
  toml::parse_result result = toml::parse(text, std::string_view(source_name));
  if (!result) {
    *error = SyntaxError(result.error(), text, source_name);
    return std::nullopt;
  }
  root = std::move(result).table();
#endif
  Loader loader(source_name, source.parent_path());
  std::optional<Scenario> scenario = loader.Load(root, error);
  if (scenario && scenario->name.empty()) {
    scenario->name = source.stem().string();
    if (scenario->name.empty()) scenario->name = "scenario";
  }
  return scenario;
}

std::optional<Scenario> LoadScenarioFile(const std::string& path, ScenarioError* error) {
  assert(error != nullptr);
  *error = ScenarioError{};
  error->file = path;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    error->message = "is a directory, not a scenario file";
    return std::nullopt;
  }
  // A regular file only (a FIFO nobody writes to would block the open for ever, a device
  // never ends), and never more than the bound.
  std::string text, why;
  if (!ReadRegularFile(path, static_cast<size_t>(kMaxScenarioFileBytes), &text, &why)) {
    error->message = why.rfind("more than ", 0) == 0 || why.find(" bytes, more than ") != std::string::npos
                         ? "is larger than " + std::to_string(kMaxScenarioFileBytes >> 20) +
                               " MiB; a scenario file is never that long"
                         : why.rfind("cannot ", 0) == 0 ? why : "is " + why + "; a scenario is a TOML file";
    return std::nullopt;
  }
  return LoadScenarioString(text, path, error);
}

}  // namespace lockstep
