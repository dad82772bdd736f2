// The values client programs announce as their holders' (holder_value notes), and whose each
// is: a lock key holding such a value is held by that owner. A library that draws a fresh value
// for every acquisition announces each one; only the last few of each owner are kept, so that a
// long run's readers stay small: an older value left in a key (a release that never ran, long
// after) is then no known owner's, as a value of a dead incarnation is.
#ifndef LOCKSTEP_HISTORY_HOLDER_VALUES_H_
#define LOCKSTEP_HISTORY_HOLDER_VALUES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep::history {

class HolderValues {
 public:
  // Values kept per owner: its current one and those of its latest acquisitions before it.
  static constexpr size_t kKeptPerOwner = 8;

  bool empty() const { return owner_of_.empty(); }

  // `owner` writes `value` from now on. A value announced again moves to its new owner.
  void Announce(std::string_view value, int64_t owner) {
    const auto it = owner_of_.find(value);
    if (it != owner_of_.end()) {
      Drop(it->second, value);
      it->second = owner;
    } else {
      owner_of_.emplace(std::string(value), owner);
    }
    std::vector<std::string>& kept = recent_[owner];
    kept.emplace_back(value);
    if (kept.size() > kKeptPerOwner) {
      const auto oldest = owner_of_.find(kept.front());
      if (oldest != owner_of_.end() && oldest->second == owner) owner_of_.erase(oldest);
      kept.erase(kept.begin());
    }
  }

  // The owner who announced `value`, if it is still kept.
  std::optional<int64_t> Find(std::string_view value) const {
    if (owner_of_.empty()) return std::nullopt;
    const auto it = owner_of_.find(value);
    if (it == owner_of_.end()) return std::nullopt;
    return it->second;
  }

  // Forgets every value `owner` announced (its process restarted: the values are a dead
  // incarnation's).
  void Forget(int64_t owner) {
    const auto it = recent_.find(owner);
    if (it == recent_.end()) return;
    for (const std::string& value : it->second) {
      const auto v = owner_of_.find(value);
      if (v != owner_of_.end() && v->second == owner) owner_of_.erase(v);
    }
    recent_.erase(it);
  }

 private:
  void Drop(int64_t owner, std::string_view value) {
    const auto it = recent_.find(owner);
    if (it == recent_.end()) return;
    std::vector<std::string>& kept = it->second;
    kept.erase(std::remove(kept.begin(), kept.end(), value), kept.end());
  }

  std::map<std::string, int64_t, std::less<>> owner_of_;
  std::map<int64_t, std::vector<std::string>> recent_;
};

}  // namespace lockstep::history

#endif  // LOCKSTEP_HISTORY_HOLDER_VALUES_H_
