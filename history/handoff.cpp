#include "history/handoff.h"

#include <cassert>
#include <cstring>
#include <type_traits>
#include <variant>

#include "core/reply.h"

namespace lockstep::history {

// Up to kBatchEvents events, with copies of everything they refer to.
struct Handoff::Batch {
  static constexpr size_t kBlockBytes = 64 * 1024;

  std::vector<Event> events;
  std::vector<Reply> replies;  // At most one per event: reserved, so never moved.
  // The events' texts: blocks of kBlockBytes, filled in turn and kept for the next use; a
  // text longer than a block gets a block of its own, freed when the batch is cleared.
  std::vector<std::unique_ptr<char[]>> blocks;
  size_t block = 0;  // The block being filled,
  size_t used = 0;   // and how much of it.
  std::vector<std::unique_ptr<char[]>> big;

  Batch() {
    events.reserve(kBatchEvents);
    replies.reserve(kBatchEvents);
  }

  std::string_view Keep(std::string_view s) {
    if (s.empty()) return {};
    if (s.size() > kBlockBytes) {
      big.push_back(std::make_unique<char[]>(s.size()));
      std::memcpy(big.back().get(), s.data(), s.size());
      return {big.back().get(), s.size()};
    }
    if (blocks.empty() || used + s.size() > kBlockBytes) {
      if (!blocks.empty()) ++block;
      if (block == blocks.size()) blocks.push_back(std::make_unique<char[]>(kBlockBytes));
      used = 0;
    }
    char* at = blocks[block].get() + used;
    std::memcpy(at, s.data(), s.size());
    used += s.size();
    return {at, s.size()};
  }

  void Clear() {
    events.clear();
    replies.clear();
    block = 0;
    used = 0;
    big.clear();
  }
};

Handoff::Handoff(std::vector<EventSink*> sinks) : sinks_(std::move(sinks)) {
  for (size_t i = 0; i < kBatches; ++i) {
    all_.push_back(std::make_unique<Batch>());
    free_.push_back(all_.back().get());
  }
  current_ = free_.back();
  free_.pop_back();
  thread_ = std::thread([this] { ReadLoop(); });
}

Handoff::~Handoff() {
  try {
    Finish();
  } catch (...) {
    // Finish() was not called, and a sink failed: nobody is left to tell.
  }
}

void Handoff::OnEvent(const Event& e) {
  assert(current_ != nullptr);  // Not after Finish().
  Batch& b = *current_;
  Event& copy = b.events.emplace_back(e);
  copy.source = b.Keep(e.source);
  // Every alternative is listed: a new one must say how its texts are copied, or this does
  // not compile.
  const auto keep = [&b](std::string_view s) { return b.Keep(s); };
  copy.detail = std::visit(
      [&](const auto& d) -> Detail {
        using T = std::decay_t<decltype(d)>;
        if constexpr (std::is_same_v<T, NoDetail> || std::is_same_v<T, StockText> ||
                      std::is_same_v<T, AcquireCall> || std::is_same_v<T, Access> ||
                      std::is_same_v<T, Write> || std::is_same_v<T, PauseFault> ||
                      std::is_same_v<T, ClockJumpFault> || std::is_same_v<T, RoleNote> ||
                      std::is_same_v<T, DoneNote>) {
          return d;  // Numbers and flags only.
        } else if constexpr (std::is_same_v<T, Text>) {
          return Text{keep(d.text)};
        } else if constexpr (std::is_same_v<T, ReplyDetail>) {
          if (d.reply == nullptr) return d;
          assert(b.replies.size() < b.replies.capacity());
          b.replies.push_back(*d.reply);
          return ReplyDetail{&b.replies.back()};
        } else if constexpr (std::is_same_v<T, Owners>) {
          return Owners{keep(d.list)};
        } else if constexpr (std::is_same_v<T, PartitionFault>) {
          return PartitionFault{keep(d.side_a), keep(d.side_b), d.one_way};
        } else if constexpr (std::is_same_v<T, FailoverFault>) {
          return FailoverFault{keep(d.master), d.down_after_us};
        } else if constexpr (std::is_same_v<T, PromoteFault>) {
          return PromoteFault{keep(d.replica), keep(d.why)};
        } else if constexpr (std::is_same_v<T, LoseRepliesFault>) {
          return LoseRepliesFault{keep(d.node)};
        } else if constexpr (std::is_same_v<T, NetworkFault>) {
          return NetworkFault{d.extra_us, d.rate, keep(d.targets), keep(d.peers)};
        } else if constexpr (std::is_same_v<T, RunNote>) {
          return RunNote{d.end_us, d.seed, keep(d.scenario)};
        } else if constexpr (std::is_same_v<T, ProtocolNote>) {
          ProtocolNote n = d;
          n.kind = keep(d.kind);
          n.version = keep(d.version);
          n.layout = keep(d.layout);
          n.unlock = keep(d.unlock);
          n.quorum = keep(d.quorum);
          n.owner = keep(d.owner);
          return n;
        } else if constexpr (std::is_same_v<T, ClusterNote>) {
          return ClusterNote{keep(d.slots), d.lock_slot};
        } else if constexpr (std::is_same_v<T, ClientNote>) {
          return ClientNote{keep(d.uuid)};
        } else if constexpr (std::is_same_v<T, RediscoverNote>) {
          return RediscoverNote{keep(d.node)};
        } else if constexpr (std::is_same_v<T, HolderNote>) {
          return HolderNote{keep(d.value)};
        } else {
          static_assert(sizeof(T) == 0, "Handoff: say how this detail's texts are copied");
        }
      },
      e.detail);
  if (b.events.size() == kBatchEvents) Submit();
}

Handoff::Batch* Handoff::TakeFree() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !free_.empty(); });
  Batch* b = free_.back();
  free_.pop_back();
  return b;
}

void Handoff::Submit() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    full_.push_back(current_);
  }
  cv_.notify_all();
  current_ = TakeFree();
}

void Handoff::ReadLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return !full_.empty() || closing_; });
    if (full_.empty()) return;  // Closing, and everything handed over is read.
    Batch* b = full_.front();
    full_.pop_front();
    const bool failed = failure_ != nullptr;
    lock.unlock();
    std::exception_ptr failure;
    if (!failed) {
      try {
        for (const Event& e : b->events) {
          for (EventSink* sink : sinks_) sink->OnEvent(e);
        }
      } catch (...) {
        failure = std::current_exception();
      }
    }
    b->Clear();
    lock.lock();
    if (failure != nullptr && failure_ == nullptr) failure_ = failure;
    free_.push_back(b);
    cv_.notify_all();
  }
}

void Handoff::Finish() {
  if (finished_) return;
  finished_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!current_->events.empty()) full_.push_back(current_);
    current_ = nullptr;
    closing_ = true;
  }
  cv_.notify_all();
  thread_.join();
  if (failure_ != nullptr) std::rethrow_exception(failure_);
}

}  // namespace lockstep::history
