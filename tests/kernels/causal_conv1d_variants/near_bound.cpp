// Test-only variants of kprop's correct tiled causal_conv1d whose error sits between once
// and twice its derived bound (tests/kernels/near_bound.h): one element of one result,
// without activation (the bound with silu carries more terms; with silu they are the
// correct kernel), is moved to about 1.5 bounds from the exact value. The bound is the
// one kernels/causal_conv1d/info.cpp derives, written out again here:
//
//   y   gamma_{W+1}(u_acc) m_y + u_out |y| + smallest normal,   m_y the reference on |x|,
//       |w|, |b|, |h0|
//   dw  gamma_{2T+W}(u_acc) m_dw + u_out |dw| + smallest normal, m_dw the reference's
//       dweight on those magnitudes and |dy|, |dht|; T the rows of x
//
// so they fail vs_reference with the bound as derived and would pass it with a bound 2x
// looser (tests/unit/test_bound_sensitivity.cpp, NearBound).
//
//   kprop_variant_y_near_bound    y
//   kprop_variant_dw_near_bound   dweight
#include <torch/library.h>

#include "kernels/causal_conv1d/contract.h"
#include "tests/kernels/causal_conv1d_variants/operator_pair.h"
#include "tests/kernels/near_bound.h"

namespace kprop::causal_conv1d::near_bound_variants {
namespace {

using namespace kprop::near_bound;
using namespace variant_ops;

at::Tensor in_float64(const at::Tensor& t) { return t.defined() ? t.to(at::kDouble) : t; }
at::Tensor abs_float64(const at::Tensor& t) { return t.defined() ? t.to(at::kDouble).abs() : t; }

Args exact_args(const Args& a) {
  Args e = a;
  e.x = in_float64(a.x);
  e.weight = in_float64(a.weight);
  e.bias = in_float64(a.bias);
  e.initial_state = in_float64(a.initial_state);
  return e;
}

Args magnitude_args(const Args& a) {
  Args m = a;
  m.activation = "none";
  m.x = abs_float64(a.x);
  m.weight = abs_float64(a.weight);
  m.bias = abs_float64(a.bias);
  m.initial_state = abs_float64(a.initial_state);
  return m;
}

// gamma_K(u_acc) magnitude + u_out |exact| + the output dtype's smallest normal.
at::Tensor sum_bound(const at::Tensor& magnitude, const at::Tensor& exact, int64_t k,
                     at::ScalarType out) {
  return magnitude * gamma(k, unit_roundoff(accumulation(out))) +
         exact.abs() * unit_roundoff(out) + smallest_normal(out);
}

ForwardResult y_near_forward(const Args& a) {
  ForwardResult r = call_forward("kprop_tiled", a);
  if (a.activation != "none") return r;
  const int64_t W = a.weight.size(1);
  const at::Tensor exact = call_forward("kprop_reference", exact_args(a)).y;
  const at::Tensor m = call_forward("kprop_reference", magnitude_args(a)).y;
  r.y = plant(r.y, exact, sum_bound(m, exact, W + 1, r.y.scalar_type()));
  return r;
}

BackwardResult dw_near_backward(const Args& a, const at::Tensor& dy, const at::Tensor& dht) {
  BackwardResult r = call_backward("kprop_tiled", a, dy, dht);
  if (a.activation != "none") return r;
  const int64_t W = a.weight.size(1), T = a.x.size(0) * a.x.size(1);
  const at::Tensor exact =
      call_backward("kprop_reference", exact_args(a), in_float64(dy), in_float64(dht)).dweight;
  const at::Tensor m =
      call_backward("kprop_reference", magnitude_args(a), abs_float64(dy), abs_float64(dht))
          .dweight;
  r.dweight = plant(r.dweight, exact, sum_bound(m, exact, 2 * T + W, r.dweight.scalar_type()));
  return r;
}

ForwardResult tiled_forward(const Args& a) { return call_forward("kprop_tiled", a); }
BackwardResult tiled_backward(const Args& a, const at::Tensor& dy, const at::Tensor& dht) {
  return call_backward("kprop_tiled", a, dy, dht);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(kprop_variant_y_near_bound, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("causal_conv1d_fwd", forward_op<y_near_forward>);
  m.impl("causal_conv1d_bwd", backward_op<tiled_backward>);
}

TORCH_LIBRARY_FRAGMENT(kprop_variant_dw_near_bound, m) {
  m.def(kForwardSchema);
  m.def(kBackwardSchema);
  m.impl("causal_conv1d_fwd", forward_op<tiled_forward>);
  m.impl("causal_conv1d_bwd", backward_op<dw_near_backward>);
}

}  // namespace kprop::causal_conv1d::near_bound_variants
