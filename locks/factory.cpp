#include "locks/factory.h"

#include "history/kinds.h"
#include "locks/client/client_program.h"
#include "locks/countdownlatch/countdownlatch.h"
#include "locks/fairlock/fairlock.h"
#include "locks/fencedlock/fencedlock.h"
#include "locks/plainlock/plainlock.h"
#include "locks/redlock/redlock.h"
#include "locks/rlock/rlock.h"
#include "locks/rwlock/rwlock.h"
#include "locks/semaphore/semaphore.h"
#include "locks/spinlock/spinlock.h"

namespace lockstep::locks {

namespace {

// A kind's client: whether a config and a script set can run, and the client itself (the kind
// is passed to clients that serve several).
struct Registration {
  std::string_view kind;
  bool (*check)(const std::string& kind, const ClientConfig&, const ScriptSet&, std::string*);
  std::unique_ptr<LockProtocol> (*make)(const std::string& kind, const ClientConfig&,
                                        const ScriptSet&);
};

// One row per kind.
const Registration kRegistrations[] = {
    {"rlock", [](const std::string&, const ClientConfig& c, const ScriptSet& s,
                 std::string* e) { return CheckRLockConfig(c, s, e); },
     [](const std::string&, const ClientConfig& c, const ScriptSet& s) { return MakeRLock(c, s); }},
    {"fairlock", [](const std::string&, const ClientConfig& c, const ScriptSet& s,
                    std::string* e) { return CheckFairLockConfig(c, s, e); },
     [](const std::string&, const ClientConfig& c, const ScriptSet& s) { return MakeFairLock(c, s); }},
    {"redlock", [](const std::string&, const ClientConfig& c, const ScriptSet& s,
                   std::string* e) { return CheckMultiLockConfig(c, s, e); },
     [](const std::string&, const ClientConfig& c, const ScriptSet& s) { return MakeRedLock(c, s); }},
    {"multilock", [](const std::string&, const ClientConfig& c, const ScriptSet& s,
                     std::string* e) { return CheckMultiLockConfig(c, s, e); },
     [](const std::string&, const ClientConfig& c, const ScriptSet& s) {
       return MakeMultiLock(c, s, MultiLockOptions{});
     }},
    {"fencedlock", [](const std::string&, const ClientConfig& c, const ScriptSet& s,
                      std::string* e) { return CheckFencedLockConfig(c, s, e); },
     [](const std::string&, const ClientConfig& c, const ScriptSet& s) { return MakeFencedLock(c, s); }},
    {"spinlock", [](const std::string&, const ClientConfig& c, const ScriptSet& s,
                    std::string* e) { return CheckSpinLockConfig(c, s, e); },
     [](const std::string&, const ClientConfig& c, const ScriptSet& s) { return MakeSpinLock(c, s); }},
    {"setnx-px", CheckPlainLockConfig, MakePlainLock},
    {"setnx-expire", CheckPlainLockConfig, MakePlainLock},
    {"get-del", CheckPlainLockConfig, MakePlainLock},
    {"rwlock", [](const std::string&, const ClientConfig& c, const ScriptSet& s,
                  std::string* e) { return CheckRwLockConfig(c, s, e); },
     [](const std::string&, const ClientConfig& c, const ScriptSet& s) { return MakeRwLock(c, s); }},
    {"semaphore", [](const std::string&, const ClientConfig& c, const ScriptSet& s,
                     std::string* e) { return CheckSemaphoreConfig(c, s, e); },
     [](const std::string&, const ClientConfig& c, const ScriptSet& s) { return MakeSemaphore(c, s); }},
    {"client", CheckClientProgramConfig, MakeClientProgram},
    {"countdownlatch", [](const std::string&, const ClientConfig& c, const ScriptSet& s,
                          std::string* e) { return CheckCountDownLatchConfig(c, s, e); },
     [](const std::string&, const ClientConfig& c, const ScriptSet& s) {
       return MakeCountDownLatch(c, s);
     }},
};

const Registration* Find(std::string_view kind) {
  for (const Registration& r : kRegistrations) {
    if (r.kind == kind) return &r;
  }
  return nullptr;
}

}  // namespace

const std::vector<std::string>& ProtocolKinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> out;
    for (const history::ProtocolKind& k : history::kProtocolKinds) out.emplace_back(k.name);
    return out;
  }();
  return kinds;
}

bool HasClient(std::string_view kind) { return Find(kind) != nullptr; }

std::unique_ptr<LockProtocol> MakeProtocol(const std::string& kind, const ClientConfig& config,
                                           const ScriptSet& scripts, std::string* error) {
  const Registration* r = Find(kind);
  if (r == nullptr || history::FindProtocolKind(kind) == nullptr) {
    std::string known;
    for (const std::string& k : ProtocolKinds()) known += (known.empty() ? "" : ", ") + k;
    *error = "unknown protocol kind '" + kind + "' (known: " + known + ")";
    return nullptr;
  }
  if (!r->check(kind, config, scripts, error)) return nullptr;
  return r->make(kind, config, scripts);
}

}  // namespace lockstep::locks
