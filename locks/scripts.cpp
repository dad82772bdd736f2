#include "locks/scripts.h"

#include "history/kinds.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "core/script_host.h"

namespace lockstep::locks {
namespace {

namespace fs = std::filesystem;

// Scripts larger than this are surely a wrong path (a log file, a binary), not a lock script.
constexpr std::uintmax_t kScriptBytesMax = 1u << 20;

bool ReadFile(const fs::path& path, std::string* body, std::string* error) {
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec) {
    *error = path.string() + ": cannot read: " + ec.message();
    return false;
  }
  if (size > kScriptBytesMax) {
    *error = path.string() + ": " + std::to_string(size) + " bytes, more than the " +
             std::to_string(kScriptBytesMax) + " a script may have";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = path.string() + ": cannot open: " + std::strerror(errno);
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    *error = path.string() + ": read error";
    return false;
  }
  *body = text.str();
  return true;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string joined;
  for (const std::string& name : names) {
    if (!joined.empty()) joined += ", ";
    joined += name;
  }
  return joined;
}

// Reads folder/*.lua (only `names` when not empty) into *set, keeping scripts already there.
bool ReadFolder(const fs::path& folder, const std::string& kind, const std::string& version,
                const std::vector<std::string>& names, ScriptSet* set, std::string* error) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    *error = folder.string() + ": no such script folder (lock kind '" + kind + "', version '" +
             version + "')";
    return false;
  }
  // directory_iterator's order is the file system's; collect into a map so that the set (and
  // any report listing it) is the same on every machine.
  std::map<std::string, fs::path> found;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, ec)) {
    if (entry.path().extension() != ".lua") continue;
    found.emplace(entry.path().stem().string(), entry.path());
  }
  if (ec) {
    *error = folder.string() + ": cannot list: " + ec.message();
    return false;
  }
  for (const auto& [name, path] : found) {
    if (!names.empty() && std::find(names.begin(), names.end(), name) == names.end()) continue;
    if (set->bodies.count(name) > 0) continue;
    std::string body;
    if (!ReadFile(path, &body, error)) return false;
    set->bodies[name] = std::move(body);
    set->files[name] = path.string();
  }
  return true;
}

}  // namespace

const std::vector<std::string>& RequiredScripts(const std::string& kind) {
  // From the kinds' table (history/kinds.h), as strings once.
  static const std::map<std::string, std::vector<std::string>> kRequired = [] {
    std::map<std::string, std::vector<std::string>> out;
    for (const history::ProtocolKind& k : history::kProtocolKinds) {
      std::vector<std::string>& names = out[std::string(k.name)];
      for (std::string_view name : k.scripts) {
        if (!name.empty()) names.emplace_back(name);
      }
    }
    return out;
  }();
  static const std::vector<std::string> kNone;
  const auto it = kRequired.find(kind);
  return it == kRequired.end() ? kNone : it->second;
}

bool HasScripts(const ScriptSet& scripts, const std::vector<std::string>& names,
                std::string* error) {
  std::vector<std::string> missing;
  for (const std::string& name : names) {
    if (scripts.bodies.count(name) == 0) missing.push_back(name);
  }
  if (missing.empty()) return true;
  *error = "missing script(s): " + JoinNames(missing);
  return false;
}

fs::path ClientProgramPath(const std::string& lua_dir, const std::string& client) {
  if (client.find('/') == std::string::npos && fs::path(client).extension() != ".lua") {
    return fs::path(lua_dir) / "clients" / client / "client.lua";
  }
  return fs::path(client);
}

std::optional<ScriptSet> LoadScripts(const std::string& lua_dir, const std::string& kind,
                                     history::ProtocolVersion version_id,
                                     const std::map<std::string, std::string>& overrides,
                                     std::string* error, const std::string& client) {
  const std::string version(history::VersionName(version_id));
  fs::path folder = fs::path(lua_dir) / kind / version;
  ScriptSet set;
  // Kinds whose scripts are not (all) in lua/<kind>/<version>/ say where they are.
  const history::ProtocolKind* known = history::FindProtocolKind(kind);
  if (known != nullptr && known->client_program) {
    // The client kind: the program, and its folder's other .lua files as its scripts.
    if (client.empty()) {
      *error = "lock kind '" + kind + "' needs protocol.client: a client program's file, or the "
               "name of a bundled one (lua/clients/<name>/client.lua)";
      return std::nullopt;
    }
    const fs::path program = ClientProgramPath(lua_dir, client);
    if (!ReadFile(program, &set.program, error)) return std::nullopt;
    set.program_file = program.string();
    folder = program.parent_path().empty() ? fs::path(".") : program.parent_path();
    if (!ReadFolder(folder, kind, version, {}, &set, error)) return std::nullopt;
    const std::string stem = program.stem().string();
    set.bodies.erase(stem);
    set.files.erase(stem);
  } else if (known != nullptr && !known->sources[0].folder.empty()) {
    for (const history::ScriptSource& source : known->sources) {
      if (source.folder.empty()) break;
      const std::string from = source.version.empty() ? version : std::string(source.version);
      folder = from == "." ? fs::path(lua_dir) / source.folder
                           : fs::path(lua_dir) / source.folder / from;
      std::vector<std::string> names;
      for (std::string_view name : source.names) {
        if (!name.empty()) names.emplace_back(name);
      }
      if (!ReadFolder(folder, kind, version, names, &set, error)) return std::nullopt;
    }
  } else if (!ReadFolder(folder, kind, version, {}, &set, error)) {
    return std::nullopt;
  }

  for (const std::string& name : RequiredScripts(kind)) {
    if (set.bodies.count(name) == 0) {
      *error = (folder / (name + ".lua")).string() + ": missing (" + kind + " needs " +
               JoinNames(RequiredScripts(kind)) + ")";
      return std::nullopt;
    }
  }

  for (const auto& [name, path] : overrides) {
    if (set.bodies.count(name) == 0) {
      std::vector<std::string> known;
      for (const auto& [known_name, unused] : set.bodies) known.push_back(known_name);
      *error = "script override '" + name + "' (" + path + "): " + kind + "/" + version +
               " has no script of that name (it has: " + JoinNames(known) + ")";
      return std::nullopt;
    }
    std::string body;
    std::string read_error;
    if (!ReadFile(path, &body, &read_error)) {
      *error = "script override '" + name + "': " + read_error;
      return std::nullopt;
    }
    set.bodies[name] = std::move(body);
    set.files[name] = path;
  }
  // Every script, stock or not, compiles before anything runs: a script that does not would
  // fail every call with "Error compiling script" while the run went on as if nothing were
  // wrong.
  for (const auto& [name, body] : set.bodies) {
    if (const std::string problem = ScriptHost::CompileError(body); !problem.empty()) {
      *error = set.files[name] + ": script '" + name + "' does not compile: " + problem;
      return std::nullopt;
    }
  }
  return set;
}

}  // namespace lockstep::locks
