// The RESP framer finds exactly where each whole message ends, as redis-server frames requests
// and as a RESP2 client frames replies: every proper prefix of a message is incomplete, the
// message itself is complete with its exact length, bytes after it are left alone, and what
// redis-server would call a protocol error is malformed.
#include <catch2/catch.hpp>

#include <deque>
#include <string>

#include "live/resp_frame.h"

namespace {

using lockstep::FrameStatus;
using lockstep::NextRespFrame;
using lockstep::ParseRdbHeader;
using lockstep::RdbHeader;
using lockstep::RespFrame;
using lockstep::RespGrammar;

FrameStatus Frame(const std::string& data, RespGrammar grammar, RespFrame* frame) {
  std::string error;
  return NextRespFrame(data, grammar, frame, &error);
}

// Checks that `message` frames whole, with every proper prefix incomplete, and that a following
// message does not change the length found. The frame's views point into a copy of the message
// kept until the test program ends.
RespFrame WholeMessage(const std::string& text, RespGrammar grammar) {
  static std::deque<std::string> kept;
  const std::string& message = kept.emplace_back(text);
  RespFrame frame;
  for (size_t cut = 0; cut < message.size(); ++cut) {
    INFO("prefix of " << cut << " bytes");
    REQUIRE(Frame(message.substr(0, cut), grammar, &frame) == FrameStatus::kIncomplete);
  }
  REQUIRE(Frame(message + "+NEXT\r\n", grammar, &frame) == FrameStatus::kComplete);
  REQUIRE(frame.length == message.size());
  REQUIRE(Frame(message, grammar, &frame) == FrameStatus::kComplete);
  REQUIRE(frame.length == message.size());
  return frame;
}

TEST_CASE("RESP frame - replies of every RESP2 type", "[resp]") {
  RespFrame f = WholeMessage("+OK\r\n", RespGrammar::kReply);
  CHECK(f.type == '+');
  CHECK(f.head_size == 1);
  CHECK(f.head[0] == "OK");
  f = WholeMessage("-ERR wrong number of arguments\r\n", RespGrammar::kReply);
  CHECK(f.type == '-');
  CHECK(f.head[0] == "ERR wrong number of arguments");
  f = WholeMessage(":-42\r\n", RespGrammar::kReply);
  CHECK(f.type == ':');
  CHECK(f.head[0] == "-42");
  f = WholeMessage("$5\r\nhe\r\no\r\n", RespGrammar::kReply);  // CRLF inside a bulk is data.
  CHECK(f.type == '$');
  CHECK(f.count == 5);
  CHECK(f.head[0] == "he\r\no");
  f = WholeMessage("$0\r\n\r\n", RespGrammar::kReply);
  CHECK(f.count == 0);
  CHECK(f.head[0].empty());
  f = WholeMessage("$-1\r\n", RespGrammar::kReply);
  CHECK(f.count == -1);
  CHECK(f.head_size == 0);
  f = WholeMessage("*-1\r\n", RespGrammar::kReply);
  CHECK(f.type == '*');
  CHECK(f.count == -1);
  f = WholeMessage("*0\r\n", RespGrammar::kReply);
  CHECK(f.count == 0);
}

TEST_CASE("RESP frame - nested arrays end with their last element", "[resp]") {
  // {1, {2, {3, 'x'}}, 'y', {}} as a Lua script returns it, plus a nil inside.
  const std::string nested =
      "*5\r\n:1\r\n*2\r\n:2\r\n*2\r\n:3\r\n$1\r\nx\r\n$1\r\ny\r\n*0\r\n$-1\r\n";
  const RespFrame f = WholeMessage(nested, RespGrammar::kReply);
  CHECK(f.type == '*');
  CHECK(f.count == 5);
  // The head stops at the first element that is not a string.
  CHECK(f.head_size == 1);
  CHECK(f.head[0] == "1");

  std::string deep;
  for (int i = 0; i < 20; ++i) deep += "*1\r\n";
  deep += "+leaf\r\n";
  WholeMessage(deep, RespGrammar::kReply);
}

TEST_CASE("RESP frame - pub/sub messages show their kind and channel", "[resp]") {
  const RespFrame f = WholeMessage(
      "*3\r\n$7\r\nmessage\r\n$7\r\nchannel\r\n$5\r\nhello\r\n", RespGrammar::kReply);
  REQUIRE(f.head_size == 2);
  CHECK(f.head[0] == "message");
  CHECK(f.head[1] == "channel");
  const RespFrame unsub =
      WholeMessage("*3\r\n$11\r\nunsubscribe\r\n$-1\r\n:0\r\n", RespGrammar::kReply);
  CHECK(unsub.head_size == 1);  // A nil channel ends the head.
}

TEST_CASE("RESP frame - requests as redis-server reads them", "[resp]") {
  RespFrame f = WholeMessage("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\nv\r\n\r\n",
                             RespGrammar::kRequest);
  CHECK(f.type == '*');
  CHECK(f.count == 3);
  CHECK(f.head_size == 2);
  CHECK(f.head[0] == "SET");
  CHECK(f.head[1] == "k");
  // Inline commands end at '\n'; a '\r' before it is not part of the last word.
  f = WholeMessage("subscribe  a\tb\r\n", RespGrammar::kRequest);
  CHECK(f.type == RespFrame::kInline);
  CHECK(f.count == 3);
  CHECK(f.head[0] == "subscribe");
  CHECK(f.head[1] == "a");
  f = WholeMessage("PING\n", RespGrammar::kRequest);
  CHECK(f.count == 1);
  // Skipped by redis-server without a reply: no words, no elements.
  CHECK(WholeMessage("\r\n", RespGrammar::kRequest).count == 0);
  CHECK(WholeMessage("\n", RespGrammar::kRequest).count == 0);
  CHECK(WholeMessage("*0\r\n", RespGrammar::kRequest).count == 0);
  CHECK(WholeMessage("*-1\r\n", RespGrammar::kRequest).count == -1);
}

TEST_CASE("RESP frame - a newline between replies is a message of its own", "[resp]") {
  RespFrame f;
  REQUIRE(Frame("\n+PONG\r\n", RespGrammar::kReply, &f) == FrameStatus::kComplete);
  CHECK(f.length == 1);
  CHECK(f.type == RespFrame::kInline);
  CHECK(f.count == 0);
}

TEST_CASE("RESP frame - protocol errors are malformed", "[resp]") {
  RespFrame f;
  std::string error;
  const auto malformed = [&](const std::string& data, RespGrammar grammar) {
    error.clear();
    const FrameStatus status = NextRespFrame(data, grammar, &f, &error);
    INFO(data);
    CHECK(status == FrameStatus::kMalformed);
    CHECK(!error.empty());
  };
  malformed("*1\r\n:1\r\n", RespGrammar::kRequest);  // Request elements are bulk strings.
  malformed("*1\r\n*1\r\n$1\r\nx\r\n", RespGrammar::kRequest);
  malformed("*x\r\n", RespGrammar::kRequest);
  malformed("*1\r\n$-1\r\n", RespGrammar::kRequest);
  malformed("*1\r\n$1\r\nxy\r\n", RespGrammar::kRequest);  // Bulk not followed by CRLF.
  malformed("$-2\r\n", RespGrammar::kReply);
  malformed("*-2\r\n", RespGrammar::kReply);
  malformed(":12a\r\n", RespGrammar::kReply);
  malformed(":+1\r\n", RespGrammar::kReply);
  malformed("!oops\r\n", RespGrammar::kReply);
  malformed("$536870913\r\n", RespGrammar::kReply);  // Above 512 MiB.
  malformed(std::string(70 * 1024, 'a'), RespGrammar::kRequest);  // Inline line too long.
  std::string deep;
  for (size_t i = 0; i <= lockstep::kMaxRespNesting; ++i) deep += "*1\r\n";
  malformed(deep, RespGrammar::kReply);
}

TEST_CASE("RESP frame - the header of an RDB transfer", "[resp]") {
  RdbHeader header;
  std::string error;
  REQUIRE(ParseRdbHeader("$12", &header, &error) == FrameStatus::kIncomplete);
  REQUIRE(ParseRdbHeader("$12\r\nREDIS0010...", &header, &error) == FrameStatus::kComplete);
  CHECK(header.length == 5);
  CHECK(header.payload_bytes == 12);
  const std::string mark(RdbHeader::kEofMarkBytes, 'a');
  const std::string diskless = "$EOF:" + mark + "\r\nREDIS";
  REQUIRE(ParseRdbHeader(diskless, &header, &error) == FrameStatus::kComplete);
  CHECK(header.length == 5 + RdbHeader::kEofMarkBytes + 2);
  CHECK(header.payload_bytes == -1);
  CHECK(header.eof_mark == mark);
  CHECK(ParseRdbHeader("$EOF:short\r\n", &header, &error) == FrameStatus::kMalformed);
  CHECK(ParseRdbHeader("+OK\r\n", &header, &error) == FrameStatus::kMalformed);
  CHECK(ParseRdbHeader("$-1\r\n", &header, &error) == FrameStatus::kMalformed);
}

}  // namespace
