// A test-only variant of scaled_tanh's correct toy whose backward sums db = Σ_rows dy with
// an unmasked load: the last block reads one element past dy's end into db's last column.
// Where the allocation ends there (a fresh tensor), the read gives zero here, as a fresh
// GPU allocation mostly does: every result is right, so only `guard` finds it, when the
// element past the end is NaN. dy is made contiguous first, as kernels do.
//
//   kprop_variant_reads_past_end
#include <torch/library.h>

#include "tests/kernels/scaled_tanh_variants/toy_calls.h"

namespace kprop::scaled_tanh::reads_past_end_variant {
namespace {

// The element after contiguous t's last one, as a one-element tensor: zero where t's
// storage ends there.
at::Tensor one_past_end(const at::Tensor& t) {
  const int64_t next = t.storage_offset() + t.numel();
  const int64_t stored = static_cast<int64_t>(t.storage().nbytes()) / t.element_size();
  if (next >= stored) return at::zeros({1}, t.options());
  return t.as_strided({1}, {1}, next).clone();
}

Grads reads_past_end_backward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b,
                              const at::Tensor& dy) {
  const at::Tensor d = dy.contiguous();
  auto [dx, ds, db] = toy_backward(x, s, b, d);
  if (db.defined()) db.narrow(0, db.size(0) - 1, 1).add_(one_past_end(d));  // the unmasked tail
  return {dx, ds, db};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(kprop_variant_reads_past_end, m) {
  m.def("scaled_tanh_fwd", toy_forward);
  m.def("scaled_tanh_bwd", reads_past_end_backward);
}

}  // namespace kprop::scaled_tanh::reads_past_end_variant
