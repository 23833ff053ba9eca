#include "harness/property.h"

#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "generators/errors.h"
#include "harness/properties/calls.h"
#include "harness/properties/registry.h"

namespace kprop {

namespace {
std::vector<std::unique_ptr<Property>>& properties() {
  static std::vector<std::unique_ptr<Property>> all;
  return all;
}
}  // namespace

bool register_property(std::unique_ptr<Property> property) {
  properties().push_back(std::move(property));
  return true;
}

std::vector<std::string> property_names() {
  std::vector<std::string> names;
  for (const auto& p : properties()) names.push_back(p->name());
  return names;
}

const Property& find_property(const std::string& name) {
  for (const auto& p : properties())
    if (p->name() == name) return *p;
  throw UsageError(fmt::format("unknown property '{}'; known properties: {}", name,
                               fmt::join(property_names(), ", ")));
}

Verdict evaluate(const Case& c) {
  const KernelInfo& kernel = find_kernel(c.kernel);
  const auto problems = validate(kernel.schema(), c);
  if (!problems.empty())
    throw CaseError(fmt::format("impossible case: {}", fmt::join(problems, "; ")));
  // Valid but too large to materialize (a --set, a decoded or hand-made case): refused
  // with the limit named, never an out-of-memory.
  refuse_too_large(kernel.schema(), c, "case");
  const Implementation impl = resolve_implementation(c.kernel, c.impl);
  const Property& property = find_property(c.property);
  try {
    return property.check(kernel, impl, c);
  } catch (const ImplementationRefused& e) {
    // The implementation refused the case, as the real kernel raises on it.
    Verdict v;
    v.kernel = c.kernel;
    v.impl = c.impl;
    v.property = c.property;
    v.status = Verdict::Status::rejected;
    v.message = e.what();
    return v;
  }
}

}  // namespace kprop
