// The `lockstep` subcommands. Each takes the arguments after its own name, parses them with
// Boost.Program_options (so each has its own --help), and returns the process exit status:
// 0 success, 1 a check or verdict failed (or an output could not be written), 2 bad input (flag,
// file, scenario), 128 + the signal when interrupted (130 SIGINT, 143 SIGTERM, 129 SIGHUP; what
// was written so far is kept).
#ifndef LOCKSTEP_CLI_SUBCOMMANDS_H_
#define LOCKSTEP_CLI_SUBCOMMANDS_H_

#include <string>
#include <vector>

namespace lockstep::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInterrupted = 130;  // 128 + SIGINT, as shells report it.

// lockstep emu: redis-cli style command lines on stdin, replies as `redis-cli --no-raw`.
int EmuMain(const std::vector<std::string>& args);
// lockstep eval FILE --keys ... --args ...: runs one script file on a fresh emulator.
int EvalMain(const std::vector<std::string>& args);
// lockstep run SCENARIO [--seed N] [--out DIR]: simulate, check, compare with [expect].
int RunMain(const std::vector<std::string>& args);
// lockstep replay SCENARIO [--time-scale F]: simulate, run live on real redis-servers with the
// faults made real, check both, compare.
int ReplayMain(const std::vector<std::string>& args);
// lockstep fuzz BASE [--cases N] [--jobs N]: search variations of a base scenario for a broken
// property and shrink each failure to a minimal scenario file.
int FuzzMain(const std::vector<std::string>& args);
// lockstep fuzz merge SHARD_DIR... --out DIR: the shards of one search merged into one result.
int FuzzMergeMain(const std::vector<std::string>& args);
// lockstep report HISTORY [--scenario FILE] [--out DIR]: check a saved history again and write
// report.html, trace.json and summary.md.
int ReportMain(const std::vector<std::string>& args);
// lockstep history dump|convert HISTORY: a saved history as JSON Lines, or in another form.
int HistoryMain(const std::vector<std::string>& args);

}  // namespace lockstep::cli

#endif  // LOCKSTEP_CLI_SUBCOMMANDS_H_
