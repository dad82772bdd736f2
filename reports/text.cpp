#include "reports/text.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <iterator>

namespace lockstep::reports {

std::string Format(const char* format, ...) {
  char buf[512];
  va_list args;
  va_start(args, format);
  const int n = std::vsnprintf(buf, sizeof(buf), format, args);
  va_end(args);
  assert(n >= 0);
  if (static_cast<size_t>(n) < sizeof(buf)) return std::string(buf, static_cast<size_t>(n));
  std::string out(static_cast<size_t>(n) + 1, '\0');
  va_start(args, format);
  std::vsnprintf(out.data(), out.size(), format, args);
  va_end(args);
  out.resize(static_cast<size_t>(n));
  return out;
}

std::string Seconds(int64_t us) { return Format("%.3f s", static_cast<double>(us) / 1e6); }

std::string Grouped(uint64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

std::string Capitalised(std::string s) {
  if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = static_cast<char>(s[0] - 'a' + 'A');
  return s;
}

std::string Duration(int64_t us) {
  const int64_t a = us < 0 ? -us : us;
  const char* sign = us < 0 ? "-" : "";
  if (a < 1000) return Format("%s%lld us", sign, static_cast<long long>(a));
  if (a < 1'000'000) return Format("%s%.3g ms", sign, static_cast<double>(a) / 1e3);
  if (a < 600'000'000) return Format("%s%.3f s", sign, static_cast<double>(a) / 1e6);
  const int64_t minutes = a / 60'000'000;
  if (minutes < 60) return Format("%s%lld min", sign, static_cast<long long>(minutes));
  return Format("%s%lld h %02lld min", sign, static_cast<long long>(minutes / 60),
                static_cast<long long>(minutes % 60));
}

std::string ThreadColour(size_t index) {
  static constexpr const char* kFirst[] = {"#4e79a7", "#59a14f", "#b07aa1", "#9c755f", "#76b7b2",
                                           "#edc948", "#f28e2b", "#8cd17d", "#ff9da7", "#bab0ac"};
  if (index < std::size(kFirst)) return kFirst[index];
  const size_t k = index - std::size(kFirst);
  // 137.5 degrees apart: each new hue falls in the widest gap left, so neighbours differ most.
  const int hue = static_cast<int>(std::fmod(static_cast<double>(k) * 137.50776405, 360.0));
  static constexpr int kLightness[] = {42, 58, 32};
  static constexpr int kSaturation[] = {55, 65, 50};
  const size_t band = k % 3;
  return Format("hsl(%d,%d%%,%d%%)", hue, kSaturation[band], kLightness[band]);
}

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string JsonString(std::string_view s) {
  std::string out;
  AppendJsonString(&out, s);
  return out;
}

const check::Violation* LeadViolation(const check::Verdict& verdict) {
  for (const check::PropertyResult& r : verdict.results) {
    if (r.violated && !r.violations.empty()) return &r.violations.front();
  }
  return nullptr;
}

std::vector<ShownViolation> ShownViolations(const check::Verdict& verdict, size_t per_property) {
  std::vector<ShownViolation> out;
  for (const check::PropertyResult& r : verdict.results) {
    for (size_t i = 0; i < r.violations.size() && i < per_property; ++i) {
      out.push_back({&r.violations[i], out.size()});
    }
  }
  return out;
}

int64_t AnchorUs(const Timeline& timeline, const check::Verdict& verdict) {
  if (const check::Violation* v = LeadViolation(verdict)) return v->from_us;
  for (const Fault& f : timeline.faults) {
    if (f.kind != "rediscover") return f.from_us;
  }
  return 0;
}

Window ChooseWindow(const std::vector<int64_t>& starts_us, int64_t anchor_us, size_t budget,
                    int64_t from_us, int64_t to_us) {
  Window w;
  w.from_us = from_us;
  w.to_us = to_us;
  if (starts_us.size() <= budget) return w;
  assert(budget > 0);
  assert(std::is_sorted(starts_us.begin(), starts_us.end()));
  const size_t at = static_cast<size_t>(
      std::lower_bound(starts_us.begin(), starts_us.end(), anchor_us) - starts_us.begin());
  // A quarter before the anchor, the rest after: what led up to it, then what it caused.
  size_t lo = at >= budget / 4 ? at - budget / 4 : 0;
  size_t hi = lo + budget - 1;
  if (hi >= starts_us.size()) {
    hi = starts_us.size() - 1;
    lo = hi - (budget - 1);
  }
  if (lo > 0) w.from_us = std::max(from_us, starts_us[lo]);
  if (hi + 1 < starts_us.size()) w.to_us = std::clamp(starts_us[hi + 1], w.from_us, to_us);
  return w;
}

}  // namespace lockstep::reports
