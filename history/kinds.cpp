#include "history/kinds.h"

namespace lockstep::history {

const ProtocolKind* FindProtocolKind(std::string_view name) {
  for (const ProtocolKind& k : kProtocolKinds) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

}  // namespace lockstep::history
