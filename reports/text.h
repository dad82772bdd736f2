// What the three report writers share: fixed-format numbers, escaping for HTML, JSON and
// Mermaid, the violation a report leads with, and the window shown in full detail.
//
// Every number is printed through these functions (snprintf with fixed formats, in the "C"
// locale lockstep never leaves), so output bytes depend only on the input.
#ifndef LOCKSTEP_REPORTS_TEXT_H_
#define LOCKSTEP_REPORTS_TEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "check/verdict.h"
#include "history/jsonl.h"
#include "reports/timeline.h"

namespace lockstep::reports {

std::string Format(const char* format, ...) __attribute__((format(printf, 1, 2)));

// 6204000 -> "6.204 s".
std::string Seconds(int64_t us);
// 1234567 -> "1,234,567": counts a person reads at a glance.
std::string Grouped(uint64_t n);
// A duration in the unit that reads best: "850 us", "12.5 ms", "13.337 s", "1 h 02 min".
std::string Duration(int64_t us);

std::string HtmlEscape(std::string_view s);
// A label at the start of a heading: "simulated" -> "Simulated" (ASCII only).
std::string Capitalised(std::string s);

// The colour of client thread `index` (its lane's swatch, the key owners it shows up as):
// Tableau's ten first, then hues a golden angle apart at three lightnesses in turn, so that no
// two of the first 900 threads share one ("#4e79a7", ..., "hsl(137,55%,42%)").
std::string ThreadColour(size_t index);
// JSON strings as the history writes them (history/jsonl.h).
using history::AppendJsonString;
std::string JsonString(std::string_view s);

// The violation a report leads with: the first of the first violated property (in the order
// Verdict::results lists them), or null when nothing was violated.
const check::Violation* LeadViolation(const check::Verdict& verdict);

// Every violation shown, in property order then time order, at most `per_property` each.
struct ShownViolation {
  const check::Violation* violation = nullptr;
  size_t index = 0;  // 0 = the lead violation; ids in the HTML are "violation-<index>"
};
std::vector<ShownViolation> ShownViolations(const check::Verdict& verdict, size_t per_property);

// The moment the detail window is centred on: the lead violation, else the first fault, else
// the start of the run.
int64_t AnchorUs(const Timeline& timeline, const check::Verdict& verdict);

// The narrowest time window inside [from_us, to_us] that contains `anchor_us` and at most
// `budget` of `starts_us` (sorted ascending): a quarter of them before the anchor, the rest after
// it. [from_us, to_us] itself when everything fits. whole_run is left for the caller to say.
struct Window {
  int64_t from_us = 0;
  int64_t to_us = 0;
  bool whole_run = true;
};
Window ChooseWindow(const std::vector<int64_t>& starts_us, int64_t anchor_us, size_t budget,
                    int64_t from_us, int64_t to_us);

}  // namespace lockstep::reports

#endif  // LOCKSTEP_REPORTS_TEXT_H_
