// Test-only variants of scaled_tanh's correct toy implementation whose error sits between
// once and twice its derived bound (tests/kernels/near_bound.h): one element of one result
// is moved to about 1.5 bounds from the exact value. The bound is the one scaled_tanh's spec
// declares (tests/kernels/scaled_tanh/scaled_tanh.cpp), written out again here:
//
//   y   gamma_6(u_acc) (1 + u_out) (|tanh(x) s| + |b|) + u_out |y| + smallest normal
//   ds  gamma_5(u_acc) (1 + u_out) |dy tanh(x)|        + u_out |ds| + smallest normal
//
// so they fail vs_reference with the bound as derived and would pass it with a bound 2x
// looser (tests/unit/test_bound_sensitivity.cpp, NearBound).
//
//   kprop_variant_y_near_bound    y
//   kprop_variant_ds_near_bound   ds
//
// The operators' schemas are inferred from their C++ signatures (kprop calls them boxed,
// by position): scaled_tanh's own strings are registered by its spec at load time, which
// may come after this file's registrations.
#include <torch/library.h>

#include "harness/execution/dispatch.h"
#include "tests/kernels/near_bound.h"

namespace kprop::scaled_tanh::near_bound_variants {
namespace {

using namespace kprop::near_bound;
using OptTensor = c10::optional<at::Tensor>;

// The arguments and gradients of one scaled_tanh call; an undefined b stands for None.
struct Args {
  at::Tensor x, s, b;
};
struct Gradients {
  at::Tensor dx, ds, db;
};

c10::IValue optional(const at::Tensor& t) { return t.defined() ? c10::IValue(t) : c10::IValue(); }

at::Tensor call_forward(const std::string& ns, const Args& a) {
  torch::jit::Stack stack{a.x, a.s, optional(a.b)};
  call_boxed(ns + "::scaled_tanh_fwd", stack, 1);
  return tensor_or_undefined(stack[0]);
}

Gradients call_backward(const std::string& ns, const Args& a, const at::Tensor& dy) {
  torch::jit::Stack stack{a.x, a.s, optional(a.b), dy};
  call_boxed(ns + "::scaled_tanh_bwd", stack, 3);
  return {tensor_or_undefined(stack[0]), tensor_or_undefined(stack[1]),
          tensor_or_undefined(stack[2])};
}

at::Tensor in_float64(const at::Tensor& t) { return t.defined() ? t.to(at::kDouble) : t; }

Args exact_args(const Args& a) { return {in_float64(a.x), in_float64(a.s), in_float64(a.b)}; }

// gamma_K(u_acc) (1 + u_out) magnitude + u_out |exact| + the smallest normal.
at::Tensor bound(const at::Tensor& magnitude, const at::Tensor& exact, int roundings,
                 at::ScalarType out) {
  const double u_out = unit_roundoff(out);
  return magnitude * (gamma(roundings, unit_roundoff(accumulation(out))) * (1 + u_out)) +
         exact.abs() * u_out + smallest_normal(out);
}

at::Tensor y_near_forward(const Args& a) {
  at::Tensor y = call_forward("kprop_toy", a);
  const Args e = exact_args(a);
  const at::Tensor exact = call_forward("kprop_reference", e);
  at::Tensor m = (at::tanh(e.x) * e.s).abs();
  if (e.b.defined()) m = m + e.b.abs();
  return plant(y, exact, bound(m, exact, 6, y.scalar_type()));
}

Gradients ds_near_backward(const Args& a, const at::Tensor& dy) {
  Gradients g = call_backward("kprop_toy", a, dy);
  const Args e = exact_args(a);
  const at::Tensor dy64 = in_float64(dy);
  const at::Tensor exact = call_backward("kprop_reference", e, dy64).ds;
  const at::Tensor m = (dy64 * at::tanh(e.x)).abs();
  g.ds = plant(g.ds, exact, bound(m, exact, 5, g.ds.scalar_type()));
  return g;
}

at::Tensor toy_forward(const Args& a) { return call_forward("kprop_toy", a); }
Gradients toy_backward(const Args& a, const at::Tensor& dy) {
  return call_backward("kprop_toy", a, dy);
}

template <at::Tensor (*F)(const Args&)>
at::Tensor forward_op(const at::Tensor& x, const at::Tensor& s, const OptTensor& b) {
  return F({x, s, b.value_or(at::Tensor())});
}

template <Gradients (*F)(const Args&, const at::Tensor&)>
std::tuple<at::Tensor, at::Tensor, at::Tensor> backward_op(const at::Tensor& x,
                                                           const at::Tensor& s,
                                                           const OptTensor& b,
                                                           const at::Tensor& dy) {
  const Gradients g = F({x, s, b.value_or(at::Tensor())}, dy);
  return {g.dx, g.ds, g.db};
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(kprop_variant_y_near_bound, m) {
  m.def("scaled_tanh_fwd", forward_op<y_near_forward>);
  m.def("scaled_tanh_bwd", backward_op<toy_backward>);
}

TORCH_LIBRARY_FRAGMENT(kprop_variant_ds_near_bound, m) {
  m.def("scaled_tanh_fwd", forward_op<toy_forward>);
  m.def("scaled_tanh_bwd", backward_op<ds_near_backward>);
}

}  // namespace kprop::scaled_tanh::near_bound_variants
