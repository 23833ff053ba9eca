// TORCH_LIBRARY_FRAGMENT registration of every built-in causal_conv1d implementation. Each one is
// an operator pair `<namespace>::causal_conv1d_fwd/_bwd` with the contract's schema, the
// same shape a user's own kernel library has.
#include <torch/library.h>

#include "kernels/causal_conv1d/implementations.h"

namespace kprop::causal_conv1d {
namespace {

using OptTensor = c10::optional<at::Tensor>;

Args make_args(const at::Tensor& x, const at::Tensor& weight, const OptTensor& bias,
               const OptTensor& initial_state, const OptTensor& cu_seqlens,
               const std::string& activation, int64_t num_cores) {
  Args a;
  a.x = x;
  a.weight = weight;
  a.bias = bias.value_or(at::Tensor());
  a.initial_state = initial_state.value_or(at::Tensor());
  a.cu_seqlens = cu_seqlens.value_or(at::Tensor());
  a.activation = activation;
  a.num_cores = num_cores;
  return a;
}

using ForwardFn = ForwardResult (*)(const Args&);
using BackwardFn = BackwardResult (*)(const Args&, const at::Tensor&, const at::Tensor&);

// Adapts plain functions to the operator signatures; one instantiation per implementation.
template <ForwardFn F>
std::tuple<at::Tensor, at::Tensor> forward_op(const at::Tensor& x, const at::Tensor& weight,
                                              const OptTensor& bias, const OptTensor& h0,
                                              const OptTensor& cu_seqlens,
                                              std::string activation, int64_t num_cores) {
  auto r = F(make_args(x, weight, bias, h0, cu_seqlens, activation, num_cores));
  return {r.y, r.final_state};
}

template <BackwardFn F>
std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> backward_op(
    const at::Tensor& x, const at::Tensor& weight, const OptTensor& bias, const OptTensor& h0,
    const OptTensor& cu_seqlens, std::string activation, const at::Tensor& dy,
    const OptTensor& dht, int64_t num_cores) {
  auto r = F(make_args(x, weight, bias, h0, cu_seqlens, activation, num_cores), dy,
             dht.value_or(at::Tensor()));
  return {r.dx, r.dweight, r.dbias, r.dinitial_state};
}

template <Revision R>
BackwardResult historical(const Args& a, const at::Tensor& dy, const at::Tensor& dht) {
  return historical_backward(R, a, dy, dht);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(kprop_reference, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("causal_conv1d_fwd", forward_op<reference_forward>);
  m.impl("causal_conv1d_bwd", backward_op<reference_backward>);
}

TORCH_LIBRARY_FRAGMENT(kprop_tiled, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("causal_conv1d_fwd", forward_op<tiled_forward>);
  m.impl("causal_conv1d_bwd", backward_op<tiled_backward>);
}

TORCH_LIBRARY_FRAGMENT(kprop_tiled_original, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("causal_conv1d_fwd", forward_op<tiled_forward>);
  m.impl("causal_conv1d_bwd", backward_op<historical<Revision::original>>);
}

TORCH_LIBRARY_FRAGMENT(kprop_tiled_clamped, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("causal_conv1d_fwd", forward_op<tiled_forward>);
  m.impl("causal_conv1d_bwd", backward_op<historical<Revision::clamped>>);
}

TORCH_LIBRARY_FRAGMENT(kprop_tiled_fixed, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("causal_conv1d_fwd", forward_op<tiled_forward>);
  m.impl("causal_conv1d_bwd", backward_op<historical<Revision::fixed>>);
}

}  // namespace kprop::causal_conv1d
