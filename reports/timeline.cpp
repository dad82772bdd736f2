#include "reports/timeline.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>

namespace lockstep::reports {

namespace {

using Type = Event::Type;

// The text after `key` in a "k=v k2=v2" detail, up to the next space.
std::string_view DetailValue(std::string_view detail, std::string_view key) {
  size_t at = 0;
  while ((at = detail.find(key, at)) != std::string_view::npos) {
    if (at == 0 || detail[at - 1] == ' ') {
      std::string_view rest = detail.substr(at + key.size());
      return rest.substr(0, rest.find(' '));
    }
    at += key.size();
  }
  return {};
}

std::optional<int64_t> ParseInt(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  int64_t v = 0;
  bool negative = false;
  size_t i = 0;
  if (s[0] == '-') {
    negative = true;
    i = 1;
    if (s.size() == 1) return std::nullopt;
  }
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + (s[i] - '0');
  }
  return negative ? -v : v;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

bool IsClientEvent(Type t) {
  return t == Type::kInvoke || t == Type::kOk || t == Type::kFail || t == Type::kInfo ||
         t == Type::kResource;
}

// Names listed in a partition's detail ("c1,c2 | n1" or "c1 -> n1").
std::vector<std::string> NamesIn(std::string_view detail) {
  std::vector<std::string> out;
  std::string current;
  auto flush = [&] {
    if (!current.empty() && current != "->" && current != "|") {
      if (std::find(out.begin(), out.end(), current) == out.end()) out.push_back(current);
    }
    current.clear();
  };
  for (char c : detail) {
    if (c == ' ' || c == ',' || c == '|') {
      flush();
    } else {
      current.push_back(c);
    }
  }
  flush();
  return out;
}

struct HoldState {
  int count = 0;
  int hold = kNone;     // index into lane.holds while believed
  int depth = 0;        // resource nesting
  int section = kNone;  // index into lane.sections while inside
};

class Builder {
 public:
  Builder(const History& history, const TimelineOptions& options)
      : history_(history), options_(options) {}

  Timeline Build() {
    tl_.event_count = history_.size();
    tl_.history_hash = history_.HashHex();
    Register();
    EstimateStart();
    for (const Event& e : history_.events()) Handle(e);
    Finish();
    return std::move(tl_);
  }

 private:
  // --- registration: which processes are clients and nodes, which threads exist ---

  void Register() {
    std::set<std::string, decltype(&NaturalLess)> clients(&NaturalLess), nodes(&NaturalLess);
    std::map<std::string, std::set<int>> threads;
    for (const auto& [name, count] : options_.client_threads) {
      for (int i = 0; i < count; ++i) threads[name].insert(i);
    }
    std::set<std::string> client_set;
    for (const auto& [name, count] : options_.client_threads) client_set.insert(name);
    // Consecutive events mostly come from a handful of processes: skip the set lookups for a
    // (process, thread) pair seen just before.
    const std::string* last_process = nullptr;
    int last_thread = -2;
    for (const Event& e : history_.events()) {
      if ((IsClientEvent(e.type) && e.thread >= 0) || (e.type == Type::kNote && e.op == "client")) {
        if (last_process == nullptr || e.thread != last_thread || *last_process != e.process) {
          client_set.insert(e.process);
          if (e.thread >= 0) threads[e.process].insert(e.thread);
          last_process = &e.process;
          last_thread = e.thread;
        }
      }
      if (e.type == Type::kNote && e.op == "run") {
        if (auto end = ParseInt(DetailValue(e.detail, "end_us="))) run_end_note_us_ = *end;
        if (auto start = ParseInt(DetailValue(e.detail, "start_unix_ms="))) start_note_ms_ = *start;
      }
    }
    std::set<std::string> node_set(options_.node_names.begin(), options_.node_names.end());
    const std::string* last_node = nullptr;
    for (const Event& e : history_.events()) {
      const std::string* node = e.type == Type::kExec || e.type == Type::kLease ? &e.process
                                : e.type == Type::kMessage && !e.peer.empty()   ? &e.peer
                                                                                : nullptr;
      if (node != nullptr && (last_node == nullptr || *last_node != *node)) {
        node_set.insert(*node);
        last_node = node;
      }
      if (e.type == Type::kFault && !e.process.empty() && e.process != "sim" &&
          e.process != "sentinel" && !client_set.count(e.process)) {
        node_set.insert(e.process);
      }
    }
    for (const auto& name : client_set) node_set.erase(name);

    // Clients: the scenario's order first, then the rest in natural order.
    for (const auto& [name, count] : options_.client_threads) tl_.clients.push_back(name);
    for (const auto& name : client_set) clients.insert(name);
    for (const auto& name : clients) {
      if (std::find(tl_.clients.begin(), tl_.clients.end(), name) == tl_.clients.end()) {
        tl_.clients.push_back(name);
      }
    }
    tl_.client_uuids.resize(tl_.clients.size());
    for (size_t c = 0; c < tl_.clients.size(); ++c) {
      for (int t : threads[tl_.clients[c]]) {
        ThreadLane lane;
        lane.process = tl_.clients[c];
        lane.thread = t;
        lane.client = static_cast<int>(c);
        lane.name = lane.process + ".t" + std::to_string(t);
        tl_.threads.push_back(std::move(lane));
      }
    }
    for (size_t i = 0; i < options_.node_names.size(); ++i) {
      NodeLane n;
      n.name = options_.node_names[i];
      if (i < options_.node_roles.size()) n.role = options_.node_roles[i];
      tl_.nodes.push_back(std::move(n));
    }
    for (const auto& name : node_set) nodes.insert(name);
    for (const auto& name : nodes) {
      if (tl_.NodeIndex(name) != kNone) continue;
      NodeLane n;
      n.name = name;
      tl_.nodes.push_back(std::move(n));
    }
    for (size_t c = 0; c < tl_.clients.size(); ++c) client_index_[tl_.clients[c]] = c;
    for (size_t n = 0; n < tl_.nodes.size(); ++n) node_index_[tl_.nodes[n].name] = n;
    client_lanes_.resize(tl_.clients.size());
    for (size_t i = 0; i < tl_.threads.size(); ++i) {
      client_lanes_[tl_.threads[i].client].push_back(static_cast<int>(i));
    }
    states_.resize(tl_.threads.size());
    op_lease_us_.assign(tl_.threads.size(), -1);
    op_in_flight_.assign(tl_.threads.size(), kNone);
    last_exec_by_thread_.assign(tl_.threads.size(), 0);
    open_lease_.assign(tl_.nodes.size(), kNone);
    pending_ttl_.assign(tl_.nodes.size(), {-1, 0});
    last_message_.assign(tl_.clients.size(), 0);
    last_exec_by_client_.assign(tl_.clients.size(), 0);
    tl_.end_us = run_end_note_us_ >= 0 ? run_end_note_us_
                 : history_.size() > 0 ? history_.events().back().t_us
                                       : 0;
    if (history_.size() > 0) tl_.end_us = std::max(tl_.end_us, history_.events().back().t_us);
  }

  // True time 0 as Unix ms: from the scenario, else from the run note, else the clock reading
  // most processes agree on at their first event (most clocks in a scenario are not skewed).
  void EstimateStart() {
    if (options_.start_unix_ms) {
      tl_.start_unix_ms = *options_.start_unix_ms;
      tl_.clock_baseline_note = "offsets from the scenario's start_unix_ms";
      return;
    }
    if (start_note_ms_) {
      tl_.start_unix_ms = *start_note_ms_;
      tl_.clock_baseline_note = "offsets from the run's start_unix_ms";
      return;
    }
    std::map<std::string, int64_t> first;
    for (const Event& e : history_.events()) {
      if (e.local_ms == 0 || e.process.empty() || first.count(e.process)) continue;
      first[e.process] = e.local_ms - FloorDiv(e.t_us, 1000);
    }
    std::map<int64_t, int> votes;
    for (const auto& [process, base] : first) ++votes[base];
    int best = 0;
    for (const auto& [base, n] : votes) {
      if (n > best) {
        best = n;
        tl_.start_unix_ms = base;
      }
    }
    tl_.clock_baseline_note =
        "estimated: the history does not record the run's start, so offsets are relative to "
        "the clock reading most processes agree on";
  }

  // --- the main pass ---

  void Handle(const Event& e) {
    Sample(e);
    switch (e.type) {
      case Type::kNote:
        OnNote(e);
        break;
      case Type::kInvoke:
        OnInvoke(e);
        break;
      case Type::kOk:
      case Type::kFail:
      case Type::kInfo:
        OnCompletion(e);
        break;
      case Type::kResource:
        OnResource(e);
        break;
      case Type::kExec:
        OnExec(e);
        break;
      case Type::kLease:
        OnLease(e);
        break;
      case Type::kFault:
        OnFault(e);
        break;
      case Type::kMessage:
        OnMessage(e);
        break;
    }
  }

  void Sample(const Event& e) {
    if (e.local_ms == 0 || e.process.empty()) return;
    // Histories record local clocks in ms, so the offset is known to the ms: an unskewed clock
    // reads exactly floor((start + t) / 1 ms).
    const int64_t offset_us = (e.local_ms - tl_.start_unix_ms - FloorDiv(e.t_us, 1000)) * 1000;
    auto it = clock_index_.find(e.process);
    if (it == clock_index_.end()) {
      it = clock_index_.emplace(e.process, static_cast<int>(series_.size())).first;
      ClockSeries s;
      s.process = e.process;
      s.min_offset_us = s.max_offset_us = offset_us;
      series_.push_back(std::move(s));
      last_sample_.emplace_back(ClockSample{e.t_us, offset_us});
    }
    ClockSeries& s = series_[it->second];
    ClockSample& last = last_sample_[it->second];
    if (s.samples.empty() || s.samples.back().offset_us != offset_us) {
      if (!s.samples.empty() && last.t_us > s.samples.back().t_us) s.samples.push_back(last);
      s.samples.push_back({e.t_us, offset_us});
    }
    last = {e.t_us, offset_us};
    s.min_offset_us = std::min(s.min_offset_us, offset_us);
    s.max_offset_us = std::max(s.max_offset_us, offset_us);
  }

  void OnNote(const Event& e) {
    if (e.op == "client") {
      const int c = tl_.ClientIndex(e.process);
      const std::string uuid(DetailValue(e.detail, "uuid="));
      if (c != kNone && !uuid.empty()) {
        uuid_client_[uuid] = c;
        if (tl_.client_uuids[c].empty()) tl_.client_uuids[c] = uuid;
      }
    } else if (e.op == "lease_default" && e.has_value) {
      lease_default_us_ = e.value;
    } else if (e.op == "protocol") {
      tl_.protocol_kind = std::string(DetailValue(e.detail, "kind="));
      if (auto permits = ParseInt(DetailValue(e.detail, "permits="))) {
        tl_.permits = static_cast<int>(*permits);
      }
    } else if (e.op == "rediscover") {
      Fault f;
      f.kind = "rediscover";
      f.process = e.process;
      f.label = e.detail.empty() ? "clients rediscover the master" : e.detail;
      f.from_us = f.to_us = e.t_us;
      f.instant = true;
      f.seq = f.end_seq = e.seq;
      f.affects = tl_.clients;
      tl_.faults.push_back(std::move(f));
    }
  }

  int ClientOf(const std::string& process) const {
    auto it = client_index_.find(process);
    return it == client_index_.end() ? kNone : static_cast<int>(it->second);
  }
  int NodeOf(const std::string& process) const {
    auto it = node_index_.find(process);
    return it == node_index_.end() ? kNone : static_cast<int>(it->second);
  }
  int LaneOf(int client, int thread) const {
    if (client == kNone || thread < 0) return kNone;
    for (int lane : client_lanes_[client]) {
      if (tl_.threads[lane].thread == thread) return lane;
    }
    return kNone;
  }

  // Hold counts are kept per lock and side: a read-write lock's read holds ("acquire_read",
  // "release_read") count apart from its write holds, as the checkers count them.
  HoldState& StateOf(int lane, const std::string& lock, bool read = false) {
    return states_[lane][{lock, read}];
  }
  static bool IsAcquire(const std::string& op) { return op == "acquire" || op == "acquire_read"; }
  static bool IsRelease(const std::string& op) { return op == "release" || op == "release_read"; }
  static bool IsReadSide(const std::string& op) {
    return op == "acquire_read" || op == "release_read";
  }

  void OnInvoke(const Event& e) {
    const int lane = CachedLane(e);
    if (lane == kNone) return;
    ThreadLane& l = tl_.threads[lane];
    if (op_in_flight_[lane] != kNone) EndOp(lane, e, Outcome::kInfo, "superseded");
    Op op;
    op.op = e.op;
    op.lock = e.lock;
    op.from_us = op.to_us = e.t_us;
    op.invoke_seq = op.end_seq = e.seq;
    op.detail = e.detail;
    op_in_flight_[lane] = static_cast<int>(l.ops.size());
    op_lease_us_[lane] = IsAcquire(e.op) && e.has_value ? e.value * 1000 : -1;
    l.ops.push_back(std::move(op));
    const bool read = IsReadSide(e.op);
    HoldState& hs = StateOf(lane, e.lock, read);
    if (IsRelease(e.op) && hs.count > 0) {
      if (--hs.count == 0) EndHold(lane, e.lock, read, e, "release");
    } else if (e.op == "force_unlock") {
      for (bool side : {false, true}) {
        HoldState& any = StateOf(lane, e.lock, side);
        if (any.count == 0) continue;
        any.count = 0;
        EndHold(lane, e.lock, side, e, "force_unlock");
      }
    }
  }

  // Event -> lane lookups are frequent; the last few are cached by (process, thread).
  int CachedLane(const Event& e) {
    if (e.thread < 0) return kNone;
    auto key = std::make_pair(e.process, e.thread);
    auto it = lane_cache_.find(key);
    if (it != lane_cache_.end()) return it->second;
    const int lane = LaneOf(ClientOf(e.process), e.thread);
    lane_cache_.emplace(std::move(key), lane);
    return lane;
  }

  void EndOp(int lane, const Event& e, Outcome outcome, std::string_view why) {
    ThreadLane& l = tl_.threads[lane];
    Op& op = l.ops[op_in_flight_[lane]];
    op.to_us = e.t_us;
    op.end_seq = e.seq;
    op.outcome = outcome;
    if (!why.empty()) op.detail += " -> " + std::string(why);
    op_in_flight_[lane] = kNone;
  }

  void OnCompletion(const Event& e) {
    const int lane = CachedLane(e);
    if (lane == kNone || op_in_flight_[lane] == kNone) return;
    const Outcome outcome = e.type == Type::kOk     ? Outcome::kOk
                            : e.type == Type::kFail ? Outcome::kFail
                                                    : Outcome::kInfo;
    const std::string op = tl_.threads[lane].ops[op_in_flight_[lane]].op;
    EndOp(lane, e, outcome, e.detail);
    if (IsAcquire(op) && outcome == Outcome::kOk) {
      const bool read = IsReadSide(op);
      HoldState& hs = StateOf(lane, e.lock, read);
      if (++hs.count == 1) StartHold(lane, e.lock, read, e);
    }
  }

  void StartHold(int lane, const std::string& lock, bool read, const Event& e) {
    HoldState& hs = StateOf(lane, lock, read);
    assert(hs.hold == kNone);
    Span s;
    s.lock = lock;
    s.read = read;
    s.from_us = s.to_us = e.t_us;
    s.from_seq = s.to_seq = e.seq;
    s.open = true;
    hs.hold = static_cast<int>(tl_.threads[lane].holds.size());
    tl_.threads[lane].holds.push_back(std::move(s));
    ChangeHolders(lock, read, e, +1);
  }

  void EndHold(int lane, const std::string& lock, bool read, const Event& e, const char* why) {
    HoldState& hs = StateOf(lane, lock, read);
    if (hs.hold == kNone) return;
    Span& s = tl_.threads[lane].holds[hs.hold];
    s.to_us = e.t_us;
    s.to_seq = e.seq;
    s.open = false;
    s.ended_by = why;
    hs.hold = kNone;
    ChangeHolders(lock, read, e, -1);
  }

  // Whether the believed holders break the lock's promise: more than its permits for a
  // semaphore; a writer with anyone else for a read-write lock (readers may share); otherwise
  // two of anything.
  bool Conflict(int count, int readers) const {
    if (tl_.protocol_kind == "semaphore") return count > tl_.permits;
    const int writers = count - readers;
    return writers >= 2 || (writers >= 1 && readers >= 1);
  }

  void ChangeHolders(const std::string& lock, bool read, const Event& e, int delta) {
    auto& [n, readers] = holders_[lock];
    n += delta;
    if (read) readers += delta;
    assert(n >= 0 && readers >= 0 && readers <= n);
    if (std::find(tl_.locks.begin(), tl_.locks.end(), lock) == tl_.locks.end()) {
      tl_.locks.push_back(lock);
    }
    tl_.holders.push_back({lock, e.t_us, e.seq, n, readers, Conflict(n, readers)});
    tl_.max_holders = std::max(tl_.max_holders, n);
  }

  void OnResource(const Event& e) {
    const int lane = CachedLane(e);
    if (lane == kNone) return;
    HoldState& hs = StateOf(lane, e.lock);
    ThreadLane& l = tl_.threads[lane];
    if (e.op == "enter") {
      if (hs.depth++ > 0) return;
      Span s;
      s.lock = e.lock;
      s.from_us = s.to_us = e.t_us;
      s.from_seq = s.to_seq = e.seq;
      s.open = true;
      hs.section = static_cast<int>(l.sections.size());
      l.sections.push_back(std::move(s));
    } else if (e.op == "exit" && hs.depth > 0) {
      if (--hs.depth > 0) return;
      EndSection(lane, hs, e, "exit");
    }
  }

  void EndSection(int lane, HoldState& hs, const Event& e, const char* why) {
    Span& s = tl_.threads[lane].sections[hs.section];
    s.to_us = e.t_us;
    s.to_seq = e.seq;
    s.open = false;
    s.ended_by = why;
    hs.section = kNone;
    hs.depth = 0;
  }

  // The thread a command belongs to: the event's own thread, else the only thread of that
  // client with an operation on this lock in flight (as the checkers decide it).
  int ExecThread(const Event& e, int client) {
    if (e.thread >= 0) return LaneOf(client, e.thread);
    int found = kNone;
    int candidates = 0;
    for (int i : client_lanes_[client]) {
      const ThreadLane& l = tl_.threads[i];
      if (op_in_flight_[i] == kNone) continue;
      if (l.ops[op_in_flight_[i]].lock != e.lock) continue;
      found = i;
      ++candidates;
    }
    return candidates == 1 ? found : kNone;
  }

  int64_t LeaseOfAcquire(int lane) const {
    if (lane != kNone && op_lease_us_[lane] > 0) return op_lease_us_[lane];
    return lease_default_us_;
  }

  void OnExec(const Event& e) {
    const int node = NodeOf(e.process);
    if (node == kNone) return;
    NodeLane& n = tl_.nodes[node];
    Exec x;
    x.t_us = e.t_us;
    x.seq = e.seq;
    x.op = e.op;
    x.peer = e.peer;
    x.reply = e.detail;
    const int client = ClientOf(e.peer);
    if (client != kNone) {
      x.thread = ExecThread(e, client);
      int64_t cause = std::max<int64_t>(0, last_message_[client]);
      if (x.thread != kNone && op_in_flight_[x.thread] != kNone) {
        x.op_index = op_in_flight_[x.thread];
        Op& op = tl_.threads[x.thread].ops[x.op_index];
        op.node = node;
        cause = std::max({cause, op.from_us, last_exec_by_thread_[x.thread]});
      } else {
        cause = std::max(cause, last_exec_by_client_[client]);
      }
      x.cause_us = std::min(cause, e.t_us);
      if (x.thread != kNone) last_exec_by_thread_[x.thread] = e.t_us;
      last_exec_by_client_[client] = e.t_us;
    } else {
      x.cause_us = e.t_us;
    }

    // The key's TTL: an acquire that returns nil set it (to the lease it asked for), a renew
    // that returns 1 reset it to the watchdog's lease, a refused acquire reports the PTTL.
    const bool nil = e.detail == "(nil)";
    if (e.op == "acquire" && nil) {
      const int64_t ttl = LeaseOfAcquire(x.thread);
      if (open_lease_[node] != kNone) {
        n.leases[open_lease_[node]].ttl.push_back({e.t_us, ttl, true});
      } else {
        pending_ttl_[node] = {e.t_us, ttl};
      }
    } else if (e.op == "renew" && e.detail == "1" && open_lease_[node] != kNone) {
      n.leases[open_lease_[node]].ttl.push_back({e.t_us, lease_default_us_, true});
    } else if (e.op == "acquire") {
      if (auto pttl = ParseInt(e.detail); pttl && *pttl >= 0) {
        n.pttl.push_back({e.t_us, *pttl * 1000, false});
        if (open_lease_[node] != kNone) {
          n.leases[open_lease_[node]].ttl.push_back({e.t_us, *pttl * 1000, false});
        }
      }
    }
    n.execs.push_back(std::move(x));
  }

  // "uuid:2" -> "c1.t1" when the uuid is a known client's; otherwise the field itself.
  std::string OwnerName(std::string_view field, int* lane) const {
    const size_t colon = field.find(':');
    if (colon != std::string_view::npos) {
      auto it = uuid_client_.find(std::string(field.substr(0, colon)));
      std::string_view rest = field.substr(colon + 1);
      const std::string_view suffix = rest.find(':') == std::string_view::npos
                                          ? std::string_view()
                                          : rest.substr(rest.find(':'));
      rest = rest.substr(0, rest.find(':'));
      auto number = ParseInt(rest);
      if (it != uuid_client_.end() && number && *number >= 1) {
        const std::string name = tl_.clients[it->second] + ".t" + std::to_string(*number - 1);
        if (lane && *lane == kNone) *lane = tl_.ThreadIndex(name);
        return name + std::string(suffix);
      }
    }
    return std::string(field);
  }

  void OnLease(const Event& e) {
    const int node = NodeOf(e.process);
    if (node == kNone) return;
    NodeLane& n = tl_.nodes[node];
    if (open_lease_[node] != kNone) CloseLease(node, e, e.op);
    int owner_thread = kNone;
    std::string owners;
    // Owner fields are "<uuid>:<thread+1>[:suffix]"; a lock hash may hold other fields too (a
    // read-write lock's "mode"), which are shown only when nothing looks like an owner.
    const bool any_owner = e.detail.find(':') != std::string::npos;
    std::string_view rest = e.detail;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      const std::string_view field = rest.substr(0, comma);
      if (!any_owner || field.find(':') != std::string_view::npos) {
        if (!owners.empty()) owners += ", ";
        owners += OwnerName(field, &owner_thread);
      }
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    if (e.op == "expired" || e.op == "lost") {
      n.losses.push_back({e.lock, e.op, owners, e.t_us, e.seq});
    }
    if (e.op != "acquired" && e.op != "owners") return;
    Lease l;
    l.lock = e.lock;
    l.from_us = l.to_us = e.t_us;
    l.from_seq = l.to_seq = e.seq;
    l.owners = std::move(owners);
    l.owner_thread = owner_thread;
    if (pending_ttl_[node].first == e.t_us) {
      l.ttl.push_back({e.t_us, pending_ttl_[node].second, true});
    }
    pending_ttl_[node] = {-1, 0};
    open_lease_[node] = static_cast<int>(n.leases.size());
    n.leases.push_back(std::move(l));
  }

  void CloseLease(int node, const Event& e, const std::string& why) {
    Lease& l = tl_.nodes[node].leases[open_lease_[node]];
    l.to_us = e.t_us;
    l.to_seq = e.seq;
    l.ended_by = why;
    open_lease_[node] = kNone;
  }

  Fault* OpenFault(const std::string& kind, const std::string& process, const std::string& key) {
    auto it = open_faults_.find({kind, key.empty() ? process : key});
    if (it == open_faults_.end()) return nullptr;
    Fault* f = &tl_.faults[it->second];
    open_faults_.erase(it);
    return f;
  }

  void OnFault(const Event& e) {
    static const std::map<std::string, std::string> kEnds = {
        {"heal", "partition"},
        {"restart", "crash"},
        {"resume", "pause"},
        {"lose_replies_end", "lose_replies"},
    };
    static const std::set<std::string> kBands = {"partition", "crash", "pause", "lose_replies"};
    if (auto end = kEnds.find(e.op); end != kEnds.end()) {
      const std::string key = end->second == "partition" ? e.detail : e.process;
      Fault* f = OpenFault(end->second, e.process, key);
      if (f == nullptr && end->second == "partition") {
        // A heal that names no open partition ends the oldest one still open.
        for (auto it = open_faults_.begin(); it != open_faults_.end(); ++it) {
          if (it->first.first == "partition") {
            f = &tl_.faults[it->second];
            open_faults_.erase(it);
            break;
          }
        }
      }
      if (f != nullptr) {
        f->to_us = e.t_us;
        f->end_seq = e.seq;
        f->open = false;
      }
      return;
    }
    Fault f;
    f.kind = e.op;
    f.process = e.process;
    f.from_us = f.to_us = e.t_us;
    f.seq = f.end_seq = e.seq;
    f.instant = !kBands.count(e.op);
    f.open = !f.instant;
    if (e.op == "partition") {
      f.label = "partition " + e.detail;
      f.affects = NamesIn(e.detail);
    } else if (e.op == "failover") {
      f.label = "failover (" + e.detail + ")";
      // Every node's role may change: the band covers the node lanes (affects empty).
    } else {
      f.label = e.op + " " + e.process;
      if (!e.detail.empty()) f.label += " (" + e.detail + ")";
      f.affects = {e.process};
    }
    if (!f.instant) {
      const std::string key = e.op == "partition" ? e.detail : e.process;
      open_faults_[{e.op, key}] = tl_.faults.size();
    }
    tl_.faults.push_back(std::move(f));

    if (e.op == "crash") {
      if (const int c = tl_.ClientIndex(e.process); c != kNone) CrashClient(c, e);
      if (const int node = NodeOf(e.process); node != kNone && open_lease_[node] != kNone) {
        CloseLease(node, e, "crash");
      }
    }
  }

  void CrashClient(int client, const Event& e) {
    for (size_t i = 0; i < tl_.threads.size(); ++i) {
      if (tl_.threads[i].client != client) continue;
      const int lane = static_cast<int>(i);
      if (op_in_flight_[lane] != kNone) EndOp(lane, e, Outcome::kCrashed, "client crashed");
      for (auto& [key, hs] : states_[lane]) {
        if (hs.section != kNone) EndSection(lane, hs, e, "crash");
        if (hs.hold != kNone) EndHold(lane, key.first, key.second, e, "crash");
        hs.count = 0;
      }
    }
  }

  void OnMessage(const Event& e) {
    const int c = ClientOf(e.process);
    if (c != kNone) last_message_[c] = e.t_us;
    if (c == kNone) return;
    auto channel = channel_index_.find(e.op);
    if (channel == channel_index_.end()) {
      channel = channel_index_.emplace(e.op, static_cast<int>(tl_.channels.size())).first;
      tl_.channels.push_back(e.op);
    }
    tl_.messages.push_back({e.t_us, e.seq, c, channel->second, NodeOf(e.peer)});
  }

  // --- the end of the run closes whatever is still open ---

  void Finish() {
    Event end;
    end.t_us = tl_.end_us;
    end.seq = history_.size() > 0 ? history_.events().back().seq : 0;
    for (size_t lane = 0; lane < tl_.threads.size(); ++lane) {
      const int l = static_cast<int>(lane);
      if (op_in_flight_[l] != kNone) EndOp(l, end, Outcome::kPending, "");
      for (auto& [key, hs] : states_[l]) {
        if (hs.section != kNone) {
          EndSection(l, hs, end, "run end");
        }
        if (hs.hold != kNone) {
          Span& s = tl_.threads[l].holds[hs.hold];
          s.to_us = tl_.end_us;
          s.to_seq = end.seq;
          s.ended_by = "run end";
          hs.hold = kNone;
        }
      }
    }
    for (size_t node = 0; node < tl_.nodes.size(); ++node) {
      if (open_lease_[node] != kNone) CloseLease(static_cast<int>(node), end, "run end");
    }
    for (const auto& [key, index] : open_faults_) {
      tl_.faults[index].to_us = tl_.end_us;
      tl_.faults[index].end_seq = end.seq;
    }
    // Sections that ended at a crash keep their crash; ones open at the end stay marked open.
    for (ThreadLane& l : tl_.threads) {
      for (Span& s : l.sections) {
        if (s.ended_by == "run end") s.open = true;
      }
    }
    // Clocks: clients first, then nodes, then anything else, each in natural order.
    std::vector<size_t> order(series_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto rank = [&](const std::string& p) {
      if (const int c = tl_.ClientIndex(p); c != kNone) return c;
      if (const int n = tl_.NodeIndex(p); n != kNone) return 100000 + n;
      return 200000;
    };
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      const int ra = rank(series_[a].process), rb = rank(series_[b].process);
      if (ra != rb) return ra < rb;
      return NaturalLess(series_[a].process, series_[b].process);
    });
    for (size_t i : order) {
      ClockSeries s = std::move(series_[i]);
      if (last_sample_[i].t_us > s.samples.back().t_us) s.samples.push_back(last_sample_[i]);
      tl_.clocks.push_back(std::move(s));
    }
  }

  const History& history_;
  const TimelineOptions& options_;
  Timeline tl_;
  int64_t run_end_note_us_ = -1;
  std::optional<int64_t> start_note_ms_;
  int64_t lease_default_us_ = 30'000'000;

  std::vector<std::map<std::pair<std::string, bool>, HoldState>> states_;  // (lock, read side)
  std::vector<int> op_in_flight_;
  std::vector<int64_t> op_lease_us_;
  std::map<std::string, size_t> client_index_;
  std::map<std::string, size_t> node_index_;
  std::vector<std::vector<int>> client_lanes_;
  std::vector<int64_t> last_exec_by_thread_;
  std::vector<int64_t> last_exec_by_client_;
  std::vector<int64_t> last_message_;
  std::map<std::pair<std::string, int>, int> lane_cache_;
  std::vector<int> open_lease_;
  std::vector<std::pair<int64_t, int64_t>> pending_ttl_;
  std::map<std::string, int> uuid_client_;
  std::map<std::string, std::pair<int, int>> holders_;  // lock -> (holders, readers)
  std::map<std::pair<std::string, std::string>, size_t> open_faults_;
  std::map<std::string, int> clock_index_;
  std::map<std::string, int> channel_index_;
  std::vector<ClockSeries> series_;
  std::vector<ClockSample> last_sample_;
};

}  // namespace

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kOk:
      return "ok";
    case Outcome::kFail:
      return "fail";
    case Outcome::kInfo:
      return "info";
    case Outcome::kCrashed:
      return "crashed";
    case Outcome::kPending:
      return "pending";
  }
  return "?";
}

bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ei = i, ej = j;
      while (ei < a.size() && digit(a[ei])) ++ei;
      while (ej < b.size() && digit(b[ej])) ++ej;
      std::string_view na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      while (na.size() > 1 && na[0] == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb[0] == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if ((a.size() - i) != (b.size() - j)) return (a.size() - i) < (b.size() - j);
  return a < b;  // Equal as numbers ("c01" vs "c1"): fall back to bytes for a total order.
}

int Timeline::ThreadIndex(std::string_view name) const {
  for (size_t i = 0; i < threads.size(); ++i) {
    if (threads[i].name == name) return static_cast<int>(i);
  }
  return kNone;
}

int Timeline::NodeIndex(std::string_view name) const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].name == name) return static_cast<int>(i);
  }
  return kNone;
}

int Timeline::ClientIndex(std::string_view name) const {
  for (size_t i = 0; i < clients.size(); ++i) {
    if (clients[i] == name) return static_cast<int>(i);
  }
  return kNone;
}

std::vector<int> Timeline::ThreadsOf(std::string_view process) const {
  std::vector<int> out;
  for (size_t i = 0; i < threads.size(); ++i) {
    if (threads[i].process == process) out.push_back(static_cast<int>(i));
  }
  return out;
}

Timeline BuildTimeline(const History& history, const TimelineOptions& options) {
  return Builder(history, options).Build();
}

}  // namespace lockstep::reports
