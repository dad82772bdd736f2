// The live harness's event loop: one thread, poll(2), timers on CLOCK_MONOTONIC.
//
// Everything the live driver does happens in callbacks of this loop: a socket became readable
// or writable, a timer fired. Nothing blocks inside a callback. Another thread, or a signal
// handler, stops the loop through Wake() (an eventfd write, async-signal-safe) or a flag the
// loop looks at on every iteration.
//
// Timers with the same deadline fire in the order they were armed (ties broken by id), so a
// run's order of work never depends on a heap's internal layout.
#ifndef LOCKSTEP_LIVE_EVENT_LOOP_H_
#define LOCKSTEP_LIVE_EVENT_LOOP_H_

#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <vector>

namespace lockstep::live {

class EventLoop {
 public:
  using TimerId = uint64_t;
  using Callback = std::function<void()>;
  // Called with poll's revents (POLLIN, POLLOUT, POLLERR, POLLHUP).
  using FdCallback = std::function<void(short revents)>;

  static constexpr int64_t kForever = INT64_MAX;

  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // CLOCK_MONOTONIC in microseconds.
  static int64_t NowUs();

  // Watches `fd` (not owned) with the given interest; replaces an earlier Watch of the same fd.
  void Watch(int fd, bool read, bool write, FdCallback on_ready);
  void SetInterest(int fd, bool read, bool write);
  // Stops watching; safe from inside any callback (the fd's callback is not called again).
  void Unwatch(int fd);

  // Runs `cb` once at monotonic time at_us (or at once if that has passed).
  TimerId At(int64_t at_us, Callback cb);
  TimerId After(int64_t delay_us, Callback cb) { return At(NowUs() + delay_us, std::move(cb)); }
  // Returns whether the timer was still armed.
  bool Cancel(TimerId timer);
  size_t timers_armed() const { return timers_.size(); }
  // The most any timer has fired after its due time: how well this run kept to real time (a
  // loaded machine, or a callback that blocked, makes it late).
  int64_t timers_late_max_us() const { return timers_late_max_us_; }

  // Called once at the end of every iteration, after that iteration's fd and timer callbacks:
  // where work that became ready "at the same time" is put in order.
  void SetIterationHook(Callback hook) { iteration_hook_ = std::move(hook); }

  // Runs until Stop(), *stop_flag, or monotonic time deadline_us. Returns true if it ran to
  // the deadline, false if it was stopped.
  bool Run(int64_t deadline_us = kForever);
  void Stop() { stopped_ = true; }
  // Makes a Run() in progress look at its stop flag now. Safe from another thread and from a
  // signal handler.
  void Wake();
  // A flag (set by a signal handler, say) that stops Run() when non-zero.
  void StopWhen(const volatile std::sig_atomic_t* flag) { stop_flag_ = flag; }

 private:
  struct Watched {
    short events = 0;
    uint64_t generation = 0;  // Tells a re-Watch from the watch a poll result belongs to.
    FdCallback on_ready;
  };
  struct Due {
    int64_t at_us;
    TimerId id;
    bool operator>(const Due& o) const { return at_us != o.at_us ? at_us > o.at_us : id > o.id; }
  };

  void RunDueTimers();
  bool ShouldStop() const { return stopped_ || (stop_flag_ != nullptr && *stop_flag_ != 0); }

  int wake_fd_ = -1;
  bool stopped_ = false;
  const volatile std::sig_atomic_t* stop_flag_ = nullptr;
  std::map<int, Watched> fds_;
  uint64_t next_generation_ = 0;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
  std::map<TimerId, Callback> timers_;  // Armed timers; a cancelled one is gone from here.
  TimerId next_timer_ = 0;
  int64_t timers_late_max_us_ = 0;
  Callback iteration_hook_;
};

}  // namespace lockstep::live

#endif  // LOCKSTEP_LIVE_EVENT_LOOP_H_
