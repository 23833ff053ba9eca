#include "kernels/geglu/error_bounds.h"

#include "harness/model/formula.h"
#include "harness/model/host_values.h"
#include "harness/model/random_tensor.h"
#include "harness/model/tolerance.h"
#include "kernels/geglu/gelu.h"

namespace kprop::geglu {

namespace {

// tanh is within 2 ulps, and an ulp is at most 2w of the value: 4w |tanh|.
constexpr int kTanhRoundings = 4;

// The exact values and the bounds on the error of their evaluation in w, of a double or,
// element by element, of a float64 tensor (the oracle on a device: harness/model/formula.h).
template <typename T>
struct GeluError {
  T gelu, grad;      // |exact values|
  T e_gelu, e_grad;  // bounds on the error of their evaluation in w
};

// The steps of gelu.h's GeluSteps, each rounded with unit roundoff w, errors carried
// forward (first order, each term taken at its largest; `floor` absorbs underflow).
template <typename T>
GeluError<T> gelu_evaluation_error(const T& a, double w, double floor) {
  const T abs_a = abs_of(a);
  const T z = kSqrt2OverPi * (a + kCubic * a * a * a);
  const T t = tanh_of(z);
  // z from five roundings (a·a, ·a, ·0.044715, a +, ·sqrt(2/pi)) of same-signed terms.
  const T dz = gamma_bound(5, w) * kSqrt2OverPi * (abs_a + kCubic * abs_a * abs_a * abs_a);
  // tanh at the computed z: its own error, and dz through tanh' (largest nearest 0).
  const T near = at_least(abs_of(z) - dz, 0.0);
  const T sech2 = 1.0 - tanh_of(near) * tanh_of(near);
  const T dt = kTanhRoundings * w * abs_of(t) + dz * sech2;
  const T one_plus_t = 1.0 + t;
  const T d_one = dt + w * (one_plus_t + dt);
  GeluError<T> e;
  e.gelu = 0.5 * abs_a * one_plus_t;
  e.e_gelu = 0.5 * abs_a * d_one * (1 + w) + w * e.gelu + floor;
  // gelu' = (1 + t)/2 + (a/2)(1 - t²) p, p = sqrt(2/pi)(1 + 3·0.044715 a²).
  const T q = 1.0 - t * t;
  const T dq = (2 * abs_of(t) + dt) * dt + 2 * w;
  const T p = kSqrt2OverPi * (1 + kCubicSlope * a * a);
  const T dp = gamma_bound(4, w) * p;
  const T left = 0.5 * one_plus_t, right = 0.5 * abs_a * q * p;
  const T d_left = 0.5 * d_one;
  const T d_right = 0.5 * abs_a * (dq * p + (q + dq) * dp) * (1 + gamma_bound(2, w)) +
                    gamma_bound(2, w) * right;
  e.grad = abs_of(0.5 * one_plus_t + 0.5 * a * q * p);
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

  // Element-wise bounds of one computation, then one per computation compared; a partial
  // result rounded to d on the way adds u of the value (none in one geglu call).
  auto per_computation = [&](const at::Tensor& one, const at::Tensor& value) {
    const double computations = static_cast<double>(joined_partials.size());
    double rounded = 0;
    for (int j : joined_partials) rounded += j * u;
    return elementwise_float64(
        [=](auto bound, auto v) { return computations * bound + rounded * abs_of(v); }, one,
        value);
  };

  const at::Tensor& a = p.inputs.get("a");
  const at::Tensor& b = p.inputs.get("b");
  const at::Tensor& dc = cot.get("dc");
  // g = fl_d(g_w) times y (b in the forward, dc for db), rounded once; e: gelu's evaluation
  // error at a.
  auto times_rounded_gelu = [&](const auto& e, auto y) {
    const auto big_g = e.gelu + e.e_gelu;        // >= |g_w|
    const auto big_gd = big_g * (1 + u) + tiny;  // >= |g|
    const auto product = abs_of(y) * big_gd;
    return infinite_where_at_least(
        abs_of(y) * (e.e_gelu + u * big_g + tiny) + (u + w) * product + tiny,
        product * (1 + u), huge);
  };
  // da = fl(fl(dc b) gelu'(a)).
  auto times_rounded_gradient = [&](const auto& e, auto b, auto dc) {
    const auto dc_b = abs_of(dc * b);
    const auto rounded_dc_b = dc_b * (1 + u) + tiny;
    const auto big_grad = e.grad + e.e_grad;
    const auto bound = (u * dc_b + tiny) * big_grad + dc_b * e.e_grad +
                       (w + u * (1 + w)) * rounded_dc_b * big_grad + tiny;
    return infinite_where_at_least(infinite_where_at_least(bound, rounded_dc_b, huge),
                                   rounded_dc_b * big_grad * (1 + u), huge);
  };

  NamedTensors bounds;
  if (evaluated_as_aten_ops(a)) {
    // As ATen operations (the oracle on a device), where each operation is a launch: gelu's
    // evaluation error once, for the three bounds.
    const auto e = gelu_evaluation_error(float64_of(a), w, floor_w);
    bounds.set("c", per_computation(times_rounded_gelu(e, float64_of(b)), ref.get("c")));
    if (!dc.defined()) return bounds;
    bounds.set("db", per_computation(times_rounded_gelu(e, float64_of(dc)), ref.get("db")));
    bounds.set("da", per_computation(times_rounded_gradient(e, float64_of(b), float64_of(dc)),
                                     ref.get("da")));
    return bounds;
  }
  // Host loops, element by element.
  const auto gelu_of = [&](double a) { return gelu_evaluation_error(a, w, floor_w); };
  bounds.set("c", per_computation(elementwise_float64([&](double a, double b) {
                                    return times_rounded_gelu(gelu_of(a), b);
                                  }, a, b),
                                  ref.get("c")));
  if (!dc.defined()) return bounds;
  bounds.set("db", per_computation(elementwise_float64([&](double a, double dc) {
                                     return times_rounded_gelu(gelu_of(a), dc);
                                   }, a, dc),
                                   ref.get("db")));
  bounds.set("da", per_computation(elementwise_float64([&](double a, double b, double dc) {
                                     return times_rounded_gradient(gelu_of(a), b, dc);
                                   }, a, b, dc),
                                   ref.get("da")));
  return bounds;
}

}  // namespace kprop::geglu
