// Naming a deviation from the policy: the rounding points where an implementation may
// round differently from torch_policy, each with the value an element takes when it does
// (computed with element.h, as the flatten-1D port's variants compute it). A tensor that
// deviates is named after the alternative that gives every one of its elements exactly —
// "product from the fp32 gelu" — after each such alternative ("A or B") when a small case
// cannot tell them apart, or after none.
#pragma once

#include <string>

#include "harness/model/kernel.h"

namespace kprop::geglu {

// The alternative rounding that gives every element of `actual` (tensor c, da or db of
// problem p with cotangent dc), where it differs from `policy`; "" when none does or
// nothing differs.
std::string rounding_point(const Problem& p, const NamedTensors& cotangents,
                           const std::string& tensor, const at::Tensor& actual,
                           const at::Tensor& policy);

}  // namespace kprop::geglu
