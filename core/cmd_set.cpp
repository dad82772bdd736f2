// Set commands (Redis t_set.c). The set's encoding (intset or hash table) and the order
// SMEMBERS lists its members in are the data type's (keyspace.h, MemberSet).
#include <string>
#include <vector>

#include "core/commands.h"

namespace lockstep::cmd {

namespace {

Reply WrongType() { return Reply::Error(std::string(err::kWrongType)); }

}  // namespace

// SADD key member [member ...] -> the number of new members. Nothing is parsed before the
// lookup; a repeated member counts once; only a change replicates (as the command came).
Reply Sadd(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kSet, &wrong_type);
  if (wrong_type) return WrongType();
  if (e == nullptr) {
    Entry fresh;
    fresh.value = MemberSet{};
    e = &ctx.db.Put(argv[1], std::move(fresh));
  }
  MemberSet& set = e->set();
  int64_t added = 0;
  for (size_t i = 2; i < argv.size(); ++i) {
    if (set.Add(argv[i])) ++added;
  }
  if (added > 0) ctx.PropagateAsIs(argv);
  return Reply::Integer(added);
}

// SREM key member [member ...] -> the number removed. Emptying the set deletes the key and
// stops the loop, as Redis does; the SREM itself replicates (not a DEL), when it removed any.
Reply Srem(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kSet, &wrong_type);
  if (wrong_type) return WrongType();
  if (e == nullptr) return Reply::Integer(0);
  MemberSet& set = e->set();
  int64_t deleted = 0;
  for (size_t i = 2; i < argv.size(); ++i) {
    if (!set.Erase(argv[i])) continue;
    ++deleted;
    if (set.empty()) {
      ctx.db.Erase(argv[1]);
      break;
    }
  }
  if (deleted > 0) ctx.PropagateAsIs(argv);
  return Reply::Integer(deleted);
}

Reply Scard(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kSet, &wrong_type);
  if (wrong_type) return WrongType();
  return Reply::Integer(e == nullptr ? 0 : static_cast<int64_t>(e->set().size()));
}

Reply Sismember(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kSet, &wrong_type);
  if (wrong_type) return WrongType();
  return Reply::Integer(e != nullptr && e->set().Contains(argv[2]) ? 1 : 0);
}

// SMEMBERS key: Redis runs it as SINTER of one key, whose reply is a set (an array in RESP2,
// and an empty one for a missing key).
Reply Smembers(Ctx& ctx, const Argv& argv) {
  bool wrong_type = false;
  Entry* e = ctx.LookupTyped(argv[1], ValueType::kSet, &wrong_type);
  if (wrong_type) return WrongType();
  std::vector<Reply> out;
  if (e != nullptr) {
    std::vector<std::string> members = e->set().Members();
    out.reserve(members.size());
    for (std::string& m : members) out.push_back(Reply::Bulk(std::move(m)));
  }
  return ctx.SetOf(std::move(out));
}

}  // namespace lockstep::cmd
