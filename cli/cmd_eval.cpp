// lockstep eval: runs one Lua script file through EVAL on a fresh emulated redis-server 7.0 and
// prints the reply as `redis-cli --no-raw` would, e.g. to try a Redisson script by hand or to
// see what a Lua value turns into.
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "base/read_file.h"
#include "cli/common.h"
#include "cli/subcommands.h"
#include "core/cli_format.h"
#include "core/server.h"

namespace lockstep::cli {
namespace {

namespace po = boost::program_options;

constexpr const char* kUsage =
    "usage: lockstep eval FILE [--keys K...] [--args A...] [--clock-ms T] [--repeat N]\n\n"
    "Runs the Lua script in FILE with EVAL on a fresh emulated redis-server 7.0\n"
    "(EVAL <body> <number of keys> <keys...> <args...>) and prints the reply as\n"
    "`redis-cli --no-raw` does. With --repeat N the script runs N times on the same\n"
    "server, one reply each (e.g. to watch a lock being re-entered). Exit status: 0, or 1\n"
    "when a reply is an error, 2 for bad flags or an unreadable FILE.\n"
    "Put FILE first, or after --, since --keys/--args take every following word\n"
    "(--keys a -- FILE). Values may start with '-': --args -1 works, as there are no\n"
    "one-letter options.\n\n"
    "example:\n"
    "    lockstep eval lua/rlock/v3.13.6/acquire.lua --keys lock --args 30000 client-1:1 \\\n"
    "        --repeat 2 --clock-ms 1000\n\n"
    "options";

// eval tries scripts of any size a test might want (redis-server takes up to 512 MB), so its
// bound is wider than a scenario's script override's (kMaxScriptBytes), but it is a bound.
constexpr size_t kMaxEvalScriptBytes = size_t{64} << 20;

// A script file: a regular file of at most kMaxEvalScriptBytes (a FIFO would block, /dev/zero
// never ends, /proc/self/mem fails to read).
std::optional<std::string> ReadWholeFile(const std::string& path, std::string* error) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    *error = "is a directory";
    return std::nullopt;
  }
  std::string body;
  if (!ReadRegularFile(path, kMaxEvalScriptBytes, &body, error)) {
    return std::nullopt;
  }
  return body;
}

}  // namespace

int EvalMain(const std::vector<std::string>& args) {
  po::options_description options(kUsage);
  std::string file;
  std::vector<std::string> keys;
  std::vector<std::string> script_args;
  int64_t clock_ms = 0;
  int64_t repeat = 1;
  int64_t budget = static_cast<int64_t>(kDefaultScriptStepBudget);
  options.add_options()
      ("help", "print this help and exit")
      ("file", po::value<std::string>(&file)->value_name("FILE"), "the Lua script (positional)")
      ("keys", po::value<std::vector<std::string>>(&keys)->multitoken()->composing()
                   ->value_name("K..."),
       "KEYS[1], KEYS[2], ...")
      ("args", po::value<std::vector<std::string>>(&script_args)->multitoken()->composing()
                   ->value_name("A..."),
       "ARGV[1], ARGV[2], ...")
      ("clock-ms", po::value<int64_t>(&clock_ms)->value_name("T"),
       "freeze the emulator's clock at T ms since the Unix epoch (default: the wall clock)")
      ("repeat", po::value<int64_t>(&repeat)->value_name("N"),
       "run the script N times on the same server (default 1)")
      ("script-budget", po::value<int64_t>(&budget)->value_name("N"),
       "stop a script after N steps of work (default 10000000, about 60 ms; a step is about one "
       "Lua instruction, see docs/fidelity.md)");
  po::positional_options_description positional;
  positional.add("file", 1);

  // Long options only, so that a value such as "-1" is a value and not an unknown flag.
  const int style = po::command_line_style::unix_style ^ po::command_line_style::allow_short;
  po::variables_map vm;
  if (!args.empty() && args.front() == "-h") {  // The one short option every command knows.
    std::cout << options << "\n";
    return kExitOk;
  }
  // --keys and --args take every token up to the next "--option": gathered here, because the
  // option parser removes each token from the front of its list (quadratic in their number:
  // 40,000 keys took seconds before the script ran).
  std::vector<std::string> rest;
  rest.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::vector<std::string>* into = nullptr;
    std::string first;
    bool has_first = false;
    for (const auto& [flag, target] : {std::pair<const char*, std::vector<std::string>*>{"--keys", &keys},
                                       {"--args", &script_args}}) {
      const std::string f = flag;
      if (a == f) {
        into = target;
      } else if (a.rfind(f + "=", 0) == 0) {
        into = target;
        first = a.substr(f.size() + 1);
        has_first = true;
      }
    }
    if (into == nullptr) {
      rest.push_back(a);
      continue;
    }
    if (has_first) into->push_back(first);
    while (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) into->push_back(args[++i]);
  }
  try {
    po::store(po::command_line_parser(rest).options(options).positional(positional).style(style)
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    std::cerr << "lockstep eval: " << e.what() << DidYouMean(e.get_option_name(), options)
              << "\n(see lockstep eval --help)\n";
    return kExitBadInput;
  } catch (const po::error& e) {
    std::cerr << "lockstep eval: " << e.what() << "\n(see lockstep eval --help)\n";
    return kExitBadInput;
  }
  if (vm.count("help") != 0) {
    std::cout << options << "\n";
    return kExitOk;
  }
  if (file.empty()) {
    std::cerr << "lockstep eval: missing FILE (see lockstep eval --help)\n";
    return kExitBadInput;
  }
  if (repeat < 1) {
    std::cerr << "lockstep eval: --repeat must be at least 1, got " << repeat << "\n";
    return kExitBadInput;
  }
  if (!ValidScriptBudget("eval", budget)) return kExitBadInput;
  bool bundled = false;
  const std::string resolved = ResolveBundledPath(file, &bundled);
  if (bundled) {
    std::cerr << "lockstep eval: no " << file << " here; using the bundled " << resolved << "\n";
    file = resolved;
  }
  std::string read_error;
  const std::optional<std::string> body = ReadWholeFile(file, &read_error);
  if (!body) {
    std::cerr << "lockstep eval: cannot read " << file << ": " << read_error << "\n";
    return kExitBadInput;
  }

  Argv argv = {"EVAL", *body, std::to_string(keys.size())};
  argv.insert(argv.end(), keys.begin(), keys.end());
  argv.insert(argv.end(), script_args.begin(), script_args.end());

  const bool frozen = vm.count("clock-ms") != 0;
  ServerOptions server_options;
  server_options.script_step_budget = static_cast<uint64_t>(budget);
  Server server(server_options);
  bool any_error = false;
  for (int64_t i = 0; i < repeat; ++i) {
    const int64_t now_ms =
        frozen ? clock_ms
               : std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
    const Reply reply = server.Execute(argv, now_ms);
    any_error = any_error || reply.is_error();
    const std::string text = FormatCli(reply.AsSeenByResp2Client());
    std::fwrite(text.data(), 1, text.size(), stdout);
  }
  std::fflush(stdout);
  return any_error ? kExitFailed : kExitOk;
}

}  // namespace lockstep::cli
