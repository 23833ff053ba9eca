#include "harness/model/kernel.h"

#include "core/errors.h"
#include "core/registry.h"
#include "harness/model/host_values.h"
#include "harness/model/random_tensor.h"
#include "harness/model/tensor_layouts.h"

namespace kprop {

namespace {
Registry<Kernel>& kernels() {
  static Registry<Kernel> all("kernel", "kernels");
  return all;
}
}  // namespace

Problem Kernel::in_dtype(const Problem& p, DType dtype) {
  Problem out{p.c, {}};
  out.c.dtype = dtype;
  for (const auto& [name, t] : p.inputs)
    out.inputs.set(name, converted(t, scalar_type(dtype)));
  return out;
}

bool register_kernel(std::unique_ptr<Kernel> kernel) {
  return kernels().add(std::move(kernel));
}

std::vector<std::string> kernel_names() { return kernels().names(); }

std::string default_kernel() {
  const auto names = kernel_names();
  if (names.empty()) throw UsageError("no kernel is registered");
  return names.front();
}

const Kernel& find_kernel(const std::string& name) { return kernels().find(name); }

}  // namespace kprop
