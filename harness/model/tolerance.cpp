#include "harness/model/tolerance.h"

#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "harness/model/host_values.h"

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

double largest_finite(at::ScalarType dtype) {
  switch (dtype) {
    case at::kDouble: return std::numeric_limits<double>::max();
    case at::kFloat: return std::numeric_limits<float>::max();
    case at::kBFloat16: return static_cast<double>(std::numeric_limits<c10::BFloat16>::max());
    case at::kHalf: return static_cast<double>(std::numeric_limits<c10::Half>::max());
    default: return std::numeric_limits<double>::infinity();
  }
}

namespace {

// The bits of v in `dtype`, ordered like the values: negative numbers below the positive
// ones, -0 just below +0.
int64_t ordered_bits(double v, at::ScalarType dtype) {
  int64_t magnitude = 0;
  bool negative = false;
  switch (dtype) {
    case at::kFloat: {
      uint32_t bits;
      const float f = static_cast<float>(v);
      std::memcpy(&bits, &f, sizeof bits);
      negative = bits >> 31;
      magnitude = bits & 0x7FFFFFFFu;
      break;
    }
    case at::kBFloat16: {
      const uint16_t bits = c10::BFloat16(static_cast<float>(v)).x;
      negative = bits >> 15;
      magnitude = bits & 0x7FFF;
      break;
    }
    case at::kHalf: {
      const uint16_t bits = c10::Half(static_cast<float>(v)).x;
      negative = bits >> 15;
      magnitude = bits & 0x7FFF;
      break;
    }
    default: {
      uint64_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      negative = bits >> 63;
      magnitude = static_cast<int64_t>(bits & 0x7FFFFFFFFFFFFFFFull);
      break;
    }
  }
  return negative ? -magnitude - 1 : magnitude;
}

}  // namespace

int64_t ulps_between(double x, double y, at::ScalarType dtype) {
  if (std::isnan(x) || std::isnan(y))
    return std::isnan(x) && std::isnan(y) ? 0 : std::numeric_limits<int64_t>::max();
  const int64_t a = ordered_bits(x, dtype), b = ordered_bits(y, dtype);
  // |a - b| can overflow only for float64 values of opposite signs at the extremes.
  int64_t diff = 0;
  if (__builtin_sub_overflow(a, b, &diff) || diff == std::numeric_limits<int64_t>::min())
    return std::numeric_limits<int64_t>::max();
  return diff < 0 ? -diff : diff;
}

at::Tensor sum_error_bound(const at::Tensor& magnitude, const at::Tensor& value, int64_t k,
                           at::ScalarType accumulate, at::ScalarType output,
                           int rounded_partials) {
  const double g = gamma_bound(k, unit_roundoff(accumulate));
  const double u_out = unit_roundoff(output);
  const double per_magnitude = g + u_out * rounded_partials, floor = smallest_normal(output);
  return elementwise_float64(
      [&](auto m, auto v) { return m * per_magnitude + abs_of(v) * u_out + floor; },
      magnitude, value);
}

}  // namespace kprop
