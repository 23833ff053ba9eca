// kprop replay FILE|DIR: rebuild each case bit for bit from its seed and check that every
// implementation still does what the file records (ctest runs this for every corpus file).
// With --impl NAME only that implementation runs, judged like check: 0 pass, 1 fail;
// with --builtin-only kprop's own implementations run, judged as recorded.
#include <fmt/format.h>

#include "core/errors.h"
#include "harness/cli/commands.h"
#include "harness/cli/entry.h"
#include "harness/cli/style.h"
#include "harness/engine/corpus.h"
#include "harness/engine/replay.h"
#include "harness/model/kernel_info.h"
#include "harness/presentation/report.h"

namespace kprop {

void add_replay_command(CLI::App& app, ReplayOptions& o) {
  auto* cmd = app.add_subcommand("replay", "replay case files and check their recorded verdicts");
  cmd->add_option("paths", o.paths, "case files or folders")->required();
  auto* impl =
      cmd->add_option("--impl", o.impl, "run only this implementation (exit 1 if it fails)");
  cmd->add_flag("--builtin-only", o.builtin_only,
                "replay kprop's own implementations only: a case kept from an outside kernel "
                "(NS::kernel) replays without it")
      ->excludes(impl);
  add_common_options(cmd, o.common);
  add_isolation_options(cmd, o.isolation);
}

namespace {

void print_replay(const ReplayResult& r) {
  fmt::print("{} {}\n", bold(r.file.path), r.as_recorded() ? green("as recorded") : red("CHANGED"));
  fmt::print("  {}\n", summary(find_kernel(r.file.c.kernel).schema(), r.file.c));
  if (!r.fingerprint_matches)
    fmt::print("  {} inputs rebuilt from the seed differ: {} (recorded {})\n", red("!"),
               r.fingerprint, r.file.inputs_fingerprint);
  for (const auto& run : r.runs) {
    const std::string got = to_string(run.verdict.status);
    const std::string want = run.expected ? to_string(*run.expected) : "-";
    fmt::print("  {:<16} {:<9} expected {:<9} {}\n", run.impl, got, want,
               run.as_expected() ? green("ok") : red("MISMATCH"));
  }
  if (!r.signature_matches)
    fmt::print("  {} signature changed; recorded: {}\n", red("!"), r.file.signature);
  // The error table of the case's own implementation (or the only one run).
  for (const auto& run : r.runs)
    if (run.impl == r.file.c.impl || r.runs.size() == 1) {
      fmt::print("  {}: {}\n", run.impl, run.verdict.failed() ? run.verdict.signature()
                                                             : run.verdict.message);
      if (!run.verdict.tensors.empty() || !run.verdict.memory.empty())
        fmt::print("{}", format_error_table(run.verdict));
      if (run.verdict.fault) fmt::print("  {}\n", run.verdict.message);
      break;
    }
}

nlohmann::json replay_json(const ReplayResult& r) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : r.runs)
    runs.push_back({{"impl", run.impl},
                    {"expected", run.expected ? to_string(*run.expected) : ""},
                    {"as_expected", run.as_expected()},
                    {"verdict", verdict_to_json(run.verdict)}});
  return {{"path", r.file.path},
          {"case", case_to_json(r.file.c)},
          {"as_recorded", r.as_recorded()},
          {"fingerprint", r.fingerprint},
          {"fingerprint_matches", r.fingerprint_matches},
          {"signature_matches", r.signature_matches},
          {"runs", runs}};
}

}  // namespace

namespace {

// The case files to replay: every path must give at least one (an empty folder, or a
// folder named x.json, would otherwise replay nothing and pass). A path that cannot be
// listed is reported and counted as a bad file, and the other paths still replay.
std::vector<std::string> files_to_replay(const std::vector<std::string>& paths, bool& bad) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    try {
      const auto found = case_files_under({p});
      if (found.empty())
        throw CaseError(fmt::format("{}: no case files (*.json) in this folder", p));
      files.insert(files.end(), found.begin(), found.end());
    } catch (const std::exception& e) {
      fmt::print(stderr, "kprop: {}\n", e.what());
      bad = true;
    }
  }
  return files;
}

}  // namespace

int run_replay(const ReplayOptions& o) {
  load_libraries(o.common);
  // An outside implementation that crashes replays its crash in a worker, as found.
  apply_isolation(o.common, o.isolation);
  nlohmann::json all = nlohmann::json::array();
  bool bad_file = false, changed = false;
  // Every file is reported, a bad one by its name; the exit code is the worst (2 > 1 > 0).
  for (const auto& path : files_to_replay(o.paths, bad_file)) {
    try {
      const CaseFile f = read_case_file(path);
      if (f.expect.empty() && o.impl.empty()) {
        // A hand-written case: nothing recorded to check it against yet.
        throw CaseError(fmt::format("{}: no expectations to replay (run `kprop shrink {}` first)",
                                    path, path));
      }
      const ReplayResult r = replay(f, o.impl, o.builtin_only);
      // One implementation is judged like check: only a pass passes (a refusal or a skip
      // checked nothing).
      const bool ok = o.impl.empty() ? r.as_recorded()
                                     : r.runs[0].verdict.status == Verdict::Status::pass;
      changed |= !ok;
      all.push_back(replay_json(r));
      if (!o.common.json) print_replay(r);
    } catch (const CaseError& e) {
      fmt::print(stderr, "kprop: {}\n", e.what());
      bad_file = true;
    } catch (const std::exception& e) {
      // An unknown --impl, a kernel error: still named, and the other files still replay.
      fmt::print(stderr, "kprop: {}: {}\n", path, e.what());
      bad_file = true;
    }
  }
  if (entry().result) entry().result(all.dump());
  if (o.common.json) fmt::print("{}\n", all.dump(2));
  return bad_file ? 2 : changed ? 1 : 0;
}

}  // namespace kprop
