// TORCH_LIBRARY_FRAGMENT registration of every built-in geglu implementation: an operator
// pair `<namespace>::geglu_fwd/_bwd` each, named kprop_<implementation> with every
// character that is not a letter or digit as '_' (flat@gelu_in_dtype ->
// kprop_flat_gelu_in_dtype), as causal_conv1d's are. The reference joins kprop's own
// `kprop_reference` namespace, where the harness looks for every kernel's oracle.
#include <torch/library.h>

#include "kernels/geglu/implementations.h"

namespace kprop::geglu {
namespace {

using ForwardFn = at::Tensor (*)(const Args&);
using BackwardFn = Gradients (*)(const Args&, const at::Tensor&);

// Adapts plain functions to the operator signatures; one instantiation per implementation.
template <ForwardFn F>
at::Tensor forward_op(const at::Tensor& a, const at::Tensor& b, int64_t num_cores,
                      int64_t buffer_bytes) {
  return F({a, b, num_cores, buffer_bytes});
}

template <BackwardFn F>
std::tuple<at::Tensor, at::Tensor> backward_op(const at::Tensor& dc, const at::Tensor& a,
                                               const at::Tensor& b, int64_t num_cores,
                                               int64_t buffer_bytes) {
  const Gradients g = F({a, b, num_cores, buffer_bytes}, dc);
  return {g.da, g.db};
}

template <Variant V>
at::Tensor flat_fwd(const Args& a) {
  return flat_forward(V, a);
}

template <Variant V>
Gradients flat_bwd(const Args& a, const at::Tensor& dc) {
  return flat_backward(V, a, dc);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(kprop_reference, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("geglu_fwd", forward_op<reference_forward>);
  m.impl("geglu_bwd", backward_op<reference_backward>);
}

TORCH_LIBRARY_FRAGMENT(kprop_torch_policy, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("geglu_fwd", forward_op<policy_forward>);
  m.impl("geglu_bwd", backward_op<policy_backward>);
}

TORCH_LIBRARY_FRAGMENT(kprop_rows, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("geglu_fwd", forward_op<rows_forward>);
  m.impl("geglu_bwd", backward_op<rows_backward>);
}

// The flatten-1D port and its variants: one library each, as a user's would be.
#define KPROP_GEGLU_FLAT(ns, variant)                        \
  TORCH_LIBRARY_FRAGMENT(ns, m) {                            \
    m.def(kForwardSchema);                                   \
    m.def(kBackwardSchema);                                  \
    m.impl("geglu_fwd", forward_op<flat_fwd<variant>>);      \
    m.impl("geglu_bwd", backward_op<flat_bwd<variant>>);     \
  }

KPROP_GEGLU_FLAT(kprop_flat, Variant::correct)
KPROP_GEGLU_FLAT(kprop_flat_gelu_in_dtype, Variant::gelu_in_dtype)
KPROP_GEGLU_FLAT(kprop_flat_fp32_product, Variant::fp32_product)
KPROP_GEGLU_FLAT(kprop_flat_bwd_no_roundtrip, Variant::bwd_no_roundtrip)
KPROP_GEGLU_FLAT(kprop_flat_assumes_contiguous, Variant::assumes_contiguous)

#undef KPROP_GEGLU_FLAT

}  // namespace kprop::geglu
