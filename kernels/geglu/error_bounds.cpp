#include "kernels/geglu/error_bounds.h"

#include <cmath>
#include <algorithm>
#include <limits>

#include "harness/model/host_values.h"
#include "harness/model/random_tensor.h"
#include "harness/model/tolerance.h"
#include "kernels/geglu/gelu.h"

namespace kprop::geglu {

namespace {

// tanh is within 2 ulps, and an ulp is at most 2w of the value: 4w |tanh|.
constexpr int kTanhRoundings = 4;

struct GeluError {
  double gelu, grad;            // |exact values|
  double e_gelu, e_grad;        // bounds on the error of their evaluation in w
};

// The steps of gelu.h's GeluSteps, each rounded with unit roundoff w, errors carried
// forward (first order, each term taken at its largest; `floor` absorbs underflow).
GeluError gelu_evaluation_error(double a, double w, double floor) {
  const double abs_a = std::abs(a);
  const double z = kSqrt2OverPi * (a + kCubic * a * a * a);
  const double t = std::tanh(z);
  // z from five roundings (a·a, ·a, ·0.044715, a +, ·sqrt(2/pi)) of same-signed terms.
  const double dz = gamma_bound(5, w) * kSqrt2OverPi * (abs_a + kCubic * abs_a * abs_a * abs_a);
  // tanh at the computed z: its own error, and dz through tanh' (largest nearest 0).
  const double near = std::max(std::abs(z) - dz, 0.0);
  const double sech2 = 1.0 - std::tanh(near) * std::tanh(near);
  const double dt = kTanhRoundings * w * std::abs(t) + dz * sech2;
  const double one_plus_t = 1.0 + t;
  const double d_one = dt + w * (one_plus_t + dt);
  GeluError e;
  e.gelu = 0.5 * abs_a * one_plus_t;
  e.e_gelu = 0.5 * abs_a * d_one * (1 + w) + w * e.gelu + floor;
  // gelu' = (1 + t)/2 + (a/2)(1 - t²) p, p = sqrt(2/pi)(1 + 3·0.044715 a²).
  const double q = 1.0 - t * t;
  const double dq = (2 * std::abs(t) + dt) * dt + 2 * w;
  const double p = kSqrt2OverPi * (1 + kCubicSlope * a * a);
  const double dp = gamma_bound(4, w) * p;
  const double left = 0.5 * one_plus_t, right = 0.5 * abs_a * q * p;
  const double d_left = 0.5 * d_one;
  const double d_right = 0.5 * abs_a * (dq * p + (q + dq) * dp) * (1 + gamma_bound(2, w)) +
                         gamma_bound(2, w) * right;
  e.grad = std::abs(0.5 * one_plus_t + 0.5 * a * q * p);
  e.e_grad = d_left + d_right + w * (left + right + d_left + d_right) + floor;
  return e;
}

}  // namespace

NamedTensors error_bounds(const Problem& p, const NamedTensors& cot, const NamedTensors& ref,
                          const std::vector<int>& joined_partials) {
  TORCH_CHECK(!joined_partials.empty(), "error_bounds: no computation to bound");
  const at::ScalarType d = scalar_type(p.c.dtype);
  const at::ScalarType work = d == at::kDouble ? at::kDouble : at::kFloat;
  const double u = unit_roundoff(d), w = unit_roundoff(work);
  const double tiny = smallest_normal(d), floor_w = smallest_normal(work);
  const double huge = largest_finite(d);
  const double inf = std::numeric_limits<double>::infinity();

  // Element-wise bounds of one computation, then one per computation compared; a partial
  // result rounded to d on the way adds u of the value (none in one geglu call).
  auto per_computation = [&](const at::Tensor& one, const at::Tensor& value) {
    const double computations = static_cast<double>(joined_partials.size());
    double rounded = 0;
    for (int j : joined_partials) rounded += j * u;
    return elementwise_float64(
        [=](double bound, double v) { return computations * bound + rounded * std::abs(v); },
        one, value);
  };

  const at::Tensor a = float64_of(p.inputs.get("a")), b = float64_of(p.inputs.get("b"));
  const at::Tensor dc = float64_of(cot.get("dc"));
  // g = fl_d(g_w) times y (b in the forward, dc for db), rounded once.
  auto times_rounded_gelu = [&](double a, double y) {
    const GeluError e = gelu_evaluation_error(a, w, floor_w);
    const double big_g = e.gelu + e.e_gelu;         // >= |g_w|
    const double big_gd = big_g * (1 + u) + tiny;   // >= |g|
    const double product = std::abs(y) * big_gd;
    if (product * (1 + u) >= huge) return inf;
    return std::abs(y) * (e.e_gelu + u * big_g + tiny) + (u + w) * product + tiny;
  };

  NamedTensors bounds;
  bounds.set("c", per_computation(elementwise_float64(times_rounded_gelu, a, b), ref.get("c")));
  if (!dc.defined()) return bounds;
  bounds.set("db", per_computation(elementwise_float64(times_rounded_gelu, a, dc), ref.get("db")));
  bounds.set("da", per_computation(
                       elementwise_float64(
                           [&](double a, double b, double dc) {
                             const GeluError e = gelu_evaluation_error(a, w, floor_w);
                             const double dc_b = std::abs(dc * b);
                             const double rounded_dc_b = dc_b * (1 + u) + tiny;
                             const double big_grad = e.grad + e.e_grad;
                             if (rounded_dc_b >= huge || rounded_dc_b * big_grad * (1 + u) >= huge)
                               return inf;
                             return (u * dc_b + tiny) * big_grad + dc_b * e.e_grad +
                                    (w + u * (1 + w)) * rounded_dc_b * big_grad + tiny;
                           },
                           a, b, dc),
                       ref.get("da")));
  return bounds;
}

}  // namespace kprop::geglu
