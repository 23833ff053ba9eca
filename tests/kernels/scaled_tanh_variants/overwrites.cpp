// Test-only variants of scaled_tanh's correct toy that write over a tensor they are handed,
// to save memory, as real kernels do: every value they return is right, so only the check
// that a call hands back its tensors unchanged (harness/properties/handed_tensors.h) finds
// them, naming the tensor and the call.
//
//   kprop_variant_x_overwritten   the forward stores tanh(x) over x
//   kprop_variant_dy_overwritten  the backward writes dx over the dy it receives, and
//                                 returns that buffer as dx
#include <torch/library.h>

#include "kernels/common/dispatch.h"

namespace kprop::scaled_tanh::overwriting_variants {
namespace {

using OptTensor = c10::optional<at::Tensor>;
using Grads = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

c10::IValue optional(const OptTensor& t) { return t ? c10::IValue(*t) : c10::IValue(); }

at::Tensor toy_forward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b) {
  torch::jit::Stack stack{x, s, optional(b)};
  call_boxed("kprop_toy::scaled_tanh_fwd", stack, 1);
  return stack[0].toTensor();
}

Grads toy_backward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b,
                   const at::Tensor& dy) {
  torch::jit::Stack stack{x, s, optional(b), dy};
  call_boxed("kprop_toy::scaled_tanh_bwd", stack, 3);
  return {stack[0].toTensor(), stack[1].toTensor(), tensor_or_undefined(stack[2])};
}

at::Tensor x_overwritten_forward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b) {
  at::Tensor y = toy_forward(x, s, b);
  x.tanh_();  // kept for the backward in the input's own buffer
  return y;
}

Grads dy_overwritten_backward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b,
                              const at::Tensor& dy) {
  auto [dx, ds, db] = toy_backward(x, s, b, dy);
  dy.copy_(dx);  // dx computed into the incoming gradient's buffer
  return {dy, ds, db};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(kprop_variant_x_overwritten, m) {
  m.def("scaled_tanh_fwd", x_overwritten_forward);
  m.def("scaled_tanh_bwd", toy_backward);
}

TORCH_LIBRARY_FRAGMENT(kprop_variant_dy_overwritten, m) {
  m.def("scaled_tanh_fwd", toy_forward);
  m.def("scaled_tanh_bwd", dy_overwritten_backward);
}

}  // namespace kprop::scaled_tanh::overwriting_variants
