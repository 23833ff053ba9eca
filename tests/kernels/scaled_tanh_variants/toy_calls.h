// The correct toy of scaled_tanh (tests/kernels/scaled_tanh/), called through the
// dispatcher: each test-only variant here is the toy with one planted difference.
#pragma once

#include <torch/library.h>

#include <tuple>

#include "harness/execution/dispatch.h"

namespace kprop::scaled_tanh {

using OptTensor = c10::optional<at::Tensor>;
using Grads = std::tuple<at::Tensor, at::Tensor, at::Tensor>;  // dx, ds, db

inline c10::IValue optional(const OptTensor& t) { return t ? c10::IValue(*t) : c10::IValue(); }

inline at::Tensor toy_forward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b) {
  torch::jit::Stack stack{x, s, optional(b)};
  call_boxed("kprop_toy::scaled_tanh_fwd", stack, 1);
  return stack[0].toTensor();
}

inline Grads toy_backward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b,
                          const at::Tensor& dy) {
  torch::jit::Stack stack{x, s, optional(b), dy};
  call_boxed("kprop_toy::scaled_tanh_bwd", stack, 3);
  return {stack[0].toTensor(), stack[1].toTensor(), tensor_or_undefined(stack[2])};
}

}  // namespace kprop::scaled_tanh
