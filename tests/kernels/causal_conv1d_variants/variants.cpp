// Test-only variants of kprop's correct tiled causal_conv1d (`kprop_tiled`), each with one
// small defect of the kind a derived tolerance has to see: one extra rounding, one dropped
// term, a result that depends on the core count. They exist so that tests can show the
// bounds and the properties are tight enough to fail on them (tests/unit/
// test_bound_sensitivity.cpp, test_cores_property.cpp). Each is an operator pair in its own
// namespace, reachable as implementation "<ns>::causal_conv1d".
//
//   kprop_variant_y_rounded     float32 y rounded to bfloat16 and back (one extra rounding)
//   kprop_variant_y_coarse      float32 y rounded to 18 significant bits (u = 2^-18, 64 times
//                               float32's): an extra rounding much finer than bfloat16's
//   kprop_variant_dw_rounded    float32 dweight rounded to bfloat16 and back
//   kprop_variant_dw_dropped    the last tap's dweight of channel 0 misses the term of the
//                               last row of x (one dropped term of a 2T-term sum)
//   kprop_variant_core_skew     y scaled by (1 + 2^-10) (float32; 2^-4 otherwise) unless
//                               num_cores == 1: a result that depends on the tiling
#include <torch/library.h>

#include <cstdint>

#include "kernels/causal_conv1d/contract.h"
#include "tests/kernels/causal_conv1d_variants/operator_pair.h"

namespace kprop::causal_conv1d::test_variants {
namespace {

using namespace variant_ops;

at::Tensor round_through_bfloat16(const at::Tensor& t) {
  if (!t.defined() || t.scalar_type() != at::kFloat) return t;
  return t.to(at::kBFloat16).to(at::kFloat);
}

// Rounds float32 values to `bits` significant bits (round half away from zero on the
// magnitude's bit pattern); other dtypes unchanged.
at::Tensor round_to_bits(const at::Tensor& t, int bits) {
  if (!t.defined() || t.scalar_type() != at::kFloat) return t;
  at::Tensor out = t.contiguous().clone();
  auto* p = reinterpret_cast<uint32_t*>(out.data_ptr<float>());
  const int drop = 24 - bits;
  const uint32_t half = 1u << (drop - 1), mask = ~((1u << drop) - 1);
  for (int64_t i = 0; i < out.numel(); ++i) {
    const uint32_t exponent = p[i] & 0x7F800000u;
    if (exponent == 0x7F800000u) continue;  // inf, nan
    p[i] = (p[i] + half) & mask;            // a carry into the exponent is the right rounding
  }
  return out;
}

ForwardResult tiled_forward(const Args& a) { return call_forward("kprop_tiled", a); }
BackwardResult tiled_backward(const Args& a, const at::Tensor& dy, const at::Tensor& dht) {
  return call_backward("kprop_tiled", a, dy, dht);
}

ForwardResult y_rounded_forward(const Args& a) {
  ForwardResult r = tiled_forward(a);
  r.y = round_through_bfloat16(r.y);
  return r;
}

ForwardResult y_coarse_forward(const Args& a) {
  ForwardResult r = tiled_forward(a);
  r.y = round_to_bits(r.y, 18);
  return r;
}

BackwardResult dw_rounded_backward(const Args& a, const at::Tensor& dy, const at::Tensor& dht) {
  BackwardResult r = tiled_backward(a, dy, dht);
  r.dweight = round_through_bfloat16(r.dweight);
  return r;
}

// dweight[0, W-1] from a call whose dy has the last row of channel 0 zeroed: exactly the
// term g[last row, 0] * x[last row, 0] is missing from that one element.
BackwardResult dw_dropped_backward(const Args& a, const at::Tensor& dy, const at::Tensor& dht) {
  BackwardResult r = tiled_backward(a, dy, dht);
  at::Tensor dy_cut = dy.clone();
  dy_cut.select(0, dy.size(0) - 1).select(0, dy.size(1) - 1).select(0, 0).zero_();
  const BackwardResult cut = tiled_backward(a, dy_cut, dht);
  const int64_t W = a.weight.size(1);
  r.dweight = r.dweight.clone();
  r.dweight[0][W - 1] = cut.dweight[0][W - 1];
  return r;
}

ForwardResult core_skew_forward(const Args& a) {
  ForwardResult r = tiled_forward(a);
  if (a.num_cores != 1) {
    const double factor = r.y.scalar_type() == at::kFloat ? 1.0 + 1.0 / 1024 : 1.0 + 1.0 / 16;
    r.y = r.y * factor;
  }
  return r;
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(kprop_variant_y_rounded, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("causal_conv1d_fwd", forward_op<y_rounded_forward>);
  m.impl("causal_conv1d_bwd", backward_op<tiled_backward>);
}

TORCH_LIBRARY_FRAGMENT(kprop_variant_y_coarse, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("causal_conv1d_fwd", forward_op<y_coarse_forward>);
  m.impl("causal_conv1d_bwd", backward_op<tiled_backward>);
}

TORCH_LIBRARY_FRAGMENT(kprop_variant_dw_rounded, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("causal_conv1d_fwd", forward_op<tiled_forward>);
  m.impl("causal_conv1d_bwd", backward_op<dw_rounded_backward>);
}

TORCH_LIBRARY_FRAGMENT(kprop_variant_dw_dropped, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("causal_conv1d_fwd", forward_op<tiled_forward>);
  m.impl("causal_conv1d_bwd", backward_op<dw_dropped_backward>);
}

TORCH_LIBRARY_FRAGMENT(kprop_variant_core_skew, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("causal_conv1d_fwd", forward_op<core_skew_forward>);
  m.impl("causal_conv1d_bwd", backward_op<tiled_backward>);
}

}  // namespace kprop::causal_conv1d::test_variants
