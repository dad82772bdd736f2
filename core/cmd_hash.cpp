// Hash commands (Redis t_hash.c). Every reply, error text and argument-vs-lookup order below was
// checked against redis-server 7.0.15; the cases are in commands_test.cpp.
#include <cassert>
#include <cstdint>
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


// Redis addReplyErrorArity: the command's table name, whatever case the caller typed.
Reply ArityError(const Argv& argv) {
  const CommandSpec* spec = Server::Lookup(argv);
  assert(spec != nullptr);
  return Reply::Error(std::string("ERR wrong number of arguments for '") + spec->name +
                      "' command");
}

// Redis hashTypeLookupWriteOrCreate: the hash at key, created empty when missing. The caller
// must leave something in it (invariant (1) of keyspace.h).
Hash* LookupOrCreate(Ctx& ctx, const std::string& key, bool* wrong_type) {
  Entry* e = ctx.LookupTyped(key, ValueType::kHash, wrong_type);
  if (*wrong_type) return nullptr;
  if (e == nullptr) {
    Entry fresh;
    fresh.value = Hash{};
    e = &ctx.db.Put(key, std::move(fresh));
  }
  return &e->hash();
}

}  // namespace

// HSET key field value [field value ...] -> number of new fields; HMSET -> OK.
Reply Hset(Ctx& ctx, const Argv& argv) {
  // Checked before the lookup: "HSET stringkey f" is an arity error, not WRONGTYPE.
  if (argv.size() % 2 == 1) return ArityError(argv);
  bool wrong_type = false;
  Hash* hash = LookupOrCreate(ctx, argv[1], &wrong_type);
  if (wrong_type) return WrongType();
  int64_t created = 0;
  for (size_t i = 2; i < argv.size(); i += 2) created += hash->Set(argv[i], argv[i + 1]) ? 1 : 0;
  assert(!hash->empty());
  // Redis counts every pair as dirty, so even a HSET that rewrites equal values replicates.
  ctx.PropagateAsIs(argv);
  return EqualsIgnoreCase(argv[0], "hmset") ? Reply::Ok() : Reply::Integer(created);
}

// HSETNX key field value -> 1 when set, 0 when the field existed (and nothing propagates).
Reply Hsetnx(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Hash* hash = LookupOrCreate(ctx, argv[1], &wrong_type);
  if (wrong_type) return WrongType();
  // Only a hash that already existed can have the field, so this return never leaves a
  // just-created hash empty.
  if (hash->Get(argv[2]) != nullptr) return Reply::Integer(0);
  hash->Set(argv[2], argv[3]);
  ctx.PropagateAsIs(argv);
  return Reply::Integer(1);
}

Reply Hget(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kHash, &wrong_type);
  if (wrong_type) return WrongType();
  if (e == nullptr) return Reply::Null();
  const std::string* value = e->hash().Get(argv[2]);
  return value == nullptr ? Reply::Null() : Reply::Bulk(*value);
}

// HMGET key field [field ...]: a missing key is an empty hash, so it gives all nils.
Reply Hmget(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kHash, &wrong_type);
  if (wrong_type) return WrongType();
  std::vector<Reply> out;
  out.reserve(argv.size() - 2);
  for (size_t i = 2; i < argv.size(); ++i) {
    const std::string* value = e == nullptr ? nullptr : e->hash().Get(argv[i]);
    out.push_back(value == nullptr ? Reply::Null() : Reply::Bulk(*value));
  }
  return Reply::Array(std::move(out));
}

Reply Hexists(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kHash, &wrong_type);
  if (wrong_type) return WrongType();
  return Reply::Integer(e != nullptr && e->hash().Get(argv[2]) != nullptr ? 1 : 0);
}

// HINCRBY key field increment. The increment is parsed before the lookup (so a bad increment on
// a string key is "not an integer", not WRONGTYPE); the stored value must pass string2ll.
Reply Hincrby(Ctx& ctx, const Argv& argv) {
  const std::optional<int64_t> incr = ParseInt64(argv[3]);
  if (!incr) return Reply::Error(std::string(err::kNotInteger));
  bool wrong_type = false;
  Hash* hash = LookupOrCreate(ctx, argv[1], &wrong_type);
  if (wrong_type) return WrongType();
  // The errors below need an existing field, so they never leave a just-created hash empty.
  int64_t old_value = 0;
  if (const std::string* stored = hash->Get(argv[2])) {
    const std::optional<int64_t> parsed = ParseInt64(*stored);
    if (!parsed) return Reply::Error("ERR hash value is not an integer");
    old_value = *parsed;
  }
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if ((*incr < 0 && old_value < 0 && *incr < kMin - old_value) ||
      (*incr > 0 && old_value > 0 && *incr > kMax - old_value)) {
    return Reply::Error(std::string(err::kOverflow));
  }
  const int64_t value = old_value + *incr;
  hash->Set(argv[2], FormatInt64(value));
  // Replicated as is, even for an increment of 0.
  ctx.PropagateAsIs(argv);
  return Reply::Integer(value);
}

// HDEL key field [field ...] -> number removed. Duplicates count once; emptying the hash deletes
// the key (and stops looking at the remaining fields, as Redis does).
Reply Hdel(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kHash, &wrong_type);
  if (wrong_type) return WrongType();
  if (e == nullptr) return Reply::Integer(0);
  Hash& hash = e->hash();
  int64_t deleted = 0;
  for (size_t i = 2; i < argv.size(); ++i) {
    if (!hash.Erase(argv[i])) continue;
    ++deleted;
    if (hash.empty()) {
      ctx.db.Erase(argv[1]);
      break;
    }
  }
  // The HDEL itself replicates (not a DEL), and only when it removed something.
  if (deleted > 0) ctx.PropagateAsIs(argv);
  return Reply::Integer(deleted);
}

Reply Hlen(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kHash, &wrong_type);
  if (wrong_type) return WrongType();
  return Reply::Integer(e == nullptr ? 0 : static_cast<int64_t>(e->hash().size()));
}

// HGETALL (a map in RESP3, a flat array in RESP2), HKEYS and HVALS (arrays), in the hash's
// insertion order as a listpack-encoded hash gives it.
Reply Hgetall(Ctx& ctx, const Argv& argv) {
  const bool keys = !EqualsIgnoreCase(argv[0], "hvals");
  const bool values = !EqualsIgnoreCase(argv[0], "hkeys");
  assert(keys || values);
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kHash, &wrong_type);
  if (wrong_type) return WrongType();
  std::vector<Reply> out;
  if (e != nullptr) {
    const Hash& hash = e->hash();
    out.reserve(hash.size() * ((keys && values) ? 2 : 1));
    for (const Hash::Field& f : hash.fields()) {
      if (keys) out.push_back(Reply::Bulk(f.first));
      if (values) out.push_back(Reply::Bulk(f.second));
    }
  }
  return (keys && values) ? ctx.Map(std::move(out)) : Reply::Array(std::move(out));
}

}  // namespace lockstep::cmd
