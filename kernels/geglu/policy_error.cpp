#include "kernels/geglu/policy_error.h"

#include <cmath>

#include "harness/model/tolerance.h"

namespace kprop::geglu_mlp {

namespace {

const double kBeta = std::sqrt(2.0 / M_PI), kKappa = 0.044715;

// f(a) evaluated in fp32 at a low-precision a that carries an error: f's value at the
// exact a, moved by the input error through sup|f'| <= |f'(a)| + sup|f''| e_a, plus the
// fp32 evaluation error.
Bounded evaluated_at(const Bounded& a, const at::Tensor& f, const at::Tensor& f_prime,
                     double f_second_bound) {
  const double u32 = unit_roundoff(at::kFloat);
  const at::Tensor evaluation = kFp32Evaluation * u32 * (1 + f.abs());
  if (a.is_exact()) return {f, evaluation, evaluation};
  const auto moved = [&](const at::Tensor& e) { return e * (f_prime.abs() + f_second_bound * e); };
  return {f, moved(a.worst) + evaluation, moved(a.typical) + evaluation};
}

}  // namespace

at::Tensor gelu_tanh(const at::Tensor& x) {
  return 0.5 * x * (1 + at::tanh(kBeta * (x + kKappa * x.pow(3))));
}

at::Tensor gelu_tanh_grad(const at::Tensor& x) {
  const auto t = at::tanh(kBeta * (x + kKappa * x.pow(3)));
  return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * kBeta * (1 + 3 * kKappa * x * x);
}

at::Tensor gelu_tanh_second(const at::Tensor& x) {
  const auto t = at::tanh(kBeta * (x + kKappa * x.pow(3)));
  const auto inner1 = kBeta * (1 + 3 * kKappa * x * x);  // d inner / dx
  const auto inner2 = 6 * kBeta * kKappa * x;            // d^2 inner / dx^2
  return (1 - t * t) * (inner1 + 0.5 * x * inner2 - x * t * inner1 * inner1);
}

Bounded forward_error(const at::Tensor& c, const Bounded& a, const Bounded& b, double u) {
  const Bounded gelu =
      rounded(evaluated_at(a, gelu_tanh(a.value), gelu_tanh_grad(a.value),
                           kGeluSecondDerivativeBound),
              u);
  // The product of two low-dtype values is exact in fp32: one rounding.
  return rounded(product_error(c, {gelu, b}), u);
}

std::pair<Bounded, Bounded> backward_error(const at::Tensor& da, const at::Tensor& db,
                                           const Bounded& dc, const Bounded& a,
                                           const Bounded& b, double u) {
  const at::Tensor grad = gelu_tanh_grad(a.value);
  const Bounded gelu = rounded(
      evaluated_at(a, gelu_tanh(a.value), grad, kGeluSecondDerivativeBound), u);
  const Bounded db_error = rounded(product_error(db, {dc, gelu}), u);

  // dc * b: exact in fp32, handed on rounded.
  const Bounded dc_b = rounded(product_error(dc.value * b.value, {dc, b}), u);
  const Bounded gelu_grad =
      evaluated_at(a, grad, gelu_tanh_second(a.value), kGeluThirdDerivativeBound);
  // The fp32 product with gelu' rounds once (u32) before the rounding to the low dtype.
  const Bounded product = rounded(product_error(da, {dc_b, gelu_grad}), unit_roundoff(at::kFloat));
  return {rounded(product, u), db_error};
}

}  // namespace kprop::geglu_mlp
