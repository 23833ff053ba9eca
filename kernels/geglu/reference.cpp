// The float64 oracle: the contract's formula, element by element. It shares no code with
// the implementations under test (gelu.h, ATen's gelu): the formula is written out here
// again, as the textbook states it, once for a double (the host loop) and for a float64
// tensor (ATen operations, where the oracle runs on a device: harness/model/formula.h).
// Not named `gelu`: for a tensor, lookup would find at::gelu (the erf form) first.
#include <cmath>

#include "harness/model/formula.h"
#include "harness/model/host_values.h"
#include "kernels/geglu/implementations.h"

namespace kprop::geglu {

namespace {

const double kS = std::sqrt(2.0 / M_PI);

// u = s (x + 0.044715 x^3), s = sqrt(2/pi); gelu_tanh(x) = x/2 (1 + tanh u). With
// 1 + tanh u = 2 / (1 + e^(-2u)) the value keeps its relative accuracy where 1 + tanh u
// cancels (x < -5): the oracle stays accurate there, and so does the finite difference
// the gradient property takes of it.
template <typename T>
T inner(const T& x) {
  return kS * (x + 0.044715 * x * x * x);
}
template <typename T>
T tanh_gelu(const T& x) {
  return x / (1.0 + exp_of(-2.0 * inner(x)));
}

// d/dx = (1 + tanh u)/2 + x/2 sech^2(u) u',  u' = s (1 + 3 · 0.044715 x^2), where
// (1 + tanh u)/2 = 1 / (1 + e^(-2u)) and sech^2(u)/4 = that times 1 / (1 + e^(2u)).
template <typename T>
T tanh_gelu_derivative(const T& x) {
  const T u = inner(x);
  const T up = 1.0 / (1.0 + exp_of(-2.0 * u)), down = 1.0 / (1.0 + exp_of(2.0 * u));
  return up + 2.0 * x * up * down * kS * (1.0 + 3.0 * 0.044715 * x * x);
}

}  // namespace

at::Tensor reference_forward(const Args& args) {
  check_args(args);
  return elementwise_float64([](auto a, auto b) { return tanh_gelu(a) * b; }, args.a, args.b);
}

Gradients reference_backward(const Args& args, const at::Tensor& dc) {
  check_args(args);
  check_cotangent(args, dc);
  const auto da = [](auto a, auto b, auto dc) { return dc * b * tanh_gelu_derivative(a); };
  const auto db = [](auto a, auto dc) { return dc * tanh_gelu(a); };
  return {elementwise_float64(da, args.a, args.b, dc), elementwise_float64(db, args.a, dc)};
}

}  // namespace kprop::geglu
