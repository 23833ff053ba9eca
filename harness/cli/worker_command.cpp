// The isolation options of check, hunt, shrink and replay, and the hidden `kprop __worker`
// that an isolating kprop starts to run outside implementations (harness/execution/isolation.h).
#include <fmt/format.h>
#include <unistd.h>

#include "harness/cli/commands.h"
#include "harness/cli/entry.h"
#include "harness/engine/property.h"
#include "harness/execution/isolation.h"

namespace kprop {

void add_isolation_options(CLI::App* cmd, IsolationOptions& o) {
  cmd->add_option("--refusal", o.refusals,
                  "TEXT: an error of an outside implementation (NS::kernel) whose message "
                  "holds TEXT is a refusal, not a failure; repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--case-timeout", o.case_timeout,
                  "seconds an outside implementation may take per case before it counts as "
                  "a hang (default: 20)")
      ->check(finite_in(0.001, 1e6));
  cmd->add_flag("--no-isolation", o.in_process,
                "run outside implementations in kprop's own process (a crash ends kprop)");
}

void add_worker_command(CLI::App& app, WorkerOptions& o) {
  auto* cmd = app.add_subcommand("__worker", "answers cases for an isolating kprop");
  cmd->group("");  // hidden from --help: only kprop starts it
  cmd->add_option("--load", o.libraries, "operator library; repeatable");
  cmd->add_option("--import", o.imports, "Python module; repeatable");
  cmd->add_option("--device", o.device, "where outside implementations run");
  cmd->add_option("--oracle-device", o.oracle_device, "where the float64 oracle runs");
  cmd->add_option("--refusal", o.refusals, "declared refusal text; repeatable")
      ->allow_extra_args(false);
}

int run_worker(const WorkerOptions& o) {
  RunOptions run;  // its cases run here, in-process: the worker is the isolation
  run.libraries = o.libraries;
  run.imports = o.imports;
  run.device = o.device;
  run.oracle_device = o.oracle_device;
  run.refusals = o.refusals;
  const auto session = open_session(run);
  return serve_isolated_cases(STDIN_FILENO, STDOUT_FILENO,
                              [](const Case& c) { return evaluate(c); });
}

}  // namespace kprop
