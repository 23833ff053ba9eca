#include "harness/spec/derived_bounds.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "harness/model/host_values.h"
#include "harness/model/random_tensor.h"
#include "harness/model/tolerance.h"

namespace kprop {

Bound Bound::elementwise(int k, Magnitude m, int rounded_partials) {
  Bound b;
  b.kind = Kind::elementwise;
  b.roundings = k;
  b.magnitude = std::move(m);
  b.rounded_partials = rounded_partials;
  return b;
}

Bound Bound::sum_over(std::string dim, Magnitude m) {
  Bound b;
  b.kind = Kind::sum;
  b.over = std::move(dim);
  b.magnitude = std::move(m);
  return b;
}

Bound Bound::sum_of(std::function<int64_t(const Case&)> k, Magnitude m, int rounded_partials) {
  Bound b;
  b.kind = Kind::sum;
  b.terms = std::move(k);
  b.magnitude = std::move(m);
  b.rounded_partials = rounded_partials;
  return b;
}

Bound Bound::framework_distance(SharedMagnitudes distances, std::string result,
                                SharedMagnitudes local, std::function<int64_t(const Case&)> terms) {
  Bound b;
  b.kind = Kind::framework;
  b.local = std::move(local);
  b.terms = std::move(terms);
  return b.magnitude_from(std::move(distances), std::move(result));
}

NamedTensors derived_bounds(const std::map<std::string, Bound>& bounds, const Exact& exact,
                            const std::map<std::string, int64_t>& dims,
                            const NamedTensors& reference, const std::vector<int>& joined_partials) {
  TORCH_CHECK(!joined_partials.empty(), "error_bounds: no computation to bound");
  const at::ScalarType out = scalar_type(exact.c.dtype);
  const at::ScalarType acc = out == at::kDouble ? at::kDouble : at::kFloat;
  const double u_acc = unit_roundoff(acc), u_out = unit_roundoff(out);
  const double tiny = smallest_normal(out);
  const double computations = static_cast<double>(joined_partials.size());

  NamedTensors result;
  std::map<const void*, NamedTensors> shared;  // each SharedMagnitudes computed once
  const auto shared_magnitude = [&](const SharedMagnitudes& all, const std::string& of) {
    auto it = shared.find(all.get());
    if (it == shared.end()) it = shared.emplace(all.get(), (*all)(exact)).first;
    return float64_of(it->second.get(of));
  };
  const auto magnitude_of = [&](const Bound& bound, const at::Tensor& value) {
    if (bound.shared) return shared_magnitude(bound.shared, bound.of);
    return bound.magnitude ? float64_of(bound.magnitude(exact))
                           : elementwise_float64([](auto v) { return abs_of(v); }, value);
  };
  for (const auto& [name, bound] : bounds) {
    const at::Tensor value = reference.get(name);
    if (!value.defined()) continue;  // an absent optional result
    const double factors = bound.rounded_factors;
    const at::Tensor magnitude = magnitude_of(bound, value);
    if (bound.kind == Bound::Kind::framework) {
      constexpr double kFrameworkFactor = 2;  // "no worse than twice the framework's distance"
      at::Tensor total = elementwise_float64(
          [=](auto d) { return computations * kFrameworkFactor * d; }, magnitude);
      const at::Tensor last_step = shared_magnitude(bound.local, bound.of);
      const int partials = bound.partials ? bound.partials(exact.c) : bound.rounded_partials;
      for (int j : joined_partials)
        total = elementwise_float64(
            std::plus<>(), total,
            sum_error_bound(last_step, value, bound.terms(exact.c), acc, out, partials + j));
      result.set(name, total);
      continue;
    }
    if (bound.kind == Bound::Kind::elementwise) {
      // The output's rounding is u_out of the computed value, which lies within gamma *
      // magnitude of the exact one: hence (1 + u_out). A partial result rounded to the
      // output dtype on the way adds u_out * magnitude.
      const double gamma = gamma_bound(bound.roundings, u_acc) * (1 + u_out);
      double per_magnitude = 0;
      for (int j : joined_partials) per_magnitude += gamma + (bound.rounded_partials + j) * u_out;
      result.set(name, elementwise_float64(
                           [=](auto m, auto v) {
                             return per_magnitude * m +
                                    computations * ((1 + factors) * u_out * abs_of(v) + tiny);
                           },
                           magnitude, value));
      continue;
    }
    const int64_t k = bound.terms ? bound.terms(exact.c) : dims.at(bound.over);
    const int partials = bound.partials ? bound.partials(exact.c) : bound.rounded_partials;
    at::Tensor total;
    for (int j : joined_partials) {
      const auto b = sum_error_bound(magnitude, value, k, acc, out, partials + j);
      total = total.defined() ? elementwise_float64(std::plus<>(), total, b) : b;
    }
    if (factors > 0)
      total = elementwise_float64(
          [=](auto b, auto v) { return b + computations * factors * u_out * abs_of(v); },
          total, value);
    result.set(name, total);
  }
  return result;
}

}  // namespace kprop
