#include "harness/model/propagated_error.h"

#include <cmath>
#include <map>
#include <mutex>
#include <utility>

#include "harness/model/tolerance.h"

namespace kprop {

namespace {

at::Tensor zeros_like_or(const at::Tensor& error, const at::Tensor& like) {
  return error.defined() ? error : at::zeros_like(like, like.options().dtype(at::kDouble));
}

// Rounding a non-negative float64 tensor to bf16 after scaling it by 1 + 2^-7 never gives
// less than it: the conversion goes through float (two roundings, each losing at most a
// factor 1 + 2^-8 resp. 1 + 2^-24).
const double kInflate = 1.0 + std::ldexp(1.0, -7);

}  // namespace

at::Tensor Bounded::worst_magnitude() const {
  return is_exact() ? value.abs() : value.abs() + worst;
}

at::Tensor Bounded::typical_magnitude() const {
  return is_exact() ? value.abs() : value.abs() + typical;
}

Bounded exact_input(const at::Tensor& value) { return {value.to(at::kDouble), {}, {}}; }

at::Tensor magnitude_matmul(const at::Tensor& a, const at::Tensor& b) {
  const int64_t k = a.size(1);
  const auto up = [](const at::Tensor& t) { return (t * kInflate).to(at::kBFloat16); };
  // fp32 accumulation loses at most gamma_K; the bf16 result at most a factor 1 + 2^-8.
  const double out_factor = kInflate / (1.0 - gamma_bound(k, unit_roundoff(at::kFloat)));
  return at::mm(up(a), up(b)).to(at::kDouble) * out_factor;
}

Bounded matmul_error(const at::Tensor& product, const Bounded& a, const Bounded& b,
                     double u_acc, double u_out, double smallest_normal) {
  const int64_t k = a.value.size(1);
  const double g = gamma_bound(k, u_acc);
  const auto abs_a = a.value.abs(), abs_b = b.value.abs();
  // worst: |A^ B^ - A B| + g |A^| |B^| <= mm(e_A (1 + g) + g |A|, |B| + e_B)
  //        + (1 + g) mm(|A|, e_B), every operand non-negative (no cancellation).
  at::Tensor worst = magnitude_matmul(zeros_like_or(a.worst, abs_a) * (1 + g) + g * abs_a,
                                      b.worst_magnitude());
  if (!b.is_exact()) worst = worst + (1 + g) * magnitude_matmul(abs_a, b.worst);
  worst = worst + u_out * (product.abs() + worst) + smallest_normal;

  // typical: input errors of random sign add in quadrature over k; accumulation errors
  // grow like sqrt(K) u_acc (Higham & Mary, lambda = 1).
  at::Tensor spread = at::zeros_like(product, product.options().dtype(at::kDouble));
  if (!a.is_exact()) spread = spread + magnitude_matmul(a.typical.square(), b.value.square());
  if (!b.is_exact()) spread = spread + magnitude_matmul(a.value.square(), b.typical.square());
  const double s = probabilistic_bound(k, u_acc);
  at::Tensor typical = spread.sqrt() +
                       s * magnitude_matmul(a.typical_magnitude(), b.typical_magnitude()) +
                       u_out * product.abs();
  return {product, worst, typical};
}

Bounded rounded_sum(const at::Tensor& sum, const std::vector<Bounded>& terms, double u_out,
                    double smallest_normal) {
  at::Tensor worst = at::zeros_like(sum, sum.options().dtype(at::kDouble));
  at::Tensor typical = worst.clone();
  for (const auto& t : terms) {
    if (t.is_exact()) continue;
    worst = worst + t.worst;
    typical = typical + t.typical;
  }
  worst = worst + u_out * (sum.abs() + worst) + smallest_normal;
  typical = typical + u_out * sum.abs();
  return {sum, worst, typical};
}

Bounded product_error(const at::Tensor& value, const std::vector<Bounded>& factors) {
  at::Tensor exact = at::ones_like(value, value.options().dtype(at::kDouble));
  at::Tensor worst = exact.clone(), typical = exact.clone();
  for (const auto& f : factors) {
    const auto m = f.value.abs();
    exact = exact * m;
    worst = worst * f.worst_magnitude();
    typical = typical * f.typical_magnitude();
  }
  return {value, worst - exact, typical - exact};
}

Bounded rounded(const Bounded& x, double u) {
  const auto m = x.value.abs();
  if (x.is_exact()) return {x.value, u * m, u * m};
  return {x.value, x.worst + u * (m + x.worst), x.typical + u * m};
}

double matmul_accumulation(at::ScalarType dtype, const c10::Device& device) {
  static std::mutex mutex;
  static std::map<std::pair<int, std::string>, double> probed;
  std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_pair(static_cast<int>(dtype), device.str());
  if (auto it = probed.find(key); it != probed.end()) return it->second;
  double u = unit_roundoff(at::kFloat);
  if (unit_roundoff(dtype) > u) {
    // 2^(t+1) ones: the running sum passes 2^t, where the dtype's spacing becomes 2.
    const int64_t k = int64_t{2} << static_cast<int>(std::lround(-std::log2(unit_roundoff(dtype))));
    const auto options = at::TensorOptions().dtype(dtype).device(device);
    const double sum = at::mm(at::ones({1, k}, options), at::ones({k, 1}, options)).item<double>();
    if (sum != static_cast<double>(k)) u = unit_roundoff(dtype);
  }
  probed.emplace(key, u);
  return u;
}

}  // namespace kprop
