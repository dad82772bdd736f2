// What the subcommands share: where the default scripts are, how a path is quoted for a shell,
// how a time is printed, and the command-line parsing every subcommand does the same way.
#ifndef LOCKSTEP_CLI_COMMON_H_
#define LOCKSTEP_CLI_COMMON_H_

#include <boost/program_options.hpp>

#include <map>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "check/verdict.h"
#include "reports/report.h"

namespace lockstep::cli {

// $LOCKSTEP_LUA_DIR; else the lock scripts next to the binary: <prefix>/share/lockstep/lua for
// an installed one, <source>/lua for one in <source>/build; else the source tree's lua/ it was
// built from.
std::string DefaultLuaDir();

// A scenario file as given when it exists (or is absolute); else the bundled one of that name,
// looked up where DefaultLuaDir() looks (so "scenarios/contention-10.toml", or just
// "contention-10", works from any directory), with *bundled set; else `file` unchanged, for
// the loader to say it cannot be read.
std::string ResolveScenarioPath(const std::string& file, bool* bundled);
// The same, saying on stderr which bundled file stands for `file`, as `lockstep COMMAND: ...`.
std::string ResolveScenario(const std::string& command, const std::string& file);
// Any bundled file (a lock script, lua/rlock/v3.13.6/unlock.lua): `file` when it exists here,
// else the bundled file at that path, with *bundled set; else `file` unchanged.
std::string ResolveBundledPath(const std::string& file, bool* bundled);

// "; did you mean --history?" for an option `typed` ("--histroy") close to one of desc's, else "".
std::string DidYouMean(const std::string& typed, const boost::program_options::options_description& desc);

// `s` as one shell word: unchanged when that is safe, else in single quotes.
std::string ShellQuote(const std::string& s);

// Whether --script-budget N is within 1..kMaxScriptStepBudget; if not, says so on stderr as
// "lockstep COMMAND: ..." (the caller exits with kExitBadInput).
bool ValidScriptBudget(const std::string& command, int64_t budget);

// Text from a history (a reply, a detail inside an explanation) as a terminal may show it:
// control bytes (ESC sequences, BEL, line breaks inside one line) written as \xNN.
std::string Printable(std::string_view text);

// False, after saying why, when an output file a flag names (--json, --junit: the flag and its
// path, empty for none) is the input file `input` itself: writing it would destroy the input.
bool OutputsSpareInput(const std::string& command, const std::string& input,
                       const std::vector<std::pair<std::string, std::string>>& outputs);

// Writes `text` to `path` through a temporary name (path + ".tmp", renamed when complete); on
// failure (a full disk, a file-size limit) the temporary file is removed, nothing is left under
// either name, and *error says what failed.
bool WriteWholeFile(const std::string& path, const std::string& text, std::string* error);

// "1.250 s" for 1,250,000 us.
std::string Seconds(int64_t us);

// A progress line on stderr: one line rewritten in place on a terminal, a line every 10 s
// otherwise (or at once with `force`); nothing with `quiet`.
class ProgressLine {
 public:
  explicit ProgressLine(bool quiet);
  void Show(const std::string& text, bool force = false);
  // Wipes the line on a terminal, so that what is printed next starts on a clean line.
  void Clear();

 private:
  const bool quiet_;
  const bool tty_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

// The reports' progress line on stderr while they read a history file back:
// "reports: 1,234,567 events read, 1520.3 of 3600.0 simulated s" (without "of ..." when the
// run's end is not known, end_us <= 0). Only on a terminal and without -q, and only once the
// reports have taken more than a second: most take less, and a line that flashes by says
// nothing. Rewritten in place; Clear() (or the end of its life) wipes it, so that what is
// printed next starts on a clean line. Anywhere else it prints nothing at all.
class ReportsProgressLine {
 public:
  ReportsProgressLine(bool quiet, int64_t end_us);
  ~ReportsProgressLine() { Clear(); }
  ReportsProgressLine(const ReportsProgressLine&) = delete;
  ReportsProgressLine& operator=(const ReportsProgressLine&) = delete;

  // For WriteReportsFromFile; empty (no calls at all) when the line is not to be shown.
  reports::ReadProgress progress();
  void Clear();

 private:
  void Show(uint64_t events_read, int64_t t_us);

  const bool on_;
  const int64_t end_us_;
  const std::chrono::steady_clock::time_point start_;
  ProgressLine line_;  // Quiet unless on_.
};

// A factor as the user would type it again: "0.1", "2.5" (the shortest text that reads back
// the same number).
std::string FormatFactor(double factor);

// The verdict block `lockstep run` prints: each property's outcome against `expect`, with the
// first violation's explanation.
std::string FormatVerdict(const check::Verdict& verdict,
                          const std::map<std::string, Expectation>& expect);

// What `run` and `replay` change in a scenario before running it: --seed, --duration-ms and
// --time-scale, each only when given (`vm` says which).
struct RunOverrides {
  uint64_t seed = 0;
  int64_t duration_ms = 0;
  double time_scale = 1;
};
// Loads `file` and applies `o`. nullopt after printing why (a bad file names its line; a bad
// value names its flag): the command then exits with kExitBadInput.
std::optional<Scenario> LoadScenarioForRun(const std::string& command, const std::string& file,
                                           const RunOverrides& o,
                                           const boost::program_options::variables_map& vm);

// While it lives, SIGINT, SIGTERM and SIGHUP set a flag instead of ending the process, so that
// a long command stops where it is and keeps what it wrote; the handlers from before come back
// when it ends. One at a time.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  // For a pipeline or a search to look at between events.
  const volatile std::sig_atomic_t* flag() const;
  bool interrupted() const { return *flag() != 0; }
  // The first signal that arrived (0: none).
  int signal_number() const;
  // What the command exits with once interrupted: 128 + the signal, as shells report a process
  // the signal ended (130 SIGINT, 143 SIGTERM, 129 SIGHUP).
  // 130 when no signal arrived (a command that stopped for its own reasons reports it as SIGINT
  // would).
  int exit_status() const;
  // "SIGINT", "SIGTERM" or "SIGHUP".
  const char* signal_name() const;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
  struct sigaction old_hup_ {};
};

// Parses `args` for `lockstep <command>`: the options of `desc` and one positional argument
// stored through `positional_name` (declared by the caller in `hidden`). Returns the exit status
// when the command is to end here (--help printed: 0; a bad flag reported: 2), else nullopt.
std::optional<int> ParseArgs(const std::string& command, const std::vector<std::string>& args,
                             const boost::program_options::options_description& desc,
                             const boost::program_options::options_description& hidden,
                             const char* positional_name,
                             boost::program_options::variables_map* vm);
// The same with positional arguments of any shape (`lockstep history ACTION FILE`, `lockstep
// fuzz merge DIR...`).
std::optional<int> ParseArgs(const std::string& command, const std::vector<std::string>& args,
                             const boost::program_options::options_description& desc,
                             const boost::program_options::options_description& hidden,
                             const boost::program_options::positional_options_description& positional,
                             boost::program_options::variables_map* vm);

}  // namespace lockstep::cli

#endif  // LOCKSTEP_CLI_COMMON_H_
