#include "cli/run_store.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/common.h"
#include "cli/subcommands.h"
#include "reports/text.h"

namespace fs = std::filesystem;

namespace lockstep::cli {

using reports::HtmlEscape;

namespace {

// The files a run writes in its folder (history/writer.h, reports/report.h, cmd_run.cpp).
constexpr const char* kRunFiles[] = {"history.bin", "history.jsonl", "history.jsonl.gz", "summary.txt",
                                     "report.html",   "trace.json",       "summary.md",
                                     "seeds.txt"};

// At most this many runs in index.html, the newest.
constexpr size_t kIndexRuns = 5000;

// A path relative to index.html, for an href: each part percent-encoded where it must be.
std::string Href(const std::string& relative) {
  std::string out;
  for (unsigned char c : relative) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

struct StoredRun {
  std::string scenario;  // Its folder under the root.
  std::string name;      // The run's folder: <time>-seed<N>.
  std::string result;    // PASS, FAIL, INTERRUPTED, or ? when summary.txt says none.
  std::string violated;  // "mutual_exclusion, lease_safety".
  bool report = false;
};

StoredRun ReadRun(const fs::path& dir) {
  StoredRun r;
  r.name = dir.filename().string();
  r.scenario = dir.parent_path().filename().string();
  r.result = "?";
  std::ifstream in(dir / "summary.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("result     ", 0) == 0) {
      const std::string rest = line.substr(11);
      r.result = rest.substr(0, rest.find_first_of(": "));
    } else if (line.size() > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ' &&
               line.find(" VIOLATED ") != std::string::npos) {
      const std::string property = line.substr(2, line.find(' ', 2) - 2);
      r.violated += (r.violated.empty() ? "" : ", ") + property;
    }
  }
  std::error_code ec;
  r.report = fs::is_regular_file(dir / "report.html", ec);
  return r;
}

std::string IndexHtml(const std::vector<StoredRun>& runs, size_t total) {
  std::ostringstream h;
  h << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    << "<title>lockstep runs</title>\n<style>\n"
    << "body{font:14px system-ui,sans-serif;margin:2em;color:#222}\n"
    << "table{border-collapse:collapse}td,th{padding:.3em .8em;text-align:left;"
       "border-bottom:1px solid #ddd}\n"
    << ".PASS{color:#17631d;font-weight:600}.FAIL{color:#b3261e;font-weight:600}"
       ".INTERRUPTED{color:#8a5a00;font-weight:600}\n"
    << "</style></head><body>\n<h1>lockstep runs</h1>\n<p>" << total << " run"
    << (total == 1 ? "" : "s") << " under this folder, newest first"
    << (total > runs.size() ? " (the newest " + std::to_string(runs.size()) + " shown)" : "")
    << ". Each folder holds the run's history, <code>summary.txt</code> and reports;"
       " <code>&lt;scenario&gt;/latest</code> is the newest run of a scenario.</p>\n"
    << "<table>\n<tr><th>run</th><th>scenario</th><th>result</th><th>violated</th>"
       "<th>files</th></tr>\n";
  for (const StoredRun& r : runs) {
    const std::string base = r.scenario + "/" + r.name + "/";
    h << "<tr><td>" << HtmlEscape(r.name) << "</td><td>" << HtmlEscape(r.scenario)
      << "</td><td class=\"" << HtmlEscape(r.result) << "\">" << HtmlEscape(r.result)
      << "</td><td>" << HtmlEscape(r.violated) << "</td><td>";
    if (r.report) h << "<a href=\"" << Href(base + "report.html") << "\">report</a> ";
    h << "<a href=\"" << Href(base + "summary.txt") << "\">summary</a></td></tr>\n";
  }
  h << "</table>\n</body></html>\n";
  return h.str();
}

}  // namespace

std::string NewRunDir(const std::string& root, const std::string& scenario, const std::string& what) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &utc);
  const std::string base = root + "/" + scenario + "/" + stamp + "-" + what;
  std::string dir = base;
  std::error_code ec;
  for (int n = 2; fs::exists(dir, ec); ++n) dir = base + "-" + std::to_string(n);
  return dir;
}

bool HoldsRun(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / "summary.txt", ec);
}

bool ClearRun(const std::string& dir, std::string* error) {
  for (const char* name : kRunFiles) {
    std::error_code ec;
    fs::remove(fs::path(dir) / name, ec);
    if (ec) {
      *error = "cannot remove " + (fs::path(dir) / name).string() + ": " + ec.message();
      return false;
    }
  }
  return true;
}

std::string RunStoreRoot() {
  const char* env = std::getenv("LOCKSTEP_STORE");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string("lockstep-out");
}

std::string StoredLine(const std::string& run_dir, const std::string& scenario) {
  std::error_code ec;
  const std::string root = RunStoreRoot();
  const std::string where = std::filesystem::absolute(root, ec).lexically_normal().string();
  return "stored     " + run_dir + " (latest: " + root + "/" + scenario + "/latest; every run: " +
         root + "/index.html; the store is " + (ec ? root : where) +
         (std::getenv("LOCKSTEP_STORE") != nullptr && *std::getenv("LOCKSTEP_STORE") != '\0'
              ? ", from LOCKSTEP_STORE)\n"
              : ", under the current directory: set LOCKSTEP_STORE to keep one store)\n");
}

std::optional<int> ChooseRunDir(const std::string& command, const std::string& scenario,
                                const std::string& what, bool force,
                                const std::vector<std::string>& subdirs, std::string* out_dir,
                                bool* stored) {
  *stored = out_dir->empty();
  if (*stored) {
    *out_dir = NewRunDir(RunStoreRoot(), scenario, what);
    return std::nullopt;
  }
  if (!HoldsRun(*out_dir)) return std::nullopt;
  if (!force) {
    std::cerr << "lockstep " << command << ": --out " << *out_dir
              << " holds an earlier run (its summary.txt): pass --force to replace it, choose "
                 "another --out, or leave --out out to keep every run in "
              << RunStoreRoot() << "/\n";
    return kExitBadInput;
  }
  std::string error;
  bool cleared = ClearRun(*out_dir, &error);
  for (const std::string& sub : subdirs) cleared = cleared && ClearRun(*out_dir + "/" + sub, &error);
  if (!cleared) {
    std::cerr << "lockstep " << command << ": --force: " << error << "\n";
    return kExitFailed;
  }
  return std::nullopt;
}

bool UpdateRunStore(const std::string& root, const std::string& run_dir, std::string* error) {
  const fs::path run(run_dir);
  const fs::path scenario_dir = run.parent_path();
  // latest: a new link under a temporary name, renamed over the old one (never missing).
  const fs::path latest = scenario_dir / "latest";
  const fs::path staged = scenario_dir / ".latest.tmp";
  std::error_code ec;
  fs::remove(staged, ec);
  fs::create_directory_symlink(run.filename(), staged, ec);
  if (!ec) fs::rename(staged, latest, ec);
  if (ec) {
    *error = "cannot point " + latest.string() + " at " + run.filename().string() + ": " +
             ec.message();
    return false;
  }
  // index.html, from every run folder (one with a summary.txt) two levels down.
  std::vector<StoredRun> runs;
  for (fs::directory_iterator s(root, ec), end; !ec && s != end; s.increment(ec)) {
    if (!s->is_directory(ec) || s->is_symlink(ec)) continue;
    std::error_code ec2;
    for (fs::directory_iterator r(s->path(), ec2), end2; !ec2 && r != end2; r.increment(ec2)) {
      if (r->is_symlink(ec2) || !r->is_directory(ec2)) continue;
      if (!HoldsRun(r->path().string())) continue;
      runs.push_back(ReadRun(r->path()));
    }
  }
  // Newest first: the folder names start with the time; ties by scenario, then name.
  std::sort(runs.begin(), runs.end(), [](const StoredRun& a, const StoredRun& b) {
    if (a.name.substr(0, 15) != b.name.substr(0, 15)) return a.name > b.name;
    return a.scenario != b.scenario ? a.scenario < b.scenario : a.name > b.name;
  });
  const size_t total = runs.size();
  if (runs.size() > kIndexRuns) runs.resize(kIndexRuns);
  return WriteWholeFile(root + "/index.html", IndexHtml(runs, total), error);
}

}  // namespace lockstep::cli
