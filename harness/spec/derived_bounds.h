// Error bounds from a spec's declared structure (harness/spec/kernel_spec.h, Bound): the
// rounding model of harness/model/tolerance.h applied once, for every kernel that declares how
// its results are computed, every dtype and every joined partial.
#pragma once

#include <vector>

#include "harness/spec/kernel_spec.h"

namespace kprop {

// Per element, the bound of each tensor that `bounds` declares and `reference` holds, for
// problem `p` computed in its dtype (accumulating in fp32, float64 for float64 inputs).
// `exact` holds the float64 inputs, cotangents and reference results the magnitudes read;
// `dims` the size of every named dimension. One bound per entry of `joined_partials`
// (harness/model/kernel.h), summed.
NamedTensors derived_bounds(const std::map<std::string, Bound>& bounds, const Exact& exact,
                            const std::map<std::string, int64_t>& dims,
                            const NamedTensors& reference, const std::vector<int>& joined_partials);

}  // namespace kprop
