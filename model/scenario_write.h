// The way back: a Scenario -> scenario file text that the loader (model/scenario_toml.h) turns
// into the same Scenario again. Used to save what a program built or changed (a shrunk fuzz
// case, a scenario with one fault more) as a file a person can read, run and edit.
//
// The text looks like the files in scenarios/: the tables in the order docs/scenario-format.md
// gives, and only the keys whose values differ from the defaults, except those a reader looks
// for first (name, seed, duration_ms, every [[nodes]] and [[clients]] table, [protocol] kind
// and version, and [expect]). Consecutive clients that a `count` group would declare with the
// same names are written as one group.
//
// Exactness: LoadScenarioString(ScenarioToToml(s, o), <a file in o.directory>) equals s except
// for Scenario::file and FaultSpec::line (which say where the text came from), for every s the
// loader can produce. The file speaks milliseconds and the Scenario microseconds, so each time is
// written as the shortest number that the loader converts back to exactly the same value
// (integer times and [fuzz] ranges: ms * 1000 rounded to the microsecond; distribution
// parameters: the double ms * 1000, unrounded). A value no file
// can produce (a distribution parameter that is not ms * 1000 of any double ms, a field that the
// kind does not use) is written as the nearest value a file can give, or not at all.
#ifndef LOCKSTEP_MODEL_SCENARIO_WRITE_H_
#define LOCKSTEP_MODEL_SCENARIO_WRITE_H_

#include <string>
#include <string_view>

#include "model/scenario.h"

namespace lockstep {

struct ScenarioWriteOptions {
  // Comment lines at the top of the file, separated by '\n'; each is written as "# <line>"
  // ("#" alone for an empty line). Empty: no header.
  std::string header;
  // The directory the file will be written into. protocol.scripts paths, which the loader
  // resolves relative to the scenario file and the Scenario holds resolved, are written so
  // that they resolve to the same files from there: relative when that is short, else
  // absolute. Empty: the current directory (as for a file loaded by a bare name).
  std::string directory;
};

// The scenario file text for `s`, ending with a newline.
std::string ScenarioToToml(const Scenario& s, const ScenarioWriteOptions& options = {});

// A fault kind as a scenario file writes it: "partition", "clock_jump" ...
std::string_view FaultKindName(FaultSpec::Kind kind);

}  // namespace lockstep

#endif  // LOCKSTEP_MODEL_SCENARIO_WRITE_H_
