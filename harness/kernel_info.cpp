#include "harness/kernel_info.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/errors.h"
#include "harness/random_tensor.h"
#include "kernels/common/host_values.h"

namespace kprop {

const KernelInfo& causal_conv1d_info();  // kernels/causal_conv1d/info.cpp

Problem KernelInfo::in_dtype(const Problem& p, DType dtype) const {
  Problem out{p.c, {}};
  out.c.dtype = dtype;
  for (const auto& [name, t] : p.inputs)
    out.inputs.set(name, converted(t, scalar_type(dtype)));
  return out;
}

std::vector<std::string> kernel_names() { return {"causal_conv1d"}; }

const KernelInfo& find_kernel(const std::string& name) {
  if (name == "causal_conv1d") return causal_conv1d_info();
  throw UsageError(fmt::format("unknown kernel '{}'; known kernels: {}", name,
                               fmt::join(kernel_names(), ", ")));
}

}  // namespace kprop
