#include "harness/implementations.h"

#include <fmt/format.h>

#include "generators/errors.h"
#include "kernels/common/dispatch.h"

namespace kprop {

std::vector<Implementation> builtin_implementations(const std::string& kernel) {
  return find_kernel(kernel).implementations();
}

Implementation resolve_implementation(const std::string& kernel, const std::string& name) {
  const auto builtins = builtin_implementations(kernel);
  for (const auto& impl : builtins)
    if (impl.name == name) return impl;
  const auto sep = name.find("::");
  if (sep != std::string::npos && name.substr(sep + 2) == kernel &&
      has_operator(name.substr(0, sep) + "::" + kernel + "_fwd"))
    return {name, name.substr(0, sep), "loaded operator library"};
  std::string known;
  for (const auto& impl : builtins) known += (known.empty() ? "" : ", ") + impl.name;
  throw UsageError(fmt::format(
      "unknown implementation '{}' of {}; known: {} (or NS::{} for operators registered by a "
      "library loaded with --load)",
      name, kernel, known, kernel));
}

}  // namespace kprop
