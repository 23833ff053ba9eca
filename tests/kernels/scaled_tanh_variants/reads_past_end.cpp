// A test-only variant of scaled_tanh's correct toy whose backward sums db = Σ_rows dy with
// an unmasked load: the last block reads one element past dy's end into db's last column.
// Where the allocation ends there (a fresh tensor), the read gives zero here, as a fresh
// GPU allocation mostly does: every result is right, so only `guard` finds it, when the
// element past the end is NaN. dy is made contiguous first, as kernels do.
//
//   kprop_variant_reads_past_end
#include <torch/library.h>

#include "kernels/common/dispatch.h"

namespace kprop::scaled_tanh::reads_past_end_variant {
namespace {

using OptTensor = c10::optional<at::Tensor>;
using Grads = std::tuple<at::Tensor, at::Tensor, at::Tensor>;

c10::IValue optional(const OptTensor& t) { return t ? c10::IValue(*t) : c10::IValue(); }

// The element after contiguous t's last one, as a one-element tensor: zero where t's
// storage ends there.
at::Tensor one_past_end(const at::Tensor& t) {
  const int64_t next = t.storage_offset() + t.numel();
  const int64_t stored = static_cast<int64_t>(t.storage().nbytes()) / t.element_size();
  if (next >= stored) return at::zeros({1}, t.options());
  return t.as_strided({1}, {1}, next).clone();
}

at::Tensor toy_forward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b) {
  torch::jit::Stack stack{x, s, optional(b)};
  call_boxed("kprop_toy::scaled_tanh_fwd", stack, 1);
  return stack[0].toTensor();
}

Grads reads_past_end_backward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b,
                              const at::Tensor& dy) {
  const at::Tensor d = dy.contiguous();
  torch::jit::Stack stack{x, s, optional(b), d};
  call_boxed("kprop_toy::scaled_tanh_bwd", stack, 3);
  at::Tensor db = tensor_or_undefined(stack[2]);
  if (db.defined()) {
    db = db.clone();
    db.narrow(0, db.size(0) - 1, 1).add_(one_past_end(d));  // the unmasked tail of the sum
  }
  return {stack[0].toTensor(), stack[1].toTensor(), db};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(kprop_variant_reads_past_end, m) {
  m.def("scaled_tanh_fwd", toy_forward);
  m.def("scaled_tanh_bwd", reads_past_end_backward);
}

}  // namespace kprop::scaled_tanh::reads_past_end_variant
