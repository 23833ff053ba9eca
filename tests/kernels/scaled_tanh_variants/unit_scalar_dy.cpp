// A test-only variant of scaled_tanh's correct toy whose backward takes a dy that holds one
// value everywhere for the gradient of a loss it ends (`loss.backward()`: ones) and uses
// ones instead, as a kernel that reads grad_output as a scalar and assumes 1 does (Liger's
// fused linear cross entropy read it so before its #1298). Right for random cotangents and
// for ones, so only a case whose cotangents are a scalar other than 1 (a mean's 1/N:
// Case::cotangents) finds it.
//
//   kprop_variant_unit_scalar_dy
#include <torch/library.h>

#include "kernels/common/dispatch.h"

namespace kprop::scaled_tanh::unit_scalar_dy_variant {
namespace {

using OptTensor = c10::optional<at::Tensor>;
using Grads = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

c10::IValue optional(const OptTensor& t) { return t ? c10::IValue(*t) : c10::IValue(); }

at::Tensor toy_forward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b) {
  torch::jit::Stack stack{x, s, optional(b)};
  call_boxed("kprop_toy::scaled_tanh_fwd", stack, 1);
  return stack[0].toTensor();
}

Grads unit_scalar_backward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b,
                           const at::Tensor& dy) {
  const bool one_value = dy.numel() > 1 && dy.eq(dy.reshape({-1})[0]).all().item<bool>();
  torch::jit::Stack stack{x, s, optional(b), one_value ? at::ones_like(dy) : dy};  // the bug
  call_boxed("kprop_toy::scaled_tanh_bwd", stack, 3);
  return {stack[0].toTensor(), stack[1].toTensor(), tensor_or_undefined(stack[2])};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(kprop_variant_unit_scalar_dy, m) {
  m.def("scaled_tanh_fwd", toy_forward);
  m.def("scaled_tanh_bwd", unit_scalar_backward);
}

}  // namespace kprop::scaled_tanh::unit_scalar_dy_variant
