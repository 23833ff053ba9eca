// replay: rebuild each kept case bit for bit from its seed and check that every
// implementation still does what its file records (harness/engine/replay.h). The CLI's
// `kprop replay` and the Python API's `kprop.replay` are two fronts of this function.
//
// Every path is reported, a bad one with its message; the exit code is the worst one
// (2 a file or path that could not be replayed > 1 a file that changed > 0). With `impl`
// only that implementation runs, judged like check: only a pass passes.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/api/run_options.h"
#include "harness/engine/replay.h"

namespace kprop {

struct ReplayRequest {
  RunOptions run;  // isolate: an outside implementation that crashes replays its crash
  std::vector<std::string> paths;  // case files or folders of them
  std::string impl;                // only this implementation, judged like check
  bool builtin_only = false;       // only kprop's own implementations the file names
};

// One path's outcome: a replayed file, or why it could not be replayed.
struct ReplayedFile {
  std::string path;
  std::optional<ReplayResult> result;  // none: `error` says why
  std::string error;
  bool ok = false;  // as recorded (or, with an impl, a pass)
};

struct ReplayReport {
  std::vector<ReplayedFile> files;
  int exit_code = 0;
  bool passed() const { return exit_code == 0; }
};

// Opens the run's session and replays; `on_file` sees each file as it is done.
ReplayReport replay_files(const ReplayRequest& request,
                          const std::function<void(const ReplayedFile&)>& on_file = {});

// The replayed files (not the bad ones) as `kprop replay --json` prints them.
nlohmann::json to_json(const ReplayReport& report);
nlohmann::json to_json(const ReplayResult& replayed);

}  // namespace kprop
