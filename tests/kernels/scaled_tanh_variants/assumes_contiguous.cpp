// A test-only variant of scaled_tanh's correct toy whose backward reads dy as if it were
// contiguous: element i at dy's first element + i, as a kernel that is handed a pointer and
// no strides reads it (flash-linear-attention's causal_conv1d read dy so before #1139).
// Right on every contiguous dy, so only `layout` finds it; past the end of dy's storage it
// reads zeros here, where a GPU reads whatever lies there.
//
//   kprop_variant_contiguous_dy
#include <torch/library.h>

#include <algorithm>

#include "tests/kernels/scaled_tanh_variants/toy_calls.h"

namespace kprop::scaled_tanh::layout_variants {
namespace {

// dy's memory from its first element, dy.numel() elements of it, shaped as dy.
at::Tensor as_if_contiguous(const at::Tensor& dy) {
  const int64_t stored = static_cast<int64_t>(dy.storage().nbytes()) / dy.element_size() -
                         dy.storage_offset();
  const int64_t n = std::min(dy.numel(), stored);
  const at::Tensor read = dy.as_strided({n}, {1}, dy.storage_offset());
  return at::cat({read, at::zeros({dy.numel() - n}, dy.options())}).view(dy.sizes());
}

Grads contiguous_dy_backward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b,
                             const at::Tensor& dy) {
  return toy_backward(x, s, b, as_if_contiguous(dy));
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(kprop_variant_contiguous_dy, m) {
  m.def("scaled_tanh_fwd", toy_forward);
  m.def("scaled_tanh_bwd", contiguous_dy_backward);
}

}  // namespace kprop::scaled_tanh::layout_variants
