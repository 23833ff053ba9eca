// The causal_conv1d operator pair (kernels/causal_conv1d/contract.h's schemas) around
// plain functions of the contract: what every test-only variant registers
// (TORCH_LIBRARY_FRAGMENT(ns, m) { ... forward_op<F> ... backward_op<G> ... }).
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

#include "kernels/causal_conv1d/contract.h"

namespace kprop::causal_conv1d::variant_ops {

using OptTensor = c10::optional<at::Tensor>;
using ForwardFn = ForwardResult (*)(const Args&);
using BackwardFn = BackwardResult (*)(const Args&, const at::Tensor&, const at::Tensor&);

inline Args make_args(const at::Tensor& x, const at::Tensor& weight, const OptTensor& bias,
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

}  // namespace kprop::causal_conv1d::variant_ops
