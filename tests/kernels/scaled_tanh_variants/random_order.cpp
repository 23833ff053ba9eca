// A test-only variant of scaled_tanh's correct toy whose backward sums db = Σ_rows dy in an
// order drawn anew on every call, as a kernel that adds its blocks' partial sums with
// atomics does: every result is within its bound, but two calls on the same inputs may
// differ in the last bit, so only `determinism` finds it. The order comes from one
// generator that advances on every call, so a test run is still reproducible.
//
//   kprop_variant_random_order
#include <torch/library.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "tests/kernels/scaled_tanh_variants/toy_calls.h"

namespace kprop::scaled_tanh::random_order_variant {
namespace {

std::mt19937& order_source() {
  static std::mt19937 generator(20261202);
  return generator;
}

Grads random_order_backward(const at::Tensor& x, const at::Tensor& s, const OptTensor& b,
                            const at::Tensor& dy) {
  const auto [dx, ds, toy_db] = toy_backward(x, s, b, dy);
  if (!b) return {dx, ds, at::Tensor()};
  std::vector<int64_t> rows(static_cast<size_t>(dy.size(0)));
  std::iota(rows.begin(), rows.end(), 0);
  std::shuffle(rows.begin(), rows.end(), order_source());
  const auto acc = dy.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  at::Tensor db = at::zeros({dy.size(1)}, dy.options().dtype(acc));
  for (int64_t r : rows) db = db + dy[r].to(acc);  // fp32 partial sums, in this call's order
  return {dx, ds, db.to(dy.scalar_type())};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(kprop_variant_random_order, m) {
  m.def("scaled_tanh_fwd", toy_forward);
  m.def("scaled_tanh_bwd", random_order_backward);
}

}  // namespace kprop::scaled_tanh::random_order_variant
