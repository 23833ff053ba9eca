#pragma once
// host_values' ATen forms (what a device runs) on the CPU, for one scope, cleared whatever
// happens: tests compare them with the host loops (harness/model/host_values.h).
#include "harness/model/host_values.h"

struct AsOnADevice {
  AsOnADevice() { kprop::evaluate_as_on_a_device() = true; }
  ~AsOnADevice() { kprop::evaluate_as_on_a_device() = false; }
};
