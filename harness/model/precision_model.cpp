#include "harness/model/precision_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/errors.h"
#include "core/registry.h"
#include "generators/param.h"
#include "generators/schema.h"

namespace kprop {

namespace {
Registry<PrecisionModel>& models() {
  static Registry<PrecisionModel> all("precision model", "models");
  return all;
}

std::vector<std::string> param_names(const PrecisionModel& model) {
  std::vector<std::string> names;
  for (const auto& p : model.params()) names.push_back(p.name);
  return names;
}

void apply_setting(const PrecisionModel& model, std::map<std::string, int64_t>& values,
                   const std::string& setting) {
  const auto eq = setting.find('=');
  if (eq == std::string::npos || eq == 0)
    throw UsageError(fmt::format("shape '{}': expected NAME=VALUE", setting));
  const std::string name = setting.substr(0, eq), text = setting.substr(eq + 1);
  const auto params = model.params();
  const auto p = std::find_if(params.begin(), params.end(),
                              [&](const ModelParam& q) { return q.name == name; });
  if (p == params.end())
    throw UsageError(fmt::format("{} has no parameter '{}'; parameters: {}", model.name(), name,
                                 fmt::join(param_names(model), ", ")));
  const auto v = parse_integer(text);
  if (!v || *v < p->min || *v > p->max)
    throw UsageError(fmt::format("{}={}: must be an integer in {}..{} ({})", name, text, p->min,
                                 p->max, p->meaning));
  values[name] = *v;
}
}  // namespace

std::string to_string(WeightScale s) { return s == WeightScale::fan_in ? "fan_in" : "unscaled"; }

std::optional<WeightScale> parse_weight_scale(const std::string& text) {
  if (text == "unscaled") return WeightScale::unscaled;
  if (text == "fan_in") return WeightScale::fan_in;
  return std::nullopt;
}

bool register_precision_model(std::unique_ptr<PrecisionModel> model) {
  return models().add(std::move(model));
}

std::vector<std::string> precision_model_names() { return models().names(); }

const PrecisionModel& find_precision_model(const std::string& name) {
  return models().find(name);
}

std::map<std::string, int64_t> model_params(const PrecisionModel& model,
                                            const std::vector<std::string>& settings) {
  std::map<std::string, int64_t> values;
  for (const auto& p : model.params()) values[p.name] = p.value;
  for (const auto& group : settings) {
    // "a=1,b=2" is a list of settings; so is a repeated option.
    size_t start = 0;
    while (start <= group.size()) {
      const auto comma = std::min(group.find(',', start), group.size());
      apply_setting(model, values, group.substr(start, comma - start));
      start = comma + 1;
    }
  }
  return values;
}

void refuse_too_many_elements(const std::string& tensor, int64_t elements) {
  const int64_t limit = max_elements();
  if (elements > limit)
    throw UsageError(fmt::format(
        "{} would hold {} elements, more than the limit {} (KPROP_MAX_ELEMENTS raises it)",
        tensor, elements, limit));
}

}  // namespace kprop
