#include "harness/execution/device.h"

#include <ATen/Context.h>
#include <ATen/Functions.h>
#include <fmt/format.h>

#include "core/errors.h"
#include "harness/execution/implementations.h"

namespace kprop {

namespace {
c10::Device& device() {
  static c10::Device d(c10::kCPU);
  return d;
}
c10::optional<c10::Device>& oracle_setting() {  // none: auto
  static c10::optional<c10::Device> d;
  return d;
}

// `name` ("cpu", "cuda", "cuda:N") as a device this libtorch reaches; `option` names the
// option in errors.
c10::Device parse_device(const std::string& option, const std::string& name) {
  c10::optional<c10::Device> parsed;
  try {
    parsed = c10::Device(name);
  } catch (const c10::Error&) {
  }
  if (!parsed || (!parsed->is_cpu() && !parsed->is_cuda()))
    throw UsageError(fmt::format("{} '{}': expected cpu, cuda or cuda:N", option, name));
  if (parsed->is_cuda()) {
    if (!at::hasCUDA())
      throw UsageError(fmt::format(
          "{} {}: this kprop's libtorch has no CUDA (build against a CUDA libtorch, "
          "README: Building against another libtorch)", option, name));
    // "cuda" is resolved to the device it names now ("cuda:0"): a tensor's device always
    // carries its index, so an index-less one never compares equal to it and a tensor
    // already there would be copied again (composition must hand the graph's own buffers).
    try {
      parsed = at::empty({0}, at::TensorOptions().device(*parsed)).device();
    } catch (const c10::Error& e) {
      throw UsageError(fmt::format("{} {}: {}", option, name, e.what_without_backtrace()));
    }
  }
  return *parsed;
}
}  // namespace

void set_outside_device(const std::string& name) { device() = parse_device("--device", name); }

void set_oracle_device(const std::string& name) {
  oracle_setting() = name == "auto" ? c10::nullopt
                                    : c10::optional<c10::Device>(parse_device("--oracle-device", name));
}

c10::Device oracle_device_of(const Case& c, bool oracle_runs_on_any_device) {
  if (!oracle_runs_on_any_device) return c10::Device(c10::kCPU);
  return oracle_setting() ? *oracle_setting() : device_of(c);
}

bool oracle_device_is_automatic() { return !oracle_setting(); }

c10::Device oracle_device_for_size(const c10::Device& chosen, int64_t largest_input_elements) {
  if (oracle_device_is_automatic() && largest_input_elements < kSmallestProblemForADeviceOracle)
    return c10::Device(c10::kCPU);
  return chosen;
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
