#include "harness/execution/implementations.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/errors.h"
#include "harness/execution/dispatch.h"

namespace kprop {

std::vector<Implementation> builtin_implementations(const std::string& kernel) {
  return find_kernel(kernel).implementations();
}

bool is_builtin_implementation(const std::string& kernel, const std::string& impl) {
  const auto builtins = builtin_implementations(kernel);
  return std::any_of(builtins.begin(), builtins.end(),
                     [&](const Implementation& i) { return i.name == impl; });
}

bool is_outside_implementation_name(const std::string& kernel, const std::string& name) {
  const auto sep = name.find("::");
  if (sep == 0 || sep == std::string::npos || name.substr(sep + 2) != kernel) return false;
  const auto identifier_char = [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
  };
  return std::all_of(name.begin(), name.begin() + static_cast<std::ptrdiff_t>(sep),
                     identifier_char);
}

Implementation resolve_implementation(const std::string& kernel, const std::string& name) {
  const auto builtins = builtin_implementations(kernel);
  for (const auto& impl : builtins)
    if (impl.name == name) return impl;
  if (is_outside_implementation_name(kernel, name)) {
    const std::string ns = name.substr(0, name.find("::"));
    if (has_operator(ns + "::" + kernel + "_fwd")) return {name, ns, "loaded operator library"};
  }
  std::string known;
  for (const auto& impl : builtins) known += (known.empty() ? "" : ", ") + impl.name;
  throw UsageError(fmt::format(
      "unknown implementation '{}' of {}; known: {} (or NS::{} for operators registered by a "
      "library loaded with --load)",
      name, kernel, known, kernel));
}

}  // namespace kprop
