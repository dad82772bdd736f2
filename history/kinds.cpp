#include "history/kinds.h"

namespace lockstep::history {

const ProtocolKind* FindProtocolKind(std::string_view name) {
  for (const ProtocolKind& k : kProtocolKinds) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

bool TakesRole(const ProtocolKind& kind, std::string_view role) {
  if (role == "worker") return true;
  for (std::string_view r : kind.roles) {
    if (!r.empty() && r == role) return true;
  }
  return false;
}

}  // namespace lockstep::history
