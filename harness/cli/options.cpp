// Options and option parsing that several kprop commands share.
#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <string>

#include "core/errors.h"
#include "generators/schema.h"
#include "harness/cli/commands.h"
#include "harness/cli/entry.h"
#include "harness/model/kernel.h"

namespace kprop {

CLI::Validator finite_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double v = 0;
        size_t used = 0;
        try {
          v = std::stod(text, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != text.size() || !std::isfinite(v) || v < lo || v > hi)
          return fmt::format("'{}' is not a number in {}..{}",
                             text.size() > 40 ? text.substr(0, 40) + "..." : text, lo, hi);
        return "";
      },
      fmt::format("NUMBER in {}..{}", lo, hi));
}

CLI::Validator not_negative() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const auto first = text.find_first_not_of(" \t");
        if (first != std::string::npos && text[first] == '-')
          return fmt::format("'{}' is negative", text.size() > 40 ? text.substr(0, 40) + "..." : text);
        return "";
      },
      "NON-NEGATIVE");
}

void add_common_options(CLI::App* cmd, CommonOptions& o) {
  cmd->add_flag("--json", o.json, "machine-readable output on stdout");
  cmd->add_option("--load", o.libraries, "shared library registering operators; repeatable");
  cmd->add_option("--import", o.imports,
                  "Python module registering operators with torch.library (python3 -m kprop "
                  "only); repeatable")
      ->allow_extra_args(false);  // `replay --import MODULE FILE`: FILE is no module
  cmd->add_option("--device", o.device,
                  "where implementations from outside run: cpu (default), cuda, cuda:N; "
                  "cases are drawn on the CPU")
      ->envname("KPROP_DEVICE");
  cmd->add_option("--oracle-device", o.oracle_device,
                  "where the float64 reference, the bounds and the comparisons run: auto "
                  "(default: the implementation's device where the kernel's oracle runs "
                  "there and the problem is not small), cpu, cuda, cuda:N")
      ->envname("KPROP_ORACLE_DEVICE");
}

RunOptions run_options(const CommonOptions& common, const IsolationOptions* isolation) {
  RunOptions run;
  run.libraries = common.libraries;
  run.imports = common.imports;
  run.device = common.device;
  run.oracle_device = common.oracle_device;
  if (isolation) {
    run.refusals = isolation->refusals;
    run.case_timeout = isolation->case_timeout;
    run.isolate = !isolation->in_process;
  }
  return run;
}

}  // namespace kprop
