// check: a search of one kernel's cases against one implementation, its failures shrunk,
// kept in the corpus and reported (docs/design.md §6). The CLI's `kprop check` and the
// Python API's `kprop.check` are two fronts of this one function: each turns its own
// options into a CheckRequest and presents the CheckReport.
//
// Nothing found is lost: the corpus folder is checked before the search (a UsageError), a
// finding that cannot be written comes back whole (CheckReport::unwritten), and an
// interrupt (SIGINT, SIGTERM) ends the search with the counts so far (stopped). A run where
// most cases were refused checked little: it fails, naming the commonest refusal.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/api/run_options.h"
#include "harness/engine/corpus.h"
#include "harness/engine/runner.h"
#include "harness/execution/isolation.h"

namespace kprop {

struct CheckRequest {
  RunOptions run;
  std::string kernel;  // empty: the registry's default
  std::string impl;    // empty: the kernel's default implementation
  int64_t cases = 1000;
  uint64_t seed = 0;
  std::vector<std::string> properties;  // empty: all of the kernel's, in turn
  std::vector<std::string> dtypes;      // names; empty: each property's own
  std::vector<std::string> set;         // NAME=VALUE: parameters pinned for every case
  std::vector<std::string> limits;      // NAME=N: the schema's generator limits
  bool shrink = true;
  double shrink_seconds = 60;
  std::string corpus;  // where new minimal failures are kept; empty: nowhere, none known
  // How the run is named in what it writes down (a case file's found_by), before its
  // options: "kprop", "python3 -m kprop".
  std::string entry_name = "kprop";
};

// What the run is about to do, before its first case.
struct CheckPlan {
  std::string kernel, impl;  // resolved
  std::vector<std::string> properties;  // in turn
  uint64_t seed = 0;
  int64_t cases = 0;
  size_t known_identities = 0;  // in the corpus: failures showing only these are known
  std::string corpus;
  std::vector<std::string> stale;  // files a killed writer left in the corpus, removed
  // The implementation takes no float64, so `gradient` checks its backward in this dtype.
  std::optional<DType> gradient_dtype;
};

struct CheckReport {
  CheckPlan plan;
  SearchResult search;
  bool stopped = false;          // an interrupt ended the search before its last case
  std::string interrupted_by;    // "SIGINT", "SIGTERM", or "" (also when it came while shrinking)
  std::optional<Kept> kept;      // the first new defect's case file
  std::vector<Kept> also_kept;   // the others the failing case shows, in order
  std::vector<std::pair<std::string, CaseFile>> unwritten;  // why, and the file whole
  // The commonest refusal, with its count, when most cases run were refused.
  std::optional<std::pair<std::string, int64_t>> mostly_refused;
  IsolationStats isolated;  // this run's cases in worker processes
  // 0 pass, 1 a failure or mostly refused, 128 + the signal when interrupted without one.
  int exit_code = 0;
  bool passed() const { return exit_code == 0; }
};

struct CheckCallbacks {
  std::function<void(const CheckPlan&)> on_start;  // before the first case
  // After every case and shrink step, as SearchOptions::on_progress.
  std::function<void(const Tally&, const std::string& phase)> on_progress;
};

// Opens the run's session (request.run), searches and keeps. Bad usage (an unknown kernel,
// implementation, property or dtype, a bad setting, a corpus that cannot be written) is a
// UsageError, before the first case.
CheckReport check(const CheckRequest& request, const CheckCallbacks& callbacks = {});

// The report as `kprop check --json` prints it.
nlohmann::json to_json(const CheckReport& report);

// Cases a property applied to (not skipped): what the implementation was asked.
int64_t cases_run(const Tally& t);

}  // namespace kprop
