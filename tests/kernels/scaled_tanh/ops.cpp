// TORCH_LIBRARY_FRAGMENT registration of every built-in scaled_tanh implementation: an
// operator pair `<namespace>::scaled_tanh_fwd/_bwd` each, as a user's library has. The
// reference joins kprop's own `kprop_reference` namespace, where the harness looks for
// every kernel's oracle.
#include <torch/library.h>

#include "tests/kernels/scaled_tanh/implementations.h"

namespace kprop::scaled_tanh {
namespace {

using OptTensor = c10::optional<at::Tensor>;
using ForwardFn = at::Tensor (*)(const Args&);
using BackwardFn = Gradients (*)(const Args&, const at::Tensor&);

Args make_args(const at::Tensor& x, const at::Tensor& s, const OptTensor& b) {
  return {x, s, b.value_or(at::Tensor())};
}

// Adapts plain functions to the operator signatures; one instantiation per implementation.
template <ForwardFn F>
at::Tensor forward_op(const at::Tensor& x, const at::Tensor& s, const OptTensor& b) {
  return F(make_args(x, s, b));
}

template <BackwardFn F>
std::tuple<at::Tensor, at::Tensor, at::Tensor> backward_op(const at::Tensor& x,
                                                           const at::Tensor& s,
                                                           const OptTensor& b,
                                                           const at::Tensor& dy) {
  const Gradients g = F(make_args(x, s, b), dy);
  return {g.dx, g.ds, g.db};
}

template <Variant V>
at::Tensor toy_fwd(const Args& a) {
  return toy_forward(V, a);
}

template <Variant V>
Gradients toy_bwd(const Args& a, const at::Tensor& dy) {
  return toy_backward(V, a, dy);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(kprop_reference, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("scaled_tanh_fwd", forward_op<reference_forward>);
  m.impl("scaled_tanh_bwd", backward_op<reference_backward>);
}

TORCH_LIBRARY_FRAGMENT(kprop_toy, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("scaled_tanh_fwd", forward_op<toy_fwd<Variant::correct>>);
  m.impl("scaled_tanh_bwd", backward_op<toy_bwd<Variant::correct>>);
}

TORCH_LIBRARY_FRAGMENT(kprop_toy_tail, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("scaled_tanh_fwd", forward_op<toy_fwd<Variant::tail_mask_typo>>);
  m.impl("scaled_tanh_bwd", backward_op<toy_bwd<Variant::tail_mask_typo>>);
}

TORCH_LIBRARY_FRAGMENT(kprop_toy_bias, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("scaled_tanh_fwd", forward_op<toy_fwd<Variant::bias_twice>>);
  m.impl("scaled_tanh_bwd", backward_op<toy_bwd<Variant::bias_twice>>);
}

}  // namespace kprop::scaled_tanh
