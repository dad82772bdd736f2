// The scenario file's words for the Scenario's enums, one table each, in the order the loader
// lists them in its messages ("one of trylock, lock"). The loader (scenario_toml.cpp) reads a
// word into its value with them and the writer (scenario_write.cpp) writes a value as its word,
// so the two cannot disagree.
#ifndef LOCKSTEP_MODEL_SCENARIO_NAMES_H_
#define LOCKSTEP_MODEL_SCENARIO_NAMES_H_

#include <array>
#include <cassert>
#include <cstddef>
#include <string_view>

#include "model/scenario.h"

namespace lockstep {

template <typename T>
struct NamedValue {
  std::string_view name;
  T value;
};

inline constexpr NamedValue<NodeSpec::Persistence> kPersistences[] = {
    {"none", NodeSpec::Persistence::kNone},
    {"aof-everysec", NodeSpec::Persistence::kAofEverySec},
    {"aof-always", NodeSpec::Persistence::kAofAlways},
};
inline constexpr NamedValue<ClientSpec::Role> kRoles[] = {
    {"worker", ClientSpec::Role::kWorker},
    {"await", ClientSpec::Role::kAwait},
    {"count_down", ClientSpec::Role::kCountDown},
    {"add_permits", ClientSpec::Role::kAddPermits},
    {"reduce_permits", ClientSpec::Role::kReducePermits},
    {"try_set_permits", ClientSpec::Role::kTrySetPermits},
    {"drain_permits", ClientSpec::Role::kDrainPermits},
};
// A client group's side; kDrawn (no side key) has no word.
inline constexpr NamedValue<WorkloadSpec::Side> kSides[] = {
    {"read", WorkloadSpec::Side::kRead},
    {"write", WorkloadSpec::Side::kWrite},
};
inline constexpr NamedValue<WorkloadSpec::Mode> kModes[] = {
    {"trylock", WorkloadSpec::Mode::kTryLock},
    {"lock", WorkloadSpec::Mode::kLock},
};
inline constexpr NamedValue<Expectation> kExpectations[] = {
    {"hold", Expectation::kHold},
    {"violated", Expectation::kViolated},
    {"any", Expectation::kAny},
};
inline constexpr NamedValue<Distribution::Kind> kDistributions[] = {
    {"fixed", Distribution::Kind::kFixed},
    {"uniform", Distribution::Kind::kUniform},
    {"exponential", Distribution::Kind::kExponential},
    {"normal", Distribution::Kind::kNormal},
    {"pareto", Distribution::Kind::kPareto},
};

// The words of a table, in its order (what the loader offers and suggests from).
template <typename T, size_t N>
constexpr std::array<std::string_view, N> NamesOf(const NamedValue<T> (&table)[N]) {
  std::array<std::string_view, N> names{};
  for (size_t i = 0; i < N; ++i) names[i] = table[i].name;
  return names;
}

// The word for `value`. REQUIRES: the table has it.
template <typename T, size_t N>
constexpr std::string_view NameOf(const NamedValue<T> (&table)[N], T value) {
  for (const NamedValue<T>& entry : table) {
    if (entry.value == value) return entry.name;
  }
  assert(false && "a value without a word in its table");
  return {};
}

}  // namespace lockstep

#endif  // LOCKSTEP_MODEL_SCENARIO_NAMES_H_
