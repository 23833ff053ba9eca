// Where implementations from outside run: `--device cuda` (or KPROP_DEVICE) puts their
// inputs on that device. Cases are materialized on the CPU from the seed; the float64
// reference, the finite differences and every comparison stay on the CPU, unless the
// oracle moves (below). Only the calls of an outside implementation cross (harness/engine/properties/calls.h):
// inputs and cotangents go to its device, its results come back. kprop's own
// implementations are CPU emulations and always run on the CPU.
#pragma once

#include <c10/core/Device.h>

#include <string>

#include "generators/case.h"

namespace kprop {

// The current session's (harness/execution/session.h): the CPU unless it says otherwise.
c10::Device outside_device();
std::string outside_device_name();

// The device `c`'s implementation runs on.
c10::Device device_of(const Case& c);

// Where the float64 oracle runs (`--oracle-device`, KPROP_ORACLE_DEVICE): the reference
// forward and backward, the derived bounds and the comparisons, on inputs drawn there
// with the CPU's bits (harness/model/random_tensor.h: replay stays bit-identical across
// machines). "auto" (the default) is the implementation's device; "cpu" keeps the oracle on
// the CPU as before. A kernel whose oracle has host loops keeps it on the CPU whatever the
// setting (Kernel::oracle_runs_on_any_device). The current session holds the setting.
// The oracle's device for `c`, given whether its kernel's oracle runs on any device.
c10::Device oracle_device_of(const Case& c, bool oracle_runs_on_any_device);

// Under "auto", a problem whose largest input holds fewer elements than this keeps its
// oracle on the CPU: there its loops over a few thousand elements cost less than the
// hundreds of launches of its ATen form on a device (GEGLU's small cases through Liger on
// the H200: ~700 launches a case, 618 cases/s with the oracle on the CPU, 117 on the GPU).
inline constexpr int64_t kSmallestProblemForADeviceOracle = int64_t{1} << 15;
// True under "auto": the oracle's device then depends on the problem's size too.
bool oracle_device_is_automatic();
// `chosen` (oracle_device_of), or the CPU for a small problem under "auto".
c10::Device oracle_device_for_size(const c10::Device& chosen, int64_t largest_input_elements);

}  // namespace kprop
