// liveness (d), orphans: the node keeps something taken that no thread believing it holds the
// lock accounts for; stretches while the node is impaired do not count.
//
//   "orphaned_lock" (kinds with owners): a lock key whose lease events list owner fields, none
//     of them a thread's that believes it holds the lock, for longer than the longest lease any
//     acquisition of the lock asked for (times the most holds a thread stacked) plus B. After a
//     replica's promotion (with one master) only the promoted node's key is judged.
//   "leaked_permits" (semaphores): permits taken on the node beyond those held by threads
//     believing they hold them, for longer than B; what addPermits and drainPermits changed
//     was not taken by a thread.
//   "orphaned_latch" (count-down latches): the count exceeds the count-downs that can still
//     come, for longer than B (without role notes, from the crash of a thread that had passed
//     the latch and not yet counted down; with role notes, while no count_down client can go on).
//
// Online, an orphan is kept while it lasts; one that lasted longer than allowed so far waits for
// the end of the run, when the longest lease is known and the acquisitions it kept out have
// ended. orphans.cpp follows the run; orphans_explain.cpp writes the findings up.
#ifndef LOCKSTEP_CHECK_LIVENESS_ORPHANS_H_
#define LOCKSTEP_CHECK_LIVENESS_ORPHANS_H_

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "check/liveness/rule.h"

namespace lockstep::check::liveness {

// A stretch during which a node kept something taken that no believer accounts for.
struct OrphanSpan {
  int lock = history::kNone;
  int node = history::kNone;
  history::Seq from_seq = 0;
  int64_t from_us = 0;
  history::Seq to_seq = history::kOpenSeq;
  int64_t to_us = 0;
  int64_t allowed_us = 0;
  int64_t lease_us = 0;
  int64_t impaired_us = 0;
  std::string fields;
  std::vector<int> owners;
  int64_t units = 0;
  int64_t count = 0;
  int64_t held = 0;
  bool by_role = false;
  // The event that began it (synchronizers).
  history::EventType from_type = history::EventType::kNote;
  history::Name from_op = history::names::kNone;
  int from_process = history::kNone;
  int from_thread = -1;
  std::string from_detail;
};

// What an owner of an orphaned key was doing: its latest acquisition of the lock before the
// orphan began, and the belief that acquisition started.
struct OwnerStory {
  int thread = history::kNone;
  bool has_acquire = false;
  AcquireRef acquire;
  bool has_belief = false;
  history::Span belief;
};

struct Orphan {
  Kind kind = kOrphanedLock;
  OrphanSpan span;
  std::vector<OwnerStory> stories;
  AcquireWindow window;
  bool ended = false;  // The span has ended (its window closes once time passes its end).
};

class Orphans : public Rule {
 public:
  Orphans(const CheckOptions& options, const LivenessFacts& facts, ExplainedStretches* explained)
      : facts_(facts), bound_us_(facts.bound_us()), explained_(explained), found_(options.max_violations) {}

  // Role and done notes, restarts, and settling what an event changed once it is done.
  bool WantsEvents() const override { return true; }
  void OnEvent(const history::FactsPass& f, const history::Event& e) override;
  void OnOpInvoked(const history::FactsPass& f, const history::Op& op) override;
  void OnOpEnded(const history::FactsPass& f, const history::Op& op) override;
  void OnSpanStarted(const history::FactsPass& f, const history::Span& s) override;
  void OnSpanEnded(const history::FactsPass& f, const history::Span& s) override;
  void OnLease(const history::FactsPass& f, const history::LeaseFact& le) override;
  void OnCrash(const history::FactsPass& f, const history::ClientCrash& crash) override;
  void OnFault(const history::FactsPass& f, const history::FaultRecord& fault) override;
  void OnEventDone(const history::FactsPass& f, const history::Event& e) override;
  void Advance(const history::FactsPass& f, int64_t t_us) override;
  void OnFinish(const history::FactsPass& f) override;

  size_t count() const override { return found_.count(); }
  std::vector<FindingKey> KeptKeys() const override { return found_.KeptKeys(); }
  void WriteUp(const Narrator& n, const FindingKey* last, std::vector<KeyedViolation>* out) const override;

 private:
  struct Payload {
    std::unique_ptr<Orphan> orphan;
  };
  // A lock's key on one node, as its lease events record it.
  struct OwnerKey {
    bool present = false;
    bool listed = false;
    std::vector<int> owners;
    std::string fields;
    bool orphan = false;
    // While orphan: the span so far. Kept here and reused, since most last a moment (the key
    // outlives its holder's belief from the release's invoke to the script's run).
    Orphan open;
  };
  struct Counter {
    bool up = true;
    int done = 0;
  };
  // A semaphore or latch: its count and who holds what of it.
  struct SyncState {
    int64_t count = -1;  // The node's count; -1 until the key first appears.
    // Semaphores: permits that addPermits / drainPermits added (or took away) on the node.
    int64_t resized = 0;
    int node = history::kNone;
    std::map<int, int64_t> held;  // Thread -> permits (latch: passes not yet counted down).
    int64_t held_total = 0;
    std::unique_ptr<Orphan> open;
  };
  struct LastAcquire {
    AcquireRef ref;
    bool has_belief = false;
    history::Span belief;
  };

  // orphans.cpp
  std::map<int, OwnerKey>& KeysOf(int lock);
  SyncState& SyncOf(int lock);
  int Believing(int thread, int lock) const;
  void Touch(int lock);
  static bool Roles(const history::FactsPass& f) { return f.protocol().latch() && f.roles(); }
  template <class F>
  void ForOrphansOf(int lock, F f);
  void SettleOrphans(const history::FactsPass& f, int lock, history::Seq seq, int64_t t_us);
  OwnerStory StoryOf(int thread, int lock) const;
  void JudgeOrphan(const history::FactsPass& f, std::unique_ptr<Orphan> o);
  void FinalJudgeOrphan(const history::FactsPass& f, std::unique_ptr<Orphan> o);
  void AddOrphan(std::unique_ptr<Orphan> o);
  void SettleSynchronizers(const history::FactsPass& f, const history::Event& e);
  std::unique_ptr<Orphan> OpenSyncOrphan(const history::FactsPass& f, const history::Event& e, int lock,
                                         const SyncState& st, const std::vector<int>* crashed);
  bool CounterLeft(const history::FactsPass& f) const;

  // orphans_explain.cpp
  Violation Explain(const Narrator& n, const Orphan& orphan) const;
  void ExplainOrphanedLock(const Narrator& n, const Orphan& orphan, const std::string& lasted,
                           const std::string& where, Violation* v, std::vector<int>* clients,
                           int64_t* context_us) const;
  void ExplainSynchronizer(const Narrator& n, const Orphan& orphan, const std::string& lasted,
                           const std::string& where, Violation* v) const;
  void ExplainBeginning(const Narrator& n, const Orphan& orphan, Violation* v, std::vector<int>* clients) const;
  void ExplainRoleBeginning(const Narrator& n, const OrphanSpan& span, Violation* v) const;

  const LivenessFacts& facts_;
  const int64_t bound_us_;
  ExplainedStretches* explained_;
  RuleFindings<Payload> found_;
  // Locks with owners.
  std::vector<std::map<int, OwnerKey>> keys_;             // By lock, then node (ordered).
  std::unordered_map<uint64_t, int> believing_;           // (thread, lock) -> open beliefs
  std::vector<int> touched_;                              // Locks the current event touched.
  std::unordered_map<uint64_t, LastAcquire> last_acquire_;  // (thread, lock)
  // Every kind.
  std::vector<std::unique_ptr<Orphan>> orphans_closing_;    // Ended; windows still open.
  std::vector<std::unique_ptr<Orphan>> orphan_candidates_;  // Locks with owners, for the end.
  uint64_t orphans_ = 0;
  // Semaphores and latches.
  std::vector<SyncState> sync_;
  std::vector<int> sync_touched_;
  bool sync_all_ = false;
  bool crash_point_ = false;
  std::map<int, std::vector<int>> crashed_holders_;  // Lock -> threads whose holds a crash ended.
  std::map<int, Counter> counters_;                  // Counting-down processes.
};

}  // namespace lockstep::check::liveness

#endif  // LOCKSTEP_CHECK_LIVENESS_ORPHANS_H_
