// `lockstep replay --redis` on servers this test starts as "the user's": FLUSHALL, FLUSHDB,
// DEBUG and SHUTDOWN renamed away, CONFIG renamed to a name lockstep cannot know, and keys of
// the user's own (one named like the scenario's lock, one like its Redisson channel). For a
// single-node contention run, a partition, lost replies and a five-master RedLock it
// establishes: the live verdict matches [expect] (exit 0; not --strict: MONITOR slows the
// servers, and on a loaded machine the sim/live comparison then jitters); a MONITOR
// connection per server saw no command naming a key or channel outside the run's prefix, and
// none that names no key but PING, INFO, MULTI, EXEC, WAIT and the clean-up's SCAN of the
// prefix; no command was refused by the server (a renamed command would have been); the
// user's keys are untouched; nothing under the prefix is left, also after SIGINT. Scenarios
// that need the server processes, or addresses that do not fit, get exit 2 with a message.
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/cluster.h"
#include "core/server.h"
#include "live/redis_client.h"
#include "live/redis_process.h"

namespace lockstep {
namespace {

std::string RandomHex() {
  uint64_t v = 0;
  REQUIRE(::getrandom(&v, sizeof(v), 0) == static_cast<ssize_t>(sizeof(v)));
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// A server as a user might run it: the dangerous commands renamed away, CONFIG under a secret
// name, and keys of its own.
struct UsersServer {
  std::unique_ptr<RedisProcess> process;
  std::string config_command;  // The secret name of CONFIG.
};

UsersServer StartUsersServer() {
  UsersServer s;
  s.config_command = "cfg-" + RandomHex();
  RedisProcess::Options o;
  o.extra_args = {"--save", "",
                  "--appendonly", "no",
                  "--rename-command", "FLUSHALL", "",
                  "--rename-command", "FLUSHDB", "",
                  "--rename-command", "DEBUG", "",
                  "--rename-command", "SHUTDOWN", "",
                  "--rename-command", "CONFIG", s.config_command};
  s.process = RedisProcess::StartOrThrow(o);
  RedisClient c("127.0.0.1", s.process->port());
  // The renames took: these are unknown commands now.
  for (const char* name : {"FLUSHALL", "FLUSHDB", "DEBUG", "SHUTDOWN", "CONFIG"}) {
    const Reply r = c.Command({name});
    INFO(name << ": " << r.Debug());
    REQUIRE(r.is_error());
    REQUIRE(r.str.find("unknown command") != std::string::npos);
  }
  // The user's keys: some named as lockstep's protocols name theirs without the prefix.
  REQUIRE(c.Command({"SET", "lock", "the user's own lock"}) == Reply::Ok());
  REQUIRE(c.Command({"SET", "redisson_lock__channel:{lock}", "x"}) == Reply::Ok());
  REQUIRE(c.Command({"SET", "lockstep:other-run:{lock}:seq", "41"}) == Reply::Ok());
  REQUIRE(c.Command({"HSET", "user:1", "name", "ada", "role", "admin"}).integer == 2);
  REQUIRE(c.Command({"RPUSH", "queue", "a", "b", "c"}).integer == 3);
  REQUIRE(c.Command({"SET", "session", "s", "PX", "600000"}) == Reply::Ok());
  return s;
}

// Every key of a server with its type and DUMP, and whether it has a TTL.
std::map<std::string, std::string> Snapshot(int port) {
  RedisClient c("127.0.0.1", port);
  std::map<std::string, std::string> out;
  std::string cursor = "0";
  do {
    const Reply scan = c.Command({"SCAN", cursor, "COUNT", "1000"});
    REQUIRE(scan.elements.size() == 2);
    for (const Reply& k : scan.elements[1].elements) {
      const Reply type = c.Command({"TYPE", k.str});
      const Reply dump = c.Command({"DUMP", k.str});
      const Reply pttl = c.Command({"PTTL", k.str});
      out[k.str] = type.str + " " + dump.str + (pttl.integer > 0 ? " ttl" : " no-ttl");
    }
    cursor = scan.elements[0].str;
  } while (cursor != "0");
  return out;
}

int64_t ErrorReplies(int port) {
  RedisClient c("127.0.0.1", port);
  const Reply info = c.Command({"INFO", "stats"});
  const std::string key = "total_error_replies:";
  const size_t at = info.str.find(key);
  REQUIRE(at != std::string::npos);
  return std::stoll(info.str.substr(at + key.size()));
}

// MONITOR on one server, in a thread, until Stop: every command the server executed, from any
// client, scripts' own commands included ("[0 lua]").
class Monitor {
 public:
  explicit Monitor(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
    const std::string monitor = "MONITOR\r\n";
    REQUIRE(::write(fd_, monitor.data(), monitor.size()) == static_cast<ssize_t>(monitor.size()));
    // Wait for +OK, so that nothing lockstep does is missed.
    while (text_.find("+OK\r\n") == std::string::npos) REQUIRE(ReadSome(5000));
    text_.erase(0, text_.find("+OK\r\n") + 5);
    thread_ = std::thread([this] {
      while (!stop_) ReadSome(50);
      while (ReadSome(100)) {
      }
    });
  }
  ~Monitor() {
    Stop();
    ::close(fd_);
  }
  // The commands seen, each as its arguments.
  std::vector<std::vector<std::string>> Stop() {
    if (thread_.joinable()) {
      stop_ = true;
      thread_.join();
    }
    std::vector<std::vector<std::string>> out;
    size_t at = 0;
    while (true) {
      const size_t end = text_.find("\r\n", at);
      if (end == std::string::npos) break;
      out.push_back(Parse(text_.substr(at, end - at)));
      at = end + 2;
    }
    return out;
  }

 private:
  bool ReadSome(int timeout_ms) {
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) <= 0) return false;
    char buf[65536];
    const ssize_t n = ::read(fd_, buf, sizeof(buf));
    if (n <= 0) return false;
    text_.append(buf, static_cast<size_t>(n));
    return true;
  }
  // `+1700000000.123 [0 127.0.0.1:5555] "SET" "k" "v"`: the quoted arguments, unescaped as
  // Redis's sdscatrepr escaped them.
  static std::vector<std::string> Parse(const std::string& line) {
    // A line that does not parse becomes a command Judge rejects.
    const std::vector<std::string> unparsed = {"<unparsed MONITOR line: " + line + ">"};
    std::vector<std::string> args;
    size_t i = line.find("] ");
    if (i == std::string::npos) return unparsed;
    i += 2;
    while (i < line.size()) {
      if (line[i] != '"') return unparsed;
      std::string arg;
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] != '\\') {
          arg += line[i];
          continue;
        }
        const char e = line[++i];
        switch (e) {
          case 'n': arg += '\n'; break;
          case 'r': arg += '\r'; break;
          case 't': arg += '\t'; break;
          case 'a': arg += '\a'; break;
          case 'b': arg += '\b'; break;
          case 'x':
            arg += static_cast<char>(std::stoi(line.substr(i + 1, 2), nullptr, 16));
            i += 2;
            break;
          default: arg += e; break;  // \\ and \"
        }
      }
      args.push_back(arg);
      i += 2;  // The closing quote and the space.
    }
    return args;
  }

  int fd_ = -1;
  std::string text_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool Under(const std::string& name, const std::string& prefix) {
  return name.compare(0, prefix.size(), prefix) == 0;
}

// What is wrong with one command lockstep made a server execute ("" when nothing): a key or
// channel outside the prefix, or a command that names none but the few that touch no data.
std::string Judge(const std::vector<std::string>& args, const std::string& prefix) {
  if (args.empty()) return "an empty command";
  const std::string name = Lower(args[0]);
  for (const char* forbidden : {"flushall", "flushdb", "config", "debug", "shutdown", "keys",
                                "script", "swapdb", "select", "move"}) {
    if (name == forbidden) return "a forbidden command: " + args[0];
  }
  if (name == "subscribe" || name == "unsubscribe" || name == "publish") {
    for (size_t i = 1; i < (name == "publish" ? 2 : args.size()); ++i) {
      if (!Under(args[i], prefix)) return args[0] + " of channel " + args[i];
    }
    return "";
  }
  if (name == "scan") {
    // The clean-up's: MATCH <prefix>*.
    for (size_t i = 2; i + 1 < args.size(); ++i) {
      if (Lower(args[i]) == "match") return args[i + 1] == prefix + "*" ? "" : "SCAN MATCH " + args[i + 1];
    }
    return "SCAN without MATCH <prefix>*";
  }
  if (name == "ping" || name == "info" || name == "multi" || name == "exec" || name == "wait" ||
      name == "time") {
    return "";
  }
  const CommandSpec* spec = Server::Lookup(args);
  if (spec == nullptr) return "an unknown command " + args[0];
  const KeyPositions keys = CommandKeyPositions(*spec, args);
  if (keys.empty()) return args[0] + " names no key";
  for (size_t i = keys.first; i <= keys.last; i += keys.step) {
    if (!Under(args[i], prefix)) return args[0] + " of key " + args[i];
  }
  return "";
}

struct Run {
  int status = -1;  // Exit status; 128 + n for a signal.
  std::string output;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Starts lockstep with `args`, its output (both streams) into `out_file`.
pid_t Spawn(const std::vector<std::string>& args, const std::string& out_file) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int fd = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) ::_exit(127);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> argv;
    std::string binary = LOCKSTEP_BINARY;
    argv.push_back(binary.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(binary.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

int Wait(pid_t pid) {
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string OutDir(const std::string& name) {
  const std::string dir = std::string(LOCKSTEP_OUT_DIR) + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(std::string(LOCKSTEP_OUT_DIR));
  return dir;
}

std::string Addresses(const std::vector<UsersServer>& servers) {
  std::string out;
  for (const UsersServer& s : servers) {
    out += (out.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(s.process->port());
  }
  return out;
}

// The run's prefix, as lockstep printed it.
std::string PrefixIn(const std::string& output) {
  const std::string marker = "every key and channel of the run under ";
  const size_t at = output.find(marker);
  REQUIRE(at != std::string::npos);
  const size_t end = output.find('\n', at);
  const std::string prefix = output.substr(at + marker.size(), end - at - marker.size());
  REQUIRE(prefix.rfind("lockstep:", 0) == 0);
  REQUIRE(prefix.back() == ':');
  return prefix;
}

// Replays `scenario` on `nodes` user's servers and checks everything the file's header says.
// `interrupt_after_ms` > 0: SIGINT that long after the live run began (exit 130 expected).
// One replay at `time_scale`; returns its exit status. `may_differ`: a live verdict that differs
// from the simulated one (exit 1, "<-- DIFFERENT") is not a failure of this attempt, only real
// time's doing at this scale (the caller tries once more at twice the scale, as the library's
// replay tests do); every check of the keys still applies.
int ReplayAttempt(const std::vector<UsersServer>& servers, const std::string& scenario,
                  const std::string& time_scale, bool may_differ, int interrupt_after_ms) {
  std::vector<std::map<std::string, std::string>> before;
  std::vector<int64_t> errors_before;
  std::vector<std::unique_ptr<Monitor>> monitors;
  for (const UsersServer& s : servers) {
    before.push_back(Snapshot(s.process->port()));
    errors_before.push_back(ErrorReplies(s.process->port()));
    monitors.push_back(std::make_unique<Monitor>(s.process->port()));
  }
  const std::string name = std::filesystem::path(scenario).stem().string() +
                           (interrupt_after_ms > 0 ? "-interrupted" : "") + "-x" + time_scale;
  const std::string dir = OutDir(name);
  std::vector<std::string> args = {"replay", std::string(LOCKSTEP_SOURCE_DIR) + "/" + scenario,
                                   "--redis", Addresses(servers), "--time-scale", time_scale,
                                   "--quiet", "--out", dir};
  const pid_t pid = Spawn(args, dir + ".out");
  if (interrupt_after_ms > 0) {
    // The live run's parameters are printed once it is under way (after the simulated run,
    // which a loaded machine makes slow).
    bool live = false;
    for (int i = 0; i < 1200 && !live; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      live = ReadFile(dir + ".out").find("key prefix:") != std::string::npos;
    }
    REQUIRE(live);
    std::this_thread::sleep_for(std::chrono::milliseconds(interrupt_after_ms));
    ::kill(pid, SIGINT);
  }
  const int status = Wait(pid);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const std::string output = ReadFile(dir + ".out");
  INFO(output);
  const bool differed = status == 1 && output.find("<-- DIFFERENT") != std::string::npos;
  if (!(may_differ && differed)) CHECK(status == (interrupt_after_ms > 0 ? 130 : 0));
  const std::string prefix = PrefixIn(output);

  for (size_t i = 0; i < servers.size(); ++i) {
    const int port = servers[i].process->port();
    INFO("server " << i << " on port " << port);
    const std::vector<std::vector<std::string>> seen = monitors[i]->Stop();
    size_t under_prefix = 0;
    std::vector<std::string> wrong;
    for (const auto& command : seen) {
      const std::string why = Judge(command, prefix);
      if (!why.empty() && wrong.size() < 10) wrong.push_back(why);
      for (size_t a = 1; a < command.size(); ++a) {
        if (Under(command[a], prefix)) ++under_prefix;
      }
    }
    INFO("first commands outside the run's prefix: " << [&] {
      std::string s;
      for (const std::string& w : wrong) s += "\n  " + w;
      return s;
    }());
    CHECK(wrong.empty());
    CHECK(under_prefix > 10);  // The run did work on this server.
    CHECK(ErrorReplies(port) == errors_before[i]);  // Nothing was refused, nothing renamed tried.
    CHECK(Snapshot(port) == before[i]);  // The user's keys untouched, nothing of the run left.
    CHECK((output.find("clean-up   node") != std::string::npos || interrupt_after_ms > 0));
  }
  // The run's names never reach the history: the protocols and checkers see their own names.
  CHECK(ReadFile(dir + "/history.jsonl").find(prefix) == std::string::npos);
  return status;
}

// Replays `scenario` on `nodes` user's servers and checks everything the file's header says.
// `interrupt_after_ms` > 0: SIGINT that long after the live run began (exit 130 expected). A
// live verdict that differs from the simulated one at a tenth of the times is tried once more
// at a fifth (a loaded machine's timers fire late; the library's replay tests do the same).
void ReplayOnUsersServers(const std::string& scenario, int nodes, int interrupt_after_ms = 0) {
  std::vector<UsersServer> servers;
  for (int i = 0; i < nodes; ++i) servers.push_back(StartUsersServer());
  const int status = ReplayAttempt(servers, scenario, "0.1", interrupt_after_ms == 0, interrupt_after_ms);
  if (interrupt_after_ms == 0 && status == 1) {
    UNSCOPED_INFO("the verdicts differed at --time-scale 0.1; once more at 0.2");
    ReplayAttempt(servers, scenario, "0.2", /*may_differ=*/false, interrupt_after_ms);
  }
}

int RunForStatus(const std::vector<std::string>& args, const std::string& name, std::string* output) {
  const std::string dir = OutDir(name);
  std::vector<std::string> all = args;
  all.insert(all.end(), {"--quiet", "--out", dir});
  const int status = Wait(Spawn(all, dir + ".out"));
  *output = ReadFile(dir + ".out");
  return status;
}

std::string ScenarioPath(const std::string& path) { return std::string(LOCKSTEP_SOURCE_DIR) + "/" + path; }

}  // namespace

TEST_CASE("redis option: ten clients contend on one of the user's servers", "[live][user_redis]") {
  ReplayOnUsersServers("scenarios/contention-10.toml", 1);
}

TEST_CASE("redis option: a partition through the proxy, the lease expiring on the user's server",
          "[live][user_redis]") {
  ReplayOnUsersServers("scenarios/partition-holder.toml", 1);
}

TEST_CASE("redis option: replies lost by the proxy from the user's server", "[live][user_redis]") {
  ReplayOnUsersServers("scenarios/setnx-expire-lost-reply.toml", 1);
}

TEST_CASE("redis option: RedLock on five of the user's servers", "[live][user_redis]") {
  ReplayOnUsersServers("scenarios/redlock-five-safe.toml", 5);
}

TEST_CASE("redis option: SIGINT mid-run still deletes the run's keys and nothing else",
          "[live][user_redis]") {
  ReplayOnUsersServers("scenarios/contention-10.toml", 1, /*interrupt_after_ms=*/2000);
}

TEST_CASE("redis option refuses faults that need the server processes, naming them",
          "[live][user_redis]") {
  std::string output;
  // Refused before any address is tried: these ports need not be open.
  CHECK(RunForStatus({"replay", ScenarioPath("scenarios/multilock-node-down.toml"), "--redis",
                      "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"},
                     "refuse-crash", &output) == 2);
  CHECK(output.find("on servers lockstep did not start (--redis)") != std::string::npos);
  CHECK(output.find("multilock-node-down.toml:") != std::string::npos);
  CHECK(output.find("a node crash (of n3) needs control of the server process") != std::string::npos);
  CHECK(RunForStatus({"replay", ScenarioPath("scenarios/testdata/live/node-pause.toml"), "--redis",
                      "127.0.0.1:1"},
                     "refuse-pause", &output) == 2);
  CHECK(output.find("a node pause (of n1) needs control of the server process") != std::string::npos);
  CHECK(RunForStatus({"replay", ScenarioPath("scenarios/clock-jump-node.toml"), "--redis",
                      "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"},
                     "refuse-jump", &output) == 2);
  CHECK(output.find("clock jump") != std::string::npos);
  CHECK(RunForStatus({"replay", ScenarioPath("scenarios/testdata/live/replica-failover.toml"), "--redis",
                      "127.0.0.1:1,127.0.0.1:2"},
                     "refuse-replica", &output) == 2);
  CHECK(output.find("as a replica (replica_of) needs control of the server processes") !=
        std::string::npos);
  CHECK_FALSE(std::filesystem::exists(std::string(LOCKSTEP_OUT_DIR) + "/refuse-crash/sim"));
}

TEST_CASE("redis option: addresses that do not fit the scenario get exit 2", "[live][user_redis]") {
  std::string output;
  CHECK(RunForStatus({"replay", ScenarioPath("scenarios/contention-10.toml"), "--redis",
                      "127.0.0.1:1,127.0.0.1:2"},
                     "wrong-count", &output) == 2);
  CHECK(output.find("--redis gives 2 addresses but the scenario has 1 node (n1)") != std::string::npos);
  // A port nobody listens on: the check before the run says which node and address.
  UsersServer s = StartUsersServer();
  const int closed = s.process->port();
  s.process.reset();
  CHECK(RunForStatus({"replay", ScenarioPath("scenarios/contention-10.toml"), "--redis",
                      "127.0.0.1:" + std::to_string(closed)},
                     "unreachable", &output) == 2);
  CHECK(output.find("cannot reach node n1 (--redis 127.0.0.1:" + std::to_string(closed) + ")") !=
        std::string::npos);
  // A replica of the user's: its role is read (INFO) and refused.
  UsersServer master = StartUsersServer();
  UsersServer replica = StartUsersServer();
  RedisClient c("127.0.0.1", replica.process->port());
  REQUIRE(c.Command({"REPLICAOF", "127.0.0.1", std::to_string(master.process->port())}) == Reply::Ok());
  CHECK(RunForStatus({"replay", ScenarioPath("scenarios/contention-10.toml"), "--redis",
                      "127.0.0.1:" + std::to_string(replica.process->port())},
                     "replica", &output) == 2);
  CHECK(output.find("is not a master (role:slave)") != std::string::npos);
}

// A server that passes PING and INFO but runs no Lua script (an ACL that forbids
// scripting here; a Redis-compatible server without it answers NOSCRIPT) is refused before
// the run, with exit 2, instead of a run in which nothing succeeded ending PASS.
TEST_CASE("redis option refuses a server that runs no Lua script", "[live][user_redis]") {
  RedisProcess::Options o;
  o.extra_args = {"--save", "", "--appendonly", "no"};
  std::unique_ptr<RedisProcess> server = RedisProcess::StartOrThrow(o);
  RedisClient c("127.0.0.1", server->port());
  REQUIRE(c.Command({"ACL", "SETUSER", "default", "-@scripting"}) == Reply::Ok());
  REQUIRE(c.Command({"EVAL", "return 1", "0"}).is_error());
  std::string output;
  CHECK(RunForStatus({"replay", ScenarioPath("scenarios/contention-10.toml"), "--redis",
                      "127.0.0.1:" + std::to_string(server->port())},
                     "refuse-no-scripting", &output) == 2);
  CHECK(output.find("does not run Lua scripts (EVAL \"return 1\" answered -NOPERM") !=
        std::string::npos);
  CHECK(output.find("every lock script would fail there") != std::string::npos);
}


}  // namespace lockstep
