// The scenario file loader: TOML text -> a validated Scenario (model/scenario.h).
//
// It is the only place that knows the file format; docs/scenario-format.md documents it key by
// key. Every problem is reported as a value (ScenarioError) naming the file, the line and column,
// and the full key ("faults[1].at_ms"), followed by what to change, because a user who gets
// "invalid scenario" with no position gives up. When a file has several problems, the one that
// comes first in the file is reported, so fixing errors top to bottom always works.
//
// toml++ stays behind this header: nothing downstream of the loader sees a TOML node.
#ifndef LOCKSTEP_MODEL_SCENARIO_TOML_H_
#define LOCKSTEP_MODEL_SCENARIO_TOML_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "history/kinds.h"
#include "history/names.h"
#include "model/limits.h"
#include "model/scenario.h"

namespace lockstep {

struct ScenarioError {
  std::string file;
  int line = 0;     // 1-based; 0 when the problem has no position (the file could not be read).
  int column = 0;   // 1-based.
  std::string key;  // Full key path: "workload.lease_ms", "nodes[0].clock.jumps[1].by_ms".
  std::string message;

  // "file:line:column: key 'workload.lease_ms': must not be negative, got -5". The key part is
  // left out when there is no key, the position when there is none.
  std::string ToString() const;
};

// Parses and validates a scenario file, fills every default and converts milliseconds to
// microseconds. On failure returns nullopt and fills *error (which must not be null).
std::optional<Scenario> LoadScenarioFile(const std::string& path, ScenarioError* error);

// The same for text already in memory. `source_name` stands for the file: it appears in error
// messages and in Scenario::file, gives the default scenario name (its stem), and its directory
// is where protocol.scripts paths are resolved.
std::optional<Scenario> LoadScenarioString(std::string_view toml, const std::string& source_name,
                                           ScenarioError* error);

// What the loader accepts: the protocol kinds and versions (history/kinds.h) and the
// properties an [expect] table may name (history/names.h).
using history::kProtocolKinds;
using history::kProtocolVersions;
using history::kProperties;

// The limits (kMaxNodes, kMaxDurationMs, ...) are in model/limits.h.

}  // namespace lockstep

#endif  // LOCKSTEP_MODEL_SCENARIO_TOML_H_
