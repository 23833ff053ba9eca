// Naming a deviation from the policy: the rounding points where an implementation may
// round differently from torch_policy, each with the value an element takes when it does
// (computed with element.h, as the flatten-1D port's variants compute it). A tensor that
// deviates is named after the first alternative that gives every element that differs
// from the policy exactly — "c: product from the fp32 gelu" — or after none.
#pragma once

#include <string>

#include "harness/kernel_info.h"

namespace kprop::geglu {

// The alternative rounding that explains every element where `actual` differs from
// `policy` (tensor c, da or db of problem p with cotangent dc), or "" when none does.
std::string rounding_point(const Problem& p, const NamedTensors& cotangents,
                           const std::string& tensor, const at::Tensor& actual,
                           const at::Tensor& policy);

}  // namespace kprop::geglu
