// What redis-cli 7.0.15 prints and how it reads command lines, so that `lockstep emu < file`
// prints byte for byte what `redis-cli --no-raw < file` prints for the same file.
//
// `redis-cli < file` (no command on its command line) does not use a special batch mode: it
// runs its interactive REPL (redis-cli.c repl()) with linenoise reading stdin without a prompt.
// Everything that REPL does to a line before and after sending it is modelled here by
// ParseCliLine; FormatCli is cliFormatReplyTTY, the `--no-raw` rendering of one reply.
#ifndef LOCKSTEP_CORE_CLI_FORMAT_H_
#define LOCKSTEP_CORE_CLI_FORMAT_H_

#include <optional>
#include <string>
#include <string_view>

#include "core/reply.h"
#include "core/server.h"

namespace lockstep {

// The reply as `redis-cli --no-raw` prints it (cliFormatReplyTTY), ending in a newline:
//   status      OK                      (the text as is)
//   error       (error) ERR msg
//   integer     (integer) 5
//   bulk        "a\n\x00"               (quoted and escaped as sds.c sdscatrepr does)
//   null        (nil)                   (both the null bulk and the null array)
//   empty       (empty array) / (empty hash) / (empty set)
//   array       1) "a"                  (indices right-aligned to the widest index; nested
//               2) 1) "b"                arrays start on their parent's line and continue
//                  2) "c"                indented by the parent's index width plus 2)
//   RESP3       (double) 1.5, (true)/(false), map "1# k => v", set "1~ m"
// Status and error texts end at their first NUL byte, because redis-cli prints them with %s.
std::string FormatCli(const Reply& r);

// sds.c sdssplitargs: splits a line into arguments the way redis-cli does. Blanks (isspace in
// the C locale) separate arguments, but only ' ', \n, \r, \t end an unquoted one. In double
// quotes: \xHH (two hex digits), \n \r \t \b \a, and \<any other char> for that char. In single
// quotes only \' is an escape. A quote may start in the middle of an argument (foo"bar" is
// foobar), but a closing quote must be followed by a blank or the end of the line. Unbalanced
// quotes or a closing quote followed by anything else give nullopt. The line ends at its first
// NUL byte, as the C string redis-cli hands to sdssplitargs does.
std::optional<Argv> SplitArgs(std::string_view line);

// What redis-cli's REPL (repl() in redis-cli.c 7.0.15) does with one line read from stdin.
// Each rule was checked against Debian's redis-cli 7.0.15 (see core/cli_format_test.cpp):
//  - An empty line, or one with only blanks, prints nothing (kSkip).
//  - A line SplitArgs rejects prints "Invalid argument(s)\n" (kPrint).
//  - A first argument that strtol reads completely (leading blanks and a sign allowed, so "3",
//    "+3", "03", " 3") followed by more arguments is a repeat count: "3 ping" runs PING three
//    times. A count <= 0 or out of range (also "" as first argument, which strtol reads as 0)
//    prints "Invalid redis-cli repeat command option value.\n". A lone "3" is a command.
//  - "quit" or "exit" as the first argument (any case, any further arguments) ends redis-cli
//    with status 0 (kExit). The checks below also look at the first argument, i.e. at the
//    repeat count when there is one, so "2 quit" sends QUIT twice.
//  - A first argument starting with ':' is a redis-cli preference: ":set hints" and
//    ":set nohints" print nothing, ":set X" prints "unknown redis-cli preference 'X'\n", and
//    anything else "unknown redis-cli internal command ':foo'\n".
//  - "restart" prints "Use 'restart' only in Lua debugging mode.\n".
//  - "clear" alone prints linenoise's clear-screen sequence "\x1b[H\x1b[2J".
//  - "connect HOST PORT" (exactly three arguments) makes redis-cli reconnect; there is only one
//    server here, so it prints nothing and keeps it (kSkip).
//  - "help ..." and "?" print redis-cli's built-in help, which is not reproduced (kHelp).
//  - Anything else is a command (kCommand), sent `repeat` times; each reply is printed with
//    FormatCli. Errors print "(error) ..." and redis-cli carries on with the next line.
// Not modelled: "(0.52s)" lines after commands that take 500 ms or more, SUBSCRIBE/MONITOR/
// SYNC modes, HELLO 3 (redis-cli would then print RESP3 replies), and a lost connection.
struct CliLine {
  enum class Kind { kSkip, kPrint, kExit, kHelp, kCommand };
  Kind kind = Kind::kSkip;
  std::string text;  // kPrint: printed as is.
  Argv argv;         // kCommand: the command, without the repeat count.
  long repeat = 1;   // kCommand: how many times to run it.
};
CliLine ParseCliLine(std::string_view line);

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_CLI_FORMAT_H_
