// The live event loop: timers fire in deadline order (ties in arming order) and can be
// cancelled, fds call back when ready, and Wake() from another thread stops a run at once.
#include "live/event_loop.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <catch2/catch.hpp>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

namespace lockstep::live {
namespace {

TEST_CASE("EventLoop: timers fire in deadline order, ties in arming order") {
  EventLoop loop;
  std::vector<int> fired;
  const int64_t now = EventLoop::NowUs();
  loop.At(now + 30'000, [&] { fired.push_back(3); });
  loop.At(now + 10'000, [&] { fired.push_back(1); });
  loop.At(now + 20'000, [&] { fired.push_back(2); });
  loop.At(now + 20'000, [&] { fired.push_back(22); });
  const EventLoop::TimerId cancelled = loop.At(now + 15'000, [&] { fired.push_back(-1); });
  CHECK(loop.Cancel(cancelled));
  CHECK_FALSE(loop.Cancel(cancelled));
  loop.At(now + 40'000, [&] { loop.Stop(); });
  CHECK_FALSE(loop.Run(now + 1'000'000));  // Stopped, not at the deadline.
  CHECK(fired == std::vector<int>{1, 2, 22, 3});
  CHECK(EventLoop::NowUs() - now >= 40'000);
}

TEST_CASE("EventLoop: a timer never fires early and Run returns at its deadline") {
  EventLoop loop;
  const int64_t start = EventLoop::NowUs();
  int64_t fired_at = 0;
  loop.After(25'000, [&] { fired_at = EventLoop::NowUs(); });
  CHECK(loop.Run(start + 60'000));
  CHECK(fired_at - start >= 25'000);
  CHECK(EventLoop::NowUs() - start >= 60'000);
  CHECK(loop.timers_armed() == 0);
}

TEST_CASE("EventLoop: a timer armed for now from a timer runs in a later iteration") {
  EventLoop loop;
  std::vector<std::string> order;
  loop.SetIterationHook([&] { order.push_back("hook"); });
  loop.After(0, [&] {
    order.push_back("a");
    loop.After(0, [&] {
      order.push_back("b");
      loop.Stop();
    });
  });
  loop.Run(EventLoop::NowUs() + 1'000'000);
  REQUIRE(order.size() >= 3);
  CHECK(order.front() == "a");
  CHECK(order[1] == "hook");  // The iteration that ran "a" ended before "b" ran.
  CHECK(std::find(order.begin(), order.end(), "b") != order.end());
}

TEST_CASE("EventLoop: an fd calls back when readable, and not after Unwatch") {
  EventLoop loop;
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::string got;
  int calls = 0;
  loop.Watch(fds[0], true, false, [&](short) {
    char buf[16];
    const ssize_t n = ::read(fds[0], buf, sizeof(buf));
    if (n > 0) got.append(buf, static_cast<size_t>(n));
    ++calls;
    loop.Unwatch(fds[0]);
  });
  loop.After(5'000, [&] { REQUIRE(::write(fds[1], "hi", 2) == 2); });
  loop.After(20'000, [&] { REQUIRE(::write(fds[1], "again", 5) == 5); });
  loop.Run(EventLoop::NowUs() + 60'000);
  CHECK(got == "hi");
  CHECK(calls == 1);
  ::close(fds[0]);
  ::close(fds[1]);
}

TEST_CASE("EventLoop: Wake from another thread stops a run through its flag") {
  EventLoop loop;
  static volatile std::sig_atomic_t flag = 0;
  flag = 0;
  loop.StopWhen(&flag);
  const int64_t start = EventLoop::NowUs();
  std::thread other([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    flag = 1;
    loop.Wake();
  });
  const bool to_deadline = loop.Run(start + 10'000'000);
  other.join();
  CHECK_FALSE(to_deadline);
  // Woken at once, not at poll's next timeout (which is up to a second).
  CHECK(EventLoop::NowUs() - start < 500'000);
}

}  // namespace
}  // namespace lockstep::live
