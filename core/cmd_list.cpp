// List commands (Redis t_list.c). Every reply, error text and argument-vs-lookup order below was
// checked against redis-server 7.0.15; the cases are in commands_test.cpp.
#include <algorithm>
#include <cassert>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/ascii.h"
#include "core/commands.h"
#include "core/strings.h"

namespace lockstep::cmd {

namespace {

Reply WrongType() { return Reply::Error(std::string(err::kWrongType)); }
Reply NotInteger() { return Reply::Error(std::string(err::kNotInteger)); }


// Redis addReplyErrorArity: the command's table name, whatever case the caller typed.
Reply ArityError(const Argv& argv) {
  const CommandSpec* spec = Server::Lookup(argv);
  assert(spec != nullptr);
  return Reply::Error(std::string("ERR wrong number of arguments for '") + spec->name +
                      "' command");
}

// The inclusive index range [start, end] of a list of `size` elements after Redis's
// addListRangeReply clamping (negative indices count from the tail), or nullopt when empty.
std::optional<std::pair<size_t, size_t>> ClampRange(int64_t start, int64_t end, size_t size) {
  const auto len = static_cast<int64_t>(size);
  if (start < 0) start += len;  // len is small and positive, so these cannot overflow.
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (start > end || start >= len) return std::nullopt;
  if (end >= len) end = len - 1;
  return std::make_pair(static_cast<size_t>(start), static_cast<size_t>(end));
}

}  // namespace

// LPUSH/RPUSH key element [element ...] -> the new length. LPUSH a b c leaves c first.
Reply Push(Ctx& ctx, const Argv& argv) {
  const bool head = EqualsIgnoreCase(argv[0], "lpush");
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kList, &wrong_type);
  if (wrong_type) return WrongType();
  if (e == nullptr) {
    Entry fresh;
    fresh.value = List{};
    e = &ctx.db.Put(argv[1], std::move(fresh));
  }
  List& list = e->list();
  for (size_t i = 2; i < argv.size(); ++i) {
    if (head) {
      list.push_front(argv[i]);
    } else {
      list.push_back(argv[i]);
    }
  }
  assert(!list.empty());
  ctx.PropagateAsIs(argv);
  return Reply::Integer(static_cast<int64_t>(list.size()));
}

// LPOP/RPOP key [count]. Without a count: a bulk, or nil for a missing key. With a count: an
// array (empty for count 0), or a null array for a missing key; the count is parsed first and
// any bad count is "out of range, must be positive".
Reply Pop(Ctx& ctx, const Argv& argv) {
  const bool head = EqualsIgnoreCase(argv[0], "lpop");
  if (argv.size() > 3) return ArityError(argv);
  const bool has_count = argv.size() == 3;
  int64_t count = 0;
  if (has_count) {
    const std::optional<int64_t> parsed = ParseInt64(argv[2]);
    if (!parsed || *parsed < 0) return Reply::Error(std::string(err::kOutOfRangePositive));
    count = *parsed;
  }
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kList, &wrong_type);
  if (wrong_type) return WrongType();
  // The missing-key reply comes before the count-0 shortcut: LPOP nokey 0 is a null array.
  if (e == nullptr) return has_count ? Reply::NullArray() : Reply::Null();
  if (has_count && count == 0) return Reply::Array();  // Changes nothing, replicates nothing.

  List& list = e->list();
  assert(!list.empty());
  const size_t n = has_count ? static_cast<size_t>(std::min<uint64_t>(
                                   static_cast<uint64_t>(count), list.size()))
                             : 1;
  std::vector<Reply> popped;
  popped.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (head) {
      popped.push_back(Reply::Bulk(list.take_front()));
    } else {
      popped.push_back(Reply::Bulk(list.take_back()));
    }
  }
  if (list.empty()) ctx.db.Erase(argv[1]);
  // Replicated as is, count included, even when the count exceeded the length.
  ctx.PropagateAsIs(argv);
  return has_count ? Reply::Array(std::move(popped)) : std::move(popped.front());
}

// LINDEX key index. Unlike most commands the key is looked up before the index is parsed, so
// LINDEX nokey abc is nil and LINDEX stringkey abc is WRONGTYPE.
Reply Lindex(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kList, &wrong_type);
  if (wrong_type) return WrongType();
  if (e == nullptr) return Reply::Null();
  const std::optional<int64_t> parsed = ParseInt64(argv[2]);
  if (!parsed) return NotInteger();
  const List& list = e->list();
  const auto len = static_cast<int64_t>(list.size());
  int64_t index = *parsed;
  if (index < 0) index += len;
  if (index < 0 || index >= len) return Reply::Null();
  return Reply::Bulk(list[static_cast<size_t>(index)]);
}

// LRANGE key start stop: both indices are parsed before the lookup.
Reply Lrange(Ctx& ctx, const Argv& argv) {
  const std::optional<int64_t> start = ParseInt64(argv[2]);
  const std::optional<int64_t> end = ParseInt64(argv[3]);
  if (!start || !end) return NotInteger();
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kList, &wrong_type);
  if (wrong_type) return WrongType();
  if (e == nullptr) return Reply::Array();
  const List& list = e->list();
  const auto range = ClampRange(*start, *end, list.size());
  if (!range) return Reply::Array();
  std::vector<Reply> out;
  out.reserve(range->second - range->first + 1);
  for (size_t i = range->first; i <= range->second; ++i) out.push_back(Reply::Bulk(list[i]));
  return Reply::Array(std::move(out));
}

// LREM key count element: count > 0 removes the first `count` matches from the head, count < 0
// the first |count| from the tail, 0 all of them. Returns the number removed.
Reply Lrem(Ctx& ctx, const Argv& argv) {
  const std::optional<int64_t> count = ParseInt64(argv[2]);
  if (!count) return NotInteger();
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kList, &wrong_type);
  if (wrong_type) return WrongType();
  if (e == nullptr) return Reply::Integer(0);

  // |INT64_MIN| does not fit; Redis's negation leaves it negative, which never matches the
  // number removed, so it removes every match from the tail. 0 means the same.
  const bool from_tail = *count < 0;
  const uint64_t limit = *count == 0 || *count == std::numeric_limits<int64_t>::min()
                             ? std::numeric_limits<uint64_t>::max()
                             : static_cast<uint64_t>(from_tail ? -*count : *count);
  const std::string& element = argv[3];
  List& list = e->list();
  List kept;
  uint64_t removed = 0;
  if (from_tail) {
    for (auto it = list.rbegin(); it != list.rend(); ++it) {
      if (removed < limit && *it == element) {
        ++removed;
      } else {
        kept.push_front(std::move(*it));
      }
    }
  } else {
    for (std::string& item : list) {
      if (removed < limit && item == element) {
        ++removed;
      } else {
        kept.push_back(std::move(item));
      }
    }
  }
  list = std::move(kept);
  if (list.empty()) ctx.db.Erase(argv[1]);
  // The LREM itself replicates (not a DEL), and only when it removed something.
  if (removed > 0) ctx.PropagateAsIs(argv);
  return Reply::Integer(static_cast<int64_t>(removed));
}

Reply Llen(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kList, &wrong_type);
  if (wrong_type) return WrongType();
  return Reply::Integer(e == nullptr ? 0 : static_cast<int64_t>(e->list().size()));
}

}  // namespace lockstep::cmd

namespace lockstep::cmd {

namespace {

// getTimeoutFromObjectOrReply(UNIT_SECONDS): the timeout as Redis reads it, a long double
// (string2ld: strtold over the whole argument, no leading space, no NaN, no overflow), in
// whole milliseconds rounded up. Returns the error reply's text on failure.
std::optional<int64_t> ParseBlockTimeoutMs(const std::string& arg, Reply* error) {
  constexpr size_t kMaxLongDoubleChars = 5 * 1024;  // Redis's MAX_LONG_DOUBLE_CHARS
  bool ok = !arg.empty() && arg.size() < kMaxLongDoubleChars &&
            std::isspace(static_cast<unsigned char>(arg[0])) == 0;
  long double seconds = 0;
  if (ok) {
    errno = 0;
    char* end = nullptr;
    seconds = std::strtold(arg.c_str(), &end);
    ok = static_cast<size_t>(end - arg.c_str()) == arg.size() && errno != EINVAL &&
         !std::isnan(seconds) &&
         !(errno == ERANGE && (seconds == HUGE_VALL || seconds == -HUGE_VALL ||
                               std::fpclassify(seconds) == FP_ZERO));
  }
  if (!ok) {
    *error = Reply::Error("ERR timeout is not a float or out of range");
    return std::nullopt;
  }
  const long double ms = std::ceil(seconds * 1000.0L);
  // Redis converts with a plain (long long) cast; on x86-64 a value out of its range (an
  // infinity, 1e30) becomes INT64_MIN, which then reads as negative.
  constexpr long double kTwo63 = 9223372036854775808.0L;
  const int64_t timeout_ms =
      (ms >= -kTwo63 && ms < kTwo63) ? static_cast<int64_t>(ms) : INT64_MIN;
  if (timeout_ms < 0) {
    *error = Reply::Error("ERR timeout is negative");
    return std::nullopt;
  }
  return timeout_ms;
}

}  // namespace

// BLPOP/BRPOP key [key ...] timeout (blockingPopGenericCommand). The timeout is parsed first;
// then the keys in order: a missing key is skipped, a non-list is WRONGTYPE at once, and the
// first list gives up one element, replied as [key, element] and propagated as LPOP/RPOP. When
// every key is empty the connection blocks (Server::Block; Execute returns no reply), unless
// it may not: inside EXEC (or without a connection) the reply is the timeout's null array.
Reply Bpop(Ctx& ctx, const Argv& argv) {
  const bool head = EqualsIgnoreCase(argv[0], "blpop");
  Reply error;
  const std::optional<int64_t> timeout_ms = ParseBlockTimeoutMs(argv.back(), &error);
  if (!timeout_ms) return error;
  for (size_t i = 1; i + 1 < argv.size(); ++i) {
    const std::string& key = argv[i];
    bool wrong_type = false;
    Entry* e = ctx.LookupTyped(key, ValueType::kList, &wrong_type);
    if (wrong_type) return WrongType();
    if (e == nullptr) continue;
    List& list = e->list();
    assert(!list.empty());
    std::string value = head ? list.take_front() : list.take_back();
    if (list.empty()) ctx.db.Erase(key);
    ctx.Propagate({head ? "LPOP" : "RPOP", key});
    return Reply::Array({Reply::Bulk(key), Reply::Bulk(std::move(value))});
  }
  if (!Server::MayBlock(ctx)) return Reply::NullArray();
  // The deadline on the node's clock; Redis adds its own clock's now the same way, with no
  // care for overflow (here it wraps, as there, and such a deadline has passed at once).
  const int64_t deadline_ms =
      *timeout_ms == 0 ? Session::kNoDeadline
                       : static_cast<int64_t>(static_cast<uint64_t>(*timeout_ms) +
                                              static_cast<uint64_t>(ctx.now_ms));
  ctx.server.Block(*ctx.session, argv, head, deadline_ms);
  return Reply::NullArray();  // Not sent: Execute answers "blocked" instead.
}

}  // namespace lockstep::cmd
