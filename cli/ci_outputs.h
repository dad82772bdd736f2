// What `lockstep run --json FILE` and `--junit FILE` write: one run's verdict for a machine
// (a CI job, a dashboard). The JSON schema is documented in docs/ci.md ("lockstep-run/1");
// the JUnit XML has one testcase per property, failed when the verdict does not match the
// scenario's [expect] and skipped when the property is not judged.
#ifndef LOCKSTEP_CLI_CI_OUTPUTS_H_
#define LOCKSTEP_CLI_CI_OUTPUTS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "check/verdict.h"
#include "model/scenario.h"
#include "reports/report.h"

namespace lockstep::cli {

// One run, as the run command saw it.
struct RunRecord {
  const Scenario* scenario = nullptr;
  std::string file;  // As given on the command line.
  const check::Verdict* verdict = nullptr;
  const check::Judgement* judgement = nullptr;
  bool interrupted = false;
  int64_t end_us = 0;                // Where the run ended (an interrupted one: early).
  std::string history_format;        // "jsonl", "jsonl.gz", "none".
  std::string history_path;          // Empty when none was kept.
  uint64_t history_events = 0;
  std::string history_hash;          // Hex; of the file, or empty when none was kept.
  std::vector<reports::WrittenFile> reports;
  std::string reproduce;
  double wall_s = 0;                 // Simulating and checking.
  double reports_s = 0;
  long peak_rss_kib = 0;
};

// "pass", "fail" (the verdict does not match [expect]) or "interrupted".
std::string RunResultWord(const RunRecord& r);

std::string RunJson(const RunRecord& r);
std::string RunJunit(const RunRecord& r);

// Text made safe for an XML attribute or element: &, <, >, " escaped; control characters other
// than newline and tab (which XML 1.0 cannot carry) become spaces.
std::string XmlEscape(std::string_view s);

}  // namespace lockstep::cli

#endif  // LOCKSTEP_CLI_CI_OUTPUTS_H_
