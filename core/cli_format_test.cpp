// Establishes that FormatCli prints replies, SplitArgs splits lines and ParseCliLine treats
// stdin lines exactly as Debian's redis-cli 7.0.15 does. Every expected string below was
// produced by the real binary (`redis-cli --no-raw < file`, `-3` for the RESP3 cases) against
// redis-server 7.0.15, and is written out byte for byte.
#include <catch2/catch.hpp>

#include <string>

#include "core/cli_format.h"

namespace lockstep {
namespace {

Reply Arr(std::vector<Reply> elements = {}) { return Reply::Array(std::move(elements)); }
Reply Int(int64_t v) { return Reply::Integer(v); }
Reply Bulk(std::string s) { return Reply::Bulk(std::move(s)); }

Reply Map(std::vector<Reply> flat_pairs) {
  Reply r = Reply::Array(std::move(flat_pairs));
  r.type = Reply::Type::kMap;
  return r;
}

Reply Set(std::vector<Reply> members) {
  Reply r = Reply::Array(std::move(members));
  r.type = Reply::Type::kSet;
  return r;
}

Reply Double(std::string text) {
  Reply r;
  r.type = Reply::Type::kDouble;
  r.str = std::move(text);
  return r;
}

}  // namespace

TEST_CASE("FormatCli - simple replies as redis-cli --no-raw prints them", "[cli]") {
  CHECK(FormatCli(Reply::Ok()) == "OK\n");
  CHECK(FormatCli(Reply::Status("PONG")) == "PONG\n");
  CHECK(FormatCli(Reply::Error("ERR wrong number of arguments for 'set' command")) ==
        "(error) ERR wrong number of arguments for 'set' command\n");
  CHECK(FormatCli(Reply::Error("WRONGTYPE Operation against a key holding the wrong kind of value")) ==
        "(error) WRONGTYPE Operation against a key holding the wrong kind of value\n");
  CHECK(FormatCli(Int(11)) == "(integer) 11\n");
  CHECK(FormatCli(Int(-9223372036854775807LL - 1)) == "(integer) -9223372036854775808\n");
  CHECK(FormatCli(Bulk("x")) == "\"x\"\n");
  CHECK(FormatCli(Bulk("")) == "\"\"\n");
  CHECK(FormatCli(Reply::Null()) == "(nil)\n");
  CHECK(FormatCli(Reply::NullArray()) == "(nil)\n");
  CHECK(FormatCli(Reply::Array()) == "(empty array)\n");
}

TEST_CASE("FormatCli - bulk strings are escaped like sdscatrepr", "[cli]") {
  // `set k "a\x00b\n\t\r\a\b\\\"\x7f\xff c"` then `get k`.
  CHECK(FormatCli(Bulk(std::string("a\0b\n\t\r\a\b\\\"\x7f\xff c", 14))) ==
        "\"a\\x00b\\n\\t\\r\\a\\b\\\\\\\"\\x7f\\xff c\"\n");
  // `echo "\x00\x01\x1f\x7f\x80\xfe ~ok"`: printable ASCII stays, the rest is lower-case \xHH.
  CHECK(FormatCli(Bulk(std::string("\x00\x01\x1f\x7f\x80\xfe ~ok", 10))) ==
        "\"\\x00\\x01\\x1f\\x7f\\x80\\xfe ~ok\"\n");
  // `echo 'a\nb'`: single quotes keep the backslash, which is then escaped.
  CHECK(FormatCli(Bulk("a\\nb")) == "\"a\\\\nb\"\n");
  // `echo "\xc3\xa9"`: UTF-8 is not printable in the C locale.
  CHECK(FormatCli(Bulk("\xc3\xa9")) == "\"\\xc3\\xa9\"\n");
  CHECK(FormatCli(Bulk("a\x0b" "b")) == "\"a\\x0bb\"\n");
}

TEST_CASE("FormatCli - status and error texts end at a NUL byte", "[cli]") {
  CHECK(FormatCli(Reply::Status(std::string("a\0b", 3))) == "a\n");
  CHECK(FormatCli(Reply::Error(std::string("ERR x\0y", 7))) == "(error) ERR x\n");
}

TEST_CASE("FormatCli - arrays, nested arrays and index alignment", "[cli]") {
  // eval "return {1,{2,3},'x'}" 0
  CHECK(FormatCli(Arr({Int(1), Arr({Int(2), Int(3)}), Bulk("x")})) ==
        "1) (integer) 1\n"
        "2) 1) (integer) 2\n"
        "   2) (integer) 3\n"
        "3) \"x\"\n");

  // rpush l a b c d e f g h i j k; lrange l 0 -1: indices right-aligned to two digits.
  std::vector<Reply> letters;
  for (char c = 'a'; c <= 'k'; ++c) letters.push_back(Bulk(std::string(1, c)));
  CHECK(FormatCli(Arr(letters)) ==
        " 1) \"a\"\n"
        " 2) \"b\"\n"
        " 3) \"c\"\n"
        " 4) \"d\"\n"
        " 5) \"e\"\n"
        " 6) \"f\"\n"
        " 7) \"g\"\n"
        " 8) \"h\"\n"
        " 9) \"i\"\n"
        "10) \"j\"\n"
        "11) \"k\"\n");

  // eval "return {{1,2,3,4,5,6,7,8,9,10},{'a'}}" 0: the inner width counts, not the outer.
  std::vector<Reply> ten;
  for (int i = 1; i <= 10; ++i) ten.push_back(Int(i));
  CHECK(FormatCli(Arr({Arr(ten), Arr({Bulk("a")})})) ==
        "1)  1) (integer) 1\n"
        "    2) (integer) 2\n"
        "    3) (integer) 3\n"
        "    4) (integer) 4\n"
        "    5) (integer) 5\n"
        "    6) (integer) 6\n"
        "    7) (integer) 7\n"
        "    8) (integer) 8\n"
        "    9) (integer) 9\n"
        "   10) (integer) 10\n"
        "2) 1) \"a\"\n");

  // eval "local t={} for i=1,10 do t[i]=i end t[10]={{'deep',{}},'y'} return t" 0
  std::vector<Reply> nine;
  for (int i = 1; i <= 9; ++i) nine.push_back(Int(i));
  nine.push_back(Arr({Arr({Bulk("deep"), Arr()}), Bulk("y")}));
  CHECK(FormatCli(Arr(nine)) ==
        " 1) (integer) 1\n"
        " 2) (integer) 2\n"
        " 3) (integer) 3\n"
        " 4) (integer) 4\n"
        " 5) (integer) 5\n"
        " 6) (integer) 6\n"
        " 7) (integer) 7\n"
        " 8) (integer) 8\n"
        " 9) (integer) 9\n"
        "10) 1) 1) \"deep\"\n"
        "       2) (empty array)\n"
        "    2) \"y\"\n");

  // eval "return {{}}" 0 and eval "return {{{'z'}}}" 0
  CHECK(FormatCli(Arr({Arr()})) == "1) (empty array)\n");
  CHECK(FormatCli(Arr({Arr({Arr({Bulk("z")})})})) == "1) 1) 1) \"z\"\n");

  // eval "return {1,{err='inner E'},{ok='fine'},false}" 0
  CHECK(FormatCli(Arr({Int(1), Reply::Error("inner E"), Reply::Status("fine"), Reply::Null()})) ==
        "1) (integer) 1\n"
        "2) (error) inner E\n"
        "3) fine\n"
        "4) (nil)\n");
}

TEST_CASE("FormatCli - RESP3 types as redis-cli -3 prints them", "[cli]") {
  CHECK(FormatCli(Double("1.5")) == "(double) 1.5\n");
  CHECK(FormatCli(Reply::Bool(true)) == "(true)\n");
  CHECK(FormatCli(Reply::Bool(false)) == "(false)\n");
  CHECK(FormatCli(Map({})) == "(empty hash)\n");
  CHECK(FormatCli(Set({})) == "(empty set)\n");
  // hgetall h
  CHECK(FormatCli(Map({Bulk("a"), Bulk("1"), Bulk("b"), Bulk("2")})) ==
        "1# \"a\" => \"1\"\n"
        "2# \"b\" => \"2\"\n");
  // smembers s
  CHECK(FormatCli(Set({Bulk("a"), Bulk("b")})) == "1~ \"a\"\n2~ \"b\"\n");
  // eval "return {map={a={1,2}, b={}}}" 0: a multi-line value starts on its own line.
  CHECK(FormatCli(Map({Bulk("a"), Arr({Int(1), Int(2)}), Bulk("b"), Arr()})) ==
        "1# \"a\" => \n"
        "   1) (integer) 1\n"
        "   2) (integer) 2\n"
        "2# \"b\" => (empty array)\n");
  // eval "return {map={x={1}}}" 0 and eval "return {map={x={{1,2}}}}" 0
  CHECK(FormatCli(Map({Bulk("x"), Arr({Int(1)})})) == "1# \"x\" => 1) (integer) 1\n");
  CHECK(FormatCli(Map({Bulk("x"), Arr({Arr({Int(1), Int(2)})})})) ==
        "1# \"x\" => \n"
        "   1) 1) (integer) 1\n"
        "      2) (integer) 2\n");
  // The same map as a RESP2 client sees it.
  CHECK(FormatCli(Map({Bulk("a"), Bulk("1")}).AsSeenByResp2Client()) == "1) \"a\"\n2) \"1\"\n");
}

TEST_CASE("SplitArgs - plain, quoted and escaped arguments", "[cli]") {
  CHECK(SplitArgs("set k v") == Argv{"set", "k", "v"});
  CHECK(SplitArgs("  ping  ") == Argv{"ping"});
  CHECK(SplitArgs("") == Argv{});
  CHECK(SplitArgs(" \t\v\f ") == Argv{});
  // Double quotes: \xHH, \n \r \t \b \a, and any other escaped char stands for itself.
  CHECK(SplitArgs(R"(set k "a\x00b\n\t\r\a\b\\\"\x7f\xff c")") ==
        Argv{"set", "k", std::string("a\0b\n\t\r\a\b\\\"\x7f\xff c", 14)});
  // `echo "a\q\x4g\x41"` prints "aqx4gA": a bad \x escape is a plain x.
  CHECK(SplitArgs(R"(echo "a\q\x4g\x41")") == Argv{"echo", "aqx4gA"});
  // Single quotes: only \' is an escape.
  CHECK(SplitArgs(R"(echo 'a\nb')") == Argv{"echo", "a\\nb"});
  CHECK(SplitArgs(R"(echo 'it\'s')") == Argv{"echo", "it's"});
  CHECK(SplitArgs(R"(echo 'abc\'' z)") == Argv{"echo", "abc'", "z"});
  CHECK(SplitArgs("echo ''") == Argv{"echo", ""});
  CHECK(SplitArgs("eval \"return {1,'a b'}\" 0") == Argv{"eval", "return {1,'a b'}", "0"});
  // A quote may open in the middle of an argument.
  CHECK(SplitArgs("echo foo\"bar baz\"") == Argv{"echo", "foobar baz"});
  // \r ends an argument (a CRLF file works), \v does not end one but is skipped between them.
  CHECK(SplitArgs("echo a\r") == Argv{"echo", "a"});
  CHECK(SplitArgs("echo a\vb") == Argv{"echo", "a\vb"});
  CHECK(SplitArgs("\vecho x") == Argv{"echo", "x"});
  CHECK(SplitArgs("echo \"x\"\vy") == Argv{"echo", "x", "y"});
  // The line ends at a NUL byte, as the C string does.
  CHECK(SplitArgs(std::string_view("echo a\0b", 8)) == Argv{"echo", "a"});
}

TEST_CASE("SplitArgs - unbalanced quotes and text after a closing quote are errors", "[cli]") {
  CHECK_FALSE(SplitArgs("\"foo\"bar").has_value());
  CHECK_FALSE(SplitArgs("'foo'bar").has_value());
  CHECK_FALSE(SplitArgs("echo \"abc").has_value());
  CHECK_FALSE(SplitArgs("echo 'abc").has_value());
  CHECK_FALSE(SplitArgs("echo 'abc\\'").has_value());
  CHECK_FALSE(SplitArgs("echo \"abc\\\"").has_value());
  CHECK_FALSE(SplitArgs("echo \"abc\\").has_value());
  CHECK_FALSE(SplitArgs("\"foo'").has_value());
}

TEST_CASE("ParseCliLine - what redis-cli's REPL does with a stdin line", "[cli]") {
  using Kind = CliLine::Kind;
  CHECK(ParseCliLine("").kind == Kind::kSkip);
  CHECK(ParseCliLine("   ").kind == Kind::kSkip);

  CliLine ping = ParseCliLine("ping");
  CHECK(ping.kind == Kind::kCommand);
  CHECK(ping.argv == Argv{"ping"});
  CHECK(ping.repeat == 1);

  CliLine bad = ParseCliLine("\"foo\"bar");
  CHECK(bad.kind == Kind::kPrint);
  CHECK(bad.text == "Invalid argument(s)\n");

  // Repeat counts, as strtol reads them.
  for (const char* line : {"3 ping", "+3 ping", "03 ping", "\" 3\" ping"}) {
    CliLine three = ParseCliLine(line);
    CHECK(three.kind == Kind::kCommand);
    CHECK(three.repeat == 3);
    CHECK(three.argv == Argv{"ping"});
  }
  for (const char* line : {"0 ping", "-1 ping", "\"\" ping", "99999999999999999999 ping"}) {
    CliLine invalid = ParseCliLine(line);
    CHECK(invalid.kind == Kind::kPrint);
    CHECK(invalid.text == "Invalid redis-cli repeat command option value.\n");
  }
  // A lone number is a command (`3` gives "ERR unknown command '3', ..."), and so is "0x10 a".
  CHECK(ParseCliLine("3").argv == Argv{"3"});
  CHECK(ParseCliLine("0x10 a").argv == Argv{"0x10", "a"});
  CHECK(ParseCliLine("0x10 a").repeat == 1);

  CHECK(ParseCliLine("quit").kind == Kind::kExit);
  CHECK(ParseCliLine("EXIT now").kind == Kind::kExit);
  CliLine quit_twice = ParseCliLine("2 quit");
  CHECK(quit_twice.kind == Kind::kCommand);
  CHECK(quit_twice.argv == Argv{"quit"});

  CHECK(ParseCliLine(":set hints").kind == Kind::kPrint);
  CHECK(ParseCliLine(":set hints").text.empty());
  CHECK(ParseCliLine(":set NoHints").text.empty());
  CHECK(ParseCliLine(":set colors").text == "unknown redis-cli preference 'colors'\n");
  CHECK(ParseCliLine(":foo").text == "unknown redis-cli internal command ':foo'\n");
  CHECK(ParseCliLine(":set").text == "unknown redis-cli internal command ':set'\n");
  CHECK(ParseCliLine("restart").text == "Use 'restart' only in Lua debugging mode.\n");
  CHECK(ParseCliLine("clear").text == "\x1b[H\x1b[2J");
  CHECK(ParseCliLine("clear x").kind == Kind::kCommand);
  CHECK(ParseCliLine("connect 127.0.0.1 6379").kind == Kind::kSkip);
  CHECK(ParseCliLine("help set").kind == Kind::kHelp);
  CHECK(ParseCliLine("2 ?").kind == Kind::kHelp);

  // A comment is not special: "# x" is sent and Redis answers "unknown command '#'".
  CHECK(ParseCliLine("# comment").argv == Argv{"#", "comment"});
}

}  // namespace lockstep
