// lockstep: finds out whether a distributed lock built on Redis keeps its promises.
//
// The executable is a set of subcommands; each parses its own options and has its own --help.
// Exit status: 0 success, 1 a check failed (or a verdict did not match its expectation, or an
// output could not be written), 2 bad input (unknown subcommand or flag, unreadable or malformed
// file), 128 + the signal when a long command was interrupted (130, 143, 129).
#include <csignal>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "cli/subcommands.h"

namespace {

struct Subcommand {
  const char* name;
  const char* summary;
  int (*main)(const std::vector<std::string>& args);
};

const Subcommand kSubcommands[] = {
    {"run", "simulate a scenario file, check the history, compare with its [expect]",
     lockstep::cli::RunMain},
    {"replay", "run a scenario live on real redis-servers with real faults; compare with the sim",
     lockstep::cli::ReplayMain},
    {"fuzz", "search fault schedules around a base scenario; shrink failures to a file",
     lockstep::cli::FuzzMain},
    {"report", "rebuild report.html, trace.json and summary.md from a saved history",
     lockstep::cli::ReportMain},
    {"history", "print a saved history as JSON Lines, or convert it to another form",
     lockstep::cli::HistoryMain},
    {"emu", "run redis-cli style commands from stdin on the emulated Redis 7.0",
     lockstep::cli::EmuMain},
    {"eval", "run one Lua script file on a fresh emulated Redis", lockstep::cli::EvalMain},
};

void PrintUsage(std::FILE* out) {
  std::fprintf(out,
               "usage: lockstep <subcommand> [options]\n"
               "       lockstep <subcommand> --help   (or: lockstep help <subcommand>)\n"
               "       lockstep --version\n\n"
               "lockstep tests whether Redis-based distributed locks (Redisson's reentrant,\n"
               "fair, read-write, RedLock, fenced ...) keep their promises, on an emulated\n"
               "Redis 7.0 whose scripting matches redis-server's replies and errors.\n\n"
               "subcommands:\n");
  for (const Subcommand& s : kSubcommands) std::fprintf(out, "  %-7s  %s\n", s.name, s.summary);
  std::fprintf(out,
               "\nexit status: 0 ok, 1 a check failed or an output could not be written,\n"
               "2 bad input, 130/143/129 interrupted by SIGINT/SIGTERM/SIGHUP\n"
               "example: lockstep eval lua/rlock/v3.13.6/acquire.lua --keys lock "
               "--args 30000 client-1:1\n");
}

}  // namespace

int main(int argc, char** argv) {
  // Past a file-size limit (ulimit -f) a write is to fail with EFBIG, which the writers report
  // and clean up after, rather than the process being killed by SIGXFSZ with a file half
  // written.
  std::signal(SIGXFSZ, SIG_IGN);
  // A reader that goes away (`lockstep run ... | head -1`) makes the next print fail with
  // EPIPE instead of killing the process with SIGPIPE between its outputs: the history, the
  // reports, summary.txt, --json and --junit are all still written, and the exit status is the
  // run's (docs/ci.md).
  std::signal(SIGPIPE, SIG_IGN);
  if (argc < 2) {
    PrintUsage(stderr);
    return lockstep::cli::kExitBadInput;
  }
  const std::string first = argv[1];
  if (first == "help" && argc >= 3) {
    // lockstep help CMD: CMD's own --help.
    for (const Subcommand& s : kSubcommands) {
      if (argv[2] == std::string(s.name)) return s.main({"--help"});
    }
    std::fprintf(stderr, "lockstep help: unknown subcommand '%s'\n\n", argv[2]);
    PrintUsage(stderr);
    return lockstep::cli::kExitBadInput;
  }
  if (first == "--help" || first == "-h" || first == "help") {
    PrintUsage(stdout);
    return lockstep::cli::kExitOk;
  }
  if (first == "--version") {
    std::printf("lockstep %s (emulating redis-server 7.0.15)\n", LOCKSTEP_VERSION);
    return lockstep::cli::kExitOk;
  }
  for (const Subcommand& s : kSubcommands) {
    if (first != s.name) continue;
    const std::vector<std::string> args(argv + 2, argv + argc);
    try {
      return s.main(args);
    } catch (const std::exception& e) {
      // Subcommands report expected failures themselves; anything reaching here is a bug,
      // but it still gets a message and an exit status rather than an abort.
      std::fprintf(stderr, "lockstep %s: internal error: %s\n", s.name, e.what());
      return lockstep::cli::kExitFailed;
    }
  }
  std::fprintf(stderr, "lockstep: unknown subcommand '%s'\n\n", first.c_str());
  PrintUsage(stderr);
  return lockstep::cli::kExitBadInput;
}
