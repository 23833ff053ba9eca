#include "harness/execution/takes.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/errors.h"
#include "harness/execution/device.h"
#include "harness/execution/layout_variants.h"
#include "harness/model/kernel.h"

namespace kprop {

namespace {

std::map<std::pair<std::string, std::string>, Takes>& registry() {
  static std::map<std::pair<std::string, std::string>, Takes> all;
  return all;
}

std::vector<std::string> names_of(const std::vector<DType>& dtypes) {
  std::vector<std::string> out;
  for (DType d : dtypes) out.push_back(to_string(d));
  return out;
}

}  // namespace

bool Takes::takes_dtype(DType d) const {
  return dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), d) != dtypes.end();
}

void declare_takes(const std::string& kernel, const std::string& impl, Takes takes) {
  const Schema& schema = find_kernel(kernel).schema();
  auto fail = [&](const std::string& field, const std::string& what) {
    throw UsageError(fmt::format("kernel {}, implementation {}: takes {}: {}", kernel, impl,
                                 field, what));
  };
  auto param = [&](const std::string& field, const std::string& name, ParamType type) {
    const ParamSpec* p = schema.find(name);
    if (!p) fail(field, fmt::format("'{}' is no parameter of {}", name, kernel));
    const bool fits = p->type == type || (type == ParamType::integer && p->type == ParamType::integers);
    if (!fits) fail(field, fmt::format("'{}' is {}, not {}", name, to_string(p->type), to_string(type)));
    return p;
  };
  for (const auto& [name, b] : takes.ranges) {
    param("ranges", name, ParamType::integer);
    if (b.lo > b.hi) fail("ranges", fmt::format("'{}': {}..{} is empty", name, b.lo, b.hi));
  }
  for (const auto& [name, allowed] : takes.choices) {
    const ParamSpec* p = param("choices", name, ParamType::choice);
    for (const auto& v : allowed)
      if (std::find(p->choices.begin(), p->choices.end(), v) == p->choices.end())
        fail("choices", fmt::format("'{}' has no choice '{}' (it has {})", name, v,
                                    fmt::join(p->choices, ", ")));
  }
  for (const auto& [name, value] : takes.flags) param("flags", name, ParamType::flag);
  const auto handed = find_kernel(kernel).handed_tensor_names();
  for (const auto& name : takes.overwrites)
    if (!handed.empty() && std::find(handed.begin(), handed.end(), name) == handed.end())
      fail("overwrites", fmt::format("'{}' is no input or cotangent of {} (it has {})", name,
                                     kernel, fmt::join(handed, ", ")));
  if (takes.same_function_as == impl)
    fail("same_function_as", "an implementation is no other algorithm of itself");
  const auto layouts = layout_names(find_kernel(kernel));
  for (const auto& name : takes.layouts)
    if (std::find(layouts.begin(), layouts.end(), name) == layouts.end())
      fail("layouts", fmt::format("'{}' is no layout of {} (it has {})", name, kernel,
                                  fmt::join(layouts, ", ")));
  for (const auto& d : takes.devices)
    if (d != "cpu" && d != "cuda") fail("devices", fmt::format("'{}' is not cpu or cuda", d));
  registry()[{kernel, impl}] = std::move(takes);
}

const Takes* declared_takes(const std::string& kernel, const std::string& impl) {
  const auto it = registry().find({kernel, impl});
  return it == registry().end() ? nullptr : &it->second;
}

std::optional<std::string> not_taken(const Case& c, bool check_dtype) {
  const Takes* t = declared_takes(c.kernel, c.impl);
  if (!t) return std::nullopt;
  if (check_dtype && !t->takes_dtype(c.dtype))
    return fmt::format("{} is not among its dtypes ({})", to_string(c.dtype),
                       fmt::join(names_of(t->dtypes), ", "));
  if (!t->devices.empty()) {
    const std::string device = c10::DeviceTypeName(device_of(c).type(), /*lower_case=*/true);
    if (std::find(t->devices.begin(), t->devices.end(), device) == t->devices.end())
      return fmt::format("device {} is not among its devices ({})", device,
                         fmt::join(t->devices, ", "));
  }
  for (const auto& [name, b] : t->ranges) {
    const auto& v = c.params.at(name);
    const std::vector<int64_t> values = std::holds_alternative<int64_t>(v)
                                            ? std::vector<int64_t>{std::get<int64_t>(v)}
                                            : std::get<std::vector<int64_t>>(v);
    for (int64_t x : values)
      if (!b.contains(x)) return fmt::format("{} = {} is outside {}..{}", name, x, b.lo, b.hi);
  }
  for (const auto& [name, allowed] : t->choices) {
    const std::string& v = c.choice(name);
    if (std::find(allowed.begin(), allowed.end(), v) == allowed.end())
      return fmt::format("{} = {} is not among {}", name, v, fmt::join(allowed, ", "));
  }
  for (const auto& [name, value] : t->flags)
    if (c.flag(name) != value) return fmt::format("{} = {} is not taken", name, c.flag(name));
  return std::nullopt;
}

DType taken_dtype(const Case& c, DType wanted) {
  const Takes* t = declared_takes(c.kernel, c.impl);
  return !t || t->takes_dtype(wanted) ? wanted : t->dtypes.front();
}

}  // namespace kprop
