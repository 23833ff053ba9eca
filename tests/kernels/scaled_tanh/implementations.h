// The built-in scaled_tanh implementations as plain C++ functions; ops.cpp registers
// each as an operator pair, and the harness only ever calls them through the dispatcher.
#pragma once

#include "tests/kernels/scaled_tanh/contract.h"

namespace kprop::scaled_tanh {

// The oracle: float64 loops over the contract's formulas. Takes any floating dtype,
// computes and returns float64.
at::Tensor reference_forward(const Args& args);
Gradients reference_backward(const Args& args, const at::Tensor& dy);

// The low-precision implementation: inputs and outputs in the input dtype, math in fp32
// (float64 for float64 inputs), rows covered as columns.h describes. Its variants are
// the correct code and two planted defects, each a real code path.
enum class Variant {
  correct,
  tail_mask_typo,  // toy@tail: the remainder mask for 7 columns drops the last lane
  bias_twice,      // toy@bias: the block step adds the bias twice
};
at::Tensor toy_forward(Variant variant, const Args& args);
Gradients toy_backward(Variant variant, const Args& args, const at::Tensor& dy);

}  // namespace kprop::scaled_tanh
