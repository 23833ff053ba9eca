// GEGLU's rounding errors under the framework's policy (docs/design.md §4), for inputs that
// already carry errors (the outputs of bf16 matmuls): what the GEGLU MLP precision model
// (mlp.cpp) propagates through its chain.
//
// Policy (kernels/geglu/torch_policy.cpp), rd = rounding to the low dtype (unit roundoff
// u), u32 = 2^-24:
//   forward   c  = rd(rd(gelu32(a)) * b)       gelu in fp32 from the low-dtype a, rounded;
//                                              the product of two low-dtype values is
//                                              exact in fp32 and rounded once
//   backward  db = rd(dc * rd(gelu32(a)))
//             da = rd(rd(dc * b) * gelu32'(a)) mul's backward hands dc*b on rounded; the
//                                              product with gelu' is an fp32 one (u32)
// An input error e_a moves gelu(a) by at most e_a (|gelu'(a)| + M2 e_a) (mean value
// theorem, M2 = sup|gelu''|) and gelu'(a) by e_a (|gelu''(a)| + M3 e_a). Evaluating gelu
// or gelu' in fp32 is taken to err by at most kFp32Evaluation u32 (1 + |f(a)|): an
// assumption about the fp32 formula, not derived; ATen's formula stays under 18 u32 (1 +
// |f|) for every bf16 input (tests/unit/test_precision_model.cpp), and the term is 2^-18
// of |f|, a thousandth of a bf16 rounding.
#pragma once

#include <ATen/ATen.h>

#include <utility>

#include "harness/model/propagated_error.h"

namespace kprop::geglu_mlp {

// sup |gelu_tanh''| = sqrt(2/pi) (at 0) and sup |gelu_tanh'''| = 0.7767, rounded up.
constexpr double kGeluSecondDerivativeBound = 0.8;
constexpr double kGeluThirdDerivativeBound = 0.78;
constexpr double kFp32Evaluation = 64;

// gelu_tanh and its first two derivatives in float64, as ATen ops (on any device).
at::Tensor gelu_tanh(const at::Tensor& x);
at::Tensor gelu_tanh_grad(const at::Tensor& x);
at::Tensor gelu_tanh_second(const at::Tensor& x);

// c = GEGLU(a, b) under the policy; `c` is the float64 chain's value.
Bounded forward_error(const at::Tensor& c, const Bounded& a, const Bounded& b, double u);

// (da, db) under the policy; `da`, `db` are the float64 chain's values.
std::pair<Bounded, Bounded> backward_error(const at::Tensor& da, const at::Tensor& db,
                                           const Bounded& dc, const Bounded& a,
                                           const Bounded& b, double u);

}  // namespace kprop::geglu_mlp
