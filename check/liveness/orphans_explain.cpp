// liveness (d), orphans: writing the findings up (the rule is in orphans.h).
#include <algorithm>

#include "check/liveness/orphans.h"

namespace lockstep::check::liveness {

using history::FactsPass;
using history::kNone;
using history::kOpenSeq;
using history::Outcome;
using history::Role;
using history::Seq;

namespace {

// What one owner of an orphaned key was doing: why it did not believe it held the lock.
std::string Story(const Narrator& n, const OwnerStory& s, std::vector<Seq>* events, int64_t* context_us) {
  const std::string& who = n.Thread(s.thread);
  if (!s.has_acquire) return who + " never acquired it before then";
  const AcquireRef& op = s.acquire;
  *context_us = std::min(*context_us, op.invoke_us);
  events->push_back(op.invoke_seq);
  if (op.end_seq != kOpenSeq) events->push_back(op.end_seq);
  if (op.outcome == Outcome::kOk) {
    if (s.has_belief) {
      return who + " had acquired it at " + Seconds(s.belief.start_us) + " and believed it held it " +
             n.Until(s.belief);
    }
    return who + "'s acquire of it succeeded at " + Seconds(op.end_us);
  }
  const std::string invoked = who + "'s acquire invoked at " + Seconds(op.invoke_us);
  switch (op.outcome) {
    case Outcome::kInfo:
      return invoked + " ended with an unknown outcome at " + Seconds(op.end_us) + " (" + op.end_detail +
             "), so it never believed it held the lock";
    case Outcome::kFail:
      return invoked + " failed at " + Seconds(op.end_us) + ", so it never believed it held it";
    case Outcome::kCrashed: return invoked + " was cut short by its process's crash at " + Seconds(op.end_us);
    default: return invoked + " was still in flight";
  }
}

}  // namespace

void Orphans::WriteUp(const Narrator& n, const FindingKey* last, std::vector<KeyedViolation>* out) const {
  found_.WriteUp(last, out, [&](const FindingKey&, const Payload& p) { return Explain(n, *p.orphan); });
}

Violation Orphans::Explain(const Narrator& n, const Orphan& orphan) const {
  const OrphanSpan& span = orphan.span;
  const FactsPass& f = n.facts();
  Violation v;
  v.to_us = span.to_us;
  v.events = {span.from_seq};
  if (span.to_seq != kOpenSeq) v.events.push_back(span.to_seq);
  const std::string lasted =
      "from " + Seconds(span.from_us) + (span.to_seq == kOpenSeq ? " until the run ended at " : " to ") +
      Seconds(span.to_us) + " (" + Seconds(span.to_us - span.from_us) +
      (span.impaired_us > 0 ? ", " + Seconds(span.impaired_us) + " of it with the node impaired, not counted"
                            : "") +
      ")";
  const std::string where = span.node == kNone ? "" : " on " + n.ProcessName(span.node);
  std::vector<int> clients;
  int64_t context_us = span.from_us;  // Faults from here on are named.
  if (orphan.kind == kOrphanedLock) {
    ExplainOrphanedLock(n, orphan, lasted, where, &v, &clients, &context_us);
  } else {
    ExplainSynchronizer(n, orphan, lasted, where, &v);
    ExplainBeginning(n, orphan, &v, &clients);
  }
  const size_t denied = orphan.window.denied();
  if (denied > 0) {
    v.explanation += " Meanwhile " + Count(denied, "acquisition") + " of it " + (denied == 1 ? "was" : "were") +
                     " refused or left waiting.";
  }
  // The waiters it kept out, after the threads behind it.
  if (orphan.window.active()) {
    for (const auto& [seq, thread] : orphan.window.Named()) {
      if (v.threads.size() >= kMaxThreadsNamed) break;
      const std::string& name = n.Thread(thread);
      if (std::find(v.threads.begin(), v.threads.end(), name) != v.threads.end()) continue;
      v.threads.push_back(name);
      v.events.push_back(seq);
      clients.push_back(n.ProcessOfThread(thread));
    }
  }
  if (v.threads.empty()) v.threads.push_back(n.ProcessName(span.node == kNone ? f.sim_process() : span.node));
  std::sort(clients.begin(), clients.end());
  clients.erase(std::unique(clients.begin(), clients.end()), clients.end());
  v.explanation += n.Faults(context_us, span.to_us, span.from_us, clients, &v.events);
  return v;
}

void Orphans::ExplainOrphanedLock(const Narrator& n, const Orphan& orphan, const std::string& lasted,
                                  const std::string& where, Violation* v, std::vector<int>* clients,
                                  int64_t* context_us) const {
  const OrphanSpan& span = orphan.span;
  v->kind = "orphaned_lock";
  std::string stories;
  for (const OwnerStory& s : orphan.stories) {
    v->threads.push_back(n.Thread(s.thread));
    clients->push_back(n.ProcessOfThread(s.thread));
    stories += (stories.empty() ? "" : "; ") + Story(n, s, &v->events, context_us);
  }
  v->explanation = "The key of " + n.Lock(span.lock) + where + " was held by " + Quoted(span.fields) + " " +
                   lasted + ", but nobody who believed it held the lock was among its owners: ";
  v->explanation += stories.empty()
                        ? "the fields belong to no client running then (a crashed or restarted incarnation)"
                        : stories;
  v->explanation += ". That is longer than the longest lease any acquisition asked for (" +
                    Seconds(span.lease_us) + ") plus the liveness bound (" + Seconds(bound_us_) +
                    "): an orphaned lock, which nobody else can take until its key goes" +
                    (span.to_seq == kOpenSeq ? ", and it had not gone when the run ended." : ".");
}

// Leaked permits and orphaned latch counts: what was kept, and for how long.
void Orphans::ExplainSynchronizer(const Narrator& n, const Orphan& orphan, const std::string& lasted,
                                  const std::string& where, Violation* v) const {
  const OrphanSpan& span = orphan.span;
  if (orphan.kind == kLeakedPermits) {
    v->kind = "leaked_permits";
    v->explanation = Count(static_cast<size_t>(span.units), "permit") + " of " + n.Lock(span.lock) + " (" +
                     Count(static_cast<size_t>(n.facts().protocol().permits), "permit") + " in all) " +
                     (span.units == 1 ? "was" : "were") + " taken" + where +
                     " but held by no thread that believed it held one, " + lasted +
                     ", longer than the liveness bound (" + Seconds(bound_us_) +
                     "). A semaphore's permits have no lease: one taken by a process that crashed, or by an "
                     "acquire whose reply was lost, never comes back.";
  } else if (span.by_role) {
    v->kind = "orphaned_latch";
    v->explanation = "The count of latch " + n.Lock(span.lock) + where + " stayed at " +
                     std::to_string(span.count) + " " + lasted + ", longer than the liveness bound (" +
                     Seconds(bound_us_) + "), while no count_down client could count it down any more" +
                     (span.held > 0 ? " and worker threads that had passed it owed only " +
                                          Count(static_cast<size_t>(span.held), "count-down")
                                    : std::string()) +
                     ": the latch can never open.";
  } else {
    v->kind = "orphaned_latch";
    v->explanation = "The count of latch " + n.Lock(span.lock) + where + " stayed at " +
                     std::to_string(span.count) + ", above the " + std::to_string(span.held) + " count-down" +
                     (span.held == 1 ? "" : "s") + " still owed by threads that had passed it, " + lasted +
                     ", longer than the liveness bound (" + Seconds(bound_us_) +
                     "): a thread that would have counted it down crashed first, so the latch can never open.";
  }
}

// What began a synchronizer's orphan: a crash of holders, a release, or the node's count
// changing.
void Orphans::ExplainBeginning(const Narrator& n, const Orphan& orphan, Violation* v,
                               std::vector<int>* clients) const {
  const OrphanSpan& span = orphan.span;
  const std::string from_process = n.ProcessName(span.from_process);
  const std::string from_detail = span.from_detail.empty() ? "0" : span.from_detail;
  if (span.by_role && span.owners.empty()) {
    ExplainRoleBeginning(n, span, v);
  } else if (!span.owners.empty()) {
    std::string holders;
    for (int t : span.owners) {
      v->threads.push_back(n.Thread(t));
      holders += (holders.empty() ? "" : " and ") + n.Thread(t);
    }
    clients->push_back(n.ProcessOfThread(span.owners.front()));
    v->explanation += " It began when " + from_process + " crashed at " + Seconds(span.from_us) + " while " +
                      holders +
                      (orphan.kind == kLeakedPermits
                           ? " held permits; nothing gives them back."
                           : " had passed the latch and not yet counted down; nobody counts down for a "
                             "crashed client.");
  } else if (span.from_type == history::EventType::kLease) {
    v->explanation += " It began at " + Seconds(span.from_us) + ", when " + from_process + "'s count became " +
                      from_detail + " without a successful acquisition taking the permits.";
  } else if (span.from_type == history::EventType::kInvoke && span.from_thread >= 0) {
    v->explanation += " It began when " + from_process + ".t" + std::to_string(span.from_thread) +
                      " began to release at " + Seconds(span.from_us) +
                      " and the node's count did not go back up.";
  }
}

// A latch with client roles: the last count_down client crashed or stopped, or the count
// changed while none was left.
void Orphans::ExplainRoleBeginning(const Narrator& n, const OrphanSpan& span, Violation* v) const {
  const FactsPass& f = n.facts();
  const std::string from_process = n.ProcessName(span.from_process);
  const std::string from_detail = span.from_detail.empty() ? "0" : span.from_detail;
  std::string counters;
  size_t n_counters = 0;
  for (const history::Process& proc : f.processes()) {
    if (proc.role != Role::kCountDown) continue;
    ++n_counters;
    counters += (counters.empty() ? "" : ", ") + std::string(f.names().Str(proc.name));
  }
  const std::string their =
      n_counters == 0 ? "The run has no count_down client" : "Its count_down clients: " + counters;
  if (span.from_type == history::EventType::kFault && span.from_op == history::names::kCrash) {
    v->threads.push_back(from_process);
    v->explanation += " It began when " + from_process +
                      ", the last count_down client still counting, crashed at " + Seconds(span.from_us) +
                      "; nobody counts down for a crashed client.";
  } else if (span.from_type == history::EventType::kNote && span.from_op == history::names::kDone) {
    const std::string thread = from_process + ".t" + std::to_string(span.from_thread);
    v->threads.push_back(thread);
    v->explanation += " It began when " + thread + ", the last thread still counting down, stopped at " +
                      Seconds(span.from_us) + " (" + span.from_detail + ").";
  } else {
    v->explanation += " It began at " + Seconds(span.from_us) + ", when " + from_process + "'s count became " +
                      from_detail + ".";
  }
  v->explanation += " " + their + ".";
}

}  // namespace lockstep::check::liveness
