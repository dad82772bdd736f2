// lockstep emu: a stand-in for `redis-cli --no-raw < file` whose server is the emulator.
//
// Reads stdin line by line and treats each line exactly as redis-cli 7.0.15's REPL does
// (ParseCliLine in core/cli_format.h: repeat counts, "Invalid argument(s)", quit/exit, ...),
// runs each command on one emulated Server and prints the reply as redis-cli prints it. Errors
// are printed as "(error) ..." and do not stop the run; at the end of the input the exit status
// is 0, as redis-cli's. The output is meant to be byte-identical to redis-cli's against a real
// redis-server 7.0.15 (cli/emu_vs_redis_cli_test.cpp checks that).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <boost/program_options.hpp>

#include "cli/common.h"
#include "cli/subcommands.h"
#include "core/cli_format.h"
#include "core/server.h"
#include "core/session.h"

namespace lockstep::cli {
namespace {

namespace po = boost::program_options;

constexpr const char* kUsage =
    "usage: lockstep emu [--clock-ms T] < commands.txt\n\n"
    "Reads redis-cli style command lines from stdin, runs each one on an emulated\n"
    "redis-server 7.0 and prints the replies exactly as `redis-cli --no-raw` does, so that\n"
    "    diff <(redis-cli -p 6390 --no-raw < commands.txt) <(lockstep emu < commands.txt)\n"
    "shows where the emulator and a real server disagree. Lines are split and quoted as\n"
    "redis-cli splits them (\"a b\", 'c', \"\\x00\"); \"3 ping\" runs PING three times; \"quit\"\n"
    "ends the input. Errors print as \"(error) ...\" and the run goes on. The input is one\n"
    "client connection: MULTI/EXEC and WATCH span lines; a BLPOP or BRPOP that would block\n"
    "answers nil when its timeout has passed, at once for timeout 0 (nothing can wake it).\n\n"
    "example:\n"
    "    printf 'set k v px 5000\\nget k\\npttl k\\n' | lockstep emu --clock-ms 1000\n\n"
    "options";

void WriteOut(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  // redis-cli flushes after every reply; so do we, so that a crash mid-file still shows how far
  // the run got.
  std::fflush(stdout);
}

}  // namespace

int EmuMain(const std::vector<std::string>& args) {
  po::options_description options(kUsage);
  int64_t clock_ms = 0;
  int64_t budget = static_cast<int64_t>(kDefaultScriptStepBudget);
  options.add_options()
      ("help,h", "print this help and exit")
      ("clock-ms", po::value<int64_t>(&clock_ms)->value_name("T"),
       "freeze the emulator's clock at T milliseconds since the Unix epoch (default: the wall "
       "clock, read before every command)")
      ("script-budget", po::value<int64_t>(&budget)->value_name("N"),
       "stop a script after N steps of work (default 10000000, about 60 ms; a step is about one "
       "Lua instruction, see docs/fidelity.md)");
  po::variables_map vm;
  try {
    // An empty positional description makes a stray word an error instead of being ignored.
    const po::positional_options_description no_positional;
    po::store(po::command_line_parser(args).options(options).positional(no_positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "lockstep emu: " << e.what() << "\n(see lockstep emu --help)\n";
    return kExitBadInput;
  }
  if (vm.count("help") != 0) {
    std::cout << options << "\n";
    return kExitOk;
  }
  if (!ValidScriptBudget("emu", budget)) return kExitBadInput;
  const bool frozen = vm.count("clock-ms") != 0;
  auto now_ms = [frozen, clock_ms]() -> int64_t {
    if (frozen) return clock_ms;
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  };

  ServerOptions server_options;
  server_options.script_step_budget = static_cast<uint64_t>(budget);
  Server server(server_options);
  // One client connection, as redis-cli has: MULTI/EXEC and WATCH work across lines.
  Session session;
  std::string line;
  int64_t line_number = 0;
  // On a terminal, a prompt as redis-cli shows one (on stderr, so that what stdout carries is
  // the replies alone); from a pipe or a file, none.
  const bool interactive = isatty(fileno(stdin)) != 0;
  const auto prompt = [interactive] {
    if (interactive) std::fputs("lockstep-emu> ", stderr);
  };
  prompt();
  // std::getline splits at '\n' only and returns a last line without one, as linenoise does
  // for a non-terminal stdin; a '\r' before the '\n' is a blank to SplitArgs.
  while (std::getline(std::cin, line)) {
    ++line_number;
    const CliLine parsed = ParseCliLine(line);
    switch (parsed.kind) {
      case CliLine::Kind::kSkip:
        break;
      case CliLine::Kind::kPrint:
        WriteOut(parsed.text);
        break;
      case CliLine::Kind::kExit:
        return kExitOk;
      case CliLine::Kind::kHelp:
        std::cerr << "lockstep emu: line " << line_number
                  << ": redis-cli's built-in help is not emulated; nothing printed\n";
        break;
      case CliLine::Kind::kCommand:
        for (long i = 0; i < parsed.repeat; ++i) {
          Reply reply;
          try {
            std::optional<Reply> answered = server.Execute(session, parsed.argv, now_ms());
            if (!answered) {
              // A BLPOP/BRPOP on empty keys: stdin is the only client, so nothing can wake it.
              // With a timeout it ends as redis-cli's would: after the wait (on the wall
              // clock; at once on a frozen one), with the timeout's reply. Without one,
              // redis-cli would wait for ever; this answers as a timeout at once and says so.
              if (session.block_deadline_ms() == Session::kNoDeadline) {
                std::cerr << "lockstep emu: line " << line_number
                          << ": the command blocks for ever and no other client can wake it "
                             "here; answered as a timeout (see docs/fidelity.md)\n";
              } else {
                while (!frozen && !session.TimedOut(now_ms())) {
                  std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
              }
              answered = server.TimeOut(session);
            }
            reply = std::move(*answered);
            (void)server.TakeWoken();  // Only this session could be woken, and it was not.
          } catch (const std::exception& e) {
            std::cerr << "lockstep emu: line " << line_number << ": internal error: " << e.what()
                      << "\n";
            return kExitFailed;
          }
          WriteOut(FormatCli(reply.AsSeenByResp2Client()));
        }
        break;
    }
    prompt();
  }
  if (interactive) std::fputs("\n", stderr);
  return kExitOk;
}

}  // namespace lockstep::cli
