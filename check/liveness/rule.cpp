#include "check/liveness/rule.h"

#include <algorithm>
#include <cassert>

namespace lockstep::check::liveness {

using history::Op;
using history::Outcome;

AcquireRef AcquireRef::Of(const Op& op) {
  AcquireRef r;
  r.id = op.id;
  r.thread = op.thread;
  r.lock = op.lock;
  r.invoke_seq = op.invoke_seq;
  r.invoke_us = op.invoke_us;
  r.wait_us = op.wait_us;
  r.detail = op.invoke_detail;
  r.name = op.name;
  return r;
}

AcquireRef AcquireRef::Ended(const Op& op) {
  AcquireRef r = Of(op);
  r.End(op);
  return r;
}

void AcquireRef::End(const Op& op) {
  ended = true;
  outcome = op.outcome;
  end_seq = op.end_seq;
  end_us = op.end_us;
  end_detail = op.end_detail;
}

void AcquireWindow::Open(int64_t from_us, const std::vector<AcquireRef>& inflight, bool early) {
  active_ = true;
  from_us_ = from_us;
  to_us_ = kForever;
  others_after_us_ = -1;
  others_excluded_ = UINT64_MAX;
  recent_us_ = -1;
  recent_ = 0;
  pending_.clear();
  denied_ = 0;
  others_ = 0;
  first_.clear();
  for (const AcquireRef& r : inflight) {
    if (r.invoke_us >= from_us) {
      Invoked(r);
    } else if (early) {
      pending_.push_back({r.id, r.thread, r.invoke_seq, r.invoke_us, true});
    }
  }
}

void AcquireWindow::Invoked(const AcquireRef& r) {
  if (!active_ || (closed() && r.invoke_us > to_us_)) return;
  pending_.push_back({r.id, r.thread, r.invoke_seq, r.invoke_us, false});
}

void AcquireWindow::Ended(const Op& op) {
  if (!active_) return;
  auto it = std::find_if(pending_.begin(), pending_.end(), [&](const Entry& e) { return e.id == op.id; });
  if (it == pending_.end()) return;
  const Entry e = *it;
  pending_.erase(it);
  if (op.outcome == Outcome::kOk) return;
  if (!e.early) {
    ++denied_;
    if (e.invoke_us > others_after_us_ && e.id != others_excluded_) {
      // "Before the window's end" is decided once its end is known.
      if (closed()) {
        others_ += e.invoke_us < to_us_;
      } else if (e.invoke_us > recent_us_) {
        others_ += recent_;
        recent_ = 1;
        recent_us_ = e.invoke_us;
      } else if (e.invoke_us == recent_us_) {
        ++recent_;
      } else {
        ++others_;
      }
    }
  }
  if (std::none_of(first_.begin(), first_.end(), [&](const auto& f) { return f.second == e.thread; })) {
    first_.emplace_back(e.invoke_seq, e.thread);
  }
}

void AcquireWindow::Close(int64_t to_us) {
  if (!active_ || closed()) return;
  to_us_ = to_us;
  std::erase_if(pending_, [&](const Entry& e) { return e.invoke_us > to_us; });
  if (recent_us_ < to_us) others_ += recent_;
  recent_ = 0;
}

std::vector<std::pair<history::Seq, int>> AcquireWindow::Named() const {
  std::vector<std::pair<history::Seq, int>> out = first_;
  std::sort(out.begin(), out.end());
  return out;
}

LivenessFacts::Lock& LivenessFacts::LockOf(int lock) {
  assert(lock >= 0);
  if (locks_.size() <= static_cast<size_t>(lock)) locks_.resize(lock + 1);
  return locks_[lock];
}

void LivenessFacts::OpInvoked(const history::FactsPass& f, const Op& op) {
  Lock& l = LockOf(op.lock);
  if (op.kind == history::OpKind::kAcquire) {
    l.inflight.push_back(AcquireRef::Of(op));
    l.max_lease_us = std::max(l.max_lease_us, op.lease_us >= 0 ? op.lease_us : f.lease_default_us());
  } else if (op.kind == history::OpKind::kRelease) {
    l.max_holds = std::max(l.max_holds, op.count_before);
  }
}

void LivenessFacts::OpEnded(const Op& op) {
  if (op.kind != history::OpKind::kAcquire) return;
  std::erase_if(LockOf(op.lock).inflight, [&](const AcquireRef& r) { return r.id == op.id; });
}

const std::vector<AcquireRef>& LivenessFacts::InFlight(int lock) const {
  static const std::vector<AcquireRef> kNoneInFlight;
  return static_cast<size_t>(lock) < locks_.size() ? locks_[lock].inflight : kNoneInFlight;
}

const AcquireRef& LivenessFacts::JustInvoked(const Op& op) const {
  const std::vector<AcquireRef>& inflight = InFlight(op.lock);
  assert(!inflight.empty() && inflight.back().id == op.id);
  return inflight.back();
}

int64_t LivenessFacts::LongestLeaseUs(const history::FactsPass& f, int lock) const {
  int64_t max_lease_us = 0;
  int max_holds = 1;
  if (static_cast<size_t>(lock) < locks_.size()) {
    max_lease_us = locks_[lock].max_lease_us;
    max_holds = locks_[lock].max_holds;
  }
  const int64_t lease_us = max_lease_us == 0 ? f.lease_default_us() : max_lease_us;
  const int holds = std::max(1, max_holds);
  return lease_us > kForever / holds ? kForever : lease_us * holds;
}

int64_t LivenessFacts::ImpairedWithin(const history::FactsPass& f, int process, int64_t from_us,
                                      int64_t to_us) const {
  int64_t total = 0;
  for (const history::ImpairedSpan& s : f.ImpairedMerged(process, std::max(now_us_, to_us))) {
    if (s.from_us >= to_us) break;
    total += std::max<int64_t>(0, std::min(to_us, s.to_us) - std::max(from_us, s.from_us));
  }
  return total;
}

bool ExplainedStretches::Overlaps(int lock, int64_t from_us, int64_t to_us) const {
  return std::any_of(stretches_.begin(), stretches_.end(), [&](const Stretch& s) {
    return s.lock == lock && s.from_us < to_us && s.to_us > from_us;
  });
}

}  // namespace lockstep::check::liveness
