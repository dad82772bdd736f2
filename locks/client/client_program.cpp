// The `client` protocol kind: a Lua program's operations as coroutines, each wait of theirs an
// Outbox request or timer (client_program.h has the program's view).
//
// One Lua state per client process. Every operation and background task is a coroutine with a
// Task here; a task waits for exactly one thing at a time: one reply (call, eval, evalsha), all
// of several (call_all) or a timer (sleep). The Outbox's request and timer ids lead back to
// their task. Completions are gathered and handed to the Outbox when the entry point is done,
// so that a driver that starts the thread's next operation from Complete never re-enters a
// coroutine that is still running.
#include "locks/client/client_program.h"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include <lua.hpp>

#include "core/lua_libs.h"
#include "core/script_budget.h"
#include "core/script_host.h"

namespace lockstep::locks {
namespace {

constexpr int kThreadsMax = 1 << 16;
constexpr int kHookInterval = 1000;
constexpr int kReplyDepthMax = 64;  // Nesting of an array reply converted to Lua.
constexpr size_t kArgvMax = 1 << 20;  // Arguments in one command a program builds.
constexpr size_t kHolderValueMax = 256;  // Bytes of a holder value (lockstep.holder_value).
// holder_value calls one operation or task may make: each is an event in the history, and an
// acquisition announces one value.
constexpr int kHolderValuesPerTask = 16;
// The longest sleep or response timeout a program gets (about 35 years): a longer one waits as
// long, past any run's end, without overflowing a clock that adds it.
constexpr int64_t kDelayMaxUs = int64_t{1} << 50;
constexpr const char* kTimeoutKey = "timeout";  // lockstep.timeout: call_all's "no reply".
constexpr const char* kBatchMeta = "lockstep.batch";  // send_all's batches' metatable.

struct Pending {
  RequestId request = 0;
  TimerId timer = 0;
  int node = 0;
  int64_t timeout_us = 0;
  std::string label;
  SharedArgv eval_fallback;  // evalsha: the EVAL to send if the server answers NOSCRIPT.
  bool done = false;
  bool timed_out = false;
  Reply reply;
};

struct Task {
  enum class Wait : uint8_t { kNone, kCalls, kSleep, kNext };
  int ref = LUA_NOREF;  // The coroutine, in the registry.
  lua_State* co = nullptr;
  int thread = -1;      // Its sends are this thread's (an operation's, or its spawner's).
  bool is_op = false;   // An operation (its return ends the thread's operation).
  Wait wait = Wait::kNone;
  bool all = false;     // call_all: resume with a table when every call is done.
  // send_all: the calls are a batch whose replies batch:next() hands over one at a time, in
  // the order they came (`ready`: settled, not handed over yet).
  bool stream = false;
  uint64_t batch = 0;
  std::deque<size_t> ready;
  std::vector<Pending> calls;
  size_t outstanding = 0;
  TimerId sleep_timer = 0;
  int holder_values = 0;  // lockstep.holder_value calls so far (kHolderValuesPerTask at most).
};

class ClientProgram;
ClientProgram* HostOf(lua_State* L) { return *static_cast<ClientProgram**>(lua_getextraspace(L)); }

class ClientProgram final : public LockProtocol {
 public:
  ClientProgram(const ClientConfig& config, const ScriptSet& scripts,
                const ClientProgramLimits& limits)
      : config_(config), scripts_(scripts), limits_(limits) {
    // The VM's charges for work on long strings (core/script_budget.h) reach this budget too.
    static const bool registered = [] {
      ScriptBudget::RegisterForeignHost(&ClientProgram::Alloc, &ClientProgram::ForeignCharge);
      return true;
    }();
    (void)registered;
  }

  ~ClientProgram() override { CloseState(); }

  // Creates the process's Lua state and runs the program's chunk; false with *error if it
  // does not load.
  bool Load(std::string* error) {
    CloseState();
    L_ = lua_newstate(&ClientProgram::Alloc, this);
    if (L_ == nullptr) {
      *error = "cannot create a Lua state";
      return false;
    }
    *static_cast<ClientProgram**>(lua_getextraspace(L_)) = this;
    lua_atpanic(L_, &ClientProgram::Panic);
    lua_sethook(L_, &ClientProgram::CountHook, LUA_MASKCOUNT, kHookInterval);
    BuildSandbox();
    const std::string& body = scripts_.program;
    const std::string chunk = "@" + ProgramName();
    slice_steps_ = 0;
    stop_.clear();
    enforce_memory_ = true;
    int status = luaL_loadbufferx(L_, body.data(), body.size(), chunk.c_str(), "t");
    if (status == LUA_OK) status = lua_pcall(L_, 0, 1, 0);
    enforce_memory_ = false;
    if (status != LUA_OK) {
      *error = ProgramName() + ": " + ErrorText(L_, -1);
      CloseState();
      return false;
    }
    if (!lua_istable(L_, -1)) {
      *error = ProgramName() + ": the program must return a table of operations (acquire, "
               "release), not " + std::string(luaL_typename(L_, -1));
      CloseState();
      return false;
    }
    for (const char* op : {"acquire", "release"}) {
      RawField(L_, op);
      const bool ok = lua_isfunction(L_, -1);
      lua_pop(L_, 1);
      if (!ok) {
        *error = ProgramName() + ": the returned table has no function '" + op + "'";
        CloseState();
        return false;
      }
    }
    if (!ReadDeclarations(error)) {
      CloseState();
      return false;
    }
    program_ref_ = luaL_ref(L_, LUA_REGISTRYINDEX);
    return true;
  }

  const ClientDeclarations& declarations() const { return declarations_; }

  // --- LockProtocol ---

  void Acquire(Outbox& out, int thread, const AcquireArgs& args) override {
    Entry entry(this, out);
    const char* mode = args.mode == AcquireArgs::Mode::kLock            ? "lock"
                       : args.mode == AcquireArgs::Mode::kTryLockNoWait ? "try-no-wait"
                                                                        : "try";
    StartOp(thread, "acquire", [&](lua_State* L) {
      lua_pushstring(L, mode);
      lua_setfield(L, -2, "mode");
      lua_pushinteger(L, args.wait_us);
      lua_setfield(L, -2, "wait_us");
      lua_pushinteger(L, args.lease_us);
      lua_setfield(L, -2, "lease_us");
    });
  }

  void Release(Outbox& out, int thread) override {
    Entry entry(this, out);
    StartOp(thread, "release", nullptr);
  }

  void ForceUnlock(Outbox& out, int thread) override {
    Entry entry(this, out);
    StartOp(thread, "force_unlock", nullptr);
  }

  void OnReply(Outbox& out, RequestId request, const Reply& reply) override {
    Entry entry(this, out);
    const auto it = requests_.find(request);
    if (it == requests_.end()) return;  // Timed out, cancelled, or from before a crash.
    const auto [task_id, index] = it->second;
    requests_.erase(it);
    Task& task = tasks_.at(task_id);
    Pending& p = task.calls[index];
    DisarmTimer(&p.timer);
    if (p.eval_fallback != nullptr && reply.is_error() && reply.str.rfind("NOSCRIPT", 0) == 0) {
      // As client libraries run a script: by its SHA1, and by its body when the server does
      // not have it yet.
      SharedArgv eval = std::move(p.eval_fallback);
      p.eval_fallback = nullptr;
      SendPending(task_id, task, index, std::move(eval));
      return;
    }
    p.done = true;
    p.reply = reply;
    Settled(task_id, index);
  }

  void OnMessage(Outbox& out, int node, const std::string& channel,
                 const std::string& payload) override {
    (void)out;
    (void)node;
    (void)channel;
    (void)payload;  // A program subscribes to nothing (yet).
  }

  void OnTimer(Outbox& out, TimerId timer) override {
    Entry entry(this, out);
    const auto it = timers_.find(timer);
    if (it == timers_.end()) return;
    const auto [task_id, index] = it->second;
    timers_.erase(it);
    Task& task = tasks_.at(task_id);
    if (index < 0) {
      task.sleep_timer = 0;
      task.wait = Task::Wait::kNone;
      Resume(task_id, 0);
      return;
    }
    Pending& p = task.calls[static_cast<size_t>(index)];
    p.timer = 0;
    requests_.erase(p.request);  // Its reply, if it comes, is ignored from now on.
    p.done = true;
    p.timed_out = true;
    Settled(task_id, static_cast<size_t>(index));
  }

  void OnCrash() override {
    // A restarted process is a new program: nothing of the old one's state survives.
    requests_.clear();
    timers_.clear();
    tasks_.clear();
    op_task_.clear();
    completions_.clear();
    std::string error;
    if (!Load(&error)) program_error_ = error;
  }

  std::string ProgramError() const override { return program_error_; }

 private:
  // Sets the Outbox for the duration of an entry point and hands over what completed.
  struct Entry {
    // A driver may start a thread's next operation from Complete: entries nest.
    Entry(ClientProgram* p, Outbox& out) : program(p), outer(p->out_) { program->out_ = &out; }
    ~Entry() {
      program->FlushCompletions();
      program->out_ = outer;
    }
    ClientProgram* program;
    Outbox* outer;
  };

  // What the checkers need to know of the lock (the table at the top of the stack): how its key
  // names a holder, and what its unlock answers.
  bool ReadDeclarations(std::string* error) {
    const std::string fix = " (docs/clients.md, \"What a program declares\")";
    const auto text = [this](const char* field, std::string* out) {
      const int t = RawField(L_, field);
      if (t == LUA_TSTRING) *out = lua_tostring(L_, -1);
      lua_pop(L_, 1);
      return t == LUA_TNIL || t == LUA_TSTRING;
    };
    ClientDeclarations d;
    if (!text("layout", &d.layout) || d.layout.empty()) {
      *error = ProgramName() + ": the returned table must declare the lock key's layout: layout = "
               "\"string-token\" (a string key whose value is the holder's op.token) or "
               "\"hash-fields\" (a hash whose fields are the holders' op.token)" + fix;
      return false;
    }
    if (d.layout != "string-token" && d.layout != "hash-fields") {
      *error = ProgramName() + ": layout = \"" + d.layout + "\" is not one lockstep follows; "
               "write \"string-token\" or \"hash-fields\"" + fix;
      return false;
    }
    if (!text("unlock_reply", &d.unlock_reply)) {
      *error = ProgramName() + ": unlock_reply must be a string" + fix;
      return false;
    }
    if (d.unlock_reply.empty()) {
      d.unlock_reply = d.layout == "string-token" ? "compare-and-delete" : "redisson";
    }
    if (d.unlock_reply != "compare-and-delete" && d.unlock_reply != "zero-released" &&
        d.unlock_reply != "redisson") {
      *error = ProgramName() + ": unlock_reply = \"" + d.unlock_reply + "\" is not one lockstep "
               "knows; write \"compare-and-delete\" (1: deleted, 0: not the caller's), "
               "\"zero-released\" (0: deleted, 1: not the caller's) or \"redisson\" (nil: not "
               "held, 0: still held, 1: released)" + fix;
      return false;
    }
    if (!text("owner", &d.owner)) {
      *error = ProgramName() + ": owner must be a string" + fix;
      return false;
    }
    if (!d.owner.empty() && d.owner != "thread" && d.owner != "process") {
      *error = ProgramName() + ": owner = \"" + d.owner + "\" is not one lockstep knows; write "
               "\"thread\" (a holder writes its op.token, the default) or \"process\" (every "
               "thread of a process writes lockstep.config.uuid)" + fix;
      return false;
    }
    if (d.owner == "thread") d.owner.clear();
    if (!text("quorum", &d.quorum)) {
      *error = ProgramName() + ": quorum must be a string" + fix;
      return false;
    }
    if (!d.quorum.empty() && d.quorum != "majority" && d.quorum != "all") {
      *error = ProgramName() + ": quorum = \"" + d.quorum + "\" is not one lockstep knows; write "
               "\"majority\" (held with more than half the masters, as Redlock) or \"all\", or "
               "leave it out for a lock on one node" + fix;
      return false;
    }
    declarations_ = std::move(d);
    return true;
  }

  std::string ProgramName() const {
    return scripts_.program_file.empty() ? std::string("client.lua") : scripts_.program_file;
  }

  // --- the Lua state ---

  static void* Alloc(void* ud, void* ptr, size_t osize, size_t nsize) {
    auto* self = static_cast<ClientProgram*>(ud);
    const size_t old = ptr == nullptr ? 0 : osize;
    if (nsize == 0) {
      self->memory_used_ -= old;
      std::free(ptr);
      return nullptr;
    }
    if (nsize > old && self->enforce_memory_ &&
        self->memory_used_ - old + nsize > self->limits_.memory_bytes) {
      if (self->stop_.empty()) {
        self->stop_ = "its Lua heap passed the client's memory cap (" +
                      std::to_string(self->limits_.memory_bytes >> 20) + " MiB)";
      }
      return nullptr;
    }
    void* p = std::realloc(ptr, nsize);
    if (p == nullptr) return nullptr;
    self->memory_used_ = self->memory_used_ - old + nsize;
    return p;
  }

  static void ForeignCharge(lua_State* L, void* ud, uint64_t units) {
    auto* self = static_cast<ClientProgram*>(ud);
    if (self->enforce_memory_) self->Charge(L, units);  // Only while the program runs.
  }

  static int Panic(lua_State* L) {
    const char* msg = lua_tostring(L, -1);
    std::fprintf(stderr, "lockstep: unprotected Lua error in a client program: %s\n",
                 msg != nullptr ? msg : "?");
    std::abort();
  }

  // Raises the stop as a plain string: luaL_error would build its message with a concatenation,
  // which the VM charges, which would raise again.
  [[noreturn]] void RaiseStop(lua_State* L) {
    const std::string text = "lockstep: client program stopped: " + stop_;
    lua_pushlstring(L, text.data(), text.size());
    lua_error(L);
    std::abort();  // lua_error does not return.
  }

  static void CountHook(lua_State* L, lua_Debug*) {
    ClientProgram* self = HostOf(L);
    self->slice_steps_ += kHookInterval;
    if (self->stop_.empty() && self->slice_steps_ > self->limits_.steps_per_slice) {
      self->stop_ = "it ran " + std::to_string(self->limits_.steps_per_slice) +
                    " Lua instructions without waiting (an endless loop?)";
    }
    if (!self->stop_.empty()) {
      // From now on the hook fires on every instruction, so that a pcall which catches the
      // stop cannot keep the program running.
      lua_sethook(L, &ClientProgram::CountHook, LUA_MASKCOUNT, 1);
      self->RaiseStop(L);
    }
  }

  void CloseState() {
    if (L_ != nullptr) lua_close(L_);
    L_ = nullptr;
    program_ref_ = LUA_NOREF;
    memory_used_ = 0;
  }

  // t[name] for the table at the top, without metamethods: the host reads the program's table
  // outside any protected call, where a metamethod's error would have nowhere to go.
  static int RawField(lua_State* L, const char* name) {
    lua_pushstring(L, name);
    return lua_rawget(L, -2);
  }

  static std::string ErrorText(lua_State* L, int idx) {
    size_t len = 0;
    const char* s = lua_tolstring(L, idx, &len);
    if (s != nullptr) return std::string(s, len);
    return std::string("(an error object of type ") + luaL_typename(L, idx) + ")";
  }

  void BuildSandbox() {
    luaL_requiref(L_, LUA_GNAME, luaopen_base, 1);
    luaL_requiref(L_, LUA_TABLIBNAME, luaopen_table, 1);
    luaL_requiref(L_, LUA_STRLIBNAME, luaopen_string, 1);
    luaL_requiref(L_, LUA_MATHLIBNAME, luaopen_math, 1);
    luaL_requiref(L_, LUA_UTF8LIBNAME, luaopen_utf8, 1);
    lua_settop(L_, 0);
    // No I/O, no loading of other code, no clock, no collector to drive, nothing that shows
    // an address or a hash order.
    for (const char* name : {"dofile", "loadfile", "load", "require", "collectgarbage", "print",
                             "warn", "rawequal"}) {
      lua_pushnil(L_);
      lua_setglobal(L_, name);
    }
    lua_getglobal(L_, "math");
    for (const char* name : {"random", "randomseed"}) {
      lua_pushnil(L_);
      lua_setfield(L_, -2, name);
    }
    lua_pop(L_, 1);
    // Library functions whose work is in C, which no instruction count sees: each call is
    // charged by what it returns (ChargedCall).
    const auto charge = [this](const char* lib, std::initializer_list<const char*> names) {
      lua_getglobal(L_, lib);
      for (const char* name : names) {
        lua_getfield(L_, -1, name);
        lua_pushcclosure(L_, &ClientProgram::ChargedCall, 1);
        lua_setfield(L_, -2, name);
      }
      lua_pop(L_, 1);
    };
    charge("string", {"rep", "upper", "lower", "reverse", "sub", "char", "byte", "format", "find",
                      "len"});
    charge("table", {"concat", "unpack", "insert", "remove", "move", "sort"});
    charge("utf8", {"char", "codepoint", "len", "offset"});
    lua_getglobal(L_, "string");
    for (const char* name : {"match", "gmatch", "gsub", "dump", "pack", "unpack", "packsize"}) {
      lua_pushnil(L_);
      lua_setfield(L_, -2, name);
    }
    lua_getfield(L_, -1, "find");
    lua_pushcclosure(L_, &ClientProgram::PlainFind, 1);
    lua_setfield(L_, -2, "find");
    lua_getfield(L_, -1, "format");
    lua_pushcclosure(L_, &ClientProgram::Format, 1);
    lua_setfield(L_, -2, "format");
    lua_pop(L_, 1);
    lua_register(L_, "pairs", &ClientProgram::Pairs);
    lua_register(L_, "next", &ClientProgram::Next);
    lua_register(L_, "tostring", &ClientProgram::ToString);
    lua_getglobal(L_, "setmetatable");
    lua_pushcclosure(L_, &ClientProgram::SetMetatable, 1);
    lua_setglobal(L_, "setmetatable");

    static const luaL_Reg kApi[] = {
        {"call", &ClientProgram::ApiCall},       {"eval", &ClientProgram::ApiEval},
        {"evalsha", &ClientProgram::ApiEvalsha}, {"call_all", &ClientProgram::ApiCallAll},
        {"send_all", &ClientProgram::ApiSendAll},
        {"sleep", &ClientProgram::ApiSleep},     {"now_us", &ClientProgram::ApiNowUs},
        {"wall_ms", &ClientProgram::ApiWallMs},  {"random", &ClientProgram::ApiRandom},
        {"random_hex", &ClientProgram::ApiRandomHex}, {"node_count", &ClientProgram::ApiNodeCount},
        {"spawn", &ClientProgram::ApiSpawn},     {"cancel", &ClientProgram::ApiCancel},
        {"holder_value", &ClientProgram::ApiHolderValue},
        {nullptr, nullptr}};
    luaL_newmetatable(L_, kBatchMeta);
    lua_createtable(L_, 0, 1);
    lua_pushcfunction(L_, &ClientProgram::ApiBatchNext);
    lua_setfield(L_, -2, "next");
    lua_setfield(L_, -2, "__index");
    lua_pop(L_, 1);
    luaL_newlib(L_, kApi);
    lua_newtable(L_);  // lockstep.timeout: a value no reply converts to.
    lua_setfield(L_, -2, kTimeoutKey);
    PushConfig(L_);
    lua_setfield(L_, -2, "config");
    lua_setglobal(L_, "lockstep");
  }

  void PushConfig(lua_State* L) {
    lua_createtable(L, 0, 8);
    auto set_int = [L](const char* name, int64_t v) {
      lua_pushinteger(L, v);
      lua_setfield(L, -2, name);
    };
    lua_pushstring(L, config_.uuid.c_str());
    lua_setfield(L, -2, "uuid");
    lua_pushstring(L, config_.lock_name.c_str());
    lua_setfield(L, -2, "lock_name");
    set_int("threads", config_.threads);
    set_int("timeout_us", config_.timeout_us);
    set_int("watchdog_timeout_us", config_.watchdog_timeout_us);
    set_int("retry_attempts", config_.retry_attempts);
    set_int("retry_interval_us", config_.retry_interval_us);
  }

  // --- the sandbox's replacements ---

  // Calls upvalue 1 with the arguments, then charges the work by its results: a unit per 8
  // bytes of the strings it returns and per value, and a unit per 8 elements of a table
  // argument (table.concat, sort, unpack walk them).
  static int ChargedCall(lua_State* L) {
    const int nargs = lua_gettop(L);
    uint64_t units = 1;
    for (int i = 1; i <= nargs; ++i) {
      if (lua_type(L, i) == LUA_TTABLE) units += static_cast<uint64_t>(lua_rawlen(L, i)) / 8;
    }
    HostOf(L)->Charge(L, units);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, nargs, LUA_MULTRET);
    const int nresults = lua_gettop(L);
    uint64_t result_units = static_cast<uint64_t>(nresults);
    for (int i = 1; i <= nresults; ++i) {
      if (lua_type(L, i) == LUA_TSTRING) result_units += static_cast<uint64_t>(lua_rawlen(L, i)) / 8;
    }
    HostOf(L)->Charge(L, result_units);
    return nresults;
  }

  // string.find without patterns: a pattern's backtracking is work no budget would see.
  static int PlainFind(lua_State* L) {
    if (!lua_toboolean(L, 4)) {
      return luaL_error(L, "string.find: patterns are not available to client programs; "
                           "pass plain = true (string.find(s, text, init, true))");
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
  }

  // string.format with no %p, and tables, functions and threads shown by type, never address.
  static int Format(lua_State* L) {
    const char* fmt = luaL_checkstring(L, 1);
    for (const char* p = fmt; (p = std::strchr(p, '%')) != nullptr; ++p) {
      ++p;
      while (*p != '\0' && std::strchr("-+ #0123456789.", *p) != nullptr) ++p;
      if (*p == 'p') return luaL_error(L, "string.format: %%p is not available to client programs");
      if (*p == '\0') break;
    }
    const int n = lua_gettop(L);
    for (int i = 2; i <= n; ++i) {
      const int t = lua_type(L, i);
      if (t == LUA_TTABLE || t == LUA_TFUNCTION || t == LUA_TTHREAD || t == LUA_TUSERDATA ||
          t == LUA_TLIGHTUSERDATA) {
        lua_pushstring(L, lua_typename(L, t));
        lua_replace(L, i);
      }
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n, 1);
    return 1;
  }

  static int ToString(lua_State* L) {
    luaL_checkany(L, 1);
    const int t = lua_type(L, 1);
    if (t == LUA_TNUMBER || t == LUA_TSTRING || t == LUA_TBOOLEAN || t == LUA_TNIL) {
      luaL_tolstring(L, 1, nullptr);
    } else {
      lua_pushstring(L, lua_typename(L, t));  // No address: it would differ run to run.
    }
    return 1;
  }

  // No finalizers: they would run whenever the collector gets to them, inside whatever the
  // program was doing.
  static int SetMetatable(lua_State* L) {
    if (lua_istable(L, 2) && lua_getfield(L, 2, "__gc") != LUA_TNIL) {
      return luaL_error(L, "setmetatable: __gc is not available to client programs");
    }
    lua_settop(L, 2);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, 2, 1);
    return 1;
  }

  // pairs and next in lockstep's fixed key order (core/lua_libs.h), not Lua's hash order.
  static int PairsStep(lua_State* L) {
    // Upvalues: the table, the array of its keys, the position.
    const lua_Integer i = lua_tointeger(L, lua_upvalueindex(3)) + 1;
    lua_pushinteger(L, i);
    lua_replace(L, lua_upvalueindex(3));
    for (lua_Integer at = i;; ++at) {
      if (lua_rawgeti(L, lua_upvalueindex(2), at) == LUA_TNIL) return 0;
      lua_pushvalue(L, -1);
      if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) {
        if (at != i) {
          lua_pushinteger(L, at);
          lua_replace(L, lua_upvalueindex(3));
        }
        return 2;
      }
      lua_pop(L, 2);  // Removed since the keys were taken: skip it.
    }
  }
  static int Pairs(lua_State* L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    HostOf(L)->Charge(L, static_cast<uint64_t>(lua_rawlen(L, 1)) + 1);
    lua_settop(L, 1);
    const int n = lualib::PushKeysInFixedOrder(L, 1);
    HostOf(L)->Charge(L, static_cast<uint64_t>(n) * 8);
    lua_pushinteger(L, 0);
    lua_pushcclosure(L, &ClientProgram::PairsStep, 3);
    return 1;
  }
  static int Next(lua_State* L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_settop(L, 2);
    const int n = lualib::PushKeysInFixedOrder(L, 1);  // At 3.
    HostOf(L)->Charge(L, static_cast<uint64_t>(n) * 8);
    int from = 1;
    if (!lua_isnil(L, 2)) {
      from = 0;
      for (int i = 1; i <= n; ++i) {
        lua_rawgeti(L, 3, i);
        const bool same = lua_rawequal(L, -1, 2);
        lua_pop(L, 1);
        if (same) {
          from = i + 1;
          break;
        }
      }
      if (from == 0) return luaL_error(L, "invalid key to 'next'");
    }
    if (from > n) {
      lua_pushnil(L);
      return 1;
    }
    lua_rawgeti(L, 3, from);
    lua_pushvalue(L, -1);
    lua_rawget(L, 1);
    return 2;
  }

  // Work a library function does that no instruction count shows.
  void Charge(lua_State* L, uint64_t units) {
    slice_steps_ += units;
    if (stop_.empty() && slice_steps_ > limits_.steps_per_slice) {
      stop_ = "it ran " + std::to_string(limits_.steps_per_slice) +
              " Lua instructions without waiting (an endless loop?)";
    }
    if (!stop_.empty()) RaiseStop(L);
  }

  // --- the API ---

  // The task whose coroutine L is; raises an error when L is none (the chunk's top level).
  Task& CurrentTask(lua_State* L, uint64_t* id) {
    const auto it = task_of_.find(L);
    if (it == task_of_.end()) {
      luaL_error(L, "lockstep: this function waits, so it can only be called from an operation "
                    "or a task (not while the program loads)");
    }
    *id = it->second;
    return tasks_.at(it->second);
  }

  int CheckNode(lua_State* L, int arg) {
    const lua_Integer node = luaL_checkinteger(L, arg);
    const int count = Out(L).NodeCount();
    if (node < 0 || node >= count) {
      return luaL_error(L, "lockstep: node %d is out of range (this client has %d node%s, 0 to %d)",
                        static_cast<int>(node), count, count == 1 ? "" : "s", count - 1);
    }
    return static_cast<int>(node);
  }

  // Appends the strings and numbers of the array at idx (from its element `first`) to argv.
  static void AppendArgs(lua_State* L, int idx, Argv* argv, const char* what) {
    if (lua_isnoneornil(L, idx)) return;
    luaL_checktype(L, idx, LUA_TTABLE);
    const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, idx));
    if (static_cast<size_t>(n) + argv->size() > kArgvMax) {
      luaL_error(L, "lockstep: %s has %d elements, more than a command may have", what,
                 static_cast<int>(n));
    }
    for (lua_Integer i = 1; i <= n; ++i) {
      const int t = lua_rawgeti(L, idx, i);
      if (t == LUA_TSTRING) {
        size_t len = 0;
        const char* s = lua_tolstring(L, -1, &len);
        argv->emplace_back(s, len);
      } else if (t == LUA_TNUMBER) {
        char buf[64];
        if (lua_isinteger(L, -1)) {
          std::snprintf(buf, sizeof buf, "%" PRId64, static_cast<int64_t>(lua_tointeger(L, -1)));
        } else {
          std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(lua_tonumber(L, -1)));
        }
        argv->emplace_back(buf);
      } else {
        luaL_error(L, "lockstep: %s[%d] is a %s; a command's arguments are strings and numbers",
                   what, static_cast<int>(i), lua_typename(L, t));
      }
      lua_pop(L, 1);
    }
  }

  // The label and response timeout of a call: opts.label, opts.timeout_us.
  void ReadOpts(lua_State* L, int idx, std::string* label, int64_t* timeout_us) {
    *timeout_us = config_.timeout_us;
    if (lua_isnoneornil(L, idx)) return;
    luaL_checktype(L, idx, LUA_TTABLE);
    if (lua_getfield(L, idx, "label") == LUA_TSTRING) *label = lua_tostring(L, -1);
    lua_pop(L, 1);
    if (lua_getfield(L, idx, "timeout_us") != LUA_TNIL) {
      if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1) {
        luaL_error(L, "lockstep: timeout_us must be a positive integer");
      }
      *timeout_us = std::min<int64_t>(lua_tointeger(L, -1), kDelayMaxUs);
    }
    lua_pop(L, 1);
  }

  const std::string& ScriptBody(lua_State* L, const std::string& name) {
    const auto it = scripts_.bodies.find(name);
    if (it == scripts_.bodies.end()) {
      std::string known;
      for (const auto& [n, body] : scripts_.bodies) known += (known.empty() ? "" : ", ") + n;
      luaL_error(L, "lockstep: no script named '%s' (the program's scripts: %s)", name.c_str(),
                 known.empty() ? "none" : known.c_str());
    }
    return it->second;
  }

  // One call's command from the arguments at `at`: (argv) for call, (name, keys, args) for
  // eval and evalsha. *fallback gets evalsha's EVAL.
  SharedArgv BuildCommand(lua_State* L, int at, int kind, std::string* label,
                          SharedArgv* fallback) {
    Argv argv;
    if (kind == 0) {
      AppendArgs(L, at, &argv, "argv");
      if (argv.empty()) luaL_error(L, "lockstep.call: the command is empty");
      if (label->empty()) {
        *label = argv[0];
        std::transform(label->begin(), label->end(), label->begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      }
      return ShareArgv(std::move(argv));
    }
    const std::string name = luaL_checkstring(L, at);
    const std::string& body = ScriptBody(L, name);
    Argv keys;
    AppendArgs(L, at + 1, &keys, "keys");
    Argv rest;
    rest.push_back(std::to_string(keys.size()));
    for (std::string& k : keys) rest.push_back(std::move(k));
    AppendArgs(L, at + 2, &rest, "args");
    if (label->empty()) *label = name;
    auto with = [&rest](std::string cmd, std::string first) {
      Argv a;
      a.reserve(rest.size() + 2);
      a.push_back(std::move(cmd));
      a.push_back(std::move(first));
      a.insert(a.end(), rest.begin(), rest.end());
      return ShareArgv(std::move(a));
    };
    if (kind == 1) return with("EVAL", body);
    *fallback = with("EVAL", body);
    return with("EVALSHA", ScriptHost::Sha1Hex(body));
  }

  // call / eval / evalsha: sends one command and waits for it.
  int SendOne(lua_State* L, int kind) {
    uint64_t id = 0;
    Task& task = CurrentTask(L, &id);
    const int node = CheckNode(L, 1);
    std::string label;
    int64_t timeout_us = 0;
    ReadOpts(L, kind == 0 ? 3 : 5, &label, &timeout_us);
    SharedArgv fallback;
    SharedArgv argv = BuildCommand(L, 2, kind, &label, &fallback);
    AbandonCalls(task);
    task.calls.push_back(Pending{});
    Pending& p = task.calls.back();
    p.node = node;
    p.timeout_us = timeout_us;
    p.label = std::move(label);
    p.eval_fallback = std::move(fallback);
    task.all = false;
    task.outstanding = 1;
    task.wait = Task::Wait::kCalls;
    SendPending(id, task, 0, std::move(argv));
    return lua_yield(L, 0);
  }
  static int ApiCall(lua_State* L) { return HostOf(L)->SendOne(L, 0); }
  static int ApiEval(lua_State* L) { return HostOf(L)->SendOne(L, 1); }
  static int ApiEvalsha(lua_State* L) { return HostOf(L)->SendOne(L, 2); }

  // call_all({ {node, argv} | {node, script = name, keys = {...}, args = {...}, sha = bool}, ...}
  //          [, opts]): every command at once, in order; waits for all (or, for send_all,
  // returns at once).
  int CallAll(lua_State* L, bool stream) {
    uint64_t id = 0;
    Task& task = CurrentTask(L, &id);
    luaL_checktype(L, 1, LUA_TTABLE);
    std::string common_label;
    int64_t timeout_us = 0;
    ReadOpts(L, 2, &common_label, &timeout_us);
    const lua_Integer n = static_cast<lua_Integer>(lua_rawlen(L, 1));
    if (n < 1) return luaL_error(L, "lockstep.call_all: no calls given");
    if (n > 4096) return luaL_error(L, "lockstep.call_all: more than 4096 calls at once");
    std::vector<std::pair<Pending, SharedArgv>> built;
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_settop(L, 2);
      if (lua_rawgeti(L, 1, i) != LUA_TTABLE) {
        return luaL_error(L, "lockstep.call_all: call %d is not a table", static_cast<int>(i));
      }
      const int c = lua_gettop(L);  // 3
      lua_rawgeti(L, c, 1);  // node, at 4
      Pending p;
      p.node = CheckNode(L, 4);
      p.timeout_us = timeout_us;
      p.label = common_label;
      SharedArgv argv;
      if (lua_getfield(L, c, "script") != LUA_TNIL) {  // 5
        const bool sha = lua_getfield(L, c, "sha") != LUA_TNIL && lua_toboolean(L, -1);  // 6
        lua_getfield(L, c, "keys");  // 7
        lua_getfield(L, c, "args");  // 8
        lua_pushvalue(L, 5);         // 9: name
        lua_insert(L, 7);            // name 7, keys 8, args 9
        argv = BuildCommand(L, 7, sha ? 2 : 1, &p.label, &p.eval_fallback);
      } else {
        lua_rawgeti(L, c, 2);  // 6: argv
        argv = BuildCommand(L, 6, 0, &p.label, &p.eval_fallback);
      }
      built.emplace_back(std::move(p), std::move(argv));
    }
    AbandonCalls(task);
    for (auto& [p, argv] : built) task.calls.push_back(std::move(p));
    task.all = !stream;
    task.stream = stream;
    if (stream) task.batch = ++last_batch_;
    task.outstanding = task.calls.size();
    task.wait = stream ? Task::Wait::kNone : Task::Wait::kCalls;
    for (size_t i = 0; i < built.size(); ++i) SendPending(id, task, i, std::move(built[i].second));
    if (stream) return 0;
    return lua_yield(L, 0);
  }
  static int ApiCallAll(lua_State* L) { return HostOf(L)->CallAll(L, /*stream=*/false); }

  // The task waits for something new: what it sent before and has not heard back from (a
  // batch it stopped reading) is forgotten, its replies ignored.
  void AbandonCalls(Task& task) {
    for (Pending& p : task.calls) {
      if (p.done) continue;
      requests_.erase(p.request);
      DisarmTimer(&p.timer);
    }
    task.calls.clear();
    task.ready.clear();
    task.stream = false;
    task.outstanding = 0;
  }

  // send_all(calls [, opts]): sends every call as call_all does and returns at once with a
  // batch; batch:next() waits for the next reply to come and returns its call's number and
  // the reply (or the number, nil and "timeout"), and nil once every reply has been handed
  // over. Waiting for anything else abandons the batch.
  int SendAll(lua_State* L) {
    uint64_t id = 0;
    CallAll(L, /*stream=*/true);
    Task& task = CurrentTask(L, &id);
    lua_createtable(L, 0, 1);
    lua_pushinteger(L, static_cast<lua_Integer>(task.batch));
    lua_setfield(L, -2, "batch");
    luaL_setmetatable(L, kBatchMeta);
    return 1;
  }
  static int ApiSendAll(lua_State* L) { return HostOf(L)->SendAll(L); }

  int BatchNext(lua_State* L) {
    uint64_t id = 0;
    Task& task = CurrentTask(L, &id);
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "batch");
    const lua_Integer batch = lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (!task.stream || static_cast<uint64_t>(batch) != task.batch) {
      return luaL_error(L, "lockstep: batch:next() of a batch this task no longer waits for "
                           "(it has sent or slept since)");
    }
    if (!task.ready.empty()) {
      const size_t next = task.ready.front();
      task.ready.pop_front();
      const int n = PushNext(L, task.calls[next], next);
      if (n == 0) return luaL_error(L, "lockstep: a reply too deeply nested");
      return n;
    }
    if (task.outstanding == 0) {
      lua_pushnil(L);
      return 1;
    }
    task.wait = Task::Wait::kNext;
    return lua_yield(L, 0);
  }
  static int ApiBatchNext(lua_State* L) { return HostOf(L)->BatchNext(L); }

  void SendPending(uint64_t task_id, Task& task, size_t index, SharedArgv argv) {
    Pending& p = task.calls[index];
    p.request = out_->NewRequestId();
    requests_[p.request] = {task_id, index};
    p.timer = out_->NewTimerId();
    timers_[p.timer] = {task_id, static_cast<int64_t>(index)};
    out_->ArmTimer(p.timer, p.timeout_us);
    out_->Send(p.node, p.request, std::move(argv), p.label, task.thread);
  }

  int Sleep(lua_State* L) {
    uint64_t id = 0;
    Task& task = CurrentTask(L, &id);
    const lua_Integer us = luaL_checkinteger(L, 1);
    if (us < 0) return luaL_error(L, "lockstep.sleep: a negative time (%d us)", static_cast<int>(us));
    AbandonCalls(task);
    task.wait = Task::Wait::kSleep;
    task.sleep_timer = out_->NewTimerId();
    timers_[task.sleep_timer] = {id, -1};
    out_->ArmTimer(task.sleep_timer, std::min<int64_t>(us, kDelayMaxUs));
    return lua_yield(L, 0);
  }
  static int ApiSleep(lua_State* L) { return HostOf(L)->Sleep(L); }

  // The Outbox, which exists only while an operation or a task runs.
  static Outbox& Out(lua_State* L) {
    Outbox* out = HostOf(L)->out_;
    if (out == nullptr) {
      luaL_error(L, "lockstep: clocks, nodes and the PRNG are there for operations and tasks, "
                    "not while the program loads");
    }
    return *out;
  }
  static int ApiNowUs(lua_State* L) {
    lua_pushinteger(L, Out(L).MonoUs());
    return 1;
  }
  static int ApiWallMs(lua_State* L) {
    lua_pushinteger(L, Out(L).WallMs());
    return 1;
  }
  static int ApiNodeCount(lua_State* L) {
    lua_pushinteger(L, Out(L).NodeCount());
    return 1;
  }
  // random(n): 1..n; random(lo, hi): lo..hi.
  static int ApiRandom(lua_State* L) {
    lua_Integer lo = 1;
    lua_Integer hi = luaL_checkinteger(L, 1);
    if (!lua_isnoneornil(L, 2)) {
      lo = hi;
      hi = luaL_checkinteger(L, 2);
    }
    if (lo > hi) return luaL_error(L, "lockstep.random: an empty range");
    lua_pushinteger(L, Out(L).Rng().UniformInt(lo, hi));
    return 1;
  }
  static int ApiRandomHex(lua_State* L) {
    const lua_Integer bytes = luaL_checkinteger(L, 1);
    if (bytes < 1 || bytes > 1024) return luaL_error(L, "lockstep.random_hex: 1 to 1024 bytes");
    static const char kHex[] = "0123456789abcdef";
    std::string s;
    Prng& rng = Out(L).Rng();
    for (lua_Integer i = 0; i < bytes; ++i) {
      const uint64_t b = rng.Next() & 0xff;
      s.push_back(kHex[b >> 4]);
      s.push_back(kHex[b & 0xf]);
    }
    lua_pushlstring(L, s.data(), s.size());
    return 1;
  }

  // holder_value(value): from now on the calling thread's acquisitions write `value` as their
  // holder; the history records it, so that the checkers know whose a key holding it is.
  int HolderValue(lua_State* L) {
    uint64_t id = 0;
    Task& task = CurrentTask(L, &id);
    size_t len = 0;
    const char* s = luaL_checklstring(L, 1, &len);
    if (++task.holder_values > kHolderValuesPerTask) {
      return luaL_error(L, "lockstep.holder_value: more than %d values in one operation or task",
                        kHolderValuesPerTask);
    }
    if (task.thread < 0) {
      return luaL_error(L, "lockstep.holder_value: call it from an operation (or a task it spawned)");
    }
    if (len == 0 || len > kHolderValueMax) {
      return luaL_error(L, "lockstep.holder_value: a value of 1 to %d bytes", static_cast<int>(kHolderValueMax));
    }
    for (size_t i = 0; i < len; ++i) {
      const unsigned char c = static_cast<unsigned char>(s[i]);
      if (c <= ' ' || c == ',' || c == 0x7f) {
        return luaL_error(L, "lockstep.holder_value: the value may hold no spaces, commas or control "
                             "characters (a key's owners are listed comma-separated)");
      }
    }
    Out(L).HolderValue(task.thread, std::string_view(s, len));
    return 0;
  }
  static int ApiHolderValue(lua_State* L) { return HostOf(L)->HolderValue(L); }

  // spawn(fn, ...): a background task, started at once; returns its number.
  int Spawn(lua_State* L) {
    luaL_checktype(L, 1, LUA_TFUNCTION);
    int thread = -1;
    if (const auto it = task_of_.find(L); it != task_of_.end()) thread = tasks_.at(it->second).thread;
    const int nargs = lua_gettop(L) - 1;
    const uint64_t id = NewTask(L, thread, /*is_op=*/false);
    lua_State* co = tasks_.at(id).co;
    lua_xmove(L, co, nargs + 1);  // The function and its arguments.
    pending_starts_.push_back({id, nargs});
    lua_pushinteger(L, static_cast<lua_Integer>(id));
    return 1;
  }
  static int ApiSpawn(lua_State* L) { return HostOf(L)->Spawn(L); }

  // cancel(task): the task stops where it waits; what it sent may still run.
  int Cancel(lua_State* L) {
    const uint64_t id = static_cast<uint64_t>(luaL_checkinteger(L, 1));
    const auto it = tasks_.find(id);
    if (it == tasks_.end() || it->second.is_op) {
      lua_pushboolean(L, 0);
      return 1;
    }
    if (task_of_.count(L) != 0 && task_of_.at(L) == id) {
      return luaL_error(L, "lockstep.cancel: a task cannot cancel itself (return instead)");
    }
    DropTask(id);
    lua_pushboolean(L, 1);
    return 1;
  }
  static int ApiCancel(lua_State* L) { return HostOf(L)->Cancel(L); }

  // --- tasks ---

  uint64_t NewTask(lua_State* from, int thread, bool is_op) {
    lua_State* co = lua_newthread(from);
    const int ref = luaL_ref(from, LUA_REGISTRYINDEX);
    const uint64_t id = ++last_task_;
    Task& task = tasks_[id];
    task.ref = ref;
    task.co = co;
    task.thread = thread;
    task.is_op = is_op;
    task_of_[co] = id;
    return id;
  }

  void DropTask(uint64_t id) {
    const auto it = tasks_.find(id);
    if (it == tasks_.end()) return;
    Task& task = it->second;
    for (Pending& p : task.calls) {
      if (!p.done) {
        requests_.erase(p.request);
        DisarmTimer(&p.timer);
      }
    }
    if (task.sleep_timer != 0) DisarmTimer(&task.sleep_timer);
    task_of_.erase(task.co);
    if (L_ != nullptr) luaL_unref(L_, LUA_REGISTRYINDEX, task.ref);
    for (auto op = op_task_.begin(); op != op_task_.end(); ++op) {
      if (op->second == id) {
        op_task_.erase(op);
        break;
      }
    }
    tasks_.erase(it);
  }

  void DisarmTimer(TimerId* timer) {
    if (*timer == 0) return;
    timers_.erase(*timer);
    out_->CancelTimer(*timer);
    *timer = 0;
  }

  void StartOp(int thread, const char* op, const std::function<void(lua_State*)>& fill) {
    assert(thread >= 0 && thread < config_.threads);
    assert(op_task_.count(thread) == 0 && "one operation at a time per thread");
    if (L_ == nullptr) {
      completions_.emplace_back(thread, OpResult::Info("client program error: " + program_error_));
      return;
    }
    lua_rawgeti(L_, LUA_REGISTRYINDEX, program_ref_);
    RawField(L_, op);
    if (!lua_isfunction(L_, -1)) {
      lua_pop(L_, 2);
      completions_.emplace_back(
          thread, OpResult::Fail("UnsupportedOperationException: the client program has no " +
                                 std::string(op)));
      return;
    }
    const uint64_t id = NewTask(L_, thread, /*is_op=*/true);
    op_task_[thread] = id;
    lua_State* co = tasks_.at(id).co;
    lua_xmove(L_, co, 1);  // The function.
    lua_pop(L_, 1);        // The program's table.
    lua_createtable(co, 0, 6);
    lua_pushinteger(co, thread);
    lua_setfield(co, -2, "thread");
    const std::string token = config_.uuid + ":" + std::to_string(thread + 1);
    lua_pushlstring(co, token.data(), token.size());
    lua_setfield(co, -2, "token");
    lua_pushstring(co, op);
    lua_setfield(co, -2, "name");
    if (fill) fill(co);
    Resume(id, 1);
  }

  // Pushes a settled call's result for batch:next(): its number, then its reply or nil and
  // "timeout". Returns how many values, or 0 when the reply cannot be converted.
  int PushNext(lua_State* co, const Pending& p, size_t index) {
    lua_pushinteger(co, static_cast<lua_Integer>(index + 1));
    if (p.timed_out) {
      lua_pushnil(co);
      lua_pushstring(co, "timeout");
      return 3;
    }
    return PushReply(co, p.reply, 0) ? 2 : 0;
  }

  // A call finished (a reply or its timeout): the task goes on when all it waits for is done,
  // or, for a batch, when it waits in batch:next().
  void Settled(uint64_t task_id, size_t index) {
    Task& task = tasks_.at(task_id);
    assert(task.outstanding > 0);
    --task.outstanding;
    if (task.stream) {
      task.ready.push_back(index);
      if (task.wait != Task::Wait::kNext) return;
      task.wait = Task::Wait::kNone;
      const size_t next = task.ready.front();
      task.ready.pop_front();
      if (!lua_checkstack(task.co, 4)) return Fail(task_id, "out of stack");
      const int n = PushNext(task.co, task.calls[next], next);
      if (n == 0) return Fail(task_id, "a reply too deeply nested");
      Resume(task_id, n);
      return;
    }
    if (task.outstanding > 0) return;
    task.wait = Task::Wait::kNone;
    lua_State* co = task.co;
    if (!lua_checkstack(co, 4)) return Fail(task_id, "out of stack");
    if (!task.all) {
      const Pending& p = task.calls[0];
      if (p.timed_out) {
        lua_pushnil(co);
        lua_pushstring(co, "timeout");
        task.calls.clear();
        Resume(task_id, 2);
        return;
      }
      const Reply reply = p.reply;
      task.calls.clear();
      if (!PushReply(co, reply, 0)) return Fail(task_id, "a reply too deeply nested");
      Resume(task_id, 1);
      return;
    }
    std::vector<Pending> calls = std::move(task.calls);
    task.calls.clear();
    lua_createtable(co, static_cast<int>(calls.size()), 0);
    for (size_t i = 0; i < calls.size(); ++i) {
      if (calls[i].timed_out) {
        lua_getglobal(co, "lockstep");
        lua_getfield(co, -1, kTimeoutKey);
        lua_remove(co, -2);
      } else if (!PushReply(co, calls[i].reply, 0)) {
        return Fail(task_id, "a reply too deeply nested");
      }
      lua_rawseti(co, -2, static_cast<lua_Integer>(i + 1));
    }
    Resume(task_id, 1);
  }

  // A reply as Redis hands it to a script (a Lua table for a status or an error).
  bool PushReply(lua_State* L, const Reply& r, int depth) {
    if (depth > kReplyDepthMax || !lua_checkstack(L, 3)) return false;
    switch (r.type) {
      case Reply::Type::kStatus:
        lua_createtable(L, 0, 1);
        lua_pushlstring(L, r.str.data(), r.str.size());
        lua_setfield(L, -2, "ok");
        return true;
      case Reply::Type::kError:
        lua_createtable(L, 0, 1);
        lua_pushlstring(L, r.str.data(), r.str.size());
        lua_setfield(L, -2, "err");
        return true;
      case Reply::Type::kInteger:
        lua_pushinteger(L, r.integer);
        return true;
      case Reply::Type::kBool:
        lua_pushboolean(L, r.integer != 0);
        return true;
      case Reply::Type::kBulk:
      case Reply::Type::kDouble:
        lua_pushlstring(L, r.str.data(), r.str.size());
        return true;
      case Reply::Type::kNull:
      case Reply::Type::kNullArray:
        lua_pushboolean(L, 0);
        return true;
      case Reply::Type::kArray:
      case Reply::Type::kSet:
      case Reply::Type::kMap:
        lua_createtable(L, static_cast<int>(std::min<size_t>(r.elements.size(), 1 << 20)), 0);
        for (size_t i = 0; i < r.elements.size(); ++i) {
          if (!PushReply(L, r.elements[i], depth + 1)) return false;
          lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
        }
        return true;
    }
    return false;
  }

  // Runs the task until it waits or ends; then starts the tasks it spawned.
  void Resume(uint64_t task_id, int nargs) {
    RunTask(task_id, nargs);
    while (!pending_starts_.empty()) {
      const auto [id, n] = pending_starts_.front();
      pending_starts_.erase(pending_starts_.begin());
      if (tasks_.count(id) != 0) RunTask(id, n);
    }
  }

  void RunTask(uint64_t task_id, int nargs) {
    if (L_ == nullptr) return;
    lua_State* co = tasks_.at(task_id).co;
    slice_steps_ = 0;
    int nresults = 0;
    enforce_memory_ = true;
    const int status = lua_resume(co, L_, nargs, &nresults);
    enforce_memory_ = false;
    if (status == LUA_YIELD) {
      lua_pop(co, nresults);
      return;
    }
    if (status != LUA_OK) {
      std::string why = ErrorText(co, -1);
      if (!stop_.empty()) why = "stopped: " + stop_;
      Fail(task_id, why);
      return;
    }
    Task& task = tasks_.at(task_id);
    if (!task.is_op) {
      DropTask(task_id);
      return;
    }
    const int thread = task.thread;
    OpResult result;
    std::string problem;
    if (!ToResult(co, nresults, &result, &problem)) {
      Fail(task_id, problem);
      return;
    }
    DropTask(task_id);
    completions_.emplace_back(thread, std::move(result));
  }

  // An operation's return values: "ok" | "fail" | "unknown", [detail], [integer value].
  static bool ToResult(lua_State* co, int n, OpResult* out, std::string* problem) {
    const int base = lua_gettop(co) - n + 1;
    const char* status = n >= 1 && lua_type(co, base) == LUA_TSTRING ? lua_tostring(co, base) : "";
    std::string detail;
    if (n >= 2 && lua_type(co, base + 1) == LUA_TSTRING) detail = lua_tostring(co, base + 1);
    if (std::strcmp(status, "ok") == 0) {
      *out = OpResult::Ok(detail.empty() ? "ok" : detail);
      if (n >= 3 && lua_isinteger(co, base + 2)) {
        out->has_value = true;
        out->value = lua_tointeger(co, base + 2);
      }
    } else if (std::strcmp(status, "fail") == 0) {
      *out = OpResult::Fail(detail.empty() ? "failed" : detail);
    } else if (std::strcmp(status, "unknown") == 0) {
      *out = OpResult::Info(detail.empty() ? "unknown" : detail);
    } else {
      *problem = "an operation must return \"ok\", \"fail\" or \"unknown\" (then a detail and a "
                 "value), not " + std::string(n >= 1 ? luaL_typename(co, base) : "nothing");
      if (n >= 1 && lua_type(co, base) == LUA_TSTRING) {
        *problem += " \"" + std::string(lua_tostring(co, base)).substr(0, 40) + "\"";
      }
      lua_settop(co, base - 1);
      return false;
    }
    lua_settop(co, base - 1);
    return true;
  }

  // The program raised an error, or was stopped: the task ends, an operation as unknown, and
  // the first such failure is the program's error, which the driver reports.
  void Fail(uint64_t task_id, const std::string& why) {
    Task& task = tasks_.at(task_id);
    const bool is_op = task.is_op;
    const int thread = task.thread;
    const std::string text = "client program error: " + why;
    if (program_error_.empty()) program_error_ = ProgramName() + ": " + why;
    DropTask(task_id);
    if (is_op) completions_.emplace_back(thread, OpResult::Info(text));
    if (!stop_.empty()) {
      // A program stopped by its limits is in no state to go on: like a crash, the process's
      // Lua state is made anew (its tasks are gone), and the stop is forgotten.
      std::vector<uint64_t> ids;
      for (const auto& [id, t] : tasks_) ids.push_back(id);
      for (uint64_t id : ids) {
        const Task& t = tasks_.at(id);
        if (t.is_op) completions_.emplace_back(t.thread, OpResult::Info(text));
        DropTask(id);
      }
      requests_.clear();
      timers_.clear();
      stop_.clear();
      std::string error;
      if (!Load(&error)) program_error_ = error;
    }
  }

  void FlushCompletions() {
    while (!completions_.empty()) {
      std::vector<std::pair<int, OpResult>> batch;
      batch.swap(completions_);
      for (const auto& [thread, result] : batch) out_->Complete(thread, result);
    }
  }

  const ClientConfig config_;
  const ScriptSet scripts_;
  const ClientProgramLimits limits_;

  lua_State* L_ = nullptr;
  int program_ref_ = LUA_NOREF;
  ClientDeclarations declarations_;
  size_t memory_used_ = 0;
  bool enforce_memory_ = false;
  uint64_t slice_steps_ = 0;
  std::string stop_;           // Why the running program was stopped ("" while it may run).
  std::string program_error_;  // The first error the program raised.

  Outbox* out_ = nullptr;  // During an entry point.

  uint64_t last_task_ = 0;
  uint64_t last_batch_ = 0;
  std::map<uint64_t, Task> tasks_;
  std::map<lua_State*, uint64_t> task_of_;  // Lookups only; never iterated.
  std::map<int, uint64_t> op_task_;         // Thread -> its operation's task.
  std::map<RequestId, std::pair<uint64_t, size_t>> requests_;
  std::map<TimerId, std::pair<uint64_t, int64_t>> timers_;  // -1: the task's sleep.
  std::vector<std::pair<uint64_t, int>> pending_starts_;    // Spawned, to run: (task, nargs).
  std::vector<std::pair<int, OpResult>> completions_;
};

}  // namespace

bool CheckClientProgramConfig(const std::string& kind, const ClientConfig& config,
                              const ScriptSet& scripts, std::string* error) {
  if (config.threads < 1 || config.threads > kThreadsMax) {
    *error = kind + ": threads must be 1.." + std::to_string(kThreadsMax) + ", not " +
             std::to_string(config.threads);
    return false;
  }
  if (config.timeout_us < 1000) {
    *error = kind + ": need timeout >= 1 ms";
    return false;
  }
  if (scripts.program.empty()) {
    *error = kind + ": no client program (protocol.client names its file)";
    return false;
  }
  ClientProgram probe(config, scripts, ClientProgramLimits{});
  return probe.Load(error);
}

bool ReadClientDeclarations(const ClientConfig& config, const ScriptSet& scripts,
                            ClientDeclarations* out, std::string* error) {
  ClientProgram probe(config, scripts, ClientProgramLimits{});
  if (!probe.Load(error)) return false;
  *out = probe.declarations();
  return true;
}

std::unique_ptr<LockProtocol> MakeClientProgram(const ClientConfig& config,
                                                const ScriptSet& scripts,
                                                const ClientProgramLimits& limits) {
  auto program = std::make_unique<ClientProgram>(config, scripts, limits);
  std::string error;
  const bool loaded = program->Load(&error);
  assert(loaded && "MakeClientProgram: see CheckClientProgramConfig");
  (void)loaded;
  return program;
}

std::unique_ptr<LockProtocol> MakeClientProgram(const std::string& kind, const ClientConfig& config,
                                                const ScriptSet& scripts) {
  (void)kind;
  return MakeClientProgram(config, scripts, ClientProgramLimits{});
}

}  // namespace lockstep::locks
