// Loading the Lua scripts a lock protocol sends: the defaults from lua/<kind>/<version>/*.lua,
// and a scenario's replacements for any of them ("run my broken unlock instead").
//
// A missing or unreadable file is an expected failure (a typo in a scenario, a version folder
// that does not exist), so it comes back as a message, never as an exception or an abort.
#ifndef LOCKSTEP_LOCKS_SCRIPTS_H_
#define LOCKSTEP_LOCKS_SCRIPTS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "locks/protocol.h"

namespace lockstep::locks {

// Loads every lua_dir/<kind>/<version>/<name>.lua as script `name`, then replaces the bodies
// named in `overrides` (name -> file path) with the contents of those files.
//
// Fails, with a message in *error, when: the folder does not exist; a file cannot be read; an
// override names a script the folder does not have (a typo would otherwise run the default
// silently); a script the kind needs is missing (RequiredScripts); or a script does not compile
// as redis-server compiles it (the message has its path and Redis's error).
//
// The client kind (a client written as a Lua program) takes its program from `client`: a path
// (resolved by the caller), or a bundled client's name, lua_dir/clients/<name>/client.lua. Its
// scripts are the other .lua files of the program's folder.
std::optional<ScriptSet> LoadScripts(const std::string& lua_dir, const std::string& kind,
                                     history::ProtocolVersion version,
                                     const std::map<std::string, std::string>& overrides,
                                     std::string* error, const std::string& client = {});

// The script names a protocol kind cannot run without ("rlock" -> acquire, unlock, renew,
// force_unlock). Empty for kinds that do not declare theirs here.
const std::vector<std::string>& RequiredScripts(const std::string& kind);

// True when every name in `names` has a body in `scripts`; otherwise false with the missing
// names in *error.
bool HasScripts(const ScriptSet& scripts, const std::vector<std::string>& names,
                std::string* error);

}  // namespace lockstep::locks

#endif  // LOCKSTEP_LOCKS_SCRIPTS_H_
