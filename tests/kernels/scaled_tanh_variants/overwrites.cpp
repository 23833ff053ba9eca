// Test-only variants of scaled_tanh's correct toy that write over a tensor they are handed,
// to save memory, as real kernels do: every value they return is right, so only the check
// that a call hands back its tensors unchanged (harness/engine/properties/handed_tensors.h) finds
// them, naming the tensor and the call.
//
//   kprop_variant_x_overwritten   the forward stores tanh(x) over x
//   kprop_variant_dy_overwritten  the backward writes dx over the dy it receives, and
//                                 returns that buffer as dx
#include <torch/library.h>

#include "tests/kernels/scaled_tanh_variants/toy_calls.h"

namespace kprop::scaled_tanh::overwriting_variants {
namespace {

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
