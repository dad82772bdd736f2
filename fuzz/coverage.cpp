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

int Bucket(int n) { return std::min(n, 2); }

constexpr const char* kPhaseNames[] = {"thinking", "waiting", "holding",
                                       "releasing", "unsure", "lost"};

}  // namespace

Coverage::ThreadState& Coverage::Thread(int t) {
  if (static_cast<size_t>(t) >= threads_.size()) threads_.resize(static_cast<size_t>(t) + 1);
  return threads_[static_cast<size_t>(t)];
}

Coverage::NodeState& Coverage::Node(int node) {
  for (NodeState& n : nodes_) {
    if (n.node == node) return n;
  }
  nodes_.push_back(NodeState{node, {}, 0});
  return nodes_.back();
}

void Coverage::OnOpInvoked(const history::FactsPass&, const history::Op& op) {
  if (op.thread == history::kNone) return;
  if (op.kind == history::OpKind::kAcquire) Thread(op.thread).phase = kWaiting;
  if (op.kind == history::OpKind::kRelease || op.kind == history::OpKind::kForceUnlock) {
    Thread(op.thread).phase = kReleasing;
  }
  dirty_ = true;
}

void Coverage::OnOpEnded(const history::FactsPass&, const history::Op& op) {
  if (op.thread == history::kNone || op.end_seq == history::kOpenSeq) return;
  if (op.kind != history::OpKind::kAcquire && op.kind != history::OpKind::kRelease &&
      op.kind != history::OpKind::kForceUnlock) {
    return;
  }
  ThreadState& t = Thread(op.thread);
  switch (op.outcome) {
    case history::Outcome::kOk:
      t.phase = op.kind == history::OpKind::kAcquire ? kHolding : kThinking;
      break;
    case history::Outcome::kInfo: t.phase = kUnsure; break;
    default: t.phase = kThinking; break;
  }
  dirty_ = true;
}

void Coverage::OnSpanStarted(const history::FactsPass&, const history::Span& s) {
  if (s.access || s.thread == history::kNone) return;
  ++Thread(s.thread).beliefs;
  dirty_ = true;
}

void Coverage::OnSpanEnded(const history::FactsPass&, const history::Span& s) {
  if (s.access || s.thread == history::kNone) return;
  ThreadState& t = Thread(s.thread);
  t.beliefs = std::max(0, t.beliefs - 1);
  dirty_ = true;
}

void Coverage::OnLease(const history::FactsPass&, const history::LeaseFact& l) {
  if (l.node == history::kNone) return;
  NodeState& n = Node(l.node);
  n.owners.clear();
  n.foreign = 0;
  if (l.kind == history::LeaseKind::kAcquired || l.kind == history::LeaseKind::kOwners) {
    n.owners = l.owners;
    std::sort(n.owners.begin(), n.owners.end());
    n.owners.erase(std::unique(n.owners.begin(), n.owners.end()), n.owners.end());
    // A key held by no thread the run knows (a dead incarnation's field), or a count.
    if (n.owners.empty()) n.foreign = 1;
  }
  dirty_ = true;
}

void Coverage::OnEventDone(const history::FactsPass& f, const history::Event& e) {
  if (e.type == EventType::kExec && e.op == names::kRenew) {
    // A renewal the node refused (anything but 1, or [1] from a batched script): the holder's
    // hold is gone while it still holds.
    const int thread = f.ExecThread(e);
    if (thread != history::kNone && Thread(thread).phase == kHolding) {
      std::string scratch;
      std::string_view reply = history::ReplyText(e, &scratch);
      if (reply.size() >= 2 && reply.front() == '[' && reply.back() == ']') {
        reply = reply.substr(1, reply.size() - 2);
      }
      if (history::IntegerReply(reply) != 1) {
        Thread(thread).phase = kLost;
        dirty_ = true;
      }
    }
  } else if (e.type == EventType::kFault) {
    if (open_faults_.empty()) open_faults_.assign(std::size(history::kFaultKinds), 0);
    if (const history::FaultKindInfo* k = history::FaultStartedBy(e.op);
        k != nullptr && k->end_op != names::kNone) {
      ++open_faults_[static_cast<size_t>(k->kind)];
      dirty_ = true;
    } else if (const history::FaultKindInfo* k = history::FaultEndedBy(e.op)) {
      int& open = open_faults_[static_cast<size_t>(k->kind)];
      open = std::max(0, open - 1);
      dirty_ = true;
    }
    // Else an instant (a clock jump, a failover): no state of its own.
  }
  if (!dirty_) return;
  dirty_ = false;
  std::string text;
  const uint64_t next = StateHash(keep_states_ ? &text : nullptr);
  if (next == state_) return;
  transitions_.push_back(Mix(Mix(0x51ED27, state_), next));
  state_ = next;
  if (keep_states_ && std::find(states_seen_.begin(), states_seen_.end(), next) == states_seen_.end()) {
    states_seen_.push_back(next);
    states_text_.push_back(text);
  }
}

uint64_t Coverage::StateHash(std::string* text) const {
  int phases[kPhases] = {};
  for (const ThreadState& t : threads_) ++phases[t.phase];
  uint64_t h = 0x1F0C0FFEEull;
  for (int p = 0; p < kPhases; ++p) {
    h = Mix(h, static_cast<uint64_t>(Bucket(phases[p])));
    if (text != nullptr && phases[p] > 0) {
      *text += std::string(text->empty() ? "" : " ") + kPhaseNames[p] + "=" +
               std::to_string(Bucket(phases[p]));
    }
  }
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const NodeState& n = nodes_[i];
    int stale = 0, unbelieved = 0;
    for (size_t t = 0; t < threads_.size(); ++t) {
      const bool owner = std::binary_search(n.owners.begin(), n.owners.end(), static_cast<int>(t));
      const bool believes = threads_[t].beliefs > 0;
      stale += believes && !owner ? 1 : 0;
      unbelieved += owner && !believes ? 1 : 0;
    }
    const int owners = static_cast<int>(n.owners.size()) + n.foreign;
    h = Mix(h, 0x4E000 + i);
    h = Mix(h, static_cast<uint64_t>(Bucket(owners) * 9 + Bucket(stale) * 3 + Bucket(unbelieved)));
    if (text != nullptr) {
      *text += " | node" + std::to_string(i) + " owners=" + std::to_string(Bucket(owners)) +
               " stale=" + std::to_string(Bucket(stale)) +
               " unbelieved=" + std::to_string(Bucket(unbelieved));
    }
  }
  for (size_t i = 0; i < open_faults_.size(); ++i) {
    if (open_faults_[i] > 0) {
      h = Mix(h, 0x100 + i);
      if (text != nullptr) *text += " | fault " + std::string(history::kFaultKinds[i].name);
    }
  }
  return h;
}

std::vector<uint64_t> Coverage::Transitions() const {
  std::vector<uint64_t> out = transitions_;
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace lockstep::fuzz
