// The binary form (history/binary.h): the same events as the JSON Lines form, field for field,
// with the same hash; a file cut anywhere reads back as its whole events with their hash; a
// recorded hash that is not the events' is found when asked for; and bytes a run never writes
// are refused or read, never a crash.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "history/binary.h"
#include "history/history.h"
#include "history/jsonl.h"
#include "history/reader.h"
#include "history/writer.h"

namespace lockstep::history {
namespace {

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("lockstep-binary-test-" + name)).string();
}

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A test's own generator (not the simulator's): the events only need to vary.
struct Lcg {
  uint64_t state;
  uint64_t Next(uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % bound;
  }
};

// Events that use every field and every way the form encodes one: processes with clocks ahead,
// behind and jumping, no process, threads and none, values negative and large, details short
// (the dictionary), long, repeated and binary, names defined as they come.
void RecordVaried(Recorder* recorder, int count, uint64_t seed) {
  Lcg rng{seed};
  std::vector<Name> processes, ops, locks;
  for (const char* p : {"c1", "c2", "n1", "n2", "sim"}) processes.push_back(recorder->names().Intern(p));
  for (const char* o : {"acquire", "release", "redisson_lock__channel:{lock}", "enter", "exit"}) {
    ops.push_back(recorder->names().Intern(o));
  }
  for (const char* l : {"lock", "other"}) locks.push_back(recorder->names().Intern(l));
  std::vector<int64_t> offset_ms = {1'767'225'600'000, 1'767'225'600'000 - 40'000, 5, -7, 0};
  int64_t t = 0;
  for (int i = 0; i < count; ++i) {
    Event e;
    t += static_cast<int64_t>(rng.Next(4) == 0 ? 0 : rng.Next(100'000));
    e.t_us = t;
    e.type = static_cast<EventType>(rng.Next(static_cast<uint64_t>(EventType::kReplicated) + 1));
    if (e.type == EventType::kNote) e.type = EventType::kMessage;  // No second protocol note.
    const size_t p = rng.Next(processes.size() + 1);
    if (p < processes.size()) e.process = processes[p];
    if (rng.Next(3) != 0) e.thread = static_cast<int>(rng.Next(40));
    if (rng.Next(5) != 0) e.op = ops[rng.Next(ops.size())];
    if (rng.Next(4) != 0) e.lock = locks[rng.Next(locks.size())];
    if (rng.Next(2) == 0) e.peer = processes[rng.Next(processes.size())];
    if (p < processes.size() && rng.Next(5) != 0) {
      if (rng.Next(50) == 0) offset_ms[p] += static_cast<int64_t>(rng.Next(80'000)) - 40'000;  // A jump.
      e.local_ms = offset_ms[p] + t / 1000;
    }
    if (rng.Next(2) == 0) {
      e.has_value = true;
      e.value = rng.Next(10) == 0 ? -static_cast<int64_t>(rng.Next(1'000'000'000'000)) : static_cast<int64_t>(rng.Next(300));
    }
    std::string text;
    switch (rng.Next(6)) {
      case 0: break;
      case 1: text = std::to_string(29'990 + rng.Next(11)); break;
      case 2: text = "fresh " + std::to_string(i); break;
      case 3: text = std::string(100 + rng.Next(300), 'x'); break;
      case 4: text = std::string("a\0b\xff\n\"q\"", 8); break;
      default: text = "[\"subscribe\", \"redisson_lock__channel:{lock}\", 1]";
    }
    if (!text.empty()) e.detail = Text{text};
    recorder->Append(e);
  }
}

// The hash of each prefix of the events: [n] is over the first n lines.
std::vector<uint64_t> PrefixHashes(const History& h) {
  std::vector<uint64_t> hashes{kFnvOffset};
  std::string line;
  for (const Event& e : h.events()) {
    line.clear();
    AppendJsonLine(e, h.names(), &line);
    line.push_back('\n');
    hashes.push_back(FnvAppend(hashes.back(), line));
  }
  return hashes;
}

// Writes `count` varied events in `format`; returns the events as kept in memory.
History WriteVaried(const std::string& path, HistoryFormat format, int count, uint64_t seed) {
  Recorder recorder;
  History kept(recorder.shared_names());
  std::string error;
  auto writer = HistoryWriter::Open(path, format, &recorder.names(), &error);
  REQUIRE(writer);
  recorder.AddSink(&kept);
  recorder.AddSink(writer.get());
  RecordVaried(&recorder, count, seed);
  REQUIRE(writer->Close());
  CHECK(writer->hash() == kept.Hash());
  return kept;
}

TEST_CASE("the binary form reads back every field of every event, with the jsonl form's hash") {
  const std::string bin = TempPath("varied.bin");
  const std::string jsonl = TempPath("varied.jsonl");
  // Enough events for several of the writer's 1 MiB buffers: several checkpoints.
  const History kept = WriteVaried(bin, HistoryFormat::kBinary, 40'000, 7);
  const History same = WriteVaried(jsonl, HistoryFormat::kJsonl, 40'000, 7);
  REQUIRE(kept.Hash() == same.Hash());
  for (bool verify : {false, true}) {
    INFO("verify_hash " << verify);
    History back;
    ReadStats stats;
    std::string error;
    ReadOptions options;
    options.verify_hash = verify;
    REQUIRE(ReadHistoryFile(bin, &back.names(), &back, &stats, &error, options));
    CHECK_FALSE(stats.truncated);
    CHECK(stats.events == 40'000);
    CHECK(stats.hash == kept.Hash());
    CHECK(back.Hash() == kept.Hash());  // Each event's line, as the jsonl file has it.
    CHECK(stats.last_t_us == kept.events().back().t_us);
  }
  // The dump of the binary form is the jsonl file.
  std::string lines;
  {
    History back;
    ReadStats stats;
    std::string error;
    REQUIRE(ReadHistoryFile(bin, &back.names(), &back, &stats, &error));
    for (const Event& e : back.events()) {
      AppendJsonLine(e, back.names(), &lines);
      lines.push_back('\n');
    }
  }
  CHECK(lines == ReadBytes(jsonl));
  const auto bin_bytes = std::filesystem::file_size(bin);
  const auto jsonl_bytes = std::filesystem::file_size(jsonl);
  INFO(bin_bytes << " bytes binary, " << jsonl_bytes << " jsonl");
  CHECK(bin_bytes * 3 < jsonl_bytes);
  std::remove(bin.c_str());
  std::remove(jsonl.c_str());
}

TEST_CASE("a binary history cut anywhere reads back as its whole events, with their hash") {
  const std::string path = TempPath("cut.bin");
  const History kept = WriteVaried(path, HistoryFormat::kBinary, 300, 11);
  const std::vector<uint64_t> prefix = PrefixHashes(kept);
  const std::string bytes = ReadBytes(path);
  const std::string cut_path = TempPath("cut-part.bin");
  size_t read_some = 0, cuts = 0;
  // Every byte of the first records and the last (the closing checkpoint), every 7th between:
  // each kind of record is cut at each of its bytes somewhere (every byte took a minute under
  // the sanitizers).
  for (size_t size = kBinaryMagic.size(); size < bytes.size();
       size += size < 400 || size + 64 > bytes.size() ? 1 : 7) {
    ++cuts;
    WriteBytes(cut_path, bytes.substr(0, size));
    History back;
    ReadStats stats;
    std::string error;
    if (!ReadHistoryFile(cut_path, &back.names(), &back, &stats, &error)) {
      INFO("cut at " << size << ": " << error);
      CHECK(error.find("no events") != std::string::npos);  // Before the first whole event.
      continue;
    }
    ++read_some;
    INFO("cut at " << size);
    REQUIRE(stats.events <= kept.size());
    CHECK(stats.hash == prefix[stats.events]);
    CHECK(back.Hash() == prefix[stats.events]);
  }
  CHECK(read_some > cuts / 2);
  // A read that stops early hashes what it read.
  for (uint64_t n : {1, 64, 299, 300}) {
    History back;
    ReadStats stats;
    std::string error;
    ReadOptions options;
    options.max_events = n;
    REQUIRE(ReadHistoryFile(path, &back.names(), &back, &stats, &error, options));
    CHECK(stats.events == n);
    CHECK(stats.hash == prefix[n]);
  }
  std::remove(path.c_str());
  std::remove(cut_path.c_str());
}

TEST_CASE("a binary history's recorded hash that is not its events' is refused when verified") {
  const std::string path = TempPath("altered.bin");
  const History kept = WriteVaried(path, HistoryFormat::kBinary, 200, 13);
  std::string bytes = ReadBytes(path);
  // The last bytes are the closing checkpoint's hash.
  bytes.back() = static_cast<char>(bytes.back() ^ 0x5a);
  WriteBytes(path, bytes);
  {
    History back;
    ReadStats stats;
    std::string error;
    REQUIRE(ReadHistoryFile(path, &back.names(), &back, &stats, &error));
    CHECK(stats.hash != kept.Hash());  // Taken as recorded.
    CHECK(back.Hash() == kept.Hash());
  }
  {
    History back;
    ReadStats stats;
    std::string error;
    ReadOptions options;
    options.verify_hash = true;
    CHECK_FALSE(ReadHistoryFile(path, &back.names(), &back, &stats, &error, options));
    CHECK(error.find("the checkpoint's hash") != std::string::npos);
    CHECK(error.find("is not the events' " + HashHex(kept.Hash())) != std::string::npos);
  }
  std::remove(path.c_str());
}

TEST_CASE("mutated binary histories are refused with a message or read, never a crash") {
  const std::string path = TempPath("base.bin");
  WriteVaried(path, HistoryFormat::kBinary, 400, 17);
  const std::string base = ReadBytes(path);
  const std::string mutant_path = TempPath("mutant.bin");
  Lcg rng{99};
  int refused = 0, read = 0;
  for (int i = 0; i < 1500; ++i) {
    std::string bytes = base;
    const int edits = 1 + static_cast<int>(rng.Next(4));
    for (int k = 0; k < edits; ++k) {
      // Past the magic: a file without it is read as JSON Lines (tested elsewhere).
      const size_t at = kBinaryMagic.size() + rng.Next(bytes.size() - kBinaryMagic.size());
      switch (rng.Next(4)) {
        case 0: bytes[at] = static_cast<char>(rng.Next(256)); break;
        case 1: bytes.erase(at, 1 + rng.Next(8)); break;
        case 2: bytes.insert(at, 1 + rng.Next(8), static_cast<char>(rng.Next(256))); break;
        default: bytes[at] = static_cast<char>(0xff);  // Long varints.
      }
      if (bytes.size() <= kBinaryMagic.size()) bytes = base;
    }
    WriteBytes(mutant_path, bytes);
    History back;
    ReadStats stats;
    std::string error;
    ReadOptions options;
    options.verify_hash = rng.Next(2) == 0;
    if (ReadHistoryFile(mutant_path, &back.names(), &back, &stats, &error, options)) {
      ++read;
      CHECK(back.size() == stats.events);
    } else {
      ++refused;
      CHECK_FALSE(error.empty());
    }
  }
  INFO(refused << " refused, " << read << " read");
  CHECK(refused > 0);
  std::remove(path.c_str());
  std::remove(mutant_path.c_str());
}

}  // namespace
}  // namespace lockstep::history
