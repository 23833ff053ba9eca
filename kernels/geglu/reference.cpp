// The float64 oracle: the contract's formula as plain loops over logical elements. It
// shares no code with the implementations under test (gelu.h, ATen's gelu): the formula
// is written out here again, as the textbook states it.
#include <cmath>

#include "harness/model/host_values.h"
#include "kernels/geglu/implementations.h"

namespace kprop::geglu {

namespace {

const double kS = std::sqrt(2.0 / M_PI);

// u = s (x + 0.044715 x^3), s = sqrt(2/pi); gelu_tanh(x) = x/2 (1 + tanh u). With
// 1 + tanh u = 2 / (1 + e^(-2u)) the value keeps its relative accuracy where 1 + tanh u
// cancels (x < -5): the oracle stays accurate there, and so does the finite difference
// the gradient property takes of it.
double inner(double x) { return kS * (x + 0.044715 * x * x * x); }
double gelu(double x) { return x / (1.0 + std::exp(-2.0 * inner(x))); }

// d/dx = (1 + tanh u)/2 + x/2 sech^2(u) u',  u' = s (1 + 3 · 0.044715 x^2), where
// (1 + tanh u)/2 = 1 / (1 + e^(-2u)) and sech^2(u)/4 = that times 1 / (1 + e^(2u)).
double gelu_derivative(double x) {
  const double u = inner(x);
  const double up = 1.0 / (1.0 + std::exp(-2.0 * u)), down = 1.0 / (1.0 + std::exp(2.0 * u));
  return up + 2.0 * x * up * down * kS * (1.0 + 3.0 * 0.044715 * x * x);
}

at::Tensor empty64_like(const at::Tensor& t) {
  return at::empty(t.sizes(), at::TensorOptions().dtype(at::kDouble));
}

}  // namespace

at::Tensor reference_forward(const Args& args) {
  check_args(args);
  const at::Tensor a = float64_of(args.a), b = float64_of(args.b);  // logical order
  at::Tensor c = empty64_like(a);
  const double *pa = a.data_ptr<double>(), *pb = b.data_ptr<double>();
  double* pc = c.data_ptr<double>();
  for (int64_t i = 0; i < a.numel(); ++i) pc[i] = gelu(pa[i]) * pb[i];
  return c;
}

Gradients reference_backward(const Args& args, const at::Tensor& dc_in) {
  check_args(args);
  check_cotangent(args, dc_in);
  const at::Tensor a = float64_of(args.a), b = float64_of(args.b), dc = float64_of(dc_in);
  Gradients g{empty64_like(a), empty64_like(a)};
  const double *pa = a.data_ptr<double>(), *pb = b.data_ptr<double>(),
               *pdc = dc.data_ptr<double>();
  double *pda = g.da.data_ptr<double>(), *pdb = g.db.data_ptr<double>();
  for (int64_t i = 0; i < a.numel(); ++i) {
    pda[i] = pdc[i] * pb[i] * gelu_derivative(pa[i]);
    pdb[i] = pdc[i] * gelu(pa[i]);
  }
  return g;
}

}  // namespace kprop::geglu
