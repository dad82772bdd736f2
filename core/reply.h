// A Redis reply as a value: what a command returns, what a script returns, what hiredis read
// from a live server. Commands build replies for the protocol version of their caller (RESP2
// for clients, RESP2 or RESP3 for a script after redis.setresp), exactly as Redis's addReply*
// family does, so a reply never has to be "downgraded" afterwards.
#ifndef LOCKSTEP_CORE_REPLY_H_
#define LOCKSTEP_CORE_REPLY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep {

struct Reply {
  enum class Type : uint8_t {
    kStatus,     // +OK           str
    kError,      // -ERR msg      str, without the leading '-'
    kInteger,    // :5            integer
    kBulk,       // $3 foo        str
    kNull,       // $-1 (RESP2) or _ (RESP3)
    kNullArray,  // *-1 (RESP2) or _ (RESP3)
    kArray,      // *n            elements
    kDouble,     // ,1.5 (RESP3)  number; str holds Redis's "%.17g" text
    kMap,        // %n (RESP3)    elements = k1, v1, k2, v2, ...
    kSet,        // ~n (RESP3)    elements
    kBool,       // #t (RESP3)    integer 0/1
  };

  Type type = Type::kNull;
  int64_t integer = 0;
  double number = 0;
  std::string str;
  std::vector<Reply> elements;

  static Reply Status(std::string s);
  static Reply Error(std::string s);
  static Reply Integer(int64_t v);
  static Reply Bulk(std::string s);
  static Reply Null();
  static Reply NullArray();
  static Reply Array(std::vector<Reply> elements = {});
  static Reply Bool(bool v);
  static Reply Ok() { return Status("OK"); }

  bool is_error() const { return type == Type::kError; }
  bool operator==(const Reply& other) const;

  // The reply as a RESP2 client (hiredis 0.14, redis-cli) receives it: a null array reads as
  // nil, a double as its bulk text, a map or set as a flat array, a boolean as 0/1.
  Reply AsSeenByResp2Client() const;

  // A one-line rendering for test failure messages and logs, e.g. [1, "a", (nil), -ERR x].
  std::string Debug() const;
  // Debug()'s text appended to *out, at most `max_bytes` of it: past that the text ends with
  // "... (cut at N bytes)" and the rest of the reply is not visited (a script's reply may be a
  // million elements or a string of megabytes; a history keeps its first part).
  void AppendDebug(std::string* out, size_t max_bytes) const;
  // The reply as a message quotes it: Debug()'s text, at most kQuotedMaxBytes of it.
  static constexpr size_t kQuotedMaxBytes = 200;
  std::string Quoted() const {
    std::string out;
    AppendDebug(&out, kQuotedMaxBytes);
    return out;
  }
};

// Redis's exact error texts, shared by every command so that a typo cannot make one command
// disagree with redis-server.
namespace err {
inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kSyntax = "ERR syntax error";
inline constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
inline constexpr std::string_view kOutOfRangePositive = "ERR value is out of range, must be positive";
}  // namespace err

}  // namespace lockstep

#endif  // LOCKSTEP_CORE_REPLY_H_
