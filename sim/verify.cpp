#include "sim/verify.h"

#include <variant>

#include "history/lease_owners.h"

namespace lockstep::sim {
namespace {

// The key as the node has it: its fields and values (or its value), and its time to live.
std::string KeyText(const Entry* live, int64_t now_ms) {
  if (live == nullptr) return "no key";
  std::string out;
  switch (live->type()) {
    case ValueType::kHash:
      out = "a hash {";
      for (const auto& [field, value] : std::get<Hash>(live->value).fields()) {
        out += (out.back() == '{' ? "" : ", ") + field + "=" + value;
      }
      out += "}";
      break;
    case ValueType::kString: out = "the string \"" + std::get<std::string>(live->value) + "\""; break;
    case ValueType::kSet:
      out = "a set {";
      for (const std::string& member : std::get<MemberSet>(live->value).Members()) {
        out += (out.back() == '{' ? "" : ", ") + member;
      }
      out += "}";
      break;
    default: out = std::string("a ") + TypeName(live->type()); break;
  }
  out += live->expire_at_ms == kNoExpiry
             ? ", no expiry"
             : ", expiring in " + std::to_string(live->expire_at_ms - now_ms) + " ms";
  return out;
}

}  // namespace

std::string CompareKeyView(const history::FactsPass& facts, history::Name node, history::Name lock,
                           const Entry* live, int64_t now_ms) {
  const int p = facts.ProcessNamed(node);
  const int l = facts.LockNamed(lock);
  const std::string_view believed =
      p == history::kNone || l == history::kNone ? std::string_view() : facts.KeyOn(p, l);
  const std::string actual = live != nullptr ? history::OwnersOf(*live) : std::string();
  if (believed == actual) return "";
  return "the facts pass believes, from the lease events, that the key holds " +
         (believed.empty() ? std::string("nothing") : "\"" + std::string(believed) + "\"") +
         "; the node's key is " + KeyText(live, now_ms);
}

}  // namespace lockstep::sim
