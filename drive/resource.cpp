#include "drive/resource.h"

namespace lockstep::drive {

using history::EventType;
namespace names = history::names;

history::Event Resource::Enter(history::Name process, int thread, int64_t local_ms, bool read,
                               std::optional<int64_t> token) const {
  history::Event e;
  e.type = EventType::kResource;
  e.process = process;
  e.thread = thread;
  e.op = names::kEnter;
  e.lock = lock_;
  e.local_ms = local_ms;
  if (token) {
    e.has_value = true;
    e.value = *token;
  }
  if (read) e.detail = history::Access{true};
  return e;
}

history::Event Resource::Exit(history::Name process, int thread, int64_t local_ms,
                              std::optional<int64_t> token) {
  history::Event x;
  x.type = EventType::kResource;
  x.process = process;
  x.thread = thread;
  x.op = names::kExit;
  x.lock = lock_;
  x.local_ms = local_ms;
  if (token) {
    x.has_value = true;
    x.value = *token;
    if (fencing_) {
      if (*token < token_max_) {
        x.detail = history::Write{false, *token, token_max_};
      } else {
        token_max_ = *token;
        x.detail = history::Write{true, 0, 0};
      }
    }
  }
  return x;
}

}  // namespace lockstep::drive
