#include "harness/device.h"

#include <ATen/Context.h>
#include <fmt/format.h>

#include "generators/errors.h"
#include "harness/implementations.h"

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
    // An index past the devices present fails at the first copy, with libtorch's message.
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
