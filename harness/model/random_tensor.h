// Tensor contents from a seed, the same on every machine, device and libtorch version.
//
// kprop never stores tensors: a case names its data by (seed, distribution), and every
// input is drawn from its own stream so that adding an input never changes another.
// The generator is SplitMix64 with Box-Muller (core/splitmix64.h).
//
// The canonical bits are the host's: a loop over the stream in float64 (glibc's log, sin
// and cos), rounded to the dtype. A device draws the same tensor in one pass of ATen
// operations: the words and the uniform values are integer arithmetic, exact everywhere;
// the normal values go through the device's log, sin and cos, which may differ from the
// host's by a few units in the last place. They are rounded to the dtype only where that
// cannot matter: an element within kDrawTolerance of a rounding boundary of its dtype is
// computed again on the host (a handful per million in float32, none in practice in 16
// bits), and a float64 tensor of normal values is drawn on the host and copied. So a case
// replays bit for bit whichever device drew it; case files keep the inputs' fingerprint
// besides (harness/storage/fingerprint.h). On the meta device a tensor has its shape and
// dtype and no values: what a problem's size is, before anything is drawn.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "generators/case.h"

namespace kprop {

at::ScalarType scalar_type(DType d);

// Values drawn in float64 from `distribution`, then rounded to `dtype`, on `device`.
//   normal          N(0, 1)
//   uniform         U[-1, 1)
//   heavy_tailed    Student t with 3 degrees of freedom (occasional large values)
//   small_integers  integers in [-3, 3]: exact in every dtype, sums stay exact
at::Tensor random_tensor(const std::vector<int64_t>& sizes, Distribution distribution,
                         uint64_t seed, uint64_t stream, DType dtype,
                         const c10::Device& device = c10::kCPU);

// The same values times `scale` in float64 before they are rounded to `dtype`: inputs of
// another magnitude (GEGLU's projections), with the same bits on every device.
at::Tensor scaled_random_tensor(const std::vector<int64_t>& sizes, Distribution distribution,
                                double scale, uint64_t seed, uint64_t stream, DType dtype,
                                const c10::Device& device = c10::kCPU);

// int64 indices from the same generator: each element `special` with probability
// special_percent / 100 (0: never, 100: every element), else uniform in [0, below).
// Whatever the case's dtype: indices are never rounded.
at::Tensor random_indices(const std::vector<int64_t>& sizes, int64_t below, int64_t special,
                          int special_percent, uint64_t seed, uint64_t stream,
                          const c10::Device& device = c10::kCPU);

// How far (relative) a device's normal values may lie from the host's: 64 units in the
// last place of float64. The two libraries' log, sin and cos are each within 2 units of
// the exact value (glibc's and CUDA's documented bounds), and Box-Muller and the t
// distribution compound them to at most about 20.
constexpr double kDrawTolerance = 0x1.0p-47;

// `approx` (float64, each element within `tolerance` relative of the host's value) rounded
// to `dtype` exactly as the host's values round: where the tolerance leaves the rounding
// in doubt, element i (flat) is host_value(i) rounded instead.
at::Tensor rounded_as_the_host(const at::Tensor& approx, at::ScalarType dtype,
                               const std::function<double(int64_t)>& host_value,
                               double tolerance = kDrawTolerance);

}  // namespace kprop
