// A real redis-server started for a test or a benchmark: on a free loopback port, with its
// pidfile, working directory and log file in a fresh temporary directory, stopped by its pid
// when this object goes away. Nothing else is ever assumed to be running, and port 6379 is
// never used.
//
// The server is a child process of the caller (fork/exec, not --daemonize), so it is reaped
// and never left as a zombie or an orphan: it gets SIGTERM from the destructor and, through
// PR_SET_PDEATHSIG, when the thread that started it dies (a crashed test binary does not leave
// servers behind). Start it (and restart it) from a thread that outlives it. Its pid is in the
// process-wide table of live/process_registry.h from fork until it is reaped, so a signal
// handler can kill it.
//
// The fault methods (Pause, Resume, Kill, BeginRestart) act on this process only, by its pid.
#ifndef LOCKSTEP_LIVE_REDIS_PROCESS_H_
#define LOCKSTEP_LIVE_REDIS_PROCESS_H_

#include <chrono>
#include <csignal>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace lockstep {

class RedisProcess {
 public:
  struct Options {
    std::string binary = "redis-server";  // A path, or a name looked up in PATH.
    // e.g. {"--appendonly", "yes"}. Appended after ours, and redis lets a later value win, so
    // they must not set --port, --bind, --dir, --pidfile, --logfile or --daemonize; nor
    // --requirepass, since readiness is checked with PING and INFO.
    std::vector<std::string> extra_args;
    int startup_timeout_ms = 5000;        // Per attempt.
    int stop_timeout_ms = 5000;           // SIGTERM, then SIGKILL after this long.
    // The free port is found by binding port 0 and closing it, so another process can take it
    // before redis-server binds it; then a new port is tried, at most this many times.
    int port_attempts = 5;
    // A Redis Cluster node: --cluster-enabled yes, its nodes.conf in the temporary directory,
    // and its cluster bus on a second free port (--cluster-port) rather than port + 10000,
    // which may be taken or above 65535. It starts with no slots; the caller forms the
    // cluster (CLUSTER ADDSLOTSRANGE, CLUSTER MEET with cluster_bus_port()).
    bool cluster = false;
    // When not empty, written to <dir>/<config_file_name> and given to the server as its
    // config file (its first argument, before ours, which therefore win). The server may
    // rewrite it (CONFIG REWRITE, Sentinel's state), and a restart starts from what it wrote.
    // redis-sentinel needs one.
    std::string config_text;
    std::string config_file_name = "redis.conf";
    // Added to (or replacing in) the environment the server inherits, e.g. an LD_PRELOAD.
    std::vector<std::pair<std::string, std::string>> env;
    // What the server gets when the thread that started it dies. SIGKILL also ends a server
    // that is stopped (SIGSTOP), where a SIGTERM would wait, pending, for a SIGCONT.
    int parent_death_signal = SIGTERM;
    // A restart retries this long while the old port is briefly unavailable.
    int restart_timeout_ms = 10000;
  };

  // Starts the server and waits until it answers PING (and is the process we started). On
  // failure returns null and puts the reason (with the tail of the server's log, when there is
  // one) in *error.
  static std::unique_ptr<RedisProcess> Start(const Options& options, std::string* error);
  // Start, but on failure throws std::runtime_error with the reason.
  static std::unique_ptr<RedisProcess> StartOrThrow(const Options& options);
  static std::unique_ptr<RedisProcess> StartOrThrow();  // Default options.

  ~RedisProcess();  // SIGTERM to the pid, wait for it to exit, remove the temporary directory.
  RedisProcess(const RedisProcess&) = delete;
  RedisProcess& operator=(const RedisProcess&) = delete;

  // Faults. Pause sends SIGSTOP (and returns once the process is stopped) and Resume SIGCONT.
  // Kill sends SIGKILL and reaps the process: what the server had not yet written to its
  // files is lost; what it wrote but had not fsynced is not (the kernel keeps it).
  void Pause();
  void Resume();
  void Kill();
  // A restart after Kill (or after the process exited on its own): the same port, directory,
  // arguments and config file, so it reloads its AOF. In steps, so that a caller need not
  // block: the live driver's event loop keeps its clients running while the server starts,
  // as real clients would (a loop frozen for the start-up would stall every client and then
  // fire their timers at once). BeginRestart launches the process; PollRestart looks once,
  // without waiting: kStarting (not answering PING yet: call again), kReady, or kFailed with
  // *error set.
  enum class RestartState : uint8_t { kStarting, kReady, kFailed };
  bool BeginRestart(std::string* error);
  RestartState PollRestart(std::string* error);
  // Appends lines to the config file (Options::config_text must have been set), read by the
  // next restart: later lines win in a Redis config file.
  bool AppendConfig(const std::string& lines, std::string* error);

  // False after Kill, or once the process has been found to have exited (this reaps it).
  bool running();
  bool paused() const { return paused_; }

  int port() const { return port_; }
  int cluster_bus_port() const { return cluster_bus_port_; }  // 0 unless Options::cluster.
  int pid() const { return pid_; }
  const std::string& dir() const { return dir_; }
  std::string log_path() const { return dir_ + "/redis.log"; }
  const std::string& config_path() const { return config_path_; }

 private:
  RedisProcess() = default;
  // Stops the child (if any) and reaps it; idempotent.
  void Stop();
  // Forks and execs args_; 0 with *error set on failure.
  int Launch(std::string* error);
  enum class Started : uint8_t { kReady, kPortTaken, kFailed, kNotYet };
  // Waits until the launched server answers PING on port_ as pid_.
  Started WaitUntilReady(int timeout_ms, std::string* error);
  // The failure of a server that did not answer within timeout_ms (it is stopped).
  std::string NoAnswer(int timeout_ms);
  // One look at the launched server: kNotYet while it is starting.
  Started CheckStarted(std::string* error);
  // A restart's launch (a first one, or another after the port was taken).
  bool LaunchRestartAttempt(std::string* error);

  int port_ = 0;
  int cluster_bus_port_ = 0;
  int pid_ = 0;
  bool paused_ = false;
  int stop_timeout_ms_ = 5000;
  int startup_timeout_ms_ = 5000;
  int restart_timeout_ms_ = 10000;
  int parent_death_signal_ = SIGTERM;
  // A restart in steps: its deadlines, and when a launch waits for the port to be free.
  std::chrono::steady_clock::time_point restart_deadline_{};
  std::chrono::steady_clock::time_point attempt_deadline_{};
  std::chrono::steady_clock::time_point relaunch_at_{};
  bool relaunch_pending_ = false;
  std::string dir_;
  std::string config_path_;  // Empty without Options::config_text.
  std::string executable_;
  std::vector<std::string> args_;                            // argv, args_[0] = executable_.
  std::vector<std::pair<std::string, std::string>> env_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_LIVE_REDIS_PROCESS_H_
