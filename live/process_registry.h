// Every process lockstep started and has not reaped yet (redis-server, redis-sentinel), by pid,
// in one process-wide table. lockstep kills only processes it started, and only by the pid
// fork() returned: never by name, never a process group, never a port's owner.
//
// The table is a fixed array of lock-free atomics, so a SIGINT or SIGTERM handler can walk it
// (KillAllFromSignalHandler) while other threads start and stop servers. A pid leaves the
// table only while its process is a zombie (ReapIfExited, WaitAndReap): a zombie's pid cannot
// be reused, so a handler that runs at any moment never signals a stranger.
#ifndef LOCKSTEP_LIVE_PROCESS_REGISTRY_H_
#define LOCKSTEP_LIVE_PROCESS_REGISTRY_H_

#include <sys/types.h>

#include <vector>

namespace lockstep::process_registry {

// A run starts a few dozen processes at most (5 masters with replicas, 3 sentinels).
inline constexpr int kMaxProcesses = 256;

// Records a child just forked. False when the table is full (the caller must then stop the
// child itself).
bool Add(pid_t pid);
// Marks a registered pid as stopped (SIGSTOP) or running again. Mark it paused BEFORE sending
// SIGSTOP and running AFTER SIGCONT, so the table never claims a stopped process runs.
void SetPaused(pid_t pid, bool paused);
bool Contains(pid_t pid);
bool IsPaused(pid_t pid);
// The registered pids, in table order (not async-signal-safe; for tests and diagnostics).
std::vector<pid_t> Pids();

// If the child `pid` has exited, takes it off the table, reaps it, stores its wait status in
// *status (when not null) and returns true. Returns false while it runs (or is stopped). Also
// true, with status 0, when `pid` is not our child any more (already reaped elsewhere).
bool ReapIfExited(pid_t pid, int* status);
// Blocks until the child `pid` exits, then as ReapIfExited.
void WaitAndReap(pid_t pid, int* status);

// Async-signal-safe: SIGKILL to every registered pid, and SIGCONT to the paused ones (a
// stopped process dies of SIGKILL too; the SIGCONT only makes sure nothing stays stopped).
// Does not reap (the processes become zombies until this process reaps them or exits).
// Returns how many pids were signalled.
int KillAllFromSignalHandler();

// Installs a SIGINT and a SIGTERM handler that call KillAllFromSignalHandler, then restore
// the default action and raise the signal again, so the process ends as the signal says.
// For programs without handlers of their own; a driver that must first flush its history
// calls KillAllFromSignalHandler from its own handler instead.
void InstallKillOnSignal();

}  // namespace lockstep::process_registry

#endif  // LOCKSTEP_LIVE_PROCESS_REGISTRY_H_
