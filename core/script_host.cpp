// STUB: to be implemented.
#include "core/script_host.h"
namespace lockstep {
struct ScriptHost::Impl {};
ScriptHost::ScriptHost(Server&, uint64_t, size_t) : impl_(std::make_unique<Impl>()) {}
ScriptHost::~ScriptHost() = default;
Reply ScriptHost::Eval(Ctx&, const Argv&) { return Reply::Error("ERR scripting not implemented yet"); }
Reply ScriptHost::Script(Ctx&, const Argv&) { return Reply::Error("ERR scripting not implemented yet"); }
std::string ScriptHost::Sha1Hex(std::string_view) { return ""; }
uint64_t ScriptHost::last_script_steps() const { return 0; }
}  // namespace lockstep
