// report.html's tables under the panels: violations (alike ones folded together), faults, and
// the run's parameters with how to read the page.
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "reports/html_writer.h"

namespace lockstep::reports::html {

// --- tables: violations, faults, parameters ---

// A button that moves the view to violation v, when its interval has detail; else nothing.
std::string HtmlWriter::ShowButton(const check::Violation& v) const {
  if (!InWindow(v.from_us, v.to_us)) return "";
  const int64_t pad = std::max<int64_t>((v.to_us - v.from_us) / 4, 50'000);
  return "<button type=\"button\" data-view-from-us=\"" +
         IntText(std::max(window_.from_us, v.from_us - pad)) + "\" data-view-to-us=\"" +
         IntText(std::min(std::max(window_.to_us, window_.from_us + 1000), v.to_us + pad)) +
         "\">show</button>";
}

void HtmlWriter::Tables(std::string* out) {
  std::string& o = *out;
  if (!shown_.empty()) {
    o += "<section class=\"panel\"><h2>Violations" + HtmlEscape(run_title_) + "</h2><table id=\"" +
         id_prefix_ +
         "violations\"><tr><th>#</th>"
         "<th>property</th><th>kind</th><th>threads</th><th>from</th><th>to</th><th>what "
         "happened</th>"
         "<th></th></tr>\n";
    // Violations that share a cause (the same property, rule and threads: the acquisitions
    // of one thread during another's pause, say) make one row, the first of them, with the
    // others folded beneath it.
    std::vector<std::vector<const ShownViolation*>> groups;
    std::map<std::string, size_t> group_of;
    for (const ShownViolation& s : shown_) {
      const check::Violation& v = *s.violation;
      std::vector<std::string> threads = v.threads;
      std::sort(threads.begin(), threads.end());
      std::string key = v.property + "\n" + v.kind;
      for (const std::string& t : threads) key += "\n" + t;
      const auto [it, added] = group_of.emplace(key, groups.size());
      if (added) groups.emplace_back();
      groups[it->second].push_back(&s);
    }
    for (const std::vector<const ShownViolation*>& group : groups) {
      const check::Violation& v = *group.front()->violation;
      std::string threads;
      for (const std::string& t : v.threads) threads += (threads.empty() ? "" : ", ") + t;
      o += "<tr" + std::string(group.front()->index == 0 ? " class=\"lead\"" : "") + "><td>" +
           IntText(static_cast<int64_t>(group.front()->index)) + "</td><td>" +
           HtmlEscape(v.property) + "</td><td>" + HtmlEscape(v.kind) + "</td><td>" +
           HtmlEscape(threads) + "</td><td>" + Seconds(v.from_us) + "</td><td>" + Seconds(v.to_us) +
           "</td><td class=\"expl\">" + HtmlEscape(v.explanation);
      if (group.size() > 1) {
        const int64_t last_to = group.back()->violation->to_us;
        o += Format(
                 "<details class=\"alike\"><summary>and %zu more like it (the same rule and "
                 "threads), up to ",
                 group.size() - 1) +
             Seconds(last_to) + "</summary><table>";
        for (size_t k = 1; k < group.size(); ++k) {
          const check::Violation& w = *group[k]->violation;
          o += "<tr><td>" + IntText(static_cast<int64_t>(group[k]->index)) + "</td><td>" +
               Seconds(w.from_us) + "</td><td>" + Seconds(w.to_us) + "</td><td>" +
               HtmlEscape(w.explanation) + "</td><td>" + ShowButton(w) + "</td></tr>";
        }
        o += "</table></details>";
      }
      o += "</td><td>" + ShowButton(v) + "</td></tr>\n";
    }
    o += "</table>";
    size_t total = 0;
    for (const check::PropertyResult& r : verdict_.results) total += r.violation_count;
    if (total > shown_.size()) {
      o += Format(
          "<p class=\"note\">%zu violations in all; the first %zu of each property are "
          "listed.</p>",
          total, kViolationsShown);
    }
    o += "</section>\n";
  }
  o += "<section class=\"panel\"><h2>Faults" + HtmlEscape(run_title_) + "</h2>";
  if (tl_.faults.empty()) {
    o += "<p>None injected.</p>";
  } else {
    o += "<table "
         "id=\"" +
         id_prefix_ +
         "fault-table\"><tr><th>from</th><th>to</th><th>where</th><th>what</th></tr>\n";
    size_t rows = 0;
    for (const Fault& f : tl_.faults) {
      if (++rows > 200) break;
      o += "<tr><td>" + Seconds(f.from_us) + "</td><td>" +
           (f.instant ? std::string("")
            : f.open  ? "(run end)"
                      : Seconds(f.to_us)) +
           "</td><td>" + HtmlEscape(f.process) + "</td><td>" + HtmlEscape(f.label) + "</td></tr>\n";
    }
    o += "</table>";
    if (tl_.fault_count > 200)
      o += Format("<p class=\"note\">%zu faults; the first 200 are listed.</p>", tl_.fault_count);
  }
  o += "</section>\n";
  o += "<section class=\"panel\"><details><summary>Run parameters and how to read this "
       "page" +
       HtmlEscape(run_title_) + "</summary>\n<dl class=\"meta\">";
  for (const auto& [name, value] : meta_.parameters) {
    o += "<dt>" + HtmlEscape(name) + "</dt><dd>" + HtmlEscape(value) + "</dd>\n";
  }
  o += "<dt>clocks</dt><dd>" + HtmlEscape(tl_.clock_baseline_note) +
       Format("; true time 0 = Unix %lld ms", static_cast<long long>(tl_.start_unix_ms)) +
       "</dd>\n";
  o += "</dl>\n<ul class=\"howto\">"
       "<li>The time axis is true time (the simulator's), not any process's clock; the clock lane "
       "shows how far each process's own clock is from it.</li>"
       "<li>A thread lane's upper bar is the operation in flight (invoke to completion) in "
       "Jepsen's colours; the wide bar is the time the thread <em>believes</em> it holds the lock "
       "(acquire ok to the start of its release); the dark bar inside is its critical "
       "section.</li>"
       "<li>A node lane shows which thread's field the lock key holds on that node; the filled "
       "height is the key's remaining TTL, falling one second per second and reset by "
       "reentries and watchdog renewals. Ticks below are commands: green acquired, grey refused, "
       "blue unlock, purple renew.</li>"
       "<li>Red marks a violation: the band is its interval, and holds drawn with a red edge are "
       "the ones the checker named.</li></ul>\n";
  if (verdict_.warning_count > 0) {
    o += Format("<p class=\"note\">The checkers could not make sense of %zu event(s):</p><ul>",
                verdict_.warning_count);
    for (const std::string& w : verdict_.warnings) o += "<li>" + HtmlEscape(w) + "</li>";
    o += "</ul>";
  }
  o += "</details></section>\n";
}

}  // namespace lockstep::reports::html
