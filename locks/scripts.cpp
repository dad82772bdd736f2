#include "locks/scripts.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

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

// Kinds whose scripts are not (all) in lua/<kind>/<version>/: the folders they are read from,
// in this order. An empty version means the requested one, "." a folder without version
// levels; an empty name list takes every .lua file. A later folder never replaces a script an
// earlier one gave.
struct ScriptSource {
  std::string folder;
  std::string version;
  std::vector<std::string> names;
};

const std::vector<ScriptSource>* ScriptSources(const std::string& kind) {
  static const std::map<std::string, std::vector<ScriptSource>> kSources = {
      {"redlock", {{"rlock", "", {}}}},
      {"multilock", {{"rlock", "", {}}}},
      {"fencedlock", {{"fencedlock", "", {}}, {"rlock", "", {"unlock", "renew", "force_unlock"}}}},
      {"spinlock", {{"spinlock", "", {}}, {"rlock", "", {"renew"}}}},
      {"fairlock", {{"fairlock", "", {}}, {"rlock", "", {"renew"}}}},
      // The write side's watchdog is RLock's renew with the field "<uuid>:<tid>:write".
      {"rwlock", {{"rwlock", "", {}}, {"rlock", "", {"renew"}}}},
      // One set of scripts for both versions: 3.13.6 differs only in the literal PUBLISH,
      // and the client passes "publish" as the publish command.
      {"semaphore", {{"semaphore", "current", {}}}},
      {"countdownlatch", {{"countdownlatch", "current", {}}}},
      {"setnx-px", {{"plain", ".", {}}}},
      {"setnx-expire", {{"plain", ".", {}}}},
      {"get-del", {{"plain", ".", {}}}},
  };
  const auto it = kSources.find(kind);
  return it == kSources.end() ? nullptr : &it->second;
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
  static const std::map<std::string, std::vector<std::string>> kRequired = {
      {"rlock", {"acquire", "unlock", "renew", "force_unlock"}},
      {"redlock", {"acquire", "unlock", "renew", "force_unlock"}},
      {"multilock", {"acquire", "unlock", "renew", "force_unlock"}},
      {"fencedlock", {"acquire_with_token", "unlock", "renew", "force_unlock"}},
      {"spinlock", {"acquire", "unlock", "renew", "force_unlock"}},
      {"fairlock",
       {"acquire", "try_acquire", "unlock", "force_unlock", "acquire_failed", "renew"}},
      {"rwlock",
       {"read_acquire", "write_acquire", "read_unlock", "write_unlock", "read_renew", "renew",
        "force_unlock_read", "force_unlock_write"}},
      {"semaphore", {"try_acquire", "release", "try_set_permits"}},
      {"countdownlatch", {"try_set_count", "count_down", "delete"}},
      {"setnx-px", {"unlock_compare_and_delete"}},
      {"setnx-expire", {"unlock_compare_and_delete"}},
  };
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

std::optional<ScriptSet> LoadScripts(const std::string& lua_dir, const std::string& kind,
                                     const std::string& version,
                                     const std::map<std::string, std::string>& overrides,
                                     std::string* error) {
  fs::path folder = fs::path(lua_dir) / kind / version;
  ScriptSet set;
  if (const std::vector<ScriptSource>* sources = ScriptSources(kind)) {
    for (const ScriptSource& source : *sources) {
      const std::string from = source.version.empty() ? version : source.version;
      folder = from == "." ? fs::path(lua_dir) / source.folder
                           : fs::path(lua_dir) / source.folder / from;
      if (!ReadFolder(folder, kind, version, source.names, &set, error)) return std::nullopt;
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
  return set;
}

}  // namespace lockstep::locks
