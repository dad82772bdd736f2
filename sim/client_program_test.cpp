// The client kind in the simulator: a client program's runs are deterministic, a program written
// as the built-in setnx-px client writes its history event for event, and a hostile program
// ends the run with its reason instead of hanging or crashing.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "check/check.h"
#include "history/history.h"
#include "history/jsonl.h"
#include "model/scenario.h"
#include "model/scenario_toml.h"
#include "sim/simulation.h"

namespace {

namespace fs = std::filesystem;
using lockstep::Scenario;
using lockstep::history::History;

const lockstep::history::ProtocolKind& KindNamed(std::string_view name) {
  const lockstep::history::ProtocolKind* k = lockstep::history::FindProtocolKind(name);
  REQUIRE(k != nullptr);
  return *k;
}

Scenario Load(const std::string& relative) {
  lockstep::ScenarioError error;
  const std::optional<Scenario> s =
      lockstep::LoadScenarioFile(std::string(LOCKSTEP_SOURCE_DIR) + "/" + relative, &error);
  INFO(relative << ": " << error.ToString());
  REQUIRE(s.has_value());
  return *s;
}

// The same scenario with its client written as a program.
Scenario AsProgram(Scenario s, const std::string& client) {
  s.protocol.kind = &KindNamed("client");
  s.protocol.client = client;
  return s;
}

struct Run {
  std::unique_ptr<lockstep::sim::Simulation> sim;
  std::unique_ptr<History> history;
  std::vector<std::string> lines;  // The history's JSON lines.
  lockstep::check::Verdict verdict;
};

std::unique_ptr<Run> RunOf(const Scenario& s) {
  std::string error;
  auto run = std::make_unique<Run>();
  run->sim = lockstep::sim::Simulation::Create(s, LOCKSTEP_SOURCE_DIR "/lua", &error);
  INFO(error);
  REQUIRE(run->sim != nullptr);
  run->history = std::make_unique<History>(run->sim->recorder().shared_names());
  run->sim->recorder().AddSink(run->history.get());
  run->sim->Run();
  for (const lockstep::history::Event& e : run->history->events()) {
    std::string line;
    lockstep::history::AppendJsonLine(e, run->history->names(), &line);
    run->lines.push_back(std::move(line));
  }
  run->verdict = lockstep::check::CheckHistory(*run->history, lockstep::check::CheckOptions{});
  return run;
}

// A program in a folder of its own under the test's temporary directory.
std::string WriteProgram(const std::string& name, const std::string& body) {
  const fs::path dir = fs::temp_directory_path() / "lockstep-client-program-test" / name;
  fs::create_directories(dir);
  std::ofstream(dir / "client.lua") << body;
  return (dir / "client.lua").string();
}

}  // namespace

TEST_CASE("client programs written as the plain kinds' clients write their histories",
          "[sim][client]") {
  // Every scenario of the library and the fixtures that runs a plain kind, with its own
  // faults, run by the built-in client and by lua/clients/<kind>/.
  const char* files[] = {
      "property-tests/fuzz-bases/setnx-px.toml",
      "scenarios/testdata/broken-scripts/setnx-px/broken.toml",
      "scenarios/testdata/broken-scripts/setnx-px-global/broken.toml",
      "property-tests/fuzz-bases/setnx-expire.toml",
      "scenarios/testdata/broken-scripts/setnx-expire/broken.toml",
      "scenarios/setnx-expire-crash.toml",
      "scenarios/setnx-expire-lost-reply.toml",
      "property-tests/fuzz-bases/get-del.toml",
      "scenarios/get-del-race.toml",
  };
  for (const char* file : files) {
    for (const char* mode : {"as written", "lock", "trylock without a wait"}) {
      Scenario builtin = Load(file);
      const std::string kind = builtin.protocol.kind_name();
      REQUIRE((kind == "setnx-px" || kind == "setnx-expire" || kind == "get-del"));
      if (std::string(mode) == "lock") builtin.workload.mode = lockstep::WorkloadSpec::Mode::kLock;
      if (std::string(mode) == "trylock without a wait") {
        builtin.workload.mode = lockstep::WorkloadSpec::Mode::kTryLock;
        builtin.workload.wait_us = 0;
      }
      INFO(file << " (" << mode << ")");
      const auto a = RunOf(builtin);
      const auto b = RunOf(AsProgram(builtin, kind));
      REQUIRE(a->lines.size() == b->lines.size());
      size_t notes_differing = 0;
      for (size_t i = 0; i < a->lines.size(); ++i) {
        if (a->lines[i] == b->lines[i]) continue;
        // Only the protocol note: its kind, and the program's declarations.
        CHECK(a->lines[i].find("\"op\":\"protocol\"") != std::string::npos);
        CHECK(b->lines[i].find("kind=client") != std::string::npos);
        CHECK(b->lines[i].find("layout=string-token unlock=compare-and-delete") != std::string::npos);
        ++notes_differing;
      }
      CHECK(notes_differing == 1);
      // The same verdict, violation for violation.
      REQUIRE(a->verdict.results.size() == b->verdict.results.size());
      for (size_t p = 0; p < a->verdict.results.size(); ++p) {
        const auto& ra = a->verdict.results[p];
        const auto& rb = b->verdict.results[p];
        INFO(ra.property);
        CHECK(ra.violated == rb.violated);
        CHECK(ra.violation_count == rb.violation_count);
        REQUIRE(ra.violations.size() == rb.violations.size());
        for (size_t v = 0; v < ra.violations.size(); ++v) {
          CHECK(ra.violations[v].explanation == rb.violations[v].explanation);
        }
      }
    }
  }
}

TEST_CASE("a client program's run is deterministic", "[sim][client][determinism]") {
  // Randomness and a background task: the tokens come from the process's PRNG, and a task
  // spawned by each acquisition sleeps a random time.
  const std::string program = WriteProgram("random", R"lua(
local key = lockstep.config.lock_name
local lock = {layout = "string-token"}
local seen = {}
function lock.acquire(op)
  seen[lockstep.random_hex(4)] = true
  lockstep.spawn(function() lockstep.sleep(lockstep.random(1000, 9000)) end)
  while true do
    local r = lockstep.call(0, {"SET", key, op.token, "NX", "PX", 500})
    if r == nil then return "unknown", "timeout" end
    if type(r) == "table" and r.ok then
      local n = 0
      for k, v in pairs(seen) do n = n + 1 end
      return "ok", "acquired (" .. n .. " draws)"
    end
    lockstep.sleep(lockstep.random(10000, 50000))
  end
end
function lock.release(op)
  local r = lockstep.eval(0, "unlock", {key}, {op.token})
  if r == 1 then return "ok", "released", 1 end
  return "fail", "not released"
end
return lock
)lua");
  std::ofstream(fs::path(program).parent_path() / "unlock.lua")
      << "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end\n"
         "return 0\n";
  Scenario s = AsProgram(Load("property-tests/fuzz-bases/setnx-px.toml"), program);
  s.duration_us = 20'000'000;
  const auto a = RunOf(s);
  const auto b = RunOf(s);
  REQUIRE(a->lines.size() > 50);
  CHECK(a->history->HashHex() == b->history->HashHex());
  CHECK(a->lines == b->lines);
  s.seed += 1;
  const auto c = RunOf(s);
  CHECK(c->history->HashHex() != a->history->HashHex());
}

TEST_CASE("a hostile client program ends the run with its reason", "[sim][client][hostile]") {
  Scenario base = Load("property-tests/fuzz-bases/setnx-px.toml");
  base.duration_us = 5'000'000;
  struct Case {
    const char* name;
    const char* acquire;  // The body of lock.acquire(op).
    const char* reason;   // In the run's stop message.
  };
  const Case cases[] = {
      {"loop", "while true do end", "without waiting"},
      {"pcall-loop", "while true do pcall(function() while true do end end) end", "without waiting"},
      {"recursion", "local function f(n) return f(n + 1) + 1 end return f(1)", "stack overflow"},
      {"memory", "local t = {} for i = 1, 1e9 do t[i] = string.rep('x', 1000) .. i end",
       "memory cap"},
      {"error", "error('the lock is broken')", "the lock is broken"},
      {"bad-node", "return lockstep.call(7, {'PING'})", "node 7 is out of range"},
      {"bad-arg", "return lockstep.call(0, {'SET', {}})", "argv[2] is a table"},
      {"bad-result", "return 42", "must return"},
      {"no-script", "return lockstep.eval(0, 'nope', {}, {})", "no script named 'nope'"},
      {"pattern", "return string.find('aaa', 'a-a-b')", "patterns are not available"},
      {"holder-comma", "lockstep.holder_value('a,b')", "no spaces, commas"},
      {"holder-empty", "lockstep.holder_value('')", "a value of 1 to 256 bytes"},
      {"holder-storm", "for i = 1, 1e9 do lockstep.holder_value('v' .. i) end", "more than 16 values"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const std::string program = WriteProgram(
        std::string("hostile-") + c.name,
        std::string("local lock = {layout = 'string-token'}\nfunction lock.acquire(op)\n") +
            c.acquire + "\nend\nfunction lock.release(op) return 'ok' end\nreturn lock\n");
    const auto run = RunOf(AsProgram(base, program));
    INFO(run->sim->stalled());
    CHECK(run->sim->stalled().find("program failed") != std::string::npos);
    CHECK(run->sim->stalled().find(c.reason) != std::string::npos);
    CHECK(run->sim->end_us() < base.duration_us);
  }
}

TEST_CASE("a client program that cannot be run is refused before the run", "[sim][client]") {
  Scenario base = Load("property-tests/fuzz-bases/setnx-px.toml");
  struct Case {
    const char* name;
    const char* body;
    const char* message;
  };
  const Case cases[] = {
      {"syntax", "local lock = {", "unexpected symbol"},
      {"no-table", "return 1", "must return a table"},
      {"no-release",
       "return {layout = 'string-token', acquire = function() return 'ok' end}",
       "no function 'release'"},
      {"no-layout", "return {acquire = function() end, release = function() end}",
       "must declare the lock key's layout"},
      {"odd-layout",
       "return {layout = 'zset', acquire = function() end, release = function() end}",
       "is not one lockstep follows"},
      {"odd-unlock",
       "return {layout = 'string-token', unlock_reply = 'maybe', acquire = function() end, "
       "release = function() end}",
       "is not one lockstep knows"},
      {"odd-quorum",
       "return {layout = 'string-token', quorum = 'most', acquire = function() end, "
       "release = function() end}",
       "quorum = \"most\" is not one lockstep knows"},
      {"odd-owner",
       "return {layout = 'string-token', owner = 'host', acquire = function() end, "
       "release = function() end}",
       "owner = \"host\" is not one lockstep knows"},
      {"top-loop", "while true do end", "without waiting"},
      {"top-call", "lockstep.call(0, {'PING'}) return {}", "only be called from an operation"},
      {"io", "io.write('x') return {}", "io"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const std::string program = WriteProgram(std::string("refused-") + c.name, c.body);
    std::string error;
    const auto sim = lockstep::sim::Simulation::Create(AsProgram(base, program),
                                                       LOCKSTEP_SOURCE_DIR "/lua", &error);
    CHECK(sim == nullptr);
    INFO(error);
    CHECK(error.find(c.message) != std::string::npos);
    CHECK(error.find("client.lua") != std::string::npos);
  }
}

TEST_CASE("a client program's transactions and blocking pops have a connection per thread",
          "[sim][client][session]") {
  // The lock of libraries that take it optimistically: WATCH the key, GET it, and if it is free
  // SET it in MULTI..EXEC, which a change since WATCH aborts (a null reply); a waiter blocks in
  // BLPOP on a signal list that the release pushes to, for at most 200 ms. Two threads a
  // process, so that each thread's transaction and wait must stay on a connection of its own.
  const std::string program = WriteProgram("sessions", R"lua(
local key = lockstep.config.lock_name
local signal = key .. ":signal"
local lock = {layout = "string-token", unlock_reply = "compare-and-delete"}
local function call(argv, label)
  local r = lockstep.call(0, argv, {label = label})
  if r == nil then error("no reply to " .. label) end
  if type(r) == "table" and r.err then error(label .. ": " .. r.err) end
  return r
end
function lock.acquire(op)
  local start = lockstep.now_us()
  while true do
    assert(call({"WATCH", key}, "watch").ok == "OK")
    if call({"GET", key}, "get") == false then
      assert(call({"MULTI"}, "multi").ok == "OK")
      assert(call({"SET", key, op.token, "PX", 2000}, "set").ok == "QUEUED")
      local done = call({"EXEC"}, "exec")
      if done ~= false then
        assert(#done == 1 and done[1].ok == "OK")
        return "ok", "acquired"
      end
    else
      call({"UNWATCH"}, "unwatch")
    end
    if lockstep.now_us() - start > op.wait_us then return "fail", "wait time elapsed" end
    local woken = call({"BLPOP", signal, "0.2"}, "blpop")
    assert(woken == false or (woken[1] == signal and woken[2] == "1"))
  end
end
function lock.release(op)
  call({"WATCH", key}, "watch")
  if call({"GET", key}, "get") ~= op.token then
    call({"UNWATCH"}, "unwatch")
    return "fail", "not the holder"
  end
  call({"MULTI"}, "multi")
  call({"RPUSH", signal, "1"}, "signal")
  -- Last: the history records the queued commands' execs at EXEC, with their replies, and the
  -- checkers judge the unlock by its reply and the lease event right after it.
  call({"DEL", key}, "unlock")
  local done = call({"EXEC"}, "exec")
  if done == false then return "fail", "changed since WATCH" end
  return "ok", "released", done[2]
end
return lock
)lua");
  Scenario s = AsProgram(Load("property-tests/fuzz-bases/setnx-px.toml"), program);
  s.duration_us = 20'000'000;
  for (auto& c : s.clients) c.threads = 2;
  const auto run = RunOf(s);
  INFO(run->sim->stalled());
  REQUIRE(run->sim->stalled().empty());
  auto count = [&](const std::string& a, const std::string& b) {
    size_t n = 0;
    for (const std::string& line : run->lines) {
      if (line.find(a) != std::string::npos && line.find(b) != std::string::npos) ++n;
    }
    return n;
  };
  const std::string exec = "\"type\":\"exec\"";
  // Transactions ran, and some were aborted by a change of a watched key.
  CHECK(count(exec, "\"op\":\"exec\"") > 20);
  CHECK(count(exec, "\"op\":\"set\"") > 20);
  // A queued command's exec is recorded when EXEC runs it, with its reply, never +QUEUED.
  CHECK(count(exec, "+QUEUED") == 0);
  CHECK(count(exec, "\"op\":\"unlock\"") > 20);
  CHECK(count("\"op\":\"exec\"", "(nil array)") > 5);
  // Waiters were served by a release's push, and others timed out after 200 ms.
  const size_t blpops = count(exec, "\"op\":\"blpop\"");
  const size_t served = count("\"op\":\"blpop\"", "lock:signal");
  CHECK(served > 5);
  CHECK(blpops > served);
  for (const auto& result : run->verdict.results) {
    INFO(result.property << (result.violations.empty() ? "" : ": " + result.violations[0].explanation));
    CHECK(!result.violated);
  }
  CHECK(run->verdict.warnings.empty());
  // The same seed, the same bytes.
  CHECK(RunOf(s)->lines == run->lines);
}
