// Looking up a driver's processes by name: both drivers keep their nodes and clients as
// vectors of owned objects with a `name`, in scenario order.
#ifndef LOCKSTEP_DRIVE_NAMED_H_
#define LOCKSTEP_DRIVE_NAMED_H_

#include <memory>
#include <string_view>
#include <vector>

namespace lockstep::drive {

// The first of `items` whose name is `name`, or null.
template <typename T>
T* FindNamed(const std::vector<std::unique_ptr<T>>& items, std::string_view name) {
  for (const std::unique_ptr<T>& item : items) {
    if (item->name == name) return item.get();
  }
  return nullptr;
}

}  // namespace lockstep::drive

#endif  // LOCKSTEP_DRIVE_NAMED_H_
