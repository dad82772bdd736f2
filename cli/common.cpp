#include "cli/common.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "base/write_file.h"
#include "cli/subcommands.h"
#include "reports/text.h"
#include "core/server.h"
#include "model/scenario_scale.h"
#include "model/scenario_toml.h"
#include "model/scenario_write.h"

namespace po = boost::program_options;

namespace lockstep::cli {

namespace {
// The first signal that arrived; later ones do not overwrite it (the exit status names the one
// that stopped the run).
volatile std::sig_atomic_t g_interrupted = 0;
void OnInterrupt(int signal_number) {
  if (g_interrupted == 0) g_interrupted = signal_number;
}
}  // namespace

InterruptScope::InterruptScope() {
  g_interrupted = 0;
  struct sigaction action {};
  action.sa_handler = OnInterrupt;
  sigemptyset(&action.sa_mask);
  // One handler at a time: a second signal waits until the first one's flag is set.
  sigaddset(&action.sa_mask, SIGINT);
  sigaddset(&action.sa_mask, SIGTERM);
  sigaddset(&action.sa_mask, SIGHUP);
  sigaction(SIGINT, &action, &old_int_);
  sigaction(SIGTERM, &action, &old_term_);
  sigaction(SIGHUP, &action, &old_hup_);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
  sigaction(SIGHUP, &old_hup_, nullptr);
}

const volatile std::sig_atomic_t* InterruptScope::flag() const { return &g_interrupted; }

int InterruptScope::signal_number() const { return g_interrupted; }

int InterruptScope::exit_status() const {
  return g_interrupted != 0 ? 128 + g_interrupted : kExitInterrupted;
}

const char* InterruptScope::signal_name() const {
  switch (g_interrupted) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "a signal";
  }
}

namespace {

// Where lockstep's bundled files (lua/, scenarios/) may be, in the order they are tried: next
// to an installed binary (<prefix>/bin/lockstep: <prefix>/share/lockstep), then the source tree
// of a build-tree binary (<source>/build/lockstep: <source>). Found from the binary's own path,
// so an installed or moved tree works from any directory.
std::vector<std::filesystem::path> DataRoots() {
  std::vector<std::filesystem::path> roots;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.has_parent_path()) {
    const std::filesystem::path prefix = exe.parent_path().parent_path();
    roots.push_back(prefix / "share" / "lockstep");
    roots.push_back(prefix);
  }
  return roots;
}

bool IsFile(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec);
}

// `file` as given when it exists (or is absolute); else the first bundled file of that path
// (with `scenario`, also under scenarios/, and NAME as scenarios/NAME.toml).
std::string ResolveDataPath(const std::string& file, bool scenario, bool* bundled) {
  *bundled = false;
  const std::filesystem::path given(file);
  std::error_code ec;
  if (file.empty() || given.is_absolute() || std::filesystem::exists(given, ec)) return file;
  for (const std::filesystem::path& root : DataRoots()) {
    std::vector<std::filesystem::path> candidates = {root / given};
    if (scenario) candidates.push_back(root / "scenarios" / given);
    if (scenario && !given.has_extension()) {
      candidates.push_back(root / "scenarios" / (file + ".toml"));
    }
    for (const std::filesystem::path& c : candidates) {
      if (IsFile(c)) {
        *bundled = true;
        return c.string();
      }
    }
  }
  return file;
}

}  // namespace

std::string DefaultLuaDir() {
  if (const char* env = std::getenv("LOCKSTEP_LUA_DIR")) return env;
  for (const std::filesystem::path& root : DataRoots()) {
    if (IsFile(root / "lua" / "rlock" / "v3.13.6" / "acquire.lua")) return (root / "lua").string();
  }
  return LOCKSTEP_LUA_DIR;  // The source tree it was built from.
}

std::string ResolveBundledPath(const std::string& file, bool* bundled) {
  return ResolveDataPath(file, /*scenario=*/false, bundled);
}

std::string ResolveScenarioPath(const std::string& file, bool* bundled) {
  return ResolveDataPath(file, /*scenario=*/true, bundled);
}

std::string ShellQuote(const std::string& s) {
  if (!s.empty() && s.find_first_of(" \t'\"$`\\;&|<>()*?") == std::string::npos) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string Seconds(int64_t us) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f s", static_cast<double>(us) / 1e6);
  return buf;
}

ProgressLine::ProgressLine(bool quiet) : quiet_(quiet), tty_(isatty(fileno(stderr)) != 0) {}

void ProgressLine::Show(const std::string& text, bool force) {
  if (quiet_) return;
  const auto now = std::chrono::steady_clock::now();
  if (tty_) {
    std::fprintf(stderr, "\r%-78.78s", text.c_str());
    std::fflush(stderr);
    shown_ = true;
  } else if (force || now - last_ >= std::chrono::seconds(10)) {
    std::fprintf(stderr, "%s\n", text.c_str());
    last_ = now;
  }
}

void ProgressLine::Clear() {
  if (tty_ && shown_) {
    std::fprintf(stderr, "\r%78s\r", "");
    std::fflush(stderr);
  }
  shown_ = false;
}

ReportsProgressLine::ReportsProgressLine(bool quiet, int64_t end_us)
    : on_(!quiet && isatty(fileno(stderr)) != 0),
      end_us_(end_us),
      start_(std::chrono::steady_clock::now()),
      line_(!on_) {}

reports::ReadProgress ReportsProgressLine::progress() {
  reports::ReadProgress p;
  if (on_) p.report = [this](uint64_t events_read, int64_t t_us) { Show(events_read, t_us); };
  return p;
}

void ReportsProgressLine::Show(uint64_t events_read, int64_t t_us) {
  if (std::chrono::steady_clock::now() - start_ < std::chrono::seconds(1)) return;
  char simulated[64];
  if (end_us_ > 0) {
    std::snprintf(simulated, sizeof(simulated), "%.1f of %.1f simulated s",
                  static_cast<double>(t_us) / 1e6, static_cast<double>(end_us_) / 1e6);
  } else {
    std::snprintf(simulated, sizeof(simulated), "%.1f simulated s",
                  static_cast<double>(t_us) / 1e6);
  }
  line_.Show("reports: " + reports::Grouped(events_read) + " events read, " + simulated);
}

void ReportsProgressLine::Clear() { line_.Clear(); }

std::string FormatFactor(double factor) {
  char buf[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof(buf), "%.*g", digits, factor);
    if (std::strtod(buf, nullptr) == factor) break;
  }
  return buf;
}

std::string FormatVerdict(const check::Verdict& verdict,
                          const std::map<std::string, Expectation>& expect) {
  std::ostringstream body;
  body << "verdict:\n";
  for (const check::PropertyResult& r : verdict.results) {
    const Expectation want = ExpectationOf(expect, r.property);
    // A property that does not apply to the protocol kind reads "-", as in replay's table.
    const std::string expected =
        want == Expectation::kHold       ? "expected to hold"
        : want == Expectation::kViolated ? "expected to be violated"
        : r.applicable                   ? "not judged"
                                         : "does not apply to " + (verdict.protocol_kind.empty()
                                                                       ? std::string("rlock")
                                                                       : verdict.protocol_kind);
    const bool matches = want == Expectation::kAny || (want == Expectation::kHold) != r.violated;
    const char* state = r.violated ? "VIOLATED" : r.applicable ? "holds" : "-";
    char line[200];
    std::snprintf(line, sizeof(line), "  %-19s %-9s (%s)%s", r.property.c_str(), state,
                  expected.c_str(), matches ? "" : "  <-- MISMATCH");
    body << line;
    // All it found, not only the violations a verdict keeps (CheckOptions::max_violations).
    if (r.violated) body << "  " << r.violation_count << " violation(s)";
    body << "\n";
    if (r.violated && !r.violations.empty()) {
      body << "      first: " << Printable(r.violations.front().explanation) << "\n";
    }
  }
  return body.str();
}

std::string Printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof code, "\\x%02x", c);
      out += code;
    } else {
      out.push_back(ch);
    }
  }
  return out;
}

std::string ResolveScenario(const std::string& command, const std::string& file) {
  bool bundled = false;
  const std::string path = ResolveScenarioPath(file, &bundled);
  if (bundled) {
    std::cerr << "lockstep " << command << ": no " << file << " here; using the bundled " << path
              << "\n";
  }
  return path;
}

std::optional<Scenario> LoadScenarioForRun(const std::string& command, const std::string& file,
                                           const RunOverrides& o, const po::variables_map& vm) {
  ScenarioError error;
  std::optional<Scenario> scenario = LoadScenarioFile(ResolveScenario(command, file), &error);
  if (!scenario) {
    std::cerr << error.ToString() << "\n";
    return std::nullopt;
  }
  if (vm.count("seed")) scenario->seed = o.seed;
  if (vm.count("duration-ms")) {
    if (o.duration_ms <= 0) {
      std::cerr << "lockstep " << command << ": --duration-ms must be positive\n";
      return std::nullopt;
    }
    const int64_t before = scenario->duration_us;
    scenario->duration_us = o.duration_ms * 1000;
    // A shorter run would drop faults the scenario (and its [expect]) counts on, silently.
    for (const FaultSpec& f : scenario->faults) {
      if (f.at_us < before && f.at_us >= scenario->duration_us) {
        std::cerr << "lockstep " << command << ": --duration-ms " << o.duration_ms
                  << " ends the run before the scenario's " << FaultKindName(f.kind)
                  << " fault at " << f.at_us / 1000 << " ms"
                  << (f.line > 0 ? " (line " + std::to_string(f.line) + ")" : std::string())
                  << ", which would never happen: give --duration-ms " << f.at_us / 1000 + 1
                  << " or more, or edit the scenario's faults\n";
        return std::nullopt;
      }
    }
  }
  if (vm.count("time-scale")) {
    if (!(o.time_scale > 0) || !std::isfinite(o.time_scale)) {
      std::cerr << "lockstep " << command << ": --time-scale must be a number above 0, e.g. 0.1\n";
      return std::nullopt;
    }
    *scenario = ScaleTimes(*scenario, o.time_scale);
  }
  return scenario;
}

namespace {

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string DidYouMean(const std::string& typed, const po::options_description& desc) {
  std::string_view word = typed;
  while (!word.empty() && word.front() == '-') word.remove_prefix(1);
  const size_t eq = word.find('=');
  if (eq != std::string_view::npos) word = word.substr(0, eq);
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const auto& option : desc.options()) {
    const std::string& name = option->long_name();
    if (name.empty()) continue;
    const size_t d = EditDistance(word, name);
    if (d < best_distance) {
      best_distance = d;
      best = name;
    }
  }
  // Close enough to be a slip: a letter or two for a short name, a third of a long one.
  if (!best.empty() && best_distance <= std::max<size_t>(2, best.size() / 3)) {
    return "; did you mean --" + best + "?";
  }
  // Flags other tools have, which lockstep spells otherwise or does not need; each shown only
  // where the option it points to exists.
  struct Elsewhere {
    std::string_view flag, needs, hint;
  };
  static constexpr Elsewhere kElsewhere[] = {
      {"verbose", "quiet", "details are printed by default; -q (--quiet) prints fewer"},
      {"v", "quiet", "details are printed by default; -q (--quiet) prints fewer"},
      {"silent", "quiet", "-q (--quiet) prints only the verdict and the result"},
      {"output", "out", "the output folder is --out DIR"},
      {"o", "out", "the output folder is --out DIR"},
      {"threads", "jobs", "threads are --jobs N (-j N)"},
      {"parallel", "jobs", "threads are --jobs N (-j N)"},
  };
  for (const Elsewhere& e : kElsewhere) {
    if (word != e.flag) continue;
    for (const auto& option : desc.options()) {
      if (option->long_name() == e.needs) return "; " + std::string(e.hint);
    }
  }
  return "";
}

std::optional<int> ParseArgs(const std::string& command, const std::vector<std::string>& args,
                             const po::options_description& desc,
                             const po::options_description& hidden, const char* positional_name,
                             po::variables_map* vm) {
  po::positional_options_description positional;
  positional.add(positional_name, 1);
  return ParseArgs(command, args, desc, hidden, positional, vm);
}

std::optional<int> ParseArgs(const std::string& command, const std::vector<std::string>& args,
                             const po::options_description& desc,
                             const po::options_description& hidden,
                             const po::positional_options_description& positional,
                             po::variables_map* vm) {
  po::options_description all;
  all.add(desc).add(hidden);
  try {
    const po::parsed_options parsed =
        po::command_line_parser(args).options(all).positional(positional).run();
    // An unsigned option (a seed) takes "-1" and wraps it to 18446744073709551615: refused.
    for (const po::option& o : parsed.options) {
      const po::option_description* d = all.find_nothrow(o.string_key, false);
      if (d == nullptr || o.value.empty()) continue;
      boost::any probe;
      try {
        d->semantic()->parse(probe, {"0"}, true);
      } catch (const std::exception&) {
        continue;
      }
      const bool is_unsigned = probe.type() == typeid(uint64_t) || probe.type() == typeid(uint32_t) ||
                               probe.type() == typeid(unsigned long long);
      // At most 2^63 - 1: the largest seed a scenario file can hold (a TOML integer), so that
      // every seed lockstep takes can be written into a shrunk file or a reproduce command.
      const std::string& text = o.value.front();
      const bool too_big = is_unsigned && !text.empty() && text.front() != '-' &&
                           [&] {
                             try {
                               return std::stoull(text) > 9223372036854775807ull;
                             } catch (const std::exception&) {
                               return false;  // Not a number: the parser says so.
                             }
                           }();
      if (is_unsigned && ((!text.empty() && text.front() == '-') || too_big)) {
        std::cerr << "lockstep " << command << ": --" << o.string_key
                  << " takes a whole number from 0 to 9223372036854775807, not " << text
                  << "\n(see lockstep " << command << " --help)\n";
        return kExitBadInput;
      }
    }
    // An option given an empty string (an unset $VARIABLE) is refused, not read as absent.
    for (const po::option& o : parsed.options) {
      if (o.string_key.empty() || o.position_key >= 0) continue;  // Positional: its own checks.
      const po::option_description* d = all.find_nothrow(o.string_key, false);
      if (d == nullptr || d->semantic()->max_tokens() == 0) continue;
      if (!o.value.empty() && o.value.front().empty()) {
        std::cerr << "lockstep " << command << ": --" << o.string_key
                  << " was given an empty value (an unset variable?); give it one, or leave "
                     "the option out\n(see lockstep "
                  << command << " --help)\n";
        return kExitBadInput;
      }
    }
    po::store(parsed, *vm);
    po::notify(*vm);
  } catch (const po::unknown_option& e) {
    std::cerr << "lockstep " << command << ": " << e.what() << DidYouMean(e.get_option_name(), desc)
              << "\n(see lockstep " << command << " --help)\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "lockstep " << command << ": " << e.what() << "\n(see lockstep " << command
              << " --help)\n";
    return kExitBadInput;
  }
  if (vm->count("help")) {
    std::cout << desc << "\n";
    return kExitOk;
  }
  return std::nullopt;
}

bool OutputsSpareInput(const std::string& command, const std::string& input,
                       const std::vector<std::pair<std::string, std::string>>& outputs) {
  for (const auto& [flag, path] : outputs) {
    if (path.empty()) continue;
    std::error_code ec;
    if (std::filesystem::equivalent(path, input, ec) && !ec) {
      std::cerr << "lockstep " << command << ": " << flag << " " << path << " is " << input
                << " itself, an input; writing there would destroy it: name another file\n";
      return false;
    }
  }
  return true;
}

bool ValidScriptBudget(const std::string& command, int64_t budget) {
  if (budget >= 1 && static_cast<uint64_t>(budget) <= kMaxScriptStepBudget) return true;
  std::cerr << "lockstep " << command << ": --script-budget must be between 1 and "
            << kMaxScriptStepBudget << " steps, got " << budget << "\n";
  return false;
}

bool WriteWholeFile(const std::string& path, const std::string& text, std::string* error) {
  // A path that names something other than a regular file (a device such as /dev/null, a
  // FIFO, a symbolic link to a file elsewhere) is written in place: renaming a new file over it
  // would replace the device node or the link itself. A regular file (or none yet) is written
  // beside it and renamed over it, so that a reader never sees half of it.
  struct stat st {};
  const bool in_place = lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  if (in_place) {
    if (S_ISDIR(st.st_mode)) {
      *error = "cannot write " + path + ": it is a directory";
      return false;
    }
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0666);
    if (fd < 0) {
      *error = "cannot write " + path + ": " + std::strerror(errno);
      return false;
    }
    size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = write(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        *error = "cannot write " + path + ": " + std::strerror(n < 0 ? errno : EIO);
        close(fd);
        return false;
      }
      done += static_cast<size_t>(n);
    }
    if (close(fd) != 0) {
      *error = "cannot write " + path + ": " + std::strerror(errno);
      return false;
    }
    return true;
  }
  return WriteFileAtomically(path, [&](std::ostream& out) { out << text; }, error);
}

}  // namespace lockstep::cli
