#include "drive/workload.h"

#include <cassert>
#include <string>

#include "drive/client.h"
#include "history/kinds.h"
#include "history/notes.h"

namespace lockstep::drive {

using history::EventType;
using history::Name;
namespace names = history::names;

namespace {

// A semaphore's permit-changing role: its operation is named after the role in the history.
bool ChangesPermits(ClientSpec::Role role) {
  return role == ClientSpec::Role::kAddPermits || role == ClientSpec::Role::kReducePermits ||
         role == ClientSpec::Role::kTrySetPermits || role == ClientSpec::Role::kDrainPermits;
}

}  // namespace

ClientWorkload::ClientWorkload(const Scenario& scenario, int client, Name process,
                               Resource& resource, ClientHost& host)
    : process_(process), resource_(resource), host_(host) {
  assert(client >= 0 && static_cast<size_t>(client) < scenario.clients.size());
  const ClientSpec& spec = scenario.clients[static_cast<size_t>(client)];
  workload_ = Apply(scenario.workload, spec.workload);
  role_ = spec.role;
  thread_count_ = spec.threads;
  assert(thread_count_ >= 1);
  stagger_us_ = workload_.stagger_us * client;
  permits_ = scenario.protocol.permits;
  lease_rule_before_3_17_1_ = LeaseRuleBefore3_17_1(scenario.protocol);
  const history::ProtocolKind* kind = scenario.protocol.kind;
  shows_permits_ = kind != nullptr && kind->shows_permits;
}

ClientWorkload::ThreadState& ClientWorkload::At(int thread) {
  assert(thread >= 0 && static_cast<size_t>(thread) < threads_.size());
  return threads_[static_cast<size_t>(thread)];
}
const ClientWorkload::ThreadState& ClientWorkload::At(int thread) const {
  assert(thread >= 0 && static_cast<size_t>(thread) < threads_.size());
  return threads_[static_cast<size_t>(thread)];
}

// --- the process's life ----------------------------------------------------------------------

void ClientWorkload::Start(locks::LockProtocol& protocol, locks::Outbox& outbox,
                           std::string_view uuid, bool restart) {
  assert(protocol_ == nullptr);  // Not running: never started, or crashed since.
  assert(restart == started_);   // The first start is the only one that is not a restart.
  started_ = true;
  protocol_ = &protocol;
  outbox_ = &outbox;
  threads_.assign(static_cast<size_t>(thread_count_), ThreadState{});
  history::Event e;
  e.type = EventType::kNote;
  e.process = process_;
  e.op = names::kClient;
  e.detail = history::ClientNote{uuid};
  host_.Record(e);
  if (!restart && role_ != ClientSpec::Role::kWorker) {
    // The role, once, at the start, so that the checkers can tell who may still count the
    // latch down (the orphaned-latch rule). Workers have no note: histories recorded before
    // roles existed stay as they were.
    history::Event r;
    r.type = EventType::kNote;
    r.process = process_;
    r.op = names::kRole;
    history::RoleNote role;
    // The model's roles and the note's are the same list in the same order.
    role.role = role_;
    role.threads = thread_count_;
    r.detail = role;
    host_.Record(r);
  }
  const int64_t stagger = restart ? 0 : stagger_us_;
  for (int t = 0; t < thread_count_; ++t) {
    if (stagger == 0 && role_ == ClientSpec::Role::kWorker) {
      Think(t);  // Thinking only draws and waits: nothing to send from inside Start.
    } else {
      // Not inside Start's call stack: an await starts with a command to send.
      host_.After(stagger, [this, t] { StartThread(t); });
    }
  }
}

void ClientWorkload::Crash() {
  assert(protocol_ != nullptr);
  protocol_ = nullptr;
  outbox_ = nullptr;
}

// --- operations ------------------------------------------------------------------------------

void ClientWorkload::Invoke(int t, Name op, const history::Detail& detail, bool has_value,
                            int64_t value) {
  assert(protocol_ != nullptr);
  ThreadState& th = At(t);
  assert(!th.busy);  // One operation at a time per thread.
  th.busy = true;
  th.op = op;
  history::Event e;
  e.type = EventType::kInvoke;
  e.process = process_;
  e.thread = t;
  e.op = op;
  e.lock = resource_.lock();
  e.local_ms = host_.WallMs();
  e.detail = detail;
  e.has_value = has_value;
  e.value = value;
  host_.Record(e);
}

void ClientWorkload::StartAcquire(int t) {
  const WorkloadSpec& w = workload_;
  ThreadState& th = At(t);
  if (th.holds == 0) {
    // A new iteration: which side of a read-write lock it takes (nested ones keep it).
    switch (w.side) {
      case WorkloadSpec::Side::kDrawn:
        th.shared = w.read_ratio > 0 && host_.Rng().Bernoulli(w.read_ratio);
        break;
      case WorkloadSpec::Side::kRead: th.shared = true; break;
      case WorkloadSpec::Side::kWrite: th.shared = false; break;
    }
  }
  locks::AcquireArgs args;
  args.shared = th.shared;
  args.permits = 1;
  args.mode = w.mode == WorkloadSpec::Mode::kLock ? locks::AcquireArgs::Mode::kLock
                                                  : locks::AcquireArgs::Mode::kTryLock;
  args.wait_us = w.wait_us;
  args.lease_us = w.lease_us;
  history::AcquireCall call;
  call.mode = w.mode;
  call.wait_us = w.wait_us;
  // The lease the thread may count on, when the client takes one as given: toMillis of the
  // caller's value, which 3.13.6 passes on even when it is 0 or negative.
  const bool lease_given = locks::ApiValueGiven(lease_rule_before_3_17_1_, w.lease_us);
  call.lease_us = lease_given ? w.lease_us : -1;
  if (shows_permits_) call.permits = 1;
  Invoke(t, th.shared ? names::kAcquireRead : names::kAcquire, call, lease_given,
         lease_given ? locks::ToMillis(w.lease_us) : 0);
  protocol_->Acquire(*outbox_, t, args);
}

void ClientWorkload::StartRelease(int t) {
  Invoke(t, At(t).shared ? names::kReleaseRead : names::kRelease, history::StockText{});
  protocol_->Release(*outbox_, t);
}

void ClientWorkload::StartPermitChange(int t) {
  locks::ExtraOp op = locks::ExtraOp::kAddPermits;
  std::string call = "addPermits(1)";
  switch (role_) {
    case ClientSpec::Role::kReducePermits:
      op = locks::ExtraOp::kReducePermits;
      call = "addPermits(-1)";
      break;
    case ClientSpec::Role::kTrySetPermits:
      op = locks::ExtraOp::kTrySetPermits;
      call = "trySetPermits(" + std::to_string(permits_) + ")";
      break;
    case ClientSpec::Role::kDrainPermits:
      op = locks::ExtraOp::kDrainPermits;
      call = "drainPermits()";
      break;
    default: assert(role_ == ClientSpec::Role::kAddPermits);
  }
  // The operation is named after the role.
  Invoke(t, host_.Intern(history::RoleName(static_cast<history::RoleNote::Role>(role_))),
         history::Text{call});
  protocol_->Extra(*outbox_, t, op);
}

void ClientWorkload::OnComplete(int t, const locks::OpResult& result) {
  assert(protocol_ != nullptr);  // A crashed process's protocol completes nothing.
  ThreadState& th = At(t);
  assert(th.busy);
  th.busy = false;
  history::Event e;
  e.type = result.status == locks::OpResult::Status::kOk     ? EventType::kOk
           : result.status == locks::OpResult::Status::kFail ? EventType::kFail
                                                             : EventType::kInfo;
  e.process = process_;
  e.thread = t;
  e.op = th.op;
  e.lock = resource_.lock();
  e.local_ms = host_.WallMs();
  e.has_value = result.has_value;
  e.value = result.value;
  if (!result.detail.empty()) e.detail = history::Text{result.detail};
  host_.Record(e);
  th.status = result.status;
  // The next step runs as its own work, never inside the protocol's call stack. (The closure
  // keeps to two words, which std::function holds without allocating; Next reads the rest
  // from the thread, which does nothing until then.)
  host_.After(0, [this, t] { Next(t); });
}

// --- the loop --------------------------------------------------------------------------------

// The thread's next step after its operation ended, by the client's role.
void ClientWorkload::Next(int t) {
  ThreadState& th = At(t);
  assert(!th.busy);
  const Name op = th.op;
  using S = locks::OpResult::Status;
  const S status = th.status;
  switch (role_) {
    case ClientSpec::Role::kWorker: break;
    case ClientSpec::Role::kAwait:
      assert(op == names::kAcquire || op == names::kAcquireRead);
      // An iteration is an await that passed, as a worker's is a release after it acquired.
      if (status == S::kOk) ++th.iterations;
      return Think(t);
    case ClientSpec::Role::kCountDown:
      assert(op == names::kRelease);
      ++th.iterations;  // Whatever the outcome: a countDown has no owner to fail on.
      return Think(t);
    case ClientSpec::Role::kAddPermits:
    case ClientSpec::Role::kReducePermits:
    case ClientSpec::Role::kTrySetPermits:
    case ClientSpec::Role::kDrainPermits:
      ++th.iterations;  // An iteration is one operation, whatever its outcome.
      return Think(t);
  }
  if (op == names::kAcquire || op == names::kAcquireRead) {
    if (status == S::kOk) {
      ++th.holds;
      if (th.holds < workload_.reentry) return StartAcquire(t);
      return EnterResource(t);
    }
    if (th.holds > 0) return StartRelease(t);  // A nested acquisition failed: unwind.
    return Think(t);
  }
  // release
  if (status == S::kFail) th.holds = 0;  // Not (or no longer) the owner.
  else if (th.holds > 0) --th.holds;
  if (th.holds > 0) return StartRelease(t);
  ++th.iterations;
  Think(t);
}

void ClientWorkload::EnterResource(int t) {
  ThreadState& th = At(t);
  int64_t token = 0;
  th.token = protocol_->Token(t, &token) ? std::optional<int64_t>(token) : std::nullopt;
  history::Event e = resource_.Enter(process_, t, host_.WallMs(), th.shared, th.token);
  host_.Record(e);
  const int64_t critical_us = workload_.critical_us.Sample(host_.Rng());
  host_.After(critical_us, [this, t] { ExitResource(t); });
}

void ClientWorkload::ExitResource(int t) {
  // The write at the end of the critical section (the resource takes it or, fenced, refuses
  // a stale token), then the release.
  history::Event x = resource_.Exit(process_, t, host_.WallMs(), At(t).token);
  host_.Record(x);
  StartRelease(t);
}

// Thinks, then starts the thread's next operation: an acquisition (workers, awaiting
// threads), a countDown (counting-down threads) or a permit change; or stops the thread once
// it has done ops_per_thread iterations.
void ClientWorkload::Think(int t) {
  const ThreadState& th = At(t);
  if (workload_.ops_per_thread > 0 && th.iterations >= workload_.ops_per_thread) {
    // This thread is done. A counting-down thread says so: the checkers then know it will
    // not count the latch down any more (workers record nothing, as they always have).
    if (role_ == ClientSpec::Role::kCountDown) {
      history::Event e;
      e.type = EventType::kNote;
      e.process = process_;
      e.thread = t;
      e.op = names::kDone;
      e.detail = history::DoneNote{workload_.ops_per_thread};
      host_.Record(e);
    }
    return;
  }
  const int64_t think_us = workload_.think_us.Sample(host_.Rng());
  if (role_ == ClientSpec::Role::kCountDown) {
    host_.After(think_us, [this, t] { StartRelease(t); });
  } else if (ChangesPermits(role_)) {
    host_.After(think_us, [this, t] { StartPermitChange(t); });
  } else {
    host_.After(think_us, [this, t] { StartAcquire(t); });
  }
}

// A thread's first step: workers and the other roles think first, awaiting threads await at
// once.
void ClientWorkload::StartThread(int t) {
  if (role_ == ClientSpec::Role::kAwait) return StartAcquire(t);
  Think(t);
}

}  // namespace lockstep::drive
