#include "check/verdict.h"

#include <algorithm>

namespace lockstep::check {

namespace {
std::string Count(size_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}
}  // namespace

const PropertyResult* Verdict::Find(std::string_view property) const {
  for (const PropertyResult& r : results) {
    if (r.property == property) return &r;
  }
  return nullptr;
}

bool Verdict::AnyViolated() const {
  return std::any_of(results.begin(), results.end(),
                     [](const PropertyResult& r) { return r.violated; });
}

Judgement Judge(const Verdict& verdict, const std::map<std::string, Expectation>& expect) {
  Judgement judgement;
  // As [expect] states it, and the properties judged in every run (ExpectationOf).
  std::map<std::string, Expectation> judged = expect;
  for (std::string_view p : history::kJudgedInEveryRun) {
    judged.emplace(std::string(p), Expectation::kHold);
  }
  for (const auto& [property, expectation] : judged) {
    const PropertyResult* result = verdict.Find(property);
    if (result == nullptr) {
      judgement.mismatches.push_back(property + ": no such property");
      continue;
    }
    if (expectation == Expectation::kHold && result->violated) {
      judgement.mismatches.push_back(property + ": expected to hold, violated (" +
                                     Count(result->violation_count, "violation") + ")");
    } else if (expectation == Expectation::kViolated && !result->violated) {
      judgement.mismatches.push_back(
          property + ": expected to be violated, held" +
          (result->applicable ? ""
                              : " (it does not apply to protocol kind '" +
                                    verdict.protocol_kind + "')"));
    }
  }
  judgement.matches = judgement.mismatches.empty();
  return judgement;
}

}  // namespace lockstep::check
