// Establishes that `lockstep emu` prints byte for byte what `redis-cli --no-raw` prints when both
// read core/testdata/emu-vs-redis-cli.txt, the first against a private redis-server 7.0.15 and
// the second against the emulator; that file is the emulator's fidelity spec at the command
// level. Also checks the live helpers it relies on: RedisProcess starts and stops a server
// without leaving anything behind, and RedisClient is binary safe.
//
// About the command file: redis-cli has no comment syntax (a "# note" line is sent to the
// server and answered with "ERR unknown command '#'"), so the file has none; sections are
// `ECHO "== name =="` lines, which both sides print. It avoids output that depends on time
// (TTLs are whole seconds of large expiries, or compared inside a script), math.random, hash
// order (KEYS patterns match one key) and `error({})`, which crashes Debian's redis-server.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/cli_format.h"
#include "live/redis_client.h"
#include "live/redis_process.h"

namespace lockstep {
namespace {

constexpr int kRunTimeoutSeconds = 120;  // Per run of the whole file; a hang fails, not blocks.
constexpr size_t kMismatchesShownMax = 25;

std::string CommandFilePath() {
  return std::string(LOCKSTEP_SOURCE_DIR) + "/core/testdata/emu-vs-redis-cli.txt";
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

struct RunResult {
  std::string out;
  std::string err;
  int exit_status = -1;
};

// Runs `command < input` through the shell with a time limit and captures stdout, stderr and
// the exit status (124 means the time limit hit).
RunResult Run(const std::string& command, const std::string& input, const std::string& dir) {
  const std::string err_path = dir + "/run.stderr";
  const std::string shell = "timeout " + std::to_string(kRunTimeoutSeconds) + " " + command +
                            " < " + ShellQuote(input) + " 2> " + ShellQuote(err_path);
  RunResult result;
  FILE* pipe = ::popen(shell.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.out.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.err = ReadFile(err_path);
  return result;
}

std::string RedisCliCommand(int port) {
  return "redis-cli -p " + std::to_string(port) + " --no-raw";
}

std::string EmuCommand() { return ShellQuote(LOCKSTEP_BINARY) + " emu"; }

// A copy of the command file with `ECHO "@@N"` after each line N, so each side's output can be
// cut into the part each command line printed. Only used to explain a mismatch.
std::string WriteMarkedCopy(const std::vector<std::string>& commands, const std::string& dir) {
  const std::string path = dir + "/marked.txt";
  std::ofstream out(path, std::ios::binary);
  for (size_t i = 0; i < commands.size(); ++i) {
    out << commands[i] << "\nECHO \"@@" << (i + 1) << "\"\n";
  }
  return path;
}

// Output of each command line, keyed by its line number (1-based), from a marked run.
std::vector<std::string> CutAtMarkers(const std::string& output, size_t line_count) {
  std::vector<std::string> parts(line_count + 1);
  size_t current = 1;
  for (const std::string& line : SplitLines(output)) {
    if (line.size() > 4 && line.rfind("\"@@", 0) == 0 && line.back() == '"') {
      current = std::stoul(line.substr(3, line.size() - 4)) + 1;
      continue;
    }
    if (current <= line_count) parts[current] += line + "\n";
  }
  return parts;
}

std::string Indent(const std::string& text) {
  if (text.empty()) return "    (nothing)\n";
  std::string out;
  for (const std::string& line : SplitLines(text)) out += "    " + line + "\n";
  return out;
}

// Explains a mismatch command by command: runs both sides again on the marked copy (a fresh
// server, so no state leaks from the first run) and lists the command lines whose output
// differs, with both outputs.
std::string ExplainMismatch(const std::vector<std::string>& commands) {
  std::unique_ptr<RedisProcess> redis = RedisProcess::StartOrThrow();
  const std::string marked = WriteMarkedCopy(commands, redis->dir());
  const RunResult real = Run(RedisCliCommand(redis->port()), marked, redis->dir());
  const RunResult emu = Run(EmuCommand(), marked, redis->dir());
  const std::vector<std::string> real_parts = CutAtMarkers(real.out, commands.size());
  const std::vector<std::string> emu_parts = CutAtMarkers(emu.out, commands.size());

  std::string out;
  size_t differing = 0;
  for (size_t n = 1; n <= commands.size(); ++n) {
    if (real_parts[n] == emu_parts[n]) continue;
    ++differing;
    if (differing > kMismatchesShownMax) continue;
    out += "line " + std::to_string(n) + ": " + commands[n - 1] + "\n  redis-cli:\n" +
           Indent(real_parts[n]) + "  lockstep emu:\n" + Indent(emu_parts[n]);
  }
  std::string head = std::to_string(differing) + " of " + std::to_string(commands.size()) +
                     " command lines print differently";
  if (differing > kMismatchesShownMax) {
    head += " (the first " + std::to_string(kMismatchesShownMax) + " are shown)";
  }
  return head + ":\n" + out;
}

// The first differing output line, with a little context, for the case where the marked run
// does not reproduce the mismatch.
std::string FirstDifference(const std::string& expected, const std::string& actual) {
  const std::vector<std::string> a = SplitLines(expected);
  const std::vector<std::string> b = SplitLines(actual);
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  std::string out = "first difference at output line " + std::to_string(i + 1) + "\n";
  const size_t from = i >= 3 ? i - 3 : 0;
  for (size_t j = from; j < i + 3; ++j) {
    out += "  redis-cli   " + std::to_string(j + 1) + ": " + (j < a.size() ? a[j] : "<end>") +
           "\n";
    out += "  lockstep    " + std::to_string(j + 1) + ": " + (j < b.size() ? b[j] : "<end>") +
           "\n";
  }
  return out;
}

bool IsSectionMarker(const Argv& argv) {
  return argv.size() == 2 && (argv[0] == "ECHO" || argv[0] == "echo") &&
         argv[1].rfind("== ", 0) == 0;
}

bool ProcessExists(int pid) { return ::kill(pid, 0) == 0 || errno != ESRCH; }

}  // namespace

TEST_CASE("emu-vs-redis-cli.txt has at least 200 command lines", "[cli]") {
  const std::vector<std::string> lines = SplitLines(ReadFile(CommandFilePath()));
  REQUIRE(!lines.empty());
  // The file starts with FLUSHALL: it only ever runs against a private server.
  CHECK(lines.front() == "FLUSHALL");
  size_t commands = 0;
  for (const std::string& line : lines) {
    const CliLine parsed = ParseCliLine(line);
    if (parsed.kind == CliLine::Kind::kCommand && !IsSectionMarker(parsed.argv)) ++commands;
  }
  INFO("command lines (not counting blank lines, redis-cli built-ins and ECHO \"== ...\" "
       "section markers): " << commands);
  CHECK(commands >= 200);
}

TEST_CASE("lockstep emu prints what redis-cli --no-raw prints for emu-vs-redis-cli.txt",
          "[cli][live]") {
  std::unique_ptr<RedisProcess> redis = RedisProcess::StartOrThrow();
  const std::string input = CommandFilePath();
  const RunResult real = Run(RedisCliCommand(redis->port()), input, redis->dir());
  INFO("redis-cli stderr: " << real.err);
  REQUIRE(real.exit_status == 0);
  REQUIRE(!real.out.empty());

  const RunResult emu = Run(EmuCommand(), input, redis->dir());
  INFO("lockstep emu stderr: " << emu.err);
  CHECK(emu.exit_status == 0);

  if (emu.out != real.out) {
    const std::vector<std::string> commands = SplitLines(ReadFile(input));
    FAIL_CHECK(FirstDifference(real.out, emu.out) << "\n" << ExplainMismatch(commands));
  }
  REQUIRE(emu.out == real.out);
}

TEST_CASE("RedisProcess starts a private server and leaves nothing behind", "[live]") {
  int pid = 0;
  std::string dir;
  {
    std::unique_ptr<RedisProcess> a = RedisProcess::StartOrThrow();
    std::unique_ptr<RedisProcess> b = RedisProcess::StartOrThrow();
    CHECK(a->port() != b->port());
    CHECK(a->port() != 6379);
    CHECK(a->pid() != b->pid());
    CHECK(a->dir() != b->dir());
    CHECK(std::filesystem::exists(a->log_path()));

    RedisClient client("127.0.0.1", a->port());
    CHECK(client.Command({"PING"}) == Reply::Status("PONG"));
    const Reply info = client.Command({"INFO", "server"});
    REQUIRE(info.type == Reply::Type::kBulk);
    CHECK(info.str.find("process_id:" + std::to_string(a->pid()) + "\r\n") != std::string::npos);
    pid = a->pid();
    dir = a->dir();
    CHECK(ProcessExists(pid));
  }
  // The destructor reaped the child, so the pid is gone rather than a zombie.
  CHECK_FALSE(ProcessExists(pid));
  CHECK_FALSE(std::filesystem::exists(dir));
}

TEST_CASE("RedisProcess reports a server that cannot start", "[live]") {
  RedisProcess::Options options;
  options.extra_args = {"--no-such-option", "1"};
  std::string error;
  std::unique_ptr<RedisProcess> p = RedisProcess::Start(options, &error);
  CHECK(p == nullptr);
  INFO(error);
  CHECK(error.find("exited during start-up") != std::string::npos);
  CHECK(error.find("no-such-option") != std::string::npos);

  options = {};
  options.binary = "/nonexistent/redis-server";
  CHECK(RedisProcess::Start(options, &error) == nullptr);
  CHECK(error.find("not found") != std::string::npos);
}

TEST_CASE("RedisClient is binary safe and converts every RESP2 reply type", "[live]") {
  std::unique_ptr<RedisProcess> redis = RedisProcess::StartOrThrow();
  RedisClient client("127.0.0.1", redis->port());
  const std::string binary("a\0b\r\n\xff", 6);
  CHECK(client.Command({"SET", binary, binary}) == Reply::Ok());
  CHECK(client.Command({"GET", binary}) == Reply::Bulk(binary));
  CHECK(client.Command({"GET", "missing"}) == Reply::Null());
  CHECK(client.Command({"INCR", "n"}) == Reply::Integer(1));
  CHECK(client.Command({"INCR", binary}) ==
        Reply::Error("ERR value is not an integer or out of range"));
  CHECK(client.Command({"EVAL", "return {1, 'x', {ok='fine'}, {err='E bad'}, false}", "0"}) ==
        Reply::Array({Reply::Integer(1), Reply::Bulk("x"), Reply::Status("fine"),
                      Reply::Error("E bad"), Reply::Null()}));
  // A null array ("*-1") reads as nil through hiredis 0.14.
  CHECK(client.Command({"LPOP", "missing", "2"}) == Reply::Null());
  CHECK(client.Command({"LRANGE", "missing", "0", "-1"}) == Reply::Array());

  client.Append({"SET", "p", "1"});
  client.Append({"INCR", "p"});
  client.Append({"GET", "p"});
  CHECK(client.ReadReply() == Reply::Ok());
  CHECK(client.ReadReply() == Reply::Integer(2));
  CHECK(client.ReadReply() == Reply::Bulk("2"));
}

TEST_CASE("RedisClient throws on a refused connection and on a lost one", "[live]") {
  int port = 0;
  {
    std::unique_ptr<RedisProcess> redis = RedisProcess::StartOrThrow();
    port = redis->port();
    RedisClient client("127.0.0.1", port);
    CHECK(client.Command({"PING"}) == Reply::Status("PONG"));
    client.Append({"QUIT"});
    CHECK(client.ReadReply() == Reply::Ok());
    CHECK_THROWS_AS(client.Command({"PING"}), std::runtime_error);
  }
  CHECK_THROWS_AS(RedisClient("127.0.0.1", port, 500), std::runtime_error);
}

}  // namespace lockstep
