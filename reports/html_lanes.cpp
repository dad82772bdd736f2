// report.html's lanes in the detail panel: a client thread's operations, holds and critical
// sections; a node's key owner with its TTL, lease losses, role changes and commands; the
// believed-holder count; every clock's offset from true time.
#include <algorithm>
#include <iterator>
#include <string>

#include "reports/html_writer.h"

namespace lockstep::reports::html {

namespace {

constexpr const char* kClockColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                         "#8c564b", "#e377c2", "#17becf", "#bcbd22"};

const char* OpClass(Outcome o) {
  switch (o) {
    case Outcome::kOk:
      return "op op-ok";
    case Outcome::kFail:
      return "op op-fail";
    case Outcome::kInfo:
      return "op op-info";
    case Outcome::kCrashed:
      return "op op-info";
    case Outcome::kPending:
      return "op op-pending";
  }
  return "op";
}

}  // namespace

// --- lane backgrounds: names, roles, colour swatches ---

void HtmlWriter::LaneBackgrounds(std::string* out) {
  std::string& o = *out;
  o += "<g id=\"" + id_prefix_ + "lanes\">\n";
  o += "<text class=\"section\" x=\"6\" y=\"" + IntText(clients_header_y_ + 14) +
       "\">clients: what each thread believes</text>\n";
  o += "<text class=\"section\" x=\"6\" y=\"" + IntText(nodes_header_y_ + 14) +
       "\">redis nodes: who the key belongs to</text>\n";
  o += "<g class=\"lane\" data-lane=\"faults\" data-kind=\"faults\"><text class=\"lname\" "
       "x=\"6\" y=\"" +
       IntText(faults_y_ + 16) + "\">faults</text></g>\n";
  if (hidden_threads_ > 0) {
    o += "<text class=\"section\" x=\"260\" y=\"" + IntText(clients_header_y_ + 14) + "\">" +
         Format(
             "(%zu more threads not drawn; trace.json has them all; lockstep report "
             "--lanes 'c7*' draws the ones you name)",
             hidden_threads_) +
         "</text>\n";
  }
  for (size_t i = 0; i < tl_.threads.size(); ++i) {
    const ThreadLane& l = tl_.threads[i];
    const int y = thread_y_[i];
    if (y == kNone) continue;
    std::string tip = l.name;
    if (!tl_.client_uuids[l.client].empty()) tip += " (uuid " + tl_.client_uuids[l.client] + ")";
    o += "<g class=\"lane\" id=\"" + id_prefix_ + "lane-" + HtmlEscape(l.name) + "\" data-lane=\"" +
         HtmlEscape(l.name) + "\" data-kind=\"thread\" data-y=\"" + IntText(y) + "\">" +
         Title(tip) + "<rect class=\"lanebg" + (i % 2 ? " alt" : "") + "\" x=\"0\" y=\"" +
         IntText(y) + "\" width=\"" + IntText(kSvgWidth) + "\" height=\"" +
         IntText(kThreadLaneHeight) + "\"/><rect x=\"8\" y=\"" + IntText(y + 14) +
         "\" width=\"10\" height=\"10\" rx=\"2\" fill=\"" + ThreadColour(i) +
         "\"/><text class=\"lname\" x=\"24\" y=\"" + IntText(y + 23) + "\">" + HtmlEscape(l.name) +
         "</text></g>\n";
  }
  for (size_t i = 0; i < tl_.nodes.size(); ++i) {
    const NodeLane& n = tl_.nodes[i];
    const int y = node_y_[i];
    o += "<g class=\"lane\" id=\"" + id_prefix_ + "lane-" + HtmlEscape(n.name) + "\" data-lane=\"" +
         HtmlEscape(n.name) + "\" data-kind=\"node\" data-y=\"" + IntText(y) +
         "\"><rect class=\"lanebg node" + (i % 2 ? " alt" : "") + "\" x=\"0\" y=\"" + IntText(y) +
         "\" width=\"" + IntText(kSvgWidth) + "\" height=\"" + IntText(kNodeLaneHeight) +
         "\"/><text class=\"lname\" x=\"8\" y=\"" + IntText(y + 19) + "\">" + HtmlEscape(n.name) +
         "</text>";
    if (!n.role.empty()) {
      o += "<text class=\"lsub\" x=\"8\" y=\"" + IntText(y + 33) + "\">" + HtmlEscape(n.role) +
           (n.role_changes.empty() ? "" : " at first") + "</text>";
    }
    o += "</g>\n";
  }
  o += "<g class=\"lane\" data-lane=\"holders\" data-kind=\"holders\"><rect class=\"lanebg\" "
       "x=\"0\" y=\"" +
       IntText(holders_y_) + "\" width=\"" + IntText(kSvgWidth) + "\" height=\"" +
       IntText(kHoldersLaneHeight) + "\"/><text class=\"lname\" x=\"8\" y=\"" +
       IntText(holders_y_ + 16) + "\">believed holders</text><text class=\"lsub\" x=\"8\" y=\"" +
       IntText(holders_y_ + 30) + "\">" +
       HtmlEscape(tl_.locks.empty() ? "no holds"
                                    : "of \"" + tl_.locks.front() + "\"" +
                                          (tl_.locks.size() > 1 ? " (and others)" : "")) +
       "</text></g>\n";
  o += "<g class=\"lane\" data-lane=\"clocks\" data-kind=\"clock\"><rect class=\"lanebg\" "
       "x=\"0\" y=\"" +
       IntText(clock_y_) + "\" width=\"" + IntText(kSvgWidth) + "\" height=\"" + IntText(clock_h_) +
       "\"/><text class=\"lname\" x=\"8\" y=\"" + IntText(clock_y_ + 15) +
       "\">clock offsets</text>" + Title(tl_.clock_baseline_note) + ClockLegend() + "</g>\n";
  o += "</g>\n";
}

// --- client threads ---

bool HtmlWriter::InLeadViolation(const std::string& thread, const Span& h) const {
  for (const ShownViolation& s : shown_) {
    const check::Violation& v = *s.violation;
    if (v.property != "mutual_exclusion" && v.property != "lease_safety") continue;
    if (std::find(v.threads.begin(), v.threads.end(), thread) == v.threads.end()) continue;
    if (h.to_us >= v.from_us && h.from_us <= v.to_us) return true;
  }
  return false;
}

void HtmlWriter::Threads(std::string* out) {
  std::string& o = *out;
  for (size_t i = 0; i < tl_.threads.size(); ++i) {
    const ThreadLane& l = tl_.threads[i];
    const int y = thread_y_[i];
    if (y == kNone) continue;
    o += "<g class=\"tl\" data-lane=\"" + HtmlEscape(l.name) + "\">\n";
    for (const Span& h : l.holds) {
      if (!InWindow(h.from_us, h.to_us)) continue;
      const bool bad = InLeadViolation(l.name, h);
      const char* cls =
          bad ? (h.read ? "hold read bad" : "hold bad") : (h.read ? "hold read" : "hold");
      Rect(&o, cls, h.from_us, h.to_us, y + 14, 23,
           l.name + " holds \"" + h.lock + "\"" + (h.read ? " to read" : "") +
               " (as it believes): " + Seconds(h.from_us) + " - " + Seconds(h.to_us) + " (" +
               Duration(h.to_us - h.from_us) + "), ended by " + h.ended_by,
           Format(" data-from-us=\"%lld\" data-to-us=\"%lld\"", static_cast<long long>(h.from_us),
                  static_cast<long long>(h.to_us)));
      const std::string what = h.read ? "reading" : "holding";
      Label(bad ? "blabel bad" : "blabel", bad ? what + " (violation)" : what, h.from_us, h.to_us,
            y + 25);
    }
    for (const Span& s : l.sections) {
      if (!InWindow(s.from_us, s.to_us)) continue;
      Rect(&o, "cs", s.from_us, s.to_us, y + 29, 8,
           l.name + " in the critical section: " + Seconds(s.from_us) + " - " + Seconds(s.to_us) +
               " (" + Duration(s.to_us - s.from_us) + ")" +
               (s.open ? ", still inside at the end" : ""));
    }
    for (const Op& op : l.ops) {
      if (!InWindow(op.from_us, op.to_us)) continue;
      Rect(&o, OpClass(op.outcome), op.from_us, op.to_us, y + 3, 9,
           l.name + " " + op.op + " " + OutcomeName(op.outcome) + ": " + Seconds(op.from_us) +
               " - " + Seconds(op.to_us) + " (" + Duration(op.to_us - op.from_us) + ") " +
               op.detail + (op.node != kNone ? " [" + tl_.nodes[op.node].name + "]" : ""));
    }
    o += "</g>\n";
  }
}

// --- nodes: key owner, TTL, commands ---

std::string HtmlWriter::OwnerColour(int thread) const {
  return thread == kNone ? "#999999" : ThreadColour(static_cast<size_t>(thread));
}

void HtmlWriter::Nodes(std::string* out) {
  std::string& o = *out;
  int64_t max_ttl = 1;
  for (const NodeLane& n : tl_.nodes) {
    for (const Lease& l : n.leases) {
      for (const TtlPoint& p : l.ttl) max_ttl = std::max(max_ttl, p.ttl_us);
    }
  }
  for (size_t i = 0; i < tl_.nodes.size(); ++i) {
    const NodeLane& n = tl_.nodes[i];
    const int y = node_y_[i];
    const double top = y + 5, bottom = y + 31;
    o += "<g class=\"nl\" data-lane=\"" + HtmlEscape(n.name) + "\">\n";
    for (const Lease& l : n.leases) {
      if (!InWindow(l.from_us, l.to_us)) continue;
      const std::string colour = OwnerColour(l.owner_thread);
      if (l.replica) {
        // A replica's copy: no TTL (the replica waits for its master's DEL), lighter.
        Rect(&o, "lease copy", l.from_us, l.to_us, top + 6, bottom - top - 6,
             n.name + ": the replica's copy of \"" + l.lock + "\" names " + l.owners +
                 " (applied " + Duration(l.lag_us) + " after its master's write), " +
                 Seconds(l.from_us) + " - " + Seconds(l.to_us) + " (" +
                 Duration(l.to_us - l.from_us) + "), then " + l.ended_by,
             " style=\"fill:" + colour + ";stroke:" + colour + "\" data-lag-us=\"" +
                 IntText(l.lag_us) + "\"");
        Label("llabel", l.owners + " (copy, +" + Duration(l.lag_us) + ")", l.from_us, l.to_us,
              y + 24);
        continue;
      }
      Rect(&o, "lease", l.from_us, l.to_us, top, bottom - top,
           n.name + ": \"" + l.lock + "\" owned by " + l.owners + ", " + Seconds(l.from_us) +
               " - " + Seconds(l.to_us) + " (" + Duration(l.to_us - l.from_us) + "), then " +
               l.ended_by +
               (l.ttl.empty() || !l.ttl.front().reset
                    ? ""
                    : ", TTL set to " + Duration(l.ttl.front().ttl_us)),
           " style=\"fill:" + colour + ";stroke:" + colour + "\"");
      // The TTL as a sawtooth: reset to its lease, falling at one second per second.
      if (!l.ttl.empty()) {
        std::string pts;
        auto point = [&](int64_t t, int64_t ttl) {
          const double h =
              (bottom - top) * std::clamp<double>(static_cast<double>(ttl) / max_ttl, 0, 1);
          pts += TimeX(t) + "," + PixelText(bottom - h) + " ";
        };
        pts += TimeX(l.ttl.front().t_us) + "," + PixelText(bottom) + " ";
        for (size_t k = 0; k < l.ttl.size(); ++k) {
          const TtlPoint& p = l.ttl[k];
          if (!p.reset && k > 0) continue;
          point(p.t_us, p.ttl_us);
          // It falls until the next reset (PTTL observations only confirm the line).
          size_t r = k + 1;
          while (r < l.ttl.size() && !l.ttl[r].reset) ++r;
          const int64_t end = std::min(r < l.ttl.size() ? l.ttl[r].t_us : l.to_us, l.to_us);
          point(end, p.ttl_us - (end - p.t_us));
        }
        pts += TimeX(l.to_us) + "," + PixelText(bottom);
        o += "<polygon class=\"ttl\" points=\"" + pts + "\" style=\"fill:" + colour + "\"/>\n";
      }
      Label("llabel", l.owners, l.from_us, l.to_us, y + 22);
    }
    for (const LeaseLoss& loss : n.losses) {
      if (!InWindow(loss.t_us, loss.t_us)) continue;
      o += "<line class=\"loss\" x1=\"" + TimeX(loss.t_us) + "\" x2=\"" + TimeX(loss.t_us) +
           "\" y1=\"" + IntText(y + 2) + "\" y2=\"" + IntText(y + 34) + "\" data-op=\"" + loss.op +
           "\">" +
           Title(Seconds(loss.t_us) + " " + n.name + ": the key of " + loss.owners + " " + loss.op +
                 (loss.op == "expired" ? " (its TTL ran out on " + n.name + "'s clock)"
                                       : " (a failover promoted a node that never had it)")) +
           "</line>\n";
      InstantLabel("losslabel", loss.op + ": " + loss.owners, loss.t_us, y + 12, 2);
    }
    for (const RoleChange& c : n.role_changes) {
      if (!InWindow(c.t_us, c.t_us)) continue;
      o += "<line class=\"rolechange\" x1=\"" + TimeX(c.t_us) + "\" x2=\"" + TimeX(c.t_us) +
           "\" y1=\"" + IntText(y + 2) + "\" y2=\"" + IntText(y + 34) + "\" data-role=\"" +
           HtmlEscape(c.role) + "\">" +
           Title(Seconds(c.t_us) + " " + n.name + " is now " + c.role) + "</line>\n";
      InstantLabel("rolelabel", "now " + c.role, c.t_us, y + 42, 3);
    }
    // Refused acquires report the key's remaining TTL (PTTL): dots on the sawtooth. (No
    // tooltip: the command's tick below says the same, and there can be thousands.)
    for (const TtlPoint& p : n.pttl) {
      if (!InWindow(p.t_us, p.t_us)) continue;
      const double h =
          (bottom - top) * std::clamp<double>(static_cast<double>(p.ttl_us) / max_ttl, 0, 1);
      o += "<line class=\"pttl\" x1=\"" + TimeX(p.t_us) + "\" x2=\"" + TimeX(p.t_us) + "\" y1=\"" +
           PixelText(bottom - h - 1.5) + "\" y2=\"" + PixelText(bottom - h + 1.5) + "\"/>\n";
    }
    for (const Exec& x : n.execs) {
      if (!InWindow(x.t_us, x.t_us)) continue;
      const char* cls = x.kind == ExecKind::kAcquired  ? "x x-acq"
                        : x.kind == ExecKind::kRefused ? "x x-refused"
                        : x.kind == ExecKind::kUnlock  ? "x x-unlock"
                        : x.kind == ExecKind::kRenewed ? "x x-renew"
                                                       : "x x-other";
      const std::string who = x.thread != kNone ? tl_.threads[x.thread].name : x.peer;
      o += "<line class=\"" + std::string(cls) + "\" x1=\"" + TimeX(x.t_us) + "\" x2=\"" +
           TimeX(x.t_us) + "\" y1=\"" + IntText(y + 33) + "\" y2=\"" + IntText(y + 41) + "\">" +
           Title(Seconds(x.t_us) + " " + n.name + " ran " + x.op + " from " + who + " -> " +
                 x.reply + Format(" (seq %llu)", static_cast<unsigned long long>(x.seq))) +
           "</line>\n";
    }
    o += "</g>\n";
  }
}

// --- believed holders: a step line; two or more is the split brain ---

void HtmlWriter::Holders(std::string* out) {
  std::string& o = *out;
  if (tl_.locks.empty()) return;
  const std::string& lock = tl_.locks.front();
  const int top = std::max(2, tl_.max_holders);
  const double y0 = holders_y_ + kHoldersLaneHeight - 6, span = kHoldersLaneHeight - 12;
  auto yof = [&](int n) { return y0 - span * n / top; };
  for (int n = 1; n <= top; ++n) {
    o += "<line class=\"hgrid\" x1=\"" + TimeX(window_.from_us) + "\" x2=\"" +
         TimeX(window_.to_us) + "\" y1=\"" + PixelText(yof(n)) + "\" y2=\"" + PixelText(yof(n)) +
         "\"/>\n";
  }
  std::string pts = TimeX(window_.from_us) + "," + PixelText(yof(0));
  int current = 0;
  int64_t over_from = -1;
  for (const HolderCount& h : tl_.holders) {
    if (h.lock != lock) continue;
    if (h.t_us < window_.from_us) {
      current = h.count;
      pts = TimeX(window_.from_us) + "," + PixelText(yof(current));
      if (h.conflict && over_from < 0) over_from = window_.from_us;
      if (!h.conflict) over_from = -1;
      continue;
    }
    if (h.t_us > window_.to_us) break;
    pts += " " + TimeX(h.t_us) + "," + PixelText(yof(current)) + " " + TimeX(h.t_us) + "," +
           PixelText(yof(h.count));
    if (h.conflict && over_from < 0) over_from = h.t_us;
    if (!h.conflict && over_from >= 0) {
      Rect(&o, "split", over_from, h.t_us, holders_y_ + 2, kHoldersLaneHeight - 4,
           "more threads believe they hold \"" + lock + "\" than it allows: " + Seconds(over_from) +
               " - " + Seconds(h.t_us));
      over_from = -1;
    }
    current = h.count;
  }
  if (over_from >= 0) {
    Rect(&o, "split", over_from, window_.to_us, holders_y_ + 2, kHoldersLaneHeight - 4,
         "more threads believe they hold \"" + lock + "\" than it allows, from " +
             Seconds(over_from));
  }
  pts += " " + TimeX(window_.to_us) + "," + PixelText(yof(current));
  // Filled down to zero, so a dense square wave reads as a share rather than a black bar.
  o += "<polygon class=\"holders-area\" points=\"" + TimeX(window_.from_us) + "," +
       PixelText(yof(0)) + " " + pts + " " + TimeX(window_.to_us) + "," + PixelText(yof(0)) +
       "\"/>\n<polyline class=\"holders\" points=\"" + pts + "\"/>\n";
}

// --- clocks: offset from true time per process ---

HtmlWriter::ClockScale HtmlWriter::Scale() const {
  ClockScale s;
  for (const ClockSeries& c : tl_.clocks) {
    s.lo_us = std::min(s.lo_us, c.min_offset_us);
    s.hi_us = std::max(s.hi_us, c.max_offset_us);
  }
  const int64_t pad = (s.hi_us - s.lo_us) / 10;
  s.lo_us -= pad;
  s.hi_us += pad;
  return s;
}

double HtmlWriter::ClockY(int64_t offset_us) const {
  const ClockScale s = Scale();
  const double top = clock_y_ + 6, bottom = clock_y_ + clock_h_ - 6;
  return bottom - (bottom - top) * static_cast<double>(offset_us - s.lo_us) / (s.hi_us - s.lo_us);
}

std::string HtmlWriter::ClockLegend() const {
  std::string o;
  int row = 0, colour = 0;
  size_t unskewed = 0;
  for (const ClockSeries& c : tl_.clocks) {
    if (!Skewed(c)) {
      ++unskewed;
      continue;
    }
    if (row < 4) {
      o += "<text class=\"lsub\" x=\"8\" y=\"" + IntText(clock_y_ + 30 + 12 * row) + "\" fill=\"" +
           kClockColours[colour % std::size(kClockColours)] + "\">" + HtmlEscape(c.process) + " " +
           Format("%+.0f..%+.0f ms", c.min_offset_us / 1e3, c.max_offset_us / 1e3) + "</text>";
    }
    ++row;
    ++colour;
  }
  if (unskewed > 0 && row < 4) {
    o += "<text class=\"lsub\" x=\"8\" y=\"" + IntText(clock_y_ + 28 + 12 * row) + "\">" +
         (row == 0 ? Format("all %zu read true time (0 ms)", unskewed)
                   : Format("%zu more at 0 ms", unskewed)) +
         "</text>";
  }
  return o;
}

void HtmlWriter::Clocks(std::string* out) {
  std::string& o = *out;
  const ClockScale s = Scale();
  // The zero line, and the extremes for reading values off.
  o += "<line class=\"czero\" x1=\"" + TimeX(window_.from_us) + "\" x2=\"" + TimeX(window_.to_us) +
       "\" y1=\"" + PixelText(ClockY(0)) + "\" y2=\"" + PixelText(ClockY(0)) + "\"/>\n";
  int colour = 0;
  for (const ClockSeries& c : tl_.clocks) {
    const bool skewed = Skewed(c);
    // The offset the window starts with: the last sample before it (each timeline window
    // starts with the one it carried in), else the first inside it.
    std::string pts;
    bool known = false;
    int64_t last = 0;
    for (const ClockSample& p : c.samples) {
      if (p.t_us < window_.from_us) {
        last = p.offset_us;
        known = true;
        continue;
      }
      if (p.t_us > window_.to_us) break;
      if (pts.empty()) {
        pts = TimeX(window_.from_us) + "," +
              PixelText(ClockY(known && p.t_us > window_.from_us ? last : p.offset_us));
      }
      pts += " " + TimeX(p.t_us) + "," + PixelText(ClockY(known ? last : p.offset_us)) + " " +
             TimeX(p.t_us) + "," + PixelText(ClockY(p.offset_us));
      last = p.offset_us;
      known = true;
    }
    if (!known) continue;  // Nothing recorded of this clock by the window's end.
    if (pts.empty()) pts = TimeX(window_.from_us) + "," + PixelText(ClockY(last));
    pts += " " + TimeX(std::min(window_.to_us, tl_.end_us)) + "," + PixelText(ClockY(last));
    const std::string stroke =
        skewed ? kClockColours[colour++ % std::size(kClockColours)] : "#b0b0b0";
    o += "<polyline class=\"clock\" data-process=\"" + HtmlEscape(c.process) + "\" points=\"" +
         pts + "\" style=\"stroke:" + stroke + "\">" +
         Title(c.process + " clock offset from true time: " +
               Format("%+.3f to %+.3f ms", c.min_offset_us / 1e3, c.max_offset_us / 1e3)) +
         "</polyline>\n";
  }
  // Scale labels are text, so they go with the labels (pixel space).
  clock_scale_text_ = Format("%+.0f ms", s.hi_us / 1e3);
  clock_scale_low_text_ = Format("%+.0f ms", s.lo_us / 1e3);
}

}  // namespace lockstep::reports::html
