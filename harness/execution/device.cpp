#include "harness/execution/device.h"

#include "harness/execution/implementations.h"
#include "harness/execution/session.h"

namespace kprop {

c10::Device oracle_device_of(const Case& c, bool oracle_runs_on_any_device) {
  if (!oracle_runs_on_any_device) return c10::Device(c10::kCPU);
  const auto& chosen = Session::current().oracle_device();
  return chosen ? *chosen : device_of(c);
}

bool oracle_device_is_automatic() { return !Session::current().oracle_device(); }

c10::Device oracle_device_for_size(const c10::Device& chosen, int64_t largest_input_elements) {
  if (oracle_device_is_automatic() && largest_input_elements < kSmallestProblemForADeviceOracle)
    return c10::Device(c10::kCPU);
  return chosen;
}

c10::Device outside_device() { return Session::current().device(); }
std::string outside_device_name() { return outside_device().str(); }

c10::Device device_of(const Case& c) {
  // Every call asks (hundreds per gradient case): the name alone says where it runs, without
  // building the kernel's list of built-in implementations.
  if (!is_outside_implementation_name(c.kernel, c.impl)) return c10::Device(c10::kCPU);
  return Session::current().device();
}

}  // namespace kprop
