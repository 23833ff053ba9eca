// The functions of a formula written once for both forms of elementwise_float64
// (host_values.h): a generic lambda whose arguments are doubles in the host loop and
// float64 tensors on a device. The operators (+ - * / with constants) serve both forms
// as they are; these are the rest, one overload per form.
#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace kprop {

// `[](auto m, auto v) { return 2 * m + abs_of(v); }` or `std::plus<>` serve both forms.
inline double abs_of(double x) { return std::abs(x); }
inline at::Tensor abs_of(const at::Tensor& t) { return t.abs(); }

inline double exp_of(double x) { return std::exp(x); }
inline at::Tensor exp_of(const at::Tensor& t) { return t.exp(); }

inline double tanh_of(double x) { return std::tanh(x); }
inline at::Tensor tanh_of(const at::Tensor& t) { return t.tanh(); }

// max(x, floor), for a constant floor.
inline double at_least(double x, double floor) { return std::max(x, floor); }
inline at::Tensor at_least(const at::Tensor& x, double floor) { return x.clamp_min(floor); }

// `value`, or +infinity wherever x >= limit: a bound whose value lies past its dtype's
// largest finite number has no finite answer.
inline double infinite_where_at_least(double value, double x, double limit) {
  return x >= limit ? std::numeric_limits<double>::infinity() : value;
}
inline at::Tensor infinite_where_at_least(const at::Tensor& value, const at::Tensor& x,
                                          double limit) {
  return at::where(x >= limit, std::numeric_limits<double>::infinity(), value);
}

}  // namespace kprop
