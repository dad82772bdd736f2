#include "live/redis_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "live/process_registry.h"

namespace lockstep {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kRedisDefaultPort = 6379;  // Never used: a developer's own server may be there.
constexpr size_t kLogTailBytes = 2000;
constexpr int kStopConfirmMs = 2000;

std::string ErrnoText(const char* what) {
  return std::string(what) + ": " + std::strerror(errno);
}

// Binds 127.0.0.1:0, reads the port the kernel chose and closes the socket. The port is only
// probably free afterwards; Start retries when redis-server cannot bind it.
int FindFreePort(std::string* error) {
  for (int attempt = 0; attempt < 10; ++attempt) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      *error = ErrnoText("socket");
      return 0;
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof(addr);
    const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
    if (!ok) *error = ErrnoText("bind/getsockname on 127.0.0.1:0");
    ::close(fd);
    if (!ok) return 0;
    const int port = ntohs(addr.sin_port);
    if (port != kRedisDefaultPort && port > 0) return port;
  }
  *error = "could not find a free loopback port";
  return 0;
}

// The executable to exec, resolved before fork so the child only makes async-signal-safe calls.
std::string ResolveBinary(const std::string& binary) {
  if (binary.find('/') != std::string::npos) {
    return ::access(binary.c_str(), X_OK) == 0 ? binary : std::string();
  }
  const char* path_env = std::getenv("PATH");
  std::stringstream path(path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(path, dir, ':')) {
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + binary;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

std::string MakeTempDir(std::string* error) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                        "/lockstep-redis-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    *error = ErrnoText(("mkdtemp " + pattern).c_str());
    return {};
  }
  return pattern;
}

std::string FileTail(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff start =
      size > static_cast<std::streamoff>(kLogTailBytes) ? size - kLogTailBytes : 0;
  in.seekg(start);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return text;
}

std::string Diagnostics(const std::string& dir) {
  std::string out;
  const std::string log = FileTail(dir + "/redis.log");
  if (!log.empty()) out += "\n--- tail of " + dir + "/redis.log ---\n" + log;
  const std::string console = FileTail(dir + "/redis.stdout");
  if (!console.empty()) out += "\n--- tail of " + dir + "/redis.stdout ---\n" + console;
  return out;
}

bool LogSaysPortTaken(const std::string& dir) {
  const std::string log = FileTail(dir + "/redis.log") + FileTail(dir + "/redis.stdout");
  return log.find("Address already in use") != std::string::npos;
}

// The process_id field of INFO server, or 0.
long ProcessIdFromInfo(const redisReply* reply) {
  if (reply == nullptr || reply->type != REDIS_REPLY_STRING) return 0;
  const std::string info(reply->str, reply->len);
  const std::string key = "process_id:";
  const size_t at = info.find(key);
  if (at == std::string::npos) return 0;
  return std::strtol(info.c_str() + at + key.size(), nullptr, 10);
}

enum class Readiness { kReady, kOtherServer, kNotYet };

// Whether the server on `port` answers PING and is the process `pid`: a port taken by someone
// else between our probe and redis-server's bind would otherwise look like success.
Readiness Probe(int port, int pid) {
  redisContext* ctx = redisConnectWithTimeout("127.0.0.1", port, timeval{0, 200'000});
  if (ctx == nullptr) return Readiness::kNotYet;
  Readiness result = Readiness::kNotYet;
  if (ctx->err == 0) {
    redisSetTimeout(ctx, timeval{1, 0});
    auto* pong = static_cast<redisReply*>(redisCommand(ctx, "PING"));
    const bool answered = pong != nullptr && pong->type == REDIS_REPLY_STATUS &&
                          std::strcmp(pong->str, "PONG") == 0;
    if (pong != nullptr) freeReplyObject(pong);
    if (answered) {
      auto* info = static_cast<redisReply*>(redisCommand(ctx, "INFO server"));
      const long server_pid = ProcessIdFromInfo(info);
      if (info != nullptr) freeReplyObject(info);
      result = server_pid == pid ? Readiness::kReady : Readiness::kOtherServer;
    }
  }
  redisFree(ctx);
  return result;
}

// The environment a child gets: ours, with `overrides` added or replaced.
std::vector<std::string> ChildEnvironment(
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [n, v] : overrides) replaced = replaced || n == name;
    if (!replaced) env.push_back(entry);
  }
  for (const auto& [n, v] : overrides) env.push_back(n + "=" + v);
  return env;
}

}  // namespace

int RedisProcess::Launch(std::string* error) {
  // Everything the child needs is prepared here: after fork it may only make
  // async-signal-safe calls (the parent may have other threads holding malloc's lock).
  std::vector<char*> argv;
  argv.reserve(args_.size() + 1);
  for (const std::string& a : args_) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::vector<std::string> env_entries = ChildEnvironment(env_);
  std::vector<char*> envp;
  envp.reserve(env_entries.size() + 1);
  for (const std::string& e : env_entries) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const int death_signal = parent_death_signal_;

  const std::string console_path = dir_ + "/redis.stdout";
  const int console = ::open(console_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (console < 0 || devnull < 0) {
    *error = ErrnoText("open redis.stdout or /dev/null");
    if (console >= 0) ::close(console);
    if (devnull >= 0) ::close(devnull);
    return 0;
  }
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid == 0) {
    // Child.
    ::dup2(devnull, STDIN_FILENO);
    ::dup2(console, STDOUT_FILENO);
    ::dup2(console, STDERR_FILENO);
    // Inherited descriptors (other servers' sockets, test files) must not stay open in redis.
    ::close_range(3, ~0u, 0);
    // A blocked SIGTERM would make the server unstoppable, and an ignored SIGINT or SIGTERM
    // (dispositions survive exec) would too.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    ::sigaction(SIGINT, &default_action, nullptr);
    ::sigaction(SIGTERM, &default_action, nullptr);
    ::sigaction(SIGPIPE, &default_action, nullptr);  // lockstep ignores it; redis sets its own.
    ::sigaction(SIGXFSZ, &default_action, nullptr);
    // If the test binary dies, the server goes with it. Checking the parent after the prctl
    // closes the window in which the parent died before it took effect.
    ::prctl(PR_SET_PDEATHSIG, death_signal);
    if (::getppid() != parent) ::_exit(127);
    ::execve(executable_.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(console);
  ::close(devnull);
  if (pid < 0) {
    errno = fork_errno;
    *error = ErrnoText("fork");
    return 0;
  }
  // A signal handler that runs between the fork and this line does not see the child; if the
  // handler then ends this process (as InstallKillOnSignal's does), PR_SET_PDEATHSIG ends the
  // child.
  if (!process_registry::Add(pid)) {
    // Not in the table, so no signal handler could stop it: it must not run.
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    *error = "more than " + std::to_string(process_registry::kMaxProcesses) +
             " processes started at once";
    return 0;
  }
  return pid;
}

RedisProcess::Started RedisProcess::CheckStarted(std::string* error) {
  assert(pid_ > 0);
  int status = 0;
  if (process_registry::ReapIfExited(pid_, &status)) {
    pid_ = 0;
    if (LogSaysPortTaken(dir_)) return Started::kPortTaken;
    *error = "redis-server exited during start-up (" +
             (WIFEXITED(status) ? "status " + std::to_string(WEXITSTATUS(status))
                                : "signal " + std::to_string(WTERMSIG(status))) +
             ")" + Diagnostics(dir_);
    return Started::kFailed;
  }
  const Readiness readiness = Probe(port_, pid_);
  if (readiness == Readiness::kReady) return Started::kReady;
  if (readiness == Readiness::kOtherServer) {
    // Another server answers on this port; ours will fail to bind it.
    Stop();
    return Started::kPortTaken;
  }
  return Started::kNotYet;
}

std::string RedisProcess::NoAnswer(int timeout_ms) {
  std::string why = "redis-server on port " + std::to_string(port_) +
                    " did not answer PING within " + std::to_string(timeout_ms) + " ms" +
                    Diagnostics(dir_);
  Stop();
  return why;
}

RedisProcess::Started RedisProcess::WaitUntilReady(int timeout_ms, std::string* error) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (true) {
    const Started started = CheckStarted(error);
    if (started != Started::kNotYet) return started;
    if (Clock::now() > deadline) {
      *error = NoAnswer(timeout_ms);
      return Started::kFailed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::unique_ptr<RedisProcess> RedisProcess::Start(const Options& options, std::string* error) {
  assert(error != nullptr);
  assert(options.port_attempts > 0);
  const std::string executable = ResolveBinary(options.binary);
  if (executable.empty()) {
    *error = "redis-server binary '" + options.binary + "' not found or not executable";
    return nullptr;
  }

  std::unique_ptr<RedisProcess> process(new RedisProcess());
  process->stop_timeout_ms_ = options.stop_timeout_ms;
  process->startup_timeout_ms_ = options.startup_timeout_ms;
  process->restart_timeout_ms_ = options.restart_timeout_ms;
  process->parent_death_signal_ = options.parent_death_signal;
  process->executable_ = executable;
  process->env_ = options.env;
  process->dir_ = MakeTempDir(error);
  if (process->dir_.empty()) return nullptr;
  const std::string& dir = process->dir_;
  if (!options.config_text.empty()) {
    assert(options.config_file_name.find('/') == std::string::npos);
    process->config_path_ = dir + "/" + options.config_file_name;
  }

  for (int attempt = 1; attempt <= options.port_attempts; ++attempt) {
    const int port = FindFreePort(error);
    if (port == 0) return nullptr;
    assert(port != kRedisDefaultPort);
    std::filesystem::remove(dir + "/redis.log");
    std::filesystem::remove(dir + "/redis.stdout");
    if (!process->config_path_.empty()) {
      // Written afresh for every attempt: a server that failed may have rewritten it.
      std::ofstream config(process->config_path_, std::ios::trunc);
      config << options.config_text << "\n";
      if (!config.flush()) {
        *error = "cannot write " + process->config_path_;
        return nullptr;
      }
    }

    std::vector<std::string> args = {executable};
    if (!process->config_path_.empty()) args.push_back(process->config_path_);
    args.insert(args.end(), {"--port", std::to_string(port),
                             "--bind", "127.0.0.1",
                             "--daemonize", "no",
                             "--save", "",
                             "--appendonly", "no",
                             "--pidfile", dir + "/redis.pid",
                             "--dir", dir,
                             "--logfile", dir + "/redis.log"});
    if (options.cluster) {
      int bus_port = 0;
      for (int tries = 0; tries < 10 && (bus_port == 0 || bus_port == port); ++tries) {
        bus_port = FindFreePort(error);
        if (bus_port == 0) return nullptr;
      }
      if (bus_port == port) {
        *error = "could not find a second free loopback port for the cluster bus";
        return nullptr;
      }
      std::filesystem::remove(dir + "/nodes.conf");
      args.insert(args.end(), {"--cluster-enabled", "yes",
                               "--cluster-config-file", dir + "/nodes.conf",
                               "--cluster-port", std::to_string(bus_port)});
      process->cluster_bus_port_ = bus_port;
    }
    args.insert(args.end(), options.extra_args.begin(), options.extra_args.end());
    process->args_ = std::move(args);
    process->port_ = port;

    process->pid_ = process->Launch(error);
    if (process->pid_ == 0) return nullptr;
    switch (process->WaitUntilReady(options.startup_timeout_ms, error)) {
      case Started::kReady: return process;
      case Started::kPortTaken: break;  // Try a new port.
      case Started::kFailed: return nullptr;
      case Started::kNotYet: assert(false); return nullptr;  // WaitUntilReady waits it out.
    }
  }
  *error = "redis-server could not bind a free port in " + std::to_string(options.port_attempts) +
           " attempts" + Diagnostics(dir);
  return nullptr;
}

std::unique_ptr<RedisProcess> RedisProcess::StartOrThrow(const Options& options) {
  std::string error;
  std::unique_ptr<RedisProcess> process = Start(options, &error);
  if (process == nullptr) throw std::runtime_error("cannot start redis-server: " + error);
  return process;
}

std::unique_ptr<RedisProcess> RedisProcess::StartOrThrow() { return StartOrThrow(Options{}); }

void RedisProcess::Stop() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGTERM);
  // A stopped process keeps the SIGTERM pending until it runs again.
  if (paused_) Resume();
  const auto deadline = Clock::now() + std::chrono::milliseconds(stop_timeout_ms_);
  while (!process_registry::ReapIfExited(pid_, nullptr)) {
    if (Clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      process_registry::WaitAndReap(pid_, nullptr);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pid_ = 0;
  paused_ = false;
}

void RedisProcess::Pause() {
  assert(pid_ > 0);
  assert(!paused_);
  if (pid_ <= 0 || paused_) return;
  process_registry::SetPaused(pid_, true);
  paused_ = true;
  ::kill(pid_, SIGSTOP);
  // The stop happens when the process next takes its signals; return once it has, so that
  // a pause begins when Pause returns. WNOWAIT leaves the stop to be seen again.
  const auto deadline = Clock::now() + std::chrono::milliseconds(kStopConfirmMs);
  while (Clock::now() < deadline) {
    siginfo_t info{};
    const int r = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WSTOPPED | WNOHANG | WNOWAIT);
    if (r == 0 && info.si_pid == pid_) break;
    if (r < 0 && errno != EINTR) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

void RedisProcess::Resume() {
  assert(pid_ > 0);
  if (pid_ <= 0 || !paused_) return;
  ::kill(pid_, SIGCONT);
  paused_ = false;
  process_registry::SetPaused(pid_, false);
}

void RedisProcess::Kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);  // Ends a stopped process too.
  process_registry::WaitAndReap(pid_, nullptr);
  pid_ = 0;
  paused_ = false;
}

bool RedisProcess::running() {
  if (pid_ > 0 && process_registry::ReapIfExited(pid_, nullptr)) {
    pid_ = 0;
    paused_ = false;
  }
  return pid_ > 0;
}

bool RedisProcess::BeginRestart(std::string* error) {
  assert(error != nullptr);
  assert(!args_.empty());
  if (running()) {
    *error = "redis-server pid " + std::to_string(pid_) + " is still running";
    return false;
  }
  restart_deadline_ = Clock::now() + std::chrono::milliseconds(restart_timeout_ms_);
  return LaunchRestartAttempt(error);
}

bool RedisProcess::LaunchRestartAttempt(std::string* error) {
  relaunch_pending_ = false;
  pid_ = Launch(error);
  if (pid_ == 0) return false;
  attempt_deadline_ = Clock::now() + std::chrono::milliseconds(startup_timeout_ms_);
  return true;
}

RedisProcess::RestartState RedisProcess::PollRestart(std::string* error) {
  assert(error != nullptr);
  const auto now = Clock::now();
  if (relaunch_pending_) {
    if (now < relaunch_at_) return RestartState::kStarting;
    return LaunchRestartAttempt(error) ? RestartState::kStarting : RestartState::kFailed;
  }
  if (pid_ <= 0) {
    *error = "no restart under way";
    return RestartState::kFailed;
  }
  switch (CheckStarted(error)) {
    case Started::kReady: return RestartState::kReady;
    case Started::kFailed: return RestartState::kFailed;
    case Started::kPortTaken:
      // The old process's port can be unavailable for a moment (a socket not yet released);
      // redis-server then exits with "Address already in use" and we try again.
      if (now > restart_deadline_) {
        *error = "port " + std::to_string(port_) + " stayed unavailable for " +
                 std::to_string(restart_timeout_ms_) + " ms" + Diagnostics(dir_);
        return RestartState::kFailed;
      }
      relaunch_pending_ = true;
      relaunch_at_ = now + std::chrono::milliseconds(100);
      return RestartState::kStarting;
    case Started::kNotYet:
      if (now > attempt_deadline_) {
        *error = NoAnswer(startup_timeout_ms_);
        return RestartState::kFailed;
      }
      return RestartState::kStarting;
  }
  return RestartState::kFailed;
}

bool RedisProcess::AppendConfig(const std::string& lines, std::string* error) {
  assert(error != nullptr);
  if (config_path_.empty()) {
    *error = "this redis-server was started without a config file";
    return false;
  }
  std::ofstream config(config_path_, std::ios::app);
  config << "\n" << lines << "\n";
  if (!config.flush()) {
    *error = "cannot append to " + config_path_;
    return false;
  }
  return true;
}

RedisProcess::~RedisProcess() {
  Stop();
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

}  // namespace lockstep
