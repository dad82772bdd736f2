// String and counter commands (Redis t_string.c).
#include <climits>
#include <cstring>
#include <optional>
#include <strings.h>

#include "base/ascii.h"
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

// The SET option an argument names, or 0. Compares as Is() does (case-insensitive, up to the
// first NUL) but looks at the length first, so that SET k v PX ms costs one comparison, not six.
unsigned SetOption(const std::string& arg) {
  const char* s = arg.c_str();
  const size_t n = std::strlen(s);
  auto upper = [s](size_t i) {
    const char c = s[i];
    return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c;
  };
  switch (n) {
    case 2:
      if (upper(1) != 'X') return 0;
      switch (upper(0)) {
        case 'N': return kNx;
        case 'X': return kXx;
        case 'E': return kEx;
        case 'P': return kPx;
        default: return 0;
      }
    case 3:
      return upper(0) == 'G' && upper(1) == 'E' && upper(2) == 'T' ? kGet : 0u;
    case 4:
      if (upper(1) != 'X' || upper(2) != 'A' || upper(3) != 'T') return 0;
      if (upper(0) == 'E') return kExAt;
      return upper(0) == 'P' ? kPxAt : 0u;
    case 7:
      return strcasecmp(s, "KEEPTTL") == 0 ? kKeepTtl : 0u;
    default:
      return 0;
  }
}

// Stores value at key, keeping or clearing the TTL (Redis setKey). `existing` is the key's live
// entry when the caller has looked it up already (null: missing, or expired and just deleted).
Entry& StoreString(Ctx& ctx, Entry* existing, const std::string& key, const std::string& value,
                   bool keep_ttl) {
  if (existing != nullptr) {
    const int64_t expire = keep_ttl ? existing->expire_at_ms : kNoExpiry;
    if (std::string* s = std::get_if<std::string>(&existing->value)) {
      s->assign(value);  // Reuses the old string's buffer.
    } else {
      existing->value = value;
    }
    existing->expire_at_ms = expire;
    return *existing;
  }
  Entry fresh;
  fresh.value = value;
  return ctx.db.Put(key, std::move(fresh));
}

// setGenericCommand once the options are parsed (SET's, or SETEX's and PSETEX's fixed ones):
// the expire time is checked first, then GET, then NX/XX, then the store. A write with an
// expire time replicates as SET key value PXAT <ms>; SET ... GET without one as the command
// without its GET words; anything else as it came.
Reply SetGeneric(Ctx& ctx, const Argv& argv, unsigned flags, const std::string& key,
                 const std::string& value, const std::string* expire_arg) {
  int64_t expire_at = 0;
  if (expire_arg != nullptr) {
    const auto v = ParseInt64(*expire_arg);
    if (!v) return Reply::Error(std::string(err::kNotInteger));
    const bool in_seconds = flags & (kEx | kExAt);
    auto bad = [&argv] {
      return Reply::Error("ERR invalid expire time in '" + AsciiLowered(argv[0]) + "' command");
    };
    if (*v <= 0 || (in_seconds && *v > LLONG_MAX / 1000)) return bad();
    expire_at = in_seconds ? *v * 1000 : *v;
    if (flags & (kEx | kPx)) {
      if (expire_at > LLONG_MAX - ctx.now_ms) return bad();  // Redis would wrap and reject.
      expire_at += ctx.now_ms;
    }
    if (expire_at <= 0) return bad();
  }

  // One lookup serves GET, NX/XX and the store (Redis looks the key up again; the result is
  // the same, and an expired key is deleted by the first lookup either way).
  Entry* old = ctx.Lookup(key);
  Reply get_reply;
  if (flags & kGet) {
    if (old != nullptr && old->type() != ValueType::kString) return WrongType();
    get_reply = old == nullptr ? Reply::Null() : Reply::Bulk(old->str());
  }

  const bool found = old != nullptr;
  if (((flags & kNx) && found) || ((flags & kXx) && !found)) {
    return (flags & kGet) ? get_reply : Reply::Null();
  }

  Entry& stored = StoreString(ctx, old, key, value, flags & kKeepTtl);
  if (expire_arg != nullptr) {
    stored.expire_at_ms = expire_at;
    // Replicas receive an absolute time: SET key value PXAT <ms>.
    if (ctx.wants_effects()) {
      ctx.Propagate({"SET", key, value, "PXAT", FormatInt64(expire_at)});
    }
  } else if (flags & kGet) {
    if (ctx.wants_effects()) {
      Argv propagated;
      for (size_t j = 0; j < argv.size(); ++j) {
        if (j >= 3 && Is(argv[j], "GET")) continue;
        propagated.push_back(argv[j]);
      }
      ctx.Propagate(std::move(propagated));
    }
  } else {
    ctx.PropagateAsIs(argv);
  }
  return (flags & kGet) ? get_reply : Reply::Ok();
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
    const unsigned opt = SetOption(argv[j]);
    const bool has_next = j + 1 < argv.size();
    const unsigned expiry_flags = kKeepTtl | kEx | kPx | kExAt | kPxAt;
    if (opt == kNx && !(flags & kXx)) {
      flags |= kNx;
    } else if (opt == kXx && !(flags & kNx)) {
      flags |= kXx;
    } else if (opt == kGet) {
      flags |= kGet;
    } else if (opt == kKeepTtl && !(flags & (kEx | kExAt | kPx | kPxAt))) {
      flags |= kKeepTtl;
    } else if (opt == kEx && !(flags & (expiry_flags & ~kEx)) && has_next) {
      flags |= kEx;
      expire_arg = &argv[++j];
    } else if (opt == kPx && !(flags & (expiry_flags & ~kPx)) && has_next) {
      flags |= kPx;
      expire_arg = &argv[++j];
    } else if (opt == kExAt && !(flags & (expiry_flags & ~kExAt)) && has_next) {
      flags |= kExAt;
      expire_arg = &argv[++j];
    } else if (opt == kPxAt && !(flags & (expiry_flags & ~kPxAt)) && has_next) {
      flags |= kPxAt;
      expire_arg = &argv[++j];
    } else {
      return Reply::Error(std::string(err::kSyntax));
    }
  }

  return SetGeneric(ctx, argv, flags, argv[1], argv[2], expire_arg);
}

// SETEX key seconds value and PSETEX key milliseconds value: SET key value EX/PX, with the
// error texts naming the command ("invalid expire time in 'setex' command").
Reply Setex(Ctx& ctx, const Argv& argv) {
  // The table routes only SETEX (5 letters) and PSETEX (6) here.
  const unsigned flags = argv[0].size() == 5 ? kEx : kPx;
  return SetGeneric(ctx, argv, flags, argv[1], argv[3], &argv[2]);
}

Reply Setnx(Ctx& ctx, const Argv& argv) {
  if (ctx.Lookup(argv[1]) != nullptr) return Reply::Integer(0);
  StoreString(ctx, nullptr, argv[1], argv[2], false);
  ctx.PropagateAsIs(argv);
  return Reply::Integer(1);
}

Reply Getset(Ctx& ctx, const Argv& argv) {
  Entry* old = ctx.Lookup(argv[1]);
  if (old != nullptr && old->type() != ValueType::kString) return WrongType();
  Reply reply = old == nullptr ? Reply::Null() : Reply::Bulk(old->str());
  StoreString(ctx, old, argv[1], argv[2], false);
  if (ctx.wants_effects()) ctx.Propagate({"SET", argv[1], argv[2]});
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


// GETDEL key: GET, then the key is deleted, which replicates as DEL key.
Reply Getdel(Ctx& ctx, const Argv& argv) {
  Entry* e = ctx.Lookup(argv[1]);
  if (e == nullptr) return Reply::Null();
  if (e->type() != ValueType::kString) return WrongType();
  Reply reply = Reply::Bulk(std::move(e->str()));
  ctx.db.Erase(argv[1]);
  if (ctx.wants_effects()) ctx.Propagate({"DEL", argv[1]});
  return reply;
}

// GETRANGE key start end (and SUBSTR, its old name): both indexes are parsed before the lookup;
// a missing key is an empty string, not nil. The clamping is getrangeCommand's, step by step:
// two negative indexes in the wrong order give "" before anything else.
Reply Getrange(Ctx& ctx, const Argv& argv) {
  const std::optional<int64_t> start_arg = ParseInt64(argv[2]);
  if (!start_arg) return Reply::Error(std::string(err::kNotInteger));
  const std::optional<int64_t> end_arg = ParseInt64(argv[3]);
  if (!end_arg) return Reply::Error(std::string(err::kNotInteger));
  Entry* e = ctx.Lookup(argv[1]);
  if (e == nullptr) return Reply::Bulk("");
  if (e->type() != ValueType::kString) return WrongType();
  const std::string& str = e->str();
  int64_t start = *start_arg;
  int64_t end = *end_arg;
  if (start < 0 && end < 0 && start > end) return Reply::Bulk("");
  const auto len = static_cast<int64_t>(str.size());  // Far below 2^63: these cannot overflow.
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= len) end = len - 1;
  if (start > end || len == 0) return Reply::Bulk("");
  return Reply::Bulk(str.substr(static_cast<size_t>(start), static_cast<size_t>(end - start + 1)));
}

// MSET key value [key value ...] and MSETNX (by argv[0]). An odd number of arguments past the
// name is the arity error Redis's command gives itself (the table's -3 lets it through).
// Every key is looked up as it is set (an expired one replicates its DEL first), any type is
// overwritten and its TTL cleared. MSETNX first looks at every key and sets nothing when any
// exists.
Reply Mset(Ctx& ctx, const Argv& argv) {
  const bool nx = argv[0].size() == 6;  // "msetnx"
  if (argv.size() % 2 == 0) {
    return Reply::Error(std::string("ERR wrong number of arguments for '") +
                        (nx ? "msetnx" : "mset") + "' command");
  }
  if (nx) {
    for (size_t j = 1; j < argv.size(); j += 2) {
      if (ctx.Lookup(argv[j]) != nullptr) return Reply::Integer(0);
    }
  }
  for (size_t j = 1; j < argv.size(); j += 2) {
    StoreString(ctx, ctx.Lookup(argv[j]), argv[j], argv[j + 1], /*keep_ttl=*/false);
  }
  ctx.PropagateAsIs(argv);
  return nx ? Reply::Integer(1) : Reply::Ok();
}

}  // namespace lockstep::cmd
