// Establishes that the History's file format is one encoder and one decoder: every typed
// detail writes the text the simulator has always written and reads back to the same fields;
// free text survives byte for byte; the writer's hash is the hash of the bytes on disk, plain
// or gzip-compressed; and a file cut short reads back as its prefix of whole events.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/reply.h"
#include "history/history.h"
#include "history/jsonl.h"
#include "history/notes.h"
#include "history/reader.h"
#include "history/writer.h"

namespace lockstep::history {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("lockstep-history-test-" + name)).string();
}

// The line an event writes, parsed back and written again.
std::string RoundTrip(const Event& e, NameTable* names) {
  std::string line;
  AppendJsonLine(e, *names, &line);
  std::string text, error;
  Event back;
  REQUIRE(ParseJsonLine(line, names, &text, &back, &error));
  std::string again;
  AppendJsonLine(back, *names, &again);
  CHECK(again == line);
  return line;
}

Event Typed(EventType type, Name op, Detail detail) {
  Event e;
  e.type = type;
  e.op = op;
  e.detail = detail;
  return e;
}

TEST_CASE("every typed detail writes the simulator's text and reads back to the same fields") {
  NameTable names;
  struct Case {
    Event event;
    std::string text;
  };
  const std::vector<Case> cases = {
      {Typed(EventType::kInvoke, names::kAcquire,
             AcquireCall{AcquireCall::Mode::kTryLock, 20'000'000, -1, -1}),
       "tryLock(wait=20000ms, no lease)"},
      {Typed(EventType::kInvoke, names::kAcquire,
             AcquireCall{AcquireCall::Mode::kTryLock, 1'500, 5'000'000, 1}),
       "tryLock(wait=1.500ms, lease=5000ms, permits=1)"},
      {Typed(EventType::kInvoke, names::kAcquireRead,
             AcquireCall{AcquireCall::Mode::kLock, 0, -1, -1}),
       "lock(no lease)"},
      // Leases Redisson 3.13.6 takes as given although they delete the lock (0, negative).
      {Typed(EventType::kInvoke, names::kAcquire,
             AcquireCall{AcquireCall::Mode::kTryLock, -1'000, 0, -1}),
       "tryLock(wait=-1ms, lease=0ms)"},
      {Typed(EventType::kInvoke, names::kAcquire,
             AcquireCall{AcquireCall::Mode::kLock, 0, -5'500, -1}),
       "lock(lease=-5.500ms)"},
      {Typed(EventType::kInvoke, names::kRelease, StockText{}), "unlock()"},
      {Typed(EventType::kResource, names::kEnter, Access{true}), "read"},
      {Typed(EventType::kResource, names::kExit, Write{true, 0, 0}), "accepted"},
      {Typed(EventType::kResource, names::kExit, Write{false, 7, 9}), "rejected: stale token 7 < 9"},
      {Typed(EventType::kFault, names::kPause, PauseFault{true, 13'337'215}),
       "GC pause for 13337.215ms"},
      {Typed(EventType::kFault, names::kPause, PauseFault{false, 3'000'000}), "pause for 3000ms"},
      {Typed(EventType::kFault, names::kPartition, PartitionFault{"c1,c2", "n1", false}),
       "c1,c2 | n1"},
      {Typed(EventType::kFault, names::kHeal, PartitionFault{"c1", "n1,n2", true}), "c1 -> n1,n2"},
      {Typed(EventType::kFault, names::kClockJump, ClockJumpFault{-40'000'000}),
       "wall clock jumps by -40000ms"},
      {Typed(EventType::kFault, names::kFailover, FailoverFault{"n1", 30'000'000}),
       "n1 down for 30000ms"},
      {Typed(EventType::kFault, names::kFailover, FailoverFault{"n1", -1}),
       "failover of n1 requested"},
      {Typed(EventType::kFault, names::kPromote, PromoteFault{"n2", "sentinel"}),
       "replica n2 promoted to master (sentinel)"},
      {Typed(EventType::kFault, names::kLoseReplies, LoseRepliesFault{"n3"}),
       "replies from n3 are lost"},
      {Typed(EventType::kFault, names::kLoseRepliesEnd, LoseRepliesFault{"n3"}),
       "replies from n3 flow again"},
      {Typed(EventType::kFault, names::kLatency, NetworkFault{200'000, 0, "c1,c2", "n1"}),
       "extra=200ms targets=c1,c2 peers=n1"},
      {Typed(EventType::kFault, names::kLatencyEnd, NetworkFault{1'500, 0, "n1", ""}),
       "extra=1.500ms targets=n1"},
      {Typed(EventType::kFault, names::kLoss, NetworkFault{0, 0.25, "c1", "n1,n2"}),
       "rate=0.25 targets=c1 peers=n1,n2"},
      {Typed(EventType::kFault, names::kLossEnd, NetworkFault{0, 1, "c1", ""}),
       "rate=1 targets=c1"},
      {Typed(EventType::kFault, names::kDuplicate, NetworkFault{0, 0.1, "n1", ""}),
       "rate=0.1 targets=n1"},
      {Typed(EventType::kFault, names::kDuplicateEnd, NetworkFault{0, 0.1, "n1", "c3"}),
       "rate=0.1 targets=n1 peers=c3"},
      {Typed(EventType::kFault, names::kCrash, StockText{}), "process killed"},
      {Typed(EventType::kFault, names::kRestart, StockText{}), "process restarted"},
      {Typed(EventType::kFault, names::kResume, StockText{}), "resumed"},
      {Typed(EventType::kNote, names::kRun, RunNote{60'000'000, 7, "contention-10"}),
       "end_us=60000000 seed=7 scenario=contention-10"},
      {Typed(EventType::kNote, names::kProtocol,
             ProtocolNote{"fairlock", "current", false, 1, 1, 300'000'000, {}, {}, {}, {}}),
       "kind=fairlock version=current fencing=off permits=1 nodes=1 fair_wait_timeout=300000ms"},
      {Typed(EventType::kNote, names::kCluster, ClusterNote{"n1=0-8191 n2=8192-16383", 3300}),
       "n1=0-8191 n2=8192-16383 lock_slot=3300"},
      {Typed(EventType::kNote, names::kClient, ClientNote{"0b1e-42"}), "uuid=0b1e-42"},
      {Typed(EventType::kNote, names::kRole, RoleNote{RoleNote::Role::kCountDown, 3}),
       "role=count_down threads=3"},
      {Typed(EventType::kNote, names::kRole, RoleNote{RoleNote::Role::kAddPermits, 1}),
       "role=add_permits threads=1"},
      {Typed(EventType::kNote, names::kRole, RoleNote{RoleNote::Role::kReducePermits, 2}),
       "role=reduce_permits threads=2"},
      {Typed(EventType::kNote, names::kRole, RoleNote{RoleNote::Role::kTrySetPermits, 1}),
       "role=try_set_permits threads=1"},
      {Typed(EventType::kNote, names::kRole, RoleNote{RoleNote::Role::kDrainPermits, 4}),
       "role=drain_permits threads=4"},
      {Typed(EventType::kNote, names::kDone, DoneNote{5}), "ops_per_thread=5"},
      {Typed(EventType::kNote, names::kRediscover, RediscoverNote{"n2"}),
       "clients now send to n2"},
      {Typed(EventType::kLease, names::kAcquired, Owners{"u1:1,u2:1:write,mode"}),
       "u1:1,u2:1:write,mode"},
      {Typed(EventType::kReplicated, names::kApplied, Owners{"u1:2"}), "u1:2"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    CHECK(DetailText(c.event) == c.text);
    const Detail back = DecodeDetail(c.event.type, c.event.op, c.text);
    CHECK(back.index() == c.event.detail.index());
    Event decoded = c.event;
    decoded.detail = back;
    CHECK(DetailText(decoded) == c.text);
    RoundTrip(c.event, &names);
  }
}

TEST_CASE("a network window's text reads back to its fields, other text stays free text") {
  const Detail latency =
      DecodeDetail(EventType::kFault, names::kLatency, "extra=2.500ms targets=c1,n2 peers=n1");
  const NetworkFault* l = std::get_if<NetworkFault>(&latency);
  REQUIRE(l != nullptr);
  CHECK(l->extra_us == 2'500);
  CHECK(l->targets == "c1,n2");
  CHECK(l->peers == "n1");
  // A rate that is not exactly representable reads back to the same double.
  const double rate = 0.1 + 0.2;
  Event e = Typed(EventType::kFault, names::kDuplicate, NetworkFault{0, rate, "c1", ""});
  const std::string text = DetailText(e);
  const Detail back = DecodeDetail(EventType::kFault, names::kDuplicate, text);
  REQUIRE(std::holds_alternative<NetworkFault>(back));
  CHECK(std::get<NetworkFault>(back).rate == rate);
  std::vector<std::string> names_seen;
  ForEachNetworkFaultName(NetworkFault{0, 1, "c1,n1", "n1,c2"},
                          [&](std::string_view name) { names_seen.emplace_back(name); });
  CHECK(names_seen == std::vector<std::string>{"c1", "n1", "c2"});
  for (const auto& [op, bad] : std::vector<std::pair<Name, std::string>>{
           {names::kLatency, "rate=0.5 targets=c1"},    // latency speaks of extra
           {names::kLoss, "extra=5ms targets=c1"},      // loss of rate
           {names::kLoss, "rate=1.5 targets=c1"},       // not a probability
           {names::kLoss, "rate=0.5 targets="},         // no targets
           {names::kLoss, "rate=0.5 targets=c1 peers="},
           {names::kDuplicate, "rate=0.5"},
           {names::kLatency, "extra=5 targets=c1"}}) {  // ms is written
    INFO(bad);
    CHECK(std::holds_alternative<Text>(DecodeDetail(EventType::kFault, op, bad)));
  }
}

TEST_CASE("a reply is rendered only when written, as Reply::Debug renders it") {
  NameTable names;
  const Reply nil = Reply::Null();
  const Reply array = Reply::Array({Reply::Integer(0), Reply::Bulk("x")});
  Event e = Typed(EventType::kExec, names::kAcquire, ReplyDetail{&nil});
  std::string scratch;
  CHECK(ReplyText(e, &scratch) == "(nil)");
  CHECK(IsNilReply(ReplyText(e, &scratch)));
  e.detail = ReplyDetail{&array};
  CHECK(RoundTrip(e, &names).find("\"detail\":\"[0, \\\"x\\\"]\"") != std::string::npos);
  CHECK(CountReply("\"3\"") == 3);
  CHECK(IntegerReply(" 12 ") == 12);
  CHECK_FALSE(IntegerReply("\"12\""));
}

TEST_CASE("a reply's text is kept up to kReplyTextMaxBytes, and says where it was cut") {
  NameTable names;
  const Reply big = Reply::Bulk(std::string(1'000'000, 'x'));
  std::vector<Reply> many(1'000'000, Reply::Integer(1));
  const Reply wide = Reply::Array(std::move(many));
  for (const Reply* r : {&big, &wide}) {
    Event e = Typed(EventType::kExec, names::kAcquire, ReplyDetail{r});
    std::string scratch;
    const std::string_view text = ReplyText(e, &scratch);
    CHECK(text.size() < kReplyTextMaxBytes + 40);
    CHECK(text.find("... (cut at 4096 bytes)") == kReplyTextMaxBytes);
    const std::string line = RoundTrip(e, &names);
    CHECK(line.size() < kReplyTextMaxBytes + 200);
  }
  // A short reply is whole, as Reply::Debug renders it.
  const Reply small = Reply::Array({Reply::Integer(1), Reply::Bulk("a")});
  std::string out;
  small.AppendDebug(&out, kReplyTextMaxBytes);
  CHECK(out == small.Debug());
  CHECK(Reply::Bulk(std::string(300, 'y')).Quoted().size() ==
        Reply::kQuotedMaxBytes + std::string("... (cut at 200 bytes)").size());
}

TEST_CASE("free text that matches no typed form is kept byte for byte") {
  NameTable names;
  for (const std::string text : {"tryLock(wait=5s)", "pause for 1.5ms", "c1 <-> n1",
                                 "GC pause for 5.000ms", "weird \"quoted\" \x01 text\n"}) {
    for (Name op : {Name{names::kAcquire}, Name{names::kPause}, Name{names::kPartition}}) {
      const EventType type = op == names::kAcquire ? EventType::kInvoke : EventType::kFault;
      Event e = Typed(type, op, DecodeDetail(type, op, text));
      e.source = text;
      CHECK(DetailText(e) == text);
      RoundTrip(e, &names);
    }
  }
}

TEST_CASE("free-text acquires are read as the checkers always read them") {
  NameTable names;
  auto invoke = [](std::string_view text) {
    Event e = Typed(EventType::kInvoke, names::kAcquire, DecodeDetail(EventType::kInvoke,
                                                                      names::kAcquire, text));
    e.source = text;
    return e;
  };
  CHECK(AcquireWaitUs(invoke("tryLock(wait=5s)")) == 5'000'000);
  // A wait of 0 or less is one attempt, not forever (RedissonLock.tryLock: time <= 0).
  CHECK(AcquireWaitUs(invoke("tryLock(wait=-1ms, no lease)")) == 0);
  CHECK(AcquireWaitUs(invoke("lock()")) == kForeverUs);
  CHECK(AcquireWaitUs(invoke("tryLock()")) == 0);
  CHECK(AcquireWaitUs(invoke("tryLock(wait=250ms, lease=1000ms)")) == 250'000);
  CHECK(PermitsOf(invoke("tryLock(wait=0ms, no lease, permits=3)")) == 3);
  CHECK(PermitsOf(invoke("acquire(permits=2)")) == 2);
  Event bare = invoke("");
  bare.has_value = true;
  bare.value = 4;
  CHECK(PermitsOf(bare) == 4);
}

TEST_CASE("binary-safe strings: bytes outside printable ASCII are written as \\u00XX") {
  NameTable names;
  Event e = Typed(EventType::kMessage, names.Intern("ch\xff"), Text{std::string_view("a\0b\x7f", 4)});
  const std::string line = RoundTrip(e, &names);
  CHECK(line.find("\"op\":\"ch\\u00ff\"") != std::string::npos);
  CHECK(line.find("\"detail\":\"a\\u0000b\\u007f\"") != std::string::npos);
}

// A small run's events, appended through a recorder to the given sinks.
void Record(std::vector<EventSink*> sinks, Recorder* recorder, int count) {
  for (EventSink* s : sinks) recorder->AddSink(s);
  const Name c1 = recorder->names().Intern("c1");
  const Name lock = recorder->names().Intern("lock");
  for (int i = 0; i < count; ++i) {
    Event e;
    e.t_us = i * 1000;
    e.type = i % 2 == 0 ? EventType::kInvoke : EventType::kOk;
    e.process = c1;
    e.thread = 0;
    e.op = names::kAcquire;
    e.lock = lock;
    e.local_ms = 1'767'225'600'000 + i;
    if (i % 2 == 0) {
      e.detail = AcquireCall{AcquireCall::Mode::kTryLock, 1'000'000, -1, -1};
    } else {
      e.detail = Text{"acquired"};
    }
    recorder->Append(e);
  }
}

TEST_CASE("the writer's hash is the hash of the file, plain or gzip, the reader streams it back") {
  for (HistoryFormat format : {HistoryFormat::kJsonl, HistoryFormat::kJsonlGz}) {
    INFO(HistoryFormatName(format));
    const std::string path = TempPath(std::string("w.") + HistoryFormatName(format));
    Recorder recorder;
    History kept(recorder.shared_names());
    std::string error;
    auto writer = HistoryWriter::Open(path, format, &recorder.names(), &error);
    REQUIRE(writer);
    Record({&kept, writer.get()}, &recorder, 20'000);  // More than the 1 MiB buffer holds.
    REQUIRE(writer->Close());
    CHECK(writer->events() == 20'000);
    CHECK(writer->hash() == kept.Hash());
    NameTable names;
    History back;
    ReadStats stats;
    REQUIRE(ReadHistoryFile(path, &back.names(), &back, &stats, &error));
    CHECK_FALSE(stats.truncated);
    CHECK(stats.events == 20'000);
    CHECK(stats.hash == kept.Hash());
    CHECK(back.Hash() == kept.Hash());
    std::remove(path.c_str());
  }
}

TEST_CASE("a file cut inside a line reads back as its whole events, marked truncated") {
  const std::string path = TempPath("cut.jsonl");
  Recorder recorder;
  History kept(recorder.shared_names());
  Record({&kept}, &recorder, 10);
  std::string write_error;
  REQUIRE(kept.WriteFile(path, &write_error));
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t last_line = bytes.rfind('\n', bytes.size() - 2);
  bytes.resize(last_line + 10);  // Ten bytes of the last line.
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  History back;
  ReadStats stats;
  std::string error;
  REQUIRE(ReadHistoryFile(path, &back.names(), &back, &stats, &error));
  CHECK(stats.truncated);
  CHECK(back.size() == 9);
  std::remove(path.c_str());
}

TEST_CASE("a malformed line is an error naming the line, time may not go backwards") {
  const std::string path = TempPath("bad.jsonl");
  {
    std::ofstream out(path);
    out << "{\"seq\":0,\"t\":5,\"type\":\"note\"}\n{\"seq\":1,\"t\":4,\"type\":\"note\"}\n";
  }
  History back;
  ReadStats stats;
  std::string error;
  CHECK_FALSE(ReadHistoryFile(path, &back.names(), &back, &stats, &error));
  CHECK(error == path + ":2: time goes backwards");
  {
    std::ofstream out(path);
    out << "{\"seq\":0,\"t\":\"5\",\"type\":\"note\"}\n";
  }
  CHECK_FALSE(ReadHistoryFile(path, &back.names(), &back, &stats, &error));
  CHECK(error == path + ":1: \"t\" must be a number");
  std::remove(path.c_str());
}

// The reader trusts no file: each of these is refused with the file, the line and what is
// wrong, and the sink gets only the events before the bad line.
TEST_CASE("the reader refuses what a run never writes, naming the line") {
  const std::string path = TempPath("refused.jsonl");
  const std::string ok0 = "{\"seq\":0,\"t\":0,\"type\":\"note\",\"process\":\"sim\",\"op\":\"run\"}\n";
  const struct {
    const char* what;
    std::string second_line;
    std::string error;
  } cases[] = {
      {"no type", "{\"seq\":1,\"t\":5}", "no \"type\": every event has \"seq\", \"t\" and \"type\""},
      {"no seq", "{\"t\":5,\"type\":\"note\"}", "no \"seq\": every event has \"seq\", \"t\" and \"type\""},
      {"no t", "{\"seq\":1,\"type\":\"note\"}", "no \"t\": every event has \"seq\", \"t\" and \"type\""},
      {"a gap in seq", "{\"seq\":2,\"t\":5,\"type\":\"note\"}",
       "\"seq\" is 2 where 1 comes next (events are numbered from 0, in order, without gaps)"},
      {"seq repeated", "{\"seq\":0,\"t\":5,\"type\":\"note\"}",
       "\"seq\" is 0 where 1 comes next (events are numbered from 0, in order, without gaps)"},
      {"a key twice", "{\"seq\":1,\"t\":5,\"t\":6,\"type\":\"note\"}", "\"t\" given twice at column 20"},
      {"thread 2^31-1",
       "{\"seq\":1,\"t\":5,\"type\":\"invoke\",\"process\":\"c1\",\"thread\":2147483647}",
       "\"thread\" is 2147483647, outside -1..1023"},
      {"thread below -1", "{\"seq\":1,\"t\":5,\"type\":\"invoke\",\"process\":\"c1\",\"thread\":-2}",
       "\"thread\" is -2, outside -1..1023"},
      {"negative time", "{\"seq\":1,\"t\":-1,\"type\":\"note\"}", "\"t\" is -1, outside 0..9007199254740992"},
      {"time past 2^53", "{\"seq\":1,\"t\":9007199254740993,\"type\":\"note\"}",
       "\"t\" is 9007199254740993, outside 0..9007199254740992"},
      {"a line of 2 MiB", std::string(2 << 20, ' '), "line longer than 1048576 bytes, not a history line"},
      // A raw ESC byte inside a string (it would reach the terminal as it is).
      {"a raw control byte in a string",
       "{\"seq\":1,\"t\":5,\"type\":\"note\",\"detail\":\"a\x1b[2Jb\"}",
       "a raw control byte inside a string (JSON escapes them, as lockstep writes them)"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << ok0 << c.second_line << "\n";
    }
    History back;
    ReadStats stats;
    std::string error;
    CHECK_FALSE(ReadHistoryFile(path, &back.names(), &back, &stats, &error));
    CHECK(error == path + ":2: " + c.error);
    CHECK(back.size() == 1);
  }
  std::remove(path.c_str());
}

// The protocol note decides how the readers read every later event, and a history
// that changed it midway crashed `report` (the fairness checker met an acquire it had never
// seen queue). Once, before the first event that is not a note; else refused with the line.
TEST_CASE("the reader refuses a second protocol note and one after the first operation") {
  const std::string path = TempPath("protocol.jsonl");
  const std::string run = "{\"seq\":0,\"t\":0,\"type\":\"note\",\"process\":\"sim\",\"op\":\"run\"}\n";
  const auto protocol = [](int seq, int t) {
    return "{\"seq\":" + std::to_string(seq) + ",\"t\":" + std::to_string(t) +
           ",\"type\":\"note\",\"process\":\"sim\",\"op\":\"protocol\",\"detail\":\"kind=fairlock "
           "version=current fencing=off permits=1 nodes=1\"}\n";
  };
  const std::string invoke =
      "{\"seq\":2,\"t\":5,\"type\":\"invoke\",\"process\":\"c1\",\"thread\":0,\"op\":\"acquire\","
      "\"lock\":\"lock\"}\n";
  const struct {
    std::string text;
    std::string error;
  } cases[] = {
      {run + protocol(1, 0) + protocol(2, 0), ":3: a second protocol note (a history has one, at its start)"},
      {run + "{\"seq\":1,\"t\":1,\"type\":\"resource\",\"process\":\"c1\",\"thread\":0,\"op\":\"enter\","
             "\"lock\":\"lock\"}\n" + protocol(2, 1),
       ":3: a protocol note after the run's first event that is not a note (line 2); it must "
       "come before them"},
  };
  for (const auto& c : cases) {
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << c.text;
    }
    History back;
    ReadStats stats;
    std::string error;
    CHECK_FALSE(ReadHistoryFile(path, &back.names(), &back, &stats, &error));
    CHECK(error == path + c.error);
  }
  // The usual order reads.
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << run << protocol(1, 0) << invoke;
  }
  History back;
  ReadStats stats;
  std::string error;
  CHECK(ReadHistoryFile(path, &back.names(), &back, &stats, &error));
  std::remove(path.c_str());
}

TEST_CASE("the reader refuses an empty file, a directory, a device and too many locks") {
  History back;
  ReadStats stats;
  std::string error;
  const std::string empty = TempPath("empty.jsonl");
  { std::ofstream out(empty); }
  CHECK_FALSE(ReadHistoryFile(empty, &back.names(), &back, &stats, &error));
  CHECK(error == empty + ": empty file, not a history (a run's history has at least its notes)");
  // Blank lines only: no event.
  { std::ofstream out(empty); out << "\n\n"; }
  CHECK_FALSE(ReadHistoryFile(empty, &back.names(), &back, &stats, &error));
  CHECK(error == empty + ": no events, not a history (a run's history has at least its notes)");
  std::remove(empty.c_str());

  const std::string dir = TempPath("dir.jsonl");
  std::filesystem::create_directories(dir);
  CHECK_FALSE(ReadHistoryFile(dir, &back.names(), &back, &stats, &error));
  CHECK(error == "cannot read " + dir + ": a directory, not a history file");
  std::filesystem::remove(dir);

  CHECK_FALSE(ReadHistoryFile("/dev/zero", &back.names(), &back, &stats, &error));
  CHECK(error == "cannot read /dev/zero: a character device, not a history file");

  const std::string many = TempPath("locks.jsonl");
  {
    std::ofstream out(many);
    for (size_t i = 0; i <= kMaxHistoryLocks; ++i) {
      out << "{\"seq\":" << i << ",\"t\":0,\"type\":\"note\",\"lock\":\"l" << i << "\"}\n";
    }
  }
  CHECK_FALSE(ReadHistoryFile(many, &back.names(), &back, &stats, &error));
  CHECK(error == many + ":" + std::to_string(kMaxHistoryLocks + 1) + ": more than " +
                     std::to_string(kMaxHistoryLocks) + " locks, more than a history may name");
  // Threads times locks: 64 locks leave room for 4096 threads.
  {
    std::ofstream out(many);
    size_t seq = 0;
    for (size_t i = 0; i < kMaxHistoryLocks; ++i) {
      out << "{\"seq\":" << seq++ << ",\"t\":0,\"type\":\"note\",\"lock\":\"l" << i << "\"}\n";
    }
    for (int p = 0; p < 5; ++p) {
      for (int t = 0; t <= kMaxThreadIndex; ++t) {
        out << "{\"seq\":" << seq++ << ",\"t\":0,\"type\":\"invoke\",\"process\":\"c" << p
            << "\",\"thread\":" << t << "}\n";
      }
    }
  }
  CHECK_FALSE(ReadHistoryFile(many, &back.names(), &back, &stats, &error));
  CHECK(error == many + ":" + std::to_string(kMaxHistoryLocks + 4096 + 1) +
                     ": 4097 threads and 64 locks: more than 262144 (thread, lock) pairs, more "
                     "than a history may name");
  std::remove(many.c_str());
}

TEST_CASE("a writer whose writes fail says so at once, and Close reports it") {
  // /dev/full takes the open and fails every write with ENOSPC, as a full disk does.
  Recorder recorder;
  std::string error;
  auto writer = HistoryWriter::Open("/dev/full", HistoryFormat::kJsonl, &recorder.names(), &error);
  REQUIRE(writer);
  CHECK_FALSE(writer->failed());
  Record({writer.get()}, &recorder, 20'000);  // More than the 1 MiB buffer holds.
  CHECK_FALSE(writer->Flush());
  CHECK(writer->failed());
  CHECK(writer->error() == "write to /dev/full failed: No space left on device");
  CHECK_FALSE(writer->Close());
  // Never Discard() here: it would remove /dev/full.
}

}  // namespace
}  // namespace lockstep::history
