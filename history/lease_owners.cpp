#include "history/lease_owners.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <variant>

namespace lockstep::history {

std::string JoinOwners(std::vector<std::string> fields) {
  std::sort(fields.begin(), fields.end());
  std::string out;
  for (const std::string& n : fields) out += (out.empty() ? "" : ",") + n;
  return out;
}

std::string OwnersOf(const Entry& e) {
  switch (e.type()) {
    case ValueType::kHash: {
      std::vector<std::string> names;
      for (const auto& [field, value] : std::get<Hash>(e.value).fields()) names.push_back(field);
      return JoinOwners(std::move(names));
    }
    case ValueType::kString: return std::get<std::string>(e.value);
    default: return TypeName(e.type());
  }
}

bool OwnersAre(const Entry& e, std::string_view owners) {
  switch (e.type()) {
    case ValueType::kHash: {
      const auto& fields = std::get<Hash>(e.value).fields();
      // The field names sorted on the stack: a lock hash holds one to a few fields.
      constexpr size_t kFieldsMax = 8;
      if (fields.size() > kFieldsMax) return OwnersOf(e) == owners;
      std::array<const std::string*, kFieldsMax> sorted;
      size_t count = 0;
      for (const auto& [field, value] : fields) sorted[count++] = &field;
      std::sort(sorted.begin(), sorted.begin() + count,
                [](const std::string* a, const std::string* b) { return *a < *b; });
      // Read `owners` as OwnersOf writes it: a comma before each name once the text is not empty.
      size_t at = 0;
      for (size_t i = 0; i < count; ++i) {
        if (at > 0) {
          if (at == owners.size() || owners[at] != ',') return false;
          ++at;
        }
        const std::string& name = *sorted[i];
        if (owners.substr(at, name.size()) != name) return false;
        at += name.size();
      }
      return at == owners.size();
    }
    case ValueType::kString: return std::get<std::string>(e.value) == owners;
    default: return TypeName(e.type()) == owners;
  }
}

std::string OwnersGone(std::string_view before, std::string_view after) {
  const auto fields = [](std::string_view text) {
    std::vector<std::string_view> out;
    while (!text.empty()) {
      const size_t comma = text.find(',');
      out.push_back(text.substr(0, comma));
      if (comma == std::string_view::npos) break;
      text.remove_prefix(comma + 1);
    }
    return out;
  };
  const std::vector<std::string_view> kept = fields(after);
  std::vector<std::string> gone;
  for (std::string_view f : fields(before)) {
    if (std::find(kept.begin(), kept.end(), f) == kept.end()) gone.emplace_back(f);
  }
  return JoinOwners(std::move(gone));
}

Name LeaseOpOf(std::string_view before, std::string_view after, bool timed_out, Name gone_as) {
  assert(before != after);
  // Gone because its time ran out (seen by active expiry or by a lookup), or removed.
  if (after.empty()) return timed_out ? names::kExpired : gone_as;
  if (before.empty()) return names::kAcquired;
  return names::kOwners;  // The set of owner fields changed (a read lock joined, say).
}

Event LeaseEvent(Name node, Name lock, Name op, std::string_view owners, int64_t local_ms) {
  Event ev;
  ev.type = EventType::kLease;
  ev.process = node;
  ev.lock = lock;
  ev.local_ms = local_ms;
  ev.op = op;
  if (!owners.empty()) ev.detail = Owners{owners};
  return ev;
}

Event HolderValueNote(Name client, int thread, std::string_view value, int64_t local_ms) {
  Event e;
  e.type = EventType::kNote;
  e.process = client;
  e.thread = thread;
  e.op = names::kHolderValue;
  e.local_ms = local_ms;
  e.detail = HolderNote{value};
  return e;
}

}  // namespace lockstep::history
