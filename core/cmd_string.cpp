// String and counter commands (Redis t_string.c).
#include <climits>
#include <strings.h>

#include "core/commands.h"
#include "core/strings.h"

namespace lockstep::cmd {

namespace {

Reply WrongType() { return Reply::Error(std::string(err::kWrongType)); }

// Case-insensitive comparison of an option against an upper-case literal, as the C string
// comparisons in parseExtendedStringArgumentsOrReply see it (up to the first NUL).
bool Is(const std::string& arg, const char* upper) { return strcasecmp(arg.c_str(), upper) == 0; }

enum SetFlag : unsigned {
  kNx = 1u << 0,
  kXx = 1u << 1,
  kGet = 1u << 2,
  kKeepTtl = 1u << 3,
  kEx = 1u << 4,
  kPx = 1u << 5,
  kExAt = 1u << 6,
  kPxAt = 1u << 7,
};

// Stores a string value, keeping or clearing the TTL (Redis setKey).
void StoreString(Ctx& ctx, const std::string& key, const std::string& value, bool keep_ttl) {
  Entry* e = ctx.db.Find(key);
  if (e != nullptr) {
    const int64_t expire = keep_ttl ? e->expire_at_ms : kNoExpiry;
    e->value = value;
    e->expire_at_ms = expire;
    return;
  }
  Entry fresh;
  fresh.value = value;
  ctx.db.Put(key, std::move(fresh));
}

}  // namespace

Reply Get(Ctx& ctx, const Argv& argv) {
  Entry* e = ctx.Lookup(argv[1]);
  if (e == nullptr) return Reply::Null();
  if (e->type() != ValueType::kString) return WrongType();
  return Reply::Bulk(e->str());
}

Reply Set(Ctx& ctx, const Argv& argv) {
  // Option parsing follows parseExtendedStringArgumentsOrReply condition by condition: a
  // repeated PX is accepted (the last wins), PX after EX is a syntax error, and so on.
  unsigned flags = 0;
  const std::string* expire_arg = nullptr;
  for (size_t j = 3; j < argv.size(); ++j) {
    const std::string& opt = argv[j];
    const bool has_next = j + 1 < argv.size();
    const unsigned expiry_flags = kKeepTtl | kEx | kPx | kExAt | kPxAt;
    if (Is(opt, "NX") && !(flags & kXx)) {
      flags |= kNx;
    } else if (Is(opt, "XX") && !(flags & kNx)) {
      flags |= kXx;
    } else if (Is(opt, "GET")) {
      flags |= kGet;
    } else if (Is(opt, "KEEPTTL") && !(flags & (kEx | kExAt | kPx | kPxAt))) {
      flags |= kKeepTtl;
    } else if (Is(opt, "EX") && !(flags & (expiry_flags & ~kEx)) && has_next) {
      flags |= kEx;
      expire_arg = &argv[++j];
    } else if (Is(opt, "PX") && !(flags & (expiry_flags & ~kPx)) && has_next) {
      flags |= kPx;
      expire_arg = &argv[++j];
    } else if (Is(opt, "EXAT") && !(flags & (expiry_flags & ~kExAt)) && has_next) {
      flags |= kExAt;
      expire_arg = &argv[++j];
    } else if (Is(opt, "PXAT") && !(flags & (expiry_flags & ~kPxAt)) && has_next) {
      flags |= kPxAt;
      expire_arg = &argv[++j];
    } else {
      return Reply::Error(std::string(err::kSyntax));
    }
  }

  int64_t expire_at = 0;
  if (expire_arg != nullptr) {
    const auto v = ParseInt64(*expire_arg);
    if (!v) return Reply::Error(std::string(err::kNotInteger));
    const bool in_seconds = flags & (kEx | kExAt);
    const Reply bad = Reply::Error("ERR invalid expire time in 'set' command");
    if (*v <= 0 || (in_seconds && *v > LLONG_MAX / 1000)) return bad;
    expire_at = in_seconds ? *v * 1000 : *v;
    if (flags & (kEx | kPx)) {
      if (expire_at > LLONG_MAX - ctx.now_ms) return bad;  // Redis would wrap and reject.
      expire_at += ctx.now_ms;
    }
    if (expire_at <= 0) return bad;
  }

  Reply get_reply;
  if (flags & kGet) {
    Entry* old = ctx.Lookup(argv[1]);
    if (old != nullptr && old->type() != ValueType::kString) return WrongType();
    get_reply = old == nullptr ? Reply::Null() : Reply::Bulk(old->str());
  }

  const bool found = ctx.Lookup(argv[1]) != nullptr;
  if (((flags & kNx) && found) || ((flags & kXx) && !found)) {
    return (flags & kGet) ? get_reply : Reply::Null();
  }

  StoreString(ctx, argv[1], argv[2], flags & kKeepTtl);
  if (expire_arg != nullptr) {
    ctx.db.Find(argv[1])->expire_at_ms = expire_at;
    // Replicas receive an absolute time: SET key value PXAT <ms>.
    ctx.Propagate({"SET", argv[1], argv[2], "PXAT", FormatInt64(expire_at)});
  } else if (flags & kGet) {
    Argv propagated;
    for (size_t j = 0; j < argv.size(); ++j) {
      if (j >= 3 && Is(argv[j], "GET")) continue;
      propagated.push_back(argv[j]);
    }
    ctx.Propagate(std::move(propagated));
  } else {
    ctx.PropagateAsIs(argv);
  }
  return (flags & kGet) ? get_reply : Reply::Ok();
}

Reply Setnx(Ctx& ctx, const Argv& argv) {
  if (ctx.Lookup(argv[1]) != nullptr) return Reply::Integer(0);
  StoreString(ctx, argv[1], argv[2], false);
  ctx.PropagateAsIs(argv);
  return Reply::Integer(1);
}

Reply Getset(Ctx& ctx, const Argv& argv) {
  Entry* old = ctx.Lookup(argv[1]);
  if (old != nullptr && old->type() != ValueType::kString) return WrongType();
  Reply reply = old == nullptr ? Reply::Null() : Reply::Bulk(old->str());
  StoreString(ctx, argv[1], argv[2], false);
  ctx.Propagate({"SET", argv[1], argv[2]});
  return reply;
}

Reply Incr(Ctx& ctx, const Argv& argv) {
  const std::string& name = argv[0];
  int64_t incr = 1;
  if (Is(name, "INCRBY") || Is(name, "DECRBY")) {
    const auto v = ParseInt64(argv[2]);
    if (!v) return Reply::Error(std::string(err::kNotInteger));
    incr = *v;
    if (Is(name, "DECRBY")) {
      if (incr == LLONG_MIN) return Reply::Error("ERR decrement would overflow");
      incr = -incr;
    }
  } else if (Is(name, "DECR")) {
    incr = -1;
  }

  Entry* e = ctx.Lookup(argv[1]);
  if (e != nullptr && e->type() != ValueType::kString) return WrongType();
  int64_t value = 0;
  if (e != nullptr) {
    const auto v = ParseInt64(e->str());
    if (!v) return Reply::Error(std::string(err::kNotInteger));
    value = *v;
  }
  if ((incr < 0 && value < 0 && incr < LLONG_MIN - value) ||
      (incr > 0 && value > 0 && incr > LLONG_MAX - value)) {
    return Reply::Error(std::string(err::kOverflow));
  }
  value += incr;
  if (e != nullptr) {
    e->value = FormatInt64(value);  // The TTL stays (dbReplaceValue).
  } else {
    Entry fresh;
    fresh.value = FormatInt64(value);
    ctx.db.Put(argv[1], std::move(fresh));
  }
  ctx.PropagateAsIs(argv);
  return Reply::Integer(value);
}

Reply Mget(Ctx& ctx, const Argv& argv) {
  std::vector<Reply> out;
  out.reserve(argv.size() - 1);
  for (size_t i = 1; i < argv.size(); ++i) {
    Entry* e = ctx.Lookup(argv[i]);
    out.push_back(e == nullptr || e->type() != ValueType::kString ? Reply::Null()
                                                                  : Reply::Bulk(e->str()));
  }
  return Reply::Array(std::move(out));
}

Reply Strlen(Ctx& ctx, const Argv& argv) {
  Entry* e = ctx.Lookup(argv[1]);
  if (e == nullptr) return Reply::Integer(0);
  if (e->type() != ValueType::kString) return WrongType();
  return Reply::Integer(static_cast<int64_t>(e->str().size()));
}

}  // namespace lockstep::cmd
