// A test-only variant of scaled_tanh's correct toy whose backward, done with dy, stores a
// zero into the element after dy's end, as an unmasked store of a kernel that uses dy's
// buffer for scratch. Where dy's storage ends there (a fresh tensor) it stores nothing
// here, where a GPU would overwrite whatever lies there: every result is right, so only
// `guard`, whose margins give the store somewhere to land, finds it.
//
//   kprop_variant_writes_past_end
#include <torch/library.h>

#include "tests/kernels/scaled_tanh_variants/toy_calls.h"

namespace kprop::scaled_tanh::writes_past_end_variant {
namespace {

Grads writes_past_end_backward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b,
                               const at::Tensor& dy) {
  const Grads grads = toy_backward(x, s, b, dy);
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
