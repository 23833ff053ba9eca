// What the near-bound variants (tests/kernels/*_variants/near_bound.cpp) share: a
// correct result with one element moved to between once and twice its derived bound
// from the exact value. Each variant computes that bound itself, by the formula its
// kernel's error_bounds states today (written out again in the variant, never taken
// from the kernel), so that the verdict's error/bound of the planted element is about
// kTarget whatever the kernel's error_bounds says: above 1 (a failure) with the bound as
// derived, below 1 (a pass) with a bound 2x looser, above 2 with one 2x tighter.
// tests/unit/test_bound_sensitivity.cpp asserts the failure and the ratio.
#pragma once

#include <ATen/ATen.h>
#include <c10/util/BFloat16.h>
#include <c10/util/Half.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>

namespace kprop::near_bound {

// The error/bound the planted element aims at, and the range it must land in.
inline constexpr double kTarget = 1.5, kLowest = 1.3, kHighest = 1.7;

// Unit roundoff, smallest normal: as harness/model/tolerance.h defines them (restated here).
inline double unit_roundoff(at::ScalarType t) {
  switch (t) {
    case at::kDouble: return std::ldexp(1.0, -53);
    case at::kFloat: return std::ldexp(1.0, -24);
    case at::kBFloat16: return std::ldexp(1.0, -8);
    case at::kHalf: return std::ldexp(1.0, -11);
    default: return 0;
  }
}
inline double smallest_normal(at::ScalarType t) {
  switch (t) {
    case at::kDouble: return std::numeric_limits<double>::min();
    case at::kHalf: return std::ldexp(1.0, -14);
    default: return std::numeric_limits<float>::min();  // float32 and bfloat16
  }
}
// fp32 for every narrower dtype, float64 for float64.
inline at::ScalarType accumulation(at::ScalarType t) {
  return t == at::kDouble ? at::kDouble : at::kFloat;
}
inline double gamma(int64_t k, double u) {
  const double ku = static_cast<double>(k) * u;
  return ku >= 1 ? std::numeric_limits<double>::infinity() : ku / (1 - ku);
}

// The values of a dtype in order: an integer per value, negative ones below positive.
inline int64_t ordered(double v, at::ScalarType t) {
  int64_t magnitude = 0;
  bool negative = false;
  if (t == at::kDouble) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof bits);
    negative = bits >> 63;
    magnitude = static_cast<int64_t>(bits & 0x7FFFFFFFFFFFFFFFull);
  } else if (t == at::kFloat) {
    const float f = static_cast<float>(v);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    negative = bits >> 31;
    magnitude = bits & 0x7FFFFFFFu;
  } else {
    const uint16_t bits = t == at::kBFloat16 ? c10::BFloat16(static_cast<float>(v)).x
                                             : c10::Half(static_cast<float>(v)).x;
    negative = bits >> 15;
    magnitude = bits & 0x7FFF;
  }
  return negative ? -magnitude - 1 : magnitude;
}

inline double value_of(int64_t o, at::ScalarType t) {
  const bool negative = o < 0;
  const uint64_t magnitude = static_cast<uint64_t>(negative ? -(o + 1) : o);
  if (t == at::kDouble) {
    const uint64_t bits = magnitude | (negative ? 1ull << 63 : 0);
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  if (t == at::kFloat) {
    const uint32_t bits = static_cast<uint32_t>(magnitude) | (negative ? 1u << 31 : 0);
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }
  const uint16_t bits = static_cast<uint16_t>(magnitude | (negative ? 0x8000u : 0));
  if (t == at::kBFloat16) return static_cast<float>(c10::BFloat16(bits, c10::BFloat16::from_bits()));
  return static_cast<float>(c10::Half(bits, c10::Half::from_bits()));
}

struct Planted {
  double value;  // a value of the dtype
  double ratio;  // |value - exact| / bound
};

// The value of dtype `t` whose distance from `exact` is nearest kTarget bounds.
inline std::optional<Planted> value_near(double exact, double bound, at::ScalarType t) {
  if (!(bound > 0) || !std::isfinite(bound) || !std::isfinite(exact)) return std::nullopt;
  std::optional<Planted> best;
  for (const double side : {1.0, -1.0}) {
    const int64_t centre = ordered(exact + side * kTarget * bound, t);
    for (int64_t step = -2; step <= 2; ++step) {
      const double v = value_of(centre + step, t);
      if (!std::isfinite(v)) continue;
      const double ratio = std::abs(v - exact) / bound;
      if (!best || std::abs(ratio - kTarget) < std::abs(best->ratio - kTarget)) best = {v, ratio};
    }
  }
  return best;
}

// `result` (any floating dtype) with the first element whose nearest value lands within
// kLowest..kHighest bounds of `exact` set to that value; every other element as computed.
// `exact` and `bound` are float64 tensors of result's shape. Unchanged when no element
// can be placed so (then the variant is correct on this call).
inline at::Tensor plant(const at::Tensor& result, const at::Tensor& exact, const at::Tensor& bound) {
  const at::ScalarType t = result.scalar_type();
  at::Tensor out = result.to(at::kDouble).contiguous().clone();
  const at::Tensor e = exact.contiguous().to(at::kDouble), b = bound.contiguous().to(at::kDouble);
  double* po = out.data_ptr<double>();
  const double *pe = e.data_ptr<double>(), *pb = b.data_ptr<double>();
  for (int64_t i = 0; i < out.numel(); ++i) {
    const auto p = value_near(pe[i], pb[i], t);
    if (p && p->ratio >= kLowest && p->ratio <= kHighest) {
      po[i] = p->value;
      break;
    }
  }
  return out.to(t).view(result.sizes());
}

}  // namespace kprop::near_bound
