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

void apply_isolation(const CommonOptions& common, const IsolationOptions& o) {
  declare_outside_refusals(o.refusals);
  IsolationSettings s;
  s.enabled = !o.in_process;
  s.command = entry().command;  // the Python entry's worker is the Python entry again
  s.libraries = common.libraries;
  s.imports = common.imports;
  s.device = common.device;
  s.oracle_device = common.oracle_device;
  s.refusals = o.refusals;
  s.case_timeout_seconds = o.case_timeout;
  set_isolation(s);
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
  CommonOptions common;
  common.libraries = o.libraries;
  common.imports = o.imports;
  common.device = o.device;
  common.oracle_device = o.oracle_device;
  load_libraries(common);
  declare_outside_refusals(o.refusals);
  return serve_isolated_cases(STDIN_FILENO, STDOUT_FILENO,
                              [](const Case& c) { return evaluate(c); });
}

}  // namespace kprop
