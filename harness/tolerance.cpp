#include "harness/tolerance.h"

#include <cmath>
#include <limits>

#include "kernels/common/host_values.h"

namespace kprop {

double unit_roundoff(at::ScalarType dtype) {
  switch (dtype) {
    case at::kDouble: return std::ldexp(1.0, -53);
    case at::kFloat: return std::ldexp(1.0, -24);
    case at::kBFloat16: return std::ldexp(1.0, -8);
    case at::kHalf: return std::ldexp(1.0, -11);
    default: return 0.0;  // integers are exact
  }
}

double gamma_bound(int64_t k, double u) {
  const double ku = static_cast<double>(k) * u;
  return ku >= 1.0 ? std::numeric_limits<double>::infinity() : ku / (1.0 - ku);
}

double probabilistic_bound(int64_t k, double u) { return std::sqrt(static_cast<double>(k)) * u; }

double smallest_normal(at::ScalarType dtype) {
  switch (dtype) {
    case at::kDouble: return std::numeric_limits<double>::min();
    case at::kFloat: return std::numeric_limits<float>::min();
    case at::kBFloat16: return std::numeric_limits<float>::min();  // same exponent range
    case at::kHalf: return std::ldexp(1.0, -14);
    default: return 0.0;
  }
}

at::Tensor sum_error_bound(const at::Tensor& magnitude, const at::Tensor& value, int64_t k,
                           at::ScalarType accumulate, at::ScalarType output,
                           int rounded_partials) {
  const double g = gamma_bound(k, unit_roundoff(accumulate));
  const double u_out = unit_roundoff(output);
  const double per_magnitude = g + u_out * rounded_partials, floor = smallest_normal(output);
  return elementwise_float64(
      [&](double m, double v) { return m * per_magnitude + std::abs(v) * u_out + floor; },
      magnitude, value);
}

}  // namespace kprop
