// The conformance suite: named golden cases (core/testdata/conformance/*.txt), in the style of
// Redis's tests/unit/*.tcl catalogues, each run on the emulator AND on a live redis-server
// 7.0.15 started by this test. A case passes only when both print the expected text, so the
// golden file cannot drift away from the real server and the emulator cannot drift from it.
//
// File format:
//   # a comment
//   === <case name>
//   > <command line, quoted as redis-cli accepts it>
//   <expected output, exactly as `redis-cli --no-raw` prints the reply; may span lines>
//   | <what the emulator prints instead: a difference documented in docs/fidelity.md; the
//   | case's name must contain "[differs]">
// Blank lines and lines starting with '#' are skipped everywhere. scripts/golden.sh fills in
// the expected output from a live redis-server.
//   > <next command> ...
// Every case starts from an empty keyspace and an empty script cache (FLUSHALL, SCRIPT FLUSH
// on both). The two servers see the same command sequence from the first case to the last, so
// state that survives the flush (the rand48 generator) stays in step.
//
// A case may use a second client connection (for WATCH touched by another client, or a
// blocked BLPOP that another client wakes):
//   2> <command>     runs on connection 2 ("> " is connection 1)
//   (blocked)        as a command's expected output: the command blocks (the emulator's
//                    Execute returns no reply; the live server shows one more blocked client)
//   <  or  2<        the reply connection 1 or 2 gets when its blocked command is served or
//                    times out (the emulator's session is timed out once its deadline has
//                    passed on the wall clock, as redis-server's would); expected text follows
// Each case runs on fresh emulator sessions; on the live server each connection is sent
// DISCARD and UNWATCH first (replies ignored), and a case must not end with a blocked
// connection.
//
// The files in core/testdata/conformance/cluster/ run on a cluster node instead: the first
// node of a live two-node Redis Cluster (slots 0-8191 here, 8192-16383 on the other node),
// against an emulated node configured the same way. In their expected text $OTHER_NODE stands
// for the other node's address, which changes from run to run.
#include <catch2/catch.hpp>

#include <chrono>
#include <deque>
#include <optional>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "core/cli_format.h"
#include "core/cluster.h"
#include "core/server.h"
#include "live/redis_client.h"
#include "live/redis_process.h"

namespace {

using lockstep::Argv;
using lockstep::Reply;

struct Step {
  int line = 0;
  int connection = 0;    // 0 or 1: the case's first or second client connection.
  bool collect = false;  // "<": read the blocked command's reply instead of sending one.
  std::string command;
  Argv argv;
  std::string expected;
  // A documented difference (docs/fidelity.md): what the emulator prints instead, from "| "
  // lines. Only allowed in cases whose name says "[differs]".
  std::string emulator_expected;
};

struct Case {
  std::string file;
  int line = 0;
  std::string name;
  std::vector<Step> steps;
};

std::vector<Case> LoadCases(const std::filesystem::path& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::vector<Case> cases;
  std::string text;
  int line_no = 0;
  while (std::getline(in, text)) {
    ++line_no;
    // Blank lines and comments separate cases; no reply used here prints as either.
    if (text.empty() || text[0] == '#') continue;
    if (text.rfind("=== ", 0) == 0) {
      cases.push_back({path.filename().string(), line_no, text.substr(4), {}});
    } else if (text.rfind("> ", 0) == 0 || text.rfind("2> ", 0) == 0) {
      INFO(path.string() << ":" << line_no);
      REQUIRE(!cases.empty());
      const int connection = text[0] == '2' ? 1 : 0;
      const std::string command = text.substr(connection == 1 ? 3 : 2);
      auto argv = lockstep::SplitArgs(command);
      REQUIRE(argv.has_value());
      cases.back().steps.push_back({line_no, connection, false, command, *argv, "", ""});
    } else if (text == "<" || text == "2<") {
      INFO(path.string() << ":" << line_no);
      REQUIRE(!cases.empty());
      const int connection = text[0] == '2' ? 1 : 0;
      cases.back().steps.push_back({line_no, connection, true, text, {}, "", ""});
    } else if (text.rfind("| ", 0) == 0 && !cases.empty() && !cases.back().steps.empty()) {
      INFO(path.string() << ":" << line_no);
      REQUIRE(cases.back().name.find("[differs]") != std::string::npos);
      cases.back().steps.back().emulator_expected += text.substr(2) + "\n";
    } else if (!cases.empty() && !cases.back().steps.empty()) {
      cases.back().steps.back().expected += text + "\n";
    } else {
      FAIL(path.string() << ":" << line_no << ": text outside a case step: " << text);
    }
  }
  return cases;
}

int64_t WallMs() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::vector<std::filesystem::path> CaseFiles(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".txt") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

struct Totals {
  int cases = 0;
  int steps = 0;
};

constexpr const char* kBlocked = "(blocked)\n";

// How many clients the live server has blocked (INFO clients), asked on a connection of its
// own so that the case's connections see only the case's commands.
int64_t LiveBlockedClients(lockstep::RedisClient& probe) {
  const Reply info = probe.Command({"INFO", "clients"});
  REQUIRE(info.type == Reply::Type::kBulk);
  const std::string field = "blocked_clients:";
  const size_t at = info.str.find(field);
  REQUIRE(at != std::string::npos);
  return std::stoll(info.str.substr(at + field.size()));
}

// Sends a command that should block, and waits until the live server shows it blocked (or
// gives up after 5 s: the command answered, or is stuck before blocking).
std::string SendBlocking(lockstep::RedisClient& live, lockstep::RedisClient& probe,
                         const Argv& argv, int64_t blocked_before) {
  live.Append(argv);
  live.Flush();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (LiveBlockedClients(probe) <= blocked_before) {
    if (std::chrono::steady_clock::now() > deadline) return "(did not block)\n";
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return kBlocked;
}

// The emulator's side of one case: a session per connection, and the replies its blocked
// sessions got, in the order the server handed them out.
struct EmuClients {
  lockstep::Session sessions[2];
  std::deque<Reply> woken[2];

  void Drain(lockstep::Server& emu) {
    for (lockstep::Server::Woken& w : emu.TakeWoken()) {
      const int i = w.session == &sessions[0] ? 0 : 1;
      REQUIRE(w.session == &sessions[i]);
      woken[i].push_back(std::move(w.reply));
    }
  }

  std::string Run(lockstep::Server& emu, const Step& step) {
    lockstep::Session& session = sessions[step.connection];
    std::deque<Reply>& replies = woken[step.connection];
    if (!step.collect) {
      if (session.blocked()) return "(the connection is blocked)\n";
      const std::optional<Reply> reply = emu.Execute(session, step.argv, WallMs());
      Drain(emu);
      return reply ? lockstep::FormatCli(reply->AsSeenByResp2Client()) : kBlocked;
    }
    if (replies.empty() && session.blocked() &&
        session.block_deadline_ms() != lockstep::Session::kNoDeadline) {
      // Nobody served it: it times out once its deadline has passed, as a live one does.
      while (!session.TimedOut(WallMs())) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      replies.push_back(emu.TimeOut(session));
    }
    if (replies.empty()) return session.blocked() ? "(still blocked)\n" : "(nothing to read)\n";
    Reply reply = std::move(replies.front());
    replies.pop_front();
    return lockstep::FormatCli(reply.AsSeenByResp2Client());
  }
};

// Runs every case of `files` on both servers (the live one at 127.0.0.1:live_port). `other_node`,
// when not empty, replaces $OTHER_NODE in the expected text.
Totals RunCases(const std::vector<std::filesystem::path>& files, int live_port,
                lockstep::Server& emu, const std::string& other_node = "") {
  lockstep::RedisClient live1("127.0.0.1", live_port);
  lockstep::RedisClient live2("127.0.0.1", live_port);
  lockstep::RedisClient probe("127.0.0.1", live_port);
  lockstep::RedisClient* live[2] = {&live1, &live2};
  Totals totals;
  for (const auto& file : files) {
    for (const Case& c : LoadCases(file)) {
      INFO("case '" << c.name << "' (" << c.file << ":" << c.line << ")");
      for (lockstep::RedisClient* connection : live) {
        connection->Command({"DISCARD"});
        connection->Command({"UNWATCH"});
      }
      for (const Argv& reset : {Argv{"FLUSHALL"}, Argv{"SCRIPT", "FLUSH"}}) {
        REQUIRE(live1.Command(reset) == Reply::Ok());
        REQUIRE(emu.Execute(reset, WallMs()) == Reply::Ok());
      }
      EmuClients emu_clients;
      bool live_blocked[2] = {false, false};
      for (const Step& step : c.steps) {
        std::string expected = step.expected;
        std::string emulator_expected = step.emulator_expected;
        if (!other_node.empty()) {
          expected = ReplaceAll(expected, "$OTHER_NODE", other_node);
          emulator_expected = ReplaceAll(emulator_expected, "$OTHER_NODE", other_node);
        }
        INFO("case '" << c.name << "' (" << c.file << ":" << step.line << ")\n"
                      << (step.connection == 1 ? "2" : "") << (step.collect ? "" : "> ")
                      << step.command);
        lockstep::RedisClient& connection = *live[step.connection];
        std::string from_live;
        if (step.collect) {
          REQUIRE(live_blocked[step.connection]);
          from_live = lockstep::FormatCli(connection.ReadReply());
          live_blocked[step.connection] = false;
        } else if (expected == kBlocked) {
          REQUIRE(!live_blocked[step.connection]);
          from_live = SendBlocking(connection, probe, step.argv,
                                   (live_blocked[0] ? 1 : 0) + (live_blocked[1] ? 1 : 0));
          live_blocked[step.connection] = from_live == kBlocked;
        } else {
          REQUIRE(!live_blocked[step.connection]);
          from_live = lockstep::FormatCli(connection.Command(step.argv));
        }
        const std::string from_emu = emu_clients.Run(emu, step);
        CHECK(from_live == expected);  // The golden text is what Redis says ...
        if (emulator_expected.empty()) {
          CHECK(from_emu == expected);  // ... and the emulator says the same.
        } else {
          CHECK(from_emu == emulator_expected);  // ... or the documented difference.
        }
        ++totals.steps;
      }
      // A live connection still blocked would answer some later case's command.
      REQUIRE(!live_blocked[0]);
      REQUIRE(!live_blocked[1]);
      ++totals.cases;
    }
  }
  return totals;
}

// The live two-node cluster: node a serves slots 0-8191, node b 8192-16383.
struct LiveCluster {
  std::unique_ptr<lockstep::RedisProcess> a, b;
};

bool ClusterOk(lockstep::RedisClient& client) {
  const Reply info = client.Command({"CLUSTER", "INFO"});
  return info.type == Reply::Type::kBulk && info.str.find("cluster_state:ok") != std::string::npos;
}

LiveCluster StartLiveCluster() {
  lockstep::RedisProcess::Options options;
  options.cluster = true;
  LiveCluster cluster;
  cluster.a = lockstep::RedisProcess::StartOrThrow(options);
  cluster.b = lockstep::RedisProcess::StartOrThrow(options);
  lockstep::RedisClient a("127.0.0.1", cluster.a->port());
  lockstep::RedisClient b("127.0.0.1", cluster.b->port());
  REQUIRE(a.Command({"CLUSTER", "ADDSLOTSRANGE", "0", "8191"}) == Reply::Ok());
  REQUIRE(b.Command({"CLUSTER", "ADDSLOTSRANGE", "8192", "16383"}) == Reply::Ok());
  REQUIRE(a.Command({"CLUSTER", "MEET", "127.0.0.1", std::to_string(cluster.b->port()),
                     std::to_string(cluster.b->cluster_bus_port())}) == Reply::Ok());
  // The nodes shake hands over the cluster bus and exchange slot maps: about a second.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!(ClusterOk(a) && ClusterOk(b))) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return cluster;
}

}  // namespace

TEST_CASE("conformance: golden cases agree with the emulator and with redis-server 7.0.15",
          "[live][conformance]") {
  const std::filesystem::path dir =
      std::filesystem::path(LOCKSTEP_SOURCE_DIR) / "core" / "testdata" / "conformance";
  const std::vector<std::filesystem::path> files = CaseFiles(dir);
  REQUIRE(!files.empty());

  auto redis = lockstep::RedisProcess::StartOrThrow();
  lockstep::Server emu;

  const Totals totals = RunCases(files, redis->port(), emu);
  WARN("conformance: " << totals.cases << " cases, " << totals.steps << " commands, "
                       << files.size() << " files");
  CHECK(totals.cases >= 100);
}

TEST_CASE("conformance: a cluster node agrees with a node of a live redis-server 7.0.15 cluster",
          "[live][conformance][cluster]") {
  const LiveCluster cluster = StartLiveCluster();
  lockstep::RedisClient live("127.0.0.1", cluster.a->port());
  const std::string other_node = "127.0.0.1:" + std::to_string(cluster.b->port());

  // The emulated node 0 of the same cluster, naming node b as the live one does.
  auto topology = std::make_shared<lockstep::ClusterTopology>(std::vector<std::string>{
      "127.0.0.1:" + std::to_string(cluster.a->port()), other_node});
  topology->Assign(0, {0, 8191});
  topology->Assign(1, {8192, 16383});
  lockstep::ServerOptions options;
  options.cluster = topology;
  options.cluster_node = 0;
  lockstep::Server emu(options);

  // Both parts share one cluster (Catch's SECTIONs would start it once per section).
  {  // The golden cases.
    const std::filesystem::path dir = std::filesystem::path(LOCKSTEP_SOURCE_DIR) / "core" /
                                      "testdata" / "conformance" / "cluster";
    const std::vector<std::filesystem::path> files = CaseFiles(dir);
    REQUIRE(!files.empty());
    const Totals totals = RunCases(files, cluster.a->port(), emu, other_node);
    WARN("conformance (cluster): " << totals.cases << " cases, " << totals.steps << " commands");
    CHECK(totals.cases >= 15);
  }

  {  // KeyHashSlot agrees with CLUSTER KEYSLOT.
    // Known vectors, keys built around braces, and binary keys from a fixed generator.
    std::vector<std::string> keys = {"foo", "bar", "123456789", "", "{user1000}.following",
                                     "{user1000}.followers", "foo{}{bar}", "foo{{bar}}zap",
                                     "foo{bar}{zap}", "{bar", "}bar{", "{}", "{}}", "{{}}",
                                     "a{b}c{d}", std::string("\0{\0}", 4)};
    uint64_t state = 0x2545F4914F6CDD1DULL;
    auto next = [&state] {
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      return state;
    };
    const char kAlphabet[] = "ab{}:x0\xff";
    for (int i = 0; i < 3000; ++i) {
      std::string key;
      const size_t length = next() % 12;
      for (size_t j = 0; j < length; ++j) {
        // Mostly braces and a few letters, so that tags of every shape come up; now and then
        // any byte at all.
        key += (next() % 8 == 0) ? static_cast<char>(next() & 0xff)
                                 : kAlphabet[next() % (sizeof(kAlphabet) - 1)];
      }
      keys.push_back(key);
    }
    for (const std::string& key : keys) live.Append({"CLUSTER", "KEYSLOT", key});
    int mismatches = 0;
    for (const std::string& key : keys) {
      const Reply slot = live.ReadReply();
      REQUIRE(slot.type == Reply::Type::kInteger);
      if (slot.integer != lockstep::KeyHashSlot(key)) {
        ++mismatches;
        FAIL_CHECK("slot of '" << key << "': redis-server " << slot.integer << ", lockstep "
                               << lockstep::KeyHashSlot(key));
      }
      // And the emulated node's CLUSTER KEYSLOT is the same function.
      CHECK(emu.Execute({"CLUSTER", "KEYSLOT", key}, WallMs()).integer == slot.integer);
    }
    CHECK(mismatches == 0);
    WARN("conformance (cluster): " << keys.size() << " keys hashed to the same slots");
  }
}
