// torch_policy: the framework's rounding points (docs/design.md §4) built from ATen ops, as a
// PyTorch module computes GEGLU, i.e. `gelu(a, approximate="tanh") * b` and its autograd
// (and as Liger-Kernel's fused geglu kernel rounds):
//
//   forward   g = fl_d(gelu(a))            gelu in fp32 from the input-dtype a, rounded
//             c = fl_d(g · b)              the fp32 product of two d values is exact: one rounding
//   backward  db = fl_d(dc · fl_d(gelu(a)))  gelu recomputed, round-tripped through d
//             da = fl_d(fl_d(dc · b) · gelu'(a))   mul's backward rounds dc·b to d first;
//                                                  gelu' in fp32, one more rounding
//
// where fl_d rounds to the input dtype d. float64 inputs compute in float64 throughout.
// "gelu in fp32" is the float64 value rounded to fp32 (gelu.h says why); the float64
// value comes from the same operations, in the same order, as gelu.h's, here as ATen ops.
#include "kernels/geglu/gelu.h"
#include "kernels/geglu/implementations.h"

namespace kprop::geglu {

namespace {

// gelu.h's GeluFloat64 as ATen ops on a float64 tensor, in the same order (at::sigmoid
// is 1 / (1 + exp(-x)) on both of ATen's paths).
struct GeluTensors {
  at::Tensor a, two_z, s;
  explicit GeluTensors(const at::Tensor& a64) : a(a64) {
    const auto z = (a + (a * a * a) * kCubic) * kSqrt2OverPi;
    two_z = z * 2.0;
    s = at::sigmoid(two_z);
  }
  at::Tensor gelu() const { return a * s; }
  at::Tensor gelu_grad() const {
    const auto p = ((a * a) * kCubicSlope + 1.0) * kSqrt2OverPi;
    return s + (((a * 2.0) * s) * at::sigmoid(-two_z)) * p;
  }
};

// The dtype gelu is evaluated in: fp32, or float64 for float64 inputs.
at::ScalarType evaluation_type(const at::Tensor& a) {
  return a.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
}

}  // namespace

at::Tensor policy_forward(const Args& args) {
  check_args(args);
  const auto d = args.a.scalar_type();
  const GeluTensors steps(args.a.to(at::kDouble));
  const auto g = steps.gelu().to(evaluation_type(args.a)).to(d);
  return (g * args.b).contiguous();
}

Gradients policy_backward(const Args& args, const at::Tensor& dc) {
  check_args(args);
  check_cotangent(args, dc);
  const auto d = args.a.scalar_type(), eval = evaluation_type(args.a);
  const GeluTensors steps(args.a.to(at::kDouble));
  const auto g = steps.gelu().to(eval).to(d);
  const auto db = dc * g;
  const auto dc_b = dc * args.b;  // rounded to d, as mul's backward hands it on
  const auto da = (dc_b.to(eval) * steps.gelu_grad().to(eval)).to(d);
  return {da.contiguous(), db.contiguous()};
}

}  // namespace kprop::geglu
