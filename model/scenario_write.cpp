// The scenario writer. It mirrors the loader (scenario_toml.cpp) key by key: every value is
// written so that the loader's own conversion gives it back, and a key is left out when the
// loader's default is the same value.
#include "model/scenario_write.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "model/scenario_names.h"
#include "model/scenario_toml.h"

namespace lockstep {
namespace {

// Lines longer than this are split: an array one element per line, an inline table into its
// own keys. The repository's sources keep to the same width.
constexpr size_t kLineWidth = 100;
// How many doubles on each side of us / 1000 are tried for a millisecond value that converts
// back exactly. One or two steps always suffice for a value the loader made; the rest is margin.
constexpr int kMillisSearchSteps = 16;
// A script path is written relative to the scenario's directory when it climbs at most this many
// folders out of it ("../lua/x.lua"); further away, the absolute path reads better.
constexpr int kMaxScriptUps = 2;

// ---- Numbers -----------------------------------------------------------------------------

// Shortest text that reads back as exactly v: fixed notation for the magnitudes a scenario uses
// ("0.25", "100000"), scientific outside them ("1e-07"), which TOML reads as well.
std::string NumberText(double v) {
  char buf[64];
  const double magnitude = std::abs(v);
  const bool fixed = magnitude == 0 || (magnitude >= 1e-5 && magnitude < 1e15);
  const auto result = std::to_chars(
      buf, buf + sizeof buf, v, fixed ? std::chars_format::fixed : std::chars_format::scientific);
  assert(result.ec == std::errc());
  return std::string(buf, result.ptr);
}

// The double a number's text gives in the loader. toml++ reads an integer as int64 and the loader
// converts it to double; a float it reads with the C library's correctly rounded conversion.
// from_chars rounds the same way for both.
std::optional<double> ParsedNumber(const std::string& text) {
  double v = 0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), v);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

// A distribution parameter in milliseconds: the loader keeps the double ms * 1000, unrounded. us / 1000 is not always a double m with m * 1000 == us (both
// operations round), so the doubles around it are tried too, and the exact one with the
// shortest text wins; when none is exact, the closest.
std::string MillisText(double us) {
  if (!std::isfinite(us)) return NumberText(us);  // The loader refuses it; say what it is.
  std::string best;
  double best_error = std::numeric_limits<double>::infinity();
  const auto consider = [&](double ms) {
    if (!std::isfinite(ms)) return;
    std::string text = NumberText(ms);
    const std::optional<double> parsed = ParsedNumber(text);
    assert(parsed && *parsed == ms);
    const double error = std::abs(*parsed * 1000 - us);
    if (error < best_error || (error == best_error && text.size() < best.size())) {
      best = std::move(text);
      best_error = error;
    }
  };
  double down = us / 1000;
  double up = down;
  consider(down);
  for (int step = 0; step < kMillisSearchSteps; ++step) {
    down = std::nextafter(down, -std::numeric_limits<double>::infinity());
    up = std::nextafter(up, std::numeric_limits<double>::infinity());
    consider(down);
    consider(up);
  }
  assert(!best.empty());
  return best;
}

// What the loader makes of a duration's text: DurationUs rounds ms * 1000 to the nearest integer.
bool LoadsAsUs(const std::string& text, int64_t us) {
  const std::optional<double> ms = ParsedNumber(text);
  return ms && std::abs(*ms * 1000) < 9.2e18 && std::llround(*ms * 1000) == us;
}

// A time in whole microseconds as milliseconds: the exact decimal (at most three digits after
// the point), which converts back exactly for every duration within the loader's limit. Beyond
// it (the loader refuses those anyway) a nearby double that still converts back is looked for.
std::string DurationText(int64_t us) {
  const bool negative = us < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(us) : static_cast<uint64_t>(us);
  std::string text = (negative ? "-" : "") + std::to_string(magnitude / 1000);
  if (const uint64_t fraction = magnitude % 1000; fraction != 0) {
    char digits[8];
    std::snprintf(digits, sizeof digits, "%03u", static_cast<unsigned>(fraction));
    std::string_view kept(digits);
    while (kept.ends_with('0')) kept.remove_suffix(1);
    text += "." + std::string(kept);
  }
  if (LoadsAsUs(text, us)) return text;
  double down = static_cast<double>(us) / 1000;
  double up = down;
  for (int step = 0; step <= kMillisSearchSteps; ++step) {
    for (double ms : {down, up}) {
      if (std::string t = NumberText(ms); LoadsAsUs(t, us)) return t;
    }
    down = std::nextafter(down, -std::numeric_limits<double>::infinity());
    up = std::nextafter(up, std::numeric_limits<double>::infinity());
  }
  return text;
}

// ---- Strings and keys --------------------------------------------------------------------

// A TOML basic string.
std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04X", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out += ch;  // UTF-8 sequences pass as they are.
        }
    }
  }
  return out + "\"";
}

// A key as TOML needs it: bare when it can be, else quoted ("c1->n1").
std::string Key(std::string_view k) {
  const bool bare = !k.empty() && std::all_of(k.begin(), k.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  return bare ? std::string(k) : Quote(k);
}

std::string Bool(bool b) { return b ? "true" : "false"; }

using Pairs = std::vector<std::pair<std::string, std::string>>;

std::string InlineTable(const Pairs& pairs) {
  if (pairs.empty()) return "{}";
  std::string out = "{ ";
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (i > 0) out += ", ";
    out += pairs[i].first + " = " + pairs[i].second;
  }
  return out + " }";
}

std::vector<std::string> Quoted(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  out.reserve(names.size());
  for (const std::string& n : names) out.push_back(Quote(n));
  return out;
}

// ---- Values ------------------------------------------------------------------------------

// A distribution as the file format writes it: a bare number for a fixed value without a cap,
// else a table with dist, its parameters and the cap.
std::string DistText(const Distribution& d) {
  if (d.kind == Distribution::Kind::kFixed && d.cap == 0) return MillisText(d.a);
  Pairs pairs = {{"dist", Quote(NameOf(kDistributions, d.kind))}};
  switch (d.kind) {
    case Distribution::Kind::kFixed: pairs.emplace_back("value", MillisText(d.a)); break;
    case Distribution::Kind::kUniform:
      pairs.emplace_back("min", MillisText(d.a));
      pairs.emplace_back("max", MillisText(d.b));
      break;
    case Distribution::Kind::kExponential: pairs.emplace_back("mean", MillisText(d.a)); break;
    case Distribution::Kind::kNormal:
      pairs.emplace_back("mean", MillisText(d.a));
      pairs.emplace_back("stddev", MillisText(d.b));
      break;
    case Distribution::Kind::kPareto:
      pairs.emplace_back("scale", MillisText(d.a));
      pairs.emplace_back("shape", NumberText(d.b));  // No unit.
      break;
  }
  if (d.cap != 0) pairs.emplace_back("cap", MillisText(d.cap));
  return InlineTable(pairs);
}

// A [fuzz] range bound in milliseconds. The loader rounds it to whole microseconds, as it does
// any duration, so a whole number of microseconds is written as its exact decimal; anything else
// (which no file gives) as the nearest double.
std::string RangeMillisText(double us) {
  if (std::trunc(us) == us && std::abs(us) < 9e18) return DurationText(static_cast<int64_t>(us));
  return MillisText(us);
}

// A [fuzz] range: one number when min = max, else { min = X, max = Y }.
std::string RangeText(const FuzzRange& r, bool is_ms) {
  const auto text = [&](double v) { return is_ms ? RangeMillisText(v) : NumberText(v); };
  if (r.min == r.max) return text(r.min);
  return InlineTable({{"min", text(r.min)}, {"max", text(r.max)}});
}

// A protocol.scripts path as it must be written in a file in `directory` for the loader, which
// takes (directory / written).lexically_normal(), to give back `resolved`.
std::string ScriptPathText(const std::string& resolved, const std::string& directory) {
  namespace fs = std::filesystem;
  const fs::path target(resolved);
  const fs::path dir(directory);
  const fs::path relative = target.lexically_relative(dir);
  if (!relative.empty() && (dir / relative).lexically_normal() == target) {
    int ups = 0;
    for (const fs::path& part : relative) {
      if (part != "..") break;
      ++ups;
    }
    // Two absolute paths that share nothing below the root ("/tmp/a" and "/work/x.lua") give
    // "../../work/x.lua", which says less than the absolute path.
    const bool share_a_folder = !dir.is_absolute() || dir.relative_path().empty() ||
                                *dir.relative_path().begin() == *target.relative_path().begin();
    if (ups <= kMaxScriptUps && share_a_folder) return relative.string();
  }
  if (target.is_absolute()) return resolved;
  std::error_code ec;
  const fs::path absolute = fs::absolute(target, ec);
  return ec ? resolved : absolute.lexically_normal().string();
}

// ---- The file ----------------------------------------------------------------------------

class Out {
 public:
  void Line(std::string line) { lines_.push_back(std::move(line)); }
  void Set(std::string_view key, const std::string& value) {
    Line(std::string(key) + " = " + value);
  }
  // A table header, with a blank line before it.
  void Header(std::string_view header) {
    if (!lines_.empty()) lines_.emplace_back();
    Line(std::string(header));
  }
  // `key = [a, b]` on one line, or one element per line when that is too long.
  void Array(std::string_view key, const std::vector<std::string>& items) {
    std::string line = std::string(key) + " = [";
    for (size_t i = 0; i < items.size(); ++i) line += (i > 0 ? ", " : "") + items[i];
    line += "]";
    if (line.size() <= kLineWidth) {
      Line(std::move(line));
      return;
    }
    Line(std::string(key) + " = [");
    for (const std::string& item : items) Line("  " + item + ",");
    Line("]");
  }
  // `key = { ... }` on one line when it fits; else the pairs as dotted keys (`key.a = 1`), an
  // array among them one element per line.
  void Table(std::string_view key, const Pairs& pairs,
             const std::vector<std::pair<std::string, std::vector<std::string>>>& arrays = {}) {
    Pairs all = pairs;
    for (const auto& [name, items] : arrays) {
      std::string joined = "[";
      for (size_t i = 0; i < items.size(); ++i) joined += (i > 0 ? ", " : "") + items[i];
      all.emplace_back(name, joined + "]");
    }
    std::string line = std::string(key) + " = " + InlineTable(all);
    if (line.size() <= kLineWidth) {
      Line(std::move(line));
      return;
    }
    for (const auto& [k, v] : pairs) Set(std::string(key) + "." + k, v);
    for (const auto& [name, items] : arrays) Array(std::string(key) + "." + name, items);
  }

  std::string Text() const {
    std::string out;
    for (const std::string& line : lines_) out += line + "\n";
    return out;
  }

 private:
  std::vector<std::string> lines_;
};

void WriteClock(Out& out, const ClockSpec& c) {
  const ClockSpec defaults;
  if (c == defaults) return;
  Pairs pairs;
  if (c.offset_us != defaults.offset_us) pairs.emplace_back("offset_ms", DurationText(c.offset_us));
  if (c.drift_ppm != defaults.drift_ppm) pairs.emplace_back("drift_ppm", NumberText(c.drift_ppm));
  if (c.ntp != defaults.ntp) pairs.emplace_back("ntp", Bool(c.ntp));
  if (c.slew_ppm != defaults.slew_ppm) pairs.emplace_back("slew_ppm", NumberText(c.slew_ppm));
  std::vector<std::pair<std::string, std::vector<std::string>>> arrays;
  if (!c.jumps.empty()) {
    std::vector<std::string> jumps;
    for (const ClockSpec::Jump& j : c.jumps) {
      jumps.push_back(
          InlineTable({{"at_ms", DurationText(j.at_us)}, {"by_ms", DurationText(j.by_us)}}));
    }
    arrays.emplace_back("jumps", std::move(jumps));
  }
  out.Table("clock", pairs, arrays);
}

void WriteTop(Out& out, const Scenario& s) {
  const Scenario defaults;
  // An empty name cannot be written (the loader refuses name = ""); left out, the loader takes
  // the file's stem.
  if (!s.name.empty()) out.Set("name", Quote(s.name));
  if (s.description != defaults.description) out.Set("description", Quote(s.description));
  out.Set("seed", std::to_string(s.seed));
  out.Set("duration_ms", DurationText(s.duration_us));
  if (s.start_unix_ms != defaults.start_unix_ms) {
    out.Set("start_unix_ms", std::to_string(s.start_unix_ms));  // An instant: an integer.
  }
}

void WriteNodes(Out& out, const Scenario& s) {
  for (const NodeSpec& node : s.nodes) {
    out.Header("[[nodes]]");
    // Always named: the loader's default names count unnamed nodes only, which a reader would
    // have to count too.
    out.Set("name", Quote(node.name));
    if (node.persistence != NodeSpec::Persistence::kNone) {
      out.Set("persistence", Quote(NameOf(kPersistences, node.persistence)));
    }
    if (!node.replica_of.empty()) out.Set("replica_of", Quote(node.replica_of));
    if (node.maxmemory_mb != NodeSpec::kMaxMemoryMbDefault) {
      out.Set("maxmemory_mb", std::to_string(node.maxmemory_mb));
    }
    WriteClock(out, node.clock);
  }
}

bool IsNamePrefix(std::string_view prefix) {
  return !prefix.empty() && prefix.size() + 4 <= static_cast<size_t>(kMaxNameLength) &&
         std::all_of(prefix.begin(), prefix.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
         });
}

bool SameButName(const ClientSpec& a, const ClientSpec& b) {
  return a.threads == b.threads && a.role == b.role && a.clock == b.clock &&
         a.workload == b.workload;
}

// Clients as the loader declares them: a `count` group of k clients with prefix P is named
// P(n+1) .. P(n+k), where n counts the clients earlier groups gave that prefix (clients with an
// explicit name do not count). So clients[i..] can be written as one group when their names
// continue P's numbering and they are otherwise identical. Returns the prefix and the length of
// the longest such run starting at `i` (0 when there is none).
std::pair<std::string, size_t> GroupAt(const std::vector<ClientSpec>& clients, size_t i,
                                       const std::map<std::string, int>& generated) {
  std::pair<std::string, size_t> best = {"", 0};
  const std::string& name = clients[i].name;
  for (size_t cut = name.size(); cut > 1 && std::isdigit(static_cast<unsigned char>(name[cut - 1]));
       --cut) {
    const size_t digits_at = cut - 1;
    if (name[digits_at] == '0' || name.size() - digits_at > 4) continue;  // "c01", or > 9999.
    const std::string prefix = name.substr(0, digits_at);
    if (!IsNamePrefix(prefix)) continue;
    const auto it = generated.find(prefix);
    const int next = (it == generated.end() ? 0 : it->second) + 1;
    if (std::stoi(name.substr(digits_at)) != next) continue;
    size_t length = 1;
    while (i + length < clients.size() && SameButName(clients[i], clients[i + length]) &&
           clients[i + length].name == prefix + std::to_string(next + static_cast<int>(length))) {
      ++length;
    }
    if (length > best.second) best = {prefix, length};
  }
  return best;
}

// A lease as the loader reads it back: -1 (none given) is written as -1 ms, which it stores
// as -1.
std::string LeaseText(int64_t lease_us) { return lease_us == -1 ? "-1" : DurationText(lease_us); }

// The workload fields a [[clients]] group sets for itself.
void WriteWorkloadOverride(Out& out, const WorkloadOverride& o) {
  if (o.mode) out.Set("mode", Quote(NameOf(kModes, *o.mode)));
  if (o.side) out.Set("side", Quote(NameOf(kSides, *o.side)));
  if (o.wait_us) out.Set("wait_ms", DurationText(*o.wait_us));
  if (o.lease_us) out.Set("lease_ms", LeaseText(*o.lease_us));
  if (o.critical_us) out.Set("critical_ms", DistText(*o.critical_us));
  if (o.think_us) out.Set("think_ms", DistText(*o.think_us));
  if (o.reentry) out.Set("reentry", std::to_string(*o.reentry));
  if (o.ops_per_thread) out.Set("ops_per_thread", std::to_string(*o.ops_per_thread));
  if (o.stagger_us) out.Set("stagger_ms", DurationText(*o.stagger_us));
}

void WriteClients(Out& out, const Scenario& s) {
  const ClientSpec defaults;
  std::map<std::string, int> generated;  // The loader's numbering, per prefix.
  for (size_t i = 0; i < s.clients.size();) {
    const ClientSpec& client = s.clients[i];
    const auto [prefix, length] = GroupAt(s.clients, i, generated);
    out.Header("[[clients]]");
    // A group of one would read as less than the name it stands for.
    if (length >= 2) {
      out.Set("count", std::to_string(length));
      if (prefix != "c") out.Set("name_prefix", Quote(prefix));
      generated[prefix] += static_cast<int>(length);
      i += length;
    } else {
      out.Set("name", Quote(client.name));
      ++i;
    }
    if (client.threads != defaults.threads) out.Set("threads", std::to_string(client.threads));
    if (client.role != defaults.role) {
      out.Set("role", Quote(NameOf(kRoles, client.role)));
    }
    WriteWorkloadOverride(out, client.workload);
    WriteClock(out, client.clock);
  }
}

void WriteNetwork(Out& out, const NetworkSpec& n) {
  const NetworkSpec defaults;
  if (n == defaults) return;
  Pairs links;
  for (const auto& [link, d] : n.link_latency_us) links.emplace_back(Key(link), DistText(d));
  const std::string links_line = "links = " + InlineTable(links);
  const bool links_table = links_line.size() > kLineWidth;  // [network.links], one per line.
  NetworkSpec others = n;
  others.link_latency_us.clear();
  if (others != defaults || !links_table) out.Header("[network]");
  if (n.latency_us != defaults.latency_us) out.Set("latency_ms", DistText(n.latency_us));
  if (n.loss != defaults.loss) out.Set("loss", NumberText(n.loss));
  if (n.duplicate != defaults.duplicate) out.Set("duplicate", NumberText(n.duplicate));
  if (n.reorder != defaults.reorder) out.Set("reorder", Bool(n.reorder));
  if (links.empty()) return;
  if (!links_table) {
    out.Line(links_line);
    return;
  }
  out.Header("[network.links]");
  for (const auto& [link, text] : links) out.Set(link, text);
}

void WriteProtocol(Out& out, const ProtocolSpec& p, const std::string& directory) {
  const ProtocolSpec defaults;
  out.Header("[protocol]");
  out.Set("kind", Quote(p.kind->name));
  out.Set("version", Quote(history::VersionName(p.version)));
  if (p.lock_name != defaults.lock_name) out.Set("lock_name", Quote(p.lock_name));
  if (p.watchdog_timeout_us != defaults.watchdog_timeout_us) {
    out.Set("watchdog_timeout_ms", DurationText(p.watchdog_timeout_us));
  }
  if (p.timeout_us != defaults.timeout_us) out.Set("timeout_ms", DurationText(p.timeout_us));
  if (p.retry_attempts != defaults.retry_attempts) {
    out.Set("retry_attempts", std::to_string(p.retry_attempts));
  }
  if (p.retry_interval_us != defaults.retry_interval_us) {
    out.Set("retry_interval_ms", DurationText(p.retry_interval_us));
  }
  if (p.fair_wait_timeout_us != defaults.fair_wait_timeout_us) {
    out.Set("fair_wait_timeout_ms", DurationText(p.fair_wait_timeout_us));
  }
  if (p.permits != defaults.permits) out.Set("permits", std::to_string(p.permits));
  if (!p.client.empty()) {
    const bool is_path = p.client.find('/') != std::string::npos;
    out.Set("client", Quote(is_path ? ScriptPathText(p.client, directory) : p.client));
  }
  if (p.script_files.empty()) return;
  Pairs scripts;
  for (const auto& [name, file] : p.script_files) {
    scripts.emplace_back(Key(name), Quote(ScriptPathText(file, directory)));
  }
  const std::string line = "scripts = " + InlineTable(scripts);
  if (line.size() <= kLineWidth) {
    out.Line(line);
    return;
  }
  out.Header("[protocol.scripts]");
  for (const auto& [name, text] : scripts) out.Set(name, text);
}

void WriteWorkload(Out& out, const WorkloadSpec& w) {
  const WorkloadSpec defaults;
  if (w == defaults) return;
  out.Header("[workload]");
  if (w.mode != defaults.mode) out.Set("mode", Quote(NameOf(kModes, w.mode)));
  if (w.wait_us != defaults.wait_us) out.Set("wait_ms", DurationText(w.wait_us));
  // -1 (no lease) is the default and has no spelling: the key is left out.
  if (w.lease_us != defaults.lease_us) out.Set("lease_ms", LeaseText(w.lease_us));
  if (w.critical_us != defaults.critical_us) out.Set("critical_ms", DistText(w.critical_us));
  if (w.think_us != defaults.think_us) out.Set("think_ms", DistText(w.think_us));
  if (w.reentry != defaults.reentry) out.Set("reentry", std::to_string(w.reentry));
  if (w.ops_per_thread != defaults.ops_per_thread) {
    out.Set("ops_per_thread", std::to_string(w.ops_per_thread));
  }
  if (w.stagger_us != defaults.stagger_us) out.Set("stagger_ms", DurationText(w.stagger_us));
  if (w.read_ratio != defaults.read_ratio) out.Set("read_ratio", NumberText(w.read_ratio));
}

// Only the keys the fault's kind takes (history/fault_kinds.h): the loader refuses the others.
void WriteFault(Out& out, const FaultSpec& f) {
  const history::FaultKindInfo& kind = history::InfoOf(f.kind);
  const auto takes = [&kind](std::string_view key) { return history::Takes(kind, key); };
  out.Header("[[faults]]");
  out.Set("kind", Quote(kind.name));
  out.Set("at_ms", DurationText(f.at_us));
  // An optional duration of 0 (a crash that never restarts) is the default: left out.
  if (takes("duration_ms") && (kind.no_duration_means.empty() || f.duration_us != 0)) {
    out.Set("duration_ms", DurationText(f.duration_us));
  }
  out.Array("targets", Quoted(f.targets));
  // A partition's peers are its other side; elsewhere no peers means every link of a target.
  const bool sides = kind.targets == history::FaultTargets::kPartitionSides;
  if (takes("peers") && (sides || !f.peers.empty())) {
    out.Array("peers", Quoted(f.peers));
  }
  if (takes("one_way") && f.one_way) out.Set("one_way", "true");
  if (takes("by_ms")) out.Set("by_ms", DurationText(f.by_us));
  if (takes("extra_ms")) out.Set("extra_ms", DurationText(f.extra_us));
  if (takes("rate")) out.Set("rate", NumberText(f.rate));
}

void WriteGc(Out& out, const GcSpec& gc) {
  const GcSpec defaults;
  if (gc == defaults) return;
  out.Header("[gc]");  // The table's presence turns the pauses on.
  if (!gc.enabled) out.Set("enabled", "false");
  if (!gc.clients.empty()) out.Array("clients", Quoted(gc.clients));
  if (gc.every_us != defaults.every_us) out.Set("every_ms", DistText(gc.every_us));
  if (gc.pause_us != defaults.pause_us) out.Set("pause_ms", DistText(gc.pause_us));
}

void WriteExpect(Out& out, const std::map<std::string, Expectation>& expect) {
  out.Header("[expect]");
  // The properties in the order the docs list them; a name the loader would not know last.
  std::vector<std::string_view> order(kProperties.begin(), kProperties.end());
  for (const auto& [property, e] : expect) {
    if (std::find(order.begin(), order.end(), property) == order.end()) order.push_back(property);
  }
  for (std::string_view property : order) {
    const auto it = expect.find(std::string(property));
    if (it == expect.end()) continue;
    out.Set(Key(property), Quote(NameOf(kExpectations, it->second)));
  }
}

void WriteFuzz(Out& out, const FuzzSpec& f) {
  const FuzzSpec defaults;
  if (f == defaults) return;
  out.Header("[fuzz]");
  if (f.faults != defaults.faults) {
    Pairs weights;
    for (const auto& [kind, weight] : f.faults) weights.emplace_back(Key(kind), NumberText(weight));
    out.Table("faults", weights);
  }
  const auto range = [&](std::string_view key, const FuzzRange& r, const FuzzRange& d,
                         bool is_ms) {
    if (r != d) out.Set(key, RangeText(r, is_ms));
  };
  range("fault_count", f.fault_count, defaults.fault_count, false);
  range("fault_duration_ms", f.fault_duration_us, defaults.fault_duration_us, true);
  range("clock_jump_ms", f.clock_jump_us, defaults.clock_jump_us, true);
  range("drift_ppm", f.drift_ppm, defaults.drift_ppm, false);
  range("latency_spike_ms", f.latency_spike_us, defaults.latency_spike_us, true);
  range("loss_rate", f.loss_rate, defaults.loss_rate, false);
  range("duplicate_rate", f.duplicate_rate, defaults.duplicate_rate, false);
  const auto optional_range = [&](std::string_view key, const std::optional<FuzzRange>& r,
                                  bool is_ms) {
    if (r) out.Set(key, RangeText(*r, is_ms));
  };
  optional_range("clients", f.clients, false);
  optional_range("threads", f.threads, false);
  optional_range("lease_ms", f.lease_us, true);
  optional_range("wait_ms", f.wait_us, true);
  optional_range("critical_ms", f.critical_us, true);
  optional_range("think_ms", f.think_us, true);
  optional_range("replication_lag_ms", f.replication_lag_us, true);
  if (!f.versions.empty()) out.Array("versions", Quoted(f.versions));
  if (f.max_events != defaults.max_events) out.Set("max_events", std::to_string(f.max_events));
  if (f.max_case_s != defaults.max_case_s) out.Set("max_case_s", NumberText(f.max_case_s));
}

}  // namespace

std::string ScenarioToToml(const Scenario& s, const ScenarioWriteOptions& options) {
  Out out;
  if (!options.header.empty()) {
    std::string_view rest = options.header;
    while (true) {
      const size_t newline = rest.find('\n');
      const std::string_view line = rest.substr(0, newline);
      out.Line(line.empty() ? "#" : "# " + std::string(line));
      if (newline == std::string_view::npos) break;
      rest.remove_prefix(newline + 1);
    }
  }
  WriteTop(out, s);
  WriteNodes(out, s);
  WriteClients(out, s);
  WriteNetwork(out, s.network);
  if (s.replication != ReplicationSpec{}) {
    out.Header("[replication]");
    out.Set("lag_ms", DistText(s.replication.lag_us));
  }
  // Like [gc], the table's presence turns the cluster on; `enabled = false` and no table are
  // the same Scenario, so the table is written only for a cluster.
  if (s.cluster.enabled) out.Header("[cluster]");
  const SentinelSpec sentinel;
  if (s.sentinel != sentinel) {
    out.Header("[sentinel]");
    if (s.sentinel.enabled != sentinel.enabled) out.Set("enabled", Bool(s.sentinel.enabled));
    if (s.sentinel.down_after_us != sentinel.down_after_us) {
      out.Set("down_after_ms", DurationText(s.sentinel.down_after_us));
    }
    if (s.sentinel.client_rediscover_us != sentinel.client_rediscover_us) {
      out.Set("client_rediscover_ms", DurationText(s.sentinel.client_rediscover_us));
    }
  }
  WriteProtocol(out, s.protocol, options.directory);
  WriteWorkload(out, s.workload);
  if (s.resource.fencing) {
    out.Header("[resource]");
    out.Set("fencing", "true");
  }
  for (const FaultSpec& f : s.faults) WriteFault(out, f);
  WriteGc(out, s.gc);
  if (s.liveness_bound_us != Scenario().liveness_bound_us) {
    out.Header("[checks]");
    out.Set("liveness_bound_ms", DurationText(s.liveness_bound_us));
  }
  WriteExpect(out, s.expect);
  WriteFuzz(out, s.fuzz);
  return out.Text();
}

std::string_view FaultKindName(FaultSpec::Kind kind) {
  return history::InfoOf(kind).name;
}

}  // namespace lockstep
