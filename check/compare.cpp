#include "check/compare.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <tuple>
#include <limits>

#include "history/notes.h"

namespace lockstep::check {

namespace {

using history::EventType;

const char* OutcomeName(EventType t) {
  switch (t) {
    case EventType::kOk: return "ok";
    case EventType::kFail: return "fail";
    case EventType::kInfo: return "info (unknown outcome)";
    default: return "unfinished";
  }
}

std::string Seconds(int64_t us) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f s", static_cast<double>(us) / 1e6);
  return buf;
}

// "ok (acquired) at 1.203 s, last reply from n1: 1" for one run's side of a divergence.
std::string Side(const OperationLog::Operation& op) {
  std::string out = OutcomeName(op.outcome);
  if (!op.detail.empty()) out += " (" + op.detail + ")";
  if (op.end_us >= 0) out += " at " + Seconds(op.end_us);
  if (!op.last_reply_node.empty()) {
    out += ", last reply from " + op.last_reply_node + ": " + op.last_reply;
  } else {
    out += ", no reply to any of its commands";
  }
  return out;
}

}  // namespace

const RunLabels& ReplayLabels() {
  static const RunLabels labels = [] {
    RunLabels l;
    l.first = {.name = "live",
               .where = "live",
               .run = "live run",
               .tag = "live",
               .op_where = "live",
               .row = "live",
               .time = "real time",
               .title = "LIVE: real redis-server processes, real time"};
    l.second = {.name = "simulated",
                .where = "simulated",
                .run = "simulated run",
                .tag = "sim",
                .op_where = "in the simulator",
                .row = "simulator",
                .time = "simulated time",
                .title = "SIMULATED: the same scenario and seed in the simulator"};
    l.second_dir = "sim";
    l.page = "report.html";
    l.tool = "lockstep replay";
    l.pair = "live replay and its simulation";
    l.agree = "The verdicts agree. Times and operation counts differ by real-time jitter, which "
              "is expected.";
    l.differ = "The verdicts differ: that is a finding (the emulator, the simulated faults or the "
               "live harness behave unlike the other side), not timing jitter.";
    l.sentinel_timing = true;
    return l;
  }();
  return labels;
}

void OperationLog::OnEvent(const history::Event& e) {
  switch (e.type) {
    case EventType::kInvoke: {
      Operation op;
      op.op = std::string(names_->Str(e.op));
      op.invoke_us = e.t_us;
      threads_[std::string(names_->Str(e.process)) + ".t" + std::to_string(e.thread)].push_back(
          std::move(op));
      ++count_;
      return;
    }
    case EventType::kOk:
    case EventType::kFail:
    case EventType::kInfo: {
      auto it = threads_.find(std::string(names_->Str(e.process)) + ".t" + std::to_string(e.thread));
      if (it == threads_.end() || it->second.empty()) return;
      Operation& op = it->second.back();
      if (op.end_us >= 0) return;  // A completion without its invoke: the checkers warn.
      op.end_us = e.t_us;
      op.outcome = e.type;
      op.detail = history::DetailText(e);
      return;
    }
    case EventType::kExec: {
      if (e.thread < 0) return;  // The process's own commands (SUBSCRIBE ...).
      auto it = threads_.find(std::string(names_->Str(e.peer)) + ".t" + std::to_string(e.thread));
      if (it == threads_.end() || it->second.empty() || it->second.back().end_us >= 0) return;
      std::string scratch;
      it->second.back().last_reply = std::string(history::ReplyText(e, &scratch));
      it->second.back().last_reply_node = std::string(names_->Str(e.process));
      return;
    }
    case EventType::kFault:
      if (e.op == history::names::kPromote) {
        promotions_.emplace_back(std::string(names_->Str(e.process)), e.t_us);
      }
      return;
    default: return;
  }
}

RunComparison CompareRuns(const Verdict& sim, const OperationLog& sim_ops, const Verdict& live,
                          const OperationLog& live_ops, const RunLabels& labels) {
  RunComparison c;
  c.labels = labels;
  const RunLabel& first = labels.first;
  const RunLabel& second = labels.second;
  // The first divergence's lines: each run's name, then its side, aligned.
  const size_t row_width = std::max(first.row.size(), second.row.size()) + 1;
  auto row = [&](const RunLabel& run) {
    return "\n    " + run.row + ":" + std::string(row_width - run.row.size(), ' ');
  };
  for (const PropertyResult& s : sim.results) {
    PropertyComparison p;
    p.property = s.property;
    p.sim_violated = s.violated;
    const PropertyResult* l = live.Find(s.property);
    p.applicable = s.applicable && l != nullptr && l->applicable;
    p.live_violated = l != nullptr && l->violated;
    if (p.differs()) c.verdicts_differ = true;
    c.properties.push_back(p);
  }

  int64_t first_at = std::numeric_limits<int64_t>::max();
  for (const auto& [thread, sim_list] : sim_ops.threads()) {
    auto it = live_ops.threads().find(thread);
    const size_t live_size = it == live_ops.threads().end() ? 0 : it->second.size();
    const size_t both = std::min(sim_list.size(), live_size);
    ThreadComparison t;
    t.thread = thread;
    t.compared = both;
    t.sim_only = sim_list.size() - both;
    t.live_only = live_size - both;
    for (size_t i = 0; i < both; ++i) {
      const OperationLog::Operation& s = sim_list[i];
      const OperationLog::Operation& l = it->second[i];
      if (s.op == l.op && s.outcome == l.outcome) {
        ++t.agree;
        continue;
      }
      const int64_t at = std::min(s.invoke_us, l.invoke_us);
      if (at >= first_at) continue;
      first_at = at;
      Divergence d;
      d.thread = thread;
      d.position = i + 1;
      d.sim_op = s.op;
      d.live_op = l.op;
      d.sim_invoke_us = s.invoke_us;
      d.sim_end_us = s.end_us;
      d.live_invoke_us = l.invoke_us;
      d.live_end_us = l.end_us;
      d.sim_side = Side(s);
      d.live_side = Side(l);
      c.first_divergence =
          thread + "'s operation #" + std::to_string(i + 1) + " (" + s.op +
          (s.op == l.op ? "" : " " + second.op_where + ", " + l.op + " " + first.op_where) +
          "), invoked at " + Seconds(s.invoke_us) + " " + second.where + " and " +
          Seconds(l.invoke_us) + " " + first.where + ":" + row(second) + d.sim_side + row(first) +
          d.live_side;
      c.divergence = std::move(d);
    }
    c.threads.push_back(t);
  }
  for (const auto& [thread, live_list] : live_ops.threads()) {
    if (sim_ops.threads().count(thread) == 0) {
      ThreadComparison t;
      t.thread = thread;
      t.live_only = live_list.size();
      c.threads.push_back(t);
    }
  }
  std::sort(c.threads.begin(), c.threads.end(),
            [](const ThreadComparison& a, const ThreadComparison& b) { return a.thread < b.thread; });
  for (const ThreadComparison& t : c.threads) {
    c.operations_compared += t.compared;
    c.operations_agree += t.agree;
    c.sim_only += t.sim_only;
    c.live_only += t.live_only;
  }
  const auto& sp = sim_ops.promotions();
  const auto& lp = live_ops.promotions();
  for (size_t i = 0; i < std::max(sp.size(), lp.size()); ++i) {
    PromotionTiming t;
    if (i < sp.size()) std::tie(t.sim_node, t.sim_us) = sp[i];
    if (i < lp.size()) std::tie(t.live_node, t.live_us) = lp[i];
    c.promotions.push_back(t);
  }
  if (c.verdicts_differ && labels.sentinel_timing) {
    for (const PromotionTiming& t : c.promotions) {
      std::string what;
      if (t.live_us < 0) {
        what = "the simulated run promoted " + t.sim_node + " at " + Seconds(t.sim_us) +
               "; the live run promoted no replica by its end";
      } else if (t.sim_us < 0) {
        what = "the live run promoted " + t.live_node + " at " + Seconds(t.live_us) +
               "; the simulated run did not";
      } else if (t.sim_node != t.live_node) {
        what = "the simulated run promoted " + t.sim_node + " at " + Seconds(t.sim_us) +
               ", the live run " + t.live_node + " at " + Seconds(t.live_us);
      } else if (std::llabs(t.live_us - t.sim_us) > kPromotionSlackUs) {
        what = t.sim_node + " was promoted at " + Seconds(t.sim_us) + " simulated and at " +
               Seconds(t.live_us) + " live (" +
               std::to_string((t.live_us - t.sim_us) / 1000) + " ms apart)";
      }
      if (!what.empty()) {
        c.harness_timing = what;
        break;
      }
    }
  }
  return c;
}

std::string FormatComparison(const RunComparison& c) {
  const RunLabel& first = c.labels.first;
  const RunLabel& second = c.labels.second;
  std::string out = second.name + " vs " + first.name + ":\n";
  char line[256];
  for (const PropertyComparison& p : c.properties) {
    const char* sim = !p.applicable ? "-" : p.sim_violated ? "VIOLATED" : "holds";
    const char* live = !p.applicable ? "-" : p.live_violated ? "VIOLATED" : "holds";
    std::snprintf(line, sizeof(line), "  %-19s %s %-9s %s %-9s%s", p.property.c_str(),
                  second.tag.c_str(), sim, first.tag.c_str(), live,
                  p.differs() ? "  <-- DIFFERENT" : "");
    std::string text = line;
    text.erase(text.find_last_not_of(' ') + 1);
    out += text + "\n";
  }
  std::snprintf(line, sizeof(line),
                "  operations: %zu compared position by position, %zu with the same outcome; "
                "%zu only %s, %zu only %s\n",
                c.operations_compared, c.operations_agree, c.sim_only, second.where.c_str(),
                c.live_only, first.where.c_str());
  out += line;
  if (c.first_divergence) {
    out += "  first divergence: " + *c.first_divergence + "\n";
  } else if (c.operations_compared > 0) {
    out += "  no divergence: every operation both runs made ended the same way\n";
  }
  out += "  " + VerdictAgreement(c) + "\n";
  return out;
}

std::string VerdictAgreement(const RunComparison& c) {
  if (!c.verdicts_differ) return c.labels.agree;
  if (c.harness_timing) {
    return "The verdicts differ, but so do the failovers: " + *c.harness_timing +
           ". Sentinel's own timing decides when a live failover lands (a second or so after the "
           "simulator's, whatever the --time-scale: docs/live.md), so this difference is the live "
           "harness's, not a finding about the emulator.";
  }
  return c.labels.differ;
}

}  // namespace lockstep::check
