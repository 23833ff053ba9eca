#include "harness/api/settings.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/errors.h"
#include "generators/schema.h"
#include "harness/model/kernel.h"

namespace kprop {

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
