// A real redis-server started for a test or a benchmark: on a free loopback port, with its
// pidfile, working directory and log file in a fresh temporary directory, stopped by its pid
// when this object goes away. Nothing else is ever assumed to be running, and port 6379 is
// never used.
//
// The server is a child process of the caller (fork/exec, not --daemonize), so it is reaped
// and never left as a zombie or an orphan: it gets SIGTERM from the destructor and, through
// PR_SET_PDEATHSIG, when the thread that started it dies (a crashed test binary does not leave
// servers behind). Start it from a thread that outlives it.
#ifndef LOCKSTEP_LIVE_REDIS_PROCESS_H_
#define LOCKSTEP_LIVE_REDIS_PROCESS_H_

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
    // Variables set in the server's environment, replacing any of the same name that this
    // process has (e.g. LD_PRELOAD and the control file of live/timeshim, the node's clock).
    std::vector<std::pair<std::string, std::string>> env;
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

  int port() const { return port_; }
  int cluster_bus_port() const { return cluster_bus_port_; }  // 0 unless Options::cluster.
  int pid() const { return pid_; }
  const std::string& dir() const { return dir_; }
  std::string log_path() const { return dir_ + "/redis.log"; }

 private:
  RedisProcess() = default;
  // Stops the child (if any) and reaps it; idempotent.
  void Stop();

  int port_ = 0;
  int cluster_bus_port_ = 0;
  int pid_ = 0;
  int stop_timeout_ms_ = 5000;
  std::string dir_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_LIVE_REDIS_PROCESS_H_
