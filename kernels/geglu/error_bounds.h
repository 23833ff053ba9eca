// The derived error bound of each geglu output (docs/design.md §5) for an implementation that
// rounds where the policy rounds (torch_policy.cpp), per element:
//
//   gelu evaluated in the compute type w (fp32; float64 for float64 inputs) by the
//   formula's steps with a tanh within 2 ulps: |g_w - gelu(a)| <= e_g(a), |g'_w - gelu'(a)|
//   <= e_g'(a) (gelu_evaluation_error below: the error of each step carried through the
//   next, including the cancellation in 1 + tanh for negative a, which is absolute);
//   g = fl_d(g_w)                       |g - gelu| <= e_g + u G,  G = |gelu| + e_g
//   c = fl_d(g·b)                       + u |g b| (the product is exact for 16-bit d)
//   db = fl_d(dc·g)                     likewise with dc
//   da = fl_d(fl_w(fl_d(dc·b)·g'_w))    u |dc b| G' + |dc b| e_g' + (w + u) |dc b| G'
//
// with u the unit roundoff of the input dtype d, plus d's smallest normal per rounding. An
// element whose exact value (or dc·b, rounded on the way) lies past d's largest finite
// number has no finite answer in d: its bound is infinite (float16 overflows at 65504).
#pragma once

#include <vector>

#include "harness/model/kernel.h"

namespace kprop::geglu {

NamedTensors error_bounds(const Problem& p, const NamedTensors& cotangents,
                          const NamedTensors& reference, const std::vector<int>& joined_partials);

}  // namespace kprop::geglu
