// A property's checker: an observer of the facts pass (history/facts.h) that keeps only the
// state its rule needs, gathers its findings as the run goes, and writes its result once the
// pass has finished. One file per property (check/<property>.cpp), its tests beside it.
#ifndef LOCKSTEP_CHECK_PROPERTY_H_
#define LOCKSTEP_CHECK_PROPERTY_H_

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "check/findings.h"
#include "check/narrator.h"
#include "check/verdict.h"
#include "history/facts.h"

namespace lockstep::check {

class PropertyChecker : public history::FactsObserver {
 public:
  // The result, after the facts pass has finished.
  virtual PropertyResult Result(const Narrator& n) = 0;
};

// Every property's checker, in kProperties order.
std::vector<std::unique_ptr<PropertyChecker>> MakePropertyCheckers(const CheckOptions& options);

std::unique_ptr<PropertyChecker> MakeMutualExclusion(const CheckOptions& options);
std::unique_ptr<PropertyChecker> MakeResourceExclusion(const CheckOptions& options);
std::unique_ptr<PropertyChecker> MakeReentrancy(const CheckOptions& options);
std::unique_ptr<PropertyChecker> MakeLeaseSafety(const CheckOptions& options);
std::unique_ptr<PropertyChecker> MakeLiveness(const CheckOptions& options);
std::unique_ptr<PropertyChecker> MakeFairness(const CheckOptions& options);
std::unique_ptr<PropertyChecker> MakeFencing(const CheckOptions& options);
std::unique_ptr<PropertyChecker> MakeRwExclusion(const CheckOptions& options);
std::unique_ptr<PropertyChecker> MakeSemaphore(const CheckOptions& options);
std::unique_ptr<PropertyChecker> MakeLatch(const CheckOptions& options);
std::unique_ptr<PropertyChecker> MakeScriptErrors(const CheckOptions& options);

inline PropertyResult NotApplicable(std::string_view property) {
  PropertyResult result;
  result.property = std::string(property);
  result.applicable = false;
  return result;
}

// Writes up the kept findings, earliest first. `explain(key, payload)` returns the record with
// its kind, threads, events, to_us and explanation; the property and from_us are filled here,
// and the events sorted and made unique.
template <class Record, class Payload, class Explain>
std::vector<Record> WriteUp(std::string_view property, const Findings<Payload>& findings,
                            Explain explain) {
  std::vector<Record> out;
  for (const auto& [key, payload] : findings.Sorted()) {
    Record v = explain(key, *payload);
    v.property = std::string(property);
    v.from_us = key.from_us;
    std::sort(v.events.begin(), v.events.end());
    v.events.erase(std::unique(v.events.begin(), v.events.end()), v.events.end());
    out.push_back(std::move(v));
  }
  return out;
}

template <class Payload, class Explain>
PropertyResult Conclude(std::string_view property, const Findings<Payload>& findings,
                        Explain explain) {
  PropertyResult result;
  result.property = std::string(property);
  result.violation_count = findings.count();
  result.violated = findings.count() > 0;
  result.violations = WriteUp<Violation>(property, findings, explain);
  return result;
}

// Adds the observations (things noticed that are not violations) to a result.
template <class Payload, class Explain>
void Observe(PropertyResult* result, const Findings<Payload>& findings, Explain explain) {
  result->observation_count = findings.count();
  result->observations = WriteUp<Observation>(result->property, findings, explain);
}

}  // namespace lockstep::check

#endif  // LOCKSTEP_CHECK_PROPERTY_H_
