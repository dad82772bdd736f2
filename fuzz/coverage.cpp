#include "fuzz/coverage.h"

#include <algorithm>

#include "history/fault_kinds.h"
#include "history/names.h"
#include "history/notes.h"

namespace lockstep::fuzz {

namespace names = history::names;
using history::EventType;

namespace {

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xFF51AFD7ED558CCDull;
}

bool IsAcquire(history::Name op) {
  return op == names::kAcquire || op == names::kAcquireRead;
}
bool IsRelease(history::Name op) {
  return op == names::kRelease || op == names::kReleaseRead || op == names::kForceUnlock;
}

}  // namespace

void CoverageSink::OnEvent(const history::Event& e) {
  switch (e.type) {
    case EventType::kInvoke: {
      if (IsAcquire(e.op)) threads_[{e.process, e.thread}] = kWaiting;
      if (IsRelease(e.op)) threads_[{e.process, e.thread}] = kReleasing;
      break;
    }
    case EventType::kOk:
      if (IsAcquire(e.op)) threads_[{e.process, e.thread}] = kHolding;
      if (IsRelease(e.op)) threads_[{e.process, e.thread}] = kThinking;
      break;
    case EventType::kFail: threads_[{e.process, e.thread}] = kThinking; break;
    case EventType::kInfo: threads_[{e.process, e.thread}] = kUnsure; break;
    case EventType::kExec: {
      // A renewal the node refused (anything but 1, or [1] from a batched script): the holder's
      // hold is gone while it still holds.
      if (e.op != names::kRenew || e.peer == names::kNone || e.thread < 0) return;
      auto it = threads_.find({e.peer, e.thread});
      if (it == threads_.end() || it->second != kHolding) return;
      std::string scratch;
      std::string_view reply = history::ReplyText(e, &scratch);
      if (reply.size() >= 2 && reply.front() == '[' && reply.back() == ']') {
        reply = reply.substr(1, reply.size() - 2);
      }
      if (history::IntegerReply(reply) == 1) return;
      it->second = kLost;
      break;
    }
    case EventType::kLease: {
      uint8_t bucket = 0;
      if (e.op == names::kAcquired || e.op == names::kOwners) {
        const auto* owners = std::get_if<history::Owners>(&e.detail);
        const size_t fields =
            owners == nullptr || owners->list.empty()
                ? 1
                : 1 + static_cast<size_t>(std::count(owners->list.begin(), owners->list.end(), ','));
        bucket = fields > 1 ? 2 : 1;
      }
      nodes_[e.process] = bucket;
      break;
    }
    case EventType::kFault: {
      if (open_faults_.empty()) open_faults_.assign(std::size(history::kFaultKinds), 0);
      if (const history::FaultKindInfo* k = history::FaultStartedBy(e.op);
          k != nullptr && k->end_op != names::kNone) {
        ++open_faults_[static_cast<size_t>(k->kind)];
      } else if (const history::FaultKindInfo* k = history::FaultEndedBy(e.op)) {
        int& open = open_faults_[static_cast<size_t>(k->kind)];
        open = std::max(0, open - 1);
      } else {
        return;  // An instant (a clock jump, a failover): no state of its own.
      }
      break;
    }
    default: return;
  }
  const uint64_t next = StateHash();
  if (next == state_) return;
  transitions_.push_back(Mix(Mix(0x51ED27, state_), next));
  state_ = next;
}

uint64_t CoverageSink::StateHash() const {
  int phases[kPhases] = {};
  for (const auto& [thread, phase] : threads_) ++phases[phase];
  uint64_t h = 0x1F0C0FFEEull;
  for (int count : phases) h = Mix(h, static_cast<uint64_t>(std::min(count, 2)));
  for (const auto& [node, bucket] : nodes_) h = Mix(Mix(h, node), bucket);
  for (size_t i = 0; i < open_faults_.size(); ++i) {
    if (open_faults_[i] > 0) h = Mix(h, 0x100 + i);
  }
  return h;
}

std::vector<uint64_t> CoverageSink::Transitions() const {
  std::vector<uint64_t> out = transitions_;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace lockstep::fuzz
