// kprop: property-based and differential testing of ML compute kernels.
//
// Exit codes: 0 pass, 1 a property failed, 2 bad usage or a bad case.
#include <c10/util/Exception.h>
#include <fmt/format.h>

#include "harness/cli/commands.h"
#include "harness/errors.h"
#include "kernels/common/dispatch.h"

namespace kprop {

void add_common_options(CLI::App* cmd, CommonOptions& o) {
  cmd->add_flag("--json", o.json, "machine-readable output on stdout");
  cmd->add_option("--load", o.libraries, "shared library registering operators; repeatable");
}

void load_libraries(const CommonOptions& o) {
  for (const auto& path : o.libraries) {
    try {
      load_operator_library(path);
    } catch (const c10::Error& e) {
      throw UsageError(e.what_without_backtrace());
    }
  }
}

}  // namespace kprop

int main(int argc, char** argv) {
  CLI::App app{"kprop: property-based and differential testing of ML compute kernels"};
  app.require_subcommand(1);
  kprop::CheckOptions check;
  kprop::HuntOptions hunt;
  kprop::ReplayOptions replay;
  kprop::ReportOptions report;
  kprop::SweepOptions sweep;
  kprop::add_check_command(app, check);
  kprop::add_hunt_command(app, hunt);
  kprop::add_replay_command(app, replay);
  kprop::add_report_command(app, report);
  kprop::add_sweep_command(app, sweep);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    if (app.got_subcommand("check")) return kprop::run_check(check);
    if (app.got_subcommand("hunt")) return kprop::run_hunt(hunt);
    if (app.got_subcommand("replay")) return kprop::run_replay(replay);
    if (app.got_subcommand("report")) return kprop::run_report(report);
    if (app.got_subcommand("sweep")) return kprop::run_sweep(sweep);
  } catch (const kprop::UsageError& e) {
    fmt::print(stderr, "kprop: {}\n", e.what());
    return 2;
  } catch (const kprop::CaseError& e) {
    fmt::print(stderr, "kprop: {}\n", e.what());
    return 2;
  } catch (const kprop::FileError& e) {
    fmt::print(stderr, "kprop: {}\n", e.what());
    return 2;
  }
  return 2;
}
