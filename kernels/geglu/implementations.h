// The built-in geglu implementations as plain C++ functions; registration.cpp registers
// each as an operator pair, and the harness only ever calls them through the dispatcher.
#pragma once

#include "kernels/geglu/contract.h"

namespace kprop::geglu {

// The oracle: float64 loops over the contract's formula. Takes any floating dtype,
// computes and returns float64.
at::Tensor reference_forward(const Args& args);
Gradients reference_backward(const Args& args, const at::Tensor& dc);

// The framework's rounding points (docs/design.md §4), built from ATen ops.
at::Tensor policy_forward(const Args& args);
Gradients policy_backward(const Args& args, const at::Tensor& dc);

// The device kernels' grids on the CPU (grid.h), with the policy's rounding points.
// rows: one program per row, the row in column blocks.
at::Tensor rows_forward(const Args& args);
Gradients rows_backward(const Args& args, const at::Tensor& dc);

// flat: the flatten-1D grid-stride port (the Ascend rewrite), correct, and its historical
// and plausible variants, each a code path of that kernel (flat.cpp, element.h).
enum class Variant {
  correct,
  gelu_in_dtype,       // flat@gelu_in_dtype: no upcast, every step of gelu in the input dtype
  fp32_product,        // flat@fp32_product: c from the unrounded fp32 gelu, rounded once
  bwd_no_roundtrip,    // flat@bwd_no_roundtrip: db from the fp32 gelu, no round trip
  assumes_contiguous,  // flat@assumes_contiguous: a and b indexed as if rows were adjacent
};
at::Tensor flat_forward(Variant variant, const Args& args);
Gradients flat_backward(Variant variant, const Args& args, const at::Tensor& dc);

}  // namespace kprop::geglu
