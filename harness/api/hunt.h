// hunt: look for each known defect of a kernel's historical states, shrink it to a minimal
// case and keep it in the corpus under the defect's name (docs/design.md §6). Other failures
// met on the way are shrunk and set aside. The CLI's `kprop hunt` and the Python API's
// `kprop.hunt` are two fronts of this function.
//
// An interrupt ends the hunt after the defects found so far (each kept as it is found); a
// shrink in progress ends with its smallest case, which is kept.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/api/run_options.h"
#include "harness/engine/corpus.h"
#include "harness/engine/runner.h"

namespace kprop {

struct HuntRequest {
  RunOptions run;
  std::string kernel;                // empty: the registry's default
  std::vector<std::string> defects;  // names; empty: all known defects of the kernel
  uint64_t seed = 0;
  int64_t cases = 5000;              // per hunt
  std::string corpus;                // where each found defect is kept; empty: nowhere
};

// One defect hunted on one of its implementations.
struct Hunt {
  std::string defect, impl;
  int64_t cases = 0;       // drawn until it was found, or all of them
  double seconds = 0;
  std::optional<Failure> found;  // its minimal failure; none: missed
  std::optional<Kept> kept;      // with a corpus
  std::optional<CaseFile> unwritten;  // the case file, whole, when it could not be kept
};

struct HuntReport {
  std::string kernel;
  std::vector<Hunt> hunts;
  bool stopped = false;            // an interrupt ended the hunt before its last defect
  std::string interrupted_by;      // "SIGINT", "SIGTERM", or ""
  // 0 every defect found; 1 one missed; 128 + the signal when interrupted with none missed.
  int exit_code = 0;
  bool passed() const { return exit_code == 0; }
};

struct HuntCallbacks {
  // Before the first hunt: the files a killed writer left in the corpus, now removed.
  std::function<void(const std::vector<std::string>& stale)> on_start;
  std::function<void(const Hunt&)> on_hunt;  // as each hunt ends
};

// Opens the run's session and hunts. An unknown kernel or defect, or a kernel with none,
// is a UsageError before the first hunt.
HuntReport hunt(const HuntRequest& request, const HuntCallbacks& callbacks = {});

// The hunts as `kprop hunt --json` prints them.
nlohmann::json to_json(const HuntReport& report);

}  // namespace kprop
