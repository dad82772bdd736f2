#include "history/notes.h"

#include <cctype>
#include <charconv>
#include <cinttypes>
#include <cstdio>

#include "core/reply.h"

namespace lockstep::history {

namespace {

// --- reading text --------------------------------------------------------------------------

// The value after `key` ("wait=") in a detail such as "tryLock(wait=10000ms, lease=30000ms)",
// up to the next ',', ' ' or ')'. Empty if absent. The key must start a word, so "wait=" does
// not match inside "await=".
std::string_view TextValue(std::string_view text, std::string_view key) {
  for (size_t pos = text.find(key); pos != std::string_view::npos; pos = text.find(key, pos + 1)) {
    const bool starts_word =
        pos == 0 || !(std::isalnum(static_cast<unsigned char>(text[pos - 1])) || text[pos - 1] == '_');
    if (!starts_word) continue;
    const size_t start = pos + key.size();
    size_t end = start;
    while (end < text.size() && text[end] != ',' && text[end] != ' ' && text[end] != ')') ++end;
    return text.substr(start, end - start);
  }
  return {};
}

// "10000ms" -> 10'000'000, "500us", "2s"; a bare number is milliseconds. The lenient reading
// of free text (hand-written histories).
std::optional<int64_t> ParseLooseDurationUs(std::string_view text) {
  size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) ||
                                  (digits == 0 && text[0] == '-'))) {
    ++digits;
  }
  const auto number = ParseInt(text.substr(0, digits));
  if (!number) return std::nullopt;
  const std::string_view unit = text.substr(digits);
  int64_t scale = 0;
  if (unit.empty() || unit == "ms") scale = 1000;
  else if (unit == "us") scale = 1;
  else if (unit == "s") scale = 1'000'000;
  else return std::nullopt;
  if (*number > kForeverUs / scale || *number < -(kForeverUs / scale)) return std::nullopt;
  return *number * scale;
}

// Exactly what AppendMs writes: "-?\d+ms" or "-?\d+\.\d{3}ms".
std::optional<int64_t> ParseMs(std::string_view text) {
  if (text.size() < 3 || text.substr(text.size() - 2) != "ms") return std::nullopt;
  text.remove_suffix(2);
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) text.remove_prefix(1);
  const size_t dot = text.find('.');
  const std::string_view whole = text.substr(0, dot);
  if (whole.empty() || (whole.size() > 1 && whole[0] == '0')) return std::nullopt;
  const auto ms = ParseInt(whole);
  if (!ms || *ms > kForeverUs / 1000 - 1) return std::nullopt;
  int64_t us = *ms * 1000;
  if (dot != std::string_view::npos) {
    const std::string_view frac = text.substr(dot + 1);
    if (frac.size() != 3) return std::nullopt;
    const auto f = ParseInt(frac);
    if (!f || *f < 0) return std::nullopt;
    if (*f == 0) return std::nullopt;  // "5.000ms" is never written: whole ms print as "5ms".
    us += *f;
  }
  if (negative && us == 0) return std::nullopt;  // "-0ms" is never written.
  return negative ? -us : us;
}

bool Eat(std::string_view* s, std::string_view prefix) {
  if (s->substr(0, prefix.size()) != prefix) return false;
  s->remove_prefix(prefix.size());
  return true;
}

// A non-negative decimal without leading zeros, as std::to_string writes it.
std::optional<int64_t> ParseCanonicalInt(std::string_view s) {
  if (s.empty()) return std::nullopt;
  const std::string_view digits = s[0] == '-' ? s.substr(1) : s;
  if (digits.empty() || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  if (s[0] == '-' && digits == "0") return std::nullopt;
  return ParseInt(s);
}

std::optional<AcquireCall> DecodeAcquireCall(std::string_view s) {
  AcquireCall call;
  if (Eat(&s, "lock(")) {
    call.mode = AcquireCall::Mode::kLock;
  } else if (Eat(&s, "tryLock(wait=")) {
    call.mode = AcquireCall::Mode::kTryLock;
    const size_t comma = s.find(", ");
    if (comma == std::string_view::npos) return std::nullopt;
    const auto wait = ParseMs(s.substr(0, comma));
    if (!wait) return std::nullopt;
    call.wait_us = *wait;
    s.remove_prefix(comma + 2);
  } else {
    return std::nullopt;
  }
  if (Eat(&s, "no lease")) {
    call.lease_us = -1;
  } else if (Eat(&s, "lease=")) {
    const size_t end = s.find_first_of(",)");
    if (end == std::string_view::npos) return std::nullopt;
    const auto lease = ParseMs(s.substr(0, end));
    if (!lease || *lease == -1) return std::nullopt;  // -1 is written "no lease".
    call.lease_us = *lease;
    s.remove_prefix(end);
  } else {
    return std::nullopt;
  }
  if (Eat(&s, ", permits=")) {
    const size_t end = s.find(')');
    if (end == std::string_view::npos) return std::nullopt;
    const auto permits = ParseCanonicalInt(s.substr(0, end));
    if (!permits || *permits < 0) return std::nullopt;
    call.permits = *permits;
    s.remove_prefix(end);
  }
  if (s != ")") return std::nullopt;
  return call;
}

std::string_view StockTextOf(EventType type, Name op) {
  switch (type) {
    case EventType::kInvoke:
      if (op == names::kRelease || op == names::kReleaseRead) return "unlock()";
      break;
    case EventType::kFault:
      if (op == names::kCrash) return "process killed";
      if (op == names::kRestart) return "process restarted";
      if (op == names::kResume) return "resumed";
      break;
    default: break;
  }
  return {};
}

// "key=value" pairs separated by spaces, any order: the lenient reading of notes.
std::string_view NoteValue(std::string_view text, std::string_view key) {
  size_t at = 0;
  while ((at = text.find(key, at)) != std::string_view::npos) {
    if (at == 0 || text[at - 1] == ' ') {
      std::string_view rest = text.substr(at + key.size());
      return rest.substr(0, rest.find(' '));
    }
    at += key.size();
  }
  return {};
}

ProtocolNote DecodeProtocolNote(std::string_view text) {
  ProtocolNote p;
  p.kind = TextValue(text, "kind=");
  p.version = TextValue(text, "version=");
  p.fencing = TextValue(text, "fencing=") == "on";
  if (const auto permits = ParseInt(TextValue(text, "permits="))) p.permits = *permits;
  p.nodes = -1;
  if (const auto nodes = ParseInt(TextValue(text, "nodes=")); nodes && *nodes >= 0 && *nodes < 1'000'000) {
    p.nodes = static_cast<int>(*nodes);
  }
  p.fair_wait_timeout_us = -1;
  if (const auto wait = ParseLooseDurationUs(TextValue(text, "fair_wait_timeout="))) {
    p.fair_wait_timeout_us = *wait;
  }
  p.layout = TextValue(text, "layout=");
  p.unlock = TextValue(text, "unlock=");
  p.quorum = TextValue(text, "quorum=");
  p.owner = TextValue(text, "owner=");
  return p;
}

std::optional<RoleNote::Role> RoleNamed(std::string_view name) {
  if (name == "worker") return RoleNote::Role::kWorker;
  if (name == "await") return RoleNote::Role::kAwait;
  if (name == "count_down") return RoleNote::Role::kCountDown;
  if (name == "add_permits") return RoleNote::Role::kAddPermits;
  if (name == "reduce_permits") return RoleNote::Role::kReducePermits;
  if (name == "try_set_permits") return RoleNote::Role::kTrySetPermits;
  if (name == "drain_permits") return RoleNote::Role::kDrainPermits;
  return std::nullopt;
}

void AppendInt(std::string* out, int64_t v) {
  char buf[24];
  const int n = std::snprintf(buf, sizeof(buf), "%" PRId64, v);
  out->append(buf, static_cast<size_t>(n));
}

// The shortest text that reads back as the same double ("0.25", "1"): to_chars' shortest form
// is the same with every standard library, and ParseRate reads it back exactly.
void AppendRate(std::string* out, double v) {
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, result.ptr);
}

// A rate as AppendRate writes it, from 0 to 1; nullopt for anything else.
std::optional<double> ParseRate(std::string_view text) {
  double v = 0;
  const auto result = std::from_chars(text.data(), text.data() + text.size(), v);
  if (result.ec != std::errc() || result.ptr != text.data() + text.size()) return std::nullopt;
  if (!(v >= 0 && v <= 1)) return std::nullopt;
  return v;
}

// The typed detail as text. Visiting by overload: one line per kind.
struct Encoder {
  const Event& e;
  std::string* out;

  void operator()(const NoDetail&) const {}
  void operator()(const Text& t) const { out->append(t.text); }
  void operator()(const StockText&) const { out->append(StockTextOf(e.type, e.op)); }
  void operator()(const AcquireCall& c) const {
    if (c.mode == AcquireCall::Mode::kLock) {
      out->append("lock(");
    } else {
      out->append("tryLock(wait=");
      AppendMs(out, c.wait_us);
      out->append(", ");
    }
    if (c.lease_us != -1) {  // The driver writes -1 for a lease the client does not take.
      out->append("lease=");
      AppendMs(out, c.lease_us);
    } else {
      out->append("no lease");
    }
    if (c.permits >= 0) {
      out->append(", permits=");
      AppendInt(out, c.permits);
    }
    out->push_back(')');
  }
  void operator()(const ReplyDetail& r) const {
    if (r.reply != nullptr) r.reply->AppendDebug(out, kReplyTextMaxBytes);
  }
  void operator()(const Owners& o) const { out->append(o.list); }
  void operator()(const Access& a) const {
    if (a.read) out->append("read");
  }
  void operator()(const Write& w) const {
    if (w.accepted) {
      out->append("accepted");
      return;
    }
    out->append("rejected: stale token ");
    AppendInt(out, w.token);
    out->append(" < ");
    AppendInt(out, w.newest);
  }
  void operator()(const PauseFault& p) const {
    out->append(p.gc ? "GC pause for " : "pause for ");
    AppendMs(out, p.duration_us);
  }
  void operator()(const PartitionFault& p) const {
    out->append(p.side_a);
    out->append(p.one_way ? " -> " : " | ");
    out->append(p.side_b);
  }
  void operator()(const ClockJumpFault& c) const {
    out->append("wall clock jumps by ");
    AppendMs(out, c.by_us);
  }
  void operator()(const FailoverFault& f) const {
    if (f.down_after_us >= 0) {
      out->append(f.master);
      out->append(" down for ");
      AppendMs(out, f.down_after_us);
    } else {
      out->append("failover of ");
      out->append(f.master);
      out->append(" requested");
    }
  }
  void operator()(const PromoteFault& p) const {
    out->append("replica ");
    out->append(p.replica);
    out->append(" promoted to master (");
    out->append(p.why);
    out->push_back(')');
  }
  void operator()(const LoseRepliesFault& l) const {
    out->append("replies from ");
    out->append(l.node);
    out->append(e.op == names::kLoseRepliesEnd ? " flow again" : " are lost");
  }
  void operator()(const NetworkFault& n) const {
    if (e.op == names::kLatency || e.op == names::kLatencyEnd) {
      out->append("extra=");
      AppendMs(out, n.extra_us);
    } else {
      out->append("rate=");
      AppendRate(out, n.rate);
    }
    out->append(" targets=");
    out->append(n.targets);
    if (!n.peers.empty()) {
      out->append(" peers=");
      out->append(n.peers);
    }
  }
  void operator()(const RunNote& r) const {
    out->append("end_us=");
    AppendInt(out, r.end_us);
    out->append(" seed=");
    out->append(std::to_string(r.seed));
    out->append(" scenario=");
    out->append(r.scenario);
  }
  void operator()(const ProtocolNote& p) const {
    out->append("kind=");
    out->append(p.kind);
    out->append(" version=");
    out->append(p.version);
    out->append(p.fencing ? " fencing=on" : " fencing=off");
    out->append(" permits=");
    AppendInt(out, p.permits);
    if (p.nodes >= 0) {
      out->append(" nodes=");
      AppendInt(out, p.nodes);
    }
    if (p.fair_wait_timeout_us >= 0) {
      out->append(" fair_wait_timeout=");
      AppendInt(out, p.fair_wait_timeout_us / 1000);
      out->append("ms");
    }
    if (!p.layout.empty()) {
      out->append(" layout=");
      out->append(p.layout);
    }
    if (!p.unlock.empty()) {
      out->append(" unlock=");
      out->append(p.unlock);
    }
    if (!p.quorum.empty()) {
      out->append(" quorum=");
      out->append(p.quorum);
    }
    if (!p.owner.empty()) {
      out->append(" owner=");
      out->append(p.owner);
    }
  }
  void operator()(const ClusterNote& c) const {
    out->append(c.slots);
    out->append(" lock_slot=");
    AppendInt(out, c.lock_slot);
  }
  void operator()(const ClientNote& c) const {
    out->append("uuid=");
    out->append(c.uuid);
  }
  void operator()(const RoleNote& r) const {
    out->append("role=");
    out->append(RoleName(r.role));
    out->append(" threads=");
    AppendInt(out, r.threads);
  }
  void operator()(const DoneNote& d) const {
    out->append("ops_per_thread=");
    AppendInt(out, d.ops_per_thread);
  }
  void operator()(const RediscoverNote& r) const {
    out->append("clients now send to ");
    out->append(r.node);
  }
  void operator()(const HolderNote& h) const {
    out->append("value=");
    out->append(h.value);
  }
};

Detail DecodeFault(Name op, std::string_view text) {
  switch (op) {
    case names::kPause: {
      PauseFault p;
      std::string_view rest = text;
      if (Eat(&rest, "GC pause for ")) {
        p.gc = true;
      } else if (!Eat(&rest, "pause for ")) {
        break;
      }
      const auto d = ParseMs(rest);
      if (!d) break;
      p.duration_us = *d;
      return p;
    }
    case names::kPartition:
    case names::kHeal: {
      PartitionFault p;
      size_t at = text.find(" | ");
      if (at == std::string_view::npos) {
        at = text.find(" -> ");
        if (at == std::string_view::npos) break;
        p.one_way = true;
      }
      p.side_a = text.substr(0, at);
      p.side_b = text.substr(at + (p.one_way ? 4 : 3));
      if (p.side_a.empty() || p.side_b.empty()) break;
      return p;
    }
    case names::kClockJump: {
      std::string_view rest = text;
      if (!Eat(&rest, "wall clock jumps by ")) break;
      const auto by = ParseMs(rest);
      if (!by) break;
      return ClockJumpFault{*by};
    }
    case names::kFailover: {
      std::string_view rest = text;
      if (Eat(&rest, "failover of ")) {
        const size_t end = rest.find(" requested");
        if (end == std::string_view::npos || end + 10 != rest.size() || end == 0) break;
        return FailoverFault{rest.substr(0, end), -1};
      }
      const size_t at = text.find(" down for ");
      if (at == std::string_view::npos || at == 0) break;
      const auto d = ParseMs(text.substr(at + 10));
      if (!d || *d < 0) break;
      return FailoverFault{text.substr(0, at), *d};
    }
    case names::kPromote: {
      std::string_view rest = text;
      if (!Eat(&rest, "replica ")) break;
      const size_t at = rest.find(" promoted to master (");
      if (at == std::string_view::npos || at == 0 || rest.back() != ')') break;
      const std::string_view why = rest.substr(at + 21, rest.size() - at - 22);
      return PromoteFault{rest.substr(0, at), why};
    }
    case names::kLoseReplies:
    case names::kLoseRepliesEnd: {
      std::string_view rest = text;
      if (!Eat(&rest, "replies from ")) break;
      const std::string_view tail = op == names::kLoseReplies ? " are lost" : " flow again";
      if (rest.size() <= tail.size() || rest.substr(rest.size() - tail.size()) != tail) break;
      return LoseRepliesFault{rest.substr(0, rest.size() - tail.size())};
    }
    case names::kLatency:
    case names::kLatencyEnd:
    case names::kLoss:
    case names::kLossEnd:
    case names::kDuplicate:
    case names::kDuplicateEnd: {
      NetworkFault n;
      std::string_view rest = text;
      // The first word, as the encoder writes it for this op.
      const size_t space = rest.find(' ');
      if (space == std::string_view::npos) break;
      std::string_view first = rest.substr(0, space);
      rest.remove_prefix(space);
      if (op == names::kLatency || op == names::kLatencyEnd) {
        if (!Eat(&first, "extra=")) break;
        const auto extra = ParseMs(first);
        if (!extra || *extra <= 0) break;
        n.extra_us = *extra;
      } else {
        if (!Eat(&first, "rate=")) break;
        const auto rate = ParseRate(first);
        if (!rate) break;
        n.rate = *rate;
      }
      if (!Eat(&rest, " targets=")) break;
      const size_t peers_at = rest.find(" peers=");
      n.targets = rest.substr(0, peers_at);
      if (peers_at != std::string_view::npos) {
        n.peers = rest.substr(peers_at + 7);
        if (n.peers.empty()) break;
      }
      if (n.targets.empty() || n.targets.find(' ') != std::string_view::npos ||
          n.peers.find(' ') != std::string_view::npos) {
        break;
      }
      return n;
    }
    default: break;
  }
  return Text{text};
}

Detail DecodeNote(Name op, std::string_view text) {
  switch (op) {
    case names::kRun: {
      RunNote r;
      if (const auto end = ParseInt(NoteValue(text, "end_us="))) r.end_us = *end;
      const std::string_view seed = NoteValue(text, "seed=");
      if (!seed.empty() && seed.find_first_not_of("0123456789") == std::string_view::npos &&
          seed.size() <= 20) {
        r.seed = std::strtoull(std::string(seed).c_str(), nullptr, 10);
      }
      r.scenario = NoteValue(text, "scenario=");
      return r;
    }
    case names::kProtocol: return DecodeProtocolNote(text);
    case names::kCluster: {
      const size_t at = text.rfind(" lock_slot=");
      if (at == std::string_view::npos) break;
      const auto slot = ParseInt(text.substr(at + 11));
      if (!slot) break;
      return ClusterNote{text.substr(0, at), *slot};
    }
    case names::kClient: {
      const std::string_view uuid = TextValue(text, "uuid=");
      if (uuid.empty()) break;
      return ClientNote{uuid};
    }
    case names::kRole: {
      const auto role = RoleNamed(NoteValue(text, "role="));
      if (!role) break;
      RoleNote r;
      r.role = *role;
      const auto threads = ParseInt(NoteValue(text, "threads="));
      r.threads = threads && *threads > 0 && *threads < 1'000'000 ? static_cast<int>(*threads) : 1;
      return r;
    }
    case names::kDone: {
      std::string_view rest = text;
      if (!Eat(&rest, "ops_per_thread=")) break;
      const auto n = ParseInt(rest);
      if (!n) break;
      return DoneNote{*n};
    }
    case names::kRediscover: {
      std::string_view rest = text;
      if (!Eat(&rest, "clients now send to ")) break;
      return RediscoverNote{rest};
    }
    case names::kHolderValue: {
      std::string_view rest = text;
      if (!Eat(&rest, "value=") || rest.empty()) break;
      return HolderNote{rest};
    }
    default: break;
  }
  return Text{text};
}

}  // namespace

const char* RoleName(RoleNote::Role role) {
  switch (role) {
    case RoleNote::Role::kWorker: return "worker";
    case RoleNote::Role::kAwait: return "await";
    case RoleNote::Role::kCountDown: return "count_down";
    case RoleNote::Role::kAddPermits: return "add_permits";
    case RoleNote::Role::kReducePermits: return "reduce_permits";
    case RoleNote::Role::kTrySetPermits: return "try_set_permits";
    case RoleNote::Role::kDrainPermits: return "drain_permits";
  }
  return "worker";
}

std::optional<int64_t> ParseInt(std::string_view s) {
  if (s.empty()) return std::nullopt;
  bool negative = false;
  size_t i = 0;
  if (s[0] == '-') {
    negative = true;
    i = 1;
  }
  if (i == s.size()) return std::nullopt;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    if (v > (std::numeric_limits<int64_t>::max() - 9) / 10) return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return negative ? -v : v;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

void AppendMs(std::string* out, int64_t us) {
  char buf[48];
  int n;
  if (us % 1000 == 0) {
    n = std::snprintf(buf, sizeof(buf), "%" PRId64 "ms", us / 1000);
  } else {
    n = std::snprintf(buf, sizeof(buf), "%.3fms", static_cast<double>(us) / 1000.0);
  }
  out->append(buf, static_cast<size_t>(n));
}

std::string FormatMs(int64_t us) {
  std::string out;
  AppendMs(&out, us);
  return out;
}

void AppendDetailText(const Event& e, std::string* out) {
  if (!e.source.empty()) {
    out->append(e.source);
    return;
  }
  std::visit(Encoder{e, out}, e.detail);
}

std::string DetailText(const Event& e) {
  std::string out;
  AppendDetailText(e, &out);
  return out;
}

Detail DecodeDetail(EventType type, Name op, std::string_view text) {
  if (text.empty()) return NoDetail{};
  if (const std::string_view stock = StockTextOf(type, op); !stock.empty() && text == stock) {
    return StockText{};
  }
  switch (type) {
    case EventType::kInvoke:
      if (op == names::kAcquire || op == names::kAcquireRead) {
        if (auto call = DecodeAcquireCall(text)) return *call;
      }
      return Text{text};
    case EventType::kExec: return ReplyDetail{};
    case EventType::kLease:
    case EventType::kReplicated: return Owners{text};
    case EventType::kResource:
      if (op == names::kEnter && text == "read") return Access{true};
      if (op == names::kExit) {
        if (text == "accepted") return Write{true, 0, 0};
        std::string_view rest = text;
        if (Eat(&rest, "rejected: stale token ")) {
          const size_t lt = rest.find(" < ");
          if (lt != std::string_view::npos) {
            const auto token = ParseCanonicalInt(rest.substr(0, lt));
            const auto newest = ParseCanonicalInt(rest.substr(lt + 3));
            if (token && newest) return Write{false, *token, *newest};
          }
        }
      }
      return Text{text};
    case EventType::kFault: return DecodeFault(op, text);
    case EventType::kNote: return DecodeNote(op, text);
    default: return Text{text};
  }
}

// --- questions --------------------------------------------------------------------------------

namespace {
// The detail's text for the lenient readers below; free text is read as it was written.
std::string_view FreeText(const Event& e) {
  if (!e.source.empty()) return e.source;
  if (const Text* t = std::get_if<Text>(&e.detail)) return t->text;
  return {};
}
}  // namespace

int64_t AcquireWaitUs(const Event& invoke) {
  if (const AcquireCall* c = std::get_if<AcquireCall>(&invoke.detail)) {
    if (c->mode == AcquireCall::Mode::kLock) return kForeverUs;
    // tryLock(wait) with a wait of 0 or less makes one attempt (Redisson's `time <= 0`).
    return std::max<int64_t>(c->wait_us, 0);
  }
  const std::string_view text = FreeText(invoke);
  if (const auto wait = ParseLooseDurationUs(TextValue(text, "wait="))) {
    return std::max<int64_t>(*wait, 0);
  }
  if (text.substr(0, 4) == "lock") return kForeverUs;
  return 0;
}

int64_t PermitsOf(const Event& invoke) {
  if (const AcquireCall* c = std::get_if<AcquireCall>(&invoke.detail); c && c->permits >= 0) {
    return c->permits;
  }
  if (!std::holds_alternative<AcquireCall>(invoke.detail)) {
    if (const auto n = ParseInt(TextValue(FreeText(invoke), "permits=")); n && *n >= 0) return *n;
  }
  if (invoke.has_value && invoke.value >= 0) return invoke.value;
  return 1;
}

int NodesInCompletion(const Event& ok) {
  const std::string_view detail = FreeText(ok);
  const size_t of = detail.find(" of ");
  if (of == std::string_view::npos) return 0;
  std::string_view rest = detail.substr(of + 4);
  const size_t space = rest.find(' ');
  if (space == std::string_view::npos || rest.substr(space + 1, 4) != "node") return 0;
  const auto n = ParseInt(rest.substr(0, space));
  return n && *n > 0 && *n < 1'000'000 ? static_cast<int>(*n) : 0;
}

std::string_view ReplyText(const Event& exec, std::string* scratch) {
  if (!exec.source.empty()) return exec.source;
  if (const ReplyDetail* r = std::get_if<ReplyDetail>(&exec.detail); r && r->reply != nullptr) {
    scratch->clear();
    r->reply->AppendDebug(scratch, kReplyTextMaxBytes);
    return *scratch;
  }
  if (const Text* t = std::get_if<Text>(&exec.detail)) return t->text;
  return {};
}

bool IsNilReply(std::string_view text) { return text == "(nil)" || text == "nil"; }

std::optional<int64_t> IntegerReply(std::string_view text) { return ParseInt(Trim(text)); }

std::optional<int64_t> CountReply(std::string_view text) {
  text = Trim(text);
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') {
    text = text.substr(1, text.size() - 2);
  }
  return ParseInt(text);
}

std::optional<int64_t> CountOf(std::string_view list) { return ParseInt(Trim(list)); }

std::optional<OwnerField> AsOwnerField(std::string_view field) {
  const size_t colon = field.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  OwnerField out;
  out.uuid = field.substr(0, colon);
  std::string_view rest = field.substr(colon + 1);
  const size_t second = rest.find(':');
  if (second != std::string_view::npos) out.suffix = rest.substr(second);
  out.thread_number = ParseInt(rest.substr(0, second));
  return out;
}

bool IsJudgedWrite(const Event& exit) {
  if (std::holds_alternative<Write>(exit.detail)) return true;
  const std::string_view text = FreeText(exit);
  return text.starts_with("accepted") || text.starts_with("rejected");
}

bool IsAcceptedWrite(const Event& exit) {
  if (const Write* w = std::get_if<Write>(&exit.detail)) return w->accepted;
  return FreeText(exit).starts_with("accepted");
}

bool IsReadAccess(const Event& enter) {
  if (const Access* a = std::get_if<Access>(&enter.detail)) return a->read;
  return false;
}

std::optional<RunNote> AsRunNote(const Event& note) {
  if (note.type != EventType::kNote || note.op != names::kRun) return std::nullopt;
  if (const RunNote* r = std::get_if<RunNote>(&note.detail)) return *r;
  return std::nullopt;
}

std::optional<ProtocolNote> AsProtocolNote(const Event& note) {
  if (note.type != EventType::kNote || note.op != names::kProtocol) return std::nullopt;
  if (const ProtocolNote* p = std::get_if<ProtocolNote>(&note.detail)) return *p;
  return DecodeProtocolNote(FreeText(note));
}

std::optional<ClientNote> AsClientNote(const Event& note) {
  if (note.type != EventType::kNote || note.op != names::kClient) return std::nullopt;
  if (const ClientNote* c = std::get_if<ClientNote>(&note.detail)) return *c;
  return ClientNote{TextValue(FreeText(note), "uuid=")};
}

std::optional<HolderNote> AsHolderNote(const Event& note) {
  if (note.type != EventType::kNote || note.op != names::kHolderValue) return std::nullopt;
  if (const HolderNote* h = std::get_if<HolderNote>(&note.detail)) return *h;
  std::string_view rest = FreeText(note);
  if (!Eat(&rest, "value=") || rest.empty()) return std::nullopt;
  return HolderNote{rest};
}

std::optional<RoleNote> AsRoleNote(const Event& note) {
  if (note.type != EventType::kNote || note.op != names::kRole) return std::nullopt;
  if (const RoleNote* r = std::get_if<RoleNote>(&note.detail)) return *r;
  return std::nullopt;
}

}  // namespace lockstep::history
