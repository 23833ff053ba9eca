// A test-only variant of scaled_tanh's correct toy whose forward without a bias takes a
// path of its own that forgets a term: tanh(x) ≈ x for |x| < 1/16 (the cubic term dropped,
// a relative error under 0.13%). The path with a bias is the toy's. In bfloat16 the error
// is within y's bound, so `vs_reference` passes it there; `neutral`, which compares no
// bias with a zero bias bit for bit, finds it in every dtype.
//
//   kprop_variant_path_without_bias
#include <torch/library.h>

#include "tests/kernels/scaled_tanh_variants/toy_calls.h"

namespace kprop::scaled_tanh::path_without_bias_variant {
namespace {

at::Tensor forward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b) {
  if (b) return toy_forward(x, s, b);
  const auto acc = x.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const at::Tensor xa = x.to(acc);
  const at::Tensor t = at::where(xa.abs() < 1.0 / 16, xa, xa.tanh());  // the forgotten term
  return (t * s.to(acc)).to(x.scalar_type());
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(kprop_variant_path_without_bias, m) {
  m.def("scaled_tanh_fwd", forward);
  m.def("scaled_tanh_bwd", toy_backward);
}

}  // namespace kprop::scaled_tanh::path_without_bias_variant
