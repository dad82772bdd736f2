// A sink that passes the events on to other sinks on a thread of its own, so that a driver's
// readers (the facts pass and the checkers, the history file's formatting) run beside it
// instead of after each event: a run then takes about a core and a half and ends sooner.
//
// The driver's thread copies each event (its texts into the batch's own storage, a reply into
// the batch's replies) into a batch of kBatchEvents; a full batch goes to the reading thread,
// which hands its events, in order, to each sink. At most kBatches are in flight: a driver
// that runs ahead of its readers waits, so memory stays bounded. The sinks receive the same
// events in the same order as if they had been added to the recorder themselves, so what they
// produce is the same: only when they do it changes.
//
// A sink that reads names (NameTable::Str) may do so on the reading thread while the driver
// interns more: NameTable never moves a view once made.
#ifndef LOCKSTEP_HISTORY_HANDOFF_H_
#define LOCKSTEP_HISTORY_HANDOFF_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "history/event.h"

namespace lockstep::history {

class Handoff : public EventSink {
 public:
  // A batch's events take about 150 KiB: small enough that the batches in flight stay within a
  // core's L2 cache, where 4,096 (600 KiB each) did not (about 7 % of a contended run's wall
  // time, bench_sim case 1, six runs each way).
  static constexpr size_t kBatchEvents = 1024;
  static constexpr size_t kBatches = 4;

  // Starts the reading thread. The sinks must outlive Finish().
  explicit Handoff(std::vector<EventSink*> sinks);
  Handoff(const Handoff&) = delete;
  Handoff& operator=(const Handoff&) = delete;
  ~Handoff() override;

  void OnEvent(const Event& e) override;

  // Hands over what is left, waits until every sink has read it, and ends the thread. Call it
  // before reading the sinks' results. Rethrows what a sink threw (on the reading thread).
  void Finish();

 private:
  struct Batch;

  // Waits for a free batch (the driver's thread).
  Batch* TakeFree();
  // Queues the current batch for the reading thread.
  void Submit();
  void ReadLoop();

  std::vector<EventSink*> sinks_;
  std::vector<std::unique_ptr<Batch>> all_;
  Batch* current_ = nullptr;  // Filled by the driver's thread.

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Batch*> free_;   // Guarded by mu_.
  std::deque<Batch*> full_;    // Guarded by mu_: in order; the front is read next.
  bool closing_ = false;       // Guarded by mu_.
  std::exception_ptr failure_;  // Guarded by mu_: what a sink threw.
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace lockstep::history

#endif  // LOCKSTEP_HISTORY_HANDOFF_H_
