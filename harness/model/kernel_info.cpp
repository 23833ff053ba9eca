#include "harness/model/kernel_info.h"

#include "core/errors.h"
#include "core/registry.h"
#include "harness/model/host_values.h"
#include "harness/model/random_tensor.h"
#include "harness/model/tensor_layouts.h"

namespace kprop {

namespace {
Registry<KernelInfo>& kernels() {
  static Registry<KernelInfo> all("kernel", "kernels");
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

Problem KernelInfo::materialize_on(const Case& c, const c10::Device& device) const {
  Problem p = materialize(c);
  if (device.is_cpu()) return p;
  return Problem{p.c, same_layouts_on(p.inputs, device)};
}

bool register_kernel(std::unique_ptr<KernelInfo> kernel) {
  return kernels().add(std::move(kernel));
}

std::vector<std::string> kernel_names() { return kernels().names(); }

std::string default_kernel() {
  const auto names = kernel_names();
  if (names.empty()) throw UsageError("no kernel is registered");
  return names.front();
}

const KernelInfo& find_kernel(const std::string& name) { return kernels().find(name); }

}  // namespace kprop
