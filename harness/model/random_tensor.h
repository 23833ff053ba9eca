// Tensor contents from a seed, the same on every machine and libtorch version.
//
// kprop never stores tensors: a case names its data by (seed, distribution), and every
// input is drawn from its own stream so that adding an input never changes another.
// The generator is SplitMix64 with Box-Muller, written out so that replay does not
// depend on ATen's random number generators.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "generators/case.h"

namespace kprop {

at::ScalarType scalar_type(DType d);

// Values drawn in float64 from `distribution`, then rounded to `dtype`.
//   normal          N(0, 1)
//   uniform         U[-1, 1)
//   heavy_tailed    Student t with 3 degrees of freedom (occasional large values)
//   small_integers  integers in [-3, 3]: exact in every dtype, sums stay exact
at::Tensor random_tensor(const std::vector<int64_t>& sizes, Distribution distribution,
                         uint64_t seed, uint64_t stream, DType dtype);

// int64 indices from the same generator: each element `special` with probability
// special_percent / 100 (0: never, 100: every element), else uniform in [0, below).
// Whatever the case's dtype: indices are never rounded.
at::Tensor random_indices(const std::vector<int64_t>& sizes, int64_t below, int64_t special,
                          int special_percent, uint64_t seed, uint64_t stream);

}  // namespace kprop
