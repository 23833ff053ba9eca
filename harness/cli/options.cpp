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
#include "harness/execution/device.h"
#include "harness/execution/dispatch.h"
#include "harness/model/kernel_info.h"

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

void load_libraries(const CommonOptions& o) {
  set_outside_device(o.device);
  set_oracle_device(o.oracle_device);
  for (const auto& path : o.libraries) {
    try {
      load_operator_library(path);
    } catch (const c10::Error& e) {
      throw UsageError(e.what_without_backtrace());
    }
  }
  if (!o.imports.empty() && !entry().import_module)
    throw UsageError(fmt::format(
        "--import {}: only kprop's Python entry imports modules: python3 -m kprop ... "
        "(README: Python and Triton kernels)",
        o.imports.front()));
  for (const auto& module : o.imports) entry().import_module(module);
}

std::string kernel_or_default(const std::string& kernel) {
  if (kernel.empty()) return default_kernel();
  find_kernel(kernel);  // an unknown name lists the known ones
  return kernel;
}

namespace {
std::pair<std::string, std::string> name_and_value(const std::string& setting, const char* flag) {
  const auto eq = setting.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError(fmt::format("{} '{}': expected NAME=VALUE", flag, setting));
  return {setting.substr(0, eq), setting.substr(eq + 1)};
}
}  // namespace

std::map<std::string, ParamValue> parse_settings(const std::string& kernel,
                                                 const std::vector<std::string>& settings) {
  const Schema& schema = find_kernel(kernel).schema();
  std::map<std::string, ParamValue> out;
  for (const auto& s : settings) {
    const auto [name, value] = name_and_value(s, "--set");
    if (name == "cotangents") {  // the case's choice, pinned as a parameter is
      if (!parse_cotangents(value))
        throw UsageError(fmt::format("--set cotangents: unknown value '{}' ({})", value,
                                     cotangent_names(", ")));
      out[name] = value;
      continue;
    }
    const ParamSpec* spec = schema.find(name);
    if (!spec)
      throw UsageError(fmt::format("--set {}: not a parameter of {}; parameters: {}", name,
                                   kernel, fmt::join(schema.param_names(), ", ")));
    try {
      out[name] = parse_param(*spec, value);
    } catch (const CaseError& e) {
      throw UsageError(fmt::format("--set {}", e.what()));
    }
  }
  return out;
}

std::map<std::string, int64_t> parse_limits(const std::string& kernel,
                                            const std::vector<std::string>& limits) {
  const Schema& schema = find_kernel(kernel).schema();
  std::map<std::string, int64_t> out;
  for (const auto& s : limits) {
    const auto [name, text] = name_and_value(s, "--limit");
    const Limit* l = schema.find_limit(name);
    if (!l) {
      std::vector<std::string> names;
      for (const auto& k : schema.limits) names.push_back(k.name);
      throw UsageError(fmt::format("--limit {}: not a limit of {}; limits: {}", name, kernel,
                                   fmt::join(names, ", ")));
    }
    const auto v = parse_integer(text);
    if (!v || *v < l->min || *v > l->max)
      throw UsageError(fmt::format("--limit {}={}: must be an integer in {}..{}", name, text,
                                   l->min, l->max));
    out[name] = *v;
  }
  return out;
}

}  // namespace kprop
