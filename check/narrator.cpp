#include "check/narrator.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace lockstep::check {

namespace {
constexpr size_t kMaxFaultsNamed = 8;          // Per violation.
constexpr size_t kMaxFaultsScanned = 100'000;  // Per violation: bounds explanation cost.
}  // namespace

std::string Seconds(int64_t us) {
  const bool negative = us < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(us) : static_cast<uint64_t>(us);
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%s%" PRIu64 ".%03" PRIu64 " s", negative ? "-" : "",
                magnitude / 1'000'000, (magnitude % 1'000'000) / 1000);
  return buf;
}

std::string Quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string Count(size_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string Narrator::Until(const history::Span& s) const {
  using history::EndCause;
  switch (s.cause) {
    case EndCause::kRelease: return "until " + Seconds(s.end_us) + ", when it began to release it";
    case EndCause::kForceUnlock: return "until " + Seconds(s.end_us) + ", when it called forceUnlock";
    case EndCause::kCrash: return "until its process crashed at " + Seconds(s.end_us);
    case EndCause::kExit: return "until it left at " + Seconds(s.end_us);
    case EndCause::kRunEnd: return "until the run ended at " + Seconds(s.end_us);
  }
  return "";
}

std::string Narrator::Token(bool has_token, int64_t token) {
  return has_token ? " with token " + std::to_string(token) : "";
}

std::string Narrator::ImpairedAt(int process, int64_t t_us) const {
  for (const history::ImpairedSpan& s : f_.ImpairedSpans(process, f_.run_end_us())) {
    if (s.from_us > t_us) break;
    if (t_us < s.to_us) {
      return ", while " + ProcessName(process) + " was " + history::ImpairmentName(s.kind) + " (" +
             Seconds(s.from_us) + " to " + Seconds(s.to_us) + ")";
    }
  }
  return "";
}

std::string Narrator::Loss(int thread, const history::LossRecord& le) const {
  using history::LeaseKind;
  const char* what = le.kind == LeaseKind::kExpired   ? "expired"
                     : le.kind == LeaseKind::kLost    ? "was lost"
                     : le.kind == LeaseKind::kOwners  ? "was removed from the key"
                                                      : "was deleted";
  return Thread(thread) + "'s lease " + what + " on " + ProcessName(le.node) + " at " +
         Seconds(le.t_us) + ImpairedAt(ProcessOfThread(thread), le.t_us) + ".";
}

std::string Narrator::Losses(int thread, const std::vector<history::LossRecord>& losses,
                             std::vector<Seq>* events) const {
  std::string text;
  size_t named = 0;
  for (const history::LossRecord& le : losses) {
    if (named++ == history::kLossesKept) break;
    events->push_back(le.seq);
    text += " " + Loss(thread, le);
  }
  return text;
}

std::string Narrator::Faults(int64_t from_us, int64_t to_us, int64_t focus_us,
                             const std::vector<int>& clients, std::vector<Seq>* events) const {
  const std::vector<history::FaultRecord>& faults = f_.faults();
  const auto lo = std::lower_bound(faults.begin(), faults.end(), from_us,
                                   [](const history::FaultRecord& f, int64_t t) { return f.t_us < t; });
  std::vector<const history::FaultRecord*> relevant;
  for (auto it = lo; it != faults.end() && it->t_us <= to_us && relevant.size() < kMaxFaultsScanned;
       ++it) {
    if (f_.processes()[it->process].client &&
        std::find(clients.begin(), clients.end(), it->process) == clients.end()) {
      continue;  // A client not involved.
    }
    relevant.push_back(&*it);
  }
  if (relevant.empty()) return "";
  const size_t total = relevant.size();
  if (total > kMaxFaultsNamed) {
    auto distance = [&](const history::FaultRecord* f) {
      return f->t_us > focus_us ? f->t_us - focus_us : focus_us - f->t_us;
    };
    std::nth_element(relevant.begin(), relevant.begin() + kMaxFaultsNamed, relevant.end(),
                     [&](const history::FaultRecord* a, const history::FaultRecord* b) {
                       return std::make_pair(distance(a), a->seq) < std::make_pair(distance(b), b->seq);
                     });
    relevant.resize(kMaxFaultsNamed);
    std::sort(relevant.begin(), relevant.end(),
              [](const history::FaultRecord* a, const history::FaultRecord* b) { return a->seq < b->seq; });
  }
  std::string text = " Faults:";
  for (size_t i = 0; i < relevant.size(); ++i) {
    const history::FaultRecord& e = *relevant[i];
    events->push_back(e.seq);
    text += (i == 0 ? " " : "; ") + std::string(f_.names().Str(e.op)) + " " + ProcessName(e.process) +
            " at " + Seconds(e.t_us);
    if (!e.detail.empty()) text += " (" + e.detail + ")";
  }
  if (total > relevant.size()) text += "; and " + std::to_string(total - relevant.size()) + " more";
  return text + ".";
}

}  // namespace lockstep::check
