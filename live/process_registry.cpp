#include "live/process_registry.h"

#include <signal.h>
#include <sys/wait.h>

#include <array>
#include <atomic>
#include <cassert>
#include <cerrno>

namespace lockstep::process_registry {
namespace {

// A signal handler may only touch lock-free atomics.
static_assert(std::atomic<pid_t>::is_always_lock_free);
static_assert(std::atomic<bool>::is_always_lock_free);

struct Slot {
  std::atomic<pid_t> pid{0};  // 0: free.
  std::atomic<bool> paused{false};
};

// Constant-initialized and trivially destroyed: usable from a handler at any moment, static
// initialization and destruction included.
constinit std::array<Slot, kMaxProcesses> g_table{};

std::array<Slot, kMaxProcesses>& Table() { return g_table; }

Slot* Find(pid_t pid) {
  for (Slot& slot : Table()) {
    if (slot.pid.load() == pid) return &slot;
  }
  return nullptr;
}

void Remove(pid_t pid) {
  Slot* slot = Find(pid);
  if (slot == nullptr) return;
  slot->paused.store(false);
  slot->pid.store(0);
}

}  // namespace

bool Add(pid_t pid) {
  assert(pid > 0);
  assert(Find(pid) == nullptr);
  for (Slot& slot : Table()) {
    pid_t expected = 0;
    slot.paused.store(false);
    if (slot.pid.compare_exchange_strong(expected, pid)) return true;
  }
  return false;
}

void SetPaused(pid_t pid, bool paused) {
  Slot* slot = Find(pid);
  assert(slot != nullptr);  // Only registered processes are paused.
  if (slot != nullptr) slot->paused.store(paused);
}

bool Contains(pid_t pid) { return pid > 0 && Find(pid) != nullptr; }

bool IsPaused(pid_t pid) {
  const Slot* slot = pid > 0 ? Find(pid) : nullptr;
  return slot != nullptr && slot->paused.load();
}

std::vector<pid_t> Pids() {
  std::vector<pid_t> pids;
  for (const Slot& slot : Table()) {
    const pid_t pid = slot.pid.load();
    if (pid > 0) pids.push_back(pid);
  }
  return pids;
}

bool ReapIfExited(pid_t pid, int* status) {
  assert(pid > 0);
  if (status != nullptr) *status = 0;
  siginfo_t info{};
  // WNOWAIT leaves the child a zombie, so its pid stays ours until it is off the table.
  int r = 0;
  do {
    r = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
  } while (r < 0 && errno == EINTR);
  if (r < 0) {  // ECHILD: not our child (any more).
    Remove(pid);
    return true;
  }
  if (info.si_pid == 0) return false;  // Still running or stopped.
  Remove(pid);
  int reaped_status = 0;
  while (::waitpid(pid, &reaped_status, 0) < 0 && errno == EINTR) {
  }
  if (status != nullptr) *status = reaped_status;
  return true;
}

void WaitAndReap(pid_t pid, int* status) {
  assert(pid > 0);
  siginfo_t info{};
  int r = 0;
  do {
    r = ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT);
  } while (r < 0 && errno == EINTR);
  const bool reaped = ReapIfExited(pid, status);
  assert(reaped);
  (void)reaped;
}

int KillAllFromSignalHandler() {
  const int saved_errno = errno;
  int signalled = 0;
  for (Slot& slot : Table()) {
    const pid_t pid = slot.pid.load();
    if (pid <= 0) continue;
    ::kill(pid, SIGKILL);
    if (slot.paused.load()) ::kill(pid, SIGCONT);
    ++signalled;
  }
  errno = saved_errno;
  return signalled;
}

namespace {

void KillAndRaise(int sig) {
  KillAllFromSignalHandler();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void InstallKillOnSignal() {
  struct sigaction action {};
  action.sa_handler = KillAndRaise;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

}  // namespace lockstep::process_registry
