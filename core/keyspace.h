// The data-type layer of the emulated Redis: values (string, hash, list, sorted set, set), keys
// with expiry times on the owning node's millisecond clock, and nothing about commands or
// replies.
//
// Invariants:
//  (1) No aggregate value is ever empty: a command that empties a hash, list, sorted set or set
//      deletes the key (Redis does the same, and EXISTS is observable).
//  (2) expire_at_ms is kNoExpiry or an absolute time on the node's clock. A key is expired when
//      now_ms > expire_at_ms (strict, as db.c keyIsExpired): it is alive at its expiry millisecond.
//  (3) Iteration order of the key table never reaches output: Keys() returns sorted names.
//  (4) used_bytes() is the sum of every entry's charged_bytes, and an entry's charged_bytes is
//      its EstimateBytes as of the last Put or Recharge of its key (see "Used memory" below).
#ifndef LOCKSTEP_CORE_KEYSPACE_H_
#define LOCKSTEP_CORE_KEYSPACE_H_

#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

namespace lockstep {

inline constexpr int64_t kNoExpiry = -1;

// Eight bytes per multiply instead of std::hash's byte-wise mixing: key names are short, and
// lookups hash them several times per script. The key table's and a hash's field index's order
// is never observed (every listing of keys is sorted, a hash lists its fields in insertion
// order), so the hash can be anything fast and well spread. Transparent: a string_view looks
// up without building a std::string.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const {
    uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();
    const char* p = s.data();
    size_t n = s.size();
    for (; n >= 8; p += 8, n -= 8) {
      uint64_t w;
      std::memcpy(&w, p, 8);
      h = (h ^ w) * 0xFF51AFD7ED558CCDull;
      h ^= h >> 32;
    }
    uint64_t tail = 0;
    std::memcpy(&tail, p, n);
    h = (h ^ tail) * 0xC4CEB9FE1A85EC53ull;
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

// A hash in insertion order, as Redis's listpack encoding keeps it (which is what a client sees
// for hashes of up to 512 small fields): updating a field keeps its place, deleting and
// re-adding moves it to the end. Lock hashes hold one to a few fields, so a linear scan over a
// vector beats any tree or table here; past kIndexFrom fields an index (field -> position) takes
// over the lookups, so that a script filling a hash in a loop costs linear time, not quadratic.
class Hash {
 public:
  using Field = std::pair<std::string, std::string>;

  const std::string* Get(std::string_view field) const;
  // Returns true when the field is new.
  bool Set(std::string_view field, std::string value);
  // Returns true when the field existed.
  bool Erase(std::string_view field);
  size_t size() const { return fields_.size(); }
  bool empty() const { return fields_.empty(); }
  const std::vector<Field>& fields() const { return fields_; }
  // The bytes of every field name and value.
  size_t bytes() const { return bytes_; }

 private:
  static constexpr size_t kIndexFrom = 32;

  // The position of `field` in fields_, or fields_.size().
  size_t Find(std::string_view field) const;
  void Reindex();

  std::vector<Field> fields_;
  // Used only for lookups (never iterated): empty while the hash has kIndexFrom fields or fewer.
  std::unordered_map<std::string, size_t, StringHash, std::equal_to<>> index_;
  size_t bytes_ = 0;
};

// A list: a deque of elements that keeps the sum of their lengths, so that the used-memory
// estimate of a long list costs nothing to read.
class List {
 public:
  void push_front(std::string s) {
    bytes_ += s.size();
    items_.push_front(std::move(s));
  }
  void push_back(std::string s) {
    bytes_ += s.size();
    items_.push_back(std::move(s));
  }
  // Moves the first (last) element out and removes it.
  std::string take_front() {
    std::string s = std::move(items_.front());
    items_.pop_front();
    bytes_ -= s.size();
    return s;
  }
  std::string take_back() {
    std::string s = std::move(items_.back());
    items_.pop_back();
    bytes_ -= s.size();
    return s;
  }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  const std::string& operator[](size_t i) const { return items_[i]; }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  auto rbegin() const { return items_.rbegin(); }
  auto rend() const { return items_.rend(); }
  // Mutable iteration, only for moving every element out into a list that then replaces
  // this one (LREM): bytes() does not follow changes made through these.
  auto begin() { return items_.begin(); }
  auto end() { return items_.end(); }
  auto rbegin() { return items_.rbegin(); }
  auto rend() { return items_.rend(); }
  // The bytes of every element.
  size_t bytes() const { return bytes_; }

 private:
  std::deque<std::string> items_;
  size_t bytes_ = 0;
};

// A sorted set ordered by (score, member bytes), with a member -> score index.
class ZSet {
 public:
  struct Less {
    bool operator()(const std::pair<double, std::string>& a,
                    const std::pair<double, std::string>& b) const {
      if (a.first != b.first) return a.first < b.first;
      return a.second < b.second;
    }
  };
  using Ordered = std::set<std::pair<double, std::string>, Less>;

  const double* Score(std::string_view member) const;
  // Inserts or moves a member. Returns true when the member is new.
  bool Set(const std::string& member, double score);
  bool Erase(const std::string& member);
  size_t size() const { return scores_.size(); }
  bool empty() const { return scores_.empty(); }
  const Ordered& ordered() const { return ordered_; }
  // 0-based rank in ascending order, or -1.
  int64_t Rank(const std::string& member) const;

  // Redis keeps a sorted set in a listpack until a new member would make it hold more than 128
  // members or a member is longer than 64 bytes (zset-max-listpack-entries/-value defaults),
  // and never converts it back. A listpack stores an integral score as an integer, so a score
  // of -0 reads back as 0 there, while the skiplist keeps -0: ZSCORE shows "0" or "-0". Set()
  // follows the same rule.
  static constexpr size_t kListpackEntriesMax = 128;
  static constexpr size_t kListpackValueBytesMax = 64;
  bool is_listpack() const { return listpack_; }
  // The bytes of every member name.
  size_t bytes() const { return bytes_; }

 private:
  Ordered ordered_;
  std::unordered_map<std::string, double> scores_;
  bool listpack_ = true;
  size_t bytes_ = 0;
};

// A set (Redis's set type; "MemberSet" because cmd::Set is the SET command), encoded as Redis
// 7.0 encodes it, since the encoding decides the order SMEMBERS lists the members in: an
// intset (sorted 64-bit integers) while every member is an integer in string2ll's canonical
// form ("12", "-5"; not "012", "+5", "-0" or " 1") and there are at most kIntsetEntriesMax of
// them (set-max-intset-entries), and a hash table from the first member that breaks either rule
// on, never converted back (7.0 has no listpack sets; 7.2 added them). An intset lists its
// members in numeric order, as Redis does. A hash table lists them in the order of its buckets,
// which depends on redis-server's random hash seed, so no emulator can reproduce it: this one
// lists them in byte order (docs/fidelity.md, "Sets").
class MemberSet {
 public:
  static constexpr size_t kIntsetEntriesMax = 512;

  // Returns true when the member is new.
  bool Add(std::string_view member);
  // Returns true when the member was there.
  bool Erase(std::string_view member);
  bool Contains(std::string_view member) const;
  size_t size() const { return intset_ ? ints_.size() : strs_.size(); }
  bool empty() const { return size() == 0; }
  bool is_intset() const { return intset_; }
  // Every member, in the order SMEMBERS lists them (see above).
  std::vector<std::string> Members() const;
  // The bytes of every member (an intset's members as their decimal text).
  size_t bytes() const { return bytes_; }

 private:
  void ConvertToHashTable();

  bool intset_ = true;  // An empty set is an intset until its first member says otherwise.
  std::set<int64_t> ints_;                  // While intset_.
  std::set<std::string, std::less<>> strs_;  // Once a hash table.
  size_t bytes_ = 0;
};

enum class ValueType : uint8_t { kString, kHash, kList, kZSet, kSet };

// The name TYPE reports for each value type.
const char* TypeName(ValueType t);

struct Entry {
  std::variant<std::string, Hash, List, ZSet, MemberSet> value;
  int64_t expire_at_ms = kNoExpiry;
  // What this entry adds to Keyspace::used_bytes() (kept by the keyspace; see there).
  size_t charged_bytes = 0;

  ValueType type() const { return static_cast<ValueType>(value.index()); }
  std::string& str() { return std::get<std::string>(value); }
  Hash& hash() { return std::get<Hash>(value); }
  List& list() { return std::get<List>(value); }
  ZSet& zset() { return std::get<ZSet>(value); }
  MemberSet& set() { return std::get<MemberSet>(value); }
};

// Used memory. Redis decides "OOM command not allowed" by its allocator's count of used bytes,
// which no emulator can reproduce (it depends on encodings, jemalloc size classes and the
// server's own buffers). The keyspace keeps an estimate instead, for keys and values only (no
// server baseline, no client buffers, no Lua heap): per key kKeyOverheadBytes plus the key's
// length plus the value's bytes; a string's value is its length, an aggregate's is the bytes of
// its elements (list elements, hash fields and values, sorted-set and set members) plus
// kElementOverheadBytes per element (kZSetElementOverheadBytes for a sorted set, whose score
// and index cost more). Each data type keeps the sum of its element lengths up to date, so the
// estimate of any key is O(1); a command that changes a value in place is followed by
// Recharge(key) for each key it names (Server does this after every write command), and Put,
// Erase, Clear and ExpireAll keep the total themselves.
class Keyspace {
 public:
  static constexpr size_t kKeyOverheadBytes = 64;  // dict entry, key sds, value object
  static constexpr size_t kElementOverheadBytes = 16;
  static constexpr size_t kZSetElementOverheadBytes = 48;  // score, skiplist node, index entry

  Keyspace() = default;
  // A snapshot (AOF/RDB in the simulator) is a copy; the lookup memo is not copied (it points
  // into the source's nodes).
  Keyspace(const Keyspace& other) : table_(other.table_), used_bytes_(other.used_bytes_) {}
  Keyspace& operator=(const Keyspace& other) {
    table_ = other.table_;
    used_bytes_ = other.used_bytes_;
    Forget();
    return *this;
  }

  // The used-memory estimate of one key holding `entry` (see above).
  static size_t EstimateBytes(std::string_view key, const Entry& entry);
  // The estimate of the whole keyspace: the sum of every entry's charged_bytes.
  size_t used_bytes() const { return used_bytes_; }
  // Brings the key's charge up to date after its value was changed in place. No-op for a
  // missing key. O(1).
  void Recharge(std::string_view key);

  // Raw access: no expiry check. Expiry policy (lazy delete on a master, hide on a replica)
  // belongs to the command layer (server.h, Ctx::Lookup).
  Entry* Find(std::string_view key);
  const Entry* Find(std::string_view key) const;
  // Creates or replaces the key with a fresh entry (no expiry).
  Entry& Put(std::string_view key, Entry entry);
  bool Erase(std::string_view key);
  size_t size() const { return table_.size(); }
  void Clear() {
    table_.clear();
    used_bytes_ = 0;
    Forget();
  }

  static bool IsExpired(const Entry& e, int64_t now_ms) {
    return e.expire_at_ms != kNoExpiry && now_ms > e.expire_at_ms;
  }

  // All key names in byte order, expired ones included (callers filter).
  std::vector<std::string> SortedKeys() const;

  // SCAN's order: keys by ScanHash, a fixed 64-bit hash of their bytes that is never 0 (ties,
  // which are rare, in byte order). Not StringHash: SCAN's order is seen by clients and must
  // stay the same across versions, while the table's hash may change for speed at any time. ScanBatch returns the keys whose hash is at least `cursor`:
  // the `count` first in that order and every later one that shares the last one's hash,
  // expired ones included; *next is the hash of the first key after them, or 0 when none is
  // left. Since a cursor is a hash and not a position, a key present for a whole iteration is
  // returned exactly once whatever is added or deleted meanwhile, as Redis promises.
  static uint64_t ScanHash(std::string_view key);
  std::vector<std::string> ScanBatch(uint64_t cursor, uint64_t count, uint64_t* next) const;

  // Deletes every key expired at now_ms and returns their names in byte order. This stands in
  // for Redis's active expiry cycle (which samples randomly and cannot be matched exactly).
  std::vector<std::string> ExpireAll(int64_t now_ms);

 private:
  void Forget() const {
    memo_key_ = nullptr;
    memo_entry_ = nullptr;
  }

  std::unordered_map<std::string, Entry, StringHash, std::equal_to<>> table_;
  // The last key found, as the node's own key and entry (both stay put until the node is
  // erased): a script touches the same key several times in a row, and a hit skips the hash
  // and the bucket division.
  mutable const std::string* memo_key_ = nullptr;
  mutable Entry* memo_entry_ = nullptr;
  size_t used_bytes_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_KEYSPACE_H_
