#include "live/event_loop.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace lockstep::live {

EventLoop::EventLoop() {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
}

EventLoop::~EventLoop() {
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

int64_t EventLoop::NowUs() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000 + ts.tv_nsec / 1000;
}

void EventLoop::Watch(int fd, bool read, bool write, FdCallback on_ready) {
  assert(fd >= 0 && fd != wake_fd_);
  Watched& w = fds_[fd];
  w.events = static_cast<short>((read ? POLLIN : 0) | (write ? POLLOUT : 0));
  w.generation = ++next_generation_;
  w.on_ready = std::move(on_ready);
}

void EventLoop::SetInterest(int fd, bool read, bool write) {
  auto it = fds_.find(fd);
  assert(it != fds_.end());
  it->second.events = static_cast<short>((read ? POLLIN : 0) | (write ? POLLOUT : 0));
}

void EventLoop::Unwatch(int fd) { fds_.erase(fd); }

EventLoop::TimerId EventLoop::At(int64_t at_us, Callback cb) {
  const TimerId id = ++next_timer_;
  timers_.emplace(id, std::move(cb));
  due_.push(Due{at_us, id});
  return id;
}

bool EventLoop::Cancel(TimerId timer) { return timers_.erase(timer) > 0; }

void EventLoop::Wake() {
  const uint64_t one = 1;
  // A full counter (never in practice) still leaves the fd readable, which is all we need.
  [[maybe_unused]] const ssize_t n = ::write(wake_fd_, &one, sizeof(one));
}

void EventLoop::RunDueTimers() {
  const int64_t now = NowUs();
  // Only timers due now: one armed by a callback for "now" runs in the next iteration, after
  // the fds have had their turn, so a zero-delay timer loop cannot starve the sockets.
  std::vector<TimerId> ready;
  while (!due_.empty() && due_.top().at_us <= now) {
    timers_late_max_us_ = std::max(timers_late_max_us_, now - due_.top().at_us);
    ready.push_back(due_.top().id);
    due_.pop();
  }
  for (TimerId id : ready) {
    auto it = timers_.find(id);
    if (it == timers_.end()) continue;  // Cancelled, possibly by an earlier timer here.
    Callback cb = std::move(it->second);
    timers_.erase(it);
    cb();
    if (ShouldStop()) return;
  }
}

bool EventLoop::Run(int64_t deadline_us) {
  stopped_ = false;
  std::vector<pollfd> polled;
  std::vector<uint64_t> generations;
  while (!ShouldStop()) {
    const int64_t now = NowUs();
    if (now >= deadline_us) return true;
    // Drop cancelled timers from the top so that they do not shorten the wait.
    while (!due_.empty() && timers_.count(due_.top().id) == 0) due_.pop();
    int64_t wait_us = deadline_us - now;
    if (!due_.empty()) wait_us = std::min(wait_us, std::max<int64_t>(0, due_.top().at_us - now));
    // Round up so that we never wake before the timer is due and spin.
    const int timeout_ms = static_cast<int>(std::min<int64_t>((wait_us + 999) / 1000, 1000));

    polled.clear();
    generations.clear();
    polled.push_back(pollfd{wake_fd_, POLLIN, 0});
    generations.push_back(0);
    for (const auto& [fd, w] : fds_) {
      polled.push_back(pollfd{fd, w.events, 0});
      generations.push_back(w.generation);
    }
    const int n = ::poll(polled.data(), polled.size(), timeout_ms);
    if (n < 0 && errno != EINTR) {
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    if (n > 0) {
      if (polled[0].revents != 0) {
        uint64_t count = 0;
        [[maybe_unused]] const ssize_t r = ::read(wake_fd_, &count, sizeof(count));
      }
      for (size_t i = 1; i < polled.size() && !ShouldStop(); ++i) {
        if (polled[i].revents == 0) continue;
        auto it = fds_.find(polled[i].fd);
        // Unwatched, or watched anew, by an earlier callback of this iteration.
        if (it == fds_.end() || it->second.generation != generations[i]) continue;
        FdCallback cb = it->second.on_ready;  // A copy: the callback may Unwatch itself.
        cb(polled[i].revents);
      }
    }
    if (!ShouldStop()) RunDueTimers();
    if (iteration_hook_) iteration_hook_();
  }
  return false;
}

}  // namespace lockstep::live
