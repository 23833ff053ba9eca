#include "harness/execution/device.h"

#include <ATen/Context.h>
#include <ATen/Functions.h>
#include <fmt/format.h>

#include "generators/errors.h"
#include "harness/execution/implementations.h"

namespace kprop {

namespace {
c10::Device& device() {
  static c10::Device d(c10::kCPU);
  return d;
}
}  // namespace

void set_outside_device(const std::string& name) {
  c10::optional<c10::Device> parsed;
  try {
    parsed = c10::Device(name);
  } catch (const c10::Error&) {
  }
  if (!parsed || (!parsed->is_cpu() && !parsed->is_cuda()))
    throw UsageError(fmt::format("--device '{}': expected cpu, cuda or cuda:N", name));
  if (parsed->is_cuda()) {
    if (!at::hasCUDA())
      throw UsageError(fmt::format(
          "--device {}: this kprop's libtorch has no CUDA (build against a CUDA libtorch, "
          "README: Building against another libtorch)", name));
    // "cuda" is resolved to the device it names now ("cuda:0"): a tensor's device always
    // carries its index, so an index-less one never compares equal to it and a tensor
    // already there would be copied again (composition must hand the graph's own buffers).
    try {
      parsed = at::empty({0}, at::TensorOptions().device(*parsed)).device();
    } catch (const c10::Error& e) {
      throw UsageError(fmt::format("--device {}: {}", name, e.what_without_backtrace()));
    }
  }
  device() = *parsed;
}

c10::Device outside_device() { return device(); }
std::string outside_device_name() { return device().str(); }

c10::Device device_of(const Case& c) {
  // Every call asks (hundreds per gradient case): the name alone says where it runs, without
  // building the kernel's list of built-in implementations.
  if (!is_outside_implementation_name(c.kernel, c.impl)) return c10::Device(c10::kCPU);
  return device();
}

}  // namespace kprop
