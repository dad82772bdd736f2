#include "fuzz/moment.h"

#include <cstdio>
#include <vector>

#include "history/facts.h"
#include "history/reader.h"

namespace lockstep::fuzz {

namespace {

// "2.108 s", as the checkers' explanations write times.
std::string Seconds(int64_t us) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f s", static_cast<double>(us) / 1e6);
  return text;
}

// Keeps the beliefs (not the accesses) and the operations that span the moment.
class MomentObserver : public history::FactsObserver {
 public:
  explicit MomentObserver(int64_t at_us) : at_us_(at_us) {}

  void OnSpanEnded(const history::FactsPass& f, const history::Span& s) override {
    if (s.access || s.start_us > at_us_ || s.end_us <= at_us_) return;
    held_.push_back(f.ThreadName(s.thread) + " held \"" + std::string(f.LockName(s.lock)) +
                    "\" since " + Seconds(s.start_us));
  }
  void OnOpEnded(const history::FactsPass& f, const history::Op& op) override {
    if (op.invoke_us > at_us_ || op.end_us <= at_us_) return;
    in_flight_.push_back(f.ThreadName(op.thread) + "'s " + std::string(f.names().Str(op.name)) +
                         " since " + Seconds(op.invoke_us));
  }

  std::string Text() const {
    auto join = [](const std::vector<std::string>& v) {
      std::string out;
      for (const std::string& s : v) out += (out.empty() ? "" : ", ") + s;
      return out;
    };
    return (held_.empty() ? std::string("no thread held a lock") : join(held_)) + "; " +
           (in_flight_.empty() ? std::string("no operation in flight")
                               : "in flight: " + join(in_flight_));
  }

 private:
  int64_t at_us_;
  std::vector<std::string> held_;
  std::vector<std::string> in_flight_;
};

}  // namespace

std::optional<std::string> DescribeMoment(const std::string& history_path, int64_t at_us,
                                          std::string* error) {
  history::NameTable names;
  history::FactsPass pass(&names, history::FactsOptions{});
  MomentObserver moment(at_us);
  pass.AddObserver(&moment);
  history::ReadStats stats;
  if (!history::ReadHistoryFile(history_path, &names, &pass, &stats, error)) return std::nullopt;
  pass.Finish();
  return "at " + Seconds(at_us) + ": " + moment.Text();
}

}  // namespace lockstep::fuzz
