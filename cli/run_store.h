// Where `lockstep run` keeps its runs when no --out is given: a run store.
//
//   lockstep-out/
//     index.html                          every run, newest first: scenario, seed, result, links
//     <scenario>/
//       latest -> 20261126-191502-seed5   the newest run of the scenario (a relative symlink)
//       20261126-191502-seed5/            one run: history, summary.txt, reports
//       20261126-190044-seeds1-200/       a --seeds sweep (seeds.txt, the first failing seed)
//
// A run never replaces another: each gets a new folder named by the time it started (UTC) and
// its seed. An --out that already holds a run (its summary.txt) is refused unless --force.
#ifndef LOCKSTEP_CLI_RUN_STORE_H_
#define LOCKSTEP_CLI_RUN_STORE_H_

#include <optional>
#include <string>
#include <vector>

namespace lockstep::cli {

// Where the run store is: $LOCKSTEP_STORE when it is set and not empty, else lockstep-out
// under the current directory. Every command that stores a run says where it put it.
std::string RunStoreRoot();

// The line a stored run ends with: "stored     DIR (the store: /abs/ROOT, ...)".
std::string StoredLine(const std::string& run_dir, const std::string& scenario);

// ROOT/<scenario>/<UTC yyyymmdd-hhmmss>-<what>, with -2, -3 ... added if that exists already.
// Creates nothing.
std::string NewRunDir(const std::string& root, const std::string& scenario, const std::string& what);

// Whether `dir` holds an earlier run (a summary.txt).
bool HoldsRun(const std::string& dir);

// The files a run writes in its folder, removed before a run replaces it (--force), so that
// nothing of the earlier run (a report the new one does not make) is left to be mistaken for
// the new one's.
bool ClearRun(const std::string& dir, std::string* error);

// Where `lockstep COMMAND` writes a run: with no --out (*out_dir empty), a new store folder
// ROOT/<scenario>/<time>-<what> (*stored set); an --out that holds a run only with `force`,
// which clears it and its `subdirs` first. nullopt: go on; else the exit status to stop with,
// after saying why on stderr.
std::optional<int> ChooseRunDir(const std::string& command, const std::string& scenario,
                                const std::string& what, bool force,
                                const std::vector<std::string>& subdirs, std::string* out_dir,
                                bool* stored);

// After a run in the store finished: points ROOT/<scenario>/latest at it and writes
// ROOT/index.html anew from every run folder under ROOT.
bool UpdateRunStore(const std::string& root, const std::string& run_dir, std::string* error);

}  // namespace lockstep::cli

#endif  // LOCKSTEP_CLI_RUN_STORE_H_
