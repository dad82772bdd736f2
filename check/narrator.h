// The words every explanation shares: times, counts, thread and lock names, how a belief
// ended, a lease's loss, and the faults around a violation. Explanations are written when the
// run has ended (Finish), so the narrator may read everything the facts pass keeps for the
// whole run: names, every impaired stretch, the fault log.
#ifndef LOCKSTEP_CHECK_NARRATOR_H_
#define LOCKSTEP_CHECK_NARRATOR_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "history/facts.h"

namespace lockstep::check {

using history::Seq;

// "12.350 s": true time in seconds with millisecond precision (truncated).
std::string Seconds(int64_t us);
std::string Quoted(std::string_view s);
// "1 thread", "3 threads".
std::string Count(size_t n, const char* noun);

class Narrator {
 public:
  explicit Narrator(const history::FactsPass& f) : f_(f) {}

  const history::FactsPass& facts() const { return f_; }
  const std::string& Thread(int t) const { return f_.ThreadName(t); }
  std::string ProcessName(int p) const { return std::string(f_.ProcessName(p)); }
  std::string Lock(int l) const { return Quoted(f_.LockName(l)); }
  int ProcessOfThread(int t) const { return f_.ProcessOfThread(t); }

  // How a belief or access ended: "until 13.600 s, when it began to release it".
  std::string Until(const history::Span& s) const;
  // " with token 7", or "".
  static std::string Token(const history::Span& s) { return Token(s.has_token, s.token); }
  static std::string Token(bool has_token, int64_t token);
  // "read lock" / "write lock" for a read-write lock's belief.
  static const char* Side(const history::Span& s) { return s.shared ? "read lock" : "write lock"; }

  // ", while c1 was paused (10.500 s to 13.500 s)", or "" if the process was not impaired.
  std::string ImpairedAt(int process, int64_t t_us) const;
  // "c1.t0's lease expired on n1 at 12.001 s, while c1 was paused (...)."
  std::string Loss(int thread, const history::LossRecord& loss) const;
  // Sentences on the given losses of `thread`'s field (at most kLossesKept), each after a
  // space; appends their seqs to *events.
  std::string Losses(int thread, const std::vector<history::LossRecord>& losses,
                     std::vector<Seq>* events) const;

  // " Faults: pause c1 at 10.500 s (3000ms); ..." for the faults in [from_us, to_us] on the
  // given client processes, on nodes, or on the whole system: at most kMaxFaultsNamed, those
  // nearest focus_us. Appends their seqs to *events.
  std::string Faults(int64_t from_us, int64_t to_us, int64_t focus_us, const std::vector<int>& clients,
                     std::vector<Seq>* events) const;

 private:
  const history::FactsPass& f_;
};

}  // namespace lockstep::check

#endif  // LOCKSTEP_CHECK_NARRATOR_H_
