#include "property-tests/hostile_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace lockstep::hostile {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr size_t kStderrKept = 64 * 1024;

struct Running {
  pid_t pid = 0;
  size_t index = 0;
  SteadyClock::time_point started;
  std::string stderr_path;
  bool killed = false;
};

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string ReadStart(const std::string& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

// In the child: wire stdin, stdout and stderr, set the CPU bound, run the body, and leave
// without running the parent's atexit handlers and destructors (they belong to the test).
[[noreturn]] void RunChild(const Case& c, const std::string& stdin_path,
                           const std::string& stderr_path, double cpu_limit_seconds) {
  const int in = open(c.stdin_text.empty() ? "/dev/null" : stdin_path.c_str(), O_RDONLY);
  const int out = open("/dev/null", O_WRONLY);
  const int err = open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in < 0 || out < 0 || err < 0) _exit(125);
  dup2(in, 0);
  dup2(out, 1);
  dup2(err, 2);
  const rlim_t cpu = static_cast<rlim_t>(std::ceil(cpu_limit_seconds));
  const rlimit limit{cpu, cpu + 1};
  setrlimit(RLIMIT_CPU, &limit);
  signal(SIGPIPE, SIG_DFL);
  int rc = 125;
  try {
    rc = c.body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: uncaught exception: %s\n", e.what());
    rc = 124;
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  _exit(rc & 0xff);
}

}  // namespace

std::string Judge(const Case& c, const Outcome& o) {
  if (o.killed_wall) return "ran past the wall-clock bound";
  if (o.signal == SIGXCPU) return "ran past the CPU bound";
  if (o.signal != 0) {
    return "ended by signal " + std::to_string(o.signal) + " (" + strsignal(o.signal) + ")";
  }
  for (const char* mark : {"AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer",
                           "runtime error:"}) {
    if (o.stderr_text.find(mark) != std::string::npos) return std::string("sanitizer: ") + mark;
  }
  if (o.stderr_text.find("internal error") != std::string::npos) return "internal error";
  if (c.allowed_exits.count(o.exit_code) == 0) {
    std::string allowed;
    for (int e : c.allowed_exits) allowed += (allowed.empty() ? "" : "/") + std::to_string(e);
    return "exit " + std::to_string(o.exit_code) + " (allowed " + allowed + ")";
  }
  if (o.exit_code == 2 && o.stderr_text.find_first_not_of(" \n") == std::string::npos) {
    return "exit 2 without a message";
  }
  return "";
}

Summary RunCases(const std::vector<Case>& cases, int jobs, double cpu_limit_seconds,
                 const std::string& scratch_dir, const std::string& failure_dir) {
  mkdir(scratch_dir.c_str(), 0755);
  Summary summary;
  summary.cases = static_cast<int>(cases.size());
  const auto wall_limit = std::chrono::duration<double>(4 * cpu_limit_seconds + 5);
  std::vector<Running> running;
  size_t next = 0;
  bool failure_dir_made = false;
  while (next < cases.size() || !running.empty()) {
    while (static_cast<int>(running.size()) < jobs && next < cases.size()) {
      const Case& c = cases[next];
      const std::string base = scratch_dir + "/case-" + std::to_string(next);
      const std::string stdin_path = base + ".stdin";
      if (!c.stdin_text.empty()) WriteFile(stdin_path, c.stdin_text);
      std::cout.flush();
      std::fflush(nullptr);
      const pid_t pid = fork();
      if (pid < 0) {
        std::perror("fork");
        std::abort();
      }
      if (pid == 0) RunChild(c, stdin_path, base + ".stderr", cpu_limit_seconds);
      running.push_back({pid, next, SteadyClock::now(), base + ".stderr", false});
      ++next;
    }
    int status = 0;
    rusage usage{};
    const pid_t done = wait4(-1, &status, WNOHANG, &usage);
    if (done <= 0) {
      for (Running& r : running) {
        if (!r.killed && SteadyClock::now() - r.started > wall_limit) {
          kill(r.pid, SIGKILL);
          r.killed = true;
        }
      }
      usleep(1000);
      continue;
    }
    size_t slot = 0;
    while (slot < running.size() && running[slot].pid != done) ++slot;
    if (slot == running.size()) continue;  // Not one of ours (cannot happen: no other children).
    const Running r = running[slot];
    running.erase(running.begin() + static_cast<std::ptrdiff_t>(slot));
    const Case& c = cases[r.index];
    Outcome o;
    o.killed_wall = r.killed;
    if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
    o.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                    static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    o.stderr_text = ReadStart(r.stderr_path, kStderrKept);
    std::remove(r.stderr_path.c_str());
    std::remove((scratch_dir + "/case-" + std::to_string(r.index) + ".stdin").c_str());
    if (o.exit_code >= 0) ++summary.exits_by_code[static_cast<size_t>(o.exit_code)];
    if (o.cpu_seconds > summary.max_cpu_seconds) {
      summary.max_cpu_seconds = o.cpu_seconds;
      summary.slowest = c.name;
    }
    const std::string why = Judge(c, o);
    if (why.empty()) continue;
    ++summary.failures;
    std::string first_line = o.stderr_text.substr(0, o.stderr_text.find('\n'));
    if (first_line.size() > 200) first_line.resize(200);
    summary.failure_lines.push_back(c.name + ": " + why + " [" + first_line + "]");
    if (!failure_dir_made) {
      std::error_code ignored;
      std::filesystem::create_directories(failure_dir, ignored);
      failure_dir_made = true;
    }
    const std::string stem = failure_dir + "/case-" + std::to_string(r.index);
    WriteFile(stem + ".input", c.input_for_failure.empty() ? c.stdin_text : c.input_for_failure);
    WriteFile(stem + ".stderr", o.stderr_text);
  }
  return summary;
}

std::string FormatSummary(const std::string& title, const Summary& s) {
  std::ostringstream out;
  out << title << ": " << s.cases << " cases, " << s.failures << " failed; exit status";
  for (size_t code = 0; code < s.exits_by_code.size(); ++code) {
    if (s.exits_by_code[code] > 0) out << " " << code << ":" << s.exits_by_code[code];
  }
  char cpu[32];
  std::snprintf(cpu, sizeof cpu, "%.3f", s.max_cpu_seconds);
  out << "; most CPU " << cpu << " s (" << s.slowest << ")\n";
  for (const std::string& line : s.failure_lines) out << "  FAILED " << line << "\n";
  return out.str();
}

}  // namespace lockstep::hostile
