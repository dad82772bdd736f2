// What the benchmarks share: the floor a simulated run is measured against. A run's script
// executions are counted (ScriptCount, a sink on its recorder); the floor is the same number of
// executions of the scenario version's RLock acquire and unlock scripts alone on a fresh
// emulator (Floor): what the run would cost if the simulator around the scripts cost nothing.
#ifndef LOCKSTEP_BENCH_SCRIPT_FLOOR_H_
#define LOCKSTEP_BENCH_SCRIPT_FLOOR_H_

#include <chrono>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "core/server.h"
#include "history/event.h"
#include "history/names.h"

namespace lockstep::bench {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Counts the script executions of a run: exec events other than the pub/sub commands.
class ScriptCount : public history::EventSink {
 public:
  void OnEvent(const history::Event& e) override {
    if (e.type != history::EventType::kExec) return;
    if (e.op == subscribe_ || e.op == unsubscribe_) return;
    ++scripts_;
  }
  void Name(history::NameTable& names) {
    subscribe_ = names.Intern("subscribe");
    unsubscribe_ = names.Intern("unsubscribe");
  }
  uint64_t scripts() const { return scripts_; }

 private:
  history::Name subscribe_ = 0, unsubscribe_ = 0;
  uint64_t scripts_ = 0;
};

// The floor: `scripts` executions of the scenario version's RLock acquire and unlock scripts,
// alternating on one lock, on a fresh emulator.
inline double Floor(const std::string& lua_dir, const std::string& version, uint64_t scripts) {
  const std::string acquire = ReadFile(lua_dir + "/rlock/" + version + "/acquire.lua");
  const std::string unlock = ReadFile(lua_dir + "/rlock/" + version + "/unlock.lua");
  Server emu;
  const std::string acquire_sha = emu.Execute({"SCRIPT", "LOAD", acquire}, 0).str;
  const std::string unlock_sha = emu.Execute({"SCRIPT", "LOAD", unlock}, 0).str;
  const bool current = version == "current";
  const Argv acquire_argv = {"EVALSHA", acquire_sha, "1", "lock", "30000", "uuid-1:1"};
  Argv unlock_argv =
      current ? Argv{"EVALSHA", unlock_sha, "3", "lock", "redisson_lock__channel:{lock}",
                     "redisson_unlock_latch:{lock}:0", "0", "30000", "uuid-1:1", "publish", "13500"}
              : Argv{"EVALSHA", unlock_sha, "2", "lock", "redisson_lock__channel:{lock}", "0", "30000",
                     "uuid-1:1"};
  const int64_t now_ms = 1'767'225'600'000;
  const auto start = std::chrono::steady_clock::now();
  for (uint64_t i = 0; i < scripts; i += 2) {
    // Today's unlock keeps a latch per request: each needs its own id to release anything.
    if (current) unlock_argv[5] = "redisson_unlock_latch:{lock}:" + std::to_string(i);
    emu.Execute(acquire_argv, now_ms);
    emu.Execute(unlock_argv, now_ms);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace lockstep::bench

#endif  // LOCKSTEP_BENCH_SCRIPT_FLOOR_H_
