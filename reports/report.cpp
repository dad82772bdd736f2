#include "reports/report.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "check/legacy.h"
#include "history/reader.h"
#include "reports/text.h"

namespace lockstep::reports {

namespace {

std::string_view DetailValue(std::string_view detail, std::string_view key) {
  size_t at = 0;
  while ((at = detail.find(key, at)) != std::string_view::npos) {
    if (at == 0 || detail[at - 1] == ' ') {
      std::string_view rest = detail.substr(at + key.size());
      return rest.substr(0, rest.find(' '));
    }
    at += key.size();
  }
  return {};
}

// Writes through a temporary name, so a failed write never leaves half a report behind.
bool WriteFile(const std::string& path, const std::string& text, std::string* error) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      *error = "cannot write " + tmp + ": " + std::strerror(errno);
      return false;
    }
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      *error = "write to " + tmp + " failed: " + std::strerror(errno);
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace

void DescribeScenario(const Scenario& scenario, ReportMeta* meta) {
  meta->scenario_name = scenario.name;
  meta->description = scenario.description;
  meta->seed = scenario.seed;
  meta->expect = scenario.expect;
  TimelineOptions& t = meta->timeline;
  t.node_names.clear();
  t.node_roles.clear();
  t.client_threads.clear();
  for (const NodeSpec& n : scenario.nodes) {
    t.node_names.push_back(n.name);
    t.node_roles.push_back(n.replica_of.empty() ? "master" : "replica of " + n.replica_of);
  }
  for (const ClientSpec& c : scenario.clients) t.client_threads.emplace_back(c.name, c.threads);
  t.start_unix_ms = scenario.start_unix_ms;
}

void DescribeFromHistory(const History& history, ReportMeta* meta) {
  // The notes come first in a history; a protocol note says what ran when the scenario's
  // derived parameters are not at hand.
  for (const Event& e : history.events()) {
    if (e.type != Event::Type::kNote || e.t_us > 0) break;
    if (e.op != "protocol" || e.detail.empty()) continue;
    const bool known = std::any_of(meta->parameters.begin(), meta->parameters.end(),
                                   [](const auto& p) { return p.first == "protocol"; });
    if (!known) meta->parameters.emplace_back("protocol", e.detail);
  }
  for (const Event& e : history.events()) {
    if (e.type != Event::Type::kNote || e.op != "run") continue;
    if (meta->scenario_name.empty())
      meta->scenario_name = std::string(DetailValue(e.detail, "scenario="));
    if (!meta->seed) {
      const std::string seed(DetailValue(e.detail, "seed="));
      if (!seed.empty() && seed.find_first_not_of("0123456789") == std::string::npos) {
        meta->seed = std::strtoull(seed.c_str(), nullptr, 10);
      }
    }
    break;
  }
}

bool WriteReports(const History& history, const check::Verdict& verdict, const ReportMeta& meta,
                  const std::string& dir, std::vector<WrittenFile>* written, std::string* error) {
  const Timeline timeline = BuildTimeline(history, meta.timeline);
  const std::pair<const char*,
                  std::string (*)(const Timeline&, const check::Verdict&, const ReportMeta&)>
      files[] = {
          {"report.html", RenderHtml}, {"trace.json", RenderTrace}, {"summary.md", RenderSummary}};
  for (const auto& [name, render] : files) {
    const std::string text = render(timeline, verdict, meta);
    const std::string path = dir + "/" + name;
    if (!WriteFile(path, text, error)) return false;
    if (written) written->push_back({path, text.size()});
  }
  return true;
}

// Until the timeline reads the typed History: the events as text.
namespace {
bool ReadLegacy(const std::string& path, History* out, std::string* error,
                const history::ReadOptions& options = {}) {
  history::NameTable names;
  check::LegacyHistorySink legacy(&names);
  history::ReadStats stats;
  if (!history::ReadHistoryFile(path, &names, &legacy, &stats, error, options)) return false;
  *out = legacy.history();
  return true;
}
}  // namespace

bool WriteReportsFromFile(const std::string& history_path, const check::Verdict& verdict,
                          const ReportMeta& meta, const std::string& dir,
                          std::vector<WrittenFile>* written, std::string* error) {
  History legacy;
  if (!ReadLegacy(history_path, &legacy, error)) return false;
  return WriteReports(legacy, verdict, meta, dir, written, error);
}

bool WriteReports(const history::History& history, const check::Verdict& verdict,
                  const ReportMeta& meta, const std::string& dir, std::vector<WrittenFile>* written,
                  std::string* error) {
  check::LegacyHistorySink legacy(&history.names());
  for (const history::Event& e : history.events()) legacy.OnEvent(e);
  return WriteReports(legacy.history(), verdict, meta, dir, written, error);
}

bool DescribeFromHistoryFile(const std::string& history_path, ReportMeta* meta, std::string* error) {
  History legacy;
  history::ReadOptions first;
  first.max_events = 64;
  if (!ReadLegacy(history_path, &legacy, error, first)) return false;
  DescribeFromHistory(legacy, meta);
  return true;
}

}  // namespace lockstep::reports
