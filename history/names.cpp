#include "history/names.h"

#include <cassert>
#include <limits>

namespace lockstep::history {

NameTable::NameTable() {
  for (std::string_view word : names::kVocabulary) {
    [[maybe_unused]] const Name id = Intern(word);
    assert(id + 1 == size_);
  }
  assert(size_ == names::kVocabularySize);
}

Name NameTable::Intern(std::string_view s) {
  if (auto it = ids_.find(s); it != ids_.end()) return it->second;
  assert(size_ <= std::numeric_limits<Name>::max());
  const Name id = static_cast<Name>(size_);
  const uint64_t j = uint64_t{id} + kFirstSegment;
  const int segment = std::bit_width(j) - kFirstSegmentBits - 1;
  std::unique_ptr<std::string_view[]>& views = segments_[static_cast<size_t>(segment)];
  if (views == nullptr) views = std::make_unique<std::string_view[]>(kFirstSegment << segment);
  const std::string& stored = storage_.emplace_back(s);
  views[j - (kFirstSegment << segment)] = stored;
  ++size_;
  ids_.emplace(stored, id);
  return id;
}

Name NameTable::Find(std::string_view s) const {
  auto it = ids_.find(s);
  return it == ids_.end() ? names::kNone : it->second;
}

}  // namespace lockstep::history
