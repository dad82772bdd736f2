#include "history/names.h"

#include <cassert>

namespace lockstep::history {

namespace names {
const std::array<std::string_view, kVocabularySize> kVocabulary = {
    "",
    "sim",
    "sentinel",
    "acquire",
    "acquire_read",
    "release",
    "release_read",
    "force_unlock",
    "enter",
    "exit",
    "acquired",
    "released",
    "expired",
    "lost",
    "owners",
    "partition",
    "heal",
    "crash",
    "restart",
    "pause",
    "resume",
    "clock_jump",
    "failover",
    "promote",
    "lose_replies",
    "lose_replies_end",
    "latency",
    "latency_end",
    "loss",
    "loss_end",
    "duplicate",
    "duplicate_end",
    "run",
    "protocol",
    "cluster",
    "lease_default",
    "client",
    "role",
    "done",
    "rediscover",
    "end",
    "try_acquire",
    "get_count",
    "renew",
};
}  // namespace names

NameTable::NameTable() {
  for (std::string_view word : names::kVocabulary) {
    [[maybe_unused]] const Name id = Intern(word);
    assert(id + 1 == views_.size());
  }
  assert(views_.size() == names::kVocabularySize);
}

Name NameTable::Intern(std::string_view s) {
  if (auto it = ids_.find(s); it != ids_.end()) return it->second;
  const std::string& stored = storage_.emplace_back(s);
  const Name id = static_cast<Name>(views_.size());
  views_.push_back(stored);
  ids_.emplace(stored, id);
  return id;
}

Name NameTable::Find(std::string_view s) const {
  auto it = ids_.find(s);
  return it == ids_.end() ? names::kNone : it->second;
}

}  // namespace lockstep::history
