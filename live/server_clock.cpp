#include "live/server_clock.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "live/timeshim/control.h"

namespace lockstep {
namespace {

constexpr int64_t kNsPerUs = 1000;
constexpr int64_t kNsPerSec = 1'000'000'000;
// Offsets, jump sizes and jump times beyond this (about three years) are refused, so that no
// sum of them in nanoseconds can overflow 64 bits.
constexpr int64_t kMaxSpanUs = 100'000'000'000'000;
constexpr size_t kMaxSegments = LOCKSTEP_TIMESHIM_MAX_SEGMENTS;

std::string ErrnoText(const std::string& what) { return what + ": " + std::strerror(errno); }

int64_t PpmToPpb(double drift_ppm) { return std::llround(drift_ppm * 1000.0); }

// The shim's formula (live/timeshim/timeshim.c, wall_from_control), to the nanosecond: the
// harness's view and the server's must not differ by rounding.
int64_t WallNs(int64_t real_ns, int64_t start_real_ns, int64_t offset_ns, int64_t drift_ppb) {
  const __int128 drift_ns = static_cast<__int128>(real_ns - start_real_ns) * drift_ppb / kNsPerSec;
  return real_ns + offset_ns + static_cast<int64_t>(drift_ns);
}

int64_t RealNowNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * kNsPerSec + ts.tv_nsec;
}

template <typename T>
void StoreRelaxed(T& field, T value) {
  std::atomic_ref<T>(field).store(value, std::memory_order_relaxed);
}

}  // namespace

std::string ServerClock::DefaultShimPath() {
  // An installed binary (<prefix>/bin/lockstep) has its shim in <prefix>/lib/lockstep; a
  // build-tree binary uses the one built beside it, wherever the build tree is.
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec && exe.has_parent_path()) {
    const std::filesystem::path installed = exe.parent_path().parent_path() / "lib" / "lockstep" /
                                            std::filesystem::path(LOCKSTEP_TIMESHIM_PATH).filename();
    if (std::filesystem::is_regular_file(installed, ec)) return installed.string();
  }
  return LOCKSTEP_TIMESHIM_PATH;
}

int64_t ServerClock::RealNowUs() { return RealNowNs() / kNsPerUs; }

std::unique_ptr<ServerClock> ServerClock::Create(const std::string& dir, std::string* error,
                                                 const std::string& shim_path) {
  assert(error != nullptr);
  if (::access(shim_path.c_str(), R_OK) != 0) {
    *error = ErrnoText("time shim " + shim_path);
    return nullptr;
  }
  std::unique_ptr<ServerClock> clock(new ServerClock());
  clock->path_ = dir + "/timeshim.control";
  clock->shim_path_ = shim_path;
  clock->segments_ = {{RealNowNs(), 0, 0}};

  // Written whole under a temporary name and renamed into place: a server that looks for the
  // file meanwhile finds either nothing or a complete one.
  lockstep_timeshim_control initial{};
  initial.magic = LOCKSTEP_TIMESHIM_MAGIC;
  initial.size = sizeof(lockstep_timeshim_control);
  initial.segment_count = 1;
  initial.segments[0] = {clock->segments_[0].start_real_ns, 0, 0};
  const std::string temp = clock->path_ + ".tmp";
  const int out = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    *error = ErrnoText("create " + temp);
    return nullptr;
  }
  const bool written = ::write(out, &initial, sizeof(initial)) == sizeof(initial);
  const int write_errno = errno;
  ::close(out);
  if (!written || ::rename(temp.c_str(), clock->path_.c_str()) != 0) {
    if (!written) errno = write_errno;
    *error = ErrnoText("write " + clock->path_);
    ::unlink(temp.c_str());
    return nullptr;
  }

  const int fd = ::open(clock->path_.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    *error = ErrnoText("open " + clock->path_);
    return nullptr;
  }
  void* mem = ::mmap(nullptr, sizeof(lockstep_timeshim_control), PROT_READ | PROT_WRITE,
                     MAP_SHARED, fd, 0);
  const int mmap_errno = errno;
  ::close(fd);
  if (mem == MAP_FAILED) {
    errno = mmap_errno;
    *error = ErrnoText("mmap " + clock->path_);
    return nullptr;
  }
  clock->control_ = static_cast<lockstep_timeshim_control*>(mem);
  return clock;
}

ServerClock::~ServerClock() {
  if (control_ != nullptr) ::munmap(control_, sizeof(lockstep_timeshim_control));
  if (!path_.empty()) ::unlink(path_.c_str());
}

std::vector<std::pair<std::string, std::string>> ServerClock::Env() const {
  std::string preload = shim_path_;
  // The shim goes first, so that its clock functions are the ones a server calls.
  if (const char* existing = std::getenv("LD_PRELOAD"); existing != nullptr && *existing != '\0') {
    preload += std::string(":") + existing;
  }
  return {{"LD_PRELOAD", preload}, {LOCKSTEP_TIMESHIM_ENV, path_}};
}

std::string ServerClock::Check(const ClockSpec& spec) {
  if (!std::isfinite(spec.drift_ppm) || spec.drift_ppm <= -1e6) {
    return "a node clock's drift_ppm must be a number above -1000000 (got " +
           std::to_string(spec.drift_ppm) + ")";
  }
  if (spec.ntp && (!std::isfinite(spec.slew_ppm) || spec.slew_ppm <= 0 ||
                   spec.drift_ppm - spec.slew_ppm <= -1e6)) {
    return "a node clock's slew_ppm must be above 0, and drift_ppm - slew_ppm above -1000000";
  }
  if (std::abs(spec.offset_us) > kMaxSpanUs) {
    return "a node clock's offset_us must be within +-" + std::to_string(kMaxSpanUs);
  }
  // Every jump starts a segment, and with NTP a second one where its slewing ends.
  const size_t max_jumps = spec.ntp ? kMaxSegments / 2 - 1 : kMaxSegments - 1;
  if (spec.jumps.size() > max_jumps) {
    return "a live node clock takes at most " + std::to_string(max_jumps) + " jumps" +
           (spec.ntp ? " with ntp" : "") + " (got " + std::to_string(spec.jumps.size()) + ")";
  }
  for (const ClockSpec::Jump& jump : spec.jumps) {
    if (std::abs(jump.at_us) > kMaxSpanUs || std::abs(jump.by_us) > kMaxSpanUs) {
      return "a node clock jump's at_us and by_us must be within +-" + std::to_string(kMaxSpanUs);
    }
  }
  return {};
}

bool ServerClock::Apply(const ClockSpec& spec, int64_t zero_real_us, std::string* error) {
  assert(error != nullptr);
  if (std::string why = Check(spec); !why.empty()) {
    *error = why;
    return false;
  }
  std::vector<ClockSpec::Jump> jumps = spec.jumps;
  std::stable_sort(jumps.begin(), jumps.end(),
                   [](const ClockSpec::Jump& a, const ClockSpec::Jump& b) { return a.at_us < b.at_us; });
  const int64_t drift_ppb = PpmToPpb(spec.drift_ppm);
  const int64_t slew_ppb = spec.ntp ? PpmToPpb(spec.slew_ppm) : 0;
  const int64_t zero_ns = zero_real_us * kNsPerUs;

  // The walk of base/clock.h Clock's constructor, over real time: "excess" is how far the wall clock
  // is from where the drift alone would have put it (the offset, then each jump), and with NTP
  // it is slewed back to 0 at slew_ppb. Offsets are relative to real time, so a segment
  // starting t ns after true time 0 has offset t * drift + excess.
  auto drift_ns = [&](int64_t t_ns) {
    return static_cast<int64_t>(static_cast<__int128>(t_ns) * drift_ppb / kNsPerSec);
  };
  std::vector<Segment> segments;
  auto add = [&](int64_t t_ns, int64_t offset_ns, int64_t ppb) {
    // Segments that start at the same instant: the last one (it includes the jump) wins.
    if (!segments.empty() && segments.back().start_real_ns == zero_ns + t_ns) segments.pop_back();
    segments.push_back({zero_ns + t_ns, offset_ns, ppb});
  };
  int64_t excess_ns = spec.offset_us * kNsPerUs;
  int64_t t_ns = 0;
  size_t next_jump = 0;
  // Jumps at or before true time 0 are part of the initial offset.
  while (next_jump < jumps.size() && jumps[next_jump].at_us <= 0) {
    excess_ns += jumps[next_jump++].by_us * kNsPerUs;
  }
  while (true) {
    const int64_t until_ns =
        next_jump < jumps.size() ? jumps[next_jump].at_us * kNsPerUs : INT64_MAX;
    if (slew_ppb > 0 && excess_ns != 0) {
      const int64_t sign = excess_ns > 0 ? 1 : -1;
      add(t_ns, drift_ns(t_ns) + excess_ns, drift_ppb - sign * slew_ppb);
      // Rounded up: the slewing segment never stops short of taking the whole excess away.
      const __int128 slew_duration_ns =
          (static_cast<__int128>(excess_ns * sign) * kNsPerSec + slew_ppb - 1) / slew_ppb;
      if (t_ns + slew_duration_ns < until_ns) {
        const int64_t end_ns = t_ns + static_cast<int64_t>(slew_duration_ns);
        excess_ns = 0;
        add(end_ns, drift_ns(end_ns), drift_ppb);
      } else {
        excess_ns -= sign * static_cast<int64_t>(static_cast<__int128>(slew_ppb) *
                                                 (until_ns - t_ns) / kNsPerSec);
      }
    } else {
      add(t_ns, drift_ns(t_ns) + excess_ns, drift_ppb);
    }
    if (until_ns == INT64_MAX) break;
    t_ns = until_ns;
    // Every jump scheduled at this instant applies at once.
    while (next_jump < jumps.size() && jumps[next_jump].at_us * kNsPerUs == t_ns) {
      excess_ns += jumps[next_jump++].by_us * kNsPerUs;
    }
  }
  assert(!segments.empty() && segments.size() <= kMaxSegments);
  assert(segments.front().start_real_ns == zero_ns);

  std::lock_guard<std::mutex> lock(mu_);
  segments_ = std::move(segments);
  Publish();
  return true;
}

void ServerClock::SetOffset(int64_t offset_us) {
  std::lock_guard<std::mutex> lock(mu_);
  Restart(offset_us * kNsPerUs, SegmentAt(RealNowNs()).drift_ppb);
}

void ServerClock::Jump(int64_t by_us) {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now_ns = RealNowNs();
  Restart(WallNsAt(now_ns) - now_ns + by_us * kNsPerUs, SegmentAt(now_ns).drift_ppb);
}

void ServerClock::SetDriftPpm(double drift_ppm) {
  assert(std::isfinite(drift_ppm) && drift_ppm > -1e6);
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now_ns = RealNowNs();
  Restart(WallNsAt(now_ns) - now_ns, PpmToPpb(drift_ppm));
}

int64_t ServerClock::WallUsAt(int64_t real_us) const {
  std::lock_guard<std::mutex> lock(mu_);
  return WallNsAt(real_us * kNsPerUs) / kNsPerUs;
}

int64_t ServerClock::OffsetUsNow() const {
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now_ns = RealNowNs();
  return (WallNsAt(now_ns) - now_ns) / kNsPerUs;
}

uint64_t ServerClock::attached_processes() const {
  return std::atomic_ref<uint64_t>(control_->attached).load(std::memory_order_relaxed);
}

const ServerClock::Segment& ServerClock::SegmentAt(int64_t real_ns) const {
  assert(!segments_.empty());
  // The last segment that has started; the first one also covers earlier times (as the shim).
  auto it = std::upper_bound(segments_.begin() + 1, segments_.end(), real_ns,
                             [](int64_t t, const Segment& s) { return t < s.start_real_ns; });
  return *std::prev(it);
}

int64_t ServerClock::WallNsAt(int64_t real_ns) const {
  const Segment& s = SegmentAt(real_ns);
  return WallNs(real_ns, s.start_real_ns, s.offset_ns, s.drift_ppb);
}

void ServerClock::Restart(int64_t offset_ns, int64_t drift_ppb) {
  segments_ = {{RealNowNs(), offset_ns, drift_ppb}};
  Publish();
}

void ServerClock::Publish() {
  assert(!segments_.empty() && segments_.size() <= kMaxSegments);
  assert(std::is_sorted(segments_.begin(), segments_.end(), [](const Segment& a, const Segment& b) {
    return a.start_real_ns < b.start_real_ns;
  }));
  // The sequence lock's writer side (readers: timeshim.c): odd while the segments change.
  std::atomic_ref<uint64_t> seq(control_->seq);
  const uint64_t before = seq.load(std::memory_order_relaxed);
  assert(before % 2 == 0);
  seq.store(before + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  for (size_t i = 0; i < segments_.size(); ++i) {
    lockstep_timeshim_segment& out = control_->segments[i];
    StoreRelaxed(out.start_real_ns, segments_[i].start_real_ns);
    StoreRelaxed(out.offset_ns, segments_[i].offset_ns);
    StoreRelaxed(out.drift_ppb, segments_[i].drift_ppb);
  }
  StoreRelaxed<uint64_t>(control_->segment_count, segments_.size());
  seq.store(before + 2, std::memory_order_release);
}

}  // namespace lockstep
