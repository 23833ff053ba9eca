// A test-only variant of scaled_tanh's correct toy whose backward takes a dy that holds one
// value everywhere for the gradient of a loss it ends (`loss.backward()`: ones) and uses
// ones instead, as a kernel that reads grad_output as a scalar and assumes 1 does (Liger's
// fused linear cross entropy read it so before its #1298). Right for random cotangents and
// for ones, so only a case whose cotangents are a scalar other than 1 (a mean's 1/N:
// Case::cotangents) finds it.
//
//   kprop_variant_unit_scalar_dy
#include <torch/library.h>

#include "tests/kernels/scaled_tanh_variants/toy_calls.h"

namespace kprop::scaled_tanh::unit_scalar_dy_variant {
namespace {

Grads unit_scalar_backward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b,
                           const at::Tensor& dy) {
  const bool one_value = dy.numel() > 1 && dy.eq(dy.reshape({-1})[0]).all().item<bool>();
  return toy_backward(x, s, b, one_value ? at::ones_like(dy) : dy);  // the bug
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(kprop_variant_unit_scalar_dy, m) {
  m.def("scaled_tanh_fwd", toy_forward);
  m.def("scaled_tanh_bwd", unit_scalar_backward);
}

}  // namespace kprop::scaled_tanh::unit_scalar_dy_variant
