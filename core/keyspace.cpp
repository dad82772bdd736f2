#include "core/keyspace.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <iterator>
#include <optional>
#include <utility>

#include "core/strings.h"

namespace lockstep {

size_t Hash::Find(std::string_view field) const {
  if (!index_.empty()) {
    auto it = index_.find(field);
    return it == index_.end() ? fields_.size() : it->second;
  }
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].first == field) return i;
  }
  return fields_.size();
}

void Hash::Reindex() {
  index_.clear();
  if (fields_.size() <= kIndexFrom) return;
  index_.reserve(fields_.size());
  for (size_t i = 0; i < fields_.size(); ++i) index_.emplace(fields_[i].first, i);
}

const std::string* Hash::Get(std::string_view field) const {
  const size_t i = Find(field);
  return i == fields_.size() ? nullptr : &fields_[i].second;
}

bool Hash::Set(std::string_view field, std::string value) {
  const size_t i = Find(field);
  if (i != fields_.size()) {
    Field& f = fields_[i];
    bytes_ = bytes_ - f.second.size() + value.size();
    f.second = std::move(value);
    return false;
  }
  bytes_ += field.size() + value.size();
  fields_.emplace_back(std::string(field), std::move(value));
  if (!index_.empty()) {
    index_.emplace(fields_.back().first, fields_.size() - 1);
  } else if (fields_.size() > kIndexFrom) {
    Reindex();
  }
  return true;
}

bool Hash::Erase(std::string_view field) {
  const size_t i = Find(field);
  if (i == fields_.size()) return false;
  assert(bytes_ >= fields_[i].first.size() + fields_[i].second.size());
  bytes_ -= fields_[i].first.size() + fields_[i].second.size();
  fields_.erase(fields_.begin() + static_cast<std::ptrdiff_t>(i));
  if (!index_.empty()) Reindex();
  return true;
}

const double* ZSet::Score(std::string_view member) const {
  auto it = scores_.find(std::string(member));
  return it == scores_.end() ? nullptr : &it->second;
}

bool ZSet::Set(const std::string& member, double score) {
  if (listpack_ && scores_.find(member) == scores_.end() &&
      (scores_.size() + 1 > kListpackEntriesMax || member.size() > kListpackValueBytesMax)) {
    listpack_ = false;  // Redis converts before inserting, so this member may keep a -0.
  }
  if (listpack_ && score == 0) score = 0.0;  // Turns -0 into 0, as the listpack's integer does.
  auto [it, inserted] = scores_.try_emplace(member, score);
  if (!inserted) {
    if (it->second == score) return false;
    ordered_.erase({it->second, member});
    it->second = score;
  }
  ordered_.insert({score, member});
  assert(ordered_.size() == scores_.size());
  if (inserted) bytes_ += member.size();
  return inserted;
}

bool ZSet::Erase(const std::string& member) {
  auto it = scores_.find(member);
  if (it == scores_.end()) return false;
  ordered_.erase({it->second, member});
  scores_.erase(it);
  assert(ordered_.size() == scores_.size());
  assert(bytes_ >= member.size());
  bytes_ -= member.size();
  return true;
}

int64_t ZSet::Rank(const std::string& member) const {
  auto it = scores_.find(member);
  if (it == scores_.end()) return -1;
  auto pos = ordered_.find({it->second, member});
  assert(pos != ordered_.end());
  return static_cast<int64_t>(std::distance(ordered_.begin(), pos));
}

bool MemberSet::Add(std::string_view member) {
  if (intset_) {
    // setTypeAdd: an integer joins the intset, which becomes a hash table once it holds more
    // than kIntsetEntriesMax; anything else makes it a hash table first.
    if (const std::optional<int64_t> v = ParseInt64(member)) {
      if (!ints_.insert(*v).second) return false;
      bytes_ += member.size();
      if (ints_.size() > kIntsetEntriesMax) ConvertToHashTable();
      return true;
    }
    ConvertToHashTable();
  }
  if (!strs_.emplace(member).second) return false;
  bytes_ += member.size();
  return true;
}

bool MemberSet::Erase(std::string_view member) {
  if (intset_) {
    // A member that is not a canonical integer cannot be in an intset.
    const std::optional<int64_t> v = ParseInt64(member);
    if (!v || ints_.erase(*v) == 0) return false;
  } else {
    const auto it = strs_.find(member);
    if (it == strs_.end()) return false;
    strs_.erase(it);
  }
  assert(bytes_ >= member.size());
  bytes_ -= member.size();
  return true;
}

bool MemberSet::Contains(std::string_view member) const {
  if (intset_) {
    const std::optional<int64_t> v = ParseInt64(member);
    return v && ints_.count(*v) != 0;
  }
  return strs_.find(member) != strs_.end();
}

std::vector<std::string> MemberSet::Members() const {
  std::vector<std::string> out;
  out.reserve(size());
  if (intset_) {
    for (const int64_t v : ints_) out.push_back(FormatInt64(v));
  } else {
    out.assign(strs_.begin(), strs_.end());
  }
  return out;
}

void MemberSet::ConvertToHashTable() {
  assert(intset_);
  for (const int64_t v : ints_) strs_.insert(FormatInt64(v));
  ints_.clear();
  intset_ = false;
}

const char* TypeName(ValueType t) {
  switch (t) {
    case ValueType::kString: return "string";
    case ValueType::kHash: return "hash";
    case ValueType::kList: return "list";
    case ValueType::kZSet: return "zset";
    case ValueType::kSet: return "set";
  }
  return "none";
}

Entry* Keyspace::Find(std::string_view key) {
  return const_cast<Entry*>(std::as_const(*this).Find(key));
}

const Entry* Keyspace::Find(std::string_view key) const {
  if (memo_key_ != nullptr && *memo_key_ == key) return memo_entry_;
  auto it = table_.find(key);
  if (it == table_.end()) return nullptr;
  memo_key_ = &it->first;
  memo_entry_ = const_cast<Entry*>(&it->second);
  return &it->second;
}

size_t Keyspace::EstimateBytes(std::string_view key, const Entry& entry) {
  size_t value = 0;
  switch (entry.type()) {
    case ValueType::kString:
      value = std::get<std::string>(entry.value).size();
      break;
    case ValueType::kHash: {
      const Hash& h = std::get<Hash>(entry.value);
      value = h.bytes() + h.size() * kElementOverheadBytes;
      break;
    }
    case ValueType::kList: {
      const List& l = std::get<List>(entry.value);
      value = l.bytes() + l.size() * kElementOverheadBytes;
      break;
    }
    case ValueType::kZSet: {
      const ZSet& z = std::get<ZSet>(entry.value);
      value = z.bytes() + z.size() * kZSetElementOverheadBytes;
      break;
    }
    case ValueType::kSet: {
      const MemberSet& m = std::get<MemberSet>(entry.value);
      value = m.bytes() + m.size() * kElementOverheadBytes;
      break;
    }
  }
  return kKeyOverheadBytes + key.size() + value;
}

Entry& Keyspace::Put(std::string_view key, Entry entry) {
  // Callers put mostly keys they have just found missing: one hash and one probe for those.
  auto [it, inserted] = table_.try_emplace(std::string(key));
  if (!inserted) {
    assert(used_bytes_ >= it->second.charged_bytes);
    used_bytes_ -= it->second.charged_bytes;
  }
  it->second = std::move(entry);
  it->second.charged_bytes = EstimateBytes(key, it->second);
  used_bytes_ += it->second.charged_bytes;
  return it->second;
}

void Keyspace::Recharge(std::string_view key) {
  Entry* e = Find(key);
  if (e == nullptr) return;
  const size_t now = EstimateBytes(key, *e);
  assert(used_bytes_ >= e->charged_bytes);
  used_bytes_ = used_bytes_ - e->charged_bytes + now;
  e->charged_bytes = now;
}

bool Keyspace::Erase(std::string_view key) {
  auto it = table_.find(key);
  if (it == table_.end()) return false;
  Forget();
  assert(used_bytes_ >= it->second.charged_bytes);
  used_bytes_ -= it->second.charged_bytes;
  table_.erase(it);
  return true;
}

std::vector<std::string> Keyspace::SortedKeys() const {
  std::vector<std::string> keys;
  keys.reserve(table_.size());
  for (const auto& [k, v] : table_) keys.push_back(k);
  std::sort(keys.begin(), keys.end());
  return keys;
}

uint64_t Keyspace::ScanHash(std::string_view key) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a, then splitmix64's finaliser to spread it.
  for (const unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h == 0 ? 1 : h;
}

std::vector<std::string> Keyspace::ScanBatch(uint64_t cursor, uint64_t count,
                                             uint64_t* next) const {
  assert(count >= 1);
  using Candidate = std::pair<uint64_t, const std::string*>;
  std::vector<Candidate> candidates;
  for (const auto& [k, v] : table_) {
    const uint64_t h = ScanHash(k);
    if (h >= cursor) candidates.emplace_back(h, &k);
  }
  const auto before = [](const Candidate& a, const Candidate& b) {
    return a.first != b.first ? a.first < b.first : *a.second < *b.second;
  };
  auto end = candidates.end();
  *next = 0;
  if (count < candidates.size()) {
    const auto cut = candidates.begin() + static_cast<std::ptrdiff_t>(count);
    std::nth_element(candidates.begin(), cut - 1, candidates.end(), before);
    // cut - 1 holds the count-th key; those after it are later. Keys with its hash go too, so
    // that the next cursor (a hash) does not return them again.
    const uint64_t last = (cut - 1)->first;
    end = std::partition(cut, candidates.end(), [last](const Candidate& c) { return c.first == last; });
    for (auto it = end; it != candidates.end(); ++it) {
      if (*next == 0 || it->first < *next) *next = it->first;
    }
  }
  std::sort(candidates.begin(), end, before);
  std::vector<std::string> keys;
  keys.reserve(static_cast<size_t>(end - candidates.begin()));
  for (auto it = candidates.begin(); it != end; ++it) keys.push_back(*it->second);
  return keys;
}

std::vector<std::string> Keyspace::ExpireAll(int64_t now_ms) {
  std::vector<std::string> gone;
  Forget();
  for (auto it = table_.begin(); it != table_.end();) {
    if (IsExpired(it->second, now_ms)) {
      gone.push_back(it->first);
      assert(used_bytes_ >= it->second.charged_bytes);
      used_bytes_ -= it->second.charged_bytes;
      it = table_.erase(it);
    } else {
      ++it;
    }
  }
  std::sort(gone.begin(), gone.end());
  return gone;
}

}  // namespace lockstep
