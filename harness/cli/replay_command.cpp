// kprop replay FILE|DIR: the command line of replay (harness/api/replay.h): rebuild each case
// bit for bit from its seed and check that every implementation still does what the file
// records (ctest runs this for every corpus file).
// With --impl NAME only that implementation runs, judged like check: 0 pass, 1 fail;
// with --builtin-only kprop's own implementations run, judged as recorded.
#include <fmt/format.h>

#include "core/errors.h"
#include "harness/api/replay.h"
#include "harness/cli/commands.h"
#include "harness/cli/entry.h"
#include "harness/cli/style.h"
#include "harness/engine/corpus.h"
#include "harness/engine/replay.h"
#include "harness/model/kernel.h"
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

}  // namespace

int run_replay(const ReplayOptions& o) {
  ReplayRequest request;
  request.run = run_options(o.common, &o.isolation);
  request.paths = o.paths;
  request.impl = o.impl;
  request.builtin_only = o.builtin_only;
  const ReplayReport report = replay_files(request, [&](const ReplayedFile& f) {
    if (!f.result) fmt::print(stderr, "kprop: {}\n", f.error);
    else if (!o.common.json) print_replay(*f.result);
  });
  const nlohmann::json all = to_json(report);
  if (entry().result) entry().result(all.dump());
  if (o.common.json) fmt::print("{}\n", all.dump(2));
  return report.exit_code;
}

}  // namespace kprop
