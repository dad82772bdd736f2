// Establishes that a Handoff hands its sinks the events as they were appended, on its own
// thread: every kind of detail, with its texts copied before the driver reuses them, names
// interned while the reading thread reads others, more events than fit in its batches, and a
// sink's failure reported by Finish().
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/reply.h"
#include "history/handoff.h"
#include "history/history.h"
#include "history/jsonl.h"

namespace lockstep::history {
namespace {

// Writes every event it reads as its JSON line, and notes the thread it ran on.
class LineSink : public EventSink {
 public:
  explicit LineSink(const NameTable* names) : names_(names) {}
  void OnEvent(const Event& e) override {
    std::string line;
    AppendJsonLine(e, *names_, &line);
    lines.push_back(std::move(line));
    thread = std::this_thread::get_id();
  }
  std::vector<std::string> lines;
  std::thread::id thread;

 private:
  const NameTable* names_;
};

// One event of each detail kind, whose texts live in `scratch` (overwritten by the caller
// after the append, as a driver's buffers are).
std::vector<Event> EveryDetail(NameTable& names, std::string& scratch, const Reply* reply, int i) {
  scratch = "text-" + std::to_string(i) + std::string(static_cast<size_t>(i % 97), 'x');
  const std::string_view t = scratch;
  auto at = [&](EventType type, Name op, Detail d) {
    Event e;
    e.t_us = i;
    e.type = type;
    e.op = op;
    e.process = names.Intern("c" + std::to_string(i));  // A new name every few events.
    e.thread = i % 3;
    e.detail = d;
    return e;
  };
  std::vector<Event> out = {
      at(EventType::kInvoke, names::kAcquire, AcquireCall{AcquireCall::Mode::kTryLock, 2, 3, -1}),
      at(EventType::kInvoke, names::kRelease, StockText{}),
      at(EventType::kOk, names::kAcquire, Text{t}),
      at(EventType::kExec, names::kAcquire, ReplyDetail{reply}),
      at(EventType::kExec, names::kAcquire, ReplyDetail{nullptr}),
      at(EventType::kLease, names::kAcquired, Owners{t}),
      at(EventType::kResource, names::kEnter, Access{true}),
      at(EventType::kResource, names::kExit, Write{false, 7, 9}),
      at(EventType::kFault, names::kPause, PauseFault{true, 13}),
      at(EventType::kFault, names::kPartition, PartitionFault{t, t.substr(1), true}),
      at(EventType::kFault, names::kClockJump, ClockJumpFault{-40}),
      at(EventType::kFault, names::kFailover, FailoverFault{t, 30}),
      at(EventType::kFault, names::kPromote, PromoteFault{t, t.substr(2)}),
      at(EventType::kFault, names::kLoseReplies, LoseRepliesFault{t}),
      at(EventType::kFault, names::kLatency, NetworkFault{200, 0, t, t.substr(3)}),
      at(EventType::kNote, names::kRun, RunNote{60, 7, t}),
      at(EventType::kNote, names::kProtocol, ProtocolNote{t, t.substr(1), true, 2, 3, 4, t.substr(2), t.substr(3), t.substr(1), t.substr(2)}),
      at(EventType::kNote, names::kCluster, ClusterNote{t, 3300}),
      at(EventType::kNote, names::kClient, ClientNote{t}),
      at(EventType::kNote, names::kRole, RoleNote{RoleNote::Role::kAwait, 3}),
      at(EventType::kNote, names::kDone, DoneNote{5}),
      at(EventType::kNote, names::kRediscover, RediscoverNote{t}),
      at(EventType::kNote, names::kHolderValue, HolderNote{t}),
  };
  // An event read from a file keeps its detail's text as written.
  Event sourced = at(EventType::kOk, names::kAcquire, Text{});
  sourced.source = t;
  out.push_back(sourced);
  // Now and then a text longer than a storage block.
  static const std::string kLong(100'000, 'L');
  if (i % 500 == 0) out.push_back(at(EventType::kOk, names::kAcquire, Text{kLong}));
  return out;
}

TEST_CASE("a handoff gives its sinks every event as appended, on a thread of its own") {
  Recorder recorder;
  NameTable& names = recorder.names();
  LineSink inline_sink(&names);
  LineSink first(&names), second(&names);
  Handoff handoff({&first, &second});
  recorder.AddSink(&inline_sink);
  recorder.AddSink(&handoff);

  std::string scratch;
  Reply reply = Reply::Array({Reply::Integer(1), Reply::Bulk("b"), Reply::Null()});
  const int rounds = 3000;  // About 70,000 events: many more than the batches hold at once.
  size_t appended = 0;
  for (int i = 0; i < rounds; ++i) {
    reply.elements[1].str = "bulk-" + std::to_string(i);
    for (Event& e : EveryDetail(names, scratch, &reply, i)) {
      recorder.Append(e);
      ++appended;
      // The driver reuses its buffers at once.
      scratch.assign(scratch.size(), '#');
      reply.elements[0].integer = -1;
    }
  }
  handoff.Finish();

  REQUIRE(appended == static_cast<size_t>(rounds) * 24 + rounds / 500);
  REQUIRE(inline_sink.lines.size() == appended);
  CHECK(names.size() > 2 * 1024);  // Names past the first segments were read on the thread.
  CHECK(first.lines == inline_sink.lines);
  CHECK(second.lines == inline_sink.lines);
  CHECK(first.thread != std::this_thread::get_id());
  CHECK(inline_sink.thread == std::this_thread::get_id());
}

TEST_CASE("a handoff with nothing appended finishes at once, Finish twice is harmless") {
  NameTable names;
  LineSink sink(&names);
  Handoff handoff({&sink});
  handoff.Finish();
  handoff.Finish();
  CHECK(sink.lines.empty());
}

class ThrowingSink : public EventSink {
 public:
  void OnEvent(const Event& e) override {
    if (e.t_us == 5000) throw std::runtime_error("sink failed at 5000");
    ++seen;
  }
  int seen = 0;
};

TEST_CASE("what a sink throws on the reading thread is thrown by Finish") {
  Recorder recorder;
  ThrowingSink sink;
  Handoff handoff({&sink});
  recorder.AddSink(&handoff);
  for (int i = 0; i < 20'000; ++i) {
    Event e;
    e.t_us = i;
    recorder.Append(e);  // The driver goes on: it learns of the failure at Finish().
  }
  CHECK_THROWS_WITH(handoff.Finish(), "sink failed at 5000");
  CHECK(sink.seen == 5000);
}

TEST_CASE("names interned in segments read back by id") {
  NameTable names;
  std::vector<Name> ids;
  for (int i = 0; i < 10'000; ++i) ids.push_back(names.Intern("name-" + std::to_string(i)));
  for (int i = 0; i < 10'000; ++i) {
    CHECK(names.Str(ids[static_cast<size_t>(i)]) == "name-" + std::to_string(i));
    CHECK(names.Find("name-" + std::to_string(i)) == ids[static_cast<size_t>(i)]);
  }
  CHECK(names.Str(names::kAcquire) == "acquire");
  CHECK(names.size() == names::kVocabularySize + 10'000);
}

}  // namespace
}  // namespace lockstep::history
