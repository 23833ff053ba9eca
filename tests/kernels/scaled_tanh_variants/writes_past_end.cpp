// A test-only variant of scaled_tanh's correct toy whose backward, done with dy, stores a
// zero into the element after dy's end, as an unmasked store of a kernel that uses dy's
// buffer for scratch. Where dy's storage ends there (a fresh tensor) it stores nothing
// here, where a GPU would overwrite whatever lies there: every result is right, so only
// `guard`, whose margins give the store somewhere to land, finds it.
//
//   kprop_variant_writes_past_end
#include <torch/library.h>

#include "kernels/common/dispatch.h"

namespace kprop::scaled_tanh::writes_past_end_variant {
namespace {

using OptTensor = c10::optional<at::Tensor>;
using Grads = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

c10::IValue optional(const OptTensor& t) { return t ? c10::IValue(*t) : c10::IValue(); }

at::Tensor toy_forward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b) {
  torch::jit::Stack stack{x, s, optional(b)};
  call_boxed("kprop_toy::scaled_tanh_fwd", stack, 1);
  return stack[0].toTensor();
}

Grads writes_past_end_backward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b,
                               const at::Tensor& dy) {
  torch::jit::Stack stack{x, s, optional(b), dy};
  call_boxed("kprop_toy::scaled_tanh_bwd", stack, 3);
  Grads grads{stack[0].toTensor().clone(), stack[1].toTensor().clone(), tensor_or_undefined(stack[2])};
  if (std::get<2>(grads).defined()) std::get<2>(grads) = std::get<2>(grads).clone();
  if (dy.is_contiguous()) {
    const int64_t next = dy.storage_offset() + dy.numel();
    if (next < static_cast<int64_t>(dy.storage().nbytes()) / dy.element_size())
      dy.as_strided({1}, {1}, next).zero_();  // the unmasked store
  }
  return grads;
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(kprop_variant_writes_past_end, m) {
  m.def("scaled_tanh_fwd", toy_forward);
  m.def("scaled_tanh_bwd", writes_past_end_backward);
}

}  // namespace kprop::scaled_tanh::writes_past_end_variant
