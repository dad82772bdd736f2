// What a run was doing at one moment, in words, read from its history file: which threads
// believed they held a lock then (and since when), and which operations were in flight. A
// differential failure's summary says this of the reference at the moment the base's first
// violation began ("the reference at 2.108 s: c2.t0 held "lock" since 2.056 s; c1.t0's acquire
// in flight since 1.950 s").
#ifndef LOCKSTEP_FUZZ_MOMENT_H_
#define LOCKSTEP_FUZZ_MOMENT_H_

#include <cstdint>
#include <optional>
#include <string>

namespace lockstep::fuzz {

// The state of the run in `history_path` at true time at_us, or nullopt with *error when the
// file cannot be read.
std::optional<std::string> DescribeMoment(const std::string& history_path, int64_t at_us,
                                          std::string* error);

}  // namespace lockstep::fuzz

#endif  // LOCKSTEP_FUZZ_MOMENT_H_
