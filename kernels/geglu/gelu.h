// gelu_tanh and its derivative, written once as a sequence of steps (docs/design.md §4):
//
//   a3 = a·a·a   inner = a + 0.044715·a3   z = sqrt(2/pi)·inner   t = tanh(z)
//   gelu  = (a/2)·(1 + t)
//   gelu' = (1 + t)/2 + (a/2)·(1 − t²)·sqrt(2/pi)·(1 + 3·0.044715·a²)
//
// GeluSteps applies `round` after every step: rounding to bfloat16 or float16 there is the
// port that never upcast (flat@gelu_in_dtype). The policy's gelu is the float64 value,
// computed below in a form without cancellation, rounded to fp32 (gelu_fp32).
#pragma once

#include <cmath>

namespace kprop::geglu {

inline constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2/pi)
inline constexpr double kCubic = 0.044715;
inline constexpr double kCubicSlope = 3 * kCubic;  // d/da of kCubic·a³ is kCubicSlope·a²

struct Identity {
  template <typename T>
  T operator()(T v) const { return v; }
};

// tanh of the steps' type, rounded like every other step.
template <typename T, typename Round>
T tanh_step(T z, const Round& round) {
  return round(static_cast<T>(std::tanh(static_cast<double>(z))));
}

template <typename T, typename Round = Identity>
struct GeluSteps {
  T half_a, one_plus_t, t;

  explicit GeluSteps(T a, const Round& round = Round()) {
    const T k = round(static_cast<T>(kSqrt2OverPi)), cubic = round(static_cast<T>(kCubic));
    const T a3 = round(round(a * a) * a);
    const T inner = round(a + round(cubic * a3));
    const T z = round(k * inner);
    t = tanh_step(z, round);
    one_plus_t = round(T(1) + t);
    half_a = round(T(0.5) * a);
  }

  T gelu(const Round& round = Round()) const { return round(half_a * one_plus_t); }

  T gelu_grad(T a, const Round& round = Round()) const {
    const T k = round(static_cast<T>(kSqrt2OverPi)), slope = round(static_cast<T>(kCubicSlope));
    const T left = round(T(0.5) * one_plus_t);
    const T q = round(T(1) - round(t * t));
    const T p = round(k * round(T(1) + round(slope * round(a * a))));
    const T right = round(round(half_a * q) * p);
    return round(left + right);
  }
};

// The float64 values, in the form without cancellation that torch_policy builds from
// ATen ops in the same order (torch_policy.cpp): with s = sigmoid(2z), 1 + t = 2s and
// 1 - t² = 4 s sigmoid(-2z), so
//   gelu = a·s        gelu' = s + 2a·s·sigmoid(-2z)·sqrt(2/pi)·(1 + 3·0.044715·a²).
// The textbook steps lose all relative accuracy where 1 + t cancels (a < -5): there one
// last bit of tanh, which differs between ATen's vectorized and scalar paths, changes
// gelu by its whole size. Here one last bit of exp changes it by an ulp of float64.
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct GeluFloat64 {
  double a, two_z, s;
  explicit GeluFloat64(double a_) : a(a_) {
    const double z = (a + (a * a * a) * kCubic) * kSqrt2OverPi;
    two_z = z * 2.0;
    s = sigmoid(two_z);
  }
  double gelu() const { return a * s; }
  double gelu_grad() const {
    const double p = ((a * a) * kCubicSlope + 1.0) * kSqrt2OverPi;
    return s + (((a * 2.0) * s) * sigmoid(-two_z)) * p;
  }
};

inline double gelu_tanh(double a) { return GeluFloat64(a).gelu(); }
inline double gelu_tanh_grad(double a) { return GeluFloat64(a).gelu_grad(); }

// kprop's "gelu in fp32": the float64 value rounded to fp32. kprop models where a kernel
// rounds, not how a device approximates tanh: with this one definition in every
// implementation, `rows`, `flat` and `torch_policy` agree bit for bit, independent of
// ATen's vectorized (Sleef) and scalar tanh paths. For float64 inputs, float64 itself.
inline float gelu_fp32(float a) { return static_cast<float>(gelu_tanh(a)); }
inline double gelu_fp32(double a) { return gelu_tanh(a); }
inline float gelu_grad_fp32(float a) { return static_cast<float>(gelu_tanh_grad(a)); }
inline double gelu_grad_fp32(double a) { return gelu_tanh_grad(a); }

}  // namespace kprop::geglu
