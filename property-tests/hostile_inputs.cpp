#include "property-tests/hostile_inputs.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <toml++/toml.h>
#include <utility>

#include "base/random.h"

namespace lockstep::hostile {
namespace {

// --- scenario mutations ---------------------------------------------------------------------

// Where a value sits: a key of a table or an element of an array.
struct Slot {
  toml::table* table = nullptr;
  std::string key;
  toml::array* array = nullptr;
  size_t index = 0;
  std::string path;
};

void CollectSlots(toml::table& table, const std::string& prefix, std::vector<Slot>* slots,
                  std::vector<std::pair<toml::array*, std::string>>* table_arrays,
                  std::vector<std::pair<toml::table*, std::string>>* tables);

void CollectArray(toml::array& array, const std::string& path, std::vector<Slot>* slots,
                  std::vector<std::pair<toml::array*, std::string>>* table_arrays,
                  std::vector<std::pair<toml::table*, std::string>>* tables) {
  if (!array.empty() && array.is_array_of_tables()) table_arrays->push_back({&array, path});
  for (size_t i = 0; i < array.size(); ++i) {
    const std::string item = path + "[" + std::to_string(i) + "]";
    slots->push_back({nullptr, "", &array, i, item});
    if (toml::table* t = array.get(i)->as_table()) CollectSlots(*t, item, slots, table_arrays, tables);
    if (toml::array* a = array.get(i)->as_array()) CollectArray(*a, item, slots, table_arrays, tables);
  }
}

void CollectSlots(toml::table& table, const std::string& prefix, std::vector<Slot>* slots,
                  std::vector<std::pair<toml::array*, std::string>>* table_arrays,
                  std::vector<std::pair<toml::table*, std::string>>* tables) {
  tables->push_back({&table, prefix});
  for (auto&& [key, node] : table) {
    const std::string path = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
    slots->push_back({&table, std::string(key.str()), nullptr, 0, path});
    if (toml::table* t = node.as_table()) CollectSlots(*t, path, slots, table_arrays, tables);
    if (toml::array* a = node.as_array()) CollectArray(*a, path, slots, table_arrays, tables);
  }
}

template <typename V>
void Put(const Slot& slot, V&& value) {
  if (slot.table != nullptr) {
    slot.table->insert_or_assign(slot.key, std::forward<V>(value));
  } else {
    slot.array->replace(slot.array->cbegin() + static_cast<std::ptrdiff_t>(slot.index),
                        std::forward<V>(value));
  }
}

std::string Big(size_t n, char c) { return std::string(n, c); }

toml::table Dist(std::initializer_list<std::pair<const char*, double>> numbers,
                 const char* dist) {
  toml::table t;
  t.insert("dist", dist);
  for (const auto& [k, v] : numbers) t.insert(k, v);
  return t;
}

// Puts a hostile value into the slot; returns its description.
std::string PutHostile(const Slot& slot, Prng& prng) {
  const double inf = std::numeric_limits<double>::infinity();
  const int64_t ints[] = {0, -1, 1, 2, 1000000, 2147483647, 2147483648LL,
                          std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                          -1000000000000LL, 1000000000000LL, 1025, 100000};
  const double floats[] = {0.0, -0.0, 1e-9, 0.0001, 0.4, 1e300, -1e300, inf, -inf,
                           std::nan(""), 1e12, -1e12, 0.001, 1e18};
  const std::string strings[] = {
      "", std::string("n1\0", 3), "n\xe2\x80\x8b" "1", "../../../tmp/lockstep-escape", "/proc/self/mem",
      "/dev/zero", ".", "/", "lock\n", "\x7f", "v3.13.6 ", "current", "rlock", "redlock",
      "fairlock", "countdownlatch", "exponential", "pareto", "   ", "%s%n%x", "${HOME}",
      Big(300, 'x'), "partition", "crash", "clock_jump", "\xc3\x28", "n1", "c1", "*"};
  switch (prng.UniformInt(0, 6)) {
    case 0: {
      const int64_t v = ints[prng.UniformInt(0, std::size(ints) - 1)];
      Put(slot, v);
      return std::to_string(v);
    }
    case 1: {
      const double v = floats[prng.UniformInt(0, std::size(floats) - 1)];
      Put(slot, v);
      char text[64];
      std::snprintf(text, sizeof text, "%g", v);
      return text;
    }
    case 2: {
      std::string v = strings[prng.UniformInt(0, std::size(strings) - 1)];
      if (prng.Bernoulli(0.02)) v = Big(4000000, 'n');  // The 3.9 MB name.
      const std::string shown = v.size() > 40 ? std::to_string(v.size()) + " bytes" : v;
      Put(slot, std::move(v));
      return "\"" + shown + "\"";
    }
    case 3: {
      const bool v = prng.Bernoulli(0.5);
      Put(slot, v);
      return v ? "true" : "false";
    }
    case 4: {
      toml::array a;
      const int64_t n = prng.UniformInt(0, 3);
      for (int64_t i = 0; i < n; ++i) a.push_back(i == 2 ? toml::array{} : toml::array{1, 2});
      if (prng.Bernoulli(0.3)) a = toml::array{"n1", "n1", "nobody"};
      Put(slot, std::move(a));
      return "an array";
    }
    default: {
      toml::table t;
      switch (prng.UniformInt(0, 7)) {
        case 0: break;
        case 1: t = Dist({{"scale", 0}, {"shape", 0}}, "pareto"); break;
        case 2: t = Dist({{"mean", 0.0001}}, "exponential"); break;
        case 3: t = Dist({{"min", 5}, {"max", 1}}, "uniform"); break;
        case 4: t = Dist({{"mean", -1}, {"stddev", 1e300}}, "normal"); break;
        case 5: t = Dist({{"value", 1e12}}, "fixed"); break;
        case 6: t = Dist({{"scale", 1e-9}, {"shape", 1e-9}, {"cap", 1e300}}, "pareto"); break;
        default: t = Dist({{"mean", 1}}, "bogus"); break;
      }
      Put(slot, std::move(t));
      return "a table";
    }
  }
}

// Names of the scenario's nodes and clients, for faults that target them.
std::vector<std::string> ProcessNames(toml::table& root) {
  std::vector<std::string> names;
  for (const char* list : {"nodes", "clients"}) {
    const toml::array* a = root[list].as_array();
    if (a == nullptr) continue;
    for (const toml::node& n : *a) {
      if (const toml::table* t = n.as_table()) {
        if (auto name = (*t)["name"].value<std::string>()) names.push_back(*name);
      }
    }
  }
  if (names.empty()) names = {"n1", "c1"};
  return names;
}

toml::table RandomFault(toml::table& root, Prng& prng) {
  const char* kinds[] = {"partition", "crash", "pause", "clock_jump", "failover",
                         "lose_replies", "latency", "loss", "duplicate", "bogus"};
  const std::vector<std::string> names = ProcessNames(root);
  const double times[] = {0, 1, 0.0001, 1e-9, 100, 5000, 59999, 1e12, -5, 1e300};
  auto time = [&] { return times[prng.UniformInt(0, std::size(times) - 1)]; };
  toml::table f;
  f.insert("kind", kinds[prng.UniformInt(0, std::size(kinds) - 1)]);
  f.insert("at_ms", time());
  toml::array targets;
  const int64_t n = prng.UniformInt(0, 3);
  for (int64_t i = 0; i < n; ++i) {
    targets.push_back(names[prng.UniformInt(0, static_cast<int64_t>(names.size()) - 1)]);
  }
  f.insert("targets", std::move(targets));
  if (prng.Bernoulli(0.8)) f.insert("duration_ms", time());
  if (prng.Bernoulli(0.3)) f.insert("by_ms", prng.Bernoulli(0.5) ? -time() : time());
  if (prng.Bernoulli(0.2)) f.insert("extra_ms", time());
  if (prng.Bernoulli(0.2)) f.insert("rate", prng.Bernoulli(0.5) ? 1.5 : 1e-12);
  if (prng.Bernoulli(0.2)) f.insert("one_way", true);
  if (prng.Bernoulli(0.2)) f.insert("peers", toml::array{names[0]});
  return f;
}

// One change to the parsed scenario; returns its description.
std::string MutateTree(toml::table& root, Prng& prng) {
  std::vector<Slot> slots;
  std::vector<std::pair<toml::array*, std::string>> table_arrays;
  std::vector<std::pair<toml::table*, std::string>> tables;
  CollectSlots(root, "", &slots, &table_arrays, &tables);
  const int64_t what = prng.UniformInt(0, 99);
  if (what < 55 && !slots.empty()) {
    const Slot& slot = slots[prng.UniformInt(0, static_cast<int64_t>(slots.size()) - 1)];
    return "value " + slot.path + " := " + PutHostile(slot, prng);
  }
  if (what < 65 && !slots.empty()) {
    const Slot& slot = slots[prng.UniformInt(0, static_cast<int64_t>(slots.size()) - 1)];
    if (slot.table != nullptr) {
      slot.table->erase(slot.key);
    } else {
      slot.array->erase(slot.array->cbegin() + static_cast<std::ptrdiff_t>(slot.index));
    }
    return "removed " + slot.path;
  }
  if (what < 72 && !table_arrays.empty()) {
    auto [array, path] = table_arrays[prng.UniformInt(0, static_cast<int64_t>(table_arrays.size()) - 1)];
    const int64_t copies[] = {1, 63, 300, 2000, 12000};
    const int64_t n = copies[prng.UniformInt(0, std::size(copies) - 1)];
    const toml::table first = *array->get(0)->as_table();
    for (int64_t i = 0; i < n; ++i) array->push_back(first);
    return "copied " + path + "[0] " + std::to_string(n) + " times";
  }
  if (what < 82) {
    toml::array* faults = root["faults"].as_array();
    if (faults == nullptr) {
      root.insert_or_assign("faults", toml::array{});
      faults = root["faults"].as_array();
    }
    const int64_t n = prng.Bernoulli(0.9) ? 1 : prng.UniformInt(2, 50);
    for (int64_t i = 0; i < n; ++i) faults->push_back(RandomFault(root, prng));
    return "added " + std::to_string(n) + " random fault(s)";
  }
  if (what < 87) {
    // The zero-time loop: nothing in the workload or the network takes any time.
    toml::table* workload = root["workload"].as_table();
    if (workload == nullptr) {
      root.insert_or_assign("workload", toml::table{});
      workload = root["workload"].as_table();
    }
    for (const char* key : {"think_ms", "critical_ms", "wait_ms"}) workload->insert_or_assign(key, 0);
    if (root["network"].as_table() == nullptr) root.insert_or_assign("network", toml::table{});
    root["network"].as_table()->insert_or_assign("latency_ms", 0);
    return "zero think, critical, wait and latency";
  }
  if (what < 92) {
    toml::array* clients = root["clients"].as_array();
    if (clients == nullptr || clients->empty() || !clients->get(0)->is_table()) return "nothing";
    toml::table& c = *clients->get(0)->as_table();
    const int64_t counts[] = {0, -5, 1025, 100000, 64, 200};
    const int64_t threads[] = {0, 256, 257, 1000000, 8};
    const int64_t count = counts[prng.UniformInt(0, std::size(counts) - 1)];
    const int64_t thread = threads[prng.UniformInt(0, std::size(threads) - 1)];
    c.erase("name");
    c.insert_or_assign("count", count);
    c.insert_or_assign("threads", thread);
    return "clients[0] count " + std::to_string(count) + " threads " + std::to_string(thread);
  }
  auto [table, path] = tables[prng.UniformInt(0, static_cast<int64_t>(tables.size()) - 1)];
  const char* keys[] = {"bogus_key", "duration", "seeds", "lease", "nodes", "Name"};
  const char* key = keys[prng.UniformInt(0, std::size(keys) - 1)];
  if (table->contains(key)) return "nothing";
  table->insert(key, 1);
  return std::string("added key ") + key + " to " + (path.empty() ? "the top" : path);
}

std::string Nested(const std::string& open, const std::string& middle, const std::string& close,
                   size_t depth) {
  std::string text;
  text.reserve(depth * (open.size() + close.size()) + middle.size());
  for (size_t i = 0; i < depth; ++i) text += open;
  text += middle;
  for (size_t i = 0; i < depth; ++i) text += close;
  return text;
}

Named MutateText(const std::string& base, Prng& prng) {
  std::string text = base;
  const size_t depths[] = {100, 5000, 100000};
  const size_t depth = depths[prng.UniformInt(0, 2)];
  const std::string d = std::to_string(depth);
  const auto pos = [&] { return static_cast<size_t>(prng.UniformInt(0, static_cast<int64_t>(text.size()))); };
  switch (prng.UniformInt(0, 16)) {
    case 0: {
      const size_t at = pos();
      text.resize(at);
      return {"text: truncated at " + std::to_string(at), text};
    }
    case 1: {
      const int64_t n = prng.UniformInt(1, 8);
      for (int64_t i = 0; i < n && !text.empty(); ++i) {
        text[pos() % text.size()] = static_cast<char>(prng.UniformInt(0, 255));
      }
      return {"text: " + std::to_string(n) + " random byte(s)", text};
    }
    case 2:
      text.insert(pos(), 1, '\0');
      return {"text: a NUL byte", text};
    case 3: {
      const size_t quote = text.find('"');
      if (quote != std::string::npos) text.insert(quote + 1, "\xff\xfe\xc0\x80");
      return {"text: invalid UTF-8 in a string", text};
    }
    case 4:
      return {"text: array nested " + d + " deep", text + "\nnested = " + Nested("[", "1", "]", depth) + "\n"};
    case 5:
      return {"text: inline table nested " + d + " deep",
              text + "\nnested = " + Nested("{ a = ", "1", " }", depth) + "\n"};
    case 6:
      return {"text: dotted key " + d + " deep", Nested("a.", "a = 1", "", depth) + "\n" + text};
    case 7:
      return {"text: table header " + d + " deep", text + "\n[" + Nested("a.", "a", "", depth) + "]\n"};
    case 8:
      return {"text: the file twice", text + "\n" + text};
    case 9: {
      const size_t mb = prng.Bernoulli(0.5) ? 1 : 24;
      return {"text: a " + std::to_string(mb) + " MB comment", text + "\n#" + Big(mb << 20, 'x') + "\n"};
    }
    case 10: {
      std::string crlf;
      for (char c : text) {
        if (c == '\n') crlf += '\r';
        crlf += c;
      }
      return {"text: CRLF line ends", crlf};
    }
    case 11:
      return {"text: a byte order mark", "\xef\xbb\xbf" + text};
    case 12: {
      for (char& c : text) {
        if (c == '\n') c = ' ';
      }
      return {"text: one line", text};
    }
    case 13:
      return {"text: empty", ""};
    case 14:
      return {"text: a table array header " + d + " deep",
              text + "\n[[" + Nested("f.", "f", "", depth) + "]]\n"};
    case 15:
      return {"text: 100000 keys", [&] {
                std::string t = text + "\n[checks]\n";
                for (int i = 0; i < 100000; ++i) t += "k" + std::to_string(i) + " = 1\n";
                return t;
              }()};
    default:
      return {"text: a string of 1 MB of escapes",
              text + "\ndescription = \"" + [] {
                std::string s;
                for (int i = 0; i < 100000; ++i) s += "\\u0000\\t";
                return s;
              }() + "\"\n"};
  }
}

}  // namespace

Named MutateScenario(const std::string& base, uint64_t seed) {
  Prng prng(seed);
  if (prng.Bernoulli(0.3)) return MutateText(base, prng);
  toml::table root;
  try {
    root = toml::parse(base);
  } catch (const toml::parse_error&) {
    return MutateText(base, prng);
  }
  const int64_t changes = prng.Bernoulli(0.6) ? 1 : prng.UniformInt(2, 4);
  std::string name;
  for (int64_t i = 0; i < changes; ++i) name += (name.empty() ? "" : "; ") + MutateTree(root, prng);
  std::ostringstream out;
  out << root << "\n";
  return {name, out.str()};
}

std::vector<Named> KnownBadScenarios(const std::string& not_lua_script) {
  const std::string head = "name = \"hostile\"\nduration_ms = 10000\n";
  const std::string nodes = "[[nodes]]\nname = \"n1\"\n";
  const std::string clients = "[[clients]]\ncount = 2\n";
  const std::string plain = head + nodes + clients;
  std::vector<Named> v;
  v.push_back({"watchdog_timeout_ms = 1", plain + "[protocol]\nwatchdog_timeout_ms = 1\n"});
  v.push_back({"watchdog_timeout_ms = 0.001", plain + "[protocol]\nwatchdog_timeout_ms = 0.001\n"});
  v.push_back({"timeout_ms = 0.0001", plain + "[protocol]\ntimeout_ms = 0.0001\n"});
  v.push_back({"timeout_ms = 0.0001 with 1000 retries",
               plain + "[protocol]\ntimeout_ms = 0.0001\nretry_attempts = 1000\n"});
  v.push_back({"dotted key 100000 deep (refuse)", Nested("a.", "a = 1", "", 100000) + "\n" + plain});
  v.push_back({"table header 100000 deep (refuse)", plain + "[" + Nested("a.", "a", "", 100000) + "]\n"});
  v.push_back({"duration_ms = 1e12 (refuse)",
               "name = \"hostile\"\nduration_ms = 1000000000000\n" + nodes + clients});
  v.push_back({"gc every_ms = 0.001", plain + "[gc]\nevery_ms = 0.001\npause_ms = 1\n"});
  v.push_back({"gc every_ms mean 0.0001",
               plain + "[gc]\nevery_ms = { dist = \"exponential\", mean = 0.0001 }\n"});
  v.push_back({"zero-time retry loop",
               plain + "[network]\nlatency_ms = 0\n[workload]\nthink_ms = 0\ncritical_ms = 0\n"
                       "wait_ms = 0\n"});
  v.push_back({"clock jump -1e12 then +1e12",
               head + "[[nodes]]\nname = \"n1\"\nclock = { jumps = [{ at_ms = 1000, by_ms = "
                      "-1000000000000 }, { at_ms = 2000, by_ms = 1000000000000 }] }\n" + clients});
  v.push_back({"1024 clients x 256 threads",
               head + nodes + "[[clients]]\ncount = 1024\nthreads = 256\n"});
  v.push_back({"NUL in a name (refuse)", head + "[[nodes]]\nname = \"n1\\u0000\"\n" + clients});
  v.push_back({"zero-width character in a name (refuse)",
               head + "[[nodes]]\nname = \"n\\u200b1\"\n" + clients});
  // Every invisible character, where each kind of text goes (a lock name, a
  // description): separators, Cf format characters, default-ignorables.
  for (const char* cp : {"2028", "2029", "061c", "180e", "200b", "202e", "2066", "fe0f", "feff",
                         "00ad", "3164", "U000E0041"}) {
    const std::string esc = std::string("\\") + (cp[0] == 'U' ? "" : "u") + cp;
    v.push_back({std::string("invisible ") + cp + " in the lock's name (refuse)",
                 plain + "[protocol]\nlock_name = \"a" + esc + "b\"\n"});
    v.push_back({std::string("invisible ") + cp + " in the description (refuse)",
                 "name = \"hostile\"\ndescription = \"a" + esc + "b\"\nduration_ms = 10000\n" +
                     nodes + clients});
  }
  v.push_back({"3.9 MB name (refuse)",
               head + "[[nodes]]\nname = \"" + Big(3900000, 'n') + "\"\n" + clients});
  v.push_back({"scripts.unlock = /proc/self/mem (refuse)",
               plain + "[protocol]\nscripts = { unlock = \"/proc/self/mem\" }\n"});
  v.push_back({"duration_ms = 1e-9 (refuse)",
               "name = \"hostile\"\nduration_ms = 1e-9\n" + nodes + clients});
  v.push_back({"clock jump by_ms = 0.0001 (refuse)",
               plain + "[[faults]]\nkind = \"clock_jump\"\nat_ms = 100\ntargets = [\"n1\"]\n"
                       "by_ms = 0.0001\n"});
  v.push_back({"name with ../ (refuse)",
               "name = \"../../lockstep-escape\"\nduration_ms = 10000\n" + nodes + clients});
  v.push_back({"script override that is not Lua (refuse)",
               plain + "[protocol]\nscripts = { unlock = \"" + not_lua_script + "\" }\n"});
  return v;
}

namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = text.find('\n', at);
    out.push_back(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

// The number after "key": in a JSON line, or -1.
int64_t Field(const std::string& line, const std::string& key) {
  const size_t at = line.find("\"" + key + "\":");
  if (at == std::string::npos) return -1;
  return std::strtoll(line.c_str() + at + key.size() + 3, nullptr, 10);
}

std::string WithField(const std::string& line, const std::string& key, int64_t value) {
  const size_t at = line.find("\"" + key + "\":");
  if (at == std::string::npos) return line;
  const size_t from = at + key.size() + 3;
  size_t to = from;
  while (to < line.size() && (std::isdigit(static_cast<unsigned char>(line[to])) || line[to] == '-')) ++to;
  return line.substr(0, from) + std::to_string(value) + line.substr(to);
}

// seq 0, 1, 2 ... again, after lines were moved, added or removed.
std::string Renumbered(const std::vector<std::string>& lines) {
  std::string out;
  int64_t seq = 0;
  for (const std::string& l : lines) out += WithField(l, "seq", seq++) + "\n";
  return out;
}

}  // namespace

Named MutateHistory(const std::string& base, uint64_t seed) {
  Prng rng(seed);
  std::vector<std::string> lines = Lines(base);
  Named m;
  if (lines.size() < 4) return {"unchanged (too short)", base};
  size_t protocol = 0;
  while (protocol < lines.size() && lines[protocol].find("\"op\":\"protocol\"") == std::string::npos) ++protocol;
  std::vector<size_t> execs;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("\"type\":\"exec\"") != std::string::npos) execs.push_back(i);
  }
  const auto pick = [&](size_t n) { return static_cast<size_t>(rng.UniformInt(0, static_cast<int64_t>(n) - 1)); };
  static const char* kKinds[] = {"rlock",     "fairlock",  "rwlock",   "redlock",   "multilock",
                                 "fencedlock", "spinlock",  "semaphore", "countdownlatch",
                                 "setnx-px",  "setnx-expire", "get-del", "nosuch"};
  switch (rng.UniformInt(0, 7)) {
    case 0:
      if (protocol < lines.size()) {
        lines.insert(lines.begin() + static_cast<long>(protocol) + 1, lines[protocol]);
        m.name = "a second protocol note";
        break;
      }
      [[fallthrough]];
    case 1:
      if (protocol < lines.size() && !execs.empty()) {
        const size_t e = execs[pick(execs.size())];
        const std::string note = WithField(lines[protocol], "t", Field(lines[e], "t"));
        lines.insert(lines.begin() + static_cast<long>(e) + 1, note);
        if (rng.Bernoulli(0.5)) lines.erase(lines.begin() + static_cast<long>(protocol));
        m.name = "a protocol note after the exec at line " + std::to_string(e + 1);
        break;
      }
      [[fallthrough]];
    case 2:
      if (protocol < lines.size()) {
        const std::string kind = kKinds[pick(std::size(kKinds))];
        std::string& l = lines[protocol];
        const size_t k = l.find("kind=");
        if (k != std::string::npos) {
          const size_t end = l.find(' ', k);
          l = l.substr(0, k + 5) + kind + (end == std::string::npos ? "" : l.substr(end));
        }
        m.name = "protocol kind := " + kind;
        break;
      }
      [[fallthrough]];
    case 3: {
      const std::string who = rng.Bernoulli(0.5) ? "c1" : "waiter1";
      const std::string enter = "{\"seq\":0,\"t\":0,\"type\":\"resource\",\"process\":\"" + who +
                                "\",\"thread\":0,\"op\":\"" + (rng.Bernoulli(0.5) ? "enter" : "exit") +
                                "\",\"lock\":\"lock\",\"local_ms\":1767225600000}";
      lines.insert(lines.begin() + 1, enter);
      m.name = "a resource event of " + who + " before the protocol note";
      break;
    }
    case 4: {
      const size_t i = 1 + pick(lines.size() - 1);
      lines.erase(lines.begin() + static_cast<long>(i));
      m.name = "line " + std::to_string(i + 1) + " dropped";
      break;
    }
    case 5: {
      const size_t i = 1 + pick(lines.size() - 1);
      lines.insert(lines.begin() + static_cast<long>(i), lines[i]);
      m.name = "line " + std::to_string(i + 1) + " repeated";
      break;
    }
    case 6: {
      const size_t i = pick(lines.size());
      std::string& l = lines[i];
      const size_t d = l.find("\"detail\":\"");
      const std::string bytes = rng.Bernoulli(0.5) ? "\\u001b[2J\\u001b]0;x\\u0007" : "\\u0000\\u009b31m";
      if (d != std::string::npos) l.insert(d + 10, bytes);
      m.name = "control bytes in the text of line " + std::to_string(i + 1);
      return {m.name, Renumbered(lines)};
    }
    default: {
      std::string text = Renumbered(lines);
      const size_t at = pick(text.size());
      text[at] = static_cast<char>(text[at] ^ (1 << rng.UniformInt(0, 7)));
      return {"a bit flipped at byte " + std::to_string(at), text};
    }
  }
  return {m.name, Renumbered(lines)};
}

std::vector<Named> HostileClientPrograms() {
  // An operation's body inside a program that declares what it must, and releases at once.
  const auto with_acquire = [](const std::string& body) {
    return "local lock = {layout = 'string-token'}\n"
           "function lock.acquire(op)\n" + body + "\nend\n"
           "function lock.release(op) return 'ok', 'released', 1 end\n"
           "return lock\n";
  };
  std::vector<Named> out = {
      {"endless loop in acquire", with_acquire("while true do end")},
      {"endless loop under pcall", with_acquire("while true do pcall(function() while true do end end) end")},
      {"endless loop under xpcall",
       with_acquire("while true do xpcall(function() while true do end end, function(e) return e end) end")},
      {"endless recursion", with_acquire("local function f(n) return f(n + 1) + 1 end return f(1)")},
      {"allocation without bound",
       with_acquire("local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 1000) .. i end")},
      {"one huge string", with_acquire("local s = string.rep('x', 1e10) return 'ok'")},
      {"concatenation doubling", with_acquire("local s = 'x' while true do s = s .. s end")},
      {"huge send", with_acquire("local t = {'SET'} for i = 2, 3e6 do t[i] = 'x' end "
                                  "return lockstep.call(0, t)")},
      {"huge value", with_acquire("return lockstep.call(0, {'SET', 'k', string.rep('v', 5e7)})")},
      {"a node that does not exist", with_acquire("return lockstep.call(7, {'PING'})")},
      {"a negative node", with_acquire("return lockstep.call(-1, {'PING'})")},
      {"an empty command", with_acquire("return lockstep.call(0, {})")},
      {"a table argument", with_acquire("return lockstep.call(0, {'SET', {}, 1})")},
      {"an unknown script", with_acquire("return lockstep.eval(0, 'nope', {}, {})")},
      {"never completes: sleeps for ever", with_acquire("while true do lockstep.sleep(1000000) end")},
      {"never completes: one long sleep", with_acquire("lockstep.sleep(9223372036854775807) return 'ok'")},
      {"a negative sleep", with_acquire("lockstep.sleep(-5) return 'ok'")},
      {"the longest timeout", with_acquire("return lockstep.call(0, {'PING'}, {timeout_us = 9223372036854775807})")},
      {"returns nothing", with_acquire("")},
      {"returns a table", with_acquire("return {}")},
      {"returns odd values", with_acquire("return 'ok', {}, 'x'")},
      {"raises a table", with_acquire("error({})")},
      {"raises nil", with_acquire("error()")},
      {"spawn storm", with_acquire("for i = 1, 1e7 do lockstep.spawn(function() end) end return 'ok'")},
      {"a task that loops", with_acquire("lockstep.spawn(function() while true do end end) return 'ok'")},
      {"a task that sleeps for ever",
       with_acquire("lockstep.spawn(function() while true do lockstep.sleep(1000) end end) return 'ok'")},
      {"cancel itself", with_acquire("local t t = lockstep.spawn(function() lockstep.sleep(1) "
                                     "lockstep.cancel(t) end) lockstep.sleep(10) return 'ok'")},
      {"too many calls at once", with_acquire("local c = {} for i = 1, 5000 do c[i] = {0, {'PING'}} end "
                                              "return lockstep.call_all(c)")},
      {"a batch read after a sleep", with_acquire("local b = lockstep.send_all({{0, {'PING'}}}) "
                                                  "lockstep.sleep(10) return b:next()")},
      {"a batch from nowhere", with_acquire("local b = lockstep.send_all({{0, {'PING'}}}) "
                                            "return b.next({batch = 99})")},
      {"a finalizer", with_acquire("setmetatable({}, {__gc = function() end}) return 'ok'")},
      {"an address", with_acquire("return 'ok', string.format('%p', {})")},
      {"a pattern", with_acquire("return 'ok', string.find(string.rep('a', 40), string.rep('a-', 30) .. 'b')")},
      {"io", with_acquire("io.write('x') return 'ok'")},
      {"os", with_acquire("return 'ok', tostring(os.time())")},
      {"coroutines", with_acquire("local co = coroutine.create(function() end) return 'ok'")},
      {"load", with_acquire("return load('return 1')()")},
      {"a huge random hex", with_acquire("return 'ok', lockstep.random_hex(1e9)")},
      {"an empty random range", with_acquire("return 'ok', tostring(lockstep.random(5, 1))")},
      {"a holder value storm", with_acquire("for i = 1, 1e9 do lockstep.holder_value('v' .. i) end return 'ok'")},
      {"a huge holder value", with_acquire("lockstep.holder_value(string.rep('v', 1e8)) return 'ok'")},
      {"a holder value with a comma", with_acquire("lockstep.holder_value('a,b') return 'ok'")},
      {"a holder value from a task",
       with_acquire("lockstep.spawn(function() for i = 1, 100 do lockstep.holder_value('t' .. i) "
                    "lockstep.sleep(1) end end) return 'ok'")},
      {"blocks on a list for ever", with_acquire("return lockstep.call(0, {'BLPOP', 'q', '0'})")},
      {"a transaction never ended", with_acquire("lockstep.call(0, {'MULTI'}) "
                                                 "for i = 1, 200000 do lockstep.call(0, {'SET', 'k' .. i, 'v'}) end "
                                                 "return 'ok'")},
      {"watches without end", with_acquire("for i = 1, 200000 do lockstep.call(0, {'WATCH', 'k' .. i}) end "
                                           "return 'ok'")},
      {"loops at load", "while true do end"},
      {"allocates at load", "local t = {} while true do t[#t + 1] = {} end"},
      {"calls at load", "lockstep.call(0, {'PING'}) return {}"},
      {"no table", "return 42"},
      {"no layout", "return {acquire = function() end, release = function() end}"},
      {"a looping metamethod",
       "return setmetatable({layout = 'string-token'}, {__index = function() while true do end end})"},
      {"operations that are not functions", "return {layout = 'string-token', acquire = 1, release = 2}"},
      {"not Lua", "this is not Lua"},
      {"empty", ""},
  };
  // Every hostile Redis script as an acquire: most of them use what a client program does not
  // have (redis.call, KEYS), some loop or allocate.
  const std::vector<Named> scripts = HostileScripts();
  for (size_t i = 0; i < scripts.size(); i += 7) {
    out.push_back({"script as acquire: " + scripts[i].name, with_acquire(scripts[i].text)});
  }
  return out;
}

std::vector<Named> HostileScripts() {
  std::vector<Named> v;
  auto add = [&](const std::string& name, const std::string& body) { v.push_back({name, body}); };
  // Loops of every shape.
  add("while true", "while true do end");
  add("counting loop", "local i = 0 while true do i = i + 1 end");
  add("repeat until false", "repeat until false");
  add("numeric for to 1e18", "for i = 1, 1e18 do end");
  add("goto loop", "::top:: goto top");
  add("tail call loop", "local function f() return f() end return f()");
  add("mutual tail calls", "local g local function f() return g() end g = function() return f() end return f()");
  add("recursion to stack overflow", "local function f() return 1 + f() end return f()");
  add("pcall loop", "while true do pcall(error, 'x') end");
  add("pcall of a loop", "return pcall(function() while true do end end)");
  add("error loop caught", "local n = 0 while true do local ok = pcall(function() error({}) end) n = n + 1 end");
  add("xpcall handler loop", "return xpcall(function() error('x') end, function() while true do end end)");
  add("error object with looping __tostring",
      "error(setmetatable({}, {__tostring = function() while true do end end}))");
  add("error with a table", "error({err = 'x'})");
  add("error with a number", "error(42)");
  add("error with nil", "error(nil)");
  add("error with a function", "error(function() end)");
  add("__index recursion", "return setmetatable({}, {__index = function(t, k) return t[k] end}).x");
  add("__gc loop", "setmetatable({}, {__gc = function() while true do end end}) collectgarbage()");
  add("__eq recursion", "local m = {} m.__eq = function(a, b) return a == b end "
                        "local a, b = setmetatable({}, m), setmetatable({}, m) return a == b");
  add("__concat recursion", "local m = {} m.__concat = function(a, b) return a .. b end "
                            "return setmetatable({}, m) .. 'x'");
  add("__len loop", "return #setmetatable({}, {__len = function() while true do end end})");
  add("string metatable changed", "getmetatable('').__index = function() while true do end end return ('x'):len()");
  // Coroutines.
  add("coroutine.create loop", "while true do coroutine.create(function() end) end");
  add("coroutine.wrap yields forever",
      "local f = coroutine.wrap(function() while true do coroutine.yield() end end) while true do f() end");
  add("loop inside a coroutine", "local co = coroutine.create(function() while true do end end) return coroutine.resume(co)");
  add("coroutines nested deep",
      "local function n(d) return coroutine.wrap(function() if d > 0 then n(d - 1)() end end) end n(100000)()");
  add("coroutine resumes itself", "local co co = coroutine.create(function() return coroutine.resume(co) end) return coroutine.resume(co)");
  add("coroutine error", "return coroutine.wrap(function() error('inside') end)()");
  add("yield outside a coroutine", "coroutine.yield(1)");
  // load.
  add("load reader never ends", "return load(function() return 'x' end)");
  add("load reader of spaces", "return load(function() return ' ' end)");
  add("load reader returns a table", "return load(function() return {} end)");
  add("load of a loop", "local f = load('while true do end') return f()");
  add("load binary chunk", "return load(string.dump(function() return 1 end))");
  add("loadstring", "return loadstring('return 1')()");
  add("dofile", "return dofile('/etc/passwd')");
  add("loadfile", "return loadfile('/etc/passwd')");
  add("require", "return require('os')");
  add("os.execute", "return os.execute('true')");
  add("io.open", "return io.open('/etc/passwd')");
  add("debug library", "return debug.getinfo(1)");
  add("new global", "x = 1 return x");
  add("rawset global", "rawset(_G, 'x', 1)");
  add("setmetatable _G", "setmetatable(_G, nil) x = 1");
  add("getfenv", "return getfenv(1)");
  add("collectgarbage huge step", "return collectgarbage('step', 1e9)");
  add("collectgarbage count", "return collectgarbage('count') > 0");
  // Sizes: string building, tables, replies.
  for (const char* n : {"1e6", "1e7", "2^31", "2^40", "-1"}) {
    add(std::string("string.rep ") + n, std::string("return #string.rep('x', ") + n + ")");
    add(std::string("string.rep loop ") + n, std::string("while true do local s = string.rep('x', ") + n + ") end");
    add(std::string("string.rep with separator ") + n,
        std::string("return #string.rep('x', ") + n + ", string.rep('y', 1000))");
  }
  for (const char* n : {"1e3", "1e5", "1e6"}) {
    add(std::string("quadratic concat ") + n, std::string("local s = '' for i = 1, ") + n + " do s = s .. 'x' end return #s");
    add(std::string("concat of long strings ") + n,
        std::string("local s = string.rep('x', ") + n + ") while true do s = s .. s end");
    add(std::string("table.concat ") + n,
        std::string("local t = {} for i = 1, ") + n + " do t[i] = string.rep('x', 1000) end return #table.concat(t)");
    add(std::string("string.format width ") + n, std::string("return string.format('%") + n + "d', 1)");
    add(std::string("upper lower reverse ") + n,
        std::string("local s = string.rep('ab', ") + n + ") while true do s = s:upper():lower():reverse() end");
    add(std::string("string.byte all ") + n,
        std::string("return select('#', string.byte(string.rep('x', ") + n + "), 1, -1))");
    add(std::string("table.unpack ") + n, std::string("return select('#', table.unpack({}, 1, ") + n + "))");
    add(std::string("unpack ") + n, std::string("return select('#', unpack({}, 1, ") + n + "))");
    add(std::string("string.char many ") + n,
        std::string("local t = {} for i = 1, ") + n + " do t[i] = 65 end return #string.char(table.unpack(t))");
    add(std::string("tonumber of a long hex ") + n,
        std::string("return tonumber('0x' .. string.rep('f', ") + n + "))");
  }
  add("table grows without bound", "local t = {} while true do t[#t + 1] = string.rep('x', 1000) end");
  add("table of tables without bound", "local t = {} while true do t = {t} end");
  add("string keys without bound", "local t = {} local i = 0 while true do i = i + 1 t['k' .. i] = i end");
  add("string.format %q NUL", "return string.format('%q', 'a\\0b')");
  add("string.format %s __tostring number",
      "return string.format('%s', setmetatable({}, {__tostring = function() return 1 end}))");
  add("string.format too few", "return string.format('%d %d', 1)");
  add("string.format invalid", "return string.format('%y', 1)");
  add("string.char 256", "return string.char(256)");
  add("string.sub huge", "return string.sub('abc', -2^63, 2^63 - 1)");
  add("select 2^31", "return select(2^31, 1)");
  add("select -2^31", "return select(-2^31, 1)");
  add("select 0", "return select(0, 1)");
  add("math.random 0", "return math.random(0)");
  add("math.random 2^53", "return math.random(2^53)");
  add("math.random reversed", "return math.random(5, 1)");
  add("integer overflow", "return math.maxinteger + 1");
  add("integer division by zero", "return 1 // 0");
  add("modulo by zero", "return 1 % 0");
  add("tostring of -nan", "return tostring(0/0)");
  add("bit.tohex", "return bit.tohex(1, -2^31)");
  add("bit.lshift", "return bit.lshift(1, 2^40)");
  // Patterns.
  for (int k : {5, 10, 20}) {
    for (const char* n : {"5000", "50000"}) {
      const std::string rep = "string.rep('.-', " + std::to_string(k) + ")";
      add("find backtracking " + std::to_string(k) + "x" + n,
          std::string("return string.find(string.rep('a', ") + n + "), " + rep + " .. 'b')");
      add("match backtracking " + std::to_string(k) + "x" + n,
          std::string("return string.match(string.rep('a', ") + n + "), " + rep + " .. 'b')");
      add("gsub backtracking " + std::to_string(k) + "x" + n,
          std::string("return string.gsub(string.rep('a', ") + n + "), " + rep + " .. 'b', '')");
    }
  }
  add("gmatch backtracking", "for m in string.gmatch(string.rep('a', 20000), '.-.-.-.-.-.-b') do end");
  add("gsub function loop", "return string.gsub('abc', '%w', function() while true do end end)");
  add("gsub huge result", "return #string.gsub(string.rep('a', 1e6), 'a', string.rep('b', 1000))");
  add("gsub %0 repeated", "return #string.gsub(string.rep('a', 1e5), 'a', '%0%0%0%0%0%0%0%0')");
  add("malformed pattern %", "return string.find('a', '%')");
  add("malformed pattern [", "return string.find('a', '[a')");
  add("invalid capture", "return string.gsub('a', 'a', '%2')");
  add("too many captures", "return string.find('a', string.rep('()', 40))");
  add("%b unbalanced", "return string.find(string.rep('(', 1e5), '%b()')");
  add("%f frontier", "return string.find('THE (quick) fox', '%f[%a]%a+')");
  add("pattern nested 200 captures", "return string.find('a', string.rep('(', 200) .. 'a' .. string.rep(')', 200))");
  add("gmatch anchored", "local n = 0 for m in string.gmatch('^a^a', '^a') do n = n + 1 end return n");
  // cjson, cmsgpack, struct.
  for (const char* n : {"1000", "100000"}) {
    const std::string deep = std::string("local t = {} local c = t for i = 1, ") + n +
                             " do c[1] = {} c = c[1] end ";
    add(std::string("cjson.encode deep ") + n, deep + "return cjson.encode(t)");
    add(std::string("cjson.encode deep, max depth 1e9 ") + n,
        "cjson.encode_max_depth(1e9) " + deep + "return cjson.encode(t)");
    add(std::string("cjson.decode deep ") + n,
        std::string("return cjson.decode(string.rep('[', ") + n + ") .. string.rep(']', " + n + "))");
    add(std::string("cjson.decode deep, max depth 1e9 ") + n,
        std::string("cjson.decode_max_depth(1e9) return cjson.decode(string.rep('[', ") + n +
            ") .. string.rep(']', " + n + "))");
    add(std::string("cmsgpack.pack deep ") + n, deep + "return #cmsgpack.pack(t)");
    add(std::string("reply nested ") + n, deep + "return t");
  }
  add("cjson.encode cycle", "local t = {} t[1] = t return cjson.encode(t)");
  add("cjson.encode huge", "local t = {} for i = 1, 1e6 do t[i] = i end return #cjson.encode(t)");
  add("cjson.decode garbage", "return cjson.decode('{\"a\":')");
  add("cjson.decode huge number", "return cjson.decode('1e99999')");
  add("cjson.decode escapes", "return cjson.decode('\"\\\\ud800\"')");
  add("cjson.encode sparse array", "local t = {} t[1e9] = 1 return cjson.encode(t)");
  add("cjson.encode function", "return cjson.encode({function() end})");
  add("cjson.encode_keep_buffer", "return cjson.encode_keep_buffer(false)");
  add("cmsgpack.pack cycle", "local t = {} t[1] = t return #cmsgpack.pack(t)");
  add("cmsgpack.unpack truncated", "return cmsgpack.unpack('\\xdd\\xff\\xff\\xff\\xff')");
  add("cmsgpack.unpack huge map", "return cmsgpack.unpack('\\xdf\\xff\\xff\\xff\\xff')");
  add("cmsgpack.unpack nested", "return cmsgpack.unpack(string.rep('\\x91', 100000) .. '\\x01')");
  add("cmsgpack.unpack_limit", "return cmsgpack.unpack_limit(string.rep('\\x01', 10), -1)");
  add("struct.pack huge count", "return struct.pack('i9999999999', 1)");
  add("struct.pack huge string", "return #struct.pack('c2000000000', 'x')");
  add("struct.unpack past end", "return struct.unpack('>I4', 'x')");
  add("struct.unpack huge size", "return struct.unpack('c99999999999', 'x')");
  add("struct.pack many", "return #struct.pack(string.rep('b', 100000), 1)");
  add("reply cycle", "local t = {} t[1] = t return t");
  // Work C does on a script's behalf, one family each, at several sizes: the reply
  // conversion of a table holding itself (or a DAG of doubling size), '__call' and '__index'
  // chains.
  for (const char* n : {"2", "100", "7000"}) {
    add(std::string("reply of a table holding itself ") + n + " times",
        std::string("local t = {} for i = 1, ") + n + " do t[i] = t end return t");
  }
  for (const char* n : {"10", "20", "30"}) {
    const std::string dag = std::string("local x = {} for i = 1, ") + n + " do x = {x, x} end ";
    add(std::string("reply DAG of depth ") + n, dag + "return x");
    add(std::string("RESP3 map DAG of depth ") + n,
        std::string("redis.setresp(3) local x = {} for i = 1, ") + n +
            " do x = {map = {a = x, b = x}} end return x");
  }
  add("__call of itself", "local t = setmetatable({}, {}) getmetatable(t).__call = t return t()");
  for (const char* n : {"100", "10000", "400000"}) {
    add(std::string("__call chain of tables ") + n,
        std::string("local t = {} local c = t for i = 1, ") + n +
            " do local n = {} setmetatable(c, {__call = n}) c = n end "
            "setmetatable(c, {__call = function() return 1 end}) return t()");
    add(std::string("__index chain ") + n + ", looked up in a loop",
        std::string("local t = {} local c = t for i = 1, ") + n +
            " do local n = {} setmetatable(c, {__index = n}) c = n end "
            "local s = 0 for i = 1, 1e7 do if t.x then s = s + 1 end end return s");
    add(std::string("__newindex chain ") + n + ", assigned in a loop",
        std::string("local t = {} local c = t for i = 1, ") + n +
            " do local n = {} setmetatable(c, {__newindex = n}) c = n end "
            "for i = 1, 1e7 do t.x = i end return 1");
  }
  add("__index chain of 99, looked up in a loop",
      "local t = {} local c = t for i = 1, 99 do local n = {} setmetatable(c, {__index = n}) c = n end "
      "local s = 0 while true do if t.x then s = s + 1 end end");
  add("__index cycle", "local a, b = {}, {} setmetatable(a, {__index = b}) "
                       "setmetatable(b, {__index = a}) return a.x");
  add("reply with a metatable", "return setmetatable({}, {__index = function() while true do end end})");
  add("reply huge array", "local t = {} for i = 1, 1e5 do t[i] = i end return t");
  add("reply err table", "return {err = string.rep('x', 1e6)}");
  add("reply ok table", "return {ok = {}}");
  add("reply float", "return 3.99");
  add("reply -0", "return -0.0");
  add("reply inf", "return 1/0");
  // redis.* calls.
  add("redis.call no args", "return redis.call()");
  add("redis.call a table", "return redis.call({})");
  add("redis.call unknown", "return redis.call('NOSUCH')");
  add("redis.pcall unknown", "return redis.pcall('NOSUCH')");
  add("redis.call FLUSHALL", "return redis.call('FLUSHALL')");
  add("redis.call EVAL inside", "return redis.call('EVAL', 'return 1', 0)");
  add("redis.call SCRIPT", "return redis.call('SCRIPT', 'FLUSH')");
  add("redis.call MULTI", "return redis.call('MULTI')");
  add("redis.call DEBUG", "return redis.call('DEBUG', 'SLEEP', '10')");
  add("redis.call SHUTDOWN", "return redis.call('SHUTDOWN')");
  add("redis.call BLPOP", "return redis.call('BLPOP', KEYS[1], 0)");
  add("redis.call SUBSCRIBE", "return redis.call('SUBSCRIBE', 'ch')");
  add("redis.call huge arity", "local t = {} for i = 1, 1e5 do t[i] = 'x' end return redis.call('DEL', table.unpack(t))");
  add("redis.call nil arg", "return redis.call('SET', KEYS[1], nil)");
  add("redis.call table arg", "return redis.call('SET', KEYS[1], {})");
  add("redis.call float arg", "return redis.call('SET', KEYS[1], 3.5)");
  add("RPUSH loop", "while true do redis.call('RPUSH', KEYS[1], string.rep('x', 1000)) end");
  add("SET loop of new keys", "local i = 0 while true do i = i + 1 redis.call('SET', 'k' .. i, string.rep('x', 100)) end");
  add("SET 512 MB", "return redis.call('SET', KEYS[1], string.rep('x', 512 * 1024 * 1024))");
  add("APPEND grows", "while true do redis.call('APPEND', KEYS[1], string.rep('x', 1e5)) end");
  add("HSET loop", "local i = 0 while true do i = i + 1 redis.call('HSET', KEYS[1], i, i) end");
  add("ZADD loop", "local i = 0 while true do i = i + 1 redis.call('ZADD', KEYS[1], i, i) end");
  add("KEYS pathological glob",
      "for i = 1, 100 do redis.call('SET', 'a' .. string.rep('a', i), 1) end "
      "return redis.call('KEYS', string.rep('*a', 25) .. '*b')");
  add("SCAN pathological glob",
      "for i = 1, 100 do redis.call('SET', string.rep('a', i), 1) end "
      "return redis.call('SCAN', 0, 'MATCH', string.rep('*a', 25) .. '*b', 'COUNT', 1000)");
  add("KEYS [^]", "redis.call('SET', 'a', 1) return redis.call('KEYS', '[^]')");
  add("SCAN -1", "return redis.call('SCAN', '-1')");
  add("SCAN 2^64-1", "return redis.call('SCAN', '18446744073709551615')");
  add("SCAN huge COUNT", "return redis.call('SCAN', 0, 'COUNT', '9223372036854775807')");
  add("SELECT unknown", "return redis.call('SELECT', 99)");
  add("LRANGE huge", "for i = 1, 1000 do redis.call('RPUSH', KEYS[1], i) end "
                     "while true do redis.call('LRANGE', KEYS[1], 0, -1) end");
  add("ZRANGEBYSCORE inf", "for i = 1, 1000 do redis.call('ZADD', KEYS[1], i, i) end "
                           "while true do redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '+inf') end");
  add("PEXPIRE overflow", "redis.call('SET', KEYS[1], 1) return redis.call('PEXPIRE', KEYS[1], '9223372036854775807')");
  add("SET PX 0", "return redis.call('SET', KEYS[1], 1, 'PX', 0)");
  add("INCR overflow", "redis.call('SET', KEYS[1], '9223372036854775807') return redis.call('INCR', KEYS[1])");
  add("INCRBYFLOAT inf", "return redis.call('INCRBYFLOAT', KEYS[1], 'inf')");
  add("PUBLISH loop", "while true do redis.call('PUBLISH', 'ch', 'x') end");
  add("redis.setresp 3", "redis.setresp(3) return redis.call('HGETALL', KEYS[1])");
  add("redis.setresp 4", "redis.setresp(4)");
  add("redis.breakpoint", "return redis.breakpoint()");
  add("redis.debug", "redis.debug('x')");
  add("redis.log huge", "redis.log(redis.LOG_WARNING, string.rep('x', 1e7))");
  add("redis.sha1hex huge", "return redis.sha1hex(string.rep('x', 1e7))");
  add("redis.error_reply huge", "return redis.error_reply(string.rep('x', 1e6))");
  add("redis.status_reply table", "return redis.status_reply({})");
  add("redis.set_repl bad", "redis.set_repl(99)");
  add("redis.replicate_commands", "return redis.replicate_commands()");
  add("redis.call in a coroutine", "return coroutine.wrap(function() return redis.call('PING') end)()");
  add("redis.call in __gc", "setmetatable({}, {__gc = function() redis.call('SET', 'x', 1) end}) collectgarbage()");
  add("redis.call in gsub", "return string.gsub('ab', '%w', function(c) return redis.call('INCR', KEYS[1]) end)");
  add("KEYS out of range", "return KEYS[1000]");
  add("ARGV modified", "ARGV[1] = string.rep('x', 1e6) return #ARGV[1]");
  add("syntax error", "return (");
  add("not Lua", "this is not a Lua script, just text");
  add("binary garbage", std::string("\x1bLuaS\x00\x19\x93\r\n\x1a\n", 12));
  add("NUL in the source", std::string("return 1\0 + 1", 13));
  add("very long source", "return " + Big(2000000, '1'));
  add("many locals", [] {
        std::string s;
        for (int i = 0; i < 300; ++i) s += "local a" + std::to_string(i) + " = 1\n";
        return s;
      }());
  add("expression nested 10000", "return " + Nested("(", "1", ")", 10000));
  add("table constructor nested 10000", "return " + Nested("{", "1", "}", 10000));
  add("function nesting 300", Nested("(function() ", "return 1", " end)()", 300));
  add("long string literal", "return [[" + Big(1000000, 'x') + "]]");
  add("many upvalues", [] {
        std::string s;
        for (int i = 0; i < 300; ++i) s += "local u" + std::to_string(i) + " = " + std::to_string(i) + "\n";
        s += "return function() return u0";
        for (int i = 1; i < 300; ++i) s += " + u" + std::to_string(i);
        return s + " end";
      }());
  return v;
}

std::vector<Named> HostileEmuInputs() {
  std::vector<Named> v;
  auto add = [&](const std::string& name, const std::string& text) { v.push_back({name, text}); };
  std::string setup;
  for (int i = 1; i <= 60; ++i) setup += "SET " + std::string(static_cast<size_t>(i), 'a') + " 1\n";
  add("KEYS pathological glob", setup + "KEYS " + Nested("*a", "*b", "", 25) + "\n");
  add("SCAN pathological glob", setup + "SCAN 0 MATCH " + Nested("*a", "*b", "", 25) + " COUNT 100\n");
  add("SCAN -1", "SCAN -1\n");
  add("SCAN 2^64-1", "SCAN 18446744073709551615\n");
  add("SCAN 2^64", "SCAN 18446744073709551616\n");
  add("SCAN huge COUNT", setup + "SCAN 0 COUNT 9223372036854775807\n");
  add("SCAN COUNT 0", "SCAN 0 COUNT 0\n");
  add("KEYS [^]", setup + "KEYS [^]\n");
  add("KEYS [", setup + "KEYS [\n");
  add("KEYS \\", setup + "KEYS \\\\\n");
  add("SELECT unknown", "SELECT 99\nSELECT -1\nSELECT 2147483648\n");
  add("EVAL loop", "EVAL \"while true do end\" 0\nPING\n");
  add("EVAL string.rep loop", "EVAL \"while true do local s = string.rep('x', 1e6) end\" 0\nPING\n");
  add("EVAL backtracking", "EVAL \"return string.find(string.rep('a', 50000), string.rep('.-', 10) .. 'b')\" 0\n");
  add("EVAL RPUSH loop", "EVAL \"while true do redis.call('RPUSH', 'l', string.rep('x', 1000)) end\" 0\nLLEN l\n");
  add("EVAL negative numkeys", "EVAL \"return 1\" -1\n");
  add("EVAL huge numkeys", "EVAL \"return 1\" 9223372036854775807\n");
  add("EVALSHA unknown", "EVALSHA ffffffffffffffffffffffffffffffffffffffff 0\n");
  add("SCRIPT LOAD garbage", "SCRIPT LOAD \"return (\"\nSCRIPT FLUSH\nSCRIPT EXISTS a b c\n");
  add("unbalanced quote", "SET k \"abc\nGET k\n");
  add("escapes", "SET k \"\\x00\\xff\\x\"\nGET k\n");
  add("huge argument", "SET k " + Big(8 << 20, 'x') + "\nSTRLEN k\n");
  add("many arguments", [] {
        std::string s = "DEL";
        for (int i = 0; i < 100000; ++i) s += " k" + std::to_string(i);
        return s + "\n";
      }());
  add("repeat count", "1000000 PING\n");
  add("repeat count negative", "-5 PING\n");
  add("SETRANGE huge offset", "SETRANGE k 536870911 x\nSETRANGE k 536870912 x\n");
  add("PEXPIRE overflow", "SET k 1\nPEXPIRE k 9223372036854775807\nPTTL k\n");
  add("EXPIRE overflow", "SET k 1\nEXPIRE k 9223372036854775807\nTTL k\n");
  add("INCRBYFLOAT nan", "INCRBYFLOAT k nan\nINCRBYFLOAT k inf\n");
  add("LRANGE huge", "RPUSH l a b c\nLRANGE l -9223372036854775808 9223372036854775807\n");
  add("ZADD nan", "ZADD z nan a\nZADD z inf a\nZRANGEBYSCORE z -inf +inf\n");
  add("DEBUG", "DEBUG SLEEP 100\nDEBUG SEGFAULT\n");
  add("SHUTDOWN", "SHUTDOWN\nPING\n");
  add("FLUSHALL ASYNC", "FLUSHALL ASYNC\nPING\n");
  add("CONFIG SET", "CONFIG SET maxmemory 1\nPING\n");
  add("NUL bytes in the line", std::string("SET k\0v\nGET k\n", 15));
  add("binary garbage", std::string("\xff\xfe\x00\x01\r\n\x1b[2J\n", 10));
  add("empty lines", "\n\n\n   \n");
  add("quit early", "PING\nquit\nPING\n");
  return v;
}

}  // namespace lockstep::hostile
