// summary.md: what a pull request needs from a run, in about a screenful: the verdicts, the
// lead violation in one paragraph, the figures that identify the run, and a Mermaid sequence
// diagram (GitHub renders it) of the events the checker named as the violation's cause.
#include <algorithm>
#include <map>
#include <set>

#include "reports/report.h"
#include "reports/text.h"

namespace lockstep::reports {

namespace {

constexpr size_t kMaxDiagramSteps = 14;

// Mermaid treats ';' as a statement end and '#' as an entity start.
std::string MermaidText(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == ';') {
      out.push_back(',');
    } else if (c == '#' || c == '\n') {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string MermaidId(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out.push_back(word ? c : '_');
  }
  return out;
}

std::string ExpectationText(const ReportMeta& meta, const std::string& property) {
  if (!meta.expect) return "-";
  const Expectation want = ExpectationOf(*meta.expect, property);
  if (want == Expectation::kAny) return "not judged";
  return want == Expectation::kHold ? "holds" : "violated";
}

bool Matches(const ReportMeta& meta, const check::PropertyResult& r) {
  if (!meta.expect) return true;
  const Expectation want = ExpectationOf(*meta.expect, r.property);
  if (want == Expectation::kAny) return true;
  return (want == Expectation::kViolated) == r.violated;
}

// One step of the diagram: a line of Mermaid, at a time, from an event the violation names.
struct Step {
  uint64_t seq = 0;
  std::string line;
};

class Diagram {
 public:
  Diagram(const Timeline& tl, const check::Violation& v) : tl_(tl), v_(v) {}

  std::string Render() {
    for (const std::string& t : v_.threads) Participant(t);
    const std::set<uint64_t> wanted(v_.events.begin(), v_.events.end());
    std::vector<Step> steps;
    for (const ThreadLane& l : tl_.threads) {
      for (const Op& op : l.ops) {
        const std::string node = op.node == kNone ? "" : tl_.nodes[op.node].name;
        if (wanted.count(op.invoke_seq)) {
          steps.push_back({op.invoke_seq, Arrow(l.name, node, op.op + " invoked", op.from_us)});
        }
        if (op.end_seq != op.invoke_seq && wanted.count(op.end_seq)) {
          steps.push_back(
              {op.end_seq, Arrow(node, l.name, op.op + " " + OutcomeName(op.outcome), op.to_us)});
        }
      }
      for (const Span& s : l.sections) {
        if (wanted.count(s.from_seq)) {
          steps.push_back(
              {s.from_seq, NoteOver({l.name}, "enters the critical section", s.from_us)});
        }
        if (!s.open && wanted.count(s.to_seq)) {
          steps.push_back({s.to_seq, NoteOver({l.name}, "leaves the critical section", s.to_us)});
        }
      }
    }
    for (const NodeLane& n : tl_.nodes) {
      for (const Lease& l : n.leases) {
        if (wanted.count(l.from_seq)) {
          steps.push_back({l.from_seq, NoteOver({n.name}, "key owned by " + l.owners, l.from_us)});
        }
        if (wanted.count(l.to_seq) && l.ended_by != "run end") {
          steps.push_back(
              {l.to_seq, NoteOver({n.name}, "key of " + l.owners + " " + l.ended_by, l.to_us)});
        }
      }
    }
    for (const Fault& f : tl_.faults) {
      if (wanted.count(f.seq)) steps.push_back({f.seq, FaultNote(f, f.from_us, f.label)});
      if (!f.instant && !f.open && wanted.count(f.end_seq)) {
        steps.push_back({f.end_seq, FaultNote(f, f.to_us, "end of " + f.kind + " " + f.process)});
      }
    }
    std::stable_sort(steps.begin(), steps.end(),
                     [](const Step& a, const Step& b) { return a.seq < b.seq; });
    if (steps.size() > kMaxDiagramSteps) {
      steps.erase(steps.begin() + kMaxDiagramSteps / 2,
                  steps.end() - static_cast<std::ptrdiff_t>(kMaxDiagramSteps / 2));
    }
    std::string out = "```mermaid\nsequenceDiagram\n";
    for (const std::string& p : participants_) {
      out += "  participant " + MermaidId(p) + " as " + MermaidText(p) + "\n";
    }
    for (const Step& s : steps) out += "  " + s.line + "\n";
    std::vector<std::string> over;
    for (const std::string& t : v_.threads) over.push_back(t);
    if (over.empty()) over.push_back(participants_.front());
    const std::string what =
        v_.kind == "overlap" ? "both act as holders" : v_.property + " violated";
    out += "  " +
           NoteOver(over, what + ", " + Seconds(v_.from_us) + " - " + Seconds(v_.to_us), -1) + "\n";
    out += "```\n";
    return out;
  }

 private:
  void Participant(const std::string& name) {
    if (std::find(participants_.begin(), participants_.end(), name) == participants_.end()) {
      participants_.push_back(name);
    }
  }

  std::string Arrow(const std::string& from, const std::string& to, const std::string& what,
                    int64_t t_us) {
    if (from.empty() || to.empty()) {
      return NoteOver({from.empty() ? to : from}, what, t_us);
    }
    Participant(from);
    Participant(to);
    const bool reply = tl_.NodeIndex(from) != kNone;
    return MermaidId(from) + (reply ? "-->>" : "->>") + MermaidId(to) + ": " +
           MermaidText(what + " (" + Seconds(t_us) + ")");
  }

  std::string NoteOver(std::vector<std::string> who, const std::string& what, int64_t t_us) {
    for (const std::string& p : who) Participant(p);
    if (who.size() > 2) who.erase(who.begin() + 1, who.end() - 1);
    std::string ids;
    for (const std::string& p : who) ids += (ids.empty() ? "" : ",") + MermaidId(p);
    std::string text = what;
    if (t_us >= 0) text += " (" + Seconds(t_us) + ")";
    return "Note over " + ids + ": " + MermaidText(text);
  }

  // A fault on a client process is drawn over its threads in the diagram, if any are there.
  std::string FaultNote(const Fault& f, int64_t t_us, const std::string& what) {
    std::vector<std::string> who;
    for (const std::string& p : participants_) {
      const int lane = tl_.ThreadIndex(p);
      if ((lane != kNone && tl_.threads[lane].process == f.process) || p == f.process) {
        who.push_back(p);
      }
    }
    if (who.empty()) who.push_back(f.process.empty() ? "sim" : f.process);
    return NoteOver(who, what, t_us);
  }

  const Timeline& tl_;
  const check::Violation& v_;
  std::vector<std::string> participants_;
};

}  // namespace

std::string RenderSummary(const Timeline& tl, const check::Verdict& verdict,
                          const ReportMeta& meta) {
  std::string out = "## lockstep: " + meta.scenario_name;
  if (meta.seed) out += Format(" (seed %llu)", static_cast<unsigned long long>(*meta.seed));
  out += "\n\n";
  if (!meta.description.empty()) out += meta.description + "\n\n";

  size_t violated = 0;
  bool all_match = true;
  for (const check::PropertyResult& r : verdict.results) {
    violated += r.violated ? 1 : 0;
    all_match = all_match && Matches(meta, r);
  }
  out += Format("**%zu of %zu properties violated**", violated, verdict.results.size());
  if (meta.expect) {
    out += all_match ? ", as the scenario expects." : ": **not what the scenario expects.**";
  }
  out += "\n\n| property | verdict | expected | violations |\n|---|---|---|---:|\n";
  for (const check::PropertyResult& r : verdict.results) {
    out += "| " + r.property + " | " + (r.violated ? "**violated**" : "holds") + " | " +
           ExpectationText(meta, r.property) + (Matches(meta, r) ? "" : " (mismatch)") +
           Format(" | %zu |\n", r.violation_count);
  }

  if (const check::Violation* v = LeadViolation(verdict)) {
    std::string threads;
    for (size_t i = 0; i < v->threads.size(); ++i) {
      threads += (i == 0 ? "" : i + 1 == v->threads.size() ? " and " : ", ") + v->threads[i];
    }
    out += "\n### The violation\n\n**" + v->property + " (" + v->kind + ")**";
    if (!threads.empty()) out += ", " + threads;
    out += ", " + Seconds(v->from_us) + " to " + Seconds(v->to_us) + " (" +
           Duration(v->to_us - v->from_us) + "): " + v->explanation + "\n";
  }

  out += "\n### Key figures\n\n| | |\n|---|---|\n";
  out += Format("| history events | %zu |\n", tl.event_count);
  out += "| simulated time | " + Seconds(tl.end_us) + " |\n";
  out += "| history hash | `" + tl.history_hash + "` |\n";
  out += Format("| clients, threads, nodes | %zu, %zu, %zu |\n", tl.clients.size(),
                tl.threads.size(), tl.nodes.size());
  // Fault events that start a fault (a failover and its promotion are two; a heal, a resume or a
  // restart ends one): not the scenario's [[faults]] entries.
  out += Format("| fault events (starts) | %zu |\n", tl.fault_count);
  out += Format("| most believed holders at once | %d |\n", tl.max_holders);
  if (!meta.version.empty()) out += "| lockstep | " + meta.version + " |\n";
  if (!meta.reproduce.empty()) out += "| reproduce | `" + meta.reproduce + "` |\n";
  if (verdict.warning_count > 0) {
    out += Format("| checker warnings | %zu |\n", verdict.warning_count);
  }

  if (const check::Violation* v = LeadViolation(verdict)) {
    out += "\n### Key events\n\n" + Diagram(tl, *v).Render();
  }
  out +=
      "\nThe timeline is in `report.html` (open it from disk); `trace.json` loads in "
      "ui.perfetto.dev.\n";
  return out;
}

std::string RenderComparisonSummary(const ComparedRun& live, const ComparedRun& sim,
                                    const check::RunComparison& c) {
  const check::RunLabel& first = c.labels.first;
  const check::RunLabel& second = c.labels.second;
  std::string out = RenderSummary(*live.timeline, *live.verdict, *live.meta);
  out += "\n### " + Capitalised(second.name) + " vs " + first.name +
         "\n\nThe summary above is the " + first.run + "'s; the " + second.run + "'s is in `" +
         c.labels.second_dir + "/summary.md`. `" + c.labels.page +
         "` shows both runs' timelines.\n\n";
  out += "| property | " + second.name + " | " + first.name + " | |\n|---|---|---|---|\n";
  auto verdict = [](const check::Verdict& v, const check::PropertyComparison& p) -> std::string {
    const check::PropertyResult* r = v.Find(p.property);
    if (r == nullptr || !p.applicable) return "-";
    return r->violated ? Format("**violated** (%zu)", r->violation_count) : "holds";
  };
  for (const check::PropertyComparison& p : c.properties) {
    out += "| " + p.property + " | " + verdict(*sim.verdict, p) + " | " +
           verdict(*live.verdict, p) + " | " + (p.differs() ? "**different**" : "") + " |\n";
  }
  out += "\n" + check::VerdictAgreement(c) + "\n";
  out += Format("\nOperations, each thread's taken in order: %zu compared position by position, "
                "%zu with the same outcome; %zu only %s, %zu only %s.\n",
                c.operations_compared, c.operations_agree, c.sim_only, second.where.c_str(),
                c.live_only, first.where.c_str());
  std::vector<const check::ThreadComparison*> threads;
  for (const check::ThreadComparison& t : c.threads) threads.push_back(&t);
  std::stable_sort(threads.begin(), threads.end(), [](const auto* a, const auto* b) {
    return NaturalLess(a->thread, b->thread);
  });
  if (!threads.empty()) {
    out += "\n| thread | compared | same outcome | only " + second.where + " | only " +
           first.where + " |\n|---|---:|---:|---:|---:|\n";
    for (const check::ThreadComparison* t : threads) {
      out += "| " + t->thread + Format(" | %zu | %zu | %zu | %zu |\n", t->compared, t->agree,
                                      t->sim_only, t->live_only);
    }
  }
  if (const auto& d = c.divergence) {
    out += "\n**First divergence:** " + d->thread + "'s operation #" +
           std::to_string(d->position) + " (" +
           (d->sim_op == d->live_op
                ? d->sim_op
                : d->sim_op + " " + second.where + ", " + d->live_op + " " + first.where) +
           "), invoked at " + Seconds(d->sim_invoke_us) + " " + second.where + " and " +
           Seconds(d->live_invoke_us) + " " + first.where + ":\n\n- " + second.name + ": " +
           d->sim_side + "\n- " + first.name + ": " + d->live_side + "\n";
  } else if (c.operations_compared > 0) {
    out += "\nNo divergence: every operation both runs made ended the same way.\n";
  }
  return out;
}

}  // namespace lockstep::reports
