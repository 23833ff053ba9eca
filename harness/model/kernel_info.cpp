#include "harness/model/kernel_info.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "generators/errors.h"
#include "harness/model/host_values.h"
#include "harness/model/random_tensor.h"

namespace kprop {

namespace {
std::vector<std::unique_ptr<KernelInfo>>& kernels() {
  static std::vector<std::unique_ptr<KernelInfo>> all;
  return all;
}
}  // namespace

Problem KernelInfo::in_dtype(const Problem& p, DType dtype) {
  Problem out{p.c, {}};
  out.c.dtype = dtype;
  for (const auto& [name, t] : p.inputs)
    out.inputs.set(name, converted(t, scalar_type(dtype)));
  return out;
}

bool register_kernel(std::unique_ptr<KernelInfo> kernel) {
  for (const auto& k : kernels())
    if (k->name() == kernel->name()) return false;  // a library loaded twice
  kernels().push_back(std::move(kernel));
  return true;
}

std::vector<std::string> kernel_names() {
  std::vector<std::string> names;
  for (const auto& k : kernels()) names.push_back(k->name());
  std::sort(names.begin(), names.end());
  return names;
}

std::string default_kernel() {
  const auto names = kernel_names();
  if (names.empty()) throw UsageError("no kernel is registered");
  return names.front();
}

const KernelInfo& find_kernel(const std::string& name) {
  for (const auto& k : kernels())
    if (k->name() == name) return *k;
  throw UsageError(fmt::format("unknown kernel '{}'; known kernels: {}", name,
                               fmt::join(kernel_names(), ", ")));
}

}  // namespace kprop
