#include "drive/faults.h"

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "history/fault_kinds.h"
#include "history/names.h"

namespace lockstep::drive {

namespace names = history::names;
using history::Name;

namespace {

std::string Join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

// A detail's text is a view (history/event.h): the sides' names are kept here, in the
// closure of the fault's end, for both of its events.
void Partition(const FaultSpec& f, FaultTarget& t) {
  std::string side_a = Join(f.targets), side_b = Join(f.peers);
  const bool one_way = f.one_way;
  RecordFault(t, names::kSim, names::kPartition, history::PartitionFault{side_a, side_b, one_way},
              f.duration_us / 1000);
  const uint64_t handle = t.OpenPartition(f);
  t.After(f.duration_us, [&t, handle, side_a = std::move(side_a), side_b = std::move(side_b),
                          one_way] {
    t.ClosePartition(handle);
    RecordFault(t, names::kSim, names::kHeal, history::PartitionFault{side_a, side_b, one_way});
  });
}

// A latency, loss or duplicate window on the targets' links.
void NetworkWindow(const FaultSpec& f, FaultTarget& t) {
  using K = FaultSpec::Kind;
  assert(f.kind == K::kLatency || f.kind == K::kLoss || f.kind == K::kDuplicate);
  assert(!f.targets.empty() && f.duration_us > 0);
  const bool latency = f.kind == K::kLatency;
  const int64_t extra_us = latency ? f.extra_us : 0;
  const double rate = latency ? 0 : f.rate;
  std::string targets = Join(f.targets), peers = Join(f.peers);
  const history::FaultKindInfo& kind = history::InfoOf(f.kind);
  RecordFault(t, names::kSim, kind.start_op,
              history::NetworkFault{extra_us, rate, targets, peers}, f.duration_us / 1000);
  const uint64_t handle = t.OpenNetworkWindow(f);
  t.After(f.duration_us, [&t, handle, end = kind.end_op, extra_us, rate,
                          targets = std::move(targets), peers = std::move(peers)] {
    t.CloseNetworkWindow(handle);
    RecordFault(t, names::kSim, end, history::NetworkFault{extra_us, rate, targets, peers});
  });
}

void Crash(const FaultSpec& f, FaultTarget& t) {
  for (const std::string& name : f.targets) {
    // A process that is down cannot crash again, and a second restart would start a process
    // that is already running: a crash of a crashed process changes nothing.
    if (t.Down(name)) continue;
    RecordFault(t, t.Intern(name), names::kCrash, history::StockText{});
    t.Crash(name);
    t.pauses.current.erase(name);  // Its pause, if any, ended with it.
    if (f.duration_us > 0) {
      t.After(f.duration_us, [&t, name] {
        RecordFault(t, t.Intern(name), names::kRestart, history::StockText{});
        t.Restart(name);
      });
    }
  }
}

// A switched kind: a state of each target the kind may name, from its start to its end.
// lose_replies names the node in its events' detail (history/event.h); the others have none.
void Switched(const FaultSpec& f, FaultTarget& t) {
  const history::FaultKindInfo& kind = history::InfoOf(f.kind);
  assert(kind.switched && kind.end_op != names::kNone && f.duration_us > 0);
  assert(kind.targets == history::FaultTargets::kProcesses ||
         kind.targets == history::FaultTargets::kNodes);
  const auto detail = [&kind](const std::string& name) -> history::Detail {
    if (kind.kind == history::FaultKind::kLoseReplies) return history::LoseRepliesFault{name};
    return history::NoDetail{};
  };
  for (const std::string& name : f.targets) {
    if (kind.targets == history::FaultTargets::kNodes && !t.IsNode(name)) continue;
    RecordFault(t, t.Intern(name), kind.start_op, detail(name), f.duration_us / 1000);
    t.Switch(f.kind, name, true);
    t.After(f.duration_us, [&t, &kind, detail, name] {
      t.Switch(kind.kind, name, false);
      RecordFault(t, t.Intern(name), kind.end_op, detail(name));
    });
  }
}

}  // namespace

void RecordFault(FaultTarget& t, Name process, Name op, const history::Detail& detail,
                 std::optional<int64_t> value_ms) {
  history::Event e;
  e.type = history::EventType::kFault;
  e.process = process;
  e.op = op;
  e.detail = detail;
  e.has_value = value_ms.has_value();
  e.value = value_ms.value_or(0);
  t.Record(e);
}

void PauseFor(FaultTarget& t, const std::string& name, int64_t duration_us, bool gc) {
  if (!t.Pause(name)) return;
  const uint64_t pause = ++t.pauses.last;
  t.pauses.current[name] = pause;
  const Name id = t.Intern(name);
  RecordFault(t, id, names::kPause, history::PauseFault{gc, duration_us}, duration_us / 1000);
  t.After(duration_us, [&t, name, id, pause] {
    // A crash during the pause ended it: the process that is there now was never paused, or
    // is in a pause of its own.
    auto it = t.pauses.current.find(name);
    if (it == t.pauses.current.end() || it->second != pause) return;
    t.pauses.current.erase(it);
    RecordFault(t, id, names::kResume, history::StockText{});
    t.Resume(name);
  });
}

void ApplyFault(const FaultSpec& f, FaultTarget& t) {
  using K = FaultSpec::Kind;
  if (history::InfoOf(f.kind).switched) {
    Switched(f, t);  // A state of its targets: the schedule is the kinds' table.
    return;
  }
  switch (f.kind) {
    case K::kPartition: Partition(f, t); break;
    case K::kCrash: Crash(f, t); break;
    case K::kPause:
      for (const std::string& name : f.targets) PauseFor(t, name, f.duration_us, /*gc=*/false);
      break;
    case K::kClockJump:
      // The jump itself is part of the clock, fixed before the run; this records it.
      for (const std::string& name : f.targets) {
        RecordFault(t, t.Intern(name), names::kClockJump, history::ClockJumpFault{f.by_us},
                    f.by_us / 1000);
      }
      break;
    case K::kFailover:
      for (const std::string& name : f.targets) {
        if (!t.IsNode(name)) continue;
        RecordFault(t, t.Intern(name), names::kFailover, history::FailoverFault{name, -1});
        t.Failover(name);
      }
      break;
    case K::kLatency:
    case K::kLoss:
    case K::kDuplicate: NetworkWindow(f, t); break;
    default: assert(false && "a kind that is not switched has its case above");
  }
}

}  // namespace lockstep::drive
