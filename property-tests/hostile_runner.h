// Runs hostile inputs through lockstep's subcommands, each in a child process of its own, so
// that a crash, a sanitizer report, a hang or runaway memory in one case is observed and
// counted instead of taking the test down with it.
//
// A case is a subcommand's entry point (cli::RunMain, EvalMain, EmuMain) with its arguments
// and, for emu, its stdin. The child is forked from the test process (no exec: the subcommand
// runs in the same binary, as `lockstep` would run it), with stdout discarded, stderr kept in
// a file for the verdict, and a CPU-time limit as a backstop (SIGXCPU). The parent keeps up to
// `jobs` children running and kills one that outlives its wall-clock bound.
#ifndef LOCKSTEP_PROPERTY_TESTS_HOSTILE_RUNNER_H_
#define LOCKSTEP_PROPERTY_TESTS_HOSTILE_RUNNER_H_

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace lockstep::hostile {

struct Case {
  std::string name;                         // e.g. "scenario 17: contention-10 value"
  std::function<int()> body;                // runs in the child; returns the exit status
  std::string stdin_text;                   // what the child reads on stdin
  std::set<int> allowed_exits;              // e.g. {2} for input that must be refused
  std::string input_for_failure;            // kept in the failure folder to reproduce it
};

struct Outcome {
  int exit_code = -1;        // when the child exited
  int signal = 0;            // when a signal ended it (SIGXCPU: past the CPU bound)
  bool killed_wall = false;  // outlived the wall-clock bound
  double cpu_seconds = 0;    // user + system of the child
  std::string stderr_text;   // the first 64 KiB
};

// Why an outcome is a failure of the case, or "" when it is fine: a signal, the bound, a
// sanitizer report, an internal error, an exit status outside the allowed set, or exit 2
// without a message.
std::string Judge(const Case& c, const Outcome& o);

struct Summary {
  int cases = 0;
  int failures = 0;
  std::vector<int> exits_by_code = std::vector<int>(256, 0);
  double max_cpu_seconds = 0;
  std::string slowest;
  std::vector<std::string> failure_lines;  // "name: why" for each failing case
};

// Runs every case, at most `jobs` at once, each with `cpu_limit_seconds` of CPU and four times
// that (plus 5 s) of wall time. Failing cases' inputs are written to `failure_dir`.
Summary RunCases(const std::vector<Case>& cases, int jobs, double cpu_limit_seconds,
                 const std::string& scratch_dir, const std::string& failure_dir);

// A multi-line account of the summary: counts per exit status, the slowest case, failures.
std::string FormatSummary(const std::string& title, const Summary& s);

}  // namespace lockstep::hostile

#endif  // LOCKSTEP_PROPERTY_TESTS_HOSTILE_RUNNER_H_
