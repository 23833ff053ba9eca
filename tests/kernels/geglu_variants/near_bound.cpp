// Test-only variants of geglu's correct flat port whose error sits between once and twice
// its derived bound (tests/kernels/near_bound.h): one element of one result is moved to
// about 1.5 bounds from the exact value. The bound is the one kernels/geglu/error_bounds.cpp
// derives for one call (its header states the steps), written out again here, so they fail
// vs_reference with the bound as derived and would pass it with a bound 2x looser
// (tests/unit/test_bound_sensitivity.cpp, NearBound).
//
//   kprop_variant_c_near_bound    c
//   kprop_variant_da_near_bound   da
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/geglu/contract.h"
#include "kernels/geglu/ops.h"
#include "tests/kernels/near_bound.h"

namespace kprop::geglu::near_bound_variants {
namespace {

using namespace kprop::near_bound;

constexpr double kSqrt2OverPi = 0.7978845608028654, kCubic = 0.044715;
constexpr int kTanhRoundings = 4;  // tanh within 2 ulps, an ulp at most 2w of the value
const double kInf = std::numeric_limits<double>::infinity();

struct GeluError {
  double gelu, grad, e_gelu, e_grad;
};

// gelu_tanh and gelu' evaluated step by step in the compute type (unit roundoff w), each
// step's rounding carried through the next: error_bounds.cpp's gelu_evaluation_error.
GeluError gelu_error(double a, double w, double floor) {
  const double abs_a = std::abs(a);
  const double z = kSqrt2OverPi * (a + kCubic * a * a * a);
  const double t = std::tanh(z);
  const double dz = gamma(5, w) * kSqrt2OverPi * (abs_a + kCubic * abs_a * abs_a * abs_a);
  const double near = std::max(std::abs(z) - dz, 0.0);
  const double sech2 = 1.0 - std::tanh(near) * std::tanh(near);
  const double dt = kTanhRoundings * w * std::abs(t) + dz * sech2;
  const double one_plus_t = 1.0 + t;
  const double d_one = dt + w * (one_plus_t + dt);
  GeluError e;
  e.gelu = 0.5 * abs_a * one_plus_t;
  e.e_gelu = 0.5 * abs_a * d_one * (1 + w) + w * e.gelu + floor;
  const double q = 1.0 - t * t;
  const double dq = (2 * std::abs(t) + dt) * dt + 2 * w;
  const double p = kSqrt2OverPi * (1 + 3 * kCubic * a * a);
  const double dp = gamma(4, w) * p;
  const double left = 0.5 * one_plus_t, right = 0.5 * abs_a * q * p;
  const double d_left = 0.5 * d_one;
  const double d_right =
      0.5 * abs_a * (dq * p + (q + dq) * dp) * (1 + gamma(2, w)) + gamma(2, w) * right;
  e.grad = std::abs(0.5 * one_plus_t + 0.5 * a * q * p);
  e.e_grad = d_left + d_right + w * (left + right + d_left + d_right) + floor;
  return e;
}

struct Units {
  double u, w, tiny, floor_w, huge;
  explicit Units(at::ScalarType d)
      : u(unit_roundoff(d)), w(unit_roundoff(accumulation(d))), tiny(smallest_normal(d)),
        floor_w(smallest_normal(accumulation(d))),
        huge(d == at::kDouble  ? std::numeric_limits<double>::max()
             : d == at::kHalf ? 65504.0
             : d == at::kBFloat16
                 ? static_cast<double>(std::numeric_limits<c10::BFloat16>::max())
                 : std::numeric_limits<float>::max()) {}
};

// c = fl_d(fl_d(g_w) y): the bound of c (y = b) and of db (y = dc).
double times_rounded_gelu(const Units& k, double a, double y) {
  const GeluError e = gelu_error(a, k.w, k.floor_w);
  const double big_g = e.gelu + e.e_gelu;
  const double big_gd = big_g * (1 + k.u) + k.tiny;
  const double product = std::abs(y) * big_gd;
  if (product * (1 + k.u) >= k.huge) return kInf;
  return std::abs(y) * (e.e_gelu + k.u * big_g + k.tiny) + (k.u + k.w) * product + k.tiny;
}

// da = fl_d(fl_w(fl_d(dc b) g'_w)).
double da_bound(const Units& k, double a, double b, double dc) {
  const GeluError e = gelu_error(a, k.w, k.floor_w);
  const double dc_b = std::abs(dc * b);
  const double rounded_dc_b = dc_b * (1 + k.u) + k.tiny;
  const double big_grad = e.grad + e.e_grad;
  if (rounded_dc_b >= k.huge || rounded_dc_b * big_grad * (1 + k.u) >= k.huge) return kInf;
  return (k.u * dc_b + k.tiny) * big_grad + dc_b * e.e_grad +
         (k.w + k.u * (1 + k.w)) * rounded_dc_b * big_grad + k.tiny;
}

at::Tensor flat64(const at::Tensor& t) { return t.contiguous().to(at::kDouble).clone(); }

// f(a, b[, dc]) element by element over contiguous float64 copies, in a's shape.
template <typename F>
at::Tensor per_element(const at::Tensor& a, const at::Tensor& b, const at::Tensor& dc, F f) {
  const at::Tensor a64 = flat64(a), b64 = flat64(b), dc64 = dc.defined() ? flat64(dc) : b64;
  at::Tensor out = at::empty_like(a64);
  const double *pa = a64.data_ptr<double>(), *pb = b64.data_ptr<double>(),
               *pd = dc64.data_ptr<double>();
  double* po = out.data_ptr<double>();
  for (int64_t i = 0; i < out.numel(); ++i) po[i] = f(pa[i], pb[i], pd[i]);
  return out;
}

at::Tensor c_near_forward(const at::Tensor& a, const at::Tensor& b, int64_t num_cores,
                          int64_t buffer_bytes) {
  const at::Tensor c = geglu_forward("kprop_flat", a, b, num_cores, buffer_bytes);
  const at::Tensor exact =
      geglu_forward("kprop_reference", flat64(a), flat64(b), num_cores, buffer_bytes);
  const Units k(a.scalar_type());
  const at::Tensor bound = per_element(a, b, at::Tensor(), [&](double a, double b, double) {
    return times_rounded_gelu(k, a, b);
  });
  return plant(c, exact, bound);
}

std::tuple<at::Tensor, at::Tensor> da_near_backward(const at::Tensor& dc, const at::Tensor& a,
                                                    const at::Tensor& b, int64_t num_cores,
                                                    int64_t buffer_bytes) {
  auto [da, db] = geglu_backward("kprop_flat", dc, a, b, num_cores, buffer_bytes);
  const at::Tensor exact =
      geglu_backward("kprop_reference", flat64(dc), flat64(a), flat64(b), num_cores, buffer_bytes)
          .first;
  const Units k(a.scalar_type());
  const at::Tensor bound = per_element(
      a, b, dc, [&](double a, double b, double dc) { return da_bound(k, a, b, dc); });
  return {plant(da, exact, bound), db};
}

at::Tensor flat_forward(const at::Tensor& a, const at::Tensor& b, int64_t num_cores,
                        int64_t buffer_bytes) {
  return geglu_forward("kprop_flat", a, b, num_cores, buffer_bytes);
}

std::tuple<at::Tensor, at::Tensor> flat_backward(const at::Tensor& dc, const at::Tensor& a,
                                                 const at::Tensor& b, int64_t num_cores,
                                                 int64_t buffer_bytes) {
  auto [da, db] = geglu_backward("kprop_flat", dc, a, b, num_cores, buffer_bytes);
  return {da, db};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(kprop_variant_c_near_bound, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("geglu_fwd", c_near_forward);
  m.impl("geglu_bwd", flat_backward);
}

TORCH_LIBRARY_FRAGMENT(kprop_variant_da_near_bound, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("geglu_fwd", flat_forward);
  m.impl("geglu_bwd", da_near_backward);
}

}  // namespace kprop::geglu::near_bound_variants
